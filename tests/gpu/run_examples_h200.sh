#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run_examples_h200.sh — on the GPU machine: builds the bindings
# the way the README's first command does (./configure --user, committed
# out/) and runs every script of examples/ on the real driver, each
# checking its own results. Log: $OUT/examples-gpu.log; exit status the
# number of examples that failed.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cubind-gpu-out}
mkdir -p "$OUT"
log=$OUT/examples-gpu.log
py=$(command -v python3)
failed=0
{
    echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
    echo "cubind commit ${CUBIND_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    ./configure --user --no-install --python "$py" > /dev/null && ninja > /dev/null || exit 1
    export PYTHONPATH="$PWD/build/python"
    unset CUBIND_LIBCUDA
    for ex in vector_add_drop_in.py launch_raising.py array_interop.py graph_host_function.py \
              "capsule_extension/build.py $(mktemp -d)"; do
        echo "### examples/$ex"
        # shellcheck disable=SC2086
        if (cd examples && "$py" $ex); then echo "ok"; else echo "FAILED"; failed=$((failed + 1)); fi
    done
    echo "examples failed: $failed"
    exit "$failed"
} > "$log" 2>&1
status=$?
cat "$log"
exit "$status"
