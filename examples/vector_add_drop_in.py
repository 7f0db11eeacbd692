# SPDX-License-Identifier: Apache-2.0
"""Vector addition through the drop-in face, written as cuda-python's driver
samples are (status tuples checked by a helper, kernel arguments as an
array of pointers to their values). Switching to NVIDIA's bindings is the
import line alone:

    from cuda.bindings import driver as cuda     # NVIDIA's cuda-python
    from cubind import driver as cuda            # cubind

Run: python3 examples/vector_add_drop_in.py
"""
import ctypes
from typing import Any

from cubind import driver as cuda

from kernels import VECTOR_ADD_PTX, host_vectors


def check(result: tuple[Any, ...]) -> Any:
    """The outputs of a drop-in call; raises when its status is an error."""
    err, *outputs = result
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise RuntimeError("CUDA error %d (%r)" % (int(err), cuda.cuGetErrorName(err)[1]))
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def main() -> None:
    n = 50000
    nbytes = n * 4
    a, b, c = host_vectors(n)

    check(cuda.cuInit(0))
    device = check(cuda.cuDeviceGet(0))
    context = check(cuda.cuDevicePrimaryCtxRetain(device))
    check(cuda.cuCtxSetCurrent(context))
    module = check(cuda.cuModuleLoadData(VECTOR_ADD_PTX))
    kernel = check(cuda.cuModuleGetFunction(module, b"vectorAdd"))
    stream = check(cuda.cuStreamCreate(0))

    d_a = check(cuda.cuMemAlloc(nbytes))
    d_b = check(cuda.cuMemAlloc(nbytes))
    d_c = check(cuda.cuMemAlloc(nbytes))
    check(cuda.cuMemcpyHtoDAsync(d_a, a.buffer_info()[0], nbytes, stream))
    check(cuda.cuMemcpyHtoDAsync(d_b, b.buffer_info()[0], nbytes, stream))

    # One pointer per kernel parameter, to a C value of its type.
    values = [ctypes.c_uint64(int(d_a)), ctypes.c_uint64(int(d_b)), ctypes.c_uint64(int(d_c)),
              ctypes.c_int(n)]
    params = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
    threads = 256
    blocks = (n + threads - 1) // threads
    check(cuda.cuLaunchKernel(kernel, blocks, 1, 1, threads, 1, 1, 0, stream,
                              ctypes.addressof(params), 0))
    check(cuda.cuMemcpyDtoHAsync(c.buffer_info()[0], d_c, nbytes, stream))
    check(cuda.cuStreamSynchronize(stream))

    bad = [i for i in range(n) if c[i] != a[i] + b[i]]
    if bad:
        raise SystemExit("vectorAdd: %d wrong results, first at %d" % (len(bad), bad[0]))
    print("vectorAdd: %d results correct" % n)

    for ptr in (d_a, d_b, d_c):
        check(cuda.cuMemFree(ptr))
    check(cuda.cuStreamDestroy(stream))
    check(cuda.cuModuleUnload(module))
    check(cuda.cuDevicePrimaryCtxRelease(device))


if __name__ == "__main__":
    main()
