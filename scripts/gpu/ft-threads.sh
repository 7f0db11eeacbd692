#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run ft-threads ORIG_TARBALL — on the GPU machine: builds
# free-threaded CPython 3.13 from Debian's python3.13 orig tarball (carried
# there; the machine reaches no registry) in a scratch directory, builds
# cubind for it from the committed out/, and runs bench/ft_threads.py
# (FT_ROUNDS: bench/README.md). Log: $OUT/ft-threads.log.
set -eu
tarball=${1:?usage: scripts/gpu-run ft-threads ORIG_TARBALL (Debian python3.13 orig tarball)}
. "$(dirname "$0")/common.sh"
T=$(mktemp -d)
{
    mkdir -p "$T/src"
    tar -xJf "$tarball" -C "$T/src" --strip-components=1
    (cd "$T/src" && ./configure -q --disable-gil --disable-test-modules --prefix="$T/inst" \
        && make -s -j16 && make -s install) > "$T/build.log" 2>&1 || { tail -30 "$T/build.log"; exit 1; }
    py=$T/inst/bin/python3.13t
    echo "cubind commit $(gpu_commit), source digest $(gpu_digest)"
    "$py" -c 'import sys; print(sys.version, "GIL enabled:", sys._is_gil_enabled())'
    gpu_build_bindings
    nvcc -ptx -arch=sm_90 -o "$T/kernels.ptx" bench/kernels.cu
    # The floor (bench/floor_ext.c) for this interpreter, importable from $T.
    gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Iruntime/include \
        -I"$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" bench/floor_ext.c \
        -o "$T/_bench_floor$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
    nproc; lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name)" || true
    cpus=$("$py" bench/ft_threads.py --cpus)
    echo "threads pinned to CPUs $cpus (one per physical core first)"
    PYTHONPATH="build/python:$T" "$py" bench/ft_threads.py "$T/kernels.ptx"
    # The same thread cases from plain C, in the same run: the driver's own
    # scaling is the ceiling (cuPointerGetAttribute takes a driver lock).
    gcc -std=c11 -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" bench/c_bench.c -o "$T/c_bench" -ldl -pthread
    nvcc -cubin -arch=sm_90 -o "$T/kernels.cubin" bench/kernels.cu
    "$T/c_bench" --image "$T/kernels.cubin" --n 1000 --n-launch 100 --reps 5 --cpus "$cpus" | grep '"threads"'
} > "$OUT/ft-threads.log" 2>&1
tail -8 "$OUT/ft-threads.log"
