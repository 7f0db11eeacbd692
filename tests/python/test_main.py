# SPDX-License-Identifier: Apache-2.0
"""`python -m cubind` (issue 43; before it: "No module named
cubind.__main__"): the report of what the installation is and finds, on
the fake driver and with no driver; --include; abi-check against the
running driver and against ABI manifests, without libclang."""
import json
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "abi" / "cuda-13.0.json"


def has_headers():
    """Whether this installation has the C API headers (a wheel and the
    build tree do; the ASan tree of tests/fuzz has none)."""
    import cubind
    return os.path.isfile(os.path.join(cubind.get_include(), "cubind_driver_api.h"))


def cubind_main(*args, **env):
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-m", "cubind", *map(str, args)],
                          capture_output=True, text=True, env=full_env, timeout=120)


def lines_of(p):
    assert p.returncode == 0, p.stdout + p.stderr
    return dict(line.split(": ", 1) for line in p.stdout.splitlines()[1:])


def test_report_on_the_fake_driver():
    import cubind
    p = cubind_main()
    first = p.stdout.splitlines()[0]
    assert first == "cubind %s (bindings generated from CUDA %s's headers)" % (
        cubind.__version__, cubind.__cuda_version__)
    lines = lines_of(p)
    fake = os.path.realpath(os.environ["CUBIND_LIBCUDA"])
    # the fake reports CUDA 13.0 and two devices
    assert lines["driver"] == "%s, CUDA 13.0, 2 devices" % fake, lines["driver"]
    assert lines["package"] == os.path.dirname(cubind.__file__)
    for library, version in (("NVRTC", ", CUDA "), ("nvJitLink", ", CUDA "),
                             ("NVVM", ", NVVM "), ("CUDA runtime", ", CUDA "),
                             ("nvFatbin", ", CUDA "), ("cuFile", ", cuFile "), ("NVML", ", NVML ")):
        line = lines[library]
        assert line.startswith(("not found: ", "not available: ")) or version in line, line
    # conftest.py points CUBIND_LIBNVFATBIN at the fetched CUDA 12.4 library
    if os.environ.get("CUBIND_LIBNVFATBIN"):
        assert lines["nvFatbin"] == "%s, CUDA 12.4" % os.environ["CUBIND_LIBNVFATBIN"], lines["nvFatbin"]
    if os.environ.get("CUBIND_LIBCUFILE"):  # CUDA 12.4's libcufile is cuFile 1.9
        assert lines["cuFile"] == "%s, cuFile 1.9" % os.environ["CUBIND_LIBCUFILE"], lines["cuFile"]
    if os.environ.get("CUBIND_LIBNVML"):  # the 550 driver's NVML, without a driver
        assert lines["NVML"].startswith("%s, NVML 12.550." % os.environ["CUBIND_LIBNVML"]), lines["NVML"]
    assert lines["C API headers"] == (cubind.get_include() if has_headers() else "not installed")


def test_report_lists_every_library_module_of_the_package():
    """Each library API's module the package holds has its line, found
    from the package's files (fails on 88d81ea, which named NVRTC and
    nvJitLink only); one the report does not know is listed by name."""
    import importlib.machinery

    from cubind import __main__ as main
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    files = ["driver" + suffix, "_runtime" + suffix, "_cudart.so", "runtime" + suffix,
             "nvvm" + suffix, "nvrtc" + suffix, "nvjitlink" + suffix, "cufile" + suffix,
             "nvml" + suffix,
             "nvrtc.cpython-399-x86_64-linux-gnu.so", "rtc.py", "cudart.pyi"]
    assert main.library_modules(files) == ["nvrtc", "nvjitlink", "nvvm", "runtime", "cufile", "nvml"]
    installed = main.library_modules(os.listdir(os.path.dirname(main.__file__)))
    assert {"nvrtc", "nvjitlink", "nvvm", "runtime"} <= set(installed), installed
    lines = lines_of(cubind_main())
    for module in installed:
        assert main.LIBRARIES[module][0] in lines, (module, lines)


