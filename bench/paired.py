#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""paired.py — every implementation timed in the same process, loop after loop.

bench.py measures each implementation in its own child process; on a shared
machine the same call costs up to 1.7x more in one process than in another
(scripts/gpu-run process-probe), in C as in Python, so a ratio of two
processes' times carries that spread. Here one child process sets up C (the
cases of bench/c_bench.c built as a library, called through ctypes: no
Python in its loops), the floor, the thin binding (bench/thin_ext.c: C's
own entry points and handles called from Python with ints in and out),
cubind.driver, cubind.cu, cuda.bindings and cuda.core, and for each case
runs one loop of each in turn, R times,
rotating the order; each implementation keeps its best loop. Every ratio of
the issue-8 targets is computed inside one process, then summarised over
K fresh processes (median, range, and in how many processes the target
held). With --base DIR, every other process runs a base build's cubind (DIR
first on its PYTHONPATH) instead of this checkout's, and the report adds an
A/B of the two builds: their per-process ratios to the references, taken in
the same run, so the machine's drift over time touches both alike.

  paired.py run --c-lib LIB --image FILE [--processes K] [--reps R] [--n N]
                [--n-launch N] [--cases A,B] [--launch-timing sync|submit]
                [--base DIR] [--out FILE]    -> JSON lines, then the report
  paired.py render FILE [FILE...]            -> the markdown report (several
                                                runs of one command: pooled)

