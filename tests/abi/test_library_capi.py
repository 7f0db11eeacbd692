# SPDX-License-Identifier: Apache-2.0
"""The library APIs' capsule C API and ABI tools: the test-only consumer
built from out/cubind_nvrtc_api.h and out/cubind_nvjitlink_api.h calls the
real libnvrtc / libnvJitLink through cubind.nvrtc's and cubind.nvjitlink's
tables; an entry point that cannot load its library returns the sentinel
(NULL for nvrtcGetErrorString) with DriverNotFoundError; the one
built from out/cubind_nvfatbin_api.h, out/cubind_nvml_api.h and
out/cubind_cufile_api.h (tests/consumer/fetched_consumer.c) calls CUDA
12.4's libnvfatbin, libcufile and the 550 driver's libnvidia-ml that
configure fetched, alike (skipped, with the reason, where configure did
not fetch them); `cubind
abi-check` matches the built modules with their headers; the saved
manifests abi/nvrtc-13.0.json, abi/nvjitlink-13.0.json and
abi/nvvm-13.0.json regenerate unchanged."""
import os
import sys

import pytest

from conftest import (BUILD_PY, CONSUMER_DIR, CUBIND, EXT_SUFFIX, REPO, api_header,
                      check_saved_manifest, cuda_driver_loadable, py_env, run)

APIS = [("nvrtc", "nvrtc.h"), ("nvjitlink", "nvJitLink.h"), ("nvvm", "nvvm.h")]
# a function each manifest must have
CORE = {"nvrtc": "nvrtcCompileProgram", "nvjitlink": "nvJitLinkComplete",
        "nvvm": "nvvmCompileProgram"}


def consumer(name="_cubind_library_consumer"):
    so = os.path.join(CONSUMER_DIR, name + EXT_SUFFIX)
    if not os.path.isfile(so):
        pytest.fail("%s is missing: run `ninja tests`" % so, pytrace=False)
    return CONSUMER_DIR


def py(code, **env):
    e = py_env(consumer(), consumer("_cubind_fetched_consumer"), BUILD_PY)
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
    raises_without_library(tmp_path, "CUBIND_LIBCUDART", "libcudart.so.0", [call])


def raises_without_library(tmp_path, var, soname, calls, consumer_module="_cubind_library_consumer"):
    """Each of `calls` (of the consumer c) with `var` naming no file: the
    entry point returned its sentinel with DriverNotFoundError naming that
    file set, which the consumer raised."""
    missing = str(tmp_path / soname)
    code = "import cubind, %s as c\n" % consumer_module
    for call in calls:
        code += ("try:\n"
                 "    print('returned', %s)\n"
                 "except cubind.DriverNotFoundError as e:\n"
                 "    print('raised', %r in str(e))\n" % (call, missing))
    p = py(code, **{var: missing})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["raised", "True"] * len(calls), p.stdout


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


# The modules generated from the headers configure fetches
# (scripts/fetch-cuda-libs.sh), called through their tables by
# tests/consumer/fetched_consumer.c: its module and the file its
# DriverNotFoundError names when the variable names no file.
FETCHED = {"nvfatbin": ("libnvfatbin", "CUBIND_LIBNVFATBIN", "libnvfatbin.so.0"),
           "nvml": ("libnvidia-ml.so.1", "CUBIND_LIBNVML", "libnvidia-ml.so.0"),
           "cufile": ("libcufile", "CUBIND_LIBCUFILE", "libcufile.so.99")}


def fetched_consumer_or_skip(api):
    """The fetched consumer with cubind.<api> compiled in and its library
    loading (conftest.py points the module at the fetched one); else
    skipped with the reason, as tests/python's tests of cubind.<api> skip."""
    p = py("import _cubind_fetched_consumer as c; print(c.apis())")
    assert p.returncode == 0, p.stderr
    if api not in eval(p.stdout):
        pytest.skip("cubind.%s is not built: configure found no header for it "
                    "(scripts/fetch-cuda-libs.sh)" % api)
    p = py("import cubind.%s as m; print(m._library_status())" % api)
    assert p.returncode == 0, p.stderr
    ok, where = eval(p.stdout)
    if not ok:
        pytest.skip("no %s: %s" % (FETCHED[api][0], where))


def fetched_py(code):
    """code run after `import _cubind_fetched_consumer as c`: the lines it
    printed with out() (libcufile prints its own to stdout)."""
    p = py("import _cubind_fetched_consumer as c\n"
           "def out(*values): print('>>', *values)\n" + code)
    assert p.returncode == 0, p.stderr
    return [line[3:] for line in p.stdout.splitlines() if line.startswith(">> ")]


def raises_without_fetched(api, tmp_path, *calls):
    _, var, soname = FETCHED[api]
    raises_without_library(tmp_path, var, soname, calls, "_cubind_fetched_consumer")


# Hand-written PTX 8.0 for sm_75, which CUDA 12.4's libnvfatbin accepts.
PTX = b""".version 8.0
.target sm_75
.address_size 64

.visible .entry consumer_kernel(.param .u64 p)
{
    ret;
}
"""


