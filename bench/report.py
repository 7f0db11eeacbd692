#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""report.py — turns one benchmark run into the markdown for BENCHMARKS.md.

  report.py machine [--command CMD]   one JSON line on stdout describing this
                                      machine (GPU, driver, Python, package
                                      versions, cubind commit and source
                                      digest) and the command
  report.py digest                    the source digest of this checkout, to
                                      match a report to a commit
  report.py render RESULTS.jsonl[.gz] [-o REPORT.md]
                                      the report from the JSON lines of one run
                                      (c_bench, bench.py and the machine line)

Ratios are of ns per call measured in the same run. The targets are issue 8's;
each is PASS, MISS, or n/a when a number it needs is missing.
"""

import argparse
import glob
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

CALLS = ["ctx_get_current", "ctx_set_current", "device_get", "device_get_attribute",
         "event_record", "event_query", "stream_query", "pointer_get_attribute",
         "mem_alloc_free"]
LAUNCHES = ["launch_empty_kernel", "launch_small_kernel", "launch_16_args",
            "launch_512_args", "launch_2048b"]
RATIO_CALLS = ["ctx_get_current", "device_get"]          # target: ratio <= 0.35
ABOVE_C_CALLS = [c for c in CALLS if c not in RATIO_CALLS]  # target: above-C ratio <= 0.3
TARGET_LAUNCHES = ["launch_small_kernel", "launch_16_args", "launch_512_args"]
FACES = ["cubind.driver", "cubind.cu"]

LIMIT_RATIO = 0.35
LIMIT_ABOVE_C = 0.3
LIMIT_LAUNCH_CB = 0.6
LIMIT_LAUNCH_CORE = 0.85
LIMIT_IMPORT = 0.25
LIMIT_SIZE = 0.3


# ---------------------------------------------------------------------------
# machine

def _out(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _version(dist):
    try:
        from importlib.metadata import version, PackageNotFoundError
    except ImportError:
        return None
    for name in (dist, dist.replace("-", "_")):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return None


# What the measured bindings are built from: the generated code, the
# runtime (its folders: runtime/README.md), and the benchmark itself.
DIGEST_GLOBS = ["out/*.c", "out/*.h", "runtime/*/*.c", "runtime/*/*.h", "bench/*.py", "bench/*.c",
                "bench/*.cu"]


def source_digest(root="."):
    """12 hex digits of SHA-256 over the paths and contents of DIGEST_GLOBS'
    files under root: the same for every checkout of one commit, whatever
    its git metadata says (the GPU machine's copy of the tree may carry an
    older commit's), so `report.py digest` on a checkout tells which commit
    a report measured."""
    h = hashlib.sha256()
    paths = sorted({p for g in DIGEST_GLOBS for p in glob.glob(os.path.join(root, g))})
    for path in paths:
        h.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()[:12] if paths else None


def machine(command):
    gpu = _out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                "--format=csv,noheader"])
    nvcc = _out(["nvcc", "--version"])
    # CUBIND_COMMIT names the commit when the checkout's git metadata is not
    # the tree's own (a copied working tree, as the GPU machine receives).
    commit = os.environ.get("CUBIND_COMMIT") or _out(["git", "rev-parse", "--short", "HEAD"])
    dirty = None if os.environ.get("CUBIND_COMMIT") else _out(["git", "status", "--porcelain"])
    rec = {
        "impl": "machine", "case": "meta",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": platform.node(),
        "cpu": _cpu_name(),
        "cpus": os.cpu_count(),
        "gpu": gpu.splitlines()[0] if gpu else None,
        "gpus": len(gpu.splitlines()) if gpu else 0,
        "nvcc": next((l for l in nvcc.splitlines() if "release" in l), nvcc.splitlines()[-1])
        if nvcc else None,
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "gil_enabled": getattr(sys, "_is_gil_enabled", lambda: True)(),
        "cuda_bindings": _version("cuda-bindings"),
        "cuda_core": _version("cuda-core"),
        "cupy": _version("cupy-cuda13x") or _version("cupy-cuda12x") or _version("cupy"),
        "numpy": _version("numpy"),
        "cubind_commit": (commit + ("+dirty" if dirty else "")) if commit else None,
        "source_digest": source_digest(),
        "command": command,
        # What can make every driver call slower on this machine, for all
        # implementations alike: confidential computing (encrypted
        # submission), a virtual machine, CUDA settings in the environment
        # (a tool injected, launch blocking), the load of other tenants.
        "conf_compute": _out(["nvidia-smi", "conf-compute", "-f"]),
        "virtualization": _out(["systemd-detect-virt"]),
        "cuda_env": {k: v for k, v in os.environ.items()
                     if k.startswith(("CUDA_", "CUPY_", "NVIDIA_")) and "PATH" not in k} or None,
        "loadavg": os.getloadavg(),
    }
    return rec


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


# ---------------------------------------------------------------------------
# render

class Results:
    def __init__(self, records):
        self.records = records
        self.by = {}
        self.threads = []
        self.meta = {}
        for r in records:
            if r.get("case") == "meta":
                self.meta[r.get("impl")] = r
                continue
            if "threads" in r:
                self.threads.append(r)
                continue
            self.by[(r.get("impl"), r.get("case"), r.get("variant", "") or "")] = r

    def rec(self, impl, case, variant=""):
        return self.by.get((impl, case, variant))

    def ns(self, impl, case, variant=""):
        r = self.rec(impl, case, variant)
        if r and r.get("status") == "ok" and r.get("ns") is not None:
            return float(r["ns"])
        return None

    def launch_ns(self, impl, case):
        """(ns, variant) of the form an implementation is judged by: cubind
        through plain values, cuda.bindings through (values, types),
        cuda.core through launch(), C as is."""
        order = {"c": [""], "cuda.core": ["args"], "cuda.bindings": ["tuple"],
                 "cubind.driver": ["plain"], "cubind.cu": ["plain"]}[impl]
        if case == "launch_empty_kernel" and impl not in ("c", "cuda.core"):
            order = ["none"]
        for v in order:
            x = self.ns(impl, case, v)
            if x is not None:
                return x, v
        return None, None

    def reason(self, impl, case, variant=None):
        for (i, c, v), r in self.by.items():
            if i == impl and c == case and (variant is None or v == variant) and r.get("status") != "ok":
                return r.get("reason")
        r = self.by.get((impl, "*", ""))
        return r.get("reason") if r else None


def f_ns(x):
    return "—" if x is None else ("%.0f" % x if x >= 100 else "%.1f" % x)


def f_ratio(x):
    return "—" if x is None else "%.2f×" % x


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def above_c(x, c, ref, loop=0.0):
    """(x - C) / (ref - C): the share of the reference's overhead left.
    With `loop` (the empty Python loop's cost per iteration), that cost is
    taken out of both x and ref first: what is left is each binding's own
    cost over the C call, without the benchmark loop that both pay."""
    if x is None or c is None or ref is None or loop is None:
        return None
    if ref - loop - c <= 0:
        return None
    return (x - loop - c) / (ref - loop - c)


def verdict(value, limit):
    if value is None:
        return "n/a"
    return "PASS" if value <= limit else "MISS"


def machine_section(m, driver_version):
    """The "## Machine" table and the command line of a run, as markdown
    lines: m is the record `report.py machine` wrote."""
    out = []
    w = out.append
    w("## Machine")
    w("")
    rows = [
        ("GPU", "%s (%s GPU%s)" % (m.get("gpu"), m.get("gpus"), "" if m.get("gpus") == 1 else "s")),
        ("CPU", "%s, %s logical CPUs" % (m.get("cpu"), m.get("cpus"))),
        ("CUDA driver (cuDriverGetVersion)", driver_version),
        ("nvcc", m.get("nvcc")),
        ("Python", "%s (GIL %s)" % (m.get("python"), "enabled" if m.get("gil_enabled", True) else "disabled")),
        ("cuda-bindings", m.get("cuda_bindings")),
        ("cuda-core", m.get("cuda_core")),
        ("NumPy / CuPy", "%s / %s" % (m.get("numpy"), m.get("cupy"))),
        ("cubind commit", m.get("cubind_commit")),
        ("source digest (report.py digest)", m.get("source_digest")),
        ("date", m.get("date")),
        ("confidential computing (nvidia-smi conf-compute -f)", m.get("conf_compute")),
        ("virtualization (systemd-detect-virt)", m.get("virtualization")),
        ("CUDA_* environment", ", ".join("%s=%s" % kv for kv in sorted((m.get("cuda_env") or {}).items())
                                         if not kv[0].startswith("NVIDIA_REQUIRE"))
         or "none set"),
        ("load average at start (1, 5, 15 min)", m.get("loadavg")),
    ]
    w("| | |")
    w("|---|---|")
    for k, v in rows:
        w("| %s | %s |" % (k, v if v is not None else "unknown"))
    w("")
    w("Command (from the repository root, on the GPU machine):")
    w("")
    w("```")
    w(m.get("command") or "scripts/gpu-run bench")
    w("```")
    return out


def render(records):
    R = Results(records)
    m = R.meta.get("machine", {})
    cmeta = R.meta.get("c", {})
    pmeta = R.meta.get("bench.py", {})
    out = []
    w = out.append

    w("# Benchmarks")
    w("")
    w("cubind against NVIDIA's cuda-python and plain C, measured in one run on one "
      "machine. Times are ns per call (best of %s loops; N = %s for calls, %s for "
      "launches and mem_alloc_free). Method and cases: `bench/README.md`."
      % (pmeta.get("reps", "?"), pmeta.get("n", "?"), pmeta.get("n_launch", "?")))
    w("")
    out += machine_section(m, cmeta.get("driver_version"))
    w("")
    if pmeta.get("fake"):
        w("**Fake driver run (smoke test): these numbers measure the test double, not a GPU.**")
        w("")

    lp, ll = R.ns("python", "loop_pass"), R.ns("python", "loop_len")

    def floor_plus_c(case):
        """C's time plus the case's floor: the least a binding can cost."""
        fl, c = R.ns("python", case, "floor"), R.ns("c", case)
        return None if fl is None or c is None else fl + c
    w("Baselines: an empty `for` loop costs %s ns per iteration; a loop calling "
      "`len(())` costs %s ns." % (f_ns(lp), f_ns(ll)))
    w("")

    # -- calls --
    w("## Driver calls")
    w("")
    w("\"above C\" is (cubind − C) / (cuda.bindings − C): the share of "
      "cuda.bindings' overhead over the C call that cubind still has. Every Python "
      "time includes the benchmark's `for` loop (%s ns an iteration here); \"loop "
      "out\" takes that cost out of both cubind's and cuda.bindings' times first. "
      "\"floor\" is the case's calls made to do-nothing extension functions "
      "(`bench/floor_ext.c`: same number of calls and arguments, detaching from the "
      "interpreter where cubind's function does), in the same loop: \"floor above C\" "
      "is the above-C ratio of a binding that cost only that, the least any binding "
      "written as a CPython extension can have." % f_ns(lp))
    w("")
    w("| case | C | cubind.driver | cubind.cu | cuda.bindings | cuda.core | driver / bindings | driver above C | cu above C | driver above C, loop out | floor | floor above C |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in CALLS:
        c = R.ns("c", case)
        d, u, b = R.ns("cubind.driver", case), R.ns("cubind.cu", case), R.ns("cuda.bindings", case)
        core = R.ns("cuda.core", case)
        fl = R.ns("python", case, "floor")
        floor = floor_plus_c(case)
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            case, f_ns(c), f_ns(d), f_ns(u), f_ns(b), f_ns(core), f_ratio(ratio(d, b)),
            f_ratio(above_c(d, c, b)), f_ratio(above_c(u, c, b)),
            f_ratio(above_c(d, c, b, lp)), f_ns(fl), f_ratio(above_c(floor, c, b))))
    w("")

    # -- launches --
    w("## Kernel launches")
    w("")
    if pmeta.get("launch_timing") == "submit":
        timing = ("the stream is synchronized right after the timing of each loop of %s "
                  "launches: the times are the cost of submitting a launch (the loop fits "
                  "the driver's queue, so the GPU's own launch rate does not bound it)"
                  % pmeta.get("n_launch", "?"))
    else:
        timing = ("the stream is synchronized once after each loop, inside the timing: "
                  "the loop's throughput, which the GPU bounds once the driver's queue "
                  "is full")
    w("One block of one thread on a non-blocking stream; %s. "
      "cubind passes plain Python values typed by the kernel; " % timing +
      "cuda.bindings is shown with its `(values, ctypes types)` form and with a "
      "pre-packed `void*[]` built once; cuda.core uses `launch(stream, config, kernel, *args)`. "
      "\"floor\" is an 11-argument call of a do-nothing extension function that "
      "detaches from the interpreter, as cubind's cuLaunchKernel does, in the same loop.")
    w("")
    w("| case | C | cubind.driver | cubind.cu | bindings (values, types) | bindings pre-packed | cuda.core | driver / bindings tuple | driver / core | driver above C (ns) | floor (ns) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for case in LAUNCHES:
        c = R.ns("c", case)
        d, dv = R.launch_ns("cubind.driver", case)
        u, uv = R.launch_ns("cubind.cu", case)
        bt, _ = R.launch_ns("cuda.bindings", case)
        bp = R.ns("cuda.bindings", case, "prepacked")
        if case == "launch_empty_kernel":
            bp = None
        core, _ = R.launch_ns("cuda.core", case)
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            case, f_ns(c), f_ns(d), f_ns(u), f_ns(bt), f_ns(bp), f_ns(core),
            f_ratio(ratio(d, bt)), f_ratio(ratio(d, core)),
            "—" if d is None or c is None else "%+.0f" % (d - c),
            f_ns(R.ns("python", case, "floor"))))
    extra = []
    for impl in FACES + ["cuda.bindings", "cuda.core"]:
        for case in LAUNCHES:
            for v in ("tuple", "prepacked") if impl.startswith("cubind") else ():
                x = R.ns(impl, case, v)
                if x is not None:
                    extra.append("%s %s[%s] %s ns" % (impl, case, v, f_ns(x)))
    if extra:
        w("")
        w("cubind's other kernelParams forms: " + "; ".join(extra) + ".")
    w("")

    # -- import and size --
    w("## Import time and size")
    w("")
    di = R.rec("cubind.driver", "import_time")
    bi = R.rec("cuda.bindings", "import_time")
    ci = R.rec("cuda.core", "import_time")
    dims = di["ms"] if di and di.get("status") == "ok" else None
    bims = bi["ms"] if bi and bi.get("status") == "ok" else None
    cims = ci["ms"] if ci and ci.get("status") == "ok" else None
    ds, bs = R.rec("cubind.driver", "extension_size"), R.rec("cuda.bindings", "extension_size")
    dsize = ds.get("bytes_all") if ds and ds.get("status") == "ok" else None
    dmain = ds.get("bytes") if ds and ds.get("status") == "ok" else None
    bsize = bs.get("bytes") if bs and bs.get("status") == "ok" else None
    ball = bs.get("bytes_all") if bs and bs.get("status") == "ok" else None

    def mb(x):
        return "—" if x is None else "%.2f MB" % (x / 1e6)

    def ms(x):
        return "—" if x is None else "%.1f ms" % x

    w("| | cubind | cuda.bindings | ratio |")
    w("|---|---|---|---|")
    w("| `import` (fresh process, best of 5) | %s (`import cubind.driver`) | %s (`import cuda.bindings.driver`) | %s |"
      % (ms(dims), ms(bims), f_ratio(ratio(dims, bims))))
    w("| stripped driver extension | %s (driver %s + _runtime) | %s (driver.so) | %s |"
      % (mb(dsize), mb(dmain), mb(bsize), f_ratio(ratio(dsize, bsize))))
    w("| stripped, driver-related extensions | %s | %s (driver + cydriver + _bindings/cydriver) | %s |"
      % (mb(dsize), mb(ball), f_ratio(ratio(dsize, ball))))
    if cims is not None:
        w("")
        w("`import cuda.core`: %s." % ms(cims))
    w("")

    # -- threads --
    if R.threads:
        w("## Threads")
        w("")
        w("Million calls per second over all threads (each thread makes a fixed number of "
          "calls; wall time from the first thread's start to the last one's end).")
        w("")
        w("| implementation | case | 1 | 2 | 4 | 8 | 8 / 1 |")
        w("|---|---|---|---|---|---|---|")
        groups = {}
        for r in R.threads:
            groups.setdefault((r["impl"], r["case"]), {})[r["threads"]] = r["mcalls_per_s"]
        for (impl, case), g in sorted(groups.items()):
            one, eight = g.get(1), g.get(8)
            w("| %s | %s | %s | %s | %s | %s | %s |" % (
                impl, case.replace("threads_", ""),
                *["—" if g.get(t) is None else "%.2f" % g[t] for t in (1, 2, 4, 8)],
                f_ratio(ratio(eight, one))))
        w("")

    # -- targets --
    w("## Issue 8 targets")
    w("")
    w("The floor column is what a binding costing only its case's floor (above) "
      "would score.")
    w("")
    w("| target | limit | cubind.driver | cubind.cu | floor |")
    w("|---|---|---|---|---|")


    def cell(value, limit, why=None):
        v = verdict(value, limit)
        if value is None:
            if why and len(why) > 70:
                why = why[:67] + "..."
            return "n/a" + (" (%s)" % why if why else "")
        return "%s %s" % (f_ratio(value), v)

    for case in RATIO_CALLS:
        b = R.ns("cuda.bindings", case)
        cells = []
        for face in FACES:
            cells.append(cell(ratio(R.ns(face, case), b), LIMIT_RATIO,
                              R.reason(face, case) or R.reason("cuda.bindings", case)))
        w("| %s ≤ %.2f× cuda.bindings | %.2f× | %s | %s | %s |" % (
            case, LIMIT_RATIO, LIMIT_RATIO, *cells, f_ratio(ratio(floor_plus_c(case), b))))
    for case in ABOVE_C_CALLS:
        b, c = R.ns("cuda.bindings", case), R.ns("c", case)
        cells = []
        for face in FACES:
            cells.append(cell(above_c(R.ns(face, case), c, b), LIMIT_ABOVE_C,
                              R.reason(face, case) or R.reason("cuda.bindings", case)
                              or R.reason("c", case)))
        w("| %s: time above C ≤ %.2f× cuda.bindings' | %.2f× | %s | %s | %s |"
          % (case, LIMIT_ABOVE_C, LIMIT_ABOVE_C, *cells,
             f_ratio(above_c(floor_plus_c(case), c, b))))
    for case in TARGET_LAUNCHES:
        bt, _ = R.launch_ns("cuda.bindings", case)
        core, _ = R.launch_ns("cuda.core", case)
        c = R.ns("c", case)
        for ref, limit, label in ((bt, LIMIT_LAUNCH_CB, "cuda.bindings (values, types)"),
                                  (core, LIMIT_LAUNCH_CORE, "cuda.core launch()")):
            cells = []
            for face in FACES:
                x, _ = R.launch_ns(face, case)
                why = R.reason(face, case, "plain") or R.reason(face, case)
                if x is None and why is None:
                    why = "no plain-value launch measured"
                txt = cell(ratio(x, ref), limit, why)
                if x is not None and c is not None:
                    txt += " (%+.0f ns above C)" % (x - c)
                cells.append(txt)
            w("| %s ≤ %.2f× %s | %.2f× | %s | %s | %s |" % (
                case, limit, label, limit, *cells, f_ratio(ratio(floor_plus_c(case), ref))))
    imp = cell(ratio(dims, bims), LIMIT_IMPORT)
    w("| import ≤ %.2f× `import cuda.bindings.driver` | %.2f× | %s | (same module) | — |"
      % (LIMIT_IMPORT, LIMIT_IMPORT, imp))
    size = cell(ratio(dsize, bsize), LIMIT_SIZE)
    w("| stripped extension ≤ %.2f× cuda.bindings' driver extension | %.2f× | %s | (same module) | — |"
      % (LIMIT_SIZE, LIMIT_SIZE, size))
    w("")
    w("Targets not measured by this suite: regenerating `out/` (< 1 s) and compiling the "
      "bindings (< 60 s) on the 2-core build machine; free-threaded scaling (needs the "
      "free-threaded CPython carried to the GPU machine).")
    w("")

    # -- n/a --
    # Each round of a run reports the same n/a: list each (impl, case) once.
    nas = {}
    for r in R.records:
        if r.get("status") == "n/a":
            label = r["case"] + ("[%s]" % r["variant"] if r.get("variant") else "")
            nas.setdefault((r["impl"], label), (r.get("reason") or "").replace("\n", " ")[:300])
    if nas:
        w("## Not measured")
        w("")
        for (impl, label), why in nas.items():
            w("- %s `%s`: %s" % (impl, label, why))
        w("")
    return "\n".join(out)


def load(path):
    """The records of one run: JSON lines, gzip-compressed when the name ends
    in .gz (results/ keeps its raw runs compressed)."""
    records = []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                sys.stderr.write("report.py: skipping a line that is not JSON: %s\n" % line[:80])
    return records


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pm = sub.add_parser("machine")
    pm.add_argument("--command", default=None)
    sub.add_parser("digest")
    pr = sub.add_parser("render")
    pr.add_argument("results")
    pr.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    if args.cmd == "machine":
        print(json.dumps(machine(args.command)))
        return 0
    if args.cmd == "digest":
        print(source_digest())
        return 0
    text = render(load(args.results))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
