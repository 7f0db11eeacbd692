# SPDX-License-Identifier: Apache-2.0
"""CUDA C++ source -> NVRTC -> the driver -> a launch -> the result read
back, on a real GPU; and the same through nvJitLink (PTX and LTO-IR linked
to a cubin). With CUBIND_GPU_IMPL=cubind / cubind.cu: cubind.nvrtc,
cubind.nvjitlink and cubind.driver (launch with cubind.launch for
cubind.cu); with cuda.bindings: cuda.bindings.nvrtc, .nvjitlink, .driver
(the drop-in evidence). Needs no nvcc. Never run in CI."""
import ctypes
import importlib
import struct

import pytest

from gpu_common import IMPL, drv, ok

CUBIND = IMPL in ("cubind", "cubind.cu")
nvrtc = importlib.import_module("cuda.bindings.nvrtc" if not CUBIND else "cubind.nvrtc")
try:
    nvjitlink = importlib.import_module("cuda.bindings.nvjitlink" if not CUBIND
                                        else "cubind.nvjitlink")
except ImportError:  # an older cuda.bindings
    nvjitlink = None

N = 1000
SCALE = rb"""
extern "C" __global__ void scale(float *p, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = a * p[i] + (float)i;
}
"""


def rtc_ok(result):
    assert result[0] == nvrtc.nvrtcResult.NVRTC_SUCCESS, result
    return result[1] if len(result) == 2 else result[1:] or None


@pytest.fixture(scope="module")
def arch(dev):
    major = ok(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = ok(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    return 10 * major + minor


def compile_source(options, what):
    prog = rtc_ok(nvrtc.nvrtcCreateProgram(SCALE, b"scale.cu", 0, [], []))
    err, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = rtc_ok(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        pytest.fail(log.decode(errors="replace"))
    size = rtc_ok(getattr(nvrtc, "nvrtcGet%sSize" % what)(prog))
    image = b" " * size
    rtc_ok((getattr(nvrtc, "nvrtcGet%s" % what)(prog, image)[0], None))
    rtc_ok((nvrtc.nvrtcDestroyProgram(prog)[0], None))
    return image


def run_scale(image):
    """Loads image, launches scale over N floats, returns what came back."""
    mod = ok(drv.cuModuleLoadData(image))
    f = ok(drv.cuModuleGetFunction(mod, b"scale"))
    host = (ctypes.c_float * N)(*[float(i) for i in range(N)])
    dptr = ok(drv.cuMemAlloc(N * 4))
    ok(drv.cuMemcpyHtoD(dptr, host, N * 4))
    if IMPL == "cubind.cu":
        import cubind
        # a cubin of an extern "C" kernel carries no types: say them
        cubind.launch(f, (N + 127) // 128, 128, dptr, N, 2.0, argtypes=["p", "i4", "f4"])
    else:
        args = (ctypes.c_void_p(int(dptr)), ctypes.c_int(N), ctypes.c_float(2.0))
        params = (ctypes.c_void_p * 3)(*[ctypes.addressof(a) for a in args])
        ok(drv.cuLaunchKernel(f, (N + 127) // 128, 1, 1, 128, 1, 1, 0, 0, ctypes.addressof(params), 0))
    ok(drv.cuCtxSynchronize())
    out = (ctypes.c_float * N)()
    ok(drv.cuMemcpyDtoH(out, dptr, N * 4))
    ok(drv.cuMemFree(dptr))
    ok(drv.cuModuleUnload(mod))
    return list(out)


EXPECTED = [2.0 * i + i for i in range(N)]


def test_ptx_from_nvrtc_runs(ctx, arch):
    ptx = compile_source([b"-arch=compute_%d" % arch], "PTX")
    assert run_scale(ptx) == EXPECTED


def test_cubin_from_nvrtc_runs(ctx, arch):
    cubin = compile_source([b"-arch=sm_%d" % arch], "CUBIN")
    assert cubin[:4] == b"\x7fELF"
    assert run_scale(cubin) == EXPECTED


@pytest.mark.skipif(nvjitlink is None, reason="no nvjitlink module")
@pytest.mark.parametrize("kind", ["PTX", "LTOIR"])
def test_linked_by_nvjitlink_runs(ctx, arch, kind):
    options = [b"-arch=compute_%d" % arch] if kind == "PTX" else [b"-arch=sm_%d" % arch, b"-dlto"]
    image = compile_source(options, kind)
    link_options = ["-arch=sm_%d" % arch] + (["-lto"] if kind == "LTOIR" else [])
    handle = nvjitlink.create(len(link_options), link_options)
    nvjitlink.add_data(handle, getattr(nvjitlink.InputType, kind), image, len(image), "scale")
    nvjitlink.complete(handle)
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    nvjitlink.destroy(handle)
    assert bytes(cubin[:4]) == b"\x7fELF"
    (machine,) = struct.unpack_from("<H", cubin, 18)
    assert machine == 190  # EM_CUDA
    assert run_scale(bytes(cubin)) == EXPECTED
