/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_support.c — see bind_support.h. Stateless: all objects created here
 * belong to the calling module's state.
 */
#include "bind_support.h"
#include "cubind_compat.h"
#include "rt_alloc.h"

#include <cuda.h> /* CUresult, for the entry points' getter */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- arguments ---------------------------------------------------------- */

/* 1 when the keyword `key` is the ASCII name[0..len): a call site's
 * keywords are compact ASCII strings, compared here without a call. The
 * whole string is compared: a key with an embedded NUL is not its prefix. */
int cbs_keyword_is(PyObject *key, const char *name, Py_ssize_t len)
{
    if (PyUnicode_IS_COMPACT_ASCII(key))
        return PyUnicode_GET_LENGTH(key) == len && memcmp(PyUnicode_DATA(key), name, (size_t)len) == 0;
    return PyUnicode_CompareWithASCIIString(key, name) == 0;
}

int cbs_parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                   const char *const *names, Py_ssize_t nnames, Py_ssize_t nrequired,
                   PyObject **out)
{
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd argument%s (%zd given)", func, nnames,
                     nnames == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nnames; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < nnames && !cbs_keyword_is(key, names[i], (Py_ssize_t)strlen(names[i])))
            i++;
        if (i == nnames) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", func,
                         key);
            return -1;
        }
        if (out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", func,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < nrequired; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %zd)", func,
                         names[i], i + 1);
            return -1;
        }
    }
    return 0;
}

PyObject *cbs_int_value_slow(PyObject *o)
{
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (!nb || (!nb->nb_int && !nb->nb_index))
        return NULL;
    /* With nb_int or nb_index PyNumber_Long calls __int__ first (its result
     * checked: an int, an int subclass with a DeprecationWarning), else
     * __index__; it never reaches its parsing of str, bytes or buffers. */
    return PyNumber_Long(o);
}

/* Replaces the pending exception by type(format % (what, it, ...)), the
 * replaced one its cause; format's last conversion is the cause's %S. */
static void reraise_as(PyObject *type, const char *format, const char *what, const char *want)
{
    PyObject *cause = cbs_take_exception();
    if (want)
        PyErr_Format(type, format, what, want, cause);
    else
        PyErr_Format(type, format, what, cause);
    PyObject *exc = cbs_take_exception();
    PyException_SetCause(exc, cause);
    cbs_raise_exception(exc);
}

void cbs_exception_naming(const char *what)
{
    PyObject *t = PyErr_Occurred();
    if (!t || (t != PyExc_ValueError && t != PyExc_OverflowError && t != PyExc_TypeError))
        return; /* another type may not take a message: left as raised */
    reraise_as(t, "%s: %S", what, NULL);
}

/* cbs_exception_naming for argument `param` of func. */
static void arg_exception_naming(const char *func, const char *param)
{
    char what[256];
    snprintf(what, sizeof what, "%s(): argument '%s'", func, param);
    cbs_exception_naming(what);
}

/* cbs_int_value for argument `param` of func: TypeError naming them when
 * o has no integer conversion, its conversion's error prefixed with them. */
static PyObject *as_int(PyObject *o, const char *func, const char *param, const char *ctype)
{
    PyObject *v = cbs_int_value(o);
    if (v)
        return v;
    if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be an int (%s), not %.100s", func,
                     param, ctype, Py_TYPE(o)->tp_name);
        return NULL;
    }
    arg_exception_naming(func, param);
    return NULL;
}

static void overflow(const char *func, const char *param, const char *ctype, PyObject *value)
{
    PyErr_Format(PyExc_OverflowError, "%s(): argument '%s' = %R does not fit in %s", func, param,
                 value, ctype);
}

/* The inline cbs_arg_unsigned took small ints in range already. */
int cbs_arg_unsigned_slow(PyObject *o, unsigned long long max, const char *func,
                          const char *param, const char *ctype, unsigned long long *out)
{
    if (PyLong_CheckExact(o)) { /* the common case: no new reference */
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &over);
        if (!over && x >= 0 && (unsigned long long)x <= max) {
            *out = (unsigned long long)x;
            return 0;
        }
        if (x == -1 && PyErr_Occurred())
            return -1;
    }
    PyObject *v = as_int(o, func, param, ctype);
    if (!v)
        return -1;
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            Py_DECREF(v);
            return -1;
        }
        PyErr_Clear();
        overflow(func, param, ctype, v);
        Py_DECREF(v);
        return -1;
    }
    if (x > max) {
        overflow(func, param, ctype, v);
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *out = x;
    return 0;
}

/* The inline cbs_arg_signed took small ints in range already. */
int cbs_arg_signed_slow(PyObject *o, long long min, long long max, const char *func,
                        const char *param, const char *ctype, long long *out)
{
    if (PyLong_CheckExact(o)) { /* the common case: no new reference */
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &over);
        if (!over && x >= min && x <= max) {
            *out = x;
            return 0;
        }
        if (x == -1 && PyErr_Occurred())
            return -1;
    }
    PyObject *v = as_int(o, func, param, ctype);
    if (!v)
        return -1;
    int over = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &over);
    if (x == -1 && PyErr_Occurred()) {
        Py_DECREF(v);
        return -1;
    }
    if (over || x < min || x > max) {
        overflow(func, param, ctype, v);
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *out = x;
    return 0;
}

int cbs_float_value(PyObject *o, double *out)
{
    if (PyFloat_Check(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (!PyLong_Check(o) && (!nb || (!nb->nb_float && !nb->nb_index)))
        return 1;
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred())
        return -1;
    *out = d;
    return 0;
}

int cbs_arg_double(PyObject *o, const char *func, const char *param, double *out)
{
    int rc = cbs_float_value(o, out);
    if (rc == 0)
        return 0;
    if (rc > 0) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a float, not %.100s", func,
                     param, Py_TYPE(o)->tp_name);
        return -1;
    }
    arg_exception_naming(func, param);
    return -1;
}

int cbs_arg_string(PyObject *o, const char *func, const char *param, PyObject **holder,
                   const char **out)
{
    PyObject *b;
    if (PyBytes_Check(o)) {
        b = Py_NewRef(o);
    } else if (PyByteArray_Check(o)) { /* copied: the call cannot see it change */
        b = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o));
        if (!b)
            return -1;
    } else if (PyUnicode_Check(o)) {
        b = PyUnicode_AsUTF8String(o);
        if (!b)
            return -1;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s' must be bytes, bytearray or str, not %.100s", func, param,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (strlen(PyBytes_AS_STRING(b)) != (size_t)PyBytes_GET_SIZE(b)) {
        PyErr_Format(PyExc_ValueError, "%s(): argument '%s' contains a NUL character", func,
                     param);
        Py_DECREF(b);
        return -1;
    }
    *holder = b;
    *out = PyBytes_AS_STRING(b);
    return 0;
}

int cbs_arg_string_or_address(PyObject *o, const char *func, const char *param,
                              PyObject **holder, const char **out)
{
    if (!PyLong_Check(o) || PyBool_Check(o))
        return cbs_arg_string(o, func, param, holder, out);
    /* an address, converted as cbs_arg_address converts one */
    unsigned long long a;
    if (cbs_arg_unsigned(o, (unsigned long long)UINTPTR_MAX, func, param, "const char *", &a) < 0)
        return -1;
    *holder = NULL;
    *out = (const char *)(uintptr_t)a;
    return 0;
}

int cbs_arg_fill_buffer(PyObject *o, const char *func, const char *param, Py_buffer *view,
                        void **out, Py_ssize_t *len)
{
    *len = -1;
    if (PyBytes_Check(o)) {
        *out = PyBytes_AS_STRING(o);
        *len = PyBytes_GET_SIZE(o);
        return 0;
    }
    if (cbs_arg_buffer(o, 1, func, param, view, out) < 0)
        return -1;
    if (view->obj)
        *len = view->len;
    return 0;
}

