#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Property-based fuzz of every generated function (hypothesis), run by
tests/fuzz/test_fuzz_bindings.py in a process of its own: the extensions
built under ASan+UBSan (build/asan/python, tests/fuzz/build_asan.py), libasan
preloaded, the test-only fake driver behind CUBIND_LIBCUDA.

Every function of cubind.driver and cubind.cu whose name starts with "cu" is
called with random and wrong arguments: wrong types, None, huge and negative
ints, floats, bytes, str, handles of the wrong (and the right) class, struct
instances of the wrong (and the right) class, enum members, lists, callables,
too many and too few arguments, keywords known and unknown. Every outcome
must be a return value (a status tuple for cubind.driver) or one of ALLOWED;
a crash or a sanitizer report ends the process non-zero.

Parameters that take a raw address are never given an int (nor anything
whose getPtr() or int value the bindings would turn into an address): the
fake driver would dereference it, or call it (fuzz_params.py finds them).

Prints "calls N" (both faces, every argument set) and the outcome counts.
"""
import argparse
import collections
import ctypes
import os
import pathlib
import sys
import traceback

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import cubind.cu as cu
import cubind.driver as drv
from fuzz_params import ALLOWED, Pool, big, classifier, is_function


# ---- strategies -----------------------------------------------------------------

def callback(*a):
    return None


class Opaque:
    pass


class StreamLike:
    """A stream known only by the CUDA stream protocol: __cuda_stream__()
    returns `answer`, or raises it when it is an exception."""

    def __init__(self, answer):
        self.answer = answer

    def __cuda_stream__(self):
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def strategies(kinds, pool):
    ints = st.one_of(
        st.integers(min_value=-2, max_value=300),
        st.integers(min_value=-(1 << 70), max_value=1 << 70),
        st.sampled_from([0, 1, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32,
                         2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64, 2**200,
                         -2**200]),
        st.booleans())
    floats = st.floats(allow_nan=True, allow_infinity=True)
    small_bytes = st.binary(max_size=64)
    texts = st.text(max_size=32)
    instances = []
    for c in sorted(kinds.handles.values(), key=lambda c: c.__name__):
        if _ctor_ok(c):
            instances += [c(), c(0)]
    # objects implementing the CUDA stream protocol, with good and bad answers
    # (every CUstream parameter takes them; other handle parameters refuse them)
    stream_like = st.one_of(
        st.integers(0, 63).map(lambda i: (0, int(pool.handles[i % len(pool.handles)] or 0))
                               if pool.handles else (0, 0)),
        st.tuples(st.just(0), ints), st.tuples(ints, ints),
        st.sampled_from([None, (), (0,), (0, 0, 0), [0, 0], "x", (0, 1.5),
                         ValueError("from __cuda_stream__")])).map(StreamLike)
    handle_objs = st.one_of(
        st.sampled_from(instances),
        st.integers(0, 63).map(lambda i: pool.handles[i % len(pool.handles)]
                               if pool.handles else None),
        stream_like)
    struct_objs = st.sampled_from(sorted(kinds.structs.values(), key=lambda c: c.__name__)).map(
        _new_struct)
    enum_objs = st.sampled_from(sorted(kinds.enums.values(), key=lambda c: c.__name__)).flatmap(
        lambda c: st.sampled_from(list(c.__members__.values())[:8] or [0]))
    misc = st.sampled_from([None, Opaque(), callback, {}, {"a": 1}, (), [], [None], object,
                            "", "\0", b"", b"\0", bytearray(4), 1j, Ellipsis])
    lists = st.lists(st.one_of(ints, floats, st.none(), small_bytes), max_size=6)
    tuples = st.tuples(lists, st.lists(st.sampled_from([None, ctypes.c_int, ctypes.c_double,
                                                          ctypes.c_void_p, int]), max_size=6))
    anything = st.one_of(ints, floats, small_bytes, texts, handle_objs, struct_objs, enum_objs,
                         misc, lists, tuples)
    # raw addresses: never a number (an int, bool, float but nan, enum
    # member), a handle or a struct: a void * takes a number as an address
    # (void-ptr-numbers: 1.5 is address 1); nan converts to no int.
    nan = st.just(float("nan"))
    raw_misc = st.sampled_from([None, Opaque(), callback, {}, (), [], [None], [None, None],
                                "", "x", 1j, float("nan"), object])
    raw = st.one_of(st.none(), small_bytes, small_bytes.map(bytearray), texts, raw_misc,
                    st.lists(st.one_of(st.none(), nan, small_bytes), max_size=4),
                    st.tuples(st.lists(nan, max_size=3), st.lists(st.none(), max_size=3)))
    return dict(ints=ints, floats=floats, anything=anything, raw=raw, handle_objs=handle_objs,
                struct_objs=struct_objs, enum_objs=enum_objs, texts=texts, bytes=small_bytes)


def _ctor_ok(c):
    try:
        c()
        c(0)
        return True
    except Exception:
        return False


def _new_struct(c):
    try:
        return c()
    except Exception:
        return None


def param_strategy(kind, S):
    k = kind[0]
    if k == "raw":
        return S["raw"]
    if k == "handle":
        cls = kind[1]
        right = st.sampled_from([cls(), cls(0)]) if _ctor_ok(cls) else st.none()
        return st.one_of(right, right, S["ints"], S["handle_objs"], S["anything"])
    if k == "struct":
        cls = kind[1]
        return st.one_of(st.builds(lambda: _new_struct(cls)), st.none(), S["struct_objs"],
                         S["anything"])
    if k == "enum":
        cls = kind[1]
        return st.one_of(st.sampled_from(list(cls.__members__.values()) or [0]), S["ints"],
                         S["enum_objs"], S["anything"])
    if k == "str":
        return st.one_of(S["texts"], S["bytes"], S["anything"])
    if k == "float":
        return st.one_of(S["floats"], S["ints"], S["anything"])
    if k == "int":
        return st.one_of(S["ints"], S["ints"], S["anything"])
    return S["anything"]


SHAPES = ["exact"] * 6 + ["fewer", "more", "kw", "kw_all", "kw_unknown", "kw_dup", "empty"]


def example_strategy(sig, kinds_of, S):
    """One example: for each parameter 1..4 candidate values, some extra
    values, and a seeded random.Random that combines them into calls (so a
    drawn value is used many times: drawing is what costs, not calling)."""
    per = [st.lists(param_strategy(kinds_of[n], S), min_size=1, max_size=4)
           for n in sig.parameters]
    cands = st.tuples(*per) if per else st.just(())
    extra = st.lists(S["anything"], min_size=1, max_size=3)
    return st.tuples(cands, extra, st.randoms(use_true_random=False))


def build_call(names, values, shape, extra, k):
    if shape == "exact" or not names and shape in ("kw", "kw_all", "kw_dup"):
        return list(values), {}
    if shape == "fewer":
        return list(values[:max(0, len(values) - 1 - k % max(1, len(values)))]), {}
    if shape == "more":
        return list(values) + list(extra), {}
    if shape == "empty":
        return [], {}
    if shape == "kw":
        cut = k % (len(names) + 1)
        return list(values[:cut]), dict(zip(names[cut:], values[cut:]))
    if shape == "kw_all":
        return [], dict(zip(names, values))
    if shape == "kw_unknown":
        return list(values), {"fuzz_no_such_param": extra[0]}
    if shape == "kw_dup":
        return list(values), {names[k % len(names)]: extra[0]}
    raise AssertionError(shape)


def fuzz_launch(S, pool, examples, per_example, outcomes, failures):
    """cubind.launch, the raising face's one function that is not the
    header's: random and wrong kernels, grid and block forms, kernel
    arguments and keywords; the pool's kernel (no parameters) and small
    dimensions often enough that some launches succeed. Returns the number
    of calls."""
    calls = 0
    kernels = [h for h in pool.handles if type(h).__name__ == "CUfunction"]
    assert kernels, "the pool has no CUfunction"
    valid = st.integers(1, 4)
    dims = st.one_of(valid, st.lists(valid, min_size=1, max_size=3).map(tuple),
                     S["ints"], S["floats"], S["texts"], st.none(), S["handle_objs"],
                     st.lists(st.one_of(S["ints"], S["floats"], st.none()), max_size=4),
                     st.lists(S["ints"], max_size=4).map(tuple))
    keywords = st.dictionaries(st.sampled_from(["stream", "shared_mem", "streams", "grid"]),
                               st.one_of(S["anything"], S["handle_objs"]), max_size=2)

    @settings(max_examples=examples * per_example, derandomize=True, database=None,
              deadline=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.sampled_from(kernels), S["handle_objs"], S["anything"]), dims, dims,
           st.one_of(st.just([]), st.lists(S["anything"], max_size=6)), keywords)
    def fuzz(f, grid, block, values, kwargs):
        nonlocal calls
        calls += 1
        pool.current()
        try:
            r = cu.launch(f, grid, block, *values, **kwargs)
        except ALLOWED as e:
            outcomes["launch: " + type(e).__name__] += 1
            return
        except MemoryError:
            if any(big(v) for v in [grid, block] + values + list(kwargs.values())):
                outcomes["launch: MemoryError"] += 1
                return
            failures.append(("launch", "cu", (f, grid, block, *values), kwargs,
                             traceback.format_exc()))
            return
        except BaseException:
            failures.append(("launch", "cu", (f, grid, block, *values), kwargs,
                             traceback.format_exc()))
            return
        if r is not None:
            failures.append(("launch", "cu", (f, grid, block, *values), kwargs,
                             "returned %r, not None" % (r,)))
        outcomes["launch: returned"] += 1

    fuzz()
    return calls


# ---- the run ----------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=30)
    ap.add_argument("--per-example", type=int, default=8)
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    shard, nshards = map(int, a.shard.split("/"))

    kinds, params = classifier()
    pool = Pool()
    pool.refresh()
    S = strategies(kinds, pool)

    # The harness must run what it claims to: the sanitized build, with the
    # raw-address parameters it knows of recognised as such.
    assert "/asan/" in drv.__file__, drv.__file__
    assert "libasan" in pathlib.Path("/proc/self/maps").read_text(), "libasan is not loaded"
    for fn, p in [("cuMemcpyHtoD", "srcHost"), ("cuMemcpyDtoH", "dstHost"),
                  ("cuLaunchKernel", "kernelParams"), ("cuLaunchKernel", "extra"),
                  ("cuLaunchHostFunc", "fn"), ("cuStreamAddCallback", "callback"),
                  ("cuUserObjectCreate", "destroy"), ("cuMemFreeHost", "p"),
                  ("cuModuleLoadData", "image"), ("cuLibraryLoadData", "code")]:
        k = params(fn, getattr(drv, fn))[1][p]
        assert k == ("raw",), (fn, p, k)

    names = sorted(n for n in dir(drv) if is_function(drv, n))
    cu_names = sorted(n for n in dir(cu) if is_function(cu, n))
    assert names == cu_names, "the faces differ: %s" % (set(names) ^ set(cu_names))
    assert len(names) > 400, len(names)
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    names = names[shard::nshards]

    calls = 0
    outcomes = collections.Counter()
    failures = []
    raw_params = 0

    for name in names:
        sig, kinds_of = params(name, getattr(drv, name))
        raw_params += sum(1 for k in kinds_of.values() if k[0] == "raw")
        pnames = list(sig.parameters)
        pool.refresh()
        faces = (getattr(drv, name), getattr(cu, name))

        @settings(max_examples=a.examples, derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(example_strategy(sig, kinds_of, S))
        def fuzz(example):
            nonlocal calls
            cands, extra, rnd = example
            pool.current()
            for _ in range(a.per_example):
                values = tuple(rnd.choice(c) for c in cands)
                shape = rnd.choice(SHAPES)
                args, kwargs = build_call(pnames, values, shape, extra, rnd.randrange(11))
                for face, f in zip(("driver", "cu"), faces):
                    calls += 1
                    try:
                        r = f(*args, **kwargs)
                    except ALLOWED as e:
                        outcomes[type(e).__name__] += 1
                        continue
                    except MemoryError:
                        if any(big(v) for v in list(args) + list(kwargs.values())):
                            outcomes["MemoryError"] += 1
                            continue
                        failures.append((name, face, args, kwargs, traceback.format_exc()))
                        continue
                    except BaseException:
                        failures.append((name, face, args, kwargs, traceback.format_exc()))
                        continue
                    if face == "driver":
                        if not (isinstance(r, tuple) and r and isinstance(r[0], drv.CUresult)):
                            failures.append((name, face, args, kwargs,
                                             "returned %r, not a status tuple" % (r,)))
                            continue
                        outcomes["status %s" % ("success" if r[0] == 0 else "error")] += 1
                    else:
                        outcomes["cu returned"] += 1

        fuzz()
        if os.environ.get("FUZZ_VERBOSE"):
            print("%s: %d calls so far" % (name, calls), file=sys.stderr, flush=True)
        if len(failures) > 50:
            break

    if shard == 0 and (not a.only or "launch" in a.only.split(",")):
        pool.refresh()
        calls += fuzz_launch(S, pool, a.examples, a.per_example, outcomes, failures)

    print("functions %d raw-address parameters %d" % (len(names), raw_params))
    print("calls %d" % calls)
    for k, v in sorted(outcomes.items()):
        print("outcome %s %d" % (k, v))
    for name, face, args, kwargs, tb in failures[:20]:
        print("FAILURE %s.%s(*%r, **%r):\n%s" % (face, name, args, kwargs, tb))
    sys.stdout.flush()
    sys.stderr.flush()
    # The fake's stream workers may still hold Python callbacks: leave
    # without finalizing the interpreter under them.
    os._exit(1 if failures else 0)


if __name__ == "__main__":
    main()
