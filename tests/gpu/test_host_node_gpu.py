# SPDX-License-Identifier: Apache-2.0
"""A Python callable as a graph host node's function on the real driver
(issue 45, item 5): cubind.driver's CUDA_HOST_NODE_PARAMS(_v2).fn (also
through CUgraphNodeParams.host) and cubind.runtime's cudaHostNodeParams.fn
(also through cudaGraphNodeParams.host). The callable runs once per launch
with userData on the callback runner, lives with the graph and its
executable graphs (the graph's user object keeps a graph's callable for
launches in flight), and is released after the last is destroyed; an
executable graph's own callable, destroyed in flight, is skipped; the
process exits cleanly with launches in flight. cubind only (cuda.bindings
refuses a Python callable there with TypeError, checked when it is the
implementation under test). Never run in CI: `scripts/gpu-run tests`
runs every file of tests/gpu."""
import gc
import importlib
import subprocess
import sys
import threading
import time
import weakref

import pytest

from gpu_common import IMPL, drv, ok

CUBIND = IMPL in ("cubind", "cubind.cu")


class Recorder:
    """A callable that takes weak references and records its calls."""

    def __init__(self):
        self.calls = []
        self.main = threading.get_ident()

    def __call__(self, data):
        self.calls.append((data, threading.get_ident() != self.main))


def settle():
    """The driver destroys what graphs held on its own time; then the
    released payloads' deferred step runs."""
    rt = importlib.import_module("cubind._runtime")
    ok(drv.cuCtxSynchronize())
    deadline = time.monotonic() + 5
    while rt._registry_counts()["node_callback"] and time.monotonic() < deadline:
        gc.collect()
        rt._drain()
        time.sleep(0.01)
    gc.collect()
    rt._drain()


def host_params(fn, data, v2=False):
    p = drv.CUDA_HOST_NODE_PARAMS_v2() if v2 else drv.CUDA_HOST_NODE_PARAMS()
    p.fn = fn
    p.userData = data
    return p


def add_host(graph, fn, data, api):
    if api == "host":
        return ok(drv.cuGraphAddHostNode(graph, None, 0, host_params(fn, data)))
    params = drv.CUgraphNodeParams()
    params.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_HOST
    params.host = host_params(fn, data, v2=True)
    return ok(drv.cuGraphAddNode(graph, None, None, 0, params))


@pytest.fixture
def stream(ctx):
    s = ok(drv.cuStreamCreate(0))
    yield s
    ok(drv.cuStreamDestroy(s))


