# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the generator tests (tests/gen).

Everything here locates the repository from this file's path, so the tests
run from any working directory. The generator must have been built
(`ninja`): a missing build/cubind fails the tests, it never skips them.

Independent sources the tests compare the generator against:
  * clang's own AST of cuda.h (`clang -Xclang -ast-dump=json`), walked here
    without libclang's C API or anything of gen/;
  * gcc, compiling small C programs that print or assert what cuda.h means;
  * the text of cudaTypedefs.h.
"""
import json
import os
import re
import subprocess
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Where a library API's header is (tests/api_headers.py, shared with
# tests/fuzz): re-exported for this suite's tests.
sys.path.insert(0, os.path.join(REPO, "tests"))
from api_headers import fetched_include, header_path  # noqa: E402,F401
# A generated module's files (tests/module_units.py): its units and header.
from module_units import module_source, unit_files  # noqa: E402,F401
sys.path.pop(0)
CUBIND = os.path.join(REPO, "build", "cubind")
OUT = os.path.join(REPO, "out")
TEMPLATES = os.path.join(REPO, "templates")
RULES = os.path.join(REPO, "gen", "rules.txt")

# Seconds each `cubind generate` run of the default header took; printed in
# the terminal summary so the log shows the generator's speed (never asserted).
GENERATE_TIMES = []


def _config_value(key):
    path = os.path.join(REPO, "build", "config.ninja")
    if not os.path.isfile(path):
        pytest.fail("build/config.ninja is missing: run ./configure && ninja", pytrace=False)
    with open(path) as f:
        for line in f:
            m = re.match(r"^%s\s*=\s*(.*?)\s*$" % re.escape(key), line)
            if m:
                return m.group(1)
    pytest.fail("build/config.ninja has no %r: run ./configure" % key, pytrace=False)


@pytest.fixture(scope="session")
def cubind():
    """Path of the generator; fails (never skips) when it was not built."""
    if not (os.path.isfile(CUBIND) and os.access(CUBIND, os.X_OK)):
        pytest.fail("%s is missing or not executable: run `ninja` first" % CUBIND, pytrace=False)
    return CUBIND


@pytest.fixture(scope="session")
def cuda_include():
    d = _config_value("cuda_include")
    if not os.path.isfile(os.path.join(d, "cuda.h")):
        pytest.fail("cuda_include = %s (build/config.ninja) holds no cuda.h" % d, pytrace=False)
    return d


@pytest.fixture(scope="session")
def cuda_h(cuda_include):
    return os.path.join(cuda_include, "cuda.h")


@pytest.fixture(scope="session")
def run_cubind(cubind):
    """run_cubind(*args, prefix=()) -> CompletedProcess (text, both streams
    captured); prefix: a command the generator runs under (e.g. setpriv)."""

    def run(*args, timeout=300, prefix=()):
        return subprocess.run(list(prefix) + [cubind] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=timeout)

    return run


def generate_written(run_cubind, cuda_include, tmp_path, name, header, rules):
    """cubind generate on a header and a rules file written here
    (tmp_path/<name>.h, <name>.rules) into tmp_path/out, which it returns;
    the generator must succeed."""
    (tmp_path / (name + ".h")).write_text(header)
    (tmp_path / (name + ".rules")).write_text(rules)
    out = tmp_path / "out"
    out.mkdir()
    p = run_cubind("generate", "--header", str(tmp_path / (name + ".h")), "--rules",
                   str(tmp_path / (name + ".rules")), "--include", cuda_include, "--out", str(out))
    assert p.returncode == 0, p.stderr
    return out


def build_written(tmp_path, name, out, cuda_include):
    """The module cubind generated into `out` from a written header
    (generate_written) compiled with the runtime's objects of the
    interpreter ./configure found first (build/obj/pyXY) as cubind.<name>,
    in a package folder beside a link to every file of build/python/cubind:
    that folder, for PYTHONPATH. The header's folder is tmp_path."""
    cc = _config_value("cc")
    py_includes = _config_value("py_includes").split()
    suffix = _config_value("ext_suffix")
    objs = os.path.join(REPO, "build", "obj", "py" + _config_value("py_version").replace(".", ""))
    runtime = sorted(os.path.join(objs, f) for f in os.listdir(objs)
                     if f.startswith("bind_") and f.endswith(".o"))
    pkg = tmp_path / "pkg" / "cubind"
    pkg.mkdir(parents=True)
    built = os.path.join(REPO, "build", "python", "cubind")
    for f in os.listdir(built):
        os.symlink(os.path.join(built, f), pkg / f)
    units = []
    for src in sorted(out.glob(name + "*.c")):
        obj = tmp_path / (src.stem + ".o")
        subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC",
                        "-fvisibility=hidden", "-I" + os.path.join(REPO, "runtime", "include"),
                        "-I" + os.path.join(REPO, "runtime", "module"),
                        "-I" + os.path.join(REPO, "runtime", "library"),
                        "-I" + os.path.join(REPO, "runtime", "interop"), "-I" + str(tmp_path),
                        "-I" + str(out), "-I" + cuda_include, *py_includes, "-c", str(src),
                        "-o", str(obj)], check=True)
        units.append(str(obj))
    subprocess.run([cc, "-shared", *units, *runtime, "-o", str(pkg / (name + suffix)), "-ldl",
                    "-pthread"], check=True)
    return pkg.parent


