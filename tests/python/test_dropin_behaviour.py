# SPDX-License-Identifier: Apache-2.0
"""Behaviour as cuda.bindings.driver's, beyond signatures (issue 25), on the
fake driver: enum classes as a class protocol, struct repr, char arrays from
ints, driver-filled handle arrays (phGraph_out), cuPointerGetAttributes
typed per attribute, and objects of cuda.bindings (stand-ins here: classes
whose module is cuda.bindings.driver) accepted where cubind takes its own.
tests/gpu/test_dropin_gpu.py checks the same on the real driver, against
the installed cuda.bindings where it can."""
import enum
import json
import pathlib

import pytest

from conftest import run_python

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "gen" / "data" / "classify_cuda13.json"


# ---- enums ------------------------------------------------------------------

def declared(model, name):
    return [(v["name"], v["value"]) for v in next(e for e in model["enums"] if e["name"] == name)["values"]]


def test_enum_class_protocol(drv, model):
    for e in model["enums"]:
        cls = getattr(drv, e["name"])
        names = [v["name"] for v in e["values"]]
        members = list(cls)
        assert [m.name for m in members] == names, e["name"]  # declaration order, aliases too
        assert len(cls) == len(names)
        assert [int(m) for m in members] == [v["value"] for v in e["values"]]
        assert list(cls.__members__) == names
        assert all(isinstance(m, cls) and m in cls and int(m) in cls for m in members)
        assert repr(cls) == "<enum '%s'>" % e["name"]
    assert int(max(drv.CUresult)) == max(v for _, v in declared(model, "CUresult"))
    assert "CUDA_SUCCESS" not in drv.CUresult and [] not in drv.CUresult and 123456 not in drv.CUresult


def test_enum_aliases_are_members_of_their_own(drv, model):
    """Names of one value are distinct members (each its own name); the
    value's member is the last declared, as cuda.bindings' __singletons__."""
    seen = 0
    for e in model["enums"]:
        cls = getattr(drv, e["name"])
        last = {}
        for name, value in ((v["name"], v["value"]) for v in e["values"]):
            last[value] = name
        for name, value in ((v["name"], v["value"]) for v in e["values"]):
            m = getattr(cls, name)
            assert m.name == name and m == value and cls.__members__[name] is m
            assert cls(value).name == last[value]
            assert cls(value) is cls.__singletons__[value] is cls._value2member_map_[value]
            seen += name != last[value]
    assert seen > 0  # cuda.h 13.0 has aliases (CU_CTX_BLOCKING_SYNC, ...)
    a, b = drv.CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC, drv.CUctx_flags.CU_CTX_BLOCKING_SYNC
    assert a == b and a is not b and drv.CUctx_flags(4) is b and repr(a) == "<CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC: 4>"


def test_enum_lookup_by_value_and_name(drv):
    assert drv.CUresult(1) is drv.CUresult.CUDA_ERROR_INVALID_VALUE
    assert drv.CUresult.__members__["CUDA_ERROR_INVALID_VALUE"] is drv.CUresult(1)
    assert getattr(drv.CUresult, "CUDA_ERROR_INVALID_VALUE") is drv.CUresult(1)
    with pytest.raises(ValueError):
        drv.CUresult(-5)
    with pytest.raises(TypeError):
        drv.CUresult(value=1)
    import cubind.cu
    assert cubind.cu.CUresult is drv.CUresult


# ---- struct repr ------------------------------------------------------------

def test_struct_repr_format(drv):
    r = repr(drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS())
    assert r.split("\n")[:4] == ["params :", "    fence :", "        value : 0", "    nvSciSync :"]
    assert "        fence : 0x0\n        reserved : 0\n    keyedMutex :\n        key : 0" in r
    assert r.endswith("flags : 0\nreserved : [%s]" % ", ".join(["0"] * 16))
    k = drv.CUDA_KERNEL_NODE_PARAMS_st()
    k.gridDimX, k.func = 7, drv.CUfunction(0x20)
    lines = repr(k).split("\n")
    assert lines[0] == "func : <CUfunction 0x20>" and lines[1] == "gridDimX : 7"
    assert "kernelParams : 0" in lines and "extra : 0" in lines
    h = drv.CUDA_HOST_NODE_PARAMS()
    h.userData = 255
    assert "userData : 0xff" in repr(h).split("\n")
    assert str(drv.CUlaunchAttributeValue())  # every field of a union readable


