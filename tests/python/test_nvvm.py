# SPDX-License-Identifier: Apache-2.0
"""cubind.nvvm (cuda.bindings.nvvm's face: snake_case functions that raise,
programs as ints, Result, nvvmError printing 'NAME (value)') on the
toolkit's real libnvvm: NVVM IR in LLVM's text form compiled to PTX, a
bitcode library (libdevice) added lazily, a bad module's compile error with
the program log, bad input naming the parameter, the library search, 8
threads compiling at once, every function called.

Skipped, with the reason, where no libnvvm is found, unless the toolkit
whose headers the build used has one (then not loading it is a failure)."""
import glob
import os
import pickle

import pytest

import cubind
from conftest import _config, run_python
from library_common import CallRecorder, library_or_skip
from nvrtc_common import same_from_threads

call = CallRecorder()  # the functions these tests call (test_every_function_called)


def toolkit_libnvvm():
    """The libnvvm files of the toolkit configure found cuda.h in: its
    lib64/ and nvvm/lib64/ (tests/README.md)."""
    root = os.path.dirname(_config("cuda_include"))
    return sorted(glob.glob(os.path.join(root, "lib64", "libnvvm.so*")) +
                  glob.glob(os.path.join(root, "nvvm", "lib64", "libnvvm.so*")))


@pytest.fixture(scope="module")
def nvvm():
    return library_or_skip("nvvm", "libnvvm", expected=toolkit_libnvvm())


def nvvm_ir(n, body, annotations):
    """A module of NVVM IR text: the 64-bit target, `body`, the kernel
    annotations and the IR version libnvvm itself reports."""
    major, minor, dbg_major, dbg_minor = call(n, "ir_version")
    return (b'target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-'
            b'i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"\n'
            b'target triple = "nvptx64-nvidia-cuda"\n\n' + body +
            b"\n!nvvm.annotations = !{" + b", ".join(b"!%d" % (i + 2) for i in range(len(annotations))) +
            b"}\n!nvvmir.version = !{!1}\n!1 = !{i32 %d, i32 %d, i32 %d, i32 %d}\n"
            % (major, minor, dbg_major, dbg_minor) +
            b"".join(b'!%d = !{%s, !"kernel", i32 1}\n' % (i + 2, a) for i, a in enumerate(annotations)))


def scale_ir(n, factor_name=b"scale"):
    """A kernel multiplying out[threadIdx.x] by a float argument."""
    body = (b"define void @%s(float* %%out, float %%factor) {\n"
            b"entry:\n"
            b"  %%tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
            b"  %%p = getelementptr float, float* %%out, i32 %%tid\n"
            b"  %%v = load float, float* %%p\n"
            b"  %%r = fmul float %%v, %%factor\n"
            b"  store float %%r, float* %%p\n"
            b"  ret void\n"
            b"}\n"
            b"declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n") % (factor_name, )
    return nvvm_ir(n, body, [b"void (float*, float)* @%s" % factor_name])


def program_log(n, prog):
    buf = bytearray(call(n, "get_program_log_size", prog))
    call(n, "get_program_log", prog, buf)
    return bytes(buf)


def compiled_ptx(n, modules, options, lazy=()):
    """The PTX of `modules` ((bytes, name) pairs) plus the lazily added
    `lazy` ones, compiled with `options` (str)."""
    prog = call(n, "create_program")
    assert isinstance(prog, int) and prog != 0
    try:
        for ir, name in modules:
            assert call(n, "add_module_to_program", prog, ir, len(ir), name) is None
        for ir, name in lazy:
            call(n, "lazy_add_module_to_program", prog, ir, len(ir), name)
        assert call(n, "verify_program", prog, len(options), options) is None
        assert call(n, "compile_program", prog, len(options), options) is None
        assert program_log(n, prog) == b"\0"  # nothing to say
        size = call(n, "get_compiled_result_size", prog)
        ptx = bytearray(size)
        assert call(n, "get_compiled_result", prog, ptx) is None
        assert ptx.endswith(b"\0") and ptx.index(b"\0") == size - 1
        return bytes(ptx[:-1]).decode()
    finally:
        call(n, "destroy_program", prog)


def test_versions_enum_and_error_strings(nvvm):
    n = nvvm
    major, minor = call(n, "version")
    assert (major, minor) >= (1, 0)
    ir = call(n, "ir_version")
    assert len(ir) == 4 and all(type(v) is int for v in ir) and ir >= (1, 0, 0, 0)
    assert n.Result.SUCCESS == 0 and n.Result.ERROR_COMPILATION == 9
    assert n.Result(6) is n.Result.ERROR_INVALID_IR and n.Result.ERROR_INVALID_IR.name == "ERROR_INVALID_IR"
    # a str, as cuda.bindings.nvvm gives it (str-results)
    text = call(n, "get_error_string", n.Result.ERROR_COMPILATION)
    assert type(text) is str and "COMPILATION" in text.upper()
    assert type(n.get_error_string(0)) is str


