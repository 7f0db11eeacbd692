# SPDX-License-Identifier: Apache-2.0
"""A generated module's translation units (a `parts` rule; docs/ARCHITECTURE.md,
"Translation units"): each unit stays small enough to compile in parallel
with the others, every function is defined in exactly one of them, and what
one unit defines for another stays hidden inside the extension."""
import os
import re
import subprocess
import sysconfig

import pytest
from conftest import OUT, REPO, unit_files

# The most lines one unit of out/ may have: a module growing past it needs
# a larger `parts` count in its rules file. Before the split (issue 43)
# out/driver.c was one 79,692-line unit that took 16 of a clean build's
# 33 seconds on one core.
UNIT_LINE_LIMIT = 16000

_IMPL = re.compile(r"^(?:static (?:CBS_ALWAYS_INLINE )?)PyObject \*impl_(\w+)\(", re.M)


def modules():
    """The generated modules of out/ (each has its shared header)."""
    return sorted(n[:-len("_internal.h")] for n in os.listdir(OUT) if n.endswith("_internal.h"))


def rules_parts(module):
    """The `parts` count of the module's rules file (1 without one)."""
    name = "rules.txt" if module == "driver" else module + ".rules"
    with open(os.path.join(REPO, "gen", name)) as f:
        m = re.search(r"^parts (\d+)", f.read(), re.M)
    return int(m.group(1)) if m else 1


def line_count(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def test_every_unit_stays_under_the_line_limit():
    units = [u for m in modules() for u in unit_files(OUT, m)]
    assert len(units) > len(modules())  # some module is split
    big = [(os.path.basename(u), line_count(u)) for u in units if line_count(u) > UNIT_LINE_LIMIT]
    assert not big, "units over %d lines (raise the parts rule): %r" % (UNIT_LINE_LIMIT, big)


@pytest.mark.parametrize("module", ["driver", "runtime", "nvrtc"])
def test_the_parts_rule_gives_the_units(module):
    """A `parts N` rule gives N units, the functions in the parts and none
    in the main unit; without one (nvrtc), the main unit holds them all."""
    units = unit_files(OUT, module)
    assert len(units) == rules_parts(module)
    defined = {}
    for u in units:
        with open(u) as f:
            for name in _IMPL.findall(f.read()):
                defined.setdefault(name, []).append(os.path.basename(u))
    twice = {n: where for n, where in defined.items() if len(where) > 1}
    assert defined and not twice, twice
    with open(os.path.join(OUT, module + "_internal.h")) as f:
        declared = set(re.findall(r"^PyObject \*cu_(\w+)\(", f.read(), re.M))
    assert declared == set(defined)
    in_main = [n for n, where in defined.items() if where == [module + ".c"]]
    if len(units) > 1:
        assert not in_main
        # every part has its share
        assert {w for where in defined.values() for w in where} == \
            {os.path.basename(u) for u in units[1:]}
    else:
        assert len(in_main) == len(defined)


def global_symbols(obj):
    """{name: visibility} of the global symbols obj defines (readelf -s)."""
    out = subprocess.run(["readelf", "-sW", obj], capture_output=True, text=True, check=True).stdout
    symbols = {}
    for line in out.splitlines():
        w = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(w) >= 8 and w[4] == "GLOBAL" and w[6] != "UND":
            symbols[w[7]] = w[5]
    return symbols


@pytest.mark.parametrize("unit", ["driver.c", "driver_part1.c"])
def test_what_units_share_is_hidden_without_the_visibility_flag(unit, cuda_include, tmp_path):
    """The shared header declares what one unit defines for another under
    `#pragma GCC visibility push(hidden)`: compiled without
    -fvisibility=hidden (a consumer's own build script), a unit still
    defines nothing visible outside the extension but PyInit_driver."""
    obj = str(tmp_path / (unit[:-2] + ".o"))
    cmd = ["gcc", "-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", "-fPIC",
           *("-I" + os.path.join(REPO, "runtime", d) for d in ("include", "module", "interop")),
           "-I" + sysconfig.get_paths()["include"], "-I" + cuda_include,
           "-c", os.path.join(OUT, unit), "-o", obj]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    symbols = global_symbols(obj)
    shared = "cu_cuInit" if unit == "driver_part1.c" else "proc_slots"
    assert symbols.get(shared) == "HIDDEN", symbols.get(shared)  # the check sees them
    visible = {n for n, vis in symbols.items() if vis != "HIDDEN"}
    assert visible == ({"PyInit_driver"} if unit == "driver.c" else set()), sorted(visible)[:10]
