# SPDX-License-Identifier: Apache-2.0
"""A Python callable as a graph host node's function (issue 45, item 5):
`CUDA_HOST_NODE_PARAMS(_v2).fn` (also through `CUgraphNodeParams.host`)
and the runtime's `cudaHostNodeParams(V2).fn` take one. It is called with
the node's userData on the interpreter's callback runner each time a graph
runs the node, lives as long as the graph and every executable graph that
may call it (the registry-keep rules), and is released through the deferred
queue when the last of them is destroyed. Before, assigning a callable
raised TypeError.

On the fake driver, which runs the host nodes of each cuGraphLaunch on the
stream's own thread, as the driver does. Each case runs in a fresh
interpreter: a lifetime bug crashes it."""
import sys

import pytest

from conftest import STREAM_PROLOGUE, run_python

# Also under ThreadSanitizer (tests/run): driver threads, the runner, and
# the registry lookups of the node trampoline.
pytestmark = pytest.mark.tsan

PROLOGUE = r"""
import gc, sys, threading, time, weakref
""" + STREAM_PROLOGUE + r"""
MAIN = threading.get_ident()

class Recorder:
    # a callable that takes weak references and records its calls
    def __init__(self, tag):
        self.tag, self.calls = tag, []
    def __call__(self, data):
        self.calls.append((self.tag, data, threading.get_ident() != MAIN))

def host_params(fn, data, v2=False):
    p = d.CUDA_HOST_NODE_PARAMS_v2() if v2 else d.CUDA_HOST_NODE_PARAMS()
    p.fn = fn
    p.userData = data
    return p

def add_host(g, fn, data, api):
    # one host node of fn(data), by either graph-node API
    if api == "host":
        err, node = d.cuGraphAddHostNode(g, None, 0, host_params(fn, data))
    else:
        np = d.CUgraphNodeParams()
        np.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_HOST
        np.host = host_params(fn, data, v2=True)
        err, node = d.cuGraphAddNode(g, None, None, 0, np)
    assert err == 0, err
    return node

def launch(x, n=1):
    for _ in range(n):
        assert d.cuGraphLaunch(x, s)[0] == 0
    assert d.cuStreamSynchronize(s)[0] == 0

def nodes_mapped():
    return rt._registry_counts()["node_callback"]

def settle(left=0):
    # a graph's user object (holding its callables) is destroyed on the
    # driver's destructor thread, some time after the graph: wait for the
    # callables mapped to drop to `left`, then the payloads' deferred step
    deadline = time.monotonic() + 10
    while True:
        gc.collect()
        rt._drain()
        if nodes_mapped() <= left or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    gc.collect()
    rt._drain()
"""


def run(body, **env):
    p = run_python(PROLOGUE + body + '\nprint("ok")\n', **env)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), (p.returncode, p.stdout,
                                                                  p.stderr[-3000:])
    return p


@pytest.mark.parametrize("api", ["host", "node"])
def test_callable_runs_once_per_launch_and_lives_with_graph_and_exec(api):
    """cuGraphAddHostNode and cuGraphAddNode (host member): each launch
    calls it once with userData, on the runner; every Python reference to
    the callable and the params struct dropped, it lives while the graph
    or an executable graph of it lives, and is released (weakref, payload
    count, registry entry) when both are destroyed."""
    run(r"""
API = %r
base = rt._callback_counts()["alive"]
err, g = d.cuGraphCreate(0)
cb = Recorder("a")
gone = weakref.ref(cb)
add_host(g, cb, 4242, API)
calls = cb.calls
del cb
gc.collect()
assert gone() is not None and nodes_mapped() == 1
err, x = d.cuGraphInstantiate(g, 0)
assert err == 0, err
launch(x, 3)
assert calls == [("a", 4242, True)] * 3, calls
# the graph destroyed: the executable graph still runs it
assert d.cuGraphDestroy(g)[0] == 0
settle(left=1)
assert gone() is not None
launch(x)
assert len(calls) == 4, calls
assert d.cuGraphExecDestroy(x)[0] == 0
settle()
assert gone() is None, "the callable outlived its graphs"
assert nodes_mapped() == 0, rt._registry_counts()
assert rt._callback_counts()["alive"] == base, rt._callback_counts()
""" % api)


