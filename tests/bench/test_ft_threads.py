# SPDX-License-Identifier: Apache-2.0
"""bench/ft_threads.py on the fake driver, on the free-threaded interpreter
./configure found (skipped without one): a tiny run (FT_SCALE) of every case
gives a row per case and pin mode, each sharing case beside its twin, and
c_bench's threads rows (FT_C_JSON) join the same table with their 8 / 1
ratio. What it produces, never how fast."""
import json
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_threaded_python():
    config = ROOT / "build" / "config.ninja"
    for line in config.read_text().splitlines() if config.exists() else []:
        if line.startswith("pythons = "):
            for py in line.split(" = ", 1)[1].split():
                out = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_config_var('Py_GIL_DISABLED'))"],
                                     capture_output=True, text=True)
                if out.stdout.strip() == "1":
                    return py
    return None


def test_every_case_has_its_rows_and_c_joins_the_table(tmp_path):
    py = free_threaded_python()
    if not py:
        pytest.skip("no free-threaded interpreter configured")
    ptx = tmp_path / "kernels.ptx"
    ptx.write_bytes(b"fake image with empty\0")
    # three rounds of c_bench: 8 / 1 per round 8.0, 4.0 and 2.0 (best 0.5 at
    # one thread, 4.0 at eight)
    c_rows = [{"impl": "c", "case": "threads_launch_empty_kernel", "status": "ok", "threads": t,
               "calls_per_thread": 10, "mcalls_per_s": 0.5 * t, "cpu_share": 1.0,
               "rounds": [0.5 * t, 0.25 * t, 0.5 * t] if t < 8 else [4.0, 1.0, 1.0],
               "cpu_shares": [1.0, 0.5, 1.0]} for t in (1, 2, 4, 8)]
    (tmp_path / "c.json.unpinned").write_text("".join(json.dumps(r) + "\n" for r in c_rows))
    env = dict(os.environ, FT_SCALE="0.0002", FT_ROUNDS="1", FT_PIN="unpinned",
               FT_C_JSON=str(tmp_path / "c.json"),
               PYTHONPATH=str(ROOT / "build" / "python"),
               CUBIND_LIBCUDA=str(ROOT / "build" / "fakecuda" / "libcuda.so.1"))
    p = subprocess.run([py, str(ROOT / "bench" / "ft_threads.py"), str(ptx)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    table = [line for line in p.stdout.splitlines() if line.startswith("| ") and "[" in line]
    names = [line.split(" | ")[0][2:] for line in table]
    for face in ("cubind.driver", "cubind.cu"):
        for case in ("f(A, dev) local f, %s dev", "module.f(A, dev), %s dev",
                     "module.f(module.CUdevice_attribute.X, dev), %s dev"):
            own, shared = ("%s %s [unpinned]" % (face, case % w) for w in ("own", "shared"))
            assert names.index(shared) == names.index(own) + 1, names
        assert names.index("%s module.cuCtxGetCurrent() [unpinned]" % face) == \
            names.index("%s cuCtxGetCurrent() local f [unpinned]" % face) + 1
        assert names.index("%s module.cuLaunchKernel, shared CUfunction [unpinned]" % face) == \
            names.index("%s module.cuLaunchKernel, own CUfunction [unpinned]" % face) + 1
    assert names.index("cubind.launch, shared CUfunction [unpinned]") == \
        names.index("cubind.launch, own CUfunction [unpinned]") + 1
    assert "baseline: len(tuple), no cubind [unpinned]" in names
    c_line = table[names.index("C threads_launch_empty_kernel [unpinned]")]
    # best 4.0 / 0.5; per round 4.0/0.5, 1.0/0.25, 1.0/0.5: median 4.00 (2.00-8.00);
    # lowest CPU share at eight threads 0.5
    assert re.search(r"\| 8\.00x \| 4\.00x \(2\.00-8\.00\) \| 1/3 \| 0\.50 \|", c_line), c_line
    assert not any("[pinned]" in n for n in names)


def test_the_floor_runs_beside_every_call_case_round_by_round(tmp_path):
    """With the do-nothing floor importable (built here for the interpreter,
    as ft-threads.sh builds it), each call case's runs are each followed by
    the floor's on as many threads: its JSON lines carry the floor's rate
    per round, and the table's last two columns are the floor's 8 / 1 per
    round and the case's over it, round by round. Launch rows have C's
    launches beside them instead, so no floor."""
    py = free_threaded_python()
    if not py:
        pytest.skip("no free-threaded interpreter configured")
    include, suffix = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['include']);"
                   "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
        capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-std=c11", "-O2", "-fPIC", "-shared", "-I" + str(ROOT / "runtime" / "include"),
                    "-I" + include, str(ROOT / "bench" / "floor_ext.c"),
                    "-o", str(tmp_path / ("_bench_floor" + suffix))], check=True)
    ptx = tmp_path / "kernels.ptx"
    ptx.write_bytes(b"fake image with empty\0")
    env = dict(os.environ, FT_SCALE="0.0002", FT_ROUNDS="3", FT_PIN="unpinned", FT_CASES="Current",
               PYTHONPATH=os.pathsep.join([str(ROOT / "build" / "python"), str(tmp_path)]),
               CUBIND_LIBCUDA=str(ROOT / "build" / "fakecuda" / "libcuda.so.1"))
    p = subprocess.run([py, str(ROOT / "bench" / "ft_threads.py"), str(ptx)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    runs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith('{"impl"')]
    cases = sorted({r["case"] for r in runs})
    assert cases == sorted("%s %s [unpinned]" % (face, c) for face in ("cubind.driver", "cubind.cu")
                           for c in ("cuCtxGetCurrent() local f", "module.cuCtxGetCurrent()"))
    for r in runs:
        assert len(r["floor_beside_mcalls_per_s"]) == len(r["mcalls_per_s"]) == 3, r
        assert len(r["steal_share"]) == 3 and min(r["steal_share"]) >= 0, r
    for case in cases:
        rate = {r["threads"]: r for r in runs if r["case"] == case}
        own = sorted(a / b for a, b in zip(rate[8]["mcalls_per_s"], rate[1]["mcalls_per_s"]))
        floor = [a / b for a, b in zip(rate[8]["floor_beside_mcalls_per_s"], rate[1]["floor_beside_mcalls_per_s"])]
        relative = sorted(a / b / f for a, b, f in zip(rate[8]["mcalls_per_s"], rate[1]["mcalls_per_s"], floor))
        row = next(line for line in p.stdout.splitlines() if line.startswith("| %s |" % case))
        cells = row.split(" | ")
        # the JSON's rates have 6 significant digits, the table's ratios 2 places
        for cell, values in ((cells[6], own), (cells[9], sorted(floor)), (cells[10], relative)):
            m = re.fullmatch(r"([\d.]+)x \(([\d.]+)-([\d.]+)\)", cell)
            assert m, row
            for got, want in zip(map(float, m.groups()[:3]), (values[1], values[0], values[2])):
                assert abs(got - want) <= 0.001 * want + 0.006, (row, values)
    env["FT_CASES"] = "cuLaunchKernel, shared"
    p = subprocess.run([py, str(ROOT / "bench" / "ft_threads.py"), str(ptx)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert not any("floor_beside" in line for line in p.stdout.splitlines())
    rows = [line for line in p.stdout.splitlines() if line.startswith("| cubind")]
    assert len(rows) == 2 and all(row.split(" | ")[9:11] == ["", ""] for row in rows), rows
