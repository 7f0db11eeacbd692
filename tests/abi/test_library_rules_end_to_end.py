# SPDX-License-Identifier: Apache-2.0
"""Library rules end to end (struct-size, output-field, string-addresses,
host-bytes on size_t arrays): a library function taking a struct
pointer and that struct's byte size (NVML 13's nvmlSystemGetDriverBranch,
branchInfo and length) is generated from a small header with the rule,
compiled with the runtime, and called against a small library that
records the size it was given: the Python call takes no size, the C
function gets sizeof the struct, and the struct comes back, or with an
output-field rule the one field of it (nvml's system_get_driver_branch()
returns the branch's str, as cuda.bindings.nvml's); a `const char *`
takes an int address under string-addresses (cufile.set_parameter_string
as cuda.bindings.cufile's); host-bytes makes `size_t *` arrays int
addresses or buffers checked to hold `len` of them (cufile's slab arrays);
text makes a `char *` output a str, its size parameter hidden (nvml's
vgpu_type_get_name); address takes a pointer as an int address (cufile's
read_async); count-query returns an array the library sizes alone."""
import os
import sys

from conftest import BUILD_PY, CUBIND, EXT_SUFFIX, PY_INCLUDE, REPO, WARN, config_value, run

SIZES_H = """#ifndef SIZES_H
#define SIZES_H
#include <stddef.h>
typedef enum { SZ_SUCCESS = 0, SZ_ERROR_SIZE = 1 } szStatus_t;
typedef struct { unsigned int version; char name[40]; unsigned int got; } szInfo_t;
szStatus_t szGetInfo(szInfo_t *info, unsigned int length);
szStatus_t szGetName(szInfo_t *info, unsigned int length);
szStatus_t szNameLength(const char *name, unsigned int *length);
szStatus_t szSetSlabs(const size_t *sizes, const size_t *counts, int len);
szStatus_t szGetSlabs(size_t *sizes, size_t *counts, int len);
szStatus_t szGetLabel(char *label, unsigned int *size);
szStatus_t szGetNote(char *note, unsigned int size);
szStatus_t szGetTag(char *tag);
szStatus_t szStore(size_t *where, size_t value);
szStatus_t szGetIds(unsigned int *count, unsigned int *ids);
#endif
"""

# The library: refuses a size other than its struct's, else records it.
LIBSIZES_C = """#include <stdio.h>
#include "sizes.h"
szStatus_t szGetInfo(szInfo_t *info, unsigned int length)
{
    if (length != sizeof *info)
        return SZ_ERROR_SIZE;
    info->got = length;
    info->name[0] = 'o';
    info->name[1] = 'k';
    info->name[2] = 0;
    return SZ_SUCCESS;
}

szStatus_t szGetName(szInfo_t *info, unsigned int length)
{
    return szGetInfo(info, length);
}

static size_t slab_sizes[8], slab_counts[8];

/* copies len pairs of sizes and counts; the library holds at most 8 */
static szStatus_t copy_slabs(size_t *ds, size_t *dc, const size_t *s, const size_t *c, int len)
{
    if (len < 0 || len > 8)
        return SZ_ERROR_SIZE;
    for (int i = 0; i < len; i++) {
        ds[i] = s[i];
        dc[i] = c[i];
    }
    return SZ_SUCCESS;
}

szStatus_t szSetSlabs(const size_t *sizes, const size_t *counts, int len)
{
    return copy_slabs(slab_sizes, slab_counts, sizes, counts, len);
}

szStatus_t szGetSlabs(size_t *sizes, size_t *counts, int len)
{
    return copy_slabs(sizes, counts, slab_sizes, slab_counts, len);
}

/* text with the size it was given: "label-64" and the length it wrote back */
szStatus_t szGetLabel(char *label, unsigned int *size)
{
    int n = snprintf(label, *size, "label-%u", *size);
    *size = (unsigned int)n + 1;
    return SZ_SUCCESS;
}

szStatus_t szGetNote(char *note, unsigned int size)
{
    snprintf(note, size, "note-%u", size);
    return SZ_SUCCESS;
}

/* writes value through an address the caller gives (the address rule) */
szStatus_t szStore(size_t *where, size_t value)
{
    if (where)
        *where = value;
    return SZ_SUCCESS;
}

/* three ids; a count below 3 is answered SZ_ERROR_SIZE with 3 (NVML's
 * NVML_ERROR_INSUFFICIENT_SIZE protocol) */
szStatus_t szGetIds(unsigned int *count, unsigned int *ids)
{
    unsigned int room = *count;
    *count = 3;
    if (room < 3)
        return SZ_ERROR_SIZE;
    for (unsigned int i = 0; i < 3; i++)
        ids[i] = 10 * (i + 1);
    return SZ_SUCCESS;
}

szStatus_t szGetTag(char *tag)
{
    snprintf(tag, 4, "tag");
    return SZ_SUCCESS;
}

szStatus_t szNameLength(const char *name, unsigned int *length)
{
    *length = 0;
    while (name && name[*length])
        ++*length;
    return SZ_SUCCESS;
}
"""

