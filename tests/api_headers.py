# SPDX-License-Identifier: Apache-2.0
"""Where a library API's header is, for the test suites that generate
bindings (tests/gen, tests/fuzz): configure's api_header_dir's order, read
back from build/config.ninja (the fetched CUDA 12.4 headers first, where
out/ for nvFatbin.h and cufile.h comes from)."""
import glob
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fetched_include():
    """The include directory of scripts/fetch-cuda-libs.sh's CUDA 12.4
    headers (configure's cuda_libs), or None."""
    try:
        with open(os.path.join(REPO, "build", "config.ninja")) as f:
            for line in f:
                if line.startswith("cuda_libs = "):
                    root = line.split(" = ", 1)[1].strip()
                    return os.path.join(root, "include") if root else None
    except OSError:
        pass
    return None


def header_path(include, header, fetched=None):
    """Where a library API's header is for the toolkit whose include
    directory is `include`: in the fetched CUDA 12.4 headers (`fetched`,
    by default fetched_include()) when they have it, else there, else in a
    toolkit component's include/ beside it by name (nvvm/include/nvvm.h;
    include/ may be a link into targets/<arch>/), as configure's
    api_header_dir looks; `include`/header when none has it."""
    root = os.path.dirname(os.path.normpath(include))
    fetched = fetched_include() if fetched is None else fetched
    for d in ([fetched] if fetched else []) + [include] + sorted(glob.glob(os.path.join(root, "*", "include"))):
        if os.path.isfile(os.path.join(d, header)):
            return os.path.normpath(os.path.join(d, header))
    return os.path.join(include, header)
