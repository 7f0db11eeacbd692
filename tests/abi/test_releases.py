# SPDX-License-Identifier: Apache-2.0
"""Regeneration per CUDA release: the generator produces, compiles and
imports bindings for the 11.8, 12.4 and 13.0 headers with no per-release
edits, and each gets the ABI variant its own header declares through
cuGetProcAddress (checked on the test-only fake driver)."""
import os
import re

import pytest

from conftest import (CONSUMER_DIR, build_bindings, compile_consumer, generate, header_version,
                      py_env, release_include, run, BUILD_PY)

# (function called, its Python arguments after `dev`, cuGetProcAddress
# version the header's PFN typedef gives) per release. 11.8 and 12.4 declare
# cuCtxCreate as _v2 (3020) and cuCtxCreate_v3 (11040) separately; 13.0's
# cuCtxCreate is _v4 (12050).
SCRIPT = r"""
import ctypes, json, os, sys
import cubind.driver as d
fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
out = {"header": d.CUBIND_HEADER_CUDA_VERSION}
out["init"] = int(d.cuInit(0)[0])
rc, dev = d.cuDeviceGet(0)
out["device_get"] = int(rc)
out["driver_version"] = [int(x) for x in d.cuDriverGetVersion()]
calls = json.loads(sys.argv[1])
for name, args in calls:
    fn = getattr(d, name)
    res = fn(*[dev if a == "dev" else a for a in args])
    out[name] = [int(res[0]), fake.fakecuda_last_proc_version(b"cuCtxCreate")]
    if int(res[0]) == 0:
        d.cuCtxDestroy(res[1])
print(json.dumps(out))
"""

CASES = {
    "11.8": [["cuCtxCreate", [0, "dev"], 3020], ["cuCtxCreate_v3", [None, 0, 0, "dev"], 11040]],
    "12.4": [["cuCtxCreate", [0, "dev"], 3020], ["cuCtxCreate_v3", [None, 0, 0, "dev"], 11040]],
    "13.0": [["cuCtxCreate", [None, 0, "dev"], 12050]],
}


@pytest.fixture(scope="module", params=["11.8", "12.4"])
def release(request, tmp_path_factory):
    rel = request.param
    inc = release_include(rel)
    d = tmp_path_factory.mktemp("release-" + rel)
    gen = str(d / "gen")
    p = generate(inc, gen)
    # Rules naming what this header lacks are reported, never fatal.
    assert "functions bound" in p.stderr
    pkg = build_bindings(gen, inc, str(d / "pkg"))
    return rel, inc, gen, pkg, p.stderr


def test_old_release_binds_every_function(release):
    # No per-release edits: every function of the older header is bound
    # (rules follow a function renamed between releases through the symbol
    # its header declares, and a rule for what the header lacks, such as a
    # handle-cast to CUkernel before 12.0, leaves the function bound).
    rel, inc, gen, pkg, stderr = release
    with open(os.path.join(gen, "unsupported.txt")) as f:
        unsupported = [line for line in f if line.strip() and not line.startswith("#")]
    assert unsupported == [], (rel, unsupported)
    m = re.search(r"cubind: (\d+) of (\d+) functions bound", stderr)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) > 300, stderr[-2000:]
    if rel == "11.8":   # no CUkernel yet: its handle-cast rules are reported, not applied
        assert "rule 'handle-cast cuLaunchKernel f' matches nothing" in stderr


def _run_calls(pkg, rel):
    import json
    calls = [[n, a] for n, a, _ in CASES[rel]]
    p = run([__import__("sys").executable, "-c", SCRIPT, json.dumps(calls)], env=py_env(pkg))
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout)


def test_old_release_generates_compiles_and_runs(release):
    rel, inc, gen, pkg, _ = release
    out = _run_calls(pkg, rel)
    assert int(out["header"]) == header_version(inc)
    assert out["init"] == 0 and out["device_get"] == 0
    for name, _, version in CASES[rel]:
        assert out[name] == [0, version], (name, out[name])


def test_current_release_runs(cuda_include):
    if header_version(cuda_include) != 13000:
        pytest.skip("the default cuda.h is not 13.0")
    out = _run_calls(BUILD_PY, "13.0")
    for name, _, version in CASES["13.0"]:
        assert out[name] == [0, version]


def test_consumer_of_same_release_imports(release, tmp_path):
    """A consumer built from an old release's header imports into bindings
    generated from that same header and calls through the table."""
    rel, inc, gen, pkg, _ = release
    cdir = compile_consumer(gen, inc, str(tmp_path / "consumer"))
    p = run([__import__("sys").executable, "-c",
             "import _cubind_consumer as c; print(c.init(0), c.device_get(0), c.cuda_version())"],
            env=py_env(cdir, pkg))
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.split() == ["0", "(0,", "0)", str(header_version(inc))]