int cbs_arg_cstring(PyObject *o, const char *func, const char *param, const char **out)
{
    Py_ssize_t n;
    const char *s;
    if (PyBytes_Check(o)) {
        s = PyBytes_AS_STRING(o);
        n = PyBytes_GET_SIZE(o);
    } else if (PyUnicode_Check(o)) {
        s = PyUnicode_AsUTF8AndSize(o, &n);
        if (!s)
            return -1;
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must hold bytes or str, not %.100s",
                     func, param, Py_TYPE(o)->tp_name);
        return -1;
    }
    if (strlen(s) != (size_t)n) {
        PyErr_Format(PyExc_ValueError, "%s(): argument '%s' holds a string with a NUL character",
                     func, param);
        return -1;
    }
    *out = s;
    return 0;
}

void cbs_buffer_error_as_type_error(const char *what, const char *want)
{
    if (!PyErr_ExceptionMatches(PyExc_BufferError))
        return;
    /* Name what was given; the buffer's own error stays the cause. */
    reraise_as(PyExc_TypeError, "%s must be %s (%S)", what, want);
}

static int cubind_handle_class(PyTypeObject *t);

int cbs_arg_buffer(PyObject *o, int writable, const char *func, const char *param,
                   Py_buffer *view, void **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    if (PyLong_Check(o)) {
        /* an address is 0 .. UINTPTR_MAX: a negative int is none (it was
         * taken as its two's complement) */
        unsigned long long v = PyLong_AsUnsignedLongLong(o);
        int bad = v == (unsigned long long)-1 && PyErr_Occurred();
#if UINTPTR_MAX < ULLONG_MAX
        bad = bad || v > UINTPTR_MAX;
#endif
        *out = bad ? NULL : (void *)(uintptr_t)v;
        if (bad) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError, "%s(): argument '%s' = %R is not an address", func,
                         param, o);
            return -1;
        }
        return 0;
    }
    /* a cubind handle holding a 64-bit integer value, of any module (the
     * driver's CUdeviceptr given to the runtime's cudaMemcpy, as
     * cuda.bindings takes its CUdeviceptr for a void *): that address */
    if ((cbs_is_handle(o) || cubind_handle_class(Py_TYPE(o))) &&
        ((const cbs_handle *)o)->kind == CBS_HANDLE_U64) {
        *out = (void *)(uintptr_t)cbs_handle_bits((const cbs_handle *)o);
        return 0;
    }
    if (PyObject_CheckBuffer(o)) {
        if (PyObject_GetBuffer(o, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) {
            view->obj = NULL;
            char what[256];
            snprintf(what, sizeof what, "%s(): argument '%s'", func, param);
            cbs_buffer_error_as_type_error(what, writable ? "a writable buffer" : "a buffer");
            return -1;
        }
        *out = view->buf;
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s(): argument '%s' must be an int address, None or a %sbuffer, not %.100s",
                 func, param, writable ? "writable " : "", Py_TYPE(o)->tp_name);
    return -1;
}

int cbs_arg_pointer(PyObject *o, int writable, const char *func, const char *param,
                    Py_buffer *view, void **out)
{
    PyTypeObject *t = Py_TYPE(o);
    PyNumberMethods *nb = t->tp_as_number;
    if (!PyLong_Check(o) && nb && (nb->nb_int || nb->nb_index) && !cbs_is_handle(o) &&
        !cubind_handle_class(t) && !(t->tp_as_sequence && t->tp_as_sequence->sq_length) &&
        !(t->tp_as_mapping && t->tp_as_mapping->mp_length)) {
        unsigned long long v;
        view->obj = NULL;
        if (cbs_arg_unsigned_slow(o, UINTPTR_MAX, func, param, "void *", &v) < 0)
            return -1;
        *out = (void *)(uintptr_t)v;
        return 0;
    }
    return cbs_arg_buffer(o, writable, func, param, view, out);
}

/* ---- output arrays ---------------------------------------------------------- */

/* Bytes of physical memory (sysconf), or ULLONG_MAX when unknown. */
static unsigned long long physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (unsigned long long)pages > ULLONG_MAX / (unsigned long long)page)
        return ULLONG_MAX;
    return (unsigned long long)pages * (unsigned long long)page;
}

void *cbs_out_array(unsigned long long n, size_t size, size_t result, const char *func,
                    const char *param)
{
    unsigned long long per = (unsigned long long)size + result, need;
    int overflow = __builtin_mul_overflow(n, per, &need);
    /* small arrays (under 1 MiB) skip the system query */
    if (overflow || need > PY_SSIZE_T_MAX || (need >= (1ULL << 20) && need > physical_memory())) {
        PyErr_Format(PyExc_MemoryError,
                     "%s(): argument '%s' = %llu asks for %s%llu bytes, more than this machine's "
                     "memory", func, param, n, overflow ? "over " : "",
                     overflow ? ULLONG_MAX : need);
        return NULL;
    }
    void *p = PyMem_RawCalloc((size_t)n, size);
    if (!p)
        PyErr_NoMemory();
    return p;
}

int cbs_arg_address(PyObject *o, const char *func, const char *param, void **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    PyObject *v = NULL;
    if (PyLong_Check(o)) {
        v = Py_NewRef(o);
    } else if (cbs_is_handle(o) && (((const cbs_handle *)o)->kind == CBS_HANDLE_POINTER ||
                                    ((const cbs_handle *)o)->kind == CBS_HANDLE_U64)) {
        /* what getPtr() below reads, without the call: a pointer-sized
         * value (cudaLaunchKernel's func given a cudaKernel_t; 44 ns of
         * its 100 on the build machine) */
        *out = (void *)(uintptr_t)cbs_handle_bits((const cbs_handle *)o);
        return 0;
    } else {
        PyObject *getptr = cbs_attr(o, "getPtr");
        if (!getptr) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be an int address or None, not %.100s",
                         func, param, Py_TYPE(o)->tp_name);
            return -1;
        }
        /* getPtr() is the address of the object's C storage: read it. */
        PyObject *at = PyObject_CallNoArgs(getptr);
        Py_DECREF(getptr);
        if (!at)
            return -1;
        void *where = PyLong_AsVoidPtr(at);
        Py_DECREF(at);
        if (!where)
            return PyErr_Occurred() ? -1 : (*out = NULL, 0);
        memcpy(out, where, sizeof *out);
        return 0;
    }
    unsigned long long bits;
    int rc = cbs_arg_unsigned(v, (unsigned long long)UINTPTR_MAX, func, param, "void *", &bits);
    Py_DECREF(v);
    if (rc == 0)
        *out = (void *)(uintptr_t)bits;
    return rc;
}

/* A ctypes function pointer (a CFUNCTYPE instance): its buffer, of the
 * PEP 3118 format "X{}" (a function), holds the C address. 1 with *out
 * set, 0 when o is not one (no exception left), -1 with an exception. */
static int ctypes_funcptr(PyObject *o, void **out)
{
    if (!PyObject_CheckBuffer(o))
        return 0;
    Py_buffer b;
    if (PyObject_GetBuffer(o, &b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return 0;
    }
    int is = b.format && strncmp(b.format, "X{", 2) == 0 && b.len == (Py_ssize_t)sizeof *out;
    if (is)
        memcpy(out, b.buf, sizeof *out);
    PyBuffer_Release(&b);
    return is;
}

int cbs_funcptr_value(PyObject *o, PyTypeObject *own, const char *func, const char *param,
                      void **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 1;
    }
    if (own && PyObject_TypeCheck(o, own)) {
        *out = (void *)(uintptr_t)cbs_handle_bits((const cbs_handle *)o);
        return 1;
    }
    /* Another module's class of the same name (cuda.bindings' CUhostFn):
     * its getPtr() is the address of the function pointer it holds. */
    if (own && strcmp(cbs_short_name(Py_TYPE(o)), cbs_short_name(own)) == 0)
        return cbs_arg_address(o, func, param, out) < 0 ? -1 : 1;
    if (PyLong_Check(o)) {
        unsigned long long bits;
        if (cbs_arg_unsigned(o, (unsigned long long)UINTPTR_MAX, func, param, "a function pointer",
                             &bits) < 0)
            return -1;
        *out = (void *)(uintptr_t)bits;
        return 1;
    }
    return ctypes_funcptr(o, out);
}

