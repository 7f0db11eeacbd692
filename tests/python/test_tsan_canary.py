# SPDX-License-Identifier: Apache-2.0
"""ThreadSanitizer is really watching in tests/run's TSan step: a deliberate
race in a library built with the TSan extensions' rule (tests/c/tsan_canary.c)
is reported, and cubind's modules there are instrumented. Runs only on the
free-threaded CPython built --with-thread-sanitizer."""
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CANARY = ROOT / "build" / "tests" / "tsan_canary" / "libtsan_canary.so"

pytestmark = [
    pytest.mark.tsan,
    pytest.mark.skipif("--with-thread-sanitizer" not in (sysconfig.get_config_var("CONFIG_ARGS") or ""),
                       reason="needs the interpreter built --with-thread-sanitizer (tests/run)"),
]


def test_a_race_in_an_instrumented_library_is_reported():
    # The step's options, but the report on stderr (not in its log directory,
    # which must stay free of reports) and fatal.
    opts = [o for o in os.environ.get("TSAN_OPTIONS", "").split()
            if not o.startswith(("log_path=", "halt_on_error=", "exitcode="))]
    env = dict(os.environ, TSAN_OPTIONS=" ".join(opts + ["halt_on_error=1", "exitcode=66"]))
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1]).tsan_canary_race(); print('not halted')"
    p = subprocess.run([sys.executable, "-c", code, str(CANARY)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 66, (p.returncode, p.stdout, p.stderr[-3000:])
    assert p.stdout == ""
    assert "WARNING: ThreadSanitizer: data race" in p.stderr, p.stderr[-3000:]
    assert "canary_bump" in p.stderr and "tsan_canary.c" in p.stderr, p.stderr[-3000:]


def test_cubind_modules_are_instrumented():
    import cubind._runtime
    import cubind.driver
    for module in (cubind.driver, cubind._runtime):
        path = pathlib.Path(module.__file__)
        assert path.parent == ROOT / "build" / "tsan" / "python" / "cubind", path
        assert b"__tsan_func_entry" in path.read_bytes(), path
