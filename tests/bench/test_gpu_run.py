# SPDX-License-Identifier: Apache-2.0
"""scripts/gpu-run, the one entry point of the GPU machine's suites, checked
here without a GPU: it names its suites in --help, refuses an unknown one
with a message that lists them (exit 2, nothing run), and every suite it
names is a script under scripts/gpu/ that takes its shared setup from
scripts/gpu/common.sh (and every suite script there is reachable)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_RUN = os.path.join(ROOT, "scripts", "gpu-run")
SUITE_DIR = os.path.join(ROOT, "scripts", "gpu")
# Scripts under scripts/gpu/ that are not suites: the shared setup, and the
# helper the releases and all suites call.
NOT_SUITES = {"common.sh", "build-release.sh"}
SUITES = ["tests", "examples", "nvrtc", "conversions", "nvcc-forms", "releases", "wheel", "upstream",
          "upstream-runtime", "clients", "bench", "ft-threads", "process-probe", "build-time", "all"]


def gpu_run(*args):
    return subprocess.run(["sh", GPU_RUN, *args], capture_output=True, text=True, timeout=60)


def listed_suites(help_text):
    """The suite names of --help's table: the first word of each indented line."""
    lines = help_text.split("Suites", 1)[1].splitlines()[1:]
    return [line.split()[0] for line in lines if line.startswith("  ") and line.strip()]


def test_help_lists_every_suite():
    p = gpu_run("--help")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: scripts/gpu-run SUITE")
    assert listed_suites(p.stdout) == SUITES


@pytest.mark.parametrize("args", [["no-such-suite"], ["h200"], ["tests.sh"], ["--tests"]])
def test_unknown_suite_is_refused_with_the_list(args):
    p = gpu_run(*args)
    assert p.returncode == 2
    assert p.stdout == ""
    assert "gpu-run: unknown suite '%s'" % args[0] in p.stderr
    assert "suites: " + " ".join(SUITES) in p.stderr


def test_no_suite_prints_usage_and_fails():
    p = gpu_run()
    assert p.returncode == 2
    assert p.stderr.startswith("usage: scripts/gpu-run SUITE")


def test_every_suite_is_a_script_sharing_the_common_setup():
    scripts = {f for f in os.listdir(SUITE_DIR) if f.endswith(".sh")} - NOT_SUITES
    assert scripts == {s + ".sh" for s in SUITES}
    for suite in SUITES:
        path = os.path.join(SUITE_DIR, suite + ".sh")
        with open(path) as f:
            text = f.read()
        assert '. "$(dirname "$0")/common.sh"' in text, suite
        # common.sh is the one place that builds the bindings and picks $OUT
        assert "ninja bindings" not in text and "OUT=${OUT" not in text, suite
        shell = "bash" if text.startswith("#!/bin/bash") else "sh"
        check = subprocess.run([shell, "-n", path], capture_output=True, text=True)
        assert check.returncode == 0, (suite, check.stderr)


def test_a_suite_missing_its_argument_says_so():
    p = gpu_run("releases")
    assert p.returncode != 0
    assert "usage: scripts/gpu-run releases CARRY" in p.stderr


def test_no_runner_is_named_for_a_machine():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    named = [f for f in files if "h200" in os.path.basename(f).lower()
             and not f.startswith("results/")]
    assert named == []


def test_absent_test_dependencies_skip_and_real_ones_win():
    """tests/gpu/absent_modules.py (the clients suite's stand-in for test
    dependencies the GPU machine lacks): a missing package and its
    submodules import, using anything from them skips the test (never
    passes it), and a package that is installed is left alone."""
    script = """
import unittest, absent_modules
assert absent_modules.INSTALLED == ["cubind_no_such_package"], absent_modules.INSTALLED
from cubind_no_such_package.matcher import Matcher, helper
import json.decoder
assert json.decoder.JSONDecoder.__module__ == "json.decoder"
for use in (lambda: Matcher(), lambda: helper(1), lambda: Matcher.options):
    try:
        use()
    except unittest.SkipTest as e:
        assert "cubind_no_such_package is not installed" in str(e), e
    else:
        raise AssertionError("a stand-in was usable")
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests", "gpu"),
               CUBIND_ABSENT_MODULES="cubind_no_such_package,json")
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr
