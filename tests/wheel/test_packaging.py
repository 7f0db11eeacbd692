# SPDX-License-Identifier: Apache-2.0
"""Packaging and first contact (issue 28): reproducible, stripped wheels
from the PEP 517 backend (which compiles the committed out/ with
./configure --user), its metadata and editable hooks, the TOML fallback of
Python 3.10, ./configure's help, toolkit lookup and generated directory, and
the import error of an interpreter the build did not target. Most fail on
05a670f (no --user, no build_editable, no prepare_metadata_for_build_wheel,
DWARF with the temporary path in each wheel, CUDA_HOME ignored, --help cut
off, "No module named 'cubind._runtime'")."""
import email.parser
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from test_wheel import CUDA_RELEASE, PEP517, ROOT, clean_env, config, run

sys.path.insert(0, str(ROOT / "packaging"))
import cubind_build  # noqa: E402
import mkwheel  # noqa: E402


def tree_copy(dest):
    """The files git tracks (as in the working tree) under dest."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in files:
        if f and (ROOT / f).is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, dest / f)
    return dest


# ---------------------------------------------------------------- PEP 517

@pytest.fixture(scope="module")
def pep517_wheels(tmp_path_factory):
    """Two `pip wheel .` builds (each in its own temporary directory, the
    backend's): the wheels and pip's output of the first."""
    if PEP517 == "0":
        pytest.skip("CUBIND_WHEEL_PEP517=0")
    python = config("python")
    built = []
    for k in range(2):
        out = tmp_path_factory.mktemp("wheelhouse%d" % k)
        p = run([python, "-m", "pip", "wheel", "--no-index", "--no-deps", "-v", "-w", out, ROOT],
                cwd=out, timeout=900)
        wheels = list(out.glob("cubind_cu*.whl"))
        assert len(wheels) == 1, p.stdout[-3000:]
        built.append((wheels[0], p.stdout + p.stderr))
    return built


def test_sdist_holds_the_tracked_files_and_builds_the_same_wheel(pep517_wheels, tmp_path):
    """build_sdist (what a packager starts from) packs exactly the files git
    tracks, under one directory named for the distribution, plus PKG-INFO;
    pip builds a wheel from it offline, byte-identical to `pip wheel .`'s."""
    name = cubind_build.build_sdist(str(tmp_path / "sdist"))
    wheel, _ = pep517_wheels[0]
    dist, version = wheel.name.split("-")[:2]
    assert name == "%s-%s.tar.gz" % (dist, version), name
    with tarfile.open(tmp_path / "sdist" / name) as tar:
        members = tar.getnames()
        # extraction filters exist from 3.11.4 (Debian bookworm has 3.11.2)
        tar.extractall(tmp_path / "src", **({"filter": "tar"} if hasattr(tarfile, "tar_filter")
                                            else {}))
    base = "%s-%s" % (dist, version)
    tracked = {f for f in subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                                         capture_output=True).stdout.decode().split("\0")
               if f and (ROOT / f).is_file()}
    assert {m[len(base) + 1:] for m in members} == tracked | {"PKG-INFO"}
    assert all(m.startswith(base + "/") for m in members)
    out = tmp_path / "wheelhouse"
    out.mkdir()
    p = run([config("python"), "-m", "pip", "wheel", "--no-index", "--no-deps", "-w", out,
             tmp_path / "src" / base], cwd=out, timeout=900)
    built = list(out.glob("cubind_cu*.whl"))
    assert len(built) == 1, p.stdout[-3000:]
    assert built[0].name == wheel.name
    assert built[0].read_bytes() == wheel.read_bytes()


def test_backend_compiles_committed_out_only(pep517_wheels):
    _, log = pep517_wheels[0]
    assert "./configure --user --no-install --python" in log
    # no TSan or free-threaded interpreter, no old headers, no generator
    for never in ("build-python-ft.sh", "fetch-cuda-headers.sh", "GENERATE out/"):
        assert never not in log, never


