"""cubind in subinterpreters: the modules declare per-interpreter GIL
support, keep their Python objects in per-module state, and work in an
isolated subinterpreter (3.12+, own GIL) as in the main one. Python
callables as CUDA callbacks are refused there with a clear error (the
driver's threads enter the main interpreter only)."""
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
s = cu.cuStreamCreate(0)
try:
    cu.cuLaunchHostFunc(s, print, None)
except RuntimeError as e:
    assert "main interpreter" in str(e)
else:
    raise AssertionError("callables must be refused in a subinterpreter")
cu.cuStreamDestroy(s)
'''


def interpreters_module():
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            return __import__(name)
        except ImportError:
            pass
    return None


@pytest.mark.skipif(interpreters_module() is None, reason="no subinterpreter API in this Python")
def test_driver_in_subinterpreters():
    # A fresh process, so the driver loads inside the test.
    script = "import %s as interp\n" % interpreters_module().__name__ + (
        "import textwrap\n"
        "code = %r\n"
        "for i in range(3):\n"
        "    iid = interp.create()\n"
        "    r = interp.run_string(iid, code)\n"
        "    assert r is None, r\n"
        "    interp.destroy(iid)\n"
        "print('ok')\n" % CODE)
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
