# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures for the Python tests: the test-only fake driver
(tests/fakecuda, loaded through CUBIND_LIBCUDA by tests/run) and its control
API through ctypes."""
import json
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

from fake_driver import open_fake

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"

# tests/run's ThreadSanitizer step runs the `tsan` tests on a 3.13t built
# --with-thread-sanitizer, 5-10 times slower: the threaded tests repeat
# fewer rounds there (each still races every thread at least twice).
UNDER_TSAN = "--with-thread-sanitizer" in (sysconfig.get_config_var("CONFIG_ARGS") or "")
ROUNDS = 2 if UNDER_TSAN else 4      # rounds of a threaded test in one process
PROCESSES = 2 if UNDER_TSAN else 5   # fresh processes of a first-use race


def _config(name):
    for line in (BUILD / "config.ninja").read_text().splitlines():
        if line.startswith(name + " = "):
            return line.split(" = ", 1)[1]
    raise KeyError(name)


# The library modules' tests load the CPU libraries configure fetched
# unless the variable naming the library is already set
# (tests/fetched_libraries.py).
sys.path.insert(0, str(ROOT / "tests"))
from fetched_libraries import cuda_driver_loadable, point_at_fetched_libraries  # noqa: E402,F401
sys.path.pop(0)
point_at_fetched_libraries(os.environ)


@pytest.fixture(scope="session")
def fake():
    """The fake driver's control functions (fakecuda_*), reset per use."""
    path = os.environ.get("CUBIND_LIBCUDA")
    assert path and "fakecuda" in path, "tests/run sets CUBIND_LIBCUDA to the fake driver"
    lib = open_fake(path)
    return lib


_fake_modules = []  # modules fake_function loaded: never unloaded


def symbols_file(extension):
    """Where an extension's full symbol table is: the shipped extension is
    stripped and its symbols are in the debug file the build split off
    (build/debug/NAME.debug, packaging/split-debug.sh), unless
    ./configure --debug-info kept them in place."""
    debug = ROOT / "build" / "debug" / (pathlib.Path(extension).name + ".debug")
    return str(debug) if debug.exists() else str(extension)


def fake_function(drv, name):
    """Function `name` (bytes) of a fake module loaded for it through `drv`
    (the fake driver makes any name a kernel, with the parameters
    fakecuda_set_param_layout gave that name). The module is kept loaded."""
    err, mod = drv.cuModuleLoadData(b"fake image for " + name + b"\0")
    assert err == 0
    err, f = drv.cuModuleGetFunction(mod, name)
    assert err == 0
    _fake_modules.append(mod)
    return f


@pytest.fixture(scope="session")
def model():
    """The model of the default header, from `cubind dump`."""
    header = pathlib.Path(_config("cuda_include")) / "cuda.h"
    out = subprocess.run([str(BUILD / "cubind"), "dump", "--header", str(header)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.fixture(scope="session")
def unsupported():
    """Names the generator reported as not bound (out/unsupported.txt)."""
    names = set()
    for line in (ROOT / "out" / "unsupported.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            names.add(line.split(":", 1)[0])
    return names


@pytest.fixture(scope="session")
def drv():
    import cubind.driver
    assert cubind.driver.cuInit(0)[0] == 0
    return cubind.driver


@pytest.fixture
def ctx(drv):
    """Device 0's primary context, current on the calling thread (after
    cuInit): what most tests of the fake driver need first."""
    assert drv.cuInit(0)[0] == 0
    err, dev = drv.cuDeviceGet(0)
    assert err == 0
    err, pctx = drv.cuDevicePrimaryCtxRetain(dev)
    assert err == 0
    assert drv.cuCtxSetCurrent(pctx)[0] == 0
    return pctx


def compare_report(*args):
    """tools/compare_reference.py --json ARGS against the built package, in
    a child without the fake driver: its report."""
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    env.pop("CUBIND_LIBCUDA", None)
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "compare_reference.py"), "--json",
                        *args], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def run_python(code, **env):
    """Runs code in a fresh interpreter (the driver loads once per process)."""
    return run_python_args(code, **env)


def run_python_args(code, *args, **env):
    """run_python with sys.argv[1:] = args."""
    full_env = dict(os.environ, **env)
    # the child imports fake_driver from here, beside what it already finds
    full_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(pathlib.Path(__file__).parent), full_env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


# The start of a fresh interpreter's script that uses the driver: rt
# (cubind._runtime), d (cubind.driver), the primary context of device 0
# current, a stream s.
STREAM_PROLOGUE = r"""
import cubind._runtime as rt
import cubind.driver as d
assert d.cuInit(0)[0] == 0
err, ctx = d.cuDevicePrimaryCtxRetain(0)
assert d.cuCtxSetCurrent(ctx)[0] == 0
err, s = d.cuStreamCreate(0)
assert err == 0
"""


RUN_THREADS = """
ts = [threading.Thread(target=body, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
print("bad", len(bad))
"""


def assert_race_clean(setup, processes=PROCESSES):
    """A race at first use, in fresh interpreters: `setup` defines N, a
    list `bad` and body(i), which N threads then run at once; each process
    must exit cleanly with `bad` empty."""
    for _ in range(processes):
        proc = run_python(setup + RUN_THREADS)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "bad 0"


def rss_bytes():
    """This process's resident set (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# Set by tests/fuzz/fuzzsupport.asan_python_env for the ASan+UBSan rerun of
# this suite. There ASan's quarantine keeps freed memory resident (256 MiB by
# default) and PYTHONMALLOC=malloc leaves sys.getallocatedblocks() at 0, so
# neither count is a leak oracle: assert_no_growth still makes every call (a
# memory error is ASan's to report) but measures only on the plain builds,
# which run this same suite on both interpreters.
UNDER_ASAN = os.environ.get("CUBIND_UNDER_ASAN") == "1"


def assert_no_growth(fn, rounds=300, block_slack=16, rss_slack=8 << 20):
    """fn() repeated leaves nothing behind: after warming up, `rounds` more
    calls grow neither the interpreter's allocated blocks (as
    tests/fuzz/nomemory.py counts them) beyond block_slack nor the
    resident set beyond rss_slack bytes. Under ASan only the calls run
    (see UNDER_ASAN)."""
    import gc
    for _ in range(20):
        fn()
    if UNDER_ASAN:
        for _ in range(rounds):
            fn()
        return
    gc.collect()
    blocks, rss = sys.getallocatedblocks(), rss_bytes()
    for _ in range(rounds):
        fn()
    gc.collect()
    grown = sys.getallocatedblocks() - blocks
    assert grown <= block_slack, f"{grown} blocks more after {rounds} calls"
    assert rss_bytes() - rss <= rss_slack, f"RSS grew {rss_bytes() - rss} bytes over {rounds} calls"
