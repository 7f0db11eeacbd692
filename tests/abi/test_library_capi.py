# SPDX-License-Identifier: Apache-2.0
"""The library APIs' capsule C API and ABI tools: the test-only consumer
built from out/cubind_nvrtc_api.h and out/cubind_nvjitlink_api.h calls the
real libnvrtc / libnvJitLink through cubind.nvrtc's and cubind.nvjitlink's
tables; an entry point that cannot load its library returns the sentinel
(NULL for nvrtcGetErrorString) with DriverNotFoundError; `cubind
abi-check` matches the built modules with their headers; the saved
manifests abi/nvrtc-13.0.json, abi/nvjitlink-13.0.json and
abi/nvvm-13.0.json regenerate unchanged."""
import os
import sys

import pytest

from conftest import (BUILD_PY, CONSUMER_DIR, CUBIND, EXT_SUFFIX, REPO, api_header,
                      check_saved_manifest, py_env, run)

APIS = [("nvrtc", "nvrtc.h"), ("nvjitlink", "nvJitLink.h"), ("nvvm", "nvvm.h")]
# a function each manifest must have
CORE = {"nvrtc": "nvrtcCompileProgram", "nvjitlink": "nvJitLinkComplete",
        "nvvm": "nvvmCompileProgram"}


def consumer():
    so = os.path.join(CONSUMER_DIR, "_cubind_library_consumer" + EXT_SUFFIX)
    if not os.path.isfile(so):
        pytest.fail("%s is missing: run `ninja tests`" % so, pytrace=False)
    return CONSUMER_DIR


def py(code, **env):
    e = py_env(consumer(), BUILD_PY)
    e.update(env)
    return run([sys.executable, "-c", code], env=e)


def test_consumer_calls_the_libraries():
    p = py("import _cubind_library_consumer as c\n"
           "print(c.nvrtc_version()); print(c.jit_version()); print(c.error_string(6))\n"
           "print(c.nvvm_ir_version())\n"
           "print(c.ptx_size(b'extern \"C\" __global__ void k(float *p) { p[0] = 1; }'))")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    rc, major, _ = eval(lines[0])
    assert rc == 0 and major >= 12
    assert eval(lines[1])[0] == 0
    assert lines[2] == "NVRTC_ERROR_COMPILATION"
    rc, major, _, _, _ = eval(lines[3])
    assert rc == 0 and major >= 1
    rc, size = eval(lines[4])
    assert rc == 0 and size > 100


def test_consumer_calls_the_runtime(tmp_path):
    """cubind.runtime's table: the bundled runtime's release; with
    CUBIND_LIBCUDART naming no file, the sentinel and DriverNotFoundError."""
    p = py("import _cubind_library_consumer as c; print(c.runtime_version())")
    assert p.returncode == 0, p.stderr
    rc, version = eval(p.stdout)
    assert rc == 0 and version >= 13000
    raises_without_cudart(tmp_path, "c.runtime_version()")


def raises_without_cudart(tmp_path, call):
    """`call` (of the consumer c) with CUBIND_LIBCUDART naming no file
    raises DriverNotFoundError naming that file."""
    missing = str(tmp_path / "libcudart.so.0")
    p = py("import cubind, _cubind_library_consumer as c\n"
           "try:\n"
           "    %s\n"
           "except cubind.DriverNotFoundError as e:\n"
           "    print('raised', %r in str(e))\n" % (call, missing), CUBIND_LIBCUDART=missing)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["raised", "True"]


def test_consumer_declares_the_whole_runtime_table():
    """With CUBIND_RUNTIME_API_WITH_<file> for each bind-header file, the
    consumer header declares every function of abi/runtime-13.0.json (the
    import checked each signature against the module's table)."""
    import json
    p = py("import _cubind_library_consumer as c; print(' '.join(c.runtime_names()))")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(REPO, "abi", "runtime-13.0.json")) as f:
        manifest = [fn["name"] for fn in json.load(f)["functions"]]
    assert sorted(p.stdout.split()) == sorted(manifest)


def test_consumer_gets_a_struct_through_the_runtime_table(tmp_path):
    """cudaCreateChannelDesc returns a struct by value: its fields through
    the table; without the library an all-zero struct and
    DriverNotFoundError."""
    p = py("import _cubind_library_consumer as c; print(c.channel_desc(8, 16, 0, 0, 1))")
    assert p.returncode == 0, p.stderr
    assert eval(p.stdout) == (8, 16, 0, 0, 1)
    raises_without_cudart(tmp_path, "c.channel_desc(8, 0, 0, 0, 0)")


def test_entry_point_raises_when_the_library_is_missing(tmp_path):
    missing = str(tmp_path / "libnvrtc.so.0")
    p = py("import cubind, _cubind_library_consumer as c\n"
           "for f, a in ((c.nvrtc_version, ()), (c.error_string, (6,))):\n"
           "    try:\n"
           "        f(*a)\n"
           "    except cubind.DriverNotFoundError as e:\n"
           "        print('raised', %r in str(e))\n" % missing,
           CUBIND_LIBNVRTC=missing)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["raised", "True", "raised", "True"]
    # nvvm's entry point returns its sentinel with the same exception
    missing = str(tmp_path / "libnvvm.so.0")
    p = py("import cubind, _cubind_library_consumer as c\n"
           "try:\n"
           "    c.nvvm_ir_version()\n"
           "except cubind.DriverNotFoundError as e:\n"
           "    print('raised', %r in str(e))\n" % missing,
           CUBIND_LIBNVVM=missing)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["raised", "True"]


@pytest.mark.parametrize("api,header", APIS)
def test_abi_check_and_saved_manifest(api, header, tmp_path):
    path = api_header(api)
    assert os.path.basename(path) == header
    so = os.path.join(BUILD_PY, "cubind", api + EXT_SUFFIX)
    p = run([CUBIND, "abi-check", so, "--header", path, "--python", sys.executable])
    assert p.returncode == 0 and "matches the header" in p.stdout, p.stdout + p.stderr
    saved = os.path.join(REPO, "abi", "%s-13.0.json" % api)
    manifest = check_saved_manifest(saved, path, tmp_path)
    names = {f["name"] for f in manifest["functions"]}
    assert CORE[api] in names
    # against its own header: no change; against the other API's: drift
    assert run([CUBIND, "abi-diff", saved, path]).returncode == 0
    other = [a for a, h in APIS if a != api][0]
    p = run([CUBIND, "abi-check", so, "--header", api_header(other),
             "--python", sys.executable])
    assert p.returncode == 1 and "DRIFT" in p.stdout