# ---- char arrays --------------------------------------------------------------

def test_char_array_from_ints(drv):
    v = drv.CUipcMemHandle_st()
    for x in (-128, -1, 0, 1, 127, 128, 255):
        v.reserved = [x] * 64
        assert v.reserved[0] == x % 256 and v.reserved == bytes([x % 256]) * 64
    v.reserved = (1, 2, 3)
    assert v.reserved[:4] == b"\x01\x02\x03\x00" and len(v.reserved) == 64
    v.reserved = b"\xff" * 64
    assert v.reserved == b"\xff" * 64


@pytest.mark.parametrize("value, exc", [([256] * 64, OverflowError), ([-129], OverflowError),
                                        ([1 << 70], OverflowError), (["a"] * 64, TypeError),
                                        ([1.0], TypeError), ([0] * 65, ValueError), ("ab", TypeError)])
def test_char_array_bad_input_changes_nothing(drv, value, exc):
    v = drv.CUipcMemHandle_st()
    v.reserved = [7] * 64
    with pytest.raises(exc, match="reserved"):
        v.reserved = value
    assert v.reserved == b"\x07" * 64


# ---- driver-filled handle arrays ----------------------------------------------

def conditional_params(drv, kind, size):
    params = drv.CUgraphNodeParams()
    params.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
    params.conditional.type = getattr(drv.CUgraphConditionalNodeType, kind)
    params.conditional.size = size
    return params


def test_phgraph_out_is_sized_by_size_and_filled_by_the_driver(drv, ctx):
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    params = conditional_params(drv, "CU_GRAPH_COND_TYPE_IF", 0)
    assert params.conditional.phGraph_out == [] and len(params.conditional.phGraph_out) == 0
    params.conditional.size = 2
    early = params.conditional.phGraph_out
    # NULL: `size` long and each item the NULL handle, as cuda.bindings
    # reads it (upstream's test_conditional: int(item) == 0 before the call)
    assert len(early) == 2
    for i in (0, 1, -1):
        assert isinstance(early[i], drv.CUgraph) and int(early[i]) == 0
    assert [int(g) for g in early] == [0, 0]
    with pytest.raises(IndexError, match="phGraph_out"):
        early[2]
    assert early != [None, None] and "not filled yet (NULL)" in repr(early)
    err, node = drv.cuGraphAddNode(graph, None, None, 0, params)
    assert err == 0
    out = params.conditional.phGraph_out
    assert len(out) == 2 and all(isinstance(g, drv.CUgraph) for g in out)
    assert 0 not in {int(g) for g in out} and int(out[0]) != int(out[1])
    # items are read on access: the sequence read before the call sees them
    assert list(early) == list(out) and early == list(out) and out == tuple(out)
    assert out[-1] == out[1] and out[-2] == out[0] and out[::-1] == [out[1], out[0]]
    assert out[1:] == [out[1]] and out[5:] == [] and out != [out[0]]
    with pytest.raises(IndexError):
        out[-3]
    with pytest.raises(TypeError, match="phGraph_out"):
        out["0"]
    assert "phGraph_out : [<CUgraph 0x" in repr(params.conditional)
    assert repr(out) == repr(list(out))
    assert drv.cuGraphDestroy(graph) == (0,)


def test_phgraph_out_as_upstream_test_conditional_reads_it(drv, ctx):
    # cuda-python's test_cuda.py::test_conditional: len() before the call,
    # then item 0 as the body graph the driver made
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    params = conditional_params(drv, "CU_GRAPH_COND_TYPE_IF", 1)
    assert len(params.conditional.phGraph_out) == 1
    assert drv.cuGraphAddNode(graph, None, None, 0, params)[0] == 0
    body = params.conditional.phGraph_out[0]
    assert isinstance(body, drv.CUgraph) and int(body) != 0
    # a graph of the fake driver's: it answers for it
    assert drv.cuGraphGetNodes(body, 0)[0] == 0
    assert drv.cuGraphDestroy(graph) == (0,)


