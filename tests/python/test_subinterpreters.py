# SPDX-License-Identifier: Apache-2.0
"""cubind in subinterpreters: the modules declare per-interpreter GIL
support, keep their Python objects in per-module state, and work in an
isolated subinterpreter (3.12+, own GIL) as in the main one, kernel
launches from plain values and from (values, ctypes types) included. On 3.13+,
Python callables as CUDA callbacks work there too: each interpreter has its
own runner thread and deferred queue, stopped and drained when it ends (also
when the process exits with the subinterpreter still alive). Before 3.13 a
subinterpreter with a thread of its own can be neither run again nor
destroyed by the interpreters module, so callables are refused there with a
RuntimeError."""
import sys

import pytest

from conftest import run_python

CODE = r'''
import cubind, cubind.driver as d, cubind.cu as cu
assert d.cuInit(0)[0] == 0
err, dev = d.cuDeviceGet(1)
assert err == 0 and int(dev) == 1, (err, dev)
assert cu.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev) == 1001
try:
    cu.cuDeviceGet(99)
except cubind.CUDAError as e:
    assert e.name == "CUDA_ERROR_INVALID_DEVICE"
else:
    raise AssertionError("no CUDAError")
ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
# Launches packed from plain values and from (values, ctypes types): the
# packer reads this interpreter's ctypes into this interpreter's module state.
import ctypes, struct
from fake_driver import open_fake
fake = open_fake()
offs, sizes = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
assert fake.fakecuda_set_param_layout(None, b"subinterp_k", 3, offs, sizes) == 0
k = cu.cuModuleGetFunction(cu.cuModuleLoadData(b"subinterpreter image\0"), b"subinterp_k")
got = ctypes.create_string_buffer(16)
# the fake's kernel is untyped: argtypes= types the plain values
for params, kw in [((0x3000, -9, 4.5), {"argtypes": ("p", "i4", "f4")}),
                   (((0x3000, -9, 4.5), (ctypes.c_void_p, ctypes.c_int, ctypes.c_float)), {})]:
    cu.cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, None, params, None, **kw)
    n = fake.fakecuda_last_launch_params(b"subinterp_k", got, 16)
    assert got.raw[:n] == struct.pack("<Qif", 0x3000, -9, 4.5), got.raw[:n]
s = cu.cuStreamCreate(0)
cubind.launch(k, 1, 1, 0x3000, -7, 0.5, stream=s,   # and this interpreter's cubind.launch
              argtypes=("p", "i4", "f4"))
n = fake.fakecuda_last_launch_params(b"subinterp_k", got, 16)
assert got.raw[:n] == struct.pack("<Qif", 0x3000, -7, 0.5), got.raw[:n]
seen = []
if THREADS:
    import threading, time
    me = threading.get_ident()
    for i in range(10):
        cu.cuLaunchHostFunc(s, lambda x: seen.append(("host", x, threading.get_ident() != me)), i)
    cu.cuStreamAddCallback(s, lambda h, st, x: seen.append(("stream", int(st), x)), "cb", 0)
    cu.cuStreamSynchronize(s)
    assert seen == [("host", i, True) for i in range(10)] + [("stream", 0, "cb")], seen
    uo = cu.cuUserObjectCreate("ptr", lambda p: seen.append(("destroy", p)), 1, 1)
    cu.cuUserObjectRelease(uo, 1)
    for _ in range(400):
        if seen[-1] == ("destroy", "ptr"):
            break
        time.sleep(0.005)
    assert seen[-1] == ("destroy", "ptr"), seen
    # Ends with calls still queued: they are skipped, never run in (or
    # after) the finalizing interpreter, and the driver's thread never hangs.
    for i in range(20):
        cu.cuLaunchHostFunc(s, lambda x: time.sleep(0.002), i)
else:
    try:
        cu.cuLaunchHostFunc(s, print, None)
    except RuntimeError as e:
        assert "3.13+ in a subinterpreter" in str(e), e
    else:
        raise AssertionError("callables must be refused in a subinterpreter before 3.13")
    cu.cuStreamDestroy(s)
'''


def interpreters_module():
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            return __import__(name)
        except ImportError:
            pass
    return None


CALLBACKS = sys.version_info >= (3, 13)

SCRIPT = """
import cubind._runtime as rt   # first in the main interpreter (its shutdown stops every runner)
import %s as interp
code = "THREADS = %%r" %% %r + %r    # code starts with a newline
for i in range(3):
    iid = interp.create()    # 3.13+: the 'isolated' configuration (own GIL)
    r = interp.run_string(iid, code)
    assert r is None, r
    interp.destroy(iid)
import cubind.driver as d
d.cuInit(0)
# The subinterpreters queued their calls on a stream of device 1's primary
# context: synchronizing that context waits until every one has fired (a
# context of device 0 would not wait for them).
r, ctx = d.cuDevicePrimaryCtxRetain(1); d.cuCtxSetCurrent(ctx)
assert d.cuCtxSynchronize()[0] == 0
c = rt._callback_counts()
# Calls that fired after their interpreter's runner stopped were skipped;
# their payloads were released at its atexit step, or leaked on purpose
# (counted) when they fired after it.
assert c["alive"] == c["leaked"], c
# Skipped calls were unmapped from the registry on the driver's thread, even
# those whose payload is leaked.
assert rt._registry_counts()["callback"] == 0, rt._registry_counts()
assert c["skipped"] > 0 or not %r, c
# The main interpreter's own runner still works after theirs ended.
seen = []
assert d.cuLaunchHostFunc(None, seen.append, 5)[0] == 0
assert d.cuCtxSynchronize()[0] == 0
assert seen == [5], seen
print('ok')
"""


