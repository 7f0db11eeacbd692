# SPDX-License-Identifier: Apache-2.0
"""Property-based fuzz of every generated function under ASan+UBSan
(tests/fuzz/fuzz_bindings.py does the work, in processes of its own because
libasan must be preloaded). At least MIN_CALLS calls in all."""
import re
import subprocess
import sys

from fuzzsupport import ROOT, asan_python_env, sanitizer_report

MIN_CALLS = 200_000
SHARDS = 2
# 441 functions x 8 examples x 30 argument sets x 2 faces = 211,680 calls.
ARGS = ["--examples", "8", "--per-example", "30"]


def test_fuzz_every_function(asan_built):
    script = str(ROOT / "tests" / "fuzz" / "fuzz_bindings.py")
    procs = [subprocess.Popen([sys.executable, script, *ARGS, "--shard", "%d/%d" % (i, SHARDS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=asan_python_env(), cwd=str(ROOT))
             for i in range(SHARDS)]
    calls = 0
    problems = []
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=600)
        rep = sanitizer_report(err)
        if p.returncode != 0 or rep:
            problems.append("shard %d: exit %d\n--- stdout\n%s\n--- stderr\n%s"
                            % (i, p.returncode, out[-6000:], rep or err[-6000:]))
        m = re.search(r"^calls (\d+)$", out, re.M)
        calls += int(m.group(1)) if m else 0
        print("shard %d:\n%s" % (i, out))
    assert not problems, "\n\n".join(problems)
    assert calls >= MIN_CALLS, "only %d calls" % calls


def test_a_crash_is_seen(asan_built):
    """The harness's own check: a wild read in this environment is reported
    and fails the process (so a quiet run means something)."""
    code = "import ctypes, cubind.driver; ctypes.string_at(8)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=asan_python_env(), timeout=120)
    assert p.returncode != 0
    assert sanitizer_report(p.stderr), p.stderr[-3000:]
