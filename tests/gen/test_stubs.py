# SPDX-License-Identifier: Apache-2.0
"""The generated typing stubs (out/driver.pyi, out/cu.pyi, installed beside
the extensions) are accepted by a type checker, describe every bound
function of both faces, and let the checker catch misuse."""
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "build" / "python"

GOOD = """
import cubind
import cubind.cu as cu
import cubind.driver as d

err, dev = d.cuDeviceGet(0)
if err == d.CUresult.CUDA_SUCCESS and dev is not None:
    n: int = cu.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev)
    ctx: d.CUcontext = cu.cuDevicePrimaryCtxRetain(dev)
    stream: d.CUstream = cu.cuStreamCreate(0)
    free, total = cu.cuMemGetInfo()
    desc = d.CUDA_MEMCPY2D()
    name: bytes = cu.cuDeviceGetName(64, dev)
    cu.cuInit(0)
    include: str = cubind.get_include()
    f = cu.cuModuleGetFunction(cu.cuModuleLoadData(b"image"), b"kernel")
    cubind.launch(f, (1, 1), 32, 1, 2.0, stream=stream, shared_mem=0)
    version, handle = stream.__cuda_stream__()
    # typedef names of one enum (typedef CUlaunchAttributeID CUkernelNodeAttrID;)
    attr: d.CUkernelNodeAttrID = d.CUkernelNodeAttrID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    sattr: cu.CUstreamAttrID = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    cu.cuStreamGetAttribute(stream, attr)

    # Any object implementing the CUDA stream protocol is a stream (issue 28).
    class ForeignStream:
        def __cuda_stream__(self) -> tuple[int, int]:
            return (0, 0)

    cu.cuStreamSynchronize(ForeignStream())
    cubind.launch(f, 1, 1, stream=ForeignStream())
    try:
        cu.cuInit(0)
    except cubind.CUDAError as e:
        code: d.CUresult | int = e.result
        func: str | None = e.func
    version_text: str = cubind.__version__
"""

BAD = """
import cubind
import cubind.cu as cu
import cubind.driver as d
d.cuDeviceGet("zero")
text: str = d.cuInit(0)
cu.cuDeviceGet(0, 1)
cubind.launch(None, 1, 1, shared_mem="0")
attr: d.CUstreamAttrID = d.CUresult.CUDA_SUCCESS
class MyStream(d.CUstream): ...
cu.cuStreamSynchronize(object())
"""


def mypy(tmp_path, source):
    sample = tmp_path / "sample.py"
    sample.write_text(source)
    env = dict(os.environ, MYPYPATH=str(PKG))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), str(sample)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_stubs_list_every_bound_function_of_both_faces():
    # every bound function has one body, impl_NAME (static, or static and
    # always inlined for the keep-gil getters)
    bound = set(re.findall(r"^static (?:CBS_ALWAYS_INLINE )?PyObject \*impl_(\w+)\(",
                           (ROOT / "out" / "driver.c").read_text(), re.M))
    assert len(bound) > 400
    for stub in ("driver.pyi", "cu.pyi"):
        tree = ast.parse((ROOT / "out" / stub).read_text())
        defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert {n for n in defs if n.startswith("cu")} == bound, stub
        assert (PKG / "cubind" / stub).read_text() == (ROOT / "out" / stub).read_text()
    assert (PKG / "cubind" / "py.typed").exists()


def test_type_checker_accepts_correct_use(tmp_path):
    pytest.importorskip("mypy")
    r = mypy(tmp_path, GOOD)
    assert r.returncode == 0, r.stdout + r.stderr


def test_type_checker_catches_misuse(tmp_path):
    pytest.importorskip("mypy")
    r = mypy(tmp_path, BAD)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'Argument 1 to "cuDeviceGet" has incompatible type "str"; expected "int"' in r.stdout
    assert 'Incompatible types in assignment' in r.stdout
    assert 'Too many arguments for "cuDeviceGet"' in r.stdout
    assert 'Argument "shared_mem" to "launch" has incompatible type "str"' in r.stdout
    assert ('Incompatible types in assignment (expression has type "CUresult", '
            'variable has type "CUlaunchAttributeID")') in r.stdout
    # @final classes, and a stream that implements no protocol (issue 28)
    assert 'Cannot inherit from final class "CUstream"' in r.stdout
    assert 'Argument 1 to "cuStreamSynchronize" has incompatible type "object"' in r.stdout


def test_stubtest_finds_the_stubs_true_to_the_modules():
    """mypy's stubtest compares the stubs with the imported modules: every
    name, signature and @final (no class of the modules can be subclassed);
    05a670f had 546 errors (no @final)."""
    pytest.importorskip("mypy")
    env = dict(os.environ, PYTHONPATH=str(PKG), MYPYPATH=str(PKG))
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "cubind"], capture_output=True,
                       text=True, env=env, cwd=PKG, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "Success: no issues found" in r.stdout
