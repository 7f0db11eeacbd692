# SPDX-License-Identifier: Apache-2.0
"""bench/nvml_bench.py — issue 46's numbers for cubind.nvml beside
cuda.bindings.nvml (rows for BENCHMARKS.md):

  import   `import cubind.nvml` against `import cuda.bindings.nvml`, as
           nvrtc_bench.py measures imports (-X importtime, fresh
           interpreters, interleaved, median).
  calls    the per-call cost of device_get_count_v2() and
           device_get_memory_info_v2(device 0), each through cubind.nvml,
           cuda.bindings.nvml and the same libnvidia-ml.so.1 through
           ctypes (the library's own cost plus ctypes'): batches of
           --calls calls, the implementations alternated batch by batch,
           the median of --runs batches, in ns per call.

    PYTHONPATH=build/python python3 bench/nvml_bench.py [--runs N] [--calls K] [--skip-upstream]

Needs the NVIDIA driver (nvmlInit_v2 must succeed): run by
scripts/gpu-run nvrtc. cuda.bindings is measured where it is installed.
"""
import argparse
import ctypes
import statistics
import time

from nvrtc_bench import median_imports


def bench_import(runs, upstream):
    med = median_imports(["cubind.nvml"] + (["cuda.bindings.nvml"] if upstream else []), runs)
    if "cubind.nvml" not in med:
        raise SystemExit("import: cubind.nvml not built here (no nvml.h when configured)")
    line = "import: cubind.nvml %.1f ms" % (med["cubind.nvml"] / 1e3)
    if "cuda.bindings.nvml" in med:
        line += ", cuda.bindings.nvml %.1f ms (ratio %.3f)" % (
            med["cuda.bindings.nvml"] / 1e3, med["cubind.nvml"] / med["cuda.bindings.nvml"])
    else:
        line += ", cuda.bindings.nvml not importable here"
    print(line + " (median of %d)" % runs)


class Memory2(ctypes.Structure):
    """nvmlMemory_v2_t, for the ctypes baseline."""
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


def ctypes_calls(path):
    """The two calls through ctypes into the library cubind loaded."""
    lib = ctypes.CDLL(path)
    assert lib.nvmlInit_v2() == 0
    dev = ctypes.c_void_p()
    assert lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
    count = ctypes.c_uint()
    get_count = lib.nvmlDeviceGetCount_v2
    get_memory = lib.nvmlDeviceGetMemoryInfo_v2

    def device_count():
        get_count(ctypes.byref(count))
        return count.value

    def memory_info():
        m = Memory2(version=ctypes.sizeof(Memory2) | 2 << 24)
        get_memory(dev, ctypes.byref(m))
        return m.total

    return device_count, memory_info


def module_calls(m):
    m.init_v2()
    dev = m.device_get_handle_by_index_v2(0)
    return m.device_get_count_v2, lambda: m.device_get_memory_info_v2(dev).total


def per_call_ns(fn, calls):
    t = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t) / calls


def bench_calls(runs, calls, upstream):
    import cubind.nvml as nvml

    ok, path = nvml._library_status()
    if not ok:
        nvml.init_v2()  # raises why
    impls = {"cubind.nvml": module_calls(nvml), "ctypes": ctypes_calls(path)}
    if upstream:
        try:
            import cuda.bindings.nvml as ref
        except ImportError:
            ref = None
        if ref is not None:
            impls["cuda.bindings.nvml"] = module_calls(ref)
    answers = {name: (count(), memory()) for name, (count, memory) in impls.items()}
    assert len(set(answers.values())) == 1, answers  # every implementation agrees
    for which, label in ((0, "device_get_count_v2()"), (1, "device_get_memory_info_v2(dev)")):
        ns = {name: [] for name in impls}
        for _ in range(runs):
            for name, fns in impls.items():
                ns[name].append(per_call_ns(fns[which], calls))
        med = {name: statistics.median(v) for name, v in ns.items()}
        print("%s: %s (ns per call, median of %d batches of %d)" % (
            label, ", ".join("%s %.0f" % (name, v) for name, v in med.items()), runs, calls))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--skip-upstream", action="store_true")
    a = ap.parse_args()
    bench_import(a.runs, not a.skip_upstream)
    bench_calls(a.runs, a.calls, not a.skip_upstream)


if __name__ == "__main__":
    main()
