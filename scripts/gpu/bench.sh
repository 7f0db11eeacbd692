#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run bench — the benchmark suite in one command, on the GPU
# machine:
#
#   scripts/gpu-run bench
#
# Builds the bindings from the committed out/ (no libclang), the kernels
# (nvcc → PTX and cubin), c_bench and the floor extension (floor_ext.c;
# with BENCH_PAIRED, also the thin binding, thin_ext.c),
# runs c_bench and bench.py, and writes
# under $OUT (scripts/gpu/common.sh; default build/gpu-out):
#   results.jsonl  every measurement of the run (machine, C, Python), one JSON object a line
#   report.md      the markdown for BENCHMARKS.md (bench/report.py render)
#   log.txt        everything this script printed
#   build.log      the compiler output, only when building cubind failed
# and prints the report. A step that fails (no ninja, no nvcc, a crashing
# implementation) costs its own rows, reported as n/a, not the run.
#
# Overrides (environment): PYTHON (default: python3 on PATH), BENCH_N
# (200000 calls), BENCH_N_LAUNCH (20000 launches), BENCH_REPS (3),
# BENCH_ROUNDS (1: every implementation once; K: K interleaved rounds, best kept),
# BENCH_LAUNCH_TIMING (sync: launch loops include the final synchronize;
# submit: they do not, use with a BENCH_N_LAUNCH that fits the driver's queue),
# BENCH_CASES (comma-separated bench.py cases; default all),
# BENCH_CUBIND_FORM (paired only: plain, the default; tuple: cubind's
# launches take cuda.bindings' (values, ctypes types) form; launch: the
# raising face's launches go through cubind.launch, the drop-in face's
# through cuLaunchKernel with plain values),
# BENCH_THREAD_CALLS (C: 200000 per thread; Python: a quarter of it),
# BENCH_THREAD_LAUNCHES (5000 per thread), CUDA_HOME (/usr/local/cuda),
# BENCH_PAIRED (K: instead of c_bench and bench.py, bench/paired.py in K
# processes, every implementation and C in each; writes paired.jsonl and
# paired.md under $OUT), BENCH_BASE (paired only: DIR, a checkout of an
# older commit relative to the repository root; its bindings are built the
# same way, log in build/bench/base-build.log, and every other paired
# process runs them, for an A/B of the two builds in one run),
# BENCH_RUNTIME (K: instead of everything else, bench/runtime_bench.py in K
# processes: the runtime API's calls in C, cubind.runtime, cubind.cudart and
# cuda.bindings.runtime, and each module's import; writes runtime.jsonl and
# runtime.md under $OUT).
set -u
. "$(dirname "$0")/common.sh"

PY=$py
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
N=${BENCH_N:-200000}
NL=${BENCH_N_LAUNCH:-20000}
REPS=${BENCH_REPS:-3}
TC=${BENCH_THREAD_CALLS:-200000}
TL=${BENCH_THREAD_LAUNCHES:-5000}
LT=${BENCH_LAUNCH_TIMING:-sync}
SUBMIT=; [ "$LT" = submit ] && SUBMIT=1
W=build/bench
mkdir -p "$OUT" "$W"
rm -f "$W/c.jsonl" "$W/py.jsonl" "$W/machine.jsonl"
exec > >(tee "$OUT/log.txt") 2>&1
tee_pid=$!

command_line="scripts/gpu-run bench"
for v in BENCH_N BENCH_N_LAUNCH BENCH_REPS BENCH_ROUNDS BENCH_PAIRED BENCH_RUNTIME BENCH_BASE BENCH_LAUNCH_TIMING BENCH_CASES BENCH_CUBIND_FORM BENCH_THREAD_CALLS BENCH_THREAD_LAUNCHES PYTHON; do
    [ -n "${!v:-}" ] && command_line="$v=${!v} $command_line"
