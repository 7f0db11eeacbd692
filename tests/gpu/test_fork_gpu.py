# SPDX-License-Identifier: Apache-2.0
"""fork() on the real driver (runtime/process/README.md, "fork()"): a process that
ran Python host functions on the GPU's streams forks; the child exits
through the interpreter's normal shutdown (cubind's threading hook and
atexit step run) while the parent's driver keeps working. Each child must
exit 0 within a deadline, and the parent's host functions must keep running
after the forks. The child makes no CUDA call (CUDA's rule after fork).

cubind only: cuda.bindings takes no Python callables."""
import os
import subprocess
import sys

import pytest

from gpu_scripts import CUBIND_STREAM_SETUP

IMPL = os.environ.get("CUBIND_GPU_IMPL", "cubind")
pytestmark = pytest.mark.skipif(IMPL == "cuda.bindings",
                                reason="cuda.bindings takes no Python callables")

SCRIPT = r'''
import os, signal, sys, threading, time
''' + CUBIND_STREAM_SETUP + r'''
hits = []
stop = threading.Event()

def churn():
    ok(d.cuCtxSetCurrent(ctx))
    while not stop.is_set():
        ok(d.cuLaunchHostFunc(s, hits.append, 1))
        ok(d.cuStreamSynchronize(s))

t = threading.Thread(target=churn)
t.start()
time.sleep(0.05)
statuses = []
for i in range(20):
    time.sleep(0.01)
    pid = os.fork()
    if pid == 0:
        sys.exit(0)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            statuses.append(os.waitstatus_to_exitcode(status))
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            statuses.append("hung")
            break
        time.sleep(0.01)
stop.set()
t.join()
before = len(hits)
ok(d.cuLaunchHostFunc(s, hits.append, 2))
ok(d.cuStreamSynchronize(s))
print("statuses", sorted(set(statuses), key=str), "callbacks", before, "after", hits[-1])
'''


def test_children_exit_while_the_parent_runs_host_functions():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout.strip())
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("statuses [0] callbacks "), line
    assert int(line.split()[3]) > 0 and line.endswith("after 2"), line
