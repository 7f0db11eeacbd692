/*
 * cubind_compat.h — the one header of shims for CPython API newer than the
 * oldest supported version (3.10), and small helpers every binding module
 * file shares. Static inline: no state.
 */
#ifndef CUBIND_COMPAT_H
#define CUBIND_COMPAT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* PyDict_GetItemRef (3.13+) semantics on every version: 1 and a new
 * reference when found, 0 when absent, -1 with an exception. */
static inline int cbs_dict_get_ref(PyObject *dict, PyObject *key, PyObject **out)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyDict_GetItemRef(dict, key, out);
#else
    PyObject *v = PyDict_GetItemWithError(dict, key);
    *out = v ? Py_NewRef(v) : NULL;
    return v ? 1 : (PyErr_Occurred() ? -1 : 0);
#endif
}

/* The raised exception, taken and normalized (PyErr_GetRaisedException,
 * 3.12+, on every version); NULL when none. */
static inline PyObject *cbs_take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

/* Raises exc again (PyErr_SetRaisedException); steals the reference. */
static inline void cbs_raise_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

/* The unqualified name of a type ("CUresult" for "cubind.driver.CUresult"). */
static inline const char *cbs_short_name(PyTypeObject *t)
{
    const char *dot = strrchr(t->tp_name, '.');
    return dot ? dot + 1 : t->tp_name;
}

#endif
