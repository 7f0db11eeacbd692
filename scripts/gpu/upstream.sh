#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run upstream DIR — cuda-python's own tuple-API driver tests
# (NVIDIA's test_cuda.py and legacy_api/test_legacy_kernelParams.py, kept
# in DIR outside the repository, never committed or edited) run against
# cuda.bindings.driver and against cubind.driver (the module redirected by
# tests/gpu/upstream_conftest.py), then a summary: which tests pass on each
# and every test that passes on cuda.bindings but not on cubind.
# cuda.bindings.runtime stays NVIDIA's here; `upstream-runtime` redirects both.
# Builds the bindings first unless build/python holds them.
# Logs and JUnit XML go to $OUT (upstream.log, upstream-*.xml).
set -u
src=${1:?usage: scripts/gpu-run upstream DIR (the upstream test files)}
. "$(dirname "$0")/common.sh"
gpu_upstream_prepare "$src" test_cuda.py
files="test_cuda.py"
[ -f "$work/legacy_api/test_legacy_kernelParams.py" ] && files="$files legacy_api/test_legacy_kernelParams.py"
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    "$py" -c 'import sys, cuda.bindings; print("python", sys.version.split()[0], "cuda-bindings", cuda.bindings.__version__)'
    echo "upstream files: $files ($(cd "$work" && sha256sum $files | cut -c1-12 | tr '\n' ' '))"
    gpu_upstream_pytest "$work" upstream $files
} 2>&1 | tee "$OUT/upstream.log"
