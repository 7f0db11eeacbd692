# SPDX-License-Identifier: Apache-2.0
"""The generated typing stubs (out/driver.pyi, out/cu.pyi and the library
APIs' out/nvrtc.pyi, out/rtc.pyi, out/nvjitlink.pyi, out/nvvm.pyi, installed beside the
extensions) are accepted by a type checker, describe every bound function
of every face, and let the checker catch misuse."""
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import module_source

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

# The library APIs: nvrtc's two faces, nvjitlink's snake_case names.
import cubind.nvjitlink as nvjitlink
import cubind.nvrtc as nvrtc
import cubind.rtc as rtc

status, prog = nvrtc.nvrtcCreateProgram(b"src", b"a.cu", 0, [], [])
if status == nvrtc.nvrtcResult.NVRTC_SUCCESS and prog is not None:
    ptx_size: int | None = nvrtc.nvrtcGetPTXSize(prog)[1]
program: rtc.nvrtcProgram = rtc.nvrtcCreateProgram(b"src", b"a.cu", 0, [], [])
try:
    rtc.nvrtcCompileProgram(program, 1, [b"-arch=compute_90"])
except rtc.NVRTCError as compile_error:
    compile_log: bytes | None = compile_error.log
    compile_status: nvrtc.nvrtcResult | int = compile_error.result
ptx = b" " * rtc.nvrtcGetPTXSize(program)
rtc.nvrtcGetPTX(program, ptx)
nvrtc_major, nvrtc_minor = rtc.nvrtcVersion()
message: bytes | None = rtc.nvrtcGetErrorString(rtc.nvrtcResult.NVRTC_SUCCESS)
linker: int = nvjitlink.create(1, [b"-arch=sm_90"])
nvjitlink.add_data(linker, nvjitlink.InputType.PTX, ptx, len(ptx), b"a.ptx")
try:
    nvjitlink.complete(linker)
except nvjitlink.nvJitLinkError as link_error:
    link_status: nvjitlink.Result | int = link_error.result
nvjitlink.destroy(linker)

# nvvm: snake_case, programs as ints, a str from get_error_string
import cubind.nvvm as nvvm

nvvm_program: int = nvvm.create_program()
nvvm.add_module_to_program(nvvm_program, b"IR", 2, "a.ll")
try:
    nvvm.compile_program(nvvm_program, 1, ["-arch=compute_90"])
except nvvm.nvvmError as nvvm_error:
    nvvm_log: bytes | None = nvvm_error.log
    nvvm_code: int = nvvm_error.status
nvvm_text: str | None = nvvm.get_error_string(nvvm.Result.ERROR_COMPILATION)
ir_major, ir_minor, dbg_major, dbg_minor = nvvm.ir_version()
nvvm.destroy_program(nvvm_program)

# nvfatbin: snake_case, handles as ints, the caller's buffer sized by size()
import cubind.nvfatbin as nvfatbin

fatbin: int = nvfatbin.create(["-compress=false"], 1)
nvfatbin.add_ptx(fatbin, ptx, len(ptx), "90", "a.ptx", "")
try:
    nvfatbin.add_cubin(fatbin, b"ELF", 3, "90", "a.cubin")
except nvfatbin.nvFatbinError as fatbin_error:
    fatbin_status: nvfatbin.Result | int = fatbin_error.result
