# SPDX-License-Identifier: Apache-2.0
"""conftest.py for a run of cuda-python's own driver tests (scripts/gpu-run
upstream copies this file, as conftest.py, next to them; the tests
themselves are NVIDIA's, kept outside the repository and never edited).

CUBIND_UPSTREAM_IMPL=cubind redirects each module CUBIND_UPSTREAM_MODULES
names (comma-separated; default "driver"; `scripts/gpu-run upstream-runtime`
gives "driver,runtime"): `cuda.bindings.driver` to `cubind.driver`, the
module object in sys.modules and the `driver` attribute of the
`cuda.bindings` package (what `import cuda.bindings.driver as cuda` and
`from cuda.bindings import driver` read). cuda.bindings' runtime and nvrtc,
where not redirected, are imported first, from cuda.bindings itself, so
that they keep the driver module they were built against
(tests/gpu/redirect_bindings.py, copied beside this file, does both). Any
other value runs the tests on cuda.bindings unchanged.

Fixtures with the upstream conftest's names and meaning: cuda_driver
(cuInit), device (device 0), ctx (a context created for the test module,
current, destroyed after it; autouse). cuda_python_test_helpers, which the
tests import, is the small stand-in package next to this file."""
import os

import pytest

from redirect_bindings import redirect

MODULES = [m for m in os.environ.get("CUBIND_UPSTREAM_MODULES", "driver").split(",") if m]

if os.environ.get("CUBIND_UPSTREAM_IMPL") == "cubind":
    redirect(MODULES, keep=["cuda.bindings." + m for m in ("nvrtc", "runtime") if m not in MODULES])

import cuda.bindings.driver as cuda  # noqa: E402  (after the redirect)


def pytest_report_header(config):
    import importlib

    return ["%s module under test: %s (%s)" % (
        m, mod.__name__, getattr(mod, "__file__", "?"))
        for m, mod in ((m, importlib.import_module("cuda.bindings." + m)) for m in MODULES)]


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
