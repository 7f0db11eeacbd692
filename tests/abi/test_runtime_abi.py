# SPDX-License-Identifier: Apache-2.0
"""The runtime's ABI manifests: `cubind manifest --rules gen/runtime.rules`
reads cuda_runtime_api.h as generating does (its bind-header files, the
interop headers with runtime/interop's stand-ins), so the saved
abi/runtime-13.0.json holds driver_types.h's records and the profiler's
and interop headers' functions; it and those of the 11.8 and 12.4 headers
(scripts/fetch-cuda-headers.sh) regenerate unchanged, the committed
abi-diff reports between them (abi/diff-runtime-*.txt) are current, and abi-check finds cubind.runtime's capsule table and it alike: the
table carries every function the manifest reads, the bind-header files'
and cudaCreateChannelDesc (a struct returned by value) included."""
import json
import os
import re
import sys

import pytest

from conftest import (BUILD_PY, CUBIND, EXT_SUFFIX, REPO, api_header, check_saved_manifest,
                      release_runtime_include, run)

SAVED = os.path.join(REPO, "abi", "runtime-13.0.json")
RULES = os.path.join(REPO, "gen", "runtime.rules")


def runtime_header(release):
    """cuda_runtime_api.h of a release: 13.0's is the one configure
    generated cubind.runtime from, 11.8's and 12.4's the fetched ones
    (scripts/fetch-cuda-headers.sh --runtime)."""
    if release == "13.0":
        return api_header("runtime")
    return os.path.join(release_runtime_include(release), "cuda_runtime_api.h")


@pytest.mark.parametrize("release", ["11.8", "12.4", "13.0"])
def test_saved_manifest_regenerates_unchanged(release, tmp_path):
    m = check_saved_manifest(os.path.join(REPO, "abi", "runtime-%s.json" % release),
                             runtime_header(release), tmp_path, "--rules", RULES)
    assert m["header"] == "cuda_runtime_api.h"
    assert m["cuda_version"] == {"11.8": 11080, "12.4": 12040, "13.0": 13000}[release]
    # the bind-header files were read: driver_types.h's records, the profiler's functions
    assert "cudaDeviceProp" in {r["name"] for r in m["records"]}
    assert "cudaProfilerStart" in {f["name"] for f in m["functions"]}


@pytest.mark.parametrize("old,new", [("11.8", "12.4"), ("12.4", "13.0")])
def test_committed_diff_report_is_current(old, new):
    """abi/diff-runtime-OLD-NEW.txt is what `cubind abi-diff` says between
    the saved manifests (both breaking: functions removed and changed)."""
    p = run([CUBIND, "abi-diff", "runtime-%s.json" % old, "runtime-%s.json" % new],
            cwd=os.path.join(REPO, "abi"))
    assert p.returncode == 1, p.stderr
    # 12.0 removed texture references; 13.0 the cudaThread* functions
    assert {"11.8": "- cudaBindTexture  [breaking]",
            "12.4": "- cudaThreadExit  [breaking]"}[old] in p.stdout
    with open(os.path.join(REPO, "abi", "diff-runtime-%s-%s.txt" % (old, new))) as f:
        assert p.stdout == f.read(), ("run `cd abi && ../build/cubind abi-diff runtime-%s.json "
                                      "runtime-%s.json > diff-runtime-%s-%s.txt`" % (old, new, old, new))


def test_manifest_reads_the_bind_header_files(tmp_path):
    m = json.load(open(SAVED))
    assert m["header"] == "cuda_runtime_api.h" and m["cuda_version"] >= 13000
    names = {f["name"] for f in m["functions"]}
    assert {"cudaMalloc", "cudaProfilerStart", "cudaGLGetDevices",
            "cudaEGLStreamConsumerConnect", "cudaVDPAUGetDevice"} <= names
    records = {r["name"] for r in m["records"]}
    assert {"cudaDeviceProp", "cudaEglFrame_st", "cudaChannelFormatDesc"} <= records
    # without the rules the header alone: no profiler functions
    out = str(tmp_path / "plain.json")
    assert run([CUBIND, "manifest", "--header", api_header("runtime"), "--out", out]).returncode == 0
    assert "cudaProfilerStart" not in {f["name"] for f in json.load(open(out))["functions"]}
    p = run([CUBIND, "manifest", "--header", api_header("runtime"), "--rules",
             str(tmp_path / "no_such.rules")])
    assert p.returncode == 1 and "no_such.rules" in p.stderr


def test_abi_diff_reads_it():
    assert run([CUBIND, "abi-diff", SAVED, SAVED]).returncode == 0
    p = run([CUBIND, "abi-diff", SAVED, os.path.join(REPO, "abi", "nvrtc-13.0.json")])
    assert p.returncode == 1


def test_abi_check_finds_the_capsule_true_to_it():
    so = os.path.join(BUILD_PY, "cubind", "runtime" + EXT_SUFFIX)
    p = run([CUBIND, "abi-check", so, "--header", SAVED, "--python", sys.executable])
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"functions: +0 added, +0 removed, +0 changed \(0 breaking\)", p.stdout), p.stdout
    assert "abi-check: the module matches the header" in p.stdout


def test_the_capsule_carries_every_function_of_the_manifest():
    """The module's table (_abi_signatures) holds each function of the
    manifest with its signature: the profiler's, the GL/EGL/VDPAU interop
    headers' and cudaCreateChannelDesc too."""
    code = "import json, cubind.runtime as r; print(json.dumps(r._abi_signatures()))"
    p = run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=BUILD_PY))
    assert p.returncode == 0, p.stderr
    table = json.loads(p.stdout)
    manifest = {f["name"]: f["signature"] for f in json.load(open(SAVED))["functions"]}
    assert table == manifest
    assert {"cudaProfilerStart", "cudaGLGetDevices", "cudaEGLStreamConsumerConnect",
            "cudaVDPAUGetDevice", "cudaCreateChannelDesc"} <= set(table)
