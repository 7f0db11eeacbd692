# SPDX-License-Identifier: Apache-2.0
"""cuda.bindings' own kernel-parameter scenarios on a real GPU.

NVIDIA/cuda-python keeps its kernelParams tests in
cuda_bindings/tests/test_kernelParams.py. Each of the first tests here
covers one test function of that file (its docstring names which), written
anew: kernels of tests/gpu/upstream_kernels.cu store the arguments they
received through pointers they were given (device memory, or mapped host
memory), and the test compares what comes back with what it passed. The
fake-driver counterpart, byte-exact, is
tests/python/test_kernel_params_upstream.py.

After those: structs of the bindings and a cuda.bindings-style getPtr()
object by value in every form, and cuLaunchCooperativeKernel with plain
values and (values, types).

Runs against cubind.driver and cubind.cu (every test is parametrized over
both faces), or with CUBIND_GPU_IMPL=cuda.bindings against
cuda.bindings.driver (plain values, a cubind-only form, skipped there).
Needs nvcc. Never run in CI.
"""
import ctypes
import importlib
import struct

import pytest

from gpu_common import IMPL, drv, ok, ok_any_face

CUBIND = IMPL in ("cubind", "cubind.cu")
FACES = [drv]
if CUBIND:
    FACES.append(importlib.import_module("cubind.cu"))
cubind_only = pytest.mark.skipif(not CUBIND, reason="cuda.bindings has no plain-values form")
by_face = pytest.mark.parametrize("face", FACES, ids=lambda m: m.__name__)


@pytest.fixture(scope="module")
def mod(load_module):
    """upstream_kernels.cu, loaded in device 0's primary context (conftest.py)."""
    return load_module("upstream_kernels")


def function(mod, name):
    return ok(drv.cuModuleGetFunction(mod, name))


def launch(face, f, params, cooperative=False):
    """One thread; waits for it (a kernel fault shows up here)."""
    if cooperative:
        ok_any_face(face.cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, params))
    else:
        ok_any_face(face.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, params, 0))
    ok(drv.cuCtxSynchronize())


class Memory:
    """Device allocations and mapped (device-visible) host memory, zeroed,
    freed at the end of the test."""

    def __init__(self):
        self.device, self.host = [], []

    def dev(self, nbytes):
        p = ok(drv.cuMemAlloc(nbytes))
        self.device.append(p)
        ok(drv.cuMemsetD8(p, 0, nbytes))
        return p

    def mapped(self, nbytes):
        """Host memory the kernel writes through its device address (with
        unified addressing, the host address itself)."""
        h = ok(drv.cuMemHostAlloc(nbytes, drv.CU_MEMHOSTALLOC_DEVICEMAP))
        self.host.append(h)
        ctypes.memset(h, 0, nbytes)
        return int(h), int(ok(drv.cuMemHostGetDevicePointer(h, 0)))

    def free(self):
        for p in self.device:
            ok(drv.cuMemFree(p))
        for h in self.host:
            ok(drv.cuMemFreeHost(h))


@pytest.fixture
def mem(ctx):
    m = Memory()
    yield m
    ok(drv.cuCtxSynchronize())
    m.free()


def read_device(ptr, ctype):
    value = ctype()
    ok(drv.cuMemcpyDtoH(ctypes.addressof(value), ptr, ctypes.sizeof(ctype)))
    return value


class IntBox(ctypes.Structure):
    """upstream_kernels.cu's IntBox."""
    _fields_ = [("value", ctypes.c_int)]


# ---- one test per test function of upstream's test_kernelParams.py -------------

@by_face
def test_no_parameters(mod, mem, face):
    """Upstream: test_kernelParams_empty (cuda_bindings/tests/test_kernelParams.py).

    A kernel without parameters, launched with an empty (values, types) pair
    and with None: each launch runs it (it sets a __device__ variable, read
    back through cuModuleGetGlobal)."""
    f = function(mod, b"no_params")
    flag, size = ok(drv.cuModuleGetGlobal(mod, b"no_params_ran"))
    assert size == 4
    for params in (((), ()), None):
        ok(drv.cuMemsetD8(flag, 0, 4))
        launch(face, f, params)
        assert read_device(flag, ctypes.c_uint).value == 0xC0DE


# Every ctypes type the kernel takes by value, in its parameter order, with a
# value of this file's choosing for each.
EVERY_TYPE = [
    (ctypes.c_bool, True), (ctypes.c_char, b"q"), (ctypes.c_wchar, "\u20ac"),
    (ctypes.c_byte, -100), (ctypes.c_ubyte, 200), (ctypes.c_short, -12345),
    (ctypes.c_ushort, 54321), (ctypes.c_int, -123456789), (ctypes.c_uint, 3000000000),
    (ctypes.c_long, -2**40), (ctypes.c_ulong, 2**63 + 5), (ctypes.c_longlong, -7),
    (ctypes.c_ulonglong, 2**64 - 2), (ctypes.c_size_t, 12345678901), (ctypes.c_float, 0.1),
    (ctypes.c_double, 0.1), (ctypes.c_void_p, 0xCAFEF00D),
]


