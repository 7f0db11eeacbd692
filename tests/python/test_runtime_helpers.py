# SPDX-License-Identifier: Apache-2.0
"""cuda.bindings.runtime's helpers in cubind.runtime and cubind.cudart:
the maker rules' make_cudaExtent / make_cudaPos / make_cudaPitchedPtr,
sizeof (the sizeof rule) and getLocalRuntimeVersion (an alias rule of
cudaRuntimeGetVersion), as gen/runtime.rules declares them. None of them
reaches the driver; getLocalRuntimeVersion runs in a fresh interpreter
without the fake driver (the runtime reaches the driver's private tables,
tests/python/test_runtime.py says why)."""
import ctypes
import inspect

import pytest

from conftest import ROOT
from test_runtime import run_no_driver


@pytest.fixture(scope="module", params=["runtime", "cudart"])
def face(request):
    import importlib
    return importlib.import_module("cubind." + request.param)


MAKERS = [
    ("make_cudaExtent", "cudaExtent", ["w", "h", "d"], ["width", "height", "depth"]),
    ("make_cudaPos", "cudaPos", ["x", "y", "z"], ["x", "y", "z"]),
    ("make_cudaPitchedPtr", "cudaPitchedPtr", ["d", "p", "xsz", "ysz"],
     ["ptr", "pitch", "xsize", "ysize"]),
]


@pytest.mark.parametrize("name, cls, params, fields", MAKERS)
def test_makers_set_each_field_from_its_parameter(face, name, cls, params, fields):
    make = getattr(face, name)
    assert list(inspect.signature(make).parameters) == params
    values = [11 + 7 * k for k in range(len(params))]
    for obj in (make(*values), make(**dict(zip(params, values)))):
        assert type(obj) is getattr(face, cls)
        assert [int(getattr(obj, f)) for f in fields] == values
    # a new object each call, not a shared one
    assert make(*values) is not make(*values)


