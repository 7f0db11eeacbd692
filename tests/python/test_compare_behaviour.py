# SPDX-License-Identifier: Apache-2.0
"""tools/compare_behaviour.py (run on the GPU machine against cuda.bindings):
on cubind.driver against itself every count is full, and a module that
differs in one class is counted as differing there."""
import json
import os
import subprocess
import sys

from conftest import ROOT

TOOL = str(ROOT / "tools" / "compare_behaviour.py")


def run(theirs, extra_path=None):
    paths = [str(ROOT / "build" / "python")] + ([str(extra_path)] if extra_path else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    p = subprocess.run([sys.executable, TOOL, "--json", "--theirs", theirs],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_against_itself_everything_matches():
    r = run("cubind.driver")
    s, e, h = r["counts"]["structs"], r["counts"]["enums"], r["counts"]["handles"]
    assert s["structs"] > 200 and s["fields"] > 1000 and e["enums"] > 100 and h["handles"] > 40
    assert s["same_fields"] == s["same_repr"] == s["structs"]
    assert s["same_type"] == s["same_default"] == s["fields"]
    assert e["same_members"] == e["same_order"] == e["same_len"] == e["same_lookup"] == e["enums"]
    assert all(h["same_" + k] == h["handles"] for k in ("repr", "int", "hash", "eq", "ne", "getPtr"))
    assert r["differences"] == []


def test_a_difference_is_counted(tmp_path):
    (tmp_path / "other_driver.py").write_text(
        "import ctypes\n"
        "from cubind.driver import *\n"
        "_seven = ctypes.c_uint32(7)\n"
        "class CUdevice(int):\n"
        "    def __repr__(self):\n"
        "        return 'other'\n"
        "    def getPtr(self):\n"
        "        return ctypes.addressof(_seven)\n")
    r = run("other_driver", tmp_path)
    h = r["counts"]["handles"]
    assert h["same_repr"] == h["handles"] - 1 and h["same_getPtr"] == h["handles"] - 1
    assert ["handle repr", "CUdevice", "'<CUdevice 4660>', theirs 'other'"] in r["differences"]
    assert ["handle getPtr", "CUdevice", "True, theirs False"] in r["differences"]
