#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run clients [PACKAGES] — client libraries' own tests on
# cuda.bindings and on cubind. PACKAGES: space-separated dotted names of
# installed test packages (default numba-cuda's driver tests,
# numba.cuda.tests.cudadrv), never copied into the repository; single
# test modules collected no test here, with or without xdist's -n in
# PYTEST_ADDOPTS, which the summary reports as nothing compared (exit 2).
# Each runs first unchanged and then with cuda.bindings.driver and
# cuda.bindings.utils redirected to cubind.driver and cubind.utils
# (tests/gpu/redirect_bindings.py, loaded as a pytest plugin before the
# client is imported; CUBIND_REDIRECT and CUBIND_REDIRECT_KEEP choose the
# modules; by default cuda.bindings' other modules and cuda.core, compiled
# against cuda.bindings.driver's classes, are imported first and keep the
# real module; test-only dependencies the machine lacks, such as
# numba-cuda's filecheck, are stood in for by tests/gpu/absent_modules.py,
# so the tests that need them skip on both), then the summary of
# tests/gpu/upstream_summary.py: every test that passes on cuda.bindings
# but not on cubind. Builds the bindings first unless build/python holds
# them. Log and JUnit XML go to $OUT (clients.log, clients-*.xml).
set -u
packages=${1:-numba.cuda.tests.cudadrv}
export CUBIND_REDIRECT=${CUBIND_REDIRECT:-driver,utils}
export CUBIND_REDIRECT_KEEP=${CUBIND_REDIRECT_KEEP:-cuda.bindings.runtime,cuda.bindings.nvrtc,cuda.bindings.utils,cuda.core}
. "$(dirname "$0")/common.sh"
[ -d build/python/cubind ] || gpu_build_bindings || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/gpu/redirect_bindings.py tests/gpu/absent_modules.py tests/gpu/client_fixtures.py "$work/"
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    "$py" - <<'PY'
import sys, importlib.metadata as md
names = ("cuda-bindings", "cuda-core", "numba", "numba-cuda", "cupy-cuda13x", "cupy-cuda12x", "torch")
found = []
for n in names:
    try:
        found.append("%s %s" % (n, md.version(n)))
    except md.PackageNotFoundError:
        pass
print("python", sys.version.split()[0] + ";", ", ".join(found))
PY
    echo "client tests: $packages; redirected: $CUBIND_REDIRECT; imported first: $CUBIND_REDIRECT_KEEP"
    # Installed test packages are imported by path (importlib mode): numba's
    # tests live under a directory named cuda, which the default mode would
    # put on sys.path ahead of cuda-python's `cuda` namespace. Fixtures the
    # client's repository defines and its wheel lacks come from
    # tests/gpu/client_fixtures.py.
    # shellcheck disable=SC2086  (the package list is split on purpose)
    gpu_upstream_pytest "$work" clients -p absent_modules -p client_fixtures -p redirect_bindings --continue-on-collection-errors --tb=line --import-mode=importlib --pyargs $packages
} 2>&1 | tee "$OUT/clients.log"
