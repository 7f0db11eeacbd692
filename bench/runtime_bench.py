#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""runtime_bench.py — the runtime API's per-call cost, every implementation
in the same process, and the import time of each runtime module.

The runtime counterpart of paired.py (and run through its process loop):
each child process sets up C (bench/c_runtime.c, linked with the toolkit's
static runtime, called through ctypes so its loops have no Python in them),
cubind.runtime, cubind.cudart and cuda.bindings.runtime, and for each case
runs one loop of each in turn, R times with the order rotated, each keeping
its best loop. Issue 45's target is per process: the overhead above C of
each cubind face at most 0.5x cuda.bindings.runtime's,
(cubind - C) / (cuda.bindings - C) <= 0.5; the report gives its median and
range over K processes and in how many it held. Then the import of each
module in fresh interpreters (best of T), target cubind.runtime at most
0.25x cuda.bindings.runtime.

cuda.bindings.runtime 13.3.1 binds no cudaLaunchKernel; a cuda.bindings
program launches a runtime kernel (cudaLibraryGetKernel) through
cuda.bindings.driver.cuLaunchKernel, so that is its launch row, with its
(values, ctypes types) kernelParams. cubind.runtime launches through its
cudaLaunchKernel with plain values where it takes them, else the same
(values, types) form; the record's `variant` says which.

  runtime_bench.py run --c-lib LIB --image FILE [--cudart LIB] [--processes K] [--reps R]
                       [--n N] [--n-launch N] [--cases A,B] [--imports T]
                       [--out FILE]            -> JSON lines, then the report
  runtime_bench.py render FILE                 -> the markdown report
"""

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (timing: Spec, call_spec, spec_timer; kernel values)
import paired  # noqa: E402  (the process loop, summaries)

IMPLS = ["c", "cubind.runtime", "cubind.cudart", "cuda.bindings"]
BINDINGS = ["cubind.runtime", "cubind.cudart"]
CALL_CASES = ["get_device", "stream_query", "event_record", "malloc_free"]
LAUNCH_CASES = ["launch_empty", "launch_small", "launch_16"]
CASES = CALL_CASES + LAUNCH_CASES
# Issue 45's limits: overhead above C, and import time, against cuda.bindings.
OVERHEAD_LIMIT = 0.5
IMPORT_LIMIT = 0.25
IMPORTS = {"cubind.runtime": "import cubind.runtime",
           "cubind.cudart": "import cubind.cudart",
           "cuda.bindings": "import cuda.bindings.runtime"}
# The launch cases' kernels (bench/kernels.cu) and their arguments.
KERNELS = {"launch_empty": "empty", "launch_small": "small", "launch_16": "k16"}
CUDA_STREAM_NON_BLOCKING = 1
CUDA_EVENT_DISABLE_TIMING = 2
CUDA_ERROR_NOT_READY = 600


def kernel_args(case, ptr):
    """(values, kinds) of a launch case, as bench.py's driver cases."""
    if case == "launch_small":
        return bench.small_values(ptr), ["p", "i", "f"]
    if case == "launch_16":
        return bench.k16_values(ptr), bench.K16_KINDS
    return [], []


# ---------------------------------------------------------------------------
# Child: one process, every implementation.

def cudart_path(cfg):
    """The runtime library C's loops call: --cudart, else the _cudart.so
    of the cubind package this process imports (the static runtime that
    cubind.runtime calls, made shared)."""
    if cfg.get("cudart"):
        return cfg["cudart"]
    import cubind
    return os.path.join(os.path.dirname(cubind.__file__), "_cudart.so")


def open_c(cfg):
    lib = ctypes.CDLL(os.path.abspath(cfg["c_lib"]))
    lib.cbr_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.cbr_loop.argtypes = [ctypes.c_char_p, ctypes.c_long]
    lib.cbr_loop.restype = ctypes.c_double
    image = cfg["images"][0].encode() if cfg["images"] else None
    if lib.cbr_open(cudart_path(cfg).encode(), image) != 0:
        raise bench.NA("cbr_open failed (c_runtime's stderr says why)")
    return lambda case: paired.c_timer(lib, case, "cbr_loop", "c_runtime")