int cbs_arg_funcptr(PyObject *o, PyTypeObject *own, int callable_too, const char *func,
                    const char *param, void **out)
{
    int rc = cbs_funcptr_value(o, own, func, param, out);
    if (rc == 0 && !(callable_too && PyCallable_Check(o))) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s' must be %san int address, %s, a ctypes function "
                     "pointer or None, not %.100s",
                     func, param, callable_too ? "a Python callable, " : "",
                     own ? cbs_short_name(own) : "a function pointer", Py_TYPE(o)->tp_name);
        return -1;
    }
    return rc;
}

/* ---- cubind.launch -------------------------------------------------------- */

/* launch()'s grid or block into dims[3]: an int, or a tuple or list of one
 * to three ints (a list read from a snapshot: a conversion may run code
 * that changes it). names: the argument's name for each item. */
static int launch_dims(PyObject *o, const char *param, const char *const names[3],
                       unsigned int dims[3])
{
    unsigned long long v;
    dims[0] = dims[1] = dims[2] = 1;
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
        if (!PyLong_Check(o) && !(nb && (nb->nb_int || nb->nb_index))) { /* cbs_int_value's */
            PyErr_Format(PyExc_TypeError,
                         "launch(): argument '%s' must be an int or a tuple of 1 to 3 ints, "
                         "not %.100s", param, Py_TYPE(o)->tp_name);
            return -1;
        }
        if (cbs_arg_unsigned(o, UINT_MAX, "launch", param, "unsigned int", &v) < 0)
            return -1;
        dims[0] = (unsigned int)v;
        return 0;
    }
    PyObject *items = PyTuple_Check(o) ? Py_NewRef(o) : PySequence_Tuple(o);
    if (!items)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    int rc = -1;
    if (n < 1 || n > 3) {
        PyErr_Format(PyExc_TypeError, "launch(): argument '%s' must have 1 to 3 dimensions, not %zd",
                     param, n);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (cbs_arg_unsigned(PyTuple_GET_ITEM(items, i), UINT_MAX, "launch", names[i],
                             "unsigned int", &v) < 0)
            goto done;
        dims[i] = (unsigned int)v;
    }
    rc = 0;
done:
    Py_DECREF(items);
    return rc;
}

int cbs_take_keyword(PyObject *const **args, Py_ssize_t nargs, PyObject **kwnames,
                     const char *name, PyObject **buf, Py_ssize_t cap, PyObject **value,
                     PyObject **owned)
{
    Py_ssize_t nkw = PyTuple_GET_SIZE(*kwnames), at = -1;
    for (Py_ssize_t k = 0; k < nkw && at < 0; k++)
        if (cbs_keyword_is(PyTuple_GET_ITEM(*kwnames, k), name, (Py_ssize_t)strlen(name)))
            at = k;
    if (at < 0 || nargs + nkw - 1 > cap)
        return 0;
    PyObject *rest = nkw > 1 ? PyTuple_New(nkw - 1) : NULL;
    if (nkw > 1 && !rest)
        return -1;
    *value = (*args)[nargs + at];
    for (Py_ssize_t i = 0; i < nargs; i++)
        buf[i] = (*args)[i];
    for (Py_ssize_t k = 0, j = 0; k < nkw; k++) {
        if (k == at)
            continue;
        buf[nargs + j] = (*args)[nargs + k];
        PyTuple_SET_ITEM(rest, j, Py_NewRef(PyTuple_GET_ITEM(*kwnames, k)));
        j++;
    }
    *args = buf;
    *kwnames = rest;
    *owned = rest;
    return 0;
}

int cbs_parse_launch(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     cbs_launch_args *out)
{
    static const char *const required[3] = {"f", "grid", "block"};
    static const char *const grid_names[3] = {"grid[0]", "grid[1]", "grid[2]"};
    static const char *const block_names[3] = {"block[0]", "block[1]", "block[2]"};
    if (nargs < 3) {
        PyErr_Format(PyExc_TypeError, "launch() missing required argument '%s' (pos %zd)",
                     required[nargs], nargs + 1);
        return -1;
    }
    out->func = args[0];
    out->values = args + 3;
    out->nvalues = (size_t)(nargs - 3);
    out->stream = NULL;
    out->shared_mem = 0;
    out->argtypes = NULL;
    if (launch_dims(args[1], "grid", grid_names, out->grid) < 0 ||
        launch_dims(args[2], "block", block_names, out->block) < 0)
        return -1;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *value = args[nargs + k];
        if (cbs_keyword_is(key, "stream", 6)) {
            out->stream = value;
        } else if (cbs_keyword_is(key, "argtypes", 8)) {
            out->argtypes = value == Py_None ? NULL : value;
        } else if (cbs_keyword_is(key, "shared_mem", 10)) {
            unsigned long long v;
            if (cbs_arg_unsigned(value, UINT_MAX, "launch", "shared_mem", "unsigned int", &v) < 0)
                return -1;
            out->shared_mem = (unsigned int)v;
        } else {
            PyErr_Format(PyExc_TypeError, "launch() got an unexpected keyword argument '%U'", key);
            return -1;
        }
    }
    return 0;
}

/* ---- attributes by name ---------------------------------------------------- */

/* Names are looked up as interned str objects, never as a fresh str per
 * lookup (what PyObject_GetAttrString makes): CPython's type attribute cache
 * (consulted for every attribute of a type or a module) keeps a reference to
 * the name object it was asked with, in a slot chosen by that object's
 * address, so fresh names leave one str behind per lookup until their slot
 * is reused (up to 4096 of them: tests/fuzz/README.md, finding 2). The
 * interned str is one object, so it occupies one slot. */
PyObject *cbs_attr(PyObject *o, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (!key)
        return NULL;
    PyObject *v = PyObject_GetAttr(o, key);
    Py_DECREF(key);
    return v;
}

int cbs_set_attr(PyObject *o, const char *name, PyObject *v)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (!key)
        return -1;
    int r = PyObject_SetAttr(o, key, v);
    Py_DECREF(key);
    return r;
}

int cbs_optional_attr(PyObject *o, const char *name, PyObject **out)
{
    *out = NULL;
    PyObject *key = PyUnicode_InternFromString(name);
    if (!key)
        return -1;
#if PY_VERSION_HEX >= 0x030D0000
    int r = PyObject_GetOptionalAttr(o, key, out);
#else
    int r = 1;
    *out = PyObject_GetAttr(o, key);
    if (!*out) {
        r = -1;
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            r = 0;
        }
    }
#endif
    Py_DECREF(key);
    return r;
}

int cbs_has_attr(PyObject *o, const char *name)
{
    PyObject *v;
    int r = cbs_optional_attr(o, name, &v);
    Py_XDECREF(v);
    if (r < 0) {
        PyErr_Clear();
        return 0;
    }
    return r;
}

/* ---- int results ---------------------------------------------------------- */

int cbs_small_ints_init(PyObject **small)
{
    for (int k = 0; k < CBS_SMALL_INTS; k++)
        if (!(small[k] = PyLong_FromLong(CBS_SMALL_INT_MIN + k)))
            return -1;
    return 0;
}

/* ---- enums ---------------------------------------------------------------- */

/* table[key] of one of an enum class's tables (read-only mappingproxy
 * objects: Python cannot change them): 1 with a new reference in *out, 0
 * when absent, -1 with an exception. */
