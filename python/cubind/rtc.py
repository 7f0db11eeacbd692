# SPDX-License-Identifier: Apache-2.0
"""cubind.rtc: the raising face of cubind.nvrtc.

The same functions as cubind.nvrtc, returning their outputs (None, one
value or a tuple) and raising cubind.NVRTCError, which carries the
program log of a failed compile in ``log``. Built by the nvrtc extension
(both faces share one module state); importing this module registers it.
"""
import sys as _sys

from cubind import nvrtc as _nvrtc

_sys.modules[__name__] = _nvrtc._rtc
