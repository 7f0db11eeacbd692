#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run_releases_h200.sh CARRY — on the GPU machine: bindings
# generated from the 11.8 and 12.4 headers (CARRY/<release>/out, from
# `build/cubind generate` on the build machine, with that release's headers
# in CARRY/<release>/include; the GPU machine has no libclang) and from the
# default 13.0 header (the committed out/), each run on this driver through
# tests/gpu/test_releases_gpu.py and test_basic_gpu.py.
# Log: $OUT/releases-gpu.log.
#
# Preparing CARRY on the build machine (an ignored directory, carried with
# the device tool's `carry`):
#   for r in 11.8 12.4; do
#       inc=$(scripts/fetch-cuda-headers.sh $r | cut -d' ' -f2)
#       mkdir -p CARRY/$r/out && build/cubind generate --header $inc/cuda.h --out CARRY/$r/out
#       cp -r $inc CARRY/$r/include
#   done
set -u
cd "$(dirname "$0")/../.."
carry=$1
OUT=${OUT:-/tmp/cubind-gpu-out}
mkdir -p "$OUT"
py=$(command -v python3)
{
    echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
    # CUBIND_COMMIT names the code when the GPU machine's copy has stale git metadata
    echo "cubind commit ${CUBIND_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, source digest $(python3 bench/report.py digest)"
    ./configure --no-generator --no-install --python "$py" > /dev/null && ninja bindings > /dev/null || exit 1
    for rel in 11.8 12.4; do
        echo "### bindings generated from CUDA $rel's cuda.h"
        cat "$carry/$rel/out/unsupported.txt"
        sh tests/gpu/run_release.sh "$carry/$rel/out" "$carry/$rel/include" "build/cuda$rel" || exit 1
        PYTHONPATH="build/cuda$rel" "$py" -m pytest -v -p no:cacheprovider \
            tests/gpu/test_releases_gpu.py tests/gpu/test_basic_gpu.py
    done
    echo "### bindings generated from the default cuda.h (committed out/)"
    PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider \
        tests/gpu/test_releases_gpu.py tests/gpu/test_basic_gpu.py
} > "$OUT/releases-gpu.log" 2>&1
grep -E "^###|^# supported|passed|failed|error" "$OUT/releases-gpu.log"