def test_phgraph_out_repr_shows_the_first_items_only(drv, ctx):
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    params = conditional_params(drv, "CU_GRAPH_COND_TYPE_SWITCH", 6)
    assert drv.cuGraphAddNode(graph, None, None, 0, params)[0] == 0
    out = params.conditional.phGraph_out
    text = repr(out)
    assert text.startswith("[" + ", ".join(repr(g) for g in out[:4]) + ", ...")
    assert repr(out[4]) not in text and "(6 in all)" in text
    assert drv.cuGraphDestroy(graph) == (0,)


@pytest.mark.tsan
def test_phgraph_out_is_shared_by_threads(drv, ctx):
    # immutable after creation: threads read one sequence without locks
    import threading
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    params = conditional_params(drv, "CU_GRAPH_COND_TYPE_SWITCH", 8)
    assert drv.cuGraphAddNode(graph, None, None, 0, params)[0] == 0
    out = params.conditional.phGraph_out
    want = [int(g) for g in out]
    del params  # the sequence keeps the struct alive
    seen = []

    def read():
        for _ in range(200):
            seen.append([int(g) for g in out] == want and len(out) == 8 and out == out[:])

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1600 and all(seen)
    assert drv.cuGraphDestroy(graph) == (0,)


def test_phgraph_out_null_with_a_huge_count_builds_nothing(drv):
    # On 4ed6c2d a NULL phGraph_out read as `size` zero handles: with size
    # 2**31 reading it (or repr of the struct) built 2**31 objects until
    # the machine ran out of memory. A child with an address-space limit,
    # so that a regression fails with MemoryError instead.
    # every driver-filled array field of the classification (its count
    # field set to the most it holds), not only the one known today
    fields = [(r["name"], f["name"], f["count_field"])
              for r in json.loads(GOLDEN.read_text())["records"]
              for f in r.get("fields", []) if f.get("kind") == "handle_out"]
    assert ("CUDA_CONDITIONAL_NODE_PARAMS", "phGraph_out", "size") in fields
    code = '''
import resource, sys, time
if "libasan" not in open("/proc/self/maps").read():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import cubind.driver as d
def check(seq, size, where):
    assert len(seq) == size, where
    for i in (0, size - 1, -1):
        assert int(seq[i]) == 0, where  # the NULL handle, nothing dereferenced
    assert seq != [], where
for record, field, count in %r:
    for size in (2**31, 2**32 - 1, 1):
        c = getattr(d, record)()
        setattr(c, count, size)
        t = time.perf_counter()
        check(getattr(c, field), size, (record, field, size))
        line = [l for l in repr(c).splitlines() if l.startswith(field + " : ")]
        assert len(line) == 1 and "not filled yet (NULL)" in line[0], repr(c)
        assert len(line[0]) < 200, line
        assert time.perf_counter() - t < 1.0
p = d.CUgraphNodeParams()
p.conditional.size = 2**31
check(p.conditional.phGraph_out, 2**31, "CUgraphNodeParams")
assert "phGraph_out : <" in repr(p) and len(repr(p)) < 20000
print("ok")
''' % (fields,)
    proc = run_python(code)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_phgraph_out_bad_input(drv):
    c = drv.CUDA_CONDITIONAL_NODE_PARAMS()
    with pytest.raises(TypeError, match="phGraph_out"):
        c.phGraph_out = "x"
    with pytest.raises(OverflowError, match="phGraph_out"):
        c.phGraph_out = -1
    c.phGraph_out = None
    assert c.phGraph_out == []


# ---- cuPointerGetAttributes ---------------------------------------------------

