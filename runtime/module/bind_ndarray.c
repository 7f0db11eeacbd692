/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_ndarray.c — see bind_ndarray.h. Below bind_struct_array.c, which
 * asks it for its numeric fields; it calls only bind_support.c.
 */
#include "bind_ndarray.h"

#include "bind_support.h"

#include <stdatomic.h>

typedef struct {
    PyObject_HEAD
    PyObject *owner;        /* the struct object the field is of; never NULL
                               (no tp_clear: a struct cannot refer back to an
                               exporter) */
    PyObject *memory;       /* NULL: the bytes are owner's own; else the
                               array a pointer field of owner points at (a
                               bytes object it made), kept here because the
                               field may be set to another while the numpy
                               array lives */
    unsigned char *data;    /* the first element, inside owner's or memory's
                               bytes */
    const char *format;     /* one element, as the struct module spells it */
    Py_ssize_t itemsize;
    int ndim;
    int readonly;
    Py_ssize_t shape[CBS_NDARRAY_MAX_DIMS];
    Py_ssize_t strides[CBS_NDARRAY_MAX_DIMS];
} field_buffer;

int cbs_ndarray_numeric(const cbs_field_def *f)
{
    if (f->bit_width >= 0)
        return 0;
    switch (f->kind) {
    case CBS_F_SIGNED:
    case CBS_F_UNSIGNED: return f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
    case CBS_F_FLOAT: return f->size == sizeof(float);
    case CBS_F_DOUBLE: return f->size == sizeof(double);
    /* an enum's values, as cuda.bindings' dtypes hold every enum: int32 */
    case CBS_F_ENUM: return f->size == 4;
    default: return 0;
    }
}

/* The struct-module format of one element of f (cbs_ndarray_numeric). */
static const char *format_of(const cbs_field_def *f)
{
    static const char *const sizes[2][4] = {{"b", "h", "i", "q"}, {"B", "H", "I", "Q"}};
    switch (f->kind) {
    case CBS_F_FLOAT: return "f";
    case CBS_F_DOUBLE: return "d";
    case CBS_F_ENUM: return "i";
    default: break;
    }
    int k = f->size == 1 ? 0 : f->size == 2 ? 1 : f->size == 4 ? 2 : 3;
    return sizes[f->kind == CBS_F_UNSIGNED][k];
}

/* The struct-module format of an unsigned integer of size bytes (1, 2, 4
 * or 8), NULL for another size. */
static const char *unsigned_format(size_t size)
{
    return size == 1 ? "B" : size == 2 ? "H" : size == 4 ? "I" : size == 8 ? "Q" : NULL;
}

static int buffer_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((field_buffer *)self)->owner);
    Py_VISIT(((field_buffer *)self)->memory);
    return 0;
}

static void buffer_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((field_buffer *)self)->owner);
    Py_CLEAR(((field_buffer *)self)->memory);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* Whether the elements lie one after another, last dimension fastest. */
static int c_contiguous(const field_buffer *v)
{
    Py_ssize_t want = v->itemsize;
    for (int k = v->ndim - 1; k >= 0; k--) {
        if (v->shape[k] > 1 && v->strides[k] != want)
            return 0;
        want *= v->shape[k];
    }
    return 1;
}

/* The buffer protocol, as PEP 3118 asks: format, shape and strides only
 * where the consumer asked for them; a strided view only to a consumer
 * that takes strides. */
static int buffer_get(PyObject *self, Py_buffer *b, int flags)
{
    field_buffer *v = (field_buffer *)self;
    b->obj = NULL;
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && v->readonly) {
        PyErr_Format(PyExc_BufferError, "%s's bytes are read-only",
                     cbs_short_name(Py_TYPE(v->owner)));
        return -1;
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_contiguous(v)) {
        PyErr_Format(PyExc_BufferError, "a field of %s is strided: ask for strides",
                     cbs_short_name(Py_TYPE(v->owner)));
        return -1;
    }
    Py_ssize_t n = 1;
    for (int k = 0; k < v->ndim; k++)
        n *= v->shape[k];
    b->buf = v->data;
    b->obj = Py_NewRef(self);
    b->len = n * v->itemsize;
    b->itemsize = v->itemsize;
    b->readonly = v->readonly;
    b->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? (char *)v->format : NULL;
    int nd = (flags & PyBUF_ND) == PyBUF_ND;
    b->ndim = nd ? v->ndim : 1;
    b->shape = nd ? v->shape : NULL;
    b->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? v->strides : NULL;
    b->suboffsets = NULL;
    b->internal = NULL;
    return 0;
}

int cbs_ndarray_type_create(PyObject *module)
{
    cbs_tables *tb = (cbs_tables *)PyModule_GetState(module);
    if (!tb)
        return -1;
    PyType_Slot slots[] = {
        {Py_tp_dealloc, (void *)buffer_dealloc},
        {Py_tp_traverse, (void *)buffer_traverse},
        {Py_bf_getbuffer, (void *)buffer_get},
        {Py_tp_doc, (void *)"The bytes of a record's numeric field, for numpy."},
        {0, NULL},
    };
    PyType_Spec spec = {"cubind.FieldBuffer", (int)sizeof(field_buffer), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                            Py_TPFLAGS_DISALLOW_INSTANTIATION,
                        slots};
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, NULL);
    if (!t)
        return -1;
    Py_XSETREF(tb->field_buffer, t);
    return 0;
}

