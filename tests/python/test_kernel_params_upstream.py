# SPDX-License-Identifier: Apache-2.0
"""cuda.bindings' own kernel-parameter scenarios, against the fake driver.

NVIDIA/cuda-python keeps its kernelParams tests in
cuda_bindings/tests/test_kernelParams.py (a copy lives in
cuda_bindings/tests/legacy_api/test_legacy_kernelParams.py). Each test here
covers one test function of that file (its docstring names which), written
anew for cubind: the same kinds of arguments in the same kernelParams form,
launched through both faces (cubind.driver and cubind.cu), and the bytes
the fake driver recorded for the launch compared with bytes computed
independently (struct.pack, ctypes). The GPU counterpart, where kernels
write their arguments back, is tests/gpu/test_kernel_params_upstream_gpu.py.

After those: a struct of the bindings (CUextent3D, CUDA_ARRAY_DESCRIPTOR, a
view of a nested record, one wrapping foreign memory) as an argument in
every form, the ctypes types that cuda.bindings refuses in the
(values, types) form, and cuLaunchCooperativeKernel.

Each kernel gets a fresh name and its module is never unloaded (see the
layout-cache hazard in runtime/module/bind_packer.c).
"""
import ctypes
import enum
import struct

import pytest

import cubind.cu as cu
import test_packer as packer_tests
from test_packer import lib  # noqa: F401 (fixture)


@pytest.fixture(params=["driver", "cu"])
def face(request, drv):
    """The face a test launches through: the drop-in (status tuples) or the
    raising one (None on success)."""
    return drv if request.param == "driver" else cu


class Kernel(packer_tests.Kernel):
    """test_packer's fake kernel (parameters of these sizes at natural
    offsets, recorded() the bytes the fake received), launched through a
    face with the success check of that face."""

    def launch_via(self, face, params, cooperative=False, **kw):
        """Launches through face; asserts success the way that face reports it."""
        if cooperative:
            r = face.cuLaunchCooperativeKernel(self.f, 1, 1, 1, 1, 1, 1, 0, None, params, **kw)
        else:
            r = face.cuLaunchKernel(self.f, 1, 1, 1, 1, 1, 1, 0, None, params, None, **kw)
        if face is cu:
            assert r is None
        else:
            assert r == (self.drv.CUresult.CUDA_SUCCESS,), r


@pytest.fixture
def kernel(drv, lib, ctx):
    return lambda sizes: Kernel(drv, lib, sizes)


def q(value):
    return struct.pack("<Q", int(value))


class IntBox(ctypes.Structure):
    """A record of one int, passed by value."""
    _fields_ = [("value", ctypes.c_int)]


# ---- one test per test function of upstream's test_kernelParams.py -------------

def test_no_parameters(kernel, face):
    """Upstream: test_kernelParams_empty (cuda_bindings/tests/test_kernelParams.py).

    A kernel without parameters, launched with an empty (values, types) pair
    and with None: both reach the driver, with no argument bytes."""
    k = kernel([])
    k.launch_via(face, ((), ()))
    assert k.count() == 1 and k.recorded() == b""
    k.launch_via(face, None)
    assert k.count() == 2 and k.recorded() == b""


# Every ctypes type upstream's kernel takes by value, in its parameter order,
# with a value of this file's choosing for each.
EVERY_TYPE = [
    (ctypes.c_bool, True), (ctypes.c_char, b"q"), (ctypes.c_wchar, "\u20ac"),
    (ctypes.c_byte, -100), (ctypes.c_ubyte, 200), (ctypes.c_short, -12345),
    (ctypes.c_ushort, 54321), (ctypes.c_int, -123456789), (ctypes.c_uint, 3000000000),
    (ctypes.c_long, -2**40), (ctypes.c_ulong, 2**63 + 5), (ctypes.c_longlong, -7),
    (ctypes.c_ulonglong, 2**64 - 2), (ctypes.c_size_t, 12345678901), (ctypes.c_float, 0.1),
    (ctypes.c_double, 0.1), (ctypes.c_void_p, 0xCAFEF00D),
]


