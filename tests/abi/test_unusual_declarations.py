# SPDX-License-Identifier: Apache-2.0
"""Declarations cuda.h 13.0 does not use but valid C (and a later release)
may: variadic and unprototyped functions, arrays, long double and complex
parameters, a union by value, a flexible array member, bit-fields, _Bool, an
enum with a negative member, a bare function-pointer parameter, functions
not returning CUresult, and functions without a PFN typedef. The test adds
them to copies of cuda.h and cudaTypedefs.h, generates, and requires what a
user regenerating for a new release needs: every function bound or listed
in unsupported.txt with its reason, the module and the C API header
compiling with -Werror, and the bound ones behaving on the fake driver."""
import json
import os
import sys

import pytest

from conftest import (CUBIND, build_bindings, compile_consumer, generate, headers_with, module_source,
                      py_env, run)

DECLARATIONS = """
/* tests/abi/test_unusual_declarations.py */
CUresult CUDAAPI cuTestVariadic(int n, ...);
CUresult CUDAAPI cuTestNoPrototype();
CUresult CUDAAPI cuTestArrayParam(int a[4]);
CUresult CUDAAPI cuTestLongDouble(long double x);
CUresult CUDAAPI cuTestComplex(_Complex double z);
typedef union CUtestUnion_st { int i; float f; } CUtestUnion;
CUresult CUDAAPI cuTestUnionByValue(CUtestUnion u);
typedef struct CUtestFlex_st { int n; int data[]; } CUtestFlex;
CUresult CUDAAPI cuTestFlex(CUtestFlex *p);
typedef struct CUtestBits_st { unsigned a : 3; unsigned b : 29; long long c; } CUtestBits;
CUresult CUDAAPI cuTestBits(CUtestBits *p);
CUresult CUDAAPI cuTestBool(_Bool b, _Bool *out);
typedef enum CUtestEnum_enum { CU_TEST_NEG = -5, CU_TEST_BIG = 0x7fffffff } CUtestEnum;
CUresult CUDAAPI cuTestEnum(CUtestEnum e, CUtestEnum *out);
CUresult CUDAAPI cuTestFnPtr(void (*fn)(void *), void *data);
CUresult CUDAAPI cuTestPtrPtr(int **pp);
typedef struct CUtestKw_st { int lambda; int global; unsigned int getPtr; int None; } CUtestKw;
CUresult CUDAAPI cuTestKw(int lambda, unsigned int from, CUtestKw *None);
CUresult CUDAAPI cuTestKwOut(int *class, int yield);
void CUDAAPI cuTestVoidReturn(int x);
int CUDAAPI cuTestIntReturn(int x);
CUresult CUDAAPI cuTestConstAddrs(void *const *dsts, const void *const *srcs, size_t count);
CUresult CUDAAPI cuTestConstAddrsUncounted(void *const *p);
"""

# The PFN typedefs of the functions that should be bound.
PFNS = """
typedef CUresult (CUDAAPI *PFN_cuTestUnionByValue_v13000)(CUtestUnion u);
typedef CUresult (CUDAAPI *PFN_cuTestFlex_v13000)(CUtestFlex *p);
typedef CUresult (CUDAAPI *PFN_cuTestBits_v13000)(CUtestBits *p);
typedef CUresult (CUDAAPI *PFN_cuTestBool_v13000)(_Bool b, _Bool *out);
typedef CUresult (CUDAAPI *PFN_cuTestEnum_v13000)(CUtestEnum e, CUtestEnum *out);
typedef CUresult (CUDAAPI *PFN_cuTestFnPtr_v13000)(void (*fn)(void *), void *data);
typedef CUresult (CUDAAPI *PFN_cuTestPtrPtr_v13000)(int **pp);
typedef CUresult (CUDAAPI *PFN_cuTestKw_v13000)(int lambda, unsigned int from, CUtestKw *None);
typedef CUresult (CUDAAPI *PFN_cuTestKwOut_v13000)(int *class, int yield);
typedef CUresult (CUDAAPI *PFN_cuTestConstAddrs_v13000)(void *const *dsts, const void *const *srcs, size_t count);
typedef CUresult (CUDAAPI *PFN_cuTestConstAddrsUncounted_v13000)(void *const *p);
"""

