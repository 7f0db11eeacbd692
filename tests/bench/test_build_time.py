# SPDX-License-Identifier: Apache-2.0
"""scripts/build-time.sh (BENCHMARKS.md, "Build time"), run on a made-up
tree whose `configure` writes a two-step build.ninja: each run builds a
fresh copy, the lines carry wall and CPU time and the slowest step, the
summary takes the median, and -k keeps each run's .ninja_log."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "build-time.sh")

CONFIGURE = """#!/bin/sh
# a stand-in: the arguments are recorded, a fresh tree has no build/
[ ! -e build ] || { echo "not a clean tree" >&2; exit 1; }
mkdir build && echo "$*" > build/args
cat > build.ninja <<'NINJA'
rule slow
  command = sleep 0.3 && touch $out
rule quick
  command = touch $out
build build/slow.o: slow
build build/quick.o: quick
NINJA
"""


@pytest.fixture
def tree(tmp_path):
    if not shutil.which("ninja"):
        pytest.skip("ninja is not installed")
    t = tmp_path / "tree"
    t.mkdir()
    (t / "configure").write_text(CONFIGURE)
    os.chmod(t / "configure", 0o755)
    return t


def test_each_run_is_a_clean_timed_build(tree, tmp_path):
    keep = tmp_path / "logs"
    p = subprocess.run(["sh", SCRIPT, "-t", str(tree), "-j", "1", "-j", "2", "-r", "2",
                        "-c", "--user --python x", "-k", str(keep)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    runs = re.findall(r"^j=(\d) run=(\d) wall=([\d.]+) user=([\d.]+) sys=([\d.]+) "
                      r"longest=([\d.]+) \((\S+)\)$", p.stdout, re.M)
    assert [(j, k) for j, k, *_ in runs] == [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]
    for _, _, wall, _, _, longest, step in runs:
        assert step == "build/slow.o" and float(longest) >= 0.3 and float(wall) >= 0.3
    assert len(re.findall(r"^j=\d median wall=[\d.]+ s \(min [\d.]+, max [\d.]+, 2 runs\), "
                          r"median user\+sys=[\d.]+ s$", p.stdout, re.M)) == 2
    assert sorted(os.listdir(keep)) == ["ninja-j%d-run%d.log" % (j, k)
                                        for j in (1, 2) for k in (1, 2)]
    assert not (tree / "build").exists()  # the tree itself is never built in


def test_an_unknown_option_is_refused():
    p = subprocess.run(["sh", SCRIPT, "-x"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "usage: scripts/build-time.sh" in p.stderr
