# SPDX-License-Identifier: Apache-2.0
"""Counts that size an output array are validated before anything is
allocated, and the allocation never touches what the call will not use:
a count this machine cannot hold is a MemoryError at once; an in/out count
far above what exists is first asked of the driver (which, as documented,
would otherwise zero every entry past those it fills), and the result holds
the entries the driver filled. Each case runs in a fresh interpreter under
an address-space limit (so a regression fails with MemoryError instead of
exhausting the machine), measuring time and peak RSS. On 05a670f
cuGraphGetRootNodes(graph, 2**30) allocated 8 GiB for the driver to fill
and built a list of 2**30 handles: here it fails on the limit."""
from conftest import run_python

SCRIPT = r'''
import os, resource, sys, time
# Under AddressSanitizer (tests/fuzz re-runs this suite so) the shadow
# memory alone exceeds any such limit: no limit there.
if "libasan" not in open("/proc/self/maps").read():
    LIMIT = 4 << 30
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
import cubind.driver as d
from conftest import assert_no_growth
from fake_driver import open_fake

fake = open_fake()
def ok(r):
    assert r[0] == 0, r
    return r[1] if len(r) == 2 else r[1:]

ok(d.cuInit(0))
ok(d.cuCtxSetCurrent(ok(d.cuDevicePrimaryCtxRetain(ok(d.cuDeviceGet(0))))))
mod = ok(d.cuModuleLoadData(b"fake image\0"))
f = ok(d.cuModuleGetFunction(mod, b"k"))
graph = ok(d.cuGraphCreate(0))
p = d.CUDA_KERNEL_NODE_PARAMS()
p.func = f
p.gridDimX = p.gridDimY = p.gridDimZ = p.blockDimX = p.blockDimY = p.blockDimZ = 1
nodes = [ok(d.cuGraphAddKernelNode(graph, None, 0, p)) for _ in range(3)]

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10

def timed(fn):
    t = time.monotonic()
    try:
        r = fn()
    except MemoryError as e:
        r = e
    return r, time.monotonic() - t

start = peak()
for fn in (d.cuGraphGetRootNodes, d.cuGraphGetNodes):
    name = fn.__name__.encode()
    for n, driver_calls in ((1 << 30, 2), (1 << 32, 2), (4, 1), (3, 1)):
        calls = fake.fakecuda_call_count(name)
        r, dt = timed(lambda: fn(graph, n))
        # the driver's count bounds the arrays: every count succeeds, a
        # huge one costs one more (counting) call
        assert r == (0, nodes, 3), (fn.__name__, n, r)
        assert dt < 0.5, (fn.__name__, n, dt)
        assert fake.fakecuda_call_count(name) - calls == driver_calls, (fn.__name__, n)
    assert fn(graph, 2) == (0, nodes[:2], 2)
    assert fn(graph, 0) == (0, [], 3)

# the same for an array of structs: CUdevResource groups
sm = d.CUdevResource()
sm.type = d.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM
sm.sm.smCount = 10
r, dt = timed(lambda: d.cuDevSmResourceSplitByCount((1 << 32) - 1, sm, 0, 4))
assert not isinstance(r, BaseException) and r[0] == 0 and len(r[1]) == r[2] == 2, r
assert dt < 0.5, dt

# a huge count on a call the driver refuses: its answer, nothing allocated
r, dt = timed(lambda: d.cuGraphGetRootNodes(d.CUgraph(0x1000), (1 << 64) - 1))
assert r[0] == d.CUresult.CUDA_ERROR_INVALID_HANDLE and dt < 0.5, (r, dt)

# counts no machine here can hold: MemoryError before allocating, at once
for call in (lambda: d.cuModuleEnumerateFunctions((1 << 32) - 1, mod),
             lambda: d.cuLibraryEnumerateKernels((1 << 32) - 1, None)):
    r, dt = timed(call)
    assert isinstance(r, MemoryError), r
    assert dt < 0.5, dt
assert "more than this machine's memory" in str(
    timed(lambda: d.cuModuleEnumerateFunctions((1 << 32) - 1, mod))[0])
grown = peak() - start
assert grown < 512 << 20, grown

# the process stays usable, and refused calls leave nothing behind
assert d.cuGraphGetRootNodes(graph, 8) == (0, nodes, 3)
def refused():
    try:
        d.cuModuleEnumerateFunctions((1 << 32) - 1, mod)
    except MemoryError:
        pass
    else:
        raise AssertionError("not refused")
assert_no_growth(refused)
assert_no_growth(lambda: d.cuGraphGetRootNodes(graph, 1 << 30), rounds=50)
print("ok", grown >> 20)
'''


def test_huge_counts_are_fast_small_and_leave_the_process_usable():
    proc = run_python(SCRIPT)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stdout + proc.stderr


EDGES = r'''
import cubind.driver as d
assert d.cuInit(0)[0] == 0
err, dev = d.cuDeviceGet(0)
err, ctx = d.cuDevicePrimaryCtxRetain(dev)
d.cuCtxSetCurrent(ctx)
err, graph = d.cuGraphCreate(0)
# from, to and edgeData are arrays of numEdges entries, each written by the
# driver (the fake clears them all): lists, never single values
r = d.cuGraphGetEdges(graph, 16)
assert r == (0, [], [], [], 0), r
r = d.cuGraphGetEdges(graph, 1 << 30)
assert r == (0, [], [], [], 0), r
print("ok")
'''


def test_every_array_an_in_out_count_sizes_is_an_array():
    """cuGraphGetEdges' from and to (and cuGraphNodeGetDependencies' edgeData)
    are written as numEdges entries: on 05a670f the binding passed the
    address of one value there, and a count above 1 wrote past it (this
    child then dies of the corrupted stack)."""
    proc = run_python(EDGES)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