The kernels, cases, floors and each implementation's calls are bench.py's
(DriverImpl, CoreImpl, floor_spec) but the thin binding's (ThinImpl, here:
it needs C's library); launches compare cubind's plain values with
cuda.bindings' (values, ctypes types) and cuda.core's launch(), and the
thin binding launches with C's prepared void*[].
"""

import argparse
import ctypes
import gc
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the cases and implementations)

IMPLS = ["c", "floor", "thin", "cubind.driver", "cubind.cu", "cuda.bindings", "cuda.core"]
BINDINGS = ["cubind.driver", "cubind.cu"]
# What a binding can reach, beside cubind in the verdict table.
REFERENCES = ["floor", "thin"]
# The kernelParams form each implementation is compared with, per bench.py's variants.
LAUNCH_VARIANT = {"cubind.driver": "plain", "cubind.cu": "plain", "cuda.bindings": "tuple",
                  "cuda.core": "args", "thin": "prepacked"}
DEFAULT_CASES = bench.CALL_CASES + ["launch_empty_kernel", "launch_small_kernel",
                                    "launch_16_args", "launch_512_args"]
# load_runs: the offset between two pooled runs' process numbers (more
# processes than any run has).
PROCESS_STRIDE = 100000
# The A/B of a base build: each cubind face against each reference binding.
AB_REFERENCES = ["cuda.bindings", "cuda.core"]


# ---------------------------------------------------------------------------
# Child: one process, every implementation.

def c_timer(lib, case, loop_name="cb_lib_loop", source="c_bench"):
    """A timer of C's loop of `case`: lib's loop function (`loop_name`,
    returning ns per call or < 0 when the case cannot run; `source` names
    the C file whose stderr says why)."""
    loop = getattr(lib, loop_name)

    def timed(n):
        ns = loop(case.encode(), n)
        if ns < 0:
            raise bench.NA("the C loop failed (%s's stderr says why)" % source)
        return ns
    return timed


def open_c(cfg):
    lib = ctypes.CDLL(os.path.abspath(cfg["c_lib"]))
    lib.cb_lib_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.cb_lib_loop.argtypes = [ctypes.c_char_p, ctypes.c_long]
    lib.cb_lib_loop.restype = ctypes.c_double
    libcuda = os.environ.get("CUBIND_LIBCUDA", "").encode() or None
    image = cfg["images"][0].encode() if cfg["images"] else None
    if lib.cb_lib_open(libcuda, image, int(cfg["launch_timing"] == "submit")) != 0:
        raise bench.NA("cb_lib_open failed (c_bench's stderr says why)")
    return lib


class ThinImpl:
    """bench/thin_ext.c's `_bench_thin`, the thinnest binding: the entry
    points and handles of C's loops (c_bench's library: cb_lib_proc,
    cb_lib_handle), called from Python with ints in and out, detaching where
    cubind detaches. Unlike the floor, it makes the real driver calls, so it
    also pays what the interpreter's work between calls costs the driver."""

    name = "thin"

    def __init__(self, lib, cfg):
        self.lib, self.cfg = lib, cfg
        lib.cb_lib_proc.argtypes = [ctypes.c_char_p]
        lib.cb_lib_proc.restype = ctypes.c_void_p
        lib.cb_lib_handle.argtypes = [ctypes.c_char_p]
        lib.cb_lib_handle.restype = ctypes.c_ulonglong
        self._keep = []

    def setup(self):
        import _bench_thin as t
        keep_gil = bench.keep_gil_functions()
        for name in t.NAMES:
            address = self.lib.cb_lib_proc(name.encode())
            if not address:
                raise bench.NA("c_bench's library has no %s" % name)
            t.bind(name, address, name not in keep_gil)
        self.t = t
        h = self.handle
        self.ctx, self.dev, self.stream = h("ctx"), h("dev"), h("stream")
        self.event, self.dptr = h("event"), h("dptr")

    def handle(self, name):
        return self.lib.cb_lib_handle(name.encode())

    def case(self, name):
        t, ok = self.t, (lambda result: None)   # a failure raises
        if name == "ctx_get_current":
            return bench.call_spec(t.cuCtxGetCurrent, [], ok)
        if name == "ctx_set_current":
            return bench.call_spec(t.cuCtxSetCurrent, [self.ctx], ok)
        if name == "device_get":
            return bench.call_spec(t.cuDeviceGet, [0], ok)
        if name == "device_get_attribute":
            return bench.call_spec(t.cuDeviceGetAttribute,
                                   [bench.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.dev], ok)
        if name == "event_record":
            return bench.call_spec(t.cuEventRecord, [self.event, self.stream], ok,
                                   post=self.sync())
        if name == "event_query":
            return bench.call_spec(t.cuEventQuery, [self.event], ok)
        if name == "stream_query":
            return bench.call_spec(t.cuStreamQuery, [self.stream], ok)
        if name == "pointer_get_attribute":
            return bench.call_spec(t.cuPointerGetAttribute,
                                   [bench.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, self.dptr], ok)
        if name == "mem_alloc_free":
            return bench.Spec("free(alloc(size))",
                              {"alloc": t.cuMemAlloc, "free": t.cuMemFree, "size": 1024},
                              lambda: t.cuMemFree(t.cuMemAlloc(1024)), n=self.cfg["n_launch"])
        if name in bench.LAUNCH_CASES:
            return self.launch_spec(name)
        raise bench.NA("unknown case")

    def sync(self):
        t, stream = self.t, self.stream
        return lambda: t.cuStreamSynchronize(stream)

    def launch_spec(self, name):
        """C's kernelParams: the address of a void*[] built once."""
        kname = {"launch_empty_kernel": "empty", "launch_small_kernel": "small",
                 "launch_16_args": "k16", "launch_512_args": "k512",
                 "launch_2048b": "big_struct"}[name]
        f = self.handle(kname)
        if not f:
            raise bench.NA("no kernel %s in C's module" % kname)
        values, kinds = {
            "launch_empty_kernel": ([], []),
            "launch_small_kernel": (bench.small_values(self.dptr), ["p", "i", "f"]),
            "launch_16_args": (bench.k16_values(self.dptr), bench.K16_KINDS),
            "launch_512_args": (bench.k512_values(), ["i"] * 512),
            "launch_2048b": ([bench.s2048_struct()], ["s"]),
        }[name]
        params = 0
        if values:
            packed = bench.Prepacked(values, kinds)
            self._keep.append(packed)
            params = packed.address
        return bench.call_spec(self.t.cuLaunchKernel,
                               [f, 1, 1, 1, 1, 1, 1, 0, self.stream, params, 0],
                               lambda result: None, post=self.sync(),
                               n=self.cfg["n_launch"], variant="prepacked",
                               note="address of a void*[] built once",
                               post_timed=self.cfg["launch_timing"] == "sync")


