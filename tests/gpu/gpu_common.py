"""What every GPU test file shares: the implementation under test and the
status-tuple helper. CUBIND_GPU_IMPL selects the module the tests drive:
"cubind" (default) and "cubind.cu" drive cubind.driver, "cuda.bindings"
drives cuda.bindings.driver (the drop-in evidence: the same tests pass on
both). Never imported in CI: tests/gpu/ needs the real driver."""
import importlib
import os
import shutil

IMPL = os.environ.get("CUBIND_GPU_IMPL", "cubind")
drv = importlib.import_module("cuda.bindings.driver" if IMPL == "cuda.bindings" else "cubind.driver")
SUCCESS = drv.CUresult.CUDA_SUCCESS


def ok(result):
    """Checks a status tuple and returns its outputs: one value, a tuple of
    several, or None."""
    if not isinstance(result, tuple):
        result = (result,)
    assert result[0] == SUCCESS, result
    outs = result[1:]
    return outs[0] if len(outs) == 1 else (outs or None)


def nvcc():
    """The nvcc to build test kernels with, or None."""
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
