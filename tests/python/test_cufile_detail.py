# SPDX-License-Identifier: Apache-2.0
"""cuFile's second status (gen/cufile.rules, result-detail): a
CUfileError_t carries the CUDA driver's status `cu_err` beside `err`.
cuda.bindings raises cuFileError when either is not 0 and keeps cu_err as
`cuda_error`; cubind read `err` alone, so a call whose CUDA status failed
behind a cuFile success returned as if it had worked. The library is a
test double (tests/fakecuda/fake_cufile.c), compiled here, that returns
the statuses the environment asks for."""

import pytest

from conftest import run_python
from library_common import build_double

CALL = """
import cubind.cufile as c
try:
    print("returned", c.%s())
except c.cuFileError as e:
    print("raised", int(e.status), e.cuda_error, type(e.cuda_error).__name__)
"""


@pytest.fixture(scope="module")
def double(tmp_path_factory):
    return build_double(tmp_path_factory, "fake_cufile.c", "libcufile.so.0")


def call(double, function, err, cu_err):
    r = run_python(CALL % function, CUBIND_LIBCUFILE=double, FAKE_CUFILE_ERR=str(err),
                   FAKE_CUFILE_CU_ERR=str(cu_err))
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_cuda_error_behind_a_cufile_success_raises(double):
    # CUDA_ERROR_INVALID_CONTEXT (201) behind CU_FILE_SUCCESS
    assert call(double, "driver_open", 0, 201) == "raised 0 201 int"


def test_both_statuses_are_kept(double):
    # CU_FILE_CUDA_DRIVER_ERROR (5011) with its CUDA_ERROR_OUT_OF_MEMORY (2)
    assert call(double, "driver_open", 5011, 2) == "raised 5011 2 int"


def test_a_cufile_error_alone_carries_cuda_error_0(double):
    assert call(double, "driver_open", 5001, 0) == "raised 5001 0 int"


def test_success_of_both_returns_the_outputs(double):
    assert call(double, "get_version", 0, 0) == "returned 1090"
    assert call(double, "driver_open", 0, 0) == "returned None"


def test_a_raised_error_prints_both_statuses(double):
    """As cuda.bindings' cuFileError: the cuFile status with its
    description, then the CUDA driver's."""
    r = run_python("import cubind.cufile as c, cubind.driver as d\n"
                   "try:\n"
                   "    c.driver_open()\n"
                   "except c.cuFileError as e:\n"
                   "    print(str(e) == 'CUDA_DRIVER_ERROR (5011): %s; CUDA status: %s (2)'\n"
                   "          % (e.message, d.CUresult(2).name), e.message != e.name)\n",
                   CUBIND_LIBCUFILE=double, FAKE_CUFILE_ERR="5011", FAKE_CUFILE_CU_ERR="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"], r.stdout


def test_a_status_from_an_integer_function_has_cuda_error_none():
    import cubind.cufile as c
    assert c.cuFileError.cuda_error is None  # read/write's -N errors carry no CUDA status
