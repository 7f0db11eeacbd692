# SPDX-License-Identifier: Apache-2.0
"""conftest.py for a run of cuda-python's own NVRTC and nvJitLink tests
(test_nvrtc.py, test_nvjitlink.py: NVIDIA's, kept outside the repository
and never edited); `scripts/gpu-run nvrtc DIR` copies this file, as
conftest.py, next to them.

CUBIND_UPSTREAM_IMPL=cubind redirects `cuda.bindings.nvrtc` and
`cuda.bindings.nvjitlink` to `cubind.nvrtc` and `cubind.nvjitlink`: the
module objects in sys.modules and the attributes of the `cuda.bindings`
package (what `from cuda.bindings import nvrtc` reads). cuda.bindings'
private `_internal.nvjitlink`, which test_nvjitlink.py asks whether the
library is usable, stays cuda.bindings' own. Any other value runs the tests
on cuda.bindings unchanged."""
import os
import sys

import cuda.bindings
import cuda.bindings.nvjitlink  # noqa: F401  (imported before the redirect)
import cuda.bindings.nvrtc  # noqa: F401

REDIRECTED = ("nvrtc", "nvjitlink")

if os.environ.get("CUBIND_UPSTREAM_IMPL") == "cubind":
    import importlib

    for name in REDIRECTED:
        module = importlib.import_module("cubind." + name)
        sys.modules["cuda.bindings." + name] = module
        setattr(cuda.bindings, name, module)


def pytest_report_header(config):
    return "library modules under test: " + ", ".join(
        "%s (%s)" % (sys.modules["cuda.bindings." + n].__name__,
                     getattr(sys.modules["cuda.bindings." + n], "__file__", "?"))
        for n in REDIRECTED)
