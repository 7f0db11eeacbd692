# SPDX-License-Identifier: Apache-2.0
"""Counts that size an output array are validated before anything is
allocated, and the allocation never touches what the call will not use:
a count this machine cannot hold is a MemoryError (or, where it also counts
an input array, a ValueError) at once; an in/out count far above what
exists is first asked of the driver (which, as documented, would otherwise
zero every entry past those it fills), and the result holds the entries the
driver filled; a plain count with a count-bound rule is capped at what the
rule's count function says. Each case runs in a fresh interpreter under
an address-space limit (so a regression fails with MemoryError instead of
exhausting the machine), measuring time and peak RSS. On 05a670f
cuGraphGetRootNodes(graph, 2**30) allocated 8 GiB for the driver to fill
and built a list of 2**30 handles: here it fails on the limit."""
from conftest import run_python

# The start of every child script here: the address-space limit, the fake
# driver, a current context, ok() (the value of a successful call), peak()
# (the peak RSS in bytes) and timed().
PROLOGUE = r'''
import os, resource, sys, time
# Under AddressSanitizer (tests/fuzz re-runs this suite so) the shadow
# memory alone exceeds any such limit: no limit there.
if "libasan" not in open("/proc/self/maps").read():
    LIMIT = 4 << 30
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
import cubind
import cubind.cu as cu
import cubind.driver as d
from conftest import assert_no_growth
from fake_driver import open_fake

fake = open_fake()
def ok(r):
    assert r[0] == 0, r
    return r[1] if len(r) == 2 else r[1:]

ok(d.cuInit(0))
ok(d.cuCtxSetCurrent(ok(d.cuDevicePrimaryCtxRetain(ok(d.cuDeviceGet(0))))))

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10

def timed(fn, caught=(MemoryError,)):
    """fn()'s value, or the exception of a class in caught, and its time."""
    t = time.monotonic()
    try:
        r = fn()
    except caught as e:
        r = e
    return r, time.monotonic() - t
'''

