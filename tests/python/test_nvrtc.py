# SPDX-License-Identifier: Apache-2.0
"""cubind.nvrtc (drop-in for cuda.bindings.nvrtc) and cubind.rtc (its
raising face) on the toolkit's real libnvrtc: every function, options,
name expressions, a failing program's log, PTX / CUBIN / LTO-IR output,
bad input, the loader's search order, 8 threads compiling at once."""
import os
import pickle

import pytest

import cubind
from conftest import run_python
from nvrtc_common import (ARCH, AXPY, check_cubin, kernel_source, nvrtc,  # noqa: F401
                          same_from_threads)

CALLED = set()  # the nvrtc functions these tests call (test_every_function_called)


def call(n, name, *args):
    CALLED.add(name)
    return getattr(n, name)(*args)


def ok(n, result):
    """The outputs of a successful drop-in call."""
    assert isinstance(result, tuple)
    assert result[0] == n.nvrtcResult.NVRTC_SUCCESS, result
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


def compiled(n, src, options=(), name=b"prog.cu", headers=(), include_names=()):
    prog = ok(n, call(n, "nvrtcCreateProgram", src, name, len(headers), list(headers),
                      list(include_names)))
    err, = call(n, "nvrtcCompileProgram", prog, len(options), list(options))
    return prog, err


def output(n, prog, what):
    """PTX / CUBIN / LTOIR / ProgramLog / OptiXIR the cuda.bindings way: the
    size, then a buffer of that many bytes filled in place."""
    size = ok(n, call(n, "nvrtcGet%sSize" % what, prog))
    buf = b" " * size
    if size:
        ok(n, call(n, "nvrtcGet%s" % what, prog, buf))
    return buf


def test_version_archs_and_error_string(nvrtc):
    n = nvrtc
    major, minor = ok(n, call(n, "nvrtcVersion"))
    assert major >= 12 and minor >= 0
    count = ok(n, call(n, "nvrtcGetNumSupportedArchs"))
    archs = ok(n, call(n, "nvrtcGetSupportedArchs"))
    assert isinstance(archs, list) and len(archs) == count and archs == sorted(archs)
    assert ARCH in archs
    err, text = call(n, "nvrtcGetErrorString", n.nvrtcResult.NVRTC_ERROR_COMPILATION)
    assert err == n.nvrtcResult.NVRTC_SUCCESS and text == b"NVRTC_ERROR_COMPILATION"


def test_compile_to_ptx_and_cubin(nvrtc):
    n = nvrtc
    prog, err = compiled(n, AXPY, [b"-arch=sm_%d" % ARCH, b"--std=c++17"])
    assert err == n.nvrtcResult.NVRTC_SUCCESS
    ptx = output(n, prog, "PTX")
    assert b".visible .entry axpy(" in ptx and ptx.endswith(b"\0")
    check_cubin(output(n, prog, "CUBIN"))
    log = output(n, prog, "ProgramLog")
    assert log.endswith(b"\0")
    assert ok(n, call(n, "nvrtcDestroyProgram", prog)) is None
    assert int(prog) == 0  # cleared in place, as cuda.bindings does


def test_compile_with_headers(nvrtc):
    n = nvrtc
    src = b'#include "scale.h"\nextern "C" __global__ void k(float *p) { p[0] = SCALE; }\n'
    prog, err = compiled(n, src, [b"-arch=compute_%d" % ARCH], headers=[b"#define SCALE 3.5f\n"],
                         include_names=[b"scale.h"])
    assert err == n.nvrtcResult.NVRTC_SUCCESS
    assert b"1080033280" in output(n, prog, "PTX")  # the bits of 3.5f, from the header
    ok(n, n.nvrtcDestroyProgram(prog))


def test_name_expressions(nvrtc):
    n = nvrtc
    src = b"template <typename T> __global__ void scale(T *p) { p[0] *= 2; }\n"
    prog = ok(n, n.nvrtcCreateProgram(src, b"t.cu", 0, [], []))
    ok(n, call(n, "nvrtcAddNameExpression", prog, b"scale<float>"))
    ok(n, n.nvrtcAddNameExpression(prog, "scale<int>"))  # str too
    ok(n, n.nvrtcCompileProgram(prog, 1, [b"-arch=compute_%d" % ARCH]))
    lowered = ok(n, call(n, "nvrtcGetLoweredName", prog, b"scale<float>"))
    assert lowered == b"_Z5scaleIfEvPT_"
    assert ok(n, n.nvrtcGetLoweredName(prog, b"scale<int>")) == b"_Z5scaleIiEvPT_"
    assert lowered in output(n, prog, "PTX")
    err, none = n.nvrtcGetLoweredName(prog, b"scale<double>")
    assert err == n.nvrtcResult.NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID and none is None
    # after compiling, no more name expressions
    err, = n.nvrtcAddNameExpression(prog, b"scale<char>")
    assert err == n.nvrtcResult.NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION
    ok(n, n.nvrtcDestroyProgram(prog))


def test_lto_ir_and_optix_ir(nvrtc):
    n = nvrtc
    prog, err = compiled(n, AXPY, [b"-arch=sm_%d" % ARCH, b"-dlto"])
    assert err == n.nvrtcResult.NVRTC_SUCCESS
    ltoir = output(n, prog, "LTOIR")
    assert len(ltoir) > 16 and ltoir != b" " * len(ltoir)
    # no OptiX IR for this program: its size is 0
    assert ok(n, call(n, "nvrtcGetOptiXIRSize", prog)) == 0
    err, = call(n, "nvrtcGetOptiXIR", prog, bytearray(16))
    assert isinstance(err, n.nvrtcResult)
    ok(n, n.nvrtcDestroyProgram(prog))


def test_failing_program_log(nvrtc):
    n = nvrtc
    prog, err = compiled(n, b"__global__ void bad() { no_such_function(); }\n", name=b"bad.cu")
    assert err == n.nvrtcResult.NVRTC_ERROR_COMPILATION
    log = output(n, prog, "ProgramLog")
    assert b"bad.cu(1)" in log and b"no_such_function" in log
    ok(n, n.nvrtcDestroyProgram(prog))


def test_pch_and_flow_callback(nvrtc):
    n = nvrtc
    heap = ok(n, call(n, "nvrtcGetPCHHeapSize"))
    assert heap > 0
    ok(n, call(n, "nvrtcSetPCHHeapSize", heap))
    prog, err = compiled(n, AXPY, [b"-arch=compute_%d" % ARCH])
    status, = call(n, "nvrtcGetPCHCreateStatus", prog)
    assert status == n.nvrtcResult.NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED
    assert ok(n, call(n, "nvrtcGetPCHHeapSizeRequired", prog)) >= 0
    # a NULL callback is invalid input; an address is passed through
    err, = call(n, "nvrtcSetFlowCallback", prog, 0, None)
    assert err == n.nvrtcResult.NVRTC_ERROR_INVALID_INPUT
    ok(n, n.nvrtcDestroyProgram(prog))


FLOW_CALLBACK = r"""
import ctypes, gc, weakref
import cubind._runtime as rt
import cubind.nvrtc as n
from nvrtc_common import ARCH, AXPY
FLOW = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
calls = []
base = rt._registry_counts().get("nvrtc_program", 0)
err, prog = n.nvrtcCreateProgram(AXPY, b"axpy.cu", 0, [], [])
assert err == 0
class Payload(bytearray):  # a bytearray that takes weak references
    pass
payload = Payload(b"payload!")
view = ctypes.c_char.from_buffer(payload)
where = ctypes.addressof(view)
del view
fn = FLOW(lambda a, b: calls.append((a, b)) or 0)
gone, gone_payload = weakref.ref(fn), weakref.ref(payload)
assert n.nvrtcSetFlowCallback(prog, fn, payload) == (0,)
del fn, payload
gc.collect()
others = [FLOW(lambda a, b: 1) for i in range(200)]  # reuse what was freed
del others
gc.collect()
assert gone() is not None and gone_payload() is not None  # kept with the program
assert rt._registry_counts()["nvrtc_program"] == base + 1
assert n.nvrtcCompileProgram(prog, 1, [b"-arch=compute_%d" % ARCH]) == (0,)
assert calls and all(a == where for a, b in calls), (calls[:3], where)  # (payload, NULL)
assert n.nvrtcDestroyProgram(prog) == (0,)
gc.collect()
assert gone() is None and gone_payload() is None  # released with it
assert rt._registry_counts()["nvrtc_program"] == base
print("ok", len(calls))
"""


