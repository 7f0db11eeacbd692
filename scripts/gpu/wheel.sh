#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run wheel — on the GPU machine: builds the wheel for $py with
# pip through the in-tree backend (committed out/, no libclang), installs it
# into a fresh venv offline, and runs the GPU tests against the installed
# package (not the build tree), from a scratch directory outside the
# repository. Log: $OUT/wheel-gpu.log.
set -u
. "$(dirname "$0")/common.sh"
repo=$PWD
work=$(mktemp -d)
{
    python3 -m pip wheel . --no-deps --no-index -w "$work/wh" \
        --config-settings configure-args="--no-generator --no-install" || exit 1
    ls "$work/wh"
    python3 -m venv "$work/env" && "$work/env/bin/python" -m pip install -q --no-index "$work"/wh/cubind_cu*.whl || exit 1
    # the machine's python3 is itself a venv: let the new one see its pytest and cuda.bindings
    sp=$(ls -d "$work"/env/lib/python3*/site-packages)
    python3 -c "import site; print('\n'.join(site.getsitepackages()))" > "$sp/zz_outer.pth"
    cd "$work" || exit 1
    for impl in cubind cubind.cu; do
        echo "### CUBIND_GPU_IMPL=$impl, cubind from the installed wheel"
        files="$repo/tests/gpu"
        [ "$impl" = cubind.cu ] && files="$repo/tests/gpu/test_scenarios_gpu.py"
        CUBIND_GPU_IMPL=$impl "$work/env/bin/python" "$repo/tests/wheel/run_installed.py" -q \
            -c "$repo/pytest.ini" --rootdir "$repo" $files
    done
} > "$OUT/wheel-gpu.log" 2>&1
tail -8 "$OUT/wheel-gpu.log"
