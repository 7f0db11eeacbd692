# SPDX-License-Identifier: Apache-2.0
"""cubind_build — cubind's in-tree PEP 517 build backend (pyproject.toml).

No setuptools, nothing to install: it builds with the project's own tools.
build_wheel copies the source tree (without build/, dist/, .git) to a
temporary directory, so the developer's build/config.ninja, which may list
several interpreters, is left alone, and there runs

    ./configure --user --no-install --python <the interpreter running pip> [ARGS]
    ninja wheel

and hands pip the one wheel packaging/mkwheel.py wrote into dist/: the
committed out/ compiled as it is (no libclang, no other interpreter, no old
headers, nothing installed). The timestamps are the commit's
(SOURCE_DATE_EPOCH), so two builds give the same bytes.

ARGS, extra options for ./configure (e.g. `--cuda-include DIR`; with headers
of another release the generator runs, into the temporary tree's build/out/),
come from `--config-settings configure-args="..."` or the environment
variable CUBIND_CONFIGURE_ARGS. CUBIND_KEEP_BUILD=1 keeps the temporary tree
and prints where it is.

build_editable (`pip install -e .`) builds in the checkout itself
(./configure --user --no-install, then `ninja bindings`, replacing
build/config.ninja) and installs a wheel holding only a .pth file naming
build/python: after editing, `ninja bindings` rebuilds what is imported.
prepare_metadata_for_build_wheel writes the .dist-info without building.
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


def _mkwheel():
    sys.path.insert(0, str(ROOT / "packaging"))
    try:
        import mkwheel
        return mkwheel
    finally:
        sys.path.pop(0)


def _configure_cmd(config_settings):
    return (["./configure", "--user", "--no-install", "--python", sys.executable]
            + _configure_args(config_settings))


def _build_env():
    """The environment of the build: SOURCE_DATE_EPOCH the commit's time (the
    temporary copy has no .git to ask)."""
    env = dict(os.environ)
    epoch = _mkwheel().source_date_epoch()
    if epoch:
        env["SOURCE_DATE_EPOCH"] = epoch
    return env


def _run(cmd, cwd, env):
    _log("in %s: %s" % (cwd, " ".join(shlex.quote(c) for c in cmd)))
    # Ninja's and configure's output goes where pip shows it (-v).
    subprocess.run(cmd, cwd=cwd, check=True, stdout=sys.stderr, env=env)


def _ignore(directory, names):
    top = pathlib.Path(directory).resolve() == ROOT
    return [n for n in names
            if n in EXCLUDE and (top or n == "__pycache__") or n.endswith(".pyc")]


# ---------------------------------------------------------------- PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The .dist-info of the wheel build_wheel would write, for the committed
    out/'s CUDA release (the name says it: cubind_cu13-...)."""
    mkwheel = _mkwheel()
    return mkwheel.write_metadata_dir(metadata_directory, mkwheel.project_metadata(),
                                      mkwheel.cuda_release(ROOT / "out"))


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cubind-build-"))
    keep = os.environ.get("CUBIND_KEEP_BUILD") == "1"
    try:
        src = tmp / "src"
        shutil.copytree(ROOT, src, ignore=_ignore, symlinks=True)
        env = _build_env()
        for cmd in (_configure_cmd(config_settings), ["ninja", "wheel"]):
            _run(cmd, src, env)
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


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel of a .pth file naming the checkout's build/python, built in
    place (see the module's docstring)."""
    mkwheel = _mkwheel()
    env = _build_env()
    for cmd in (_configure_cmd(config_settings), ["ninja", "bindings"]):
        _run(cmd, ROOT, env)
    project = mkwheel.project_metadata()
    generated = ROOT / "out"
    for line in (ROOT / "build" / "config.ninja").read_text().splitlines():
        if line.startswith("gen_out = "):
            generated = ROOT / line.split(" = ", 1)[1]
    release = mkwheel.cuda_release(generated)
    mkwheel.stage_headers(ROOT / "build" / "python" / "cubind", generated)
    pth = tempfile.NamedTemporaryFile("w", suffix=".pth", delete=False)
    with pth:
        pth.write(str(ROOT / "build" / "python") + "\n")
    try:
        py_tag = "cp%d%d" % sys.version_info[:2]
        wheel = mkwheel.write_wheel(pathlib.Path(wheel_directory), project, release,
                                    (py_tag, "none", "any"),
                                    [("__editable__.cubind.pth", pathlib.Path(pth.name))])
    finally:
        os.unlink(pth.name)
    _log("built %s (editable: %s)" % (wheel.name, ROOT / "build" / "python"))
    return wheel.name


def build_sdist(sdist_directory, config_settings=None):
    """cubind_cu13-<version>.tar.gz: the source tree (in a checkout, the
    files git tracks as they are in the working tree: an untracked file,
    such as a wheelhouse/ of pip's, is never packed; outside one, the tree
    itself) plus PKG-INFO."""
    mkwheel = _mkwheel()
    project = mkwheel.project_metadata()
    release = mkwheel.cuda_release(ROOT / "out")
    base = "%s-%s" % (mkwheel.distribution(project, release).replace("-", "_"), project["version"])
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached"],
                                cwd=ROOT, check=True, capture_output=True).stdout
        files = sorted({f for f in listed.decode().split("\0") if f and (ROOT / f).is_file()
                        and not set(pathlib.PurePath(f).parts) & EXCLUDE})
    except (OSError, subprocess.CalledProcessError):
        files = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                       if p.is_file() and not set(p.relative_to(ROOT).parts) & EXCLUDE)
    mtime = int(mkwheel.source_date_epoch() or time.time())
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
        data = mkwheel.metadata_text(project, release).encode()
        info = normalize(tarfile.TarInfo("%s/PKG-INFO" % base))
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return name
