# SPDX-License-Identifier: Apache-2.0
"""Issue 26 on a real GPU: plain Python values convert by each parameter's
type where it is known (the module's PTX, the kernel's C++ name, argtypes=)
and by its size where it is not (a cubin of an extern "C" kernel). The
kernels of tests/gpu/kernel_types_kernels.cu write back the bits they
received; each is built twice, nvcc -ptx and nvcc -cubin.

cubind only (cuda.bindings has no plain-values form). Needs nvcc; skipped
without it, and without a GPU (tests/gpu is never run in CI). Optional:
cuda.core (Buffers, Kernel handles), torch and CuPy (DLPack).
"""
import ctypes
import os
import struct
import subprocess

import pytest

try:
    from gpu_common import HERE, IMPL, drv, ok
except ImportError as e:  # no bindings built: nothing to test here
    pytest.skip(f"cubind not importable: {e}", allow_module_level=True)

pytestmark = pytest.mark.skipif(IMPL != "cubind", reason="plain values are cubind's")


@pytest.fixture(scope="module", autouse=True)
def gpu():
    """Skips the file without a driver or a device (CPU-only machines), and
    on the test-only fake driver, which runs no kernel."""
    if "fakecuda" in os.environ.get("CUBIND_LIBCUDA", ""):
        pytest.skip("the fake driver runs no kernels")
    try:
        err = drv.cuInit(0)[0]
        count = drv.cuDeviceGetCount()
    except Exception as e:  # no driver at all (cubind's DriverNotFoundError)
        pytest.skip(f"no CUDA driver: {e}")
    if err != 0 or count[0] != 0 or count[1] < 1:
        pytest.skip(f"no CUDA device (cuInit: {err})")


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


@pytest.fixture(scope="module")
def images(ptx_of, tmp_path_factory):
    """{"ptx": PTX text, "cubin": the cubin of the same source, "fatbin": a
    fat binary of SASS and uncompressed PTX (-no-compress: nvcc compresses
    PTX by default, and compressed PTX is not read)}."""
    from gpu_common import nvcc
    ptx = ptx_of("kernel_types_kernels")
    d = tmp_path_factory.mktemp("kt")
    src = str(HERE / "kernel_types_kernels.cu")
    subprocess.run([nvcc(), "-cubin", "-arch=sm_90", src, "-o", str(d / "k.cubin")], check=True)
    subprocess.run([nvcc(), "-fatbin", "-no-compress", "-gencode",
                    "arch=compute_90,code=[sm_90,compute_90]", src, "-o", str(d / "k.fatbin")],
                   check=True)
    return {"ptx": ptx, "cubin": (d / "k.cubin").read_bytes(),
            "fatbin": (d / "k.fatbin").read_bytes()}


@pytest.fixture(scope="module")
def mods(images, ctx):
    loaded = {k: ok(drv.cuModuleLoadData(v)) for k, v in images.items()}
    yield loaded
    for m in loaded.values():
        ok(drv.cuModuleUnload(m))


def as_bytes(name):
    return name.encode() if isinstance(name, str) else name


def function(mod, prefix):
    """The function of mod whose (mangled) name starts with prefix."""
    n = ok(drv.cuModuleGetFunctionCount(mod))
    for f in ok(drv.cuModuleEnumerateFunctions(n, mod)):
        if as_bytes(ok(drv.cuFuncGetName(f))).startswith(prefix):
            return f
    raise AssertionError(f"no function {prefix!r}")


class Out:
    def __init__(self, n):
        self.n = n
        self.ptr = ok(drv.cuMemAlloc(8 * n))

    def run(self, f, *args, **kw):
        import cubind
        ok(drv.cuMemsetD8(self.ptr, 0, 8 * self.n))
        cubind.launch(f, 1, 1, self.ptr, *args, **kw)
        return self.read()

    def read(self):
        """What the kernel wrote, once the context is idle."""
        ok(drv.cuCtxSynchronize())
        host = (ctypes.c_uint64 * self.n)()
        ok(drv.cuMemcpyDtoH(ctypes.addressof(host), self.ptr, 8 * self.n))
        return list(host)


@pytest.fixture
def out(ctx):
    made = []

    def make(n):
        made.append(Out(n))
        return made[-1]

    yield make
    for o in made:
        ok(drv.cuMemFree(o.ptr))


def test_ptx_types_convert_and_refuse(mods, out):
    f = ok(drv.cuModuleGetFunction(mods["ptx"], b"kt_axpy"))
    o = out(2)
    assert o.run(f, 7, 2) == [7, f32(2.0)]
    assert o.run(f, -1, 0.1) == [2**32 - 1, f32(0.1)]
    with pytest.raises(TypeError, match="kernel parameter 1: 'kt_axpy' declares"):
        o.run(f, 1.5, 2.0)


def test_fatbin_with_ptx_types(mods, out):
    f = ok(drv.cuModuleGetFunction(mods["fatbin"], b"kt_axpy"))
    o = out(2)
    assert o.run(f, 7, 2) == [7, f32(2.0)]


