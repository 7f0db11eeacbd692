# SPDX-License-Identifier: Apache-2.0
"""Host buffers against byte counts and nested counted structs, fuzzed with
hypothesis under ASan+UBSan (tests/fuzz/fuzz_structs.py does the work, in a
process of its own: libasan must be preloaded). A wrong outcome or a
sanitizer report fails it; on 05a670f the short buffers reached the fake's
copies (a heap-buffer-overflow report) and the nested counts reached it
unchecked (wrong outcomes)."""
import re
import subprocess
import sys

from fuzzsupport import ROOT, asan_python_env, sanitizer_report

EXAMPLES = 400  # per strategy: three strategies, a few seconds in all


def test_fuzz_buffers_and_nested_structs(asan_built):
    script = str(ROOT / "tests" / "fuzz" / "fuzz_structs.py")
    p = subprocess.run([sys.executable, script, "--examples", str(EXAMPLES)],
                       capture_output=True, text=True, env=asan_python_env(), cwd=str(ROOT),
                       timeout=600)
    rep = sanitizer_report(p.stderr)
    print(p.stdout)
    assert p.returncode == 0 and not rep, "exit %d\n%s\n%s" % (p.returncode, p.stdout[-6000:],
                                                               rep or p.stderr[-6000:])
    m = re.search(r"^calls (\d+)$", p.stdout, re.M)
    assert m and int(m.group(1)) >= 3 * EXAMPLES, p.stdout[-2000:]
    # every kind of outcome was reached, so the properties were exercised
    for want in ("cuMemcpyDtoH: ValueError", "cuMemcpyHtoD: None", "cuMemcpy2D: ValueError",
                 "cuMemcpy3D: None", "cuMemcpy2D: TypeError", "extSemSignal: ValueError",
                 "alloc: ValueError", "memOp: None"):
        assert re.search(r"^outcome .*%s \d+$" % re.escape(want), p.stdout, re.M), want