# function -> the start of its reason in unsupported.txt
UNSUPPORTED = {
    "cuTestVariadic": "no PFN typedef",
    "cuTestNoPrototype": "no PFN typedef",
    "cuTestArrayParam": "parameter 'a' (int[4])",
    "cuTestLongDouble": "parameter 'x' (long double)",
    "cuTestComplex": "parameter 'z' (_Complex double)",
    "cuTestPtrPtr": "parameter 'pp' (int **)",
    "cuTestVoidReturn": "does not return CUresult",
    "cuTestIntReturn": "does not return CUresult",
    # an array of addresses the library only reads needs its count
    "cuTestConstAddrsUncounted": "parameter 'p' (void *const *)",
}
BOUND = ["cuTestUnionByValue", "cuTestFlex", "cuTestBits", "cuTestBool", "cuTestEnum",
         "cuTestFnPtr", "cuTestKw", "cuTestKwOut", "cuTestConstAddrs"]


@pytest.fixture(scope="module")
def unusual(cuda_include, tmp_path_factory):
    d = tmp_path_factory.mktemp("unusual")
    inc = headers_with(cuda_include, d / "include", DECLARATIONS, PFNS)
    gen = str(d / "gen")
    generate(inc, gen)
    return d, inc, gen


def test_every_function_is_bound_or_listed_with_its_reason(unusual):
    _, _, gen = unusual
    listed = {}
    for line in open(os.path.join(gen, "unsupported.txt")):
        if not line.startswith("#") and ": " in line:
            name, why = line.rstrip("\n").split(": ", 1)
            listed[name] = why
    for name, why in UNSUPPORTED.items():
        assert listed.get(name, "").startswith(why), (name, listed.get(name))
    assert not set(BOUND) & set(listed), listed


def test_the_module_and_the_c_api_header_compile(unusual):
    d, inc, gen = unusual
    # build_bindings and compile_consumer compile with -Wall -Wextra -Werror;
    # the C API exports only functions with an entry point (PFN typedef)
    src = module_source(gen, "driver")
    assert "capi_cuTestVariadic" not in src and "capi_cuTestNoPrototype" not in src
    # cuTestPtrPtr is not bound in Python (int **) but C passes it through
    assert "capi_cuTestFlex(" in src and "capi_cuTestPtrPtr(" in src
    build_bindings(gen, inc, str(d / "pkg"))
    compile_consumer(gen, inc, str(d / "consumer"))


