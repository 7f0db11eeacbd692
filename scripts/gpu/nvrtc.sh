#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run nvrtc [UPSTREAM_DIR] — issue 29 on the GPU machine:
# builds the bindings from the committed out/ (no libclang there) unless
# build/python holds them, then
#   - tests/gpu/test_nvrtc_gpu.py against cubind, cubind.cu and cuda.bindings
#     (source -> NVRTC -> driver launch -> read back; the same through
#     nvJitLink from PTX and LTO-IR);
#   - examples/nvrtc_launch.py;
#   - cuda-python's own test_nvrtc.py / test_nvjitlink.py against cubind's
#     modules when UPSTREAM_DIR (a copy kept outside the repository, with
#     its run.sh and shim/) is given;
#   - bench/nvrtc_bench.py (import ratio against cuda.bindings.nvrtc, the
#     per-call overhead above libnvrtc).
# Everything goes to $OUT/nvrtc-gpu.log.
set -u
. "$(dirname "$0")/common.sh"
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    [ -f build/python/cubind/__init__.py ] || gpu_build_bindings || exit 1
    PYTHONPATH=build/python "$py" -c 'import cubind.nvrtc as n, cubind.nvjitlink as j; print("nvrtc", n._library_status(), "nvjitlink", j._library_status())'
    for impl in cubind cubind.cu cuda.bindings; do
        echo "### CUBIND_GPU_IMPL=$impl tests/gpu/test_nvrtc_gpu.py"
        CUBIND_GPU_IMPL=$impl PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider tests/gpu/test_nvrtc_gpu.py
    done
    echo "### examples/nvrtc_launch.py"
    PYTHONPATH=build/python "$py" examples/nvrtc_launch.py
    if [ -n "${1:-}" ]; then
        echo "### cuda-python's test_nvrtc.py and test_nvjitlink.py against cubind ($1)"
        sh "$1/run.sh" "$PWD/build/python"
    fi
    echo "### bench/nvrtc_bench.py"
    PYTHONPATH=build/python "$py" bench/nvrtc_bench.py --runs 31
} 2>&1 | tee "$OUT/nvrtc-gpu.log"