POINTER_ATTRS = ["CU_POINTER_ATTRIBUTE_CONTEXT", "CU_POINTER_ATTRIBUTE_MEMORY_TYPE",
                 "CU_POINTER_ATTRIBUTE_DEVICE_POINTER", "CU_POINTER_ATTRIBUTE_BUFFER_ID",
                 "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR",
                 "CU_POINTER_ATTRIBUTE_RANGE_SIZE"]


def test_pointer_get_attributes_typed_as_the_single_call(drv, ctx):
    attrs = [getattr(drv.CUpointer_attribute, a) for a in POINTER_ATTRS]
    err, ptr = drv.cuMemAlloc(4096)
    assert err == 0
    single = [drv.cuPointerGetAttribute(a, ptr) for a in attrs]
    assert all(e == 0 for e, _ in single)
    err, values = drv.cuPointerGetAttributes(len(attrs), attrs, ptr)
    assert err == 0 and len(values) == len(attrs)
    assert [str(v) for v in values] == [str(v) for _, v in single]
    assert [type(v) for v in values] == [type(v) for _, v in single]
    assert isinstance(values[0], drv.CUcontext) and int(values[2]) == int(ptr)
    assert values[6] == 4096
    # fewer values than attributes given: only the first n
    err, two = drv.cuPointerGetAttributes(2, attrs, ptr)
    assert err == 0 and [str(v) for v in two] == [str(v) for _, v in single[:2]]
    assert drv.cuMemFree(ptr) == (0,)


def test_pointer_get_attributes_device_ordinal_of_no_allocation(drv, ctx):
    attrs = [drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL]
    err, values = drv.cuPointerGetAttributes(len(attrs), attrs, 0)
    assert err == 0 and values == [-2]


def test_pointer_get_attributes_bad_input(drv, ctx):
    a = drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    with pytest.raises(ValueError, match="attributes"):
        drv.cuPointerGetAttributes(2, [a], 0)
    with pytest.raises(TypeError, match="attributes"):
        drv.cuPointerGetAttributes(1, [drv.CUresult.CUDA_SUCCESS], 0)
    with pytest.raises(TypeError, match="attributes"):
        drv.cuPointerGetAttributes(1, 5, 0)
    with pytest.raises(OverflowError, match="numAttributes"):
        drv.cuPointerGetAttributes(-1, [a], 0)
    assert drv.cuPointerGetAttributes(1, [a], 0)[0] == 0  # still usable


# ---- mixed code bases: cuda.bindings' objects ----------------------------------

def foreign(name, base=object, **body):
    """A stand-in for cuda.bindings.driver's class `name`."""
    return type(name, (base,), dict(body, __module__="cuda.bindings.driver"))


def foreign_handle(name):
    def init(self, value=0):
        self._v = value
    return foreign(name, __init__=init, __int__=lambda self: self._v,
                   __index__=lambda self: self._v, getPtr=lambda self: id(self))


def test_int_subclasses_are_handle_values(drv, ctx):
    """A widely used client passes CUstream_flags.CU_STREAM_DEFAULT as a stream."""
    err, ptr = drv.cuMemAlloc(64)
    assert err == 0
    data = bytearray(64)
    assert drv.cuMemcpyHtoDAsync(ptr, data, 64, drv.CUstream_flags.CU_STREAM_DEFAULT) == (0,)
    assert drv.cuStreamSynchronize(drv.CUstream_flags.CU_STREAM_DEFAULT) == (0,)
    assert drv.cuMemFree(ptr) == (0,)


