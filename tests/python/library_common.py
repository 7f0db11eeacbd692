# SPDX-License-Identifier: Apache-2.0
"""What the tests of the library modules of cuda.bindings' snake_case face
(cubind.nvvm, cubind.nvfatbin, cubind.cufile, cubind.nvml) share, in one
place: the module with its library loaded, or the test skipped with the
reason; and the record of the functions a test file called, which its
last test checks covers the whole module."""
import importlib
import pathlib
import shutil
import subprocess

import pytest

FAKECUDA = pathlib.Path(__file__).resolve().parents[1] / "fakecuda"


def library_or_skip(module, what, expected=()):
    """cubind.<module> once its library loads (its _library_status());
    else the test is skipped naming `what` and why, unless `expected`
    lists library files that exist (then not loading one is a failure)."""
    m = importlib.import_module("cubind." + module)
    ok, where = m._library_status()
    if not ok:
        assert not expected, "%s exist, yet: %s" % (list(expected), where)
        pytest.skip("no %s: %s" % (what, where))
    return m


def bound_functions(module):
    """The public functions of a module (no classes: enums, structs and
    exceptions are types)."""
    return {name for name in dir(module) if not name.startswith("_")
            and callable(getattr(module, name)) and not isinstance(getattr(module, name), type)}


class CallRecorder:
    """call(module, name, *args) calls module.name(*args) and remembers
    the name; check_all_called then says whether every bound function was
    called."""

    def __init__(self):
        self.called = set()

    def __call__(self, module, name, *args):
        self.called.add(name)
        return getattr(module, name)(*args)

    def check_all_called(self, module, count, exempt=()):
        """The module binds `count` functions and each was called, but
        those in `exempt` (each with its reason where the test says it)."""
        bound = bound_functions(module)
        assert len(bound) == count, sorted(bound)
        assert bound - self.called - set(exempt) == set()


def build_double(tmp_path_factory, source, soname):
    """A library's test double, tests/fakecuda/<source> compiled as a
    shared library named soname in a fresh folder: its path; the test is
    skipped where no C compiler is found."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the %s double" % soname)
    lib = tmp_path_factory.mktemp(source.split(".")[0]) / soname
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(lib),
                    str(FAKECUDA / source)], check=True)
    return str(lib)
