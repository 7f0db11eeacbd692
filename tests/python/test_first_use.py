# SPDX-License-Identifier: Apache-2.0
"""Concurrent first use of what cubind prepares lazily: 8 threads race to
use each of them first, in fresh interpreters (PROCESSES of them, several
rounds each where the thing is per object), and the outcome is checked
exactly. What is prepared lazily, and where it is raced:

- the driver's loading (rt_loader.c, pthread_once) and the entry-point
  table (proc_slots, one slot per function): test_threads.py's
  test_concurrent_first_use_of_every_entry_point, 99 bindings;
- the handle registry (rt_handles.c, pthread_once on first registration);
- the callback runner of an interpreter (rt_callbacks.c runner_for_current:
  its state in the interpreter list, the thread started by one caller);
- a kernel's layout: its registry entry (keyed by the CUfunction or
  CUkernel value, the first publisher wins) and the copy each handle object
  keeps (cbs_layout_copy_remember, compare-and-swap);
- what the (values, types) form reads of ctypes (cbs_ctypes_cache, per
  module instance), through launches and through struct fields;
- a struct's keep dict (bind_struct.c keep_dict, compare-and-swap, per
  root instance);
- the module's import (its exec: tables, small ints, the fork handlers'
  pthread_once), when several threads import it at once.

Not lazy, so not raced here: the small-int table and the enum members
(filled when the module executes), the drop-in face's reusable result
tuples (GIL builds only; free-threaded builds allocate every result).
"""
import gc
import weakref

import pytest

from conftest import PROCESSES, UNDER_TSAN, run_python

pytestmark = pytest.mark.tsan

THREADS = 8

PRELUDE = r'''
import ctypes, os, struct, sys, threading, time
import cubind, cubind.driver as d
import cubind._runtime as rt
from fake_driver import open_fake
fake = open_fake()
N = 8
bad = []
def guarded(i):
    try:
        body(i)
    except BaseException as e:   # reported, never lost
        import traceback
        bad.append(traceback.format_exc())
        barrier.abort()
def ok(r):
    if r[0] != 0:
        raise AssertionError(r)
    return r[1] if len(r) == 2 else r[1:]
def settle(pred):
    deadline = time.monotonic() + 10
    while not pred() and time.monotonic() < deadline:
        rt._drain()
        time.sleep(0.002)
    return pred()
ok(d.cuInit(0))
ctx = ok(d.cuDevicePrimaryCtxRetain(0))
ok(d.cuCtxSetCurrent(ctx))
barrier = threading.Barrier(N)
'''


RUN = r"""
ts = [threading.Thread(target=guarded, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
"""


def race(setup, after=""):
    """In PROCESSES fresh interpreters: PRELUDE, `setup` (defines body(i)),
    N threads running body at once, then `after` (checks, appending to
    `bad`); each process must exit cleanly with `bad` empty."""
    for _ in range(PROCESSES):
        proc = run_python(PRELUDE + setup + RUN + after + "\nprint('bad', repr(bad))\n")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "bad []", proc.stdout[-3000:]


def test_first_registrations_race_the_registry_creation():
    """The process's first registry entries (rt_handles.c creates the
    registry under pthread_once), made by 8 threads at once: graphs and
    user objects with Python destructors. Every entry is counted; all are
    gone once destroyed, every destructor ran once."""
    race(r"""
K = 20
made = [[] for _ in range(N)]
gone = [[] for _ in range(N)]
live0 = fake.fakecuda_live_handles()
def body(i):
    ok(d.cuCtxSetCurrent(ctx))
    barrier.wait()
    for k in range(K):
        made[i].append((ok(d.cuGraphCreate(0)), ok(d.cuUserObjectCreate((i, k), gone[i].append, 1, 1))))
    barrier.wait()
    if i == 0:
        counts = rt._registry_counts()
        if counts != dict(counts, graph=N * K, user_object=N * K) or sum(counts.values()) != 2 * N * K:
            bad.append(("made", counts))
    barrier.wait()
    for g, u in made[i]:
        ok(d.cuGraphRetainUserObject(g, u, 1, 1))   # moved: destroyed with the graph
        ok(d.cuGraphDestroy(g))
""", r"""
if not settle(lambda: sum(map(len, gone)) == N * K):
    bad.append(("destructors", sum(map(len, gone))))
for i in range(N):
    if sorted(gone[i]) != [(i, k) for k in range(K)]:
        bad.append(("gone", i))
if any(rt._registry_counts().values()) or rt._callback_counts()["alive"]:
    bad.append(("left", rt._registry_counts(), rt._callback_counts()))
if fake.fakecuda_live_handles() != live0:
    bad.append(("live", fake.fakecuda_live_handles(), live0))
""")


def test_first_callbacks_race_the_runner_start():
    """The interpreter's first Python callables given to CUDA, by 8 threads
    at once (host functions, stream callbacks, user-object destructors: each
    may be the one that starts the runner, runner_for_current): one runner
    starts, every call runs exactly once, on it, in each stream's order."""
    race(r"""
K = 25
streams = [ok(d.cuStreamCreate(0)) for _ in range(N)]
seen = [[] for _ in range(N)]
gone = []
runners = set()
launchers = set()
def host(x):
    runners.add(threading.get_ident())
    seen[x[0]].append(x)
def body(i):
    ok(d.cuCtxSetCurrent(ctx))
    launchers.add(threading.get_ident())
    barrier.wait()
    for k in range(K):
        first = (i + k) % 3
        if first == 0:
            ok(d.cuLaunchHostFunc(streams[i], host, (i, k)))
        elif first == 1:
            ok(d.cuStreamAddCallback(streams[i], lambda h, st, x: host(x), (i, k), 0))
        else:
            u = ok(d.cuUserObjectCreate((i, k), gone.append, 1, 1))
            ok(d.cuUserObjectRelease(u, 1))
    ok(d.cuStreamSynchronize(streams[i]))
""", r"""
for s in streams:
    ok(d.cuStreamDestroy(s))
for i in range(N):
    if seen[i] != [(i, k) for k in range(K) if (i + k) % 3 != 2]:
        bad.append(("order", i, seen[i]))
want_gone = sorted((i, k) for i in range(N) for k in range(K) if (i + k) % 3 == 2)
if not settle(lambda: len(gone) == len(want_gone)) or sorted(gone) != want_gone:
    bad.append(("destructors", len(gone), len(want_gone)))
if len(runners) != 1 or runners & launchers:
    bad.append(("runners", runners, launchers))
if not settle(lambda: rt._callback_counts()["alive"] == 0) or any(rt._registry_counts().values()):
    bad.append(("left", rt._callback_counts(), rt._registry_counts()))
""")


def test_first_launches_race_the_kernel_layouts():
    """8 threads make the first launches of one kernel at once: through one
    shared CUfunction object, through their own objects of the same
    CUfunction value, through one shared CUkernel object and through their
    own ones (each may publish the layout's registry entry, each object its
    copy). Every launch delivers its values; one entry per value."""
    race(r"""
K = 50
offs, sizes = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
assert fake.fakecuda_set_param_layout(None, b"first", 3, offs, sizes) == 0
mod = ok(d.cuModuleLoadData(b"first launch\0"))
lib = ok(d.cuLibraryLoadData(b"first library\0", None, None, 0, None, None, 0))
shared_f = ok(d.cuModuleGetFunction(mod, b"first"))
shared_k = ok(d.cuLibraryGetKernel(lib, b"first"))
own = [(ok(d.cuModuleGetFunction(mod, b"first")), ok(d.cuLibraryGetKernel(lib, b"first")))
       for _ in range(N)]
lock = threading.Lock()   # a launch and the read of its record, together
buf = ctypes.create_string_buffer(64)
def body(i):
    ok(d.cuCtxSetCurrent(ctx))
    barrier.wait()
    for k in range(K):
        f = [shared_f, own[i][0], shared_k, own[i][1]][(i + k) % 4]
        vals = (0x100000 * (i + 1) + k, -k, k / 2)
        with lock:
            ok(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, vals, None))
            n = fake.fakecuda_last_launch_params(b"first", buf, 64)
            got = buf.raw[:n]
        if got != struct.pack("<Qif", *vals):
            bad.append((i, k, got))
""", r"""
if fake.fakecuda_launch_count(b"first") != N * K:
    bad.append(("launches", fake.fakecuda_launch_count(b"first")))
counts = rt._registry_counts()
if (counts["kernel_layout"], counts["kernel_layout_kern"]) != (1, 1):
    bad.append(("layouts", counts))
ok(d.cuModuleUnload(mod))
ok(d.cuLibraryUnload(lib))
if any(rt._registry_counts().values()):
    bad.append(("left", rt._registry_counts()))
""")


def test_first_typed_values_race_the_ctypes_cache_through_launches_and_fields():
    """The module's first (values, types) arguments (what it reads of
    ctypes, cbs_ctypes_cache, published once), from 8 threads at once: half
    launch, half set a kernel node's kernelParams field. Every launch
    delivers its values, every field holds them."""
    race(r"""
K = 40
offs, sizes = (ctypes.c_size_t * 4)(0, 8, 16, 24), (ctypes.c_size_t * 4)(4, 8, 8, 2)
types = (ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_ushort)
mod = ok(d.cuModuleLoadData(b"typed first\0"))
funcs = []
for i in range(N):
    assert fake.fakecuda_set_param_layout(None, b"typed%d" % i, 4, offs, sizes) == 0
    funcs.append(ok(d.cuModuleGetFunction(mod, b"typed%d" % i)))
# made here: ctypes instances made by several threads at once race in
# CPython 3.13's _ctypes (python/cpython#128567)
bufs = [ctypes.create_string_buffer(64) for _ in range(N)]
def want(vals):
    return struct.pack("<i", vals[0]) + bytes(4) + struct.pack("<dQH", *vals[1:])
# struct fields set by the threads, read back here after them (no ctypes
# instance is made in a thread)
fields = [[d.CUDA_KERNEL_NODE_PARAMS() for _ in range(K)] for _ in range(N)]
def values(i, k):
    return (-i - k, k / 4, 0x1000 * (i + 1) + k, 65535 - k)
def body(i):
    ok(d.cuCtxSetCurrent(ctx))
    for p in fields[i]:
        p.func = funcs[i]
    barrier.wait()
    for k in range(K):
        vals = values(i, k)
        if i % 2:
            fields[i][k].kernelParams = (vals, types)
        else:
            ok(d.cuLaunchKernel(funcs[i], 1, 1, 1, 1, 1, 1, 0, None, (vals, types), None))
            n = fake.fakecuda_last_launch_params(b"typed%d" % i, bufs[i], 64)
            if bufs[i].raw[:n] != want(vals):
                bad.append((i, k, bufs[i].raw[:n]))
""", r"""
for i in range(1, N, 2):
    for k, p in enumerate(fields[i]):
        ptrs = (ctypes.c_void_p * 4).from_address(p.kernelParams)
        got = [ctypes.string_at(ptrs[j], sizes[j]) for j in range(4)]
        vals = values(i, k)
        if got != [struct.pack(f, v) for f, v in zip("<i <d <Q <H".split(), vals)]:
            bad.append((i, k, got))
""")