def test_flow_callback_kept_with_its_program(nvrtc):
    """Issue 42 item 4: a ctypes flow callback (and its payload) given to
    nvrtcSetFlowCallback lives as long as the program, which calls it
    during later compiles, and is released when the program is destroyed
    (registry-keep rules). 4ed6c2d kept nothing: a caller that dropped it
    had the library call freed memory. In a fresh process: a crash fails
    the test, not the run."""
    r = run_python(FLOW_CALLBACK)
    assert r.returncode == 0 and r.stdout.startswith("ok"), (r.returncode, r.stdout,
                                                            r.stderr[-3000:])


def test_raising_face_carries_the_log(nvrtc):
    import cubind.rtc as rtc

    assert rtc is nvrtc._rtc and rtc.NVRTCError is cubind.NVRTCError is nvrtc.NVRTCError
    assert rtc.nvrtcVersion()[0] >= 12
    prog = rtc.nvrtcCreateProgram(b"__global__ void f() { undefined_name; }", b"f.cu", 0, [], [])
    with pytest.raises(cubind.NVRTCError) as info:
        rtc.nvrtcCompileProgram(prog, 0, None)
    e = info.value
    assert e.result == nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    assert e.name == "NVRTC_ERROR_COMPILATION"
    assert b'identifier "undefined_name" is undefined' in e.log
    assert "undefined_name" in str(e)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cubind.NVRTCError and again.result == e.result and again.log == e.log
    assert rtc.nvrtcDestroyProgram(prog) is None
    # other errors carry no log
    with pytest.raises(cubind.NVRTCError) as info:
        rtc.nvrtcGetPTXSize(prog)
    assert info.value.result == nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM
    assert info.value.log is None


def test_bad_input(nvrtc):
    n = nvrtc
    with pytest.raises(TypeError, match="'src'"):
        n.nvrtcCreateProgram(None, b"x.cu", 0, [], [])
    with pytest.raises(TypeError, match="'headers'"):
        n.nvrtcCreateProgram(b"", b"x.cu", 1, [1], [b"a.h"])
    with pytest.raises(ValueError, match="'includeNames'"):
        n.nvrtcCreateProgram(b"", b"x.cu", 1, [b"int x;"], [])
    with pytest.raises(ValueError, match="NUL"):
        n.nvrtcCreateProgram(b"", b"x.cu", 1, [b"a\0b"], [b"a.h"])
    with pytest.raises(TypeError, match="'prog'"):
        n.nvrtcCompileProgram("not a program", 0, [])
    with pytest.raises(TypeError):
        n.nvrtcCompileProgram()
    with pytest.raises(TypeError, match="'numOptions'"):
        n.nvrtcCompileProgram(0, "1", [])
    prog, err = compiled(n, AXPY, [b"-arch=compute_%d" % ARCH])
    with pytest.raises(ValueError, match="'options'"):
        n.nvrtcCompileProgram(prog, 3, [b"-G"])
    size = ok(n, n.nvrtcGetPTXSize(prog))
    # a buffer smaller than the PTX is refused before the library writes
    with pytest.raises(ValueError, match="'ptx' holds 8 bytes, fewer than the %d" % size):
        n.nvrtcGetPTX(prog, bytearray(8))
    with pytest.raises(TypeError, match="'ptx'"):
        n.nvrtcGetPTX(prog, "a str is not a buffer")
    with pytest.raises(TypeError, match="'ptx'"):
        n.nvrtcGetPTX(prog, memoryview(b" " * size))  # read-only
    assert n.nvrtcGetPTX(prog, None) == (n.nvrtcResult.NVRTC_ERROR_INVALID_INPUT,)
    # a destroyed program is an invalid program, never a dangling pointer
    ok(n, n.nvrtcDestroyProgram(prog))
    assert n.nvrtcGetPTXSize(prog) == (n.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM, None)
    assert n.nvrtcCompileProgram(prog, 0, []) == (n.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM,)
    assert n.nvrtcDestroyProgram(prog) == (n.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM,)
    assert n.nvrtcGetPTX(prog, b" ") == (n.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM,)
    assert n.nvrtcGetProgramLogSize(None) == (n.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM, None)
    # an enum argument takes what int() takes, as cuda.bindings converts it
    with pytest.raises(ValueError, match="'result'"):
        n.nvrtcGetErrorString("NVRTC_SUCCESS")


