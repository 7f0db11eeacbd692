#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/check-pythons.sh [PYTHON...] — the generated bindings against other
# interpreters than CI's (docs/design.md, "The generated modules", free-threaded or
# not): for each PYTHON, builds the bindings from the committed out/ and the
# runtime with -Werror in a scratch copy of the tracked tree (the working
# tree's versions of tracked files), then runs scripts/smoke_bindings.py
# with that interpreter against the test-only fake driver. Needs no pytest
# in those interpreters.
#
# A free-threaded PYTHON that has pytest (those scripts/build-python-ft.sh
# builds) then also runs the free-threading tests (FT_TESTS below) with the
# GIL off (PYTHON_GIL=0), after checking that importing the bindings left
# it off.
#
# With no PYTHON: the free-threaded interpreters newer than CI's 3.13t that
# scripts/build-python-ft.sh --version 3.X has cached in $CUBIND_CACHE
# (python3.14t, python3.15t); each one not cached is reported and skipped.
#
# Not part of CI (its interpreters are 3.11 and 3.13t); run it by hand, e.g.
# scripts/check-pythons.sh python3.10 python3.12, or scripts/check-pythons.sh
# Exit status: the number of interpreters that failed.
set -u
cd "$(dirname "$0")/.." || exit 2
CACHE=${CUBIND_CACHE:-$HOME/.cache/cubind}
# The free-threaded interpreters the no-argument form looks for.
CACHED_FT_VERSIONS="3.14 3.15"
# What the free-threading tests are: the shared and interned immortal
# objects, the threaded races, one runtime per process.
FT_TESTS="tests/python/test_threads.py tests/python/test_interned_handles.py tests/python/test_free_threading_symbols.py"

if [ $# -eq 0 ]; then
    for v in $CACHED_FT_VERSIONS; do
        py=$CACHE/python${v}t/bin/python${v}t
        if [ -x "$py" ]; then
            set -- "$@" "$py"
        else
            echo "check-pythons: ${v}t: not cached, skipped (scripts/build-python-ft.sh --version $v builds it)"
        fi
    done
    [ $# -gt 0 ] || exit 0
fi

# Whether $1 is a free-threaded CPython with pytest.
ft_with_pytest() {
    "$1" -c "import sysconfig, pytest; assert sysconfig.get_config_var('Py_GIL_DISABLED')" 2>/dev/null
}

# The free-threading tests, in the scratch tree $2 with interpreter $1,
# the GIL off: fails if importing the bindings turned it on.
ft_tests() {
    (
        cd "$2" || exit 1
        PYTHON_GIL=0 "$1" -c "
import sys, cubind.driver, cubind.cu
assert not sys._is_gil_enabled(), 'the GIL is on after importing cubind'
print(sys.version)" || exit 1
        # shellcheck disable=SC2086 # FT_TESTS: paths without spaces
        PYTHON_GIL=0 "$1" -m pytest -q -p no:cacheprovider $FT_TESTS
    )
}

failed=0
for py in "$@"; do
    scratch=$(mktemp -d)
    git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$scratch"
    # The free-threading tests import every library module, and
    # cubind.nvfatbin, .nvml and .cufile are built only from the cached
    # CUDA 12.4 headers (--with-old-headers; fetched once by ./configure).
    ft=0
    headers=--without-old-headers
    if ft_with_pytest "$py"; then
        ft=1
        headers=--with-old-headers
    fi
    if (cd "$scratch" && ./configure --no-generator --no-install "$headers" --python "$py" &&
            ninja bindings build/fakecuda/libcuda.so.1) > "$scratch/build.log" 2>&1 &&
        CUBIND_LIBCUDA="$scratch/build/fakecuda/libcuda.so.1" PYTHONPATH="$scratch/build/python" \
            "$py" scripts/smoke_bindings.py &&
        { [ "$ft" = 0 ] ||
            CUBIND_LIBCUDA="$scratch/build/fakecuda/libcuda.so.1" PYTHONPATH="$scratch/build/python" \
                ft_tests "$py" "$scratch"; }; then
        echo "check-pythons: $py: ok"
    else
        tail -n 20 "$scratch/build.log" 2>/dev/null
        echo "check-pythons: $py: FAILED"
        failed=$((failed + 1))
    fi
    rm -rf "$scratch"
done
exit "$failed"