static int enum_table_get(PyObject *table, PyObject *key, PyObject **out)
{
    *out = PyObject_GetItem(table, key);
    if (*out)
        return 1;
    if (!PyErr_ExceptionMatches(PyExc_KeyError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* A member's name: `_names_by_address_` maps the address of each member (every
 * name, aliases included, has its own member object) to its name; an
 * instance that is no member (a value this header lacks) has none. */
static PyObject *enum_get_name(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *names = cbs_attr((PyObject *)Py_TYPE(self), "_names_by_address_");
    if (!names)
        return NULL;
    PyObject *key = PyLong_FromVoidPtr(self);
    if (!key) {
        Py_DECREF(names);
        return NULL;
    }
    PyObject *name = NULL;
    int found = enum_table_get(names, key, &name);
    Py_DECREF(key);
    Py_DECREF(names);
    if (found < 0)
        return NULL;
    return found ? name : Py_NewRef(Py_None);
}

static PyObject *enum_get_value(PyObject *self, void *closure)
{
    (void)closure;
    return PyNumber_Long(self);
}

static PyObject *enum_repr(PyObject *self)
{
    PyObject *name = enum_get_name(self, NULL);
    if (!name)
        return NULL;
    PyObject *value = PyNumber_Long(self);
    if (!value) {
        Py_DECREF(name);
        return NULL;
    }
    PyObject *r = name == Py_None
                      ? PyUnicode_FromFormat("<%s: %R>", cbs_short_name(Py_TYPE(self)), value)
                      : PyUnicode_FromFormat("<%s.%U: %R>", cbs_short_name(Py_TYPE(self)), name,
                                             value);
    Py_DECREF(name);
    Py_DECREF(value);
    return r;
}

/* CUresult(0) returns the singleton; an unknown value is a ValueError. */
static PyObject *enum_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *value;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", cbs_short_name(type));
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, cbs_short_name(type), 1, 1, &value))
        return NULL;
    /* Looked up by value as cuda.bindings' enums do (a dict lookup: an
     * equal number finds its member, 0.0 CUDA_SUCCESS; 0.5 or "0" none,
     * ValueError; an unhashable value TypeError). cubind also looks an
     * object with __index__ up by that int. */
    PyObject *map = cbs_attr((PyObject *)type, "_value2member_map_");
    if (!map)
        return NULL;
    PyObject *member = NULL;
    int found = enum_table_get(map, value, &member);
    if (found == 0 && !PyLong_Check(value) && PyIndex_Check(value)) {
        PyObject *key = PyNumber_Index(value);
        found = key ? enum_table_get(map, key, &member) : -1;
        Py_XDECREF(key);
    }
    Py_DECREF(map);
    if (found == 0)
        PyErr_Format(PyExc_ValueError, "%R is not a valid %s", value, cbs_short_name(type));
    return found > 0 ? member : NULL;
}

static PyObject *enum_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *value = PyNumber_Long(self);
    if (!value)
        return NULL;
    PyObject *r = Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), value);
    return r;
}

static PyGetSetDef enum_getset[] = {
    {"name", enum_get_name, NULL, "The member's name (None for a value this header lacks).", NULL},
    {"value", enum_get_value, NULL, "The member's value as a plain int.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef enum_methods[] = {
    {"__reduce__", enum_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* A new instance of the int subclass, bypassing enum_new (which only
 * returns existing members). */
static PyObject *enum_instance(PyTypeObject *type, long long value)
{
    PyObject *v = PyLong_FromLongLong(value);
    if (!v)
        return NULL;
    PyObject *args = PyTuple_Pack(1, v);
    Py_DECREF(v);
    if (!args)
        return NULL;
    PyObject *r = PyLong_Type.tp_new(type, args, NULL);
    Py_DECREF(args);
    return r;
}

/* ---- the enum classes' metaclass ---------------------------------------- */

/* The class protocol of cuda.bindings' enums: len() counts the names,
 * iteration gives one member per name in declaration order (aliases
 * included), `in` looks a value up among the canonical members. */
static PyObject *meta_members(PyObject *cls)
{
    return cbs_attr(cls, "__members__");
}

static Py_ssize_t meta_len(PyObject *cls)
{
    PyObject *m = meta_members(cls);
    if (!m)
        return -1;
    Py_ssize_t n = PyObject_Size(m);
    Py_DECREF(m);
    return n;
}

static PyObject *meta_iter(PyObject *cls)
{
    PyObject *m = meta_members(cls);
    if (!m)
        return NULL;
    PyObject *values = PyMapping_Values(m);
    Py_DECREF(m);
    if (!values)
        return NULL;
    PyObject *it = PyObject_GetIter(values);
    Py_DECREF(values);
    return it;
}

static int meta_contains(PyObject *cls, PyObject *item)
{
    PyObject *map = cbs_attr(cls, "_value2member_map_");
    if (!map)
        return -1;
    int rc = PySequence_Contains(map, item);
    Py_DECREF(map);
    if (rc < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear(); /* an unhashable item is no value of the enum */
        rc = 0;
    }
    return rc;
}

/* dict[name] = a read-only view of table. */
static int enum_set_table(PyObject *dict, const char *name, PyObject *table)
{
    PyObject *view = PyDictProxy_New(table);
    int rc = view ? PyDict_SetItemString(dict, name, view) : -1;
    Py_XDECREF(view);
    return rc;
}

static PyObject *meta_repr(PyObject *cls)
{
    return PyUnicode_FromFormat("<enum '%s'>", cbs_short_name((PyTypeObject *)cls));
}

PyTypeObject *cbs_enum_meta_create(PyObject *module)
{
    PyType_Slot slots[] = {
        {Py_sq_length, (void *)meta_len},
        {Py_tp_iter, (void *)meta_iter},
        {Py_sq_contains, (void *)meta_contains},
        {Py_tp_repr, (void *)meta_repr},
        {0, NULL},
    };
    PyType_Spec spec = {"cubind._EnumMeta", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
                        slots};
    return (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, (PyObject *)&PyType_Type);
}

static int cmp_item_value(const void *a, const void *b)
{
    const cbs_enum_item *x = *(const cbs_enum_item *const *)a, *y = *(const cbs_enum_item *const *)b;
    /* by value; among aliases the later declared first, so that the first
     * of a run of equal values is the canonical member (the last name
     * declared, as cuda.bindings' __singletons__) */
    if (x->value != y->value)
        return (x->value > y->value) - (x->value < y->value);
    return (x < y) - (x > y);
}

/* Makes one member per name in declaration order into __members__ (and the
 * class dict, and _names_by_address_), the last name of each value into
 * _value2member_map_, and the sorted canonical arrays of e. */
static int enum_populate(cbs_enum *e, const cbs_enum_def *def, PyObject *members_by_name,
                         PyObject *value2member, PyObject *names, PyObject *type_dict)
{
    PyObject **all = PyMem_Calloc(def->nitems ? def->nitems : 1, sizeof *all);
    const cbs_enum_item **order = PyMem_Malloc((def->nitems ? def->nitems : 1) * sizeof *order);
    int rc = -1;
    if (!all || !order) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < def->nitems; i++) {
        const cbs_enum_item *it = &def->items[i];
        order[i] = it;
        all[i] = enum_instance(e->type, it->value);
        if (!all[i])
            goto done;
        PyObject *key = PyLong_FromLongLong(it->value);
        PyObject *addr = PyLong_FromVoidPtr(all[i]);
        PyObject *name = PyUnicode_FromString(it->name);
        int bad = !key || !addr || !name || PyDict_SetItem(value2member, key, all[i]) < 0 ||
                  PyDict_SetItem(names, addr, name) < 0 ||
                  PyDict_SetItem(members_by_name, name, all[i]) < 0 ||
                  PyDict_SetItem(type_dict, name, all[i]) < 0;
        Py_XDECREF(key);
        Py_XDECREF(addr);
        Py_XDECREF(name);
        if (bad)
            goto done;
    }
    qsort(order, def->nitems, sizeof *order, cmp_item_value);
    for (size_t i = 0; i < def->nitems; i++) {
        if (e->n > 0 && e->values[e->n - 1] == order[i]->value)
            continue;
        e->values[e->n] = order[i]->value;
        e->members[e->n] = Py_NewRef(all[order[i] - def->items]);
        e->n++;
    }
    rc = 0;
done:
    for (size_t i = 0; all && i < def->nitems; i++)
        Py_XDECREF(all[i]);
    PyMem_Free(all);
    PyMem_Free(order);
    return rc;
}

int cbs_enum_create(PyObject *module, PyTypeObject *meta, const cbs_enum_def *def, cbs_enum *e)
{
    memset(e, 0, sizeof *e);
    PyType_Slot slots[] = {
        {Py_tp_repr, (void *)enum_repr},
        {Py_tp_new, (void *)enum_new},
        {Py_tp_getset, enum_getset},
        {Py_tp_methods, enum_methods},
        {Py_tp_doc, (void *)def->doc},
        {0, NULL},
    };
    PyType_Spec spec = {def->qualname, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, slots};
    PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyLong_Type);
    if (!bases)
        return -1;
    e->type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, bases);
    Py_DECREF(bases);
    if (!e->type)
        return -1;
    /* The class's class becomes meta (a heap subclass of type adding no
     * fields, so the layout is type's): what a class statement with
     * metaclass=meta makes, without PyType_FromMetaclass (3.12+). Nothing
     * has seen the new class yet. The class holds a reference to meta,
     * dropped by meta's dealloc (subtype_dealloc) with the class. */
    Py_SET_TYPE((PyObject *)e->type, (PyTypeObject *)Py_NewRef(meta));
    e->int_args = def->int_args;
    e->values = PyMem_Calloc(def->nitems ? def->nitems : 1, sizeof *e->values);
    e->members = PyMem_Calloc(def->nitems ? def->nitems : 1, sizeof *e->members);
    PyObject *by_name = PyDict_New(), *v2m = PyDict_New(), *names = PyDict_New();
    int rc = -1;
    if (!e->values || !e->members || !by_name || !v2m || !names) {
        PyErr_NoMemory();
        goto done;
    }
    /* The type is immutable once created: fill its dict directly. The
     * tables are shown to Python read-only (mappingproxy views of the
     * dicts filled here), so what repr, .name and the constructor read
     * from them is always what was put there: a str name, a member of
     * this class. __singletons__ is cuda.bindings' name of the value map. */
    PyObject *dict = e->type->tp_dict;
    if (enum_populate(e, def, by_name, v2m, names, dict) < 0 ||
        enum_set_table(dict, "__members__", by_name) < 0 ||
        enum_set_table(dict, "_value2member_map_", v2m) < 0 ||
        enum_set_table(dict, "__singletons__", v2m) < 0 ||
        enum_set_table(dict, "_names_by_address_", names) < 0)
        goto done;
    PyType_Modified(e->type);
    rc = PyModule_AddObjectRef(module, cbs_short_name(e->type), (PyObject *)e->type);
done:
    Py_XDECREF(by_name);
    Py_XDECREF(v2m);
    Py_XDECREF(names);
    return rc;
}

