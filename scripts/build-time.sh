#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/build-time.sh [-j N]... [-r REPEAT] [-c CONFIGURE_ARGS] [-k DIR] [-t TREE]
#
# How long a clean build of the bindings takes: what the README's first
# command builds (`./configure --user && ninja`: the extensions from the
# committed out/ and a wheel). For each -j N (default: 1, 2 and the number
# of cores) and each of REPEAT runs (default 3), a fresh copy of the
# tracked tree (and new files git does not ignore; -t TREE: that tree
# instead of this checkout, e.g. an older commit's `git archive`) is
# configured with
# CONFIGURE_ARGS (default --user) and built by `ninja -j N`. Prints one
# line per run:
#
#   j=N run=K wall=S user=S sys=S longest=S (OBJECT)
#
# wall is the build's elapsed time; user and sys its CPU time (steadier
# than wall on a shared machine); longest the slowest single step and its
# output, from ninja's log (the build's critical path when cores are
# plenty). Then one summary line per N: the median, min and max of wall,
# and the median of user+sys. -k DIR keeps each run's .ninja_log (every
# step's start and end) as DIR/ninja-jN-runK.log.
# BENCHMARKS.md ("Build time") records the results; `scripts/gpu-run
# build-time` runs it on the GPU machine.
set -eu
jobs= repeat=3 configure_args=--user keep= tree=
while getopts j:r:c:k:t: opt; do
    case "$opt" in
        j) jobs="$jobs $OPTARG" ;;
        r) repeat=$OPTARG ;;
        c) configure_args=$OPTARG ;;
        k) mkdir -p "$OPTARG" && keep=$(cd "$OPTARG" && pwd) ;;
        t) tree=$(cd "$OPTARG" && pwd) ;;
        *) echo "usage: scripts/build-time.sh [-j N]... [-r REPEAT] [-c CONFIGURE_ARGS] [-k DIR] [-t TREE]" >&2; exit 2 ;;
    esac
done
cores=$(nproc)
[ -n "$jobs" ] || jobs=$(printf '%s\n' 1 2 "$cores" | sort -n -u | tr '\n' ' ')
root=${tree:-$(cd "$(dirname "$0")/.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the tree as a fresh clone has it, plus what is new and not ignored (a
# copy without git metadata, as on the GPU machine: all but build outputs)
# (a tree inside another checkout, .device/base, is no checkout of its own:
# git would answer for the enclosing one, which ignores it)
own_checkout=no
[ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$root" ] && own_checkout=yes
if [ "$own_checkout" = yes ]; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done; :' sh |
        tar -c --null -T - -f -) | tar -x -C "$work" -f -
else
    (cd "$root" && tar -c --exclude=./build --exclude=./dist --exclude=./.git -f - .) |
        tar -x -C "$work" -f -
fi
# wall, user and sys seconds of a command and all it ran (no /usr/bin/time
# needed: python3 is there wherever cubind builds)
timed() {
    python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f %.2f %.2f" % (time.monotonic() - t, r.ru_utime, r.ru_stime))
sys.exit(rc)' "$@"
}
cd "$work"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $cores cores, $(uname -m), $(${CC:-cc} --version | head -n 1)"
if [ "$own_checkout" = yes ]; then commit=$(git -C "$root" rev-parse --short HEAD); else commit="${CUBIND_COMMIT:-unknown} (a copy: $root)"; fi
echo "# commit $commit, configure $configure_args"
for j in $jobs; do
    walls= cpus=
    k=1
    while [ "$k" -le "$repeat" ]; do
        rm -rf build dist .ninja_log .ninja_deps
        # shellcheck disable=SC2086
        ./configure $configure_args > configure.log 2>&1 || { cat configure.log >&2; exit 1; }
        timed ninja.log ninja -j "$j" > time.txt || { tail -n 40 ninja.log >&2; exit 1; }
        read -r wall user sys < time.txt
        # .ninja_log: start ms, end ms, mtime, output, hash (one line per step)
        longest=$(awk -F'\t' 'NR > 1 && $2 - $1 > best { best = $2 - $1; out = $4 }
                              END { printf "%.1f (%s)", best / 1000, out }' .ninja_log)
        echo "j=$j run=$k wall=$wall user=$user sys=$sys longest=$longest"
        [ -z "$keep" ] || cp .ninja_log "$keep/ninja-j$j-run$k.log"
        walls="$walls $wall"
        cpus="$cpus $(echo "$user $sys" | awk '{ printf "%.2f", $1 + $2 }')"
        k=$((k + 1))
    done
    cpu=$(printf '%s\n' $cpus | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
    printf '%s\n' $walls | sort -n | awk -v j="$j" -v cpu="$cpu" '{ v[NR] = $1 }
        END { printf "j=%s median wall=%.1f s (min %.1f, max %.1f, %d runs), median user+sys=%s s\n",
                     j, v[int((NR + 1) / 2)], v[1], v[NR], NR, cpu }'
done