def test_cubin_extern_c_packs_by_size_unless_argtypes(mods, out):
    """No types known (issue 42 item 6): the raising face refuses an int
    for the 4-byte parameters; argtypes= types them; None entries pack by
    size, the int's bits (documented)."""
    import cubind
    f = ok(drv.cuModuleGetFunction(mods["cubin"], b"kt_axpy"))
    o = out(2)
    with pytest.raises(TypeError, match="kernel parameter 1: kernel 'kt_axpy' has no parameter"):
        o.run(f, 7, 2)
    assert o.run(f, 7, 2, argtypes=("p", "i4", "f4")) == [7, f32(2.0)]
    assert o.run(f, 7, 2, argtypes=(None, None, None)) == [7, 2]
    assert o.run(f, ctypes.c_int32(7), 2.0) == [7, f32(2.0)]
    assert issubclass(cubind.UntypedKernelWarning, UserWarning)


@pytest.mark.parametrize("image", ["ptx", "cubin"])
def test_mangled_names(mods, out, image):
    f = function(mods[image], b"_Z6kt_cpp")
    o = out(4)
    assert o.run(f, 7, 2, 3, 65535) == [7, f32(2.0), f64(3.0), 65535]
    with pytest.raises(OverflowError, match="kernel parameter 4"):
        o.run(f, 7, 2, 3, 65536)
    with pytest.raises(TypeError, match="kernel parameter 1"):
        o.run(f, 7.5, 2, 3, 1)
    for prefix, conv in [(b"_Z7kt_tmplIfE", f32), (b"_Z7kt_tmplIdE", f64)]:
        f = function(mods[image], prefix)
        o = out(2)
        assert o.run(f, 2, 5) == [conv(2.0), 5]
    # _Z5kt_cvPyPVKjS1_j: S1_ is the second `const volatile unsigned *`
    f = function(mods[image], b"_Z5kt_cv")
    o = out(3)
    a, b = int(o.ptr) + 8, int(o.ptr) + 16
    assert o.run(f, a, b, 7) == [a, b, 7]
    with pytest.raises(TypeError, match="kernel parameter 2"):
        o.run(f, a, 1.5, 7)


class S3(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float), ("c", ctypes.c_double)]


@pytest.mark.parametrize("image", ["ptx", "cubin"])
def test_struct_by_value(mods, out, image):
    f = function(mods[image], b"_Z9kt_struct")
    o = out(5)
    assert o.run(f, ord("q"), S3(-9, 0.25, 1e100), 3) == [
        ord("q"), 2**32 - 9, f32(0.25), f64(1e100), f32(3.0)]
    with pytest.raises(TypeError, match="kernel parameter 2"):
        o.run(f, 1, 5, 3)


def test_cukernel_handles(images, ctx, out):
    import cubind.driver as d
    lib = ok(d.cuLibraryLoadData(images["cubin"], None, None, 0, None, None, 0))
    try:
        n = ok(d.cuLibraryGetKernelCount(lib))
        kernels = ok(d.cuLibraryEnumerateKernels(n, lib))
        k = next(k for k in kernels if as_bytes(ok(d.cuKernelGetName(k))).startswith(b"_Z6kt_cpp"))
        o = out(4)
        assert o.run(k, 7, 2, 3, 1) == [7, f32(2.0), f64(3.0), 1]
        # its value as an int: cuFuncGetParamInfo refuses it, cuKernelGetParamInfo types it
        assert o.run(int(k), 8, 2, 3, 1) == [8, f32(2.0), f64(3.0), 1]
    finally:
        ok(d.cuLibraryUnload(lib))


def test_ptx_library_functions(images, ctx, out):
    """A CUfunction of a PTX library's extern "C" kernel, through
    cuKernelGetFunction and through cuLibraryGetModule + cuModuleGetFunction:
    typed by the library's PTX (2 reaches the float as 2.0f, a float for the
    int is refused), as the library's CUkernel is."""
    import cubind.driver as d
    lib = ok(d.cuLibraryLoadData(images["ptx"], None, None, 0, None, None, 0))
    try:
        k = ok(d.cuLibraryGetKernel(lib, b"kt_axpy"))
        via_kernel = ok(d.cuKernelGetFunction(k))
        via_module = ok(d.cuModuleGetFunction(ok(d.cuLibraryGetModule(lib)), b"kt_axpy"))
        for f in (via_kernel, via_module):
            o = out(2)
            assert o.run(f, 7, 2) == [7, f32(2.0)]
            with pytest.raises(TypeError, match="kernel parameter 1: 'kt_axpy' declares"):
                o.run(f, 1.5, 2.0)
    finally:
        ok(d.cuLibraryUnload(lib))


