# SPDX-License-Identifier: Apache-2.0
"""tests/gpu/upstream_summary.py, which summarises the run of cuda-python's
own driver tests on the GPU machine, on made-up JUnit XML."""
import subprocess
import sys

from conftest import ROOT

CASE = '<testcase classname="test_cuda" name="%s">%s</testcase>'


def junit(tmp_path, name, cases):
    path = tmp_path / name
    path.write_text('<testsuites><testsuite>%s</testsuite></testsuites>'
                    % "".join(CASE % c for c in cases))
    return str(path)


def test_summary_counts_what_passes_on_both(tmp_path):
    ref = junit(tmp_path, "ref.xml", [("a", ""), ("b", ""), ("c", '<skipped message="no"/>'),
                                      ("d", '<failure message="boom">x</failure>')])
    ours = junit(tmp_path, "ours.xml", [("a", ""), ("b", '<failure message="differs">y\nmore</failure>'),
                                        ("c", ""), ("d", "")])
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu" / "upstream_summary.py"), ref, ours],
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "cuda.bindings: 2 passed, 1 failed, 1 skipped"
    assert lines[1] == "cubind: 3 passed, 1 failed, 0 skipped"
    assert lines[2] == "passes on cuda.bindings, failed on cubind: test_cuda::b  differs"
    assert lines[-1] == "upstream: 1 of the 2 tests that pass on cuda.bindings pass on cubind"
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu" / "upstream_summary.py"), ref, ref],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.splitlines()[-1].startswith("upstream: 2 of the 2")


def test_a_run_that_compared_nothing_fails(tmp_path):
    """No test passing on cuda.bindings (none collected: a wrong package
    path) is exit 2 and says so, never "0 of the 0 ... pass"."""
    for cases in ([], [("a", '<skipped message="no"/>')]):
        ref = junit(tmp_path, "ref.xml", cases)
        p = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu" / "upstream_summary.py"),
                            ref, ref], capture_output=True, text=True)
        assert p.returncode == 2, (cases, p.stdout, p.stderr)
        assert p.stdout.splitlines()[-1] == \
            "upstream: no test passed on cuda.bindings, so nothing was compared"
