# SPDX-License-Identifier: Apache-2.0
"""The junk sweep (tests/fuzz/junk_sweep.py) on every interpreter ./configure
found (build/config.ninja's `pythons`: the system Python and 3.13t), against
the normal build (build/python) and the fake driver, one process per
interpreter, side by side. A process that dies is reported with the call
it was making: the last line of its log."""
import os
import re
import subprocess
import time

import pytest

from fuzzsupport import BUILD, ROOT, config

# Calls per callable and face (per method, struct constructor, ...): about
# 40 s per interpreter on 2 busy cores.
CALLS = "40"
# Every exported callable of both modules: the functions of cuda.h (449 in
# 13.0) and the classes (enums, handles, structs) of each face.
MIN_CALLABLES = 800


def interpreters():
    return config("pythons").split()


def crashed_in(log):
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError:
        return "(no log)"
    return lines[-1] if lines else "(before the first call)"


def test_junk_sweep_on_every_interpreter(tmp_path):
    """Fails on 05a670f: struct char fields given a non-contiguous
    memoryview raised BufferError (CUipcMemHandle_v1.reserved,
    CUlaunchAttribute.pad, ...), which is not among the allowed outcomes."""
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"),
               CUBIND_LIBCUDA=str(BUILD / "fakecuda" / "libcuda.so.1"),
               PYTHONDONTWRITEBYTECODE="1")
    script = str(ROOT / "tests" / "fuzz" / "junk_sweep.py")
    runs = []
    t0 = time.monotonic()
    for i, py in enumerate(interpreters()):
        log = str(tmp_path / ("sweep-%d.log" % i))
        runs.append((py, log, subprocess.Popen([py, script, "--log", log, "--calls", CALLS],
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                               text=True, env=env, cwd=str(ROOT))))
    problems = []
    for py, log, p in runs:
        try:
            out, err = p.communicate(timeout=400)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            problems.append("%s: still running after 400 s, in %s" % (py, crashed_in(log)))
            continue
        print("%s (%.0f s):\n%s" % (py, time.monotonic() - t0, out))
        if p.returncode < 0 or "Fatal Python error" in err:
            problems.append("%s died (signal %d) in %s\n%s" % (py, -p.returncode, crashed_in(log),
                                                               err[-4000:]))
            continue
        if p.returncode != 0:
            problems.append("%s: exit %d\n%s\n%s" % (py, p.returncode, out[-6000:], err[-3000:]))
            continue
        m = re.search(r"^callables (\d+) calls (\d+)$", out, re.M)
        assert m, out
        assert int(m.group(1)) >= MIN_CALLABLES, out
        for mod, n, swept in re.findall(r"^module (\S+) callables (\d+) swept (\d+)$", out, re.M):
            assert n == swept, "%s: %s of %s callables of %s swept" % (py, swept, n, mod)
    assert not problems, "\n\n".join(problems)


def test_a_crash_is_attributed_to_its_call(tmp_path):
    """The harness's own check: a process killed in a call is reported with
    that call (the log's last line)."""
    log = str(tmp_path / "crash.log")
    code = ("import os, ctypes\n"
            "fd = os.open(%r, os.O_WRONLY | os.O_CREAT | os.O_APPEND)\n"
            "os.write(fd, b'cubind.driver.cuFake #7\\n')\n"
            "ctypes.string_at(8)\n" % log)
    p = subprocess.run([interpreters()[0], "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode < 0
    assert crashed_in(log) == "cubind.driver.cuFake #7"