def test_cuda_bindings_handles_are_taken(drv, ctx):
    CUdeviceptr, CUstream, CUcontext = (foreign_handle(n) for n in ("CUdeviceptr", "CUstream", "CUcontext"))
    err, ptr = drv.cuMemAlloc(64)
    assert err == 0
    src = bytearray(range(64))
    back = bytearray(64)
    assert drv.cuMemcpyHtoDAsync(CUdeviceptr(int(ptr)), src, 64, CUstream(0)) == (0,)
    assert drv.cuStreamSynchronize(CUstream(0)) == (0,)
    assert drv.cuMemcpyDtoH(back, CUdeviceptr(int(ptr)), 64) == (0,)
    assert back == src
    assert drv.cuCtxSetCurrent(CUcontext(int(ctx))) == (0,)
    # a struct field of the class takes it too
    p = drv.CUDA_MEMCPY2D()
    p.srcDevice = CUdeviceptr(int(ptr))
    assert int(p.srcDevice) == int(ptr)
    # another class of cuda.bindings is refused, naming the parameter
    with pytest.raises(TypeError, match="'hStream'"):
        drv.cuStreamSynchronize(CUcontext(0))
    with pytest.raises(OverflowError, match="dptr"):
        drv.cuMemFree(CUdeviceptr(-1))
    # a class of that name from elsewhere is no handle: its getPtr() is not
    # read (an object with __int__ is taken as that int, as any number)
    with pytest.raises(TypeError, match="dptr"):
        drv.cuMemFree(type("CUdeviceptr", (), {"getPtr": lambda self: 0})())
    assert drv.cuMemFree(CUdeviceptr(int(ptr))) == (0,)


def test_cuda_bindings_enum_members_are_taken(drv, ctx):
    ForeignAttr = enum.IntEnum("CUdevice_attribute", {"CU_DEVICE_ATTRIBUTE_WARP_SIZE": 10},
                               module="cuda.bindings.driver")
    Other = enum.IntEnum("CUresult", {"X": 10}, module="cuda.bindings.driver")
    want = drv.cuDeviceGetAttribute(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0)
    assert drv.cuDeviceGetAttribute(ForeignAttr.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0) == want
    with pytest.raises(TypeError, match="attrib"):
        drv.cuDeviceGetAttribute(Other.X, 0)
    d = drv.CUDA_ARRAY_DESCRIPTOR()
    fmt = enum.IntEnum("CUarray_format", {"CU_AD_FORMAT_FLOAT": 0x20}, module="cuda.bindings.driver")
    d.Format = fmt.CU_AD_FORMAT_FLOAT
    assert d.Format is drv.CUarray_format.CU_AD_FORMAT_FLOAT


# ---- interop headers (cudaProfiler.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h) ------------

INTEROP = ["cuProfilerStart", "cuProfilerStop", "cuGraphicsGLRegisterBuffer",
           "cuGraphicsGLRegisterImage", "cuGLGetDevices", "cuGraphicsEGLRegisterImage",
           "cuEGLStreamConsumerConnect", "cuEGLStreamConsumerConnectWithFlags",
           "cuEGLStreamConsumerDisconnect", "cuEGLStreamConsumerAcquireFrame",
           "cuEGLStreamConsumerReleaseFrame", "cuEGLStreamProducerConnect",
           "cuEGLStreamProducerDisconnect", "cuEGLStreamProducerPresentFrame",
           "cuEGLStreamProducerReturnFrame", "cuGraphicsResourceGetMappedEglFrame",
           "cuEventCreateFromEGLSync", "cuVDPAUGetDevice", "cuVDPAUCtxCreate",
           "cuGraphicsVDPAURegisterVideoSurface", "cuGraphicsVDPAURegisterOutputSurface"]


def test_interop_functions_and_types_are_bound(drv, model):
    import cubind.cu as cu
    for name in INTEROP:
        assert callable(getattr(drv, name)) and callable(getattr(cu, name)), name
    declared = {f["name"] for f in model["functions"] if f.get("interop")}
    assert set(INTEROP) <= declared
    for name in ("GLenum", "GLuint", "EGLint", "VdpDevice", "VdpVideoSurface", "VdpOutputSurface"):
        cls = getattr(drv, name)
        assert int(cls(7)) == 7 and repr(cls(7)) == "<%s 7>" % name
    for name in ("EGLImageKHR", "EGLStreamKHR", "EGLSyncKHR", "CUeglStreamConnection", "VdpGetProcAddress"):
        assert int(getattr(drv, name)(0x10)) == 0x10
    assert drv.MAX_PLANES == 3 and drv.CUDA_EGL_INFINITE_TIMEOUT == 0xFFFFFFFF
    assert list(drv.CUGLDeviceList)[0].name == "CU_GL_DEVICE_LIST_ALL"