SCRIPT = PROLOGUE + r'''
mod = ok(d.cuModuleLoadData(b"fake image\0"))
f = ok(d.cuModuleGetFunction(mod, b"k"))
graph = ok(d.cuGraphCreate(0))
p = d.CUDA_KERNEL_NODE_PARAMS()
p.func = f
p.gridDimX = p.gridDimY = p.gridDimZ = p.blockDimX = p.blockDimY = p.blockDimZ = 1
nodes = [ok(d.cuGraphAddKernelNode(graph, None, 0, p)) for _ in range(3)]

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

# a count no caller can back: the input array it also counts is refused
# (ValueError) before anything is allocated, at once
def refused():
    try:
        d.cuDeviceGetHostAtomicCapabilities([d.CUatomicOperation(0)], (1 << 32) - 1, 0)
    except ValueError:
        pass
    else:
        raise AssertionError("not refused")
r, dt = timed(refused)
assert r is None and dt < 0.5, (r, dt)
grown = peak() - start
assert grown < 512 << 20, grown

# the process stays usable, and refused calls leave nothing behind
assert d.cuGraphGetRootNodes(graph, 8) == (0, nodes, 3)
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


ENUMERATE = PROLOGUE + r"""
CAUGHT = (MemoryError, cubind.CUDAError)
# the fake's module and library hold what was resolved in them, oldest first
mod = ok(d.cuModuleLoadData(b"fake image\0"))
funcs = [ok(d.cuModuleGetFunction(mod, n)) for n in (b"a", b"b", b"c")]
lib = ok(d.cuLibraryLoadData(b"fake image\0", None, None, 0, None, None, 0))
kernels = [ok(d.cuLibraryGetKernel(lib, n)) for n in (b"x", b"y")]

THRESHOLD = 65536  # CBS_COUNT_PROBE_ABOVE (runtime/module/bind_support.h)
CASES = ((d.cuModuleEnumerateFunctions, cu.cuModuleEnumerateFunctions, mod, funcs,
          b"cuModuleGetFunctionCount", d.CUfunction),
         (d.cuLibraryEnumerateKernels, cu.cuLibraryEnumerateKernels, lib, kernels,
          b"cuLibraryGetKernelCount", d.CUkernel))
start = peak()
for drop_in, raising, owner, real, count_fn, cls in CASES:
    name = drop_in.__name__.encode()
    # above the threshold: the count function first, and the array and the
    # list hold what exists, not 2**26 (4 GiB of handles) or 2**32 - 1
    for n in (1 << 26, (1 << 32) - 1, THRESHOLD + 1):
        counted, calls = fake.fakecuda_call_count(count_fn), fake.fakecuda_call_count(name)
        r, dt = timed(lambda: drop_in(n, owner), CAUGHT)
        assert r == (0, real), (name, n, r)
        assert dt < 0.5, (name, n, dt)
        assert fake.fakecuda_call_count(count_fn) - counted == 1, (name, n)
        assert fake.fakecuda_call_count(name) - calls == 1, (name, n)
        r, dt = timed(lambda: raising(n, owner), CAUGHT)
        assert r == real and dt < 0.5, (name, n, r, dt)
    # at or below it: n entries, those past what exists NULL handles, as
    # cuda.bindings, and no count call
    for n in (THRESHOLD, 5, len(real), 1, 0):
        counted = fake.fakecuda_call_count(count_fn)
        r = ok(drop_in(n, owner))
        assert len(r) == n and r[:len(real)] == real[:n], (name, n, r[:8])
        assert all(int(h) == 0 for h in r[len(real):]), (name, n)
        assert all(type(h) is cls for h in r), (name, n)
        assert fake.fakecuda_call_count(count_fn) == counted, (name, n)
    assert raising(5, owner) == real + [cls(0)] * (5 - len(real))
grown = peak() - start
assert grown < 512 << 20, grown

# a failing count function: its status is the call's, at once, nothing
# allocated and the enumeration not called
calls = fake.fakecuda_call_count(b"cuLibraryEnumerateKernels")
r, dt = timed(lambda: d.cuLibraryEnumerateKernels((1 << 32) - 1, None), CAUGHT)
assert r == (d.CUresult.CUDA_ERROR_INVALID_HANDLE, None) and dt < 0.5, (r, dt)
r, dt = timed(lambda: cu.cuLibraryEnumerateKernels(1 << 26, None), CAUGHT)
assert isinstance(r, cubind.CUDAError), r
assert r.result == d.CUresult.CUDA_ERROR_INVALID_HANDLE and dt < 0.5, (r, dt)
assert fake.fakecuda_call_count(b"cuLibraryEnumerateKernels") == calls
fake.fakecuda_fail_next(b"cuModuleGetFunctionCount", int(d.CUresult.CUDA_ERROR_INVALID_VALUE), 1)
assert d.cuModuleEnumerateFunctions(1 << 26, mod) == (d.CUresult.CUDA_ERROR_INVALID_VALUE, None)

# the process stays usable, and the capped calls leave nothing behind
assert d.cuModuleEnumerateFunctions(1 << 26, mod) == (0, funcs)
assert cu.cuLibraryEnumerateKernels(2, lib) == kernels
assert_no_growth(lambda: d.cuModuleEnumerateFunctions((1 << 32) - 1, mod))
assert_no_growth(lambda: cu.cuLibraryEnumerateKernels(1 << 26, lib))
assert peak() - start < 512 << 20, peak() - start
print("ok", grown >> 20)
"""


def test_enumerations_are_bounded_by_what_exists():
    """cuModuleEnumerateFunctions and cuLibraryEnumerateKernels take a plain
    count: on a4ac904 numFunctions=2**26 calloc'd 2**26 entries
    and built 2**26 handle objects (about 4 GiB), and 2**32 - 1 was a
    MemoryError. A count-bound rule (gen/rules.txt) asks the count function
    first above the threshold: every such count is fast, small, and returns
    the real functions; at or below it the list is padded as in
    cuda.bindings."""
    proc = run_python(ENUMERATE)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stdout + proc.stderr
