# SPDX-License-Identifier: Apache-2.0
"""cubind: CUDA driver bindings generated from cuda.h.

``cubind.driver`` is a drop-in replacement for ``cuda.bindings.driver``
(functions return ``(CUresult, outputs...)``); ``cubind.cu`` has the same
functions but returns the outputs themselves and raises ``CUDAError``.
"""
import os as _os
import sys as _sys

from cubind._version import __version__


def _built_for() -> str:
    """Why the extensions cannot be imported here: the interpreters they
    were built for (their EXT_SUFFIX tags) and how to add this one."""
    import sysconfig
    here = _os.path.dirname(__file__)
    tags = sorted({name[len("_runtime."):-len(".so")] for name in _os.listdir(here)
                   if name.startswith("_runtime.") and name.endswith(".so")})
    this = sysconfig.get_config_var("EXT_SUFFIX") or "?"
    return ("cubind's extensions in %s were built for %s, not for this interpreter "
            "(%s, %s); build them for it with: ./configure --user --python %s && ninja"
            % (here, ", ".join(tags) or "no interpreter", _sys.executable,
               this.strip(".").rsplit(".", 1)[0], _sys.executable))


try:
    from cubind._runtime import CUDAError, DriverNotFoundError, FunctionNotFoundError
except ModuleNotFoundError as _e:
    if _e.name != __name__ + "._runtime":
        raise
    raise ImportError(_built_for(), name=_e.name) from None
from cubind import driver

# The CUDA release the bindings were generated from ("13.0"), as the
# distribution's name says it (cubind-cu13).
__cuda_version__ = "%d.%d" % divmod(int(driver.CUBIND_HEADER_CUDA_VERSION) // 10, 100)

# The raising face is built by the driver extension (both faces share one
# module state); registering it makes ``import cubind.cu`` work.
cu = driver._cu
_sys.modules[__name__ + ".cu"] = cu

# launch(f, grid, block, /, *args, stream=None, shared_mem=0): a kernel
# launch with plain Python values, raising as cubind.cu does. Imported from
# the module registered above, so that type checkers read its stub.
from cubind.cu import launch  # noqa: E402


# The library APIs (cubind.nvrtc and its raising face cubind.rtc,
# cubind.nvjitlink, cubind.nvvm, cubind.nvfatbin, cubind.cufile, cubind.nvml,
# cubind.runtime and its raising face cubind.cudart) are imported on first use, not with cubind: their modules,
# and their exception classes, which live in their extensions
# (cubind.NVRTCError imports cubind.nvrtc), so that pickle, `except
# cubind.NVRTCError` and PyCapsule_Import("cubind.nvrtc._C_API") find them.
_LAZY = {"nvrtc": ("nvrtc", None), "rtc": ("rtc", None), "nvjitlink": ("nvjitlink", None),
         "nvvm": ("nvvm", None), "nvfatbin": ("nvfatbin", None), "cufile": ("cufile", None),
         "nvml": ("nvml", None), "runtime": ("runtime", None), "cudart": ("cudart", None),
         "NVRTCError": ("nvrtc", "NVRTCError"), "nvJitLinkError": ("nvjitlink", "nvJitLinkError"),
         "nvvmError": ("nvvm", "nvvmError"), "nvFatbinError": ("nvfatbin", "nvFatbinError"),
         "cuFileError": ("cufile", "cuFileError"), "NvmlError": ("nvml", "NvmlError"),
         "CUDARuntimeError": ("runtime", "CUDARuntimeError")}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError("module 'cubind' has no attribute %r" % name)
    import importlib

    module, attr = _LAZY[name]
    m = importlib.import_module("cubind." + module)
    return m if attr is None else getattr(m, attr)


class UntypedKernelWarning(UserWarning):
    """A kernel launched with plain values whose parameter types are unknown
    (a cubin of an ``extern "C"`` kernel: no C++ name, no PTX): its values
    are packed by their parameters' sizes alone. Given once per kernel and
    load; docs/kernel-arguments.md says how to type it."""


def get_include() -> str:
    """The directory of cubind's C headers (cubind_driver_api.h), for ``-I``."""
    return _os.path.join(_os.path.dirname(__file__), "include")


__all__ = ["__version__", "__cuda_version__", "CUDAError", "DriverNotFoundError", "FunctionNotFoundError", "driver", "cu",
           "get_include", "launch", "UntypedKernelWarning"]
