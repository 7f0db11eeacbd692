# SPDX-License-Identifier: Apache-2.0
"""conftest.py for a run of cuda-python's own driver tests (scripts/gpu-run
upstream copies this file, as conftest.py, next to them; the tests
themselves are NVIDIA's, kept outside the repository and never edited).

CUBIND_UPSTREAM_IMPL=cubind redirects `cuda.bindings.driver` to
`cubind.driver`: the module object in sys.modules and the `driver` attribute
of the `cuda.bindings` package (what `import cuda.bindings.driver as cuda`
and `from cuda.bindings import driver` read). cuda.bindings.runtime and
nvrtc are imported first, from cuda.bindings itself, so that they keep the
driver module they were built against (tests/gpu/redirect_bindings.py,
copied beside this file, does both). Any other value runs the tests on
cuda.bindings unchanged.

Fixtures with the upstream conftest's names and meaning: cuda_driver
(cuInit), device (device 0), ctx (a context created for the test module,
current, destroyed after it; autouse). cuda_python_test_helpers, which the
tests import, is the small stand-in package next to this file."""
import os

import pytest

from redirect_bindings import redirect

if os.environ.get("CUBIND_UPSTREAM_IMPL") == "cubind":
    redirect(["driver"], keep=["cuda.bindings.nvrtc", "cuda.bindings.runtime"])

import cuda.bindings.driver as cuda  # noqa: E402  (after the redirect)


def pytest_report_header(config):
    return "driver module under test: %s (%s)" % (cuda.__name__, getattr(cuda, "__file__", "?"))


@pytest.fixture(scope="module")
def cuda_driver():
    (err,) = cuda.cuInit(0)
    assert err == cuda.CUresult.CUDA_SUCCESS


@pytest.fixture(scope="module")
def device(cuda_driver):
    err, dev = cuda.cuDeviceGet(0)
    assert err == cuda.CUresult.CUDA_SUCCESS
    return dev


@pytest.fixture(scope="module", autouse=True)
def ctx(device):
    err, context = cuda.cuCtxCreate(None, 0, device)
    assert err == cuda.CUresult.CUDA_SUCCESS
    yield context
    (err,) = cuda.cuCtxDestroy(context)
    assert err == cuda.CUresult.CUDA_SUCCESS