def test_compile_ir_to_ptx(nvvm):
    n = nvvm
    ptx = compiled_ptx(n, [(scale_ir(n), "scale.ll")], ["-arch=compute_75"])
    assert ".target sm_75" in ptx and ".visible .entry scale(" in ptx
    assert "mul.f32" in ptx and "%tid.x" in ptx
    # options change the code: another architecture, no optimisation
    ptx90 = compiled_ptx(n, [(scale_ir(n), "scale.ll")], ["-arch=compute_90", "-opt=0"])
    assert ".target sm_90" in ptx90 and ".visible .entry scale(" in ptx90
    # a bytearray / memoryview holds the IR as well as bytes
    ir = scale_ir(n)
    assert ".visible .entry scale(" in compiled_ptx(n, [(bytearray(ir), "a.ll")], [])
    assert ".visible .entry scale(" in compiled_ptx(n, [(memoryview(ir), "b.ll")], [])


def libdevice():
    root = os.path.dirname(_config("cuda_include"))
    found = glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice.*.bc"))
    if not found:
        pytest.skip("no nvvm/libdevice/libdevice.*.bc beside %s" % _config("cuda_include"))
    with open(found[0], "rb") as f:
        return f.read()


def test_lazy_bitcode_library(nvvm):
    """libdevice, LLVM bitcode full of NUL bytes, added lazily: the kernel's
    call to __nv_sinf is linked from it (a buffer of `size` bytes, never
    read as a C string)."""
    n = nvvm
    bitcode = libdevice()
    assert b"\0" in bitcode[:64]
    body = (b"declare float @__nv_sinf(float)\n"
            b"define void @sine(float* %out) {\n"
            b"entry:\n"
            b"  %v = load float, float* %out\n"
            b"  %s = call float @__nv_sinf(float %v)\n"
            b"  store float %s, float* %out\n"
            b"  ret void\n"
            b"}\n")
    ir = nvvm_ir(n, body, [b"void (float*)* @sine"])
    ptx = compiled_ptx(n, [(ir, "sine.ll")], ["-arch=compute_75"], lazy=[(bitcode, "libdevice")])
    assert ".visible .entry sine(" in ptx and "__nv_sinf" not in ptx  # linked in
    # without the library the PTX calls an external __nv_sinf
    alone = compiled_ptx(n, [(ir, "sine.ll")], ["-arch=compute_75"])
    assert ".extern .func" in alone and "__nv_sinf" in alone


def test_bad_ir_is_a_compile_error_with_the_program_log(nvvm):
    n = nvvm
    junk = b"this is not NVVM IR"
    prog = n.create_program()
    n.add_module_to_program(prog, junk, len(junk), "junk.ll")
    with pytest.raises(n.nvvmError) as info:
        n.compile_program(prog, 0, [])
    e = info.value
    assert n.nvvmError is cubind.nvvmError and isinstance(e, RuntimeError)
    # cuda.bindings.nvvm's str and status; cubind's result, func and log
    assert str(e) == "ERROR_COMPILATION (9)"
    assert e.status == 9 and type(e.status) is int
    assert e.result is n.Result.ERROR_COMPILATION and e.func == "nvvmCompileProgram"
    assert e.log == program_log(n, prog).rstrip(b"\0")
    assert b"junk.ll" in e.log and b"parse" in e.log
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cubind.nvvmError and str(again) == str(e) and again.status == 9
    # verifying says the IR is invalid, with the same log
    with pytest.raises(n.nvvmError, match=r"^ERROR_INVALID_IR \(6\)$") as info:
        n.verify_program(prog, 0, [])
    assert b"junk.ll" in info.value.log
    n.destroy_program(prog)


def test_errors_without_a_module_or_with_a_bad_option(nvvm):
    n = nvvm
    prog = n.create_program()
    for fn in (n.compile_program, n.verify_program):
        with pytest.raises(n.nvvmError, match=r"^ERROR_NO_MODULE_IN_PROGRAM \(8\)$"):
            fn(prog, 0, [])
    ir = scale_ir(n)
    n.add_module_to_program(prog, ir, len(ir), "scale.ll")
    with pytest.raises(n.nvvmError, match=r"^ERROR_INVALID_OPTION \(7\)$") as info:
        n.compile_program(prog, 1, ["-no-such-option"])
    assert b"-no-such-option" in info.value.log
    # an empty program's result and log: one NUL byte each
    empty = n.create_program()
    for size, get in ((n.get_compiled_result_size, n.get_compiled_result),
                      (n.get_program_log_size, n.get_program_log)):
        assert size(empty) == 1
        buf = bytearray(1)
        get(empty, buf)
        assert buf == b"\0"
    n.destroy_program(empty)
    n.destroy_program(prog)


