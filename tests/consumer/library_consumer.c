/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/consumer/library_consumer.c — TEST-ONLY: a tiny C extension built
 * from the generated consumer headers of the library APIs
 * (out/cubind_nvrtc_api.h, out/cubind_nvjitlink_api.h,
 * out/cubind_nvvm_api.h, out/cubind_runtime_api.h), calling cubind.nvrtc,
 * cubind.nvjitlink, cubind.nvvm and cubind.runtime through their capsule
 * tables. Never shipped. tests/abi/test_library_capi.py drives it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "consumer_module.h"

#include "cubind_nvjitlink_api.h"
#include "cubind_nvrtc_api.h"
#include "cubind_nvvm_api.h"
/* cubind.runtime's whole table: the bind-header files' functions too (the
 * GL, EGL and VDPAU headers the interop ones include are runtime/interop's
 * stand-ins, on build.ninja's include path for this consumer). */
#define CUBIND_RUNTIME_API_WITH_CUDA_PROFILER_API_H
#define CUBIND_RUNTIME_API_WITH_CUDA_GL_INTEROP_H
#define CUBIND_RUNTIME_API_WITH_CUDA_EGL_INTEROP_H
#define CUBIND_RUNTIME_API_WITH_CUDA_VDPAU_INTEROP_H
#include "cubind_runtime_api.h"

/* (major, minor) of nvrtcVersion, or NULL with the entry point's exception. */
static PyObject *nvrtc_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int major = 0, minor = 0;
    nvrtcResult rc = cubind_nvrtcVersion(&major, &minor);
    if (rc == CUBIND_NVRTC_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(iii)", (int)rc, major, minor);
}

/* The PTX size of a program compiled from `source`, through the table. */
static PyObject *ptx_size(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *source = PyBytes_AsString(arg);
    if (!source)
        return NULL;
    nvrtcProgram prog = NULL;
    nvrtcResult rc = cubind_nvrtcCreateProgram(&prog, source, "c.cu", 0, NULL, NULL);
    size_t size = 0;
    if (rc == NVRTC_SUCCESS)
        rc = cubind_nvrtcCompileProgram(prog, 0, NULL);
    if (rc == NVRTC_SUCCESS)
        rc = cubind_nvrtcGetPTXSize(prog, &size);
    if (prog)
        cubind_nvrtcDestroyProgram(&prog);
    if (rc == CUBIND_NVRTC_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(in)", (int)rc, (Py_ssize_t)size);
}

/* What the error-string entry point (returning a pointer) gives. */
static PyObject *error_string(PyObject *self, PyObject *arg)
{
    (void)self;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    const char *s = cubind_nvrtcGetErrorString((nvrtcResult)v);
    if (!s && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(s ? s : "(null)");
}

static PyObject *jit_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    unsigned major = 0, minor = 0;
    nvJitLinkResult rc = cubind_nvJitLinkVersion(&major, &minor);
    if (rc == CUBIND_NVJITLINK_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(iII)", (int)rc, major, minor);
}

/* (status, major, minor, debug major, debug minor) of nvvmIRVersion. */
static PyObject *nvvm_ir_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int v[4] = {0};
    nvvmResult rc = cubind_nvvmIRVersion(&v[0], &v[1], &v[2], &v[3]);
    if (rc == CUBIND_NVVM_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(iiiii)", (int)rc, v[0], v[1], v[2], v[3]);
}

/* cudaRuntimeGetVersion through cubind.runtime's table (the runtime's own
 * release: no driver needed), or NULL with the entry point's exception. */
static PyObject *runtime_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int version = 0;
    cudaError_t rc = cubind_cudaRuntimeGetVersion(&version);
    if (rc == CUBIND_RUNTIME_CAPI_SENTINEL && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(ii)", (int)rc, version);
}

/* cudaCreateChannelDesc(x, y, z, w, f) through the table (a struct
 * returned by value, all zero when it raised): its five fields, or NULL
 * with the entry point's exception. */
static PyObject *channel_desc(PyObject *self, PyObject *args)
{
    (void)self;
    int v[5];
    if (!PyArg_ParseTuple(args, "iiiii", &v[0], &v[1], &v[2], &v[3], &v[4]))
        return NULL;
    struct cudaChannelFormatDesc d =
        cubind_cudaCreateChannelDesc(v[0], v[1], v[2], v[3], (enum cudaChannelFormatKind)v[4]);
    if (PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(iiiii)", d.x, d.y, d.z, d.w, (int)d.f);
}

/* The names of the runtime functions this consumer declares (all of the
 * table's, with the bind-header files' requested above). */
static PyObject *runtime_names(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names && i < CUBIND_RUNTIME_API_N; i++) {
        PyObject *s = PyUnicode_FromString(cubind_runtime_api_expected[i].name);
        if (!s || PyList_Append(names, s) < 0)
            Py_CLEAR(names);
        Py_XDECREF(s);
    }
    return names;
}

static PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, NULL},
    {"channel_desc", channel_desc, METH_VARARGS, NULL},
    {"runtime_names", runtime_names, METH_NOARGS, NULL},
    {"nvrtc_version", nvrtc_version, METH_NOARGS, NULL},
    {"ptx_size", ptx_size, METH_O, NULL},
    {"error_string", error_string, METH_O, NULL},
    {"jit_version", jit_version, METH_NOARGS, NULL},
    {"nvvm_ir_version", nvvm_ir_version, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *m)
{
    (void)m;
    return cubind_nvrtc_import() < 0 || cubind_nvjitlink_import() < 0 ||
                   cubind_nvvm_import() < 0 || cubind_runtime_import() < 0
               ? -1
               : 0;
}

CONSUMER_MODULE(_cubind_library_consumer, NULL, methods, exec_module)
