#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run releases CARRY — on the GPU machine: bindings generated
# from the 11.8 and 12.4 headers (CARRY/<release>/out, from
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
carry=${1:?usage: scripts/gpu-run releases CARRY (CARRY/<release>/out and include)}
. "$(dirname "$0")/common.sh"
{
    gpu_banner
    echo "cubind commit $(gpu_commit), source digest $(gpu_digest)"
    gpu_build_bindings > /dev/null || exit 1
    for rel in 11.8 12.4; do
        echo "### bindings generated from CUDA $rel's cuda.h"
        cat "$carry/$rel/out/unsupported.txt"
        sh scripts/gpu/build-release.sh "$carry/$rel/out" "$carry/$rel/include" "build/cuda$rel" || exit 1
        PYTHONPATH="build/cuda$rel" "$py" -m pytest -v -p no:cacheprovider \
            tests/gpu/test_releases_gpu.py tests/gpu/test_basic_gpu.py
    done
    echo "### bindings generated from the default cuda.h (committed out/)"
    PYTHONPATH=build/python "$py" -m pytest -v -p no:cacheprovider \
        tests/gpu/test_releases_gpu.py tests/gpu/test_basic_gpu.py
} > "$OUT/releases-gpu.log" 2>&1
grep -E "^###|^# supported|passed|failed|error" "$OUT/releases-gpu.log"
