# SPDX-License-Identifier: Apache-2.0
"""conftest.py for a run of cuda-python's own NVRTC, nvJitLink, NVVM,
nvFatbin, cuFile and NVML tests (test_nvrtc.py, test_nvjitlink.py,
test_nvvm.py, test_nvfatbin.py, test_cufile.py, the folder nvml/ with its
own conftest.py: NVIDIA's, kept outside the repository and never edited);
`scripts/gpu-run nvrtc DIR` copies this file, as conftest.py, next to
them (the folder's conftest.py loads after this one).

CUBIND_UPSTREAM_IMPL=cubind redirects `cuda.bindings.nvrtc`,
`cuda.bindings.nvjitlink`, `cuda.bindings.nvvm`, `cuda.bindings.nvfatbin`,
`cuda.bindings.cufile` and `cuda.bindings.nvml` to the cubind modules of
the same names: the
module objects in sys.modules and the attributes of the `cuda.bindings`
package (what `from cuda.bindings import nvrtc` reads). cuda.bindings'
private `_internal.nvjitlink`, which test_nvjitlink.py asks whether the
library is usable, stays cuda.bindings' own, and so does the cuda.core the
nvml/ folder's gate imports. Any other value runs the tests
on cuda.bindings unchanged. The redirect is tests/gpu/redirect_bindings.py's
(copied beside this file)."""
import importlib.util
import os

from redirect_bindings import describe, redirect

REDIRECTED = ("nvrtc", "nvjitlink", "nvvm", "nvfatbin", "cufile", "nvml")

# Redirecting, cuda.bindings' own modules are imported first, so that
# whatever imported them already keeps them. So is cuda.core where it is
# installed: the nvml/ folder's gate (its arch_check.py) asks cuda.core's
# `system` module whether cuda.bindings.nvml is new enough, and that module,
# imported after the redirect, would need the NVML enums of headers newer
# than any cubind.nvml here is generated from (SystemEventType). cuda.core
# is the gate's helper, not what the tests test: they import
# cuda.bindings.nvml, which is cubind's.
KEEP = ["cuda.bindings." + name for name in REDIRECTED]
if importlib.util.find_spec("cuda.core") is not None:
    KEEP.append("cuda.core")
if os.environ.get("CUBIND_UPSTREAM_IMPL") == "cubind":
    redirect(REDIRECTED, keep=KEEP)


def pytest_report_header(config):
    return "library modules under test: " + describe(REDIRECTED)
