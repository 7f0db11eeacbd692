#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds cubind/_cudart.so, the CUDA runtime cubind.runtime ships, from the
toolkit's static runtime (libcudart_static.a), so that a machine with only
the NVIDIA driver runs cubind.runtime (docs/design.md, "The CUDA runtime").

    packaging/cudart_bundle.py --archive LIB/libcudart_static.a --out FILE.so [--cc CC]

The archive's objects declare the runtime's API (cuda[A-Z]*) with hidden
visibility (they are meant to be linked into one binary); the copies made
here (never the toolkit's files) get default visibility for exactly those
functions, and the shared library exports only them (a version script),
so cubind.runtime finds them by dlsym like any libcudart.

glibc: the objects reference dlopen, pthread_*, sem_*, shm_open... without
versions, which a link on glibc >= 2.34 binds to GLIBC_2.34. As
runtime/include/glibc_pins.h does for cubind's own code, each reference
whose default version is newer than GLIBC_2.16 is renamed to the oldest
version the build machine's C library still defines (pthread_once ->
pthread_once@GLIBC_2.2.5, a reference the linker binds to that version),
and the library names libdl, libpthread and librt as NEEDED, which define
them on an old glibc. The result loads on glibc 2.16 as the extensions do
(packaging/mkwheel.py computes the wheel's tag from every file).
"""
import argparse
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# The newest glibc version the bundled library may need: what cubind's own
# extensions need (GLIBC_2.16, aligned_alloc; runtime/include/glibc_pins.h),
# so that the wheels' tag (mkwheel.py) stays manylinux_2_16.
GLIBC_MAX = (2, 16)
# What the C library's old versions live in on glibc < 2.34.
OLD_GLIBC_LIBS = ["-l:libdl.so.2", "-l:libpthread.so.0", "-l:librt.so.1"]
EXPORTED = re.compile(rb"^cuda[A-Z]\w*$")


def ar_members(data):
    """(name, bytes) of each member of a System V / GNU archive."""
    if not data.startswith(b"!<arch>\n"):
        raise SystemExit("cudart_bundle: not an ar archive")
    at, longnames, out = 8, b"", []
    while at + 60 <= len(data):
        header = data[at:at + 60]
        name = header[:16].rstrip()
        size = int(header[48:58])
        body = data[at + 60:at + 60 + size]
        at += 60 + size + (size & 1)
        if name == b"//":
            longnames = body
        elif name in (b"/", b"/SYM64/"):
            continue  # the symbol index
        else:
            if name.startswith(b"/") and name[1:].isdigit():
                start = int(name[1:])
                name = longnames[start:longnames.index(b"/\n", start)]
            out.append((name.rstrip(b"/").decode(), body))
    return out


def unhide_api(obj):
    """obj (an ELF64 little-endian relocatable, bytearray) with its global
    cuda[A-Z]* symbols given default visibility; the count changed."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        raise SystemExit("cudart_bundle: an archive member is not ELF64 little-endian")
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    changed = 0
    for _name, kind, _f, _a, off, size, link, _i, _al, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        stroff = sections[link][4]
        for at in range(off, off + size, entsize):
            st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", obj, at)
            end = obj.index(b"\0", stroff + st_name)
            name = bytes(obj[stroff + st_name:end])
            if st_info >> 4 == 1 and st_shndx != 0 and st_other & 3 and EXPORTED.match(name):
                obj[at + 5] = st_other & ~3
                changed += 1
    return changed


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def libc_versions(cc):
    """{symbol: [versions]} that glibc's libraries the compiler links define
    (libc, and libdl, libpthread, librt, which keep the old versions of
    what moved into libc: clock_gettime@GLIBC_2.2.5 is librt's)."""
    found = {}
    for lib in ["libc.so.6"] + [l.split(":", 1)[1] for l in OLD_GLIBC_LIBS]:
        path = subprocess.run([cc, "-print-file-name=" + lib], check=True, capture_output=True,
                              text=True).stdout.strip()
        if not os.path.isabs(path):
            continue  # not there: this glibc has no such library
        table = subprocess.run(["objdump", "-T", path], check=True, capture_output=True,
                               text=True).stdout
        for m in re.finditer(r"\sDF? \.text\s+\S+\s+\(?GLIBC_([\d.]+)\)?\s+(\w+)$", table, re.M):
            found.setdefault(m.group(2), []).append(m.group(1))
    return found


def too_new(so):
    """The undefined symbols of so bound to a glibc version above GLIBC_MAX."""
    table = subprocess.run(["objdump", "-T", so], check=True, capture_output=True,
                           text=True).stdout
    return sorted({m.group(2) for m in re.finditer(r"\*UND\*\s+\S+\s+\(?GLIBC_([\d.]+)\)?\s+(\w+)$",
                                                   table, re.M)
                   if version_tuple(m.group(1)) > GLIBC_MAX})


def link(cc, objs, out, tmp, extra=()):
    vmap = os.path.join(tmp, "exports.map")
    with open(vmap, "w") as f:
        f.write("{ global: cuda*; local: *; };\n")
    subprocess.run([cc, "-shared", "-o", out, *objs, "-Wl,--version-script=" + vmap,
                    "-static-libgcc", "-Wl,--push-state,--no-as-needed", *extra,
                    "-Wl,--pop-state", "-Wl,-z,noexecstack"], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archive", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        objs, exported = [], 0
        for i, (name, body) in enumerate(ar_members(pathlib.Path(args.archive).read_bytes())):
            obj = bytearray(body)
            exported += unhide_api(obj)
            path = os.path.join(tmp, "%03d_%s" % (i, os.path.basename(name)))
            pathlib.Path(path).write_bytes(obj)
            objs.append(path)
        if not exported:
            raise SystemExit("cudart_bundle: %s defines no cuda* function" % args.archive)
        first = os.path.join(tmp, "first.so")
        link(args.cc, objs, first, tmp)
        pins = []
        versions = libc_versions(args.cc)
        for sym in too_new(first):
            old = [v for v in versions.get(sym, []) if version_tuple(v) <= GLIBC_MAX]
            if not old:
                raise SystemExit("cudart_bundle: %s needs %s newer than GLIBC_%s"
                                 % (args.archive, sym, ".".join(map(str, GLIBC_MAX))))
            pins.append("%s %s@GLIBC_%s\n" % (sym, sym, min(old, key=version_tuple)))
        if pins:
            pinmap = os.path.join(tmp, "pins.txt")
            pathlib.Path(pinmap).write_text("".join(pins))
            for o in objs:
                subprocess.run(["objcopy", "--redefine-syms=" + pinmap, o], check=True)
        tmp_out = os.path.join(tmp, "out.so")
        link(args.cc, objs, tmp_out, tmp, OLD_GLIBC_LIBS)
        left = too_new(tmp_out)
        if left:
            raise SystemExit("cudart_bundle: still newer than GLIBC_%s: %s"
                             % (".".join(map(str, GLIBC_MAX)), left))
        shutil.move(tmp_out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