def open_impl(name, cfg):
    if name == "cuda.core":
        obj = bench.CoreImpl(cfg)
    elif name == "cuda.bindings":
        from cuda.bindings import driver as mod
        obj = bench.DriverImpl(name, mod, raising=False, cubind=False, cfg=cfg)
    else:
        import cubind
        mod = cubind.driver if name == "cubind.driver" else cubind.cu
        obj = bench.DriverImpl(name, mod, raising=(name == "cubind.cu"), cubind=True, cfg=cfg)
    obj.setup()
    return obj


def case_timer(name, obj, case, keep_gil, cubind_form="plain"):
    """The timer of one implementation's case (its compared variant;
    cubind_form: cubind's launches with plain values or, for the drop-in
    comparison, with cuda.bindings' (values, types) form)."""
    if name == "c":
        return c_timer(obj, case)
    if name == "floor":
        return bench.spec_timer(bench.floor_spec(case, keep_gil))
    specs = obj.case(case)
    if not isinstance(specs, list):
        specs = [specs]
    want = LAUNCH_VARIANT[name] if case in bench.LAUNCH_CASES else None
    # cubind.launch is the raising face's: with that form the drop-in face
    # keeps cuLaunchKernel's plain values, for a comparison in one process.
    if name in BINDINGS and want == "plain" and not (cubind_form == "launch" and
                                                     name == "cubind.driver"):
        want = cubind_form
    for spec in specs:
        if case in bench.LAUNCH_CASES and case != "launch_empty_kernel" and spec.variant != want:
            continue
        if isinstance(spec, bench.NA_Spec):
            raise bench.NA(spec.reason)
        spec.check()
        return bench.spec_timer(spec)
    raise bench.NA("no %s form" % want)


