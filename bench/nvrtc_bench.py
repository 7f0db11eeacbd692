# SPDX-License-Identifier: Apache-2.0
"""bench/nvrtc_bench.py — issue 29's two numbers for cubind.nvrtc:

  import   `import cubind.nvrtc` against `import cuda.bindings.nvrtc`: the
           median over fresh interpreters of the import's own time as
           `python -X importtime` reports it (cumulative, the top-level
           import line, microseconds), each module in its own processes,
           interleaved; the target is a ratio <= 0.25.
  compile  the per-call overhead of cubind.nvrtc above libnvrtc itself:
           one small kernel's create + compile + PTX size + PTX + destroy
           through cubind.nvrtc, and the same five calls into the same
           libnvrtc through ctypes (the library's own cost plus ctypes'),
           alternated, median of N; the target is an overhead < 1 % of the
           compile.

    PYTHONPATH=build/python python3 bench/nvrtc_bench.py [--runs N] [--skip-upstream]

Runs without a GPU (NVRTC is a CPU library). cuda.bindings is measured
only where it is installed (the GPU machine); elsewhere the import line
says so.
"""
import argparse
import ctypes
import os
import re
import statistics
import subprocess
import sys
import time

KERNEL = b'extern "C" __global__ void k(float *p, float a) { p[threadIdx.x] *= a; }'


def import_us(module):
    """The import's cumulative time in microseconds, from -X importtime."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", "import " + module],
                       capture_output=True, text=True, env=dict(os.environ))
    if p.returncode != 0:
        return None
    for line in reversed(p.stderr.splitlines()):
        m = re.match(r"import time:\s*\d+ \|\s*(\d+) \| (\S+)$", line.strip())
        if m and m.group(2) == module:
            return int(m.group(1))
    return None


def median_imports(mods, runs):
    """{module: median import_us} over `runs` rounds, the modules
    interleaved; a module that never imported is left out."""
    times = {m: [] for m in mods}
    for _ in range(runs):
        for m in mods:
            t = import_us(m)
            if t is not None:
                times[m].append(t)
    return {m: statistics.median(v) for m, v in times.items() if v}


def bench_import(runs, upstream):
    med = median_imports(["cubind.nvrtc"] + (["cuda.bindings.nvrtc"] if upstream else []), runs)
    line = "import: cubind.nvrtc %.1f ms (median of %d)" % (med["cubind.nvrtc"] / 1e3, runs)
    if "cuda.bindings.nvrtc" in med:
        ratio = med["cubind.nvrtc"] / med["cuda.bindings.nvrtc"]
        line += ", cuda.bindings.nvrtc %.1f ms: ratio %.3f (target <= 0.25: %s)" % (
            med["cuda.bindings.nvrtc"] / 1e3, ratio, "met" if ratio <= 0.25 else "NOT met")
    else:
        line += ", cuda.bindings.nvrtc not importable here"
    print(line)


def ctypes_compile(lib):
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), KERNEL, b"k.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * 1)(b"-arch=compute_90")
    assert lib.nvrtcCompileProgram(prog, 1, opts) == 0
    size = ctypes.c_size_t()
    assert lib.nvrtcGetPTXSize(prog, ctypes.byref(size)) == 0
    buf = ctypes.create_string_buffer(size.value)
    assert lib.nvrtcGetPTX(prog, buf) == 0
    assert lib.nvrtcDestroyProgram(ctypes.byref(prog)) == 0
    return buf.raw


def cubind_compile(n):
    err, prog = n.nvrtcCreateProgram(KERNEL, b"k.cu", 0, [], [])
    assert n.nvrtcCompileProgram(prog, 1, [b"-arch=compute_90"])[0] == 0
    err, size = n.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    assert n.nvrtcGetPTX(prog, ptx)[0] == 0
    assert n.nvrtcDestroyProgram(prog)[0] == 0
    return ptx


def bench_compile(runs):
    import cubind.nvrtc as n

    ok, path = n._library_status()
    assert ok, path
    lib = ctypes.CDLL(path)  # the same library object (already loaded)
    assert ctypes_compile(lib) == cubind_compile(n)
    c, b = [], []
    for _ in range(runs):
        t = time.perf_counter()
        ctypes_compile(lib)
        c.append(time.perf_counter() - t)
        t = time.perf_counter()
        cubind_compile(n)
        b.append(time.perf_counter() - t)
    mc, mb = statistics.median(c), statistics.median(b)
    print("  (fastest: ctypes %.3f ms, cubind %.3f ms)" % (min(c) * 1e3, min(b) * 1e3))
    print("compile (5 calls, small kernel): libnvrtc via ctypes %.3f ms, cubind.nvrtc %.3f ms: "
          "overhead %+.2f %% (target < 1 %%), median of %d" % (mc * 1e3, mb * 1e3,
                                                             100 * (mb - mc) / mc, runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--skip-upstream", action="store_true")
    a = ap.parse_args()
    bench_import(a.runs, not a.skip_upstream)
    bench_compile(a.runs)


if __name__ == "__main__":
    main()
