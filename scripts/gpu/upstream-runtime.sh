#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run upstream-runtime DIR — cuda-python's own runtime and
# interoperability tests (NVIDIA's test_cudart.py, legacy_api/
# test_legacy_cudart.py, test_legacy_interoperability.py and
# test_legacy_kernelParams.py, kept in DIR outside the repository, never
# committed or edited) run against cuda.bindings and against cubind with
# BOTH cuda.bindings.driver and cuda.bindings.runtime redirected to
# cubind.driver and cubind.runtime (tests/gpu/upstream_conftest.py,
# CUBIND_UPSTREAM_MODULES=driver,runtime), then the summary of `upstream`:
# which tests pass on each, and every test that passes on cuda.bindings but
# not on cubind. Builds the bindings first unless build/python holds them.
# Logs and JUnit XML go to $OUT (upstream-runtime.log,
# upstream-runtime-*.xml).
set -u
src=${1:?usage: scripts/gpu-run upstream-runtime DIR (the upstream test files)}
. "$(dirname "$0")/common.sh"
gpu_upstream_prepare "$src" test_cudart.py
files=""
for f in test_cudart.py legacy_api/test_legacy_cudart.py legacy_api/test_legacy_interoperability.py \
         legacy_api/test_legacy_kernelParams.py; do
    [ -f "$work/$f" ] && files="$files $f"
done
export CUBIND_UPSTREAM_MODULES=driver,runtime
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    "$py" -c 'import sys, cuda.bindings; print("python", sys.version.split()[0], "cuda-bindings", cuda.bindings.__version__)'
    echo "upstream files:$files ($(cd "$work" && sha256sum $files | cut -c1-12 | tr '\n' ' '))"
    echo "redirected on cubind: $CUBIND_UPSTREAM_MODULES"
    gpu_upstream_pytest "$work" upstream-runtime $files
} 2>&1 | tee "$OUT/upstream-runtime.log"
