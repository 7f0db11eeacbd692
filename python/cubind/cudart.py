# SPDX-License-Identifier: Apache-2.0
"""cubind.cudart: the raising face of cubind.runtime.

The same functions as cubind.runtime, returning their outputs (None, one
value or a tuple) and raising cubind.CUDARuntimeError (a cubind.CUDAError)
carrying the cudaError_t member, its name and the runtime's message. Built
by the runtime extension (both faces share one module state); importing
this module registers it.
"""
import sys as _sys

from cubind import runtime as _runtime

_sys.modules[__name__] = _runtime._cudart
