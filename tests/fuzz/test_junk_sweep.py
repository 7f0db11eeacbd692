# SPDX-License-Identifier: Apache-2.0
"""The junk sweep (tests/fuzz/junk_sweep.py) on every interpreter ./configure
found (build/config.ninja's `pythons`: the system Python and 3.13t), against
the normal build (build/python) and the fake driver, one process per
interpreter, side by side. A process that dies is reported with the call
it was making (junk_sweep.crashed_in: the last line of its log).
tests/python/test_library_junk.py runs the same script on the library
modules."""
import os
import re
import subprocess
import time

from fuzzsupport import BUILD, ROOT, config
from junk_sweep import crashed_in

# Calls per callable and face (per method, struct constructor, ...): about
# 40 s per interpreter on 2 busy cores.
CALLS = "40"
SCRIPT = str(ROOT / "tests" / "fuzz" / "junk_sweep.py")
# Every exported callable of both modules: the functions of cuda.h (449 in
# 13.0) and the classes (enums, handles, structs) of each face.
MIN_CALLABLES = 800


def interpreters():
    return config("pythons").split()


def expected_interpreters():
    """Two (the system Python and the free-threaded 3.13t) unless
    ./configure was told to leave 3.13t out (--no-free-threaded, or
    --no-install / --user, which imply it): build/config.ninja's
    free_threaded = 0. A config.ninja without the line predates it and
    expects two."""
    try:
        free_threaded = config("free_threaded")
    except KeyError:
        free_threaded = "1"
    return 1 if free_threaded == "0" else 2


def sweep_env():
    return dict(os.environ, PYTHONPATH=str(BUILD / "python"),
                CUBIND_LIBCUDA=str(BUILD / "fakecuda" / "libcuda.so.1"),
                PYTHONDONTWRITEBYTECODE="1")


def test_junk_sweep_on_every_interpreter(tmp_path):
    """Fails on 05a670f: struct char fields given a non-contiguous
    memoryview raised BufferError (CUipcMemHandle_v1.reserved,
    CUlaunchAttribute.pad, ...), which is not among the allowed outcomes."""
    env = sweep_env()
    pythons = interpreters()
    want = expected_interpreters()
    assert len(pythons) >= want, (
        "the junk sweep runs on every interpreter ./configure found, and it found %d (%s) where "
        "%d are expected: configure without a free-threaded CPython only with "
        "--no-free-threaded (build/config.ninja: free_threaded = 0)"
        % (len(pythons), " ".join(pythons) or "none", want))
    runs = []
    t0 = time.monotonic()
    for i, py in enumerate(pythons):
        log = str(tmp_path / ("sweep-%d.log" % i))
        runs.append((py, log, subprocess.Popen([py, SCRIPT, "--log", log, "--calls", CALLS],
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
        assert re.search(r"^usable afterwards: cuInit ", out, re.M), out
        for mod, n, swept in re.findall(r"^module (\S+) callables (\d+) swept (\d+)$", out, re.M):
            assert n == swept, "%s: %s of %s callables of %s swept" % (py, swept, n, mod)
    assert not problems, "\n\n".join(problems)


def test_a_crash_is_attributed_to_its_call(tmp_path):
    """The harness's own check: a process killed in a call is reported with
    that call (the log's last line), not with a call before it."""
    log = str(tmp_path / "crash.log")
    # a function of every cuda.h, swept after the whole of cubind.driver
    # (2 calls per callable: under a second)
    what = "cubind.cu.cuInit"
    p = subprocess.run([interpreters()[0], SCRIPT, "--log", log, "--calls", "2",
                        "--crash-at", what],
                       capture_output=True, text=True, env=sweep_env(), cwd=str(ROOT), timeout=120)
    assert p.returncode < 0, (p.returncode, p.stdout, p.stderr[-3000:])
    assert crashed_in(log) == what
