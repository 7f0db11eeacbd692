"""cubind_build — cubind's in-tree PEP 517 build backend (pyproject.toml).

No setuptools, nothing to install: it builds with the project's own tools.
build_wheel copies the source tree (without build/, dist/, .git) to a
temporary directory, so the developer's build/config.ninja, which may list
several interpreters, is left alone, and there runs

    ./configure --no-free-threaded --python <the interpreter running pip> [ARGS]
    ninja wheel

and hands pip the one wheel packaging/mkwheel.py wrote into dist/.

ARGS, extra options for ./configure (e.g. `--cuda-include DIR`, or
`--no-generator --no-install` to build the committed out/ without
libclang), come from `--config-settings configure-args="..."` or the
environment variable CUBIND_CONFIGURE_ARGS. CUBIND_KEEP_BUILD=1 keeps the
temporary tree and prints where it is.
"""
import io
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Never copied into the build tree or the sdist.
EXCLUDE = {"build", "dist", ".git", "__pycache__", ".ninja_deps", ".ninja_log", ".hypothesis",
           ".whl", ".device", ".pytest_cache"}


def _log(msg):
    print("cubind_build: " + msg, file=sys.stderr, flush=True)


def _configure_args(config_settings):
    extra = (config_settings or {}).get("configure-args")
    if extra is None:
        extra = os.environ.get("CUBIND_CONFIGURE_ARGS", "")
    if isinstance(extra, list):
        extra = " ".join(extra)
    return shlex.split(extra)


def _version():
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import mkwheel
        return mkwheel.project_metadata()["version"], mkwheel
    finally:
        sys.path.pop(0)


def _ignore(directory, names):
    top = pathlib.Path(directory).resolve() == ROOT
    return [n for n in names
            if n in EXCLUDE and (top or n == "__pycache__") or n.endswith(".pyc")]


# ---------------------------------------------------------------- PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cubind-build-"))
    keep = os.environ.get("CUBIND_KEEP_BUILD") == "1"
    try:
        src = tmp / "src"
        shutil.copytree(ROOT, src, ignore=_ignore, symlinks=True)
        configure = ["./configure", "--no-free-threaded", "--python", sys.executable]
        configure += _configure_args(config_settings)
        for cmd in (configure, ["ninja", "wheel"]):
            _log("in %s: %s" % (src, " ".join(shlex.quote(c) for c in cmd)))
            # Ninja's and configure's output goes where pip shows it (-v).
            subprocess.run(cmd, cwd=src, check=True, stdout=sys.stderr)
        lines = (src / "build" / "wheels.txt").read_text().split("\n")
        wheels = [line.split(" ", 1)[1] for line in lines if line]
        if len(wheels) != 1:
            raise RuntimeError("expected one wheel, build/wheels.txt lists %r" % wheels)
        built = src / wheels[0]
        os.makedirs(wheel_directory, exist_ok=True)
        shutil.copyfile(built, os.path.join(wheel_directory, built.name))
        _log("built %s" % built.name)
        return built.name
    finally:
        if keep:
            _log("kept the build tree %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def build_sdist(sdist_directory, config_settings=None):
    """cubind-<version>.tar.gz: the source tree (what git tracks, or the
    tree itself outside a checkout) plus PKG-INFO."""
    version, mkwheel = _version()
    base = "cubind-%s" % version
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=ROOT, check=True, capture_output=True).stdout
        files = sorted({f for f in listed.decode().split("\0") if f and (ROOT / f).is_file()
                        and not set(pathlib.PurePath(f).parts) & EXCLUDE})
    except (OSError, subprocess.CalledProcessError):
        files = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                       if p.is_file() and not set(p.relative_to(ROOT).parts) & EXCLUDE)
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, name)

    def normalize(info):
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = mtime
        return info

    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for f in files:
            tar.add(ROOT / f, arcname="%s/%s" % (base, f), recursive=False, filter=normalize)
        data = mkwheel.metadata_text(mkwheel.project_metadata()).encode()
        info = normalize(tarfile.TarInfo("%s/PKG-INFO" % base))
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return name
