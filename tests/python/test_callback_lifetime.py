# SPDX-License-Identifier: Apache-2.0
"""A ctypes function pointer handed to the driver as a callback lives as
long as the driver may call it, with the callback data's buffer, and is
released after (issue 42 item 4). 4ed6c2d passed the pointer as it was and
kept nothing: a caller that dropped its reference left the driver calling
freed memory (another function ran, or the process crashed).

Each case runs in a fresh interpreter (a regression crashes it), on the
fake driver, which calls host functions and stream callbacks from its own
threads: a Python host function blocks the stream until the ctypes
callback, launched behind it, has been dropped, collected, and its memory
reused by other ctypes callbacks; then the stream goes on."""
import pytest

from conftest import STREAM_PROLOGUE, run_python

# Also under ThreadSanitizer (tests/run): the C callback runs on the runner.
pytestmark = pytest.mark.tsan

PROLOGUE = r"""
import ctypes, gc, sys, threading, weakref
""" + STREAM_PROLOGUE + r"""
HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
STREAMFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
seen = []
go = threading.Event()

def block_the_stream():
    # a Python host function first: what follows waits for it
    assert d.cuLaunchHostFunc(s, lambda data: go.wait(30), None)[0] == 0

def churn():
    # drop, collect, and reuse ctypes callback memory many times over
    gc.collect()
    others = [HOSTFN(lambda p, i=i: seen.append(("other", i))) for i in range(200)]
    del others
    gc.collect()
"""


def run(body):
    p = run_python(PROLOGUE + body + '\nprint("ok")\n')
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), (p.returncode, p.stdout,
                                                                  p.stderr[-3000:])
    return p


def test_dropped_host_function_and_its_data_still_run():
    run(r"""
block_the_stream()
data = bytearray(b"kept")
fn = HOSTFN(lambda p: seen.append(("mine", ctypes.string_at(p, 4))))
gone = weakref.ref(fn)
assert d.cuLaunchHostFunc(s, fn, data)[0] == 0
del fn, data
churn()
assert gone() is not None   # kept by cubind while the driver may call it
go.set()
assert d.cuStreamSynchronize(s)[0] == 0
assert seen == [("mine", b"kept")], seen
gc.collect()
assert gone() is None       # released after the call
assert rt._callback_counts()["alive"] == 0
""")


def test_dropped_stream_callback_still_runs_with_its_arguments():
    run(r"""
block_the_stream()
fn = STREAMFN(lambda h, status, p: seen.append((h, status, p)))
gone = weakref.ref(fn)
assert d.cuStreamAddCallback(s, fn, 1234, 0)[0] == 0
del fn
churn()
go.set()
assert d.cuStreamSynchronize(s)[0] == 0
assert seen == [(int(s), 0, 1234)], (seen, int(s))
gc.collect()
assert gone() is None
""")


def test_dropped_user_object_destructor_still_runs():
    run(r"""
fn = HOSTFN(lambda p: seen.append(("destroyed", p)))
gone = weakref.ref(fn)
err, obj = d.cuUserObjectCreate(77, fn, 1, 1)
assert err == 0
del fn
churn()
assert gone() is not None
assert d.cuUserObjectRelease(obj, 1)[0] == 0
for _ in range(200):   # the destructor runs on the driver's terms
    d.cuCtxSynchronize()
    if seen:
        break
    threading.Event().wait(0.01)
assert seen == [("destroyed", 77)], seen
gc.collect()
assert gone() is None
""")


def test_int_address_is_still_taken_as_it_is():
    """An int address is the caller's to keep valid, as in C: handed to the
    driver unwrapped (the host function runs on the driver's thread)."""
    run(r"""
fn = HOSTFN(lambda p: seen.append(threading.current_thread() is threading.main_thread()))
addr = ctypes.cast(fn, ctypes.c_void_p).value
assert d.cuLaunchHostFunc(s, addr, None)[0] == 0
assert d.cuStreamSynchronize(s)[0] == 0
assert seen == [False]
""")


