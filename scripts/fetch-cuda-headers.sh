#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetch the driver's and the runtime's headers of older CUDA releases (cuda.h,
# cudaTypedefs.h, cuda_runtime_api.h and the headers it and gen/runtime.rules'
# bind-header files include) from Debian's non-free nvidia-cuda-dev package,
# for `cubind manifest`, `cubind abi-diff` and the ABI tests.
#
# Usage: scripts/fetch-cuda-headers.sh [--runtime] [11.8|12.4|all]   (default: all)
#   stdout: one line per release, "<release> <include dir>": the driver's
#           (cuda.h), or with --runtime the runtime's (cuda_runtime_api.h)
#   stderr: everything else
#
#   11.8: nvidia-cuda-dev from bookworm non-free (CUDA_VERSION 11080)
#   12.4: nvidia-cuda-dev from trixie non-free   (CUDA_VERSION 12040)
#
# Headers land in $CUBIND_CACHE/cuda-headers/<release>/: the driver's in
# include/ (as always), the runtime's in runtime/include/ (crt/ below it as
# in a toolkit; a folder of its own, so that `./configure --cuda-include
# <release>/include` still builds no cubind.runtime from an older runtime
# the 13 ABI does not fit), with the exact Debian version in
# .../<release>/VERSION. A cache an older copy of this script filled
# (include/ only) is completed: the package is fetched again and
# runtime/include/ is added; include/ stays as it is. apt runs with a private
# configuration under the cache; the system's apt sources are not touched.
# The .deb files are large (~0.8-0.9 GB each) and are deleted once the
# headers are extracted (CUBIND_KEEP_DEB=1 keeps them).
#
# Environment:
#   CUBIND_CACHE            cache root (default: $HOME/.cache/cubind)
#   CUBIND_CUDA_REFETCH=1   ignore what is cached and fetch again
#   CUBIND_KEEP_DEB=1       keep the downloaded .deb files
set -eu

CACHE=${CUBIND_CACHE:-$HOME/.cache/cubind}
HDRS=$CACHE/cuda-headers
# The private apt configuration (cuda_apt_config) and its mirror.
. "$(dirname "$0")/cuda-apt.sh"
PKG=nvidia-cuda-dev
# The headers extracted, relative to the package's ./usr/include. cuda.h
# needs only the C library headers; cudaTypedefs.h includes cuda.h.
DRIVER_HEADERS="cuda.h cudaTypedefs.h"
# cuda_runtime_api.h, gen/runtime.rules' bind-header files and every header
# they include (the same list in 11.8, 12.4 and 13.0; the GL, EGL and VDPAU
# headers the interop ones include are runtime/interop's stand-ins).
RUNTIME_HEADERS="cuda_runtime_api.h driver_types.h device_types.h vector_types.h
surface_types.h texture_types.h library_types.h cuda_profiler_api.h
cuda_gl_interop.h cuda_egl_interop.h cuda_vdpau_interop.h builtin_types.h
cuda_device_runtime_api.h cuda_runtime.h channel_descriptor.h cudart_platform.h
driver_functions.h vector_functions.h vector_functions.hpp crt/host_config.h
crt/host_defines.h"
# Members of the package's data.tar that are extracted: the driver's go to
# include/, the runtime's to runtime/include/.
MEMBERS=
for h in $DRIVER_HEADERS $RUNTIME_HEADERS; do MEMBERS="$MEMBERS ./usr/include/$h"; done

log() { printf '%s\n' "fetch-cuda-headers: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
    echo "usage: $0 [--runtime] [11.8|12.4|all]" >&2
    exit 2
}

suite_of() {
    case $1 in
        11.8) echo bookworm ;;
        12.4) echo trixie ;;
        *) return 1 ;;
    esac
}

cuda_version_of() {
    case $1 in
        11.8) echo 11080 ;;
        12.4) echo 12040 ;;
        *) return 1 ;;
    esac
}

# What stdout names: the driver's include/ or (--runtime) runtime/include/.
RUNTIME_DIR=
if [ "${1:-}" = --runtime ]; then
    RUNTIME_DIR=runtime/
    shift
fi
case ${1:-all} in
    all) RELEASES="11.8 12.4" ;;
    11.8 | 12.4) RELEASES=$1 ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage

# A C compiler for the standalone parse check: clang if there is one.
if command -v clang >/dev/null 2>&1; then CHECK_CC=clang; else CHECK_CC=${CC:-cc}; fi

mkdir -p "$HDRS"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$HDRS/.lock"
    flock 9
fi

# check_headers <release> <root>: <root>/include and <root>/runtime/include
# hold good headers.
check_headers() {
    inc=$2/include
    for f in $DRIVER_HEADERS; do
        [ -s "$inc/$f" ] || { log "$1: $inc/$f missing"; return 1; }
    done
    for f in $RUNTIME_HEADERS; do
        [ -s "$2/runtime/include/$f" ] || { log "$1: $2/runtime/include/$f missing"; return 1; }
    done
    want=$(cuda_version_of "$1")
    got=$(sed -n 's/^#define[[:space:]]\{1,\}CUDA_VERSION[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' "$inc/cuda.h" | head -n 1)
    if [ "$got" != "$want" ]; then
        log "$1: CUDA_VERSION in $inc/cuda.h is '${got:-none}', expected $want"
        return 1
    fi
    [ -s "$2/VERSION" ] || { log "$1: $2/VERSION missing"; return 1; }
    return 0
}

# parse_check <release> <root>: the headers parse standalone as C, each
# folder alone (the runtime's: those that include no graphics header).
parse_check() {
    for f in include/cuda.h include/cudaTypedefs.h runtime/include/cuda_runtime_api.h \
        runtime/include/cuda_profiler_api.h; do
        printf '#include <%s>\n' "$(basename "$f")" \
            | "$CHECK_CC" -fsyntax-only -x c -I "$2/$(dirname "$f")" - >&2 \
            || { log "$1: $f does not parse standalone with $CHECK_CC"; return 1; }
    done
}

# install_headers <new root> <dest>: <dest> becomes <new root>. An existing
# <dest> (the older layout, or a broken one) keeps its include/ folder,
# whose files are renamed over their places one by one (a reader never
# finds one missing); runtime/ is replaced whole, VERSION last.
install_headers() {
    if [ ! -d "$2/include" ]; then
        rm -rf "$2"
        mv "$1" "$2"
        return
    fi
    for h in $DRIVER_HEADERS; do
        mv -f "$1/include/$h" "$2/include/$h"
    done
    rm -rf "$2/runtime"
    mv "$1/runtime" "$2/runtime"
    mv -f "$1/SOURCE" "$2/SOURCE"
    mv -f "$1/VERSION" "$2/VERSION"
}

fetch_release() {
    rel=$1
    suite=$(suite_of "$rel")
    dest=$HDRS/$rel
    dl=$HDRS/.download/$rel

    # Private apt configuration: one suite, non-free only (cuda-apt.sh).
    mkdir -p "$dl"
    conf=$(cuda_apt_config "$CACHE" "$suite")
    set -- -c "$conf"

    log "$rel: updating private apt index ($suite non-free amd64)"
    apt-get "$@" -qq update >&2
    info=$(apt-cache "$@" show --no-all-versions "$PKG") || die "$rel: $PKG not found in $suite non-free"
    version=$(printf '%s\n' "$info" | sed -n 's/^Version: //p')
    size=$(printf '%s\n' "$info" | sed -n 's/^Size: //p')
    sha256=$(printf '%s\n' "$info" | sed -n 's/^SHA256: //p')
    filename=$(printf '%s\n' "$info" | sed -n 's/^Filename: //p')
    case $version in
        "$rel".* | *"~$rel".*) ;;
        *) die "$rel: $suite has $PKG $version, not a $rel release" ;;
    esac
    deb=$dl/$(basename "$filename")
    if [ -f "$deb" ]; then
        log "$rel: reusing downloaded $(basename "$deb")"
    else
        rm -f "$dl"/*.deb
        log "$rel: downloading $PKG $version ($((size / 1048576)) MiB) from $suite non-free"
        t0=$(date +%s)
        # apt verifies the file against the signed index (size and SHA256).
        (cd "$dl" && apt-get "$@" -q download "$PKG=$version" >&2)
        log "$rel: download took $(($(date +%s) - t0))s"
        if [ ! -f "$deb" ]; then
            # apt names the file itself (an epoch would appear as %3a).
            for f in "$dl"/"$PKG"_*_amd64.deb; do
                [ -f "$f" ] && mv "$f" "$deb"
            done
        fi
        [ -f "$deb" ] || die "$rel: apt-get download left no .deb in $dl"
    fi
    [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha256" ] \
        || { rm -f "$deb"; die "$rel: SHA256 mismatch for $deb (deleted; run again)"; }

    tmp=$HDRS/.tmp.$rel.$$
    rm -rf "$tmp"
    mkdir -p "$tmp/root"
    log "$rel: extracting $(echo $MEMBERS | wc -w) headers"
    t0=$(date +%s)
    # --occurrence=1: tar stops once every member has been found, which
    # spares decompressing the rest (the static libraries) of the package.
    # dpkg-deb then complains about the closed pipe; its messages go to a
    # file and are shown only when tar fails.
    # shellcheck disable=SC2086
    if ! dpkg-deb --fsys-tarfile "$deb" 2>"$tmp/dpkg-deb.err" \
        | tar -x -C "$tmp/root" --occurrence=1 $MEMBERS; then
        cat "$tmp/dpkg-deb.err" >&2
        rm -rf "$tmp"
        die "$rel: could not extract the headers from $deb"
    fi
    log "$rel: extraction took $(($(date +%s) - t0))s"
    mkdir -p "$tmp/out/include" "$tmp/out/runtime/include/crt"
    for h in $DRIVER_HEADERS; do
        cp "$tmp/root/usr/include/$h" "$tmp/out/include/$h"
    done
    for h in $RUNTIME_HEADERS; do
        cp "$tmp/root/usr/include/$h" "$tmp/out/runtime/include/$h"
    done
    printf '%s\n' "$version" >"$tmp/out/VERSION"
    printf 'package: %s\nversion: %s\nsuite: %s non-free amd64\nfilename: %s\nsize: %s\nsha256: %s\n' \
        "$PKG" "$version" "$suite" "$filename" "$size" "$sha256" >"$tmp/out/SOURCE"
    if ! check_headers "$rel" "$tmp/out" || ! parse_check "$rel" "$tmp/out"; then
        rm -rf "$tmp"
        die "$rel: headers from $PKG $version failed the checks"
    fi
    install_headers "$tmp/out" "$dest"
    rm -rf "$tmp"
    if [ "${CUBIND_KEEP_DEB:-0}" != 1 ]; then
        rm -f "$deb"
    fi
    log "$rel: $PKG $version -> $dest/include, $dest/runtime/include"
}

for rel in $RELEASES; do
    dest=$HDRS/$rel
    if [ "${CUBIND_CUDA_REFETCH:-0}" != 1 ] && [ -d "$dest" ] && check_headers "$rel" "$dest"; then
        log "$rel: cached, $PKG $(cat "$dest/VERSION")"
    else
        [ ! -d "$dest" ] || log "$rel: cached headers are not usable, fetching again"
        fetch_release "$rel"
    fi
    printf '%s %s\n' "$rel" "$dest/${RUNTIME_DIR}include"
done
