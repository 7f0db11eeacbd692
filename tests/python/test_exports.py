# SPDX-License-Identifier: Apache-2.0
"""Each extension of the package exports its init function and nothing
else: what the translation units of a split module share (out/<module>_internal.h)
and the runtime linked into it stay hidden (docs/ARCHITECTURE.md,
"Translation units")."""
import pathlib
import shutil
import subprocess
import sysconfig

import pytest

import cubind


def extensions():
    """The extension files of this interpreter in the imported package."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return sorted(pathlib.Path(cubind.__file__).parent.glob("*" + suffix))


def test_extensions_export_only_their_init():
    if not shutil.which("nm"):
        pytest.skip("nm (binutils) is not installed")
    found = extensions()
    names = {p.name.split(".")[0] for p in found}
    assert {"driver", "runtime", "_runtime", "nvrtc"} <= names, names
    for path in found:
        out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
        exported = {line.split()[-1] for line in out.splitlines() if line.split()}
        assert exported == {"PyInit_" + path.name.split(".")[0]}, (path.name, sorted(exported)[:10])
