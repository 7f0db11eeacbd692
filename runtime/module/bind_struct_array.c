/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct_array.c — see bind_struct_array.h. Above bind_struct.c: it
 * makes records and views through that file's exports, never the reverse.
 */
#include "bind_struct_array.h"

#include "bind_ndarray.h"
#include "bind_support.h"

#include <string.h>

/* A view of record i of self (0 <= i < its length). */
static PyObject *record_at(PyObject *self, Py_ssize_t i)
{
    cbs_struct *s = (cbs_struct *)self;
    return cbs_struct_view(Py_TYPE(self), s->def, self, s->data + (size_t)i * s->def->size);
}

/* T(size=1, **fields); T(_ptr=address) wraps an address (from_ptr's). */
static PyObject *array_new(PyTypeObject *t, PyObject *args, PyObject *kwds)
{
    const char *name = cbs_short_name(t);
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 positional argument (%zd given)",
                     name, nargs);
        return NULL;
    }
    PyObject *size = nargs ? PyTuple_GET_ITEM(args, 0) : NULL;
    PyObject *kw_size = kwds ? PyDict_GetItemString(kwds, "size") : NULL;
    PyObject *ptr = kwds ? PyDict_GetItemString(kwds, "_ptr") : NULL;
    if (size && kw_size) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument 'size'", name);
        return NULL;
    }
    size = size ? size : kw_size;
    if (ptr && size) {
        PyErr_Format(PyExc_TypeError, "%s(): size and _ptr exclude each other", name);
        return NULL;
    }
    if (ptr) {
        PyObject *none = PyTuple_New(0);
        PyObject *o = none ? cbs_struct_new(t, none, kwds) : NULL;
        Py_XDECREF(none);
        return o;
    }
    Py_ssize_t n = 1;
    if (size) {
        if (!PyIndex_Check(size) || PyBool_Check(size)) {
            PyErr_Format(PyExc_TypeError, "%s(): size must be an int, not %.100s", name,
                         Py_TYPE(size)->tp_name);
            return NULL;
        }
        n = PyNumber_AsSsize_t(size, PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_MemoryError, "%s(): size %R is too large", name, size);
            }
            return NULL;
        }
        if (n < 0) {
            PyErr_Format(PyExc_ValueError, "%s(): size must not be negative, not %zd", name, n);
            return NULL;
        }
    }
    const cbs_struct_def *def = cbs_struct_def_of(t);
    if (!def)
        return NULL;
    if ((size_t)n > (size_t)PY_SSIZE_T_MAX / def->size) {
        PyErr_Format(PyExc_MemoryError, "%s(): size %zd is too large (%zu bytes each)", name, n,
                     def->size);
        return NULL;
    }
    PyObject *o = cbs_struct_records(t, def, (size_t)n);
    if (o && n == 0) { /* one zeroed record allocated, none counted */
        ((cbs_struct *)o)->sized = 1;
        ((cbs_struct *)o)->length = 0;
    }
    return o;
}

/* Field keywords, by either name of the field, as `obj.field = value`
 * (an array's: one value per record). */
static int array_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)args;
    if (!kwds)
        return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwds, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "%s() keywords must be strings",
                         cbs_short_name(Py_TYPE(self)));
            return -1;
        }
        if (cbs_keyword_is(key, "size", 4) || cbs_keyword_is(key, "_ptr", 4))
            continue;
        if (PyObject_SetAttr(self, key, value) < 0) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R",
                             cbs_short_name(Py_TYPE(self)), key);
            }
            return -1;
        }
    }
    return 0;
}

static PyObject *array_item(PyObject *self, Py_ssize_t i)
{
    if (i < 0 || i >= cbs_struct_array_len(self)) {
        PyErr_Format(PyExc_IndexError, "%s index out of range", cbs_short_name(Py_TYPE(self)));
        return NULL;
    }
    return record_at(self, i);
}

static PyObject *array_repr(PyObject *self)
{
    Py_ssize_t n = cbs_struct_array_len(self);
    if (n == 1 && !((cbs_struct *)self)->sized)
        return cbs_struct_repr(self);
    /* "cubind.nvml.nvmlFieldValue_st": the module is what precedes the name */
    const char *qualname = ((cbs_struct *)self)->def->qualname;
    const char *dot = strrchr(qualname, '.');
    PyObject *module = PyUnicode_FromStringAndSize(qualname, dot ? dot - qualname : 0);
    PyObject *r = module ? PyUnicode_FromFormat("<%U.%s_Array_%zd object at %p>", module,
                                                cbs_short_name(Py_TYPE(self)), n, (void *)self)
                         : NULL;
    Py_XDECREF(module);
    return r;
}

/* A fixed array of records f of one record self (`T f[N]`), as an array
 * view of its class: N records, or the first min(COUNT, N) of a counted
 * one (bind_struct.h's "Counted arrays"). cuda.bindings returns the
 * nested class's array (an empty one for a count of 0). */