def case_n(case, cfg):
    if case in bench.LAUNCH_CASES:
        n = cfg["n_launch"]
        return max(1, n // 2) if case in ("launch_512_args", "launch_2048b") else n
    return cfg["n_launch"] if case == "mem_alloc_free" else cfg["n"]


def cubind_origin():
    """The meta record naming the cubind package this process imports (its
    __file__; None and the error when it imports none): the log's proof of
    which build a process ran."""
    try:
        import cubind
    except Exception as e:
        return {"case": "meta", "impl": "cubind", "cubind_file": None,
                "error": "%s: %s" % (type(e).__name__, e)}
    return {"case": "meta", "impl": "cubind", "cubind_file": cubind.__file__}


def run_child(cfg):
    objs, why = {}, {}
    try:
        objs["c"] = open_c(cfg)
    except (OSError, bench.NA) as e:
        why["c"] = str(e)
    try:
        keep_gil = bench.keep_gil_functions()
        import _bench_floor  # noqa: F401
        objs["floor"] = None
    except (OSError, ImportError) as e:
        keep_gil, why["floor"] = None, str(e)
    try:
        if "c" not in objs:
            raise bench.NA("no C library: %s" % why["c"])
        objs["thin"] = ThinImpl(objs["c"], cfg)
        objs["thin"].setup()
    except (OSError, ImportError, AttributeError, bench.NA) as e:
        objs.pop("thin", None)
        why["thin"] = "%s: %s" % (type(e).__name__, e)
    for name in IMPLS[3:]:
        try:
            objs[name] = open_impl(name, cfg)
        except Exception as e:
            why[name] = "setup failed: %s: %s" % (type(e).__name__, e)
    bench.emit(cubind_origin())
    for name in ("cubind.driver", "cuda.bindings"):
        if name in objs:
            bench.emit({"case": "meta", "impl": name,
                        "driver_version": objs[name].call("cuDriverGetVersion")})
            break
    gc.collect()
    gc.disable()
    for case in cfg["cases"]:
        n = case_n(case, cfg)
        timers = {}
        for name in IMPLS:
            if name not in objs:
                bench.emit({"case": case, "impl": name, "status": "n/a", "reason": why[name]})
                continue
            try:
                timers[name] = case_timer(name, objs[name], case, keep_gil,
                                          cfg.get("cubind_form", "plain"))
                timers[name](max(1, n // 10))   # warm up
            except Exception as e:
                timers.pop(name, None)
                bench.emit({"case": case, "impl": name, "status": "n/a",
                            "reason": "%s: %s" % (type(e).__name__, e)})
        time_rotated(case, timers, cfg["reps"], n)
    return 0


def time_rotated(case, timers, reps, n, extra=None):
    """One case's loops: `reps` rounds, each running every timer once with
    the order rotated by one per round, so no implementation always runs
    first; emits each one's best loop (its record updated with
    extra[name], when given) or why a loop failed."""
    order = list(timers)
    times = {name: [] for name in order}
    for rep in range(reps):
        k = rep % max(1, len(order))
        for name in order[k:] + order[:k]:
            try:
                times[name].append(timers[name](n))
            except Exception as e:
                times[name].append(None)
                bench.emit({"case": case, "impl": name, "status": "n/a",
                            "reason": "%s: %s" % (type(e).__name__, e)})
    for name in order:
        got = [t for t in times[name] if t is not None]
        if got:
            bench.emit({"case": case, "impl": name, "status": "ok", "n": n,
                        "ns": round(min(got), 2), "reps": [round(t, 2) for t in got],
                        **((extra or {}).get(name) or {})})


# ---------------------------------------------------------------------------
# Parent: K processes, then the report.

def process_side(k, base):
    """Which build process k runs: without a base, always this checkout's;
    with one, even k this checkout's and odd k the base's, so K processes
    give ceil(K/2) and floor(K/2) and the two sides interleave in time."""
    return "base" if base and k % 2 else "this"


def child_env(side, base):
    """The child's environment: the base side finds the base build's cubind
    first (DIR before the inherited PYTHONPATH, which still gives C's
    library, the floor and the thin binding); this side inherits as is."""
    if side != "base":
        return None
    inherited = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=base + (os.pathsep + inherited if inherited else ""))


def is_under(path, directory):
    """Whether path lies inside directory, links resolved (a sibling that
    only shares a prefix, base2 beside base, is not inside)."""
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def origin_error(k, side, records, base):
    """Why process k's records do not prove it ran its side's cubind (the
    base side from under `base`, this side from elsewhere), or None."""
    origin = next((r for r in records if "cubind_file" in r), None)
    if origin is None or origin["cubind_file"] is None:
        return ("process %d (%s) imported no cubind (%s): an A/B needs both builds" %
                (k, side, origin.get("error") if origin else "it reported nothing"))
    path = origin["cubind_file"]
    if side == "base" and not is_under(path, base):
        return ("process %d (base) imported cubind from %s, outside --base %s: it would "
                "measure this build as the base" % (k, path, base))
    if side == "this" and is_under(path, base):
        return ("process %d (this) imported cubind from %s, inside --base %s: this "
                "build's processes must not find the base build" % (k, path, base))
    return None


def write_records(path, records):
    """Writes every record so far to path, replacing it whole (a reader
    never sees a half-written file): run() calls it after each process,
    so a run cut short by a time limit keeps the processes it finished
    (`paired.py render` takes the file as it is)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    os.replace(tmp, path)


def run(args):
    cfg = {"cases": args.cases.split(",") if args.cases else DEFAULT_CASES,
           "n": args.n, "n_launch": args.n_launch, "reps": args.reps,
           "images": [p for p in args.image if os.path.exists(p)],
           "c_lib": args.c_lib, "launch_timing": args.launch_timing,
           "cubind_form": args.cubind_form}
    base = os.path.abspath(args.base) if args.base else None
    records = [{"paired": "meta", "processes": args.processes, "command": " ".join(sys.argv),
                **{k: v for k, v in cfg.items() if k != "c_lib"},
                **({"base": base} if base else {})}]
    if args.machine:
        with open(args.machine) as f:
            records += [json.loads(line) for line in f if line.strip()]
    if run_processes(os.path.abspath(__file__), cfg, args.processes, records, args.out,
                     args.child_timeout, base) != 0:
        return 1
    sys.stdout.write(render(records))
    return 0


def run_processes(script, cfg, processes, records, out, child_timeout, base=None):
    """Runs `script child CFG` in `processes` fresh processes, one after
    the other, appending each one's JSON lines (tagged with its process
    number and side) to `records` and rewriting `out` after each; 0, or 1
    when a process of an A/B ran the other side's build (the run stops
    there, its records kept). bench/runtime_bench.py runs its own child
    through this too."""
    for k in range(processes):
        side = process_side(k, base)
        t0 = time.time()
        r = subprocess.run([sys.executable, script, "child", json.dumps(cfg)],
                           capture_output=True, text=True, timeout=child_timeout,
                           env=child_env(side, base))
        mine = []
        for line in r.stdout.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            mine.append(dict(rec, process=k, side=side))
        records += mine
        write_records(out, records)
        sys.stderr.write("%s: process %d (%s): exit %d, %.1f s\n%s" %
                         (os.path.basename(script), k, side, r.returncode, time.time() - t0,
                          r.stderr[-2000:] if r.returncode else ""))
        # A process that ran the other side's build would make the A/B
        # compare a build with itself: stop there, keeping the log.
        why = origin_error(k, side, mine, base) if base else None
        if why:
            sys.stderr.write("paired.py: %s; stopped (records so far in %s)\n" % (why, out))
            return 1
    return 0


def per_process(records):
    """{process: {(case, impl): ns}} of the ok records."""
    out = {}
    for r in records:
        if r.get("status") == "ok":
            out.setdefault(r["process"], {})[(r["case"], r["impl"])] = r["ns"]
    return out


def target_ratio(kind, case, impl, other, t):
    """One process's ratio for a target, or None when a time is missing. The
    floor stands for a binding costing C plus the floor's calls."""
    a, b, c = t.get((case, impl)), t.get((case, other)), t.get((case, "c"))
    if a is None or b is None:
        return None
    if impl == "floor":
        if c is None:
            return None
        a += c
    if kind == "plain":
        return a / b
    if c is None or b - c <= 0:
        return None
    return (a - c) / (b - c)