done
step() { echo; echo "== $* ($(date +%T))"; }
# _bench_floor (bench/floor_ext.c): do-nothing extension functions, each
# case's floor; compiled as cubind's extensions are (-O2, -fPIC).
build_floor_ext() {
    local floor_ext
    floor_ext=$W/_bench_floor$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    if ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Iruntime/include \
            -I"$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
            bench/floor_ext.c -o "$floor_ext"; then
        echo "built $floor_ext"
    else
        echo "gpu-run bench: compiling bench/floor_ext.c failed; the floors will be n/a"
    fi
}
# _bench_thin (bench/thin_ext.c): the thin binding of the paired runs,
# compiled the same way.
build_thin_ext() {
    local thin_ext
    thin_ext=$W/_bench_thin$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    if ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$CUDA_HOME/include" \
            -I"$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
            bench/thin_ext.c -o "$thin_ext"; then
        echo "built $thin_ext"
    else
        echo "gpu-run bench: compiling bench/thin_ext.c failed; the thin rows will be n/a"
    fi
}
start=$(date +%s)

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
"$PY" bench/report.py machine --command "$command_line" > "$W/machine.jsonl"
cat "$W/machine.jsonl"

step "build the bindings (committed out/, no generator)"
# The whole compiler output goes to build/bench/build.log; the log keeps its tail.
if gpu_build_bindings > "$W/build.log" 2>&1; then
    tail -n 5 "$W/build.log"
    echo "bindings built: $(ls build/python/cubind/)"
else
    grep -m 20 -e 'error' -e 'configure:' "$W/build.log" || tail -n 40 "$W/build.log"
    cp "$W/build.log" "$OUT/build.log"
    echo "gpu-run bench: building cubind failed (all of it in $OUT/build.log); its rows will be n/a"
fi

step "kernels (nvcc)"
NVCC=$CUDA_HOME/bin/nvcc
[ -x "$NVCC" ] || NVCC=$(command -v nvcc || echo nvcc)
images=()
if "$NVCC" -ptx -arch=sm_90 bench/kernels.cu -o "$W/kernels.ptx"; then
    images+=(--image "$W/kernels.ptx")
else
    echo "gpu-run bench: nvcc -ptx failed"
fi
if "$NVCC" -cubin -arch=sm_90 bench/kernels.cu -o "$W/kernels.cubin"; then
    images+=(--image "$W/kernels.cubin")
else
    echo "gpu-run bench: nvcc -cubin failed"
fi
"$NVCC" --version | tail -n 2

if [ -n "${BENCH_RUNTIME:-}" ]; then
    step "c_runtime as a library, runtime_bench.py"
    if ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -fPIC -shared -I"$CUDA_HOME/include" \
            bench/c_runtime.c -o "$W/libc_runtime.so" -ldl; then
        PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}" timeout 540 "$PY" bench/runtime_bench.py run \
            --c-lib "$W/libc_runtime.so" "${images[@]}" --processes "$BENCH_RUNTIME" --reps "$REPS" \
            --n "$N" --n-launch "$NL" ${BENCH_CASES:+--cases "$BENCH_CASES"} \
            --out "$OUT/runtime.jsonl" > "$OUT/runtime.md" ||
            echo "gpu-run bench: runtime_bench.py exited with $?"
        cat "$OUT/runtime.md"
    else
        echo "gpu-run bench: compiling c_runtime.c failed"
    fi
    echo "gpu-run bench: $(($(date +%s) - start)) s; results in $OUT/ (runtime.jsonl, runtime.md, log.txt)"
    exec >&- 2>&-
    exit 0
fi

