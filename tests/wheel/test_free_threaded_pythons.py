# SPDX-License-Identifier: Apache-2.0
"""Free-threaded CPython past CI's 3.13t: scripts/build-python-ft.sh
--version 3.14 (or 3.15) caches one in $CUBIND_CACHE/python3.Xt, and
scripts/check-pythons.sh with no argument builds the bindings for each
one cached and runs the free-threading tests on it with the GIL off. The
run on a cached interpreter is skipped, saying so, where none is cached
(the mirror does not serve sid's python3.14/python3.15 files yet:
scripts/README.md)."""
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = pathlib.Path(os.environ.get("CUBIND_CACHE", pathlib.Path.home() / ".cache" / "cubind"))
VERSIONS = ("3.14", "3.15")   # what check-pythons.sh looks for


def script(name, *args, **env):
    return subprocess.run([str(ROOT / "scripts" / name), *args], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=1500)


def test_check_pythons_without_arguments_skips_what_is_not_cached(tmp_path):
    p = script("check-pythons.sh", CUBIND_CACHE=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    for v in VERSIONS:
        assert ("check-pythons: %st: not cached, skipped "
                "(scripts/build-python-ft.sh --version %s builds it)" % (v, v)) in p.stdout, p.stdout


def test_build_python_ft_names_the_versions_it_builds(tmp_path):
    p = script("build-python-ft.sh", "--version", "3.12", CUBIND_CACHE=str(tmp_path))
    assert p.returncode == 2
    assert "unsupported version 3.12" in p.stderr and "--version 3.13|3.14|3.15" in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []   # refused before touching the cache


@pytest.mark.parametrize("version", VERSIONS)
def test_a_cached_free_threaded_python_passes_the_free_threading_tests(version):
    python = CACHE / ("python%st" % version) / "bin" / ("python%st" % version)
    if not python.exists():
        pytest.skip("no free-threaded %s cached (scripts/build-python-ft.sh --version %s; "
                    "scripts/README.md says why it may not build here)" % (version, version))
    p = script("check-pythons.sh", str(python))
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert "check-pythons: %s: ok" % python in p.stdout, p.stdout[-3000:]
    # ft_tests printed sys.version with the GIL off, then pytest's summary
    assert re.search(r"^%s\.\d+\S* .*free-threading build" % re.escape(version), p.stdout,
                     re.MULTILINE), p.stdout[-3000:]
    summary = re.search(r"^\d+ passed.*$", p.stdout, re.MULTILINE)
    assert summary and "failed" not in summary.group(0), p.stdout[-3000:]
