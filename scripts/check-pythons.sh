#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/check-pythons.sh PYTHON... — the generated bindings against other
# interpreters than CI's (docs/design.md: CPython 3.10 to 3.14, free-threaded or
# not): for each PYTHON, builds the bindings from the committed out/ and the
# runtime with -Werror in a scratch copy of the tracked tree (the working
# tree's versions of tracked files), then runs scripts/smoke_bindings.py
# with that interpreter against the test-only fake driver. Needs no pytest
# in those interpreters. Not part of CI (its interpreters are 3.11 and
# 3.13t); run it by hand, e.g. scripts/check-pythons.sh python3.10 python3.12
# Exit status: the number of interpreters that failed.
set -u
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 PYTHON..." >&2; exit 2; }
failed=0
for py in "$@"; do
    scratch=$(mktemp -d)
    git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$scratch"
    if (cd "$scratch" && ./configure --no-generator --no-install --python "$py" &&
            ninja bindings build/fakecuda/libcuda.so.1) > "$scratch/build.log" 2>&1 &&
        CUBIND_LIBCUDA="$scratch/build/fakecuda/libcuda.so.1" PYTHONPATH="$scratch/build/python" \
            "$py" scripts/smoke_bindings.py; then
        echo "check-pythons: $py: ok"
    else
        tail -n 20 "$scratch/build.log" 2>/dev/null
        echo "check-pythons: $py: FAILED"
        failed=$((failed + 1))
    fi
    rm -rf "$scratch"
done
exit "$failed"
