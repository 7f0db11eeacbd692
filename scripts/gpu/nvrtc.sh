#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run nvrtc [UPSTREAM_DIR] — issue 29 on the GPU machine:
# builds the bindings from the committed out/ (no libclang there) unless
# build/python holds them, then
#   - tests/gpu/test_nvrtc_gpu.py against cubind, cubind.cu and cuda.bindings
#     (source -> NVRTC -> driver launch -> read back; the same through
#     nvJitLink from PTX and LTO-IR);
#   - tests/gpu/test_nvml_gpu.py: cubind.nvml's device queries, beside
#     cuda.bindings.nvml's answers where it is importable;
#   - examples/nvrtc_launch.py;
#   - cuda-python's own test_nvrtc.py / test_nvjitlink.py / test_nvvm.py /
#     test_nvfatbin.py / test_cufile.py / nvml/ (a folder of tests)
#     (kept in UPSTREAM_DIR, outside the repository, never edited), when
#     given, on cuda.bindings and on cubind's modules (redirected by
#     tests/gpu/upstream_library_conftest.py), then the summary of
#     tests/gpu/upstream_summary.py;
#   - bench/nvrtc_bench.py (import ratio against cuda.bindings.nvrtc, the
#     per-call overhead above libnvrtc);
#   - bench/nvml_bench.py (import time and the per-call cost of
#     device_get_count_v2 and device_get_memory_info_v2 beside
#     cuda.bindings.nvml and ctypes).
# Everything goes to $OUT/nvrtc-gpu.log.
set -u
. "$(dirname "$0")/common.sh"

# gpu_upstream_library_tests DIR: DIR's test_nvrtc.py, test_nvjitlink.py,
# test_nvvm.py, test_nvfatbin.py, test_cufile.py and nvml/ (those present),
# copied to a scratch directory beside tests/gpu/upstream_library_conftest.py,
# on cuda.bindings and then on cubind; JUnit XML in $OUT.
gpu_upstream_library_tests() {
    [ -f "$1/test_nvrtc.py" ] || { echo "no test_nvrtc.py in $1"; return 1; }
    work=$(mktemp -d)
    files=""
    for f in test_nvrtc.py test_nvjitlink.py test_nvvm.py test_nvfatbin.py test_cufile.py; do
        [ -f "$1/$f" ] && cp "$1/$f" "$work/" && files="$files $f"
    done
    nvml=""
    if [ -d "$1/nvml" ]; then  # cuda-python's tests/nvml/, with its conftest.py
        cp -r "$1/nvml" "$work/nvml" && nvml=nvml
    fi
    # the helpers nvml/conftest.py imports (its architecture gate)
    if [ -d "$1/cuda_python_test_helpers" ]; then
        cp -r "$1/cuda_python_test_helpers" "$work/"
    fi
    cp tests/gpu/upstream_library_conftest.py "$work/conftest.py"
    cp tests/gpu/redirect_bindings.py "$work/"
    echo "### cuda-python's$files $nvml on cuda.bindings and on cubind ($1: $(cd "$work" && find $files $nvml -name '*.py' -type f | sort | xargs sha256sum | cut -c1-12 | tr '\n' ' '))"
    gpu_upstream_pytest "$work" upstream-library $files
    # nvml/ apart: its package imports gate the whole folder, and a module
    # the gate needs that cubind lacks must not hide the other libraries
    if [ -n "$nvml" ]; then
        echo "### cuda-python's nvml/ on cuda.bindings and on cubind"
        gpu_upstream_pytest "$work" upstream-nvml nvml
    fi
    rm -rf "$work"
}
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    [ -f build/python/cubind/__init__.py ] || gpu_build_bindings || exit 1
    PYTHONPATH=build/python "$py" -c 'import cubind.nvrtc as n, cubind.nvjitlink as j, cubind.nvvm as v; print("nvrtc", n._library_status(), "nvjitlink", j._library_status(), "nvvm", v._library_status())'
    for m in nvfatbin cufile nvml; do  # built where the toolkit has their headers
        PYTHONPATH=build/python "$py" -c "import cubind.$m as m; print('$m', m._library_status())" || echo "$m: not built"
    done
    for impl in cubind cubind.cu cuda.bindings; do
        echo "### CUBIND_GPU_IMPL=$impl tests/gpu/test_nvrtc_gpu.py"
        CUBIND_GPU_IMPL=$impl PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider tests/gpu/test_nvrtc_gpu.py
    done
    echo "### tests/gpu/test_nvml_gpu.py"
    # -rP: the fields whose kind differs from cuda.bindings', printed by a passing test
    PYTHONPATH=build/python "$py" -m pytest -v -rP -p no:cacheprovider tests/gpu/test_nvml_gpu.py
    echo "### examples/nvrtc_launch.py"
    PYTHONPATH=build/python "$py" examples/nvrtc_launch.py
    if [ -n "${1:-}" ]; then
        gpu_upstream_library_tests "$1"
    fi
    echo "### bench/nvrtc_bench.py"
    PYTHONPATH=build/python "$py" bench/nvrtc_bench.py --runs 31
    echo "### bench/nvml_bench.py"
    PYTHONPATH=build/python "$py" bench/nvml_bench.py --runs 31
} 2>&1 | tee "$OUT/nvrtc-gpu.log"
