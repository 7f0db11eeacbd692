# SPDX-License-Identifier: Apache-2.0
"""What every GPU test file shares: the implementation under test, the
status-tuple helpers and the nvcc build of test kernels (the pytest fixtures
built on them are in tests/gpu/conftest.py). CUBIND_GPU_IMPL selects the
module the tests drive: "cubind" (default) and "cubind.cu" drive
cubind.driver, "cuda.bindings" drives cuda.bindings.driver (the drop-in
evidence: the same tests pass on both). Never imported in CI: tests/gpu/
needs the real driver."""
import importlib
import os
import pathlib
import shutil
import subprocess

IMPL = os.environ.get("CUBIND_GPU_IMPL", "cubind")
drv = importlib.import_module("cuda.bindings.driver" if IMPL == "cuda.bindings" else "cubind.driver")
SUCCESS = drv.CUresult.CUDA_SUCCESS
HERE = pathlib.Path(__file__).resolve().parent


def ok(result):
    """Checks a status tuple and returns its outputs: one value, a tuple of
    several, or None."""
    if not isinstance(result, tuple):
        result = (result,)
    assert result[0] == SUCCESS, result
    outs = result[1:]
    return outs[0] if len(outs) == 1 else (outs or None)


def ok_any_face(result):
    """ok() for a call made on either face, in tests parametrized over
    cubind.driver and cubind.cu: a status tuple is checked by ok(); anything
    else is what the raising face returned (its output, or None) and comes
    back as it is."""
    if not isinstance(result, tuple):
        return result
    return ok(result)


def nvcc():
    """The nvcc to build test kernels with, or None."""
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def build_ptx(nvcc_path, name, directory):
    """Builds tests/gpu/<name>.cu with `nvcc -ptx -arch=sm_90` into
    directory and returns the PTX, NUL-terminated for cuModuleLoadData."""
    out = pathlib.Path(directory) / f"{name}.ptx"
    subprocess.run([nvcc_path, "-ptx", "-arch=sm_90", str(HERE / f"{name}.cu"), "-o", str(out)],
                   check=True)
    return out.read_bytes() + b"\0"
