# SPDX-License-Identifier: Apache-2.0
"""The junk sweep over cubind.nvrtc, cubind.rtc and cubind.nvjitlink: every
exported callable (the functions of both nvrtc faces and of nvjitlink, and
their classes: enums, handles, errors, and the public methods of an
instance of each) called with every combination of junk arguments (up to
three, and one more than each function takes), on the real libraries, in
a child process: each call returns, or raises TypeError, ValueError,
OverflowError or the API's own error. Ints are left out: a handle given as
an int is an address the library dereferences, in cuda.bindings as here
(the hypothesis fuzz of tests/fuzz keeps to the same rule).

Each call's name is written (unbuffered) to a log before it is made, so a
child that dies is reported with the call that killed it, as
tests/fuzz/junk_sweep.py does for the driver's modules (5703091 swept the
functions only, and a crash named no call)."""
import pytest

from conftest import run_python_args
from nvrtc_common import nvrtc  # noqa: F401

SWEEP = r"""
import faulthandler, inspect, itertools, os, sys
faulthandler.enable()
import cubind, cubind.nvrtc as n, cubind.rtc as rtc, cubind.nvjitlink as j

log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
crash_at = os.environ.get("SWEEP_CRASH_AT")  # the harness's own test
JUNK = [None, "junk", b"junk", 1.5, object(), [], [None], (b"a",), bytearray(4), "a\0b"]
ALLOWED = (TypeError, ValueError, OverflowError, cubind.NVRTCError, cubind.nvJitLinkError)
counts = {"functions": 0, "classes": 0, "methods": 0, "calls": 0}


def call(what, f, args):
    counts["calls"] += 1
    os.write(log, ("%s #%d\n" % (what, counts["calls"])).encode())
    if what == crash_at:
        # SIGABRT, not a wild read: under ASan (tests/fuzz/test_python_asan.py)
        # a SIGSEGV becomes exit status 1, an abort stays a signal
        os.abort()
    try:
        f(*args)
    except ALLOWED:
        pass


def sweep(what, f, nparams):
    for k in range(nparams + 2):
        combos = (itertools.product(JUNK, repeat=k) if k <= 3
                  else [tuple(JUNK[(i + s) % len(JUNK)] for i in range(k)) for s in range(len(JUNK))])
        for args in combos:
            call(what, f, args)


def instance(cls):
    members = getattr(cls, "__members__", None)
    if members:
        return next(iter(members.values()))
    try:
        return cls()
    except Exception:
        return None


for mod in (n, rtc, j):
    for name in sorted(dir(mod)):
        f = getattr(mod, name)
        if name.startswith("_") or not callable(f):
            continue
        what = "%s.%s" % (mod.__name__, name)
        if not isinstance(f, type):
            counts["functions"] += 1
            sweep(what, f, len(inspect.signature(f).parameters))
            continue
        counts["classes"] += 1
        sweep(what, f, 1)
        obj = instance(f)
        for attr in sorted(dir(obj)) if obj is not None else ():
            m = getattr(obj, attr, None)
            if attr.startswith("_") or not callable(m) or isinstance(m, type):
                continue
            counts["methods"] += 1
            sweep("%s().%s" % (what, attr), m, 1)
print(counts["functions"], counts["classes"], counts["methods"], counts["calls"])
"""


def crashed_in(log):
    """The last call the log names: the one a dead child was making."""
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError:
        return "(no log)"
    return lines[-1].rsplit(" #", 1)[0] if lines else "(before the first call)"


def test_junk_arguments_give_clean_outcomes(nvrtc, tmp_path):  # noqa: F811
    log = str(tmp_path / "sweep.log")
    r = run_python_args(SWEEP, log)
    assert r.returncode == 0, "died in %s (exit %d)\n%s" % (crashed_in(log), r.returncode,
                                                            r.stderr[-3000:])
    functions, classes, methods, calls = map(int, r.stdout.split())
    assert functions == 24 + 24 + 14  # both nvrtc faces and nvjitlink
    # nvrtcResult, nvrtcProgram, NVRTCError (both faces), Result,
    # InputType, nvJitLinkHandle, nvJitLinkError
    assert classes == 3 + 3 + 4, classes
    assert methods >= 3, methods  # getPtr() of the handles at least
    assert calls > 20000


def test_a_crash_is_attributed_to_its_call(nvrtc, tmp_path):  # noqa: F811
    """The harness's own check: a child killed in a call is reported with
    that call (the log's last line)."""
    log = str(tmp_path / "crash.log")
    r = run_python_args(SWEEP, log, SWEEP_CRASH_AT="cubind.nvjitlink.version")
    assert r.returncode < 0, (r.returncode, r.stdout)
    assert crashed_in(log) == "cubind.nvjitlink.version"


@pytest.mark.parametrize("module", ["cubind.nvrtc", "cubind.rtc", "cubind.nvjitlink"])
def test_library_modules_refuse_what_the_driver_refuses(nvrtc, module):  # noqa: F811
    """Issue 27 item 7 on the library modules (the same runtime as the
    driver's): enum tables read-only, enum constructors take ints only, a
    keyword with an embedded NUL is not its prefix."""
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
    for value in (0.0, "0", b"0", None):
        with pytest.raises(TypeError):
            enum(value)
    if module == "cubind.nvjitlink":
        f, value, error = mod.get_error_log_size, None, cubind.nvJitLinkError
    else:
        f, value, error = mod.nvrtcGetErrorString, success, ()
    pname = next(iter(inspect.signature(f).parameters))
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        f(**{pname + "\0x": value})
    try:  # the whole name is the parameter's
        f(**{pname: value})
    except error:  # nvJitLink's answer to a NULL handle
        pass
