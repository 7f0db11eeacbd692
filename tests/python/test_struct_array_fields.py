# SPDX-License-Identifier: Apache-2.0
"""Struct fields pointing at an array of structs counted by a sibling field
(`field-count` rules: CUlaunchConfig.attrs / numAttrs and the others). As
in cuda.bindings, the field takes a list of struct instances, copied into a
C array the struct object owns, and reads back as a list of that length;
the count stays the caller's to set. The same for the fields pointing at
an array of handles (the external-semaphore node structs' extSemArray):
a list of handles whose values are copied into an owned C array, read
back as a list of handles. The fake driver records the launch attributes
cuLaunchKernelEx received and the semaphores
cuGraphAddExternalSemaphoresSignalNode received.
"""
import ctypes
import gc
import itertools
import threading
import tracemalloc
import weakref

import pytest

from conftest import ROUNDS, fake_function

_names = itertools.count()

COOPERATIVE = 2  # CU_LAUNCH_ATTRIBUTE_COOPERATIVE in cuda.h 13.0
PRIORITY = 8     # CU_LAUNCH_ATTRIBUTE_PRIORITY


class Buf(bytearray):
    """A bytearray that can be weakly referenced."""


@pytest.fixture(scope="module")
def lib(fake):
    fake.fakecuda_last_launch_attrs.restype = ctypes.c_longlong
    fake.fakecuda_last_launch_attrs.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return fake


def attr(drv, ident, value):
    a = drv.CUlaunchAttribute()
    a.id = drv.CUlaunchAttributeID(ident)
    if ident == COOPERATIVE:
        a.value.cooperative = value
    else:
        a.value.priority = value
    return a


def field_address(config):
    """The address CUlaunchConfig's C attrs field holds, read from its bytes."""
    off = 8 * 4 + 8  # six dims, sharedMemBytes, then the CUstream (8-aligned)
    return ctypes.c_uint64.from_address(config.getPtr() + off).value


def test_a_list_is_copied_into_an_owned_array_and_reads_back_as_a_list(drv):
    c = drv.CUlaunchConfig()
    a, b = attr(drv, COOPERATIVE, 1), attr(drv, PRIORITY, 7)
    c.attrs = [a, b]
    got = c.attrs
    assert type(got) is list and len(got) == 2
    assert got == [a, b]
    assert [type(x) for x in got] == [drv.CUlaunchAttribute] * 2
    assert got[0].id == COOPERATIVE and got[0].value.cooperative == 1
    assert got[1].id == PRIORITY and got[1].value.priority == 7
    # the C field points at a copy of both structs, back to back
    size = len(ctypes.string_at(a.getPtr(), 72))
    p = field_address(c)
    assert p == got[0].getPtr() and p not in (a.getPtr(), b.getPtr())
    assert ctypes.string_at(p, size) == ctypes.string_at(a.getPtr(), size)
    assert ctypes.string_at(p + size, size) == ctypes.string_at(b.getPtr(), size)
    assert got[1].getPtr() == p + size
    # copies: changing a source later does not change the array
    a.value.cooperative = 0
    assert c.attrs[0].value.cooperative == 1
    # the elements read back are views of the owned array (as cuda.bindings'
    # instances wrapping its memory): writing one writes the array
    got[1].value.priority = 9
    assert c.attrs[1].value.priority == 9
    assert ctypes.c_int.from_address(p + size + 8).value == 9
    c.attrs = (b,)  # a tuple too
    assert c.attrs == [b] and field_address(c) != p
    c.attrs = []
    assert field_address(c) == 0 and c.attrs == 0
    c.numAttrs = 3  # never set for the caller
    c.attrs = [a]
    assert c.numAttrs == 3


def test_other_forms_keep_giving_the_address(drv):
    c = drv.CUlaunchConfig()
    a = attr(drv, COOPERATIVE, 1)
    c.attrs = [a]
    c.attrs = a  # one struct: its address, as before
    assert c.attrs == a.getPtr() == field_address(c)
    c.attrs = [a]
    c.attrs = 0x1000
    assert c.attrs == 0x1000
    c.attrs = None
    assert c.attrs == 0


