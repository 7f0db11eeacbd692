# SPDX-License-Identifier: Apache-2.0
"""Runs pytest inside a virtual environment where cubind's wheel is
installed, and fails unless every cubind module the tests imported came from
that environment (never the build tree).

    VENV/bin/python tests/wheel/run_installed.py PYTEST-ARGS...

tests/wheel/test_wheel.py runs it from an empty directory with PYTHONPATH
unset.
"""
import os
import sys

import pytest


class InstalledOnly:
    """Checks, once the tests ran, where cubind was imported from."""

    def __init__(self):
        self.problems = []
        self.found = []

    def pytest_sessionfinish(self, session):
        import cubind
        import cubind.driver
        import cubind._runtime
        prefix = os.path.realpath(sys.prefix) + os.sep
        for name, module in sorted(sys.modules.items()):
            if name == "cubind" or name.startswith("cubind."):
                path = getattr(module, "__file__", None)
                if path is None:
                    continue  # cubind.cu: built by the driver extension
                where = os.path.realpath(path)
                if not where.startswith(prefix):
                    self.problems.append("%s from %s, outside %s" % (name, where, prefix))
                else:
                    self.found.append("run_installed: %s from %s" % (name, where))
        if sys.prefix == sys.base_prefix:
            self.problems.append("not running in a virtual environment")


def main():
    if os.environ.get("PYTHONPATH"):
        print("run_installed: PYTHONPATH must be unset", file=sys.stderr)
        return 2
    checker = InstalledOnly()
    status = pytest.main(sys.argv[1:], plugins=[checker])
    for line in checker.found:
        print(line)
    for problem in checker.problems:
        print("run_installed: FAILED: " + problem, file=sys.stderr)
    if checker.problems:
        return 3
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
