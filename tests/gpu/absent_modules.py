# SPDX-License-Identifier: Apache-2.0
"""Stand-ins for test-only dependencies of other projects' test suites that
the GPU machine lacks and cannot download (it has no network): numba-cuda's
`numba.cuda.testing` imports `filecheck` at module level (without it not
one of its tests is even collected). Only packages imported
unconditionally belong here: one that code imports inside try/except
ImportError (numba-cuda's `cffi`) is better left absent, since a stand-in
would turn "not installed" into a skip at its first use.

As a pytest plugin (`-p absent_modules`), for each top-level name in
CUBIND_ABSENT_MODULES (comma-separated, default "filecheck") that does not
import, it installs a finder that makes that package and any submodule of
it importable. Every attribute of such a module is a placeholder whose use
(calling it, instantiating it, reading its attributes) raises
unittest.SkipTest naming the missing package, so a test that needs it is
reported as skipped on every implementation alike, never as passed, and
the tests that do not need it run unchanged. Nothing is installed for a
name that imports (the real package wins)."""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
import unittest


def _skip(package):
    raise unittest.SkipTest("%s is not installed on this machine" % package)


class _PlaceholderMeta(type):
    """The class of placeholders: any attribute read on one skips too."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _skip(cls._package)


def _placeholder(package, name):
    def __new__(cls, *args, **kwargs):
        _skip(package)
    return _PlaceholderMeta(name, (), {"_package": package, "__new__": __new__})


class _AbsentModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(self.__name__.split(".")[0], name)
        setattr(self, name, value)
        return value


class _AbsentFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, package):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def install(packages):
    """Installs a finder for each of `packages` that does not import;
    returns the names it installed one for."""
    installed = []
    for package in packages:
        if importlib.util.find_spec(package) is None:
            sys.meta_path.append(_AbsentFinder(package))
            installed.append(package)
    return installed


INSTALLED = install([s for s in os.environ.get("CUBIND_ABSENT_MODULES", "filecheck").split(",") if s])


def pytest_report_header(config):
    if INSTALLED:
        return "stand-ins for absent test dependencies (uses skip): " + ", ".join(INSTALLED)
    return None