@pytest.mark.parametrize("values", ["python", "ctypes"])
def test_every_ctypes_type_and_device_pointers(kernel, face, drv, values):
    """Upstream: test_kernelParams (cuda_bindings/tests/test_kernelParams.py),
    parametrized there as no-ctypes / ctypes.

    (values, types) with one parameter of each ctypes scalar type, given as
    Python values or as ctypes instances (the c_double one as a c_float, as
    upstream does), then one device pointer from cuMemAlloc per scalar type
    with type None: each scalar arrives as its C bytes, each pointer as its
    address."""
    types = tuple(t for t, _ in EVERY_TYPE)
    if values == "python":
        scalars = tuple(v for _, v in EVERY_TYPE)
        want = [bytes(t(v)) for t, v in EVERY_TYPE]
    else:
        scalars = tuple(ctypes.c_float(v) if t is ctypes.c_double else t(v)
                        for t, v in EVERY_TYPE)
        want = [bytes(ctypes.c_double(ctypes.c_float(v).value)) if t is ctypes.c_double
                else bytes(t(v)) for t, v in EVERY_TYPE]
    ptrs = []
    for t in types:
        err, p = drv.cuMemAlloc(ctypes.sizeof(t))
        assert err == 0
        ptrs.append(p)
    try:
        k = kernel([ctypes.sizeof(t) for t in types] + [8] * len(ptrs))
        k.launch_via(face, (scalars + tuple(ptrs), types + (None,) * len(ptrs)))
        assert k.recorded() == k.expect(want + [q(p) for p in ptrs])
    finally:
        for p in ptrs:
            assert drv.cuMemFree(p)[0] == 0


def test_enum_handle_and_binding_struct_values_and_pointers(kernel, face, drv):
    """Upstream: test_kernelParams_types_cuda (cuda_bindings/tests/test_kernelParams.py).

    The bindings' own types, each by value with type None and by pointer
    with c_void_p: an enum member (an int32) and a device pointer given as
    an int; a handle holding a primitive typedef (CUsurfObject: its value)
    and an int pointer; a generated struct (CUextent3D: its bytes, through
    getPtr()) and a struct wrapping foreign memory (T(_ptr=address): getPtr()
    is that address)."""
    err, perr = drv.cuMemAlloc(4)
    assert err == 0
    surface_out = ctypes.c_uint64()
    extent_out = (ctypes.c_size_t * 3)()
    ext = face.CUextent3D()
    ext.width, ext.height, ext.depth = 640, 480, 3
    ext_at = face.CUextent3D(_ptr=ctypes.addressof(extent_out))
    values = (face.CUresult.CUDA_ERROR_UNKNOWN, int(perr), face.CUsurfObject(248),
              ctypes.addressof(surface_out), ext, ext_at)
    types = (None, ctypes.c_void_p, None, ctypes.c_void_p, None, ctypes.c_void_p)
    try:
        k = kernel([4, 8, 8, 8, 24, 8])
        k.launch_via(face, (values, types))
        assert k.recorded() == k.expect([
            struct.pack("<i", 999), q(perr), q(248), q(ctypes.addressof(surface_out)),
            struct.pack("<3Q", 640, 480, 3), q(ctypes.addressof(extent_out))])
    finally:
        assert drv.cuMemFree(perr)[0] == 0


class RuntimeErrorCode(enum.IntEnum):
    """A member of another binding's enum, as cudart's cudaError_t."""
    cudaErrorUnknown = 999


class ValueEnum(enum.Enum):
    """An enum member that is no int: its `value` is."""
    SEVEN = 7


def test_foreign_enum_members_with_type_none(kernel, face):
    """Upstream: test_kernelParams_types_cuda passes cudart's
    cudaError_t.cudaErrorUnknown with type None; another binding's enum
    member is an int32 there as cubind's own is (refused at fc9307b:
    "with type None the value must have getPtr() ... not cudaError_t")."""
    k = kernel([4, 4])
    k.launch_via(face, ((RuntimeErrorCode.cudaErrorUnknown, ValueEnum.SEVEN), (None, None)))
    assert k.recorded() == k.expect([struct.pack("<i", 999), struct.pack("<i", 7)])


