# SPDX-License-Identifier: Apache-2.0
"""Concurrency of cubind.driver (the fake driver answers from any thread):
shared handles used from many threads, concurrent first use of lazily
resolved entry points, exact counts at the end. On a free-threaded build
these run truly in parallel; on a GIL build they still interleave."""
import json
import sys
import threading

import pytest

from conftest import PROCESSES, ROUNDS, UNDER_TSAN, run_python, run_python_args
from immortality import immortal

# Every test here also runs under ThreadSanitizer (tests/run).
pytestmark = pytest.mark.tsan

THREADS = 8


def run_threads(target, n=THREADS):
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # reported below, never lost
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gil_stays_disabled_on_free_threaded_builds():
    import cubind.driver  # noqa: F401
    import cubind.cu  # noqa: F401
    if hasattr(sys, "_is_gil_enabled"):
        import sysconfig
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            assert not sys._is_gil_enabled()


def test_shared_objects_are_immortal_on_free_threaded_builds():
    """The modules, their functions, enum members, types and the drop-in
    face's one (CUDA_SUCCESS,) result are used by every thread; on a
    free-threaded build they are immortal (cbs_make_immortal), so taking a
    reference costs no atomic on a shared count. On a GIL build they stay
    ordinary objects."""
    import sysconfig
    import cubind.cu as cu
    import cubind.driver as d
    shared = [d.cuDeviceGetAttribute, cu.cuDeviceGetAttribute, d.CUresult.CUDA_SUCCESS,
              d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.CUstream,
              d.CUresult, d.cuInit(0),  # the drop-in face's (CUDA_SUCCESS,)
              d, cu,  # the modules: `d.f(...)` from globals takes a reference to d
              type(d.CUresult)]  # the enum classes' metaclass
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    for o in shared:
        assert immortal(o) == free_threaded, o
    # A subinterpreter's objects stay mortal (they are freed with it).
    proc = run_python(
        "import sys, sysconfig, _interpreters as I\n"
        "i = I.create()\n"
        "I.run_string(i, 'import sys, cubind.cu as cu\\n'\n"
        "  'f = cu.cuDeviceGetAttribute; b = sys.getrefcount(f); r = [f] * 10\\n'\n"
        "  'assert sys.getrefcount(f) - b == 10, sys.getrefcount(f) - b')\n"
        "I.destroy(i)\n"
        "print('ok')\n") if sys.version_info >= (3, 13) else None
    if proc is not None:
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_import_does_not_warn_about_the_gil():
    proc = run_python("import warnings; warnings.simplefilter('error'); import cubind.driver, cubind.cu; print('ok')")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_shared_stream_and_event_from_many_threads(drv):
    r, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert r == 0
    drv.cuCtxSetCurrent(ctx)
    r, stream = drv.cuStreamCreate(0)
    r, event = drv.cuEventCreate(0)
    counts = [0] * THREADS

    def work(i):
        assert drv.cuCtxSetCurrent(ctx)[0] == 0  # the current context is per thread
        for _ in range(2000):
            assert drv.cuEventRecord(event, stream)[0] == 0
            assert drv.cuStreamQuery(stream)[0] in (drv.CUresult.CUDA_SUCCESS, drv.CUresult.CUDA_ERROR_NOT_READY)
            assert drv.cuCtxGetCurrent()[1] == ctx
            counts[i] += 1

    for _ in range(ROUNDS):
        run_threads(work)
    assert counts == [2000 * ROUNDS] * THREADS
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert drv.cuEventDestroy(event)[0] == 0
    assert drv.cuStreamDestroy(stream)[0] == 0


