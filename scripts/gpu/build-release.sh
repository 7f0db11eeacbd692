#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu/build-release.sh OUT_DIR INCLUDE_DIR DEST — compiles bindings
# that were generated from another CUDA release's header (OUT_DIR, from
# `cubind generate`) against that release's headers (INCLUDE_DIR) for the
# python3 on PATH, into DEST/cubind/ beside a copy of the package and the
# runtime from build/python. Run from the repository root by the suites
# `releases` and `all` of scripts/gpu-run, to run the scenarios with older
# bindings on a newer driver; not a suite itself.
set -eu
out=$1 inc=$2 dest=$3
py=$(command -v python3)
pyinc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p "$dest/cubind"
cp build/python/cubind/__init__.py build/python/cubind/_version.py build/python/cubind/_runtime"$suffix" "$dest/cubind/"
# the driver module's translation units: driver.c and, when its rules
# split it (a `parts` rule), driver_part1.c ... (docs/ARCHITECTURE.md)
set -- "$out/driver.c"
for unit in "$out"/driver_part*.c; do
    [ -f "$unit" ] && set -- "$@" "$unit"
done
gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
    -I"$pyinc" -Iruntime/include -Iruntime/module -Iruntime/interop -I"$inc" \
    "$@" runtime/module/*.c \
    -o "$dest/cubind/driver$suffix" -ldl -pthread
echo "built $dest/cubind/driver$suffix from $out against $inc"
