# SPDX-License-Identifier: Apache-2.0
"""The capsule C API: the test-only consumer (tests/consumer) built from
out/cubind_driver_api.h imports cleanly, calls through the table, sees
Python exceptions raised inside entry points, and refuses bindings whose
ABI differs from its header."""
import os
import sys

import pytest

from conftest import (BUILD_PY, CONSUMER_DIR, compile_consumer, generate, py_env, release_include,
                      run, EXT_SUFFIX)


def consumer_built():
    so = os.path.join(CONSUMER_DIR, "_cubind_consumer" + EXT_SUFFIX)
    if not os.path.isfile(so):
        pytest.fail("%s is missing: run `ninja tests`" % so, pytrace=False)
    return CONSUMER_DIR


def py(code, *paths, libcuda=None):
    env = py_env(*paths) if libcuda is None else py_env(*paths, libcuda=libcuda)
    return run([sys.executable, "-c", code], env=env)


def test_capsule_is_exported():
    p = py("import cubind.driver as d, types; c = d._C_API; print(type(c).__name__, repr(c))", BUILD_PY)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("PyCapsule ") and '"cubind.driver._C_API"' in p.stdout


def test_consumer_imports_and_calls():
    cdir = consumer_built()
    p = py("import _cubind_consumer as c\n"
           "print(c.init(0)); print(c.driver_get_version()); print(c.device_get(1)); print(c.device_get(99))",
           cdir, BUILD_PY)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "0"
    rc, version = eval(lines[1])
    assert rc == 0 and version > 0
    assert eval(lines[2]) == (0, 1)
    assert eval(lines[3])[0] == 101  # CUDA_ERROR_INVALID_DEVICE, a plain driver result


def test_exception_inside_entry_point_propagates():
    """No driver: the entry point returns the sentinel with
    DriverNotFoundError set, and the consumer propagates exactly that."""
    cdir = consumer_built()
    code = ("import cubind, _cubind_consumer as c\n"
            "try:\n"
            "    c.driver_get_version()\n"
            "except cubind.DriverNotFoundError as e:\n"
            "    print('DriverNotFoundError', type(e).__name__, '/nonexistent' in str(e))\n"
            "except BaseException as e:\n"
            "    print('WRONG', type(e).__name__, e)\n"
            "try:\n"
            "    c.init(0)\n"
            "except cubind.DriverNotFoundError:\n"
            "    print('again')\n")
    p = py(code, cdir, BUILD_PY, libcuda="/nonexistent")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["DriverNotFoundError", "DriverNotFoundError", "True", "again"]
    assert "SystemError" not in p.stderr


def test_abi_signatures_match_capsule_names():
    p = py("import cubind.driver as d; s = d._abi_signatures(); "
           "print(len(s), s['cuCtxCreate'])", BUILD_PY)
    assert p.returncode == 0, p.stderr
    n, sig = p.stdout.split(" ", 1)
    assert int(n) > 400 and sig.startswith("CUresult cuCtxCreate_v4(")


def test_consumer_from_12_4_refused_by_13_0_bindings(tmp_path, cuda_include):
    """Built against 12.4's header and imported into bindings generated from
    13.0: ImportError listing each function whose ABI differs, with both
    signatures."""
    inc = release_include("12.4")
    gen = str(tmp_path / "gen")
    generate(inc, gen)
    cdir = compile_consumer(gen, inc, str(tmp_path / "consumer"))
    p = py("import _cubind_consumer", cdir, BUILD_PY)
    assert p.returncode != 0
    err = p.stderr
    assert "ImportError: cubind.driver's C API does not match" in err, err[-3000:]
    assert "SystemError" not in err
    # cuCtxCreate: _v2 (12.4) vs _v4 with CUctxCreateParams* (13.0).
    assert ("  cuCtxCreate:\n    expected: CUresult cuCtxCreate_v2(struct CUctx_st **, unsigned int, int)"
            " @cuCtxCreate/3020\n    module:   CUresult cuCtxCreate_v4(struct CUctx_st **, "
            "struct CUctxCreateParams_st *, unsigned int, int) @cuCtxCreate/12050") in err
    # 12.4's cuCtxCreate_v3 (CUexecAffinityParam*) is gone from 13.0.
    assert "  cuCtxCreate_v3:\n    expected: CUresult cuCtxCreate_v3(struct CUctx_st **, " \
           "struct CUexecAffinityParam_st *, int, unsigned int, int)" in err
    assert "module:   (missing)" in err
    # A function unchanged between the releases is not listed.
    assert "  cuInit:" not in err
