/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_handle_seq.c — see bind_handle_seq.h. The items come from
 * cbs_struct_driver_handle (bind_record.c), which knows the struct's bytes.
 */
#include "bind_handle_seq.h"
#include "bind_record.h"

#include "cubind_compat.h"

typedef struct {
    PyObject_HEAD
    PyObject *owner;          /* the struct instance whose field this is;
                                 never NULL (no tp_clear: nothing this
                                 object refers to can refer back to it) */
    PyTypeObject *item;       /* the handle class of the items */
    const cbs_field_def *field;
    Py_ssize_t n;             /* the count when the field was read */
} handle_seq;

static int seq_traverse(PyObject *self, visitproc visit, void *arg)
{
    handle_seq *q = (handle_seq *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(q->owner);
    Py_VISIT(q->item);
    return 0;
}

static void seq_dealloc(PyObject *self)
{
    handle_seq *q = (handle_seq *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(q->owner);
    Py_CLEAR(q->item);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static Py_ssize_t seq_length(PyObject *self)
{
    return ((handle_seq *)self)->n;
}

/* Item i, 0 <= i < n (the sequence protocol has made negative ones so). */
static PyObject *seq_item(PyObject *self, Py_ssize_t i)
{
    handle_seq *q = (handle_seq *)self;
    if (i < 0 || i >= q->n) {
        PyErr_Format(PyExc_IndexError, "%s.%s index out of range",
                     cbs_short_name(Py_TYPE(q->owner)), q->field->name);
        return NULL;
    }
    return cbs_struct_driver_handle(q->owner, q->field, q->item, i);
}

/* An int index (negative from the end) or a slice: a list of that range. */
static PyObject *seq_subscript(PyObject *self, PyObject *key)
{
    handle_seq *q = (handle_seq *)self;
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        return seq_item(self, i < 0 ? i + q->n : i);
    }
    if (!PySlice_Check(key)) {
        PyErr_Format(PyExc_TypeError, "%s.%s indices must be integers or slices, not %.100s",
                     cbs_short_name(Py_TYPE(q->owner)), q->field->name, Py_TYPE(key)->tp_name);
        return NULL;
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return NULL;
    Py_ssize_t len = PySlice_AdjustIndices(q->n, &start, &stop, step);
    PyObject *list = PyList_New(len);
    for (Py_ssize_t k = 0; list && k < len; k++) {
        PyObject *h = seq_item(self, start + k * step);
        if (!h)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, h);
    }
    return list;
}

/* Like a list's, the first CBS_HANDLE_SEQ_REPR_ITEMS items only; while
 * the pointer is NULL (its items only NULL handles) it says so instead. */
static PyObject *seq_repr(PyObject *self)
{
    handle_seq *q = (handle_seq *)self;
    if (q->n == 0)
        return PyUnicode_FromString("[]");
    if (cbs_struct_pointer_is_null(q->owner, q->field))
        return PyUnicode_FromFormat("<%s.%s: %zd %s, not filled yet (NULL)>",
                                    cbs_short_name(Py_TYPE(q->owner)), q->field->name, q->n,
                                    cbs_short_name(q->item));
    PyObject *parts = PyList_New(0);
    Py_ssize_t shown = q->n < CBS_HANDLE_SEQ_REPR_ITEMS ? q->n : CBS_HANDLE_SEQ_REPR_ITEMS;
    for (Py_ssize_t i = 0; parts && i < shown; i++) {
        PyObject *h = seq_item(self, i);
        PyObject *r = h ? PyObject_Repr(h) : NULL;
        Py_XDECREF(h);
        if (!r || PyList_Append(parts, r) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(r);
    }
    if (!parts)
        return NULL;
    if (shown < q->n) {
        PyObject *more = PyUnicode_FromFormat("... (%zd in all)", q->n);
        if (!more || PyList_Append(parts, more) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(more);
        if (!parts)
            return NULL;
    }
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *body = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    PyObject *r = body ? PyUnicode_FromFormat("[%U]", body) : NULL;
    Py_XDECREF(body);
    return r;
}

/* == and != with a list or tuple of the same length: item by item (the
 * lengths first, so a different length builds nothing). Unfilled (NULL)
 * items are NULL handles. */
static PyObject *seq_richcompare(PyObject *self, PyObject *other, int op)
{
    handle_seq *q = (handle_seq *)self;
    if ((op != Py_EQ && op != Py_NE) || !(PyList_Check(other) || PyTuple_Check(other)))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *fast = PySequence_Tuple(other); /* a list may change meanwhile */
    if (!fast)
        return NULL;
    int eq = PyTuple_GET_SIZE(fast) == q->n;
    for (Py_ssize_t i = 0; eq == 1 && i < q->n; i++) {
        PyObject *h = seq_item(self, i);
        if (!h) {
            Py_DECREF(fast);
            return NULL;
        }
        eq = PyObject_RichCompareBool(h, PyTuple_GET_ITEM(fast, i), Py_EQ);
        Py_DECREF(h);
    }
    Py_DECREF(fast);
    if (eq < 0)
        return NULL;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

int cbs_handle_seq_type_create(PyObject *module)
{
    cbs_tables *tb = (cbs_tables *)PyModule_GetState(module);
    if (!tb)
        return -1;
    PyType_Slot slots[] = {
        {Py_tp_dealloc, (void *)seq_dealloc},
        {Py_tp_traverse, (void *)seq_traverse},
        {Py_tp_repr, (void *)seq_repr},
        {Py_tp_richcompare, (void *)seq_richcompare},
        {Py_tp_hash, (void *)PyObject_HashNotImplemented},
        {Py_sq_length, (void *)seq_length},
        {Py_sq_item, (void *)seq_item},
        {Py_mp_length, (void *)seq_length},
        {Py_mp_subscript, (void *)seq_subscript},
        {Py_tp_doc, (void *)"A driver-filled array of handles, read on access (read-only)."},
        {0, NULL},
    };
    PyType_Spec spec = {"cubind.HandleSequence", (int)sizeof(handle_seq), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                            Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_SEQUENCE,
                        slots};
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, NULL);
    if (!t)
        return -1;
    Py_XSETREF(tb->handle_seq, t);
    return 0;
}

PyObject *cbs_handle_seq_new(cbs_tables *tb, PyObject *s, const cbs_field_def *f,
                             PyTypeObject *item, Py_ssize_t n)
{
    if (!tb->handle_seq) {
        PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                     cbs_short_name(Py_TYPE(s)), f->name);
        return NULL;
    }
    handle_seq *q = PyObject_GC_New(handle_seq, tb->handle_seq);
    if (!q)
        return NULL;
    q->owner = Py_NewRef(s);
    q->item = (PyTypeObject *)Py_NewRef((PyObject *)item);
    q->field = f;
    q->n = n;
    PyObject_GC_Track((PyObject *)q);
    return (PyObject *)q;
}
