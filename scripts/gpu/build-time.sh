#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run build-time [REPEAT] [BASE] — how long a clean build of
# the bindings takes on the GPU machine's cores: scripts/build-time.sh at
# -j 1, 2, 4, 8 and the number of cores, REPEAT runs each (default 3),
# configured as gpu_build_bindings does ($gpu_configure_flags of
# common.sh: `--user`, which installs what is missing, fails on a machine
# that reaches no package archive), for $py. With
# BASE (a directory holding an older tree, e.g. `git archive b1ce9ee` in
# .device/base), that tree is timed the same way, alternating
# with this one for each -j, so both see the same machine. Writes
# $OUT/build-time.log and each run's .ninja_log under
# $OUT/build-time/{this,base}/; BENCHMARKS.md ("Build time") records its
# summary lines.
set -eu
repeat=${1:-3}
base=${2:-}
. "$(dirname "$0")/common.sh"
[ -z "$base" ] || [ -d "$base" ] || { echo "gpu-run build-time: no directory $base" >&2; exit 2; }
log=$OUT/build-time.log
{
    gpu_banner
    echo "# commit $(gpu_commit), $py${base:+, base $base}"
    for j in 1 2 4 8 "$(nproc)"; do
        echo "## this tree, -j $j"
        sh scripts/build-time.sh -j "$j" -r "$repeat" -c "$gpu_configure_flags --python $py" -k "$OUT/build-time/this"
        if [ -n "$base" ]; then
            echo "## base $base, -j $j"
            sh scripts/build-time.sh -t "$base" -j "$j" -r "$repeat" -c "$gpu_configure_flags --python $py" \
                -k "$OUT/build-time/base"
        fi
    done
} 2>&1 | tee "$log"