def test_executable_graph_outlived_by_graph_releases_after_both():
    """The order reversed: the executable graph destroyed first, the graph
    keeps the callable (later instantiations run it), then releases it."""
    run(r"""
err, g = d.cuGraphCreate(0)
cb = Recorder("g")
gone = weakref.ref(cb)
add_host(g, cb, None, "host")
calls = cb.calls
del cb
err, x = d.cuGraphInstantiate(g, 0)
assert d.cuGraphExecDestroy(x)[0] == 0
settle(left=1)
assert gone() is not None
err, x2 = d.cuGraphInstantiate(g, 0)
launch(x2)
assert calls == [("g", None, True)], calls
assert d.cuGraphExecDestroy(x2)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
settle()
assert gone() is None and nodes_mapped() == 0
""")


def test_set_params_graph_node_exec_node_and_exec_update():
    """cuGraphHostNodeSetParams (the graph's node), cuGraphExecHostNodeSetParams
    (one executable graph's node) and cuGraphExecUpdate (an executable
    graph takes another graph's nodes) each run the new callable, each
    kept by what runs it: released only when that is destroyed."""
    run(r"""
err, g = d.cuGraphCreate(0)
first = Recorder("first")
node = add_host(g, first, 1, "host")
err, x = d.cuGraphInstantiate(g, 0)

# the graph's node: executable graphs instantiated later run the new one
second = Recorder("second")
second_gone = weakref.ref(second)
assert d.cuGraphHostNodeSetParams(node, host_params(second, 2))[0] == 0
err, x2 = d.cuGraphInstantiate(g, 0)
launch(x2)
assert second.calls == [("second", 2, True)], second.calls
launch(x)                      # made before: still the first
assert first.calls == [("first", 1, True)], first.calls

# one executable graph's node
third = Recorder("third")
third_gone = weakref.ref(third)
third_calls = third.calls
assert d.cuGraphExecHostNodeSetParams(x, node, host_params(third, 3))[0] == 0
del third
settle(left=3)
assert third_gone() is not None
launch(x)
assert third_calls == [("third", 3, True)], third_calls

# an executable graph updated from another graph of one host node
err, h = d.cuGraphCreate(0)
fourth = Recorder("fourth")
fourth_gone = weakref.ref(fourth)
fourth_calls = fourth.calls
add_host(h, fourth, 4, "node")
err, info = d.cuGraphExecUpdate(x2, h)
assert err == 0, (err, info)
del fourth
assert d.cuGraphDestroy(h)[0] == 0     # x2 now runs its node: kept
settle(left=4)
assert fourth_gone() is not None
launch(x2)
assert fourth_calls == [("fourth", 4, True)], fourth_calls

assert d.cuGraphExecDestroy(x)[0] == 0
settle(left=3)
assert third_gone() is None            # only x ran it
assert d.cuGraphExecDestroy(x2)[0] == 0
settle(left=2)
assert fourth_gone() is None
assert second_gone() is not None       # the graph's node still holds it
del second
assert d.cuGraphDestroy(g)[0] == 0
settle()
assert second_gone() is None and nodes_mapped() == 0, rt._registry_counts()
""")


def test_exception_goes_to_unraisablehook_and_later_launches_run():
    run(r"""
caught = []
sys.unraisablehook = lambda u: caught.append(u.exc_value)
n = [0]
def boom(data):
    n[0] += 1
    raise ValueError("host node %d" % data)
err, g = d.cuGraphCreate(0)
add_host(g, boom, 7, "host")
err, x = d.cuGraphInstantiate(g, 0)
launch(x, 2)
assert n[0] == 2, n
assert [str(e) for e in caught] == ["host node 7"] * 2, caught
assert all(isinstance(e, ValueError) for e in caught)
""")


