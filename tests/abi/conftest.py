# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the ABI tests (tests/abi): the capsule C API, per-release
generation (11.8, 12.4, 13.0) and the abi-diff / abi-check / manifest tools.

Runs on the main Python; the consumer's layout check is also compiled for
and imported into every interpreter ./configure found (`interpreter_paths`,
`compile_consumer(..., python=...)`). Needs
`ninja all tests`. The 11.8 and 12.4 headers come from build/config.ninja
(./configure --with-old-headers, the default); when that has none, the
fixture runs scripts/fetch-cuda-headers.sh itself and skips only if that
fails too.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor

import pytest

# A generated module's files (tests/module_units.py): its units and header.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from module_units import module_source, unit_files  # noqa: E402,F401
# the CPU libraries configure fetched, for the consumer of the modules
# that load them (test_library_capi.py)
from fetched_libraries import cuda_driver_loadable, point_at_fetched_libraries  # noqa: E402,F401
sys.path.pop(0)
point_at_fetched_libraries(os.environ)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUBIND = os.path.join(REPO, "build", "cubind")
FAKE = os.path.join(REPO, "build", "fakecuda", "libcuda.so.1")
BUILD_PY = os.path.join(REPO, "build", "python")
CONSUMER_DIR = os.path.join(REPO, "build", "tests", "consumer")
CONSUMER_SRC = os.path.join(REPO, "tests", "consumer", "consumer.c")
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
PY_INCLUDE = sysconfig.get_paths()["include"]
WARN = ["-Wall", "-Wextra", "-Werror"]


def config_value(key, default=None):
    path = os.path.join(REPO, "build", "config.ninja")
    with open(path) as f:
        for line in f:
            m = re.match(r"^%s\s*=\s*(.*?)\s*$" % re.escape(key), line)
            if m:
                return m.group(1)
    return default


def api_header(api):
    """The header configure generated cubind.<api> from (its generate_api
    edge in build/generate.ninja: configure's api_header_dir is the one
    place that looks for it)."""
    path = os.path.join(REPO, "build", "generate.ninja")
    with open(path) as f:
        for line in f:
            m = re.match(r"^build \S*/%s\.c .*: generate_api (\S+) " % re.escape(api), line)
            if m:
                return m.group(1)
    pytest.fail("no generate_api edge of %s in %s: run ./configure" % (api, path), pytrace=False)


def run(cmd, env=None, cwd=None, timeout=600):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=cwd, timeout=timeout)


def py_env(*paths, libcuda=FAKE):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["CUBIND_LIBCUDA"] = libcuda
    return env


@pytest.fixture(scope="session")
def cuda_include():
    return config_value("cuda_include")


_fetched = {}


def _fetch(release, runtime=False):
    """The include dir scripts/fetch-cuda-headers.sh prints for release:
    the driver's, or (runtime) the runtime's runtime/include/. The script
    runs once per kind and session; its error is kept for the skip."""
    key = "runtime" if runtime else "driver"
    if key not in _fetched:
        found = _fetched[key] = {}
        script = os.path.join(REPO, "scripts", "fetch-cuda-headers.sh")
        try:
            p = run([script] + (["--runtime"] if runtime else []) + ["all"], timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as e:
            _fetched["error"] = str(e)
        else:
            if p.returncode != 0:
                _fetched["error"] = p.stderr[-2000:]
            for line in p.stdout.splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2:
                    found[parts[0]] = parts[1]
    return _fetched[key].get(release)


def release_include(release):
    """The include dir of an older release's cuda.h; skips only when the
    configured dir lacks cuda.h and the fetch script fails."""
    d = config_value("cuda_include_" + release.replace(".", "_"), "")
    if d and os.path.isfile(os.path.join(d, "cuda.h")):
        return d
    d = _fetch(release)
    if d and os.path.isfile(os.path.join(d, "cuda.h")):
        return d
    pytest.skip("no CUDA %s headers: build/config.ninja has none and "
                "scripts/fetch-cuda-headers.sh failed: %s" % (release, _fetched.get("error")))


def release_runtime_include(release):
    """The folder of an older release's cuda_runtime_api.h (the fetch
    script's runtime/include/, apart from cuda.h's); skips only when the
    script fails."""
    d = _fetch(release, runtime=True)
    if d and os.path.isfile(os.path.join(d, "cuda_runtime_api.h")):
        return d
    pytest.skip("no CUDA %s runtime headers: scripts/fetch-cuda-headers.sh --runtime "
                "failed: %s" % (release, _fetched.get("error")))


def header_version(include):
    with open(os.path.join(include, "cuda.h")) as f:
        m = re.search(r"^#define CUDA_VERSION (\d+)", f.read(), re.M)
    return int(m.group(1))


def headers_with(cuda_include, inc, cuda_h="", typedefs_h=""):
    """Copies cuda.h and cudaTypedefs.h from cuda_include into the new
    directory inc, each with its text (declarations; PFN typedefs) added
    before its last #endif (its include guard's end). Returns inc as str."""
    os.makedirs(inc)
    for name, text in (("cuda.h", cuda_h), ("cudaTypedefs.h", typedefs_h)):
        with open(os.path.join(cuda_include, name)) as f:
            body = f.read()
        end = body.rindex("#endif")
        with open(os.path.join(inc, name), "w") as f:
            f.write(body[:end] + text + body[end:])
    return str(inc)


def generate(header_dir, out, rules=None):
    """rules: a rules file in place of gen/rules.txt. Unmatched rules are
    listed one per line (--list-unmatched) for the tests that look for one."""
    os.makedirs(out, exist_ok=True)
    p = run([CUBIND, "generate", "--list-unmatched", "--header",
             os.path.join(header_dir, "cuda.h"), "--out", out]
            + (["--rules", str(rules)] if rules else []))
    assert p.returncode == 0, "cubind generate failed:\n" + p.stderr[-4000:]
    return p


def interpreter_paths(python):
    """(include directory, extension suffix) of the interpreter `python`."""
    if python == sys.executable:
        return PY_INCLUDE, EXT_SUFFIX
    p = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include']); "
             "print(sysconfig.get_config_var('EXT_SUFFIX'))"])
    assert p.returncode == 0, p.stderr
    include, suffix = p.stdout.split()
    return include, suffix