def test_enum_and_handle_objects_are_shared_safely(drv):
    attrs = list(drv.CUdevice_attribute.__members__.values())[:50]
    results = [None] * THREADS

    def work(i):
        seen = []
        for _ in range(200):
            for a in attrs:
                err, value = drv.cuDeviceGetAttribute(a, i % 2)
                assert err == 0
                seen.append(value)
        results[i] = seen

    for rnd in range(ROUNDS):
        run_threads(work)
        for i, seen in enumerate(results):
            # The fake answers attrib * 1000 + device for every attribute.
            assert seen == [int(a) * 1000 + i % 2 for a in attrs] * 200, (rnd, i)


ENTRY_POINT_RACE = r'''
import ctypes, json, os, struct, sys, threading, time
import cubind, cubind.cu as cu, cubind.driver as d
import cubind._runtime as rt
from fake_driver import open_fake
fake = open_fake()
N, REPS, SERIAL = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "serial"
A = d.CUdevice_attribute
# Made here, not in the threads: creating ctypes instances from several
# threads at once races inside CPython 3.13's _ctypes (python/cpython#128567).
offs, sizes = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
for i in range(N):
    assert fake.fakecuda_set_param_layout(None, b"race%d" % i, 3, offs, sizes) == 0
bufs = [ctypes.create_string_buffer(64) for _ in range(N)]
hosts = [[ctypes.create_string_buffer(64) for _ in range(3)] for _ in range(N)]
# Not implemented by the fake driver: each call must raise
# FunctionNotFoundError naming the function (the slot stays empty).
MISSING = [("cuCtxGetFlags", ()), ("cuCtxGetLimit", (0,)), ("cuCtxGetCacheConfig", ()),
           ("cuModuleGetLoadingMode", ()), ("cuCtxGetSharedMemConfig", ()),
           ("cuDeviceGetDefaultMemPool", (0,)), ("cuDeviceComputeCapability", (0,)),
           ("cuDeviceCanAccessPeer", (0, 1)), ("cuDeviceGetPCIBusId", (32, 0)),
           ("cuDeviceGetLuid", (0,)), ("cuCtxResetPersistingL2Cache", ()),
           ("cuMemsetD16", (0, 0, 0))]
destroyed = []
lock = threading.Lock()

def ok(r):
    assert r[0] == 0, r
    return r[1:]

def o_version(i, ctx): return ok(d.cuDriverGetVersion())
def o_count(i, ctx): return ok(d.cuDeviceGetCount())
def o_get(i, ctx): return [int(x) for x in ok(d.cuDeviceGet(i % 2))]
def o_name(i, ctx): return [x.decode() for x in ok(d.cuDeviceGetName(64, i % 2))]
def o_uuid(i, ctx): return list(ok(d.cuDeviceGetUuid(0))[0].bytes)
def o_totalmem(i, ctx): return ok(d.cuDeviceTotalMem(i % 2))
def o_attr(i, ctx): return ok(d.cuDeviceGetAttribute(A(16 + i), i % 2))
def o_pstate(i, ctx): return ok(d.cuDevicePrimaryCtxGetState(0))
def o_ctx(i, ctx):
    (cur,), (dev,) = ok(d.cuCtxGetCurrent()), ok(d.cuCtxGetDevice())
    return [cur == ctx, int(dev), ok(d.cuCtxGetApiVersion(ctx)), ok(d.cuCtxGetStreamPriorityRange()),
            ok(d.cuCtxSynchronize())]
def o_pushpop(i, ctx):
    ok(d.cuCtxPushCurrent(ctx))
    (c,) = ok(d.cuCtxPopCurrent())
    return c == ctx
def o_ctxcreate(i, ctx):
    (c,) = ok(d.cuCtxCreate(None, 0, i % 2))
    ok(d.cuCtxDestroy(c))
    ok(d.cuCtxSetCurrent(ctx))
    return ok(d.cuCtxGetCurrent())[0] == ctx
def o_pctx(i, ctx):
    (c,) = ok(d.cuDevicePrimaryCtxRetain(1))
    ok(d.cuDevicePrimaryCtxRelease(1))
    return bool(c)
def o_meminfo(i, ctx): return ok(d.cuMemGetInfo())[1]       # total (free moves with the others)
def o_memcpy(i, ctx):
    src, mid, dst = hosts[i]
    (a,), (b,) = ok(d.cuMemAlloc(64)), ok(d.cuMemAlloc(64))
    ok(d.cuMemsetD8(a, i + 1, 64))
    ok(d.cuMemcpyDtoH(dst, a, 64))
    first = dst.raw
    src.raw = bytes((i * 7 + k) & 0xFF for k in range(64))
    ok(d.cuMemcpyHtoD(a, src, 64))
    ok(d.cuMemcpyDtoD(b, a, 64))
    ok(d.cuMemcpyDtoH(mid, b, 64))
    ok(d.cuMemsetD32(b, 0x01020304 + i, 16))
    ok(d.cuMemcpyDtoH(dst, b, 64))
    kind = ok(d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a))
    rng = ok(d.cuMemRangeGetAttribute(4, d.CUmem_range_attribute(1), a, 64))
    ok(d.cuMemFree(a)); ok(d.cuMemFree(b))
    assert first == bytes([i + 1]) * 64 and mid.raw == src.raw, i
    assert dst.raw == struct.pack("<I", 0x01020304 + i) * 16, i
    return [first.hex(), mid.raw.hex(), dst.raw.hex(), kind, rng]
def o_async(i, ctx):
    src, mid, dst = hosts[i]
    (s,) = ok(d.cuStreamCreateWithPriority(0, -1))
    (a,), (b,) = ok(d.cuMemAlloc(64)), ok(d.cuMemAlloc(64))
    src.raw = bytes((i * 13 + k) & 0xFF for k in range(64))
    ok(d.cuMemcpyHtoDAsync(a, src, 64, s))
    ok(d.cuMemcpyDtoDAsync(b, a, 64, s))
    ok(d.cuMemcpyDtoHAsync(dst, b, 64, s))
    ok(d.cuStreamSynchronize(s))
    out = [dst.raw == src.raw, ok(d.cuStreamQuery(s)), ok(d.cuStreamGetFlags(s)),
           ok(d.cuStreamGetPriority(s)), ok(d.cuStreamGetCtx(s))[0] == ctx,
           int(ok(d.cuStreamIsCapturing(s))[0]), int(ok(d.cuStreamGetCaptureInfo(s))[0])]
    ok(d.cuMemFree(a)); ok(d.cuMemFree(b))
    ok(d.cuStreamDestroy(s))
    return out
def o_host(i, ctx):
    (p,) = ok(d.cuMemAllocHost(32))
    ok(d.cuMemFreeHost(p))
    return p != 0
def o_event(i, ctx):
    (s,) = ok(d.cuStreamCreate(0))
    (e0,), (e1,) = ok(d.cuEventCreate(0)), ok(d.cuEventCreate(0))
    ok(d.cuEventRecord(e0, s)); ok(d.cuEventRecord(e1, s))
    ok(d.cuStreamWaitEvent(s, e1, 0))
    ok(d.cuEventSynchronize(e1))
    out = [ok(d.cuEventQuery(e1)), len(ok(d.cuEventElapsedTime(e0, e1)))]
    ok(d.cuEventDestroy(e0)); ok(d.cuEventDestroy(e1)); ok(d.cuStreamDestroy(s))
    return out
def recorded(i):
    """What the fake recorded of the last launch of thread i's kernel."""
    n = fake.fakecuda_last_launch_params(b"race%d" % i, bufs[i], 64)
    return bufs[i].raw[:n]
def launch_checks(i, f):
    name = b"race%d" % i
    vals = (0x1000 + i, -i, i / 4)
    want = struct.pack("<Qif", *vals)
    got = []
    ok(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, vals, None))
    got.append(recorded(i) == want)
    cfg = d.CUlaunchConfig()
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1
    ok(d.cuLaunchKernelEx(cfg, f, (vals, (ctypes.c_void_p, ctypes.c_int, ctypes.c_float)), None))
    got.append(recorded(i) == want)
    ok(d.cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, None, vals))
    got.append(recorded(i) == want)
    assert all(got), (i, got)
    return got
def o_module(i, ctx):
    (m,) = ok(d.cuModuleLoadData(b"race module\0"))
    (m2,) = ok(d.cuModuleLoadDataEx(b"race module ex\0", 0, None, None))
    (f,) = ok(d.cuModuleGetFunction(m, b"race%d" % i))
    out = [ok(d.cuFuncGetAttribute(d.CUfunction_attribute(0), f)),
           [ok(d.cuFuncGetParamInfo(f, k)) for k in range(3)], launch_checks(i, f)]
    ok(d.cuModuleUnload(m2)); ok(d.cuModuleUnload(m))
    return out
def o_library(i, ctx):
    (lib,) = ok(d.cuLibraryLoadData(b"race library\0", None, None, 0, None, None, 0))
    (k,) = ok(d.cuLibraryGetKernel(lib, b"race%d" % i))
    (f,) = ok(d.cuKernelGetFunction(k))
    out = [[ok(d.cuKernelGetParamInfo(k, j)) for j in range(3)], launch_checks(i, k),
           launch_checks(i, f)]
    ok(d.cuLibraryUnload(lib))
    return out
def o_graph(i, ctx):
    (m,) = ok(d.cuModuleLoadData(b"race graph module\0"))
    (f,) = ok(d.cuModuleGetFunction(m, b"race%d" % i))
    v1, v2, v3 = [(base + i, i, 0.5) for base in (0x2000, 0x3000, 0x4000)]
    p = d.CUDA_KERNEL_NODE_PARAMS()
    p.func = f
    p.gridDimX = p.gridDimY = p.gridDimZ = p.blockDimX = p.blockDimY = p.blockDimZ = 1
    p.kernelParams = v1
    (g,) = ok(d.cuGraphCreate(0))
    (node,) = ok(d.cuGraphAddKernelNode(g, None, 0, p))
    (clone,) = ok(d.cuGraphClone(g))
    (ex_clone,) = ok(d.cuGraphInstantiate(clone, 0))
    ok(d.cuGraphLaunch(ex_clone, None))
    ok(d.cuCtxSynchronize())
    got = [recorded(i)]
    (ex,) = ok(d.cuGraphInstantiate(g, 0))
    p.kernelParams = v2
    ok(d.cuGraphKernelNodeSetParams(node, p))
    ok(d.cuGraphExecKernelNodeSetParams(ex, node, p))
    ok(d.cuGraphLaunch(ex, None))
    ok(d.cuCtxSynchronize())
    got.append(recorded(i))
    gp = d.CUgraphNodeParams()
    gp.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
    gp.kernel.func = f
    for a in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
        setattr(gp.kernel, a, 1)
    gp.kernel.kernelParams = v3
    (g2,) = ok(d.cuGraphCreate(0))
    ok(d.cuGraphAddNode(g2, None, None, 0, gp))
    (ex2,) = ok(d.cuGraphInstantiate(g2, 0))
    ok(d.cuGraphLaunch(ex2, None))
    ok(d.cuCtxSynchronize())
    got.append(recorded(i))
    assert got == [struct.pack("<Qif", *v) for v in (v1, v2, v3)], (i, got)
    for x in (ex, ex_clone, ex2):
        ok(d.cuGraphExecDestroy(x))
    for x in (g, clone, g2):
        ok(d.cuGraphDestroy(x))
    ok(d.cuModuleUnload(m))
    return [x.hex() for x in got]
def o_uobj(i, ctx):
    def gone(x):
        with lock:
            destroyed.append(x)
    (u,) = ok(d.cuUserObjectCreate((i, "payload"), gone, 1, 1))
    ok(d.cuUserObjectRetain(u, 1))
    (g,) = ok(d.cuGraphCreate(0))
    ok(d.cuGraphRetainUserObject(g, u, 1, 0))
    ok(d.cuGraphReleaseUserObject(g, u, 1))
    ok(d.cuUserObjectRelease(u, 1)); ok(d.cuUserObjectRelease(u, 1))
    ok(d.cuGraphDestroy(g))
    return True
def o_callbacks(i, ctx):
    seen = []
    (s,) = ok(d.cuStreamCreate(0))
    ok(d.cuLaunchHostFunc(s, seen.append, (i, "host")))
    ok(d.cuStreamAddCallback(s, lambda h, st, x: seen.append((x, int(st))), (i, "cb"), 0))
    ok(d.cuStreamSynchronize(s)); ok(d.cuStreamDestroy(s))
    return repr(seen)
def o_errors(i, ctx):
    out = [ok(d.cuGetErrorName(d.CUresult(101)))[0].decode(),
           ok(d.cuGetErrorString(d.CUresult(101)))[0].decode()]
    try:
        cu.cuDeviceGet(99)
    except cubind.CUDAError as e:
        out.append(str(e))
    return out
def o_coredump(i, ctx): return ok(d.cuCoredumpGetAttributeGlobal(d.CUcoredumpSettings(1)))
def o_missing(i, ctx):
    out = []
    for name, args in MISSING:
        try:
            getattr(d, name)(*args)
        except cubind.FunctionNotFoundError as e:
            out.append(name in str(e))
    assert out == [True] * len(MISSING), out
    return out

OPS = [v for k, v in sorted(globals().items()) if k.startswith("o_")]
results = [None] * N
bad = []
start, done = threading.Barrier(N), threading.Barrier(N)

def body(i, wait=True):
    try:
        mine = {}
        if wait:
            start.wait()
        # The first binding call of the process: the loader's once, then
        # every entry point below resolved for the first time, in a
        # different order in each thread.
        ok(d.cuInit(0))
        (ctx,) = ok(d.cuDevicePrimaryCtxRetain(0))
        ok(d.cuCtxSetCurrent(ctx))
        for rep in range(REPS):
            order = OPS[i % len(OPS):] + OPS[:i % len(OPS)]
            if i % 2:
                order.reverse()
            for op in order:
                mine.setdefault(op.__name__, []).append(op(i, ctx))
        if wait:
            done.wait()        # nobody releases the primary context while others use it
        ok(d.cuDevicePrimaryCtxRelease(0))
        results[i] = mine
    except BaseException as e:
        bad.append(repr(e))
        if wait:
            done.abort()

if SERIAL:
    for i in range(N):
        body(i, wait=False)
else:
    ts = [threading.Thread(target=body, args=(i,)) for i in range(N)]
    [t.start() for t in ts]; [t.join() for t in ts]
deadline = time.monotonic() + 10
while len(destroyed) < N * REPS and time.monotonic() < deadline:
    rt._drain(); time.sleep(0.002)
calls = {n: fake.fakecuda_call_count(n.encode()) for n in sys.argv[4].split(",")}
print(json.dumps({"bad": bad, "results": results, "destroyed": sorted(destroyed),
                  "alive": rt._callback_counts()["alive"], "registry": rt._registry_counts(), "calls": calls}))
'''