def test_fields_read_back_and_userdata_after_fn():
    """The fields read back the callable and the userData given, in either
    order of assignment; userData set after the callable is what it gets;
    an address set over the callable gives the data field its own value
    back; other objects are still refused, naming the field."""
    run(r"""
cb = Recorder("x")
p = d.CUDA_HOST_NODE_PARAMS()
p.fn = cb
assert p.fn is cb and p.userData == 0
p.userData = 99
assert p.fn is cb and p.userData == 99
buf = bytearray(b"data")
p.userData = buf
err, g = d.cuGraphCreate(0)
err, node = d.cuGraphAddHostNode(g, None, 0, p)
assert err == 0, err
p.userData = 5         # after the call: the node keeps what it was given
err, x = d.cuGraphInstantiate(g, 0)
launch(x)
assert cb.calls == [("x", buf, True)], cb.calls
assert p.userData == 5
p.fn = 0x1234          # an address: the data field holds its own value again
assert p.fn == 0x1234 and p.userData == 5
q = d.CUDA_HOST_NODE_PARAMS()
q.userData = 17
q.fn = cb              # userData set first
assert q.userData == 17
for bad in (object(), "f", d.CUstream()):
    try:
        q.fn = bad
    except TypeError as e:
        assert "CUDA_HOST_NODE_PARAMS.fn" in str(e) or "fn" in str(e), e
    else:
        raise AssertionError("accepted %r" % (bad,))
assert q.fn is cb
""")


def test_launch_in_flight_after_exec_destroyed_is_skipped_not_run_on_freed_memory():
    """A callable set on an executable graph's node (no graph holds it: no
    user object of the driver keeps it for launches in flight), the
    executable graph destroyed while its launch waits on the stream: the
    node's call finds no payload and is skipped, counted; nothing runs on
    freed memory. (A graph's own callables are also held by its user
    object: tests/gpu/test_host_node_gpu.py runs them after the destroy.)"""
    run(r"""
go = threading.Event()
assert d.cuLaunchHostFunc(s, lambda data: go.wait(30), None)[0] == 0   # holds the stream
err, g = d.cuGraphCreate(0)
node = add_host(g, Recorder("graph's"), 0, "host")
err, x = d.cuGraphInstantiate(g, 0)
cb = Recorder("late")
gone = weakref.ref(cb)
calls = cb.calls
assert d.cuGraphExecHostNodeSetParams(x, node, host_params(cb, 1))[0] == 0
del cb
assert d.cuGraphLaunch(x, s)[0] == 0
assert d.cuGraphExecDestroy(x)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
# the graph's own callable is still held by its user object, which the
# launch in flight holds (as the driver's launches do); the executable
# graph's is released
settle(left=1)
assert gone() is None and nodes_mapped() == 1, rt._registry_counts()
skipped = rt._callback_counts()["skipped"]
go.set()
assert d.cuStreamSynchronize(s)[0] == 0
assert calls == [], calls
assert rt._callback_counts()["skipped"] == skipped + 1, rt._callback_counts()
settle()
assert nodes_mapped() == 0, rt._registry_counts()
""")


def test_exit_with_host_node_launches_in_flight():
    """The process exits while launches of a host node are queued and one
    is running: the call in progress finishes, the rest are skipped on the
    driver's threads without touching Python; no crash, no hang."""
    for _ in range(3):
        run(r"""
err, g = d.cuGraphCreate(0)
add_host(g, lambda data: time.sleep(0.005), None, "host")
err, x = d.cuGraphInstantiate(g, 0)
for _ in range(200):
    assert d.cuGraphLaunch(x, s)[0] == 0
""")


