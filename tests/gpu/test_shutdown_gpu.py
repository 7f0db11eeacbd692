# SPDX-License-Identifier: Apache-2.0
"""Issue 4 on the real driver: interpreters that exit while Python callbacks
still fire from the driver's own threads (host functions queued on a
stream, a host function replayed by a graph, user-object destructors run
when the driver drops its last reference).

Each run is a fresh interpreter under a timeout; a run passes when it exits
with status 0, within the timeout, and without "Fatal Python error". The
run count is CUBIND_SHUTDOWN_RUNS (default 500). The summary line printed at
the end (pytest -s) counts the runs that still had callbacks in flight at
exit, from cubind._runtime._callback_counts(): the evidence that the exit
really raced the callbacks.

cubind only: cuda.bindings takes no Python callables.
"""
import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from gpu_scripts import CUBIND_STREAM_SETUP

IMPL = os.environ.get("CUBIND_GPU_IMPL", "cubind")
pytestmark = pytest.mark.skipif(IMPL == "cuda.bindings",
                                reason="cuda.bindings takes no Python callables")

SCRIPT = r'''
import atexit, sys, time
# Registered before cubind is imported, so it runs after cubind's own atexit
# step and reports what was still in flight when the interpreter exited.
atexit.register(lambda: print("counts", __import__("cubind._runtime")._runtime._callback_counts()))
''' + CUBIND_STREAM_SETUP + r'''
sink = []
def slow(x):
    sink.append(x)
    time.sleep(0.0002)
# A graph whose host node calls a Python function; captured, so the
# callable's lifetime belongs to the graph (cuda-python #790 path).
(g_stream,) = ok(d.cuStreamCreate(1))
ok(d.cuStreamBeginCapture(g_stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED))
ok(d.cuLaunchHostFunc(g_stream, slow, "graph"))
(graph,) = ok(d.cuStreamEndCapture(g_stream))
(exe,) = ok(d.cuGraphInstantiate(graph, 0))
for i in range(40):
    ok(d.cuLaunchHostFunc(s, slow, i))
    (uo,) = ok(d.cuUserObjectCreate(i, lambda p: sink.append(p), 1, 1))
    ok(d.cuGraphRetainUserObject(graph, uo, 1, 0))
    ok(d.cuUserObjectRelease(uo, 1))
    if i % 8 == 0:
        ok(d.cuGraphLaunch(exe, g_stream))
# Exit now, without synchronizing: host functions and graph replays are
# still queued on the driver's threads.
'''


def run_once(_):
    try:
        p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return "hang"
    if p.returncode != 0 or "Fatal Python error" in p.stderr:
        return "rc=%d %s" % (p.returncode, p.stderr[-800:])
    lines = [l for l in p.stdout.splitlines() if l.startswith("counts ")]
    return lines[-1] if lines else "no counts line: " + p.stdout[-300:]


def test_exit_while_driver_threads_run_python_callbacks():
    runs = int(os.environ.get("CUBIND_SHUTDOWN_RUNS", "500"))
    with ThreadPoolExecutor(8) as ex:
        outputs = list(ex.map(run_once, range(runs)))
    failures = [o for o in outputs if not o.startswith("counts ")]
    assert not failures, (len(failures), failures[:3])
    counts = [ast.literal_eval(o.split(" ", 1)[1]) for o in outputs]
    raced = sum(1 for c in counts if any(c.get(k) for k in ("skipped", "leaked", "alive")))
    print("\nshutdown runs: %d, all exited cleanly; %d had callbacks in flight at exit; "
          "first counts: %r" % (runs, raced, counts[0]))
    assert raced > 0, counts[:3]