image = bytearray(nvfatbin.size(fatbin))
nvfatbin.get(fatbin, image)
fatbin_major, fatbin_minor = nvfatbin.version()
nvfatbin.destroy(fatbin)
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
import cubind.nvjitlink as nvjitlink
import cubind.nvrtc as nvrtc
import cubind.rtc as rtc
nvjitlink.create("1", [])
size: int = nvrtc.nvrtcGetPTXSize(0)
rtc.nvrtcCreateProgram(b"src")
nvjitlink.nvJitLinkCreate(0, [])
import cubind.nvvm as nvvm
nvvm_bytes: bytes | None = nvvm.get_error_string(0)
"""


def mypy(tmp_path, source):
    sample = tmp_path / "sample.py"
    sample.write_text(source)
    env = dict(os.environ, MYPYPATH=str(PKG))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), str(sample)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


# Each generated module's method tables (templates/driver/init.c.tmpl), and
# the stub of the face each table fills: the drop-in face's driver_methods,
# the raising face's cu_methods (the module itself when the API has no
# drop-in face, as nvjitlink).
FACES = {"driver.c": {"driver_methods": "driver.pyi", "cu_methods": "cu.pyi"},
         "nvrtc.c": {"driver_methods": "nvrtc.pyi", "cu_methods": "rtc.pyi"},
         "nvjitlink.c": {"cu_methods": "nvjitlink.pyi"},
         "nvvm.c": {"cu_methods": "nvvm.pyi"},
         "nvfatbin.c": {"cu_methods": "nvfatbin.pyi"},
         "cufile.c": {"cu_methods": "cufile.pyi"},
         "nvml.c": {"cu_methods": "nvml.pyi"},
         "runtime.c": {"driver_methods": "runtime.pyi", "cu_methods": "cudart.pyi"}}


def method_names(source, table):
    body = re.search(r"^static PyMethodDef %s\[\] = \{\n(.*?)^\};" % table, source, re.M | re.S)
    assert body, table
    return set(re.findall(r'^    \{"(\w+)", ', body.group(1), re.M))


def test_stubs_list_every_bound_function_of_every_face():
    # every bound function has one body, impl_NAME (static, or static and
    # always inlined for the keep-gil getters)
    # in one of the module's translation units (tests/module_units.py)
    bound = set(re.findall(r"^static (?:CBS_ALWAYS_INLINE )?PyObject \*impl_(\w+)\(",
                           module_source(ROOT / "out", "driver"), re.M))
    assert len(bound) > 400
    assert method_names((ROOT / "out" / "driver.c").read_text(), "cu_methods") == bound | {"launch"}
    stubs = set()
    for source, tables in FACES.items():
        text = (ROOT / "out" / source).read_text()
        for table, stub in tables.items():
            tree = ast.parse((ROOT / "out" / stub).read_text())
            defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            assert defs == method_names(text, table), stub
            assert (PKG / "cubind" / stub).read_text() == (ROOT / "out" / stub).read_text()
            stubs.add(stub)
    assert stubs == {p.name for p in (ROOT / "out").glob("*.pyi")}
    # the Python names: nvjitlink's snake_case functions and its enums
    jit = ast.parse((ROOT / "out" / "nvjitlink.pyi").read_text())
    names = {n.name for n in jit.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert {"create", "add_data", "get_linked_cubin_size", "Result", "InputType"} <= names
    assert not [n for n in names if n.startswith("nvJitLink") and n != "nvJitLinkHandle"
                and n != "nvJitLinkError"]
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
    # the library APIs' stubs (none before the stubs were generated for them)
    assert 'Argument 1 to "create" has incompatible type "str"; expected "int"' in r.stdout
    # (mypy spells the tuple "Tuple[nvrtcResult, Optional[int]]" before 1.x)
    assert re.search(r'Incompatible types in assignment \(expression has type '
                     r'"[Tt]uple\[nvrtcResult, [^"]*int[^"]*\]", variable has type "int"\)', r.stdout)
    assert 'Missing positional arguments "name", "numHeaders", "headers", "includeNames" ' \
        'in call to "nvrtcCreateProgram"' in r.stdout
    assert 'Module has no attribute "nvJitLinkCreate"' in r.stdout
    # a returned C string is a str in nvvm (str-results: "" for NULL,
    # never None), bytes elsewhere
    assert ('Incompatible types in assignment (expression has type "str", '
            'variable has type "bytes | None")') in r.stdout or \
        ('Incompatible types in assignment (expression has type "str", '
         'variable has type "Optional[bytes]")') in r.stdout


def test_stubtest_finds_the_stubs_true_to_the_modules():
    """mypy's stubtest compares the stubs with the imported modules: every
    name, signature and @final (no class of the modules can be subclassed),
    cubind.nvrtc, cubind.rtc and cubind.nvjitlink included; 05a670f had 546
    errors (no @final), 9517af0 failed on the library modules (no stubs)."""
    pytest.importorskip("mypy")
    env = dict(os.environ, PYTHONPATH=str(PKG), MYPYPATH=str(PKG))
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "cubind"], capture_output=True,
                       text=True, env=env, cwd=PKG, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "Success: no issues found" in r.stdout
