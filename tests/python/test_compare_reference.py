# SPDX-License-Identifier: Apache-2.0
"""tools/compare_reference.py against the built cubind.driver: the exact
function match rate stays at least 98%, and every difference it finds is
named in docs/compatibility.md."""
import json
import re

import pytest

from conftest import ROOT, compare_report

REFERENCE = ROOT / "tests" / "data" / "cuda_bindings_driver_13.3.1.json"
DOC = ROOT / "docs" / "compatibility.md"


@pytest.fixture(scope="module")
def report():
    return compare_report("--reference", str(REFERENCE))


@pytest.fixture(scope="module")
def doc():
    return DOC.read_text()


def named(doc, name):
    return re.search(r"(?<![\w.])%s(?!\w)" % re.escape(name), doc) is not None


def test_function_match_rate(report):
    assert report["functions"] >= 400
    assert report["rate"] >= 0.98, "exact function match rate %.3f" % report["rate"]
    assert not report["missing"], "functions not bound: %s" % report["missing"]


def test_every_difference_is_documented(report, doc):
    names = list(report["params_only"]) + list(report["missing"])
    names += [n for n, _ in report["differ"]]
    names += [n for n, _ in report["enum_differences"]]
    names += [n for n, _ in report["constant_differences"]]
    undocumented = sorted(n for n in set(names) if not named(doc, n))
    assert not undocumented, "differences not named in docs/compatibility.md: %s" % undocumented


def test_enum_aliases_are_compared_and_match(report, model):
    # The header's further typedef names of an enum that cuda.bindings also
    # binds (CUstreamAttrID, CUkernelNodeAttrID) are compared like enums.
    reference = json.loads(REFERENCE.read_text())["enums"]
    aliases = {a for e in model["enums"] for a in e["aliases"] if a in reference}
    assert aliases, "no alias of an enum in cuda.h is an enum of the reference"
    assert aliases <= set(report["enums_compared"])
    differing = aliases & {n for n, _ in report["enum_differences"]}
    assert not differing, "enum aliases that differ from cuda.bindings: %s" % sorted(differing)


def test_every_missing_class_attribute_is_documented(report, doc):
    # Each class on a line of the doc that also names each field it lacks.
    lines = doc.splitlines()
    undocumented = []
    for cls, attrs in sorted(report["class_missing_attributes"].items()):
        ok = any(named(line, cls) and all(named(line, a) for a in attrs) for line in lines)
        if not ok:
            undocumented.append("%s (%s)" % (cls, ", ".join(attrs)))
    assert not undocumented, "classes whose missing fields docs/compatibility.md does not " \
                             "name on one line: %s" % undocumented


def test_constants_are_compared(report):
    # The reference's constants that cuda.h defines: all but those of other
    # headers (cudaEGL.h's MAX_PLANES...) are compared.
    assert report["constants"] >= 60
    bound_wrong = [n for n, why in report["constant_differences"] if why == "not bound"]
    assert not bound_wrong, "constants cuda.h defines but cubind.driver lacks: %s" % bound_wrong