def raced_functions():
    """The bindings ENTRY_POINT_RACE calls: (every one, those the fake lacks)."""
    import re
    called = set(re.findall(r"\b(?:d|cu)\.(cu\w+)\(", ENTRY_POINT_RACE))
    missing = set(re.findall(r'\("(cu\w+)", \(', ENTRY_POINT_RACE))
    return sorted(called | missing), sorted(missing)


def test_concurrent_first_use_of_every_entry_point():
    """Fresh processes: N threads make the process's first binding call
    (cuInit: the loader's once) and then race to resolve every entry point
    below for the first time (functions the fake driver implements, and
    some it lacks, which must raise FunctionNotFoundError every time), each
    thread in its own order. Every result must equal a serial run's, in a
    fresh process too; the fake's call counts must be the serial run's;
    every destructor and callback ran, every payload was released."""
    names, missing = raced_functions()
    assert len(names) >= 50, len(names)
    # the fake counts calls by the name given to cuGetProcAddress (cuda.h
    # makes cuGraphInstantiate cuGraphInstantiateWithFlags)
    implemented = [{"cuGraphInstantiate": "cuGraphInstantiateWithFlags"}.get(n, n)
                   for n in names if n not in missing]
    n_threads, reps = THREADS, ROUNDS

    def run(mode):
        proc = run_python_args(ENTRY_POINT_RACE, str(n_threads), str(reps), mode,
                               ",".join(implemented))
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["bad"] == [], out["bad"]
        return out

    serial = run("serial")
    want_destroyed = sorted([i, "payload"] for i in range(n_threads) for _ in range(reps))
    assert serial["destroyed"] == want_destroyed
    for i, mine in enumerate(serial["results"]):
        assert mine["o_callbacks"] == [repr([(i, "host"), ((i, "cb"), 0)])] * reps
    for _ in range(PROCESSES):
        race = run("race")
        for i in range(n_threads):
            assert race["results"][i] == serial["results"][i], i
        # The packer's own layout queries depend on when the other threads'
        # unloads land: at least as many as serially; every other count exact.
        queries = ("cuFuncGetParamInfo", "cuKernelGetParamInfo")
        for q in queries:
            assert race["calls"].pop(q) >= serial["calls"][q], q
        assert race["calls"] == {k: v for k, v in serial["calls"].items() if k not in queries}
        assert all(serial["calls"][n] > 0 for n in implemented)
        assert race["destroyed"] == want_destroyed
        assert race["alive"] == 0 and race["registry"] == serial["registry"]
        assert all(v == 0 for v in race["registry"].values()), race["registry"]


