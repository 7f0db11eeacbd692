#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run examples — on the GPU machine: builds the bindings the way
# the README's first command does (./configure --user, committed out/) and
# runs every script of examples/ on the real driver, each checking its own
# results. Log: $OUT/examples-gpu.log (also printed); exit status the
# number of examples that failed.
set -u
. "$(dirname "$0")/common.sh"
log=$OUT/examples-gpu.log
(
    failed=0
    gpu_banner
    echo "cubind commit $(gpu_commit)"
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
) > "$log" 2>&1
status=$?
cat "$log"
exit "$status"
