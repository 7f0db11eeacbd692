#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run process-probe [K] — how much one call's cost moves between
# processes on the GPU machine: c_bench (calls only) and
# bench/process_probe.py, each run in K fresh processes (default 8), each
# process pinned to its own CPU. Prints to stdout.
set -eu
K=${1:-8}
. "$(dirname "$0")/common.sh"
W=build/bench
mkdir -p "$W"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
gpu_build_bindings > "$W/probe-build.log" 2>&1
${CC:-gcc} -std=c11 -O2 -Wall -Wextra -I"$CUDA_HOME/include" bench/c_bench.c -o "$W/c_bench" -ldl -pthread
i=1
while [ "$i" -le "$K" ]; do
    printf 'process %d, CPU %d: ' "$i" "$i"
    taskset -c "$i" "$W/c_bench" --n 200000 --reps 5 --no-threads | python3 -c '
import json, sys
cases = ("device_get", "device_get_attribute", "ctx_set_current")
ns = {r["case"]: r.get("ns") for r in map(json.loads, sys.stdin) if r.get("case") in cases}
print("C: " + " | ".join("%s %.1f" % (c, ns[c]) for c in cases if ns.get(c) is not None))'
    printf 'process %d, CPU %d: ' "$i" "$i"
    PYTHONPATH=build/python taskset -c "$i" "$py" bench/process_probe.py
    i=$((i + 1))
done