CHECK = r'''
import ctypes
import cubind.driver as d

# A flexible array member lies past the struct's bytes: the struct class
# has no attribute for it, so no object reads or writes beyond its size.
F = d.CUtestFlex()
F.n = 42
assert F.n == 42 and ctypes.string_at(F.getPtr(), 4) == (42).to_bytes(4, "little")
assert not hasattr(F, "data") and "data" not in dir(F), dir(F)
try:
    F.data = b"x"
except AttributeError:
    pass
else:
    raise AssertionError("CUtestFlex.data was set")

# Bit-fields keep the C layout: compared with ctypes' own struct.
class Bits(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint, 3), ("b", ctypes.c_uint, 29), ("c", ctypes.c_longlong)]
B = d.CUtestBits()
B.a, B.b, B.c = 5, (1 << 29) - 2, -3
want = Bits(5, (1 << 29) - 2, -3)
assert ctypes.string_at(B.getPtr(), 16) == bytes(want), ctypes.string_at(B.getPtr(), 16)
assert (B.a, B.b, B.c) == (5, (1 << 29) - 2, -3)
try:
    B.a = 8
except (OverflowError, ValueError) as e:
    assert "a" in str(e)
else:
    raise AssertionError("a 3-bit field took 8")
assert B.a == 5

assert int(d.CUtestEnum.CU_TEST_NEG) == -5 and int(d.CUtestEnum.CU_TEST_BIG) == 0x7fffffff
U = d.CUtestUnion()
U.f = 1.5
assert U.i == int.from_bytes(ctypes.string_at(U.getPtr(), 4), "little", signed=True)

# The fake driver has none of these functions: each call converts its
# arguments, then reports the missing function as cuda.bindings would.
calls = [(d.cuTestUnionByValue, (U,)), (d.cuTestFlex, (F,)), (d.cuTestBits, (B,)),
         (d.cuTestBool, (True,)), (d.cuTestEnum, (d.CUtestEnum.CU_TEST_NEG,)),
         (d.cuTestFnPtr, (0, 0))]
for fn, args in calls:
    try:
        r = fn(*args)
    except Exception as e:
        assert type(e).__name__ == "FunctionNotFoundError", (fn, e)
    else:
        assert r[0] != d.CUresult.CUDA_SUCCESS, (fn, r)
# A _Bool takes any object's truth, as Cython's bint (cuda.bindings'
# library modules) does: "yes" converts and reaches the missing function;
# a failing __bool__ is the error, raised before the call.
try:
    d.cuTestBool("yes")
except Exception as e:
    assert type(e).__name__ == "FunctionNotFoundError", e


class NoTruth:
    def __bool__(self):
        raise ZeroDivisionError("no truth")


try:
    d.cuTestBool(NoTruth())
except ZeroDivisionError as e:
    assert "no truth" in str(e), e
else:
    raise AssertionError("cuTestBool ignored a failing __bool__")
# Names that are Python keywords take a trailing `_` (parameters and
# fields); a field named like the getPtr method too.
import inspect
assert list(inspect.signature(d.cuTestKw).parameters) == ["lambda_", "from_", "None_"]
assert list(inspect.signature(d.cuTestKwOut).parameters) == ["yield_"]
K = d.CUtestKw()
K.lambda_, K.global_, K.getPtr_, K.None_ = 1, 2, 3, 4
assert ctypes.string_at(K.getPtr(), 16) == b"".join(
    v.to_bytes(4, "little") for v in (1, 2, 3, 4))
try:
    d.cuTestKw(lambda_=1, from_=2, None_=K)
except Exception as e:
    assert type(e).__name__ == "FunctionNotFoundError", e
try:
    d.cuTestKw(**{"lambda": 1, "from": 2, "None": K})
except TypeError as e:
    assert "lambda" in str(e), e
else:
    raise AssertionError("the C names were taken as keywords")
# `void *const *` and `const void *const *` with a count: input arrays of
# addresses (cudaMemcpyBatchAsync's dsts and srcs)
try:
    d.cuTestConstAddrs([1, 2], (3, 4), 2)
except Exception as e:
    assert type(e).__name__ == "FunctionNotFoundError", e
for args, name in ((["x"], [0], 1), "'dsts'"), (([0, 1], [0], 2), "'srcs'"), (([0], 7, 1), "'srcs'"):
    try:
        d.cuTestConstAddrs(*args)
    except (TypeError, ValueError) as e:
        assert name in str(e), (args, e)
    else:
        raise AssertionError("cuTestConstAddrs took %r" % (args,))
err, = d.cuInit(0)
assert err == d.CUresult.CUDA_SUCCESS, err   # the module stays usable
print("ok")
'''


def test_the_stubs_are_valid_python(unusual):
    import ast
    _, _, gen = unusual
    for name in ("driver.pyi", "cu.pyi"):
        text = open(os.path.join(gen, name)).read()
        ast.parse(text, name)   # a keyword as a name is a SyntaxError
        assert "lambda_: int, from_: int, None_: " in text, name
    assert "    lambda_: Any\n    global_: Any\n    getPtr_: Any\n    None_: Any\n" in \
        open(os.path.join(gen, "driver.pyi")).read()


def test_classify_decides_the_fields_python_names(unusual):
    """A field's Python name is classify's (classify_records.h: pyname),
    shown by `cubind classify` where it is not the C name; render only
    spells it (the stubs above)."""
    _, inc, _ = unusual
    p = run([CUBIND, "classify", "--header", os.path.join(inc, "cuda.h")])
    assert p.returncode == 0, p.stderr
    records = {r["name"]: r for r in json.loads(p.stdout)["records"]}
    assert [(f["name"], f.get("pyname")) for f in records["CUtestKw_st"]["fields"]] == [
        ("lambda", "lambda_"), ("global", "global_"), ("getPtr", "getPtr_"), ("None", "None_")]
    assert [f.get("pyname") for f in records["CUtestBits_st"]["fields"]] == [None] * 3


def test_the_bound_declarations_behave_on_the_fake_driver(unusual):
    d, inc, gen = unusual
    pkg = str(d / "pkg")
    if not os.path.isdir(os.path.join(pkg, "cubind")):
        build_bindings(gen, inc, pkg)
    p = run([sys.executable, "-c", CHECK], env=py_env(pkg))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr
