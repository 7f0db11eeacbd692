# SPDX-License-Identifier: Apache-2.0
"""Probe: per-call cost of the two faces and of tuple creation, interleaved
in one process (diagnoses a difference seen between separate processes)."""
import gc
import sys
import time

import cubind.cu as cu
import cubind.driver as d


def best(f, *a, n=200000, reps=5):
    out = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(n):
            f(*a)
        out = min(out, (time.perf_counter() - t) / n * 1e9)
    return out


d.cuInit(0)
dev = cu.cuDeviceGet(0)
ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
ev = cu.cuEventCreate(2)
cu.cuEventRecord(ev, 0)
cu.cuCtxSynchronize()
mode = sys.argv[1] if len(sys.argv) > 1 else "gc-on"
if mode == "gc-off":
    gc.disable()
rows = [("len(())", len, ((),)), ("divmod (2-tuple)", divmod, (7, 2))]
for name, fd, fc, args in [("cuDriverGetVersion", d.cuDriverGetVersion, cu.cuDriverGetVersion, ()),
                           ("cuCtxGetCurrent", d.cuCtxGetCurrent, cu.cuCtxGetCurrent, ()),
                           ("cuEventQuery", d.cuEventQuery, cu.cuEventQuery, (ev,))]:
    rows.append(("driver " + name, fd, args))
    rows.append(("cu " + name, fc, args))
try:
    import cuda.bindings.driver as nb
    rows.append(("cuda.bindings cuCtxGetCurrent", nb.cuCtxGetCurrent, ()))
    rows.append(("cuda.bindings cuDriverGetVersion", nb.cuDriverGetVersion, ()))
except ImportError:
    pass
for rep in range(2):
    for name, f, args in rows:
        print("%-8s %-36s %7.1f ns" % (mode, name, best(f, *args)))
