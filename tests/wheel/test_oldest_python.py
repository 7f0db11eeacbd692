# SPDX-License-Identifier: Apache-2.0
"""The oldest CPython the wheels admit (Requires-Python >=3.10, checked in
test_wheel.py) builds the bindings with -Werror and runs them: CI's own
interpreters are 3.11 and 3.13t, and 3.10's headers differ (no public
PyFloat_Pack2, its own _GNU_SOURCE, no compact ints), so a change can
break 3.10 unseen. scripts/check-pythons.sh builds from the committed
out/ in a scratch copy and runs scripts/smoke_bindings.py on the fake
driver. The interpreter: python3.10 on PATH, else a 3.10 that pyenv has;
skipped, saying so, when the machine has neither."""
import shutil
import subprocess
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
OLDEST = "3.10"


def works(python):
    try:
        p = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return p.returncode == 0 and p.stdout.strip() == OLDEST


def oldest_python():
    on_path = shutil.which("python" + OLDEST)
    if on_path and works(on_path):
        return on_path
    if not shutil.which("pyenv"):
        return None
    versions = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True)
    for version in sorted(versions.stdout.split(), reverse=True):
        if version.startswith(OLDEST + "."):
            prefix = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True)
            python = pathlib.Path(prefix.stdout.strip()) / "bin" / ("python" + OLDEST)
            if prefix.returncode == 0 and works(str(python)):
                return str(python)
    return None


def test_the_oldest_python_builds_and_runs_the_bindings():
    python = oldest_python()
    if python is None:
        pytest.skip("no CPython %s here (python%s on PATH or a pyenv version)" % (OLDEST, OLDEST))
    p = subprocess.run([str(ROOT / "scripts" / "check-pythons.sh"), python],
                       capture_output=True, text=True, timeout=1500)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert "check-pythons: %s: ok" % python in p.stdout, p.stdout[-3000:]
    assert "smoke_bindings: Python %s." % OLDEST in p.stdout, p.stdout[-3000:]
