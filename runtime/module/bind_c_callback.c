/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_c_callback.c — C functions owned by Python objects as callbacks
 * (see bind_c_callback.h).
 */
#include "bind_c_callback.h"

#include "cubind_rt.h"

#include <cuda.h>
#include <stdint.h>
#include <string.h>

#define C_CALLBACK_NAME "cubind.c_callback"

/* What a wrapper holds: the C function and its data, and the objects that
 * keep both valid. Freed by the capsule's destructor (attached). */
typedef struct {
    int kind;
    void *fn;
    void *data;
    Py_buffer view; /* the data's buffer, held exported (view.obj: none) */
    PyObject *fnobj;
} c_callback;

int cbs_funcptr_owned(PyObject *o, PyTypeObject *own)
{
    if (o == Py_None || PyLong_Check(o))
        return 0;
    if (own && (PyObject_TypeCheck(o, own) ||
                strcmp(cbs_short_name(Py_TYPE(o)), cbs_short_name(own)) == 0))
        return 0;
    return 1;
}

static void c_callback_free(PyObject *capsule)
{
    c_callback *c = PyCapsule_GetPointer(capsule, C_CALLBACK_NAME);
    if (!c) {
        PyErr_Clear();
        return;
    }
    if (c->view.obj)
        PyBuffer_Release(&c->view);
    Py_XDECREF(c->fnobj);
    PyMem_Free(c);
}

/* An address of a handle object or an int (None: NULL). */
static void *address_of(PyObject *o)
{
    if (cbs_is_handle(o))
        return (void *)(uintptr_t)cbs_handle_bits((const cbs_handle *)o);
    if (PyLong_Check(o)) {
        void *p = PyLong_AsVoidPtr(o);
        if (!p && PyErr_Occurred())
            PyErr_Clear();
        return p;
    }
    return NULL;
}

/* Called by the runner as a Python callable is: (data) for a host function
 * or a destructor, (stream, status, data) for a stream callback; the
 * Python arguments stand for the C ones, and data is the wrapper's own. */
static PyObject *c_callback_call(PyObject *capsule, PyObject *args)
{
    c_callback *c = PyCapsule_GetPointer(capsule, C_CALLBACK_NAME);
    if (!c)
        return NULL;
    if (c->kind == CUBIND_CB_STREAM) {
        PyObject *stream, *status, *data;
        if (!PyArg_UnpackTuple(args, "c_callback", 3, 3, &stream, &status, &data))
            return NULL;
        long st = PyLong_Check(status) ? PyLong_AsLong(status) : 0;
        if (st == -1 && PyErr_Occurred())
            return NULL;
        CUstream s = (CUstream)address_of(stream);
        CUstreamCallback fn = (CUstreamCallback)(uintptr_t)c->fn;
        Py_BEGIN_ALLOW_THREADS
        fn(s, (CUresult)st, c->data);
        Py_END_ALLOW_THREADS
    } else {
        CUhostFn fn = (CUhostFn)(uintptr_t)c->fn;
        Py_BEGIN_ALLOW_THREADS
        fn(c->data);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyMethodDef c_callback_def = {"c_callback", c_callback_call, METH_VARARGS,
                                     "A C callback function, called with its C arguments."};

PyObject *cbs_c_callback_new(int kind, PyObject *fnobj, void *fn, PyObject *data,
                             const char *func, const char *param)
{
    c_callback *c = PyMem_Calloc(1, sizeof *c);
    if (!c)
        return PyErr_NoMemory();
    c->kind = kind;
    c->fn = fn;
    if (cbs_arg_buffer(data, 0, func, param, &c->view, &c->data) < 0) {
        PyMem_Free(c);
        return NULL;
    }
    c->fnobj = Py_NewRef(fnobj);
    PyObject *capsule = PyCapsule_New(c, C_CALLBACK_NAME, c_callback_free);
    if (!capsule) {
        if (c->view.obj)
            PyBuffer_Release(&c->view);
        Py_DECREF(c->fnobj);
        PyMem_Free(c);
        return NULL;
    }
    PyObject *f = PyCFunction_New(&c_callback_def, capsule);
    Py_DECREF(capsule);
    return f;
}