/* numpy.asarray, or Py_None when numpy cannot be imported here; a new
 * reference, NULL with an exception only for a failure that is no import
 * error of numpy's (a KeyboardInterrupt, a MemoryError). */
static PyObject *numpy_asarray(cbs_tables *tb)
{
    PyObject *fn = atomic_load_explicit(&tb->numpy_asarray, memory_order_acquire);
    if (fn)
        return Py_NewRef(fn);
    PyObject *numpy = PyImport_ImportModule("numpy");
    fn = numpy ? PyObject_GetAttrString(numpy, "asarray") : NULL;
    Py_XDECREF(numpy);
    if (!fn) {
        /* absent, or refusing this interpreter (numpy's own error) */
        if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
        fn = Py_NewRef(Py_None);
    }
    PyObject *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&tb->numpy_asarray, &none, fn,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        Py_DECREF(fn); /* another thread's is there: use it */
        fn = none;
    }
    return Py_NewRef(fn);
}

/* What a view is of: the exporter's fields but its header and data. */
typedef struct {
    PyObject *owner, *memory; /* borrowed; memory may be NULL */
    const char *format;
    Py_ssize_t itemsize;
    int ndim, readonly;
    const Py_ssize_t *shape, *strides;
} view_spec;

/* numpy.asarray of a new exporter of v over data (cbs_ndarray_view's
 * answers); name, the field's for a message. */
static PyObject *make_view(cbs_tables *tb, const view_spec *v, unsigned char *data,
                           const char *name)
{
    PyObject *asarray = numpy_asarray(tb);
    if (!asarray || asarray == Py_None) {
        Py_XDECREF(asarray);
        return NULL;
    }
    if (!tb->field_buffer) {
        Py_DECREF(asarray);
        PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                     cbs_short_name(Py_TYPE(v->owner)), name);
        return NULL;
    }
    field_buffer *b = PyObject_GC_New(field_buffer, tb->field_buffer);
    if (!b) {
        Py_DECREF(asarray);
        return NULL;
    }
    b->owner = Py_NewRef(v->owner);
    b->memory = Py_XNewRef(v->memory);
    b->data = data;
    b->format = v->format;
    b->itemsize = v->itemsize;
    b->ndim = v->ndim;
    b->readonly = v->readonly;
    for (int k = 0; k < v->ndim; k++) {
        b->shape[k] = v->shape[k];
        b->strides[k] = v->strides[k];
    }
    PyObject_GC_Track((PyObject *)b);
    PyObject *array = PyObject_CallOneArg(asarray, (PyObject *)b);
    Py_DECREF(b);
    Py_DECREF(asarray);
    return array;
}

PyObject *cbs_ndarray_view(cbs_tables *tb, PyObject *owner, unsigned char *data,
                           const cbs_field_def *f, int ndim, const Py_ssize_t *shape,
                           const Py_ssize_t *strides, int readonly)
{
    if (ndim < 1 || ndim > CBS_NDARRAY_MAX_DIMS || !cbs_ndarray_numeric(f)) {
        PyErr_Format(PyExc_SystemError, "%s.%s: no numpy array of %d dimensions",
                     cbs_short_name(Py_TYPE(owner)), f->name, ndim);
        return NULL;
    }
    view_spec v = {owner, NULL, format_of(f), (Py_ssize_t)f->size, ndim, readonly, shape, strides};
    return make_view(tb, &v, data, f->name);
}

PyObject *cbs_ndarray_pointed(cbs_tables *tb, PyObject *owner, PyObject *memory,
                              unsigned char *data, const cbs_field_def *f, Py_ssize_t n,
                              int readonly)
{
    const char *format = unsigned_format(f->elem_size);
    if (!format || n < 0) {
        PyErr_Format(PyExc_SystemError, "%s.%s: no numpy array of %zd elements of %zu bytes",
                     cbs_short_name(Py_TYPE(owner)), f->name, n, f->elem_size);
        return NULL;
    }
    Py_ssize_t stride = (Py_ssize_t)f->elem_size;
    view_spec v = {owner, memory, format, stride, 1, readonly, &n, &stride};
    return make_view(tb, &v, data, f->name);
}

int cbs_ndarray_traverse(cbs_tables *tb, visitproc visit, void *arg)
{
    Py_VISIT(tb->field_buffer);
    PyObject *fn = atomic_load_explicit(&tb->numpy_asarray, memory_order_acquire);
    Py_VISIT(fn);
    return 0;
}

void cbs_ndarray_clear(cbs_tables *tb)
{
    Py_CLEAR(tb->field_buffer);
    PyObject *fn = atomic_exchange_explicit(&tb->numpy_asarray, NULL, memory_order_acq_rel);
    Py_XDECREF(fn);
}
