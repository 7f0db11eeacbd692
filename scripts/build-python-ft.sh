#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build a free-threaded CPython (./configure --disable-gil) from the
# upstream tarball of Debian's python3.X source package, into
# $CUBIND_CACHE/python3.Xt, and make Debian's pure-Python pytest and
# hypothesis (bookworm's for 3.13, trixie's for 3.14 and later) importable
# by it, offline.
#
# Usage: scripts/build-python-ft.sh [--tsan] [--version 3.X]
#   Progress goes to stderr; the last stdout line is the interpreter path.
#   --version picks the CPython: 3.13 (the default; Debian trixie's
#   python3.13, what ./configure and CI use), 3.14 or 3.15 (Debian sid's
#   python3.14 / python3.15). Each version has its own prefix, source
#   directory, stamp and build directory; sid's index has its own private
#   apt directory and lock, so a 3.14 build never blocks the 3.13 one.
#   --tsan builds the same sources, also --with-thread-sanitizer (clang),
#   into $CUBIND_CACHE/python3.Xt-tsan: a smaller interpreter for running
#   the extensions built with -fsanitize=thread (no docstrings, no pip,
#   only the stdlib extension modules the tests use), and installs CPython's
#   free-threading TSan suppressions (Tools/tsan) as
#   $PREFIX/share/cubind/tsan-suppressions.txt.
#
# Environment:
#   CUBIND_CACHE          cache root (default: $HOME/.cache/cubind)
#   CUBIND_PY_REBUILD=1   ignore the stamp and rebuild from the archive
#   CUBIND_PY_JOBS        make parallelism (default: number of CPUs)
#
# The first run needs the network and root (or sudo) for the system apt
# (build dependencies; for 3.13 python3-pytest, python3-hypothesis). Later runs are
# answered from the stamp file without network or apt. Where the mirror
# lists a source package but does not serve its files, the orig tarball
# may be put into $CUBIND_CACHE/src/python3.X by hand (it is the upstream
# release tarball, renamed): it is used once its SHA-256 matches the one
# in the signed Sources index.
set -eu

CACHE=${CUBIND_CACHE:-$HOME/.cache/cubind}
USAGE="usage: $0 [--tsan] [--version 3.13|3.14|3.15]"
VARIANT=ft
VERSION=3.13
while [ $# -gt 0 ]; do
    case "$1" in
        --tsan) VARIANT=tsan; shift ;;
        --version) [ $# -ge 2 ] || { printf '%s\n' "build-python-ft: $USAGE" >&2; exit 2; }
                   VERSION=$2; shift 2 ;;
        *) printf '%s\n' "build-python-ft: unknown option $1 ($USAGE)" >&2; exit 2 ;;
    esac
done
# Where each version's source comes from. 3.13's apt directory and lock
# are those of every earlier checkout (they share the cache).
case "$VERSION" in
    3.13) SRC_SUITE=trixie; APTDIR=$CACHE/apt-python; LOCK=$CACHE/.build-python-ft.lock ;;
    3.14|3.15) SRC_SUITE=sid; APTDIR=$CACHE/apt-python-sid; LOCK=$CACHE/.build-python-ft-sid.lock ;;
    *) printf '%s\n' "build-python-ft: unsupported version $VERSION ($USAGE)" >&2; exit 2 ;;
esac
SRC_PKG=python$VERSION
SRCDIR=$CACHE/src/$SRC_PKG
BUILDROOT=$CACHE/build

# The system apt configuration's Debian archive (scripts/apt-mirror.sh).
MIRROR=$("$(dirname "$0")/apt-mirror.sh")
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# Change BUILD_REV (or the flags) to force a rebuild on every machine.
BUILD_REV=1
if [ "$VARIANT" = ft ]; then
    PREFIX=$CACHE/python${VERSION}t
    BUILD_CC=
    OPT_FLAGS=
    SKIP_MODULES=
    # With CPython's test modules: tests/python/test_undo.py fails allocations
    # through _testcapi.set_nomemory on 3.13t as on the system Python.
    CONFIGURE_FLAGS="--disable-gil --with-ensurepip=install"
    # What the built interpreter must import.
    CHECK_IMPORTS="ssl, ctypes, zlib, decimal, sqlite3, lzma, bz2, venv, ensurepip, _testcapi"
