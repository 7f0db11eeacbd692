# SPDX-License-Identifier: Apache-2.0
"""The parameter kinds issue 3 names that no other file exercises through
behaviour: cuGetErrorName / cuGetErrorString (a driver-owned string out),
cuGetProcAddress (a function pointer out, called back through ctypes) and
cuModuleLoadDataEx's JIT options (two lists sized by one count), in both
faces, against the test-only fake driver. The GPU counterparts are in
tests/gpu/test_scenarios_gpu.py (test_error_name_and_string, ...)."""
import ctypes

import pytest

import cubind
import cubind.cu as cu

COUNT_PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))


def test_error_name_and_string_in_both_faces(drv):
    bad = drv.CUresult.CUDA_ERROR_INVALID_DEVICE
    assert drv.cuGetErrorName(bad) == (drv.CUresult.CUDA_SUCCESS, b"CUDA_ERROR_INVALID_DEVICE")
    err, text = drv.cuGetErrorString(bad)
    assert err == drv.CUresult.CUDA_SUCCESS and type(text) is bytes and b"device" in text
    assert cu.cuGetErrorName(drv.CUresult.CUDA_SUCCESS) == b"CUDA_SUCCESS"
    assert cu.cuGetErrorString(bad) == text
    # a plain int is taken for the enum, as cuda.bindings takes it
    assert drv.cuGetErrorName(101) == (drv.CUresult.CUDA_SUCCESS, b"CUDA_ERROR_INVALID_DEVICE")
    # an enum argument takes what int() takes, as cuda.bindings converts it
    assert drv.cuGetErrorName("101") == (drv.CUresult.CUDA_SUCCESS, b"CUDA_ERROR_INVALID_DEVICE")
    with pytest.raises(ValueError, match="error"):
        drv.cuGetErrorName("x")


def test_get_proc_address_returns_a_callable_entry_point(drv, ctx):
    err, pfn, status = drv.cuGetProcAddress(b"cuDeviceGetCount", 12000, 0)
    assert err == drv.CUresult.CUDA_SUCCESS
    assert status is drv.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS
    n = ctypes.c_int(-1)
    assert COUNT_PROTO(int(pfn))(ctypes.byref(n)) == 0
    assert (drv.CUresult.CUDA_SUCCESS, n.value) == drv.cuDeviceGetCount()
    # the raising face returns the two outputs
    pfn2, status2 = cu.cuGetProcAddress(b"cuDeviceGetCount", 12000, 0)
    assert int(pfn2) == int(pfn) and status2 is status


def test_get_proc_address_of_a_missing_symbol(drv, ctx):
    # the driver's answer (the fake answers as the 13.0 driver did on the
    # H200): success, a NULL pfn, and the query result saying why
    Q = drv.CUdriverProcAddressQueryResult
    assert drv.cuGetProcAddress(b"cuNoSuchFunction", 12000, 0) == \
        (drv.CUresult.CUDA_SUCCESS, 0, Q.CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
    assert cu.cuGetProcAddress(b"cuNoSuchFunction", 12000, 0) == \
        (0, Q.CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
    # a version older than the entry point's first: NOT_FOUND
    assert drv.cuGetProcAddress(b"cuLaunchKernelEx", 11000, 0) == \
        (drv.CUresult.CUDA_ERROR_NOT_FOUND, None, None)
    with pytest.raises(cubind.CUDAError) as info:
        cu.cuGetProcAddress(b"cuLaunchKernelEx", 11000, 0)
    assert info.value.result is drv.CUresult.CUDA_ERROR_NOT_FOUND
    with pytest.raises(TypeError, match="symbol"):
        drv.cuGetProcAddress(12, 12000, 0)


def test_module_load_data_ex_takes_jit_options(drv, fake, ctx):
    J = drv.CUjit_option
    before = fake.fakecuda_call_count(b"cuModuleLoadDataEx")
    err, mod = drv.cuModuleLoadDataEx(b"jit image\0", 2,
                                      [J.CU_JIT_OPTIMIZATION_LEVEL, J.CU_JIT_MAX_REGISTERS], [4, 32])
    assert err == drv.CUresult.CUDA_SUCCESS and int(mod) != 0
    mod2 = cu.cuModuleLoadDataEx(b"jit image 2\0", 1, (J.CU_JIT_OPTIMIZATION_LEVEL,), (4,))
    assert int(mod2) not in (0, int(mod))
    assert fake.fakecuda_call_count(b"cuModuleLoadDataEx") == before + 2
    assert drv.cuModuleUnload(mod) == (drv.CUresult.CUDA_SUCCESS,)
    cu.cuModuleUnload(mod2)


@pytest.mark.parametrize("face", ["driver", "cu"])
@pytest.mark.parametrize("options,values,short", [
    (1, 2, "options"),      # fewer options than numOptions
    (2, 1, "optionValues"),  # fewer values
])
def test_module_load_data_ex_counts_are_checked_before_the_driver(drv, fake, ctx, face, options,
                                                                 values, short):
    api = drv if face == "driver" else cu
    J = drv.CUjit_option
    before = fake.fakecuda_call_count(b"cuModuleLoadDataEx")
    with pytest.raises(ValueError, match=f"argument '{short}' has 1 elements, fewer than the 2"):
        api.cuModuleLoadDataEx(b"x\0", 2, [J.CU_JIT_OPTIMIZATION_LEVEL] * options, [4] * values)
    assert fake.fakecuda_call_count(b"cuModuleLoadDataEx") == before
