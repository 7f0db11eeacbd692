"""cubind: CUDA driver bindings generated from cuda.h.

``cubind.driver`` is a drop-in replacement for ``cuda.bindings.driver``
(functions return ``(CUresult, outputs...)``); ``cubind.cu`` has the same
functions but returns the outputs themselves and raises ``CUDAError``.
"""
import os as _os
import sys as _sys

from cubind._runtime import CUDAError, DriverNotFoundError, FunctionNotFoundError
from cubind import driver

# The raising face is built by the driver extension (both faces share one
# module state); registering it makes ``import cubind.cu`` work.
cu = driver._cu
_sys.modules[__name__ + ".cu"] = cu

# launch(f, grid, block, /, *args, stream=None, shared_mem=0): a kernel
# launch with plain Python values, raising as cubind.cu does. Imported from
# the module registered above, so that type checkers read its stub.
from cubind.cu import launch  # noqa: E402


# The library APIs' exception classes live in their extensions (made at
# their import): cubind.NVRTCError imports cubind.nvrtc, so that pickle
# and `except cubind.NVRTCError` find them without importing every module
# with cubind.
_LIBRARY_ERRORS = {"NVRTCError": "nvrtc", "nvJitLinkError": "nvjitlink"}


def __getattr__(name):
    module = _LIBRARY_ERRORS.get(name)
    if module is None:
        raise AttributeError("module 'cubind' has no attribute %r" % name)
    import importlib

    return getattr(importlib.import_module("cubind." + module), name)


def get_include() -> str:
    """The directory of cubind's C headers (cubind_driver_api.h), for ``-I``."""
    return _os.path.join(_os.path.dirname(__file__), "include")


__all__ = ["CUDAError", "DriverNotFoundError", "FunctionNotFoundError", "driver", "cu",
           "get_include", "launch"]
