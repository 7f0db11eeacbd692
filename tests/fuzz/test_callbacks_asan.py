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


def test_exit_racing_callbacks_frees_nothing_twice(asan_built):
    with ThreadPoolExecutor(2) as ex:
        procs = list(ex.map(lambda _: run(RACE), range(20)))
    for p in procs:
        rep = sanitizer_report(p.stderr)
        assert p.returncode == 0 and not rep and "Fatal Python error" not in p.stderr, \
            rep or p.stderr[-3000:]