def test_profiler(drv, ctx):
    assert drv.cuProfilerStart() == (0,) and drv.cuProfilerStop() == (0,)


def test_interop_missing_from_the_driver_raises_when_called(drv, ctx):
    import cubind
    import cubind.cu as cu
    with pytest.raises(cubind.FunctionNotFoundError, match="cuGraphicsGLRegisterBuffer"):
        drv.cuGraphicsGLRegisterBuffer(drv.GLuint(1), 0)
    with pytest.raises(cubind.FunctionNotFoundError, match="cuVDPAUGetDevice"):
        cu.cuVDPAUGetDevice(1, 0)
    # arguments are checked first: TypeError / OverflowError name them
    with pytest.raises(TypeError, match="'conn'"):
        drv.cuEGLStreamConsumerDisconnect(5)
    with pytest.raises(OverflowError, match="buffer"):
        drv.cuGraphicsGLRegisterBuffer(-1, 0)
    with pytest.raises(cubind.FunctionNotFoundError):
        drv.cuEGLStreamConsumerDisconnect(drv.CUeglStreamConnection())
    assert drv.cuProfilerStart() == (0,)  # the process stays usable


def test_egl_frame():
    import cubind.driver as cuda
    val = cuda.CUeglFrame()
    assert [int(a) for a in val.frame.pArray] == [0, 0, 0]
    val.frame.pArray = [1, 2, 3]
    assert [int(a) for a in val.frame.pArray] == [1, 2, 3]
    val.frame.pArray = [cuda.CUarray(4), 2, 3]
    assert [type(a) for a in val.frame.pArray] == [cuda.CUarray] * 3
    assert [int(a) for a in val.frame.pArray] == [4, 2, 3]
    val.frame.pPitch = [4, 2, 3]  # a union: pPitch shares pArray's bytes
    assert val.frame.pPitch == [4, 2, 3] and int(val.frame.pArray[0]) == 4
    with pytest.raises(IndexError, match="pArray"):
        val.frame.pArray = [1, 2]
    assert "frame :\n    pArray : [<CUarray 0x4>" in repr(val)


# ---- cubind.utils: cuda.bindings.utils' get_cuda_native_handle ----------------

def test_get_cuda_native_handle(drv, model):
    """What numba-cuda calls on every handle it holds (found running its
    tests on cubind, scripts/gpu-run clients): the address an opaque-pointer
    handle holds, of cubind's classes and of cuda.bindings' (mixed code
    bases); integer-valued handles and other objects raise cuda.bindings'
    TypeError."""
    from cubind.utils import get_cuda_native_handle
    names = [h["name"] for h in model["handles"]]
    assert "CUstream" in names and "CUgraphExec" in names
    for i, name in enumerate(names):
        value = 0x1000 + 16 * i
        got = get_cuda_native_handle(getattr(drv, name)(value))
        assert type(got) is int and got == value, name
        assert get_cuda_native_handle(foreign_handle(name)(value)) == value, name
    assert get_cuda_native_handle(drv.CUstream(0)) == 0
    assert get_cuda_native_handle(drv.CUcontext(2**64 - 1)) == 2**64 - 1
    for value_class in ("CUdevice", "CUdeviceptr", "CUtexObject", "CUmemGenericAllocationHandle"):
        with pytest.raises(TypeError, match=r"^Unknown type: <class 'cubind\.driver\.%s'>$" % value_class):
            get_cuda_native_handle(getattr(drv, value_class)(1))
        with pytest.raises(TypeError, match="^Unknown type: "):
            get_cuda_native_handle(foreign_handle(value_class)(1))
    # not handles: ints, None, a struct, a look-alike outside cuda.bindings,
    # a cuda.bindings class cubind has no twin for
    for other in (5, None, drv.CUDA_MEMCPY2D(), type("CUstream", (), {"__int__": lambda s: 1})(),
                  foreign_handle("CUnotAHandle")(1)):
        with pytest.raises(TypeError, match=r"^Unknown type: <class '.*'>$"):
            get_cuda_native_handle(other)
