# SPDX-License-Identifier: Apache-2.0
"""A field-count rule on a struct field pointing at an array of integer
handles (CUdevice-style, a value handle: the handle is the integer itself,
4 bytes here) makes the field take a list of those handles, copied into an
array the struct object owns, and read back as handles. cuda.h 13.0 has no
such field, so the test adds one to a copy of the header (and the rule to a
copy of gen/rules.txt), generates and compiles the bindings from it, and
checks the emitted field table and the struct's behaviour on the fake
driver."""
import os
import re
import sys

import pytest

from conftest import REPO, build_bindings, generate, headers_with, module_source, py_env, run

STRUCT = """
/* tests/abi/test_value_handle_arrays.py: a counted array of integer handles */
typedef struct CUtestDeviceList_st {
    unsigned int numDevices;
    CUdevice *devices;
} CUtestDeviceList;
"""
RULE = "field-count CUtestDeviceList_st devices numDevices\n"


@pytest.fixture(scope="module")
def bindings(cuda_include, tmp_path_factory):
    d = tmp_path_factory.mktemp("value-handle-arrays")
    inc = headers_with(cuda_include, d / "include", STRUCT)
    rules = d / "rules.txt"
    rules.write_text(open(os.path.join(REPO, "gen", "rules.txt")).read() + RULE)
    gen = str(d / "gen")
    p = generate(inc, gen, rules)
    assert "CUtestDeviceList_st" not in p.stderr, p.stderr  # the rule matched
    return gen, build_bindings(gen, inc, str(d / "pkg"))


def test_the_field_table_has_a_handle_array_of_4_byte_values(bindings):
    gen, _ = bindings
    src = module_source(gen, "driver")
    # {name, offset, size, kind, class, ..., aux (the count field), elem_size,
    # sets_count (0: the driver face leaves the count to the caller)}
    m = re.search(r'\{"devices", (\d+), (\d+), (CBS_F_\w+), \d+, [^}]*, (-?\d+), (\d+), (\d)\}',
                  src)
    assert m, "no field table entry for devices"
    assert m.group(1, 2, 3, 4, 5, 6) == ("8", "8", "CBS_F_HANDLE_ARRAY", "0", "4", "0"), m.group(0)


CHECK = r'''
import ctypes
import cubind.driver as d
L = d.CUtestDeviceList()
L.devices = [d.CUdevice(3), 7, d.CUdevice(0x7fffffff)]
got = L.devices
assert type(got) is list and [type(h) for h in got] == [d.CUdevice] * 3, got
assert [int(h) for h in got] == [3, 7, 0x7fffffff], got
offset = 8   # devices follows the 4-byte count, pointer-aligned
addr = ctypes.c_uint64.from_address(L.getPtr() + offset).value
assert addr != 0 and addr % 4 == 0
assert list((ctypes.c_int * 3).from_address(addr)) == [3, 7, 0x7fffffff]
assert L.numDevices == 0          # the count stays the caller's to set
L.devices = (5,)
assert [int(h) for h in L.devices] == [5]
assert list((ctypes.c_int * 1).from_address(
    ctypes.c_uint64.from_address(L.getPtr() + offset).value)) == [5]
for bad, exc in (([1 << 32], OverflowError), (["x"], TypeError)):
    try:
        L.devices = bad
    except exc as e:
        assert "devices" in str(e), e
    else:
        raise AssertionError("accepted %r" % (bad,))
assert [int(h) for h in L.devices] == [5]   # a refused list changed nothing
L.devices = []
assert L.devices == 0
print("ok")
'''


def test_a_list_of_integer_handles_is_copied_and_reads_back(bindings):
    _, pkg = bindings
    p = run([sys.executable, "-c", CHECK], env=py_env(pkg))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr[-4000:]
