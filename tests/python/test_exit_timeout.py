# SPDX-License-Identifier: Apache-2.0
"""Exit never hangs on a Python callable that does not return (issue 27,
item 5): a host function that synchronizes its own stream (a deadlock in C
too) keeps the callback runner busy for good. The interpreter's exit waits
for it at most CUBIND_EXIT_TIMEOUT seconds (default 5), then names it in
one line on stderr and exits, leaving it running; SIGINT ends the wait at
once. 05a670f waited forever, SIGINT or not (these tests then time out)."""
import os
import re
import signal
import subprocess
import sys
import time

from conftest import run_python

# A fresh interpreter with a stream `s` on device 0's primary context `ctx`.
WITH_A_STREAM = r"""
import time
import cubind.driver as d
d.cuInit(0)
r, ctx = d.cuDevicePrimaryCtxRetain(0); d.cuCtxSetCurrent(ctx)
r, s = d.cuStreamCreate(0)
"""

STUCK_SCRIPT = WITH_A_STREAM + r"""
started = []
def never_returns(data):
    d.cuCtxSetCurrent(ctx)
    started.append(1)
    d.cuStreamSynchronize(s)  # waits for this very host function
assert d.cuLaunchHostFunc(s, never_returns, None)[0] == 0
while not started:
    time.sleep(0.01)
print("exiting", flush=True)
"""

LINE = (r"cubind: exiting without waiting for 1 Python callback still running after "
        r"(\d+)\.\d{3} s%s \(host function <function never_returns at 0x[0-9a-f]+>\); left "
        r"running \(CUBIND_EXIT_TIMEOUT sets the wait\)")


def stderr_lines(text):
    # a sanitizer build's runtime may add lines of its own; none here
    return [line for line in text.splitlines() if line.strip()]


def test_exit_gives_up_on_a_callable_that_never_returns():
    t0 = time.monotonic()
    p = run_python(STUCK_SCRIPT, CUBIND_EXIT_TIMEOUT="1")
    took = time.monotonic() - t0
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
    assert p.stdout.split() == ["exiting"]
    lines = stderr_lines(p.stderr)
    assert len(lines) == 1, p.stderr
    m = re.fullmatch(LINE % "", lines[0])
    assert m and m.group(1) == "1", lines[0]
    assert took < 30, took


def test_the_default_wait_is_a_few_seconds():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_EXIT_TIMEOUT"}
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", STUCK_SCRIPT], capture_output=True, text=True,
                       env=dict(env, PYTHONPATH=os.environ.get("PYTHONPATH", "")), timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    m = re.fullmatch(LINE % "", stderr_lines(p.stderr)[0])
    assert m and m.group(1) == "5", p.stderr
    assert 5 <= took < 60, took


def test_sigint_ends_the_wait():
    env = dict(os.environ, CUBIND_EXIT_TIMEOUT="600")
    p = subprocess.Popen([sys.executable, "-c", STUCK_SCRIPT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "exiting"
        time.sleep(1.0)  # the script has ended: the interpreter waits
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    lines = stderr_lines(err)
    assert len(lines) == 1, err
    assert re.fullmatch(LINE % ", wait interrupted", lines[0]), lines[0]
    assert took < 30, took


def test_a_callable_that_returns_in_time_is_waited_for():
    """A host function still running at exit that returns before the
    deadline finishes: no line, nothing skipped."""
    code = WITH_A_STREAM + r"""
def slow(data):
    time.sleep(0.5)
    print("slow done", flush=True)
d.cuLaunchHostFunc(s, slow, None)
time.sleep(0.1)
"""
    p = run_python(code, CUBIND_EXIT_TIMEOUT="30")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["slow", "done"]
    assert not stderr_lines(p.stderr), p.stderr


JUNK_LINE = ("cubind: CUBIND_EXIT_TIMEOUT='%s' is not a number of seconds >= 0; "
             "using 5 s")


def test_junk_exit_timeout_is_reported_once():
    """Issue 42: a junk CUBIND_EXIT_TIMEOUT (negative, non-numeric, out of
    range) fell back to 5 s without a word (4ed6c2d). It is reported once,
    at import, on stderr, with the value used; a valid or empty one says
    nothing. Importing every module, and a subinterpreter, report it no
    more than once."""
    script = ("import cubind.driver, cubind.cu, cubind.nvrtc, cubind.nvjitlink\n"
              "try:\n"
              "    import _interpreters as si  # 3.13\n"
              "except ImportError:\n"
              "    import _xxsubinterpreters as si  # 3.11, 3.12\n"
              "i = si.create(); si.run_string(i, 'import cubind.driver'); si.destroy(i)\n")
    for junk in ("-1", "abc", "5s", "1e3", " 5", "99999999999", "-0.5", ".", "0x10"):
        p = run_python(script, CUBIND_EXIT_TIMEOUT=junk)
        assert p.returncode == 0, (junk, p.stderr[-2000:])
        assert stderr_lines(p.stderr) == [JUNK_LINE % junk], (junk, p.stderr)
    for fine in ("0", "0.5", "7", "1000000000", ""):
        p = run_python(script, CUBIND_EXIT_TIMEOUT=fine)
        assert p.returncode == 0 and stderr_lines(p.stderr) == [], (fine, p.stderr)


def test_junk_exit_timeout_waits_the_default():
    """The value used is the one reported: a stuck callable is waited for
    the default 5 s, and both lines are on stderr."""
    t0 = time.monotonic()
    p = run_python(STUCK_SCRIPT, CUBIND_EXIT_TIMEOUT="-2")
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    lines = stderr_lines(p.stderr)
    assert lines[0] == JUNK_LINE % "-2", lines
    m = re.fullmatch(LINE % "", lines[1])
    assert m and m.group(1) == "5", lines
    assert 5 <= took < 60, took
