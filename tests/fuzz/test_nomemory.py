# SPDX-License-Identifier: Apache-2.0
"""Allocation failure: tests/fuzz/nomemory.py under ASan+UBSan (needs
_testcapi.set_nomemory: the system Python 3.11 has it; the 3.13t build has
no test modules, so this runs on the main interpreter only)."""
import subprocess
import sys

import pytest

from fuzzsupport import ROOT, asan_python_env, sanitizer_report


def test_every_allocation_failure_along_call_paths(asan_built):
    try:
        import _testcapi
        _testcapi.set_nomemory
    except (ImportError, AttributeError):
        pytest.fail("%s has no _testcapi.set_nomemory" % sys.executable, pytrace=False)
    # pymalloc stays on (sys.getallocatedblocks counts its blocks).
    env = asan_python_env()
    env.pop("PYTHONMALLOC")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "nomemory.py")],
                       capture_output=True, text=True, env=env, timeout=300)
    print(p.stdout)
    rep = sanitizer_report(p.stderr)
    assert p.returncode == 0 and not rep, "exit %d\n%s\n%s" % (p.returncode, p.stdout,
                                                               rep or p.stderr[-5000:])


def assert_script_ok(code, *args):
    """Runs code in a fresh process of the ASan build; it must print "ok",
    exit 0 and leave no sanitizer report."""
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       env=asan_python_env(), timeout=60)
    rep = sanitizer_report(p.stderr)
    assert p.returncode == 0 and p.stdout.strip() == "ok" and not rep, (
        "exit %d\n%s\n%s" % (p.returncode, p.stdout, rep or p.stderr[-3000:]))


# The registry is made by the first registration that can make it: a
# failure of any of its allocations (the table, then one bucket array per
# shard) fails that registration with ENOMEM, frees what it had made, and
# the next registration makes it. Each case is a fresh process, so the
# registry does not exist yet when the failure is armed.
FIRST_REGISTRY_USE = r'''
import sys
import cubind._runtime as rt
fail_at = int(sys.argv[1])
class Kept:
    pass
assert rt._registry_count() == 0          # asking made nothing
rt._fail_allocations(fail_at, fail_at + 1)
try:
    rt._drop_on_new_thread(Kept)
except RuntimeError as e:
    assert str(e) == "registry error -12", e
else:
    raise AssertionError("the registration did not fail")
counts = rt._alloc_counts()
assert counts["failed"] == 1 and counts["counted"] == fail_at + 1, counts
assert counts["live"] == 0, counts        # the half-made registry was freed
rt._fail_allocations(-1)
rt._drop_on_new_thread(Kept)              # made now, registered, released
assert rt._alloc_counts()["live"] > 0     # the registry's own blocks
print("ok")
'''


@pytest.mark.parametrize("fail_at", [0, 1, 33, 64])
def test_the_registry_is_made_by_a_later_use_after_its_first_failed(asan_built, fail_at):
    assert_script_ok(FIRST_REGISTRY_USE, str(fail_at))


# The same through a binding: a host function's payload is the first
# registration of a process whose context setup registered nothing.
FIRST_REGISTRY_USE_BY_A_BINDING = r'''
import cubind._runtime as rt, cubind.cu as cu
cu.cuInit(0)
cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(cu.cuDeviceGet(0)))
assert rt._registry_count() == 0 and rt._alloc_counts()["live"] == 0
seen = []
rt._fail_allocations(0, 1)                 # the registry's table
try:
    cu.cuLaunchHostFunc(None, seen.append, 1)
except MemoryError:
    pass
else:
    raise AssertionError("the launch did not fail")
assert rt._alloc_counts()["live"] == 0
rt._fail_allocations(-1)
cu.cuLaunchHostFunc(None, seen.append, 2)
cu.cuCtxSynchronize()
assert seen == [2], seen                   # the refused one never ran
print("ok")
'''


def test_a_binding_whose_registration_made_no_registry_raises_memoryerror_once(asan_built):
    assert_script_ok(FIRST_REGISTRY_USE_BY_A_BINDING)