@pytest.mark.skipif(interpreters_module() is None, reason="no subinterpreter API in this Python")
def test_driver_and_callbacks_in_subinterpreters():
    # A fresh process, so the driver loads inside the test.
    script = SCRIPT % (interpreters_module().__name__, CALLBACKS, CODE, CALLBACKS)
    proc = run_python(script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok", (proc.stdout, proc.stderr)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="per-interpreter GIL needs 3.12+")
def test_modules_declare_per_interpreter_gil_support():
    proc = run_python(
        "import _interpreters as i\n"
        "iid = i.create('isolated')\n"  # own GIL: import fails for modules that do not declare support
        "r = i.run_string(iid, 'import cubind.driver, cubind.cu, cubind._runtime')\n"
        "assert r is None, r\n"
        "print('ok')\n")
    if "No module named '_interpreters'" in proc.stderr:
        pytest.skip("no _interpreters module")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.skipif(not CALLBACKS, reason="callables in subinterpreters need 3.13+")
def test_exit_with_a_subinterpreter_whose_callbacks_still_fire():
    """The process ends a subinterpreter left alive: its runner stops and is
    joined first; queued calls are skipped; no crash, no hang."""
    proc = run_python(
        "import cubind._runtime\n"   # its shutdown stops the subinterpreter's runner
        "import _interpreters as interp\n"
        "iid = interp.create()\n"
        "r = interp.run_string(iid, %r)\n"
        "assert r is None, r\n"
        "print('ok')\n" % (
            "import time, cubind.cu as cu, cubind.driver as d\n"
            "d.cuInit(0)\n"
            "cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(0))\n"
            "s = cu.cuStreamCreate(0)\n"
            "for i in range(50):\n"
            "    cu.cuLaunchHostFunc(s, lambda x: time.sleep(0.001), i)\n"))
    assert proc.returncode == 0 and "Fatal" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == "ok", (proc.stdout, proc.stderr)


@pytest.mark.skipif(not CALLBACKS, reason="callables in subinterpreters need 3.13+")
def test_callables_refused_until_the_main_interpreter_imported_cubind():
    proc = run_python(
        "import _interpreters as interp\n"
        "iid = interp.create()\n"
        "r = interp.run_string(iid, %r)\n"
        "assert r is None, r\n"
        "interp.destroy(iid)\n"
        "print('ok')\n" % (
            "import cubind.cu as cu, cubind.driver as d\n"
            "d.cuInit(0)\n"
            "cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(0))\n"
            "try:\n"
            "    cu.cuLaunchHostFunc(None, print, 1)\n"
            "except RuntimeError as e:\n"
            "    assert 'main interpreter first' in str(e), e\n"
            "else:\n"
            "    raise AssertionError('not refused')\n"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok", (proc.stdout, proc.stderr)


KEEP_CODE = r'''
import threading
import cubind._runtime as rt
released = []
class Kept:
    def __del__(self):
        released.append(threading.get_ident())
before = rt._callback_counts()["pending_calls"]
rt._drop_on_new_thread(Kept)
# A registry keep-alive of this interpreter whose entry died on a thread
# without a thread state: not released there (that thread would have to
# enter an interpreter; PyGILState_Ensure would pick the main one), nor by
# the main interpreter's pending call, but queued on this interpreter's
# queue and released by its next drain, on its own thread.
assert released == [], released
assert rt._callback_counts()["pending_calls"] == before
rt._drain()
assert released == [threading.get_ident()], released
'''

KEEP_SCRIPT = """
import cubind._runtime as rt
import %s as interp
iid = interp.create()
r = interp.run_string(iid, %r)
assert r is None, r
interp.destroy(iid)
print('ok')
"""


@pytest.mark.skipif(interpreters_module() is None, reason="no subinterpreter API in this Python")
def test_a_keep_alive_is_released_in_its_own_interpreter():
    proc = run_python(KEEP_SCRIPT % (interpreters_module().__name__, KEEP_CODE))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok", (proc.stdout, proc.stderr)


# Deferred work is flagged per interpreter: the main interpreter's binding
# calls (which drain its own queue) must not clear the flag of a
# subinterpreter whose queue still holds work, or that work would wait for
# the subinterpreter's atexit step (it has no runner here: no callables).
FLAG_SCRIPT = """
import cubind._runtime as rt
import cubind.driver as d
import %s as interp
assert d.cuInit(0)[0] == 0
iid = interp.create()
r = interp.run_string(iid, '''
import cubind._runtime as rt, cubind.driver as d
released = []
class Kept:
    def __del__(self):
        released.append(1)
rt._drop_on_new_thread(Kept)   # queued on this interpreter's queue
assert released == [], released
''')
assert r is None, r
for _ in range(3):
    assert d.cuDriverGetVersion()[0] == 0   # the main interpreter's calls
r = interp.run_string(iid, '''
assert d.cuDriverGetVersion()[0] == 0      # this interpreter's next call drains it
assert released == [1], released
''')
assert r is None, r
interp.destroy(iid)
print('ok')
"""


@pytest.mark.skipif(interpreters_module() is None, reason="no subinterpreter API in this Python")
def test_a_drain_in_one_interpreter_leaves_another_interpreters_work_flagged():
    proc = run_python(FLAG_SCRIPT % interpreters_module().__name__)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok", (proc.stdout, proc.stderr)
