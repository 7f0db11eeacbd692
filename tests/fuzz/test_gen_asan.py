# SPDX-License-Identifier: Apache-2.0
"""The generator under ASan+UBSan with leak detection (build/asan/cubind):
`generate` and `dump` of cuda.h, and every bad-input case of
tests/gen/test_gen_errors.py, re-run here through this module's run_cubind.
No suppressions are needed (libclang included)."""
import os
import subprocess
import sys

import pytest

from fuzzsupport import ASAN_CUBIND, ROOT, config, sanitizer_report

sys.path.insert(0, str(ROOT / "tests" / "gen"))
from test_gen_errors import *  # noqa: E402,F401,F403  (the same cases, here under ASan)
sys.path.insert(0, str(ROOT / "tests"))
from api_headers import header_path  # noqa: E402  (where a library API's header is)

ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=99:abort_on_error=0",
           UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=99")


def _run(*args, timeout=300, prefix=()):
    args = list(args)
    # The sanitized binary is one directory deeper than build/cubind, so its
    # default templates/ and rules.txt (found beside the build dir) are not
    # the repository's: name them unless the test does (classify reads the
    # rules, not the templates).
    if args and args[0] in ("generate", "classify"):
        if "--templates" not in args and args[0] == "generate":
            args += ["--templates", str(ROOT / "templates")]
        if "--rules" not in args:
            args += ["--rules", str(ROOT / "gen" / "rules.txt")]
    p = subprocess.run(list(prefix) + [str(ASAN_CUBIND)] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout, env=ENV)
    rep = sanitizer_report(p.stderr)
    assert not rep and p.returncode != 99, "sanitizer report:\n%s" % (rep or p.stderr[-4000:])
    return p


@pytest.fixture(scope="session")
def run_cubind(asan_built):
    return _run


@pytest.fixture(scope="session")
def cuda_h():
    return os.path.join(config("cuda_include"), "cuda.h")


def test_generate_cuda_h(cuda_h, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    p = _run("generate", "--header", cuda_h, "--out", str(out), "--templates",
             str(ROOT / "templates"), "--rules", str(ROOT / "gen" / "rules.txt"),
             "--depfile", str(tmp_path / "dep"))
    assert p.returncode == 0, p.stderr
    # each library API too (gen/<api>.rules, its `header` rule naming the header)
    for rules in sorted((ROOT / "gen").glob("*.rules")):
        header = next(w[1] for w in map(str.split, rules.read_text().splitlines()) if w[:1] == ["header"])
        p = _run("generate", "--header", header_path(os.path.dirname(cuda_h), header), "--out",
                 str(out), "--templates", str(ROOT / "templates"), "--rules", str(rules),
                 "--include", os.path.dirname(cuda_h))
        assert p.returncode == 0, p.stderr
    for n in os.listdir(ROOT / "out"):
        if not n.startswith("."):
            assert (out / n).read_bytes() == (ROOT / "out" / n).read_bytes(), n


def test_dump_cuda_h(cuda_h):
    p = _run("dump", "--header", cuda_h)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("{")
