# SPDX-License-Identifier: Apache-2.0
"""Junk that the bindings let through before (issue 27, item 7): enum
tables written from Python, keywords with an embedded NUL, enum
constructors given floats or str, buffers of the wrong kind in char/bytes
struct fields, handles given as C function pointers (parameters and struct
fields). Each test that refuses junk fails on 05a670f (the function-pointer
field test on 56ed141 too, which still took any __index__ object there);
test_enum_constructors_still_take_int_like_values and
test_a_ctypes_function_pointer_is_called_directly pass there: they guard
what the refusals must keep taking."""
import ctypes
import operator

import pytest

import cubind.cu as cu
from conftest import assert_no_growth, run_python


@pytest.mark.parametrize("table", ["_names_by_address_", "_value2member_map_", "__singletons__",
                                   "__members__"])
def test_enum_tables_are_read_only(drv, table):
    """05a670f: CUresult._value2name_[0] = 5 was taken, and repr then read
    the int as a str (garbage from the heap). The name table is now keyed
    by member address (_names_by_address_), as read-only as the others."""
    t = getattr(drv.CUresult, table)
    with pytest.raises(TypeError):
        t[0] = 5
    with pytest.raises(TypeError):
        t["CUDA_SUCCESS"] = 5
    with pytest.raises((TypeError, AttributeError)):
        del t[0]
    assert repr(drv.CUresult.CUDA_SUCCESS) == "<CUresult.CUDA_SUCCESS: 0>"
    assert drv.CUresult(0) is drv.CUresult.CUDA_SUCCESS
    assert drv.CUresult.CUDA_SUCCESS.name == "CUDA_SUCCESS"
    # still read like the dicts they were
    success = drv.CUresult.CUDA_SUCCESS
    assert dict(drv.CUresult._names_by_address_)[id(success)] == "CUDA_SUCCESS"
    assert drv.CUresult.__members__["CUDA_SUCCESS"] is drv.CUresult.CUDA_SUCCESS
    assert drv.CUresult._value2member_map_.get(0) is drv.CUresult.CUDA_SUCCESS


@pytest.mark.parametrize("face", ["driver", "cu"])
def test_a_keyword_with_an_embedded_nul_is_not_its_prefix(drv, face):
    """05a670f compared the keyword as a C string: "ordinal\\0x" was ordinal."""
    f = (drv if face == "driver" else cu).cuDeviceGet
    with pytest.raises(TypeError, match="unexpected keyword argument 'ordinal\\\\x00x'"):
        f(**{"ordinal\0x": 0})
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        f(**{"ordina": 0})
    r = f(ordinal=0)
    assert (r[0] if face == "driver" else 0) == 0


def test_a_struct_keyword_with_an_embedded_nul_is_not_a_field(drv):
    with pytest.raises(TypeError, match="unexpected keyword argument 'srcY\\\\x00x'"):
        drv.CUDA_MEMCPY2D(**{"srcY\0x": 3})
    assert drv.CUDA_MEMCPY2D(srcY=3).srcY == 3


class Index:
    def __index__(self):
        return 0


@pytest.mark.parametrize("value, exc", [(0.5, ValueError), ("0", ValueError), (b"0", ValueError),
                                        (None, ValueError), ([0], TypeError)])
def test_enum_constructors_convert_nothing(drv, value, exc):
    """05a670f converted with int(): CUresult(0.5) was CUDA_SUCCESS, and so
    was CUresult("0"). A value is looked up as it is, as cuda.bindings'
    enums do: none of these equals a member's value."""
    with pytest.raises(exc):
        drv.CUresult(value)


def test_enum_constructors_find_an_equal_number(drv):
    """0.0 == 0 and hashes alike: cuda.bindings' lookup finds the member."""
    assert drv.CUresult(0.0) is drv.CUresult.CUDA_SUCCESS


