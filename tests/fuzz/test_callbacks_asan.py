# SPDX-License-Identifier: Apache-2.0
"""Callback payloads and their registry entries at shutdown, under ASan+UBSan
(the sanitized extensions of tests/fuzz/build_asan.py): nothing is freed
twice, and what arrives after the interpreter's atexit step is leaked on
purpose, counted, with its registry entry unmapped."""
import ast
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from fuzzsupport import asan_python_env, sanitizer_report

AFTER_SHUTDOWN = r'''
import atexit, ctypes, os, time
def after():
    # Registered before cubind is imported, so it runs after cubind's atexit
    # step closed the deferred queue: these destructors can no longer run.
    for u in objs:
        assert d.cuUserObjectRelease(u, 1)[0] == 0
    while fake.fakecuda_pending_destructors():
        time.sleep(0.001)
    print("after", repr((rt._registry_counts(), rt._callback_counts(), calls)))
atexit.register(after)
import cubind._runtime as rt
import cubind.driver as d
fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
assert d.cuInit(0)[0] == 0
calls, objs = [], []
for i in range(8):
    err, u = d.cuUserObjectCreate(i, calls.append, 1, 1)
    assert err == 0
    objs.append(u)
print("before", rt._registry_counts()["user_object"], rt._callback_counts()["alive"])
'''

RACE = r'''
import time
import cubind.driver as d
d.cuInit(0)
r, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
r, s = d.cuStreamCreate(0)
def slow(x):
    time.sleep(0.0005)
for i in range(30):
    d.cuLaunchHostFunc(s, slow, i)
    d.cuStreamAddCallback(s, lambda h, st, x: None, i, 0)
    r, uo = d.cuUserObjectCreate(i, slow, 1, 1)
    d.cuUserObjectRelease(uo, 1)
# exit now, while host functions and destructors are still firing
'''


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=asan_python_env(), timeout=120)


def test_user_objects_destroyed_after_shutdown_are_unregistered_and_leaked_once(asan_built):
    p = run(AFTER_SHUTDOWN)
    rep = sanitizer_report(p.stderr)
    assert p.returncode == 0 and not rep, rep or p.stderr[-3000:]
    lines = p.stdout.splitlines()
    assert lines[0] == "before 8 8", lines
    reg, counts, calls = ast.literal_eval(lines[1].split(" ", 1)[1])
    assert reg["user_object"] == 0 and reg["callback"] == 0, reg
    # nothing was queued before the exit, and what was destroyed after
    # cubind's atexit step scheduled no pending call
    assert counts == {"alive": 8, "skipped": 0, "leaked": 8, "pending_calls": 0}, counts
    assert calls == []


def assert_clean_runs(code, n):
    """n runs of code, two at a time, each exiting cleanly with no
    sanitizer report."""
    with ThreadPoolExecutor(2) as ex:
        procs = list(ex.map(lambda _: run(code), range(n)))
    for p in procs:
        rep = sanitizer_report(p.stderr)
        assert p.returncode == 0 and not rep and "Fatal Python error" not in p.stderr, \
            rep or p.stderr[-3000:]


def test_exit_racing_callbacks_frees_nothing_twice(asan_built):
    assert_clean_runs(RACE, 20)


HOST_NODES = r'''
import gc, threading, time
import cubind._runtime as rt
import cubind.driver as d
d.cuInit(0)
r, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
r, s = d.cuStreamCreate(0)
def params(fn, data, v2=False):
    p = d.CUDA_HOST_NODE_PARAMS_v2() if v2 else d.CUDA_HOST_NODE_PARAMS()
    p.fn, p.userData = fn, data
    return p
def slow(x):
    time.sleep(0.0002)
go = threading.Event()
d.cuLaunchHostFunc(s, lambda x: go.wait(30), None)
for i in range(10):
    r, g = d.cuGraphCreate(0)
    r, node = d.cuGraphAddHostNode(g, None, 0, params(slow, i))
    np = d.CUgraphNodeParams()
    np.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_HOST
    np.host = params(lambda x: None, bytearray(b"data"), v2=True)
    d.cuGraphAddNode(g, None, None, 0, np)
    d.cuGraphHostNodeSetParams(node, params(slow, 1000 + i))
    r, x = d.cuGraphInstantiate(g, 0)
    d.cuGraphExecHostNodeSetParams(x, node, params(slow, 100 + i))
    d.cuGraphLaunch(x, s)
    # destroyed while the launch waits: the graph's callables stay held by
    # its user object, the executable graph's own is skipped
    d.cuGraphExecDestroy(x)
    d.cuGraphDestroy(g)
    del np, node
    gc.collect()
go.set()
time.sleep(0.002)
r, g = d.cuGraphCreate(0)
d.cuGraphAddHostNode(g, None, 0, params(slow, 0))
r, x = d.cuGraphInstantiate(g, 0)
for i in range(50):
    d.cuGraphLaunch(x, s)
# exit now, with host node launches in flight
'''


def test_host_node_callables_freed_once_with_launches_in_flight_and_at_exit(asan_built):
    """Host node callables (tests/python/test_host_node_callables.py) under
    ASan+UBSan: graphs and executable graphs destroyed with launches in
    flight, then an exit with more in flight: nothing is used after it is
    freed, nothing freed twice."""
    assert_clean_runs(HOST_NODES, 8)
