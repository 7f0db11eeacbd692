# SPDX-License-Identifier: Apache-2.0
"""Free-threaded scaling: million calls per second over 1, 2, 4 and 8
threads of cuDeviceGetAttribute, cuPointerGetAttribute and empty-kernel
launches (one stream per thread), through cubind on a free-threaded CPython.

Thread i runs on CPU cpus()[i]: one logical CPU of each physical core first,
so eight threads never share a core while eight cores are free (c_bench
--cpus takes the same list). Each row also gives the threads' CPU time over
their loops' wall time: below 1.0, the machine ran something else on those
CPUs and the rate measures the machine, not the binding.

Usage (GPU machine): PYTHONPATH=build/python python3.13t bench/ft_threads.py PTX
                     (FT_ROUNDS=R: rounds of 1, 2, 4 and 8 threads, default 7)
                     python3 bench/ft_threads.py --cpus   (the list, for c_bench)"""
import json
import itertools
import os
import sys
import threading
import time


def cpus():
    """The CPUs this process may use, one per physical core first, then
    their hyperthread siblings."""
    allowed = sorted(os.sched_getaffinity(0))
    first, rest, seen = [], [], set()
    for c in allowed:
        try:
            with open("/sys/devices/system/cpu/cpu%d/topology/core_id" % c) as f:
                core = f.read().strip()
            with open("/sys/devices/system/cpu/cpu%d/topology/physical_package_id" % c) as f:
                core = (f.read().strip(), core)
        except OSError:
            core = c
        (rest if core in seen else first).append(c)
        seen.add(core)
    return first + rest


if __name__ == "__main__" and sys.argv[1:] == ["--cpus"]:
    print(",".join(map(str, cpus())))
    sys.exit(0)

import cubind.cu as cu  # noqa: E402 (after the --cpus mode, which needs no GPU)
import cubind.driver as drv  # noqa: E402

try:  # built by the ft-threads suite beside this run, like bench's floor
    import _bench_floor  # noqa: E402
except ImportError:
    _bench_floor = None

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


CPUS = cpus()

# How each thread's timed loop iterates (FT_LOOP): "repeat" (default) runs
# over itertools.repeat(None, n), as timeit does: the same immortal None
# every iteration, nothing allocated; "range" (ft runs 1-8) makes a new int
# object per iteration past 256. Each loop also calls its function through
# a local variable, not through the enclosing function's cell. Both keep
# the loop's own work per iteration small and the same for every case.
LOOP = os.environ.get("FT_LOOP", "repeat")
assert LOOP in ("repeat", "range"), "FT_LOOP: repeat or range"


def iterations(n):
    return itertools.repeat(None, n) if LOOP == "repeat" else range(n)


def rate(make_work, nthreads, calls):
    """(million calls per second over all threads, CPU share): every call of
    every thread over the span from the first thread's start to the last
    one's end (each thread stamps its own loop, as c_bench does, so a late
    wake-up of the main thread cannot shorten or stretch the span), and the
    threads' CPU time over their loops' wall time."""
    works = [make_work() for _ in range(nthreads)]
    barrier = threading.Barrier(nthreads)
    spans = [None] * nthreads

    def run(i, work):
        os.sched_setaffinity(0, {CPUS[i % len(CPUS)]})  # this thread only
        cu.cuCtxSetCurrent(ctx)
        barrier.wait()
        c0 = time.thread_time()
        t0 = time.perf_counter()
        work(calls)
        spans[i] = (t0, time.perf_counter(), time.thread_time() - c0)

    ts = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(works)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    start = min(s[0] for s in spans)
    end = max(s[1] for s in spans)
    share = sum(s[2] for s in spans) / sum(s[1] - s[0] for s in spans)
    return nthreads * calls / (end - start) / 1e6, share


# Each thread makes its own handle objects: on a free-threaded build, an
# object made by another thread is reference-counted with atomics, and eight
# threads passing the same one contend on its count (a CPython effect, not
# the binding's). The functions and enum members are shared by all threads
# as users share them: cubind makes them immortal (cbs_make_immortal).
def attr_work_of(face, attr_of, call=None):
    """cuDeviceGetAttribute through `face`, the attribute given as
    attr_of(A_SM): a plain int or the shared enum member. With `call`, that
    function instead, given the same two arguments: the floor's do-nothing
    `_bench_floor.call` (immortal as cubind's functions are) tells whether a
    binding with no shared writes at all scales any better on the same
    machine in the same minutes."""
    def make():
        f = call if call is not None else face.cuDeviceGetAttribute

        def work(n):
            g, attr, d = f, attr_of(A_SM), face.CUdevice(int(dev))
            for _ in iterations(n):
                g(attr, d)
        return work
    return make