def test_threads_importing_the_module_at_once():
    """8 threads import cubind.driver and cubind.cu at once (the module's
    exec runs once: its tables, small ints, the fork handlers' once) and
    call at once: one module object, every call answered."""
    for _ in range(PROCESSES):
        proc = run_python(r"""
import sys, threading
N = 8
barrier = threading.Barrier(N)
mods, bad = [None] * N, []
def body(i):
    barrier.wait()
    import cubind.driver as d, cubind.cu as cu
    mods[i] = (d, cu)
    if d.cuInit(0)[0] != 0 or cu.cuDeviceGetAttribute(d.CUdevice_attribute(16 + i), i % 2) != (16 + i) * 1000 + i % 2:
        bad.append(i)
ts = [threading.Thread(target=body, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
print("bad", bad, len({id(m) for pair in mods for m in pair}))
""")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "bad [] 2", proc.stdout


class Ptr:
    """A pointer field's value (getPtr()), kept alive by the struct."""

    def __init__(self, addr):
        self.addr = addr

    def getPtr(self):
        return self.addr


# Pointer fields of CUgraphNodeParams's union members at disjoint offsets:
# 8 threads write them at once without writing the same bytes.
KEPT_FIELDS = ["extSemSignal.extSemArray", "extSemSignal.paramsArray",
               "alloc.poolProps.win32SecurityAttributes", "alloc.accessDescs",
               "memcpy.copyParams.srcHost", "memcpy.copyParams.reserved0",
               "memcpy.copyParams.dstHost", "memcpy.copyParams.reserved1"]


def test_first_kept_objects_race_the_keep_dict(drv):
    """8 threads set, at once, the first pointer fields of one struct that
    keep their objects (the root's keep dict is created by whoever comes
    first, compare-and-swap): every object is kept, none lost; each field
    reads back its address; replacing one drops only that object; the
    struct's end releases the rest, and nothing leaks. A new struct each
    round."""
    import threading
    rounds = 100 if UNDER_TSAN else 1000
    roots, objs, refs = [None], [None], [None]
    go, done = threading.Barrier(THREADS + 1), threading.Barrier(THREADS + 1)
    errors = []
    paths = [name.split(".") for name in KEPT_FIELDS]
    all_refs = []

    def work(t):
        try:
            for _ in range(rounds):
                go.wait()
                view = roots[0]
                for p in paths[t][:-1]:
                    view = getattr(view, p)
                setattr(view, paths[t][-1], objs[0][t])
                del view
                done.wait()
        except BaseException as e:   # reported below
            errors.append(e)
            go.abort()
            done.abort()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    try:
        for rnd in range(rounds):
            roots[0] = drv.CUgraphNodeParams()
            objs[0] = [Ptr(0x1000 * (t + 1) + rnd) for t in range(THREADS)]
            refs = [weakref.ref(o) for o in objs[0]]
            all_refs.extend(refs)
            go.wait()
            done.wait()
            objs[0] = None           # the struct's references only, now
            assert [r() is not None for r in refs] == [True] * THREADS, rnd
            for t, path in enumerate(paths):
                v = roots[0]
                for p in path:
                    v = getattr(v, p)
                assert v == 0x1000 * (t + 1) + rnd, (rnd, path)
            if rnd % 20 == 0:
                # (a free-threaded build may free an object another thread
                # shared a little later: the collector merges those counts)
                roots[0].memcpy.copyParams.srcHost = None
                gc.collect()
                assert [r() is None for r in refs] == [t == 4 for t in range(THREADS)], rnd
                roots[0] = None
                gc.collect()
                assert [r() for r in refs] == [None] * THREADS, rnd
    except BaseException:
        go.abort()
        done.abort()
        raise
    finally:
        for th in threads:
            th.join()
    assert not errors, errors
    roots[0] = None
    gc.collect()
    # none leaked either (a keep dict lost to a racing one would keep its
    # objects forever)
    assert sum(r() is not None for r in all_refs) == 0
