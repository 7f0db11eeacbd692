# SPDX-License-Identifier: Apache-2.0
"""`cubind manifest`, `cubind abi-diff`, `cubind abi-check`, and the saved
manifests in abi/."""
import json
import os
import re
import shutil
import sys

import pytest

from conftest import (BUILD_PY, CUBIND, EXT_SUFFIX, FAKE, REPO, check_saved_manifest, header_version,
                      release_include, run)

ABI = os.path.join(REPO, "abi")


def header_of(release, cuda_include):
    if release == "13.0":
        if header_version(cuda_include) != 13000:
            pytest.skip("the default cuda.h is not 13.0")
        return os.path.join(cuda_include, "cuda.h")
    return os.path.join(release_include(release), "cuda.h")


@pytest.mark.parametrize("release", ["11.8", "12.4", "13.0"])
def test_saved_manifest_is_regenerated_unchanged(release, cuda_include, tmp_path):
    """Regenerating the manifest of a release whose header did not change
    must give the saved file byte for byte (a generator change that moves a
    signature is caught here); a changed header is reported, not failed."""
    check_saved_manifest(os.path.join(ABI, "cuda-%s.json" % release),
                         header_of(release, cuda_include), tmp_path)


def test_committed_diff_report_is_current():
    p = run([CUBIND, "abi-diff", "cuda-12.4.json", "cuda-13.0.json"], cwd=ABI)
    assert p.returncode == 1, p.stderr
    with open(os.path.join(ABI, "diff-12.4-13.0.txt")) as f:
        assert p.stdout == f.read()


def test_abi_diff_exit_status_and_json():
    m124, m130 = os.path.join(ABI, "cuda-12.4.json"), os.path.join(ABI, "cuda-13.0.json")
    same = run([CUBIND, "abi-diff", m130, m130])
    assert same.returncode == 0 and "breaking: no" in same.stdout
    p = run([CUBIND, "abi-diff", m124, m130, "--json"])
    assert p.returncode == 1
    d = json.loads(p.stdout)
    assert d["breaking"] is True
    fn = {e["name"]: e for e in d["functions"]}
    assert fn["cuCtxCreate"]["change"] == "changed"
    assert "cuCtxCreate_v2" in fn["cuCtxCreate"]["old"] and "cuCtxCreate_v4" in fn["cuCtxCreate"]["new"]
    assert fn["cuCtxCreate_v3"]["change"] == "removed" and fn["cuCtxCreate_v3"]["breaking"]
    # A rename (12.4's cuGraphAddDependencies_v2 is 13.0's cuGraphAddDependencies,
    # symbol and signature alike) is noted on both entries; cuCtxCreate_v3's
    # signature is bound under no 13.0 name, so it is a plain removal.
    renamed = fn["cuGraphAddDependencies_v2"]
    assert renamed["change"] == "removed" and renamed["breaking"]
    assert "renamed: the same signature is bound as cuGraphAddDependencies now" in renamed["notes"]
    assert ("renamed: the signature removed cuGraphAddDependencies_v2 had"
            in fn["cuGraphAddDependencies"]["notes"])
    assert not [n for n in fn["cuCtxCreate_v3"]["notes"] if n.startswith("renamed")]
    added = [e for e in d["functions"] if e["change"] == "added"]
    assert added and not any(e["breaking"] for e in added)
    assert d["summary"]["functions"]["added"] == len(added)
    # Reverse direction: only additions of 13.0 become removals.
    back = run([CUBIND, "abi-diff", m130, m124, "--json"])
    assert back.returncode == 1
    assert json.loads(back.stdout)["summary"]["functions"]["removed"] == len(added)
    for args in ([], [m124], [m124, m130, m130], [m124, "--bogus"]):
        assert run([CUBIND, "abi-diff"] + args).returncode == 2
    assert run([CUBIND, "abi-diff", "/nonexistent.json", m130]).returncode == 2


def test_a_broken_manifest_is_named_with_its_line(tmp_path):
    """A manifest abi-diff cannot use is a usage error (exit 2) naming the
    file and the line of the offending entry, not line 0."""
    m130 = os.path.join(ABI, "cuda-13.0.json")
    with open(m130) as f:
        lines = f.read().split("\n")
    # One function per line: drop the third function's signature.
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith('{"name": '))
    target = first + 2
    entry = json.loads(lines[target].rstrip(","))
    del entry["signature"]
    broken = list(lines)
    broken[target] = json.dumps(entry) + ("," if lines[target].endswith(",") else "")
    bad = tmp_path / "no-signature.json"
    bad.write_text("\n".join(broken))
    p = run([CUBIND, "abi-diff", str(bad), m130])
    assert p.returncode == 2
    assert "%s:%d: function #2 has no name or signature" % (bad, target + 1) in p.stderr, p.stderr
    # "functions" of the wrong type: the line where that value starts.
    wrong = tmp_path / "wrong-type.json"
    wrong.write_text('{\n  "format": "cubind-abi-manifest/1",\n  "functions":\n    {}\n}\n')
    p = run([CUBIND, "abi-diff", str(wrong), m130])
    assert p.returncode == 2
    assert '%s:4: not a cubind ABI manifest: "functions" is of the wrong type' % wrong in p.stderr


def test_header_and_manifest_compare_alike(cuda_include):
    header = header_of("13.0", cuda_include)
    p = run([CUBIND, "abi-diff", header, os.path.join(ABI, "cuda-13.0.json")])
    assert p.returncode == 0, p.stdout + p.stderr


def _patched_headers(cuda_include, tmp_path, old, new):
    d = tmp_path / "inc"
    d.mkdir()
    shutil.copy(os.path.join(cuda_include, "cudaTypedefs.h"), str(d))
    with open(os.path.join(cuda_include, "cuda.h")) as f:
        text = f.read()
    assert text.count(old) >= 1, old
    with open(str(d / "cuda.h"), "w") as f:
        f.write(text.replace(old, new, 1))
    return str(d / "cuda.h")


def test_struct_change_changes_signatures(cuda_include, tmp_path):
    """A field inserted into a record nested inside CUDA_RESOURCE_DESC (an
    anonymous struct in an anonymous union) changes the signature of every
    function reaching it, and abi-diff reports the layout change."""
    orig = header_of("13.0", cuda_include)
    old = "CUdeviceptr devPtr;               /**< Device pointer */\n            CUarray_format format;"
    with open(orig) as f:
        if old not in f.read():
            pytest.skip("this cuda.h spells CUDA_RESOURCE_DESC differently")
    new = old.replace("CUarray_format format;", "int cubind_test_field;\n            CUarray_format format;")
    patched = _patched_headers(cuda_include, tmp_path, old, new)
    p = run([CUBIND, "abi-diff", orig, patched, "--json"])
    assert p.returncode == 1, p.stdout + p.stderr
    d = json.loads(p.stdout)
    changed = {e["name"] for e in d["functions"] if e["change"] == "changed"}
    assert {"cuTexObjectCreate", "cuSurfObjectCreate", "cuTexObjectGetResourceDesc"} <= changed
    assert "cuMemAlloc" not in changed
    recs = {e["name"]: e for e in d["records"]}
    assert recs["CUDA_RESOURCE_DESC_st.linear"]["breaking"]
    notes = " | ".join(recs["CUDA_RESOURCE_DESC_st.linear"]["notes"])
    assert "field cubind_test_field added @8" in notes and "field format moved @8 -> @12" in notes


def test_field_rename_keeps_signatures(cuda_include, tmp_path):
    orig = header_of("13.0", cuda_include)
    patched = _patched_headers(cuda_include, tmp_path, "size_t srcXInBytes;", "size_t srcXInBytesRenamed;")
    p = run([CUBIND, "abi-diff", orig, patched, "--json"])
    d = json.loads(p.stdout)
    assert p.returncode == 0, p.stdout
    assert not [e for e in d["functions"]]
    assert any("renamed only" in " ".join(e["notes"]) for e in d["records"])


def test_abi_check(cuda_include):
    so = os.path.join(BUILD_PY, "cubind", "driver" + EXT_SUFFIX)
    header = header_of("13.0", cuda_include)
    ok = run([CUBIND, "abi-check", so, "--header", header, "--python", sys.executable])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "matches the header" in ok.stdout
    for what in (BUILD_PY, os.path.join(BUILD_PY, "cubind"), os.path.join(ABI, "cuda-13.0.json")):
        p = run([CUBIND, "abi-check", what, "--header", header, "--python", sys.executable])
        assert p.returncode == 0, (what, p.stdout, p.stderr)
    h124 = os.path.join(release_include("12.4"), "cuda.h")
    bad = run([CUBIND, "abi-check", so, "--header", h124, "--python", sys.executable])
    assert bad.returncode == 1
    assert "DRIFT" in bad.stdout and re.search(r"^~ cuCtxCreate  \[breaking\]$", bad.stdout, re.M)
    assert run([CUBIND, "abi-check", so]).returncode == 2
    assert run([CUBIND, "abi-check", "no.such.module", "--header", header,
                "--python", sys.executable]).returncode == 2


@pytest.mark.parametrize("what", ["no.such.module", "json", "README.md", "fake-driver"])
def test_abi_check_on_a_non_module_prints_one_error_line(cuda_include, what):
    """Not a cubind module (absent, a module without _abi_signatures, a
    file, a shared library that is not a module): exit 2 and one line
    "MODULE:0: could not read ... (ExceptionType: message)", no traceback
    (05a670f let the child's traceback through before that line)."""
    header = header_of("13.0", cuda_include)
    module = {"README.md": os.path.join(REPO, "README.md"), "fake-driver": FAKE}.get(what, what)
    p = run([CUBIND, "abi-check", module, "--header", header, "--python", sys.executable])
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(module + ":0: could not read the module's table with "), lines
    assert re.search(r"\((ModuleNotFoundError|AttributeError|ImportError): .+\)$", lines[0]), lines
    assert "Traceback" not in p.stderr and not p.stdout
