# SPDX-License-Identifier: Apache-2.0
"""The whole Python test suite (tests/python) runs again on the ASan+UBSan
build of the extensions (tests/fuzz/build_asan.py), the system Python's:
every function shape, structs, callbacks and shutdown, the packer's every
kernelParams form (plain values, (values, ctypes types), heap paths past
the inline bounds, held buffer views), threads, subinterpreters."""
import subprocess
import sys

from fuzzsupport import ROOT, asan_python_env, sanitizer_report


def test_python_tests_pass_under_asan_and_ubsan(asan_built):
    env = asan_python_env()
    # what runs is the sanitized build
    probe = subprocess.run([sys.executable, "-c", "import cubind.driver as d; print(d.__file__)"],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert probe.returncode == 0 and "/asan/" in probe.stdout, probe.stdout + probe.stderr
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/python"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    rep = sanitizer_report(p.stdout + p.stderr)
    assert p.returncode == 0 and not rep, "exit %d\n%s\n%s" % (p.returncode, p.stdout[-3000:],
                                                               rep or p.stderr[-3000:])
