#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# apt-mirror.sh — prints the Debian archive the system's apt uses, for the
# scripts that run apt or debootstrap with a private configuration
# (build-python-ft.sh, fetch-cuda-headers.sh, check-old-glibc.sh).
#
#   scripts/apt-mirror.sh          e.g. http://deb.debian.org/debian
#
# $CUBIND_APT_MIRROR, when set, wins. Otherwise the first URI of a source
# of Debian's main archive (not debian-security, not a third-party
# repository: the URI's path ends in /debian) in /etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list (one-line "deb URI suite ..." entries) and
# *.sources (deb822 "URIs:" fields), in the order apt reads them. With none,
# http://deb.debian.org/debian.
set -eu
if [ -n "${CUBIND_APT_MIRROR:-}" ]; then
    printf '%s\n' "$CUBIND_APT_MIRROR"
    exit 0
fi
etc=${CUBIND_APT_ETC:-/etc/apt}   # another root's apt directory (tests)
for f in "$etc/sources.list" "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    case "$f" in
        *.sources) uris=$(sed -n 's/^URIs:[[:space:]]*//p' "$f") ;;
        *) uris=$(sed -n 's/^[[:space:]]*deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\).*/\2/p' "$f") ;;
    esac
    for uri in $uris; do
        case "${uri%/}" in
            */debian) printf '%s\n' "${uri%/}"; exit 0 ;;
        esac
    done
done
echo http://deb.debian.org/debian
