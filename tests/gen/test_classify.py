# SPDX-License-Identifier: Apache-2.0
"""`cubind classify`: the classification as JSON, and its golden file.

tests/gen/data/classify_cuda13.json is what `cubind classify` prints for
the CUDA 13.0 cuda.h the tests use (build/config.ninja's cuda_include)
with gen/rules.txt: a change of the classifier, the rules or the record
and handle classes shows as a reviewable diff of that file. After an
intended change, regenerate it with

    CUBIND_REGEN_GOLDEN=1 python3 -m pytest -q tests/gen/test_classify.py

(or `build/cubind classify --header <cuda_include>/cuda.h >
tests/gen/data/classify_cuda13.json`) and commit it with the change.
"""
import difflib
import json
import os
import re

import pytest

from conftest import REPO, header_path, library_apis

GOLDEN = os.path.join(REPO, "tests", "gen", "data", "classify_cuda13.json")
REGEN = "CUBIND_REGEN_GOLDEN"

SHAPES_DEF = os.path.join(REPO, "gen", "classify", "shapes.def")


def shape_names():
    """The name of every SHAPE line of gen/classify/shapes.def, and
    "unsupported" (SH_UNSUPPORTED, shapes.h)."""
    with open(SHAPES_DEF) as f:
        names = set(re.findall(r"^SHAPE\(SH_\w+,\s*(\w+),", f.read(), re.M))
    assert len(names) >= 28, "gen/classify/shapes.def: too few SHAPE lines read: %s" % sorted(names)
    return names | {"unsupported"}


SHAPES = shape_names()


@pytest.fixture(scope="module")
def classify_text(run_cubind, cuda_h):
    p = run_cubind("classify", "--header", cuda_h)
    assert p.returncode == 0, "cubind classify failed (%d):\n%s" % (p.returncode, p.stderr)
    return p.stdout


@pytest.fixture(scope="module")
def classified(classify_text):
    try:
        return json.loads(classify_text)
    except ValueError as e:
        pytest.fail("cubind classify printed invalid JSON: %s" % e, pytrace=False)


def test_classify_matches_the_golden_file(classify_text):
    if os.environ.get(REGEN) == "1":
        with open(GOLDEN, "w") as f:
            f.write(classify_text)
    with open(GOLDEN) as f:
        golden = f.read()
    if classify_text == golden:
        return
    diff = list(difflib.unified_diff(golden.splitlines(), classify_text.splitlines(),
                                     "tests/gen/data/classify_cuda13.json", "cubind classify",
                                     lineterm="", n=1))
    shown = "\n".join(diff[:120]) + ("\n... (%d more lines)" % (len(diff) - 120)
                                     if len(diff) > 120 else "")
    pytest.fail("the classification differs from the golden file:\n%s\n\nIf the change is "
                "intended, regenerate it:\n    %s=1 python3 -m pytest -q "
                "tests/gen/test_classify.py\nand commit tests/gen/data/classify_cuda13.json "
                "with the change." % (shown, REGEN), pytrace=False)


def test_classify_covers_every_function_and_parameter(classified, dump):
    """Every function of the model, cuda.h's own (those of dump) and the
    interop headers' (with their file), each parameter with a shape and a
    direction; unsupported functions say why."""
    names = [f["name"] for f in classified["functions"]]
    assert len(names) == len(set(names)) == classified["nfunctions"]
    assert set(names) == {f["name"] for f in dump["functions"]}
    own = {f["name"] for f in classified["functions"] if "file" not in f}
    assert own == {f["name"] for f in dump["functions"] if not f.get("interop")}
    if dump["cuda_version"] == 13000:
        assert len(own) == 449
    supported = 0
    for f in classified["functions"]:
        params = {p["name"]: p for p in f["params"]}
        model = next((d for d in dump["functions"] if d["name"] == f["name"]), None)
        if model is not None:
            assert list(params) == [p["name"] for p in model["params"]], f["name"]
        for p in f["params"]:
            assert p["shape"] in SHAPES, (f["name"], p)
            assert p["direction"] in ("in", "out", "inout", "none"), (f["name"], p)
            assert p["elem"], (f["name"], p)
        supported += f["supported"]
        if not f["supported"]:
            assert f["why"], f["name"]
    assert supported == classified["nsupported"]


def test_classify_shows_rules_and_shapes(classified):
    """Spot checks of what the golden file holds: a rule that applied, a
    count pairing, a callback, a record's field classes, a handle class."""
    fns = {f["name"]: f for f in classified["functions"]}
    luid = fns["cuDeviceGetLuid"]["params"][0]
    assert (luid["shape"], luid["fixed_len"], luid["rules"]) == (
        "out_fixed", 8, ["fixed cuDeviceGetLuid luid 8"])
    name = fns["cuDeviceGetName"]["params"]
    assert (name[0]["shape"], name[0]["count"], name[1]["pyname"]) == ("out_chars", "len", "length")
    cb = next(p for p in fns["cuLaunchHostFunc"]["params"] if p["shape"] == "callback")
    assert cb["callback_kind"] == "host" and cb["direction"] == "in"
    handles = {h["name"]: h for h in classified["handles"]}
    assert handles["CUstream"]["kind"] == "pointer" and handles["CUstream"].get("stream_protocol")
    assert handles["CUdevice"]["kind"] == "i32"
    records = {r["name"]: r for r in classified["records"]}
    attrs = {f["name"]: f for f in records["CUlaunchConfig_st"]["fields"]}["attrs"]
    assert (attrs["kind"], attrs["count_field"]) == ("record_array", "numAttrs")
    assert classified["unmatched_rules"] == []


def test_classify_is_deterministic(run_cubind, cuda_h, classify_text):
    p = run_cubind("classify", "--header", cuda_h)
    assert p.returncode == 0 and p.stdout == classify_text


@pytest.mark.parametrize("rules,header", library_apis())
def test_classify_a_library_header(run_cubind, cuda_include, rules, header):
    p = run_cubind("classify", "--header", header_path(cuda_include, header), "--rules", rules,
                   "--include", cuda_include)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["header"] == header and d["nsupported"] > 0
    # what is not bound is exactly what out/<api>_unsupported.txt lists
    api = os.path.basename(rules)[:-len(".rules")]
    listed = os.path.join(os.path.dirname(os.path.dirname(rules)), "out", api + "_unsupported.txt")
    with open(listed) as f:
        names = [line.split(":")[0] for line in f if line.strip() and not line.startswith("#")]
    assert d["nfunctions"] - d["nsupported"] == len(names)
    unbound = {fn["name"] for fn in d["functions"] if not fn["supported"]}
    assert unbound == set(names)


def test_classify_usage(run_cubind, cuda_h):
    p = run_cubind("classify", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: cubind classify --header")
    p = run_cubind("classify")
    assert p.returncode == 2 and "--header is required" in p.stderr
    p = run_cubind("classify", "--header", cuda_h, "--out", "x")
    assert p.returncode == 2 and "takes only --header and --rules" in p.stderr


def test_rules_lists_every_directive(run_cubind):
    """`cubind rules` prints the directive table (gen/rules/rules_directives.def):
    every directive a rules file uses is listed with its arguments."""
    p = run_cubind("rules")
    assert p.returncode == 0, p.stderr
    listed = {line.split()[0] for line in p.stdout.splitlines() if line.startswith("  ")
              and not line.startswith("   ")}
    used = set()
    for rules, _ in library_apis() + [(os.path.join(REPO, "gen", "rules.txt"), None)]:
        with open(rules) as f:
            used |= {line.split()[0] for line in f if line.strip() and not line.startswith("#")}
    assert used <= listed, used - listed
    assert "  count FUNCTION PARAM COUNT" in p.stdout


def test_host_node_callables_classified(classified, run_cubind, cuda_h, tmp_path):
    """A host function field names its data field (the shape that takes a
    Python callable); registry-retain binds for a graph target and makes
    the function unsupported for any other (its holder is a user object
    of a graph)."""
    records = {r["name"]: r for r in classified["records"]}
    fn = {f["name"]: f for f in records["CUDA_HOST_NODE_PARAMS_st"]["fields"]}["fn"]
    assert (fn["kind"], fn["data_field"]) == ("funcptr", "userData")
    fns = {f["name"]: f for f in classified["functions"]}
    retain = [r for r in fns["cuGraphAddHostNode"]["registry"] if r["action"] == "retain"]
    assert [(r["param"], r["other"], r["other_kind"]) for r in retain] == [
        ("nodeParams", "hGraph", "CUBIND_REG_GRAPH")]
    with open(os.path.join(REPO, "gen", "rules.txt")) as f:
        text = f.read()
    rules = tmp_path / "rules.txt"
    rules.write_text(text + "\nregistry-retain cuGraphExecHostNodeSetParams nodeParams hGraphExec\n")
    p = run_cubind("classify", "--header", cuda_h, "--rules", str(rules))
    assert p.returncode == 0, p.stderr
    bad = {f["name"]: f for f in json.loads(p.stdout)["functions"]}["cuGraphExecHostNodeSetParams"]
    assert not bad["supported"] and "registry rule" in bad.get("why", ""), bad