RULES = """header sizes.h
module - sizes
result szStatus_t SZ_SUCCESS
capi-sentinel SZ_ERROR_SIZE
error-class SizesError
python-names sz snake
library libsizes.so
library-env CUBIND_LIBSIZES
chars-length 64
struct-size szGetInfo length info
struct-size szGetName length info
output-field szGetName info name
string-addresses
host-bytes szSetSlabs sizes reads len
host-bytes szSetSlabs counts reads len
host-bytes szGetSlabs sizes writes len
host-bytes szGetSlabs counts writes len
text szGetLabel label size
text szGetNote note size
text szGetTag tag
address szStore where
count-query SZ_ERROR_SIZE
"""


def cc(args):
    p = run(["gcc", "-std=c11", "-O0"] + WARN + ["-fPIC"] + args)
    assert p.returncode == 0, p.stderr[-4000:]


def test_struct_size_passes_sizeof_and_takes_no_argument(tmp_path):
    (tmp_path / "sizes.h").write_text(SIZES_H)
    (tmp_path / "libsizes.c").write_text(LIBSIZES_C)
    (tmp_path / "sizes.rules").write_text(RULES)
    out = tmp_path / "out"
    out.mkdir()
    p = run([CUBIND, "generate", "--header", str(tmp_path / "sizes.h"), "--rules",
             str(tmp_path / "sizes.rules"), "--include", config_value("cuda_include"), "--out", str(out)])
    assert p.returncode == 0, p.stderr
    stub = (out / "sizes.pyi").read_text()
    # output-field: the char array's type, a str under chars-length
    assert "def get_info() -> szInfo_t: ..." in stub and "def get_name() -> str: ..." in stub
    assert "def name_length(name: bytes | str | int) -> int: ..." in stub
    assert "def get_label() -> str: ..." in stub and "def get_tag() -> str: ..." in stub
    assert "def get_ids(count: int = 0) -> list[Any]: ..." in stub, stub
    lib = tmp_path / "libsizes.so"
    cc(["-shared", "-I" + str(tmp_path), str(tmp_path / "libsizes.c"), "-o", str(lib)])
    # the module joins the built package through its __path__
    pkg = tmp_path / "ext"
    pkg.mkdir()
    sources = [str(out / "sizes.c")] + sorted(
        os.path.join(REPO, "runtime", d, f) for d in ("module", "library")
        for f in os.listdir(os.path.join(REPO, "runtime", d)) if f.endswith(".c"))
    cc(["-shared", "-fvisibility=hidden", "-I" + PY_INCLUDE, "-I" + str(out), "-I" + str(tmp_path),
        "-I" + config_value("cuda_include")] + ["-I" + os.path.join(REPO, "runtime", d) for d in ("include", "module", "library", "interop")]
       + sources + ["-o", str(pkg / ("sizes" + EXT_SUFFIX)), "-ldl", "-pthread"])
    env = dict(os.environ, PYTHONPATH=BUILD_PY, CUBIND_LIBSIZES=str(lib))
    p = run([sys.executable, "-c", """
import inspect, sys
import cubind
cubind.__path__.append(sys.argv[1])
import cubind.sizes as s
assert list(inspect.signature(s.get_info).parameters) == [], inspect.signature(s.get_info)
info = s.get_info()
assert info.got == 48 and info.name == "ok", (info.got, info.name)
# output-field: the one field, as the struct object reads it (text under
# chars-length), not the struct
assert s.get_name() == "ok", s.get_name()
# string-addresses: str, bytes, or the address of a string kept alive
import ctypes
buf = ctypes.create_string_buffer(b"four")
assert s.name_length("abc") == 3 and s.name_length(b"ab") == 2
assert s.name_length(ctypes.addressof(buf)) == 4 and s.name_length(0) == 0
for bad in (-1, 2**64):
    try:
        s.name_length(bad)
    except OverflowError as e:
        assert "'name'" in str(e), e
    else:
        raise AssertionError(bad)
# host-bytes on size_t arrays (cufile's slab arrays): int addresses as
# cuda.bindings takes them, or buffers holding len size_t each
sizes = (ctypes.c_size_t * 3)(4096, 65536, 1 << 20)
counts = (ctypes.c_size_t * 3)(10, 20, 30)
assert s.set_slabs(ctypes.addressof(sizes), ctypes.addressof(counts), 3) is None
got_s, got_c = (ctypes.c_size_t * 3)(), (ctypes.c_size_t * 3)()
s.get_slabs(ctypes.addressof(got_s), ctypes.addressof(got_c), 3)
assert list(got_s) == [4096, 65536, 1 << 20] and list(got_c) == [10, 20, 30]
import array
out_s, out_c = array.array("Q", [0] * 2), bytearray(16)
s.get_slabs(out_s, out_c, 2)
assert list(out_s) == [4096, 65536] and array.array("Q", bytes(out_c)).tolist() == [10, 20]
# a buffer of fewer than len size_t (23 bytes hold 2 of 8), a read-only
# one for an output: refused before the call, naming the argument
for call, args, name in ((s.set_slabs, (bytes(23), bytes(24), 3), "'sizes'"),
                         (s.get_slabs, (bytearray(24), bytearray(16), 3), "'counts'"),
                         (s.get_slabs, (bytes(24), bytearray(24), 3), "'sizes'")):
    try:
        call(*args)
    except (ValueError, TypeError) as e:
        assert name in str(e), e
    else:
        raise AssertionError(args)
# text: a str from the binding's chars-length buffer (64 here), its size
# passed by address or by value, no Python argument for it
for fn, want in ((s.get_label, "label-64"), (s.get_note, "note-64"), (s.get_tag, "tag")):
    assert list(inspect.signature(fn).parameters) == [], inspect.signature(fn)
    assert fn() == want, (fn, fn())
# address: an int address the library writes through (0 / None: NULL)
slot = ctypes.c_size_t(0)
assert s.store(ctypes.addressof(slot), 7) is None and slot.value == 7
assert s.store(0, 1) is None and s.store(None, 1) is None and slot.value == 7
try:
    s.store("slot", 1)
except TypeError as e:
    assert "'where'" in str(e), e
else:
    raise AssertionError("a str taken as an address")
# count-query: 0 (the default) asks the library for the count first; the
# list comes back alone (its length is the count), as cuda.bindings.nvml's
assert s.get_ids() == [10, 20, 30], s.get_ids()
assert s.get_ids(5) == [10, 20, 30] and s.get_ids(0) == [10, 20, 30]
try:
    s.get_ids(2)  # a count given is passed as is: the library's answer
except s.SizesError as e:
    assert "SZ_ERROR_SIZE" in str(e) or "1" in str(e), e
else:
    raise AssertionError("a short count accepted")
print("ok")
""", str(pkg)], env=env)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr
