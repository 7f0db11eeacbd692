"""Allocation failure: tests/fuzz/nomemory.py under ASan+UBSan (needs
_testcapi.set_nomemory: the system Python 3.11 has it; the 3.13t build has
no test modules, so this runs on the main interpreter only)."""
import subprocess
import sys

import pytest

from fuzzsupport import ROOT, asan_python_env, sanitizer_report


def test_every_allocation_failure_along_call_paths(asan_built):
    try:
        import _testcapi
        _testcapi.set_nomemory
    except (ImportError, AttributeError):
        pytest.fail("%s has no _testcapi.set_nomemory" % sys.executable, pytrace=False)
    # pymalloc stays on (sys.getallocatedblocks counts its blocks).
    env = asan_python_env()
    env.pop("PYTHONMALLOC")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "nomemory.py")],
                       capture_output=True, text=True, env=env, timeout=300)
    print(p.stdout)
    rep = sanitizer_report(p.stderr)
    assert p.returncode == 0 and not rep, "exit %d\n%s\n%s" % (p.returncode, p.stdout,
                                                               rep or p.stderr[-5000:])
