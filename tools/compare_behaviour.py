#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares the behaviour of cubind.driver's classes with an installed
cuda.bindings.driver's, live, for every class both modules have (on the GPU
machine, where cuda-bindings is installed; no GPU call is made):

- structs and unions: field names; per field, the Python type a fresh
  instance's field reads back as (a list's element type too), its default
  (str of the value; "<ValueError>" when reading raises ValueError) and
  the instance's repr;
- enums: members in iteration order with their values, len(), and the
  member Enum(value) gives for each value;
- handle classes: repr(Cls(v)), int(), hash(Cls(v)) == hash(Cls(v)),
  Cls(v) == Cls(v), Cls(v) != Cls(w), and that getPtr() is the address of
  the value (read back through ctypes).

Prints one count line per kind ("structs: 230 of 248 with the same fields,
...") and, with -v, every difference; --json prints the counts and the
differences as JSON. docs/compatibility.md reports the counts.

    PYTHONPATH=build/python python3 tools/compare_behaviour.py [-v] [--json]

--theirs MODULE compares with another module (tests/python runs it with
cubind.driver against itself: every count is then full).
"""
import argparse
import ctypes
import importlib
import json
import sys


def kind_of(cls):
    """'enum', 'handle', 'struct' or None for a public class of a driver module."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, int) and hasattr(cls, "__members__"):
        return "enum"
    if not hasattr(cls, "getPtr"):
        return None
    if hasattr(cls, "__int__") or hasattr(cls, "__index__"):
        return "handle"
    return "struct"


def public_classes(mod):
    out = {}
    for name in dir(mod):
        if name.startswith("_"):
            continue
        k = kind_of(getattr(mod, name))
        if k:
            out[name] = k
    return out


def type_name(v):
    if isinstance(v, list):
        inner = sorted({type(x).__name__ for x in v})
        return "list[%s]" % "|".join(inner)
    return type(v).__name__


def read(obj, field):
    """(type name, default text) of obj.field; '<ValueError>' when it raises."""
    try:
        v = getattr(obj, field)
    except ValueError:
        return "<ValueError>", "<ValueError>"
    except Exception as e:  # reported as the difference it is
        return "<%s>" % type(e).__name__, "<%s>" % type(e).__name__
    try:
        text = str(v)
    except Exception as e:  # a value whose own str() raises (cuda.bindings' nested unions)
        text = "<str() raised %s>" % type(e).__name__
    return type_name(v), text


def fields_of(cls):
    return sorted(n for n in dir(cls) if not n.startswith("_") and n != "getPtr"
                  and not callable(getattr(cls, n, None)))


def compare_structs(ours, theirs, names, diffs):
    c = {"structs": 0, "same_fields": 0, "fields": 0, "same_type": 0, "same_default": 0,
         "same_repr": 0}
    for name in names:
        a_cls, b_cls = getattr(ours, name), getattr(theirs, name)
        try:
            a, b = a_cls(), b_cls()
        except Exception as e:
            diffs.append(("struct", name, "not constructible: %s" % e))
            continue
        c["structs"] += 1
        fa, fb = fields_of(a_cls), fields_of(b_cls)
        if fa == fb:
            c["same_fields"] += 1
        else:
            diffs.append(("struct", name, "fields: only cubind %s, only theirs %s"
                          % (sorted(set(fa) - set(fb)), sorted(set(fb) - set(fa)))))
        for f in sorted(set(fa) & set(fb)):
            c["fields"] += 1
            (ta, da), (tb, db) = read(a, f), read(b, f)
            if ta == tb:
                c["same_type"] += 1
            else:
                diffs.append(("field", "%s.%s" % (name, f), "type %s, theirs %s" % (ta, tb)))
            if da == db:
                c["same_default"] += 1
            else:
                diffs.append(("default", "%s.%s" % (name, f), "%r, theirs %r" % (da[:80], db[:80])))
        try:
            ra, rb = repr(a), repr(b)
        except Exception as e:
            ra, rb = "<%s>" % type(e).__name__, ""
        if ra == rb:
            c["same_repr"] += 1
        else:
            diffs.append(("repr", name, first_difference(ra, rb)))
    return c


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<none>"
        y = lb[i] if i < len(lb) else "<none>"
        if x != y:
            return "line %d: %r, theirs %r" % (i + 1, x[:80], y[:80])
    return "same lines, different text"


def compare_enums(ours, theirs, names, diffs):
    c = {"enums": 0, "same_members": 0, "same_order": 0, "same_len": 0, "same_lookup": 0}
    for name in names:
        a, b = getattr(ours, name), getattr(theirs, name)
        c["enums"] += 1
        ma = [(m.name, int(m)) for m in a]
        mb = [(m.name, int(m)) for m in b]
        if sorted(ma) == sorted(mb):
            c["same_members"] += 1
        else:
            diffs.append(("enum", name, "members: only cubind %s, only theirs %s"
                          % (sorted(set(ma) - set(mb))[:5], sorted(set(mb) - set(ma))[:5])))
        if ma == mb:
            c["same_order"] += 1
        elif sorted(ma) == sorted(mb):
            diffs.append(("enum order", name, "cubind %s, theirs %s" % (ma[:4], mb[:4])))
        if len(a) == len(b):
            c["same_len"] += 1
        lookup_a = {v: a(v).name for _, v in ma}
        lookup_b = {}
        for _, v in mb:
            try:
                lookup_b[v] = b(v).name
            except ValueError:
                lookup_b[v] = None
        if {v: lookup_a[v] for v in lookup_b if v in lookup_a} == {v: n for v, n in lookup_b.items()
                                                                    if v in lookup_a}:
            c["same_lookup"] += 1
        else:
            diffs.append(("enum lookup", name, "Enum(value).name differs"))
    return c


def handle_facts(cls, v, w):
    out = {}
    try:
        h = cls(v)
    except Exception as e:
        return {"construct": "<%s>" % type(e).__name__}
    out["repr"] = repr(h)
    out["int"] = int(h)
    out["hash"] = hash(h) == hash(cls(v))
    out["eq"] = h == cls(v) and not (h != cls(v))
    out["ne"] = h != cls(w)
    try:
        # v fits in 4 bytes: the first 4 at getPtr() hold it for every width
        out["getPtr"] = int.from_bytes(ctypes.string_at(h.getPtr(), 4), sys.byteorder) == v
    except Exception as e:
        out["getPtr"] = "<%s>" % type(e).__name__
    return out


def compare_handles(ours, theirs, names, diffs):
    keys = ("repr", "int", "hash", "eq", "ne", "getPtr")
    c = {"handles": 0, **{"same_" + k: 0 for k in keys}}
    for name in names:
        c["handles"] += 1
        fa = handle_facts(getattr(ours, name), 0x1234, 0x1235)
        fb = handle_facts(getattr(theirs, name), 0x1234, 0x1235)
        for k in keys:
            if fa.get(k) == fb.get(k):
                c["same_" + k] += 1
            else:
                diffs.append(("handle " + k, name, "%r, theirs %r" % (fa.get(k, fa), fb.get(k, fb))))
    return c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", default="cubind.driver")
    ap.add_argument("--theirs", default="cuda.bindings.driver")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    ours, theirs = importlib.import_module(args.ours), importlib.import_module(args.theirs)
    ka, kb = public_classes(ours), public_classes(theirs)
    both = {k: sorted(n for n in set(ka) & set(kb) if ka[n] == kb[n] == k)
            for k in ("struct", "enum", "handle")}
    kind_differs = sorted(n for n in set(ka) & set(kb) if ka[n] != kb[n])
    diffs = [("kind", n, "cubind %s, theirs %s" % (ka[n], kb[n])) for n in kind_differs]
    counts = {"structs": compare_structs(ours, theirs, both["struct"], diffs),
              "enums": compare_enums(ours, theirs, both["enum"], diffs),
              "handles": compare_handles(ours, theirs, both["handle"], diffs),
              "kind_differs": len(kind_differs)}
    if args.json:
        print(json.dumps({"counts": counts, "differences": diffs}, indent=1))
        return 0
    s, e, h = counts["structs"], counts["enums"], counts["handles"]
    print("structs: %d compared; %d with the same fields; %d of %d fields read back as the same type, "
          "%d with the same default; %d with the same repr"
          % (s["structs"], s["same_fields"], s["same_type"], s["fields"], s["same_default"],
             s["same_repr"]))
    print("enums: %d compared; %d with the same members and values, %d in the same order, "
          "%d the same len(), %d the same Enum(value)"
          % (e["enums"], e["same_members"], e["same_order"], e["same_len"], e["same_lookup"]))
    print("handles: %d compared; the same repr %d, int %d, hash %d, == %d, != %d, getPtr %d"
          % (h["handles"], h["same_repr"], h["same_int"], h["same_hash"], h["same_eq"],
             h["same_ne"], h["same_getPtr"]))
    print("classes of another kind in the other module: %d" % len(kind_differs))
    if args.verbose:
        for kind, name, why in diffs:
            print("%s %s: %s" % (kind, name, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
