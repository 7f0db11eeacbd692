# SPDX-License-Identifier: Apache-2.0
"""From CUDA C++ source to a running kernel with cubind alone: compile
with cubind.nvrtc (its raising face, cubind.rtc), load the PTX with
cubind.cu, launch with cubind.launch, read the result back. No nvcc and
no other CUDA Python package; needs a GPU (or the test-only fake driver,
which runs this kernel) and the toolkit's libnvrtc (found as
runtime/library/bind_library.h says: CUBIND_LIBNVRTC, CUDA_HOME, pip
wheels, the system's library path; without it the script says it skipped).

    PYTHONPATH=build/python python3 examples/nvrtc_launch.py
"""
import array

import cubind
import cubind.cu as cu
import cubind.rtc as rtc

SOURCE = rb"""
extern "C" __global__ void scaleArray(float *p, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = a * p[i];
}
"""


def compile_ptx(source: bytes, arch: int) -> bytes:
    """PTX of source for compute_<arch>; cubind.NVRTCError with the
    compiler's log when it does not compile."""
    prog = rtc.nvrtcCreateProgram(source, b"scale.cu", 0, [], [])
    try:
        options = [b"-arch=compute_%d" % arch]
        rtc.nvrtcCompileProgram(prog, len(options), options)
        ptx = b" " * rtc.nvrtcGetPTXSize(prog)
        rtc.nvrtcGetPTX(prog, ptx)  # filled in place, as cuda.bindings does
        return ptx
    finally:
        rtc.nvrtcDestroyProgram(prog)


def main() -> None:
    cu.cuInit(0)
    dev = cu.cuDeviceGet(0)
    ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    attr = cu.CUdevice_attribute
    arch = 10 * cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) \
        + cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)

    try:
        ptx = compile_ptx(SOURCE, arch)
    except cubind.DriverNotFoundError as e:   # no libnvrtc on this machine
        print("skipped: NVRTC not found (%s)" % e)
        cu.cuDevicePrimaryCtxRelease(dev)
        return
    module = cu.cuModuleLoadData(ptx)
    scale = cu.cuModuleGetFunction(module, b"scaleArray")

    n = 1 << 20
    data = array.array("f", range(n))
    ptr = cu.cuMemAlloc(n * 4)
    cu.cuMemcpyHtoD(ptr, data, n * 4)
    cubind.launch(scale, (n + 255) // 256, 256, ptr, n, 2.0)  # typed by the kernel
    cu.cuCtxSynchronize()
    out = array.array("f", bytes(n * 4))
    cu.cuMemcpyDtoH(out, ptr, n * 4)
    assert all(out[i] == 2.0 * i for i in range(0, n, 4099)), out[:8]
    print("scaleArray on %d floats: ok (sm_%d)" % (n, arch))

    cu.cuMemFree(ptr)
    cu.cuModuleUnload(module)
    cu.cuDevicePrimaryCtxRelease(dev)


if __name__ == "__main__":
    main()
