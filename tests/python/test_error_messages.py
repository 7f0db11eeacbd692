# SPDX-License-Identifier: Apache-2.0
"""What cubind's errors say (issue 28): CUDAError names the function that
failed first and carries it as .func; FunctionNotFoundError says whether the
driver lacks the symbol or has it only in another ABI, and which driver
release it is, in words. Both fail on 05a670f (no .func, "status 2",
"CUDA version 10000")."""
import pickle

import pytest

from conftest import run_python


@pytest.fixture
def cu(drv):
    import cubind.cu
    return cubind.cu


def test_cuda_error_starts_with_the_function_and_carries_it(cu):
    import cubind
    with pytest.raises(cubind.CUDAError) as info:
        cu.cuDeviceGet(999)
    e = info.value
    assert e.func == "cuDeviceGet"
    assert str(e).startswith("cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (101): ")
    assert int(e.result) == 101 and e.name == "CUDA_ERROR_INVALID_DEVICE"
    again = pickle.loads(pickle.dumps(e))
    assert (again.func, str(again)) == (e.func, str(e))


def test_cuda_error_without_func_keeps_the_old_form():
    import cubind
    e = cubind.CUDAError(1, "CUDA_ERROR_INVALID_VALUE", "invalid argument")
    assert e.func is None and str(e) == "CUDA_ERROR_INVALID_VALUE (1): invalid argument"
    with pytest.raises(TypeError, match="'func' must be str or None"):
        cubind.CUDAError(1, "X", "y", 5)


def test_function_not_found_names_status_and_driver_release():
    # The fake refuses versions above its own, as a real old driver does:
    # an 11.0 driver asked for cuCtxGetDevice_v2 in the 13.0 ABI.
    proc = run_python(
        "import ctypes, os, cubind, cubind.driver as d\n"
        "lib = ctypes.CDLL(os.environ['CUBIND_LIBCUDA'])\n"
        "lib.fakecuda_set_driver_version(11000)\n"
        "try:\n    d.cuCtxGetDevice_v2(None)\n"
        "except cubind.FunctionNotFoundError as e:\n    print('RAISED', e)\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "RAISED cuCtxGetDevice_v2: the CUDA driver 11.0 (" in out, out
    assert "lacks the 13.0 ABI of cuCtxGetDevice: symbol absent" in out, out
    assert "status" not in out and "CUDA version" not in out, out


def test_docstrings_per_face(cu, drv):
    # help() of the raising face shows what it returns and raises, not the
    # drop-in face's status tuple (issue 28); both carry NVIDIA's link.
    assert "tuple[CUresult" not in cu.cuMemAlloc.__doc__
    assert "cubind.CUDAError" in cu.cuMemAlloc.__doc__
    assert "tuple[CUresult, CUdeviceptr | None]" in drv.cuMemAlloc.__doc__
    assert "cubind.CUDAError" not in drv.cuMemAlloc.__doc__
    for doc in (cu.cuMemAlloc.__doc__, drv.cuMemAlloc.__doc__):
        assert "\nParameters\n----------\nbytesize : int\n" in doc
        assert "cuda.bindings.driver.cuMemAlloc\n" in doc
        assert "\\brief" not in doc and "\\p " not in doc
    assert "Implements the CUDA stream protocol" in drv.CUstream.__doc__
    assert drv.CUcontext.__doc__.startswith("A ``CUcontext`` of cuda.h")


MISSING_DRIVER = """
import cubind, cubind.driver as d
try:
    d.cuInit(0)
except cubind.DriverNotFoundError as e:
    print(e)
"""


def test_missing_driver_names_the_file_once_and_what_to_install():
    # Issue 43: "could not load the CUDA driver: libcuda.so.1: libcuda.so.1:
    # cannot open shared object file" named the file twice (the second from
    # dlerror) and did not say what to install.
    missing = "/nonexistent-cubind/libcuda.so.1"
    p = run_python(MISSING_DRIVER, CUBIND_LIBCUDA=missing)
    assert p.returncode == 0, p.stderr
    msg = p.stdout.strip()
    assert msg.count(missing) == 1, msg
    assert "CUBIND_LIBCUDA=" + missing in msg and "NVIDIA driver" in msg, msg


def test_no_system_driver_says_install_it_or_set_cubind_libcuda():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("this machine has a driver")
    p = run_python(MISSING_DRIVER, CUBIND_LIBCUDA="")   # empty counts as unset
    assert p.returncode == 0, p.stderr
    msg = p.stdout.strip()
    assert "libcuda.so.1: libcuda.so.1" not in msg and "(libcuda.so.1:" not in msg, msg
    assert "install the NVIDIA driver" in msg and "set CUBIND_LIBCUDA" in msg, msg