TARGETS = ([("ctx_get_current", "plain", "cuda.bindings", 0.35),
            ("device_get", "plain", "cuda.bindings", 0.35)] +
           [(c, "above_c", "cuda.bindings", 0.30) for c in bench.CALL_CASES
            if c not in ("ctx_get_current", "device_get")] +
           [(c, "plain", other, limit)
            for c in ("launch_small_kernel", "launch_16_args", "launch_512_args")
            for other, limit in (("cuda.bindings", 0.60), ("cuda.core", 0.85))])


def summarise(values):
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    return statistics.median(vals), vals[0], vals[-1], len(vals)


def record_cases(records):
    """The cases the records name, in their first record's order."""
    cases = []
    for r in records:
        if "case" in r and r["case"] != "meta" and r["case"] not in cases:
            cases.append(r["case"])
    return cases


def ab_cell(s, fmt, unit):
    """A summary's median and range ("—" when no process has the value)."""
    return "—" if s is None else (fmt + unit + " (" + fmt + "–" + fmt + ")") % s[:3]


def ab_change(a, b):
    """The change of the median from base `b` to this `a`, in %."""
    return "—" if a is None or b is None else "%+.1f%%" % ((a[0] / b[0] - 1) * 100)


# The bootstrap of the change: AB_RESAMPLES resamples of each side's
# per-process values (with replacement, each side its own size), the change
# of the two resampled medians each time, and the 2.5th and 97.5th
# percentiles of those changes. The seed is fixed, so one set of records
# always renders the same interval.
AB_RESAMPLES = 4000
AB_SEED = 0


def ab_interval(this_vals, base_vals, resamples=AB_RESAMPLES, seed=AB_SEED):
    """The bootstrap 95 % interval of the change of the median (this / base
    − 1, in %), as (low, high); None when a side has no values."""
    a = [v for v in this_vals if v is not None]
    b = [v for v in base_vals if v is not None]
    if not a or not b:
        return None
    rng = random.Random(seed)
    changes = sorted(
        (statistics.median(rng.choices(a, k=len(a))) /
         statistics.median(rng.choices(b, k=len(b))) - 1) * 100
        for _ in range(resamples))
    return changes[int(0.025 * (resamples - 1))], changes[int(0.975 * (resamples - 1))]


def ab_interval_cell(interval):
    return "—" if interval is None else "%+.1f … %+.1f%%" % interval


