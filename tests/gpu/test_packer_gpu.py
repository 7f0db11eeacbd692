# SPDX-License-Identifier: Apache-2.0
"""Issue-5 scenarios on a real GPU: kernels built from tests/gpu/packer_kernels.cu
write back every argument they received; each kernelParams form must deliver
the same bits.

Runs against cubind.driver, or against cuda.bindings.driver when
CUBIND_GPU_IMPL=cuda.bindings (forms cuda.bindings lacks, plain values typed
by the kernel and sequences for `extra`, are skipped there). Needs nvcc
(PATH or /usr/local/cuda/bin) to build the kernels; skipped without it.
Never run in CI: tests/gpu/ needs the real driver.
"""
import ctypes
import struct

import pytest

from gpu_common import IMPL, drv, ok
CUBIND = IMPL == "cubind"

cubind_only = pytest.mark.skipif(not CUBIND, reason="cuda.bindings has no plain-values form")


@pytest.fixture(scope="module")
def mod(load_module):
    """packer_kernels.cu, loaded in device 0's primary context (conftest.py)."""
    return load_module("packer_kernels")


class Out:
    """Device memory for a kernel's answers, zeroed before each launch."""

    def __init__(self, nbytes):
        self.n = nbytes
        self.ptr = ok(drv.cuMemAlloc(nbytes))

    def clear(self):
        ok(drv.cuMemsetD8(self.ptr, 0, self.n))
        ok(drv.cuCtxSynchronize())

    def read(self):
        ok(drv.cuCtxSynchronize())
        host = (ctypes.c_ubyte * self.n)()
        ok(drv.cuMemcpyDtoH(ctypes.addressof(host), self.ptr, self.n))
        return bytes(host)

    def u64(self, count):
        return list(struct.unpack(f"<{count}Q", self.read()[:8 * count]))

    def free(self):
        ok(drv.cuMemFree(self.ptr))


@pytest.fixture
def out():
    made = []

    def make(n):
        o = Out(n)
        made.append(o)
        return o

    yield make
    for o in made:
        o.free()


def launch(f, params, extra=0):
    ok(drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, params, extra))


def u(b):
    """Zero-extended bits of a value's bytes."""
    return int.from_bytes(bytes(b).ljust(8, b"\0"), "little")


def prepared(values):
    arr = (ctypes.c_void_p * len(values))()
    for i, v in enumerate(values):
        arr[i] = ctypes.addressof(v)
    return arr


# ---- echo_i32_f32_ptr: every form -----------------------------------------------

def _i32_f32_expected(o, a, b):
    return [a & 0xFFFFFFFF, u(struct.pack("<f", b)), int(o.ptr)]


def _run(f, o, params, extra=0):
    o.clear()
    launch(f, params, extra)
    return o.u64(3)


