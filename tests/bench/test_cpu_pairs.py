# SPDX-License-Identifier: Apache-2.0
"""bench/cpu_pairs.c, the probe that finds which CPUs share a physical core
for ft-threads.sh, and ft_threads.py's FT_CPUS that takes its order: what
they print and refuse, never how fast (`ninja bench_sources` builds the
probe)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = ROOT / "build" / "bench" / "cpu_pairs"


def probe(*args, check=True):
    if not PROBE.exists():
        pytest.skip("build/bench/cpu_pairs not built (ninja bench_sources)")
    p = subprocess.run([str(PROBE), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def lines(p):
    *objects, order = p.stdout.strip().splitlines()
    return [json.loads(o) for o in objects], order


def test_probe_lists_every_cpu_once_in_groups_and_order():
    allowed = sorted(os.sched_getaffinity(0))
    objects, order = lines(probe("--ms", "2"))
    assert [o["cpu"] for o in objects if "cpu" in o] == allowed
    pairs = [tuple(o["pair"]) for o in objects if "pair" in o]
    assert pairs == [(a, b) for i, a in enumerate(allowed) for b in allowed[i + 1:]]
    assert all(o["share"] > 0 for o in objects if "pair" in o)
    groups = [o["groups"] for o in objects if "groups" in o]
    assert len(groups) == 1 and sorted(c for g in groups[0] for c in g) == allowed
    assert sorted(map(int, order.split(","))) == allowed


def test_groups_join_pairs_below_the_threshold_and_order_one_per_group_first(tmp_path):
    # CPUs 0 and 4, 1 and 5 share cores, and 5 and 7 (so 1, 5, 7 one group);
    # 2, 3 and 6 are alone; one pair sits exactly at the threshold (not
    # joined) and another line of the file is not the probe's (skipped)
    saved = tmp_path / "pairs.json"
    rows = [{"cpu": c, "solo_mloops_per_s": 800.0} for c in range(8)]
    rows += [{"pair": [0, 4], "share": 0.52}, {"pair": [1, 5], "share": 0.61},
             {"pair": [5, 7], "share": 0.55}, {"pair": [2, 3], "share": 0.8},
             {"pair": [0, 1], "share": 0.99}, {"note": "skipped"}]
    saved.write_text("".join(json.dumps(r) + "\n" for r in rows) + "0,1,2,3\n")
    objects, order = lines(probe("--from", str(saved)))
    assert objects == [{"groups": [[0, 4], [1, 5, 7], [2], [3], [6]], "threshold": 0.8}]
    assert order == "0,1,2,3,6,4,5,7"
    objects, order = lines(probe("--from", str(saved), "--threshold", "0.9"))
    assert objects[0]["groups"] == [[0, 4], [1, 5, 7], [2, 3], [6]]
    assert order == "0,1,2,6,3,4,5,7"


@pytest.mark.parametrize("text", [
    '{"pair": [0, 1], "share": 0.5}\n',  # a pair of CPUs no "cpu" line gave
    '{"cpu": 0}\n{"cpu": 0}\n',  # a CPU twice
    '{"cpu": 0}\n{"pair": [0, 0], "share": 0.5}\n',  # a CPU paired with itself
])
def test_from_refuses_what_no_probe_printed(tmp_path, text):
    saved = tmp_path / "bad.json"
    saved.write_text(text)
    p = probe("--from", str(saved), check=False)
    assert p.returncode == 1 and "not a cpu_pairs output" in p.stderr and not p.stdout


def test_scale_gives_c_bench_lines_pinned_up_to_its_cpus_and_unpinned():
    first = min(os.sched_getaffinity(0))
    objects, last = lines(probe("--scale", str(first), "--rounds", "2", "--ms", "2"))
    objects.append(json.loads(last))
    assert [o["threads"] for o in objects] == [1]  # one CPU: no row of 2 threads pinned
    objects, last = lines(probe("--scale", "any", "--rounds", "3", "--ms", "2"))
    objects.append(json.loads(last))
    assert [o["threads"] for o in objects] == [1, 2, 4, 8]
    for o in objects:
        assert o["case"] == "threads_spin_no_driver" and o["status"] == "ok"
        assert len(o["rounds"]) == len(o["cpu_shares"]) == len(o["steal_shares"]) == 3
        assert min(o["steal_shares"]) >= 0
        assert o["mcalls_per_s"] == max(o["rounds"]) > 0


@pytest.mark.parametrize("args", [["--ms"], ["--ms", "0"], ["--rounds", "2.5"], ["--rounds", "65"],
                                  ["--scale", "0,x"], ["--scale", ""], ["--threshold", "-1"], ["--what", "1"]])
def test_bad_arguments_get_the_usage(args):
    p = probe(*args, check=False)
    assert p.returncode == 2 and p.stderr.startswith("usage: cpu_pairs") and not p.stdout


def test_ft_threads_pins_in_ft_cpus_order_and_refuses_another_set():
    allowed = sorted(os.sched_getaffinity(0))
    script = str(ROOT / "bench" / "ft_threads.py")
    given = ",".join(map(str, allowed[::-1]))
    p = subprocess.run([sys.executable, script, "--cpus"], capture_output=True, text=True,
                       env=dict(os.environ, FT_CPUS=given), timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == given, p.stderr
    p = subprocess.run([sys.executable, script, "--cpus"], capture_output=True, text=True,
                       env=dict(os.environ, FT_CPUS=given + ",%d" % (max(allowed) + 1)), timeout=60)
    assert p.returncode != 0 and "FT_CPUS" in p.stderr
