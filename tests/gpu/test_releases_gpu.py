# SPDX-License-Identifier: Apache-2.0
"""Bindings generated from an older release's cuda.h, on the real driver.

scripts/gpu-run releases runs this file against bindings generated
from the 11.8, 12.4 and 13.0 headers (PYTHONPATH picks them): the functions
whose names or signatures differ between those headers, each called as its
own header declares it. CUBIND_HEADER_CUDA_VERSION says which header the
bindings under test come from (cuda.bindings, CUBIND_GPU_IMPL=cuda.bindings
in scripts/gpu-run tests: its CUDA_VERSION). Never run in CI: tests/gpu/
needs the real driver (tests/abi covers generation per release on the fake
driver).
"""
import ctypes

import pytest

from gpu_common import IMPL, drv, ok

HEADER = int(getattr(drv, "CUBIND_HEADER_CUDA_VERSION", None) or drv.CUDA_VERSION)

# store_int(int *p, unsigned v): *p = v. Hand-written PTX, so every release's
# bindings load the same kernel without nvcc.
PTX = b"""
.version 7.0
.target sm_50
.address_size 64

.visible .entry store_int(
    .param .u64 store_int_p,
    .param .u32 store_int_v
)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [store_int_p];
    ld.param.u32 %r1, [store_int_v];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r1;
    ret;
}
\0"""


@pytest.fixture(scope="module")
def store_int(ctx):
    mod = ok(drv.cuModuleLoadData(PTX))
    yield ok(drv.cuModuleGetFunction(mod, b"store_int"))
    ok(drv.cuModuleUnload(mod))


@pytest.fixture
def cell(ctx):
    ptr = ok(drv.cuMemAlloc(4))
    ok(drv.cuMemsetD32(ptr, 0, 1))
    yield ptr
    ok(drv.cuMemFree(ptr))


def read_cell(ptr):
    host = (ctypes.c_uint * 1)()
    ok(drv.cuMemcpyDtoH(host, ptr, 4))
    return host[0]


def test_launch_with_ctypes_types_and_plain_values(store_int, cell):
    # (values, types) in every release; plain values where the header has
    # cuFuncGetParamInfo (12.4 and later), a TypeError naming it before
    # (plain values are cubind's: cuda.bindings takes the first form only).
    ok(drv.cuLaunchKernel(store_int, 1, 1, 1, 1, 1, 1, 0, None,
                          ((int(cell), 1234), (ctypes.c_void_p, ctypes.c_uint)), 0))
    ok(drv.cuCtxSynchronize())
    assert read_cell(cell) == 1234
    if IMPL == "cuda.bindings":
        return
    if HEADER >= 12040:
        ok(drv.cuLaunchKernel(store_int, 1, 1, 1, 1, 1, 1, 0, None, (cell, 4321), None))
        ok(drv.cuCtxSynchronize())
        assert read_cell(cell) == 4321
    else:
        with pytest.raises(TypeError, match="cuFuncGetParamInfo"):
            drv.cuLaunchKernel(store_int, 1, 1, 1, 1, 1, 1, 0, None, (cell, 4321), None)


def add_remove_dependencies():
    """The functions taking edge data, under this header's names."""
    if HEADER >= 13000:
        return drv.cuGraphAddDependencies, drv.cuGraphRemoveDependencies
    return drv.cuGraphAddDependencies_v2, drv.cuGraphRemoveDependencies_v2


@pytest.mark.skipif(HEADER < 12030, reason="edge data came with CUDA 12.3")
def test_dependencies_with_edge_data(ctx):
    add, remove = add_remove_dependencies()
    graph = ok(drv.cuGraphCreate(0))
    try:
        a = ok(drv.cuGraphAddEmptyNode(graph, None, 0))
        b = ok(drv.cuGraphAddEmptyNode(graph, None, 0))
        ok(add(graph, [a], [b], [drv.CUgraphEdgeData()], 1))
        ok(remove(graph, [a], [b], [drv.CUgraphEdgeData()], 1))
        # the edge is gone: removing it again is an error the driver reports
        assert remove(graph, [a], [b], [drv.CUgraphEdgeData()], 1)[0] != 0
    finally:
        ok(drv.cuGraphDestroy(graph))


@pytest.mark.skipif(HEADER < 12030, reason="edge data came with CUDA 12.3")
def test_capture_info_with_edge_data(ctx, cell):
    get_info = drv.cuStreamGetCaptureInfo if HEADER >= 13000 else drv.cuStreamGetCaptureInfo_v3
    stream = ok(drv.cuStreamCreate(1))   # CU_STREAM_NON_BLOCKING
    try:
        ok(drv.cuStreamBeginCapture(stream, drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED))
        ok(drv.cuMemsetD32Async(cell, 7, 1, stream))
        status, _id, graph, deps, edges, n = ok(get_info(stream))
        assert status == drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE
        assert n == 1 and len(deps) == 1 and len(edges) == 1
        captured = ok(drv.cuStreamEndCapture(stream))
        assert int(captured) == int(graph)
        ok(drv.cuGraphDestroy(captured))
    finally:
        ok(drv.cuStreamDestroy(stream))


@pytest.mark.skipif(HEADER >= 12000, reason="11.x's cuGraphInstantiate takes a log buffer")
def test_graph_instantiate_with_a_log_buffer(ctx, cell):
    graph = ok(drv.cuGraphCreate(0))
    try:
        params = drv.CUDA_MEMSET_NODE_PARAMS()
        params.dst, params.value, params.elementSize = int(cell), 9, 4
        params.width, params.height, params.pitch = 1, 1, 4
        ok(drv.cuGraphAddMemsetNode(graph, None, 0, params, ok(drv.cuCtxGetCurrent())))
        graph_exec, error_node, log = ok(drv.cuGraphInstantiate(graph, 256))
        assert int(graph_exec) != 0 and isinstance(log, bytes) and len(log) == 256
        ok(drv.cuGraphLaunch(graph_exec, None))
        ok(drv.cuCtxSynchronize())
        assert read_cell(cell) == 9
        ok(drv.cuGraphExecDestroy(graph_exec))
    finally:
        ok(drv.cuGraphDestroy(graph))
