#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run_h200.sh — builds the bindings from the committed out/ on the
# GPU machine (no libclang there) and runs the GPU tests against cubind and
# against cuda.bindings. Results go to $OUT (the device tool's output dir).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cubind-gpu-out}
mkdir -p "$OUT"
py=$(command -v python3)
{
    echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
    # CUBIND_COMMIT names the code when the GPU machine's copy has stale git metadata
    echo "cubind commit ${CUBIND_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, source digest $(python3 bench/report.py digest)"
    "$py" -c 'import sys, cuda.bindings; print("python", sys.version.split()[0], "cuda-bindings", cuda.bindings.__version__)'
    ./configure --no-generator --no-install --python "$py" && ninja bindings || exit 1
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