def ab_section(this, base, cases):
    """The A/B of this build against the base: per case, each cubind face's
    per-process ratio to each reference binding (and cubind.driver's own
    ns), its median and range on each side, and the change of the median.
    Each ratio is still taken inside one process; only the summaries of
    the two sides' processes are compared."""
    this_procs, base_procs = per_process(this), per_process(base)
    lines = ["", "### A/B against the base build", "",
             "%d processes of this build and %d of the base build, alternating (this build "
             "first); only cubind differs between them (the harness, C, the floor and the thin "
             "binding are this checkout's). Each process's `cubind.__file__` is in the JSON "
             "lines; the run stops if a process imported the other side's build. Per case, each "
             "cubind face's ratio to each reference, taken per process: the median and range "
             "over each side's processes, the change of the median (this / base − 1), "
             "and its bootstrap 95 %% interval (%d resamples of each side's processes, "
             "seed %d)." % (len(this_procs), len(base_procs), AB_RESAMPLES, AB_SEED), "",
             "| case | measure | this build | base build | change | 95 % interval |",
             "|---|---|---|---|---|---|"]

    def row(case, measure, value, fmt, unit):
        this_vals = [value(t) for t in this_procs.values()]
        base_vals = [value(t) for t in base_procs.values()]
        a, b = summarise(this_vals), summarise(base_vals)
        if a is not None or b is not None:
            lines.append("| %s | %s | %s | %s | %s | %s |" %
                         (case, measure, ab_cell(a, fmt, unit), ab_cell(b, fmt, unit),
                          ab_change(a, b), ab_interval_cell(ab_interval(this_vals, base_vals))))

    def ratio(case, impl, ref):
        return lambda t: target_ratio("plain", case, impl, ref, t)

    for case in cases:
        for impl in BINDINGS:
            for ref in AB_REFERENCES:
                row(case, "%s / %s" % (impl, ref), ratio(case, impl, ref), "%.3f", "×")
        row(case, "cubind.driver ns", lambda t: t.get((case, "cubind.driver")), "%.1f", "")
    na = sorted({(r["case"], r["impl"], r.get("reason", "")) for r in base
                 if r.get("status") == "n/a"})
    if na:
        lines += ["", "Not measured in the base build:", ""] + ["- %s %s: %s" % x for x in na]
    return lines


