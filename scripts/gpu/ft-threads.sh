#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-run ft-threads ORIG_TARBALL — on the GPU machine: builds
# free-threaded CPython 3.13 from Debian's python3.13 orig tarball (carried
# there; the machine reaches no registry) in a scratch directory, builds
# cubind for it from the committed out/, measures which CPUs share a core
# (bench/cpu_pairs.c), runs bench/c_bench.c's threads cases and
# cpu_pairs's own loop (pinned, unpinned) and bench/ft_threads.py, which
# tables them all
# (FT_ROUNDS, FT_PIN, FT_CASES, FT_SCALE: bench/README.md). Log:
# $OUT/ft-threads.log.
set -eu
tarball=${1:?usage: scripts/gpu-run ft-threads ORIG_TARBALL (Debian python3.13 orig tarball)}
. "$(dirname "$0")/common.sh"
T=$(mktemp -d)
# The interpreter is kept across calls on a machine still warm (FT_PYTHON_DIR,
# default /tmp/cubind-ft-python/TARBALL-NAME): a second call (FT_PIN=unpinned
# after FT_PIN=pinned) skips the build of several minutes.
inst=${FT_PYTHON_DIR:-/tmp/cubind-ft-python/$(basename "$tarball" .tar.xz)}
{
    if [ ! -x "$inst/bin/python3.13t" ]; then
        mkdir -p "$T/src"
        tar -xJf "$tarball" -C "$T/src" --strip-components=1
        (cd "$T/src" && ./configure -q --disable-gil --disable-test-modules --prefix="$inst" \
            && make -s -j16 && make -s install) > "$T/build.log" 2>&1 || { tail -30 "$T/build.log"; exit 1; }
    fi
    py=$inst/bin/python3.13t
    echo "cubind commit $(gpu_commit), source digest $(gpu_digest)"
    "$py" -c 'import sys; print(sys.version, "GIL enabled:", sys._is_gil_enabled())'
    gpu_build_bindings
    nvcc -ptx -arch=sm_90 -o "$T/kernels.ptx" bench/kernels.cu
    # The floor (bench/floor_ext.c) for this interpreter, importable from $T.
    gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Iruntime/include \
        -I"$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" bench/floor_ext.c \
        -o "$T/_bench_floor$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
    nproc; lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name)" || true
    # Which CPUs share a core, measured (bench/cpu_pairs.c): a VM may show
    # two hyperthreads of one host core as two cores, and sysfs then says
    # nothing. Its order pins every thread case below, C's and Python's.
    gcc -std=c11 -O2 -Wall -Wextra -Werror bench/cpu_pairs.c -o "$T/cpu_pairs" -pthread
    "$T/cpu_pairs" > "$T/pairs.json"
    cat "$T/pairs.json"
    cpus=$(tail -n 1 "$T/pairs.json")
    export FT_CPUS="$cpus"
    echo "threads pinned to CPUs $cpus (one per measured physical core first), then unpinned"
    # C's own scaling of the same thread cases, in the same run, pinned and
    # unpinned: the driver's ceiling (cuPointerGetAttribute takes a driver
    # lock; its launch case is one shared CUfunction, each thread on its own
    # stream, 10000 launches per thread as ft_threads.py's). ft_threads.py
    # puts its rows (FT_C_JSON) in its table beside the Python ones.
    gcc -std=c11 -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" bench/c_bench.c -o "$T/c_bench" -ldl -pthread
    nvcc -cubin -arch=sm_90 -o "$T/kernels.cubin" bench/kernels.cu
    # As many repetitions as ft_threads.py has rounds: each is a round of
    # C's own, so C's 8 / 1 ratio is a per-round median as Python's is.
    c="$T/c_bench --image $T/kernels.cubin --n 1000 --n-launch 100 --reps ${FT_ROUNDS:-7} --thread-calls 300000 --thread-launches 10000"
    $c --cpus "$cpus" | grep '"threads"' | tee "$T/c.json.pinned"
    $c | grep '"threads"' | tee "$T/c.json.unpinned"
    # The machine's own ceiling: a loop with no memory traffic, no lock and
    # no driver, on the same CPUs, as many rounds.
    "$T/cpu_pairs" --scale "$cpus" --rounds "${FT_ROUNDS:-7}" | tee -a "$T/c.json.pinned"
    "$T/cpu_pairs" --scale any --rounds "${FT_ROUNDS:-7}" | tee -a "$T/c.json.unpinned"
    FT_C_JSON="$T/c.json" PYTHONPATH="build/python:$T" "$py" bench/ft_threads.py "$T/kernels.ptx"
} > "$OUT/ft-threads.log" 2>&1
tail -60 "$OUT/ft-threads.log"
