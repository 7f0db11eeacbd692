# SPDX-License-Identifier: Apache-2.0
"""A few calls through both faces of freshly built bindings, against the
test-only fake driver (CUBIND_LIBCUDA): for scripts/check-pythons.sh, on
interpreters without pytest. Prints one line; raises on any mismatch."""
import ctypes
import os
import struct
import sys

import cubind
import cubind.cu as cu
import cubind.driver as drv

fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
fake.fakecuda_set_param_layout.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                           ctypes.c_void_p, ctypes.c_void_p]
fake.fakecuda_last_launch_params.restype = ctypes.c_longlong
fake.fakecuda_last_launch_params.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]

assert drv.cuInit(0) == (drv.CUresult.CUDA_SUCCESS,)
err, dev = drv.cuDeviceGet(0)
assert err == drv.CUresult.CUDA_SUCCESS and int(dev) == 0
attr = drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
assert cu.cuDeviceGetAttribute(attr, dev) == drv.cuDeviceGetAttribute(attr, dev)[1]
cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(dev))
ptr = cu.cuMemAlloc(1024)
assert isinstance(ptr, drv.CUdeviceptr) and int(ptr) != 0
cu.cuMemFree(ptr)
try:
    cu.cuMemFree(ptr)
    raise AssertionError("freeing twice did not raise")
except cubind.CUDAError as e:
    assert e.result == drv.CUresult.CUDA_ERROR_INVALID_VALUE, e
try:
    cu.cuDeviceGet(2**40)
    raise AssertionError("an ordinal past int did not raise")
except OverflowError as e:
    assert "ordinal" in str(e), e

# a launch with plain values: the fake records the bytes the kernel gets
offsets, sizes = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
assert fake.fakecuda_set_param_layout(None, b"smoke", 3, offsets, sizes) == 0
f = cu.cuModuleGetFunction(cu.cuModuleLoadData(b"smoke image\0"), b"smoke")
# (no PTX or C++ name types this kernel: argtypes= does, as the raising
# face refuses an int where the kernel may read a float)
cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (0x1000, -7, 2.5), None, argtypes=("p", "i4", "f4"))
got = ctypes.create_string_buffer(16)
n = fake.fakecuda_last_launch_params(b"smoke", got, 16)
assert got.raw[:n] == struct.pack("<Qif", 0x1000, -7, 2.5), got.raw[:n]
# the same through cuda.bindings' (values, ctypes types) form
drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None,
                   ((0x2000, -8, 3.5), (ctypes.c_void_p, ctypes.c_int, ctypes.c_float)), None)
n = fake.fakecuda_last_launch_params(b"smoke", got, 16)
assert got.raw[:n] == struct.pack("<Qif", 0x2000, -8, 3.5), got.raw[:n]
# cubind.launch, on a stream given by the CUDA stream protocol
stream = cu.cuStreamCreate(0)


class StreamLike:
    def __cuda_stream__(self):
        return stream.__cuda_stream__()


cubind.launch(f, (1, 1), 1, 0x3000, -9, 4.5, stream=StreamLike(), argtypes=("p", "i4", "f4"))
n = fake.fakecuda_last_launch_params(b"smoke", got, 16)
assert got.raw[:n] == struct.pack("<Qif", 0x3000, -9, 4.5), got.raw[:n]
cu.cuStreamDestroy(stream)

print("smoke_bindings: Python %s%s: both faces, errors and launches as expected"
      % (sys.version.split()[0], " (free-threaded)" if not getattr(sys, "_is_gil_enabled", lambda: True)() else ""))