if [ -n "${BENCH_PAIRED:-}" ]; then
    step "floor and thin extensions"
    build_floor_ext
    build_thin_ext
    # base_args stays empty unless the base build succeeded: paired.py then
    # runs this build alone, and the report has no A/B section.
    base_args=()
    if [ -n "${BENCH_BASE:-}" ]; then
        step "the base build's bindings ($BENCH_BASE, committed out/, no generator)"
        if (cd "$BENCH_BASE" && gpu_build_bindings) > "$W/base-build.log" 2>&1; then
            tail -n 5 "$W/base-build.log"
            base_args=(--base "$(cd "$BENCH_BASE" && pwd)/build/python")
            echo "base bindings built: $(ls "$BENCH_BASE/build/python/cubind/")"
        else
            tail -n 40 "$W/base-build.log"
            cp "$W/base-build.log" "$OUT/base-build.log"
            echo "gpu-run bench: building the base ($BENCH_BASE) failed (all of it in" \
                "$OUT/base-build.log); no A/B, this build alone"
        fi
    fi
    step "c_bench as a library, paired.py"
    if ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -DCB_LIBRARY -fPIC -shared -I"$CUDA_HOME/include" \
            bench/c_bench.c -o "$W/libc_bench.so" -ldl; then
        PYTHONPATH="$PWD/build/python:$PWD/$W${PYTHONPATH:+:$PYTHONPATH}" timeout 540 "$PY" bench/paired.py run \
            --c-lib "$W/libc_bench.so" "${images[@]}" --processes "$BENCH_PAIRED" --reps "$REPS" \
            --n "$N" --n-launch "$NL" --launch-timing "$LT" ${BENCH_CASES:+--cases "$BENCH_CASES"} \
            ${BENCH_CUBIND_FORM:+--cubind-form "$BENCH_CUBIND_FORM"} "${base_args[@]}" \
            --machine "$W/machine.jsonl" --out "$OUT/paired.jsonl" > "$OUT/paired.md" ||
            echo "gpu-run bench: paired.py exited with $?"
        cat "$OUT/paired.md"
    else
        echo "gpu-run bench: compiling c_bench.c as a library failed"
    fi
    echo "gpu-run bench: $(($(date +%s) - start)) s; results in $OUT/ (paired.jsonl, paired.md, log.txt)"
    exec >&- 2>&-
    exit 0
fi

[ -n "${BENCH_BASE:-}" ] && echo "gpu-run bench: BENCH_BASE is for paired runs (BENCH_PAIRED); ignored"

step "c_bench"
if ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -I"$CUDA_HOME/include" bench/c_bench.c \
        -o "$W/c_bench" -ldl -pthread; then
    timeout 150 "$W/c_bench" "${images[@]}" --n "$N" --n-launch "$NL" --reps "$REPS" \
        --thread-calls "$TC" --thread-launches "$TL" ${SUBMIT:+--launch-submit} \
        --cpus "$("$PY" bench/ft_threads.py --cpus)" > "$W/c.jsonl" ||
        echo "gpu-run bench: c_bench exited with $?"
    cat "$W/c.jsonl"
else
    echo "gpu-run bench: compiling c_bench failed"
fi

step "floor extension"
build_floor_ext

step "bench.py"
# bench.py's own budget leaves room for the report inside the device's
# 10-minute limit; the outer timeout is a last resort (its records are
# written as they come, so a cut-short run still reports what it measured).
budget=$((480 - ($(date +%s) - start)))
[ "$budget" -lt 60 ] && budget=60
PYTHONPATH="$PWD/build/python:$PWD/$W${PYTHONPATH:+:$PYTHONPATH}" timeout $((budget + 30)) "$PY" bench/bench.py \
    --out "$W/py.jsonl" "${images[@]}" --n "$N" --n-launch "$NL" --reps "$REPS" \
    --thread-calls "$((TC / 4))" --budget "$budget" --child-timeout 200 --launch-timing "$LT" ${BENCH_CASES:+--cases "$BENCH_CASES"} ||
    echo "gpu-run bench: bench.py exited with $?"

step "c_bench again"
# A second C run after the Python ones: the C floor keeps the faster of the
# two (bench.py's best_of_rounds), as bench.py does across its rounds.
if [ -x "$W/c_bench" ] && timeout 100 "$W/c_bench" "${images[@]}" --n "$N" --n-launch "$NL" \
        --reps "$REPS" --no-threads ${SUBMIT:+--launch-submit} > "$W/c2.jsonl"; then
    "$PY" -c 'import json, sys
sys.path.insert(0, "bench")
from bench import best_of_rounds
rounds = [[json.loads(l) for l in open(f) if l.strip()] for f in sys.argv[1:]]
for r in best_of_rounds(rounds):
    print(json.dumps(r))' "$W/c.jsonl" "$W/c2.jsonl" > "$W/c-best.jsonl" && mv "$W/c-best.jsonl" "$W/c.jsonl"
fi

step "report"
cat "$W/machine.jsonl" "$W/c.jsonl" "$W/py.jsonl" 2>/dev/null > "$OUT/results.jsonl"
"$PY" bench/report.py render "$OUT/results.jsonl" -o "$OUT/report.md" &&
    cat "$OUT/report.md"
echo
echo "gpu-run bench: $(($(date +%s) - start)) s; results in $OUT/ (results.jsonl, report.md, log.txt)"
# Let tee write the last of the log before the device collects $OUT.
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null || true
