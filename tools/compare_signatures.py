#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares the function signatures of a snake_case library module of
cubind (cubind.nvml, cubind.nvvm, ...) with cuda.bindings' (the recorded
"signature" of each function of tests/data/cuda_bindings_<module>_13.3.1.json,
or --reference FILE), and lists the functions whose parameters differ.

A function matches when its parameters begin with the reference's, in
order and by name, and every parameter after those has a default (an
optional trailing count or length: `device_get_name(device, length=0)`
against `(device)`). Ours come from the built module (inspect.signature),
or with --stub FILE from a generated stub (`out/nvml.pyi`, or the stub of
a module generated from another release's header, which need not be
built). Functions of the reference that the module lacks are counted
apart ("absent": a later header's, or not bound).

    PYTHONPATH=build/python python3 tools/compare_signatures.py nvml
    python3 tools/compare_signatures.py nvml --stub /tmp/nvml13/nvml.pyi

Prints each difference as `name: ours | cuda.bindings`, then the counts;
--json prints {"differ": {name: [ours, theirs]}, "absent": [...],
"matched": N} instead.
"""
import argparse
import importlib
import inspect
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def reference_parameters(signature):
    """The parameter names of a recorded signature, "(device, length=0)"."""
    inner = signature.strip()[1:-1].strip()
    return [p.split("=")[0].strip().lstrip("*") for p in inner.split(",") if p.strip()] if inner else []


def module_parameters(module):
    """name -> [(parameter, has_default)] of the built cubind module."""
    mod = importlib.import_module("cubind." + module)
    out = {}
    for name in dir(mod):
        fn = getattr(mod, name)
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        out[name] = [(p.name, p.default is not p.empty) for p in sig.parameters.values()
                     if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return out


STUB_DEF = re.compile(r"^def (\w+)\((.*)\) -> .*: \.\.\.$", re.M)


def split_top(text):
    """Splits a stub's parameter list at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += c in "[(" and 1 or (c in "])" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def stub_parameters(path):
    """name -> [(parameter, has_default)] of a generated stub."""
    out = {}
    for m in STUB_DEF.finditer(pathlib.Path(path).read_text()):
        params = []
        for p in split_top(m.group(2)):
            p = p.strip()
            if p in ("/", "*") or p.startswith("*"):
                continue
            params.append((p.split(":")[0].split("=")[0].strip(), "=" in p))
        out[m.group(1)] = params
    return out


def compare(ours, reference):
    """{"differ": {name: [ours, theirs]}, "absent": [...], "matched": N}."""
    differ, absent, matched = {}, [], 0
    for name, entry in sorted(reference["functions"].items()):
        if name not in ours:
            absent.append(name)
            continue
        theirs = reference_parameters(entry["signature"])
        mine = ours[name]
        names = [p for p, _ in mine]
        if names[:len(theirs)] == theirs and all(d for _, d in mine[len(theirs):]):
            matched += 1
        else:
            differ[name] = ["(%s)" % ", ".join(names), entry["signature"]]
    return {"differ": differ, "absent": absent, "matched": matched}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="the cubind module: nvml, nvvm, nvfatbin, cufile, ...")
    ap.add_argument("--reference", help="the recorded surface (default: tests/data's 13.3.1)")
    ap.add_argument("--stub", help="read our signatures from this generated .pyi")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    ref_path = pathlib.Path(args.reference or ROOT / "tests" / "data" /
                            ("cuda_bindings_%s_13.3.1.json" % args.module))
    reference = json.loads(ref_path.read_text())
    ours = stub_parameters(args.stub) if args.stub else module_parameters(args.module)
    result = compare(ours, reference)
    if args.json:
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    for name, (mine, theirs) in sorted(result["differ"].items()):
        print("%s: %s | cuda.bindings %s" % (name, mine, theirs))
    print("%d matched, %d differ, %d absent" % (result["matched"], len(result["differ"]),
                                                len(result["absent"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