@pytest.mark.parametrize("name, cls, params, fields", MAKERS)
def test_maker_bad_input_names_the_parameter(face, name, cls, params, fields):
    make = getattr(face, name)
    last = params[-1]
    good = [1] * (len(params) - 1)
    with pytest.raises(TypeError, match=r"%s\(\): argument '%s'" % (name, last)):
        make(*good, "x")
    with pytest.raises(OverflowError, match=r"%s\(\): argument '%s'" % (name, last)):
        make(*good, -1)
    with pytest.raises(TypeError, match="missing required argument '%s'" % last):
        make(*good)
    with pytest.raises(TypeError, match="takes %d arguments" % len(params)):
        make(*good, 1, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        make(*good, 1, nope=1)


def test_make_cudaPitchedPtr_takes_a_buffer_address(face):
    buf = ctypes.create_string_buffer(64)
    p = face.make_cudaPitchedPtr(ctypes.addressof(buf), 64, 64, 1)
    assert int(p.ptr) == ctypes.addressof(buf)


def test_sizeof_gives_the_c_size_of_struct_and_handle_classes(face):
    assert face.sizeof(face.cudaExtent) == 3 * ctypes.sizeof(ctypes.c_size_t)
    assert face.sizeof(face.cudaPos) == 3 * ctypes.sizeof(ctypes.c_size_t)
    assert face.sizeof(face.dim3) == 12
    assert face.sizeof(face.cudaChannelFormatDesc) == 5 * 4
    # a typedef name of a struct is the same class
    assert face.sizeof(face.cudaGraphEdgeData) == face.sizeof(face.cudaGraphEdgeData_st) == 8
    # handles are pointers
    for h in ("cudaStream_t", "cudaEvent_t", "cudaGraph_t", "cudaArray_t", "cudaHostFn_t"):
        assert face.sizeof(getattr(face, h)) == ctypes.sizeof(ctypes.c_void_p), h
    assert face.sizeof(face.cudaDeviceProp) > 1000


@pytest.mark.parametrize("obj", [int, object, None, 8, "cudaExtent"])
def test_sizeof_refuses_what_is_no_class_of_the_module(face, obj):
    with pytest.raises(TypeError, match="Unknown type"):
        face.sizeof(obj)


def test_sizeof_refuses_an_instance_and_an_enum(face):
    with pytest.raises(TypeError, match="Unknown type"):
        face.sizeof(face.cudaExtent())
    with pytest.raises(TypeError, match="Unknown type"):
        face.sizeof(face.cudaError_t)


def test_getLocalRuntimeVersion_is_cudaRuntimeGetVersion(face):
    fn = face.getLocalRuntimeVersion
    assert list(inspect.signature(fn).parameters) == []
    assert fn.__name__ == "getLocalRuntimeVersion"
    assert "cudaRuntimeGetVersion" in fn.__doc__
    with pytest.raises(TypeError):
        fn(1)


def test_getLocalRuntimeVersion_answers_as_cudaRuntimeGetVersion():
    out = run_no_driver("""
import cubind.runtime as r, cubind.cudart as c
print(r.getLocalRuntimeVersion() == r.cudaRuntimeGetVersion(), r.getLocalRuntimeVersion()[1] >= 12000)
print(c.getLocalRuntimeVersion() == c.cudaRuntimeGetVersion() == r.CUDART_VERSION)
""")
    assert out.split() == ["True", "True", "True"]


def test_stubs_declare_the_helpers():
    for stub in ("runtime.pyi", "cudart.pyi"):
        text = (ROOT / "out" / stub).read_text()
        assert "def make_cudaExtent(w: Any, h: Any, d: Any) -> cudaExtent: ..." in text
        assert "def sizeof(objType: type, /) -> int: ..." in text
        assert "def getLocalRuntimeVersion() ->" in text


def test_a_record_returned_by_value_is_the_first_output():
    """cudaCreateChannelDesc returns its struct by value (no cudaError_t):
    the tuple face gives (cudaSuccess, the struct), the raising face the
    struct, as cuda.bindings does."""
    out = run_no_driver("""
import cubind.runtime as r, cubind.cudart as c
K = r.cudaChannelFormatKind
err, d = r.cudaCreateChannelDesc(32, 0, 0, 0, K.cudaChannelFormatKindFloat)
print(err.name, type(d).__name__, d.x, d.y, d.z, d.w, d.f.name)
d2 = c.cudaCreateChannelDesc(x=8, y=16, z=0, w=0, f=K.cudaChannelFormatKindUnsigned)
print(type(d2).__name__, d2.x, d2.y, d2.f.name, d2 is not d)
# a new object each call, not a cached one
print(r.cudaCreateChannelDesc(1, 0, 0, 0, 0)[1] is not r.cudaCreateChannelDesc(1, 0, 0, 0, 0)[1])
""")
    lines = out.splitlines()
    assert lines[0] == "cudaSuccess cudaChannelFormatDesc 32 0 0 0 cudaChannelFormatKindFloat"
    assert lines[1] == "cudaChannelFormatDesc 8 16 cudaChannelFormatKindUnsigned True"
    assert lines[2] == "True"


def test_a_record_returning_function_refuses_bad_input(face):
    with pytest.raises(TypeError, match=r"cudaCreateChannelDesc\(\): argument 'w'"):
        face.cudaCreateChannelDesc(1, 2, 3, "x", 0)
    with pytest.raises(TypeError, match="missing required argument 'f'"):
        face.cudaCreateChannelDesc(1, 2, 3, 4)


def test_stubs_type_the_returned_record():
    assert ("-> tuple[cudaError_t, cudaChannelFormatDesc | None]: ..."
            in (ROOT / "out" / "runtime.pyi").read_text())
    assert ("w: int, f: cudaChannelFormatKind | int) -> cudaChannelFormatDesc: ..."
            in (ROOT / "out" / "cudart.pyi").read_text())


def test_a_void_pointer_out_rule_returns_the_address(face):
    """cudaGraphMemFreeNodeGetParams's `void *dptr_out` (an out rule): the
    address the runtime writes is returned, as cuda.bindings returns it,
    not taken as a buffer."""
    fn = face.cudaGraphMemFreeNodeGetParams
    assert list(inspect.signature(fn).parameters) == ["node"]
    assert "dptr_out" in fn.__doc__
    with pytest.raises(TypeError):
        fn(0, bytearray(8))
    with pytest.raises(TypeError, match="node"):
        fn("x")


def test_count_rules_bind_capture_info_and_logs_dump(face):
    """The driver's count rules said for the runtime: cudaStreamGetCaptureInfo
    returns its runtime-owned arrays (dependencies and edge data, both
    counted by numDependencies_out), cudaLogsDumpToMemory fills the
    caller's buffer up to its in/out size, which must fit the buffer."""
    assert list(inspect.signature(face.cudaStreamGetCaptureInfo).parameters) == ["stream"]
    assert "edgeData_out" in face.cudaStreamGetCaptureInfo.__doc__
    sig = list(inspect.signature(face.cudaLogsDumpToMemory).parameters)
    assert sig == ["iterator", "buffer", "size", "flags"]
    with pytest.raises(ValueError, match="argument 'buffer' has 4 bytes, fewer than the 5"):
        face.cudaLogsDumpToMemory(None, bytearray(4), 5, 0)
    with pytest.raises(TypeError, match="stream"):
        face.cudaStreamGetCaptureInfo("x")


@pytest.mark.parametrize("name", ["cudaTextureObject_t", "cudaSurfaceObject_t",
                                  "cudaGraphConditionalHandle", "cudaLogIterator"])
def test_integer_typedefs_cuda_bindings_binds_as_classes(face, name):
    """value-handle rules: the classes cuda.bindings.runtime has for these
    integer typedefs, holding the value; sizeof gives the typedef's size."""
    import cubind.runtime as r
    cls = getattr(face, name)
    assert cls is getattr(r, name)
    assert int(cls(5)) == 5 and cls(5) == cls(5)
    assert face.sizeof(cls) in (4, 8)


def test_a_value_handle_parameter_takes_none_an_int_or_its_class(face):
    with pytest.raises(TypeError, match="iterator"):
        face.cudaLogsDumpToMemory("x", bytearray(8), 8, 0)
    for it in (None, 0, face.cudaLogIterator(0)):
        with pytest.raises(ValueError, match="buffer"):
            face.cudaLogsDumpToMemory(it, bytearray(4), 5, 0)