@pytest.fixture(scope="session")
def dump(run_cubind, cuda_h):
    """The model of the default cuda.h, as `cubind dump` prints it."""
    p = run_cubind("dump", "--header", cuda_h)
    assert p.returncode == 0, "cubind dump failed (%d):\n%s" % (p.returncode, p.stderr)
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        pytest.fail("cubind dump printed invalid JSON: %s" % e, pytrace=False)


@pytest.fixture(scope="session")
def generated(run_cubind, cuda_h, tmp_path_factory):
    """Output of `cubind generate` of the default header into a fresh dir."""
    d = str(tmp_path_factory.mktemp("generated"))
    t0 = time.monotonic()
    p = run_cubind("generate", "--header", cuda_h, "--out", d)
    GENERATE_TIMES.append(time.monotonic() - t0)
    assert p.returncode == 0, "cubind generate failed (%d):\n%s" % (p.returncode, p.stderr)
    # and each library API, from its rules file and the header it names
    for rules, header in library_apis():
        p = run_cubind("generate", "--header", header_path(os.path.dirname(cuda_h), header),
                       "--rules", rules, "--include", os.path.dirname(cuda_h), "--out", d)
        assert p.returncode == 0, "cubind generate %s failed:\n%s" % (rules, p.stderr)
    return d


@pytest.fixture(scope="session")
def library_rules():
    """library_apis(), for the tests."""
    return library_apis()


def library_apis():
    """(rules file, header) of each library API: gen/<api>.rules with its
    `header` rule (configure pairs them the same way)."""
    gen = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "gen")
    apis = []
    for name in sorted(os.listdir(gen)):
        if name.endswith(".rules"):
            path = os.path.join(gen, name)
            with open(path) as f:
                headers = [line.split()[1] for line in f if line.startswith("header ")]
            apis.append((path, headers[0]))
    return apis


def pytest_terminal_summary(terminalreporter):
    for t in GENERATE_TIMES:
        terminalreporter.write_line(
            "tests/gen: `cubind generate` of the default cuda.h took %.3f s" % t)


# ---- clang's AST of cuda.h -------------------------------------------------

class ClangFacts:
    """What clang's JSON AST says about declarations located in cuda.h and
    the interop headers the generator binds with it."""

    def __init__(self):
        self.functions = {}       # name -> {"deprecated", "has_doc", "count"}
        self.enum_constants = {}  # name -> explicit value (int) or None
        self.function_decls = 0   # FunctionDecl nodes in cuda.h
        self.enum_typedefs = {}   # enum tag -> typedef names whose type is that
                                  # enum (through any typedefs), in order


