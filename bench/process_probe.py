# SPDX-License-Identifier: Apache-2.0
"""process_probe.py — one process's cost of the same calls through both
cubind faces (and of a loop calling len(())), one line per run.

scripts/gpu-run process-probe runs it in several processes beside c_bench to show
how much a call's cost moves from one process to the next on the machine,
in C as in Python; bench.py's best of rounds (one process per
implementation per round) is chosen with that spread in mind. Also checks
that the drop-in face reused its result tuple in this process.

Usage (GPU machine, from the repository root):
    PYTHONPATH=build/python python3 bench/process_probe.py"""
import gc
import sys
import time

import cubind.cu as cu
import cubind.driver as d


def best(f, *a, n=200000, reps=7):
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter_ns()
        for _ in range(n):
            f(*a)
        out = min(out, (time.perf_counter_ns() - t) / n)
    return out


def main():
    d.cuInit(0)
    dev = cu.cuDeviceGet(0)
    ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    gc.disable()
    first = d.cuDeviceGet(0)
    tuple_id, handle_id = id(first), id(first[1])
    del first
    again = d.cuDeviceGet(0)
    reused = id(again) == tuple_id and id(again[1]) == handle_id
    del again
    attr = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    cols = [("device_get", d.cuDeviceGet, cu.cuDeviceGet, (0,)),
            ("device_get_attribute", d.cuDeviceGetAttribute, cu.cuDeviceGetAttribute, (attr, dev)),
            ("ctx_set_current", d.cuCtxSetCurrent, cu.cuCtxSetCurrent, (ctx,))]
    cells = ["%s driver %.1f cu %.1f" % (name, best(fd, *a), best(fc, *a)) for name, fd, fc, a in cols]
    cells.append("len(()) %.1f" % best(len, ()))
    print("python: " + " | ".join(cells) + " | result tuple reused: %s" % reused)
    return 0 if reused else 1


if __name__ == "__main__":
    sys.exit(main())
