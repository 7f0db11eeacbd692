#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run tests — builds the bindings from the committed out/ on the
# GPU machine (no libclang there) and runs the GPU tests against cubind and
# against cuda.bindings, the shutdown race (cubind only) and the scenarios
# through the raising face. Log: $OUT/gpu-tests.log.
set -u
. "$(dirname "$0")/common.sh"
{
    gpu_banner
    echo "cubind commit $(gpu_commit), source digest $(gpu_digest)"
    "$py" -c 'import sys, cuda.bindings; print("python", sys.version.split()[0], "cuda-bindings", cuda.bindings.__version__)'
    gpu_build_bindings || exit 1
    for impl in cubind cuda.bindings; do
        echo "### CUBIND_GPU_IMPL=$impl"
        CUBIND_GPU_IMPL=$impl PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider tests/gpu \
            --ignore tests/gpu/test_shutdown_gpu.py
    done
    # issue 4's shutdown race on the real driver (cubind only), with its summary line (-s)
    echo "### CUBIND_GPU_IMPL=cubind (tests/gpu/test_shutdown_gpu.py, ${CUBIND_SHUTDOWN_RUNS:-500} runs)"
    PYTHONPATH=build/python "$py" -m pytest -v -s -p no:cacheprovider tests/gpu/test_shutdown_gpu.py
    # the raising face runs the issue-3 scenarios too (the other files are tuple-face only)
    echo "### CUBIND_GPU_IMPL=cubind.cu (tests/gpu/test_scenarios_gpu.py)"
    CUBIND_GPU_IMPL=cubind.cu PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider tests/gpu/test_scenarios_gpu.py
} 2>&1 | tee "$OUT/gpu-tests.log"