def test_report_without_a_driver_says_why():
    missing = "/nonexistent-cubind/libcuda.so.1"
    lines = lines_of(cubind_main(CUBIND_LIBCUDA=missing))
    assert lines["driver"].startswith("not loaded: could not load the CUDA driver"), lines
    assert missing in lines["driver"] and "NVIDIA driver" in lines["driver"]


def test_report_free_threading_state():
    lines = lines_of(cubind_main())
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    assert ("free-threaded build" if free_threaded else "GIL build") in lines["python"]
    if free_threaded:   # the modules keep the GIL off
        assert lines["python"].endswith("GIL disabled"), lines["python"]
        forced = lines_of(cubind_main(PYTHON_GIL="1"))["python"]
        assert "GIL enabled" in forced, forced
    else:
        assert lines["python"].endswith("GIL enabled"), lines["python"]


def test_include_prints_the_headers_folder():
    import cubind
    p = cubind_main("--include")
    if not has_headers():
        assert p.returncode == 1 and "has no C API headers" in p.stderr, p.stdout + p.stderr
        return
    assert p.returncode == 0 and p.stdout == cubind.get_include() + "\n", p.stderr
    assert os.path.isfile(os.path.join(p.stdout.strip(), "cubind_driver_api.h"))


def test_bad_option_is_a_usage_error():
    p = cubind_main("--no-such-option")
    assert p.returncode == 2 and "usage:" in p.stderr


def abi_check(*args, **env):
    p = cubind_main("abi-check", "--json", *args, **env)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    return p.returncode, json.loads(p.stdout)


def test_abi_check_against_the_running_driver():
    import cubind.driver
    rc, result = abi_check()
    table = cubind.driver._abi_signatures()
    assert result["entries"] == len(table)
    missing = result["driver"]["missing"]
    # the fake implements a subset: what it has resolves, what it lacks is named
    assert "cuInit" not in missing and "cuMemAlloc" not in missing
    assert "cuArrayCreate" in missing and missing["cuArrayCreate"].startswith("cuArrayCreate/")
    assert result["driver"]["driver"] == 13000
    assert rc == 1   # entry points the driver lacks are drift


