#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetch the headers and CPU libraries of the toolkit libraries that this
# machine's CUDA toolkit may lack (nvFatbin.h, nvml.h, cufile.h,
# libnvfatbin, libcufile) from Debian's non-free packages of one CUDA
# release, for generating and testing cubind.nvfatbin, cubind.nvml and
# cubind.cufile. out/ of those modules is generated from these headers.
#
# Usage: scripts/fetch-cuda-libs.sh [12.4 | 12.4-driver]   (default: 12.4)
#   stdout: one line, "<release> <root>": <root>/include holds the headers,
#           <root>/lib the libraries (with their sonames' links)
#   stderr: everything else
#
#   12.4 (trixie non-free):
#     nvidia-cuda-dev   include/nvFatbin.h
#     libnvidia-ml-dev  include/nvml.h
#     libcufile-dev     include/cufile.h
#     libnvfatbin12     lib/libnvfatbin.so.12
#     libcufile0        lib/libcufile.so.0
#     nvidia-cuda-toolkit  nvvm/include/nvvm.h (for abi/nvvm-12.4.json only:
#                       not in include/, where configure would take it for
#                       cubind.nvvm, which the toolkit's nvvm.h generates)
#
#   12.4-driver (trixie non-free; a cache of its own beside 12.4's, so that
#   adding it refetched nothing):
#     libnvidia-ml1     lib/libnvidia-ml.so.1, NVML of the 550 driver
#                       branch (CUDA 12.4's), the library the driver
#                       installs: on a machine without the NVIDIA kernel
#                       driver nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED,
#                       the error path cubind.nvml's CPU tests check
#
# Everything lands in $CUBIND_CACHE/cuda-libs/<release>/, with each
# package's exact Debian version in .../<release>/SOURCE; it is written in
# a temporary folder and renamed into place once complete, so a cache is
# never half-written. apt runs with the private configuration of
# scripts/cuda-apt.sh. The .deb files are deleted once extracted
# (nvidia-cuda-dev's is ~0.9 GB; only its nvFatbin.h, near the start of
# the archive, is read).
#
# Environment:
#   CUBIND_CACHE            cache root (default: $HOME/.cache/cubind)
#   CUBIND_CUDA_REFETCH=1   ignore what is cached and fetch again
set -eu

CACHE=${CUBIND_CACHE:-$HOME/.cache/cubind}
LIBS=$CACHE/cuda-libs
. "$(dirname "$0")/cuda-apt.sh"

log() { printf '%s\n' "fetch-cuda-libs: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# What a release's cache holds: "<package> <member>..." per line; each
# member lands in include/ (a header) or lib/ (a library) by its name, or
# in the folder after its `=`.
contents_of() {
    case $1 in
        12.4) cat <<'LIST'
nvidia-cuda-dev ./usr/include/nvFatbin.h
libnvidia-ml-dev ./usr/include/nvml.h
libcufile-dev ./usr/include/cufile.h
libnvfatbin12 ./usr/lib/x86_64-linux-gnu/libnvfatbin.so.12
libcufile0 ./usr/lib/x86_64-linux-gnu/libcufile.so.0
nvidia-cuda-toolkit ./usr/include/nvvm.h=nvvm/include
LIST
        ;;
        12.4-driver) cat <<'LIST'
libnvidia-ml1 ./usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1
LIST
        ;;
        *) return 1 ;;
    esac
}

suite_of() {
    case $1 in
        12.4 | 12.4-driver) echo trixie ;;
        *) return 1 ;;
    esac
}

# version_ok <version>: a package version of the release: a toolkit
# package's is the CUDA release's (12.4.127~12.4.1-2), a driver package's
# the release's driver branch (550.163.01-2).
version_ok() {
    case $REL in
        12.4-driver) case $1 in 550.*) return 0 ;; esac ;;
        *) case $1 in "$REL".* | *"~$REL".*) return 0 ;; esac ;;
    esac
    return 1
}

case ${1:-12.4} in
    12.4 | 12.4-driver) REL=${1:-12.4} ;;
    *) echo "usage: $0 [12.4 | 12.4-driver]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [12.4 | 12.4-driver]" >&2; exit 2; }