def builtin_work():
    """CPython's own floor: a loop calling a builtin (len of a tuple the
    thread made), no cubind, no driver."""
    def work(n):
        g, t = len, (1, 2)
        for _ in iterations(n):
            g(t)
    return work


def pointer_work():
    f = cu.cuPointerGetAttribute

    def work(n):
        g, attr, p = f, int(P_TYPE), cu.CUdeviceptr(int(ptr))
        for _ in iterations(n):
            g(attr, p)
    return work


def launch_work():
    stream = cu.cuStreamCreate(1)
    f = cu.cuLaunchKernel

    def work(n):
        g, k = f, cu.CUfunction(int(empty))
        for _ in iterations(n):
            g(k, 1, 1, 1, 1, 1, 1, 0, stream, None, None)
        cu.cuStreamSynchronize(stream)
    return work


ROUNDS = int(os.environ.get("FT_ROUNDS", "7"))
THREADS = (1, 2, 4, 8)


def measure(make, calls):
    """{threads: [(rate, CPU share) of each round]}. The thread counts are
    interleaved: every round measures 1, 2, 4 and 8 threads back to back
    (the order reversed every other round), so the 8 / 1 ratio of a round
    divides two rates taken seconds apart, not minutes apart as when all
    the one-thread loops run before all the eight-thread ones: the machine
    is shared and its speed drifts."""
    got = {t: [] for t in THREADS}
    for k in range(ROUNDS):
        for t in (THREADS if k % 2 == 0 else THREADS[::-1]):
            got[t].append(rate(make, t, calls))
    return got


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


print(json.dumps({"cpus": CPUS, "loadavg": os.getloadavg(), "rounds": ROUNDS}), flush=True)
rows = []
CASES = [("baseline: len(tuple), no cubind", builtin_work, 1000000),
         ("device_get_attribute", attr_work_of(cu, int), 1000000),
         ("device_get_attribute (enum member)", attr_work_of(cu, lambda a: a), 1000000),
         ("device_get_attribute (cubind.driver)", attr_work_of(drv, lambda a: a), 1000000),
         ("pointer_get_attribute", pointer_work, 300000),
         ("launch_empty_kernel", launch_work, 20000)]
if _bench_floor is not None:
    CASES.insert(1, ("floor: do-nothing extension call, 2 arguments",
                     attr_work_of(cu, int, _bench_floor.call), 1000000))
for case, make, calls in CASES:
    got = measure(make, calls)
    impl = ("python (3.13t)" if case.startswith(("baseline", "floor")) else
            "cubind.driver (3.13t)" if "cubind.driver" in case else "cubind.cu (3.13t)")
    for t in THREADS:
        print(json.dumps({"impl": impl, "case": case, "threads": t,
                          "mcalls_per_s": [round(r, 3) for r, _ in got[t]],
                          "cpu_share": [round(s, 3) for _, s in got[t]]}), flush=True)
    rows.append((case, got))
print()
print("Loop: FT_LOOP=%s." % LOOP)
print("Rates: M calls/s, best of %d rounds. Per round: the 8 / 1 ratio of each "
      "round's own two rates; median (range), and in how many rounds it was at "
      "least 5." % ROUNDS)
print()
print("| case | 1 | 2 | 4 | 8 | 8 / 1 (best) | 8 / 1 per round | >= 5x "
      "| CPU share at 8 (lowest) |")
print("|---|---|---|---|---|---|---|---|---|")
for case, got in rows:
    best = {t: max(r for r, _ in got[t]) for t in THREADS}
    per_round = [r8 / r1 for (r8, _), (r1, _) in zip(got[8], got[1])]
    print("| %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx (%.2f-%.2f) | %d/%d | %.2f |"
          % (case, best[1], best[2], best[4], best[8], best[8] / best[1], median(per_round),
             min(per_round), max(per_round), sum(x >= 5 for x in per_round), len(per_round),
             min(s for _, s in got[8])))