@pytest.mark.skipif(sys.version_info < (3, 13), reason="callables in subinterpreters need 3.13+")
def test_subinterpreter_host_node_and_graph_left_alive():
    """A host node's callable made in a subinterpreter runs there; the
    subinterpreter ends with a graph of it alive and launched again from
    the main interpreter: the call is skipped (its runner is gone), the
    graph destroyed later: no crash."""
    run(r"""
import os, tempfile
import _interpreters as interp
fd, path = tempfile.mkstemp()
os.close(fd)
code = "PATH = %r\n" % path + '''
import os, cubind.driver as d
d.cuInit(0)
err, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
err, s = d.cuStreamCreate(0)
seen = []
p = d.CUDA_HOST_NODE_PARAMS()
p.fn = seen.append
p.userData = 3
err, g = d.cuGraphCreate(0)
err, node = d.cuGraphAddHostNode(g, None, 0, p)
err, x = d.cuGraphInstantiate(g, 0)
d.cuGraphLaunch(x, s); d.cuStreamSynchronize(s)
assert seen == [3], seen
with open(PATH, "w") as f:
    f.write("%d %d" % (int(g), int(x)))
'''
iid = interp.create()
r = interp.run_string(iid, code)
assert r is None, r
interp.destroy(iid)
with open(path) as f:
    g, x = (int(v) for v in f.read().split())
os.unlink(path)
skipped = rt._callback_counts()["skipped"]
launch(x)      # its interpreter is gone: skipped on the driver's thread
assert rt._callback_counts()["skipped"] == skipped + 1, rt._callback_counts()
assert d.cuGraphExecDestroy(x)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
# the keep-alive's reference belongs to the ended interpreter, whose queue
# is closed: the capsule is leaked on purpose, its id stays mapped
settle(left=1)
assert nodes_mapped() == 1, rt._registry_counts()
""")


def test_runtime_struct_takes_a_callable():
    """cubind.runtime: cudaHostNodeParams(V2).fn and cudaGraphNodeParams.host
    take a callable by the same shape (the runtime answers no GPU here:
    the struct holds it, and it is released with the struct)."""
    run(r"""
import cubind.runtime as r
for cls in (r.cudaHostNodeParams, r.cudaHostNodeParamsV2):
    cb = Recorder("rt")
    gone = weakref.ref(cb)
    p = cls()
    p.userData = 8
    p.fn = cb
    assert p.fn is cb and p.userData == 8
    assert nodes_mapped() == 1
    err, g = r.cudaGraphCreate(0)
    if err == 0:
        err, node = r.cudaGraphAddHostNode(g, None, 0, p)
        assert err == 0, err
        assert r.cudaGraphDestroy(g)[0] == 0
    del p, cb
    settle()
    assert gone() is None and nodes_mapped() == 0, rt._registry_counts()
np = r.cudaGraphNodeParams()
cb = Recorder("rt")
np.host.fn = cb
assert np.host.fn is cb
""")


