/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_cufile.c — a test double of libcufile, for CI only: the few entry
 * points tests/python/test_cufile_detail.py calls, each returning the
 * CUfileError_t its environment asks for (FAKE_CUFILE_ERR, the cuFile
 * status; FAKE_CUFILE_CU_ERR, the CUDA driver's status beside it), so that
 * a status no real library without GPUDirect Storage gives (a CUDA error
 * behind a cuFile success) can be checked. Compiled by that test.
 */
#include <stdlib.h>

/* cufile.h's layout: two enums, the cuFile status then the CUresult. */
typedef struct {
    int err;
    int cu_err;
} fake_cufile_error;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : 0;
}

static fake_cufile_error asked(void)
{
    fake_cufile_error r = {env_int("FAKE_CUFILE_ERR"), env_int("FAKE_CUFILE_CU_ERR")};
    return r;
}

fake_cufile_error cuFileDriverOpen(void)
{
    return asked();
}

fake_cufile_error cuFileGetVersion(int *version)
{
    *version = 1090;
    return asked();
}