static PyObject *record_array_view(PyObject *self, const cbs_field_def *f)
{
    cbs_struct *s = (cbs_struct *)self;
    const cbs_tables *tb = (const cbs_tables *)PyType_GetModuleState(Py_TYPE(self));
    if (!tb || !tb->structs[f->index]) {
        PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                     cbs_short_name(Py_TYPE(self)), f->name);
        return NULL;
    }
    return cbs_struct_array_view(tb->structs[f->index], &tb->struct_defs[f->index], self,
                                 s->data + f->offset, (Py_ssize_t)cbs_struct_fixed_len(s, f));
}

/* A fixed array of records of a snake_case class reads as its class's
 * array (the nested class is a snake_case class too). */
static int is_record_array(const cbs_field_def *f)
{
    return f->kind == CBS_F_RECORD && f->count > 0 && f->bit_width < 0;
}

/* A numeric field as cuda.bindings reads it, a numpy array over the
 * records' bytes: of one record, its fixed array (`unsigned char
 * nonce[32]`: 32 values, or a counted array's first min(COUNT, N)); of an
 * array of n records, one value per record, or an n by N array of a fixed
 * array that has no count field. NULL and no exception where numpy cannot
 * be imported or the field is no such array: the caller reads a list. */
static PyObject *numeric_array(PyObject *self, const cbs_field_def *f, Py_ssize_t n, int one)
{
    if (!cbs_ndarray_numeric(f) || (one && f->count == 0) || (!one && f->count > 0 && f->aux >= 0))
        return NULL;
    cbs_struct *s = (cbs_struct *)self;
    cbs_tables *tb = (cbs_tables *)PyType_GetModuleState(Py_TYPE(self));
    if (!tb)
        return NULL;
    Py_ssize_t shape[CBS_NDARRAY_MAX_DIMS], strides[CBS_NDARRAY_MAX_DIMS];
    int ndim = 0;
    if (!one) {
        shape[ndim] = n;
        strides[ndim++] = (Py_ssize_t)s->def->size;
    }
    if (f->count > 0) {
        shape[ndim] = one ? (Py_ssize_t)cbs_struct_fixed_len(s, f) : (Py_ssize_t)f->count;
        strides[ndim++] = (Py_ssize_t)f->size;
    }
    return cbs_ndarray_view(tb, self, s->data + f->offset, f, ndim, shape, strides,
                            cbs_struct_readonly(self));
}

PyObject *cbs_struct_array_get(PyObject *self, void *closure)
{
    Py_ssize_t n = cbs_struct_array_len(self);
    int one = n == 1 && !((cbs_struct *)self)->sized;
    PyObject *array = numeric_array(self, closure, n, one);
    if (array || PyErr_Occurred())
        return array;
    if (one)
        return is_record_array(closure) ? record_array_view(self, closure)
                                        : cbs_struct_get(self, closure);
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *record = array_item(self, i);
        PyObject *v = record ? cbs_struct_array_get(record, closure) : NULL;
        Py_XDECREF(record);
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* Whether an array-wide write of field f can be undone by restoring its
 * bytes: a plain value, no kept object or nested record behind it, no
 * count field it sets too. */
static int plain_field(const cbs_field_def *f)
{
    if (f->sets_count)
        return 0;
    switch (f->kind) {
    case CBS_F_SIGNED: case CBS_F_UNSIGNED: case CBS_F_FLOAT: case CBS_F_DOUBLE:
    case CBS_F_ENUM: case CBS_F_HANDLE: case CBS_F_VALUE_HANDLE: case CBS_F_CHARS:
    case CBS_F_BYTES:
        return 1;
    default:
        return 0;
    }
}

int cbs_struct_array_set(PyObject *self, PyObject *value, void *closure)
{
    Py_ssize_t n = cbs_struct_array_len(self);
    if (n == 1 || !value)
        return cbs_struct_set(self, value, closure);
    const cbs_field_def *f = closure;
    const char *name = cbs_short_name(Py_TYPE(self));
    if (!plain_field(f)) {
        PyErr_Format(PyExc_TypeError,
                     "%s.%s of an array of %zd records is set one record at a time (index "
                     "the array)", name, f->name, n);
        return -1;
    }
    /* a tuple of the values: a list another thread changes cannot change
     * it under the loop */
    PyObject *seq = PyUnicode_Check(value) || PyBytes_Check(value) ? NULL
                                                                   : PySequence_Tuple(value);
    if (!seq || PyTuple_GET_SIZE(seq) != n) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "%s.%s of an array of %zd records takes a sequence of %zd values, one per "
                     "record (index the array to set one)", name, f->name, n, n);
        return -1;
    }
    /* The field's bytes of every record, saved: a value that does not
     * convert leaves the array as it was. */
    cbs_struct *s = (cbs_struct *)self;
    size_t span = f->size * (f->count ? f->count : 1);
    unsigned char *saved = PyMem_Malloc((size_t)n * span);
    if (!saved) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        memcpy(saved + (size_t)i * span, s->data + (size_t)i * s->def->size + f->offset, span);
    Py_ssize_t done = 0;
    int rc = 0;
    for (; rc == 0 && done < n; done++) {
        PyObject *record = array_item(self, done);
        rc = record ? cbs_struct_set(record, PyTuple_GET_ITEM(seq, done), closure) : -1;
        Py_XDECREF(record);
    }
    if (rc < 0)
        for (Py_ssize_t i = 0; i < done; i++)
            memcpy(s->data + (size_t)i * s->def->size + f->offset, saved + (size_t)i * span,
                   span);
    PyMem_Free(saved);
    Py_DECREF(seq);
    return rc;
}

