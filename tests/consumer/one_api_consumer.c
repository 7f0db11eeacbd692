/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/consumer/one_api_consumer.c — TEST-ONLY: an extension that only
 * imports one API's capsule table through the consumer header it is
 * compiled with: -DCONSUMER_HEADER='"cubind_<api>_api.h"'
 * -DCONSUMER_IMPORT=cubind_<api>_import. tests/abi/test_capi_drift.py
 * compiles it against copies of out/'s headers it changed (a signature, a
 * function the module lacks, the table's version or entry size) and checks
 * the import is refused. Never shipped.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "consumer_module.h"

#include CONSUMER_HEADER

static int exec_module(PyObject *m)
{
    (void)m;
    return CONSUMER_IMPORT();
}

CONSUMER_MODULE(_cubind_one_api_consumer, NULL, NULL, exec_module)
