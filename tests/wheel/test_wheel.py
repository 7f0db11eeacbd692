# SPDX-License-Identifier: Apache-2.0
"""The wheels `ninja` writes into dist/ (packaging/mkwheel.py), one per
interpreter ./configure found, listed in build/wheels.txt:

- their layout (PEP 427), RECORD hashes and sizes, METADATA and WHEEL;
- their tags: the interpreter's own, and a platform tag checked against
  readelf/objdump (NEEDED only glibc, highest GLIBC_2.N referenced);
- exactly the package: both extensions of that interpreter, the Python
  files and stubs, the consumer headers; never the test-only fake driver;
- installed with pip, offline, into a fresh virtual environment, where
  tests/python runs against the installed package (tests/wheel/run_installed.py
  checks where cubind was imported from);
- the in-tree PEP 517 backend: `pip install .` into a fresh environment.

Run by tests/run with the main interpreter: python3 -m pytest tests/wheel.
CUBIND_WHEEL_PEP517=all also runs `pip wheel --no-build-isolation` (another
full build, ~30 s); CUBIND_WHEEL_PEP517=0 skips the PEP 517 builds (here and
in test_packaging.py).
"""
import base64
import calendar
import csv
import email.parser
import hashlib
import io
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
PACKAGE = BUILD / "python" / "cubind"
# The extensions a wheel holds: mkwheel's own list (driver, _runtime, and
# the library APIs' nvrtc, nvjitlink, nvvm, runtime; nvfatbin, cufile and
# nvml when built: OPTIONAL_MODULES), and the libraries every interpreter's
# modules share (the bundled CUDA runtime, when built).
sys.path.insert(0, str(ROOT / "packaging"))
from mkwheel import BUNDLED, MODULES, OPTIONAL_MODULES, project_metadata  # noqa: E402
sys.path.pop(0)
FAKE = BUILD / "fakecuda" / "libcuda.so.1"


def config(name):
    for line in (BUILD / "config.ninja").read_text().splitlines():
        if line.startswith(name + " = "):
            return line.split(" = ", 1)[1]
    raise KeyError(name)


def cuda_release():
    """(major, minor) of the CUDA_VERSION stamped in out/driver.c."""
    m = re.search(r"\(CUDA_VERSION (\d+)\)", (ROOT / "out" / "driver.c").read_text()[:512])
    return int(m.group(1)) // 1000, int(m.group(1)) % 1000 // 10


CUDA_RELEASE = cuda_release()


def manifest():
    path = BUILD / "wheels.txt"
    if not path.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in path.read_text().splitlines() if line]


WHEELS = manifest()
IDS = [pathlib.Path(w).name for _, w in WHEELS]


def query(python, code):
    return json.loads(subprocess.run([python, "-I", "-c", code], check=True,
                                     capture_output=True, text=True).stdout)


def interpreter(python):
    return query(python, "import json, sys, sysconfig; print(json.dumps({"
                 "'version': list(sys.version_info[:2]),"
                 "'gil_disabled': bool(sysconfig.get_config_var('Py_GIL_DISABLED')),"
                 "'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX')}))")


def clean_env(**extra):
    """The environment for anything that must not see the build tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1", **extra)
    return env


def run(cmd, timeout=300, **kw):
    kw.setdefault("env", clean_env())
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode != 0:
        # pytrace=False: no traceback, whose locals would print the environment.
        pytest.fail("%s failed (%d):\n%s\n%s" % (" ".join(map(str, cmd)), p.returncode,
                                                  p.stdout[-6000:], p.stderr[-6000:]), pytrace=False)
    return p


def test_a_wheel_per_configured_interpreter():
    pythons = config("pythons").split()
    assert [py for py, _ in WHEELS] == pythons, "build/wheels.txt is stale: run ninja"
    for _, wheel in WHEELS:
        assert (ROOT / wheel).is_file()
        assert pathlib.Path(wheel).parent == pathlib.Path("dist")


@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_layout_record_metadata(python, wheel):
    path = ROOT / wheel
    name, version, py_tag, abi_tag, plat_tag = path.name[:-len(".whl")].split("-")
    # The distribution is named for the CUDA major release out/ came from.
    major = CUDA_RELEASE[0]
    assert name == "cubind_cu%d" % major
    dist_info = "%s-%s.dist-info" % (name, version)
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert len(names) == len(set(names))
        data = {n: zf.read(n) for n in names}
    assert all(n.startswith(("cubind/", dist_info + "/")) for n in names), names
    assert {n for n in names if n.startswith(dist_info)} == {
        dist_info + "/METADATA", dist_info + "/WHEEL", dist_info + "/RECORD",
        dist_info + "/entry_points.txt", dist_info + "/licenses/LICENSE"}
    assert data[dist_info + "/licenses/LICENSE"] == (ROOT / "LICENSE").read_bytes()
    # the `cubind` command (issue 43): python -m cubind's main
    assert data[dist_info + "/entry_points.txt"] == \
        b"[console_scripts]\ncubind = cubind.__main__:main\n"

    # RECORD: every file once with sha256 (urlsafe base64, no padding) and
    # size; RECORD itself without.
    rows = list(csv.reader(io.StringIO(data[dist_info + "/RECORD"].decode())))
    assert sorted(r[0] for r in rows) == sorted(names)
    for file, digest, size in rows:
        if file == dist_info + "/RECORD":
            assert digest == size == ""
            continue
        algo, _, b64 = digest.partition("=")
        assert algo == "sha256" and "=" not in b64
        expected = base64.urlsafe_b64encode(hashlib.sha256(data[file]).digest()).rstrip(b"=")
        assert b64 == expected.decode(), file
        assert int(size) == len(data[file]), file

    # the WHEEL file: its header lines, then one Tag line per platform tag
    lines = data[dist_info + "/WHEEL"].decode().splitlines()
    assert lines[:3] == ["Wheel-Version: 1.0", "Generator: cubind packaging/mkwheel.py",
                         "Root-Is-Purelib: false"], lines
    assert all(line.startswith("Tag: ") for line in lines[3:]), lines
    wheel_meta = email.parser.Parser().parsestr(data[dist_info + "/WHEEL"].decode())
    assert wheel_meta["Wheel-Version"] == "1.0"
    assert wheel_meta["Root-Is-Purelib"] == "false"
    # one Tag line per platform tag of a compound one (manylinux_2_17_x86_64.manylinux2014_x86_64)
    assert wheel_meta.get_all("Tag") == ["%s-%s-%s" % (py_tag, abi_tag, plat)
                                         for plat in plat_tag.split(".")]
    meta = email.parser.Parser().parsestr(data[dist_info + "/METADATA"].decode())
    assert meta["Name"] == "cubind-cu%d" % major and meta["Version"] == version
    assert meta["Metadata-Version"] == "2.4"
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert "generated from CUDA %d.%d's cuda.h" % CUDA_RELEASE in meta["Summary"]
    # What is built and tested: 3.10 to 3.13 (scripts/check-pythons.sh).
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier")
    for c in ("Environment :: GPU :: NVIDIA CUDA :: %d" % major, "Typing :: Typed",
              "Programming Language :: Python :: 3.10"):
        assert c in classifiers, c
    # License-Expression says it; PEP 639 forbids a license classifier beside it.
    assert not [c for c in classifiers if c.startswith("License ::")]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(urls)
    # The long description is the user guide, not the developer README.
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload() == (ROOT / "docs" / "user-guide.md").read_text()
    assert re.search(r'^version = "%s"$' % re.escape(version),
                     (ROOT / "pyproject.toml").read_text(), re.M)


@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_contents_are_the_package_and_nothing_else(python, wheel):
    info = interpreter(python)
    suffix = info["ext_suffix"]
    with zipfile.ZipFile(ROOT / wheel) as zf:
        names = [n for n in zf.namelist() if n.startswith("cubind/")]
    expected = {"cubind/" + m + suffix for m in MODULES}
    expected |= {"cubind/" + m + suffix for m in OPTIONAL_MODULES
                 if (PACKAGE / (m + suffix)).exists()}
    expected |= {"cubind/" + b for b in BUNDLED if (PACKAGE / b).exists()}
    for p in PACKAGE.glob("*.py"):
        expected.add("cubind/" + p.name)
    for p in PACKAGE.glob("*.pyi"):
        expected.add("cubind/" + p.name)
    if (PACKAGE / "py.typed").exists():
        expected.add("cubind/py.typed")
    # the C API headers; never a module's private <module>_internal.h
    for header in (ROOT / "out").glob("cubind_*_api.h"):
        expected.add("cubind/include/" + header.name)
    assert not [n for n in names if n.endswith("_internal.h")]
    assert set(names) == expected
    assert "cubind/__init__.py" in names
    # a typing stub for every face of every module (out/*.pyi: driver, cu,
    # nvrtc, rtc, nvjitlink, nvvm, runtime, cudart), as generated
    for stub in (ROOT / config("gen_out")).glob("*.pyi"):
        assert "cubind/" + stub.name in names
        assert zipfile.ZipFile(ROOT / wheel).read("cubind/" + stub.name) == stub.read_bytes()
    # The test-only fake driver, and any driver library, never ship.
    assert not [n for n in names if "libcuda" in n or "fakecuda" in n]
    with zipfile.ZipFile(ROOT / wheel) as zf:
        fake = FAKE.read_bytes() if FAKE.exists() else None
        for n in names:
            assert zf.read(n) != fake, n
            if n.startswith("cubind/include/"):
                assert zf.read(n) == (ROOT / "out" / n.split("/")[-1]).read_bytes()
            else:
                assert zf.read(n) == (PACKAGE / n[len("cubind/"):]).read_bytes(), \
                    "%s differs from the build tree: run ninja" % n


@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_interpreter_tags(python, wheel):
    info = interpreter(python)
    major, minor = info["version"]
    abi = "cp%d%d%s" % (major, minor, "t" if info["gil_disabled"] else "")
    assert pathlib.Path(wheel).name.split("-")[2:4] == ["cp%d%d" % (major, minor), abi]


def glibc_needs(so):
    """(NEEDED libraries, highest GLIBC_2.N) of a shared object, from binutils."""
    dyn = subprocess.run(["readelf", "-d", so], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    syms = subprocess.run(["objdump", "-T", so], check=True, capture_output=True, text=True).stdout
    versions = {tuple(map(int, v)) for v in re.findall(r"\bGLIBC_(\d+)\.(\d+)(?:\.\d+)?\b", syms)}
    vr = subprocess.run(["readelf", "-V", so], check=True, capture_output=True, text=True).stdout
    versions_r = {tuple(map(int, v)) for v in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", vr)}
    assert versions == versions_r, "symbols and version-needed entries disagree"
    return needed, max(versions)


@pytest.mark.skipif(not (shutil.which("readelf") and shutil.which("objdump")),
                    reason="binutils not installed")
@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_platform_tag_is_the_highest_glibc_version(python, wheel):
    suffix = interpreter(python)["ext_suffix"]
    glibc = {"libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6", "librt.so.1"}
    highest = (2, 5)
    for module in MODULES:
        needed, version = glibc_needs(str(PACKAGE / (module + suffix)))
        assert set(needed) <= glibc, "%s needs %s" % (module, needed)
        assert not [n for n in needed if "python" in n or "cuda" in n]
        highest = max(highest, version)
    plat = pathlib.Path(wheel).name[:-len(".whl")].split("-")[4]
    # no policy defines a tag below manylinux2014's 2.17 (issue 43: the
    # wheels were manylinux_2_16, which pip before 20.3 cannot read)
    if highest <= (2, 17):
        assert plat == "manylinux_2_17_x86_64.manylinux2014_x86_64"
    else:
        assert plat == "manylinux_%d_%d_x86_64" % highest


@pytest.mark.skipif(not (shutil.which("readelf") and shutil.which("objdump")),
                    reason="binutils not installed")
@pytest.mark.skipif(platform.machine() != "x86_64", reason="runtime/include/glibc_pins.h pins x86_64's versions")
@pytest.mark.parametrize("python,wheel", WHEELS, ids=IDS)
def test_wheels_install_where_glibc_is_2_17(python, wheel):
    # runtime/include/glibc_pins.h binds dlopen & co. and pthread_once to their first
    # versions, and the extensions name libdl.so.2 and libpthread.so.0, which
    # define them on glibc < 2.34: nothing needs more than manylinux2014's
    # glibc 2.17 (scripts/check-old-glibc.sh runs a wheel on glibc 2.31). A new
    # libc call with a newer default version fails here first.
    suffix = interpreter(python)["ext_suffix"]
    for module in MODULES:
        needed, version = glibc_needs(str(PACKAGE / (module + suffix)))
        assert version <= (2, 17), "%s needs GLIBC_%d.%d" % ((module,) + version)
        assert {"libdl.so.2", "libpthread.so.0"} <= set(needed), (module, needed)
    plat = pathlib.Path(wheel).name[:-len(".whl")].split("-")[4]
    assert tuple(map(int, plat.split("_")[1:3])) <= (2, 17), plat


def test_mkwheel_falls_back_to_linux_when_something_else_is_needed(tmp_path):
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import mkwheel
    finally:
        sys.path.pop(0)
    src = tmp_path / "m.c"
    src.write_text("#include <math.h>\n#include <zlib.h>\n"
                   "double f(double x) { return zlibVersion()[0] + sqrt(x); }\n")
    lib = tmp_path / "m.so"
    zlib = subprocess.run(["gcc", "-shared", "-fPIC", src, "-o", lib, "-lz", "-lm"],
                          capture_output=True)
    if zlib.returncode != 0:
        pytest.skip("no zlib headers to build a non-glibc dependency")
    tag, lines = mkwheel.platform_tag([lib])
    assert tag == "linux_x86_64"
    assert any("libz.so.1" in line and "not part of glibc" in line for line in lines)


def test_wheels_are_reproducible(tmp_path):
    # Their timestamps are the commit's at the time of the build (a later
    # commit does not make Ninja pack again): pack with the same time.
    with zipfile.ZipFile(ROOT / WHEELS[0][1]) as zf:
        stamp = zf.infolist()[0].date_time
    epoch = calendar.timegm(stamp + (0, 0, 0))
    cmd = [sys.executable, ROOT / "packaging" / "mkwheel.py", "--out", tmp_path,
           *[py for py, _ in WHEELS]]
    run(cmd, cwd=ROOT, env=clean_env(SOURCE_DATE_EPOCH=str(epoch)))
    for _, wheel in WHEELS:
        again = tmp_path / pathlib.Path(wheel).name
        assert again.read_bytes() == (ROOT / wheel).read_bytes(), wheel


# ---------------------------------------------------------------- installed

@pytest.fixture(scope="module", params=WHEELS, ids=IDS)
def venv(request, tmp_path_factory):
    """A fresh virtual environment of the wheel's interpreter with the wheel
    installed by pip, offline. --system-site-packages for pytest (Debian's,
    and the one scripts/build-python-ft.sh put into 3.13t)."""
    python, wheel = request.param
    env_dir = tmp_path_factory.mktemp("venv")
    run([python, "-m", "venv", "--system-site-packages", env_dir])
    vpy = env_dir / "bin" / "python"
    run([vpy, "-m", "pip", "install", "--no-index", "--no-deps", ROOT / wheel])
    return vpy, wheel


def test_installed_package_layout(venv, tmp_path):
    vpy, wheel = venv
    code = ("import json, os, sys, cubind, cubind.driver, cubind._runtime;"
            "print(json.dumps({'prefix': sys.prefix, 'files': [m.__file__ for m in "
            "(cubind, cubind.driver, cubind._runtime)], 'pkg': os.listdir(os.path.dirname(cubind.__file__)),"
            "'cu': cubind.cu.__name__}))")
    info = json.loads(run([vpy, "-c", code], cwd=tmp_path).stdout)
    site = str(pathlib.Path(info["prefix"]).resolve())
    for f in info["files"]:
        assert str(pathlib.Path(f).resolve()).startswith(site + os.sep), f
    assert not [n for n in info["pkg"] if "libcuda" in n or "fakecuda" in n]
    # pip's own view of where it installed cubind.
    shown = run([vpy, "-m", "pip", "show", "cubind-cu%d" % CUDA_RELEASE[0]], cwd=tmp_path).stdout
    location = re.search(r"^Location: (.*)$", shown, re.M).group(1)
    assert str(pathlib.Path(location).resolve()).startswith(site + os.sep)


def test_get_include(venv, tmp_path):
    vpy, _ = venv
    code = ("import json, os, cubind;"
            "g = getattr(cubind, 'get_include', None);"
            "d = g() if g else None;"
            "print(json.dumps({'dir': d, 'file': cubind.__file__,"
            "'headers': sorted(os.listdir(d)) if d and os.path.isdir(d) else None}))")
    info = json.loads(run([vpy, "-c", code], cwd=tmp_path).stdout)
    assert info["dir"] is not None, \
        "cubind.get_include() is missing (see packaging/README.md for the lines to add)"
    assert os.path.samefile(info["dir"], os.path.join(os.path.dirname(info["file"]), "include"))
    # the C API headers; a module's <module>_internal.h is not one
    assert info["headers"] == sorted(p.name for p in (ROOT / "out").glob("cubind_*_api.h"))


def test_cubind_command_is_installed(venv, tmp_path):
    # The wheel's console script (entry_points.txt): the report of
    # python -m cubind, from the venv's own package.
    vpy, _ = venv
    command = vpy.parent / "cubind"
    assert command.is_file() and os.access(command, os.X_OK), "no bin/cubind in the venv"
    env = clean_env(CUBIND_LIBCUDA=str(FAKE))
    out = run([command], cwd=tmp_path, env=env).stdout
    version = project_metadata()["version"]
    assert out.startswith("cubind %s (bindings generated from CUDA %d.%d's headers)\n"
                          % ((version,) + CUDA_RELEASE)), out
    assert "driver: %s, CUDA " % os.path.realpath(FAKE) in out, out
    include = run([command, "--include"], cwd=tmp_path, env=env).stdout.strip()
    site = run([vpy, "-c", "import sys; print(sys.prefix)"], cwd=tmp_path).stdout.strip()
    assert include.startswith(site + os.sep) and include.endswith(os.sep + "include"), include


def test_python_suite_against_the_installed_package(venv, tmp_path):
    """tests/python, run from an empty directory with PYTHONPATH unset;
    run_installed.py fails unless every cubind module came from the venv."""
    vpy, _ = venv
    p = run([vpy, ROOT / "tests" / "wheel" / "run_installed.py", "-q", "-p", "no:cacheprovider",
             "-c", ROOT / "pytest.ini", "--rootdir", ROOT, ROOT / "tests" / "python"],
            cwd=tmp_path, env=clean_env(CUBIND_LIBCUDA=str(FAKE)), timeout=600)
    assert "run_installed: cubind from " + str(vpy.parent.parent.resolve()) in p.stdout, p.stdout[-3000:]
    print(p.stdout[-400:])


# ---------------------------------------------------------------- PEP 517

PEP517 = os.environ.get("CUBIND_WHEEL_PEP517", "1")


# `pip wheel .` (twice, compared byte for byte) and `pip install -e .`:
# tests/wheel/test_packaging.py.


@pytest.mark.skipif(PEP517 != "all", reason="set CUBIND_WHEEL_PEP517=all")
def test_pip_wheel_without_build_isolation(tmp_path):
    python = config("python")
    run([python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
         "-w", tmp_path, ROOT], cwd=tmp_path, timeout=600)
    wheels = list(tmp_path.glob("cubind_cu*-*.whl"))
    assert len(wheels) == 1
    local = [w for py, w in WHEELS if py == python]
    assert wheels[0].name == pathlib.Path(local[0]).name
