# SPDX-License-Identifier: Apache-2.0
"""The capsule C API: the test-only consumer (tests/consumer) built from
out/cubind_driver_api.h imports cleanly, calls through the table, sees
Python exceptions raised inside entry points, and refuses bindings whose
ABI differs from its header."""
import os
import re
import sys

import pytest

from conftest import (BUILD_PY, CONSUMER_DIR, REPO, compile_consumer, configured_pythons, generate,
                      py_env, release_include, run, EXT_SUFFIX)


def consumer_built():
    so = os.path.join(CONSUMER_DIR, "_cubind_consumer" + EXT_SUFFIX)
    if not os.path.isfile(so):
        pytest.fail("%s is missing: run `ninja tests`" % so, pytrace=False)
    return CONSUMER_DIR


def py(code, *paths, libcuda=None, python=sys.executable):
    env = py_env(*paths) if libcuda is None else py_env(*paths, libcuda=libcuda)
    return run([python, "-c", code], env=env)


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


SEPARATOR = "\n=== mismatches ===\n"
# Imports the consumer; prints the ImportError's message, SEPARATOR, and
# every entry of its .mismatches.
IMPORT_LISTING_MISMATCHES = (
    "try:\n"
    "    import _cubind_consumer\n"
    "except ImportError as e:\n"
    "    print(str(e), end=%r)\n"
    "    print('\\n'.join(e.mismatches))\n"
    "else:\n"
    "    raise SystemExit('imported')\n" % SEPARATOR)


def assert_short(message, mismatches):
    """The message: the count first, at most 5 entries, then where the rest
    are (when there are more); .mismatches holds every entry."""
    entries = re.findall(r"^  \S.*:$", mismatches, re.M)
    shown = re.findall(r"^  \S.*:$", message, re.M)
    m = re.search(r": (\d+) functions or struct layouts differ; (the first|all) (\d+):\n", message)
    assert m, message[:2000]
    assert int(m.group(1)) == len(entries) and int(m.group(3)) == len(shown) == min(5, len(entries))
    assert shown == entries[:len(shown)]
    if len(entries) > 5:
        assert message.rstrip().endswith("(this ImportError's .mismatches lists all of them)")


@pytest.mark.parametrize("python", configured_pythons())
def test_consumer_compiled_against_a_changed_struct_is_refused(tmp_path, cuda_include, python):
    """The consumer header of these very bindings (out/), compiled against a
    copy of their cuda.h in which one struct (CUDA_MEMCPY2D) has one more
    field: the signatures match, the layouts the compiler computed do not,
    so the import is refused naming that struct with both sizes (05a670f
    imported it, and would have passed the driver the wrong layout). On
    every configured interpreter (the free-threaded one included): the
    consumer is compiled for it and imported into its bindings."""
    with open(os.path.join(cuda_include, "cuda.h")) as f:
        text = f.read()
    changed, n = re.subn(r"^(typedef struct CUDA_MEMCPY2D_st \{)$", r"\1\n    int testsAbiExtra;",
                         text, count=1, flags=re.M)
    assert n == 1
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text(changed)
    cdir = compile_consumer(os.path.join(REPO, "out"), str(inc), str(tmp_path / "consumer"), python)
    p = py(IMPORT_LISTING_MISMATCHES, cdir, BUILD_PY, python=python)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    message, mismatches = p.stdout.split(SEPARATOR, 1)
    assert_short(message, mismatches)
    assert re.search(r"^  CUDA_MEMCPY2D\w*:\n    expected: 136 bytes, layout hash [0-9a-f]{16}\n"
                     r"    module:   128 bytes, layout hash [0-9a-f]{16}$", mismatches, re.M), mismatches
    # Only layouts: every function's signature (a string from the header the
    # bindings were generated from) still matches.
    assert all(not re.match(r"  cu\w+:", line) for line in mismatches.splitlines()), mismatches
    # The same consumer compiled against the unchanged cuda.h imports.
    cdir = compile_consumer(os.path.join(REPO, "out"), cuda_include, str(tmp_path / "same"), python)
    p = py("import _cubind_consumer as c; print(c.init(0))", cdir, BUILD_PY, python=python)
    assert p.returncode == 0 and p.stdout.split() == ["0"], p.stdout + p.stderr[-3000:]


def test_consumer_from_12_4_refused_by_13_0_bindings(tmp_path, cuda_include):
    """Built against 12.4's header and imported into bindings generated from
    13.0: ImportError listing each function whose ABI differs, with both
    signatures."""
    inc = release_include("12.4")
    gen = str(tmp_path / "gen")
    generate(inc, gen)
    cdir = compile_consumer(gen, inc, str(tmp_path / "consumer"))
    p = py(IMPORT_LISTING_MISMATCHES, cdir, BUILD_PY)
    assert p.returncode == 0, p.stderr[-3000:]
    message, err = p.stdout.split(SEPARATOR, 1)
    assert "cubind.driver's C API does not match" in message, message[-3000:]
    assert_short(message, err)
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
