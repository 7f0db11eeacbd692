#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run conversions — the argument-conversion differential
# (tools/compare_conversions.py) on the GPU machine: builds the bindings from
# the committed out/ (unless build/python holds them), records how
# cuda.bindings converts the same probe values as cubind (driver, runtime,
# nvrtc, nvjitlink, nvvm, nvfatbin: every field, handle and enum
# constructor, the runtime's makers and dim3, the allowlisted functions on
# device 0), then cubind, both with both families importable (each record
# probes the other family's handles and structs too), and judges every
# difference by docs/compatibility.md's table, by module and parameter kind,
# function probes by outcome and value.
# Under $OUT: conversions-cuda-bindings.json and conversions-cubind.json
# (the records; the first is what tests/data/ keeps for the CPU replay),
# conversions-gpu.log (the table, also printed) and
# conversions-unexplained.txt (every unexplained difference). Exit status:
# 1 when a difference is unexplained (or a record failed).
set -u
. "$(dirname "$0")/common.sh"
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    [ -f build/python/cubind/__init__.py ] || gpu_build_bindings || exit 1
    "$py" -c 'import importlib.metadata as m
for p in ("cuda-bindings", "numpy"):
    try:
        print(p, m.version(p))
    except m.PackageNotFoundError:
        print(p, "not installed")'
    "$py" -c 'import cuda.bindings.driver, cuda.bindings.runtime' ||
        { echo "cuda.bindings is not importable: nothing to compare with"; exit 1; }
    for impl in cuda.bindings cubind; do
        echo "### record: $impl"
        PYTHONPATH=build/python "$py" tools/compare_conversions.py --impl "$impl" \
            --out "$OUT/conversions-$impl.json" || exit 1
    done
    echo "### cuda.bindings (first) against cubind (second), judged by docs/compatibility.md"
    "$py" tools/compare_conversions.py --compare "$OUT/conversions-cuda.bindings.json" \
        "$OUT/conversions-cubind.json" --explain docs/compatibility.md
} > "$OUT/conversions-gpu.log" 2>&1
status=$?
[ -f "$OUT/conversions-cuda.bindings.json" ] && mv "$OUT/conversions-cuda.bindings.json" "$OUT/conversions-cuda-bindings.json"
if [ -f "$OUT/conversions-cuda-bindings.json" ] && [ -f "$OUT/conversions-cubind.json" ]; then
    "$py" tools/compare_conversions.py --compare "$OUT/conversions-cuda-bindings.json" \
        "$OUT/conversions-cubind.json" --explain docs/compatibility.md -v \
        > "$OUT/conversions-unexplained.txt" 2>&1
fi
cat "$OUT/conversions-gpu.log"
exit "$status"
