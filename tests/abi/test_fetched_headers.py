# SPDX-License-Identifier: Apache-2.0
"""The manifests of CUDA 12.4's library headers that scripts/fetch-cuda-libs.sh
fetches (configure's cuda_libs): abi/nvfatbin-12.4.json,
abi/cufile-12.4.json and abi/nvml-12.4.json (nvFatbin.h, cufile.h and
nvml.h, which out/nvfatbin.c, out/cufile.c and out/nvml.c are generated
from; cufile.h includes the toolkit's cuda.h, found with --include) and abi/nvvm-12.4.json (nvvm.h, kept in
the cache's nvvm/include/ beside the toolkit's 13.0 one) regenerate
unchanged, the committed report abi/diff-nvvm-12.4-13.0.txt is what
`cubind abi-diff` says between the nvvm manifests, and abi-check finds
cubind.nvfatbin, cubind.cufile and cubind.nvml true to theirs. Skipped,
with the reason, where the cache was not fetched."""
import os
import re
import sys

import pytest

from conftest import BUILD_PY, CUBIND, EXT_SUFFIX, REPO, check_saved_manifest, run


def cuda_include_args():
    with open(os.path.join(REPO, "build", "config.ninja")) as f:
        m = re.search(r"^cuda_include = (.*)$", f.read(), re.M)
    return ["--include", m.group(1).strip()]

ABI = os.path.join(REPO, "abi")


def fetched_root():
    with open(os.path.join(REPO, "build", "config.ninja")) as f:
        m = re.search(r"^cuda_libs = (.*)$", f.read(), re.M)
    if not m or not m.group(1).strip():
        pytest.skip("no CUDA 12.4 library headers (scripts/fetch-cuda-libs.sh did not run)")
    return m.group(1).strip()


@pytest.mark.parametrize("api,header", [("nvfatbin", "include/nvFatbin.h"),
                                        ("cufile", "include/cufile.h"),
                                        ("nvml", "include/nvml.h"),
                                        ("nvvm", "nvvm/include/nvvm.h")])
def test_saved_manifest_is_regenerated_unchanged(api, header, tmp_path):
    manifest = check_saved_manifest(os.path.join(ABI, "%s-12.4.json" % api),
                                    os.path.join(fetched_root(), header), tmp_path,
                                    *cuda_include_args())
    assert manifest["functions"]


def test_cufile_needs_the_toolkit_include(tmp_path):
    """Without --include, cufile.h's cuda.h is not found: a clear error."""
    p = run([CUBIND, "manifest", "--header", os.path.join(fetched_root(), "include", "cufile.h")])
    assert p.returncode == 1 and "'cuda.h' file not found" in p.stderr


def test_committed_nvvm_diff_report_is_current():
    p = run([CUBIND, "abi-diff", "nvvm-12.4.json", "nvvm-13.0.json"], cwd=ABI)
    assert p.returncode == 0, p.stderr  # an enumerator added: nothing breaks
    with open(os.path.join(ABI, "diff-nvvm-12.4-13.0.txt")) as f:
        assert p.stdout == f.read()
    assert "NVVM_ERROR_CANCELLED added" in p.stdout


@pytest.mark.parametrize("api", ["nvfatbin", "cufile", "nvml"])
def test_abi_check_finds_the_module_and_its_manifest_alike(api):
    """The capsule table carries every function of the manifest, also
    cufile's returning an integer (-1 when the entry point raised:
    cuFileRead, cuFileUseCount) or nothing (cuFileHandleDeregister), and
    nvml's (built from the same 12.4 header, its library is the 550
    driver's)."""
    fetched_root()
    so = os.path.join(BUILD_PY, "cubind", api + EXT_SUFFIX)
    if not os.path.isfile(so):
        pytest.skip("cubind.%s is not built" % api)
    p = run([CUBIND, "abi-check", so, "--header", os.path.join(ABI, "%s-12.4.json" % api),
             "--python", sys.executable])
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"functions: +0 added, +0 removed, +0 changed", p.stdout), p.stdout


# abi/{nvfatbin,cufile,nvml}-13.0.json were made from the GPU machine's CUDA
# 13.0 toolkit headers (`build/cubind manifest --header H --include
# <toolkit include> --out abi/LIB-13.0.json`; not regenerated here, where
# only 12.4's are fetched); the reports beside them are abi-diff's, whose
# exit status says whether anything breaks.
@pytest.mark.parametrize("api,breaking,mark", [("nvfatbin", False, "+ nvFatbinAddIndex"),
                                               ("cufile", True, "+ cuFileGetParameterBool"),
                                               ("nvml", True, "- nvmlDeviceGetDriverModel")])
def test_committed_library_diff_reports_are_current(api, breaking, mark):
    p = run([CUBIND, "abi-diff", "%s-12.4.json" % api, "%s-13.0.json" % api], cwd=ABI)
    assert p.returncode == (1 if breaking else 0), p.stderr
    with open(os.path.join(ABI, "diff-%s-12.4-13.0.txt" % api)) as f:
        assert p.stdout == f.read()
    assert ("breaking: yes" if breaking else "breaking: no") in p.stdout
    assert mark in p.stdout
