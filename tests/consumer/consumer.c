/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/consumer/consumer.c — TEST-ONLY: a tiny C extension built from the
 * generated consumer header (out/cubind_driver_api.h, or one generated from
 * another release's cuda.h), calling cubind.driver through its capsule
 * table. Never shipped. tests/abi/test_capi.py drives it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "consumer_module.h"

#include "cubind_driver_api.h"

/* An entry point's result: the CUresult as an int, or NULL when it returned
 * the sentinel with a Python exception set (propagated unchanged). */
static PyObject *result(CUresult rc, PyObject *value)
{
    if (rc == CUBIND_DRIVER_CAPI_SENTINEL && PyErr_Occurred()) {
        Py_XDECREF(value);
        return NULL;
    }
    if (!value)
        return PyLong_FromLong((long)rc);
    return Py_BuildValue("(lN)", (long)rc, value);
}

static PyObject *init(PyObject *self, PyObject *arg)
{
    (void)self;
    unsigned long flags = PyLong_AsUnsignedLong(arg);
    if (flags == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    return result(cubind_cuInit((unsigned int)flags), NULL);
}

static PyObject *driver_get_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int v = 0;
    CUresult rc = cubind_cuDriverGetVersion(&v);
    return result(rc, PyLong_FromLong(v));
}

static PyObject *device_get(PyObject *self, PyObject *arg)
{
    (void)self;
    long ordinal = PyLong_AsLong(arg);
    if (ordinal == -1 && PyErr_Occurred())
        return NULL;
    CUdevice dev = -1;
    CUresult rc = cubind_cuDeviceGet(&dev, (int)ordinal);
    return result(rc, PyLong_FromLong((long)dev));
}

static PyObject *cuda_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(CUBIND_DRIVER_API_CUDA_VERSION);
}

static PyMethodDef methods[] = {
    {"init", init, METH_O, "cuInit(flags) through the table: CUresult"},
    {"driver_get_version", driver_get_version, METH_NOARGS, "(CUresult, version)"},
    {"device_get", device_get, METH_O, "(CUresult, CUdevice)"},
    {"cuda_version", cuda_version, METH_NOARGS, "CUDA_VERSION of the consumer header"},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *module)
{
    (void)module;
    return cubind_driver_import();
}

CONSUMER_MODULE(_cubind_consumer, "TEST-ONLY consumer of cubind.driver's C API.", methods, exec_module)