def _cuda_core():
    """cuda.core (its Device, Buffer, ObjectCode), wherever this version has them."""
    try:
        import cuda.core as core
        if hasattr(core, "Device"):
            return core
    except ImportError:
        pass
    return pytest.importorskip("cuda.core.experimental")


def test_cuda_core_buffer_and_kernel(images, mods, out):
    core = _cuda_core()
    dev = core.Device(0)
    dev.set_current()
    # cuda.core 1.x allocates on a stream (a keyword it requires)
    stream = dev.create_stream()
    buf = dev.allocate(64, stream=stream)
    stream.sync()
    try:
        f = ok(drv.cuModuleGetFunction(mods["cubin"], b"kt_ptr"))
        o = out(1)
        assert o.run(f, buf) == [int(buf.handle)]
        code = core.ObjectCode.from_cubin(images["cubin"])
        kern = code.get_kernel("kt_ptr")
        assert o.run(kern.handle, buf) == [int(buf.handle)]
    finally:
        buf.close(stream)


@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_dlpack_arrays(mods, out, lib):
    mod = pytest.importorskip(lib)
    if lib == "torch":
        if not mod.cuda.is_available():
            pytest.skip("torch without CUDA")
        arr = mod.zeros(16, device="cuda")
        ptr = arr.data_ptr()
        view = arr[4:]
        vptr = view.data_ptr()
    else:
        arr = mod.zeros(16, dtype=mod.float32)
        ptr = arr.data.ptr
        view = arr[4:]
        vptr = view.data.ptr

    class OnlyDLPack:
        """The array seen through DLPack alone (no __cuda_array_interface__)."""

        def __init__(self, a):
            self.a = a

        def __dlpack__(self, *args, **kw):
            return self.a.__dlpack__(*args, **kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    for image in ("ptx", "cubin"):
        f = ok(drv.cuModuleGetFunction(mods[image], b"kt_ptr"))
        o = out(1)
        assert o.run(f, OnlyDLPack(arr)) == [ptr]
        assert o.run(f, OnlyDLPack(view)) == [vptr]
        assert o.run(f, arr) == [ptr]


@pytest.mark.parametrize("face", ["driver", "cu"])
def test_argtypes_on_every_launch_function(mods, out, face):
    """argtypes= of cuLaunchKernel, cuLaunchKernelEx and
    cuLaunchCooperativeKernel, both faces, on the cubin's extern "C"
    kt_axpy (no types known): the kernel receives 2 as 2.0f."""
    import cubind.cu as cu
    mod = drv if face == "driver" else cu
    f = ok(drv.cuModuleGetFunction(mods["cubin"], b"kt_axpy"))
    o = out(2)
    types = ("p", "i4", "f4")

    def launched(call):
        ok(drv.cuMemsetD8(o.ptr, 0, 16))
        r = call()
        assert r is None or r[0] == 0, r
        return o.read()

    assert launched(lambda: mod.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (o.ptr, 7, 2),
                                               None, argtypes=types)) == [7, f32(2.0)]
    assert launched(lambda: mod.cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, None,
                                                          (o.ptr, 8, 3),
                                                          argtypes=types)) == [8, f32(3.0)]
    config = mod.CUlaunchConfig()
    config.gridDimX = config.gridDimY = config.gridDimZ = 1
    config.blockDimX = config.blockDimY = config.blockDimZ = 1
    assert launched(lambda: mod.cuLaunchKernelEx(config, f, (o.ptr, 9, 4), None,
                                                 argtypes=types)) == [9, f32(4.0)]
    # without argtypes=: the drop-in face packs the int's bits (warned), the
    # raising face refuses an int for the 4-byte parameters
    # (the warning comes once per kernel: an earlier test may have had it)
    if face == "driver":
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = launched(lambda: mod.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None,
                                                      (o.ptr, 7, 2), None))
        assert got == [7, 2]
    else:
        with pytest.raises(TypeError, match="has no parameter types"):
            mod.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (o.ptr, 7, 2), None)


def test_numpy_scalars_and_bools(mods, out):
    """numpy scalars convert where exact (np.float64(2.5) for a float,
    np.int64(7) for an int) and are refused where not; bools from a
    mangled name take True, False and numpy.bool_ as 1 and 0."""
    np = pytest.importorskip("numpy")
    f = ok(drv.cuModuleGetFunction(mods["ptx"], b"kt_axpy"))
    o = out(3)
    assert o.run(f, np.int64(7), np.float64(2.5))[:2] == [7, f32(2.5)]
    assert o.run(f, np.int32(-1), np.float32(0.1))[:2] == [2**32 - 1, f32(np.float32(0.1))]
    with pytest.raises(TypeError):
        o.run(f, np.float64(1.5), 2.0)
    g = function(mods["cubin"], b"_Z8kt_flags")
    assert o.run(g, True, 200, False) == [1, 200, 0]
    assert o.run(g, np.bool_(True), np.uint8(7), 0) == [1, 7, 0]
    with pytest.raises(OverflowError, match="bool"):
        o.run(g, 2, 0, 0)