class DeviceArray:
    """A kernel argument (only __cuda_array_interface__) that can be weakly
    referenced: a graph's registry entry keeps it alive."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (1,),
                                         "typestr": "<f4", "version": 3}


def test_registry_churn_from_many_threads(drv, fake):
    """8 threads create and destroy registered handles at once, each in its
    own interleaving: streams and events, graphs whose kernel node keeps a
    Python argument alive (instantiated and launched), user objects with a
    Python destructor (released directly or moved to a graph), modules
    loaded and unloaded after a launch (every kernel layout forgotten). At
    the end of each round: the registry's counts, the fake driver's live
    objects and the live callback payloads are back where they were, every
    destructor ran exactly once, every kept argument is released, and every
    launch delivered its own bytes."""
    import ctypes
    import struct
    import time
    import weakref

    import cubind._runtime as rt
    offs, sizes = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
    names = [b"churn%d" % t for t in range(THREADS)]
    for name in names:
        assert fake.fakecuda_set_param_layout(None, name, 3, offs, sizes) == 0
    # made here: ctypes instances made by several threads at once race in
    # CPython 3.13's _ctypes (python/cpython#128567)
    bufs = [ctypes.create_string_buffer(64) for _ in range(THREADS)]
    iters = 6 if UNDER_TSAN else 30
    assert drv.cuInit(0)[0] == 0
    err, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert err == 0 and drv.cuCtxSetCurrent(ctx)[0] == 0
    # an unload forgets the layouts of earlier tests' kernels, as ours will
    err, m = drv.cuModuleLoadData(b"unloaded first\0")
    assert err == 0 and drv.cuModuleUnload(m)[0] == 0
    base = (rt._registry_counts(), fake.fakecuda_live_handles(), rt._callback_counts()["alive"])

    def ok(r):
        assert r[0] == 0, r
        return r[1] if len(r) == 2 else r[1:]

    def recorded(t):
        n = fake.fakecuda_last_launch_params(names[t], bufs[t], 64)
        return bufs[t].raw[:n]

    for rnd in range(ROUNDS):
        destroyed = [[] for _ in range(THREADS)]   # each list appended by its thread's destructors
        refs = [[] for _ in range(THREADS)]
        launches = [0] * THREADS

        def streams(t, it):
            s = ok(drv.cuStreamCreate(0))
            e = ok(drv.cuEventCreate(0))
            ok(drv.cuEventRecord(e, s))
            ok(drv.cuStreamWaitEvent(s, e, 0))
            ok(drv.cuStreamSynchronize(s))
            ok(drv.cuEventDestroy(e))
            ok(drv.cuStreamDestroy(s))

        def graph(t, it):
            m = ok(drv.cuModuleLoadData(b"churn graph\0"))
            f = ok(drv.cuModuleGetFunction(m, names[t]))
            arr = DeviceArray(0x10000 * (t + 1) + it)
            refs[t].append(weakref.ref(arr))
            p = drv.CUDA_KERNEL_NODE_PARAMS()
            p.func = f
            p.gridDimX = p.gridDimY = p.gridDimZ = p.blockDimX = p.blockDimY = p.blockDimZ = 1
            p.kernelParams = (arr, it, 1.5)
            g = ok(drv.cuGraphCreate(0))
            ok(drv.cuGraphAddKernelNode(g, None, 0, p))
            del p, arr
            ex = ok(drv.cuGraphInstantiate(g, 0))
            ok(drv.cuGraphDestroy(g))
            assert refs[t][-1]() is not None, "the exec keeps the graph's arguments"
            ok(drv.cuGraphLaunch(ex, None))
            ok(drv.cuCtxSynchronize())
            assert recorded(t) == struct.pack("<Qif", 0x10000 * (t + 1) + it, it, 1.5), (t, it)
            launches[t] += 1
            ok(drv.cuGraphExecDestroy(ex))
            assert refs[t][-1]() is None, "released with the last of graph and exec"
            ok(drv.cuModuleUnload(m))

        def user_objects(t, it):
            u = ok(drv.cuUserObjectCreate((t, it), destroyed[t].append, 1, 1))
            if (t + it) % 2:
                g = ok(drv.cuGraphCreate(0))
                ok(drv.cuGraphRetainUserObject(g, u, 1, 1))      # moved: the graph's now
                ok(drv.cuGraphDestroy(g))
            else:
                ok(drv.cuUserObjectRetain(u, 2))
                ok(drv.cuUserObjectRelease(u, 3))

        def modules(t, it):
            m = ok(drv.cuModuleLoadData(b"churn module\0"))
            f = ok(drv.cuModuleGetFunction(m, names[t]))
            vals = (t * 1000 + it, -it, 0.25)
            ok(drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, vals, None))
            assert recorded(t) == struct.pack("<Qif", *vals), (t, it)
            launches[t] += 1
            ok(drv.cuModuleUnload(m))      # forgets every kernel layout

        steps = [streams, graph, user_objects, modules]

        def work(t):
            assert drv.cuCtxSetCurrent(ctx)[0] == 0
            for it in range(iters):
                k = (t + it) % len(steps)
                order = steps[k:] + steps[:k]
                if t % 2:
                    order.reverse()
                for step in order:
                    step(t, it)

        run_threads(work)
        deadline = time.monotonic() + 10
        while (sum(map(len, destroyed)) < THREADS * iters
               or fake.fakecuda_pending_destructors()) and time.monotonic() < deadline:
            rt._drain()
            time.sleep(0.002)
        for t in range(THREADS):
            assert sorted(destroyed[t]) == [(t, it) for it in range(iters)], (rnd, t)
            assert [r() for r in refs[t]] == [None] * iters, (rnd, t)
        assert launches == [2 * iters] * THREADS
        assert rt._registry_counts() == base[0], rnd
        assert fake.fakecuda_live_handles() == base[1], rnd
        assert rt._callback_counts()["alive"] == base[2], rnd
    assert drv.cuDevicePrimaryCtxRelease(0)[0] == 0
