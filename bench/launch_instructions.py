#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Instructions per launch, counted by valgrind (callgrind), on the
test-only fake driver: an A/B of two builds that no machine's noise moves.

The GPU's paired runs (bench/paired.py --base) measure time, and one
run's medians move by several percent with the machine's state; the
instructions a launch executes do not. This counts them for
launch_small_kernel and launch_16_args (bench/bench.py's kernels, their
parameters typed from PTX text as the GPU benchmark's are) in both faces:
each build runs N, 2N and 3N launches under callgrind, and the smaller
of the two N-launch differences, over N, is the instructions of one
launch (the Python loop, cubind's conversion and packing, the fake
driver's cuLaunchKernel). The fake driver is this checkout's for both
builds, so only cubind differs. With
PYTHONHASHSEED=0, a warm-up, the collector off and both builds copied to
paths of one length, the same build gives the same count run after run
and as its own base.

    python3 bench/launch_instructions.py --base DIR [--n 1000] [--cases C,..] [--faces F,..]

DIR holds an older checkout with its bindings built (`./configure
--no-generator --no-install && ninja bindings`); this checkout's are
build/python. Both must be built for the interpreter that runs this
script (`--python`), best the GPU machine's (3.12): how an int is read
inline (cbs_compact_int) differs before 3.12, where builds of 2026-12-04
and older read none inline (every int took the packer's general path). Needs valgrind and build/fakecuda/libcuda.so.1. Prints a
Markdown table: instructions per launch of each build and the change.
Counts, not timings: what a launch costs on the GPU is the time the
paired runs measure; this says whether cubind's own work changed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import bench  # the kernels' parameter kinds (K16_KINDS); the children take their values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# PTX declaring bench/kernels.cu's small and k16 (types from their
# parameter lists: float * is .u64, int .u32, float .f32).
PTX_TYPES = {"p": ".u64", "i": ".u32", "f": ".f32"}
KERNELS = {"launch_small_kernel": ("small", ["p", "i", "f"]),
           "launch_16_args": ("k16", bench.K16_KINDS)}

# Launches before the counted ones in every child: one-time work (the
# first launch's layout query, pymalloc growing its pools) falls there,
# not between the counted runs.
WARM_LAUNCHES = 300

# One child: CASE's kernel loaded from PTX with the fake driver's layout
# (each parameter at its natural alignment), then COUNT launches.
CHILD = r'''
import ctypes, os, sys
sys.path.insert(0, %(bench)r)
import bench
import cubind.cu as cu, cubind.driver as drv
case, face, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
kname, kinds = %(kernels)r[case]
size = {"p": 8, "i": 4, "f": 4}
offs, off = [], 0
for k in kinds:
    off = (off + size[k] - 1) // size[k] * size[k]
    offs.append(off)
    off += size[k]
params = ", ".join(".param %%s %%s_param_%%d" %% (%(ptx_types)r[k], kname, j)
                   for j, k in enumerate(kinds))
ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry %%s(%%s)\n{ ret; }\n"
       %% (kname, params)).encode() + b"\0"
fake = ctypes.CDLL(os.environ["CUBIND_LIBCUDA"])
fake.fakecuda_set_param_layout.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_size_t),
                                           ctypes.POINTER(ctypes.c_size_t)]
n = len(kinds)
assert fake.fakecuda_set_param_layout(None, kname.encode(), n, (ctypes.c_size_t * n)(*offs),
                                      (ctypes.c_size_t * n)(*[size[k] for k in kinds])) == 0
cu.cuInit(0)
ctx = cu.cuCtxCreate(None, 0, 0)
f = cu.cuModuleGetFunction(cu.cuModuleLoadData(ptx), kname.encode())
ptr = cu.cuMemAlloc(1024)
values = tuple(bench.small_values(ptr) if kname == "small" else bench.k16_values(ptr))
launch = drv.cuLaunchKernel if face == "driver" else cu.cuLaunchKernel
# warm-up (caches, the layout's registry entry, pymalloc's pools), then
# the counted launches with the collector off
for _ in range(%(warm)d):
    launch(f, 1, 1, 1, 32, 1, 1, 0, None, values, None)
import gc, itertools
gc.disable()
# itertools.repeat makes no object per iteration (range's ints above 256
# are allocated, at a cost that follows each build's heap history)
for _ in itertools.repeat(None, count):
    launch(f, 1, 1, 1, 32, 1, 1, 0, None, values, None)
'''


def instructions(pythonpath, case, face, count, fake):
    """Instructions callgrind collected over one child's whole run."""
    code = CHILD % {"bench": os.path.join(ROOT, "bench"), "kernels": KERNELS,
                    "ptx_types": PTX_TYPES, "warm": WARM_LAUNCHES}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CUBIND_LIBCUDA=fake, PYTHONPATH=pythonpath, PYTHONHASHSEED="0")
        r = subprocess.run(["valgrind", "--tool=callgrind",
                            "--callgrind-out-file=" + os.path.join(tmp, "out"),
                            sys.executable, "-c", code, case, face, str(count)],
                           env=env, capture_output=True, text=True, timeout=600)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit("launch_instructions: %s %s under %s failed (exit %d):\n%s"
                         % (case, face, pythonpath, r.returncode, r.stderr[-3000:]))
    return int(m.group(1))


def per_launch(pythonpath, case, face, n, fake):
    """Instructions of one launch: the smaller of two N-launch intervals.

    A child's total is its fixed cost, its launches, and one-off events
    (a pool or a table growing) at launch numbers its layout decides; an
    event only ever adds. Runs of N, 2N and 3N launches give the
    intervals [N, 2N) and [2N, 3N); one event falls in one of them
    only, so the smaller one is the launches' own cost (two events, one
    in each, would need to meet within 2N launches).
    """
    n1, n2, n3 = (instructions(pythonpath, case, face, k * n, fake) for k in (1, 2, 3))
    return min(n2 - n1, n3 - n2) / n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="an older checkout, its bindings built")
    ap.add_argument("--n", type=int, default=1000, help="launches of the shorter run")
    ap.add_argument("--cases", default=",".join(KERNELS), help="comma-separated, of: %(default)s")
    ap.add_argument("--faces", default="driver,cu", help="comma-separated, of: %(default)s")
    args = ap.parse_args(argv)
    cases, faces = args.cases.split(","), args.faces.split(",")
    if not set(cases) <= set(KERNELS) or not set(faces) <= {"driver", "cu"}:
        ap.error("--cases takes %s; --faces driver, cu" % ", ".join(KERNELS))
    fake = os.path.join(ROOT, "build", "fakecuda", "libcuda.so.1")
    this = os.path.join(ROOT, "build", "python")
    base = os.path.join(os.path.abspath(args.base), "build", "python")
    for path in (fake, os.path.join(this, "cubind"), os.path.join(base, "cubind")):
        if not os.path.exists(path):
            raise SystemExit("launch_instructions: %s is missing" % path)
    print("| case | face | this build | base build | change |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as stage:
        # Both builds run from paths of one length (stage/a, stage/b): a
        # path's length moves every later allocation, and with it hash
        # probes and cache lines, by up to 1 % of a launch.
        this, base = (stage_build(src, os.path.join(stage, name))
                      for src, name in ((this, "a"), (base, "b")))
        for case in cases:
            for face in faces:
                a = per_launch(this, case, face, args.n, fake)
                b = per_launch(base, case, face, args.n, fake)
                print("| %s | cubind.%s | %.0f | %.0f | %+.1f %% |" % (case, face, a, b,
                                                                     (a / b - 1) * 100))
    return 0


def stage_build(pythonpath, dest):
    """A copy of PYTHONPATH's cubind package under DEST; DEST to import it from."""
    shutil.copytree(os.path.join(pythonpath, "cubind"), os.path.join(dest, "cubind"))
    return dest


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