def test_consumer_calls_nvfatbin(tmp_path):
    """nvFatbinVersion, and a fat binary of PTX (create, add, size, get,
    destroy) through cubind.nvfatbin's table; the library's own error a
    plain status; without the library the sentinel and
    DriverNotFoundError."""
    import struct

    fetched_consumer_or_skip("nvfatbin")
    lines = fetched_py("out(c.nvfatbin_version())\n"
                       "out(c.fatbin_of_ptx(%r, '75'))\n"
                       "out(c.fatbin_of_ptx(%r, '75')[0])\n"
                       "import cubind.nvfatbin as n; out(int(n.Result.ERROR_INVALID_ARCH))\n"
                       "out(c.fatbin_of_ptx(%r, 'sm_75')[0])" % (PTX, PTX.replace(b".version 8.0\n", b""), PTX))
    rc, major, minor = eval(lines[0])
    assert rc == 0 and (major, minor) >= (12, 4)
    rc, image = eval(lines[1])
    assert rc == 0
    magic, version, header_size, body_size = struct.unpack_from("<IHHQ", image)
    assert (magic, version, header_size) == (0xBA55ED50, 1, 16)  # a fat binary's header
    assert header_size + body_size == len(image)
    assert b".entry consumer_kernel" in image  # uncompressed: the PTX as given
    assert int(lines[2]) != 0  # PTX without its version: the library refuses it
    assert int(lines[4]) == int(lines[3])  # not an architecture number
    raises_without_fetched("nvfatbin", tmp_path, "c.nvfatbin_version()",
                           "c.fatbin_of_ptx(%r, '75')" % PTX)


def test_consumer_calls_nvml(tmp_path):
    """nvmlInit_v2 through cubind.nvml's table with no NVIDIA kernel driver:
    the library's NVML_ERROR_DRIVER_NOT_LOADED as a plain status, and
    nvmlErrorString's text for it; without the library the sentinels and
    DriverNotFoundError."""
    fetched_consumer_or_skip("nvml")
    lines = fetched_py("out(c.nvml_init()); out(repr(c.nvml_error_string(9)))\n"
                       "import cubind.nvml as m\n"
                       "out(int(m.Return.ERROR_DRIVER_NOT_LOADED), repr(m.error_string(9)))")
    rc, text = eval(lines[0])
    if rc == 0:
        assert text == "Success"  # nvmlErrorString(NVML_SUCCESS)
        pytest.skip("an NVIDIA driver is loaded here: tests/gpu/test_nvml_gpu.py")
    driver_not_loaded, python_text = lines[2].split(" ", 1)
    assert rc == int(driver_not_loaded) == 9
    assert repr(text) == lines[1] == python_text == repr("Driver Not Loaded")
    raises_without_fetched("nvml", tmp_path, "c.nvml_init()", "c.nvml_error_string(9)")


def test_consumer_calls_cufile(tmp_path):
    """cuFileGetVersion, and cuFileDriverOpen without GPUDirect Storage
    (its cuFile status, returned as a plain CUfileError_t), through
    cubind.cufile's table; without the library the sentinel and
    DriverNotFoundError."""
    fetched_consumer_or_skip("cufile")
    lines = fetched_py("out(c.cufile_version()); out(c.cufile_driver_open())\n"
                       "import cubind.cufile as m; out(int(m.OpError.DRIVER_NOT_INITIALIZED))")
    err, cu_err, version = eval(lines[0])
    assert (err, cu_err) == (0, 0) and version >= 1000  # 1.9 is 1090
    err, cu_err = eval(lines[1])
    if not cuda_driver_loadable():
        assert err >= int(lines[2])  # a cuFile status, not success
    raises_without_fetched("cufile", tmp_path, "c.cufile_version()", "c.cufile_driver_open()")


@pytest.mark.parametrize("header", sorted(f for f in os.listdir(os.path.join(REPO, "out"))
                                          if f.startswith("cubind_") and f.endswith("_api.h")))
def test_header_usage_example_is_what_its_entry_point_returns(header):
    """Each consumer header's usage example holds its entry point's result
    in the type that entry point returns, and finds the sentinel where the
    error contract puts it: the status itself, or the status field of a
    result-field struct (cuFile's CUfileError_t, `.err`). Before,
    cubind_cufile_api.h said cuFile's functions return CUfileOpError, and
    nvrtc's, nvvm's and nvfatbin's example called their error-string
    function, which returns a string."""
    import re
    with open(os.path.join(REPO, "out", header)) as f:
        text = f.read()
    m = re.search(r"\*\s+(\w+) rc = cubind_(\w+)\(\.\.\.\);\n"
                  r" \*\s+if \(rc(?:\.(\w+))? == CUBIND_\w+_CAPI_SENTINEL", text)
    assert m, "no usage example in %s" % header
    rc_type, example, field = m.groups()
    fn = re.search(r"typedef (.+?) \(\*cubind_\w+_fn_%s\)\(" % re.escape(example), text)
    assert fn and fn.group(1) == rc_type, (header, rc_type, fn and fn.group(1))
    contract = " ".join(text.split("Error contract", 1)[1].split("*/", 1)[0].split())
    contract = contract.replace(" * ", " ")
    assert "function returns (%s" % rc_type in contract, contract
    if field:
        # the status is a field: the sentinel is that field's value
        assert "in `%s` of a %s" % (field, rc_type) in contract, contract