def test_ctypes_structure_by_value(kernel, face):
    """Upstream: test_kernelParams_struct_custom (cuda_bindings/tests/test_kernelParams.py).

    A ctypes.Structure by value with type None (its bytes) and a pointer to
    host memory for it with c_void_p."""
    dst = IntBox()
    k = kernel([4, 8])
    k.launch_via(face, ((IntBox(-31), ctypes.addressof(dst)), (None, ctypes.c_void_p)))
    assert k.recorded() == k.expect([struct.pack("<i", -31), q(ctypes.addressof(dst))])


@pytest.mark.parametrize("passed_as", ["address", "array"])
def test_prepared_array_of_pointers(kernel, face, passed_as):
    """Upstream: test_kernelParams_buffer_protocol (cuda_bindings/tests/test_kernelParams.py),
    parametrized there as by-address / not-by-address.

    The caller's own void *[]: a ctypes c_void_p array holding the addresses
    of ctypes values (c_int, c_float, a Structure and c_void_p pointers),
    passed as its int address or as the array itself (buffer protocol)."""
    outs = [ctypes.c_int(), ctypes.c_float(), IntBox()]
    args = [ctypes.c_int(77), ctypes.c_void_p(ctypes.addressof(outs[0])), ctypes.c_float(-6.5),
            ctypes.c_void_p(ctypes.addressof(outs[1])), IntBox(12),
            ctypes.c_void_p(ctypes.addressof(outs[2]))]
    table = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    k = kernel([4, 8, 4, 8, 4, 8])
    k.launch_via(face, ctypes.addressof(table) if passed_as == "address" else table)
    assert k.recorded() == k.expect([
        struct.pack("<i", 77), q(ctypes.addressof(outs[0])), struct.pack("<f", -6.5),
        q(ctypes.addressof(outs[1])), struct.pack("<i", 12), q(ctypes.addressof(outs[2]))])


def test_numpy_array_of_pointers(kernel, face):
    """Upstream: test_kernelParams_buffer_protocol_numpy
    (cuda_bindings/tests/test_kernelParams.py).

    The void *[] as a NumPy uint64 array of the data addresses of NumPy
    arrays: a 0-d int32, a 0-d float32, a structured record of one int32,
    and one-element uint64 arrays holding pointers."""
    np = pytest.importorskip("numpy")
    box = np.dtype([("value", np.int32)])
    outs = [np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, box)]
    args = [np.array(-5, dtype=np.int32), np.array([outs[0].ctypes.data], dtype=np.uint64),
            np.array(2.75, dtype=np.float32), np.array([outs[1].ctypes.data], dtype=np.uint64),
            np.array([(41,)], dtype=box), np.array([outs[2].ctypes.data], dtype=np.uint64)]
    table = np.array([a.ctypes.data for a in args], dtype=np.uint64)
    k = kernel([4, 8, 4, 8, 4, 8])
    k.launch_via(face, table)
    assert k.recorded() == k.expect([
        struct.pack("<i", -5), q(outs[0].ctypes.data), struct.pack("<f", 2.75),
        q(outs[1].ctypes.data), struct.pack("<i", 41), q(outs[2].ctypes.data)])


# ---- beyond upstream's file ------------------------------------------------------

def array_descriptor(face):
    d = face.CUDA_ARRAY_DESCRIPTOR()
    d.Width, d.Height, d.NumChannels = 1920, 1080, 4
    d.Format = face.CUarray_format.CU_AD_FORMAT_FLOAT
    return d, struct.pack("<QQiI", 1920, 1080, 0x20, 4)


def extent(face, w, h, d):
    e = face.CUextent3D()
    e.width, e.height, e.depth = w, h, d
    return e, struct.pack("<3Q", w, h, d)