def test_two_builds_in_different_directories_are_identical(pep517_wheels):
    (a, _), (b, _) = pep517_wheels
    assert a.name == b.name
    assert a.read_bytes() == b.read_bytes()


def section_names(data):
    """Section names of an ELF file, from readelf."""
    p = subprocess.run(["readelf", "-SW", "/dev/stdin"], input=data, capture_output=True)
    return set(re.findall(r"\]\s+(\.\S+)", p.stdout.decode()))


@pytest.mark.skipif(not shutil.which("readelf"), reason="binutils not installed")
def test_extensions_are_stripped(pep517_wheels, tmp_path):
    wheel, _ = pep517_wheels[0]
    with zipfile.ZipFile(wheel) as zf:
        sos = [n for n in zf.namelist() if n.endswith(".so")]
        shared = [n for n in sos if n.split("/")[-1] in mkwheel.BUNDLED]
        sos = [n for n in sos if n not in shared]
        # driver, _runtime, nvrtc, nvjitlink, nvvm, runtime, and nvfatbin
        # cufile and nvml where they were built
        optional = [n for n in sos if n.split("/")[-1].split(".")[0] in mkwheel.OPTIONAL_MODULES]
        assert len(sos) == len(mkwheel.MODULES) + len(optional)
        for n in shared:  # built from NVIDIA's static library, which has no DWARF
            (tmp_path / "x.so").write_bytes(zf.read(n))
            out = subprocess.run(["readelf", "-SW", tmp_path / "x.so"], capture_output=True,
                                 text=True, check=True).stdout
            assert ".debug_info" not in out, n
        for n in sos:
            (tmp_path / "x.so").write_bytes(zf.read(n))
            out = subprocess.run(["readelf", "-SW", tmp_path / "x.so"], capture_output=True,
                                 text=True, check=True).stdout
            assert ".debug_info" not in out, n
            assert ".gnu_debuglink" in out, n
    # the developer build keeps the debug info beside (build/debug/)
    debug = sorted(p.name for p in (ROOT / "build" / "debug").glob("*.debug"))
    assert [d for d in debug if d.startswith("driver.")], debug


def test_prepare_metadata_matches_the_wheel(pep517_wheels, tmp_path):
    name = cubind_build.prepare_metadata_for_build_wheel(str(tmp_path))
    wheel, _ = pep517_wheels[0]
    assert name == "cubind_cu%d-%s.dist-info" % (CUDA_RELEASE[0], mkwheel.project_metadata()["version"])
    with zipfile.ZipFile(wheel) as zf:
        assert (tmp_path / name / "METADATA").read_bytes() == zf.read(name + "/METADATA")
        assert (tmp_path / name / "licenses" / "LICENSE").read_bytes() == \
            zf.read(name + "/licenses/LICENSE")
        assert (tmp_path / name / "entry_points.txt").read_bytes() == \
            zf.read(name + "/entry_points.txt")


@pytest.mark.skipif(PEP517 == "0", reason="CUBIND_WHEEL_PEP517=0")
def test_pip_install_editable(tmp_path):
    """`pip install -e .` in a copy of the tree (it builds in place): the
    venv imports cubind from that tree's build/python."""
    src = tree_copy(tmp_path / "src")
    python = config("python")
    run([python, "-m", "venv", tmp_path / "venv"])
    vpy = tmp_path / "venv" / "bin" / "python"
    run([vpy, "-m", "pip", "install", "--no-index", "-e", src], cwd=tmp_path, timeout=900)
    code = "import cubind, cubind.driver; print(cubind.__file__, cubind.__version__)"
    out = run([vpy, "-c", code], cwd=tmp_path).stdout.split()
    assert out[0] == str(src / "build" / "python" / "cubind" / "__init__.py")
    assert out[1] == mkwheel.project_metadata()["version"]


# ---------------------------------------------------------------- metadata

def test_toml_fallback_reads_what_tomllib_reads():
    # Python 3.10 has no tomllib: the fallback must keep every field
    # (05a670f's dropped the classifiers and the URLs).
    tomllib = pytest.importorskip("tomllib")
    text = (ROOT / "pyproject.toml").read_text()
    assert mkwheel.parse_project_toml(text) == tomllib.loads(text)["project"]


def test_version_is_one_string_everywhere():
    version = mkwheel.project_metadata()["version"]
    gen = ROOT / "build" / "cubind"
    if gen.exists():
        assert run([gen, "--version"]).stdout == "cubind %s\n" % version
    code = "import cubind; print(cubind.__version__, cubind.__cuda_version__)"
    env = clean_env(PYTHONPATH=str(ROOT / "build" / "python"))
    out = run([sys.executable, "-c", code], env=env).stdout.split()
    assert out == [version, "%d.%d" % CUDA_RELEASE]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## %s\b" % re.escape(version), changelog, re.M), "CHANGELOG.md lacks it"


def test_every_wheel_glob_matches_the_wheel_file_name():
    # Scripts and docs find the built wheel by a glob; the distribution
    # became cubind-cu13 (file cubind_cu13-...) and scripts/gpu/wheel.sh,
    # check-old-glibc.sh and packaging/README.md kept "cubind-*.whl", which
    # matched nothing (the GPU wheel suite failed at c4871ae).
    import fnmatch
    project = mkwheel.project_metadata()
    dist = mkwheel.distribution(project, CUDA_RELEASE).replace("-", "_")
    names = ["%s-%s-%s-%s-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
             % (dist, project["version"], py, abi)
             for py, abi in (("cp312", "cp312"), ("cp313", "cp313"), ("cp313", "cp313t"))]
    files = subprocess.run(["git", "ls-files", "scripts", "packaging", "README.md", "docs"],
                           cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    globs = []
    for f in files:
        if f.endswith(".py"):   # Python code builds its globs from the name
            continue
        for g in re.findall(r"[\w.*-]*\*[\w.*-]*\.whl", (ROOT / f).read_text(errors="replace")):
            globs.append((f, g))
            assert any(fnmatch.fnmatch(n, g) for n in names), \
                "%s: %r matches no wheel the backend names (%s)" % (f, g, names[0])
    assert len(globs) >= 3, globs


# ---------------------------------------------------------------- configure

def configure(src, *args, **env):
    return subprocess.run(["./configure", "--no-install", *args], cwd=src, capture_output=True,
                          text=True, env=clean_env(**env), timeout=300)


def test_configure_help_is_whole():
    out = subprocess.run([str(ROOT / "configure"), "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--user" in out and "1.7 GB" in out and "--debug-info" in out
    assert out.rstrip().endswith(".)") or out.rstrip().endswith(".")
    assert not [line for line in out.splitlines() if line.startswith("#")]


@pytest.fixture
def headers(tmp_path):
    """A toolkit-like directory with the configured cuda.h (include/)."""
    inc = tmp_path / "toolkit" / "include"
    inc.mkdir(parents=True)
    for h in ("cuda.h", "cudaTypedefs.h"):
        shutil.copy(pathlib.Path(config("cuda_include")) / h, inc / h)
    return inc.parent


def test_configure_finds_the_toolkit_through_cuda_home_then_cuda_path(tmp_path, headers):
    src = tree_copy(tmp_path / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    for var in ("CUDA_HOME", "CUDA_PATH"):
        p = subprocess.run(["./configure", "--user", "--no-install"], cwd=src, capture_output=True,
                           text=True, env=dict(env, **{var: str(headers)}), timeout=300)
        assert p.returncode == 0, p.stderr
        assert "cuda_include = %s/include\n" % headers in (src / "build" / "config.ninja").read_text()
    p = subprocess.run(["./configure", "--user", "--no-install"], cwd=src, capture_output=True,
                       text=True, env=dict(env, CUDA_HOME=str(tmp_path / "none")), timeout=300)
    assert p.returncode == 1
    assert "no cuda.h in %s/include (from CUDA_HOME=" % (tmp_path / "none") in p.stderr
    assert "install the CUDA Toolkit" in p.stderr


def test_configure_user_builds_only_the_bindings(tmp_path):
    src = tree_copy(tmp_path / "src")
    p = subprocess.run(["./configure", "--user", "--no-install", "--python", sys.executable],
                       cwd=src, capture_output=True, text=True, env=clean_env(), timeout=300)
    assert p.returncode == 0, p.stderr
    cfg = (src / "build" / "config.ninja").read_text()
    assert "\ntsan_python = \n" in cfg and "\ncuda_include_12_4 = \n" in cfg
    assert re.search(r"^pythons = \S+$", cfg, re.M)
    assert ": generate " not in (src / "build" / "generate.ninja").read_text()


def test_another_release_is_generated_into_build_out(tmp_path, headers):
    if not (ROOT / "build" / "cubind").exists():
        pytest.skip("no generator configured")
    h = headers / "include" / "cuda.h"
    h.write_text(re.sub(r"#define CUDA_VERSION \d+", "#define CUDA_VERSION 99010", h.read_text(), 1))
    src = tree_copy(tmp_path / "src")
    p = configure(src, "--no-free-threaded", "--no-tsan-python", "--without-old-headers",
                  "--cuda-include", str(headers / "include"))
    assert p.returncode == 0, p.stderr
    assert "\ngen_out = build/out\n" in (src / "build" / "config.ninja").read_text()
    gen = (src / "build" / "generate.ninja").read_text()
    assert "build build/out/driver.c " in gen and " out/driver.c" not in gen
    # without the generator such headers are refused, naming the release
    p = configure(src, "--user", "--cuda-include", str(headers / "include"))
    assert p.returncode == 1 and "CUDA_VERSION 99010" in p.stderr


def test_import_from_an_interpreter_the_build_did_not_target(tmp_path):
    pkg = tmp_path / "cubind"
    pkg.mkdir()
    for f in ("__init__.py", "_version.py"):
        shutil.copy(ROOT / "build" / "python" / "cubind" / f, pkg / f)
    (pkg / "_runtime.cpython-399-x86_64-linux-gnu.so").write_bytes(b"")
    p = subprocess.run([sys.executable, "-c", "import cubind"], capture_output=True, text=True,
                       env=clean_env(PYTHONPATH=str(tmp_path)), cwd=tmp_path)
    assert p.returncode == 1
    err = p.stderr.strip().splitlines()[-1]
    assert err.startswith("ImportError: cubind's extensions in ")
    assert "built for cpython-399-x86_64-linux-gnu, not for this interpreter" in err
    assert "./configure --user --python %s && ninja" % sys.executable in err


# ---------------------------------------------------------------- scripts

def apt_mirror(etc, **env):
    return subprocess.run([str(ROOT / "scripts" / "apt-mirror.sh")], capture_output=True,
                          text=True, check=True,
                          env=dict(clean_env(**env), CUBIND_APT_ETC=str(etc))).stdout.strip()


def test_scripts_take_the_mirror_from_the_apt_configuration(tmp_path):
    # 05a670f's scripts fetched from deb.debian.org whatever apt used.
    (tmp_path / "sources.list.d").mkdir()
    assert apt_mirror(tmp_path) == "http://deb.debian.org/debian"      # none configured
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n")
    assert apt_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text(
        "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://local.example/debian bookworm main\n")
    assert apt_mirror(tmp_path) == "http://local.example/debian"      # sources.list first
    assert apt_mirror(tmp_path, CUBIND_APT_MIRROR="http://x/debian") == "http://x/debian"
    for script in ("build-python-ft.sh", "cuda-apt.sh", "check-old-glibc.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "apt-mirror.sh" in text and "MIRROR=http" not in text, script
    # the CUDA fetch scripts take their apt setup (and so the mirror) from cuda-apt.sh
    for script in ("fetch-cuda-headers.sh", "fetch-cuda-libs.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "cuda-apt.sh" in text and "MIRROR=http" not in text, script
