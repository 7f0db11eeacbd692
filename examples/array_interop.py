# SPDX-License-Identifier: Apache-2.0
"""CuPy and PyTorch arrays as kernel arguments: cubind.launch takes any
object with __cuda_array_interface__ where the kernel has a pointer, and a
stream parameter takes any object implementing __cuda_stream__ (or an int).
Each library is skipped when it is not installed.

Run: python3 examples/array_interop.py
"""
import importlib.util

import cubind
import cubind.cu as cu

from kernels import VECTOR_ADD_PTX


def kernel() -> cubind.driver.CUfunction:
    cu.cuInit(0)
    cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(cu.cuDeviceGet(0)))
    return cu.cuModuleGetFunction(cu.cuModuleLoadData(VECTOR_ADD_PTX), b"vectorAdd")


def with_cupy(f: cubind.driver.CUfunction) -> None:
    import cupy  # type: ignore[import]
    n = 1000
    a = cupy.arange(n, dtype=cupy.float32)
    b = cupy.full(n, 2.0, dtype=cupy.float32)
    c = cupy.empty_like(a)
    stream = cupy.cuda.Stream()
    cubind.launch(f, (n + 127) // 128, 128, a, b, c, n, stream=stream.ptr)
    stream.synchronize()
    assert bool((c == a + b).all())
    print("cupy: %d results correct" % n)


def with_torch(f: cubind.driver.CUfunction) -> None:
    import torch  # type: ignore[import]
    n = 1000
    a = torch.arange(n, dtype=torch.float32, device="cuda")
    b = torch.full((n,), 2.0, dtype=torch.float32, device="cuda")
    c = torch.empty_like(a)
    stream = torch.cuda.current_stream()
    cubind.launch(f, (n + 127) // 128, 128, a, b, c, n, stream=stream.cuda_stream)
    stream.synchronize()
    assert bool(torch.equal(c, a + b))
    print("torch: %d results correct" % n)


def main() -> None:
    present = [name for name in ("cupy", "torch") if importlib.util.find_spec(name)]
    if not present:
        print("array_interop: skipped (neither cupy nor torch is installed)")
        return
    f = kernel()
    if "cupy" in present:
        with_cupy(f)
    else:
        print("cupy: skipped (not installed)")
    if "torch" in present:
        with_torch(f)
    else:
        print("torch: skipped (not installed)")


if __name__ == "__main__":
    main()
