/* SPDX-License-Identifier: Apache-2.0 */
/*
 * device_info.c — an example C extension calling the CUDA driver through
 * cubind's capsule table (cubind_driver_api.h, in cubind.get_include()):
 * the driver cubind loaded, resolved once, with cubind's errors.
 *
 *   device_info.count()        -> number of devices
 *   device_info.name(ordinal)  -> the device's name (str)
 *
 * A failing call raises cubind.CUDAError's base, RuntimeError, here with
 * the CUresult; an entry point the driver lacks returns the sentinel with
 * cubind's FunctionNotFoundError already set (the header's "except
 * ?CUDA_ERROR_NOT_FOUND" contract). build.py compiles it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cubind_driver_api.h"

/* 0 on success; -1 with an exception set. */
static int check(CUresult rc, const char *what)
{
    if (rc == CUDA_SUCCESS)
        return 0;
    if (rc == CUBIND_DRIVER_CAPI_SENTINEL && PyErr_Occurred())
        return -1; /* cubind raised (no driver, or no such entry point) */
    PyErr_Format(PyExc_RuntimeError, "%s failed: CUresult %d", what, (int)rc);
    return -1;
}

static PyObject *count(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int n = 0;
    if (check(cubind_cuInit(0), "cuInit") < 0 || check(cubind_cuDeviceGetCount(&n), "cuDeviceGetCount") < 0)
        return NULL;
    return PyLong_FromLong(n);
}

static PyObject *name(PyObject *self, PyObject *arg)
{
    (void)self;
    long ordinal = PyLong_AsLong(arg);
    if (ordinal == -1 && PyErr_Occurred())
        return NULL;
    CUdevice dev;
    char buf[256] = {0};
    if (check(cubind_cuInit(0), "cuInit") < 0 ||
        check(cubind_cuDeviceGet(&dev, (int)ordinal), "cuDeviceGet") < 0 ||
        check(cubind_cuDeviceGetName(buf, (int)sizeof buf - 1, dev), "cuDeviceGetName") < 0)
        return NULL;
    return PyUnicode_FromString(buf);
}

static PyMethodDef methods[] = {
    {"count", count, METH_NOARGS, "count()\n--\n\nNumber of CUDA devices."},
    {"name", name, METH_O, "name(ordinal)\n--\n\nThe device's name."},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *module)
{
    (void)module;
    return cubind_driver_import(); /* ImportError naming any mismatch */
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, (void *)exec_module},
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef def = {
    PyModuleDef_HEAD_INIT, "device_info", "Device queries through cubind's capsule table.", 0,
    methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_device_info(void)
{
    return PyModuleDef_Init(&def);
}
