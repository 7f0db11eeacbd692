#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Allocation failure along call paths (run by tests/fuzz/test_nomemory.py).

_testcapi.set_nomemory(N, 0) makes the Nth and every later allocation of
CPython's allocators fail (PyMem_*, PyObject_*, and PyMem_Raw*), which is
what the runtime and the generated code allocate with. For each scenario and
every N from 1 up, the call must give its normal outcome (the same type of
result or exception as without failures) or MemoryError — never another
exception, a crash or a sanitizer report — and the sweep is repeated to
check that the failed calls leak no memory blocks. Prints one line per
scenario: "NAME N-swept memoryerrors leaked-blocks".
"""
import ctypes
import gc
import os
import sys
import time

import _testcapi

import cubind
import cubind._runtime as rt
import cubind.cu as cu
import cubind.driver as drv

fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
fake.fakecuda_set_param_layout.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_size_t),
                                           ctypes.POINTER(ctypes.c_size_t)]
assert drv.cuInit(0)[0] == 0
ctx = cu.cuCtxCreate(None, 0, 0)
mod = cu.cuModuleLoadData(b"nomemory\0")
offs = (ctypes.c_size_t * 3)(0, 8, 16)
sizes = (ctypes.c_size_t * 3)(4, 8, 8)
assert fake.fakecuda_set_param_layout(None, b"nm_kernel", 3, offs, sizes) == 0
kern = cu.cuModuleGetFunction(mod, b"nm_kernel")
NM_KERNEL_TYPES = ("i4", "f8", "i8")   # nm_kernel's parameters, for argtypes=
lib = cu.cuLibraryLoadData(b"nomemory\0", None, None, 0, None, None, 0)
cu.cuLibraryGetKernel(lib, b"nm_kernel")
# Past the packer's inline bounds (64 parameters, 1024 bytes): its pointer
# array and argument bytes come from the heap; 8-byte holes between the
# parameters are zeroed.
MANY = 70
many_offs = (ctypes.c_size_t * MANY)(*range(0, 16 * MANY, 16))
many_sizes = (ctypes.c_size_t * MANY)(*([8] * MANY))
assert fake.fakecuda_set_param_layout(None, b"nm_many", MANY, many_offs, many_sizes) == 0
kern_many = cu.cuModuleGetFunction(mod, b"nm_many")
# For the refusals of issue 27: device memory, a graph, a 16-byte host
# buffer, and graph node parameters whose extSemSignal member counts 1000
# semaphores in a 1-element array.
dptr = cu.cuMemAlloc(1 << 16)
graph = cu.cuGraphCreate(0)
short_dst = bytearray(16)
overcounted = drv.CUgraphNodeParams()
overcounted.extSemSignal.extSemArray = [drv.CUexternalSemaphore(0x5e1)]
overcounted.extSemSignal.numExtSems = 1000
unraisable = [0]


def count_unraisable(u):
    unraisable[0] += 1


# Exceptions in callbacks (MemoryError included) reach sys.unraisablehook.
sys.unraisablehook = count_unraisable


def host_fn(data):
    return [data]


def launch_host_fn():
    drv.cuLaunchHostFunc(None, host_fn, 7)
    return drv.cuCtxSynchronize()


def stream_callback():
    drv.cuStreamAddCallback(None, lambda h, status, data: [h, status, data], 7, 0)
    return drv.cuCtxSynchronize()


_unreleased = [None]   # a user object whose release failed (no allocation to store)


def user_object_destructor():
    err, obj = drv.cuUserObjectCreate(7, host_fn, 1, 1)
    _unreleased[0] = obj   # None when the create failed; stored before anything can fail
    if obj is not None:
        drv.cuUserObjectRelease(obj, 1)   # may fail before reaching the driver
        _unreleased[0] = None
    return err


def _release_unreleased():
    """After the hooks are gone: what this scenario's own Python code could
    not release (a MemoryError in cuUserObjectRelease's arguments is the
    caller's failure, not the binding's) is released now."""
    if _unreleased[0] is not None:
        assert drv.cuUserObjectRelease(_unreleased[0], 1)[0] == 0
        _unreleased[0] = None


user_object_destructor.cleanup = _release_unreleased


def callbacks_settled(timeout=10.0):
    """Waits until no callback payload is alive (one-shot payloads are
    released on the runner); False if that never happens."""
    deadline = time.monotonic() + timeout
    while rt._callback_counts()["alive"]:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def ctx_roundtrip():
    c = cu.cuCtxCreate(None, 0, 0)
    try:
        return cu.cuCtxGetApiVersion(c)
    finally:
        drv.cuCtxDestroy(c)
        drv.cuCtxSetCurrent(ctx)


class StreamLike:
    """The default stream, known only by the CUDA stream protocol."""

    def __cuda_stream__(self):
        return (0, 0)


SCENARIOS = {
    "cuDeviceGetUuid(driver)": lambda: drv.cuDeviceGetUuid(0),
    "cuDeviceGetUuid(cu)": lambda: cu.cuDeviceGetUuid(0),
    "cuDeviceGetName": lambda: drv.cuDeviceGetName(64, 0),
    "cuDeviceGet": lambda: cu.cuDeviceGet(1),
    "cuGetErrorString": lambda: drv.cuGetErrorString(drv.CUresult.CUDA_ERROR_INVALID_VALUE),
    "CUDAError raised": lambda: cu.cuCtxGetApiVersion(12345),
    "cuModuleEnumerateFunctions": lambda: drv.cuModuleEnumerateFunctions(4, mod),
    # A count above CBS_COUNT_PROBE_ABOVE: capped first by what the count
    # function says (the count-bound rules of gen/rules.txt), both faces.
    "EnumerateFunctions (bound)": lambda: drv.cuModuleEnumerateFunctions(1 << 20, mod),
    "EnumerateKernels (bound)": lambda: cu.cuLibraryEnumerateKernels(1 << 20, lib),
    "wrong type": lambda: drv.cuDeviceGetUuid("x"),
    "struct constructor": lambda: drv.CUDA_MEMCPY2D(),
    "struct param": lambda: drv.cuLaunchKernelEx(drv.CUlaunchConfig(), kern, None, None),
    "cuCtxCreate/Destroy": ctx_roundtrip,
    "stream create/destroy": lambda: cu.cuStreamDestroy(cu.cuStreamCreate(0)),
    "stream protocol object": lambda: cu.cuStreamQuery(StreamLike()),
    "launch plain values": lambda: drv.cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, None,
                                                      (1, 2.5, 3), None),
    "launch plain (heap)": lambda: drv.cuLaunchKernel(
        kern_many, 1, 1, 1, 1, 1, 1, 0, None, tuple(range(MANY)), None),
    "launch typed (heap)": lambda: drv.cuLaunchKernel(
        kern_many, 1, 1, 1, 1, 1, 1, 0, None,
        (tuple(range(MANY)), (ctypes.c_longlong,) * MANY), None),
    "launch typed values": lambda: drv.cuLaunchKernel(
        kern, 1, 1, 1, 1, 1, 1, 0, None,
        ((1, 2.5, 3), (ctypes.c_int, ctypes.c_double, ctypes.c_void_p)), None),
    "launch extra": lambda: drv.cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, None, None,
                                               [None]),
    # nm_kernel is untyped (the fake's layout by size): the raising face
    # takes its values with argtypes= (docs/kernel-arguments.md)
    "cubind.launch": lambda: cu.launch(kern, (1, 1), 1, 1, 2.5, 3, stream=None,
                                       argtypes=NM_KERNEL_TYPES),
    "cubind.launch (heap)": lambda: cu.launch(kern_many, [1, 1], [1], *range(MANY)),
    # Refusals before the driver is called (issue 27): a host buffer shorter
    # than the bytes copied, a count nested in a union member over the
    # array it owns; a host buffer that fits; a count far above what
    # exists, asked of the driver first.
    "host buffer too short": lambda: drv.cuMemcpyDtoH(short_dst, dptr, 4 << 20),
    "host buffer copied": lambda: drv.cuMemcpyHtoD(dptr, b"abcd" * 4, 16),
    "nested count refused": lambda: drv.cuGraphAddNode(graph, None, None, 0, overcounted),
    "count probe": lambda: drv.cuGraphGetRootNodes(graph, 1 << 30),
}
# Callbacks while allocations fail (also on the runner thread, which runs
# the callables): the trampolines on the driver's threads never enter
# Python, so nothing there can fail (tests/fuzz/README.md, finding 3).
CALLBACKS = {
    "host function callback": launch_host_fn,
    "stream callback": stream_callback,
}
SCENARIOS.update(CALLBACKS)
# Last: when an allocation fails after cuUserObjectCreate succeeded, the
# binding releases the user object again (the `undo` rule of gen/rules.txt;
# tests/python/test_undo.py). One failure point of this sweep still loses a
# user object whose create succeeded (tests/fuzz/README.md, finding 7), so
# the payload count is only compared with the registry after it.
SCENARIOS["user object destructor"] = user_object_destructor


def module_kernel_launch():
    """A fresh layout each time: loading and unloading a module starts a new
    kernel epoch, so the launch queries the layout again (its scratch and
    the layout are the runtime's C allocations, the registry entry too)."""
    m = cu.cuModuleLoadData(b"nomemory2\0")
    try:
        f = cu.cuModuleGetFunction(m, b"nm_kernel")
        # typed by argtypes=: an untyped kernel's first launch would warn
        # (UntypedKernelWarning) on each fresh layout, and CPython 3.11's
        # warnings code itself crashes under some allocation failures
        return cu.launch(f, 1, 1, 1, 2.5, 3, argtypes=NM_KERNEL_TYPES)
    finally:
        drv.cuModuleUnload(m)


_graph = [None]   # a graph whose destroy failed before reaching the driver


def graph_create_destroy():
    """A registry entry per graph (cbs_reg_created), unmapped again by
    cuGraphDestroy."""
    err, g = drv.cuGraphCreate(0)
    _graph[0] = g
    if g is not None:
        drv.cuGraphDestroy(g)   # may fail before reaching the driver
        _graph[0] = None
    return err


def _destroy_graph():
    if _graph[0] is not None:
        assert drv.cuGraphDestroy(_graph[0])[0] == 0
        _graph[0] = None


graph_create_destroy.cleanup = _destroy_graph


# Paths whose own C allocations (runtime/include/rt_alloc.h) are many: the registry,
# kernel layouts. They run in the CPython sweeps too.
SCENARIOS["module, kernel, launch"] = module_kernel_launch
SCENARIOS["graph create/destroy"] = graph_create_destroy
FAULTS = getattr(rt, "_fail_allocations", None)


def outcome(fn):
    try:
        fn()
        return None
    except BaseException as e:
        if (type(e) is SystemError and e.__traceback__.tb_next is None
                and str(e) == "error return without exception set"):
            # CPython 3.11 (not cubind): entering the scenario's Python
            # function, a failed frame-stack chunk allocation returns NULL
            # with no exception set. The traceback ends in outcome(): no
            # frame of fn was made, nothing of cubind ran.
            return MemoryError
        return type(e)


def cpython_fail(start, stop):
    _testcapi.set_nomemory(start, stop)


def cpython_stop():
    _testcapi.remove_mem_hooks()


def runtime_fail(start, stop):
    FAULTS(start, stop)


def runtime_stop():
    FAULTS(-1)


def sweep(fn, normal, only=False, hooks=(cpython_fail, cpython_stop), limit=400, settle=8):
    """Fails the Nth allocation and every later one (only: the Nth alone)
    for N = 0, 1, ...; returns (largest N tried, MemoryErrors, bad
    outcomes). For the runtime's allocations the sweep ends at the first N
    that failed nothing (the path has fewer allocations)."""
    fail, stop = hooks
    bad, mem, ok_run = [], 0, 0
    for n in range(0, limit):
        fail(n, n + 1 if only else 0)
        try:
            got = outcome(fn)
        finally:
            # Read before the runtime's hook is reset (it counts since the
            # last arm), after CPython's is removed (the read allocates).
            if fail is runtime_fail:
                failed = rt._alloc_counts()["failed"]
            stop()
        getattr(fn, "cleanup", lambda: None)()
        if got is MemoryError:
            mem += 1
            ok_run = 0
        elif got is normal:
            ok_run += 1
            if fail is runtime_fail and not failed:
                return n, mem, bad
            if ok_run >= settle:  # N is past every allocation of the path
                return n, mem, bad
        else:
            bad.append((n, got))
    return limit, mem, bad


# (label, hooks, only): CPython's allocators (_testcapi.set_nomemory) and the
# runtime's own C allocations (cubind._runtime._fail_allocations, ASan build
# only), each failing from the Nth on and the Nth alone.
SWEEPS = [("cpython N..", (cpython_fail, cpython_stop), False),
          ("cpython N", (cpython_fail, cpython_stop), True)]
if FAULTS is not None:
    SWEEPS += [("runtime N..", (runtime_fail, runtime_stop), False),
               ("runtime N", (runtime_fail, runtime_stop), True)]


total_mem = [0]
LEAK_SLACK = int(os.environ.get("NOMEMORY_LEAK_SLACK", "0"))


def settle(name):
    drv.cuCtxSynchronize()
    ok = name not in CALLBACKS or callbacks_settled()
    gc.collect()
    return ok


def main():
    failed = False
    for name, fn in SCENARIOS.items():
        normal = outcome(fn)
        for label, hooks, only in SWEEPS:
            n, mem, bad = sweep(fn, normal, only, hooks)
            # Leaks: sweeps after the first (which may fill caches) must not
            # grow the number of allocated blocks, nor the runtime's C blocks.
            sweep(fn, normal, only, hooks)
            sweep(fn, normal, only, hooks)
            settle(name)
            live = FAULTS and rt._alloc_counts()["live"]
            before = sys.getallocatedblocks()
            for _ in range(3):
                sweep(fn, normal, only, hooks)
            if not settle(name):
                failed = True
                print("  BAD: callback payloads still alive: %s" % rt._callback_counts())
            leaked = sys.getallocatedblocks() - before
            c_leaked = FAULTS and rt._alloc_counts()["live"] - live
            if fn is user_object_destructor:
                # Destructors run later (their entries are freed then), and
                # a user object lost as finding 7 says keeps its entry.
                c_leaked = 0
            print("%-28s %-11s N<=%-4d MemoryError %-4d leaked-blocks %d C-blocks %d normal %s"
                  % (name, label, n, mem, leaked, c_leaked,
                     normal.__name__ if normal else "return"))
            if bad:
                failed = True
                print("  BAD: outcomes other than %s or MemoryError: %s" % (normal, bad[:10]))
            total_mem[0] += mem
            # Fewer live C blocks than before is not a leak: work queued
            # before the baseline (a dropped keep-alive, a stale kernel
            # layout) may be freed during the sweeps, when the main
            # thread's pending call drains the deferred queue.
            if leaked > LEAK_SLACK or c_leaked > 0:
                failed = True
                print("  BAD: %d blocks, %d C blocks leaked over 3 sweeps" % (leaked, c_leaked))
    counts = rt._callback_counts()
    print("callbacks: %s, unraisable %d" % (counts, unraisable[0]))
    if counts["skipped"] or counts["leaked"]:
        failed = True
        print("BAD: a callback was skipped, or deferred work leaked")
    # The registry (malloc, not hit by set_nomemory) agrees: nothing in
    # flight, and every payload still alive is a registered user object
    # (finding 7). Destructors the driver has run are unregistered at once
    # (on its thread) but release their payload on the runner a moment
    # later: wait for that.
    deadline = time.monotonic() + 10.0
    while True:
        counts, reg = rt._callback_counts(), rt._registry_counts()
        agree = reg["callback"] == 0 and reg["user_object"] == counts["alive"]
        if agree or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    print("registry: %s, payloads alive: %d" % (reg, counts["alive"]))
    if not agree:
        failed = True
        print("BAD: callback payloads and registry entries disagree")
    if total_mem[0] == 0:
        failed = True
        print("BAD: no allocation failed anywhere (the hook did nothing?)")
    sys.stdout.flush()
    os._exit(1 if failed else 0)


main()