def render(records):
    """The report. Records of base processes (side "base") feed only the A/B
    section at the end; everything before it is this build's processes, and
    a log without base processes renders as it did before there were sides."""
    base = [r for r in records if r.get("side") == "base"]
    records = [r for r in records if r.get("side") != "base"]
    meta = next((r for r in records if r.get("paired") == "meta"), {})
    machine = next((r for r in records if r.get("impl") == "machine"), None)
    driver = next((r["driver_version"] for r in records if "driver_version" in r), None)
    procs = per_process(records)
    lines = ["## Paired: every implementation in one process", ""]
    if machine:
        import report
        lines += ["#" + line if line.startswith("## ") else line
                  for line in report.machine_section(machine, driver)] + [""]
    lines += [
        "%d processes; in each, every case runs one loop of each implementation in turn, "
        "%s times (order rotated), each keeping its best loop; C is bench/c_bench.c's loop "
        "in the same process. Ratios are computed per process; the table gives their median "
        "and range over the processes, and in how many of them the target held." %
        (len(procs), meta.get("reps", "?")),
        "", "Command: `%s`" % meta.get("command", "?"), ""]
    if base:
        lines += ["These are this build's processes only; the base build's (--base) alternate "
                  "with them, and the A/B section at the end compares the two.", ""]
    if meta.get("cubind_form", "plain") == "tuple":
        lines += ["cubind's launches here take cuda.bindings' own (values, ctypes types) form "
                  "(--cubind-form tuple), as code written for cuda.bindings passes them: the "
                  "launch rows compare the drop-in face without changing the caller's code; "
                  "the issue's launch targets are stated for plain values.", ""]
    elif meta.get("cubind_form", "plain") == "launch":
        lines += ["The cubind.cu rows launch through `cubind.launch(f, 1, 1, *values, "
                  "stream=s)` (--cubind-form launch), the counterpart of cuda.core's "
                  "`launch()`; the cubind.driver rows through cuLaunchKernel with the same "
                  "plain values, in the same processes. The floor is cuLaunchKernel's "
                  "11-argument call.", ""]
    lines += [
        "The floor is C's time plus do-nothing extension calls of the case's shape, timed "
        "apart (bench/floor_ext.c). Thin is a hand-written binding making the real driver "
        "calls with ints in and out and C's prepared void*[] for launches "
        "(bench/thin_ext.c): it also pays what the interpreter's work between calls costs "
        "the driver, which the floor leaves out, and converts nothing but ints.", "",
        "| target | limit | cubind.driver | cubind.cu | floor | thin | held (driver, cu) |",
        "|---|---|---|---|---|---|---|"]
    measured = {case for t in procs.values() for case, _ in t}
    for case, kind, other, limit in TARGETS:
        if case not in measured:
            continue
        cells, held = [], []
        for impl in BINDINGS + REFERENCES:
            vals = [target_ratio(kind, case, impl, other, t) for t in procs.values()]
            s = summarise(vals)
            if s is None:
                cells.append("—")
                continue
            med, lo, hi, n = s
            cells.append("%.2f× (%.2f–%.2f)" % (med, lo, hi))
            if impl in BINDINGS:
                held.append("%d/%d" % (sum(v <= limit for v in vals if v is not None), n))
        what = ("%s ≤ %.2f× %s" % (case, limit, other) if kind == "plain" else
                "%s: above C ≤ %.2f× %s'" % (case, limit, other))
        lines.append("| %s | %.2f× | %s | %s |" %
                     (what, limit, " | ".join(cells), ", ".join(held) or "—"))
    lines += ["", "Median ns per call over the processes (each process's best loop):", "",
              "| case | " + " | ".join(IMPLS) + " |", "|---|" + "---|" * len(IMPLS)]
    for case in record_cases(records):
        row = []
        for impl in IMPLS:
            s = summarise([t.get((case, impl)) for t in procs.values()])
            row.append("%.1f" % s[0] if s else "n/a")
        lines.append("| %s | %s |" % (case, " | ".join(row)))
    na = sorted({(r["case"], r["impl"], r.get("reason", "")) for r in records
                 if r.get("status") == "n/a"})
    if na:
        lines += ["", "Not measured:", ""] + ["- %s %s: %s" % x for x in na]
    if base:
        lines += ab_section(records, base, record_cases(records + base))
    return "\n".join(lines) + "\n"


def load_runs(paths):
    """The records of one or more runs' JSON lines, pooled: each run's
    process numbers are offset by PROCESS_STRIDE times its position, so no
    two runs' processes merge; the report's command and settings are the
    first run's (pool runs of one command only). A path ending in .gz is
    read gzip-compressed, as results/ keeps its raw runs."""
    records = []
    for i, path in enumerate(paths):
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    if "process" in rec:
                        rec["process"] += i * PROCESS_STRIDE
                    records.append(rec)
    return records


def add_run_arguments(ap):
    """The options every paired harness's `run` takes (paired.py's and
    runtime_bench.py's): kernels, processes, loops and cases."""
    ap.add_argument("--image", action="append", default=[], help="kernels (PTX or cubin)")
    ap.add_argument("--processes", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--n-launch", type=int, default=20000)
    ap.add_argument("--cases", default="")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        return run_child(json.loads(argv[1]))
    if argv[:1] == ["render"]:
        if len(argv) < 2:
            sys.stderr.write("usage: paired.py render FILE [FILE...]\n")
            return 2
        sys.stdout.write(render(load_runs(argv[1:])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["run"])
    ap.add_argument("--c-lib", required=True, help="c_bench.c built with -DCB_LIBRARY")
    add_run_arguments(ap)
    ap.add_argument("--launch-timing", choices=["sync", "submit"], default="sync")
    ap.add_argument("--cubind-form", choices=["plain", "tuple", "launch"], default="plain",
                    help="cubind's kernelParams form in launch cases (tuple: cuda.bindings'; "
                    "launch: cubind.launch for the raising face, plain values for the other)")
    ap.add_argument("--base", metavar="DIR",
                    help="a base build's python directory (another checkout's build/python): "
                    "odd processes run its cubind, for an A/B of the two builds")
    ap.add_argument("--child-timeout", type=int, default=300)
    ap.add_argument("--out", default="build/bench/paired.jsonl")
    ap.add_argument("--machine", help="the line `report.py machine` wrote, for the report")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
