"""Concurrency of cubind.driver (the fake driver answers from any thread):
shared handles used from many threads, concurrent first use of lazily
resolved entry points, exact counts at the end. On a free-threaded build
these run truly in parallel; on a GIL build they still interleave."""
import sys
import threading

import pytest

from conftest import assert_race_clean, run_python

# Every test here also runs under ThreadSanitizer (tests/run).
pytestmark = pytest.mark.tsan

THREADS = 8


def run_threads(target, n=THREADS):
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # reported below, never lost
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gil_stays_disabled_on_free_threaded_builds():
    import cubind.driver  # noqa: F401
    import cubind.cu  # noqa: F401
    if hasattr(sys, "_is_gil_enabled"):
        import sysconfig
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            assert not sys._is_gil_enabled()


def test_shared_objects_are_immortal_on_free_threaded_builds():
    """Functions, enum members, types and the drop-in face's one
    (CUDA_SUCCESS,) result are used by every thread; on a
    free-threaded build they are immortal (cbs_make_immortal), so taking a
    reference costs no atomic on a shared count. On a GIL build they stay
    ordinary objects."""
    import sysconfig
    import cubind.cu as cu
    import cubind.driver as d
    shared = [d.cuDeviceGetAttribute, cu.cuDeviceGetAttribute, d.CUresult.CUDA_SUCCESS,
              d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.CUstream,
              d.CUresult, d.cuInit(0)]  # the last: the drop-in face's (CUDA_SUCCESS,)
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    for o in shared:
        before = sys.getrefcount(o)
        refs = [o] * 1000
        grew = sys.getrefcount(o) - before
        del refs
        assert grew == (0 if free_threaded else 1000), (o, grew)
    # A subinterpreter's objects stay mortal (they are freed with it).
    proc = run_python(
        "import sys, sysconfig, _interpreters as I\n"
        "i = I.create()\n"
        "I.run_string(i, 'import sys, cubind.cu as cu\\n'\n"
        "  'f = cu.cuDeviceGetAttribute; b = sys.getrefcount(f); r = [f] * 10\\n'\n"
        "  'assert sys.getrefcount(f) - b == 10, sys.getrefcount(f) - b')\n"
        "I.destroy(i)\n"
        "print('ok')\n") if sys.version_info >= (3, 13) else None
    if proc is not None:
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_import_does_not_warn_about_the_gil():
    proc = run_python("import warnings; warnings.simplefilter('error'); import cubind.driver, cubind.cu; print('ok')")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_shared_stream_and_event_from_many_threads(drv):
    r, ctx = drv.cuDevicePrimaryCtxRetain(0)
    assert r == 0
    drv.cuCtxSetCurrent(ctx)
    r, stream = drv.cuStreamCreate(0)
    r, event = drv.cuEventCreate(0)
    counts = [0] * THREADS

    def work(i):
        assert drv.cuCtxSetCurrent(ctx)[0] == 0  # the current context is per thread
        for _ in range(2000):
            assert drv.cuEventRecord(event, stream)[0] == 0
            assert drv.cuStreamQuery(stream)[0] in (drv.CUresult.CUDA_SUCCESS, drv.CUresult.CUDA_ERROR_NOT_READY)
            assert drv.cuCtxGetCurrent()[1] == ctx
            counts[i] += 1

    for _ in range(3):
        run_threads(work)
    assert counts == [6000] * THREADS
    assert drv.cuStreamSynchronize(stream)[0] == 0
    assert drv.cuEventDestroy(event)[0] == 0
    assert drv.cuStreamDestroy(stream)[0] == 0


def test_enum_and_handle_objects_are_shared_safely(drv):
    attrs = list(drv.CUdevice_attribute.__members__.values())[:50]
    results = [None] * THREADS

    def work(i):
        seen = []
        for _ in range(200):
            for a in attrs:
                err, value = drv.cuDeviceGetAttribute(a, i % 2)
                assert err == 0
                seen.append(value)
        results[i] = seen

    run_threads(work)
    for i, seen in enumerate(results):
        # The fake answers attrib * 1000 + device for every attribute.
        assert seen == [int(a) * 1000 + i % 2 for a in attrs] * 200


def test_concurrent_first_use_of_every_entry_point():
    # A fresh process: 16 threads race to resolve the same and different
    # entry points; every call must succeed and see the same pointers.
    code = r'''
import threading, cubind.driver as d
assert d.cuInit(0)[0] == 0
names = ["cuDriverGetVersion", "cuDeviceGetCount", "cuCtxGetCurrent", "cuDeviceGet"]
N = 16
barrier = threading.Barrier(N)
bad = []
def body(i):
    barrier.wait()
    for rep in range(200):
        name = names[(i + rep) % len(names)]
        f = getattr(d, name)
        r = f(0) if name == "cuDeviceGet" else f()
        if r[0] != 0:
            bad.append((name, r))
'''
    assert_race_clean(code)