class RuntimeImpl(bench.DriverImpl):
    """A runtime module: cubind.runtime and cuda.bindings.runtime (status
    first) or cubind.cudart (raising, outputs returned). Its calls outside
    the timing (call, check_result) are the driver implementations'."""

    def __init__(self, name, cfg):
        raising = name == "cubind.cudart"
        if name == "cuda.bindings":
            from cuda.bindings import driver, runtime
            module, self.launcher = runtime, driver
        else:
            import cubind
            module, self.launcher = (cubind.cudart if raising else cubind.runtime), None
        super().__init__(name, module, raising, name != "cuda.bindings", cfg)

    def setup(self):
        self.call("cudaSetDevice", 0)
        self.call("cudaFree", 0)
        self.stream = self.call("cudaStreamCreateWithFlags", CUDA_STREAM_NON_BLOCKING)
        self.event = self.call("cudaEventCreateWithFlags", CUDA_EVENT_DISABLE_TIMING)
        self.dptr = self.call("cudaMalloc", 1 << 20)
        self.kernels = {}
        for _, data in bench.load_images(self.cfg["images"][:1]):
            lib = self.call("cudaLibraryLoadData", data, None, None, 0, None, None, 0)
            for case, kname in KERNELS.items():
                self.kernels[case] = self.call("cudaLibraryGetKernel", lib, kname.encode())
        self.one = self.d.dim3()
        self.one.x = self.one.y = self.one.z = 1

    def sync(self):
        f, stream = self.d.cudaStreamSynchronize, self.stream
        return lambda: f(stream)

    def case(self, name):
        rt = self.d
        if name == "get_device":
            return bench.call_spec(rt.cudaGetDevice, [], self.check_result())
        if name == "stream_query":
            return bench.call_spec(rt.cudaStreamQuery, [self.stream],
                                   self.check_result((0, CUDA_ERROR_NOT_READY)))
        if name == "event_record":
            return bench.call_spec(rt.cudaEventRecord, [self.event, self.stream], self.check_result(),
                                   post=self.sync())
        if name == "malloc_free":
            alloc, free = rt.cudaMalloc, rt.cudaFree
            body = ("free(alloc(size))" if self.raising else "free(alloc(size)[1])")
            return bench.Spec(body, {"alloc": alloc, "free": free, "size": 1024},
                              lambda: free(self.call("cudaMalloc", 1024)),
                              n=self.cfg["n_launch"])
        if name in LAUNCH_CASES:
            return self.launch_spec(name)
        raise bench.NA("unknown case")

    def launch_spec(self, case):
        if case not in self.kernels:
            raise bench.NA("no kernels loaded (no --image)")
        kernel = self.kernels[case]
        values, kinds = kernel_args(case, self.dptr)
        n = self.cfg["n_launch"]
        if self.launcher is not None:
            # cuda.bindings: the driver's cuLaunchKernel (see the docstring).
            d = self.launcher
            params = (tuple(values), bench.ctypes_types(kinds)) if values else 0
            return bench.call_spec(d.cuLaunchKernel,
                                   [d.CUfunction(int(kernel)), 1, 1, 1, 1, 1, 1, 0,
                                    self.stream, params, 0],
                                   self.check_result(), post=self.sync(), n=n, variant="tuple",
                                   note="cuda.bindings.driver.cuLaunchKernel")
        f = getattr(self.d, "cudaLaunchKernel", None)
        if f is None:
            raise bench.NA("no cudaLaunchKernel in %s" % self.name)
        forms = [("plain", list(values) if values else None)]
        if values:
            forms.append(("tuple", (tuple(values), bench.ctypes_types(kinds))))
        why = None
        for variant, args in forms:
            spec = bench.call_spec(f, [kernel, self.one, self.one, args, 0, self.stream],
                                   self.check_result(), post=self.sync(), n=n, variant=variant,
                                   note="cudaLaunchKernel, %s kernel arguments" % variant)
            try:
                spec.check()
                return spec
            except (TypeError, ValueError, bench.NA) as e:
                why = "%s: %s" % (type(e).__name__, e)
        raise bench.NA("cudaLaunchKernel refused every form (%s)" % why)


