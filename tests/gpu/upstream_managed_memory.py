# SPDX-License-Identifier: Apache-2.0
"""Stand-in for cuda_python_test_helpers.managed_memory, which cuda-python's
test_cuda.py imports (scripts/gpu-run upstream installs it as that module
next to the tests): managed_memory_skip_reason() is None when device 0
supports concurrent managed access, else why a test needing it is skipped."""


def managed_memory_skip_reason():
    import cuda.bindings.driver as cuda  # the module under test

    (err,) = cuda.cuInit(0)
    if err != cuda.CUresult.CUDA_SUCCESS:
        return "cuInit failed: %s" % err
    err, dev = cuda.cuDeviceGet(0)
    err, value = cuda.cuDeviceGetAttribute(
        cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev)
    if err != cuda.CUresult.CUDA_SUCCESS or not value:
        return "device 0 has no concurrent managed access"
    return None
