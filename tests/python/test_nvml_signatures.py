# SPDX-License-Identifier: Apache-2.0
"""tools/compare_signatures.py on cubind.nvml: every function of
cuda.bindings.nvml 13.3.1 that the module binds takes cuda.bindings'
parameters, in order (an optional trailing count or length aside), but
the few below, each named with its reason in docs/compatibility.md. The
built module and the committed stub (out/nvml.pyi) agree."""
import importlib.util
import re

from conftest import ROOT

spec = importlib.util.spec_from_file_location("compare_signatures",
                                              ROOT / "tools" / "compare_signatures.py")
compare_signatures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_signatures)

# The differences left with CUDA 12.4's nvml.h, and why (docs/compatibility.md).
REMAINING = {
    # 12.4's nvmlVgpuPlacementList_v1_t has no mode field (13.0's v2 has)
    "device_get_vgpu_type_creatable_placements": "(device, vgpu_type_id)",
    "device_get_vgpu_type_supported_placements": "(device, vgpu_type_id)",
}


def differences(ours):
    ref = compare_signatures.json.loads(
        (ROOT / "tests" / "data" / "cuda_bindings_nvml_13.3.1.json").read_text())
    return compare_signatures.compare(ours, ref)


def test_only_the_documented_signatures_differ():
    result = differences(compare_signatures.module_parameters("nvml"))
    assert {k: v[0] for k, v in result["differ"].items()} == REMAINING, result["differ"]
    assert result["matched"] >= 290, result["matched"]
    doc = (ROOT / "docs" / "compatibility.md").read_text()
    for name in REMAINING:
        assert re.search(r"`nvml\.%s[`(]" % name, doc), name


def test_the_stub_says_the_same():
    built = differences(compare_signatures.module_parameters("nvml"))
    stub = differences(compare_signatures.stub_parameters(ROOT / "out" / "nvml.pyi"))
    assert stub == built


def test_a_differing_signature_is_found():
    """The comparison itself: a missing parameter, a renamed one and a
    required extra one differ; an optional extra one does not."""
    ref = {"functions": {"f": {"signature": "(device, mode)"},
                         "g": {"signature": "(device)"},
                         "h": {"signature": "(device)"},
                         "k": {"signature": "(device)"}}}
    ours = {"f": [("device", False)], "g": [("dev", False)],
            "h": [("device", False), ("size", False)],
            "k": [("device", False), ("length", True)]}
    result = compare_signatures.compare(ours, ref)
    assert sorted(result["differ"]) == ["f", "g", "h"] and result["matched"] == 1


def test_every_cufile_function_takes_cuda_bindings_parameters():
    """cubind.cufile (and its stub) against cuda.bindings.cufile 13.3.1:
    no bound function's parameters differ. Before the struct-addresses
    rule, driver_get_properties took no `props` (cuda.bindings fills the
    caller's struct at that address)."""
    ref = compare_signatures.json.loads(
        (ROOT / "tests" / "data" / "cuda_bindings_cufile_13.3.1.json").read_text())
    for ours in (compare_signatures.module_parameters("cufile"),
                 compare_signatures.stub_parameters(ROOT / "out" / "cufile.pyi")):
        result = compare_signatures.compare(ours, ref)
        assert result["differ"] == {} and result["matched"] >= 25, result
