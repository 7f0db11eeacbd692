# SPDX-License-Identifier: Apache-2.0
"""Summary of scripts/gpu-run upstream (and of the upstream part of
scripts/gpu-run nvrtc): reads the JUnit XML of the run on
cuda.bindings and of the run on cubind and prints, per module, passed /
failed / skipped, then every test that passes on cuda.bindings but not on
cubind (with its first message line), and the count "N of M". Exits 1
when a test passes on cuda.bindings only, 2 when none passes there
(nothing was compared: a run that collected no test is no success).

    python3 tests/gpu/upstream_summary.py REFERENCE.xml CUBIND.xml"""
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    """{test id: (outcome, message)} of one JUnit XML file."""
    result = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = "%s::%s" % (case.get("classname", ""), case.get("name", ""))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = "skipped" if child.tag == "skipped" else "failed"
                message = (child.get("message") or child.text or "").strip().splitlines()[:1]
                message = message[0] if message else ""
                break
        result[name] = (outcome, message)
    return result


def main(ref_path, ours_path):
    ref, ours = outcomes(ref_path), outcomes(ours_path)
    for label, runs in (("cuda.bindings", ref), ("cubind", ours)):
        counts = {k: sum(1 for o, _ in runs.values() if o == k) for k in ("passed", "failed", "skipped")}
        print("%s: %d passed, %d failed, %d skipped" % (label, counts["passed"], counts["failed"],
                                                         counts["skipped"]))
    passing = sorted(t for t, (o, _) in ref.items() if o == "passed")
    lost = [t for t in passing if ours.get(t, ("missing", ""))[0] != "passed"]
    for t in lost:
        outcome, message = ours.get(t, ("missing", "not run on cubind"))
        print("passes on cuda.bindings, %s on cubind: %s  %s" % (outcome, t, message[:160]))
    if not passing:
        # nothing collected (a wrong path, say): no comparison, not a success
        print("upstream: no test passed on cuda.bindings, so nothing was compared")
        return 2
    print("upstream: %d of the %d tests that pass on cuda.bindings pass on cubind"
          % (len(passing) - len(lost), len(passing)))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
