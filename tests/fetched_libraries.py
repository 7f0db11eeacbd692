# SPDX-License-Identifier: Apache-2.0
"""The CPU libraries scripts/fetch-cuda-libs.sh fetched (configure's
cuda_libs; NVML's, the 550 driver's libnvidia-ml.so.1, in
cuda_driver_libs), for the suites that load them (tests/python's library
modules, tests/abi's consumer of their capsule tables): one place that
points each module's variable at its library."""
import ctypes
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# variable naming a module's library: (configure's cache key, file in its lib/)
FETCHED_LIBRARIES = {"CUBIND_LIBNVFATBIN": ("cuda_libs", "libnvfatbin.so.12"),
                     "CUBIND_LIBCUFILE": ("cuda_libs", "libcufile.so.0"),
                     "CUBIND_LIBNVML": ("cuda_driver_libs", "libnvidia-ml.so.1")}


def _config(name):
    """build/config.ninja's value of name, or "" (no build, no fetch)."""
    try:
        with open(os.path.join(REPO, "build", "config.ninja")) as f:
            for line in f:
                if line.startswith(name + " = "):
                    return line.split(" = ", 1)[1].strip()
    except OSError:
        pass
    return ""


def point_at_fetched_libraries(environ):
    """Sets in `environ` each variable of FETCHED_LIBRARIES not already set
    whose fetched library exists, and where libcufile writes its log
    (cufile.log in the working directory unless told) to build/."""
    for var, (cache, name) in FETCHED_LIBRARIES.items():
        root = _config(cache)
        if root and var not in environ and os.path.exists(os.path.join(root, "lib", name)):
            environ[var] = os.path.join(root, "lib", name)
    environ.setdefault("CUFILE_LOGFILE_PATH", os.path.join(REPO, "build", "cufile.log"))


def cuda_driver_loadable():
    """Whether libcufile, which loads libcuda.so.1 itself (not the one
    CUBIND_LIBCUDA names), finds a CUDA driver: then cuFileDriverOpen may
    succeed without GPUDirect Storage, in its compatibility mode."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True
