# SPDX-License-Identifier: Apache-2.0
"""Stand-in for the package cuda_python_test_helpers, which cuda-python's
tests import (scripts/gpu/common.sh's gpu_upstream_copy installs this file
as its __init__.py next to the tests): what those tests call of it,
written for cubind's runs."""


def driver_version_less_than(version):
    """True when the installed driver's version (cuDriverGetVersion, e.g.
    13000) is below `version`, through the driver module under test."""
    import cuda.bindings.driver as cuda  # the module under test

    (err,) = cuda.cuInit(0)
    assert err == cuda.CUresult.CUDA_SUCCESS, err
    err, installed = cuda.cuDriverGetVersion()
    assert err == cuda.CUresult.CUDA_SUCCESS, err
    return installed < version