void cbs_enum_clear(cbs_enum *e)
{
    for (size_t i = 0; i < e->n; i++)
        Py_CLEAR(e->members[i]);
    PyMem_Free(e->members);
    PyMem_Free(e->values);
    e->members = NULL;
    e->values = NULL;
    e->n = 0;
    Py_CLEAR(e->type);
}

PyObject *cbs_enum_member(const cbs_enum *e, long long value)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->values[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < e->n && e->values[lo] == value)
        return Py_NewRef(e->members[lo]);
    return enum_instance(e->type, value);
}

int cbs_is_other_enum(PyObject *o, PyTypeObject *t)
{
    PyTypeObject *ot = Py_TYPE(o);
    return ot != t && ot != &PyLong_Type && !PyBool_Check(o) && PyLong_Check(o) &&
           !PyObject_TypeCheck(o, t) && cbs_has_attr((PyObject *)ot, "_value2member_map_") &&
           !cbs_is_foreign_twin(ot, t);
}

PyObject *cbs_enum_int_value(PyObject *o)
{
    if (PyLong_Check(o))
        return Py_NewRef(o);
    /* What int(o) gives, as cuda.bindings converts an enum argument
     * (int(attrib)): floats truncate, str and bytes are parsed. */
    return PyNumber_Long(o);
}

int cbs_arg_enum_slow(PyObject *o, const cbs_enum *e, long long min, long long max,
                      const char *func, const char *param, long long *out)
{
    if (cbs_is_other_enum(o, e->type)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s or int, not %.100s",
                     func, param, cbs_short_name(e->type), Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *v;
    if (e->int_args) {
        v = as_int(o, func, param, cbs_short_name(e->type));
        if (!v)
            return -1;
    } else if (!(v = cbs_enum_int_value(o))) {
        arg_exception_naming(func, param);
        return -1;
    }
    int rc = cbs_arg_signed(v, min, max, func, param, cbs_short_name(e->type), out);
    Py_DECREF(v);
    return rc;
}

/* ---- handles -------------------------------------------------------------- */

static PyObject *handle_int(PyObject *self)
{
    const cbs_handle *h = (const cbs_handle *)self;
    if (h->kind == CBS_HANDLE_I32)
        return PyLong_FromLongLong((long long)cbs_handle_bits(h));
    return PyLong_FromUnsignedLongLong(cbs_handle_bits(h));
}

/* Range of a handle kind's C value, for conversions from int. */
static int handle_from_int(PyObject *o, cbs_handle_kind kind, const char *func, const char *param,
                           const char *tname, unsigned long long *bits)
{
    if (kind == CBS_HANDLE_I32) {
        long long v;
        if (cbs_arg_signed(o, INT_MIN, INT_MAX, func, param, tname, &v) < 0)
            return -1;
        *bits = (unsigned long long)v;
        return 0;
    }
    unsigned long long max = kind == CBS_HANDLE_U32 ? UINT_MAX
                             : kind == CBS_HANDLE_POINTER ? (unsigned long long)UINTPTR_MAX
                                                          : ULLONG_MAX;
    return cbs_arg_unsigned(o, max, func, param, tname, bits);
}

static PyObject *handle_getptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr(cbs_handle_storage((cbs_handle *)self));
}

/* A stream class's __cuda_stream__(): (0, handle), the CUDA stream
 * protocol's version 0 (as cuda.bindings' CUstream answers). */
static PyObject *handle_cuda_stream(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(iK)", 0, cbs_handle_bits((const cbs_handle *)self));
}

static PyObject *handle_init_subclass(PyObject *cls, PyObject *args, PyObject *kwds);
#define HANDLE_INIT_SUBCLASS                                                               \
    {"__init_subclass__", (PyCFunction)(void (*)(void))handle_init_subclass,               \
     METH_VARARGS | METH_KEYWORDS | METH_CLASS, "Handle classes cannot be subclassed."}

static PyMethodDef handle_methods[] = {
    {"getPtr", handle_getptr, METH_NOARGS,
     "Address of the C value this object holds (for passing to C)."},
    HANDLE_INIT_SUBCLASS,
    {NULL, NULL, 0, NULL},
};

static PyMethodDef stream_handle_methods[] = {
    {"getPtr", handle_getptr, METH_NOARGS,
     "Address of the C value this object holds (for passing to C)."},
    {"__cuda_stream__", handle_cuda_stream, METH_NOARGS,
     "__cuda_stream__() -> (0, handle): the CUDA stream protocol, version 0."},
    HANDLE_INIT_SUBCLASS,
    {NULL, NULL, 0, NULL},
};

/* Whether t is a stream class (CBS_HANDLE_CLASS_STREAM): its methods are
 * the stream classes' table, as kind_of_type tells kinds by tp_new. */
static int is_stream_class(PyTypeObject *t)
{
    return t->tp_methods == stream_handle_methods;
}

/* The CUDA stream protocol: o.__cuda_stream__() returns (0, handle), 0 the
 * protocol's version. 1 with *bits the handle when o implements it, 0 when
 * it does not (no exception), -1 with an exception naming func and param
 * when its answer is not such a pair (an exception the method raised
 * itself is left as it is). */
