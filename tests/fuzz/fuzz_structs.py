#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Property-based fuzz (hypothesis) of host buffers against byte counts and
of nested counted structs, run by tests/fuzz/test_fuzz_structs.py in a
process of its own: the extensions built under ASan+UBSan, libasan
preloaded, PYTHONMALLOC=malloc (every buffer is an ASan-checked block), the
test-only fake driver, which really copies (cuMemcpyHtoD/DtoH and their
Async forms, cuMemcpy2D/3D row by row: its memmove is intercepted by ASan).

Buffer-size mismatches: host buffers (bytes, bytearray, memoryview slices,
read-only views) of random lengths against byte counts and 2D/3D boxes
around them. The outcome must be exactly what the buffer allows: a
ValueError when it holds fewer bytes than the call touches, a TypeError
when the call writes a read-only one, else success with the bytes copied.

Nested struct values: CUgraphNodeParams with a random counted member
(extSemSignal, extSemWait, alloc, memOp), lists of random lengths, counts
around them, set through a view or by copying a whole struct in, array
fields sometimes set from buffers, passed to cuGraphAddNode,
cuGraphNodeSetParams or cuGraphExecNodeSetParams. The outcome must be a
ValueError exactly when a count says more than the array (or buffer) holds,
else whatever the driver answers.