else
    PREFIX=$CACHE/python${VERSION}t-tsan
    # clang, as for every other -fsanitize=thread build of cubind: the
    # extensions' TSan calls resolve against the runtime linked into python.
    BUILD_CC=clang
    # -O1 as TSan recommends (and a shorter build than the default -O3).
    OPT_FLAGS="-DNDEBUG -g -O1 -Wall"
    CONFIGURE_FLAGS="--disable-gil --with-thread-sanitizer --without-doc-strings --without-ensurepip --disable-test-modules"
    # Stdlib extension modules neither pytest nor the tests need, not built
    # (configure's py_cv_module_<name>=n/a): a shorter instrumented build.
    SKIP_MODULES="_ssl _hashlib _sqlite3 _tkinter _curses _curses_panel _dbm _gdbm readline _decimal _lzma _bz2 _uuid _multibytecodec _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw"
    CHECK_IMPORTS="ctypes, zlib, threading"
fi
PY=$PREFIX/bin/python${VERSION}t
STAMP=$PREFIX/.cubind-build
DEPS_STAMP=$PREFIX/.cubind-test-deps
SUPPRESSIONS=$PREFIX/share/cubind/tsan-suppressions.txt

# Build dependencies (bookworm main, system apt): a compiler, and the
# headers for ssl, ctypes, zlib, sqlite3, lzma, bz2. decimal and pyexpat
# use CPython's bundled libmpdec and expat.
BUILD_DEPS="build-essential pkg-config xz-utils libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev"
[ "$VARIANT" = ft ] || BUILD_DEPS="$BUILD_DEPS clang"
# Pure-Python test dependencies; their files under
# /usr/lib/python3/dist-packages are copied into the interpreter's
# site-packages. 3.13: bookworm main's, installed with the system apt.
# 3.14 and later: trixie main's, downloaded (not installed) through a
# private binary index into $TEST_ROOT, since bookworm's pytest 7.2
# rewrites asserts with ast.Str, which 3.14 removed.
# python3-py is left out on purpose: pytest ships its own py.py shim.
TEST_DEBS="python3-pytest python3-pluggy python3-iniconfig python3-packaging python3-attr python3-hypothesis python3-sortedcontainers"

