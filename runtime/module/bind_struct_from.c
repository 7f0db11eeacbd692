/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct_from.c — see bind_struct_from.h.
 */
#include "bind_struct_from.h"

#include <string.h>

/* A new object of cls viewing the bytes at data (cls(_ptr=address): a root
 * that does not own them), kept alive by base (a new reference, stolen;
 * NULL: none), read-only when readonly. */
static PyObject *view_of(PyObject *cls, void *data, PyObject *base, int readonly)
{
    PyObject *address = PyLong_FromVoidPtr(data);
    PyObject *kw = address ? Py_BuildValue("{sO}", "_ptr", address) : NULL;
    PyObject *none = kw ? PyTuple_New(0) : NULL;
    PyObject *o = none ? PyObject_Call(cls, none, kw) : NULL;
    Py_XDECREF(none);
    Py_XDECREF(kw);
    Py_XDECREF(address);
    if (!o) {
        Py_XDECREF(base);
        return NULL;
    }
    cbs_struct *s = (cbs_struct *)o;
    s->base = base; /* not yet shared: no other thread sees these change */
    s->readonly = readonly;
    return o;
}

PyObject *cbs_struct_from_ptr(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"ptr", "readonly", "owner"};
    PyObject *a[3] = {NULL, NULL, NULL};
    if (cbs_parse_args("from_ptr", args, nargs, kwnames, names, 3, 1, a) < 0)
        return NULL;
    PyObject *ptr = a[0], *owner = a[2] ? a[2] : Py_None;
    int readonly = a[1] ? PyObject_IsTrue(a[1]) : 0;
    if (readonly < 0)
        return NULL;
    const char *name = cbs_short_name((PyTypeObject *)cls);
    if (!PyIndex_Check(ptr)) {
        PyErr_Format(PyExc_TypeError, "%s.from_ptr(): ptr must be an int address, not %.100s",
                     name, Py_TYPE(ptr)->tp_name);
        return NULL;
    }
    PyObject *n = PyNumber_Index(ptr);
    void *data = n ? PyLong_AsVoidPtr(n) : NULL;
    Py_XDECREF(n);
    if (!data) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s.from_ptr(): ptr must not be null (0)", name);
        return NULL;
    }
    if (owner != Py_None)
        return view_of(cls, data, Py_NewRef(owner), readonly);
    /* No owner: a copy the object owns, as cuda.bindings makes. */
    PyObject *o = PyObject_CallNoArgs(cls);
    if (!o)
        return NULL;
    cbs_struct *s = (cbs_struct *)o;
    memcpy(s->data, data, s->def->size);
    s->readonly = readonly;
    return o;
}

/* The bytes of o as a memoryview, checked: C-contiguous, of exactly the
 * size of cls's struct, of one-byte items when bytes_only. func and param
 * name the call in errors. */
static PyObject *buffer_view(PyObject *cls, PyObject *o, int bytes_only, const char *func,
                             const char *param)
{
    const char *name = cbs_short_name((PyTypeObject *)cls);
    if (!PyObject_CheckBuffer(o)) {
        PyErr_Format(PyExc_TypeError,
                     "%s.%s(): %s must be an object with the buffer protocol, not %.100s", name,
                     func, param, Py_TYPE(o)->tp_name);
        return NULL;
    }
    PyObject *mv = PyMemoryView_FromObject(o);
    if (!mv)
        return NULL;
    const Py_buffer *b = PyMemoryView_GET_BUFFER(mv);
    const char *bad = !PyBuffer_IsContiguous(b, 'C') ? "C-contiguous"
                      : bytes_only && b->itemsize != 1 ? "of one-byte items"
                                                        : NULL;
    if (bad) {
        PyErr_Format(PyExc_ValueError, "%s.%s(): %s must be %s", name, func, param, bad);
        Py_DECREF(mv);
        return NULL;
    }
    return mv;
}

/* from_buffer (bytes_only) and from_data: the one argument, `param`, parsed
 * and viewed; from_data returns an instance of cls as is, as cuda.bindings
 * does. */
static PyObject *view_of_arg(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, int bytes_only, const char *func,
                             const char *const *param)
{
    PyObject *o = NULL;
    if (cbs_parse_args(func, args, nargs, kwnames, param, 1, 1, &o) < 0)
        return NULL;
    if (!bytes_only && Py_IS_TYPE(o, (PyTypeObject *)cls))
        return Py_NewRef(o);
    PyObject *mv = buffer_view(cls, o, bytes_only, func, param[0]);
    if (!mv)
        return NULL;
    const Py_buffer *b = PyMemoryView_GET_BUFFER(mv);
    Py_ssize_t len = b->len;
    PyObject *v = view_of(cls, b->buf, mv, b->readonly); /* v holds mv */
    if (v && (size_t)len != ((cbs_struct *)v)->def->size) {
        PyErr_Format(PyExc_ValueError, "%s.%s(): %s must be %zu bytes long, not %zd",
                     cbs_short_name((PyTypeObject *)cls), func, param[0],
                     ((cbs_struct *)v)->def->size, len);
        Py_CLEAR(v);
    }
    return v;
}

PyObject *cbs_struct_from_buffer(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const param[] = {"buffer"};
    return view_of_arg(cls, args, nargs, kwnames, 1, "from_buffer", param);
}

PyObject *cbs_struct_from_data(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const param[] = {"data"};
    return view_of_arg(cls, args, nargs, kwnames, 0, "from_data", param);
}
