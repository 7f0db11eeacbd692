# SPDX-License-Identifier: Apache-2.0
"""bench/paired.py's report from synthetic records: no driver, no build.

A paired run with --base alternates this build's processes (side "this")
with a base build's (side "base"). The report's tables before the A/B
section must be this build's alone, exactly as a run without a base renders
them, and the A/B section must give each side's median per-process ratio and
the change of the median. The times below are chosen so that every median
and change is known by hand.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import paired  # noqa: E402

# launch_small_kernel's ns per process: cuda.bindings 1000 and cuda.core 2000
# everywhere, so cubind's ratios are its ns / 1000 and / 2000.
THIS = [{"cubind.driver": 650, "cubind.cu": 690},
        {"cubind.driver": 660, "cubind.cu": 700},
        {"cubind.driver": 670, "cubind.cu": 710}]
BASE = [{"cubind.driver": 630, "cubind.cu": 720},
        {"cubind.driver": 640, "cubind.cu": 720},
        {"cubind.driver": 650, "cubind.cu": 730}]
COMMON = {"c": 400, "floor": 100, "thin": 550, "cuda.bindings": 1000, "cuda.core": 2000}


def process_records(k, side, times):
    recs = [{"case": "meta", "impl": "cubind", "cubind_file": "%s/cubind/__init__.py" % side},
            {"case": "meta", "impl": "cubind.driver", "driver_version": 12080}]
    for impl, ns in dict(COMMON, **times).items():
        recs.append({"case": "launch_small_kernel", "impl": impl, "status": "ok", "n": 100,
                     "ns": ns, "reps": [ns]})
    # ctx_get_current has no cuda.core form: its cuda.core rows must be left out.
    for impl, ns in (("c", 10), ("cubind.driver", 40), ("cuda.bindings", 100)):
        recs.append({"case": "ctx_get_current", "impl": impl, "status": "ok", "n": 100,
                     "ns": ns, "reps": [ns]})
    recs.append({"case": "ctx_get_current", "impl": "cuda.core", "status": "n/a",
                 "reason": "no equivalent in %s" % side})
    return [dict(r, process=k, side=side) for r in recs]


def meta(base):
    rec = {"paired": "meta", "processes": 6 if base else 3, "reps": 1,
           "command": "paired.py run", "cubind_form": "plain"}
    return dict(rec, base="base") if base else rec


def sided_log():
    """Six processes alternating as `paired.py run --base` runs them."""
    records = [meta(True)]
    for k in range(6):
        side = paired.process_side(k, "base")
        records += process_records(k, side, (THIS if side == "this" else BASE)[k // 2])
    return records


def unsided_log():
    """This build's three processes as a run without --base logged them:
    no side key, no base in the meta record."""
    records = [meta(False)]
    for k, times in enumerate(THIS):
        records += [{key: v for key, v in r.items() if key != "side"}
                    for r in process_records(k, "this", times)]
    return records


def ab_rows(report):
    """{(case, measure): [this, base, change]} of the A/B table (the
    interval column: ab_intervals)."""
    section = report.split("### A/B against the base build", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] != "case":
            rows[(cells[0], cells[1])] = cells[2:5]
    return rows


def ab_intervals(report):
    """{(case, measure): interval cell} of the A/B table."""
    section = report.split("### A/B against the base build", 1)[1]
    return {tuple(c.strip() for c in line.strip("|").split("|")[:2]):
            line.strip("|").split("|")[5].strip()
            for line in section.splitlines()
            if line.startswith("| ") and line.count("|") == 7 and not line.startswith("| case")}


def test_processes_alternate_this_build_first():
    assert [paired.process_side(k, "/b") for k in range(5)] == \
        ["this", "base", "this", "base", "this"]
    assert [paired.process_side(k, None) for k in range(3)] == ["this"] * 3


def test_base_children_find_the_base_build_first(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["this", "bench"]))
    env = paired.child_env("base", "/b")
    assert env["PYTHONPATH"] == os.pathsep.join(["/b", "this", "bench"])
    assert paired.child_env("this", "/b") is None
    monkeypatch.delenv("PYTHONPATH")
    assert paired.child_env("base", "/b")["PYTHONPATH"] == "/b"


def test_origin_check_names_a_process_on_the_wrong_build(tmp_path):
    base = tmp_path / "base"
    (base / "cubind").mkdir(parents=True)
    inside = str(base / "cubind" / "__init__.py")
    outside = str(tmp_path / "this" / "cubind" / "__init__.py")

    def origin(path):
        return [{"case": "meta", "impl": "cubind", "cubind_file": path}]
    assert paired.origin_error(1, "base", origin(inside), str(base)) is None
    assert paired.origin_error(0, "this", origin(outside), str(base)) is None
    why = paired.origin_error(1, "base", origin(outside), str(base))
    assert why and "process 1 (base)" in why and "outside --base" in why
    why = paired.origin_error(0, "this", origin(inside), str(base))
    assert why and "process 0 (this)" in why and "inside --base" in why
    # A directory that only shares a prefix with the base is not inside it.
    assert paired.origin_error(2, "this", origin(str(tmp_path / "base2" / "cubind" / "x.py")),
                               str(base)) is None
    why = paired.origin_error(3, "base", [{"case": "meta", "impl": "cubind", "cubind_file": None,
                                           "error": "ImportError: no cubind"}], str(base))
    assert why and "ImportError: no cubind" in why
    assert "reported nothing" in paired.origin_error(3, "base", [], str(base))


def test_ab_section_gives_each_sides_median_ratio_and_the_change():
    report = paired.render(sided_log())
    rows = ab_rows(report)
    assert rows[("launch_small_kernel", "cubind.driver / cuda.bindings")] == \
        ["0.660× (0.650–0.670)", "0.640× (0.630–0.650)", "+3.1%"]
    assert rows[("launch_small_kernel", "cubind.driver / cuda.core")] == \
        ["0.330× (0.325–0.335)", "0.320× (0.315–0.325)", "+3.1%"]
    assert rows[("launch_small_kernel", "cubind.cu / cuda.bindings")] == \
        ["0.700× (0.690–0.710)", "0.720× (0.720–0.730)", "-2.8%"]
    assert rows[("launch_small_kernel", "cubind.cu / cuda.core")] == \
        ["0.350× (0.345–0.355)", "0.360× (0.360–0.365)", "-2.8%"]
    assert rows[("launch_small_kernel", "cubind.driver ns")] == \
        ["660.0 (650.0–670.0)", "640.0 (630.0–650.0)", "+3.1%"]
    assert rows[("ctx_get_current", "cubind.driver / cuda.bindings")] == \
        ["0.400× (0.400–0.400)", "0.400× (0.400–0.400)", "+0.0%"]
    # No cubind.cu and no cuda.core in ctx_get_current: no rows for them.
    assert set(rows) == {("launch_small_kernel", m) for m in (
        "cubind.driver / cuda.bindings", "cubind.driver / cuda.core",
        "cubind.cu / cuda.bindings", "cubind.cu / cuda.core", "cubind.driver ns")} | {
        ("ctx_get_current", "cubind.driver / cuda.bindings"),
        ("ctx_get_current", "cubind.driver ns")}
    section = report.split("### A/B against the base build", 1)[1]
    assert "3 processes of this build and 3 of the base build" in section
    assert "- ctx_get_current cuda.core: no equivalent in base" in section
    assert report.count("| case | measure | this build | base build | change | 95 % interval |") == 1


def test_ab_interval_brackets_the_change_within_the_extreme_ratios():
    report = paired.render(sided_log())
    cell = ab_intervals(report)[("launch_small_kernel", "cubind.driver / cuda.bindings")]
    low, high = (float(x.rstrip("%")) for x in cell.split(" … "))
    # this 0.650-0.670 against base 0.630-0.650: the change of the medians
    # is +3.1 %; no resample can leave [0.650/0.650, 0.670/0.630].
    assert low <= 3.125 <= high
    assert low >= (0.650 / 0.650 - 1) * 100 - 1e-9 and high <= (0.670 / 0.630 - 1) * 100 + 1e-9
    assert low < high
    assert paired.render(sided_log()) == report   # the seed is fixed


def test_ab_interval_of_constant_sides_is_the_change_itself():
    assert paired.ab_interval([2.0, 2.0, 2.0], [1.6, 1.6]) == (25.0, 25.0)
    assert paired.ab_interval([1.0, None], [None]) is None
    assert paired.ab_interval_cell(None) == "—"
    assert paired.ab_interval_cell((-1.25, 2.0)) == "-1.2 … +2.0%"
    # Different seeds draw different resamples of varied sides.
    a, b = [1.0, 1.1, 1.3, 1.2, 0.9], [1.0, 1.05, 0.95, 1.2, 1.1]
    assert paired.ab_interval(a, b, seed=1) != paired.ab_interval(a, b, seed=2)


def test_a_side_without_numbers_shows_a_dash():
    records = [r for r in sided_log() if not (r.get("side") == "base" and
                                              r.get("impl") == "cuda.core")]
    rows = ab_rows(paired.render(records))
    assert rows[("launch_small_kernel", "cubind.driver / cuda.core")] == \
        ["0.330× (0.325–0.335)", "—", "—"]


def test_tables_before_the_ab_section_are_this_builds_alone():
    sided = paired.render(sided_log())
    unsided = paired.render(unsided_log())
    note = ("These are this build's processes only; the base build's (--base) alternate "
            "with them, and the A/B section at the end compares the two.\n\n")
    assert note in sided
    before_ab = sided.split("\n\n### A/B against the base build", 1)[0] + "\n"
    assert before_ab.replace(note, "") == unsided


def test_records_without_sides_render_as_before():
    report = paired.render(unsided_log())
    assert "A/B" not in report and "base" not in report
    lines = report.splitlines()
    assert lines[0] == "## Paired: every implementation in one process"
    assert any(line.startswith("3 processes; in each,") for line in lines)
    # this build's medians only: 660 ns, 0.66x cuda.bindings, 0.33x cuda.core
    assert "| launch_small_kernel | 400.0 | 100.0 | 550.0 | 660.0 | 700.0 | 1000.0 | 2000.0 |" \
        in lines
    assert ("| launch_small_kernel ≤ 0.60× cuda.bindings | 0.60× | 0.66× (0.65–0.67) | "
            "0.70× (0.69–0.71) | 0.50× (0.50–0.50) | 0.55× (0.55–0.55) | 0/3, 0/3 |") in lines
    assert ("| launch_small_kernel ≤ 0.85× cuda.core | 0.85× | 0.33× (0.33–0.34) | "
            "0.35× (0.34–0.35) | 0.25× (0.25–0.25) | 0.28× (0.28–0.28) | 3/3, 3/3 |") in lines
    assert lines[-1] == "- ctx_get_current cuda.core: no equivalent in this"
    # Tagging every record "this" (as run does without --base) changes nothing.
    tagged = [dict(r, side="this") if "process" in r else r for r in unsided_log()]
    assert paired.render(tagged) == report


def test_runs_pooled_by_render_keep_their_processes_apart(tmp_path):
    # Two runs of one command, both numbering their processes 0..5: pooled,
    # each side has 6 processes, not 3 merged ones, and the medians are
    # over all of them (the second run's cubind.driver is 100 ns slower).
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    slower = [dict(r, ns=r["ns"] + 100) if r.get("impl") == "cubind.driver" and "ns" in r
              and r["case"] == "launch_small_kernel" else r for r in sided_log()]
    for path, records in ((first, sided_log()), (second, slower)):
        path.write_text("".join(paired.json.dumps(r) + "\n" for r in records))
    pooled = paired.load_runs([str(first), str(second)])
    assert len({r["process"] for r in pooled if "process" in r}) == 12
    report = paired.render(pooled)
    assert "6 processes of this build and 6 of the base build" in report
    rows = ab_rows(report)
    # this: 650 660 670 750 760 770 -> 710; base: 630 640 650 730 740 750 -> 690
    assert rows[("launch_small_kernel", "cubind.driver ns")] == \
        ["710.0 (650.0–770.0)", "690.0 (630.0–750.0)", "+2.9%"]
    assert paired.main(["render", str(first)]) == 0


def test_a_compressed_run_loads_as_its_plain_twin(tmp_path):
    # results/ keeps raw runs as .jsonl.gz: the same lines, gzip-compressed,
    # load to the same records and render the same report.
    import gzip
    plain, packed = tmp_path / "run.jsonl", tmp_path / "run.jsonl.gz"
    text = "".join(paired.json.dumps(r) + "\n" for r in sided_log())
    plain.write_text(text)
    with gzip.open(packed, "wt") as f:
        f.write(text)
    assert paired.load_runs([str(packed)]) == paired.load_runs([str(plain)])
    assert paired.render(paired.load_runs([str(packed)])) == paired.render(sided_log())
