#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run nvcc-forms — issue 42 item 6 on the GPU machine: builds
# the bindings from the committed out/ (unless build/python holds them),
# then scripts/gpu/nvcc_forms.py compiles one extern "C" kernel with the
# toolkit's nvcc in every output form (-ptx, -cubin, -fatbin by default,
# -fatbin -no-compress, -fatbin -compress-mode=default|size|speed|balance|
# none), and records per form the flags of its fat-binary entries, whether
# cubind typed the kernel's parameters, and what an int 2 given for its
# float parameter became: 2.0 on both faces when typed; when not, an
# UntypedKernelWarning and the bits of int 2 on the drop-in face and a
# TypeError on the raising face. nvcc from $CUDA_HOME/bin, else PATH.
# Log: $OUT/nvcc-forms-gpu.log (also printed); exit status 1 when a form
# did not do what it should.
set -u
. "$(dirname "$0")/common.sh"
{
    gpu_banner
    echo "cubind commit $(gpu_commit)"
    [ -f build/python/cubind/__init__.py ] || gpu_build_bindings || exit 1
    PYTHONPATH=build/python "$py" scripts/gpu/nvcc_forms.py
} > "$OUT/nvcc-forms-gpu.log" 2>&1
status=$?
cat "$OUT/nvcc-forms-gpu.log"
exit "$status"
