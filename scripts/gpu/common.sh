# SPDX-License-Identifier: Apache-2.0
# scripts/gpu/common.sh — sourced by every suite of scripts/gpu-run (never
# run alone): the one place for what the suites share on the GPU machine.
# After sourcing, the shell is at the repository root, $OUT is an absolute,
# existing directory (exported, so a suite that runs another sees the same
# one) and $py is the interpreter the suite builds and tests for.
#
# The GPU machine has no libclang: the bindings are always compiled from
# the committed out/ (gpu_build_bindings).

# $0 is the suite's own script, scripts/gpu/SUITE.sh.
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
export OUT
py=${PYTHON:-$(command -v python3)}

# The code a log belongs to: CUBIND_COMMIT when given (the GPU machine's
# copy may carry stale git metadata), else the checkout's HEAD.
gpu_commit() {
    echo "${CUBIND_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
}

# A digest of the sources the bindings are built from (bench/report.py).
gpu_digest() {
    python3 bench/report.py digest
}

# The first line of a log: when, on which GPU and driver.
gpu_banner() {
    echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
}

# How the GPU machine configures: no libclang there (the committed out/),
# and no package archive it can reach (nothing to install).
gpu_configure_flags="--no-generator --no-install"

# Builds cubind for $py from the committed out/ into build/python/.
gpu_build_bindings() {
    ./configure $gpu_configure_flags --python "$py" && ninja bindings
}

# gpu_upstream_prepare SRC FILE: for the suites running cuda-python's own
# tests: exits 2 unless SRC holds FILE; builds the bindings unless
# build/python holds them; sets $work, a scratch directory removed at exit,
# holding SRC's test files (never edited), their conftest.py files replaced
# by tests/gpu/upstream_conftest.py (which redirects the modules named by
# CUBIND_UPSTREAM_MODULES, default driver) and the helpers they import by
# cubind's stand-ins (tests/gpu/upstream_*.py), but for the copy's own
# arch_check.py (the NVML tests' gate), kept.
gpu_upstream_prepare() {
    [ -f "$1/$2" ] || { echo "no $2 in $1" >&2; exit 2; }
    [ -d build/python/cubind ] || gpu_build_bindings || exit 1
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cp -R "$1"/. "$work"/
    rm -f "$work/conftest.py" "$work/legacy_api/conftest.py" "$work/pytest.ini"
    cp tests/gpu/upstream_conftest.py "$work/conftest.py"
    cp tests/gpu/redirect_bindings.py "$work/"
    rm -rf "$work/cuda_python_test_helpers"
    mkdir -p "$work/cuda_python_test_helpers"
    cp tests/gpu/upstream_helpers.py "$work/cuda_python_test_helpers/__init__.py"
    cp tests/gpu/upstream_managed_memory.py "$work/cuda_python_test_helpers/managed_memory.py"
    cp tests/gpu/upstream_mempool.py "$work/cuda_python_test_helpers/mempool.py"
    # the NVML tests' architecture gate has no cubind stand-in: the
    # upstream copy's own (it imports cuda.bindings.nvml, redirected)
    if [ -f "$1/cuda_python_test_helpers/arch_check.py" ]; then
        cp "$1/cuda_python_test_helpers/arch_check.py" "$work/cuda_python_test_helpers/"
    fi
}

# gpu_upstream_pytest WORK TAG FILES...: cuda-python's test FILES, copied
# into the scratch directory WORK beside a conftest.py that redirects the
# module under test by CUBIND_UPSTREAM_IMPL, run on cuda.bindings and then
# on cubind (JUnit XML in $OUT/TAG-IMPL.xml), then the summary of
# tests/gpu/upstream_summary.py: every test passing on cuda.bindings only.
gpu_upstream_pytest() {
    upstream_work=$1
    upstream_tag=$2
    shift 2
    upstream_repo=$(pwd)
    for impl in cuda.bindings cubind; do
        echo "### $impl"
        (cd "$upstream_work" && CUBIND_UPSTREAM_IMPL=$impl \
            PYTHONPATH="$upstream_work:$upstream_repo/build/python${PYTHONPATH:+:$PYTHONPATH}" \
            "$py" -m pytest -p no:cacheprovider -q -rfEs --rootdir "$upstream_work" \
            --junitxml "$OUT/$upstream_tag-$impl.xml" "$@")
    done
    "$py" tests/gpu/upstream_summary.py "$OUT/$upstream_tag-cuda.bindings.xml" "$OUT/$upstream_tag-cubind.xml"
}
