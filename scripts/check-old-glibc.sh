#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/check-old-glibc.sh PYTHON3.13 — does a wheel built here work on an
# older glibc than the build machine's? Builds the cp313 wheel with
# PYTHON3.13 (a CPython 3.13 with the GIL, e.g. pyenv's) from the committed
# out/ in a scratch copy of the tracked tree, then runs it in a Debian 11
# (bullseye, glibc 2.31) chroot: a CPython 3.13 built there from the Debian
# source tarball scripts/build-python-ft.sh caches, the test-only fake
# driver built there, the wheel unpacked, scripts/smoke_bindings.py (both
# faces, errors, launches packed from plain values and ctypes types).
#
# The chroot (debootstrap) and its CPython are cached under
# $CUBIND_CACHE/old-glibc (default ~/.cache/cubind/old-glibc, about 1 GB);
# the first run needs the network and takes about 15 minutes. Needs root
# (chroot). Not part of CI. Exit status 0 when the wheel imports and the
# smoke test passes there.
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: $0 PYTHON3.13" >&2; exit 2; }
host_py=$1
CACHE=${CUBIND_CACHE:-$HOME/.cache/cubind}
ROOT=$CACHE/old-glibc/bullseye
# The system apt configuration's Debian archive (scripts/apt-mirror.sh).
MIRROR=$(scripts/apt-mirror.sh)
log() { printf '%s\n' "check-old-glibc: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (chroot)"
"$host_py" -c 'import sys, sysconfig; assert sys.version_info[:2] == (3, 13); assert not sysconfig.get_config_var("Py_GIL_DISABLED")' ||
    die "$host_py is not a CPython 3.13 with the GIL"
tarball=$(ls "$CACHE"/src/python3.13/python3.13_*.orig.tar.xz 2>/dev/null | tail -n 1)
[ -n "$tarball" ] || die "no CPython 3.13 source tarball in $CACHE/src/python3.13 (run scripts/build-python-ft.sh once)"

# ---- the chroot: Debian 11, with a compiler
if [ ! -f "$ROOT/.complete" ]; then
    command -v debootstrap >/dev/null 2>&1 ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
    rm -rf "$ROOT.tmp"
    log "debootstrap bullseye (minbase, gcc) into $ROOT"
    debootstrap --variant=minbase --include=gcc,libc6-dev,make,xz-utils,zlib1g-dev,libffi-dev \
        bullseye "$ROOT.tmp" "$MIRROR" >"$CACHE/old-glibc/debootstrap.log" 2>&1 ||
        die "debootstrap failed (log: $CACHE/old-glibc/debootstrap.log)"
    rm -rf "$ROOT"
    mv "$ROOT.tmp" "$ROOT"
    : >"$ROOT/.complete"
fi

# ---- CPython 3.13 built inside it (so it needs only the chroot's glibc)
py=/opt/py313/bin/python3.13
stamp="$ROOT/opt/py313/.built-from-$(basename "$tarball")"
if [ ! -f "$stamp" ]; then
    log "building CPython from $(basename "$tarball") inside the chroot"
    rm -rf "$ROOT/build" "$ROOT/opt/py313"
    mkdir -p "$ROOT/build"
    cp "$tarball" "$ROOT/build/python.tar.xz"
    chroot "$ROOT" /bin/sh -c 'cd /build && tar -xJf python.tar.xz && cd Python-* &&
        ./configure --prefix=/opt/py313 --disable-test-modules --without-ensurepip >configure.log 2>&1 &&
        make -j"$(nproc)" >make.log 2>&1 && make install >install.log 2>&1' ||
        die "the CPython build in the chroot failed (logs under $ROOT/build)"
    rm -rf "$ROOT/build"
    : >"$stamp"
fi

# ---- the wheel, built here
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$scratch"
(cd "$scratch" && ./configure --no-generator --no-install --python "$host_py" --no-free-threaded &&
    ninja bindings wheel) >"$scratch/build.log" 2>&1 ||
    { tail -n 20 "$scratch/build.log" >&2; die "building the wheel failed"; }
wheel=$(ls "$scratch"/dist/cubind_cu*-cp313-cp313-*.whl)
log "wheel: $(basename "$wheel")"

# ---- into the chroot: the wheel unpacked, the fake driver built there
check=$ROOT/check
rm -rf "$check"
mkdir -p "$check/site" "$check/fakecuda" "$check/include"
"$host_py" -m zipfile -e "$wheel" "$check/site"
cp tests/fakecuda/*.c tests/fakecuda/*.h "$check/fakecuda/"
cuda_include=$(sed -n 's/^cuda_include = //p' "$scratch/build/config.ninja")
cp "$cuda_include/cuda.h" "$cuda_include/cudaTypedefs.h" "$check/include/"
cp scripts/smoke_bindings.py "$check/"
chroot "$ROOT" /bin/sh -c 'gcc -std=c11 -O1 -fPIC -shared -pthread -I/check/include \
    /check/fakecuda/fakecuda.c -o /check/libcuda.so.1' || die "building the fake driver in the chroot failed"

log "running it on $(chroot "$ROOT" /usr/bin/ldd --version | head -n 1)"
chroot "$ROOT" /usr/bin/env CUBIND_LIBCUDA=/check/libcuda.so.1 PYTHONPATH=/check/site "$py" \
    -c 'import platform, cubind.driver, cubind._runtime; print("imported on", *platform.libc_ver())'
chroot "$ROOT" /usr/bin/env CUBIND_LIBCUDA=/check/libcuda.so.1 PYTHONPATH=/check/site "$py" \
    /check/smoke_bindings.py
log "ok: $(basename "$wheel") works on $(chroot "$ROOT" /usr/bin/ldd --version | head -n 1)"
