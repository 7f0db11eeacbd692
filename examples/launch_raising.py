# SPDX-License-Identifier: Apache-2.0
"""The raising face: cubind.cu returns outputs and raises cubind.CUDAError,
and cubind.launch passes plain Python values as kernel arguments, typed by
the kernel itself (cuFuncGetParamInfo).

Run: python3 examples/launch_raising.py
"""

import cubind
import cubind.cu as cu

from kernels import VECTOR_ADD_PTX, host_vectors


def main() -> None:
    n = 4096
    nbytes = n * 4
    a, b, c = host_vectors(n)

    cu.cuInit(0)
    device = cu.cuDeviceGet(0)
    context = cu.cuDevicePrimaryCtxRetain(device)
    cu.cuCtxSetCurrent(context)
    module = cu.cuModuleLoadData(VECTOR_ADD_PTX)
    kernel = cu.cuModuleGetFunction(module, b"vectorAdd")
    stream = cu.cuStreamCreate(0)
    d_a, d_b, d_c = (cu.cuMemAlloc(nbytes) for _ in range(3))
    cu.cuMemcpyHtoDAsync(d_a, a, nbytes, stream)      # buffers are taken as they are
    cu.cuMemcpyHtoDAsync(d_b, b, nbytes, stream)

    # grid, block, then the kernel's own arguments
    cubind.launch(kernel, (n + 127) // 128, 128, d_a, d_b, d_c, n, stream=stream)
    cu.cuMemcpyDtoHAsync(c, d_c, nbytes, stream)
    cu.cuStreamSynchronize(stream)
    assert all(c[i] == a[i] + b[i] for i in range(n)), "wrong results"
    print("launch: %d results correct" % n)

    # A failing call raises, naming the function and the driver's status.
    try:
        cu.cuMemAlloc(1 << 62)
    except cubind.CUDAError as e:
        print("raised as expected: %s (func=%s)" % (e, e.func))

    for ptr in (d_a, d_b, d_c):
        cu.cuMemFree(ptr)
    cu.cuStreamDestroy(stream)
    cu.cuModuleUnload(module)
    cu.cuDevicePrimaryCtxRelease(device)


if __name__ == "__main__":
    main()
