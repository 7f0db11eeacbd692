# SPDX-License-Identifier: Apache-2.0
"""Fixtures of tests/fuzz; the helpers are in fuzzsupport.py."""
import pytest

from fuzzsupport import ASAN_CUBIND, ASAN_PY


@pytest.fixture(scope="session")
def asan_built():
    for p in (ASAN_PY / "cubind" / "__init__.py", ASAN_CUBIND):
        if not p.exists():
            pytest.fail("%s is missing: run `ninja fuzz`" % p, pytrace=False)
