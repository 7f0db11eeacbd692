# SPDX-License-Identifier: Apache-2.0
"""The junk sweep over cubind.nvrtc, cubind.rtc, cubind.nvjitlink and cubind.nvvm
(and, in its own test, cubind.nvfatbin and cubind.cufile):
tests/fuzz/junk_sweep.py --modules libraries, in a child process, on the
real libraries. Every exported callable (the functions of both nvrtc faces,
of nvjitlink and nvvm, and their classes: enums, handles, errors, and the public
methods of an instance of each) is called with every combination of junk
arguments (up to three, and one more than each function takes): each call
returns, or raises TypeError, ValueError, OverflowError or the API's own
error. Ints are left out: a handle given as an int is an address the
library dereferences.

Each call's name is written (unbuffered) to a log before it is made, so a
child that dies is reported with the call that killed it, as for the
driver's modules (tests/fuzz/test_junk_sweep.py; 5703091 swept the
functions only, and a crash named no call)."""
import pathlib
import re
import runpy
import subprocess
import sys

import pytest

from conftest import UNDER_ASAN
from nvrtc_common import nvrtc  # noqa: F401

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "junk_sweep.py"
# the reader of the script's log (the script's top level imports only the
# standard library; its main() runs only as a script)
crashed_in = runpy.run_path(str(SCRIPT))["crashed_in"]