@pytest.mark.parametrize("form", ["plain", "typed-none", "typed-void-p"])
def test_binding_structs_by_value(kernel, face, form):
    """A struct of the bindings as a kernel argument (cuda.bindings passes
    its own dim3 so): by value in the plain form (its bytes, typed by the
    kernel's parameter size) and with type None (its bytes, through
    getPtr()); with c_void_p its address (getPtr()). Owning instances, a
    view of a nested record (CUDA_MEMCPY3D_BATCH_OP.extent) and one wrapping
    foreign memory (_ptr=) alike."""
    desc, desc_bytes = array_descriptor(face)
    ext, ext_bytes = extent(face, 7, 8, 9)
    op = face.CUDA_MEMCPY3D_BATCH_OP()
    op.extent.width, op.extent.height, op.extent.depth = 10, 20, 30
    foreign = (ctypes.c_size_t * 3)(4, 5, 6)
    wrapped = face.CUextent3D(_ptr=ctypes.addressof(foreign))
    values = (desc, ext, op.extent, wrapped, -1)
    if form == "typed-void-p":
        k = kernel([8, 8, 8, 8, 4])
        k.launch_via(face, (values, (ctypes.c_void_p,) * 4 + (ctypes.c_int,)))
        assert k.recorded() == k.expect(
            [q(v.getPtr()) for v in values[:4]] + [struct.pack("<i", -1)])
        assert wrapped.getPtr() == ctypes.addressof(foreign)
        return
    k = kernel([24, 24, 24, 24, 4])
    if form == "plain":  # the fake's kernel is untyped: by size, as argtypes= asks
        k.launch_via(face, values, argtypes=[None] * 5)
    else:
        k.launch_via(face, (values, (None,) * 4 + (ctypes.c_int,)))
    assert k.recorded() == k.expect([desc_bytes, ext_bytes, struct.pack("<3Q", 10, 20, 30),
                                     struct.pack("<3Q", 4, 5, 6), struct.pack("<i", -1)])


def test_binding_struct_of_the_wrong_size_names_the_parameter(kernel, face):
    """A struct whose size is not the kernel's parameter size is a TypeError
    naming the parameter, and nothing is launched."""
    ext, _ = extent(face, 1, 2, 3)
    k = kernel([4, 16])
    with pytest.raises(TypeError, match=r"^cuLaunchKernel\(\): kernel parameter 1: "
                                        r"cubind\.driver\.CUextent3D_st of 24 bytes given "
                                        r"for a 16-byte parameter$"):
        k.launch_via(face, (5, ext), argtypes=[None, None])
    assert k.count() == 0


@pytest.mark.parametrize("ctype", [ctypes.c_longdouble, ctypes.c_wchar_p, ctypes.c_char_p],
                         ids=lambda t: t.__name__)
def test_types_cuda_bindings_refuses(kernel, face, ctype):
    """cuda.bindings accepts only its scalar ctypes types, c_void_p and None
    in the (values, types) form ("Unsupported type" otherwise): long double
    has no device counterpart and the string pointer types would pass the
    address of Python's own buffer. A TypeError naming the parameter and
    the type; nothing is launched."""
    k = kernel([4, 16])
    value = 1.5 if ctype is ctypes.c_longdouble else ("x" if ctype is ctypes.c_wchar_p else b"x")
    with pytest.raises(TypeError, match=rf"^cuLaunchKernel\(\): kernel parameter 1: "
                                        rf"unsupported ctypes type {ctype.__name__}$"):
        k.launch_via(face, ((1, value), (ctypes.c_int, ctype)))
    with pytest.raises(TypeError, match=rf"kernel parameter 1: unsupported ctypes type "
                                        rf"{ctype.__name__}$"):
        k.launch_via(face, ((1, ctype(value)), (ctypes.c_int, ctype)))
    assert k.count() == 0


@pytest.mark.parametrize("form", ["plain", "typed"])
def test_cooperative_launch(kernel, face, form):
    """cuLaunchCooperativeKernel (no `extra`: every form goes as kernelParams)
    packs what cuLaunchKernel packs, a binding struct included."""
    ext, ext_bytes = extent(face, 11, 12, 13)
    k = kernel([4, 8, 24, 1])
    if form == "plain":
        k.launch_via(face, (-9, 0x7000, ext, 3), cooperative=True, argtypes=[None] * 4)
    else:
        k.launch_via(face, ((-9, 0x7000, ext, 3),
                            (ctypes.c_int, ctypes.c_void_p, None, ctypes.c_byte)),
                     cooperative=True)
    assert k.count() == 1
    assert k.recorded() == k.expect([struct.pack("<i", -9), q(0x7000), ext_bytes, b"\x03"])
