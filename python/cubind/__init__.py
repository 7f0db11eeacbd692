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


# The library APIs (cubind.nvrtc and its raising face cubind.rtc,
# cubind.nvjitlink) are imported on first use, not with cubind: their
# modules, and their exception classes, which live in their extensions
# (cubind.NVRTCError imports cubind.nvrtc), so that pickle, `except
# cubind.NVRTCError` and PyCapsule_Import("cubind.nvrtc._C_API") find them.
_LAZY = {"nvrtc": ("nvrtc", None), "rtc": ("rtc", None), "nvjitlink": ("nvjitlink", None),
         "NVRTCError": ("nvrtc", "NVRTCError"), "nvJitLinkError": ("nvjitlink", "nvJitLinkError")}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError("module 'cubind' has no attribute %r" % name)
    import importlib

    module, attr = _LAZY[name]
    m = importlib.import_module("cubind." + module)
    return m if attr is None else getattr(m, attr)


def get_include() -> str:
    """The directory of cubind's C headers (cubind_driver_api.h), for ``-I``."""
    return _os.path.join(_os.path.dirname(__file__), "include")


__all__ = ["CUDAError", "DriverNotFoundError", "FunctionNotFoundError", "driver", "cu",
           "get_include", "launch"]