def _walk_ast(root, headers):
    """Walks the JSON AST in document order.

    The JSON dumper writes a location's "file" only when it differs from the
    previously written location, so the file of a node is that of the last
    "file" key seen before (or in) its "loc". For a location inside a macro
    expansion, "loc" holds "spellingLoc" then "expansionLoc"; the expansion
    location is where the declaration is.
    """
    facts = ClangFacts()
    state = {"file": None}

    def bare(loc):
        if isinstance(loc, dict):
            if "file" in loc:
                state["file"] = loc["file"]
            for k in ("spellingLoc", "expansionLoc"):
                if k in loc:
                    bare(loc[k])
        return state["file"]

    def node_file(loc):
        if isinstance(loc, dict) and "expansionLoc" in loc:
            bare(loc.get("spellingLoc"))
            return bare(loc["expansionLoc"])
        return bare(loc)

    wanted = {os.path.realpath(h) for h in headers}

    def same(path):
        return path is not None and os.path.realpath(path) in wanted

    stack = [root]
    # Iterative pre-order walk; children pushed reversed to keep document order.
    while stack:
        node = stack.pop()
        f = None
        for k, v in node.items():
            if k == "loc":
                f = node_file(v)
            elif k == "range" and isinstance(v, dict):
                bare(v.get("begin"))
                bare(v.get("end"))
        kind = node.get("kind")
        inner = node.get("inner", [])
        if kind == "FunctionDecl" and same(f):
            facts.function_decls += 1
            kinds = [c.get("kind") for c in inner]
            e = facts.functions.setdefault(node["name"], {"deprecated": False,
                                                          "has_doc": False, "count": 0})
            e["count"] += 1
            e["deprecated"] |= "DeprecatedAttr" in kinds
            e["has_doc"] |= "FullComment" in kinds
        elif kind == "TypedefDecl" and same(f):
            desugared = node.get("type", {}).get("desugaredQualType", "")
            if desugared.startswith("enum "):
                facts.enum_typedefs.setdefault(desugared[len("enum "):], []).append(node["name"])
        elif kind == "EnumConstantDecl" and same(f):
            value = None
            for c in inner:
                if c.get("kind") == "ConstantExpr" and "value" in c:
                    value = int(c["value"])
            facts.enum_constants[node["name"]] = value
        stack.extend(reversed(inner))
    return facts


@pytest.fixture(scope="session")
def interop(dump, cuda_include):
    """What the generator read besides cuda.h: the flags that find the shim
    (runtime/interop) and the headers it includes after cuda.h, in order;
    the bound ones (interop headers and shim) as paths."""
    names = dump["interop_includes"]
    flags = ["-I" + dump["interop_dir"]] if dump["interop_dir"] else []
    bound = [os.path.join(dump["interop_dir"], n) if n == "cubind_interop.h"
             else os.path.join(cuda_include, n) for n in names if "Typedefs" not in n]
    return {"flags": flags, "includes": names, "bound": bound}


@pytest.fixture(scope="session")
def clang_facts(cuda_h, cuda_include, interop, tmp_path_factory):
    main = tmp_path_factory.mktemp("ast") / "main.c"
    main.write_text("".join('#include "%s"\n' % h for h in [cuda_h] + interop["bound"]))
    cmd = ["clang", "-Xclang", "-ast-dump=json", "-fsyntax-only", "-x", "c",
           "-I" + cuda_include, *interop["flags"], str(main)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    except FileNotFoundError:
        pytest.fail("clang is not installed (./configure installs it)", pytrace=False)
    assert p.returncode == 0, "%s failed:\n%s" % (" ".join(cmd), p.stderr.decode()[-4000:])
    facts = _walk_ast(json.loads(p.stdout), [cuda_h] + interop["bound"])
    # A walk that lost track of files would find nothing: fail loudly.
    assert facts.function_decls > 0 and facts.enum_constants, \
        "found no FunctionDecl/EnumConstantDecl of cuda.h in clang's AST"
    return facts


@pytest.fixture(scope="session")
def compile_and_run(tmp_path_factory, cuda_include, interop):
    """compile_and_run(source) -> stdout of the program gcc built from it,
    the headers the generator read besides cuda.h included first."""

    def go(source, name="prog"):
        d = tmp_path_factory.mktemp(name)
        src, exe = str(d / (name + ".c")), str(d / name)
        with open(src, "w") as f:
            f.write(source)
        first = ["-include" + h for h in ["cuda.h"] + interop["includes"]]
        p = subprocess.run(["gcc", "-std=gnu11", "-w", "-I" + cuda_include, *interop["flags"],
                            *first, src, "-o", exe],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        assert p.returncode == 0, "gcc failed on %s:\n%s" % (src, p.stderr[-6000:])
        r = subprocess.run([exe], stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
        assert r.returncode == 0, "%s exited %d" % (exe, r.returncode)
        return r.stdout

    return go