@pytest.mark.tsan
def test_threads_compile_the_same_ptx(nvrtc):
    """8 threads compiling different programs at once give what one thread
    gives (the library runs with the thread state detached)."""
    n = nvrtc
    options = [b"-arch=compute_%d" % ARCH]

    def ptx_of(i):
        prog, err = compiled(n, kernel_source(i), options, name=b"k%d.cu" % i)
        assert err == n.nvrtcResult.NVRTC_SUCCESS
        ptx = output(n, prog, "PTX")
        ok(n, n.nvrtcDestroyProgram(prog))
        return ptx

    same_from_threads(ptx_of)  # importing cubind.nvrtc kept the GIL off


FIRST_USE = """
import threading, cubind.nvrtc as n, cubind.nvjitlink as j
N = 8
barrier = threading.Barrier(N)
out = [None] * N
def body(i):
    barrier.wait()
    out[i] = (n.nvrtcVersion()[1:], j.version(), n._library_status(), j._library_status())
ts = [threading.Thread(target=body, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(set(out)), out[0])
"""


@pytest.mark.tsan
def test_first_use_race(nvrtc):
    """8 threads of a fresh process make the first call of both library
    modules at once: one library each, the same answers everywhere."""
    for _ in range(3):
        r = run_python(FIRST_USE)
        assert r.returncode == 0, r.stderr
        count, first = r.stdout.split(" ", 1)
        assert count == "1", r.stdout
        assert "(True, " in first and "libnvrtc" in first and "libnvJitLink" in first


def test_every_function_called(nvrtc):
    """Runs last in this file: every nvrtc function of the module was called
    above (the list comes from the module, not from this file)."""
    bound = {name for name in dir(nvrtc) if name.startswith("nvrtc") and callable(getattr(nvrtc, name))
             and not isinstance(getattr(nvrtc, name), type)}
    assert len(bound) == 24
    assert bound - CALLED == set()


LOAD = ("import cubind.nvrtc as n\n"
        "try:\n"
        "    print(n.nvrtcVersion())\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        "print(n._library_status())\n")


def test_loader_env_is_the_only_file_tried(nvrtc, tmp_path):
    missing = str(tmp_path / "libnvrtc.so.99")
    r = run_python(LOAD, CUBIND_LIBNVRTC=missing)
    assert r.returncode == 0, r.stderr
    assert "DriverNotFoundError" in r.stdout and missing in r.stdout
    assert "CUBIND_LIBNVRTC is set" in r.stdout
    # the import itself never needs the library
    r = run_python("import cubind.nvrtc, cubind.rtc; print('imported')", CUBIND_LIBNVRTC=missing)
    assert r.stdout.strip() == "imported", r.stderr


def test_loader_order(nvrtc, tmp_path):
    """CUDA_HOME before the system path; wheels (site-packages/nvidia/...)
    before the system path."""
    real = nvrtc._library_status()[1]
    lib64 = tmp_path / "home" / "lib64"
    lib64.mkdir(parents=True)
    os.symlink(real, lib64 / os.path.basename(real))
    r = run_python(LOAD, CUBIND_LIBNVRTC="", CUDA_HOME=str(tmp_path / "home"), CUDA_PATH="")
    assert "(True, '%s/%s')" % (lib64, os.path.basename(real)) in r.stdout, r.stdout + r.stderr
    wheel = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    wheel.mkdir(parents=True)
    os.symlink(real, wheel / os.path.basename(real))
    code = "import sys; sys.path.insert(0, %r)\n" % str(tmp_path / "site") + LOAD
    r = run_python(code, CUBIND_LIBNVRTC="", CUDA_HOME=str(tmp_path / "nothing"), CUDA_PATH="")
    assert "(True, '%s/%s')" % (wheel, os.path.basename(real)) in r.stdout, r.stdout + r.stderr
    assert "NVRTC_SUCCESS: 0>, 1" in r.stdout  # nvrtcVersion through the wheel copy


def test_example_compiles(nvrtc):
    """examples/nvrtc_launch.py's compile step (its launch needs a GPU:
    tests/gpu/test_nvrtc_gpu.py, and the fake driver's in tests/examples):
    PTX with the kernel, the log on failure."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "nvrtc_launch.py"
    spec = importlib.util.spec_from_file_location("nvrtc_launch", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert b".visible .entry scaleArray(" in example.compile_ptx(example.SOURCE, ARCH)
    with pytest.raises(cubind.NVRTCError, match="undefined"):
        example.compile_ptx(b"__global__ void f() { undefined; }", ARCH)