def test_cuda_bindings_refuses_a_callable(ctx):
    if CUBIND:
        pytest.skip("cuda.bindings' behaviour (CUBIND_GPU_IMPL=cuda.bindings)")
    with pytest.raises(TypeError):
        drv.CUDA_HOST_NODE_PARAMS().fn = print


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
@pytest.mark.parametrize("api", ["host", "node"])
def test_driver_host_node_runs_per_launch_and_lives_with_its_graphs(ctx, stream, api):
    cb = Recorder()
    gone = weakref.ref(cb)
    calls = cb.calls
    graph = ok(drv.cuGraphCreate(0))
    add_host(graph, cb, 4242, api)
    del cb
    gc.collect()
    assert gone() is not None
    exe = ok(drv.cuGraphInstantiate(graph, 0))
    for _ in range(5):
        ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuStreamSynchronize(stream))
    assert calls == [(4242, True)] * 5, calls
    ok(drv.cuGraphDestroy(graph))
    settle()
    assert gone() is not None           # the executable graph still runs it
    ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuStreamSynchronize(stream))
    assert len(calls) == 6
    ok(drv.cuGraphExecDestroy(exe))
    settle()
    assert gone() is None


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_driver_exec_set_params_and_exec_update(ctx, stream):
    graph = ok(drv.cuGraphCreate(0))
    first = Recorder()
    node = add_host(graph, first, 1, "host")
    exe = ok(drv.cuGraphInstantiate(graph, 0))
    second = Recorder()
    ok(drv.cuGraphExecHostNodeSetParams(exe, node, host_params(second, 2)))
    ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuStreamSynchronize(stream))
    assert first.calls == [] and second.calls == [(2, True)], (first.calls, second.calls)
    other = ok(drv.cuGraphCreate(0))
    third = Recorder()
    gone = weakref.ref(third)
    calls = third.calls
    add_host(other, third, 3, "node")
    del third
    err, info = drv.cuGraphExecUpdate(exe, other)
    assert err == drv.CUresult.CUDA_SUCCESS, (err, info)
    ok(drv.cuGraphDestroy(other))
    settle()
    assert gone() is not None           # the updated executable graph runs it
    ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuStreamSynchronize(stream))
    assert calls == [(3, True)], calls
    ok(drv.cuGraphExecDestroy(exe))
    ok(drv.cuGraphDestroy(graph))
    settle()
    assert gone() is None


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_driver_exception_goes_to_unraisablehook(ctx, stream):
    caught = []
    old, sys.unraisablehook = sys.unraisablehook, lambda u: caught.append(u.exc_value)
    try:
        def boom(data):
            raise ValueError("node %d" % data)
        graph = ok(drv.cuGraphCreate(0))
        add_host(graph, boom, 9, "host")
        exe = ok(drv.cuGraphInstantiate(graph, 0))
        ok(drv.cuGraphLaunch(exe, stream))
        ok(drv.cuGraphLaunch(exe, stream))
        ok(drv.cuStreamSynchronize(stream))
        ok(drv.cuGraphExecDestroy(exe))
        ok(drv.cuGraphDestroy(graph))
    finally:
        sys.unraisablehook = old
    assert [str(e) for e in caught] == ["node 9"] * 2, caught


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_driver_launch_in_flight_runs_the_graphs_callable_after_destroy(ctx, stream):
    """The executable graph and graph destroyed while a launch waits behind
    a blocking host function: the driver finishes that launch, and the
    graph's callable still runs (the graph's user object holds it until
    the launch is done), then is released."""
    go = threading.Event()
    ok(drv.cuLaunchHostFunc(stream, lambda data: go.wait(30), None))
    cb = Recorder()
    gone = weakref.ref(cb)
    calls = cb.calls
    graph = ok(drv.cuGraphCreate(0))
    add_host(graph, cb, 1, "host")
    del cb
    exe = ok(drv.cuGraphInstantiate(graph, 0))
    ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuGraphExecDestroy(exe))
    ok(drv.cuGraphDestroy(graph))
    gc.collect()
    go.set()
    ok(drv.cuStreamSynchronize(stream))
    assert calls == [(1, True)], calls
    settle()
    assert gone() is None


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_driver_exec_level_callable_in_flight_is_skipped_without_crash(ctx, stream):
    """A callable set on an executable graph's node (no graph's user object
    holds it), the executable graph destroyed while its launch waits: the
    driver still runs the node; cubind finds the payload gone and skips
    the call (counted), never calling freed memory."""
    rt = importlib.import_module("cubind._runtime")
    go = threading.Event()
    ok(drv.cuLaunchHostFunc(stream, lambda data: go.wait(30), None))
    graph = ok(drv.cuGraphCreate(0))
    node = add_host(graph, Recorder(), 0, "host")
    exe = ok(drv.cuGraphInstantiate(graph, 0))
    cb = Recorder()
    calls = cb.calls
    ok(drv.cuGraphExecHostNodeSetParams(exe, node, host_params(cb, 1)))
    del cb
    ok(drv.cuGraphLaunch(exe, stream))
    ok(drv.cuGraphExecDestroy(exe))
    ok(drv.cuGraphDestroy(graph))
    gc.collect()
    skipped = rt._callback_counts()["skipped"]
    go.set()
    ok(drv.cuStreamSynchronize(stream))
    assert calls == [], calls
    assert rt._callback_counts()["skipped"] == skipped + 1, rt._callback_counts()


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_runtime_host_node_both_apis(ctx):
    rt = importlib.import_module("cubind.runtime")
    E = rt.cudaError_t

    def rok(result):
        assert result[0] == E.cudaSuccess, result
        return result[1] if len(result) == 2 else result[1:]

    rok(rt.cudaSetDevice(0))
    stream = rok(rt.cudaStreamCreate())
    cb = Recorder()
    gone = weakref.ref(cb)
    calls = cb.calls
    graph = rok(rt.cudaGraphCreate(0))
    p = rt.cudaHostNodeParams()
    p.fn, p.userData = cb, 5
    rok(rt.cudaGraphAddHostNode(graph, None, 0, p))
    np = rt.cudaGraphNodeParams()
    np.type = rt.cudaGraphNodeType.cudaGraphNodeTypeHost
    np.host.fn, np.host.userData = cb, 6
    rok(rt.cudaGraphAddNode(graph, None, None, 0, np))
    del cb, p, np
    gc.collect()
    exe = rok(rt.cudaGraphInstantiate(graph, 0))
    for _ in range(3):
        rok(rt.cudaGraphLaunch(exe, stream))
    rok(rt.cudaStreamSynchronize(stream))
    assert sorted(calls) == sorted([(5, True), (6, True)] * 3), calls
    assert gone() is not None
    rok(rt.cudaGraphExecDestroy(exe))
    rok(rt.cudaGraphDestroy(graph))
    rok(rt.cudaStreamDestroy(stream))
    settle()
    assert gone() is None


@pytest.mark.skipif(not CUBIND, reason="cubind's extension")
def test_exit_with_host_node_launches_in_flight():
    """The process exits while launches of a Python host node are queued:
    no crash, no hang (each run in a fresh interpreter)."""
    code = (
        "import time, cubind.driver as d\n"
        "d.cuInit(0)\n"
        "err, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)\n"
        "err, s = d.cuStreamCreate(0)\n"
        "p = d.CUDA_HOST_NODE_PARAMS(); p.fn = lambda x: time.sleep(0.002)\n"
        "err, g = d.cuGraphCreate(0)\n"
        "err, n = d.cuGraphAddHostNode(g, None, 0, p)\n"
        "err, x = d.cuGraphInstantiate(g, 0)\n"
        "for _ in range(300):\n"
        "    assert d.cuGraphLaunch(x, s)[0] == 0\n"
        "print('ok')\n")
    for _ in range(5):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
        assert "Fatal" not in proc.stderr, proc.stderr[-2000:]