def run_child(cfg):
    timers_of, why = {}, {}
    try:
        c = open_c(cfg)
        timers_of["c"] = c
    except (OSError, bench.NA) as e:
        why["c"] = "%s: %s" % (type(e).__name__, e)
    for name in IMPLS[1:]:
        try:
            obj = RuntimeImpl(name, cfg)
            obj.setup()
            timers_of[name] = obj
        except Exception as e:
            why[name] = "setup failed: %s: %s" % (type(e).__name__, e)
    bench.emit(paired.cubind_origin())
    gc.collect()
    gc.disable()
    for case in cfg["cases"]:
        n = cfg["n_launch"] if case in LAUNCH_CASES or case == "malloc_free" else cfg["n"]
        timers, variants = {}, {}
        for name in IMPLS:
            if name not in timers_of:
                bench.emit({"case": case, "impl": name, "status": "n/a", "reason": why[name]})
                continue
            try:
                if name == "c":
                    timers[name] = timers_of["c"](case)
                else:
                    spec = timers_of[name].case(case)
                    spec.check()
                    timers[name], variants[name] = bench.spec_timer(spec), spec.variant
                timers[name](max(1, n // 10))   # warm up
            except Exception as e:
                timers.pop(name, None)
                bench.emit({"case": case, "impl": name, "status": "n/a",
                            "reason": "%s: %s" % (type(e).__name__, e)})
        paired.time_rotated(case, timers, cfg["reps"], n,
                            {name: {"variant": v} for name, v in variants.items() if v})
    return 0


# ---------------------------------------------------------------------------
# Parent: K processes, the imports, the report.

def import_records(tries):
    """Each module's import in `tries` fresh interpreters: best and all (ms)."""
    code = ("import time\nt0 = time.perf_counter()\n%s\n"
            "print(time.perf_counter() - t0)\n")
    recs = []
    for impl, stmt in IMPORTS.items():
        times, err = [], None
        for _ in range(tries):
            r = subprocess.run([sys.executable, "-c", code % stmt], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                err = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
                break
            times.append(float(r.stdout.strip().splitlines()[-1]) * 1e3)
        if err:
            recs.append({"case": "import", "impl": impl, "status": "n/a", "reason": err})
        else:
            recs.append({"case": "import", "impl": impl, "status": "ok",
                         "ms": round(min(times), 3), "runs_ms": [round(t, 3) for t in times],
                         "statement": stmt})
    return recs


def overhead_ratio(case, impl, t):
    """One process's (impl - C) / (cuda.bindings - C), or None."""
    a, b, c = t.get((case, impl)), t.get((case, "cuda.bindings")), t.get((case, "c"))
    if a is None or b is None or c is None or b - c <= 0:
        return None
    return (a - c) / (b - c)


def render(records):
    meta = next((r for r in records if r.get("runtime_bench") == "meta"), {})
    procs = paired.per_process([r for r in records if r.get("case") != "import"])
    lines = ["## The runtime API: cubind.runtime against cuda.bindings.runtime and C", "",
             "%d processes; in each, every case runs one loop of each implementation in turn, "
             "%s times (order rotated), each keeping its best loop; C is bench/c_runtime.c "
             "(the toolkit's static runtime) in the same process. The target, per process: "
             "each cubind face's overhead above C at most %.1f× cuda.bindings.runtime's. "
             "cuda.bindings.runtime has no cudaLaunchKernel: its launch rows are "
             "cuda.bindings.driver.cuLaunchKernel of the runtime's kernel and stream." %
             (len(procs), meta.get("reps", "?"), OVERHEAD_LIMIT), "",
             "Command: `%s`" % meta.get("command", "?"), "",
             "| case | (cubind.runtime − C) / (cuda.bindings − C) | (cubind.cudart − C) / "
             "(cuda.bindings − C) | held (runtime, cudart) |", "|---|---|---|---|"]
    for case in paired.record_cases(records):
        if case == "import":
            continue
        cells, held = [], []
        for impl in BINDINGS:
            vals = [overhead_ratio(case, impl, t) for t in procs.values()]
            s = paired.summarise(vals)
            cells.append("—" if s is None else "%.2f× (%.2f–%.2f)" % s[:3])
            if s is not None:
                held.append("%d/%d" % (sum(v <= OVERHEAD_LIMIT for v in vals if v is not None),
                                       s[3]))
        lines.append("| %s | %s | %s |" % (case, " | ".join(cells), ", ".join(held) or "—"))
    lines += ["", "Median ns per call over the processes (each process's best loop):", "",
              "| case | " + " | ".join(IMPLS) + " |", "|---|" + "---|" * len(IMPLS)]
    for case in paired.record_cases(records):
        if case == "import":
            continue
        row = []
        for impl in IMPLS:
            s = paired.summarise([t.get((case, impl)) for t in procs.values()])
            row.append("%.1f" % s[0] if s else "n/a")
        lines.append("| %s | %s |" % (case, " | ".join(row)))
    imports = {r["impl"]: r for r in records if r.get("case") == "import"}
    if imports:
        ref = imports.get("cuda.bindings", {}).get("ms")
        lines += ["", "Import in a fresh interpreter (best of %s; target: cubind.runtime ≤ "
                  "%.2f× cuda.bindings.runtime):" % (meta.get("imports", "?"), IMPORT_LIMIT), "",
                  "| module | ms | / cuda.bindings.runtime |", "|---|---|---|"]
        for impl in IMPORTS:
            r = imports.get(impl)
            if r is None:
                continue
            if r.get("status") != "ok":
                lines.append("| %s | n/a: %s | — |" % (IMPORTS[impl], r.get("reason")))
                continue
            ratio = "%.3f×" % (r["ms"] / ref) if ref else "—"
            lines.append("| %s | %.2f | %s |" % (IMPORTS[impl], r["ms"], ratio))
    na = sorted({(r["case"], r["impl"], r.get("reason", "")) for r in records
                 if r.get("status") == "n/a"})
    if na:
        lines += ["", "Not measured:", ""] + ["- %s %s: %s" % x for x in na]
    return "\n".join(lines) + "\n"


def run(args):
    cfg = {"cases": args.cases.split(",") if args.cases else CASES,
           "n": args.n, "n_launch": args.n_launch, "reps": args.reps,
           "images": [p for p in args.image if os.path.exists(p)], "c_lib": args.c_lib,
           "cudart": args.cudart}
    records = [{"runtime_bench": "meta", "processes": args.processes, "imports": args.imports,
                "command": " ".join(sys.argv), **{k: v for k, v in cfg.items() if k != "c_lib"}}]
    paired.run_processes(os.path.abspath(__file__), cfg, args.processes, records, args.out,
                         args.child_timeout)
    if args.imports:
        records += import_records(args.imports)
        paired.write_records(args.out, records)
    sys.stdout.write(render(records))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        return run_child(json.loads(argv[1]))
    if argv[:1] == ["render"]:
        if len(argv) != 2:
            sys.stderr.write("usage: runtime_bench.py render FILE\n")
            return 2
        sys.stdout.write(render(paired.load_runs(argv[1:])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["run"])
    ap.add_argument("--c-lib", required=True, help="bench/c_runtime.c built as a library")
    ap.add_argument("--cudart", help="the runtime library C calls (default: cubind's _cudart.so)")
    paired.add_run_arguments(ap)
    ap.add_argument("--imports", type=int, default=7, help="fresh interpreters per import")
    ap.add_argument("--child-timeout", type=int, default=300)
    ap.add_argument("--out", default="build/bench/runtime.jsonl")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
