#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The junk sweep (issue 27): every exported callable of every generated
module (cubind.driver and cubind.cu: functions, classes, the methods and
settable attributes of their instances) called with junk, on the test-only
fake driver, by whatever interpreter runs this script. Run by
tests/fuzz/test_junk_sweep.py once per interpreter ./configure found, each
in a process of its own; needs only the standard library (no hypothesis).

Every outcome must be a return or one of fuzz_params.ALLOWED (MemoryError
only for a big int or a long sequence). Before each call the callable's
qualified name and the call's number are written (unbuffered) to the file
given with --log: when the process dies, the last line names the call that
killed it, and the sweep is deterministic (--seed), so that call is
reproducible.

Junk: ints of every edge size, floats (nan, inf), str (empty, NUL, non
ASCII), bytes, bytearray, non-contiguous and cast memoryviews, None, lists,
tuples, dicts, callables, classes, handles of every class (fresh and from
the pool of live driver objects), default struct instances, enum members;
calls with too few and too many arguments, keywords (known, unknown,
duplicated, with an embedded NUL). Parameters that take a raw address get
no int, handle or struct (fuzz_params.classify); struct constructors'
positional argument is such an address; struct attributes get no int
either (an int pointer field would be read by repr).

Prints "callables N calls M", counts per outcome, and FAILURE blocks.
"""
import argparse
import collections
import ctypes
import faulthandler
import os
import random
import sys
import traceback

import cubind.cu as cu
import cubind.driver as drv
from fuzz_params import ALLOWED, Pool, big, classifier

MODULES = (("cubind.driver", drv), ("cubind.cu", cu))


class Opaque:
    pass


def callback(*a):
    return None


def fresh(cls, *args):
    try:
        return cls(*args)
    except Exception:
        return None


class Junk:
    """The junk values, by what they may be given to."""

    def __init__(self, kinds, pool):
        self.ints = [0, 1, -1, 2, 7, 255, 4096, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1,
                     2**63, -2**63 - 1, 2**64, 2**200, True, False]
        self.floats = [0.0, -1.5, 1e300, float("nan"), float("inf")]
        self.texts = ["", "x", "\0", "a\0b", "\u00e9t\u00e9", "k" * 40]
        self.blobs = [b"", b"\0", b"abcd", bytearray(8), memoryview(b"abcdefgh")[::2],
                      memoryview(bytearray(16)).cast("i"), (ctypes.c_char * 8)()]
        self.misc = [None, Opaque(), callback, {}, {"a": 1}, (), [], [None], [0, 1], object, 1j,
                     Ellipsis, (1.5, None), ([1, 2], [ctypes.c_int] * 2)]
        self.handles = [h for c in sorted(kinds.handles.values(), key=lambda c: c.__name__)
                        for h in (fresh(c), fresh(c, 0)) if h is not None]
        self.structs = [s for s in (fresh(c) for c in sorted(kinds.structs.values(),
                                                                key=lambda c: c.__name__))
                        if s is not None]
        self.enums = [m for e in sorted(kinds.enums.values(), key=lambda c: c.__name__)
                      for m in list(e.__members__.values())[:2]]
        self.pool = pool
        # Never an int, bool, enum member, handle or struct: taken as an address.
        self.raw = [None, Opaque(), callback, {}, (), [], [None], [None, None], "", "x", 1.5,
                    float("nan"), object, [None, 1.5, b"x"], ([1.5], [None])] + self.blobs
        # For struct attributes: no int (an int in a pointer field is an address).
        self.attr = self.floats + self.texts + self.blobs + [
            None, Opaque(), callback, {}, (), [], [None], [1.5, "x"], object, 1j]
        self.anything = (self.ints + self.floats + self.texts + self.blobs + self.misc
                         + self.handles + self.structs + self.enums)

    def for_kind(self, kind):
        k = kind[0]
        if k == "raw":
            return self.raw
        if k == "handle":
            right = [h for h in (fresh(kind[1]), fresh(kind[1], 0)) if h is not None]
            return right * 4 + self.ints + self.handles + self.pool.handles + self.anything
        if k == "struct":
            return [fresh(kind[1])] * 4 + [None] + self.structs + self.anything
        if k == "enum":
            return list(kind[1].__members__.values())[:4] * 2 + self.ints + self.anything
        if k == "str":
            return self.texts + self.blobs + self.anything
        if k == "float":
            return self.floats + self.ints + self.anything
        if k == "int":
            return self.ints * 2 + self.anything
        return self.anything


SHAPES = ["exact"] * 6 + ["fewer", "more", "kw", "kw_all", "kw_unknown", "kw_dup", "kw_nul",
                          "empty"]


def build_call(rnd, names, cands, extra):
    """(args, kwargs) of one call: a value per parameter from its
    candidates, in one of SHAPES."""
    values = [rnd.choice(c) for c in cands]
    shape = rnd.choice(SHAPES)
    k = rnd.randrange(1 << 16)
    if shape == "exact" or not names and shape in ("kw", "kw_all", "kw_dup", "kw_nul"):
        return values, {}
    if shape == "fewer":
        return values[:max(0, len(values) - 1 - k % max(1, len(values)))], {}
    if shape == "more":
        return values + [rnd.choice(extra) for _ in range(1 + k % 3)], {}
    if shape == "empty":
        return [], {}
    if shape == "kw":
        cut = k % (len(names) + 1)
        return values[:cut], dict(zip(names[cut:], values[cut:]))
    if shape == "kw_all":
        return [], dict(zip(names, values))
    if shape == "kw_unknown":
        return values, {"junk_no_such_param": rnd.choice(extra)}
    if shape == "kw_dup":
        return values, {names[k % len(names)]: rnd.choice(extra)}
    # kw_nul: a keyword naming a parameter followed by a NUL and more: no
    # parameter's name, whatever its prefix (the value suits the prefix's)
    i = k % len(names)
    return values[:i], {names[i] + "\0junk": values[i]}


class Sweep:
    def __init__(self, logfd, seed, calls):
        self.logfd = logfd
        self.seed = seed
        self.per = calls
        self.calls = 0
        self.outcomes = collections.Counter()
        self.failures = []
        self.swept = collections.Counter()

    def call(self, what, f, args, kwargs):
        """One call of f, logged first; its outcome counted or recorded."""
        self.calls += 1
        os.write(self.logfd, ("%s #%d\n" % (what, self.calls)).encode())
        try:
            f(*args, **kwargs)
        except ALLOWED as e:
            self.outcomes[type(e).__name__] += 1
        except MemoryError:
            if any(big(v) for v in list(args) + list(kwargs.values())):
                self.outcomes["MemoryError"] += 1
            else:
                self.failures.append((what, args, kwargs, traceback.format_exc()))
        except BaseException:
            self.failures.append((what, args, kwargs, traceback.format_exc()))
        else:
            self.outcomes["returned"] += 1

    def calls_of(self, what, f, names, cands, extra):
        rnd = random.Random("%d %s" % (self.seed, what))
        for _ in range(self.per):
            args, kwargs = build_call(rnd, names, cands, extra)
            self.call(what, f, args, kwargs)


def sweep_function(sw, junk, params, modname, name, f):
    # both faces are classified by the drop-in face's docstring (its C
    # prototype); a function only cubind.cu has (launch) has none: every
    # parameter is then taken as a raw address
    sig, kinds_of = params(name, getattr(drv, name, f))
    names = list(sig.parameters)
    cands = [junk.for_kind(kinds_of[n]) for n in names]
    sw.calls_of("%s.%s" % (modname, name), f, names, cands, junk.anything)


def sweep_class(sw, junk, kinds, modname, name, cls):
    what = "%s.%s" % (modname, name)
    is_struct = cls in kinds.structs.values()
    public = sorted(a for a in dir(cls) if not a.startswith("_"))
    if is_struct:
        # The positional argument is the address of the struct's storage;
        # keywords set fields.
        sw.calls_of(what, cls, public[:3] or ["x"], [junk.raw] + [junk.attr] * 2, junk.attr)
        instance = fresh(cls)
        for a in public:
            if callable(getattr(instance, a, None)):
                continue
            rnd = random.Random("%d %s.%s" % (sw.seed, what, a))
            for _ in range(max(1, sw.per // 8)):
                v = rnd.choice(junk.attr)
                sw.call("%s.%s=" % (what, a), setattr, (instance, a, v), {})
            sw.call("%s repr" % what, repr, (instance,), {})
    else:
        sw.calls_of(what, cls, ["value"], [junk.anything], junk.anything)
        instance = fresh(cls) if not kinds.enums.get(name) else next(
            iter(cls.__members__.values()), None)
    for a in public:
        m = getattr(instance, a, None) if instance is not None else None
        if callable(m) and not isinstance(m, type):
            sw.calls_of("%s().%s" % (what, a), m, ["a", "b"],
                        [junk.attr if is_struct else junk.anything] * 2, junk.attr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--calls", type=int, default=60, help="calls per callable and face")
    ap.add_argument("--seed", type=int, default=27)
    a = ap.parse_args()
    faulthandler.enable()
    logfd = os.open(a.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)

    kinds, params = classifier()
    pool = Pool()
    pool.refresh()
    junk = Junk(kinds, pool)
    sw = Sweep(logfd, a.seed, a.calls)

    exported = {}
    for modname, mod in MODULES:
        names = sorted(n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n)))
        exported[modname] = names
        for name in names:
            obj = getattr(mod, name)
            pool.refresh()
            pool.current()
            if isinstance(obj, type):
                sweep_class(sw, junk, kinds, modname, name, obj)
            else:
                sweep_function(sw, junk, params, modname, name, obj)
            sw.swept[modname] += 1
            if len(sw.failures) > 50:
                break

    total = sum(len(v) for v in exported.values())
    print("callables %d calls %d" % (total, sw.calls))
    for modname, names in exported.items():
        print("module %s callables %d swept %d" % (modname, len(names), sw.swept[modname]))
    for k, v in sorted(sw.outcomes.items()):
        print("outcome %s %d" % (k, v))
    for what, args, kwargs, tb in sw.failures[:20]:
        print("FAILURE %s(*%.300s, **%.300s):\n%s" % (what, repr(args), repr(kwargs), tb))
    sys.stdout.flush()
    sys.stderr.flush()
    # The fake's stream workers may still hold Python callbacks: leave
    # without finalizing the interpreter under them.
    os._exit(1 if sw.failures else 0)


if __name__ == "__main__":
    main()
