# SPDX-License-Identifier: Apache-2.0
"""Count checks at every depth include the elements of an array of structs:
a struct holding a counted array (numExtSems against extSemArray), reached
through another struct's counted array of such structs, is checked element
by element before the driver is called, as when it is passed directly.
cuda.h 13.0 has no array of counted structs, so the test adds one (two
records, their field-count rules and a function taking the outer one) to
copies of cuda.h, cudaTypedefs.h and gen/rules.txt, generates and compiles
the bindings, and calls the function on the fake driver, which lacks it: a
call that passes every check reaches the entry point lookup and raises
FunctionNotFoundError, one that fails a check raises ValueError first.
Only the elements the outer count covers are checked: on f004f36 a spare
element past it (which the driver never reads) was refused too."""
import os
import sys

import pytest

from conftest import REPO, build_bindings, generate, headers_with, py_env, run

DECLARATIONS = """
/* tests/abi/test_nested_count_arrays.py: an array of counted structs */
typedef struct CUtestSemGroup_st {
    unsigned int numExtSems;
    CUexternalSemaphore *extSemArray;
} CUtestSemGroup;
typedef struct CUtestSemGroups_st {
    unsigned int numGroups;
    CUtestSemGroup *groups;
} CUtestSemGroups;
CUresult CUDAAPI cuTestSemGroups(const CUtestSemGroups *groups);
"""
PFNS = """
typedef CUresult (CUDAAPI *PFN_cuTestSemGroups_v13000)(const CUtestSemGroups *groups);
"""
RULES = """
field-count CUtestSemGroup_st extSemArray numExtSems
field-count CUtestSemGroups_st groups numGroups
"""


@pytest.fixture(scope="module")
def package(cuda_include, tmp_path_factory):
    d = tmp_path_factory.mktemp("nested-count-arrays")
    inc = headers_with(cuda_include, d / "include", DECLARATIONS, PFNS)
    rules = d / "rules.txt"
    rules.write_text(open(os.path.join(REPO, "gen", "rules.txt")).read() + RULES)
    gen = str(d / "gen")
    p = generate(inc, gen, rules)
    assert "CUtestSemGroup" not in p.stderr, p.stderr  # both rules matched
    return build_bindings(gen, inc, str(d / "pkg"))


CHECK = r'''
import cubind, cubind.driver as d, cubind.cu as cu
from conftest import assert_no_growth

def group(n_sems, count):
    g = d.CUtestSemGroup()
    g.extSemArray = [d.CUexternalSemaphore(0x100 + i) for i in range(n_sems)]
    g.numExtSems = count
    return g

def groups(*members, count=None):
    G = d.CUtestSemGroups()
    G.groups = list(members)
    G.numGroups = len(members) if count is None else count
    return G

def outcome(call, value):
    try:
        call(value)
    except cubind.FunctionNotFoundError:
        return "checked"
    except ValueError as e:
        return str(e)
    raise AssertionError("the fake driver has no cuTestSemGroups")

ok_groups = groups(group(2, 2), group(3, 1), group(1, 0))
for call in (d.cuTestSemGroups, cu.cuTestSemGroups):
    assert outcome(call, ok_groups) == "checked"
    # one element over its own array, at each index: refused, named by index
    for bad in range(3):
        members = [group(2, 2), group(3, 3), group(1, 1)]
        members[bad].numExtSems = 1000
        msg = outcome(call, groups(*members))
        assert msg != "checked", bad
        assert "cuTestSemGroups" in msg and "numExtSems" in msg and "1000" in msg, msg
        assert "[%d]" % bad in msg, msg
    # the outer count over its array: refused before any element is read
    msg = outcome(call, groups(group(1, 1), count=5))
    assert "numGroups" in msg and "5" in msg, msg
    # a count within its array only ever reads that far: the element past it
    # (overcounted) is not looked at
    assert outcome(call, groups(group(1, 1), group(1, 1000), count=1)) == "checked"

# the refusals leave nothing behind and the process usable
bad = groups(group(1, 1), group(1, 1000))
assert_no_growth(lambda: outcome(d.cuTestSemGroups, bad))
assert outcome(d.cuTestSemGroups, ok_groups) == "checked"
print("ok")
'''


def test_every_element_of_an_array_of_counted_structs_is_checked(package):
    tests_python = os.path.join(REPO, "tests", "python")
    p = run([sys.executable, "-c", CHECK], env=py_env(package, tests_python))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr[-4000:]
