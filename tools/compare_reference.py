#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares cubind.driver with the public surface of cuda.bindings.driver
(tests/data/cuda_bindings_driver_13.3.1.json or --reference FILE) for the names that exist in
the headers cubind was generated from (cuda.h and the interop headers bound with it:
cudaProfiler.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h); with --module runtime,
cubind.runtime with cuda.bindings.runtime
(tests/data/cuda_bindings_runtime_13.3.1.json) for the names of
cuda_runtime_api.h and the headers gen/runtime.rules binds with it.

For each function: parameter names and order (ours from inspect.signature;
the reference's from its recorded "signature", which is what
inspect.signature gives on cuda.bindings), and the length of the returned
tuple (ours from the docstring's "``(status, a, b)``" line; the
reference's from its docstring "Returns" section, up to a "Notes" heading);
for each enum: member names and values; for each class: attribute names;
for each constant (integer macro) the header #defines: its value.

A function of the header that the generator lists as not bound
(out/<module>_unsupported.txt) is counted apart ("listed"), not as missing;
the reference's functions that no header bound here declares (cuda.bindings'
helpers, other headers' functions) are counted as "not in the header"; those
of them the module provides (helpers: make_cudaExtent, sizeof) are compared
on their parameters.

A function whose reference entry records no usable returns (its docstring
could not be read, or its Parameters section contradicts the signature) is
compared on its parameters only and counted apart ("parameters only"). Prints the match rates and every difference; exits 1
when the exact function match rate is below --min-rate.

    PYTHONPATH=build/python python3 tools/compare_reference.py [--json] [--module runtime]
"""
import argparse
import inspect
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# What each module is compared as: its header, its rules file (None: the
# driver's), the reference, the result enum, the generator's unsupported list.
MODULES = {
    "driver": ("cuda.h", None, "cuda_bindings_driver_13.3.1.json", "CUresult", "unsupported.txt"),
    "runtime": ("cuda_runtime_api.h", "gen/runtime.rules", "cuda_bindings_runtime_13.3.1.json",
                "cudaError_t", "runtime_unsupported.txt"),
}
DEFAULT_REFERENCE = ROOT / "tests" / "data" / MODULES["driver"][2]


def header_names(header, rules=None):
    cmd = [str(ROOT / "build" / "cubind"), "dump", "--header", header]
    if rules:
        cmd += ["--rules", str(ROOT / rules)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    model = json.loads(out)
    return model


def listed_unsupported(name):
    """The functions out/NAME lists as not bound."""
    path = ROOT / "out" / name
    if not path.exists():
        return set()
    return {line.split(":", 1)[0] for line in path.read_text().splitlines()
            if line and not line.startswith("#")}


def split_top_level(text):
    """Splits "a, b: 'x[int, str]', c=0" at the commas outside brackets."""
    parts, depth, cur, quote = [], 0, "", None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def ref_param_names(entry):
    """The parameter names of the reference's signature "(a, b: T, c=0)"."""
    sig = entry["signature"].strip()
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    return [re.split(r"[:=]", p)[0].strip().lstrip("*") for p in split_top_level(inner)]


def docstring_agrees(entry):
    """Whether the docstring's Parameters section names the signature's
    parameters (a trailing "_" aside: `input_` is documented as `input`).
    Where it does not, the docstring is stale or damaged (cuda.bindings'
    cuCoredumpGetAttribute documents a `size` its code neither takes nor
    returns), and its Returns section is not evidence either."""
    documented = [p.split(" : ")[0].strip() for p in entry["parameters"]]
    return documented == [n.rstrip("_") for n in ref_param_names(entry)]


def ref_return_names(entry, result="CUresult"):
    """The outputs of the docstring's Returns section (after the result
    enum), or None when the section is missing or the docstring disagrees
    with the signature; a "Notes" heading ends the section."""
    returns = entry["returns"]
    if not returns or returns[0] != result or not docstring_agrees(entry):
        return None
    names = []
    for r in returns[1:]:
        if r.strip() == "Notes":
            break
        names.append(r.split(" : ")[0].strip())
    return names


def our_return_names(fn):
    m = re.search(r"``\(status((?:, \w+)*)\)``", fn.__doc__ or "")
    if not m:
        return None
    return [n for n in m.group(1).split(", ") if n]


def compare_functions(drv, ref, model, result="CUresult", listed=frozenset()):
    in_header = {f["name"] for f in model["functions"]}
    results = {"match": [], "params_only": [], "missing": [], "differ": [], "listed": [],
               "not_in_header": [], "helpers": [], "helper_differ": []}
    for name, entry in sorted(ref["functions"].items()):
        if name not in in_header:
            results["not_in_header"].append(name)
            helper = getattr(drv, name, None)
            if helper is not None:
                # a helper of cuda.bindings' own (make_cudaExtent, sizeof):
                # compared on its parameters (their docstrings' returns are
                # not what they return)
                ours = list(inspect.signature(helper).parameters)
                if ours == ref_param_names(entry):
                    results["helpers"].append(name)
                else:
                    results["helper_differ"].append(
                        (name, "parameters %s != %s" % (ours, ref_param_names(entry))))
            continue
        fn = getattr(drv, name, None)
        if fn is None:
            results["listed" if name in listed else "missing"].append(name)
            continue
        # keyword-only parameters with a default (cuLaunchKernel's argtypes=)
        # extend the signature: every call cuda.bindings takes still binds
        ours = [p.name for p in inspect.signature(fn).parameters.values()
                if not (p.kind == p.KEYWORD_ONLY and p.default is not p.empty)]
        theirs = ref_param_names(entry)
        our_ret = our_return_names(fn)
        their_ret = ref_return_names(entry, result)
        problems = []
        if ours != theirs:
            problems.append("parameters %s != %s" % (ours, theirs))
        if their_ret is not None and (our_ret is None or len(our_ret) != len(their_ret)):
            problems.append("returns %s != %s" % (our_ret, their_ret))
        if problems:
            results["differ"].append((name, "; ".join(problems)))
        elif their_ret is None:
            results["params_only"].append(name)
        else:
            results["match"].append(name)
    return results


def compare_enums(drv, ref, model):
    # An enum's own name, or one of its aliases (further typedefs of it:
    # `typedef CUlaunchAttributeID CUstreamAttrID;`), which cuda.bindings
    # also binds.
    enum_of = {e["name"]: e["name"] for e in model["enums"]}
    for e in model["enums"]:
        for alias in e["aliases"]:
            enum_of[alias] = e["name"]
    differ = []
    compared = []
    for name, members in sorted(ref["enums"].items()):
        if name not in enum_of:
            continue
        compared.append(name)
        cls = getattr(drv, name, None)
        if cls is None:
            differ.append((name, "missing"))
            continue
        ours = {k: int(v) for k, v in cls.__members__.items()}
        header_members = {v["name"] for e in model["enums"] if e["name"] == enum_of[name]
                          for v in e["values"]}
        theirs = {k: v for k, v in members.items() if k in header_members}
        if ours != theirs and {k: ours.get(k) for k in theirs} != theirs:
            differ.append((name, "members differ"))
    return compared, differ


def compare_classes(drv, ref, model, defined=frozenset()):
    """The reference's classes the header declares (a record's name or
    alias, a handle) or #defines (a macro naming a record, as
    `#define cudaStreamAttrValue cudaLaunchAttributeValue`): a class
    missing from the module is a difference."""
    names = {r["name"] for r in model["records"]} | {a for r in model["records"] for a in r["aliases"]}
    names |= {h["name"] for h in model["handles"]}
    names |= set(defined)
    differ = []
    missing_attrs = {}
    total = 0
    for name, attrs in sorted(ref["classes"].items()):
        if name not in names:
            continue
        total += 1
        cls = getattr(drv, name, None)
        if cls is None:
            differ.append((name, "missing"))
            continue
        missing = [a for a in attrs if not hasattr(cls, a)]
        if missing:
            differ.append((name, "missing attributes %s" % missing))
            missing_attrs[name] = missing
    return total, differ, missing_attrs


def header_defines(header, model):
    """Names cuda.h and the interop headers bound with it (cudaEGL.h, ...),
    or a library's header and its bind-header files, #define, read from
    their text (not from the model, so a macro the generator failed to
    evaluate still counts as existing)."""
    d = pathlib.Path(header).parent
    names = [pathlib.Path(header)] + [d / h for h in model.get("interop_includes", [])
                                      if h != "cubind_interop.h" and "Typedefs" not in h]
    text = "".join(p.read_text() for p in names)
    return set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", text, re.M))


def compare_constants(drv, ref, defined):
    """(number compared, [(name, why)]) over the reference's constants that
    the header defines; the reference records each value as str(int)."""
    differ = []
    total = 0
    for name, value in sorted(ref.get("constants", {}).items()):
        if name not in defined:
            continue
        total += 1
        ours = getattr(drv, name, None)
        if ours is None:
            differ.append((name, "not bound"))
        elif not isinstance(ours, int) or int(ours) != int(value):
            differ.append((name, "value %r != %s" % (ours, value)))
    return total, differ


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", choices=sorted(MODULES), default="driver")
    ap.add_argument("--reference", default=None)
    ap.add_argument("--header", default=None)
    ap.add_argument("--min-rate", type=float, default=0.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    config = (ROOT / "build" / "config.ninja").read_text()
    inc = re.search(r"^cuda_include = (.*)$", config, re.M).group(1)
    header_file, rules, reference, result, unsupported = MODULES[args.module]
    header = args.header or str(pathlib.Path(inc) / header_file)
    model = header_names(header, rules)
    ref_path = args.reference or str(ROOT / "tests" / "data" / reference)
    ref = json.loads(pathlib.Path(ref_path).read_text())
    import importlib
    drv = importlib.import_module("cubind." + args.module)
    f = compare_functions(drv, ref, model, result, listed_unsupported(unsupported))
    enums_compared, de = compare_enums(drv, ref, model)
    ne = len(enums_compared)
    defined = header_defines(header, model)
    nc, dc, missing_attrs = compare_classes(drv, ref, model, defined)
    nk, dk = compare_constants(drv, ref, defined)
    nf = len(f["match"]) + len(f["params_only"]) + len(f["missing"]) + len(f["differ"])
    rate = len(f["match"]) / nf if nf else 0.0
    if args.json:
        print(json.dumps({"functions": nf, "match": len(f["match"]), "rate": rate,
                          "params_only": f["params_only"],
                          "missing": f["missing"], "differ": f["differ"],
                          "listed": f["listed"], "not_in_header": f["not_in_header"],
                          "helpers": f["helpers"], "helper_differences": f["helper_differ"],
                          "enums": ne, "enums_compared": enums_compared,
                          "enum_differences": de,
                          "classes": nc, "class_differences": dc,
                          "class_missing_attributes": missing_attrs,
                          "constants": nk, "constant_differences": dk}, indent=1))
    else:
        for name in f["missing"]:
            print("function %s: not bound" % name)
        for name in f["listed"]:
            print("function %s: not bound, listed in out/%s" % (name, unsupported))
        for name in f["params_only"]:
            print("function %s: parameters match; the reference records no usable returns" % name)
        for name, why in f["differ"]:
            print("function %s: %s" % (name, why))
        for name, why in f["helper_differ"]:
            print("helper %s: %s" % (name, why))
        for name, why in de:
            print("enum %s: %s" % (name, why))
        for name, why in dc:
            print("class %s: %s" % (name, why))
        for name, why in dk:
            print("constant %s: %s" % (name, why))
        print("functions: %d of %d match exactly (%.1f%%); %d match on parameters only; "
              "%d not bound, %d differ"
              % (len(f["match"]), nf, 100 * rate, len(f["params_only"]), len(f["missing"]),
                 len(f["differ"])))
        print("%d listed as not bound; %d of the reference's %d functions are in no header "
              "bound here" % (len(f["listed"]), len(f["not_in_header"]), len(ref["functions"])))
        if f["helpers"] or f["helper_differ"]:
            print("helpers outside the headers: %d provided with the reference's parameters, "
                  "%d differ" % (len(f["helpers"]), len(f["helper_differ"])))
        print("enums: %d of %d match; classes: %d of %d have every attribute; "
              "constants: %d of %d match"
              % (ne - len(de), ne, nc - len(dc), nc, nk - len(dk), nk))
    return 0 if rate >= args.min_rate else 1


if __name__ == "__main__":
    sys.exit(main())