log() { printf '%s\n' "build-python-ft: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi

mkdir -p "$CACHE"
# One build at a time per cache.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$LOCK"
    flock 9
fi

quick_check() {
    [ -x "$PY" ] || return 1
    "$PY" -c "$(check_code)" >/dev/null 2>&1 || return 1
    [ "$VARIANT" = ft ] || [ -f "$SUPPRESSIONS" ]
}

# Python code that fails unless the interpreter is the one this variant wants.
check_code() {
    printf '%s' "import sys, sysconfig; assert not sys._is_gil_enabled(); assert sysconfig.get_config_var('Py_GIL_DISABLED') == 1; import $CHECK_IMPORTS"
    if [ "$VARIANT" = tsan ]; then
        printf '%s' "; assert '--with-thread-sanitizer' in sysconfig.get_config_var('CONFIG_ARGS')"
    fi
}

want_build_id() {
    if [ "$VARIANT" = ft ]; then
        printf 'rev=%s flags=%s\n' "$BUILD_REV" "$CONFIGURE_FLAGS"
    else
        printf 'rev=%s flags=%s cc=%s opt=%s skip=%s\n' "$BUILD_REV" "$CONFIGURE_FLAGS" \
            "$BUILD_CC" "$OPT_FLAGS" "$SKIP_MODULES"
    fi
}

# The variant's settings as configure's VAR=value arguments: CC, OPT, and
# py_cv_module_<name>=n/a per skipped module (none of them for ft).
variant_vars() {
    [ -z "$BUILD_CC" ] || printf 'CC=%s ' "$BUILD_CC"
    [ -z "$OPT_FLAGS" ] || printf "OPT='%s' " "$OPT_FLAGS"
    for m in $SKIP_MODULES; do printf 'py_cv_module_%s=n/a ' "$m"; done
}

# CPython's ./configure with the variant's flags, in the current directory.
run_configure() {
    set --
    [ -z "$BUILD_CC" ] || set -- "$@" CC="$BUILD_CC"
    [ -z "$OPT_FLAGS" ] || set -- "$@" OPT="$OPT_FLAGS"
    for m in $SKIP_MODULES; do set -- "$@" "py_cv_module_$m=n/a"; done
    # shellcheck disable=SC2086
    ./configure --prefix="$PREFIX" $CONFIGURE_FLAGS "$@"
}

# ---------------------------------------------------------------- fast path
if [ "${CUBIND_PY_REBUILD:-0}" != 1 ] && [ -f "$STAMP" ] && [ -f "$DEPS_STAMP" ] \
    && [ "$(sed -n 2p "$STAMP")" = "$(want_build_id)" ] && quick_check; then
    log "up to date: $(sed -n 1p "$STAMP") ($(tr '\n' ' ' <"$DEPS_STAMP"))"
    printf '%s\n' "$PY"
    exit 0
fi

# ------------------------------------------------------------ system apt
sys_apt_updated=
sys_install() {
    # Install the named packages with the system apt, only if missing.
    missing=
    for p in "$@"; do
        if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
            missing="$missing $p"
        fi
    done
    [ -n "$missing" ] || return 0
    log "installing with system apt:$missing"
    if [ -z "$sys_apt_updated" ]; then
        $SUDO apt-get update -qq >&2
        sys_apt_updated=1
    fi
    # shellcheck disable=SC2086
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
}

# ------------------------------------------------------------ private apt
# Private apt configurations, one directory each ($APTDIR for the source
# index, $TEST_APTDIR for trixie's binary index): the system's sources,
# lists and caches are left alone.

# apt_in DIR TOOL ARG...: runs TOOL (apt-get, apt-cache) with DIR's configuration.
apt_in() {
    d=$1
    tool=$2
    shift 2
    "$tool" \
        -o "Dir::Etc::SourceList=$d/sources.list" \
        -o "Dir::Etc::SourceParts=$d/sources.list.d" \
        -o "Dir::Etc::Preferences=$d/preferences" \
        -o "Dir::Etc::PreferencesParts=$d/preferences.d" \
        -o "Dir::State=$d/state" \
        -o "Dir::State::Lists=$d/lists" \
        -o "Dir::State::status=$d/status" \
        -o "Dir::Cache=$d/cache" \
        -o "APT::Architecture=amd64" \
        -o "APT::Architectures::=amd64" \
        -o "APT::Sandbox::User=root" \
        -o "Acquire::Languages=none" \
        "$@"
}

# private_apt_setup DIR TYPE SUITE: DIR lists SUITE's main (TYPE deb-src
# or deb) from the system's Debian mirror, freshly updated.
private_apt_setup() {
    mkdir -p "$1/sources.list.d" "$1/preferences.d" "$1/state" \
        "$1/lists/partial" "$1/cache/archives/partial"
    : >"$1/status"
    : >"$1/preferences"
    printf '%s [signed-by=%s] %s %s main\n' "$2" "$KEYRING" "$MIRROR" "$3" >"$1/sources.list"
    log "updating private apt index ($3 $2 main)"
    apt_in "$1" apt-get -qq update >&2
}

# ------------------------------------------------------------ source
fetch_source() {
    version=$(apt_in "$APTDIR" apt-cache showsrc "$SRC_PKG" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
    [ -n "$version" ] || die "no source package $SRC_PKG in $SRC_SUITE"
    upstream=${version%-*}
    upstream=${upstream#*:}
    orig=$SRCDIR/${SRC_PKG}_${upstream}.orig.tar.xz
    if [ -f "$SRCDIR/.complete-$version" ] && [ -f "$orig" ]; then
        log "source $SRC_PKG $version already downloaded"
    else
        mkdir -p "$SRCDIR"
        log "downloading source $SRC_PKG=$version"
        # apt checks every file it downloads against the signed Sources index.
        if ! (cd "$SRCDIR" && apt_in "$APTDIR" apt-get -qq source --download-only "$SRC_PKG=$version" >&2); then
            # The index lists the package, but the mirror may not serve its
            # files (it answers 404): a tarball put there by hand will do.
            [ -f "$orig" ] || die "the mirror ($MIRROR) did not serve $SRC_PKG=$version; put its orig tarball (the upstream Python-$upstream.tar.xz, renamed) at $orig and run again"
            log "apt-get source failed; using $orig, put there by hand"
        fi
        [ -f "$orig" ] || die "expected $orig after apt-get source"
        # Whoever put it there: the orig tarball the signed index names.
        want=$(apt_in "$APTDIR" apt-cache showsrc "$SRC_PKG" \
            | sed -n "s/^ \([0-9a-f]\{64\}\) [0-9]* ${SRC_PKG}_${upstream}\.orig\.tar\.xz\$/\1/p" | head -n 1)
        have=$(sha256sum "$orig" | cut -d' ' -f1)
        if [ -z "$want" ] || [ "$have" != "$want" ]; then
            die "$orig: SHA-256 $have, but the signed $SRC_SUITE index says ${want:-nothing}"
        fi
        : >"$SRCDIR/.complete-$version"
    fi
    SRC_VERSION=$version
    ORIG=$orig
}

# shellcheck disable=SC2086
sys_install $BUILD_DEPS
private_apt_setup "$APTDIR" deb-src "$SRC_SUITE"
fetch_source
log "source: $SRC_PKG $SRC_VERSION ($(du -h "$ORIG" | cut -f1) orig tarball)"

# ------------------------------------------------------------ build
start=$(date +%s)
if [ "${CUBIND_PY_REBUILD:-0}" != 1 ] && [ -f "$STAMP" ] \
    && [ "$(cat "$STAMP")" = "$(printf '%s %s\n%s' "$SRC_PKG" "$SRC_VERSION" "$(want_build_id)")" ] \
    && quick_check; then
    log "interpreter already built from $SRC_VERSION"
else
    rm -f "$STAMP" "$DEPS_STAMP"
    bdir=$BUILDROOT/python-$SRC_VERSION-$VARIANT
    rm -rf "$bdir"
    mkdir -p "$bdir"
    log "unpacking upstream sources"
    tar -xJf "$ORIG" -C "$bdir" --strip-components=1
    jobs=${CUBIND_PY_JOBS:-$(nproc 2>/dev/null || echo 2)}
    log "configure: --prefix=$PREFIX $CONFIGURE_FLAGS $(variant_vars)"
    (cd "$bdir" && run_configure >configure.log 2>&1) \
        || { tail -n 40 "$bdir/configure.log" >&2; die "configure failed (log: $bdir/configure.log)"; }
    log "make -j$jobs (log: $bdir/make.log)"
    (cd "$bdir" && make -j"$jobs" >make.log 2>&1) \
        || { tail -n 40 "$bdir/make.log" >&2; die "make failed (log: $bdir/make.log)"; }
    # Modules that must have been built; anything else missing is only reported.
    # Report optional modules that were not built (dbm, tkinter, readline...).
    grep -A1 -e 'bits to build these optional modules' -e 'Failed to build these modules' \
        -e 'could not be imported' "$bdir/make.log" >&2 || true
    rm -rf "$PREFIX"
    log "make install"
    (cd "$bdir" && make install >install.log 2>&1) \
        || { tail -n 40 "$bdir/install.log" >&2; die "make install failed (log: $bdir/install.log)"; }
    if [ "$VARIANT" = tsan ]; then
        # CPython's own suppressions for its free-threaded build (reports
        # inside CPython); tests/run passes them to TSan.
        mkdir -p "$(dirname "$SUPPRESSIONS")"
        cp "$bdir/Tools/tsan/suppressions_free_threading.txt" "$SUPPRESSIONS"
    fi
    "$PY" -c "$(check_code); print(sys.version)" >&2 \
        || die "the built interpreter fails the checks"
    if [ "$VARIANT" = ft ]; then
        "$PY" -c "import ssl, sqlite3; print(ssl.OPENSSL_VERSION, 'sqlite', sqlite3.sqlite_version)" >&2
        "$PY" -m pip --version >&2 || die "pip (ensurepip) missing"
    fi
    printf '%s %s\n%s\n' "$SRC_PKG" "$SRC_VERSION" "$(want_build_id)" >"$STAMP"
    rm -rf "$bdir"
    log "built in $(( $(date +%s) - start ))s"
fi

# ------------------------------------------------------------ pytest, hypothesis
if [ "$VERSION" = 3.13 ]; then
    TEST_ROOT=
    # shellcheck disable=SC2086
    sys_install $TEST_DEBS
else
    TEST_APTDIR=$CACHE/apt-python-trixie-deb
    TEST_ROOT=$CACHE/src/test-debs-trixie
    private_apt_setup "$TEST_APTDIR" deb trixie
    rm -rf "$TEST_ROOT"
    mkdir -p "$TEST_ROOT"
    log "downloading trixie's $TEST_DEBS"
    # apt checks each .deb against the signed Packages index.
    # shellcheck disable=SC2086
    (cd "$TEST_ROOT" && apt_in "$TEST_APTDIR" apt-get -qq download $TEST_DEBS >&2) \
        || die "could not download trixie's test packages"
    for pkg in $TEST_DEBS; do
        dpkg-deb -x "$TEST_ROOT/${pkg}"_*.deb "$TEST_ROOT/$pkg"
    done
fi
# pkg_files PKG: the package's paths as installed (/usr/...), one a line.
pkg_files() {
    if [ -z "$TEST_ROOT" ]; then
        dpkg -L "$1"
    else
        (cd "$TEST_ROOT/$1" && find . -mindepth 1 | sed 's|^\.||')
    fi
}
# pkg_version PKG: the Debian version of the package copied in.
pkg_version() {
    if [ -z "$TEST_ROOT" ]; then
        dpkg-query -W -f='${Version}' "$1"
    else
        dpkg-deb -f "$TEST_ROOT/$1"_*.deb Version
    fi
}
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
deps_record=
for pkg in $TEST_DEBS; do
    files=$(pkg_files "$pkg" | grep '^/usr/lib/python3/dist-packages/.' | grep -v '/__pycache__') || true
    [ -n "$files" ] || die "$pkg has no files under /usr/lib/python3/dist-packages"
    if printf '%s\n' "$files" | grep -q '\.so$'; then
        die "$pkg is not pure Python"
    fi
    from=${TEST_ROOT:+$TEST_ROOT/$pkg}
    printf '%s\n' "$files" | while IFS= read -r f; do
        rel=${f#/usr/lib/python3/dist-packages/}
        if [ -d "$from$f" ]; then
            mkdir -p "$site/$rel"
        elif [ -f "$from$f" ]; then
            mkdir -p "$site/$(dirname "$rel")"
            cp -p "$from$f" "$site/$rel"
        fi
    done
    deps_record="$deps_record$pkg=$(pkg_version "$pkg")
"
done
"$PY" -m pytest --version >&2 || die "pytest does not run on ${VERSION}t"
# A test with an assert, so the assertion rewriter runs too.
probe=$(mktemp -d)
printf 'def test_probe():\n    assert [1] + [2] == [1, 2]\n' >"$probe/test_probe.py"
(cd "$probe" && "$PY" -m pytest -q -p no:cacheprovider test_probe.py >&2) \
    || { rm -rf "$probe"; die "pytest fails a one-assert test on ${VERSION}t"; }
rm -rf "$probe"
"$PY" -c "import hypothesis, sys; print('hypothesis', hypothesis.__version__); assert not sys._is_gil_enabled()" >&2 \
    || die "hypothesis does not import on ${VERSION}t (or it enabled the GIL)"
printf '%s' "$deps_record" >"$DEPS_STAMP"

log "done: $(sed -n 1p "$STAMP")"
printf '%s\n' "$PY"