def sweep(log, *options, timeout=120):
    """The sweep's child, finished; a child still running after `timeout`
    seconds is killed and fails the test naming the call it hung in (the
    log's last line), as a child that dies is reported."""
    try:
        return subprocess.run([sys.executable, str(SCRIPT), "--modules", "libraries", "--log",
                               log, *options], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail("the junk sweep was still running after %d s, in %s" % (timeout,
                                                                            crashed_in(log)),
                    pytrace=False)


# The leak check counts pymalloc's blocks: none under ASan's PYTHONMALLOC=malloc
# (tests/fuzz/test_python_asan.py), where it would only add time.
LEAKS = () if UNDER_ASAN else ("--leaks",)


def test_junk_arguments_give_clean_outcomes(nvrtc, tmp_path):  # noqa: F811
    log = str(tmp_path / "sweep.log")
    r = sweep(log, *LEAKS, timeout=300)
    assert r.returncode >= 0, "died in %s (signal %d)\n%s" % (crashed_in(log), -r.returncode,
                                                              r.stderr[-3000:])
    assert r.returncode == 0, "exit %d (last call logged: %s)\n%s\n%s" % (
        r.returncode, crashed_in(log), r.stdout[-6000:], r.stderr[-3000:])
    m = re.search(r"^swept functions (\d+) classes (\d+) methods (\d+)$", r.stdout, re.M)
    assert m, r.stdout
    functions, classes, methods = map(int, m.groups())
    calls = int(re.search(r"^callables \d+ calls (\d+)$", r.stdout, re.M).group(1))
    assert functions == 24 + 24 + 14 + 13  # both nvrtc faces, nvjitlink, nvvm
    # nvrtcResult, nvrtcProgram, NVRTCError (both faces), Result,
    # InputType, nvJitLinkHandle, nvJitLinkError, nvvm's Result,
    # nvvmProgram, nvvmError
    assert classes == 3 + 3 + 4 + 3, classes
    assert methods >= 3, methods  # getPtr() of the handles at least
    assert calls > 20000
    # junk per parameter (issue 42 item 9): ints reach the integer and enum
    # parameters, and each function's calls were repeated for leaks (which
    # found the raising faces' errors reading `name` and setting `log`
    # through a fresh str per call, kept by CPython's type attribute cache:
    # blocks grew by 2 to 11 per 400 calls of cubind.rtc's functions; they
    # are interned names now, runtime/module/bind_support.c's cbs_set_attr)
    if LEAKS:
        assert re.search(r"^leak-checked functions %d$" % functions, r.stdout, re.M), r.stdout
    assert int(re.search(r"^outcome OverflowError (\d+)$", r.stdout, re.M).group(1)) > 0
    assert re.search(r"^usable afterwards: nvrtcVersion version ir_version$", r.stdout, re.M), \
        r.stdout


def test_a_crash_is_attributed_to_its_call(nvrtc, tmp_path):  # noqa: F811
    """The harness's own check: a child killed in a call is reported with
    that call (the log's last line)."""
    log = str(tmp_path / "crash.log")
    r = sweep(log, "--crash-at", "cubind.nvjitlink.version")
    assert r.returncode < 0, (r.returncode, r.stdout)
    assert crashed_in(log) == "cubind.nvjitlink.version"


def test_a_hang_is_attributed_to_its_call(nvrtc, tmp_path):  # noqa: F811
    """A child that never returns from a call is killed at the timeout
    and reported with that call (before, subprocess.run's TimeoutExpired
    named none)."""
    log = str(tmp_path / "hang.log")
    with pytest.raises(pytest.fail.Exception) as e:
        sweep(log, "--hang-at", "cubind.nvjitlink.version", timeout=15)
    assert str(e.value) == "the junk sweep was still running after 15 s, in " \
        "cubind.nvjitlink.version", str(e.value)


@pytest.mark.parametrize("module", ["cubind.nvrtc", "cubind.rtc", "cubind.nvjitlink", "cubind.nvvm"])
def test_library_modules_refuse_what_the_driver_refuses(nvrtc, module):  # noqa: F811
    """Issue 27 item 7 on the library modules (the same runtime as the
    driver's): enum tables read-only, enum constructors convert nothing (a
    lookup by value, as cuda.bindings'), a keyword with an embedded NUL is
    not its prefix."""
    import importlib
    import inspect

    import cubind

    mod = importlib.import_module(module)
    enum = mod.nvrtcResult if hasattr(mod, "nvrtcResult") else mod.Result
    success = enum(0)
    for table in ("_value2member_map_", "__members__"):
        with pytest.raises(TypeError):
            getattr(enum, table)[0] = 5
    assert enum(0) is success and repr(success).endswith(": 0>")
    assert enum(0.0) is success  # equal to 0: found, as cuda.bindings finds it
    for value in (0.5, "0", b"0", None):
        with pytest.raises(ValueError):
            enum(value)
    if module == "cubind.nvjitlink":
        f, value, error = mod.get_error_log_size, None, cubind.nvJitLinkError
    elif module == "cubind.nvvm":
        f, value, error = mod.get_program_log_size, None, cubind.nvvmError
    else:
        f, value, error = mod.nvrtcGetErrorString, success, ()
    pname = next(iter(inspect.signature(f).parameters))
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        f(**{pname + "\0x": value})
    try:  # the whole name is the parameter's
        f(**{pname: value})
    except error:  # nvJitLink's answer to a NULL handle
        pass


def sweep_group(group, tmp_path):
    """junk_sweep.py --modules GROUP in a fresh process: (functions swept,
    classes swept, its stdout), the process having exited 0 (a crash names
    the last call logged)."""
    log = str(tmp_path / "sweep.log")
    r = subprocess.run([sys.executable, str(SCRIPT), "--modules", group, "--log", log],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "exit %d (last call logged: %s)\n%s\n%s" % (
        r.returncode, crashed_in(log), r.stdout[-6000:], r.stderr[-3000:])
    m = re.search(r"^swept functions (\d+) classes (\d+) methods (\d+)$", r.stdout, re.M)
    assert m, r.stdout
    return int(m.group(1)), int(m.group(2)), r.stdout


def test_fetched_library_modules_junk_sweep(tmp_path):
    """The same sweep over cubind.nvfatbin and cubind.cufile (no GDS), on
    CUDA 12.4's libraries that conftest.py names (skipped without them):
    every call returns or raises TypeError, ValueError, OverflowError,
    OSError or the library's error; none crashes."""
    import os
    if not (os.environ.get("CUBIND_LIBNVFATBIN") and os.environ.get("CUBIND_LIBCUFILE")):
        pytest.skip("no fetched libnvfatbin/libcufile (scripts/fetch-cuda-libs.sh)")
    functions, classes, out = sweep_group("fetched", tmp_path)
    assert functions == 9 + 25  # nvfatbin, cufile (op_status_error among them)
    assert classes >= 20, classes  # the enums, structs and errors
    assert re.search(r"^usable afterwards: version get_version$", out, re.M), out


def test_nvml_junk_sweep(tmp_path):
    """The same sweep over cubind.nvml, on the 550 driver's NVML that
    conftest.py names (skipped without it), with no NVIDIA driver: every
    call returns or raises TypeError, ValueError, OverflowError or
    NvmlError; none crashes."""
    import os
    if not os.environ.get("CUBIND_LIBNVML"):
        pytest.skip("no fetched libnvidia-ml.so.1 (scripts/fetch-cuda-libs.sh 12.4-driver)")
    functions, classes, out = sweep_group("nvml", tmp_path)
    assert functions == 325
    assert classes >= 150, classes  # the enums, structs and errors
    assert re.search(r"^usable afterwards: system_get_nvml_version$", out, re.M), out