def test_the_array_and_its_elements_targets_live_as_long_as_the_field(drv):
    # accessPolicyWindow.base_ptr is a pointer field of the element: what it
    # keeps is kept by the owned array, even once the source changes or dies
    c = drv.CUlaunchConfig()
    a = drv.CUlaunchAttribute()
    buf = Buf(b"window")
    w = weakref.ref(buf)
    a.value.accessPolicyWindow.base_ptr = buf
    c.attrs = [a]
    del buf
    a.value.accessPolicyWindow.base_ptr = 0
    del a
    gc.collect()
    assert w() is not None
    assert ctypes.string_at(c.attrs[0].value.accessPolicyWindow.base_ptr, 6) == b"window"
    view = c.attrs[0]
    c.attrs = []  # replaced: the view still holds the array
    gc.collect()
    assert w() is not None and bytes(w()) == b"window"
    del view
    gc.collect()
    assert w() is None

    for clear in ([], None, 0, drv.CUlaunchAttribute()):
        buf = Buf(b"x")
        w = weakref.ref(buf)
        a = drv.CUlaunchAttribute()
        a.value.accessPolicyWindow.base_ptr = buf
        c.attrs = [a]
        del a, buf
        gc.collect()
        assert w() is not None
        c.attrs = clear
        gc.collect()
        assert w() is None, clear

    buf = Buf(b"y")
    w = weakref.ref(buf)
    a = drv.CUlaunchAttribute()
    a.value.accessPolicyWindow.base_ptr = buf
    c.attrs = [a]
    del a, buf
    del c  # the struct dies: the array and what it kept go
    gc.collect()
    assert w() is None


def test_a_record_copy_carries_the_array(drv):
    # copying the struct (a CBS_F_RECORD field of another, or the same
    # record by value) keeps the array it points at
    n = drv.CUgraphNodeParams()
    p = drv.CUDA_BATCH_MEM_OP_NODE_PARAMS_v2()
    op = drv.CUstreamBatchMemOpParams()
    op.operation = drv.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WAIT_VALUE_32
    op.waitValue.value = 0x1234
    p.paramArray = [op, op]
    p.count = 2
    n.memOp = p
    del p
    gc.collect()
    got = n.memOp.paramArray
    assert len(got) == 2 and int(got[1].waitValue.value) == 0x1234


def test_wrong_elements_are_a_type_error_naming_the_field_and_the_index(drv):
    c = drv.CUlaunchConfig()
    a = attr(drv, COOPERATIVE, 1)
    c.attrs = [a]
    before = field_address(c)
    with pytest.raises(TypeError, match=r"CUlaunchConfig_st\.attrs\[1\] must be "
                                        r"CUlaunchAttribute_st, not int"):
        c.attrs = [a, 5]
    with pytest.raises(TypeError, match=r"attrs\[0\] must be CUlaunchAttribute_st, "
                                        r"not cubind.driver.CUlaunchConfig_st"):
        c.attrs = [drv.CUlaunchConfig()]
    with pytest.raises(TypeError, match=r"CUlaunchConfig_st\.attrs must be a list of structs"):
        c.attrs = 1.5
    assert field_address(c) == before and c.attrs == [a]  # a failed set changes nothing
    p = drv.CUDA_BATCH_MEM_OP_NODE_PARAMS()
    with pytest.raises(TypeError, match=r"paramArray\[0\] must be CUstreamBatchMemOpParams_union"):
        p.paramArray = [a]


