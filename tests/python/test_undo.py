# SPDX-License-Identifier: Apache-2.0
"""Undo rules (gen/rules/rules.h `undo`): when a create succeeded in the driver
but its result could not be built (MemoryError), the binding releases what
was created. Forced with _testcapi.set_nomemory(N) around one call, for
every N along its path: each MemoryError leaves the fake driver's live
objects, the callback payloads and the registry as they were."""
import time

import pytest

import cubind._runtime as rt

try:
    from _testcapi import remove_mem_hooks, set_nomemory
except ImportError:  # builds without test modules (3.13t)
    set_nomemory = None


@pytest.fixture
def ctx(drv):
    if set_nomemory is None:
        pytest.skip("this Python has no _testcapi.set_nomemory")
    r, c = drv.cuDevicePrimaryCtxRetain(0)
    assert r == 0 and drv.cuCtxSetCurrent(c)[0] == 0
    yield c
    assert drv.cuDevicePrimaryCtxRelease(0)[0] == 0


def settled(timeout=10.0):
    """Waits until no callback payload is alive; False if that never happens."""
    deadline = time.monotonic() + timeout
    while rt._callback_counts()["alive"]:
        if time.monotonic() > deadline:
            return False
        rt._drain()
        time.sleep(0.001)
    return True


def sweep(fake, create, destroy, undo_name, create_name, limit=300):
    """Calls create() with the Nth allocation failing, N = 1, 2, ... until it
    succeeds (then destroy(result)). Returns the Ns whose MemoryError came
    after the driver created the object; asserts each MemoryError left the
    fake's live objects as they were and called the undo exactly then."""
    destroy(create())  # resolves both entry points (resolving allocates)
    settled()
    after = []
    for n in range(1, limit):
        live = fake.fakecuda_live_handles()
        created = fake.fakecuda_call_count(create_name.encode())
        undone = fake.fakecuda_call_count(undo_name.encode())
        set_nomemory(n, 0)
        try:
            result = create()
        except MemoryError:
            result = MemoryError
        finally:
            remove_mem_hooks()
        if result is not MemoryError:
            destroy(result)
            assert fake.fakecuda_live_handles() == live
            return after
        ran = fake.fakecuda_call_count(create_name.encode()) - created
        undo_calls = fake.fakecuda_call_count(undo_name.encode()) - undone
        assert undo_calls == ran, (n, ran, undo_calls, fake.fakecuda_live_handles() - live)
        assert settled(), rt._callback_counts()
        assert fake.fakecuda_live_handles() == live, n
        if ran:
            after.append(n)
    pytest.fail("%s never succeeded within %d allocations" % (create_name, limit))


def test_stream_create_is_undone(drv, fake, ctx):
    # (the raising face may allocate nothing after the call: no assertion
    # that a failure came after it)
    import cubind.cu as cu
    sweep(fake, lambda: cu.cuStreamCreate(0), cu.cuStreamDestroy, "cuStreamDestroy",
          "cuStreamCreate")


def test_stream_create_status_tuple_is_undone(drv, fake, ctx):
    def destroy(r):
        assert r[0] == 0 and drv.cuStreamDestroy(r[1])[0] == 0
    sweep(fake, lambda: drv.cuStreamCreate(0), destroy, "cuStreamDestroy", "cuStreamCreate")
