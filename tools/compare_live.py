#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares cubind.driver with an installed cuda.bindings.driver, live.

tools/compare_reference.py checks the public surface against the reference
JSON, which lists public names only. This probe looks at what that file
cannot show, with both modules imported side by side (on the GPU machine,
where cuda-bindings is installed):

1. the special methods each class of both modules defines beyond its base
   types (protocols such as __cuda_stream__, __index__, __int__);
2. what a stream parameter accepts: cuStreamQuery given a CUstream, an int,
   None, and an object that only implements the CUDA stream protocol
   (__cuda_stream__, as cuda.core's Stream does).

Usage: PYTHONPATH=build/python python3 tools/compare_live.py
Prints a report; exits 1 when cubind lacks a special method cuda.bindings
has (other than those KNOWN_MISSING lists, with the reason
docs/compatibility.md gives), or refuses a stream form cuda.bindings takes.
"""
import sys

import cubind.driver as cubind_driver
from cuda.bindings import driver as nv_driver

# Special methods cubind does not have on purpose (docs/compatibility.md).
KNOWN_MISSING = {
    "__singletons__": "an attribute of cuda.bindings' own enum implementation",
}

# Defined by every class or by the machinery, not a protocol of the class.
ORDINARY = {"__doc__", "__module__", "__dict__", "__weakref__", "__slots__", "__init__",
            "__new__", "__repr__", "__str__", "__hash__", "__eq__", "__ne__", "__lt__",
            "__le__", "__gt__", "__ge__", "__reduce__", "__reduce_ex__", "__setstate__",
            "__getstate__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
            "__pyx_vtable__", "__annotations__", "__qualname__", "__firstlineno__",
            "__static_attributes__", "__text_signature__", "__sizeof__", "__format__",
            "__dir__", "__getattribute__", "__setattr__", "__delattr__", "__class__"}


def special_methods(cls):
    """Dunder names cls defines or inherits from anything but its builtin bases."""
    names = set()
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            continue
        names |= {n for n in vars(klass) if n.startswith("__") and n.endswith("__")}
    return names - ORDINARY


def classes(module):
    return {n: getattr(module, n) for n in dir(module)
            if isinstance(getattr(module, n), type) and not n.startswith("_")}


def compare_classes():
    ours, theirs = classes(cubind_driver), classes(nv_driver)
    missing, known, extra = {}, {}, {}
    for name in sorted(set(ours) & set(theirs)):
        a, b = special_methods(ours[name]), special_methods(theirs[name])
        if (b - a) - set(KNOWN_MISSING):
            missing[name] = sorted((b - a) - set(KNOWN_MISSING))
        for n in (b - a) & set(KNOWN_MISSING):
            known.setdefault(n, []).append(name)
        if a - b:
            extra[name] = sorted(a - b)
    return len(set(ours) & set(theirs)), missing, known, extra


class ProtocolStream:
    """A stream known only through the CUDA stream protocol."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def stream_forms(mod):
    """Which stream forms mod.cuStreamQuery takes: name -> 'ok' or the error."""
    assert mod.cuInit(0)[0] == 0
    err, dev = mod.cuDeviceGet(0)
    err, ctx = mod.cuDevicePrimaryCtxRetain(dev)
    assert mod.cuCtxSetCurrent(ctx)[0] == 0
    err, stream = mod.cuStreamCreate(0)
    assert err == 0
    forms = {"CUstream": stream, "int": int(stream), "None": None,
             "__cuda_stream__ object": ProtocolStream(int(stream))}
    got = {}
    for name, value in forms.items():
        try:
            r = mod.cuStreamQuery(value)
            got[name] = "ok" if r[0] == 0 else "status %s" % getattr(r[0], "name", r[0])
        except Exception as e:  # reported, not raised: this is what is compared
            got[name] = "%s: %s" % (type(e).__name__, e)
    if hasattr(stream, "__cuda_stream__"):
        got["CUstream.__cuda_stream__()"] = "%r, int(stream) %d" % (stream.__cuda_stream__(),
                                                                    int(stream))
    mod.cuStreamDestroy(stream)
    return got


def main():
    import cuda.bindings
    print("cuda-bindings", cuda.bindings.__version__)
    n, missing, known, extra = compare_classes()
    print("classes in both modules: %d" % n)
    print("special methods cuda.bindings has and cubind lacks: %d classes" % len(missing))
    for name, names in missing.items():
        print("  %s: %s" % (name, ", ".join(names)))
    for method, names in known.items():
        print("known, on purpose: %s (%s) on %d classes: %s, ..." % (
            method, KNOWN_MISSING[method], len(names), ", ".join(names[:3])))
    print("special methods only cubind has: %d classes" % len(extra))
    for name, names in list(extra.items())[:20]:
        print("  %s: %s" % (name, ", ".join(names)))
    failed = bool(missing)
    try:
        theirs, ours = stream_forms(nv_driver), stream_forms(cubind_driver)
    except Exception as e:  # no GPU: the class comparison stands alone
        print("stream forms: not compared (%s: %s)" % (type(e).__name__, e))
    else:
        print("cuStreamQuery(hStream=...):")
        for form in theirs:
            print("  %-28s cuda.bindings: %-40s cubind: %s" % (form, theirs[form][:40],
                                                            ours.get(form, "-")[:60]))
            if theirs[form] == "ok" and ours.get(form) != "ok":
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