@by_face
@pytest.mark.parametrize("values", ["python", "ctypes"])
def test_every_ctypes_type_and_device_pointers(mod, mem, face, values):
    """Upstream: test_kernelParams (cuda_bindings/tests/test_kernelParams.py),
    parametrized there as no-ctypes / ctypes.

    (values, types) with one parameter of each ctypes scalar type, as Python
    values or as ctypes instances (the c_double one as a c_float, as upstream
    does), then a cuMemAlloc pointer per value with type None; the kernel
    stores each value through its pointer, and each comes back with its C
    bytes."""
    f = function(mod, b"every_type")
    types = tuple(t for t, _ in EVERY_TYPE)
    if values == "python":
        scalars = tuple(v for _, v in EVERY_TYPE)
        want = [bytes(t(v)) for t, v in EVERY_TYPE]
    else:
        scalars = tuple(ctypes.c_float(v) if t is ctypes.c_double else t(v)
                        for t, v in EVERY_TYPE)
        want = [bytes(ctypes.c_double(ctypes.c_float(v).value)) if t is ctypes.c_double
                else bytes(t(v)) for t, v in EVERY_TYPE]
    ptrs = tuple(mem.dev(ctypes.sizeof(t)) for t in types)
    launch(face, f, (scalars + ptrs, types + (None,) * len(ptrs)))
    assert [bytes(read_device(p, t)) for p, t in zip(ptrs, types)] == want


@by_face
def test_enum_handle_and_binding_struct_values_and_pointers(mod, mem, face):
    """Upstream: test_kernelParams_types_cuda (cuda_bindings/tests/test_kernelParams.py).

    The bindings' own types, each by value with type None and with a
    pointer (type c_void_p) to store it through: an enum member (CUresult)
    and an int device address; a handle holding a primitive typedef
    (CUsurfObject) and an int device address; a generated struct
    (CUextent3D, through its getPtr()) and a CUextent3D wrapping mapped host
    memory (_ptr=: getPtr() is that memory, which the kernel writes)."""
    if not hasattr(face, "CUextent3D"):
        pytest.skip("these bindings have no CUextent3D")
    f = function(mod, b"binding_types")
    perr, psurf = mem.dev(4), mem.dev(8)
    host, device = mem.mapped(24)
    ext = face.CUextent3D()
    ext.width, ext.height, ext.depth = 640, 480, 3
    ext_at = face.CUextent3D(_ptr=device)
    values = (face.CUresult.CUDA_ERROR_UNKNOWN, int(perr), face.CUsurfObject(248), int(psurf),
              ext, ext_at)
    launch(face, f, (values, (None, ctypes.c_void_p, None, ctypes.c_void_p, None,
                              ctypes.c_void_p)))
    assert read_device(perr, ctypes.c_int).value == int(face.CUresult.CUDA_ERROR_UNKNOWN)
    assert read_device(psurf, ctypes.c_uint64).value == 248
    assert ctypes.string_at(host, 24) == struct.pack("<3Q", 640, 480, 3)
    seen = face.CUextent3D(_ptr=host)
    assert (seen.width, seen.height, seen.depth) == (640, 480, 3)


@by_face
def test_ctypes_structure_by_value(mod, mem, face):
    """Upstream: test_kernelParams_struct_custom (cuda_bindings/tests/test_kernelParams.py).

    A ctypes.Structure by value with type None, and a c_void_p pointer to
    mapped host memory the kernel copies it into."""
    f = function(mod, b"box_copy")
    host, device = mem.mapped(ctypes.sizeof(IntBox))
    launch(face, f, ((IntBox(-31), device), (None, ctypes.c_void_p)))
    assert IntBox.from_address(host).value == -31


@by_face
@pytest.mark.parametrize("passed_as", ["address", "array"])
def test_prepared_array_of_pointers(mod, mem, face, passed_as):
    """Upstream: test_kernelParams_buffer_protocol (cuda_bindings/tests/test_kernelParams.py),
    parametrized there as by-address / not-by-address.

    The caller's own void *[]: a ctypes c_void_p array of the addresses of
    ctypes values (c_int, c_float, a Structure, and c_void_p pointers to
    mapped host memory), passed as its int address or as the array itself
    (buffer protocol); the kernel stores the values through the pointers."""
    f = function(mod, b"int_float_box")
    host, device = mem.mapped(16)
    args = [ctypes.c_int(77), ctypes.c_void_p(device), ctypes.c_float(-6.5),
            ctypes.c_void_p(device + 4), IntBox(12), ctypes.c_void_p(device + 8)]
    table = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    launch(face, f, ctypes.addressof(table) if passed_as == "address" else table)
    assert ctypes.c_int.from_address(host).value == 77
    assert ctypes.c_float.from_address(host + 4).value == -6.5
    assert IntBox.from_address(host + 8).value == 12