static int stream_protocol_bits(PyObject *o, const char *func, const char *param,
                                unsigned long long *bits)
{
    PyObject *method;
    int r = cbs_optional_attr(o, "__cuda_stream__", &method);
    if (r <= 0)
        return r;
    PyObject *answer = PyObject_CallNoArgs(method);
    Py_DECREF(method);
    if (!answer)
        return -1;
    int rc = -1;
    long long version;
    if (!PyTuple_Check(answer) || PyTuple_GET_SIZE(answer) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s': %.100s.__cuda_stream__() returned %.100s, not a "
                     "(version, handle) tuple", func, param, Py_TYPE(o)->tp_name,
                     Py_TYPE(answer)->tp_name);
        goto done;
    }
    if (cbs_arg_signed(PyTuple_GET_ITEM(answer, 0), LLONG_MIN, LLONG_MAX, func, param,
                       "a CUDA stream protocol version", &version) < 0)
        goto done;
    if (version != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s(): argument '%s': version %lld of the CUDA stream protocol "
                     "(__cuda_stream__) is not supported, only version 0", func, param, version);
        goto done;
    }
    if (cbs_arg_unsigned(PyTuple_GET_ITEM(answer, 1), (unsigned long long)UINTPTR_MAX, func, param,
                         "a stream handle", bits) < 0)
        goto done;
    rc = 1;
done:
    Py_DECREF(answer);
    return rc;
}

static int kind_of_type(PyTypeObject *t);

/* The C value for class t from o, which is not a handle: an int (or an
 * object with __index__) in the class's range, or for a stream class an
 * object implementing the CUDA stream protocol. */
static int handle_bits_from(PyObject *o, PyTypeObject *t, const char *func, const char *param,
                            unsigned long long *bits)
{
    if (is_stream_class(t) && !PyLong_Check(o)) {
        int r = stream_protocol_bits(o, func, param, bits);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    return handle_from_int(o, (cbs_handle_kind)kind_of_type(t), func, param, cbs_short_name(t), bits);
}

int cbs_handle_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static const char *const kwlist[] = {"init_value", "_ptr", NULL};
    PyObject *init = NULL, *ptr = NULL;
    cbs_handle *h = (cbs_handle *)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO", (char **)kwlist, &init, &ptr))
        return -1;
    if (h->interned) {
        PyErr_Format(PyExc_TypeError,
                     "%s.__init__(): this object is shared (one per value, interned): "
                     "make your own with %s(value) instead", cbs_short_name(Py_TYPE(self)),
                     cbs_short_name(Py_TYPE(self)));
        return -1;
    }
    unsigned long long bits = 0;
    void *at = NULL;
    if (ptr && ptr != Py_None && cbs_arg_address(ptr, cbs_short_name(Py_TYPE(self)), "_ptr", &at) < 0)
        return -1;
    if (at) {
        /* cuda.bindings' _ptr: the address of a C value of the class's
         * type (a ctypes function pointer's, mapped memory a kernel
         * writes): the handle views it from now on, as cuda.bindings'
         * does (int() reads it, getPtr() is it, the driver writes it) */
        if (init && init != Py_None) {
            PyErr_Format(PyExc_TypeError, "%s(): give init_value or _ptr, not both",
                         cbs_short_name(Py_TYPE(self)));
            return -1;
        }
        h->view = at;
        return 0;
    }
    if (init && init != Py_None) {
        PyTypeObject *it = Py_TYPE(init);
        if (cbs_handle_related(it, Py_TYPE(self))) {
            bits = cbs_handle_bits((const cbs_handle *)init);
        } else if (cbs_is_handle(init) || (!PyLong_Check(init) && cubind_handle_class(it))) {
            PyErr_Format(PyExc_TypeError, "%s(): init_value must be %s or int, not %.100s",
                         cbs_short_name(Py_TYPE(self)), cbs_short_name(Py_TYPE(self)), it->tp_name);
            return -1;
        } else if (handle_bits_from(init, Py_TYPE(self), cbs_short_name(Py_TYPE(self)),
                                    "init_value", &bits) < 0) {
            return -1;
        }
    }
    h->view = NULL;
    cbs_handle_set_bits(h, bits);
    return 0;
}

static PyObject *handle_repr(PyObject *self)
{
    const cbs_handle *h = (const cbs_handle *)self;
    if (h->kind == CBS_HANDLE_POINTER) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%llx", cbs_handle_bits(h));
        return PyUnicode_FromFormat("<%s %s>", cbs_short_name(Py_TYPE(self)), hex);
    }
    PyObject *v = handle_int(self);
    if (!v)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<%s %R>", cbs_short_name(Py_TYPE(self)), v);
    Py_DECREF(v);
    return r;
}

static Py_hash_t handle_hash(PyObject *self)
{
    PyObject *v = handle_int(self);
    if (!v)
        return -1;
    Py_hash_t hash = PyObject_Hash(v);
    Py_DECREF(v);
    return hash;
}

/* a is an instance of a handle class (the slot's own, or derived from it);
 * b compares by value when its class is a's, derived from a's, or a's
 * handle base (cubind.driver's CUstream and cubind.runtime's cudaStream_t,
 * as cuda.bindings' classes compare). */
static PyObject *handle_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !cbs_handle_related(Py_TYPE(b), Py_TYPE(a)))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = cbs_handle_bits((const cbs_handle *)a) == cbs_handle_bits((const cbs_handle *)b);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static int handle_bool(PyObject *self)
{
    return cbs_handle_bits((const cbs_handle *)self) != 0;
}

/* Handle objects are small, fixed-size and never part of a cycle: they are
 * allocated directly (no GC header, no memset of a generic allocation), and
 * the default dealloc of a heap type frees them with PyObject_Free (kernel
 * handles: cbs_kernel_handle_dealloc, which frees their layout first). The
 * size is the class's: sizeof(cbs_handle) or sizeof(cbs_kernel_handle). */
static PyObject *handle_new_kind(PyTypeObject *type, cbs_handle_kind kind)
{
    cbs_handle *h = PyObject_Malloc((size_t)type->tp_basicsize);
    if (!h)
        return PyErr_NoMemory();
    PyObject_Init((PyObject *)h, type);
    h->value.u64 = 0;
    h->view = NULL;
    h->kind = (unsigned char)kind;
    h->interned = 0;
    /* a kernel handle class's, or a class derived from another module's
     * kernel handle class (handle-base: its deallocator frees the slot) */
    if ((size_t)type->tp_basicsize >= sizeof(cbs_kernel_handle))
        atomic_init(&((cbs_kernel_handle *)h)->layout, NULL);
    return (PyObject *)h;
}

void cbs_kernel_handle_dealloc(PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    rt_free(atomic_load_explicit(&((cbs_kernel_handle *)o)->layout, memory_order_acquire));
    t->tp_free(o);
    Py_DECREF(t); /* instances of heap types own a reference to their type */
}

#define HANDLE_NEW(suffix, kind)                                                         \
    static PyObject *handle_new_##suffix(PyTypeObject *t, PyObject *args, PyObject *kw) \
    {                                                                                    \
        (void)args;                                                                      \
        (void)kw;                                                                        \
        return handle_new_kind(t, kind);                                                 \
    }
HANDLE_NEW(pointer, CBS_HANDLE_POINTER)
HANDLE_NEW(i32, CBS_HANDLE_I32)
HANDLE_NEW(u32, CBS_HANDLE_U32)
HANDLE_NEW(u64, CBS_HANDLE_U64)

/* The kind of C value a handle class stores, told by its constructor (no
 * per-type data is needed); -1 for a class that is not a handle class.
 * Whether an object is a handle: cbs_is_handle (its __init__). */
static int kind_of_type(PyTypeObject *t)
{
    if (t->tp_new == handle_new_pointer) return CBS_HANDLE_POINTER;
    if (t->tp_new == handle_new_i32) return CBS_HANDLE_I32;
    if (t->tp_new == handle_new_u32) return CBS_HANDLE_U32;
    if (t->tp_new == handle_new_u64) return CBS_HANDLE_U64;
    return -1;
}

/* __init_subclass__ of every handle class: Python code cannot derive from
 * one (a class statement calls it; PyType_FromSpec, by which another
 * cubind module derives its handle-base classes, does not). */