Prints "calls N" and the outcome counts; exits non-zero on a wrong outcome.
"""
import argparse
import collections
import ctypes
import os
import sys
import traceback

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import cubind
import cubind.driver as drv

DEV_BYTES = 1 << 16
HOST = drv.CUmemorytype.CU_MEMORYTYPE_HOST
DEVICE = drv.CUmemorytype.CU_MEMORYTYPE_DEVICE

outcomes = collections.Counter()
failures = []


def expect(what, call, want):
    """call() must end as `want`: None (success, status 0), ValueError or
    TypeError."""
    try:
        r = call()
    except (ValueError, TypeError) as e:
        got = type(e)
    except BaseException:
        failures.append((what, traceback.format_exc()))
        return None
    else:
        got = None if r[0] == 0 else r[0]
    outcomes["%s: %s" % (what.split("(")[0], getattr(got, "__name__", got))] += 1
    if got is not want:
        failures.append((what, "ended as %r, not %r" % (got, want)))
    return got


# ---- host buffers -----------------------------------------------------------

def host_buffer(kind, data):
    if kind == "bytes":
        return bytes(data)
    if kind == "bytearray":
        return bytearray(data)
    if kind == "slice":          # a view into a larger buffer: its own length
        return memoryview(bytearray(b"\xee" * 7 + data + b"\xee" * 5))[7:7 + len(data)]
    return memoryview(bytes(data))  # read-only view


KINDS = st.sampled_from(["bytes", "bytearray", "slice", "readonly"])


@st.composite
def linear_copy(draw):
    kind, n = draw(KINDS), draw(st.integers(0, 96))
    data = pattern(n)  # what the device holds: copies in keep it so
    count = draw(st.one_of(st.integers(0, n + 3), st.integers(max(0, n - 2), n + 2),
                           st.sampled_from([n + 1, 1 << 20, (1 << 64) - 1])))
    return draw(st.sampled_from(["HtoD", "DtoH", "HtoDAsync", "DtoHAsync"])), kind, data, count


def fuzz_linear(dptr, stream, examples):
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(linear_copy())
    def fuzz(case):
        fn, kind, data, count = case
        buf = host_buffer(kind, data)
        writes = fn.startswith("DtoH")
        fits = count <= len(data) and count <= DEV_BYTES
        want = (TypeError if writes and kind in ("bytes", "readonly")
                else None if fits else ValueError if count > len(data) else "driver")
        args = (buf, dptr, count) if writes else (dptr, buf, count)
        if fn.endswith("Async"):
            args += (stream,)
        call = getattr(drv, "cuMemcpy" + fn)
        if want == "driver":    # fits the buffer, not the allocation: the driver's to refuse
            r = call(*args)
            outcomes["cuMemcpy%s: status %d" % (fn, r[0])] += 1
            if r[0] == 0:
                failures.append((fn, "a copy past the allocation succeeded"))
            return
        expect("cuMemcpy%s(len %d, count %d, %s)" % (fn, len(data), count, kind),
               lambda: call(*args), want)
        if fn.endswith("Async"):
            drv.cuStreamSynchronize(stream)
        if want is None and writes:
            assert bytes(buf)[:count] == pattern(count), (fn, kind, count)

    fuzz()


def pattern(n):
    return bytes((i * 7) & 0xFF for i in range(n))


# ---- 2D / 3D boxes ----------------------------------------------------------

@st.composite
def box_copy(draw):
    three = draw(st.booleans())
    g = dict(width=draw(st.integers(0, 12)), rows=draw(st.integers(0, 5)),
             depth=draw(st.integers(0, 3)) if three else 1,
             pitch=draw(st.integers(0, 16)), x=draw(st.integers(0, 6)), y=draw(st.integers(0, 3)),
             z=draw(st.integers(0, 2)) if three else 0, slice=draw(st.integers(0, 6)) if three else 0)
    g["pitch"] = max(g["pitch"], g["width"])
    g["slice"] = max(g["slice"], g["rows"]) if three else 0
    kind = draw(KINDS)
    need = needed(g)
    length = draw(st.one_of(st.integers(max(0, need - 2), need + 2), st.integers(0, 160)))
    return three, draw(st.booleans()), kind, length, g


def needed(g):
    if not (g["width"] and g["rows"] and g["depth"]):
        return 0
    return (((g["z"] + g["depth"] - 1) * g["slice"] + g["y"] + g["rows"] - 1) * g["pitch"]
            + g["x"] + g["width"])


def fuzz_boxes(dptr, examples):
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(box_copy())
    def fuzz(case):
        three, host_is_dst, kind, length, g = case
        buf = host_buffer(kind, pattern(length))
        p = drv.CUDA_MEMCPY3D() if three else drv.CUDA_MEMCPY2D()
        p.WidthInBytes, p.Height = g["width"], g["rows"]
        if three:
            p.Depth = g["depth"]
        # the host end has the box; the device end is a plain rows copy
        host, dev = ("dst", "src") if host_is_dst else ("src", "dst")
        setattr(p, host + "MemoryType", HOST)
        setattr(p, host + "Host", buf)
        setattr(p, host + "Pitch", g["pitch"])
        setattr(p, host + "XInBytes", g["x"])
        setattr(p, host + "Y", g["y"])
        setattr(p, dev + "MemoryType", DEVICE)
        setattr(p, dev + "Device", dptr)
        setattr(p, dev + "Pitch", g["width"])
        if three:
            setattr(p, host + "Z", g["z"])
            setattr(p, host + "Height", g["slice"])
            setattr(p, dev + "Height", g["rows"])
        # a read-only destination is refused whatever the size
        want = (TypeError if host_is_dst and kind in ("bytes", "readonly")
                else ValueError if length < needed(g) else None)
        call = drv.cuMemcpy3D if three else drv.cuMemcpy2D
        expect("%s(%r, len %d, %s, dst %s)" % (call.__name__, g, length, kind, host_is_dst),
               lambda: call(p), want)

    fuzz()


# ---- nested counted structs -------------------------------------------------

MEMBERS = {
    # member: (array fields with their element factories, count field)
    "extSemSignal": ({"extSemArray": lambda i: drv.CUexternalSemaphore(0x100 + i),
                      "paramsArray": lambda i: drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()},
                     "numExtSems", drv.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2),
    "extSemWait": ({"extSemArray": lambda i: drv.CUexternalSemaphore(0x200 + i),
                    "paramsArray": lambda i: drv.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS()},
                   "numExtSems", drv.CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2),
    "alloc": ({"accessDescs": lambda i: drv.CUmemAccessDesc()}, "accessDescCount",
              drv.CUDA_MEM_ALLOC_NODE_PARAMS_v2),
    "memOp": ({"paramArray": lambda i: drv.CUstreamBatchMemOpParams()}, "count",
              drv.CUDA_BATCH_MEM_OP_NODE_PARAMS_v2),
}
T = drv.CUgraphNodeType
TYPES = {"extSemSignal": T.CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL,
         "extSemWait": T.CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
         "alloc": T.CU_GRAPH_NODE_TYPE_MEM_ALLOC, "memOp": T.CU_GRAPH_NODE_TYPE_BATCH_MEM_OP}
ELEM_BYTES = {"extSemArray": 8}  # a buffer can stand for the handle arrays


@st.composite
def nested_case(draw):
    member = draw(st.sampled_from(sorted(MEMBERS)))
    arrays, count_field, cls = MEMBERS[member]
    lengths = {a: draw(st.one_of(st.none(), st.integers(0, 4))) for a in sorted(arrays)}
    buffers = {a: draw(st.integers(0, 40)) for a in sorted(arrays)
               if a in ELEM_BYTES and lengths[a] is None and draw(st.booleans())}
    count = draw(st.one_of(st.integers(0, 6), st.sampled_from([1000, (1 << 32) - 1])))
    how = draw(st.sampled_from(["view", "copy"]))
    call = draw(st.sampled_from(["cuGraphAddNode", "cuGraphNodeSetParams",
                                 "cuGraphExecNodeSetParams"]))
    return member, lengths, buffers, count, how, call


def fuzz_nested(graph, examples):
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(nested_case())
    def fuzz(case):
        member, lengths, buffers, count, how, call = case
        arrays, count_field, cls = MEMBERS[member]
        gp = drv.CUgraphNodeParams()
        gp.type = TYPES[member]
        inner = getattr(gp, member) if how == "view" else cls()
        keep = []
        too_many = False
        for a, n in lengths.items():
            if n is not None:
                setattr(inner, a, [arrays[a](i) for i in range(n)])
                too_many |= n > 0 and count > n  # an empty list sets NULL: not owned
            elif a in buffers:
                b = bytearray(buffers[a])
                keep.append(b)
                setattr(inner, a, b)
                too_many |= count * ELEM_BYTES[a] > buffers[a]
        setattr(inner, count_field, count)
        if how == "copy":
            setattr(gp, member, inner)
        args = {"cuGraphAddNode": (graph, None, None, 0, gp),
                "cuGraphNodeSetParams": (None, gp),
                "cuGraphExecNodeSetParams": (None, None, gp)}[call]
        try:
            getattr(drv, call)(*args)
            got = None
        except ValueError:
            got = ValueError
        except (TypeError, cubind.FunctionNotFoundError, cubind.CUDAError) as e:
            got = type(e)
        except BaseException:
            failures.append((call, traceback.format_exc()))
            return
        outcomes["%s %s: %s" % (call, member, getattr(got, "__name__", got))] += 1
        if (got is ValueError) != too_many:
            failures.append(("%s(%s %r)" % (call, member, case),
                             "ended as %r; count %d too many: %s" % (got, count, too_many)))

    fuzz()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=300)
    a = ap.parse_args()
    assert "/asan/" in drv.__file__, drv.__file__
    assert drv.cuInit(0)[0] == 0
    err, dev = drv.cuDeviceGet(0)
    err, ctx = drv.cuDevicePrimaryCtxRetain(dev)
    assert drv.cuCtxSetCurrent(ctx)[0] == 0
    err, dptr = drv.cuMemAlloc(DEV_BYTES)
    assert err == 0
    assert drv.cuMemcpyHtoD(dptr, pattern(DEV_BYTES), DEV_BYTES)[0] == 0
    err, stream = drv.cuStreamCreate(0)
    err, graph = drv.cuGraphCreate(0)
    fuzz_linear(dptr, stream, a.examples)
    fuzz_boxes(dptr, a.examples)
    fuzz_nested(graph, a.examples)
    print("calls %d" % sum(outcomes.values()))
    for k, v in sorted(outcomes.items()):
        print("outcome %s %d" % (k, v))
    for what, tb in failures[:20]:
        print("FAILURE %s:\n%s" % (what, tb))
    sys.stdout.flush()
    os._exit(1 if failures else 0)


if __name__ == "__main__":
    main()