def test_enum_constructors_still_take_int_like_values(drv):
    assert drv.CUresult(0) is drv.CUresult.CUDA_SUCCESS
    assert drv.CUresult(False) is drv.CUresult.CUDA_SUCCESS
    assert drv.CUresult(Index()) is drv.CUresult.CUDA_SUCCESS
    assert drv.CUresult(drv.CUresult.CUDA_ERROR_INVALID_VALUE) is \
        drv.CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(ValueError):
        drv.CUresult(123456789)


@pytest.mark.parametrize("value", [memoryview(b"abcdefgh")[::2],
                                   memoryview(bytearray(32)).cast("i")[::2]])
def test_a_char_field_given_a_buffer_of_the_wrong_kind_raises_type_error(drv, value):
    """05a670f raised the buffer's BufferError (not contiguous)."""
    u = drv.CUuuid()
    with pytest.raises(TypeError, match=r"CUuuid(_st)?\.bytes must be bytes") as e:
        u.bytes = value
    assert isinstance(e.value.__cause__, BufferError)
    u.bytes = b"abc"
    assert u.bytes[:4] == b"abc\0"


HANDLE_AS_FUNCTION = r"""
import sys, cubind.driver as d
d.cuInit(0)
r, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
r, s = d.cuStreamCreate(0)
r, ev = d.cuEventCreate(0)
for fn in (s, ev, d.CUdeviceptr(s.getPtr()), d.CUstream(0), 1.5, "f"):
    try:
        d.cuLaunchHostFunc(s, fn, None)
    except TypeError as e:
        assert "'fn' must be a Python callable, an int address, CUhostFn, a ctypes function " \
            "pointer or None" in str(e), e
        continue
    d.cuStreamSynchronize(s)
    print("taken", type(fn).__name__)
    sys.exit(1)
for fn in (s, d.CUdeviceptr(8)):
    try:
        d.cuLogsRegisterCallback(fn, None)
    except TypeError as e:
        assert "'callbackFunc' must be an int address, CUlogsCallback, a ctypes function " \
            "pointer or None" in str(e), e
        continue
    except Exception as e:  # taken, then refused by the fake, which lacks it
        pass
    print("taken", type(fn).__name__)
    sys.exit(1)
print("refused")
"""


def test_a_handle_is_no_function_pointer():
    """05a670f read a CUstream's (CUevent's, CUdeviceptr's) value as the
    address of the host function and called it: a crash on the driver's
    thread. In a fresh interpreter for that reason."""
    p = run_python(HANDLE_AS_FUNCTION)
    assert p.returncode == 0 and p.stdout.split() == ["refused"], (p.returncode, p.stdout,
                                                                   p.stderr[-3000:])


def test_a_ctypes_function_pointer_is_called_directly(drv, fake, ctx):
    """A CFUNCTYPE instance is a C function pointer: it is called with the
    C userData (not as a Python callable given a Python payload), on the
    interpreter's callback runner, which keeps it alive until then
    (test_callback_lifetime.py). The parameter's own function-pointer class
    holding its address (CUhostFn(address), the form cuda.bindings takes),
    and a class of that name of another module (cuda.bindings' own), read
    through getPtr(), are addresses: the driver's thread calls them."""
    fake.fakecuda_thread_kind.restype = ctypes.c_int
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    hits = []
    cfn = CB(lambda p: hits.append((p, fake.fakecuda_thread_kind())))
    box = ctypes.c_int(5)
    err, s = drv.cuStreamCreate(0)
    assert err == 0
    assert drv.cuLaunchHostFunc(s, cfn, ctypes.addressof(box))[0] == 0
    address = ctypes.cast(cfn, ctypes.c_void_p).value
    assert drv.cuLaunchHostFunc(s, drv.CUhostFn(address), ctypes.addressof(box))[0] == 0

    class CUhostFn:
        """cuda.bindings' kind: getPtr() is where the function pointer is."""

        def __init__(self, address):
            self.cell = ctypes.c_void_p(address)

        def getPtr(self):
            return ctypes.addressof(self.cell)

    assert drv.cuLaunchHostFunc(s, CUhostFn(address), ctypes.addressof(box))[0] == 0
    assert drv.cuStreamSynchronize(s)[0] == 0
    # 0: not a thread of the fake (the runner); 1: a stream worker of the fake
    assert hits == [(ctypes.addressof(box), 0)] + [(ctypes.addressof(box), 1)] * 2
    assert drv.cuStreamDestroy(s)[0] == 0