def test_abi_check_a_driver_too_old():
    # The fake as a CUDA 12.0 driver: a 12.4-or-newer entry point (the
    # bindings of 13.0 ask cuCtxCreate at 12050) does not resolve.
    code = ("import ctypes, os, sys, runpy\n"
            "ctypes.CDLL(os.environ['CUBIND_LIBCUDA']).fakecuda_set_driver_version(12000)\n"
            "sys.argv = ['cubind', 'abi-check', '--json']\n"
            "runpy.run_module('cubind', run_name='__main__')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    result = json.loads(p.stdout)
    assert result["driver"]["driver"] == 12000
    assert "cuCtxCreate" in result["driver"]["missing"]
    assert "cuInit" not in result["driver"]["missing"]


def test_abi_check_against_a_manifest(tmp_path):
    # The installed bindings against the manifest of their own release: no
    # manifest drift. Against an edited copy: the function removed from the
    # table's view is "added", a signature changed is "changed", a function
    # the table lacks is "missing".
    _, same = abi_check(MANIFEST)
    assert same["manifests"][str(MANIFEST)] == {"missing": [], "changed": {}, "added": []}

    data = json.loads(MANIFEST.read_text())
    functions = {f["name"]: f for f in data["functions"]}
    functions["cuMemAlloc"]["signature"] = functions["cuMemAlloc"]["signature"].replace(
        "@cuMemAlloc/3020", "@cuMemAlloc/2000")
    del functions["cuInit"]
    data["functions"] = list(functions.values()) + [
        dict(functions["cuDeviceGet"], name="cuNoSuchFunction")]
    edited = tmp_path / "consumer.json"
    edited.write_text(json.dumps(data))
    rc, result = abi_check(edited)
    m = result["manifests"][str(edited)]
    assert m["missing"] == ["cuNoSuchFunction"]
    assert list(m["changed"]) == ["cuMemAlloc"]
    assert "@cuMemAlloc/2000" in m["changed"]["cuMemAlloc"]["recorded"]
    assert m["added"] == ["cuInit"]
    assert rc == 1


def test_abi_check_text_report():
    p = cubind_main("abi-check", MANIFEST)
    assert p.returncode == 1, p.stderr   # the fake lacks entry points
    assert "installed bindings: " in p.stdout and " entry points resolve" in p.stdout
    assert "%s: 0 missing, 0 changed, 0 only installed" % MANIFEST in p.stdout
    assert "  - cuArrayCreate: cuArrayCreate/" in p.stdout or "more (--json" in p.stdout


def test_abi_check_without_a_driver():
    missing = "/nonexistent-cubind/libcuda.so.1"
    # with a manifest: it is checked, and the driver is reported not checked
    p = cubind_main("abi-check", MANIFEST, CUBIND_LIBCUDA=missing)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "driver: not checked: could not load the CUDA driver" in p.stdout
    # with nothing to check: exit status 2
    p = cubind_main("abi-check", CUBIND_LIBCUDA=missing)
    assert p.returncode == 2, p.stdout + p.stderr


def test_abi_check_of_the_runtime_table():
    """--module runtime: cubind.runtime's table against the runtime's own
    manifest has no drift (it carries every function of it, the
    bind-header files' too); against 12.4's, the changes are drift; the
    driver is not asked; with no manifest nothing is checked."""
    own = ROOT / "abi" / "runtime-13.0.json"
    rc, result = abi_check("--module", "runtime", own)
    assert rc == 0, result
    assert result["module"] == "runtime"
    assert result["manifests"][str(own)] == {"missing": [], "changed": {}, "added": []}
    assert result["entries"] == len(json.loads(own.read_text())["functions"])
    assert "error" in result["driver"]
    old = ROOT / "abi" / "runtime-12.4.json"
    rc, result = abi_check("--module", "runtime", old)
    assert rc == 1 and "cudaThreadExit" in result["manifests"][str(old)]["missing"]
    p = cubind_main("abi-check", "--module", "runtime", own)
    assert p.returncode == 0 and "cubind.runtime's table" in p.stdout, p.stdout + p.stderr
    assert "%s: 0 missing, 0 changed, 0 only installed" % own in p.stdout
    # the driver's table (the default) against the runtime's manifest: all missing
    rc, result = abi_check(own)
    assert rc == 1 and "cudaMalloc" in result["manifests"][str(own)]["missing"]
    assert cubind_main("abi-check", "--module", "runtime").returncode == 2
    p = cubind_main("abi-check", "--module", "no_such_module", own)
    assert p.returncode == 2 and "no_such_module" in p.stderr


@pytest.mark.parametrize("content", ["not json", '{"format": "other"}', '{"format": '
                                     '"cubind-abi-manifest/1", "functions": [{"x": 1}]}'])
def test_abi_check_refuses_what_is_no_manifest(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    p = cubind_main("abi-check", path)
    assert p.returncode == 2 and "cubind abi-check: " in p.stderr, p.stdout + p.stderr
    p = cubind_main("abi-check", tmp_path / "absent.json")
    assert p.returncode == 2 and "absent.json" in p.stderr


def test_a_library_not_found_is_one_line():
    """The report keeps one line per entry: a loader's reason (a sentence,
    then one indented line per file there but not loadable) is said in one
    line with the count and the first such file. 909e726 printed the whole
    list."""
    from cubind.__main__ import _one_line
    why = ("cubind could not load the nvfatbin library: none of the 9 paths tried held a "
           "loadable libnvfatbin.so.13 (...); install it; there but not loadable:\n"
           "  /opt/x/libnvfatbin.so.13: file too short\n"
           "  /opt/y/libnvfatbin.so.13: wrong ELF class: ELFCLASS32\n")
    assert _one_line("nvfatbin", why) == (
        "cubind could not load the nvfatbin library: none of the 9 paths tried held a "
        "loadable libnvfatbin.so.13 (...); install it; there but not loadable: 2, the first "
        "/opt/x/libnvfatbin.so.13 (why: cubind.nvfatbin._library_status())")
    assert _one_line("x", "no library\nat all") == "no library at all"
    report = cubind_main().stdout.splitlines()
    assert not [line for line in report if line.startswith(" ")], report