/* Record i of the new array arr from item: a record of t copied, or (field
 * given) a value of that field. */
static int record_from_item(PyObject *arr, Py_ssize_t i, PyObject *item, PyTypeObject *t,
                            const char *field, const char *func, const char *param)
{
    cbs_struct *a = (cbs_struct *)arr;
    unsigned char *p = a->data + (size_t)i * a->def->size;
    if (Py_TYPE(item) == t && cbs_struct_array_len(item) == 1) {
        memcpy(p, ((cbs_struct *)item)->data, a->def->size);
        return 0;
    }
    if (field && PyIndex_Check(item)) {
        PyObject *record = record_at(arr, i);
        int rc = record ? PyObject_SetAttrString(record, field, item) : -1;
        Py_XDECREF(record);
        if (rc == 0)
            return 0;
        if (!PyErr_ExceptionMatches(PyExc_OverflowError) &&
            !PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyObject *type = PyErr_ExceptionMatches(PyExc_TypeError) ? PyExc_TypeError
                                                                 : PyExc_ValueError;
        PyErr_Clear();
        PyErr_Format(type, "%s(): argument '%s' item %zd (%R) is no valid %s", func, param, i,
                     item, field);
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' item %zd must be a %s record%s%s, not %.100s",
                 func, param, i, cbs_short_name(t), field ? " or an int, its " : "",
                 field ? field : "", Py_TYPE(item)->tp_name);
    return -1;
}

PyObject *cbs_struct_array_arg(PyObject *o, PyTypeObject *t, const char *field, const char *func,
                               const char *param, void **data, size_t *n)
{
    if (Py_TYPE(o) == t) {
        *data = ((cbs_struct *)o)->data;
        *n = (size_t)cbs_struct_array_len(o);
        return Py_NewRef(o);
    }
    PyObject *seq = PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)
                        ? NULL
                        : PySequence_Tuple(o);
    if (!seq) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s or a sequence of its records%s, not %.100s",
                     func, param, cbs_short_name(t), field ? " or ints" : "", Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_ssize_t len = PyTuple_GET_SIZE(seq);
    const cbs_struct_def *def = len ? cbs_struct_def_of(t) : NULL;
    if (!def) {
        if (!len)
            PyErr_Format(PyExc_ValueError, "%s(): argument '%s' holds no record", func, param);
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *arr = cbs_struct_records(t, def, (size_t)len);
    for (Py_ssize_t i = 0; arr && i < len; i++)
        if (record_from_item(arr, i, PyTuple_GET_ITEM(seq, i), t, field, func, param) < 0)
            Py_CLEAR(arr);
    Py_DECREF(seq);
    if (arr) {
        *data = ((cbs_struct *)arr)->data;
        *n = (size_t)len;
    }
    return arr;
}

PyObject *cbs_counted_records_arg(PyObject *o, PyTypeObject *t, unsigned accept, const char *func,
                                  const char *param, void **data, size_t *n)
{
    if (o == Py_None || cbs_is_struct_address(o, accept)) {
        void *at = NULL;
        if (o != Py_None && cbs_arg_struct(o, t, CBS_ACCEPT_ADDRESS, func, param, &at) < 0)
            return NULL;
        *data = at;
        *n = o == Py_None ? 0 : SIZE_MAX;
        Py_RETURN_NONE;
    }
    if (Py_TYPE(o) != t && ((!PySequence_Check(o) && !PyIter_Check(o)) || PyUnicode_Check(o) ||
                            PyBytes_Check(o) || PyByteArray_Check(o))) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, a sequence of its records%s or None, not %.100s",
                     func, param, cbs_short_name(t), (accept & CBS_ACCEPT_ADDRESS) ? ", an int address" : "",
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return cbs_struct_array_arg(o, t, NULL, func, param, data, n);
}

PyTypeObject *cbs_struct_array_type_create(PyObject *module, const cbs_struct_def *def)
{
    PyType_Slot extra[] = {
        {Py_tp_new, (void *)array_new},
        {Py_tp_init, (void *)array_init},
        {Py_tp_repr, (void *)array_repr},
        {Py_sq_length, (void *)cbs_struct_array_len},
        {Py_sq_item, (void *)array_item},
        {0, NULL},
    };
    return cbs_struct_type_create_with(module, def, extra);
}
