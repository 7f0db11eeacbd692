# SPDX-License-Identifier: Apache-2.0
"""Explaining the differences of two conversion records
(tools/compare_conversions.py): the table of docs/compatibility.md
between its markers `<!-- conversions-explained -->` and
`<!-- /conversions-explained -->` says, per row, which probes differ on
purpose (kind, target and value label as glob patterns; cuda.bindings'
and cubind's outcome as patterns of `outcome` or, when both took the
value, `ok=<value read back>`; several patterns in a cell separated by
", "). The replay test (tests/python/test_conversions_replay.py) and the
GPU run (`compare_conversions.py --compare A B --explain DOC`) both judge
with it.
"""
import fnmatch
import json

import compare_conversions as cc

START, END = "<!-- conversions-explained -->", "<!-- /conversions-explained -->"


def explanations(doc_text):
    """[(kinds, targets, values, theirs, ours, why)] of the table: the
    first five tuples of glob patterns."""
    start, end = doc_text.index(START), doc_text.index(END)
    rows = []
    for line in doc_text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[0] in ("kind", "") or set(cells[0]) <= set("-: "):
            continue
        pats = [tuple(p.strip().strip("`") for p in c.split("`, `")) for c in cells[:5]]
        rows.append((*pats, cells[5]))
    return rows


def describe(outcome, value, with_value):
    return "%s=%s" % (outcome, json.dumps(value)) if with_value else outcome


def matches(text, patterns):
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)


def target_matches(target, patterns, call):
    """A target against a row's target patterns: a pattern that starts
    with "call " or "field " matches only a function's parameter (call)
    or only what is none (a field, a constructor, a maker): the runtime's
    struct classes and functions share the prefix "cuda"."""
    for p in patterns:
        if p.startswith(("call ", "field ")):
            if p.startswith("call ") == call and fnmatch.fnmatchcase(target, p.split(" ", 1)[1]):
                return True
        elif fnmatch.fnmatchcase(target, p):
            return True
    return False


def explained(pid, kind, theirs, ours, rows, with_value, call=False):
    """Whether a row explains the difference of probe pid (theirs and ours:
    [outcome, value]; with_value: whether the values are compared; call:
    whether its target is a function's parameter)."""
    target, label = pid.split("=", 1)
    a, b = describe(*theirs, with_value), describe(*ours, with_value)
    return any(matches(kind, k) and target_matches(target, t, call) and matches(label, v)
               and matches(a, x) and matches(b, y) for k, t, v, x, y, _ in rows)


def call_targets(*recs):
    """The targets of the records that are a function's parameter."""
    return {t["target"] for rec in recs for t in rec["targets"] if cc.is_call(t)}


def is_call_probe(pid, calls):
    return pid.split("=", 1)[0] in calls


def rows_used(diffs, rows, calls=frozenset()):
    """The indexes of the rows that explain at least one difference."""
    used = set()
    for pid, kind, a, b in diffs:
        for i, row in enumerate(rows):
            if explained(pid, kind, a, b, [row], a[0] == b[0], is_call_probe(pid, calls)):
                used.add(i)
    return used


def judge(theirs, ours, rows, values_of=lambda pid: True):
    """(counts, unexplained): counts[(module key, kind)] = {"probes",
    "same", "explained"}; unexplained: [(pid, kind, theirs, ours)]."""
    calls = call_targets(theirs, ours)
    _, diffs, _ = cc.compare(theirs, ours, values_of)
    a, b = cc.probes_of(theirs), cc.probes_of(ours)
    counts = {}
    for pid in set(a) & set(b):
        c = counts.setdefault((pid.split(":", 1)[0], a[pid][0]),
                              {"probes": 0, "same": 0, "explained": 0})
        c["probes"] += 1
        c["same"] += 1  # corrected below for the differences
    unexplained = []
    for pid, kind, x, y in diffs:
        c = counts[(pid.split(":", 1)[0], kind)]
        c["same"] -= 1
        if explained(pid, kind, x, y, rows, x[0] == y[0], is_call_probe(pid, calls)):
            c["explained"] += 1
        else:
            unexplained.append((pid, kind, x, y))
    return counts, unexplained


def print_judged(counts, unexplained, verbose):
    """The table by module and parameter kind, then (verbose) every
    unexplained difference."""
    print("%-10s %-10s %8s %8s %10s %12s" % ("module", "kind", "probes", "same", "explained",
                                            "unexplained"))
    modules = sorted({m for m, _ in counts})
    for m in modules + ["all"]:
        tot = {"probes": 0, "same": 0, "explained": 0}
        for kind in cc.KINDS:
            keys = [(m, kind)] if m != "all" else [(x, kind) for x in modules]
            c = [counts[k] for k in keys if k in counts]
            if not c:
                continue
            p, s, e = (sum(x[f] for x in c) for f in ("probes", "same", "explained"))
            for f, v in (("probes", p), ("same", s), ("explained", e)):
                tot[f] += v
            print("%-10s %-10s %8d %8d %10d %12d" % (m, kind, p, s, e, p - s - e))
        print("%-10s %-10s %8d %8d %10d %12d" % (m, "all", tot["probes"], tot["same"],
                                                tot["explained"],
                                                tot["probes"] - tot["same"] - tot["explained"]))
    print("unexplained differences: %d" % len(unexplained))
    if verbose:
        for pid, kind, x, y in unexplained:
            w = x[0] == y[0]
            print("%s [%s]: first %s, second %s" % (pid, kind, describe(*x, w), describe(*y, w)))
