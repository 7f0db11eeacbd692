#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/run_libfuzzer.sh FUZZER NAME [RUNS] — what tests/run does with
# a libFuzzer target (built with ASan and UBSan): first every regression input
# (tests/fuzz/regressions/NAME) once, then a fixed number of executions (RUNS,
# default 100000; -seed=1, so a run is repeatable) from the seed corpus
# (tests/fuzz/corpus/NAME) and the regressions. New inputs and any crash go to
# a temporary directory, never into the committed corpus; a crash is copied to
# build/fuzz/crashes/ and fails the run.
set -u
fuzzer=$1 name=$2 runs=${3:-100000}
cd "$(dirname "$0")/../.."
seeds=tests/fuzz/corpus/$name regs=tests/fuzz/regressions/$name
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus" "$tmp/art"
opts="-timeout=10 -rss_limit_mb=2048 -close_fd_mask=1 -print_final_stats=1"
status=0
if [ -n "$(ls -A "$regs" 2>/dev/null)" ]; then
    "$fuzzer" $opts -artifact_prefix="$tmp/art/" "$regs"/* >"$tmp/reg.log" 2>&1 || status=1
    [ $status = 0 ] || { echo "$name: a regression input fails:"; tail -40 "$tmp/reg.log"; }
fi
if [ $status = 0 ]; then
    # git keeps no empty folders: pass the regressions only where there are some
    dirs="$tmp/corpus $seeds"
    [ -d "$regs" ] && dirs="$dirs $regs"
    # shellcheck disable=SC2086
    "$fuzzer" $opts -runs="$runs" -seed=1 -artifact_prefix="$tmp/art/" \
        $dirs >"$tmp/run.log" 2>&1 || status=1
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$tmp/run.log" | sed "s/^/$name: /"
    [ $status = 0 ] || { echo "$name: the fuzzer found a failure:"; tail -60 "$tmp/run.log"; }
fi
if [ -n "$(ls -A "$tmp/art")" ]; then
    mkdir -p build/fuzz/crashes
    cp "$tmp/art/"* build/fuzz/crashes/
    echo "$name: inputs kept in build/fuzz/crashes/ (add them to $regs once fixed)"
    status=1
fi
exit $status
