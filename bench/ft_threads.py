# SPDX-License-Identifier: Apache-2.0
"""Free-threaded scaling: million calls per second over 1, 2, 4 and 8
threads, through cubind on a free-threaded CPython: cuDeviceGetAttribute,
cuCtxGetCurrent, cuPointerGetAttribute and empty-kernel launches (one stream
per thread), each case that shares an object across the threads (the device
from cuDeviceGet, the function from cuModuleGetFunction, the module looked
up at every call, the enum member through its class) beside its twin in
which each thread has its own; the driver and cu faces and cubind.launch;
len() and a do-nothing extension call as floors; c_bench's threads cases
(FT_C_JSON) in the same table.

Pinned (FT_PIN=pinned, or the first half of the default FT_PIN=both),
thread i runs on CPU cpus()[i]: one logical CPU of each physical core first,
so eight threads never share a core while eight cores are free (c_bench
--cpus takes the same list); unpinned, the scheduler places them. FT_CPUS
(a comma-separated list) gives the order instead: ft-threads.sh passes
bench/cpu_pairs.c's, measured, since a virtual machine may present two
hyperthreads of one core as two cores. Each row
also gives the threads' CPU time over their loops' wall time: below 1.0,
the machine ran something else on those CPUs and the rate measures the
machine, not the binding.

Usage (GPU machine): PYTHONPATH=build/python python3.13t bench/ft_threads.py PTX
                     (FT_ROUNDS=R: rounds of 1, 2, 4 and 8 threads, default 7;
                      FT_PIN, FT_CASES=SUBSTRING, FT_SCALE, FT_LOOP, FT_C_JSON:
                      bench/README.md)
                     python3 bench/ft_threads.py --cpus   (the list, for c_bench)"""
import json
import inspect
import itertools
import os
import sys
import threading
import time


def cpus():
    """The CPUs this process may use, one per physical core first, then
    their hyperthread siblings: FT_CPUS's order when given, else sysfs's
    topology's."""
    allowed = sorted(os.sched_getaffinity(0))
    given = os.environ.get("FT_CPUS")
    if given:
        order = [int(c) for c in given.split(",")]
        assert sorted(order) == allowed, "FT_CPUS: each CPU this process may use, once"
        return order
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


TICKS = os.sysconf("SC_CLK_TCK")  # /proc/stat's unit


