# SPDX-License-Identifier: Apache-2.0
"""tools/compare_reference.py --module runtime against the built
cubind.runtime: how much of cuda.bindings.runtime 13.3.1's surface the
13.0 headers declare and cubind binds (functions bound, listed as not
bound, missing), enums, classes and constants, and that every difference
is named in docs/compatibility.md."""
import pytest

from conftest import ROOT, compare_report
from test_compare_reference import named

DOC = ROOT / "docs" / "compatibility.md"
UNSUPPORTED = ROOT / "out" / "runtime_unsupported.txt"


@pytest.fixture(scope="module")
def report():
    return compare_report("--module", "runtime")


@pytest.fixture(scope="module")
def doc():
    return DOC.read_text()


def listed():
    return {line.split(":", 1)[0] for line in UNSUPPORTED.read_text().splitlines()
            if line and not line.startswith("#")}


def test_functions_bound_listed_missing(report):
    """Of the reference's functions that cuda_runtime_api.h declares, every
    one is bound or listed in out/runtime_unsupported.txt; none is missing."""
    assert report["functions"] >= 280
    assert not report["missing"], report["missing"]
    assert set(report["listed"]) <= listed()
    # only the private export tables (cudaMemcpyBatchAsync is bound since
    # classify's rule for `void *const *` arrays)
    assert report["listed"] == ["cudaGetExportTable"]
    assert report["rate"] >= 0.9, "exact function match rate %.3f" % report["rate"]
    assert len(report["differ"]) <= 1, report["differ"]


def test_enums_classes_constants(report):
    assert report["enums"] >= 75
    assert len(report["enum_differences"]) <= 2
    assert report["classes"] >= 90
    assert report["constants"] >= 85
    assert [n for n, why in report["constant_differences"] if why == "not bound"] == []
    # the macro aliases of an enum are compared as the enum
    assert "cudaStreamAttrID" in report["enums_compared"]
    # every class of the reference the headers declare or #define is there
    # (cudaStreamAttrValue, a macro naming cudaLaunchAttributeValue, too);
    # the differences are fields 13.0 lacks
    assert [n for n, why in report["class_differences"] if not why.startswith("missing attributes")] == []
    assert report["classes"] >= 103


def test_every_difference_is_documented(report, doc):
    names = list(report["params_only"]) + list(report["listed"])
    names += [n for n, _ in report["differ"]]
    names += [n for n, _ in report["enum_differences"]]
    names += [n for n, _ in report["constant_differences"]]
    names += list(report["class_missing_attributes"])
    undocumented = sorted(n for n in set(names) if not named(doc, n))
    assert not undocumented, "differences not named in docs/compatibility.md: %s" % undocumented


def test_unsupported_functions_are_documented(doc):
    """Every function the generator could not bind, with its reason."""
    undocumented = sorted(n for n in listed() if not named(doc, n))
    assert not undocumented, undocumented


def test_generated_files_state_the_runtime_release():
    """The runtime's release macro is CUDART_VERSION (its header has no
    CUDA_VERSION): the generated files and the capsule state its value."""
    import cubind.runtime as rt
    first = UNSUPPORTED.read_text().splitlines()[0]
    assert "(CUDART_VERSION %d)" % rt.CUDART_VERSION in first, first
    assert rt.CUBIND_HEADER_CUDA_VERSION == str(rt.CUDART_VERSION)
    # a library header stating no release says none (not "CUDA_VERSION 0")
    nvrtc = (ROOT / "out" / "nvrtc_unsupported.txt").read_text().splitlines()[0]
    assert "VERSION" not in nvrtc, nvrtc