def test_every_field_count_field_takes_a_list(drv):
    cases = [(drv.CUDA_BATCH_MEM_OP_NODE_PARAMS_v1, "paramArray", drv.CUstreamBatchMemOpParams),
             (drv.CUDA_BATCH_MEM_OP_NODE_PARAMS_v2, "paramArray", drv.CUstreamBatchMemOpParams),
             (drv.CUctxCreateParams, "execAffinityParams", drv.CUexecAffinityParam),
             (drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS, "paramsArray",
              drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS),
             (drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2, "paramsArray",
              drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS),
             (drv.CUDA_EXT_SEM_WAIT_NODE_PARAMS, "paramsArray",
              drv.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS),
             (drv.CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2, "paramsArray",
              drv.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS),
             (drv.CUDA_MEM_ALLOC_NODE_PARAMS_v1, "accessDescs", drv.CUmemAccessDesc),
             (drv.CUDA_MEM_ALLOC_NODE_PARAMS_v2, "accessDescs", drv.CUmemAccessDesc),
             (drv.CUcheckpointRestoreArgs, "gpuPairs", drv.CUcheckpointGpuPair)]
    for cls, field, elem in cases:
        s = cls()
        items = [elem(), elem(), elem()]
        raw = ctypes.create_string_buffer(b"\x5a" * 8)
        ctypes.memmove(items[1].getPtr(), raw, 1)  # three different elements
        ctypes.memmove(items[2].getPtr(), raw, 2)
        setattr(s, field, items)
        got = getattr(s, field)
        assert got == items and type(got[0]) is elem, (cls, field)


def kernel(drv, lib):
    """A kernel of one int parameter."""
    name = b"saf%d" % next(_names)
    off, size = (ctypes.c_size_t * 1)(0), (ctypes.c_size_t * 1)(4)
    assert lib.fakecuda_set_param_layout(None, name, 1, off, size) == 0
    return fake_function(drv, name)


def launch_config(drv):
    config = drv.CUlaunchConfig()
    for dim in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
        setattr(config, dim, 1)
    return config


def recorded_attrs(lib):
    out = (ctypes.c_uint64 * 16)()
    n = lib.fakecuda_last_launch_attrs(out, 8)
    return n, [(out[2 * i], out[2 * i + 1]) for i in range(max(0, min(n, 8)))]


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_cuLaunchKernelEx_gets_the_attributes_written_the_cuda_bindings_way(drv, lib, ctx,
                                                                           face_name):
    import cubind.cu as cu
    face = drv if face_name == "driver" else cu
    f = kernel(drv, lib)
    config = launch_config(drv)
    attr_cooperative = drv.CUlaunchAttribute()
    attr_cooperative.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    attr_cooperative.value.cooperative = 1
    config.attrs = [attr_cooperative]
    config.numAttrs = 1
    params = ((7,), (ctypes.c_int,))
    r = face.cuLaunchKernelEx(config, f, params, 0)
    assert (r[0] if face_name == "driver" else r) == 0 or r is None
    assert recorded_attrs(lib) == (1, [(COOPERATIVE, 1)])
    config.attrs = [attr(drv, PRIORITY, 5), attr(drv, COOPERATIVE, 1)]
    config.numAttrs = 2
    face.cuLaunchKernelEx(config, f, params, 0)
    assert recorded_attrs(lib) == (2, [(PRIORITY, 5), (COOPERATIVE, 1)])


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_a_count_past_the_owned_array_is_refused_before_the_driver_reads_it(drv, lib, ctx,
                                                                           face_name):
    import cubind.cu as cu
    face = drv if face_name == "driver" else cu
    f = kernel(drv, lib)
    config = launch_config(drv)
    config.attrs = [attr(drv, COOPERATIVE, 1)]
    config.numAttrs = 2
    calls = lib.fakecuda_call_count(b"cuLaunchKernelEx")
    with pytest.raises(ValueError, match=r"cuLaunchKernelEx\(\): argument 'config': "
                                         r"CUlaunchConfig_st\.numAttrs is 2 but "
                                         r"CUlaunchConfig_st\.attrs holds 1 element$"):
        face.cuLaunchKernelEx(config, f, ((7,), (ctypes.c_int,)), 0)
    assert lib.fakecuda_call_count(b"cuLaunchKernelEx") == calls
    config.numAttrs = 0  # fewer is the caller's choice
    face.cuLaunchKernelEx(config, f, ((7,), (ctypes.c_int,)), 0)
    assert recorded_attrs(lib) == (0, [])
    assert lib.fakecuda_call_count(b"cuLaunchKernelEx") == calls + 1