def test_refused_calls_leave_nothing_behind(drv, ctx):
    """Each refusal above, repeated: neither the interpreter's blocks nor
    the resident set grow (conftest.assert_no_growth, as the host-buffer
    and count tests check), and the next valid call succeeds."""
    err, s = drv.cuStreamCreate(0)
    assert err == 0
    u = drv.CUuuid()
    strided = memoryview(b"abcdefgh")[::2]
    calls = (lambda: drv.cuDeviceGet(**{"ordinal\0x": 0}),
             lambda: drv.CUDA_MEMCPY2D(**{"srcY\0x": 3}),
             lambda: drv.CUresult([0.5]),
             lambda: setattr(u, "bytes", strided),
             lambda: drv.cuLaunchHostFunc(s, s, None),
             lambda: operator.setitem(drv.CUresult._names_by_address_, 0, 5))

    def refusals():
        for call in calls:
            with pytest.raises(TypeError):
                call()

    assert_no_growth(refusals, rounds=500)
    assert drv.cuDeviceGet(ordinal=0)[0] == 0
    assert drv.cuStreamSynchronize(s)[0] == 0
    assert drv.cuStreamDestroy(s)[0] == 0


@pytest.mark.parametrize("cls", ["CUDA_HOST_NODE_PARAMS", "CUDA_HOST_NODE_PARAMS_v2"])
def test_a_function_pointer_field_takes_no_handle(drv, ctx, cls):
    """56ed141 took any __index__ object as CUDA_HOST_NODE_PARAMS(_v2).fn:
    a CUstream, CUevent or CUdeviceptr became the function the driver's
    thread calls for the host node (cuGraphAddHostNode,
    cuGraphHostNodeSetParams, CUgraphNodeParams.host). The field takes
    what a function-pointer parameter takes: an int, its own class
    (CUhostFn), a ctypes function pointer, None (and a Python callable:
    tests/python/test_host_node_callables.py)."""
    err, s = drv.cuStreamCreate(0)
    assert err == 0
    err, ev = drv.cuEventCreate(0)
    assert err == 0
    t = getattr(drv, cls)
    name = t.__name__.split(".")[-1]
    want = (rf"{name}\.fn must be an int address, CUhostFn, a ctypes function pointer, "
            rf"a Python callable or None, not ")
    for junk in (s, ev, drv.CUdeviceptr(0x1000), drv.CUstream(0), Index(), 1.5, "f", b"12345678"):
        p = t()
        with pytest.raises(TypeError, match=want):
            p.fn = junk
        assert p.fn == 0
        with pytest.raises(TypeError, match=want):
            t(fn=junk)
    params = drv.CUgraphNodeParams()
    with pytest.raises(TypeError, match=r"CUDA_HOST_NODE_PARAMS_v2(_st)?\.fn must be"):
        params.host.fn = s
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    cfn = CB(lambda p: None)
    address = ctypes.cast(cfn, ctypes.c_void_p).value
    for good, value in ((cfn, address), (drv.CUhostFn(address), address), (address, address),
                        (None, 0), (0, 0), (True, 1)):
        p = t()
        p.fn = good
        assert p.fn == value, good
        assert t(fn=good).fn == value, good
    params.host.fn = cfn
    assert params.host.fn == address
    assert drv.cuStreamDestroy(s)[0] == 0
    assert drv.cuEventDestroy(ev)[0] == 0
