"""Free-threaded scaling: million calls per second over 1, 2, 4 and 8
threads of cuDeviceGetAttribute, cuPointerGetAttribute and empty-kernel
launches (one stream per thread), through cubind on a free-threaded CPython.
Usage (GPU machine): PYTHONPATH=build/python python3.13t bench/ft_threads.py PTX"""
import json
import sys
import threading
import time

import cubind.cu as cu

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
    works = [make_work() for _ in range(nthreads)]
    barrier = threading.Barrier(nthreads + 1)

    def run(work):
        cu.cuCtxSetCurrent(ctx)
        barrier.wait()
        work(calls)

    ts = [threading.Thread(target=run, args=(w,)) for w in works]
    for t in ts:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return nthreads * calls / (time.perf_counter() - t0) / 1e6


# Each thread makes its own argument objects: on a free-threaded build, an
# object made by another thread is reference-counted with atomics, and eight
# threads passing the same one contend on its count (a CPython effect, not
# the binding's).
def attr_work():
    f = cu.cuDeviceGetAttribute

    def work(n):
        attr, d = int(A_SM), cu.CUdevice(int(dev))
        for _ in range(n):
            f(attr, d)
    return work


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
        for _ in range(n):
            f(empty, 1, 1, 1, 1, 1, 1, 0, stream, None, None)
        cu.cuStreamSynchronize(stream)
    return work


rows = []
for case, make, calls in [("device_get_attribute", attr_work, 200000),
                          ("pointer_get_attribute", pointer_work, 100000),
                          ("launch_empty_kernel", launch_work, 20000)]:
    r = {}
    for t in (1, 2, 4, 8):
        r[t] = max(rate(make, t, calls) for _ in range(3))
        print(json.dumps({"impl": "cubind.cu (3.13t)", "case": case, "threads": t,
                          "mcalls_per_s": round(r[t], 3)}), flush=True)
    rows.append((case, r))
print()
print("| case | 1 | 2 | 4 | 8 | 8 / 1 |")
print("|---|---|---|---|---|---|")
for case, r in rows:
    print("| %s | %.2f | %.2f | %.2f | %.2f | %.2fx |" % (case, r[1], r[2], r[4], r[8], r[8] / r[1]))
