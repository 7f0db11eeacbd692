# SPDX-License-Identifier: Apache-2.0
"""The capsule contract between cubind._runtime and the generated modules
(runtime/include/cubind_rt.h): a generated module whose runtime exports another
signature, or a table smaller than the one it was built against, refuses
to import with an ImportError naming both signatures and sizes
(bind_support.c: cbs_import_runtime). Provoked without a rebuild: in a
fresh interpreter a stand-in `cubind._runtime` (a plain module with the
real one's attributes but `_C_API`, a capsule of the right name, made with ctypes, pointing at a
table built with ctypes) is put into sys.modules before the driver
extension is imported."""
import pytest

from conftest import run_python

SCRIPT = r"""
import ctypes, importlib, importlib.util, sys, types

# The package without its __init__ (which would import the real modules).
pkg = types.ModuleType("cubind")
pkg.__path__ = list(importlib.util.find_spec("cubind").submodule_search_locations)
sys.modules["cubind"] = pkg
real = importlib.import_module("cubind._runtime")

class Head(ctypes.Structure):
    # cubind_rt_api's first two members; the function pointers follow.
    _fields_ = [("signature", ctypes.c_char_p), ("size", ctypes.c_size_t)]

get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
NAME = b"cubind._runtime._C_API"
real_head = Head.from_address(get(real._C_API, NAME))
assert real_head.signature.decode() == real._C_API_SIGNATURE
real_size = real_head.size

# The stand-in table: the real one's bytes (so every pointer a module
# might read is valid), then the head changed.
table = (ctypes.c_char * real_size).from_buffer_copy(
    (ctypes.c_char * real_size).from_address(get(real._C_API, NAME)))
head = Head.from_buffer(table)
signature = ctypes.create_string_buffer(SIGNATURE.encode())
head.signature = ctypes.cast(signature, ctypes.c_char_p)
head.size = real_size + SIZE_DELTA

new = ctypes.pythonapi.PyCapsule_New
new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
name = ctypes.create_string_buffer(NAME)   # the capsule keeps the pointer
stand_in = types.ModuleType("cubind._runtime")
vars(stand_in).update({k: v for k, v in vars(real).items() if not k.startswith("__")})
stand_in._C_API = new(ctypes.addressof(table), name, None)
sys.modules["cubind._runtime"] = stand_in
try:
    importlib.import_module("cubind.driver")
except ImportError as e:
    print("ImportError:", e)
    print("expected:", real._C_API_SIGNATURE, real_size)
else:
    print("imported")
"""


def run_with(signature, size_delta):
    """The stand-in's head: `signature` (Python source of a str, evaluated
    in the child, which knows the real one) and the real size plus
    size_delta. Returns (outcome line, the real signature, the real size)."""
    code = ("SIZE_DELTA = %d\n" % size_delta) + SCRIPT.replace("SIGNATURE.encode()",
                                                                 "(%s).encode()" % signature)
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    if lines == ["imported"]:
        return "imported", None, None
    assert len(lines) == 2 and lines[1].startswith("expected: "), p.stdout
    real_signature, real_size = lines[1].split(" ", 1)[1].rsplit(" ", 1)
    return lines[0], real_signature, int(real_size)


def message(exported, exported_size, expected, expected_size):
    return ('ImportError: cubind._runtime does not match this module: it exports '
            '"%s" (size %d), this module expects "%s" (size %d)'
            % (exported, exported_size, expected, expected_size))


@pytest.mark.parametrize("signature", ["cubind-rt 0: a runtime of another version",
                                       "cubind-rt 99: int load(const char**);"])
def test_another_signature_is_an_import_error_naming_both(signature):
    got, real_signature, real_size = run_with(repr(signature), 0)
    assert real_signature.startswith("cubind-rt ")
    assert got == message(signature, real_size, real_signature, real_size)


def test_a_too_small_table_is_an_import_error_naming_both():
    got, real_signature, real_size = run_with("real._C_API_SIGNATURE", -8)
    assert got == message(real_signature, real_size - 8, real_signature, real_size)


def test_the_stand_in_with_the_real_head_imports():
    """The control: the same stand-in with the real signature and size
    imports, so the errors above come from the check, not the stand-in."""
    assert run_with("real._C_API_SIGNATURE", 0)[0] == "imported"
