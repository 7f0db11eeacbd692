# SPDX-License-Identifier: Apache-2.0
"""The benchmark harness on the test-only fake driver: no timing is checked.

bench/ runs on the GPU machine, where a harness bug costs a run of scarce
device time; here the paired harness (bench/paired.py) and its thin
binding (bench/thin_ext.c, `_bench_thin`) run against tests/fakecuda, and
the tests check what each produces, never how fast. Needs
`ninja bench_sources` (build/bench/: c_bench's library, `_bench_floor`,
`_bench_thin`) and the bindings; tests/run runs it on the main interpreter.
"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_BUILD = os.path.join(ROOT, "build", "bench")
C_LIB = os.path.join(BENCH_BUILD, "libc_bench.so")
FAKE = os.environ.get("CUBIND_LIBCUDA") or os.path.join(ROOT, "build", "fakecuda", "libcuda.so.1")

CALL_CASES = ["ctx_get_current", "ctx_set_current", "device_get", "device_get_attribute",
              "event_record", "event_query", "stream_query", "pointer_get_attribute",
              "mem_alloc_free"]


def harness_env():
    env = dict(os.environ, CUBIND_LIBCUDA=FAKE)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "build", "python"), BENCH_BUILD])
    return env


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    # The fake driver loads any image; its kernels take no parameters
    # unless a test gives them a layout.
    path = tmp_path_factory.mktemp("bench") / "kernels.ptx"
    path.write_bytes(b"// fake kernels\0")
    return str(path)


def test_paired_run_measures_every_reference_beside_cubind(tmp_path, image):
    out = tmp_path / "paired.jsonl"
    cases = CALL_CASES + ["launch_empty_kernel"]
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "paired.py"), "run", "--c-lib", C_LIB,
         "--image", image, "--processes", "1", "--reps", "2", "--n", "300", "--n-launch", "30",
         "--cases", ",".join(cases), "--out", str(out)],
        env=harness_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    ok = {(rec["case"], rec["impl"]) for rec in records if rec.get("status") == "ok"}
    failed = {(rec["case"], rec["impl"]): rec.get("reason") for rec in records
              if rec.get("status") == "n/a" and rec["impl"] in ("c", "floor", "thin",
                                                                 "cubind.driver", "cubind.cu")}
    assert not failed, failed
    for case in cases:
        for impl in ("c", "floor", "thin", "cubind.driver", "cubind.cu"):
            assert (case, impl) in ok, (case, impl)
    for rec in records:
        if rec.get("status") == "ok":
            assert rec["ns"] > 0 and len(rec["reps"]) == 2, rec
    # The report puts the thin binding beside the floor in every table.
    report = r.stdout
    assert "| target | limit | cubind.driver | cubind.cu | floor | thin | held (driver, cu) |" in report
    assert "| case | c | floor | thin | cubind.driver | cubind.cu |" in report


def run_paired(out, image, processes, *extra):
    """paired.py run, quick, on two cases; the records it wrote and the run."""
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "paired.py"), "run", "--c-lib", C_LIB,
         "--image", image, "--processes", str(processes), "--reps", "1", "--n", "100",
         "--n-launch", "10", "--cases", "device_get,launch_empty_kernel", "--out", str(out),
         *extra],
        env=harness_env(), capture_output=True, text=True, timeout=300)
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return r, records


def cubind_files(records):
    """{process: (side, cubind.__file__)} of the processes' meta records."""
    return {rec["process"]: (rec["side"], rec["cubind_file"]) for rec in records
            if "cubind_file" in rec}


def test_paired_run_alternates_with_a_base_build(tmp_path, image):
    # The base build: a copy of this one elsewhere, which only the base
    # processes must import.
    base = tmp_path / "base"
    shutil.copytree(os.path.join(ROOT, "build", "python", "cubind"), base / "cubind")
    r, records = run_paired(tmp_path / "paired.jsonl", image, 3, "--base", str(base))
    assert r.returncode == 0, r.stderr
    assert records[0]["paired"] == "meta" and records[0]["base"] == str(base)
    origins = cubind_files(records)
    assert sorted(origins) == [0, 1, 2]
    assert [origins[k][0] for k in range(3)] == ["this", "base", "this"]
    assert origins[1][1] == str(base / "cubind" / "__init__.py")
    for k in (0, 2):
        assert origins[k][1] == os.path.join(ROOT, "build", "python", "cubind", "__init__.py")
    for rec in records:
        if "process" in rec:
            assert rec["side"] == ("base" if rec["process"] == 1 else "this"), rec
    ok = {(rec["side"], rec["case"], rec["impl"]) for rec in records if rec.get("status") == "ok"}
    for side in ("this", "base"):
        assert (side, "launch_empty_kernel", "cubind.driver") in ok, side
    report = r.stdout
    assert "\n### A/B against the base build\n" in report
    assert "2 processes of this build and 1 of the base build" in report
    assert "| device_get | cubind.driver ns | " in report
    assert "| launch_empty_kernel | cubind.driver ns | " in report


def test_paired_run_stops_when_this_build_finds_the_base(tmp_path, image):
    # this build's processes import cubind from build/python: given as the
    # base, the first process already proves the A/B would be void.
    base = os.path.join(ROOT, "build", "python")
    out = tmp_path / "paired.jsonl"
    r, records = run_paired(out, image, 2, "--base", base)
    assert r.returncode == 1
    assert "process 0 (this) imported cubind from" in r.stderr and "inside --base" in r.stderr
    assert r.stdout == ""
    assert {rec["process"] for rec in records if "process" in rec} == {0}


def test_paired_run_stops_when_the_base_finds_this_build(tmp_path, image):
    # A base directory without cubind: the base process falls back to this
    # build's, which must not pass for the base.
    base = tmp_path / "empty"
    base.mkdir()
    r, records = run_paired(tmp_path / "paired.jsonl", image, 2, "--base", str(base))
    assert r.returncode == 1
    assert "process 1 (base) imported cubind from" in r.stderr and "outside --base" in r.stderr
    assert cubind_files(records)[1] == (
        "base", os.path.join(ROOT, "build", "python", "cubind", "__init__.py"))


def test_a_run_cut_short_keeps_the_processes_it_finished(tmp_path, image):
    # The GPU machine ends a command at its time limit: the records of the
    # processes finished by then must be in --out, whole, not lost.
    out = tmp_path / "paired.jsonl"
    p = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "bench", "paired.py"), "run", "--c-lib", C_LIB,
         "--image", image, "--processes", "200", "--reps", "1", "--n", "100",
         "--n-launch", "10", "--cases", "device_get", "--out", str(out)],
        env=harness_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            if out.exists() and '"process": 1' in out.read_text():
                break
            time.sleep(0.05)
    finally:
        p.kill()
        p.wait()
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert records[0]["paired"] == "meta"
    finished = {rec["process"] for rec in records if "process" in rec}
    # cut while most processes were still to come, not after the last
    assert {0, 1} <= finished and len(finished) < 100, sorted(finished)
    assert any(rec.get("status") == "ok" and rec["process"] == 0 for rec in records)


def run_thin(code):
    """Runs `code` in a child with `_bench_thin` bound to c_bench's library
    opened on the fake driver (names: t, lib, h); prints from it are returned."""
    prelude = f"""
import ctypes, _bench_thin as t
lib = ctypes.CDLL({C_LIB!r})
lib.cb_lib_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
lib.cb_lib_proc.argtypes = [ctypes.c_char_p]
lib.cb_lib_proc.restype = ctypes.c_void_p
lib.cb_lib_handle.argtypes = [ctypes.c_char_p]
lib.cb_lib_handle.restype = ctypes.c_ulonglong
def h(name):
    return lib.cb_lib_handle(name.encode())
"""
    r = subprocess.run([sys.executable, "-c", prelude + code], env=harness_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_thin_binding_calls_what_cs_loops_call(image):
    out = run_thin(f"""
try:
    t.cuDeviceGet(0)
except RuntimeError as e:
    assert "not bound" in str(e), e
else:
    raise AssertionError("an unbound entry point was called")
assert lib.cb_lib_open({FAKE.encode()!r}, {image.encode()!r}, 0) == 0
for name in t.NAMES:
    address = lib.cb_lib_proc(name.encode())
    assert address, name
    t.bind(name, address, name != "cuDeviceGet")
assert lib.cb_lib_proc(b"cuNoSuchFunction") is None
assert t.cuDeviceGet(0) == h("dev")
assert t.cuCtxGetCurrent() == h("ctx") != 0
assert t.cuCtxSetCurrent(h("ctx")) is None
assert t.cuDeviceGetAttribute(16, h("dev")) > 0       # multiprocessor count
assert t.cuEventRecord(h("event"), h("stream")) is None
assert t.cuStreamSynchronize(h("stream")) is None
assert t.cuEventQuery(h("event")) is None and t.cuStreamQuery(h("stream")) is None
assert t.cuPointerGetAttribute(2, h("dptr")) == 2      # CU_MEMORYTYPE_DEVICE
assert t.cuPointerGetAttribute(3, h("dptr")) == h("dptr")   # its device pointer
p = t.cuMemAlloc(1024)
assert p and t.cuPointerGetAttribute(3, p) == p
assert t.cuMemFree(p) is None
empty = h("empty")
assert empty != 0
assert t.cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, h("stream"), 0, 0) is None
print("ok")
""")
    assert out == ["ok"]


def test_thin_binding_rejects_bad_arguments(image):
    out = run_thin(f"""
assert lib.cb_lib_open({FAKE.encode()!r}, {image.encode()!r}, 0) == 0
for name in t.NAMES:
    t.bind(name, lib.cb_lib_proc(name.encode()), True)
checks = [
    (lambda: t.cuCtxSetCurrent(), TypeError, "takes 1 arguments (0 given)"),
    (lambda: t.cuCtxSetCurrent(-1), OverflowError, ""),
    (lambda: t.cuCtxSetCurrent(ctx=0), TypeError, "no keyword arguments"),
    (lambda: t.cuDeviceGet(2**31), OverflowError, "does not fit an int"),
    (lambda: t.cuLaunchKernel(0, 2**32, 1, 1, 1, 1, 1, 0, 0, 0, 0), OverflowError,
     "does not fit an unsigned int"),
    (lambda: t.cuMemFree(0xDEAD000), RuntimeError, "cuMemFree failed: CUresult"),
    (lambda: t.bind("cuNoSuchFunction", 8, True), ValueError, "unknown entry point"),
    (lambda: t.bind("cuDeviceGet", 0, True), ValueError, "address is 0"),
]
for call, exc, text in checks:
    try:
        call()
    except exc as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(text)
print("ok")
""")
    assert out == ["ok"]


def test_c_library_names_only_what_it_resolved():
    lib = ctypes.CDLL(C_LIB)
    lib.cb_lib_proc.argtypes = [ctypes.c_char_p]
    lib.cb_lib_proc.restype = ctypes.c_void_p
    lib.cb_lib_handle.argtypes = [ctypes.c_char_p]
    lib.cb_lib_handle.restype = ctypes.c_ulonglong
    # Before cb_lib_open nothing is resolved and no handle exists.
    assert lib.cb_lib_proc(b"cuLaunchKernel") is None
    assert lib.cb_lib_proc(None) is None
    assert lib.cb_lib_handle(b"stream") == 0 and lib.cb_lib_handle(None) == 0


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_launch_instructions_of_one_build_against_itself_are_equal(tmp_path):
    # bench/launch_instructions.py counts, it does not time: a copy of this
    # build as the base must give the very same count per launch (the
    # script runs both from paths of one length: a build imported from a
    # longer path counts up to 1 % more or less).
    base = tmp_path / "base"
    shutil.copytree(os.path.join(ROOT, "build", "python", "cubind"),
                    base / "build" / "python" / "cubind")
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "launch_instructions.py"), "--base",
         str(base), "--n", "100", "--cases", "launch_16_args", "--faces", "cu"],
        env=harness_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| launch_16_args |")]
    assert len(rows) == 1, r.stdout
    _, case, face, this, other, change, _ = [c.strip() for c in rows[0].split("|")]
    assert face == "cubind.cu" and this == other and change == "+0.0 %", rows
    assert int(this) > 1000   # a launch of 16 parameters is more than a loop