def test_threads_setting_the_pair_leave_it_consistent():
    """Eight threads set fn (callables, addresses) and userData of one
    struct at once (free-threaded: truly at once). After each round the
    C bytes agree with what the fields read: the node trampoline with the
    id of the callable kept (a launch calls that callable with that
    userData), or an address with the userData's own value."""
    run(r"""
import ctypes, struct
probe = d.CUDA_HOST_NODE_PARAMS()
probe.fn = print
TRAMPOLINE = struct.unpack("QQ", ctypes.string_at(probe.getPtr(), 16))[0]
N = 8
for round_ in range(20):
    p = d.CUDA_HOST_NODE_PARAMS()
    cbs = [Recorder(i) for i in range(N)]
    start = threading.Barrier(N)
    def body(i):
        start.wait()
        for k in range(50):
            if (i + k) % 3 == 0:
                p.fn = 0x1000 + i
            else:
                p.fn = cbs[i]
            p.userData = 100 * i + k
    ts = [threading.Thread(target=body, args=(i,)) for i in range(N)]
    [t.start() for t in ts]; [t.join() for t in ts]
    fn, ud = struct.unpack("QQ", ctypes.string_at(p.getPtr(), 16))
    if fn == TRAMPOLINE:
        cb = p.fn
        assert isinstance(cb, Recorder), cb
        err, g = d.cuGraphCreate(0)
        add = d.cuGraphAddHostNode(g, None, 0, p)
        assert add[0] == 0, add
        err, x = d.cuGraphInstantiate(g, 0)
        launch(x)
        assert cb.calls == [(cb.tag, p.userData, True)], (cb.calls, p.userData)
        assert d.cuGraphExecDestroy(x)[0] == 0 and d.cuGraphDestroy(g)[0] == 0
    else:
        assert fn == p.fn and 0x1000 <= fn < 0x1000 + N, (fn, p.fn)
        assert ud == p.userData, (ud, p.userData)
del p
settle(left=1)
assert nodes_mapped() == 1, rt._registry_counts()   # probe's
""")


def test_launch_in_flight_runs_the_graphs_callable_after_destroy():
    """The graph and its executable graph destroyed, every reference
    dropped, while a launch waits on the stream: the graph's user object,
    held by the launch (by the driver's, and the fake's), keeps the
    callable, which runs when the stream gets there, then is released."""
    run(r"""
go = threading.Event()
assert d.cuLaunchHostFunc(s, lambda data: go.wait(30), None)[0] == 0   # holds the stream
err, g = d.cuGraphCreate(0)
cb = Recorder("held")
gone = weakref.ref(cb)
calls = cb.calls
add_host(g, cb, 6, "node")
del cb
err, x = d.cuGraphInstantiate(g, 0)
assert d.cuGraphLaunch(x, s)[0] == 0
assert d.cuGraphExecDestroy(x)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
gc.collect()
rt._drain()
assert gone() is not None and nodes_mapped() == 1
go.set()
assert d.cuStreamSynchronize(s)[0] == 0
assert calls == [("held", 6, True)], calls
settle()
assert gone() is None and nodes_mapped() == 0, rt._registry_counts()
""")


def test_graph_holds_its_callables_through_a_user_object():
    """cuGraphAddHostNode and cuGraphAddNode with a callable (the
    registry-retain rules) also move a user object holding it into the
    graph: the driver keeps that for the graph's executable graphs and
    their launches in flight. A set-params call, or a C function, makes
    none. When the retain fails, the binding raises RuntimeError naming
    it, and the user object's destructor still gives its hold back."""
    run(r"""
from fake_driver import open_fake
fake = open_fake()
def retains():
    return fake.fakecuda_call_count(b"cuGraphRetainUserObject")
err, g = d.cuGraphCreate(0)
before = retains()
node = add_host(g, Recorder("h"), 1, "host")
add_host(g, Recorder("n"), 2, "node")
assert retains() == before + 2, (before, retains())
assert d.cuGraphHostNodeSetParams(node, host_params(Recorder("s"), 3))[0] == 0
err, x = d.cuGraphInstantiate(g, 0)
assert d.cuGraphExecHostNodeSetParams(x, node, host_params(Recorder("x"), 4))[0] == 0
import ctypes
keep = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda p: None)
add_host(g, keep, None, "host")
assert retains() == before + 2, (before, retains())
assert fake.fakecuda_fail_next(b"cuGraphRetainUserObject", 1, 1) == 0
try:
    add_host(g, Recorder("f"), 5, "host")
except RuntimeError as e:
    assert "could not tie a host node's callable to its graph" in str(e), e
else:
    raise AssertionError("the failed retain was not reported")
assert d.cuGraphExecDestroy(x)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
settle()
assert nodes_mapped() == 0, rt._registry_counts()
assert fake.fakecuda_pending_destructors() == 0
""")