# dest_of <member>: the folder of the cache a member lands in.
dest_of() {
    case $1 in
        *=*) echo "${1#*=}" ;;
        */include/*) echo include ;;
        *) echo lib ;;
    esac
}

# check_cache <root>: every member is there, non-empty, and SOURCE too.
check_cache() {
    [ -s "$1/SOURCE" ] || return 1
    contents_of "$REL" | while read -r _pkg members; do
        for m in $members; do
            f=$1/$(dest_of "$m")/$(basename "${m%%=*}")
            [ -s "$f" ] || { log "$REL: $f missing"; exit 1; }
        done
    done
}

# fetch_package <conf> <package> <tmp> <member[=folder]>...: downloads the package
# (verified by apt against the signed index), extracts the members into
# <tmp>/root and records the version in <tmp>/out/SOURCE.
fetch_package() {
    conf=$1 pkg=$2 tmp=$3
    shift 3
    dests=$*
    set --
    for m in $dests; do set -- "$@" "${m%%=*}"; done
    info=$(apt-cache -c "$conf" show --no-all-versions "$pkg") || die "$REL: $pkg not found"
    version=$(cuda_apt_field Version "$info")
    version_ok "$version" || die "$REL: $pkg is $version, not of CUDA $REL"
    log "$REL: downloading $pkg $version ($(($(cuda_apt_field Size "$info") / 1048576)) MiB)"
    mkdir -p "$tmp/dl/$pkg"
    (cd "$tmp/dl/$pkg" && apt-get -c "$conf" -q download "$pkg=$version" >&2)
    deb=$(ls "$tmp/dl/$pkg"/*.deb)
    [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$(cuda_apt_field SHA256 "$info")" ] ||
        die "$REL: SHA256 mismatch for $deb"
    case "$*" in
        */lib/*)
            # a library: its soname is a link to the versioned file, so the
            # whole (small) package is extracted
            dpkg-deb -x "$deb" "$tmp/root" ;;
        *)
            # headers: tar stops once every member is found (--occurrence=1;
            # nvidia-cuda-dev is large); dpkg-deb then complains about the
            # closed pipe, shown only when tar fails
            if ! dpkg-deb --fsys-tarfile "$deb" 2>"$tmp/dpkg-deb.err" |
                tar -x -C "$tmp/root" --occurrence=1 "$@"; then
                cat "$tmp/dpkg-deb.err" >&2
                die "$REL: could not extract $* from $deb"
            fi ;;
    esac
    rm -f "$deb"
    for m in $dests; do
        mkdir -p "$tmp/out/$(dest_of "$m")"
        cp -L "$tmp/root/${m%%=*}" "$tmp/out/$(dest_of "$m")/"
    done
    printf '%s %s\n' "$pkg" "$version" >>"$tmp/out/SOURCE"
}

fetch_release() {
    tmp=$LIBS/.tmp.$REL.$$
    rm -rf "$tmp"
    mkdir -p "$tmp/root" "$tmp/out/include" "$tmp/out/lib"
    trap 'rm -rf "$tmp"' EXIT
    conf=$(cuda_apt_config "$CACHE" "$(suite_of "$REL")")
    log "$REL: updating private apt index ($(suite_of "$REL") non-free amd64)"
    apt-get -c "$conf" -qq update >&2
    contents_of "$REL" >"$tmp/contents"
    while read -r pkg members; do
        # shellcheck disable=SC2086
        fetch_package "$conf" "$pkg" "$tmp" $members
    done <"$tmp/contents"
    check_cache "$tmp/out" || die "$REL: the fetched files are incomplete"
    # the old cache moves aside first: the folder is never half-written
    [ ! -d "$LIBS/$REL" ] || mv "$LIBS/$REL" "$tmp/old"
    mv "$tmp/out" "$LIBS/$REL"
    rm -rf "$tmp"
    trap - EXIT
    log "$REL: -> $LIBS/$REL"
}

mkdir -p "$LIBS"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$LIBS/.lock"
    flock 9
fi
if [ "${CUBIND_CUDA_REFETCH:-0}" != 1 ] && [ -d "$LIBS/$REL" ] && check_cache "$LIBS/$REL"; then
    log "$REL: cached ($(paste -s -d ' ' "$LIBS/$REL/SOURCE" | cut -c1-60)...)"
else
    fetch_release
fi
printf '%s %s\n' "$REL" "$LIBS/$REL"
