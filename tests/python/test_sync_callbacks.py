# SPDX-License-Identifier: Apache-2.0
"""Python callables as callbacks the driver calls during the call, on the
calling thread, without user data (the sync-callback rule: the
CUoccupancyB2DSize of cuOccupancyMaxPotentialBlockSize[WithFlags]).

The fake driver calls the callback for block sizes 32, 64, ... up to the
limit and picks a block size from the returned byte counts with a made-up
model (fakecuda_control.h), recomputed here by `expected`; it also records
the values the callback returned in the calling thread's last call.
"""
import ctypes
import itertools
import threading

import pytest

from conftest import fake_function

import cubind.cu as cu

pytestmark = pytest.mark.tsan

_names = itertools.count()


@pytest.fixture(scope="module")
def lib(fake):
    fake.fakecuda_last_occupancy_calls.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fake.fakecuda_last_foreign_b2d.restype = ctypes.c_longlong
    return fake


@pytest.fixture
def func(drv):
    err, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert err == 0
    assert drv.cuCtxSetCurrent(ctx)[0] == 0
    name = f"occ{next(_names)}".encode()
    return fake_function(drv, name)


def sizes(limit):
    return list(range(32, (limit if 0 < limit < 1024 else 1024) + 1, 32))


def expected(smem_of, limit):
    """The fake's model: (minGridSize, blockSize)."""
    best = (0, 0, 0)  # threads, blocks, size
    for size in sizes(limit):
        smem = smem_of(size)
        blocks = min(2048 // size, 32)
        if smem:
            blocks = min(blocks, 65536 // smem)
        if blocks > 0 and blocks * size >= best[0]:
            best = (blocks * size, blocks, size)
    return best[1] * 4, best[2]


def returned(lib, n=64, buf=None):
    """What the fake's last occupancy call got back from the callback. A
    thread passes its own buf, made before the threads start: creating
    ctypes instances from several threads races inside CPython 3.13's
    _ctypes (python/cpython#128567; tests/README.md)."""
    buf = buf if buf is not None else (ctypes.c_longlong * n)()
    k = lib.fakecuda_last_occupancy_calls(buf, len(buf))
    return list(buf[:min(k, len(buf))])


def smem_a(size):
    return size * 40 + 1000


def smem_b(size):
    return 48000 if size > 128 else 256 * size


@pytest.mark.parametrize("smem_of,limit", [(smem_a, 0), (smem_a, 512), (smem_b, 0), (smem_b, 100)])
def test_callable_both_faces(drv, lib, func, smem_of, limit):
    want = expected(smem_of, limit)
    assert want != expected(lambda s: 0, limit) or limit == 100  # the callable matters
    seen = []

    def cb(size):
        seen.append(size)
        return smem_of(size)

    assert drv.cuOccupancyMaxPotentialBlockSize(func, cb, 0, limit) == (drv.CUresult.CUDA_SUCCESS,) + want
    assert seen == sizes(limit)
    assert returned(lib) == [smem_of(s) for s in sizes(limit)]
    seen.clear()
    assert cu.cuOccupancyMaxPotentialBlockSize(func, cb, 0, limit) == want
    assert seen == sizes(limit)
    seen.clear()
    assert drv.cuOccupancyMaxPotentialBlockSizeWithFlags(func, cb, 0, limit, 1) == (drv.CUresult.CUDA_SUCCESS,) + want
    assert cu.cuOccupancyMaxPotentialBlockSizeWithFlags(
        func=func, blockSizeToDynamicSMemSize=cb, dynamicSMemSize=0, blockSizeLimit=limit, flags=0) == want
    assert seen == sizes(limit) * 2


def test_callable_gets_the_right_answer_not_the_constant(drv, func):
    """The fixed dynamicSMemSize is ignored when a callable is given."""
    r = drv.cuOccupancyMaxPotentialBlockSize(func, lambda s: 0, 60000, 0)
    assert r[1:] == expected(lambda s: 0, 0)
    r = drv.cuOccupancyMaxPotentialBlockSize(func, None, 60000, 0)
    assert r[1:] == expected(lambda s: 60000, 0)


class Boom(Exception):
    pass


@pytest.mark.parametrize("face", ["driver", "cu"])
def test_exception_propagates_with_its_type_and_stops_the_calls(drv, lib, func, face):
    calls = []
    err = Boom("from the callable")

    def cb(size):
        calls.append(size)
        if size == 96:
            raise err
        return 100

    mod = drv if face == "driver" else cu
    with pytest.raises(Boom) as info:
        mod.cuOccupancyMaxPotentialBlockSize(func, cb, 0, 0)
    assert info.value is err
    assert calls == [32, 64, 96]  # never called again in that driver call
    # the driver went on: every later call of the trampoline returned 0
    assert returned(lib) == [100, 100] + [0] * (len(sizes(0)) - 2)
    # and the binding works normally afterwards
    assert drv.cuOccupancyMaxPotentialBlockSize(func, smem_a, 0, 0)[1:] == expected(smem_a, 0)


@pytest.mark.parametrize("value,exc,text", [
    ("12", TypeError, "must return an int"),
    (1.5, TypeError, "not float"),
    (None, TypeError, "not NoneType"),
    (-1, ValueError, "cannot be negative"),
    (-(2 ** 70), ValueError, "cannot be negative"),
    (2 ** 64, OverflowError, "more than size_t holds"),
])
def test_bad_return_raises(drv, lib, func, value, exc, text):
    calls = []

    def cb(size):
        calls.append(size)
        return value if size == 64 else 10

    with pytest.raises(exc) as info:
        drv.cuOccupancyMaxPotentialBlockSize(func, cb, 0, 256)
    msg = str(info.value)
    assert msg.startswith("cuOccupancyMaxPotentialBlockSize(): 'blockSizeToDynamicSMemSize' "), msg
    assert text in msg, msg
    assert calls == [32, 64]
    assert returned(lib) == [10] + [0] * 7


def test_largest_and_index_results_are_taken(drv, lib, func):
    class Idx:
        def __index__(self):
            return 5000

    assert drv.cuOccupancyMaxPotentialBlockSize(func, lambda s: Idx(), 0, 64)[1:] == expected(lambda s: 5000, 64)
    assert drv.cuOccupancyMaxPotentialBlockSize(func, lambda s: 2 ** 64 - 1, 0, 64)[0] == 0
    assert returned(lib) == [2 ** 64 - 1 - 2 ** 64] * 2  # SIZE_MAX, read back as long long


def test_c_function_pointer_still_works(drv, lib, func):
    CB = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
    seen = []

    def py(size):
        seen.append(size)
        return smem_b(size)

    c = CB(py)
    address = ctypes.cast(c, ctypes.c_void_p).value
    assert drv.cuOccupancyMaxPotentialBlockSize(func, address, 0, 0)[1:] == expected(smem_b, 0)
    assert seen == sizes(0)
    assert returned(lib) == [smem_b(s) for s in sizes(0)]
    # the ctypes object itself is a callable: called through the trampoline
    seen.clear()
    assert cu.cuOccupancyMaxPotentialBlockSize(func, c, 0, 200) == expected(smem_b, 200)
    assert seen == sizes(200)


def test_none_and_bad_objects(drv, func):
    assert drv.cuOccupancyMaxPotentialBlockSize(func, None, 0, 0)[1:] == expected(lambda s: 0, 0)
    with pytest.raises(TypeError) as info:
        drv.cuOccupancyMaxPotentialBlockSize(func, "not callable", 0, 0)
    assert "blockSizeToDynamicSMemSize" in str(info.value)


def test_nested_calls_use_their_own_callable(drv, func):
    inner_results = []

    def outer(size):
        if size == 64:
            inner_results.append(drv.cuOccupancyMaxPotentialBlockSize(func, smem_b, 0, 300)[1:])
        return smem_a(size)

    assert drv.cuOccupancyMaxPotentialBlockSize(func, outer, 0, 0)[1:] == expected(smem_a, 0)
    assert inner_results == [expected(smem_b, 300)]


def test_eight_threads_each_get_their_own_results(drv, lib, func):
    n, rounds = 8, 40
    ctx = drv.cuCtxGetCurrent()[1]
    barrier = threading.Barrier(n)
    bad = []

    bufs = [(ctypes.c_longlong * 64)() for _ in range(n)]

    def body(i):
        def cb(size):
            return (i + 1) * 700 + size * (i % 3)
        limit = 128 * (i + 1)
        want = expected(cb, limit)
        want_values = [cb(s) for s in sizes(limit)]
        assert drv.cuCtxSetCurrent(ctx)[0] == 0
        barrier.wait()
        try:
            for r in range(rounds):
                face = cu if r % 2 else drv
                got = face.cuOccupancyMaxPotentialBlockSize(func, cb, 0, limit)
                got = got if face is cu else got[1:]
                if got != want or returned(lib, buf=bufs[i]) != want_values:
                    bad.append((i, r, got, want))
        except Exception as e:  # noqa: BLE001 - reported by the assert below
            bad.append((i, e))

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert bad == []
    assert len({expected(lambda s, i=i: (i + 1) * 700 + s * (i % 3), 128 * (i + 1)) for i in range(n)}) > 1


def test_a_call_from_another_thread_returns_0_without_python(drv, lib, func):
    """A driver calling the trampoline from a thread of its own finds no
    context there: 0, and the callable is not run."""
    threads = []

    def cb(size):
        threads.append(threading.get_ident())
        return 777

    assert lib.fakecuda_set_occupancy_foreign(1) == 0
    try:
        r = drv.cuOccupancyMaxPotentialBlockSize(func, cb, 0, 64)
    finally:
        lib.fakecuda_set_occupancy_foreign(0)
    assert r[1:] == expected(lambda s: 777, 64)
    assert threads == [threading.get_ident()] * 2
    assert lib.fakecuda_last_foreign_b2d() == 0


def test_error_status_with_a_callable(drv, lib, func):
    assert lib.fakecuda_fail_next(b"cuOccupancyMaxPotentialBlockSize", 1, 1) == 0
    seen = []
    r = drv.cuOccupancyMaxPotentialBlockSize(func, lambda s: seen.append(s) or 0, 0, 0)
    assert r == (drv.CUresult.CUDA_ERROR_INVALID_VALUE, None, None)
    assert seen == []