def configured_pythons():
    """Every interpreter ./configure built the bindings for (the main one
    first)."""
    return (config_value("pythons") or sys.executable).split()


def compile_consumer(api_dir, include, out_dir, python=sys.executable):
    """Builds the test-only consumer from api_dir/cubind_driver_api.h for
    the interpreter `python` (default: the one running the tests)."""
    os.makedirs(out_dir, exist_ok=True)
    py_include, suffix = interpreter_paths(python)
    so = os.path.join(out_dir, "_cubind_consumer" + suffix)
    p = run(["gcc", "-std=c11", "-O1"] + WARN + ["-fPIC", "-shared", "-I" + py_include,
             "-I" + include, "-I" + api_dir, CONSUMER_SRC, "-o", so])
    assert p.returncode == 0, "compiling the consumer failed:\n" + p.stderr[-4000:]
    return out_dir


def build_bindings(gen_dir, include, pkg_root):
    """Compiles the driver module's units in gen_dir (driver.c and its
    parts) with the runtime's binding sources against
    `include` into pkg_root/cubind/, beside the built _runtime and
    __init__.py and _version.py (the runtime does not depend on the
    header's release)."""
    pkg = os.path.join(pkg_root, "cubind")
    os.makedirs(pkg, exist_ok=True)
    for name in os.listdir(os.path.join(BUILD_PY, "cubind")):
        if (name.startswith("_runtime") and name.endswith(EXT_SUFFIX)
                or name in ("__init__.py", "_version.py")):
            shutil.copy(os.path.join(BUILD_PY, "cubind", name), pkg)
    # the driver module links runtime/module/ (runtime/README.md)
    sources = unit_files(gen_dir, "driver") + sorted(
        glob.glob(os.path.join(REPO, "runtime", "module", "*.c")))
    objs = []

    def cc(src):
        obj = os.path.join(gen_dir, os.path.basename(src)[:-2] + ".o")
        p = run(["gcc", "-std=c11", "-O0"] + WARN + ["-fvisibility=hidden", "-fPIC",
                 *("-I" + os.path.join(REPO, "runtime", d) for d in ("include", "module", "interop")),
                 "-I" + PY_INCLUDE, "-I" + include,
                 "-c", src, "-o", obj])
        assert p.returncode == 0, "compiling %s failed:\n%s" % (src, p.stderr[-4000:])
        return obj

    with ThreadPoolExecutor(len(sources)) as ex:
        objs = list(ex.map(cc, sources))
    so = os.path.join(pkg, "driver" + EXT_SUFFIX)
    p = run(["gcc", "-shared"] + objs + ["-o", so, "-ldl", "-pthread"])
    assert p.returncode == 0, p.stderr
    return pkg_root


@pytest.fixture(scope="session")
def python():
    return sys.executable


def check_saved_manifest(saved, header, tmp_path, *extra):
    """Regenerating the manifest of a header that did not change gives the
    saved file byte for byte (a generator change that moves a signature is
    caught here); a changed header is reported (skip), not failed. Returns
    the manifest as JSON. extra: more arguments of `cubind manifest`."""
    import json

    out = str(tmp_path / "m.json")
    p = run([CUBIND, "manifest", "--header", header, "--out", out, *extra])
    assert p.returncode == 0, p.stderr
    with open(saved) as f:
        old = f.read()
    with open(out) as f:
        new = f.read()
    if json.loads(old)["inputs_fnv1a64"] != json.loads(new)["inputs_fnv1a64"]:
        pytest.skip("%s differs from the header abi/%s was made from" % (header, os.path.basename(saved)))
    assert new == old, ("regenerating %s changed it although its header did not change; run "
                        "`build/cubind manifest --header %s --out %s%s` only if the change is "
                        "intended" % (saved, header, saved, "".join(" " + a for a in extra)))
    return json.loads(new)
