# SPDX-License-Identifier: Apache-2.0
"""Where a library API's header is found: configure's api_header_dir and
this suite's header_path (tests/gen/conftest.py) agree, on toolkits laid
out as this machine's (every header in include/) and as NVIDIA's installer
lays them out (include/ a link into targets/<arch>/, nvvm.h in
nvvm/include/, beside it by name: through `..` the link would lead into
targets/)."""
import os
import subprocess

import pytest
from conftest import REPO, header_path

# configure's function, run on its own: the header rule of gen/<api>.rules
# and the directory holding it.
SCRIPT = r"""
set -eu
cd "$1"
cuda_include=$2
cuda_libs=$4
api_header() {
    sed -n 's/^header[[:space:]]*\([^[:space:]#]*\).*/\1/p' "gen/$1.rules"
}
eval "$(sed -n '/^api_header_dir() {/,/^}/p' configure)"
api_header_dir "$3"
"""


def api_header_dir(include, api, cuda_libs=""):
    p = subprocess.run(["sh", "-c", SCRIPT, "sh", REPO, str(include), api, str(cuda_libs)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def toolkit(root, linked):
    """A toolkit with nvrtc.h in include/ and nvvm.h in nvvm/include/;
    linked: include/ is a link to targets/x86_64-linux/include."""
    inc = root / ("targets/x86_64-linux/include" if linked else "include")
    inc.mkdir(parents=True)
    (inc / "nvrtc.h").write_text("/* test */\n")
    (root / "nvvm" / "include").mkdir(parents=True)
    (root / "nvvm" / "include" / "nvvm.h").write_text("/* test */\n")
    if linked:
        os.symlink("targets/x86_64-linux/include", root / "include")
    return root / "include"


@pytest.mark.parametrize("linked", [False, True])
def test_configure_and_the_tests_find_the_same_header(tmp_path, linked):
    include = toolkit(tmp_path, linked)
    assert api_header_dir(include, "nvvm") == str(tmp_path / "nvvm" / "include")
    assert header_path(str(include), "nvvm.h") == str(tmp_path / "nvvm" / "include" / "nvvm.h")
    # a header in include/ itself is taken from there
    assert api_header_dir(include, "nvrtc") == str(include)
    assert header_path(str(include), "nvrtc.h") == str(include / "nvrtc.h")
    # and a header found nowhere gives nothing (configure: not built)
    os.remove(tmp_path / "nvvm" / "include" / "nvvm.h")
    assert api_header_dir(include, "nvvm") == ""


def test_fetched_headers_come_first(tmp_path):
    """scripts/fetch-cuda-libs.sh's headers (configure's cuda_libs), out/'s
    source for nvFatbin.h, win over a toolkit's own; without them the
    toolkit's is taken."""
    include = toolkit(tmp_path / "tk", False)
    (include / "nvFatbin.h").write_text("/* toolkit */\n")
    fetched = tmp_path / "cuda-libs" / "12.4"
    (fetched / "include").mkdir(parents=True)
    (fetched / "include" / "nvFatbin.h").write_text("/* fetched */\n")
    assert api_header_dir(include, "nvfatbin", fetched) == str(fetched / "include")
    assert header_path(str(include), "nvFatbin.h", str(fetched / "include")) == str(
        fetched / "include" / "nvFatbin.h")
    assert api_header_dir(include, "nvfatbin", "") == str(include)
    os.remove(fetched / "include" / "nvFatbin.h")
    assert api_header_dir(include, "nvfatbin", fetched) == str(include)
    assert header_path(str(include), "nvFatbin.h", str(fetched / "include")) == str(include / "nvFatbin.h")
