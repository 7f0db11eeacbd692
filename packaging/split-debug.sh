#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# split-debug.sh FILE.so — moves FILE.so's debug info to
# build/debug/FILE.so.debug and strips FILE.so, leaving a .gnu_debuglink to
# it (gdb finds it with `set debug-file-directory build/debug` or beside the
# file). The shipped extensions are linked through this (build.ninja's
# link_ext) unless ./configure --debug-info.
set -eu
so=$1
debug=build/debug/$(basename "$so").debug
mkdir -p build/debug
objcopy --only-keep-debug "$so" "$debug"
objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$debug" "$so"