static PyObject *handle_init_subclass(PyObject *cls, PyObject *args, PyObject *kwds)
{
    (void)args;
    (void)kwds;
    PyErr_Format(PyExc_TypeError, "cubind's handle classes cannot be subclassed (%s)",
                 cbs_short_name((PyTypeObject *)cls));
    return NULL;
}

PyTypeObject *cbs_handle_type_create(PyObject *module, const char *qualname, cbs_handle_kind kind,
                                     unsigned flags, PyTypeObject *base, const char *doc)
{
    int names_kernel = (flags & CBS_HANDLE_CLASS_KERNEL) != 0;
    static newfunc const news[] = {handle_new_pointer, handle_new_i32, handle_new_u32,
                                   handle_new_u64};
    PyType_Slot slots[] = {
        /* first, so that a class without a layout cache can drop it */
        {Py_tp_dealloc, (void *)cbs_kernel_handle_dealloc},
        {Py_tp_new, (void *)news[kind]},
        {Py_tp_init, (void *)cbs_handle_init},
        {Py_tp_repr, (void *)handle_repr},
        {Py_tp_hash, (void *)handle_hash},
        {Py_tp_richcompare, (void *)handle_richcompare},
        {Py_tp_methods, (flags & CBS_HANDLE_CLASS_STREAM) ? stream_handle_methods : handle_methods},
        {Py_nb_int, (void *)handle_int},
        {Py_nb_index, (void *)handle_int},
        {Py_nb_bool, (void *)handle_bool},
        {Py_tp_doc, (void *)doc},
        {0, NULL},
    };
    size_t size = names_kernel ? sizeof(cbs_kernel_handle) : sizeof(cbs_handle);
    if (base) {
        /* another module's handle class (handle-base): the same object
         * layout, a kernel handle's when the base's is (its deallocator,
         * inherited where this class has none, frees the layout slot) */
        size_t bsize = (size_t)base->tp_basicsize;
        if ((bsize != sizeof(cbs_handle) && bsize != sizeof(cbs_kernel_handle)) ||
            !base->tp_as_number || !base->tp_as_number->nb_index) {
            PyErr_Format(PyExc_TypeError, "%s: base class %.100s is not a cubind handle class",
                         qualname, base->tp_name);
            return NULL;
        }
        if (bsize > size)
            size = bsize;
    }
    PyType_Spec spec = {qualname, (int)size, 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_BASETYPE,
                        names_kernel ? slots : slots + 1};
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, (PyObject *)base);
    if (!t)
        return NULL;
    if (PyModule_AddObjectRef(module, cbs_short_name(t), (PyObject *)t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

PyTypeObject *cbs_import_class(const char *module, const char *name)
{
    PyObject *m = PyImport_ImportModule(module);
    if (!m)
        return NULL;
    PyObject *c = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    if (c && !PyType_Check(c)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a class", module, name);
        Py_CLEAR(c);
    }
    return (PyTypeObject *)c;
}

PyObject *cbs_handle_new(PyTypeObject *t, unsigned long long bits)
{
    int kind = kind_of_type(t);
    PyObject *o = handle_new_kind(t, kind < 0 ? CBS_HANDLE_U64 : (cbs_handle_kind)kind);
    if (o)
        cbs_handle_set_bits((cbs_handle *)o, bits);
    return o;
}

/* cbs_arg_handle_slow and cbs_arg_handle_cast_slow: `also` is the class a
 * handle-cast rule adds, or NULL. */
/* cuda.bindings' module, whose classes cubind's stand in for. */
#define CBS_FOREIGN_MODULE "cuda.bindings.driver"

/* Whether class t belongs to cuda.bindings.driver: its tp_name's module
 * part for a static type (Cython's classes), its __module__ for a heap
 * type. Never raises. */
static int foreign_module(PyTypeObject *t)
{
    if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        const char *dot = strrchr(t->tp_name, '.');
        return dot && (size_t)(dot - t->tp_name) == strlen(CBS_FOREIGN_MODULE) &&
               strncmp(t->tp_name, CBS_FOREIGN_MODULE, strlen(CBS_FOREIGN_MODULE)) == 0;
    }
    PyObject *m = NULL;
    if (cbs_optional_attr((PyObject *)t, "__module__", &m) <= 0) {
        PyErr_Clear();
        return 0;
    }
    int yes = PyUnicode_Check(m) && PyUnicode_CompareWithASCIIString(m, CBS_FOREIGN_MODULE) == 0;
    Py_DECREF(m);
    return yes;
}

int cbs_is_foreign_twin(PyTypeObject *t, PyTypeObject *ours)
{
    return t != ours && strcmp(cbs_short_name(t), cbs_short_name(ours)) == 0 && foreign_module(t);
}

int cbs_is_foreign_handle(PyTypeObject *t)
{
    return foreign_module(t) && PyObject_HasAttrString((PyObject *)t, "getPtr") &&
           (t->tp_as_number && (t->tp_as_number->nb_int || t->tp_as_number->nb_index));
}

/* The class handle class t derives from (a handle-base rule: cubind.runtime's
 * cudaStream_t from cubind.driver's CUstream), or NULL. */
static PyTypeObject *handle_base(PyTypeObject *t)
{
    return t->tp_base && t->tp_base != &PyBaseObject_Type ? t->tp_base : NULL;
}

int cbs_handle_related(PyTypeObject *ot, PyTypeObject *t)
{
    return ot == t || PyType_IsSubtype(ot, t) || (ot == handle_base(t));
}

/* Whether class ot is cuda.bindings.driver's twin of t or of t's base, or
 * derives from one (cuda.bindings.runtime's cudaStream_t derives from
 * cuda.bindings.driver's CUstream): its objects are read through int(). */
static int foreign_related(PyTypeObject *ot, PyTypeObject *t)
{
    PyTypeObject *base = handle_base(t);
    PyObject *mro = ot->tp_mro;
    Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        if (cbs_is_foreign_twin(c, t) || (base && cbs_is_foreign_twin(c, base)))
            return 1;
    }
    return 0;
}

/* Whether class t is a handle class of any cubind module (this one's
 * cbs_is_handle tells only its own). Never raises. */
static int cubind_handle_class(PyTypeObject *t)
{
    return (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && strncmp(t->tp_name, "cubind.", 7) == 0 &&
           t->tp_as_number && t->tp_as_number->nb_index && !PyType_IsSubtype(t, &PyLong_Type);
}

PyObject *cbs_native_handle(PyObject *module, PyObject *obj)
{
    PyTypeObject *t = Py_TYPE(obj);
    if (cbs_is_handle(obj) && ((const cbs_handle *)obj)->kind == CBS_HANDLE_POINTER)
        return PyLong_FromVoidPtr((void *)(uintptr_t)cbs_handle_bits((const cbs_handle *)obj));
    if (!PyLong_Check(obj) && cbs_is_foreign_handle(t)) {
        /* cuda.bindings.driver's class: taken when this module's class of
         * that name (its twin) is an opaque-pointer class. */
        PyObject *twin = NULL;
        if (cbs_optional_attr(module, cbs_short_name(t), &twin) < 0)
            return NULL;
        int pointer = twin && PyType_Check(twin) &&
                      cbs_is_foreign_twin(t, (PyTypeObject *)twin) &&
                      kind_of_type((PyTypeObject *)twin) == CBS_HANDLE_POINTER;
        Py_XDECREF(twin);
        if (pointer)
            return PyNumber_Long(obj);
    }
    PyErr_Format(PyExc_TypeError, "Unknown type: %R", (PyObject *)t);
    return NULL;
}

int cbs_arg_handle_ref(PyObject *o, PyTypeObject *t, const char *func, const char *param,
                       void **ptr)
{
    if (o == Py_None) {
        *ptr = NULL;
        return 0;
    }
    if (cbs_handle_related(Py_TYPE(o), t)) {
        *ptr = cbs_handle_storage((cbs_handle *)o);
        return 0;
    }
    if (foreign_related(Py_TYPE(o), t)) {
        PyObject *addr = PyObject_CallMethod(o, "getPtr", NULL);
        if (!addr)
            return -1;
        *ptr = PyLong_Check(addr) ? PyLong_AsVoidPtr(addr) : NULL;
        Py_DECREF(addr);
        if (*ptr || PyErr_Occurred())
            return *ptr ? 0 : -1;
    }
    PyTypeObject *base = handle_base(t);
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s%s%s or None, not %.100s", func,
                 param, cbs_short_name(t), base ? ", " : "", base ? cbs_short_name(base) : "",
                 Py_TYPE(o)->tp_name);
    return -1;
}

