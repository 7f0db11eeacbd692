# SPDX-License-Identifier: Apache-2.0
"""The conversion differential, replayed: every probe of
tools/compare_conversions.py run on cubind (the fake driver) against what
cuda.bindings 13.3.1 did with the same probe on the GPU machine
(tests/data/conversions-cuda-bindings-13.3.1.json.gz, recorded there with the
same tool). A probe differs when its outcome differs (accepted, or the
exception's type) or, for a struct field or a constructor, when the value
that arrived differs. Every difference must be explained by a row of the
table in docs/compatibility.md ("Argument conversions"): 0 unexplained.

Function probes compare outcomes only: the fake driver's answers (device
count, attribute values, sizes) are not the H200's, and the conversion a
function uses is the one the fields and constructors show by value."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "data" / "conversions-cuda-bindings-13.3.1.json.gz"
DOC = ROOT / "docs" / "compatibility.md"
sys.path.insert(0, str(ROOT / "tools"))
import compare_conversions as cc  # noqa: E402
import conversions_explain as ce  # noqa: E402


def explanations():
    return ce.explanations(DOC.read_text())


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    if not RECORD.exists():
        pytest.skip("no recorded cuda.bindings conversions (%s)" % RECORD.name)
    out = tmp_path_factory.mktemp("conv") / "cubind.json"
    # a fresh interpreter: the tool forks, which a process whose fake
    # driver already runs threads must not do
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "compare_conversions.py"),
                           "--impl", "cubind", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return cc.load(RECORD), cc.load(out)


def test_every_difference_is_explained(records):
    theirs, ours = records
    rows = explanations()
    calls = ce.call_targets(theirs, ours)
    counts, diffs, only = cc.compare(theirs, ours, lambda pid: pid.split("=", 1)[0] not in calls)
    unexplained = []
    for pid, kind, a, b in diffs:
        with_value = a[0] == b[0]
        if not ce.explained(pid, kind, a, b, rows, with_value, ce.is_call_probe(pid, calls)):
            unexplained.append("%s [%s]: cuda.bindings %s, cubind %s"
                               % (pid, kind, ce.describe(*a, with_value),
                                  ce.describe(*b, with_value)))
    assert not unexplained, "%d unexplained differences:\n%s" % (
        len(unexplained), "\n".join(unexplained[:60]))
    # the replay reaches most of the record's targets (the rest: fields of
    # CUDA 13.3 that 13.0's structs lack)
    targets = {t["target"] for t in theirs["targets"]}
    common = targets & {t["target"] for t in ours["targets"]}
    assert len(common) > 0.9 * len(targets)


def test_every_explanation_is_used(records):
    """A row that explains nothing is stale: the table stays true. A row
    none of whose probes this replay made (numpy's, without numpy) is not
    judged here."""
    theirs, ours = records
    rows = explanations()
    calls = ce.call_targets(theirs, ours)
    _, diffs, _ = cc.compare(theirs, ours, lambda pid: pid.split("=", 1)[0] not in calls)
    used = ce.rows_used(diffs, rows, calls)
    a, b = cc.probes_of(theirs), cc.probes_of(ours)
    replayed = [(pid.split("=", 1), a[pid][0]) for pid in set(a) & set(b)]
    applicable = {i for i, (k, t, v, _, _, _) in enumerate(rows)
                  if any(ce.matches(kind, k) and ce.target_matches(target, t, target in calls)
                         and ce.matches(label, v)
                         for (target, label), kind in replayed)}
    assert [r[5] for i, r in enumerate(rows) if i in applicable and i not in used] == []


def test_no_probe_crashed_on_cubind(records):
    _, ours = records
    crashed = [pid for pid, (_, outcome, _) in cc.probes_of(ours).items()
               if outcome.startswith(("crash", "setup"))]
    assert crashed == []
