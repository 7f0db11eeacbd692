/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/consumer/fetched_consumer.c — TEST-ONLY: a tiny C extension built
 * from the generated consumer headers of the library APIs whose headers
 * ./configure fetches (scripts/fetch-cuda-libs.sh: nvFatbin.h, nvml.h,
 * cufile.h), calling cubind.nvfatbin, cubind.nvml and cubind.cufile
 * through their capsule tables. Each is compiled in where configure built
 * its module: configure's consumer_defines names them
 * (-DCUBIND_CONSUMER_WITH_<API>), and apis() lists them. Never shipped.
 * tests/abi/test_library_capi.py drives it.
 *
 * Every function returns the library's status (and what it wrote), or
 * NULL with the entry point's exception when an entry point returned its
 * sentinel with one set (the library could not be loaded...).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "consumer_module.h"

#ifdef CUBIND_CONSUMER_WITH_NVFATBIN
#include "cubind_nvfatbin_api.h"

/* (status, major, minor) of nvFatbinVersion. */
static PyObject *nvfatbin_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    unsigned major = 0, minor = 0;
    nvFatbinResult rc = cubind_nvFatbinVersion(&major, &minor);
    if (rc == CUBIND_NVFATBIN_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(iII)", (int)rc, major, minor);
}

/* (status, fat binary) of create (uncompressed), add `ptx` for `arch`,
 * size, get, destroy; the bytes are empty unless every step succeeded. */
static PyObject *fatbin_of_ptx(PyObject *self, PyObject *args)
{
    (void)self;
    const char *ptx, *arch;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "y#s", &ptx, &len, &arch))
        return NULL;
    const char *options[] = {"-compress=false"};
    nvFatbinHandle h = NULL;
    nvFatbinResult rc = cubind_nvFatbinCreate(&h, options, 1);
    size_t size = 0;
    if (rc == NVFATBIN_SUCCESS)
        rc = cubind_nvFatbinAddPTX(h, ptx, (size_t)len, arch, "consumer.ptx", "");
    if (rc == NVFATBIN_SUCCESS)
        rc = cubind_nvFatbinSize(h, &size);
    PyObject *image = PyBytes_FromStringAndSize(NULL, rc == NVFATBIN_SUCCESS ? (Py_ssize_t)size : 0);
    if (image && rc == NVFATBIN_SUCCESS)
        rc = cubind_nvFatbinGet(h, PyBytes_AS_STRING(image));
    if (h) /* created: the library is loaded, destroying raises nothing */
        cubind_nvFatbinDestroy(&h);
    if (!image || (rc == CUBIND_NVFATBIN_CAPI_SENTINEL && PyErr_Occurred())) {
        Py_XDECREF(image);
        return NULL;
    }
    return Py_BuildValue("(iN)", (int)rc, image);
}
#endif

#ifdef CUBIND_CONSUMER_WITH_NVML
#include "cubind_nvml_api.h"

/* (status of nvmlInit_v2, its nvmlErrorString); shut down again when it
 * succeeded (a machine with the NVIDIA driver). */
static PyObject *nvml_init(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    nvmlReturn_t rc = cubind_nvmlInit_v2();
    if (rc == CUBIND_NVML_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    const char *text = cubind_nvmlErrorString(rc);
    if (!text && PyErr_Occurred())
        return NULL;
    if (rc == NVML_SUCCESS) {
        nvmlReturn_t down = cubind_nvmlShutdown();
        if (down == CUBIND_NVML_CAPI_SENTINEL && PyErr_Occurred())
            return NULL;
    }
    return Py_BuildValue("(is)", (int)rc, text ? text : "(null)");
}

/* nvmlErrorString(status): a pointer, NULL with the exception. */
static PyObject *nvml_error_string(PyObject *self, PyObject *arg)
{
    (void)self;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    const char *s = cubind_nvmlErrorString((nvmlReturn_t)v);
    if (!s && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(s ? s : "(null)");
}
#endif

#ifdef CUBIND_CONSUMER_WITH_CUFILE
#include "cubind_cufile_api.h"

/* cufile.h's functions return a struct: its sentinel is .err. */
#define CUFILE_RAISED(r) ((r).err == CUBIND_CUFILE_CAPI_SENTINEL && PyErr_Occurred())

/* (status, CUDA status, version) of cuFileGetVersion. */
static PyObject *cufile_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int version = 0;
    CUfileError_t r = cubind_cuFileGetVersion(&version);
    if (CUFILE_RAISED(r))
        return NULL;
    return Py_BuildValue("(iii)", (int)r.err, (int)r.cu_err, version);
}

/* (status, CUDA status) of cuFileDriverOpen; closed again when it opened. */
static PyObject *cufile_driver_open(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    CUfileError_t r = cubind_cuFileDriverOpen();
    if (CUFILE_RAISED(r))
        return NULL;
    if (r.err == CU_FILE_SUCCESS) {
        CUfileError_t closed = cubind_cuFileDriverClose();
        if (CUFILE_RAISED(closed))
            return NULL;
    }
    return Py_BuildValue("(ii)", (int)r.err, (int)r.cu_err);
}
#endif

/* The APIs compiled in, as cubind's module names. */
static const char *const compiled_in[] = {
#ifdef CUBIND_CONSUMER_WITH_NVFATBIN
    "nvfatbin",
#endif
#ifdef CUBIND_CONSUMER_WITH_NVML
    "nvml",
#endif
#ifdef CUBIND_CONSUMER_WITH_CUFILE
    "cufile",
#endif
    NULL,
};

static PyObject *apis(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names && compiled_in[i]; i++) {
        PyObject *s = PyUnicode_FromString(compiled_in[i]);
        if (!s || PyList_Append(names, s) < 0)
            Py_CLEAR(names);
        Py_XDECREF(s);
    }
    return names;
}

static PyMethodDef methods[] = {
    {"apis", apis, METH_NOARGS, NULL},
#ifdef CUBIND_CONSUMER_WITH_NVFATBIN
    {"nvfatbin_version", nvfatbin_version, METH_NOARGS, NULL},
    {"fatbin_of_ptx", fatbin_of_ptx, METH_VARARGS, NULL},
#endif
#ifdef CUBIND_CONSUMER_WITH_NVML
    {"nvml_init", nvml_init, METH_NOARGS, NULL},
    {"nvml_error_string", nvml_error_string, METH_O, NULL},
#endif
#ifdef CUBIND_CONSUMER_WITH_CUFILE
    {"cufile_version", cufile_version, METH_NOARGS, NULL},
    {"cufile_driver_open", cufile_driver_open, METH_NOARGS, NULL},
#endif
    {NULL, NULL, 0, NULL},
};

/* Imports each table compiled in (its signatures and layouts checked). */
static int exec_module(PyObject *m)
{
    (void)m;
#ifdef CUBIND_CONSUMER_WITH_NVFATBIN
    if (cubind_nvfatbin_import() < 0)
        return -1;
#endif
#ifdef CUBIND_CONSUMER_WITH_NVML
    if (cubind_nvml_import() < 0)
        return -1;
#endif
#ifdef CUBIND_CONSUMER_WITH_CUFILE
    if (cubind_cufile_import() < 0)
        return -1;
#endif
    return 0;
}

CONSUMER_MODULE(_cubind_fetched_consumer, NULL, methods, exec_module)
