# SPDX-License-Identifier: Apache-2.0
"""Fixtures shared by the GPU test files (helpers are in gpu_common.py):

  dev          cuInit(0), then device 0 (module scope)
  ctx          device 0's primary context, retained and made current for
               the test file, released after its tests; yields the context
  ptx_of       ptx_of("packer_kernels") builds tests/gpu/packer_kernels.cu
               to PTX once per session and returns it; skips the test
               ("nvcc not found") when there is no nvcc
  load_module  load_module("packer_kernels") loads that PTX into ctx
               (cuModuleLoadData) and unloads it after the test file's tests

They drive the tuple face gpu_common.drv. test_scenarios_gpu.py, which
drives the face CUBIND_GPU_IMPL names (cubind.cu raises), has its own
session-scoped dev and ctx and loads its module itself, with ptx_of's PTX.
test_shutdown_gpu.py uses none of these.

gpu_common is imported by the fixtures, not here: loading this file must not
import a driver module (test_shutdown_gpu.py never does in the pytest
process). `gpu_common` is found because tests/gpu has no __init__.py: pytest's
default import mode (prepend) puts tests/gpu first on sys.path when it
imports this file or a test file there."""
import pytest


@pytest.fixture(scope="module")
def dev():
    from gpu_common import drv, ok
    ok(drv.cuInit(0))
    return ok(drv.cuDeviceGet(0))


@pytest.fixture(scope="module")
def ctx(dev):
    from gpu_common import drv, ok
    pctx = ok(drv.cuDevicePrimaryCtxRetain(dev))
    ok(drv.cuCtxSetCurrent(pctx))
    yield pctx
    ok(drv.cuDevicePrimaryCtxRelease(dev))


@pytest.fixture(scope="session")
def ptx_of(tmp_path_factory):
    # Session scope: set up before any module-scoped fixture, so a test that
    # needs kernels is skipped without nvcc before the driver is touched.
    from gpu_common import build_ptx, nvcc
    nvcc_path = nvcc()
    if not nvcc_path:
        pytest.skip("nvcc not found")
    built = {}

    def ptx(name):
        if name not in built:
            built[name] = build_ptx(nvcc_path, name, tmp_path_factory.mktemp(name))
        return built[name]

    return ptx


@pytest.fixture(scope="module")
def load_module(ptx_of, ctx):
    from gpu_common import drv, ok
    loaded = []

    def load(name):
        loaded.append(ok(drv.cuModuleLoadData(ptx_of(name))))
        return loaded[-1]

    yield load
    for mod in loaded:
        ok(drv.cuModuleUnload(mod))
