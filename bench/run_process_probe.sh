#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run_process_probe.sh — how much one call's cost moves between processes on
# the GPU machine: c_bench (calls only) and bench/process_probe.py, each run
# in K fresh processes (default 8), each process pinned to its own CPU.
# From the repository root on the GPU machine: sh bench/run_process_probe.sh [K]
set -eu
K=${1:-8}
W=build/bench
mkdir -p "$W"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
(./configure --no-generator --python python3 --no-install && ninja bindings) > "$W/probe-build.log" 2>&1
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
    PYTHONPATH=build/python taskset -c "$i" python3 bench/process_probe.py
    i=$((i + 1))
done