def test_concurrent_sets_never_leave_the_field_pointing_at_freed_memory(drv):
    # Threads replace the array while others read it: every read sees one
    # of the lists whole, and the bytes at the field's address stay those
    # of a live array (checked by reading them back).
    c = drv.CUlaunchConfig()
    lists = [[attr(drv, PRIORITY, v)] * (1 + v % 3) for v in range(1, 5)]
    stop = threading.Event()
    errors = []

    def writer(k):
        try:
            for i in range(ROUNDS):
                c.attrs = lists[(i + k) % len(lists)]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def reader():
        try:
            while not stop.is_set():
                got = c.attrs
                if got == 0:
                    continue
                v = got[0].value.priority
                assert got == lists[v - 1], (v, got)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads + readers:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors, errors[0]
    got = c.attrs
    v = got[0].value.priority
    assert got == lists[v - 1]
    assert ctypes.string_at(field_address(c), 72) == ctypes.string_at(lists[v - 1][0].getPtr(), 72)


# ---- arrays of handles (extSemArray) ---------------------------------------

SEM_STRUCTS = ["CUDA_EXT_SEM_SIGNAL_NODE_PARAMS", "CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2",
               "CUDA_EXT_SEM_WAIT_NODE_PARAMS", "CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2"]


def sem_array_address(params):
    """The address the C extSemArray field holds (the struct's first
    member: offset 0), read from the struct's bytes."""
    return ctypes.c_uint64.from_address(params.getPtr()).value


def sems(drv, *values):
    return [drv.CUexternalSemaphore(v) for v in values]


@pytest.mark.parametrize("cls", SEM_STRUCTS)
def test_a_list_of_handles_is_copied_into_an_owned_array_and_reads_back(drv, cls):
    p = getattr(drv, cls)()
    hs = sems(drv, 0x7f0000001000, 0x7f0000002000, 0x30)
    p.extSemArray = hs
    got = p.extSemArray
    assert type(got) is list and [type(h) for h in got] == [drv.CUexternalSemaphore] * 3
    assert [int(h) for h in got] == [0x7f0000001000, 0x7f0000002000, 0x30]
    addr = sem_array_address(p)
    assert addr != 0
    assert list((ctypes.c_uint64 * 3).from_address(addr)) == [0x7f0000001000, 0x7f0000002000,
                                                              0x30]
    assert p.numExtSems == 0  # the count stays the caller's to set
    p.extSemArray = (hs[2], 0x44)  # a tuple, and ints are the handles' values
    assert [int(h) for h in p.extSemArray] == [0x30, 0x44]
    assert sem_array_address(p) not in (0, addr)
    assert list((ctypes.c_uint64 * 2).from_address(sem_array_address(p))) == [0x30, 0x44]
    p.extSemArray = []
    assert sem_array_address(p) == 0 and p.extSemArray == 0
    p.extSemArray = 0x1000  # the other pointer forms still give the address
    assert p.extSemArray == 0x1000
    buf = bytearray(16)
    p.extSemArray = buf
    assert p.extSemArray == sem_array_address(p) == ctypes.addressof(
        (ctypes.c_char * 16).from_buffer(buf))


def test_a_record_copy_carries_the_handle_array(drv):
    n = drv.CUgraphNodeParams()
    p = drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2()
    p.extSemArray = sems(drv, 0x11, 0x22)
    n.extSemSignal = p
    del p
    gc.collect()
    assert [int(h) for h in n.extSemSignal.extSemArray] == [0x11, 0x22]


