#!/usr/bin/env python3
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
# Past the packer's inline bounds (64 parameters, 1024 bytes): its pointer
# array and argument bytes come from the heap; 8-byte holes between the
# parameters are zeroed.
MANY = 70
many_offs = (ctypes.c_size_t * MANY)(*range(0, 16 * MANY, 16))
many_sizes = (ctypes.c_size_t * MANY)(*([8] * MANY))
assert fake.fakecuda_set_param_layout(None, b"nm_many", MANY, many_offs, many_sizes) == 0
kern_many = cu.cuModuleGetFunction(mod, b"nm_many")
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
    "cubind.launch": lambda: cu.launch(kern, (1, 1), 1, 1, 2.5, 3, stream=None),
    "cubind.launch (heap)": lambda: cu.launch(kern_many, [1, 1], [1], *range(MANY)),
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


def outcome(fn):
    try:
        fn()
        return None
    except BaseException as e:
        return type(e)


def sweep(fn, normal, limit=400, settle=8):
    """Returns (largest N tried, MemoryErrors, bad outcomes)."""
    bad, mem, ok_run = [], 0, 0
    for n in range(0, limit):
        _testcapi.set_nomemory(n, 0)
        try:
            got = outcome(fn)
        finally:
            _testcapi.remove_mem_hooks()
        getattr(fn, "cleanup", lambda: None)()
        if got is MemoryError:
            mem += 1
            ok_run = 0
        elif got is normal:
            ok_run += 1
            if ok_run >= settle:  # N is past every allocation of the path
                return n, mem, bad
        else:
            bad.append((n, got))
    return limit, mem, bad


total_mem = [0]


def main():
    failed = False
    for name, fn in SCENARIOS.items():
        normal = outcome(fn)
        n, mem, bad = sweep(fn, normal)
        drv.cuCtxSynchronize()
        # Leaks: sweeps after the first (which may fill caches) must not grow
        # the number of allocated blocks.
        sweep(fn, normal)
        drv.cuCtxSynchronize()
        if name in CALLBACKS:
            callbacks_settled()
        gc.collect()
        before = sys.getallocatedblocks()
        for _ in range(3):
            sweep(fn, normal)
            drv.cuCtxSynchronize()
        if name in CALLBACKS and not callbacks_settled():
            failed = True
            print("  BAD: callback payloads still alive: %s" % rt._callback_counts())
        gc.collect()
        leaked = sys.getallocatedblocks() - before
        print("%-28s N<=%-4d MemoryError %-4d leaked-blocks %d normal %s"
              % (name, n, mem, leaked, normal.__name__ if normal else "return"))
        if bad:
            failed = True
            print("  BAD: outcomes other than %s or MemoryError: %s" % (normal, bad[:10]))
        total_mem[0] += mem
        if leaked > 30:
            failed = True
            print("  BAD: %d blocks leaked over 3 sweeps" % leaked)
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