static int arg_handle(PyObject *o, PyTypeObject *t, PyTypeObject *also, const char *func,
                      const char *param, unsigned long long *bits)
{
    if (o == Py_None) {
        *bits = 0;
        return 0;
    }
    /* A plain int (a device ordinal, an address) is no handle of any
     * class: straight to its value, without the class tests below
     * (PyType_IsSubtype walks). What the end of this function does. */
    if (PyLong_CheckExact(o))
        return handle_bits_from(o, t, func, param, bits);
    PyTypeObject *ot = Py_TYPE(o);
    /* an instance of t or also, of a class derived from one, or of t's
     * base (handle-base: the other cubind module's class of the same C
     * type): the same object layout */
    if (cbs_handle_related(ot, t) || (also && cbs_handle_related(ot, also))) {
        *bits = cbs_handle_bits((const cbs_handle *)o);
        return 0;
    }
    /* cuda.bindings' handle object of this class (or of the cast class):
     * its value through int(), as cuda.bindings reads its own. */
    if (!PyLong_Check(o) && (foreign_related(ot, t) || (also && foreign_related(ot, also)))) {
        PyObject *n = PyNumber_Long(o);
        if (!n)
            return -1;
        int rc = handle_from_int(n, (cbs_handle_kind)kind_of_type(t), func, param,
                                 cbs_short_name(t), bits);
        Py_DECREF(n);
        return rc;
    }
    /* Any int is a handle's value, int subclasses (enum members) included,
     * as cuda.bindings takes them; a handle of another class, of this
     * module, another cubind module or cuda.bindings.driver, is refused. */
    if (cbs_is_handle(o) ||
        (!PyLong_Check(o) && (cubind_handle_class(ot) || cbs_is_foreign_handle(ot)))) {
        PyTypeObject *base = handle_base(t);
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s%s%s%s%s, int%s or None, not %.100s",
                     func, param, cbs_short_name(t), base ? ", " : "",
                     base ? cbs_short_name(base) : "", also ? ", " : "",
                     also ? cbs_short_name(also) : "",
                     is_stream_class(t) ? ", an object with __cuda_stream__" : "", ot->tp_name);
        return -1;
    }
    return handle_bits_from(o, t, func, param, bits);
}

unsigned long long cbs_handle_view_bits(const cbs_handle *h)
{
    return cbs_handle_bits_at(h->kind, h->view);
}

int cbs_arg_handle_slow(PyObject *o, PyTypeObject *t, const char *func, const char *param,
                        unsigned long long *bits)
{
    return arg_handle(o, t, NULL, func, param, bits);
}

int cbs_arg_handle_cast_slow(PyObject *o, PyTypeObject *t, PyTypeObject *also, const char *func,
                             const char *param, unsigned long long *bits)
{
    return arg_handle(o, t, also, func, param, bits);
}

/* ---- driver entry points -------------------------------------------------- */

/* The loaded driver's release in words ("12.4", from cuDriverGetVersion),
 * or "of unknown release" when it cannot say. */
static void driver_release(const cubind_rt_api *rt, char *buf, size_t len)
{
    int status = 0, v = 0;
    void *sym = rt->lookup("cuDriverGetVersion", 2020, &status);
    CUresult (*get)(int *) = NULL;
    _Static_assert(sizeof get == sizeof sym, "POSIX: function and object pointers alike");
    memcpy(&get, &sym, sizeof get);
    if (sym && get(&v) == CUDA_SUCCESS && v > 0)
        snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
    else
        snprintf(buf, len, "of unknown release");
}

void *cbs_resolve(const cubind_rt_api *rt, _Atomic(void *) *slot, const cbs_proc *proc,
                  PyObject *driver_not_found, PyObject *function_not_found)
{
    const char *why = NULL;
    if (rt->load(&why) < 0) {
        PyErr_Format(driver_not_found, "%s", why ? why : "could not load the CUDA driver");
        return NULL;
    }
    int status = 0;
    void *fn = rt->lookup(proc->proc_name, proc->version, &status);
    if (!fn) {
        char driver[32];
        driver_release(rt, driver, sizeof driver);
        PyErr_Format(function_not_found,
                     "%s: the CUDA driver %s (%s) lacks the %d.%d ABI of %s: %s", proc->name,
                     driver, rt->driver_path() ? rt->driver_path() : "?", proc->version / 1000,
                     proc->version % 1000 / 10, proc->proc_name,
                     status == CUBIND_LOOKUP_VERSION_NOT_SUFFICIENT
                         ? "version not sufficient (the driver has it only in a later ABI)"
                         : "symbol absent (it does not have the function)");
        return NULL;
    }
    /* Every racer stores the same pointer: publishing twice is harmless. */
    atomic_store_explicit(slot, fn, memory_order_release);
    return fn;
}

int cbs_module_add(PyObject *module, const char *name, PyObject *v)
{
    int rc = PyModule_AddObjectRef(module, name, v);
    Py_DECREF(v);
    return rc;
}

void cbs_share_module_objects(PyObject *module, const cbs_enum *enums, size_t n)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main())
        return;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    PyObject *dict = PyModule_GetDict(module);
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (PyCFunction_Check(value) || (PyType_Check(value) && !PyExceptionClass_Check(value)))
            cbs_make_immortal(value);
    }
    for (size_t i = 0; i < n; i++) {
        /* the enum classes' metaclass (in no module dict), which a lookup
         * such as driver.CUdevice_attribute.X may count */
        cbs_make_immortal((PyObject *)Py_TYPE(enums[i].type));
        for (size_t k = 0; k < enums[i].n; k++)
            cbs_make_immortal(enums[i].members[k]);
    }
    /* The module itself: `driver.f(...)` from a module's globals takes a
     * reference to the module object on every call (LOAD_GLOBAL). */
    cbs_make_immortal(module);
}

void cbs_share_object(PyObject *o)
{
    if (PyInterpreterState_Get() == PyInterpreterState_Main())
        cbs_make_immortal(o);
}

/* ---- import ------------------------------------------------------------- */

#ifdef CUBIND_FAULT_INJECTION
rt_alloc_faults *rt_alloc_state; /* _runtime's, from the capsule (rt_alloc.h) */
#endif

const cubind_rt_api *cbs_import_runtime(PyObject **runtime_module)
{
    PyObject *mod = PyImport_ImportModule("cubind._runtime");
    if (!mod)
        return NULL;
    PyObject *cap = cbs_attr(mod, "_C_API");
    if (!cap) {
        Py_DECREF(mod);
        return NULL;
    }
    const cubind_rt_api *api = PyCapsule_GetPointer(cap, CUBIND_RT_CAPSULE_NAME);
    Py_DECREF(cap);
    if (!api) {
        Py_DECREF(mod);
        return NULL;
    }
    if (strcmp(api->signature, CUBIND_RT_SIGNATURE) != 0 || api->size < sizeof *api) {
        PyErr_Format(PyExc_ImportError,
                     "cubind._runtime does not match this module: it exports \"%s\" "
                     "(size %zu), this module expects \"%s\" (size %zu)",
                     api->signature, api->size, CUBIND_RT_SIGNATURE, sizeof *api);
        Py_DECREF(mod);
        return NULL;
    }
#ifdef CUBIND_FAULT_INJECTION
    rt_alloc_state = api->faults; /* before this module's first allocation */
#endif
    *runtime_module = mod;
    return api;
}