def test_typed_form(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    want = _i32_f32_expected(o, -7, 1.5)
    assert _run(f, o, ((-7, 1.5, o.ptr), (ctypes.c_int, ctypes.c_float, None))) == want
    assert _run(f, o, ((-7, 1.5, int(o.ptr)), (ctypes.c_int, ctypes.c_float, ctypes.c_void_p))) == want
    assert _run(f, o, ((ctypes.c_int(-7), ctypes.c_float(1.5), ctypes.c_void_p(int(o.ptr))),
                       (ctypes.c_int, ctypes.c_float, ctypes.c_void_p))) == want


def test_address_and_buffer_forms(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    vals = [ctypes.c_int(123456), ctypes.c_float(-2.75), ctypes.c_uint64(int(o.ptr))]
    arr = prepared(vals)
    want = _i32_f32_expected(o, 123456, -2.75)
    assert _run(f, o, ctypes.addressof(arr)) == want
    assert _run(f, o, arr) == want
    try:
        import numpy as np
    except ImportError:
        return
    assert _run(f, o, np.array([ctypes.addressof(v) for v in vals], dtype=np.uint64)) == want


def test_extra_buffer_pointer(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    args = ctypes.create_string_buffer(struct.pack("<ifQ", 99, 0.5, int(o.ptr)), 16)
    size = ctypes.c_size_t(16)
    arr = (ctypes.c_void_p * 5)(1, ctypes.addressof(args), 2, ctypes.addressof(size), 0)
    want = _i32_f32_expected(o, 99, 0.5)
    assert _run(f, o, None, ctypes.addressof(arr)) == want
    if CUBIND:
        assert _run(f, o, None, [drv.CU_LAUNCH_PARAM_BUFFER_POINTER, args,
                                 drv.CU_LAUNCH_PARAM_BUFFER_SIZE, size,
                                 drv.CU_LAUNCH_PARAM_END]) == want


@cubind_only
def test_plain_values_across_module_reloads(ptx_of, ctx, out):
    """A CUfunction object keeps its own copy of the kernel's layout; a module
    unload starts a new epoch, so a function of a reloaded module (the driver
    may give it the old value) is typed by its own kernel, through a new
    object and through the old one when the value came back."""
    o = out(64)
    image = ptx_of("packer_kernels")
    m = ok(drv.cuModuleLoadData(image))
    f = ok(drv.cuModuleGetFunction(m, b"echo_i32_f32_ptr"))
    for k in range(100):
        assert _run(f, o, (k, k / 4, o.ptr)) == _i32_f32_expected(o, k, k / 4)
    for round_ in range(3):
        ok(drv.cuModuleUnload(m))
        m = ok(drv.cuModuleLoadData(image))
        g = ok(drv.cuModuleGetFunction(m, b"echo_i32_f32_ptr"))
        assert _run(g, o, (round_, -1.25, o.ptr)) == _i32_f32_expected(o, round_, -1.25)
        if int(g) == int(f):
            assert _run(f, o, (-round_, 0.5, o.ptr)) == _i32_f32_expected(o, -round_, 0.5)
        f = g
    ok(drv.cuModuleUnload(m))


@cubind_only
def test_plain_values(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    assert _run(f, o, (-7, 1.5, o.ptr)) == _i32_f32_expected(o, -7, 1.5)
    assert _run(f, o, [2**32 - 1, 3.0, int(o.ptr)]) == _i32_f32_expected(o, -1, 3.0)

    class DeviceArray:
        def __init__(self, ptr):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (3,),
                                             "typestr": "<u8", "version": 3}

    assert _run(f, o, (5, -0.0, DeviceArray(int(o.ptr)))) == _i32_f32_expected(o, 5, -0.0)
    before = o.u64(3)
    with pytest.raises(TypeError, match="kernel parameter 2: missing"):
        launch(f, (1, 2.0))
    with pytest.raises(OverflowError, match="kernel parameter 0"):
        launch(f, (2**32, 2.0, o.ptr))
    assert o.u64(3) == before


# ---- every ctypes scalar type -----------------------------------------------------

SCALARS = [
    (ctypes.c_bool, True), (ctypes.c_char, b"Z"), (ctypes.c_wchar, "\u0100"),
    (ctypes.c_byte, -127), (ctypes.c_ubyte, 255), (ctypes.c_short, -2), (ctypes.c_ushort, 65535),
    (ctypes.c_int, -5), (ctypes.c_uint, 0xFFFFFFFF), (ctypes.c_long, -3),
    (ctypes.c_ulong, 2**64 - 1), (ctypes.c_longlong, -4), (ctypes.c_ulonglong, 4),
    (ctypes.c_size_t, 5), (ctypes.c_float, 123.456), (ctypes.c_double, 123.456),
    (ctypes.c_void_p, 0xDEADBEEF),
]


@pytest.mark.parametrize("form", ["python", "ctypes", "plain"])
def test_every_scalar_type(mod, out, form):
    if form == "plain" and not CUBIND:
        pytest.skip("cuda.bindings has no plain-values form")
    f = ok(drv.cuModuleGetFunction(mod, b"echo_scalars"))
    o = out(8 * len(SCALARS))
    types = tuple(t for t, _ in SCALARS) + (None,)
    if form == "plain":
        # plain values are typed by the kernel: chars and wchar_t go as ints
        vals = tuple(ord(v) if isinstance(v, (bytes, str)) else v for _, v in SCALARS)
        params = vals + (o.ptr,)
    else:
        vals = tuple(t(v) if form == "ctypes" else v for t, v in SCALARS)
        params = (vals + (o.ptr,), types)
    o.clear()
    launch(f, params)
    assert o.u64(len(SCALARS)) == [u(t(v)) for t, v in SCALARS]


# ---- structs by value, 2048-byte struct, 512 parameters ---------------------------

class S3(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float), ("c", ctypes.c_double)]


class Big(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_ubyte * 2048)]


def test_struct_by_value(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_struct"))
    o = out(40)
    s = S3(-9, 0.25, 1e100)
    want = [ord("q"), (-9) & 0xFFFFFFFF, u(struct.pack("<f", 0.25)), u(struct.pack("<d", 1e100)),
            (-3) & 0xFFFF]
    o.clear()
    launch(f, ((b"q", s, -3, o.ptr), (ctypes.c_char, None, ctypes.c_short, None)))
    assert o.u64(5) == want
    if CUBIND:
        o.clear()
        launch(f, ((b"q", s, -3, o.ptr), (ctypes.c_char, S3, ctypes.c_short, None)))
        assert o.u64(5) == want
        for value in (s, bytes(s)):
            o.clear()
            launch(f, (ord("q"), value, -3, o.ptr))
            assert o.u64(5) == want


def test_2048_byte_struct(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_big"))
    o = out(8 + 2048 + 4)
    data = bytes((i * 13 + 1) & 0xFF for i in range(2048))
    big = Big.from_buffer_copy(data)
    want = struct.pack("<Q", 0x0102030405060708) + data + struct.pack("<i", -1)
    o.clear()
    launch(f, ((0x0102030405060708, big, -1, o.ptr), (ctypes.c_uint64, None, ctypes.c_int, None)))
    assert o.read() == want
    if CUBIND:
        o.clear()
        launch(f, (0x0102030405060708, data, -1, o.ptr))
        assert o.read() == want


def test_512_parameters(mod, out):
    f = ok(drv.cuModuleGetFunction(mod, b"echo_512"))
    o = out(4 * 512)
    vals = tuple(range(-300, 212))
    want = struct.pack("<512i", *vals)
    o.clear()
    launch(f, (vals + (o.ptr,), (ctypes.c_int,) * 512 + (None,)))
    assert o.read() == want
    if CUBIND:
        o.clear()
        launch(f, vals + (o.ptr,))
        assert o.read() == want
        with pytest.raises(TypeError, match="kernel parameter 512: missing"):
            launch(f, vals)


# ---- plain values as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) --------------------

def one_block_config():
    """A CUlaunchConfig of one block of one thread on the legacy stream."""
    config = drv.CUlaunchConfig()
    for dim in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
        setattr(config, dim, 1)
    return config


@cubind_only
def test_plain_values_through_every_launch_function(mod, out):
    # cuLaunchKernel and cuLaunchKernelEx hand plain values to the driver as
    # one buffer of the layout's length (9 bytes here: the real driver must
    # take a buffer without tail padding); cuLaunchCooperativeKernel, which
    # has no extra, as kernelParams. The kernel sees the same bits each way.
    import cubind.cu as cu
    f = ok(drv.cuModuleGetFunction(mod, b"echo_tail_byte"))
    o = out(16)
    want = [int(o.ptr), (-2) & 0xFF]
    config = one_block_config()
    # a cooperative launch through cuLaunchKernelEx takes the buffer too
    coop = one_block_config()
    attr = drv.CUlaunchAttribute()
    attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    attr.value.cooperative = 1
    coop.attrs = [attr]
    coop.numAttrs = 1
    launches = [
        lambda p: launch(f, p),
        lambda p: launch(f, p, None),
        lambda p: ok(drv.cuLaunchKernelEx(config, f, p, None)),
        lambda p: ok(drv.cuLaunchKernelEx(coop, f, p, None)),
        lambda p: ok(drv.cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, p)),
        lambda p: cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, p, 0),
        lambda p: cu.cuLaunchKernelEx(config, f, p, None),
    ]
    for run in launches:
        o.clear()
        run((o.ptr, -2))
        assert o.u64(2) == want


def test_cooperative_launch_attribute_set_as_a_list(mod, out):
    # cuda.bindings' way of giving cuLaunchKernelEx its attributes: a list of
    # CUlaunchAttribute in attrs and the count in numAttrs (the same code
    # runs on cubind.driver, cubind.cu and cuda.bindings.driver).
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    want = _i32_f32_expected(o, -7, 1.5)
    config = one_block_config()
    attr_cooperative = drv.CUlaunchAttribute()
    attr_cooperative.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    attr_cooperative.value.cooperative = 1
    config.attrs = [attr_cooperative]
    config.numAttrs = 1
    got = config.attrs
    assert len(got) == 1
    assert got[0].id == drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    assert got[0].value.cooperative == 1
    params = ((-7, 1.5, int(o.ptr)), (ctypes.c_int, ctypes.c_float, ctypes.c_void_p))
    o.clear()
    ok(drv.cuLaunchKernelEx(config, f, params, 0))  # 0: cuda.bindings takes no None for extra
    assert o.u64(3) == want
    if CUBIND:
        import cubind.cu as cu
        o.clear()
        assert cu.cuLaunchKernelEx(config, f, params, None) is None
        assert o.u64(3) == want


# ---- cubind.launch ------------------------------------------------------------------

@cubind_only
def test_cubind_launch_delivers_every_form(mod, out):
    # launch(f, grid, block, *args): the kernel's arguments as the call's own,
    # typed by the kernel; the same bits reach it as through cuLaunchKernel.
    import cubind
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    o = out(24)
    o.clear()
    assert cubind.launch(f, 1, 1, -7, 1.5, o.ptr) is None
    assert o.u64(3) == _i32_f32_expected(o, -7, 1.5)
    f = ok(drv.cuModuleGetFunction(mod, b"echo_struct"))
    o = out(40)
    s = S3(-9, 0.25, 1e100)
    o.clear()
    cubind.launch(f, (1,), [1], ord("q"), s, -3, o.ptr)
    assert o.u64(5) == [ord("q"), (-9) & 0xFFFFFFFF, u(struct.pack("<f", 0.25)),
                        u(struct.pack("<d", 1e100)), (-3) & 0xFFFF]
    f = ok(drv.cuModuleGetFunction(mod, b"echo_512"))
    o = out(4 * 512)
    vals = tuple(range(-300, 212))
    o.clear()
    # echo_512 has no C++ name nor PTX here: ints reach it only typed
    # (issue 42: never packed by size alone where a float may be read)
    with pytest.raises(TypeError, match="kernel parameter 0: kernel 'echo_512' has no parameter types"):
        cubind.launch(f, 1, 1, *vals, o.ptr)
    types = ["i4"] * 512 + ["p"]
    cubind.launch(f, 1, 1, *vals, o.ptr, argtypes=types)
    assert o.read() == struct.pack("<512i", *vals)
    with pytest.raises(TypeError, match=r"launch\(\): kernel parameter 512: missing"):
        cubind.launch(f, 1, 1, *vals, argtypes=types)


@cubind_only
def test_cubind_launch_grid_block_stream_and_shared_memory(mod, out):
    import cubind
    f = ok(drv.cuModuleGetFunction(mod, b"count_threads"))
    o = out(64)
    stream = ok(drv.cuStreamCreate(drv.CUstream_flags.CU_STREAM_NON_BLOCKING))
    try:
        for grid, block, smem in (((2, 3, 4), (8, 2, 1), 256), (5, 32, 0), ([7, 2], (4, 4, 4), 4096)):
            o.clear()
            cubind.launch(f, grid, block, o.ptr, stream=stream, shared_mem=smem)
            ok(drv.cuStreamSynchronize(stream))
            g = (list(grid) if not isinstance(grid, int) else [grid]) + [1, 1]
            b = (list(block) if not isinstance(block, int) else [block]) + [1, 1]
            threads = g[0] * g[1] * g[2] * b[0] * b[1] * b[2]
            assert o.u64(8) == [threads] + g[:3] + b[:3] + [smem]
        with pytest.raises(cubind.CUDAError) as info:
            cubind.launch(f, 1, 2048, o.ptr, stream=stream)   # more threads than a block holds
        assert info.value.args[0] == drv.CUresult.CUDA_ERROR_INVALID_VALUE
    finally:
        ok(drv.cuStreamDestroy(stream))


@cubind_only
def test_cubind_launch_on_a_cuda_core_stream(mod, out):
    # cuda.core's Stream implements the CUDA stream protocol (__cuda_stream__):
    # cubind's stream parameters take it as they take a CUstream.
    import cubind
    import cubind.cu as cu
    core = pytest.importorskip("cuda.core")
    if not hasattr(core, "Device"):
        core = pytest.importorskip("cuda.core.experimental")   # cuda.core < 0.4
    dev = core.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    handle = stream.__cuda_stream__()[1]
    assert int(drv.CUstream(stream)) == handle and handle != 0
    f = ok(drv.cuModuleGetFunction(mod, b"count_threads"))
    o = out(64)
    o.clear()
    cubind.launch(f, (3, 2), 16, o.ptr, stream=stream, shared_mem=128)
    cu.cuStreamSynchronize(stream)
    assert cu.cuStreamQuery(stream) is None
    assert o.u64(8) == [3 * 2 * 16, 3, 2, 1, 16, 1, 1, 128]
    stream.close()


# ---- device arrays of other libraries (__cuda_array_interface__) ---------------

def _device_array(lib):
    """Three zeroed 64-bit integers in device memory, made by `lib`, and a
    function reading them back as a list of unsigned ints."""
    if lib == "cupy":
        cupy = pytest.importorskip("cupy")
        a = cupy.zeros(3, dtype=cupy.uint64)
        return a, lambda: [int(x) for x in cupy.asnumpy(a)]
    if lib == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch without CUDA")
        a = torch.zeros(3, dtype=torch.int64, device="cuda")
        return a, lambda: [int(x) & (2**64 - 1) for x in a.cpu().tolist()]
    numba_cuda = pytest.importorskip("numba.cuda")
    import numpy
    a = numba_cuda.to_device(numpy.zeros(3, dtype=numpy.uint64))
    return a, lambda: [int(x) for x in a.copy_to_host()]


@cubind_only
@pytest.mark.parametrize("lib", ["cupy", "torch", "numba"])
def test_device_arrays_of_other_libraries(mod, lib):
    # A CuPy array, a PyTorch tensor or a Numba device array is a pointer
    # parameter's value through __cuda_array_interface__, in cuLaunchKernel's
    # plain values and in cubind.launch: the kernel writes into it.
    import cubind
    array, read = _device_array(lib)
    address = array.__cuda_array_interface__["data"][0]
    f = ok(drv.cuModuleGetFunction(mod, b"echo_i32_f32_ptr"))
    launch(f, (-7, 1.5, array))
    ok(drv.cuCtxSynchronize())
    assert read() == [(-7) & 0xFFFFFFFF, u(struct.pack("<f", 1.5)), address]
    cubind.launch(f, 1, 1, 9, -2.0, array)
    ok(drv.cuCtxSynchronize())
    assert read() == [9, u(struct.pack("<f", -2.0)), address]


@cubind_only
def test_a_cukernel_launched_by_casting(ptx_of, ctx, out):
    # A CUkernel from cuLibraryGetKernel, launched "by casting to CUfunction"
    # as the header allows: cubind types its plain values with
    # cuKernelGetParamInfo, in cuLaunchKernel, cuLaunchKernelEx and
    # cubind.launch; the occupancy functions take it too.
    import cubind
    library = ok(drv.cuLibraryLoadData(ptx_of("packer_kernels"), None, None, 0, None, None, 0))
    try:
        kern = ok(drv.cuLibraryGetKernel(library, b"echo_i32_f32_ptr"))
        o = out(24)
        assert _run(kern, o, (-7, 1.5, o.ptr)) == _i32_f32_expected(o, -7, 1.5)
        o.clear()
        cubind.launch(kern, 1, 1, 8, -0.5, o.ptr)
        assert o.u64(3) == _i32_f32_expected(o, 8, -0.5)
        o.clear()
        ok(drv.cuLaunchKernelEx(one_block_config(), kern, (9, 2.5, o.ptr), None))
        assert o.u64(3) == _i32_f32_expected(o, 9, 2.5)
        blocks = ok(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(kern, 32, 0))
        assert blocks >= 1
    finally:
        ok(drv.cuLibraryUnload(library))