def test_host_node_function_lives_with_its_graph():
    """A host node's function (a ctypes function pointer set in its
    CUDA_HOST_NODE_PARAMS) and data live as long as the graph calls them,
    the struct and the caller's references dropped: kept by the graph's
    registry entry (cuGraphAddHostNode) or the node's
    (cuGraphHostNodeSetParams), released with the graph. 4ed6c2d kept them
    only as long as the struct."""
    run(r"""
err, g = d.cuGraphCreate(0)
assert err == 0

class Data(bytearray):  # takes weak references
    pass

def params():
    p = d.CUDA_HOST_NODE_PARAMS()
    fn, data = HOSTFN(lambda q: None), Data(b"data")
    p.fn, p.userData = fn, data
    return p, weakref.ref(fn), weakref.ref(data)

p, fn_gone, data_gone = params()
err, node = d.cuGraphAddHostNode(g, None, 0, p)
assert err == 0, err
del p
churn()
assert fn_gone() is not None and data_gone() is not None
p, fn2_gone, data2_gone = params()
assert d.cuGraphHostNodeSetParams(node, p)[0] == 0
del p
churn()
assert fn2_gone() is not None and data2_gone() is not None
assert d.cuGraphDestroy(g)[0] == 0
gc.collect()
assert None is fn_gone() is data_gone() is fn2_gone() is data2_gone()
""")


def test_executable_graph_host_node_function_lives_with_the_executable():
    """cuGraphExecHostNodeSetParams: the executable graph's host node runs
    the new function (and its data) on every cuGraphLaunch, the struct and
    the caller's references dropped; kept by the executable graph's
    registry entry, released when it is destroyed. 88d81ea kept them only
    as long as the struct: the launch below called freed memory."""
    run(r"""
# A graph of one host node, captured (the fake driver runs captured ones).
first = HOSTFN(lambda q: seen.append("first"))
assert d.cuStreamBeginCapture(s, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)[0] == 0
assert d.cuLaunchHostFunc(s, first, None)[0] == 0
err, g = d.cuStreamEndCapture(s)
assert err == 0, err
err, nodes, count = d.cuGraphGetNodes(g, 1)
assert err == 0 and count == 1, (err, count)
node = nodes[0]
err, x = d.cuGraphInstantiate(g, 0)
assert err == 0, err

class Data(bytearray):  # takes weak references
    pass

def new_params():
    q = d.CUDA_HOST_NODE_PARAMS()
    fn, data = HOSTFN(lambda ptr: seen.append(("exec", ctypes.string_at(ptr, 4)))), Data(b"xdat")
    q.fn, q.userData = fn, data
    return q, weakref.ref(fn), weakref.ref(data)

q, fn_gone, data_gone = new_params()
assert d.cuGraphExecHostNodeSetParams(x, node, q)[0] == 0
del q
churn()
assert fn_gone() is not None and data_gone() is not None
assert d.cuGraphLaunch(x, s)[0] == 0
assert d.cuStreamSynchronize(s)[0] == 0
assert seen == [("exec", b"xdat")], seen
assert d.cuGraphExecDestroy(x)[0] == 0
assert d.cuGraphDestroy(g)[0] == 0
gc.collect()
assert fn_gone() is None and data_gone() is None
""")


def test_registered_logs_and_async_callbacks_live_until_unregistered():
    """cuLogsRegisterCallback and cuDeviceRegisterAsyncNotification: the
    ctypes function and its data live as long as the registration (the
    driver calls them from its threads at any time), the caller's
    references dropped, and are released by the unregister call (the
    CUBIND_REG_CALLBACK_HANDLE registry entry). 90ecd9d kept nothing: the
    log callback below called freed memory. The fake driver calls every
    logs callback once per cuLogsDumpToMemory."""
    run(r"""
LOGFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
ASYNCFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

class Data(bytearray):  # takes weak references
    pass

def register_log():
    fn = LOGFN(lambda ud, level, msg, n: seen.append(
        ("log", ctypes.string_at(ud, 4), ctypes.string_at(msg, n))))
    data = Data(b"logd")
    err, h = d.cuLogsRegisterCallback(fn, data)
    assert err == 0, err
    return h, weakref.ref(fn), weakref.ref(data)

def register_async():
    fn, data = ASYNCFN(lambda info, ud, h: None), Data(b"asyn")
    err, h = d.cuDeviceRegisterAsyncNotification(0, fn, data)
    assert err == 0, err
    return h, weakref.ref(fn), weakref.ref(data)

h, fn_gone, data_gone = register_log()
ah, afn_gone, adata_gone = register_async()
churn()
assert None not in (fn_gone(), data_gone(), afn_gone(), adata_gone())
err, it, size = d.cuLogsDumpToMemory(None, bytearray(256), 256, 0)
assert err == 0, err
assert seen == [("log", b"logd", b"fake log: dumped")], seen
assert d.cuLogsUnregisterCallback(h)[0] == 0
assert d.cuDeviceUnregisterAsyncNotification(0, ah)[0] == 0
gc.collect()
assert None is fn_gone() is data_gone() is afn_gone() is adata_gone()
# a failed unregister releases nothing it did not register
assert d.cuLogsUnregisterCallback(h)[0] != 0
""")