@by_face
def test_numpy_array_of_pointers(mod, mem, face):
    """Upstream: test_kernelParams_buffer_protocol_numpy
    (cuda_bindings/tests/test_kernelParams.py).

    The void *[] as a NumPy uint64 array of the data addresses of NumPy
    arrays: a 0-d int32, a 0-d float32, a structured record of one int32,
    and one-element uint64 arrays holding pointers to mapped host memory."""
    np = pytest.importorskip("numpy")
    f = function(mod, b"int_float_box")
    box = np.dtype([("value", np.int32)])
    host, device = mem.mapped(16)
    args = [np.array(-5, dtype=np.int32), np.array([device], dtype=np.uint64),
            np.array(2.75, dtype=np.float32), np.array([device + 4], dtype=np.uint64),
            np.array([(41,)], dtype=box), np.array([device + 8], dtype=np.uint64)]
    table = np.array([a.ctypes.data for a in args], dtype=np.uint64)
    launch(face, f, table)
    assert ctypes.c_int.from_address(host).value == -5
    assert ctypes.c_float.from_address(host + 4).value == 2.75
    assert ctypes.c_int.from_address(host + 8).value == 41


# ---- beyond upstream's file ------------------------------------------------------

class Holder:
    """A cuda.bindings-style object that is not a handle: getPtr() is the
    address of its C value, int() the value."""

    def __init__(self, value):
        self.c = ctypes.c_uint64(value)

    def getPtr(self):
        return ctypes.addressof(self.c)

    def __int__(self):
        return self.c.value


def records(face):
    """echo_records' arguments: a CUDA_ARRAY_DESCRIPTOR, a CUextent3D, a
    CUextent3D wrapping memory of its own (_ptr=) and a Holder, with the
    bytes the kernel must write back."""
    d = face.CUDA_ARRAY_DESCRIPTOR()
    d.Width, d.Height, d.NumChannels = 1920, 1080, 4
    d.Format = face.CUarray_format.CU_AD_FORMAT_FLOAT
    e = face.CUextent3D()
    e.width, e.height, e.depth = 7, 8, 9
    foreign = (ctypes.c_size_t * 3)(4, 5, 6)
    v = face.CUextent3D(_ptr=ctypes.addressof(foreign))
    want = (struct.pack("<QQiI", 1920, 1080, 0x20, 4) + struct.pack("<3Q", 7, 8, 9)
            + struct.pack("<3Q", 4, 5, 6) + struct.pack("<Q", 0x1122334455667788))
    return (d, e, v, Holder(0x1122334455667788)), foreign, want


@by_face
@pytest.mark.parametrize("form", ["typed-none", pytest.param("plain", marks=cubind_only)])
def test_binding_structs_and_getptr_objects_by_value(mod, mem, face, form):
    """Structs of the bindings by value (cuda.bindings passes its dim3 so):
    with type None through getPtr(), and in cubind's plain form by their
    bytes (typed by the kernel's parameter sizes); an owning struct, one
    wrapping foreign memory (_ptr=), and a getPtr() object that is not a
    handle (a Holder: its value with None, int() in the plain form)."""
    if not hasattr(face, "CUextent3D"):
        pytest.skip("these bindings have no CUextent3D")
    f = function(mod, b"echo_records")
    out = mem.dev(80)
    values, foreign, want = records(face)
    params = values + (out,)
    if form == "typed-none":
        params = (params, (None,) * 5)
    launch(face, f, params)
    assert bytes(read_device(out, ctypes.c_ubyte * 80)) == want
    assert foreign[2] == 6      # kept alive until here


@by_face
@pytest.mark.parametrize("form", ["typed", pytest.param("plain", marks=cubind_only)])
def test_cooperative_launch(mod, mem, face, form):
    """cuLaunchCooperativeKernel (no `extra`: every form goes as
    kernelParams) delivers what cuLaunchKernel does, through each face: an
    enum member (type None in the typed form), a float, a ctypes Structure
    and pointers to int_float_box; then structs of the bindings and a
    getPtr() object to echo_records."""
    f = function(mod, b"int_float_box")
    host, device = mem.mapped(16)
    fmt = face.CUarray_format.CU_AD_FORMAT_FLOAT
    vals = (fmt, device, 0.375, device + 4, IntBox(99), device + 8)
    if form == "typed":
        params = (vals, (None, ctypes.c_void_p, ctypes.c_float, ctypes.c_void_p, None,
                         ctypes.c_void_p))
    else:
        params = vals
    launch(face, f, params, cooperative=True)
    assert ctypes.c_int.from_address(host).value == int(fmt) == 0x20
    assert ctypes.c_float.from_address(host + 4).value == 0.375
    assert IntBox.from_address(host + 8).value == 99
    if not hasattr(face, "CUextent3D"):
        return
    g = function(mod, b"echo_records")
    out = mem.dev(80)
    values, foreign, want = records(face)
    params = values + (out,)
    if form == "typed":
        params = (params, (None,) * 5)
    launch(face, g, params, cooperative=True)
    assert bytes(read_device(out, ctypes.c_ubyte * 80)) == want
    assert foreign[0] == 4