def test_bad_input_names_the_parameter(nvvm):
    n = nvvm
    prog = n.create_program()
    ir = scale_ir(n)
    # a buffer is never None (buffers-not-none), as in cuda.bindings
    for fn in (n.add_module_to_program, n.lazy_add_module_to_program):
        with pytest.raises(ValueError, match="'buffer'"):
            fn(prog, None, 0, "x.ll")
        with pytest.raises(TypeError, match="'buffer'"):
            fn(prog, "IR as str", 9, "x.ll")
        with pytest.raises(ValueError, match="'buffer' has 4 bytes, fewer than the 5"):
            fn(prog, b"abcd", 5, "x.ll")
        with pytest.raises(TypeError, match="'name'"):
            fn(prog, ir, len(ir), 42)
        with pytest.raises(TypeError, match="'prog'"):
            fn("prog", ir, len(ir), "x.ll")
        with pytest.raises(OverflowError, match="'size'"):
            fn(prog, ir, -1, "x.ll")
    n.add_module_to_program(prog, ir, len(ir), "x.ll")
    with pytest.raises(ValueError, match="'options'"):
        n.compile_program(prog, 2, ["-opt=0"])
    with pytest.raises(TypeError, match="'options'"):
        n.compile_program(prog, 1, [None])
    with pytest.raises(TypeError, match="'num_options'"):
        n.verify_program(prog, "1", ["-opt=0"])
    n.compile_program(prog, 0, [])
    size = n.get_compiled_result_size(prog)
    with pytest.raises(ValueError, match="'buffer' holds 4 bytes, fewer than the %d" % size):
        n.get_compiled_result(prog, bytearray(4))
    with pytest.raises(ValueError, match="'buffer'"):
        n.get_program_log(prog, None)
    with pytest.raises(TypeError, match="'buffer'"):
        n.get_compiled_result(prog, "str")
    # an enum argument converts as cuda.bindings.nvvm's C int does (the
    # enum-args-int rule): no str or bytes, even of a number; a float
    # truncates (docs/compatibility.md, cubind.nvvm). eea7186 parsed "9".
    for text in ("ERROR_COMPILATION", "9", b"9"):
        with pytest.raises(TypeError, match="'result' must be an int"):
            n.get_error_string(text)
    assert n.get_error_string(9.7) == n.get_error_string(n.Result.ERROR_COMPILATION)
    with pytest.raises(TypeError, match="'result'"):
        n.get_error_string(None)
    # the range is a C int's, as cuda.bindings.nvvm's (-1 taken, 2**31 too
    # large); it was the unsigned range of the enum's values before
    assert type(n.get_error_string(-1)) is str
    with pytest.raises(OverflowError, match="'result'"):
        n.get_error_string(2**31)
    with pytest.raises(TypeError):
        n.create_program(1)
    n.destroy_program(prog)
    # a NULL program is the library's error, not a crash
    with pytest.raises(n.nvvmError, match=r"^ERROR_INVALID_PROGRAM \(5\)$"):
        n.get_program_log_size(0)


@pytest.mark.tsan
def test_threads_compile_the_same_ptx(nvvm):
    """8 threads compiling their own kernels at once give what one thread
    gives (every libnvvm call runs with the thread state detached)."""
    n = nvvm

    def ptx_of(i):
        return compiled_ptx(n, [(scale_ir(n, b"k%d" % i), "k%d.ll" % i)], ["-arch=compute_75"])

    same_from_threads(ptx_of)  # importing cubind.nvvm kept the GIL off


LOAD = ("import cubind.nvvm as n\n"
        "try:\n"
        "    print(n.version())\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        "print(n._library_status())\n")


def test_missing_library_is_a_clear_error_and_import_works(nvvm, tmp_path):
    missing = str(tmp_path / "libnvvm.so.99")
    r = run_python(LOAD, CUBIND_LIBNVVM=missing)
    assert r.returncode == 0, r.stderr
    assert "DriverNotFoundError" in r.stdout and missing in r.stdout
    assert "CUBIND_LIBNVVM is set" in r.stdout and "(False, " in r.stdout
    r = run_python("import cubind, cubind.nvvm; print(cubind.nvvmError.__name__)",
                   CUBIND_LIBNVVM=missing)
    assert r.stdout.strip() == "nvvmError", r.stderr


def test_found_in_a_toolkit_nvvm_lib64(nvvm, tmp_path):
    """A toolkit keeps libnvvm in nvvm/lib64 (library-toolkit-dir): found
    there under $CUDA_HOME and $CUDA_PATH, before the system's path."""
    real = nvvm._library_status()[1]
    lib = tmp_path / "toolkit" / "nvvm" / "lib64"
    lib.mkdir(parents=True)
    os.symlink(real, lib / "libnvvm.so.4")
    for var, other in (("CUDA_HOME", "CUDA_PATH"), ("CUDA_PATH", "CUDA_HOME")):
        r = run_python(LOAD, CUBIND_LIBNVVM="", **{var: str(tmp_path / "toolkit"), other: ""})
        assert "(True, '%s/libnvvm.so.4')" % lib in r.stdout, r.stdout + r.stderr
        assert "(2, " in r.stdout.splitlines()[0] or "(1, " in r.stdout.splitlines()[0]


def test_every_function_called(nvvm):
    """Runs last in this file: every function of the module was called
    above (the list comes from the module, not from this file)."""
    call.check_all_called(nvvm, 13)
