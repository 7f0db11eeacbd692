# SPDX-License-Identifier: Apache-2.0
"""examples/ (issue 28): each script runs on the test-only fake driver
(tests/run sets CUBIND_LIBCUDA and PYTHONPATH=build/python; the fake runs
the examples' vectorAdd kernel on the host, so they check their results),
and mypy --strict accepts them. On a GPU: scripts/gpu-run examples."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run_example(script, *args):
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                       capture_output=True, text=True, timeout=300, cwd=EXAMPLES)
    return p


def ok(script, *args):
    p = run_example(script, *args)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_vector_add_drop_in():
    assert "vectorAdd: 50000 results correct" in ok("vector_add_drop_in.py")


def test_vector_add_is_cuda_python_code_but_for_the_import():
    text = (EXAMPLES / "vector_add_drop_in.py").read_text()
    imports = [line for line in text.splitlines() if "import" in line and "cuda" in line]
    assert imports[-1] == "from cubind import driver as cuda"
    assert "cubind" not in text.rsplit(imports[-1], 1)[1]


def test_launch_raising():
    out = ok("launch_raising.py")
    assert "launch: 4096 results correct" in out
    assert "raised as expected: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY" in out


def test_array_interop():
    out = ok("array_interop.py")
    for lib in ("cupy", "torch"):
        present = subprocess.run([sys.executable, "-c", "import " + lib],
                                 capture_output=True).returncode == 0
        if present:
            assert "%s: 1000 results correct" % lib in out, out
    assert "results correct" in out or "skipped" in out


def test_graph_host_function():
    # The fake captures host functions since issue 43 (it had no
    # cuStreamBeginCapture: FunctionNotFoundError).
    assert "the host function ran on each of 3 replays" in ok("graph_host_function.py")


def test_nvrtc_launch():
    # Issue 43: the fake's compute capability was 75000.76000, which NVRTC
    # refused as an architecture; it is 9.0 now, and the fake runs the
    # example's kernel. Without libnvrtc the script says it skipped.
    out = ok("nvrtc_launch.py")
    assert "scaleArray on 1048576 floats: ok (sm_90)" in out or \
        re.fullmatch(r"skipped: NVRTC not found \(.+\)\n", out), out


def test_capsule_extension(tmp_path):
    # DIR need not exist (issue 43: it failed unless it did).
    out = ok("capsule_extension/build.py", tmp_path / "new" / "dir")
    assert "devices: 2" in out and "Fake CUDA Device 0" in out   # the fake's two


def scripts():
    """Every runnable script of examples/ (kernels.py is their module)."""
    found = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.py"))
    return [s for s in found if s != "kernels.py"]


@pytest.mark.parametrize("script", scripts())
def test_every_example_passes_or_says_why_it_skipped(script, tmp_path):
    # Each example exits 0 on the fake driver and prints a result, or one
    # line saying it skipped and why; a new example is covered here by
    # being in examples/.
    args = [tmp_path / "out"] if script == "capsule_extension/build.py" else []
    out = ok(script, *args)
    skipped = [line for line in out.splitlines() if "skipped" in line]
    assert out.strip() and (not skipped or len(out.splitlines()) == 1), out


def test_every_example_is_listed():
    assert len(scripts()) >= 6, scripts()


def test_examples_type_check_strict(tmp_path):
    pytest.importorskip("mypy")
    env = dict(os.environ, MYPYPATH=str(ROOT / "build" / "python"))
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", str(tmp_path), str(EXAMPLES)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
