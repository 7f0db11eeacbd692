# SPDX-License-Identifier: Apache-2.0
"""Python callables as CUDA callbacks, against the fake driver, which calls
them from its own threads like the real one: host functions, stream
callbacks, user-object destructors, exceptions, and shutdown while
callbacks are still firing. The trampolines on the driver's threads never
enter Python: they hand the call to the interpreter's runner thread and
wait for it."""
import ctypes
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import cubind._runtime as rt
from conftest import ROUNDS, UNDER_TSAN

THREADS = 8

# Every test here also runs under ThreadSanitizer (tests/run).
pytestmark = pytest.mark.tsan


@pytest.fixture
def stream(drv):
    r, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert drv.cuCtxSetCurrent(ctx)[0] == 0
    err, s = drv.cuStreamCreate(0)
    assert err == 0
    yield s
    assert drv.cuStreamSynchronize(s)[0] == 0
    assert drv.cuStreamDestroy(s)[0] == 0


def test_host_function_runs_on_the_runner_in_order(drv, fake, stream):
    """The driver's thread hands the call to the interpreter's runner: one
    Python thread (not a thread of the driver, not the caller) runs every
    callable, in stream order."""
    fake.fakecuda_thread_kind.restype = ctypes.c_int
    seen = []
    caller = threading.get_ident()

    def fn(data):
        seen.append((data, threading.get_ident(), fake.fakecuda_thread_kind()))

    for i in range(20):
        assert drv.cuLaunchHostFunc(stream, fn, i)[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert [s[0] for s in seen] == list(range(20))
    runners = {s[1] for s in seen}
    assert len(runners) == 1 and caller not in runners
    assert all(s[2] == 0 for s in seen)            # not a thread of the fake driver
    assert rt._callback_counts()["alive"] == 0     # one-shot payloads released


@pytest.mark.parametrize("kind", ["host function", "stream callback"])
def test_the_stream_waits_for_the_callable(drv, stream, kind):
    """Stream order: work queued after a host function (stream callback)
    starts only once the callable has returned on the runner."""
    err, dptr = drv.cuMemAlloc(8)
    assert err == 0
    src = ctypes.create_string_buffer(8)

    def late_write(*args):
        time.sleep(0.05)
        src.value = b"written"

    if kind == "host function":
        assert drv.cuLaunchHostFunc(stream, late_write, None)[0] == 0
    else:
        assert drv.cuStreamAddCallback(stream, late_write, None, 0)[0] == 0
    assert drv.cuMemcpyHtoDAsync(dptr, src, 8, stream)[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0
    dst = ctypes.create_string_buffer(8)
    assert drv.cuMemcpyDtoH(dst, dptr, 8)[0] == 0
    assert drv.cuMemFree(dptr)[0] == 0
    assert dst.value == b"written"


def test_host_function_exception_is_reported_not_lost(drv, stream):
    reported = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: reported.append(u)
    try:
        def boom(data):
            raise ValueError("boom %s" % data)
        assert drv.cuLaunchHostFunc(stream, boom, 7)[0] == 0
        assert drv.cuStreamSynchronize(stream)[0] == 0
    finally:
        sys.unraisablehook = old
    assert len(reported) == 1
    assert isinstance(reported[0].exc_value, ValueError) and "boom 7" in str(reported[0].exc_value)


def test_stream_callback_gets_converted_arguments(drv, stream):
    got = []
    assert drv.cuStreamAddCallback(stream, lambda h, status, data: got.append((h, status, data)), "payload", 0)[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0
    (h, status, data), = got
    assert isinstance(h, drv.CUstream) and h == stream
    assert status is drv.CUresult.CUDA_SUCCESS
    assert data == "payload"


def test_user_object_destructor_runs_on_a_python_thread(drv, fake):
    fake.fakecuda_thread_kind.restype = ctypes.c_int
    calls = []
    obj_data = object()
    err, uobj = drv.cuUserObjectCreate(obj_data, lambda ptr: calls.append((ptr, fake.fakecuda_thread_kind())), 1, 1)
    assert err == 0
    assert drv.cuUserObjectRelease(uobj, 1)[0] == 0
    # The driver's destructor thread only queues the call; it runs on a
    # Python thread: the runner (woken by the push) or the next binding call.
    for _ in range(200):
        drv.cuDriverGetVersion()
        if calls:
            break
        time.sleep(0.005)
    assert calls == [(obj_data, 0)]
    assert rt._callback_counts()["alive"] == 0


def test_raw_function_pointers_still_work(drv, stream):
    # cuda.bindings' way: a C function pointer and a C userData address.
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    hits = []
    cfn = CB(lambda p: hits.append(p))
    box = ctypes.c_int(5)
    assert drv.cuLaunchHostFunc(stream, ctypes.cast(cfn, ctypes.c_void_p).value, ctypes.addressof(box))[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert hits == [ctypes.addressof(box)]


def test_wrong_callback_types_raise(drv, stream):
    with pytest.raises(TypeError, match="'fn'"):
        drv.cuLaunchHostFunc(stream, "not callable", None)


def test_many_threads_many_host_functions(drv, stream):
    """8 threads queue host functions on one stream (one driver thread
    fires them all), several rounds: every call arrives exactly once."""
    for rnd in range(ROUNDS):
        counter = []
        lock = threading.Lock()

        def fn(data):
            with lock:
                counter.append(data)

        def launch(t):
            for i in range(200):
                assert drv.cuLaunchHostFunc(stream, fn, (t, i))[0] == 0

        with ThreadPoolExecutor(THREADS) as ex:
            list(ex.map(launch, range(THREADS)))
        assert drv.cuStreamSynchronize(stream)[0] == 0
        assert sorted(counter) == sorted((t, i) for t in range(THREADS) for i in range(200)), rnd
        assert rt._callback_counts()["alive"] == 0


class Payload:
    """Callback data that can be weakly referenced (released after its run)."""

    def __init__(self, t, i):
        self.key = (t, i)


def test_host_functions_and_stream_callbacks_from_many_driver_threads(drv):
    """8 threads, each with its own stream (the fake driver runs a worker
    thread per stream, like the real one's per-stream order), queue host
    functions and stream callbacks alternately, several rounds. Every call
    arrives exactly once with its payload, each stream's calls in the order
    they were queued, each from the stream the call was queued on, all on
    the interpreter's one runner; every payload is released after its
    run."""
    import weakref
    r, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert drv.cuCtxSetCurrent(ctx)[0] == 0
    per_thread = 60 if UNDER_TSAN else 150
    alive0 = rt._callback_counts()["alive"]
    for rnd in range(ROUNDS):
        streams = [drv.cuStreamCreate(0)[1] for _ in range(THREADS)]
        seen = [[] for _ in range(THREADS)]     # seen[t]: appended by stream t's calls only
        refs = [[] for _ in range(THREADS)]
        runners = set()
        barrier = threading.Barrier(THREADS)

        def host(p):
            runners.add(threading.get_ident())
            seen[p.key[0]].append(("host", p.key))

        def callback(h, status, p):
            runners.add(threading.get_ident())
            seen[p.key[0]].append(("callback", p.key, h == streams[p.key[0]], status))

        def launch(t):
            assert drv.cuCtxSetCurrent(ctx)[0] == 0
            barrier.wait()
            for i in range(per_thread):
                p = Payload(t, i)
                refs[t].append(weakref.ref(p))
                if i % 2:
                    assert drv.cuStreamAddCallback(streams[t], callback, p, 0)[0] == 0
                else:
                    assert drv.cuLaunchHostFunc(streams[t], host, p)[0] == 0
            del p

        with ThreadPoolExecutor(THREADS) as ex:
            launchers = set(ex.map(lambda t: (launch(t), threading.get_ident())[1], range(THREADS)))
        for s in streams:
            assert drv.cuStreamSynchronize(s)[0] == 0
        ok = drv.CUresult.CUDA_SUCCESS
        for t in range(THREADS):
            want = [("callback", (t, i), True, ok) if i % 2 else ("host", (t, i))
                    for i in range(per_thread)]
            assert seen[t] == want, (rnd, t)       # exact: none lost, none twice, in order
            assert [r() for r in refs[t]] == [None] * per_thread, (rnd, t)
        assert len(runners) == 1 and not runners & launchers, (runners, launchers)
        assert rt._callback_counts()["alive"] == alive0
        for s in streams:
            assert drv.cuStreamDestroy(s)[0] == 0
def settle(pred, timeout=10.0):
    """Waits (making binding calls, which drain deferred work) until pred()."""
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        rt._drain()
        time.sleep(0.002)


def test_user_objects_are_registry_entries_until_the_driver_destroys_them(drv, fake):
    """A user object made with a Python destructor is a CUBIND_REG_USER_OBJECT
    entry from its creation (keyed by the CUuserObject, owning the payload)
    until the driver destroys it; the destructor then runs once, on a
    Python thread, and the payload is released."""
    base, alive0 = rt._registry_counts(), rt._callback_counts()["alive"]
    calls = []
    lock = threading.Lock()

    def destroy(data):
        with lock:
            calls.append(data)

    n = 16
    objs = []
    for i in range(n):
        err, uobj = drv.cuUserObjectCreate(i, destroy, 1, 1)
        assert err == 0
        objs.append(uobj)
    counts = rt._registry_counts()
    assert counts["user_object"] == base["user_object"] + n
    assert counts["callback"] == base["callback"]
    assert rt._callback_counts()["alive"] == alive0 + n
    # one more reference each, then both released: destroyed once, at the last
    for uobj in objs:
        assert drv.cuUserObjectRetain(uobj, 1)[0] == 0
        assert drv.cuUserObjectRelease(uobj, 1)[0] == 0
    assert rt._registry_counts()["user_object"] == base["user_object"] + n
    for uobj in objs:
        assert drv.cuUserObjectRelease(uobj, 1)[0] == 0
    settle(lambda: rt._callback_counts()["alive"] == alive0)
    assert sorted(calls) == list(range(n))
    assert rt._registry_counts() == base
    # a C destructor (no payload) is no registry entry
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    cfn = CB(lambda p: None)
    err, uobj = drv.cuUserObjectCreate(None, ctypes.cast(cfn, ctypes.c_void_p).value, 1, 1)
    assert err == 0 and rt._registry_counts() == base
    assert drv.cuUserObjectRelease(uobj, 1)[0] == 0
    settle(lambda: fake.fakecuda_pending_destructors() == 0)


def test_a_user_object_held_by_a_graph_stays_registered_until_the_graph_is_gone(drv, fake):
    base, alive0 = rt._registry_counts(), rt._callback_counts()["alive"]
    calls = []
    err, uobj = drv.cuUserObjectCreate("d", calls.append, 1, 1)
    assert err == 0
    err, graph = drv.cuGraphCreate(0)
    assert err == 0
    assert drv.cuGraphRetainUserObject(graph, uobj, 1, 1)[0] == 0   # CU_GRAPH_USER_OBJECT_MOVE
    assert rt._registry_counts()["user_object"] == base["user_object"] + 1
    time.sleep(0.02)
    rt._drain()
    assert calls == [] and rt._registry_counts()["user_object"] == base["user_object"] + 1
    assert drv.cuGraphDestroy(graph)[0] == 0
    settle(lambda: rt._callback_counts()["alive"] == alive0)
    assert calls == ["d"]
    assert rt._registry_counts() == base


def test_a_failed_user_object_create_registers_nothing(drv, fake):
    base, alive0 = rt._registry_counts(), rt._callback_counts()["alive"]
    assert fake.fakecuda_fail_next(b"cuUserObjectCreate", 2, 1) == 0   # CUDA_ERROR_OUT_OF_MEMORY
    err, uobj = drv.cuUserObjectCreate(1, lambda d: None, 1, 1)
    assert err == 2
    assert rt._registry_counts() == base and rt._callback_counts()["alive"] == alive0


def test_callbacks_in_flight_are_registry_entries(drv, stream):
    """One-shot host functions and stream callbacks are CUBIND_REG_CALLBACK
    entries (keyed by their payload) from the launch until they ran."""
    base = rt._registry_counts()
    gate = threading.Event()
    ran = []
    assert drv.cuLaunchHostFunc(stream, lambda d: gate.wait(10), None)[0] == 0
    for i in range(10):
        assert drv.cuLaunchHostFunc(stream, ran.append, i)[0] == 0
        assert drv.cuStreamAddCallback(stream, lambda h, st, d: ran.append(d), -i, 0)[0] == 0
    counts = rt._registry_counts()
    assert counts["callback"] == base["callback"] + 21
    assert counts["user_object"] == base["user_object"]
    assert rt._callback_counts()["alive"] == 21
    gate.set()
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert len(ran) == 20
    assert rt._registry_counts() == base
    assert rt._callback_counts()["alive"] == 0


def test_a_callback_the_driver_refused_is_unregistered(drv, fake, stream):
    base = rt._registry_counts()
    assert fake.fakecuda_fail_next(b"cuLaunchHostFunc", 1, 1) == 0   # CUDA_ERROR_INVALID_VALUE
    assert drv.cuLaunchHostFunc(stream, lambda d: None, None)[0] == 1
    assert fake.fakecuda_fail_next(b"cuStreamAddCallback", 1, 1) == 0
    assert drv.cuStreamAddCallback(stream, lambda h, st, d: None, None, 0)[0] == 1
    assert rt._registry_counts() == base
    assert rt._callback_counts()["alive"] == 0


def test_a_destructor_runs_on_the_main_thread_while_the_runner_is_busy(drv, fake, stream):
    """The main interpreter's deferred queue is also drained by one pending
    call (Py_AddPendingCall): a user-object destructor queued while the
    runner is inside a long host function runs on the main thread, between
    two bytecodes, before that host function returns. No binding call is
    made while waiting, so nothing else but the pending call drains here."""
    main = threading.get_ident()
    assert main == threading.main_thread().ident
    gate = threading.Event()
    events = []

    def long_host(data):
        events.append(("host start", threading.get_ident()))
        gate.wait(20)
        events.append(("host end", threading.get_ident()))

    def destroy(data):
        events.append(("destroy", data, threading.get_ident()))

    err, uobj = drv.cuUserObjectCreate("d", destroy, 1, 1)
    assert err == 0
    assert drv.cuLaunchHostFunc(stream, long_host, None)[0] == 0
    deadline = time.monotonic() + 10
    while not events:
        assert time.monotonic() < deadline, "the host function did not start"
        time.sleep(0.001)
    runner = events[0][1]
    scheduled = rt._callback_counts()["pending_calls"]
    assert drv.cuUserObjectRelease(uobj, 1)[0] == 0   # the fake destroys it on its own thread
    try:
        deadline = time.monotonic() + 10
        while len(events) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)                         # bytecodes, no binding call
        assert events == [("host start", runner), ("destroy", "d", main)]
        assert runner != main
        assert rt._callback_counts()["pending_calls"] == scheduled + 1
    finally:
        gate.set()
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert events == [("host start", runner), ("destroy", "d", main), ("host end", runner)]
    assert rt._callback_counts()["alive"] == 0


def _unraisable_from(u, kind):
    """The message CPython gives the hook for cubind's `kind` callback."""
    if sys.version_info >= (3, 13):
        assert u.object is None
        return u.err_msg
    return u.object


def test_a_raising_stream_callback_is_reported_and_later_ones_run(drv, stream):
    reported = []
    old = sys.unraisablehook
    sys.unraisablehook = reported.append
    ran = []

    def boom(h, status, data):
        raise KeyError("stream %s" % data)

    try:
        assert drv.cuStreamAddCallback(stream, boom, 3, 0)[0] == 0
        assert drv.cuStreamAddCallback(stream, lambda h, st, d: ran.append(d), "after", 0)[0] == 0
        assert drv.cuLaunchHostFunc(stream, ran.append, "host after")[0] == 0
        assert drv.cuStreamSynchronize(stream)[0] == 0
    finally:
        sys.unraisablehook = old
    assert len(reported) == 1
    u = reported[0]
    assert type(u.exc_value) is KeyError and u.exc_value.args == ("stream 3",)
    assert u.exc_type is KeyError
    where = _unraisable_from(u, "stream callback")
    if sys.version_info >= (3, 13):
        assert where.startswith("Exception ignored in cubind stream callback <function ")
        assert "boom" in where
    else:
        assert where is boom
    assert ran == ["after", "host after"]
    assert rt._callback_counts()["alive"] == 0


def test_a_raising_user_object_destructor_is_reported_and_later_ones_run(drv, fake):
    reported = []
    old = sys.unraisablehook
    sys.unraisablehook = reported.append
    ran = []
    alive0 = rt._callback_counts()["alive"]

    def boom(data):
        raise ZeroDivisionError("destroy %s" % data)

    try:
        err, bad = drv.cuUserObjectCreate(5, boom, 1, 1)
        assert err == 0
        err, good = drv.cuUserObjectCreate("after", ran.append, 1, 1)
        assert err == 0
        assert drv.cuUserObjectRelease(bad, 1)[0] == 0
        settle(lambda: reported)
        assert drv.cuUserObjectRelease(good, 1)[0] == 0
        settle(lambda: ran and rt._callback_counts()["alive"] == alive0)
    finally:
        sys.unraisablehook = old
    assert len(reported) == 1
    u = reported[0]
    assert type(u.exc_value) is ZeroDivisionError and u.exc_value.args == ("destroy 5",)
    assert u.exc_type is ZeroDivisionError
    where = _unraisable_from(u, "user object destructor")
    if sys.version_info >= (3, 13):
        assert where.startswith("Exception ignored in cubind user object destructor <function ")
        assert "boom" in where
    else:
        assert where is boom
    assert ran == ["after"]


def test_a_keep_alive_dropped_on_a_thread_without_a_thread_state_goes_through_the_queue(drv, stream):
    """A registry keep-alive whose entry dies on a thread with no thread
    state (a driver's) is not released there (entering the interpreter from
    it would race finalization): it is queued and released on a Python
    thread of its interpreter: the main thread (the pending call) or the
    runner, both woken by the push, with no binding call made."""
    main = threading.get_ident()
    runner = []
    assert drv.cuLaunchHostFunc(stream, lambda d: runner.append(threading.get_ident()), None)[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0
    where = []

    class Kept:
        def __del__(self):
            where.append(threading.get_ident())

    scheduled = rt._callback_counts()["pending_calls"]
    rt._drop_on_new_thread(Kept)
    deadline = time.monotonic() + 10
    while not where and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(where) == 1 and where[0] in (main, runner[0]), (where, main, runner)
    assert rt._callback_counts()["pending_calls"] == scheduled + 1


AFTER_ATEXIT_SCRIPT = r"""
import atexit, sys, threading

released = []
class Kept:
    def __del__(self):
        released.append(threading.get_ident())

def after_cubind():
    # registered before cubind's atexit step, so called after it
    import cubind._runtime as rt
    before = rt._callback_counts()
    rt._drop_on_new_thread(Kept)
    after = rt._callback_counts()
    print("exit", after["pending_calls"] - before["pending_calls"],
          after["leaked"] - before["leaked"], len(released))

atexit.register(after_cubind)
import time
import cubind._runtime as rt
main = threading.get_ident()

# Part one, before any runner exists in this process: the item is drained
# by the main thread's pending call.
rt._drop_on_new_thread(Kept)
deadline = time.monotonic() + 10
while not released and time.monotonic() < deadline:
    time.sleep(0.001)
print("no runner", rt._callback_counts()["pending_calls"], released == [main])

# Part two: once the wake-up is closed (the atexit step's first part), a
# push that makes the queue non-empty schedules no pending call; the item
# waits for another drainer.
rt._close_pending_calls()
rt._drop_on_new_thread(Kept)
time.sleep(0.05)
print("closed", rt._callback_counts()["pending_calls"], len(released))
rt._drain()
print("drained", len(released), released[1:] == [main])
"""


def test_no_pending_call_is_scheduled_once_the_atexit_step_closed_it():
    p = subprocess.run([sys.executable, "-c", AFTER_ATEXIT_SCRIPT], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "Fatal" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert p.stdout.splitlines() == ["no runner 1 True", "closed 1 1", "drained 2 True",
                                     "exit 0 1 2"], p.stdout


SHUTDOWN_SCRIPT = r'''
import atexit, sys, time
# Registered first, so it runs after cubind's own atexit step: it reports
# what was still in flight when the interpreter began to exit.
atexit.register(lambda: print("counts", __import__("cubind._runtime")._runtime._callback_counts()))
import cubind.driver as d
d.cuInit(0)
r, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
r, s = d.cuStreamCreate(0)
sink = []
def slow(x):
    sink.append(x)
    time.sleep(0.0005)
for i in range(30):
    d.cuLaunchHostFunc(s, slow, i)
    r, uo = d.cuUserObjectCreate(i, lambda p: sink.append(p), 1, 1)
    d.cuUserObjectRelease(uo, 1)
# exit now, while host functions and destructors are still firing
'''


def test_shutdown_while_callbacks_fire_500_times():
    """The seed's destructor race, closed: no crash, no hang, no fatal error."""
    runs = int(os.environ.get("CUBIND_SHUTDOWN_RUNS", "500"))

    def one(_):
        try:
            p = subprocess.run([sys.executable, "-c", SHUTDOWN_SCRIPT], capture_output=True,
                               text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return "hang"
        if p.returncode != 0 or "Fatal Python error" in p.stderr:
            return "rc=%d %s" % (p.returncode, p.stderr[-500:])
        return p.stdout

    with ThreadPoolExecutor(4) as ex:
        outputs = list(ex.map(one, range(runs)))
    failures = [o for o in outputs if not o.startswith("counts")]
    assert not failures, failures[:3]
    # The exit really raced the callbacks: some runs still had work in flight.
    import ast
    counts = [ast.literal_eval(o.split(" ", 1)[1]) for o in outputs]
    assert any(c["skipped"] or c["leaked"] or c["alive"] for c in counts), counts[:3]