def steal_seconds():
    """The time the hypervisor kept this machine's CPUs from running while
    they had work (/proc/stat's "steal", all CPUs), in seconds; 0 where the
    kernel does not count it."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return 0.0
    return int(fields[8]) / TICKS if fields[0] == "cpu" and len(fields) > 8 else 0.0


def rate(make_work, nthreads, calls, pin=True):
    """(million calls per second over all threads, CPU share, steal share):
    every call of every thread over the span from the first thread's start
    to the last one's end (each thread stamps its own loop, as c_bench does,
    so a late wake-up of the main thread cannot shorten or stretch the
    span), the threads' CPU time over their loops' wall time, and the time
    the hypervisor stole from the machine's CPUs while the threads ran over
    the threads' loops' wall time (counted in clock ticks, 10 ms: a share
    below about 0.1 of a short loop reads as 0). A CPU share of 1.0 with a
    steal share above 0 is a thread the guest thought was running while
    the host ran something else.

    A work that is a generator function (module_case's) runs in three
    parts, as c_bench's threads do: its setup up to the first `yield`
    before the barrier, the timed part up to the second, and its teardown
    after the thread's end stamp (a stream's create and destroy are not
    part of the launches)."""
    works = [make_work() for _ in range(nthreads)]
    barrier = threading.Barrier(nthreads)
    spans = [None] * nthreads

    def run(i, work):
        if pin:
            os.sched_setaffinity(0, {CPUS[i % len(CPUS)]})  # this thread only
        cu.cuCtxSetCurrent(ctx)
        parts = work(calls) if inspect.isgeneratorfunction(work) else None
        if parts is not None:
            next(parts)  # setup
        barrier.wait()
        c0 = time.thread_time()
        t0 = time.perf_counter()
        if parts is not None:
            next(parts)  # the timed loop
        else:
            work(calls)
        spans[i] = (t0, time.perf_counter(), time.thread_time() - c0)
        if parts is not None:
            next(parts, None)  # teardown: runs to the generator's end

    ts = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(works)]
    stolen = steal_seconds()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stolen = steal_seconds() - stolen
    start = min(s[0] for s in spans)
    end = max(s[1] for s in spans)
    wall = sum(s[1] - s[0] for s in spans)
    return nthreads * calls / (end - start) / 1e6, sum(s[2] for s in spans) / wall, stolen / wall


# Shared or own objects. A program shares the device from cuDeviceGet, the
# function from cuModuleGetFunction and the module's enum members across its
# threads; each shared case below runs beside its twin in which every thread
# makes its own objects (CUdevice(int(dev)), CUfunction(int(empty))), so the
# cost of sharing is the difference of two rows of one run. Interned
# handles (gen/rules.txt: intern), enum members, functions and the modules
# are immortal on a free-threaded build: sharing them should cost nothing.
def own_dev(face):
    return face.CUdevice(int(dev))


def shared_dev(face):
    return dev  # the one object cuDeviceGet gave: interned, immortal


def attr_work_of(face, attr_of, call=None, dev_of=own_dev):
    """cuDeviceGetAttribute through a local binding of face's function, the
    attribute given as attr_of(A_SM): a plain int or the shared enum member,
    the device as dev_of(face). With `call`, that function instead, given
    the same two arguments: the floor's do-nothing `_bench_floor.call`
    (immortal as cubind's functions are) tells whether a binding with no
    shared writes at all scales any better on the same machine in the same
    minutes."""
    def make():
        f = call if call is not None else face.cuDeviceGetAttribute

        def work(n):
            g, attr, d = f, attr_of(A_SM), dev_of(face)
            for _ in iterations(n):
                g(attr, d)
        return work
    return make


def module_case(setup, stmt, timed_end="pass", after="pass"):
    """A case whose timed statement looks its function up on a module at
    every call (`drv.f(...)`, `cu.f(...)`: a global of this script, as
    `driver` is of a program's module). Each thread runs `setup` (its own
    objects) untimed, then `stmt` in the timed loop and `timed_end` (a
    stream's synchronize), then `after` untimed (rate() runs the parts).
    The work function is compiled here so that the module is a global
    name, not a cell or a dict entry that would add a lookup of its own,
    and is a generator so that its objects stay fast locals."""
    src = ("def work(n):\n    %s\n    yield\n    for _ in iterations(n):\n        %s\n    %s\n"
           "    yield\n    %s\n" % (setup, stmt, timed_end, after))
    ns = {}
    exec(src, globals(), ns)
    return lambda: ns["work"]


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


def own_kernel(face):
    return face.CUfunction(int(empty))


def shared_kernel(face):
    return empty  # the one object cuModuleGetFunction gave: interned, immortal


# Per-thread stream for the launch cases, made before the timed span,
# synchronized inside it (as every launch case here and in c_bench) and
# destroyed after it, as c_bench's threads do.
STREAM = "s = cu.cuStreamCreate(1); k = %s(cu)"
STREAM_SYNC = "cu.cuStreamSynchronize(s)"
STREAM_DESTROY = "cu.cuStreamDestroy(s)"


ROUNDS = int(os.environ.get("FT_ROUNDS", "7"))
# FT_PIN: "both" (default: every case pinned, then every case unpinned, the
# threads left where the scheduler puts them), "pinned" or "unpinned".
PIN = os.environ.get("FT_PIN", "both")
assert PIN in ("both", "pinned", "unpinned"), "FT_PIN: both, pinned or unpinned"
PINNING = {"both": (True, False), "pinned": (True,), "unpinned": (False,)}[PIN]
THREADS = (1, 2, 4, 8)


def measure(make, calls, pin, beside=None):
    """({threads: [(rate, CPU share, steal share) of each round]}, the same for the
    floor measured beside it, or None). The thread counts are interleaved:
    every round measures 1, 2, 4 and 8 threads back to back (the order
    reversed every other round), so the 8 / 1 ratio of a round divides two
    rates taken seconds apart, not minutes apart as when all the one-thread
    loops run before all the eight-thread ones: the machine is shared and
    its speed drifts. With `beside` (a (make, calls) pair: the do-nothing
    floor), each of the case's runs is followed at once by the floor's on
    as many threads, pinned alike: where a round of the case scales less,
    the floor's same round says whether the machine did too, within a
    fraction of a second."""
    got = {t: [] for t in THREADS}
    floor = {t: [] for t in THREADS} if beside else None
    for k in range(ROUNDS):
        for t in (THREADS if k % 2 == 0 else THREADS[::-1]):
            got[t].append(rate(make, t, calls, pin))
            if beside:
                floor[t].append(rate(beside[0], t, beside[1], pin))
    return got, floor


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


print(json.dumps({"cpus": CPUS, "loadavg": os.getloadavg(), "rounds": ROUNDS}), flush=True)
# Calls per thread: 300000 (launches: 10000, as ft-threads.sh gives
# c_bench's --thread-launches), times FT_SCALE (default 1; a smoke run on
# the fake driver uses 0.001). Every loop still runs tens of milliseconds.
SCALE = float(os.environ.get("FT_SCALE", "1"))
N = max(1, int(300000 * SCALE))
CASES = [("baseline: len(tuple), no cubind", builtin_work, N)]
# The floor each cubind call case is measured beside, round by round
# (measure()): the do-nothing call with the shared device, the same shape
# as the cases' calls with none of their work. FT_BESIDE=0 leaves it out.
BESIDE = None
if _bench_floor is not None:
    CASES += [("floor: do-nothing extension call, 2 arguments",
               attr_work_of(cu, int, _bench_floor.call), N),
              ("floor: do-nothing extension call, shared dev",
               attr_work_of(cu, int, _bench_floor.call, shared_dev), N)]
    if os.environ.get("FT_BESIDE", "1") != "0":
        BESIDE = (attr_work_of(cu, int, _bench_floor.call, shared_dev), N)
for face, name, label in ((drv, "drv", "cubind.driver"), (cu, "cu", "cubind.cu")):
    ATTR = "%s.cuDeviceGetAttribute(%%s, d)" % name
    ENUM = "%s.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT" % name
    CASES += [
        ("%s f(A, dev) local f, own dev" % label, attr_work_of(face, lambda a: a), N),
        ("%s f(A, dev) local f, shared dev" % label, attr_work_of(face, lambda a: a, None, shared_dev), N),
        ("%s module.f(A, dev), own dev" % label,
         module_case("d = own_dev(%s)" % name, ATTR % "A_SM"), N),
        ("%s module.f(A, dev), shared dev" % label, module_case("d = dev", ATTR % "A_SM"), N),
        ("%s module.f(module.CUdevice_attribute.X, dev), own dev" % label,
         module_case("d = own_dev(%s)" % name, ATTR % ENUM), N),
        ("%s module.f(module.CUdevice_attribute.X, dev), shared dev" % label,
         module_case("d = dev", ATTR % ENUM), N),
        ("%s cuCtxGetCurrent() local f" % label,
         module_case("g = %s.cuCtxGetCurrent" % name, "g()"), N),
        ("%s module.cuCtxGetCurrent()" % label, module_case("pass", "%s.cuCtxGetCurrent()" % name), N),
    ]
CASES += [("cubind.cu f(int A, dev) local f, own dev", attr_work_of(cu, int), N),
          ("cubind.cu pointer_get_attribute", pointer_work, N // 3)]
LAUNCHES = max(1, int(10000 * SCALE))
for name, label in (("drv", "cubind.driver"), ("cu", "cubind.cu")):
    LAUNCH = "%s.cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, None, None)" % name
    CASES += [("%s module.cuLaunchKernel, own CUfunction" % label,
               module_case(STREAM % "own_kernel", LAUNCH, STREAM_SYNC, STREAM_DESTROY), LAUNCHES),
              ("%s module.cuLaunchKernel, shared CUfunction" % label,
               module_case(STREAM % "shared_kernel", LAUNCH, STREAM_SYNC, STREAM_DESTROY), LAUNCHES)]
CASES += [("cubind.launch, own CUfunction",
           module_case(STREAM % "own_kernel", "cu.launch(k, 1, 1, stream=s)", STREAM_SYNC, STREAM_DESTROY), LAUNCHES),
          ("cubind.launch, shared CUfunction",
           module_case(STREAM % "shared_kernel", "cu.launch(k, 1, 1, stream=s)", STREAM_SYNC, STREAM_DESTROY), LAUNCHES)]
only = os.environ.get("FT_CASES")  # a substring: run only the cases naming it
if only:
    CASES = [c for c in CASES if only in c[0]]

rows = []
for pin in PINNING:
    for case, make, calls in CASES:
        # the floor goes beside every call case: the launches have C's
        # own launches beside them instead, and the floors are floors
        calls_case = not case.startswith(("baseline", "floor", "cubind.launch")) \
            and "cuLaunchKernel" not in case
        got, floor = measure(make, calls, pin, BESIDE if calls_case else None)
        impl = ("python (3.13t)" if case.startswith(("baseline", "floor")) else
                "cubind.driver (3.13t)" if "cubind.driver" in case else "cubind.cu (3.13t)")
        name = "%s [%s]" % (case, "pinned" if pin else "unpinned")
        for t in THREADS:
            line = {"impl": impl, "case": name, "threads": t, "pinned": pin,
                    "calls_per_thread": calls,
                    "mcalls_per_s": [float("%.6g" % r[0]) for r in got[t]],
                    "cpu_share": [round(r[1], 3) for r in got[t]],
                    "steal_share": [round(r[2], 3) for r in got[t]]}
            if floor:
                line["floor_beside_mcalls_per_s"] = [float("%.6g" % r[0]) for r in floor[t]]
            print(json.dumps(line), flush=True)
        rows.append((name, got, floor))


def c_rows(path):
    """C's own threads cases from c_bench's JSON lines (ft-threads.sh runs
    it pinned and unpinned before this script, the same launches: one
    shared CUfunction, each thread on its own stream), as rows of the
    table: {threads: [(rate, CPU share)]}, one entry per round: c_bench's
    repetition r of each thread count is round r (its "rounds" and
    "cpu_shares"; a line from a c_bench without them gives its best alone,
    one round)."""
    out = {}
    for label in ("pinned", "unpinned"):
        try:
            lines = open("%s.%s" % (path, label)).read().splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("status") != "ok" or "threads" not in r:
                continue
            name = "C %s [%s]" % (r["case"], label)
            rates = r.get("rounds", [r["mcalls_per_s"]])
            rounds = list(zip(rates, r.get("cpu_shares", [r["cpu_share"]]),
                              r.get("steal_shares", [None] * len(rates))))
            out.setdefault(name, {t: [] for t in THREADS})[r["threads"]].extend(rounds)
    return [(k, v) for k, v in out.items() if all(v[t] for t in THREADS)]


if os.environ.get("FT_C_JSON"):
    rows += [(name, got, None) for name, got in c_rows(os.environ["FT_C_JSON"])]


def per_round(got):
    """Each round's 8 / 1 ratio."""
    return [r8[0] / r1[0] for r8, r1 in zip(got[8], got[1])]


def spread(xs):
    return "%.2fx (%.2f-%.2f)" % (median(xs), min(xs), max(xs))


print()
print("Loop: FT_LOOP=%s." % LOOP)
print("Rates: M calls/s, best of %d rounds. Per round: the 8 / 1 ratio of each "
      "round's own two rates; median (range), and in how many rounds it was at "
      "least 5. C rows: c_bench's repetitions as its rounds. Floor beside: the "
      "do-nothing call (shared dev) run right after each of the case's runs, on "
      "as many threads; case / floor: each round's 8 / 1 over the floor's in the "
      "same round (1.00: the case scaled as far as the floor did). Steal: the "
      "time the hypervisor took from the machine's CPUs over the threads' loops' "
      "wall time, most of any round at 8 threads." % ROUNDS)
print()
print("| case | 1 | 2 | 4 | 8 | 8 / 1 (best) | 8 / 1 per round | >= 5x "
      "| CPU share at 8 (lowest) | floor beside: 8 / 1 per round | case / floor per round "
      "| steal at 8 (most) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for case, got, floor in rows:
    best = {t: max(r[0] for r in got[t]) for t in THREADS}
    ratios = per_round(got)
    beside = relative = ""
    if floor:
        floor_ratios = per_round(floor)
        beside = spread(floor_ratios)
        relative = spread([c / f for c, f in zip(ratios, floor_ratios)])
    steals = [r[2] for r in got[8] if r[2] is not None]
    print("| %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %s | %d/%d | %.2f | %s | %s | %s |"
          % (case, best[1], best[2], best[4], best[8], best[8] / best[1], spread(ratios),
             sum(x >= 5 for x in ratios), len(ratios), min(r[1] for r in got[8]), beside, relative,
             "%.2f" % max(steals) if steals else ""))
