"""The packer's own tests (tests/python/test_packer.py, and the graph kernel
nodes that keep packed parameters) run again on the ASan+UBSan build of the
extensions (tests/fuzz/build_asan.py): every kernelParams form, plain values
and (values, ctypes types), the heap paths past the inline bounds, buffers
whose views are held, and the threads racing to a first launch."""
import subprocess
import sys

from fuzzsupport import ROOT, asan_python_env, sanitizer_report

TESTS = ["tests/python/test_packer.py", "tests/python/test_graph_kernel_nodes.py"]


def test_packer_tests_pass_under_asan_and_ubsan(asan_built):
    env = asan_python_env()
    # what runs is the sanitized build
    probe = subprocess.run([sys.executable, "-c", "import cubind.driver as d; print(d.__file__)"],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert probe.returncode == 0 and "/asan/" in probe.stdout, probe.stdout + probe.stderr
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    rep = sanitizer_report(p.stdout + p.stderr)
    assert p.returncode == 0 and not rep, "exit %d\n%s\n%s" % (p.returncode, p.stdout[-3000:],
                                                               rep or p.stderr[-3000:])