def traced():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_the_handle_array_is_freed_when_replaced_cleared_or_the_struct_dies(drv):
    n = 4096
    hs = sems(drv, *range(1, n + 1))
    size = 8 * n
    tracemalloc.start()
    try:
        for clear in ([], None, 0, sems(drv, 5), "del"):
            p = drv.CUDA_EXT_SEM_WAIT_NODE_PARAMS()
            base = traced()
            p.extSemArray = hs
            assert traced() - base >= size, clear  # the array is held
            assert int(p.extSemArray[-1]) == n
            if clear == "del":
                del p
            else:
                p.extSemArray = clear
            assert traced() - base < size // 4, clear  # and freed
    finally:
        tracemalloc.stop()


def test_wrong_handle_elements_are_a_type_error_naming_the_field_and_the_index(drv):
    p = drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS()
    hs = sems(drv, 0x10, 0x20)
    p.extSemArray = hs
    before = sem_array_address(p)
    with pytest.raises(TypeError, match=r"^CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st\.extSemArray\[1\] "
                                        r"must be CUexternalSemaphore or int, not str$"):
        p.extSemArray = [hs[0], "x"]
    with pytest.raises(TypeError, match=r"extSemArray\[0\] must be CUexternalSemaphore or int, "
                                        r"not cubind.driver.CUstream$"):
        p.extSemArray = [drv.CUstream(0x10)]
    with pytest.raises(TypeError, match=r"extSemArray\[2\] must be CUexternalSemaphore or int, "
                                        r"not bool$"):
        p.extSemArray = [1, 2, True]
    with pytest.raises(OverflowError, match=r"extSemArray = -1 does not fit"):
        p.extSemArray = [1, -1]
    with pytest.raises(TypeError, match=r"extSemArray must be a list of handles"):
        p.extSemArray = 1.5
    # a failed set changes nothing
    assert sem_array_address(p) == before and [int(h) for h in p.extSemArray] == [0x10, 0x20]


def recorded_sems(lib):
    out = (ctypes.c_uint64 * 8)()
    n = lib.fakecuda_last_ext_sems(out, 8)
    return n, list(out[:max(0, min(n, 8))])


def signal_params(drv, handles):
    p = drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS()
    p.extSemArray = handles
    p.paramsArray = [drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS() for _ in handles]
    p.numExtSems = len(handles)
    return p


def test_the_driver_gets_the_handle_values_written_the_cuda_bindings_way(drv, lib, ctx):
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    try:
        p = signal_params(drv, sems(drv, 0x5000, 0x6000, 0x7000))
        err, _ = drv.cuGraphAddExternalSemaphoresSignalNode(graph, None, 0, p)
        # the fake records what it read and has no semaphore nodes
        assert err == drv.CUresult.CUDA_ERROR_NOT_SUPPORTED
        assert recorded_sems(lib) == (3, [0x5000, 0x6000, 0x7000])
        p.numExtSems = 1  # fewer is the caller's choice
        drv.cuGraphAddExternalSemaphoresSignalNode(graph, None, 0, p)
        assert recorded_sems(lib) == (1, [0x5000])
    finally:
        assert drv.cuGraphDestroy(graph)[0] == 0


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_a_count_past_the_owned_handle_array_is_refused_before_the_driver_reads_it(
        drv, lib, ctx, face_name):
    import cubind.cu as cu
    face = drv if face_name == "driver" else cu
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    try:
        p = signal_params(drv, sems(drv, 0x5000, 0x6000))
        p.paramsArray = [drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()] * 3
        p.numExtSems = 3
        calls = lib.fakecuda_call_count(b"cuGraphAddExternalSemaphoresSignalNode")
        with pytest.raises(ValueError, match=r"cuGraphAddExternalSemaphoresSignalNode\(\): "
                                             r"argument 'nodeParams': "
                                             r"CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st\.numExtSems is 3 "
                                             r"but CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st\.extSemArray "
                                             r"holds 2 elements$"):
            face.cuGraphAddExternalSemaphoresSignalNode(graph, None, 0, p)
        assert lib.fakecuda_call_count(b"cuGraphAddExternalSemaphoresSignalNode") == calls
    finally:
        assert drv.cuGraphDestroy(graph)[0] == 0
