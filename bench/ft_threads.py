"""Free-threaded scaling: million calls per second over 1, 2, 4 and 8
threads of cuDeviceGetAttribute, cuPointerGetAttribute and empty-kernel
launches (one stream per thread), through cubind on a free-threaded CPython.
Usage (GPU machine): PYTHONPATH=build/python python3.13t bench/ft_threads.py PTX"""
import json
import sys
import threading
import time

import cubind.cu as cu
import cubind.driver as drv

assert not sys._is_gil_enabled(), "run this on a free-threaded build"
cu.cuInit(0)
dev = cu.cuDeviceGet(0)
ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
ptr = cu.cuMemAlloc(1 << 20)
mod = cu.cuModuleLoadData(open(sys.argv[1], "rb").read())
empty = cu.cuModuleGetFunction(mod, b"empty")
A_SM = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
P_TYPE = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE


def rate(make_work, nthreads, calls):
    """Million calls per second over all threads: every call of every thread
    over the span from the first thread's start to the last one's end (each
    thread stamps its own loop, as c_bench does, so a late wake-up of the
    main thread cannot shorten or stretch the span)."""
    works = [make_work() for _ in range(nthreads)]
    barrier = threading.Barrier(nthreads)
    spans = [None] * nthreads

    def run(i, work):
        cu.cuCtxSetCurrent(ctx)
        barrier.wait()
        t0 = time.perf_counter()
        work(calls)
        spans[i] = (t0, time.perf_counter())

    ts = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(works)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    start = min(s[0] for s in spans)
    end = max(s[1] for s in spans)
    return nthreads * calls / (end - start) / 1e6


# Each thread makes its own handle objects: on a free-threaded build, an
# object made by another thread is reference-counted with atomics, and eight
# threads passing the same one contend on its count (a CPython effect, not
# the binding's). The functions and enum members are shared by all threads
# as users share them: cubind makes them immortal (cbs_make_immortal).
def attr_work_of(face, attr_of):
    """cuDeviceGetAttribute through `face`, the attribute given as
    attr_of(A_SM): a plain int or the shared enum member."""
    def make():
        f = face.cuDeviceGetAttribute

        def work(n):
            attr, d = attr_of(A_SM), face.CUdevice(int(dev))
            for _ in range(n):
                f(attr, d)
        return work
    return make


def pointer_work():
    f = cu.cuPointerGetAttribute

    def work(n):
        attr, p = int(P_TYPE), cu.CUdeviceptr(int(ptr))
        for _ in range(n):
            f(attr, p)
    return work


def launch_work():
    stream = cu.cuStreamCreate(1)
    f = cu.cuLaunchKernel

    def work(n):
        k = cu.CUfunction(int(empty))
        for _ in range(n):
            f(k, 1, 1, 1, 1, 1, 1, 0, stream, None, None)
        cu.cuStreamSynchronize(stream)
    return work


rows = []
for case, make, calls in [("device_get_attribute", attr_work_of(cu, int), 1000000),
                          ("device_get_attribute (enum member)", attr_work_of(cu, lambda a: a), 1000000),
                          ("device_get_attribute (cubind.driver)", attr_work_of(drv, lambda a: a), 1000000),
                          ("pointer_get_attribute", pointer_work, 300000),
                          ("launch_empty_kernel", launch_work, 20000)]:
    r = {}
    for t in (1, 2, 4, 8):
        r[t] = max(rate(make, t, calls) for _ in range(3))
        impl = "cubind.driver (3.13t)" if "cubind.driver" in case else "cubind.cu (3.13t)"
        print(json.dumps({"impl": impl, "case": case, "threads": t,
                          "mcalls_per_s": round(r[t], 3)}), flush=True)
    rows.append((case, r))
print()
print("| case | 1 | 2 | 4 | 8 | 8 / 1 |")
print("|---|---|---|---|---|---|")
for case, r in rows:
    print("| %s | %.2f | %.2f | %.2f | %.2f | %.2fx |" % (case, r[1], r[2], r[4], r[8], r[8] / r[1]))
