/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct.c — see bind_struct.h. Stateless: the classes and everything
 * they convert to belong to the calling module's state (cbs_tables).
 */
#include "bind_struct.h"

#include "bind_c_callback.h" /* cbs_funcptr_owned */
#include "bind_handle_seq.h"
#include "bind_ndarray.h" /* a counted array of ints as numpy's */
#include "bind_record.h"
#include "bind_struct_from.h" /* the from_* class methods */
#include "cubind_compat.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>



static cbs_tables *tables_of_type(PyTypeObject *t)
{
    cbs_tables *tb = (cbs_tables *)PyType_GetModuleState(t);
    if (!tb && !PyErr_Occurred())
        PyErr_SetString(PyExc_SystemError, "cubind: struct class without module state");
    return tb;
}

/* The def of one of a module's struct classes (types do not carry it:
 * instances do, so this runs once per construction). */
const cbs_struct_def *cbs_struct_def_of(PyTypeObject *t)
{
    if (!cbs_is_struct_type(t)) {
        PyErr_Format(PyExc_TypeError, "%.100s is not a cubind struct class", t->tp_name);
        return NULL;
    }
    cbs_tables *tb = tables_of_type(t);
    if (!tb)
        return NULL;
    for (size_t i = 0; i < tb->nstructs; i++)
        if (tb->structs && tb->structs[i] == t)
            return &tb->struct_defs[i];
    PyErr_Format(PyExc_TypeError, "%.100s is not a class of its module's tables", t->tp_name);
    return NULL;
}

/* ---- instances ----------------------------------------------------------- */

/* Owned storage: zeroed, aligned to def->align (PyMem is 16-aligned). */
static void *alloc_aligned(size_t size, size_t align, void **raw)
{
    size_t extra = align > 16 ? align - 1 : 0;
    unsigned char *p = PyMem_Calloc(1, (size ? size : 1) + extra);
    *raw = p;
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    if (extra) {
        uintptr_t a = ((uintptr_t)p + extra) & ~(uintptr_t)(align - 1);
        return (void *)a;
    }
    return p;
}

static void write_u(unsigned char *p, size_t size, unsigned long long bits);

/* What an owned record starts as: zeroed (alloc_aligned) but for its
 * version and field defaults. */
static void record_start(const cbs_struct_def *def, unsigned char *p)
{
    if (def->version) /* a versioned struct starts as its version */
        memcpy(p + def->version_offset, &def->version, sizeof def->version);
    for (size_t i = 0; i < def->ndefaults; i++) /* and its field defaults */
        write_u(p + def->defaults[i].offset, def->defaults[i].size, def->defaults[i].value);
}

/* A new instance of t described by def: a view of `data` inside `owner`'s
 * storage, foreign memory (data, no owner), or (data NULL) owned storage,
 * zeroed but for its version and field defaults. */
static cbs_struct *struct_make(PyTypeObject *t, const cbs_struct_def *def, unsigned char *data,
                               PyObject *owner)
{
    cbs_struct *s = (cbs_struct *)t->tp_alloc(t, 0);
    if (!s)
        return NULL;
    s->def = def;
    if (owner) {
        /* Views always hold the root, never another view. */
        cbs_struct *o = (cbs_struct *)owner;
        s->owner = Py_NewRef(o->owner ? o->owner : owner);
        s->data = data;
    } else if (data) {
        s->data = data;
    } else {
        void *raw;
        s->data = alloc_aligned(def->size, def->align, &raw);
        if (!s->data) {
            Py_DECREF(s);
            return NULL;
        }
        s->owns = 1;
        s->alloc = raw;
        record_start(def, s->data);
    }
    return s;
}

/* A new array root of class t (def): an owning instance of n >= 1
 * records (cbs_struct.nelems = n), zeroed, each record started
 * (record_start) when `start`. */
static cbs_struct *array_root(PyTypeObject *t, const cbs_struct_def *def, size_t n, int start)
{
    if (n > PY_SSIZE_T_MAX / def->size) {
        PyErr_NoMemory();
        return NULL;
    }
    cbs_struct *a = (cbs_struct *)t->tp_alloc(t, 0);
    if (!a)
        return NULL;
    void *raw;
    a->def = def;
    a->data = alloc_aligned(n * def->size, def->align, &raw);
    if (!a->data) {
        Py_DECREF(a);
        return NULL;
    }
    a->owns = 1;
    a->alloc = raw;
    a->nelems = n;
    for (size_t i = 0; start && i < n; i++)
        record_start(def, a->data + i * def->size);
    return a;
}

PyObject *cbs_struct_records(PyTypeObject *t, const cbs_struct_def *def, size_t n)
{
    if (n <= 1)
        return (PyObject *)struct_make(t, def, NULL, NULL);
    return (PyObject *)array_root(t, def, n, 1);
}

PyObject *cbs_struct_view(PyTypeObject *t, const cbs_struct_def *def, PyObject *of,
                          unsigned char *data)
{
    return (PyObject *)struct_make(t, def, data, of);
}

PyObject *cbs_struct_array_view(PyTypeObject *t, const cbs_struct_def *def, PyObject *of,
                                unsigned char *data, Py_ssize_t length)
{
    cbs_struct *v = struct_make(t, def, data, of);
    if (v) { /* not yet shared */
        v->sized = 1;
        v->length = length;
    }
    return (PyObject *)v;
}

static cbs_struct *root_of(cbs_struct *s)
{
    return s->owner ? (cbs_struct *)s->owner : s;
}

Py_ssize_t cbs_struct_array_len(PyObject *self)
{
    const cbs_struct *s = (const cbs_struct *)self;
    return s->sized ? s->length : s->nelems ? (Py_ssize_t)s->nelems : 1;
}

int cbs_struct_readonly(PyObject *s)
{
    return root_of((cbs_struct *)s)->readonly;
}

static int struct_traverse(PyObject *self, visitproc visit, void *arg)
{
    cbs_struct *s = (cbs_struct *)self;
    PyObject *keep = atomic_load_explicit(&s->keep, memory_order_acquire);
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(s->owner);
    Py_VISIT(s->base);
    Py_VISIT(keep);
    return 0;
}

/* Only `keep` is cleared: every reference cycle goes through a keep dict
 * (owner edges lead from views to roots, and roots have no owner) or
 * through a from_ptr owner (`base`, which the cycle's other objects clear),
 * and a view keeps its owner, a root its base (hence their data) until
 * deallocated. */
static int struct_clear(PyObject *self)
{
    cbs_struct *s = (cbs_struct *)self;
    PyObject *keep = atomic_exchange_explicit(&s->keep, NULL, memory_order_acq_rel);
    Py_XDECREF(keep);
    return 0;
}

/* ---- kept objects ------------------------------------------------------- */

/* The root's keep dict (borrowed), created on first use. */
static PyObject *keep_dict(cbs_struct *root)
{
    PyObject *d = atomic_load_explicit(&root->keep, memory_order_acquire);
    if (d)
        return d;
    PyObject *fresh = PyDict_New();
    if (!fresh)
        return NULL;
    PyObject *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&root->keep, &expected, fresh,
                                                memory_order_acq_rel, memory_order_acquire))
        return fresh;
    Py_DECREF(fresh);
    return expected;
}

/* Drops the entries of root's keep with offsets in [off, off + size). */
static int keep_drop(cbs_struct *root, size_t off, size_t size)
{
    PyObject *d = atomic_load_explicit(&root->keep, memory_order_acquire);
    if (!d)
        return 0;
    PyObject *keys = PyDict_Keys(d); /* a snapshot: the dict may be shared */
    if (!keys)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        size_t at = PyLong_AsSize_t(k);
        if (at == (size_t)-1 && PyErr_Occurred()) {
            Py_DECREF(keys);
            return -1;
        }
        if (at >= off && at - off < size && PyDict_DelItem(d, k) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_KeyError)) {
                Py_DECREF(keys);
                return -1;
            }
            PyErr_Clear();
        }
    }
    Py_DECREF(keys);
    return 0;
}

/* Appends (offset - off, object) for root's entries in [off, off + size)
 * to *out (a list created when needed). */
static int keep_collect(cbs_struct *root, size_t off, size_t size, PyObject **out)
{
    PyObject *d = atomic_load_explicit(&root->keep, memory_order_acquire);
    if (!d)
        return 0;
    PyObject *items = PyDict_Items(d);
    if (!items)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        size_t at = PyLong_AsSize_t(PyTuple_GET_ITEM(kv, 0));
        if (at == (size_t)-1 && PyErr_Occurred()) {
            rc = -1;
            break;
        }
        if (at < off || at - off >= size)
            continue;
        if (!*out && !(*out = PyList_New(0))) {
            rc = -1;
            break;
        }
        PyObject *e = Py_BuildValue("(nO)", (Py_ssize_t)(at - off), PyTuple_GET_ITEM(kv, 1));
        if (!e || PyList_Append(*out, e) < 0)
            rc = -1;
        Py_XDECREF(e);
    }
    Py_DECREF(items);
    return rc;
}

/* Adds (relative offset, object) entries at root offset off. */
static int keep_add(cbs_struct *root, size_t off, PyObject *entries)
{
    if (!entries)
        return 0;
    PyObject *d = keep_dict(root);
    if (!d)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        size_t rel = PyLong_AsSize_t(PyTuple_GET_ITEM(e, 0));
        if (rel == (size_t)-1 && PyErr_Occurred())
            return -1;
        PyObject *k = PyLong_FromSize_t(off + rel);
        int bad = !k || PyDict_SetItem(d, k, PyTuple_GET_ITEM(e, 1)) < 0;
        Py_XDECREF(k);
        if (bad)
            return -1;
    }
    return 0;
}

/* ---- raw integers ------------------------------------------------------- */


static long long read_s(const unsigned char *p, size_t size)
{
    switch (size) {
    case 1: { int8_t v; memcpy(&v, p, 1); return v; }
    case 2: { int16_t v; memcpy(&v, p, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void write_u(unsigned char *p, size_t size, unsigned long long bits)
{
    switch (size) {
    case 1: *p = (unsigned char)bits; break;
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: { uint64_t v = bits; memcpy(p, &v, 8); break; }
    }
}

/* Bit-fields: `width` bits starting `shift` bits after p, LSB first. */
static unsigned long long read_bits(const unsigned char *p, int shift, int width)
{
    unsigned long long v = 0;
    for (int i = 0; i < width; i++) {
        int b = shift + i;
        v |= (unsigned long long)((p[b / 8] >> (b % 8)) & 1) << i;
    }
    return v;
}

static void write_bits(unsigned char *p, int shift, int width, unsigned long long v)
{
    for (int i = 0; i < width; i++) {
        int b = shift + i;
        unsigned char mask = (unsigned char)(1u << (b % 8));
        if ((v >> i) & 1)
            p[b / 8] |= mask;
        else
            p[b / 8] &= (unsigned char)~mask;
    }
}

/* An enum's C type is signed when it has a negative value (as GCC does). */
static int enum_is_signed(const cbs_enum *e)
{
    return e->n > 0 && e->values[0] < 0;
}

/* ---- reading fields ------------------------------------------------------- */

static PyObject *load_bitfield(cbs_struct *s, const cbs_field_def *f, cbs_tables *tb)
{
    unsigned long long v = read_bits(s->data + f->offset, f->bit_offset, f->bit_width);
    int is_signed = f->kind == CBS_F_SIGNED ||
                    (f->kind == CBS_F_ENUM && enum_is_signed(&tb->enums[f->index]));
    long long sv = (long long)v;
    if (is_signed && f->bit_width < 64 && (v >> (f->bit_width - 1)) & 1)
        sv = (long long)(v | (~0ULL << f->bit_width));
    if (f->kind == CBS_F_ENUM)
        return cbs_enum_member(&tb->enums[f->index], is_signed ? sv : (long long)v);
    return is_signed ? PyLong_FromLongLong(sv) : PyLong_FromUnsignedLongLong(v);
}

/* Byte offset of field f of s in its root's storage (the keep dict's key). */
static size_t root_offset(cbs_struct *s, const cbs_field_def *f)
{
    cbs_struct *root = root_of(s);
    return (size_t)(s->data - root->data) + f->offset;
}

/* The object root keeps at byte offset off (a new reference), NULL
 * without an exception when none, with one on error. */
static PyObject *kept_at(cbs_struct *root, size_t off)
{
    PyObject *d = atomic_load_explicit(&root->keep, memory_order_acquire);
    if (!d)
        return NULL;
    PyObject *key = PyLong_FromSize_t(off);
    PyObject *o = NULL;
    int rc = key ? cbs_dict_get_ref(d, key, &o) : -1;
    Py_XDECREF(key);
    return rc > 0 ? o : NULL;
}

/* ---- a host node's Python callable (cubind_rt.h: cb_node) -------------------
 * A function-pointer field of the host-function shape (its aux: the
 * `void *` data field after it, gen/classify/classify_records.c) also
 * takes a Python callable. The field then keeps the runtime's node
 * capsule for it and holds the node trampoline; the data field holds the
 * capsule's id, and the capsule the userData given (the object and its C
 * value), so reading the fields gives back the callable and that value.
 * The capsule is immutable: setting userData makes a new one. Whatever
 * keeps the struct's objects (a copy of the record, the registry-keep
 * rules' graphs, nodes and executable graphs) keeps the capsule, and the
 * callable runs as long as one of them lives (rt_callbacks.h). */

/* The node capsule o is, or NULL. */
static cubind_node_cb *node_cb_of(PyObject *o)
{
    return o && PyCapsule_IsValid(o, CUBIND_NODE_CB_CAPSULE)
               ? PyCapsule_GetPointer(o, CUBIND_NODE_CB_CAPSULE)
               : NULL;
}

/* The node capsule function field f of s keeps (a new reference), NULL
 * when it keeps none. */
static PyObject *node_capsule_at(cbs_struct *s, const cbs_field_def *f)
{
    PyObject *o = kept_at(root_of(s), root_offset(s, f));
    if (o && !node_cb_of(o))
        Py_CLEAR(o);
    return o;
}

/* The function field whose data field is g (callback shape), or NULL. */
static const cbs_field_def *callback_fn_of(cbs_struct *s, const cbs_field_def *g)
{
    const cbs_struct_def *def = s->def;
    if (g < def->fields || g >= def->fields + def->nfields)
        return NULL;
    int gi = (int)(g - def->fields);
    for (size_t i = 0; i < def->nfields; i++)
        if (def->fields[i].kind == CBS_F_FUNCPTR && def->fields[i].aux == gi)
            return &def->fields[i];
    return NULL;
}

/* The function field of the callback pair field f belongs to: f itself
 * when it is a function field with a data field, its function field when
 * f is such a data field; NULL when f is in no pair. */
static const cbs_field_def *node_pair_fn(cbs_struct *s, const cbs_field_def *f)
{
    if (f->kind == CBS_F_FUNCPTR)
        return f->aux >= 0 ? f : NULL;
    return f->kind == CBS_F_POINTER ? callback_fn_of(s, f) : NULL;
}

/* The value of integer field c of s, negative values as 0. */
static unsigned long long count_of(cbs_struct *s, const cbs_field_def *c)
{
    const unsigned char *p = s->data + c->offset;
    if (c->kind == CBS_F_SIGNED) {
        long long n = read_s(p, c->size);
        return n > 0 ? (unsigned long long)n : 0;
    }
    return cbs_read_u(p, c->size);
}

/* Whether f is a fixed counted array (bind_struct.h: "Counted arrays"). */
static int fixed_counted(const cbs_field_def *f)
{
    return f->count > 0 && f->kind != CBS_F_CHARS && f->aux >= 0;
}

/* The elements of counted array f of s that its count field says are
 * valid, at most cap (a larger count is junk: clamped). */
static size_t counted_len(cbs_struct *s, const cbs_field_def *f, size_t cap)
{
    unsigned long long n = count_of(s, &s->def->fields[f->aux]);
    return n < cap ? (size_t)n : cap;
}

size_t cbs_struct_fixed_len(cbs_struct *s, const cbs_field_def *f)
{
    return fixed_counted(f) ? counted_len(s, f, f->count) : f->count;
}

/* Stores n into the count field of counted array f of s. */
static void store_count(cbs_struct *s, const cbs_field_def *f, size_t n)
{
    const cbs_field_def *c = &s->def->fields[f->aux];
    write_u(s->data + c->offset, c->size, (unsigned long long)n);
}

/* owned_array for field f of the record at root offset `base` of root. */
static PyObject *owned_array_at(cbs_struct *root, size_t base, const cbs_field_def *f,
                                const cbs_tables *tb, unsigned long long bits, size_t *n)
{
    PyObject *o = bits ? kept_at(root, base + f->offset) : NULL;
    if (!o)
        return NULL;
    if (f->kind == CBS_F_RECORD_ARRAY && cbs_is_struct_type(Py_TYPE(o)) &&
        (uintptr_t)((cbs_struct *)o)->data == bits) {
        cbs_struct *a = (cbs_struct *)o;
        if (a->nelems) {
            *n = a->nelems;
            return o;
        }
        /* a snake_case field set from its element class's array object
         * (set_pointer): that object's records */
        if (f->sets_count && Py_TYPE(o) == tb->structs[f->index]) {
            *n = (size_t)cbs_struct_array_len(o);
            return o;
        }
    }
    /* Only handles_make's arrays are bytes kept by a pointer field: the
     * other forms keep the caller's object (a buffer: its memoryview). */
    if (f->kind == CBS_F_HANDLE_ARRAY && PyBytes_CheckExact(o) && PyBytes_GET_SIZE(o) > 0 &&
        (uintptr_t)PyBytes_AS_STRING(o) == bits) {
        *n = (size_t)PyBytes_GET_SIZE(o) / f->elem_size;
        return o;
    }
    Py_DECREF(o);
    return NULL;
}

/* The array that CBS_F_RECORD_ARRAY or _HANDLE_ARRAY field f of s owns
 * (a new reference: an array root, a bytes object; for a snake_case
 * field, also the element class's array object it was set from) when the
 * field still points at it (it holds `bits`), its length in *n; NULL
 * without an exception when it owns none (set from an address, another
 * struct, None), NULL with one on error. */
static PyObject *owned_array(cbs_struct *s, const cbs_field_def *f, const cbs_tables *tb,
                             unsigned long long bits, size_t *n)
{
    cbs_struct *root = root_of(s);
    return owned_array_at(root, (size_t)(s->data - root->data), f, tb, bits, n);
}

/* A CBS_F_RECORD_ARRAY field: a list of views of the owned array; a
 * CBS_F_HANDLE_ARRAY field: a list of handles of its values; else the
 * address it holds, but NULL in a field whose count is hidden (sets_count:
 * a snake_case module's), which reads as an empty list, as cuda.bindings'
 * library structs read it. Such a field's owned array reads as
 * cuda.bindings reads it, of the count the library wrote back: records as
 * a view of the element class's array (one record: a view of it alone),
 * plain integers (placementIds) as a numpy array, where numpy imports. */
static PyObject *load_array(cbs_struct *s, const cbs_field_def *f, cbs_tables *tb)
{
    unsigned long long bits = cbs_read_u(s->data + f->offset, f->size);
    size_t n = 0;
    PyObject *o = owned_array(s, f, tb, bits, &n);
    if (!o && !PyErr_Occurred() && !bits && f->sets_count)
        return PyList_New(0);
    if (!o)
        return PyErr_Occurred() ? NULL : PyLong_FromUnsignedLongLong(bits);
    if (f->sets_count)
        n = counted_len(s, f, n); /* the count the library wrote back */
    int values = f->kind == CBS_F_HANDLE_ARRAY; /* else records */
    int ints = values && f->index < 0;          /* plain unsigned integers */
    if (!values && f->sets_count) {
        cbs_struct *a = (cbs_struct *)o;
        PyObject *v = n == 1 ? cbs_struct_view(Py_TYPE(a), a->def, o, a->data)
                             : cbs_struct_array_view(Py_TYPE(a), a->def, o, a->data,
                                                     (Py_ssize_t)n);
        Py_DECREF(o);
        return v;
    }
    if (ints && f->sets_count) {
        PyObject *a = cbs_ndarray_pointed(tb, (PyObject *)s, o,
                                          (unsigned char *)PyBytes_AS_STRING(o), f,
                                          (Py_ssize_t)n, cbs_struct_readonly((PyObject *)s));
        if (a || PyErr_Occurred()) {
            Py_DECREF(o);
            return a;
        }
    }
    PyTypeObject *ht = values && !ints ? tb->handles[f->index] : NULL;
    if (values && !ints && !ht) {
        Py_DECREF(o);
        PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                     cbs_short_name(Py_TYPE(s)), f->name);
        return NULL;
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *v;
        if (values) {
            const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(o) + i * f->elem_size;
            unsigned long long x = cbs_read_u(p, f->elem_size);
            v = ints ? PyLong_FromUnsignedLongLong(x) : cbs_handle_new(ht, x);
        } else {
            cbs_struct *a = (cbs_struct *)o;
            v = (PyObject *)struct_make(Py_TYPE(a), a->def, a->data + i * a->def->size, o);
        }
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    Py_DECREF(o);
    return list;
}

/* A CBS_F_HANDLE_OUT field: a lazy sequence (bind_handle_seq.h) of its
 * count field's number of handles of class t, each read from the array
 * the field points at when it is accessed. Invariant: reading the field
 * builds no handle, whatever the count says (a count of 2**31 with a NULL
 * pointer once built 2**31 handle objects of zeros; then, an empty list
 * that broke len() before cuGraphAddNode, as cuda.bindings gives `size`). */
static PyObject *load_driver_handles(cbs_struct *s, const cbs_field_def *f, PyTypeObject *t,
                                     cbs_tables *tb)
{
    unsigned long long n = count_of(s, &s->def->fields[f->aux]);
    if (n > (unsigned long long)PY_SSIZE_T_MAX / f->elem_size) {
        PyErr_Format(PyExc_ValueError, "%s.%s: its count %llu is more than an array can hold",
                     cbs_short_name(Py_TYPE(s)), f->name, n);
        return NULL;
    }
    return cbs_handle_seq_new(tb, (PyObject *)s, f, t, (Py_ssize_t)n);
}

/* One element of field f at p. */
static PyObject *load(cbs_struct *s, const cbs_field_def *f, unsigned char *p, cbs_tables *tb)
{
    switch (f->kind) {
    case CBS_F_SIGNED: return PyLong_FromLongLong(read_s(p, f->size));
    case CBS_F_UNSIGNED: return PyLong_FromUnsignedLongLong(cbs_read_u(p, f->size));
    case CBS_F_FLOAT: { float v; memcpy(&v, p, sizeof v); return PyFloat_FromDouble(v); }
    case CBS_F_DOUBLE: { double v; memcpy(&v, p, sizeof v); return PyFloat_FromDouble(v); }
    case CBS_F_ENUM: {
        const cbs_enum *e = &tb->enums[f->index];
        if (!e->type)
            break;
        long long v = enum_is_signed(e) ? read_s(p, f->size) : (long long)cbs_read_u(p, f->size);
        return cbs_enum_member(e, v);
    }
    case CBS_F_HANDLE:
    case CBS_F_VALUE_HANDLE:
        if (!tb->handles[f->index])
            break;
        return cbs_handle_new(tb->handles[f->index], cbs_read_u(p, f->size));
    case CBS_F_RECORD:
        if (!tb->structs[f->index])
            break;
        return (PyObject *)struct_make(tb->structs[f->index], &tb->struct_defs[f->index], p,
                                       (PyObject *)s);
    case CBS_F_POINTER:
    case CBS_F_FUNCPTR:
    case CBS_F_KERNEL_PARAMS:
    case CBS_F_KERNEL_EXTRA: return PyLong_FromUnsignedLongLong(cbs_read_u(p, f->size));
    case CBS_F_RECORD_ARRAY:
    case CBS_F_HANDLE_ARRAY: return load_array(s, f, tb);
    case CBS_F_HANDLE_OUT:
        if (!tb->handles[f->index])
            break;
        return load_driver_handles(s, f, tb->handles[f->index], tb);
    case CBS_F_CHARS:
        if (f->aux == 1) {
            const char *c = (const char *)p;
            return PyUnicode_DecodeUTF8(c, (Py_ssize_t)strnlen(c, f->count), "replace");
        }
        return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)f->count);
    case CBS_F_BYTES: return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)f->size);
    }
    PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                 cbs_short_name(Py_TYPE(s)), f->name);
    return NULL;
}

PyObject *cbs_struct_get(PyObject *self, void *closure)
{
    const cbs_field_def *f = (const cbs_field_def *)closure;
    cbs_struct *s = (cbs_struct *)self;
    cbs_tables *tb = tables_of_type(Py_TYPE(self));
    if (!tb)
        return NULL;
    if (f->bit_width >= 0)
        return load_bitfield(s, f, tb);
    unsigned char *p = s->data + f->offset;
    const cbs_field_def *fn = f->count != 0 ? NULL : node_pair_fn(s, f);
    if (fn) {
        /* a host node's callable: the callable, and the userData given */
        PyObject *cap = node_capsule_at(s, fn);
        cubind_node_cb *n = node_cb_of(cap);
        PyObject *v = !n         ? NULL
                      : fn == f ? Py_NewRef(n->callable)
                                : PyLong_FromUnsignedLongLong((unsigned long long)n->c_data);
        Py_XDECREF(cap);
        if (v || PyErr_Occurred())
            return v;
    }
    if (f->count == 0 || f->kind == CBS_F_CHARS)
        return load(s, f, p, tb);
    size_t len = cbs_struct_fixed_len(s, f);
    PyObject *list = PyList_New((Py_ssize_t)len);
    if (!list)
        return NULL;
    /* An array of records reads as copies of its elements, as cuda.bindings
     * reads one (cudaEglFrame.frame.pPitch): changing an element read does
     * not change the array; a lone nested record stays a view. */
    int copies = f->kind == CBS_F_RECORD && tb->structs[f->index];
    for (size_t i = 0; i < len; i++) {
        PyObject *v = copies ? cbs_struct_from(tb->structs[f->index], p + i * f->size)
                             : load(s, f, p + i * f->size, tb);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* ---- writing fields ------------------------------------------------------- */

static void field_type_error(cbs_struct *s, const cbs_field_def *f, const char *want, PyObject *v)
{
    PyErr_Format(PyExc_TypeError, "%s.%s must be %s, not %.100s", cbs_short_name(Py_TYPE(s)), f->name,
                 want, Py_TYPE(v)->tp_name);
}

/* A conversion's pending error, its message prefixed with "S.field". */
static void field_exception_naming(cbs_struct *s, const cbs_field_def *f)
{
    char what[256];
    snprintf(what, sizeof what, "%s.%s", cbs_short_name(Py_TYPE(s)), f->name);
    cbs_exception_naming(what);
}

/* An integer of `width` bits; TypeError / OverflowError naming the field. */
static int to_integer(cbs_struct *s, const cbs_field_def *f, PyObject *v, int is_signed, int width,
                      unsigned long long *out)
{
    PyObject *n = cbs_int_value(v); /* the drop-in rule, as for a parameter */
    if (!n) {
        if (PyErr_Occurred())
            field_exception_naming(s, f);
        else
            field_type_error(s, f, "an int", v);
        return -1;
    }
    int over = 0;
    if (is_signed) {
        long long x = PyLong_AsLongLongAndOverflow(n, &over);
        if (x == -1 && PyErr_Occurred())
            goto fail;
        long long max = width >= 64 ? LLONG_MAX : (long long)((1ULL << (width - 1)) - 1);
        long long min = width >= 64 ? LLONG_MIN : -max - 1;
        if (over || x < min || x > max)
            goto overflow;
        *out = (unsigned long long)x;
    } else {
        long long sx = PyLong_AsLongLongAndOverflow(n, &over);
        if (sx == -1 && PyErr_Occurred())
            goto fail;
        if (over < 0 || (over == 0 && sx < 0))
            goto overflow;
        unsigned long long x = PyLong_AsUnsignedLongLong(n);
        if (x == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                goto fail;
            PyErr_Clear();
            goto overflow;
        }
        if (width < 64 && x >> width)
            goto overflow;
        *out = x;
    }
    Py_DECREF(n);
    return 0;
overflow:
    PyErr_Format(PyExc_OverflowError, "%s.%s = %R does not fit in a %d-bit %s integer",
                 cbs_short_name(Py_TYPE(s)), f->name, n, width, is_signed ? "signed" : "unsigned");
fail:
    Py_DECREF(n);
    return -1;
}

static int to_enum(cbs_struct *s, const cbs_field_def *f, PyObject *v, const cbs_enum *e,
                   int width, unsigned long long *out)
{
    if (cbs_is_other_enum(v, e->type)) {
        char want[160];
        snprintf(want, sizeof want, "%s or int", cbs_short_name(e->type));
        field_type_error(s, f, want, v);
        return -1;
    }
    PyObject *n = cbs_enum_int_value(v);
    if (!n) {
        field_exception_naming(s, f);
        return -1;
    }
    int rc = to_integer(s, f, n, enum_is_signed(e), width, out);
    Py_DECREF(n);
    return rc;
}

/* An address for a pointer field, and the object that must stay alive for
 * it to remain valid (new reference, or NULL). */
static int to_pointer(cbs_struct *s, const cbs_field_def *f, PyObject *v, unsigned long long *out,
                      PyObject **keep)
{
    *keep = NULL;
    if (v == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_Check(v))
        return to_integer(s, f, v, 0, (int)(8 * f->size), out);
    if (f->kind == CBS_F_FUNCPTR) {
        /* As a function-pointer parameter takes it (cbs_funcptr_value): the
         * field's own class, a ctypes function pointer; never another
         * handle (its __index__ is no function the driver may call). */
        cbs_tables *tb = tables_of_type(Py_TYPE(s));
        if (!tb)
            return -1;
        PyTypeObject *own = f->index >= 0 ? tb->handles[f->index] : NULL;
        char where[160];
        snprintf(where, sizeof where, "%s.%s", cbs_short_name(Py_TYPE(s)), f->name);
        void *fp = NULL;
        int rc = cbs_funcptr_value(v, own, where, f->name, &fp);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            *out = (unsigned long long)(uintptr_t)fp;
            /* an object that owns the function's code (a ctypes function
             * pointer) is kept with the field, as a buffer is: its thunk
             * dies with it (bind_c_callback.h); an address is not */
            if (cbs_funcptr_owned(v, own))
                *keep = Py_NewRef(v);
            return 0;
        }
        char want[200];
        snprintf(want, sizeof want, "an int address, %s, a ctypes function pointer%s or None",
                 own ? cbs_short_name(own) : "a function pointer",
                 f->aux >= 0 ? ", a Python callable" : "");
        field_type_error(s, f, want, v);
        return -1;
    }
    /* A number (a float, a numpy scalar, a handle, an object with __int__)
     * set as a plain pointer is an address by its value, as cuda.bindings
     * 13.3.1 takes it, before its buffer (a numpy scalar has one); an
     * object whose __int__ raises TypeError (an array of more than one
     * item) is taken as a buffer. (For an array of structs or handles
     * cuda.bindings takes lists only: those keep cubind's forms.) */
    if (f->kind == CBS_F_POINTER && Py_TYPE(v)->tp_as_number &&
        Py_TYPE(v)->tp_as_number->nb_int) {
        PyObject *n = cbs_int_value(v);
        if (n) {
            int rc = to_integer(s, f, n, 0, (int)(8 * f->size), out);
            Py_DECREF(n);
            return rc;
        }
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
            field_exception_naming(s, f);
            return -1;
        }
        PyErr_Clear();
    }
    if (cbs_is_struct_type(Py_TYPE(v))) {
        *out = (unsigned long long)(uintptr_t)((cbs_struct *)v)->data;
        *keep = Py_NewRef(v);
        return 0;
    }
    PyObject *getptr;
    if (cbs_optional_attr(v, "getPtr", &getptr) < 0)
        return -1;
    if (getptr) {
        PyObject *addr = PyObject_CallNoArgs(getptr);
        Py_DECREF(getptr);
        if (!addr)
            return -1;
        int rc = to_integer(s, f, addr, 0, (int)(8 * f->size), out);
        Py_DECREF(addr);
        if (rc == 0)
            *keep = Py_NewRef(v);
        return rc;
    }
    if (PyObject_CheckBuffer(v)) {
        /* A memoryview holds the export: a bytearray cannot move while kept. */
        PyObject *mv = PyMemoryView_FromObject(v);
        if (!mv)
            return -1;
        Py_buffer *b = PyMemoryView_GET_BUFFER(mv);
        if (!PyBuffer_IsContiguous(b, 'A')) {
            Py_DECREF(mv);
            PyErr_Format(PyExc_ValueError, "%s.%s: the buffer must be contiguous",
                         cbs_short_name(Py_TYPE(s)), f->name);
            return -1;
        }
        *out = (unsigned long long)(uintptr_t)b->buf;
        *keep = mv;
        return 0;
    }
    if (PyIndex_Check(v))
        return to_integer(s, f, v, 0, (int)(8 * f->size), out);
    field_type_error(s, f,
                     f->kind == CBS_F_RECORD_ARRAY
                         ? "a list of structs, an int address, None, a struct, an object with "
                           "getPtr() or a buffer"
                     : f->kind == CBS_F_HANDLE_ARRAY && f->index < 0
                         ? "a list of ints, an int address, None, a struct, an object with "
                           "getPtr() or a buffer"
                     : f->kind == CBS_F_HANDLE_ARRAY
                         ? "a list of handles, an int address, None, a struct, an object with "
                           "getPtr() or a buffer"
                         : "an int address, None, a struct, an object with getPtr() or a buffer",
                     v);
    return -1;
}

/* A new array root of the element class of CBS_F_RECORD_ARRAY field f
 * holding copies of the records of seq (a tuple of at least one), which
 * keeps what each of them kept at that element's offset. TypeError naming
 * the field and the index of an item of another class. */
static cbs_struct *array_make(cbs_struct *s, const cbs_field_def *f, cbs_tables *tb,
                              PyObject *seq)
{
    PyTypeObject *t = tb->structs[f->index];
    const cbs_struct_def *def = &tb->struct_defs[f->index];
    size_t n = (size_t)PyTuple_GET_SIZE(seq), size = def->size;
    for (size_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, (Py_ssize_t)i);
        if (Py_TYPE(item) != t) {
            PyErr_Format(PyExc_TypeError, "%s.%s[%zu] must be %s, not %.100s",
                         cbs_short_name(Py_TYPE(s)), f->name, i, cbs_short_name(t),
                         Py_TYPE(item)->tp_name);
            return NULL;
        }
    }
    cbs_struct *a = array_root(t, def, n, 0); /* each record is a copy */
    if (!a)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        cbs_struct *src = (cbs_struct *)PyTuple_GET_ITEM(seq, (Py_ssize_t)i), *sroot = root_of(src);
        PyObject *entries = NULL;
        memcpy(a->data + i * size, src->data, size);
        int rc = keep_collect(sroot, (size_t)(src->data - sroot->data), size, &entries);
        if (rc == 0)
            rc = keep_add(a, i * size, entries);
        Py_XDECREF(entries);
        if (rc < 0) {
            Py_DECREF(a);
            return NULL;
        }
    }
    return a;
}

/* A new bytes object of n >= 1 zeroed values of CBS_F_HANDLE_ARRAY field
 * f of s, elem_size bytes each, aligned for them: the array such a field
 * owns (owned_array_at). */
static PyObject *handles_bytes(cbs_struct *s, const cbs_field_def *f, size_t n)
{
    size_t size = f->elem_size;
    if (n > PY_SSIZE_T_MAX / size)
        return PyErr_NoMemory();
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * size));
    if (!b)
        return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(b);
    if ((uintptr_t)p % size) {
        Py_DECREF(b);
        PyErr_Format(PyExc_SystemError, "%s.%s: a bytes object is not %zu-aligned",
                     cbs_short_name(Py_TYPE(s)), f->name, size);
        return NULL;
    }
    memset(p, 0, n * size);
    return b;
}

/* Whether o is a number with __index__ (a numpy integer), not an array
 * (a numpy array has __index__ too, for one item). */
static int index_number(PyObject *o)
{
    return PyIndex_Check(o) && !PySequence_Check(o);
}

/* A new bytes object holding the values of the handles of seq (a tuple of
 * at least one: instances of CBS_F_HANDLE_ARRAY field f's class t, or ints
 * that fit in elem_size bytes; t NULL: an array of plain integers, of
 * ints or index_number()s only), elem_size bytes each, aligned for them.
 * TypeError naming the field and the index of an item of another type. */
static PyObject *handles_make(cbs_struct *s, const cbs_field_def *f, PyTypeObject *t,
                              PyObject *seq)
{
    size_t n = (size_t)PyTuple_GET_SIZE(seq), size = f->elem_size;
    PyObject *b = handles_bytes(s, f, n);
    if (!b)
        return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(b);
    for (size_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, (Py_ssize_t)i);
        unsigned long long bits;
        if (t && cbs_handle_related(Py_TYPE(item), t)) {
            bits = cbs_handle_bits((const cbs_handle *)item);
        } else if (t ? PyLong_CheckExact(item) : PyLong_Check(item) || index_number(item)) {
            if (to_integer(s, f, item, 0, (int)(8 * size), &bits) < 0) {
                Py_DECREF(b);
                return NULL;
            }
        } else {
            PyErr_Format(PyExc_TypeError, "%s.%s[%zu] must be %s%sint, not %.100s",
                         cbs_short_name(Py_TYPE(s)), f->name, i, t ? cbs_short_name(t) : "",
                         t ? " or " : "", Py_TYPE(item)->tp_name);
            Py_DECREF(b);
            return NULL;
        }
        write_u(p + i * size, size, bits);
    }
    return b;
}

#ifdef Py_GIL_DISABLED
#define PUBLISH_LOCK(root) PyMutex_Lock(&(root)->publish)
#define PUBLISH_UNLOCK(root) PyMutex_Unlock(&(root)->publish)
#else
/* Under the GIL the section below runs no Python code (no deallocation:
 * the replaced object is released after it; no GC-tracked allocation),
 * so no other thread runs in it. */
#define PUBLISH_LOCK(root) ((void)(root))
#define PUBLISH_UNLOCK(root) ((void)(root))
#endif

/* One field's part of a publication: address `bits` stored in scalar
 * pointer field f (when `write`), and keep (stolen; NULL: none) made the
 * field's kept object (when `set_keep`); when `check`, only if the
 * field's kept object is still `expect` (borrowed; NULL: none). */
typedef struct {
    const cbs_field_def *f;
    unsigned long long bits;
    int write;
    PyObject *keep;
    int set_keep;
    int check;
    PyObject *expect;
} pub_slot;

/* Publishes n slots of fields of s as one step for the other callers of
 * this on s's root (see "Free-threading" in bind_struct.h): each kept
 * object is set before the addresses that need it, a dropped one removed
 * after them. On failure (-1), or when a checked field's kept object is
 * no longer the one expected (1: another thread published meanwhile; the
 * caller computes again), nothing changed. Replaced objects are released
 * last. */
static int publish_slots(cbs_struct *s, pub_slot *ps, int n)
{
    cbs_struct *root = root_of(s);
    PyObject *key[2] = {NULL, NULL}, *old[2] = {NULL, NULL};
    if (n < 1 || n > 2) { /* a caller's mistake: at most a pair */
        for (int i = 0; i < n; i++)
            Py_XDECREF(ps[i].keep);
        PyErr_SetString(PyExc_SystemError, "cubind: publish_slots takes 1 or 2 slots");
        return -1;
    }
    int any_keep = 0, rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        any_keep |= ps[i].set_keep && ps[i].keep;
        if (!(key[i] = PyLong_FromSize_t(root_offset(s, ps[i].f))))
            rc = -1;
    }
    PyObject *d = any_keep ? keep_dict(root) : atomic_load_explicit(&root->keep, memory_order_acquire);
    if (rc == 0 && any_keep && !d)
        rc = -1;
    if (rc == 0) {
        PUBLISH_LOCK(root);
        if (!d) /* made meanwhile by another publisher, whose kept objects count */
            d = atomic_load_explicit(&root->keep, memory_order_acquire);
        for (int i = 0; rc == 0 && i < n; i++)
            if ((ps[i].set_keep || ps[i].check) && d && cbs_dict_get_ref(d, key[i], &old[i]) < 0)
                rc = -1;
            else if (ps[i].check && old[i] != ps[i].expect)
                rc = 1;
        for (int i = 0; rc == 0 && i < n; i++)
            if (ps[i].set_keep && ps[i].keep)
                rc = PyDict_SetItem(d, key[i], ps[i].keep); /* before the address */
        for (int i = 0; rc == 0 && i < n; i++)
            if (ps[i].write)
                write_u(s->data + ps[i].f->offset, ps[i].f->size, ps[i].bits);
        for (int i = 0; rc == 0 && i < n; i++) {
            if (!ps[i].set_keep || ps[i].keep || !old[i] || PyDict_DelItem(d, key[i]) == 0)
                continue;
            /* KeyError: a copy of a record over this one dropped it already */
            if (PyErr_ExceptionMatches(PyExc_KeyError))
                PyErr_Clear();
            else
                rc = -1;
        }
        PUBLISH_UNLOCK(root);
    }
    for (int i = 0; i < n; i++) {
        Py_XDECREF(key[i]);
        Py_XDECREF(ps[i].keep);
        Py_XDECREF(old[i]);
    }
    return rc;
}

/* Stores address `bits` in the scalar pointer field f of s and makes keep
 * (stolen; NULL: none) the field's kept object (publish_slots). */
static int publish(cbs_struct *s, const cbs_field_def *f, unsigned long long bits, PyObject *keep)
{
    pub_slot one = {f, bits, 1, keep, 1, 0, NULL};
    return publish_slots(s, &one, 1);
}

/* The userData object and C value for a new capsule of data field g of s,
 * from the address `bits` it takes and the object kept for it (NULL: an
 * address, an int object made of it, None for NULL). New reference. */
static PyObject *node_data(unsigned long long bits, PyObject *kept)
{
    if (kept)
        return Py_NewRef(kept);
    return bits ? PyLong_FromUnsignedLongLong(bits) : Py_NewRef(Py_None);
}

/* fn field f of s (callback shape) set to Python callable v: a capsule
 * for v with the userData the struct holds now, published if the field
 * still keeps what that userData was read with (else read again). */
static int set_node_callable(cbs_struct *s, const cbs_field_def *f, PyObject *v, cbs_tables *tb)
{
    const cbs_field_def *g = &s->def->fields[f->aux];
    cbs_struct *root = root_of(s);
    for (;;) {
        PyObject *cur = kept_at(root, root_offset(s, f));
        if (!cur && PyErr_Occurred())
            return -1;
        cubind_node_cb *old = node_cb_of(cur);
        PyObject *data;
        unsigned long long c_data;
        if (old) {
            data = Py_NewRef(old->data);
            c_data = old->c_data;
        } else {
            PUBLISH_LOCK(root); /* the publishers' writes are made under it */
            c_data = cbs_read_u(s->data + g->offset, g->size);
            PUBLISH_UNLOCK(root);
            PyObject *kept = kept_at(root, root_offset(s, g));
            data = kept || !PyErr_Occurred() ? node_data(c_data, kept) : NULL;
            Py_XDECREF(kept);
        }
        PyObject *cap = data ? tb->rt->cb_node(v, data, (uintptr_t)c_data) : NULL;
        Py_XDECREF(data);
        if (!cap) {
            Py_XDECREF(cur);
            field_exception_naming(s, f);
            return -1;
        }
        pub_slot ps[2] = {
            {f, (unsigned long long)(uintptr_t)tb->rt->cb_trampoline(CUBIND_CB_NODE), 1, cap, 1,
             1, cur},
            {g, (unsigned long long)node_cb_of(cap)->id, 1, NULL, 0, 0, NULL},
        };
        int rc = publish_slots(s, ps, 2);
        Py_XDECREF(cur);
        if (rc != 1)
            return rc;
    }
}

/* publish() for field f, also keeping a node capsule's pair of fields
 * right: a function field set to an address (or a C function) while it
 * held a capsule gets its data field's own value back; a data field
 * whose function field holds a capsule gets a new capsule of the same
 * callable with this userData (the field keeps what it was set from,
 * the C slot the new id). Each is published only if the function field
 * still keeps what it kept when read (else read again), so a concurrent
 * setter of the pair never leaves the trampoline with another value. */
static int publish_callback(cbs_struct *s, const cbs_field_def *f, unsigned long long bits,
                            PyObject *keep, cbs_tables *tb)
{
    const cbs_field_def *fn = node_pair_fn(s, f);
    if (!fn)
        return publish(s, f, bits, keep);
    int rc;
    do {
        PyObject *cur = kept_at(root_of(s), root_offset(s, fn));
        if (!cur && PyErr_Occurred()) {
            rc = -1;
            break;
        }
        cubind_node_cb *old = node_cb_of(cur);
        if (fn == f) {
            pub_slot ps[2] = {{f, bits, 1, Py_XNewRef(keep), 1, 1, cur},
                              {&s->def->fields[f->aux], old ? old->c_data : 0, old != NULL,
                               NULL, 0, 0, NULL}};
            rc = publish_slots(s, ps, 2);
        } else if (!old) {
            pub_slot ps[2] = {{f, bits, 1, Py_XNewRef(keep), 1, 0, NULL},
                              {fn, 0, 0, NULL, 0, 1, cur}};
            rc = publish_slots(s, ps, 2);
        } else {
            PyObject *data = node_data(bits, keep);
            PyObject *cap = data ? tb->rt->cb_node(old->callable, data, (uintptr_t)bits) : NULL;
            Py_XDECREF(data);
            if (!cap) {
                field_exception_naming(s, f);
                rc = -1;
            } else {
                pub_slot ps[2] = {{f, (unsigned long long)node_cb_of(cap)->id, 1, Py_XNewRef(keep),
                                   1, 0, NULL},
                                  {fn, 0, 0, cap, 1, 1, cur}};
                rc = publish_slots(s, ps, 2);
            }
        }
        Py_XDECREF(cur);
    } while (rc == 1);
    Py_XDECREF(keep);
    return rc;
}

/* Whether v, set as counted array f of plain integers of a snake_case
 * class, is taken as the sequence of its values (as cuda.bindings takes
 * any sequence it can make a numpy array of: a numpy array, a range) and
 * not as memory to point at: a sequence that is no text, no bytes-like
 * object and no struct; a list or tuple is taken so by every array field. */
static int int_values(const cbs_field_def *f, PyObject *v)
{
    return f->kind == CBS_F_HANDLE_ARRAY && f->index < 0 && f->sets_count &&
           PySequence_Check(v) && !PyUnicode_Check(v) && !PyBytes_Check(v) &&
           !PyByteArray_Check(v) && !PyMemoryView_Check(v) && !cbs_is_struct_type(Py_TYPE(v));
}

/* A scalar CBS_F_POINTER, _FUNCPTR, _RECORD_ARRAY or _HANDLE_ARRAY field:
 * a list or tuple of records (RECORD_ARRAY) or handles (HANDLE_ARRAY), or
 * any pointer form (to_pointer). */
static int set_pointer(cbs_struct *s, const cbs_field_def *f, PyObject *v, cbs_tables *tb)
{
    unsigned long long bits = 0;
    PyObject *keep = NULL;
    int records = f->kind == CBS_F_RECORD_ARRAY, handles = f->kind == CBS_F_HANDLE_ARRAY;
    /* a hidden count follows the list set (its length) or None (0); an
     * address leaves it as it is */
    int counts = f->sets_count && (records || handles) && f->aux >= 0 && v == Py_None;
    Py_ssize_t nset = 0;
    if ((records || handles) && (PyList_Check(v) || PyTuple_Check(v) || int_values(f, v))) {
        if (records ? !tb->structs[f->index] : f->index >= 0 && !tb->handles[f->index]) {
            PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                         cbs_short_name(Py_TYPE(s)), f->name);
            return -1;
        }
        PyObject *seq = PySequence_Tuple(v);
        if (!seq)
            return -1;
        nset = PyTuple_GET_SIZE(seq);
        counts = f->sets_count && f->aux >= 0;
        if (PyTuple_GET_SIZE(seq) > 0) {
            if (records) {
                cbs_struct *a = array_make(s, f, tb, seq);
                keep = (PyObject *)a;
                bits = a ? (unsigned long long)(uintptr_t)a->data : 0;
            } else {
                keep = handles_make(s, f, f->index >= 0 ? tb->handles[f->index] : NULL, seq);
                bits = keep ? (unsigned long long)(uintptr_t)PyBytes_AS_STRING(keep) : 0;
            }
            if (!keep) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
    } else if (records && f->sets_count && f->aux >= 0 && Py_TYPE(v) == tb->structs[f->index]) {
        /* the element class's array object (what the field reads as):
         * its records, in place, and its length the count */
        keep = Py_NewRef(v);
        bits = (unsigned long long)(uintptr_t)((cbs_struct *)v)->data;
        nset = cbs_struct_array_len(v);
        counts = 1;
    } else if (to_pointer(s, f, v, &bits, &keep) < 0) {
        if (f->kind == CBS_F_FUNCPTR && f->aux >= 0 && PyCallable_Check(v) &&
            PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return set_node_callable(s, f, v, tb);
        }
        return -1;
    }
    if (publish_callback(s, f, bits, keep, tb) < 0)
        return -1;
    if (counts)
        store_count(s, f, (size_t)nset);
    return 0;
}

/* The field of struct object o whose C name is name; NULL when o is no
 * struct object or has none. */
static const cbs_field_def *field_named(PyObject *o, const char *name)
{
    if (!cbs_is_struct_type(Py_TYPE(o)))
        return NULL;
    const cbs_struct_def *def = ((cbs_struct *)o)->def;
    for (size_t i = 0; i < def->nfields; i++)
        if (strcmp(def->fields[i].name, name) == 0)
            return &def->fields[i];
    return NULL;
}

/* Field `field` (its C name) of struct object o when it is a counted
 * pointer array (a field-count rule's: of records or of handle values),
 * else NULL with SystemError: a rule the generator checked names it. */
static const cbs_field_def *counted_pointer_named(PyObject *o, const char *field)
{
    const cbs_field_def *f = field_named(o, field);
    if (!f || (f->kind != CBS_F_RECORD_ARRAY && f->kind != CBS_F_HANDLE_ARRAY) || f->count || f->aux < 0) {
        PyErr_Format(PyExc_SystemError, "cubind: %.100s has no counted array field %s",
                     Py_TYPE(o)->tp_name, field);
        return NULL;
    }
    return f;
}

/* Gives counted pointer array f of s a new zeroed array of n elements
 * that s owns (records of f's element class, or values of its elem_size
 * bytes), published as setting a list does; its count field is left as
 * it is. 0, or -1 with an exception. */
static int give_array(cbs_struct *s, const cbs_field_def *f, unsigned long long n)
{
    int records = f->kind == CBS_F_RECORD_ARRAY;
    cbs_tables *tb = tables_of_type(Py_TYPE(s));
    if (!tb)
        return -1;
    if (n > PY_SSIZE_T_MAX) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *keep;
    unsigned char *data;
    if (records) {
        if (!tb->structs[f->index]) {
            PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                         cbs_short_name(Py_TYPE(s)), f->name);
            return -1;
        }
        cbs_struct *a = array_root(tb->structs[f->index], &tb->struct_defs[f->index], (size_t)n, 1);
        keep = (PyObject *)a;
        data = a ? a->data : NULL;
    } else {
        keep = handles_bytes(s, f, (size_t)n);
        data = keep ? (unsigned char *)PyBytes_AS_STRING(keep) : NULL;
    }
    return !keep || publish(s, f, (unsigned long long)(uintptr_t)data, keep) < 0 ? -1 : 0;
}

int cbs_struct_fill(PyObject *o, const char *field, size_t *have)
{
    cbs_struct *s = (cbs_struct *)o;
    const cbs_field_def *f = counted_pointer_named(o, field);
    if (!f)
        return -1;
    unsigned long long n = count_of(s, &s->def->fields[f->aux]);
    if (n <= *have)
        return 0;
    /* the count field holds n already (the library wrote it) */
    if (give_array(s, f, n) < 0)
        return -1;
    *have = (size_t)n;
    return 1;
}

int cbs_arg_field_room(PyObject *o, const char *field, PyObject *value, const char *func,
                       const char *param)
{
    cbs_struct *s = (cbs_struct *)o;
    const cbs_field_def *f = counted_pointer_named(o, field);
    if (!f)
        return -1;
    const cbs_field_def *c = &s->def->fields[f->aux];
    /* at most what the count field holds (and what memory may hold) */
    unsigned long long most = c->size >= sizeof(unsigned long long) ? ULLONG_MAX
                                                                    : (1ULL << (8 * c->size)) - 1;
    if (c->kind == CBS_F_SIGNED)
        most >>= 1;
    unsigned long long n;
    if (cbs_arg_unsigned(value, most, func, param, "number of elements", &n) < 0)
        return -1;
    if (n == 0) {
        PyErr_Format(PyExc_ValueError, "%s(): argument '%s' must be at least 1", func, param);
        return -1;
    }
    if (give_array(s, f, n) < 0)
        return -1;
    store_count(s, f, (size_t)n);
    return 0;
}

/* Field `name` of struct object o when it is a scalar integer field (not
 * a bit-field): what an output's COUNT names; NULL when it is not. */
static const cbs_field_def *count_field_named(PyObject *o, const char *name)
{
    const cbs_field_def *c = field_named(o, name);
    return c && (c->kind == CBS_F_SIGNED || c->kind == CBS_F_UNSIGNED) && !c->count && c->bit_width < 0
               ? c
               : NULL;
}

PyObject *cbs_struct_field_head(PyObject *o, const char *field, const char *count)
{
    PyObject *v = PyObject_GetAttrString(o, field);
    const cbs_field_def *c = count ? count_field_named(o, count) : NULL;
    if (!v || !count)
        return v;
    if (!c) {
        Py_DECREF(v);
        PyErr_Format(PyExc_SystemError, "cubind: %.100s has no integer field %s", Py_TYPE(o)->tp_name, count);
        return NULL;
    }
    unsigned long long n = count_of((cbs_struct *)o, c);
    int records = cbs_is_struct_type(Py_TYPE(v));
    Py_ssize_t len = records ? cbs_struct_array_len(v) : PyObject_Length(v);
    if (len < 0) {
        Py_DECREF(v);
        return NULL;
    }
    if (n >= (unsigned long long)len)
        return v; /* all of it (a larger count is junk: clamped) */
    /* the first n: a view of the records that keeps v (and o) alive, or a
     * slice of a list or numpy array */
    PyObject *head = records ? cbs_struct_array_view(Py_TYPE(v), ((cbs_struct *)v)->def, v,
                                                     ((cbs_struct *)v)->data, (Py_ssize_t)n)
                             : PySequence_GetSlice(v, 0, (Py_ssize_t)n);
    Py_DECREF(v);
    return head;
}

/* The first `count` bytes of fixed array `field` of struct object o
 * (count: the C name of its integer field), clamped to the array's. */
static PyObject *field_bytes_head(PyObject *o, const char *field, const char *count)
{
    const cbs_field_def *f = field_named(o, field), *c = count_field_named(o, count);
    if (!f || f->count == 0 || f->bit_width >= 0 || !c) {
        PyErr_Format(PyExc_SystemError, "cubind: %.100s has no array %s counted by integer field %s",
                     Py_TYPE(o)->tp_name, field, count);
        return NULL;
    }
    cbs_struct *s = (cbs_struct *)o;
    size_t cap = f->size * f->count;
    unsigned long long n = count_of(s, c);
    return PyBytes_FromStringAndSize((const char *)s->data + f->offset,
                                     (Py_ssize_t)(n < cap ? (size_t)n : cap));
}

PyObject *cbs_struct_fields_tuple(PyObject *o, const char *const *items, size_t n)
{
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        const char *field = items[2 * i], *count = items[2 * i + 1];
        PyObject *v = count ? field_bytes_head(o, field, count) : PyObject_GetAttrString(o, field);
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
    }
    return t;
}

/* A kernel's handle from field k of s (an index into its field table;
 * -1: none), 0 when unset. */
static void *kernel_of(cbs_struct *s, int k)
{
    if (k < 0)
        return NULL;
    return (void *)(uintptr_t)cbs_read_u(s->data + s->def->fields[k].offset, s->def->fields[k].size);
}

/* kernelParams / extra: packs v like a launch would and detaches the
 * packed buffer: *owner (new) keeps it, *bits is the address the field
 * holds while owner lives. */
static int kernel_pack(cbs_struct *s, const cbs_field_def *f, PyObject *v, cbs_tables *tb,
                       unsigned long long *bits, PyObject **owner)
{
    char where[200];
    snprintf(where, sizeof where, "%s.%s", cbs_short_name(Py_TYPE(s)), f->name);
    cbs_packed pk;
    cbs_pack_init(&pk);
    int rc;
    if (f->kind == CBS_F_KERNEL_EXTRA) {
        rc = cbs_pack_extra(v, where, &pk);
    } else {
        int kern = 0;
        void *k = kernel_of(s, f->index);
        if (!k && f->aux >= 0) {
            k = kernel_of(s, f->aux);
            kern = k != NULL;
        }
        if (!k && cbs_pack_needs_kernel(v)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: plain values are typed by the kernel: set %s.%s%s%s first",
                         where, cbs_short_name(Py_TYPE(s)), s->def->fields[f->index].name,
                         f->aux >= 0 ? " or " : "", f->aux >= 0 ? s->def->fields[f->aux].name : "");
            return -1;
        }
        rc = cbs_pack_kernel_params(tb, v, k, NULL,
                                    kern ? CUBIND_REG_KERNEL_LAYOUT_KERN : CUBIND_REG_KERNEL_LAYOUT,
                                    NULL, 0, where, &pk); /* both faces' structs: warns only */
    }
    if (rc < 0) {
        cbs_pack_release(&pk);
        return -1;
    }
    void **params;
    *owner = cbs_pack_detach(&pk, &params);
    if (!*owner)
        return -1;
    *bits = (unsigned long long)(uintptr_t)params;
    return 0;
}

/* An element of a kernelParams / extra array field (a struct's scalar one
 * is set_kernel's): the address in buf, the owner in *entries. */
static int kernel_field(cbs_struct *s, const cbs_field_def *f, PyObject *v, unsigned char *buf,
                        cbs_tables *tb, PyObject **entries)
{
    unsigned long long bits;
    PyObject *owner;
    if (kernel_pack(s, f, v, tb, &bits, &owner) < 0)
        return -1;
    write_u(buf, f->size, bits);
    *entries = Py_BuildValue("[(iN)]", 0, owner);
    return *entries ? 0 : -1;
}

/* A scalar kernelParams / extra field: the address and its owner change
 * together under the root's lock, as every pointer field's (publish). */
static int set_kernel(cbs_struct *s, const cbs_field_def *f, PyObject *v, cbs_tables *tb)
{
    unsigned long long bits;
    PyObject *owner;
    if (kernel_pack(s, f, v, tb, &bits, &owner) < 0)
        return -1;
    return publish(s, f, bits, owner);
}

/* Converts v into buf (f->size bytes) for one element of f. *entries gets
 * the kept objects that go with the bytes, as a list of (offset relative to
 * the element, object), or stays NULL. */
/* A char array from a list or tuple of at most `count` ints, each a signed
 * or an unsigned char (-128..255, stored modulo 256 as cuda.bindings
 * does); zero-padded like bytes. It reads back as bytes (0..255). */
static int chars_from_ints(cbs_struct *s, const cbs_field_def *f, PyObject *v, unsigned char *buf)
{
    PyObject *items = PySequence_Tuple(v); /* a list may change while it is read */
    if (!items)
        return -1;
    Py_ssize_t len = PyTuple_GET_SIZE(items);
    int rc = -1;
    if ((size_t)len > f->count) {
        PyErr_Format(PyExc_ValueError, "%s.%s takes at most %zu items, not %zd",
                     cbs_short_name(Py_TYPE(s)), f->name, f->count, len);
        goto done;
    }
    memset(buf, 0, f->count);
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (!PyLong_Check(item)) {
            field_type_error(s, f, "bytes or a sequence of ints", item);
            goto done;
        }
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (x == -1 && PyErr_Occurred())
            goto done;
        if (overflow || x < -128 || x > 255) {
            PyErr_Format(PyExc_OverflowError, "%s.%s[%zd] = %R is not in -128..255",
                         cbs_short_name(Py_TYPE(s)), f->name, i, item);
            goto done;
        }
        buf[i] = (unsigned char)(x & 0xff);
    }
    rc = 0;
done:
    Py_DECREF(items);
    return rc;
}

/* The len bytes at src into a CHARS field (at most its n, zero-padded)
 * or a BYTES field (exactly its n) at buf: 0, or -1 with ValueError
 * naming the field. */
static int store_bytes(cbs_struct *s, const cbs_field_def *f, unsigned char *buf, size_t n,
                       const void *src, Py_ssize_t len)
{
    int bad = f->kind == CBS_F_CHARS ? (size_t)len > n : (size_t)len != n;
    if (bad) {
        PyErr_Format(PyExc_ValueError, "%s.%s takes %s%zu bytes, not %zd", cbs_short_name(Py_TYPE(s)),
                     f->name, f->kind == CBS_F_CHARS ? "at most " : "", n, len);
        return -1;
    }
    memset(buf, 0, n);
    memcpy(buf, src, (size_t)len);
    return 0;
}

static int convert(cbs_struct *s, const cbs_field_def *f, PyObject *v, unsigned char *buf,
                   cbs_tables *tb, PyObject **entries)
{
    unsigned long long bits;
    switch (f->kind) {
    case CBS_F_SIGNED:
    case CBS_F_UNSIGNED:
        if (to_integer(s, f, v, f->kind == CBS_F_SIGNED, (int)(8 * f->size), &bits) < 0)
            return -1;
        write_u(buf, f->size, bits);
        return 0;
    case CBS_F_FLOAT:
    case CBS_F_DOUBLE: {
        double d;
        int rc = cbs_float_value(v, &d);
        if (rc > 0)
            field_type_error(s, f, "a float", v);
        else if (rc < 0)
            field_exception_naming(s, f);
        if (rc)
            return -1;
        if (f->kind == CBS_F_DOUBLE) {
            memcpy(buf, &d, sizeof d);
            return 0;
        }
        if (isfinite(d) && (d > FLT_MAX || d < -FLT_MAX)) {
            PyErr_Format(PyExc_OverflowError, "%s.%s = %R does not fit in a float",
                         cbs_short_name(Py_TYPE(s)), f->name, v);
            return -1;
        }
        float x = (float)d;
        memcpy(buf, &x, sizeof x);
        return 0;
    }
    case CBS_F_ENUM:
        if (to_enum(s, f, v, &tb->enums[f->index], (int)(8 * f->size), &bits) < 0)
            return -1;
        write_u(buf, f->size, bits);
        return 0;
    case CBS_F_HANDLE:
    case CBS_F_VALUE_HANDLE:
        if (!tb->handles[f->index])
            break;
        if (cbs_arg_handle(v, tb->handles[f->index], cbs_short_name(Py_TYPE(s)), f->name, &bits) < 0)
            return -1;
        write_u(buf, f->size, bits);
        return 0;
    case CBS_F_RECORD: {
        PyTypeObject *t = tb->structs[f->index];
        if (!t)
            break;
        if (Py_TYPE(v) != t) {
            field_type_error(s, f, cbs_short_name(t), v);
            return -1;
        }
        cbs_struct *src = (cbs_struct *)v;
        memcpy(buf, src->data, f->size);
        cbs_struct *sroot = root_of(src);
        return keep_collect(sroot, (size_t)(src->data - sroot->data), f->size, entries);
    }
    case CBS_F_POINTER:
    case CBS_F_FUNCPTR:
    case CBS_F_RECORD_ARRAY:
    case CBS_F_HANDLE_ARRAY:
    case CBS_F_HANDLE_OUT: {
        PyObject *keep;
        if (to_pointer(s, f, v, &bits, &keep) < 0)
            return -1;
        write_u(buf, f->size, bits);
        if (keep) {
            *entries = Py_BuildValue("[(iN)]", 0, keep);
            if (!*entries)
                return -1;
        }
        return 0;
    }
    case CBS_F_KERNEL_PARAMS:
    case CBS_F_KERNEL_EXTRA:
        return kernel_field(s, f, v, buf, tb, entries);
    case CBS_F_CHARS:
    case CBS_F_BYTES: {
        size_t n = f->kind == CBS_F_CHARS ? f->count : f->size;
        if (f->kind == CBS_F_CHARS && (PyList_Check(v) || PyTuple_Check(v)))
            return chars_from_ints(s, f, v, buf);
        if (f->kind == CBS_F_CHARS && f->aux == 1 && PyUnicode_Check(v)) {
            Py_ssize_t len;
            const char *u = PyUnicode_AsUTF8AndSize(v, &len);
            return u ? store_bytes(s, f, buf, n, u, len) : -1;
        }
        /* A numpy scalar has a buffer, but it is a number, not bytes (as
         * cuda.bindings refuses it). */
        if (!PyObject_CheckBuffer(v) || PyUnicode_Check(v) ||
            (PyNumber_Check(v) && !PySequence_Check(v))) {
            field_type_error(s, f, "bytes", v);
            return -1;
        }
        Py_buffer b;
        if (PyObject_GetBuffer(v, &b, PyBUF_SIMPLE) < 0) {
            char what[256];
            snprintf(what, sizeof what, "%s.%s", cbs_short_name(Py_TYPE(s)), f->name);
            cbs_buffer_error_as_type_error(what, "bytes");
            return -1;
        }
        int rc = store_bytes(s, f, buf, n, b.buf, b.len);
        PyBuffer_Release(&b);
        return rc;
    }
    }
    PyErr_Format(PyExc_RuntimeError, "%s.%s: the module is being torn down",
                 cbs_short_name(Py_TYPE(s)), f->name);
    return -1;
}

static int set_bitfield(cbs_struct *s, const cbs_field_def *f, PyObject *v, cbs_tables *tb)
{
    unsigned long long bits;
    int rc;
    if (f->kind == CBS_F_ENUM)
        rc = to_enum(s, f, v, &tb->enums[f->index], f->bit_width, &bits);
    else
        rc = to_integer(s, f, v, f->kind == CBS_F_SIGNED, f->bit_width, &bits);
    if (rc < 0)
        return -1;
    write_bits(s->data + f->offset, f->bit_offset, f->bit_width, bits);
    return 0;
}

/* Kinds whose bytes can carry kept objects. */
static int carries_keep(cbs_field_kind k)
{
    return k == CBS_F_RECORD || k == CBS_F_POINTER || k == CBS_F_FUNCPTR ||
           k == CBS_F_RECORD_ARRAY || k == CBS_F_HANDLE_ARRAY || k == CBS_F_HANDLE_OUT ||
           k == CBS_F_KERNEL_PARAMS ||
           k == CBS_F_KERNEL_EXTRA;
}

int cbs_struct_set(PyObject *self, PyObject *value, void *closure)
{
    const cbs_field_def *f = (const cbs_field_def *)closure;
    cbs_struct *s = (cbs_struct *)self;
    if (!value) {
        PyErr_Format(PyExc_TypeError, "cannot delete %s.%s", cbs_short_name(Py_TYPE(s)), f->name);
        return -1;
    }
    if (root_of(s)->readonly) { /* from_ptr(readonly=True), a read-only buffer */
        PyErr_Format(PyExc_ValueError, "This %s instance is read-only (cannot set %s)",
                     cbs_short_name(Py_TYPE(s)), f->name);
        return -1;
    }
    cbs_tables *tb = tables_of_type(Py_TYPE(self));
    if (!tb)
        return -1;
    if (f->bit_width >= 0)
        return set_bitfield(s, f, value, tb);
    if (f->count == 0 && (f->kind == CBS_F_POINTER || f->kind == CBS_F_FUNCPTR ||
                          f->kind == CBS_F_RECORD_ARRAY || f->kind == CBS_F_HANDLE_ARRAY ||
                          f->kind == CBS_F_HANDLE_OUT))
        return set_pointer(s, f, value, tb);
    if (f->count == 0 && (f->kind == CBS_F_KERNEL_PARAMS || f->kind == CBS_F_KERNEL_EXTRA))
        return set_kernel(s, f, value, tb);

    int scalar = f->count == 0 || f->kind == CBS_F_CHARS;
    size_t n = scalar ? 1 : f->count;  /* the items given */
    size_t cap = n;                    /* the elements the field holds */
    size_t elem = f->kind == CBS_F_CHARS ? f->count : f->size;
    PyObject *seq = NULL;
    if (!scalar) {
        if (!PySequence_Check(value) || PyUnicode_Check(value)) {
            char want[64];
            snprintf(want, sizeof want, "a sequence of %zu items", n);
            field_type_error(s, f, want, value);
            return -1;
        }
        seq = cbs_sequence_tuple(value, "");
        if (!seq)
            return -1;
        if (fixed_counted(f)) {
            /* at most cap items, the rest zeroed, the count set */
            n = (size_t)PyTuple_GET_SIZE(seq);
            if (n > cap) {
                PyErr_Format(PyExc_ValueError, "%s.%s takes at most %zu items, not %zu",
                             cbs_short_name(Py_TYPE(s)), f->name, cap, n);
                Py_DECREF(seq);
                return -1;
            }
        } else if ((size_t)PyTuple_GET_SIZE(seq) != n) {
            /* IndexError, as cuda.bindings' (Cython's) array assignment */
            PyErr_Format(PyExc_IndexError, "%s.%s takes a sequence of %zu items, not %zd",
                         cbs_short_name(Py_TYPE(s)), f->name, n, PyTuple_GET_SIZE(seq));
            Py_DECREF(seq);
            return -1;
        }
    }
    /* Convert everything first: a failed assignment changes nothing, and
     * sources that alias the destination are read before it is written. */
    unsigned char small[64];
    unsigned char *buf = cap * elem <= sizeof small ? small : PyMem_Malloc(cap * elem);
    PyObject **entries = carries_keep(f->kind) ? PyMem_Calloc(cap, sizeof *entries) : NULL;
    int rc = -1;
    if (buf)
        memset(buf, 0, cap * elem);
    if (!buf || (carries_keep(f->kind) && !entries)) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *dummy = NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *item = scalar ? value : PyTuple_GET_ITEM(seq, (Py_ssize_t)i);
        if (convert(s, f, item, buf + i * elem, tb, entries ? &entries[i] : &dummy) < 0)
            goto done;
    }
    unsigned char *dst = s->data + f->offset;
    memcpy(dst, buf, cap * elem);
    if (fixed_counted(f))
        store_count(s, f, n);
    if (entries) {
        cbs_struct *root = root_of(s);
        size_t base = (size_t)(dst - root->data);
        if (keep_drop(root, base, cap * elem) < 0)
            goto done;
        for (size_t i = 0; i < n; i++)
            if (keep_add(root, base + i * elem, entries[i]) < 0)
                goto done;
    }
    rc = 0;
done:
    if (entries) {
        for (size_t i = 0; i < n; i++)
            Py_XDECREF(entries[i]);
        PyMem_Free(entries);
    }
    if (buf != small)
        PyMem_Free(buf);
    Py_XDECREF(seq);
    return rc;
}

/* ---- the class ------------------------------------------------------------ */

/* T(_ptr=0, **fields): _ptr (or the one positional argument) is an address
 * to wrap without owning it; 0 or absent allocates zeroed storage. */
PyObject *cbs_struct_new(PyTypeObject *t, PyObject *args, PyObject *kwds)
{
    const cbs_struct_def *def = cbs_struct_def_of(t);
    if (!def)
        return NULL;
    PyObject *ptr = NULL;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 positional argument (%zd given)",
                     cbs_short_name(t), nargs);
        return NULL;
    }
    if (nargs == 1)
        ptr = PyTuple_GET_ITEM(args, 0);
    if (kwds) {
        PyObject *kp = PyDict_GetItemString(kwds, "_ptr");
        if (kp && ptr) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '_ptr'",
                         cbs_short_name(t));
            return NULL;
        }
        if (kp)
            ptr = kp;
    }
    unsigned char *data = NULL;
    if (ptr && ptr != Py_None) {
        if (!PyIndex_Check(ptr)) {
            PyErr_Format(PyExc_TypeError, "%s(): _ptr must be an int address, not %.100s",
                         cbs_short_name(t), Py_TYPE(ptr)->tp_name);
            return NULL;
        }
        PyObject *n = PyNumber_Index(ptr);
        if (!n)
            return NULL;
        data = PyLong_AsVoidPtr(n);
        Py_DECREF(n);
        if (!data && PyErr_Occurred())
            return NULL;
    }
    return (PyObject *)struct_make(t, def, data, NULL);
}

int cbs_struct_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)args;
    cbs_struct *s = (cbs_struct *)self;
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
        if (cbs_keyword_is(key, "_ptr", 4) ||
            (s->def->constructors && cbs_keyword_is(key, "size", 4)))
            continue; /* tp_new's (bind_struct_array.c's for "size") */
        size_t i = 0;
        while (i < s->def->nfields &&
               !cbs_keyword_is(key, s->def->fields[i].name,
                               (Py_ssize_t)strlen(s->def->fields[i].name)))
            i++;
        if (i == s->def->nfields) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R",
                         cbs_short_name(Py_TYPE(self)), key);
            return -1;
        }
        if (cbs_struct_set(self, value, (void *)&s->def->fields[i]) < 0)
            return -1;
    }
    return 0;
}

/* One line of a repr: "name : text", a nested record's lines indented by
 * four spaces under "name :". Pointers print in hex, as cuda.bindings'. */
static PyObject *repr_line(PyObject *self, const cbs_field_def *f)
{
    PyObject *v = cbs_struct_get(self, (void *)f);
    if (!v) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return NULL;
        PyErr_Clear(); /* cuda.bindings prints a field it cannot read so */
        return PyUnicode_FromFormat("%s : <ValueError()>", f->name);
    }
    PyObject *text = NULL;
    if (f->count == 0 && f->bit_width < 0 && (f->kind == CBS_F_POINTER || f->kind == CBS_F_FUNCPTR))
        text = PyNumber_ToBase(v, 16);
    else
        text = PyObject_Str(v);
    Py_DECREF(v);
    if (!text)
        return NULL;
    PyObject *line = NULL;
    if (f->kind == CBS_F_RECORD && f->count == 0) {
        PyObject *lines = PyUnicode_Splitlines(text, 0);
        PyObject *sep = PyUnicode_FromString("\n    ");
        PyObject *body = lines && sep ? PyUnicode_Join(sep, lines) : NULL;
        if (body)
            line = PyUnicode_GET_LENGTH(body) ? PyUnicode_FromFormat("%s :\n    %U", f->name, body)
                                              : PyUnicode_FromFormat("%s :", f->name);
        Py_XDECREF(lines);
        Py_XDECREF(sep);
        Py_XDECREF(body);
    } else {
        line = PyUnicode_FromFormat("%s : %U", f->name, text);
    }
    Py_DECREF(text);
    return line;
}

/* cuda.bindings' format: one "field : value" line per field. */
PyObject *cbs_struct_repr(PyObject *self)
{
    cbs_struct *s = (cbs_struct *)self;
    PyObject *lines = PyList_New(0);
    if (!lines)
        return NULL;
    for (size_t i = 0; i < s->def->nfields; i++) {
        PyObject *line = repr_line(self, &s->def->fields[i]);
        if (!line || PyList_Append(lines, line) < 0) {
            Py_XDECREF(line);
            Py_DECREF(lines);
            return NULL;
        }
        Py_DECREF(line);
    }
    PyObject *sep = PyUnicode_FromString("\n");
    PyObject *r = sep ? PyUnicode_Join(sep, lines) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(lines);
    return r;
}

static PyObject *struct_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b))
        Py_RETURN_NOTIMPLEMENTED;
    const cbs_struct *x = (const cbs_struct *)a, *y = (const cbs_struct *)b;
    int eq = memcmp(x->data, y->data, x->def->size) == 0;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *struct_getptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr(((cbs_struct *)self)->data);
}

PyObject *cbs_struct_get_ptr(PyObject *self, void *closure)
{
    (void)closure;
    return struct_getptr(self, NULL);
}

#define CBS_GETPTR_METHOD                                                                    \
    {"getPtr", struct_getptr, METH_NOARGS, "Address of the C struct this object holds or views."}
#define CBS_FROM_METHOD(name, doc)                                                             \
    {#name, (PyCFunction)(void (*)(void))cbs_struct_##name,                                   \
     METH_CLASS | METH_FASTCALL | METH_KEYWORDS, doc}

static PyMethodDef struct_methods[] = {
    CBS_GETPTR_METHOD,
    {NULL, NULL, 0, NULL},
};

/* A class with cbs_struct_def.constructors: bind_struct_from.h. */
static PyMethodDef struct_methods_from[] = {
    CBS_GETPTR_METHOD,
    CBS_FROM_METHOD(from_ptr, "from_ptr(ptr, readonly=False, owner=None)\n--\n\n"
                              "A copy of the struct at address ptr, or (owner given) a view "
                              "of it that keeps owner alive."),
    CBS_FROM_METHOD(from_buffer, "from_buffer(buffer)\n--\n\n"
                                 "A view of a buffer of exactly the struct's size."),
    CBS_FROM_METHOD(from_data, "from_data(data)\n--\n\n"
                               "A view of an object with the buffer protocol (a one-element "
                               "numpy array) of exactly the struct's size."),
    {NULL, NULL, 0, NULL},
};

/* A field table that does not match the module's tables is a generator
 * bug: refuse it at import rather than index out of bounds later. */
static int check_fields(const cbs_tables *tb, const cbs_struct_def *def)
{
    for (size_t i = 0; i < def->nfields; i++) {
        const cbs_field_def *f = &def->fields[i];
        size_t limit = f->kind == CBS_F_ENUM                                        ? tb->nenums
                       : f->kind == CBS_F_HANDLE || f->kind == CBS_F_VALUE_HANDLE ? tb->nhandles
                       : f->kind == CBS_F_RECORD                                  ? tb->nstructs
                                                                                  : 0;
        int bad = limit ? f->index < 0 || (size_t)f->index >= limit : 0;
        if (f->kind == CBS_F_KERNEL_PARAMS)
            bad |= f->index < 0 || (size_t)f->index >= def->nfields ||
                   f->aux >= (int)def->nfields || f->aux < -1 || f->size != sizeof(void *);
        bad |= f->kind == CBS_F_KERNEL_EXTRA && f->size != sizeof(void *);
        bad |= f->kind == CBS_F_FUNCPTR &&
               (f->size != sizeof(void *) || f->index < -1 || f->index >= (int)tb->nhandles);
        /* a host node's function: aux, its data field, a scalar pointer */
        bad |= f->kind == CBS_F_FUNCPTR && f->aux != -1 &&
               (f->count != 0 || f->aux < 0 || (size_t)f->aux >= def->nfields ||
                def->fields[f->aux].kind != CBS_F_POINTER || def->fields[f->aux].count != 0 ||
                def->fields[f->aux].size != sizeof(void *));
        if (f->kind == CBS_F_RECORD_ARRAY || f->kind == CBS_F_HANDLE_ARRAY ||
            f->kind == CBS_F_HANDLE_OUT) {
            size_t ntab = f->kind == CBS_F_RECORD_ARRAY ? tb->nstructs : tb->nhandles;
            size_t es = f->elem_size;
            const cbs_field_def *c = f->aux >= 0 && (size_t)f->aux < def->nfields
                                         ? &def->fields[f->aux]
                                         : NULL;
            /* index -1: an array of plain unsigned integers */
            int ints = f->kind == CBS_F_HANDLE_ARRAY && f->index == -1;
            bad |= (!ints && (f->index < 0 || (size_t)f->index >= ntab)) ||
                   f->size != sizeof(void *) ||
                   f->count != 0 || f->aux < -1 || (size_t)f->aux >= def->nfields ||
                   (f->kind == CBS_F_HANDLE_OUT && !c) ||
                   (c && ((c->kind != CBS_F_SIGNED && c->kind != CBS_F_UNSIGNED) || c->count ||
                          c->bit_width >= 0 || c->size > 8));
            bad |= f->kind == CBS_F_RECORD_ARRAY
                       ? es != 0
                       : es != 1 && es != 2 && es != 4 && es != 8;
        }
        /* a fixed counted array's count: an integer field, not itself */
        const cbs_field_def *fc = fixed_counted(f) && (size_t)f->aux < def->nfields
                                      ? &def->fields[f->aux]
                                      : NULL;
        bad |= fixed_counted(f) &&
               (!fc || fc == f || (fc->kind != CBS_F_SIGNED && fc->kind != CBS_F_UNSIGNED) ||
                fc->count || fc->bit_width >= 0 || fc->size > 8 || !f->sets_count);
        bad |= f->sets_count && !fixed_counted(f) &&
               ((f->kind != CBS_F_RECORD_ARRAY && f->kind != CBS_F_HANDLE_ARRAY) || f->aux < 0);
        bad |= f->size == 0 && f->kind != CBS_F_CHARS;
        bad |= f->bit_width > 64 || (f->bit_width >= 0 && f->kind != CBS_F_SIGNED &&
                                     f->kind != CBS_F_UNSIGNED && f->kind != CBS_F_ENUM);
        if (bad) {
            PyErr_Format(PyExc_SystemError, "%s.%s: field table does not match the module",
                         def->qualname, f->name);
            return -1;
        }
    }
    for (size_t k = 0; k < def->nextents; k++) {
        const cbs_host_extent *e = &def->extents[k];
        int bad = e->buffer < 0 || (size_t)e->buffer >= def->nfields ||
                  def->fields[e->buffer].kind != CBS_F_POINTER || def->fields[e->buffer].count;
        for (int t = 0; t < CBS_HB_NTERMS; t++) {
            const cbs_field_def *f = e->terms[t] >= 0 && (size_t)e->terms[t] < def->nfields
                                         ? &def->fields[e->terms[t]]
                                         : NULL;
            bad |= e->terms[t] < -1 || (size_t)(e->terms[t] + 1) > def->nfields ||
                   (f && ((f->kind != CBS_F_SIGNED && f->kind != CBS_F_UNSIGNED) || f->count ||
                          f->bit_width >= 0 || f->size > 8));
        }
        const cbs_field_def *w = e->when >= 0 && (size_t)e->when < def->nfields
                                     ? &def->fields[e->when]
                                     : NULL;
        bad |= e->when < -1 || (size_t)(e->when + 1) > def->nfields ||
               (w && (w->kind != CBS_F_ENUM || w->count || w->bit_width >= 0 || w->size > 8));
        if (bad) {
            PyErr_Format(PyExc_SystemError, "%s: host extent %zu does not match the module",
                         def->qualname, k);
            return -1;
        }
    }
    return 0;
}

PyTypeObject *cbs_struct_type_create(PyObject *module, const cbs_struct_def *def)
{
    return cbs_struct_type_create_with(module, def, NULL);
}

PyTypeObject *cbs_struct_type_create_with(PyObject *module, const cbs_struct_def *def,
                                          const PyType_Slot *extra)
{
    const cbs_tables *tb = (const cbs_tables *)PyModule_GetState(module);
    if (!tb || check_fields(tb, def) < 0)
        return NULL;
    enum { NBASE = 11, NEXTRA = 8 };
    PyType_Slot slots[NBASE + NEXTRA + 1] = {
        {Py_tp_new, (void *)cbs_struct_new},
        {Py_tp_init, (void *)cbs_struct_init},
        {Py_tp_dealloc, (void *)cbs_record_dealloc},
        {Py_tp_traverse, (void *)struct_traverse},
        {Py_tp_clear, (void *)struct_clear},
        {Py_tp_repr, (void *)cbs_struct_repr},
        {Py_tp_richcompare, (void *)struct_richcompare},
        {Py_tp_hash, (void *)PyObject_HashNotImplemented},
        {Py_tp_methods, def->constructors ? struct_methods_from : struct_methods},
        {Py_tp_getset, def->getset},
        {Py_tp_doc, (void *)def->doc},
    };
    /* extra's slots replace those of the same id or follow them */
    size_t n = NBASE;
    for (size_t k = 0; extra && extra[k].slot; k++) {
        size_t j = 0;
        while (j < n && slots[j].slot != extra[k].slot)
            j++;
        if (j == n && n == NBASE + NEXTRA) {
            PyErr_Format(PyExc_SystemError, "%s: too many extra type slots", def->qualname);
            return NULL;
        }
        slots[j] = extra[k];
        n += j == n;
    }
    slots[n] = (PyType_Slot){0, NULL};
    PyType_Spec spec = {def->qualname, (int)sizeof(cbs_struct), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC, slots};
    return (PyTypeObject *)PyType_FromModuleAndSpec(module, &spec, NULL);
}

/* ---- for the function marshalling code ------------------------------------ */

/* The checks of cbs_arg_struct (bind_struct.h: "Checks at every depth"):
 * one walk over a record and what it nests, the path of the record being
 * checked in `path` for messages. */
typedef struct {
    const char *func, *param;
    cbs_tables *tb;
    char path[512];
} check_walk;

static int check_record(check_walk *w, cbs_struct *root, unsigned char *data,
                        const cbs_struct_def *def);

/* The value of integer field f of the record at data, as unsigned; a
 * negative value of a signed field gives ULLONG_MAX (nothing holds it). */
static unsigned long long field_uint(const unsigned char *data, const cbs_field_def *f)
{
    const unsigned char *p = data + f->offset;
    if (f->kind == CBS_F_SIGNED && read_s(p, f->size) < 0)
        return ULLONG_MAX;
    return cbs_read_u(p, f->size);
}

/* a * b + c, ULLONG_MAX when it overflows. */
static unsigned long long mul_add(unsigned long long a, unsigned long long b,
                                  unsigned long long c)
{
    unsigned long long r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
        return ULLONG_MAX;
    return r;
}

/* The bytes the call touches through extent e of the record at data. */
static unsigned long long extent_bytes(const unsigned char *data, const cbs_struct_def *def,
                                       const cbs_host_extent *e)
{
    unsigned long long t[CBS_HB_NTERMS];
    for (int k = 0; k < CBS_HB_NTERMS; k++)
        t[k] = e->terms[k] >= 0 ? field_uint(data, &def->fields[e->terms[k]])
               : k == CBS_HB_ROWS || k == CBS_HB_DEPTH ? 1
               : k == CBS_HB_SIZE ? e->size : 0;
    if (!t[CBS_HB_SIZE] || !t[CBS_HB_ROWS] || !t[CBS_HB_DEPTH])
        return 0;
    /* the last row touched: (z + depth - 1) * slice + y + rows - 1 */
    unsigned long long row = mul_add(t[CBS_HB_Z] + (t[CBS_HB_DEPTH] - 1), t[CBS_HB_SLICE],
                                     t[CBS_HB_Y]);
    if (t[CBS_HB_Z] > ULLONG_MAX - (t[CBS_HB_DEPTH] - 1) || row > ULLONG_MAX - (t[CBS_HB_ROWS] - 1))
        return ULLONG_MAX;
    row += t[CBS_HB_ROWS] - 1;
    unsigned long long first = mul_add(row, t[CBS_HB_PITCH], t[CBS_HB_X]);
    return first > ULLONG_MAX - t[CBS_HB_SIZE] ? ULLONG_MAX : first + t[CBS_HB_SIZE];
}

/* Host extent e of the record at root offset base (data): the buffer its
 * field was set from, while the field points into it, holds the bytes the
 * call touches and is writable where the call writes. */
static int check_extent(check_walk *w, cbs_struct *root, unsigned char *data,
                        const cbs_struct_def *def, const cbs_host_extent *e)
{
    if (e->when >= 0) {
        const unsigned char *p = data + def->fields[e->when].offset;
        size_t size = def->fields[e->when].size;
        if (read_s(p, size) != e->when_value && (long long)cbs_read_u(p, size) != e->when_value)
            return 0;
    }
    const cbs_field_def *f = &def->fields[e->buffer];
    unsigned long long bits = cbs_read_u(data + f->offset, f->size);
    PyObject *o = bits ? kept_at(root, (size_t)(data - root->data) + f->offset) : NULL;
    if (!o)
        return PyErr_Occurred() ? -1 : 0;
    int rc = 0;
    if (cbs_is_struct_type(Py_TYPE(o)) && (uintptr_t)((cbs_struct *)o)->data == bits) {
        /* a struct set as the address: its bytes (to the end of the array
         * it is an element of) hold what the call touches */
        const cbs_struct *held = (const cbs_struct *)o;
        const cbs_struct *r = held->owner ? (const cbs_struct *)held->owner : held;
        size_t have = held->def->size;
        if (r->nelems && r->def == held->def && held->data >= r->data &&
            held->data < r->data + r->nelems * r->def->size)
            have = (size_t)(r->data + r->nelems * r->def->size - held->data);
        unsigned long long need = extent_bytes(data, def, e);
        if ((unsigned long long)have < need) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): argument '%s': %s.%s is a %s of %zu bytes, fewer than the %llu the "
                         "call %s", w->func, w->param, w->path, f->name,
                         cbs_short_name(Py_TYPE(o)), have, need, e->writes ? "writes" : "reads");
            rc = -1;
        }
    } else if (PyMemoryView_Check(o) && (uintptr_t)PyMemoryView_GET_BUFFER(o)->buf == bits) {
        const Py_buffer *b = PyMemoryView_GET_BUFFER(o);
        unsigned long long need = extent_bytes(data, def, e);
        if (e->writes && b->readonly) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument '%s': %s.%s is a read-only buffer and the call writes "
                         "to it", w->func, w->param, w->path, f->name);
            rc = -1;
        } else if ((unsigned long long)b->len < need) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): argument '%s': %s.%s has %zd bytes, fewer than the %llu the call "
                         "%s", w->func, w->param, w->path, f->name, b->len, need,
                         e->writes ? "writes" : "reads");
            rc = -1;
        }
    }
    Py_DECREF(o);
    return rc;
}

/* Counted array field f of the record at data: its count against the
 * array the field owns (then the checks of the records of that array the
 * count covers) or the buffer it was set from. */
static int check_array(check_walk *w, cbs_struct *root, unsigned char *data,
                       const cbs_struct_def *def, const cbs_field_def *f)
{
    unsigned long long bits = cbs_read_u(data + f->offset, f->size);
    const cbs_field_def *c = &def->fields[f->aux];
    unsigned long long n = field_uint(data, c);
    if (c->kind == CBS_F_SIGNED && n == ULLONG_MAX)
        n = 0; /* a negative count: nothing to read */
    size_t base = (size_t)(data - root->data), have = 0;
    PyObject *o = owned_array_at(root, base, f, w->tb, bits, &have);
    if (!o && PyErr_Occurred())
        return -1;
    if (o) {
        int rc = 0;
        if (n > have) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): argument '%s': %s.%s is %llu but %s.%s holds %zu element%s",
                         w->func, w->param, w->path, c->name, n, w->path, f->name, have,
                         have == 1 ? "" : "s");
            rc = -1;
        }
        const cbs_struct_def *ed = f->kind == CBS_F_RECORD_ARRAY ? &w->tb->struct_defs[f->index]
                                                                : NULL;
        /* the driver reads the first n records (n <= have once checked):
         * those are checked, the spare records past them are not */
        size_t len = strlen(w->path);
        for (size_t i = 0; rc == 0 && ed && ed->checked && i < have && i < n; i++) {
            cbs_struct *a = (cbs_struct *)o;
            snprintf(w->path + len, sizeof w->path - len, ".%s[%zu]", f->name, i);
            rc = check_record(w, a, a->data + i * ed->size, ed);
        }
        w->path[len] = '\0';
        Py_DECREF(o);
        return rc;
    }
    o = bits ? kept_at(root, base + f->offset) : NULL;
    if (!o)
        return PyErr_Occurred() ? -1 : 0;
    int rc = 0;
    size_t elem = f->kind == CBS_F_RECORD_ARRAY ? w->tb->struct_defs[f->index].size : f->elem_size;
    if (PyMemoryView_Check(o) && (uintptr_t)PyMemoryView_GET_BUFFER(o)->buf == bits &&
        n > (unsigned long long)PyMemoryView_GET_BUFFER(o)->len / elem) {
        PyErr_Format(PyExc_ValueError,
                     "%s(): argument '%s': %s.%s is %llu but %s.%s is a buffer of %zd bytes, "
                     "fewer than the %llu those elements take", w->func, w->param, w->path,
                     c->name, n, w->path, f->name, PyMemoryView_GET_BUFFER(o)->len,
                     mul_add(n, elem, 0));
        rc = -1;
    }
    Py_DECREF(o);
    return rc;
}

static int check_fields_of(check_walk *w, cbs_struct *root, unsigned char *data,
                           const cbs_struct_def *def)
{
    for (size_t k = 0; k < def->nextents; k++)
        if (check_extent(w, root, data, def, &def->extents[k]) < 0)
            return -1;
    size_t len = strlen(w->path);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < def->nfields; i++) {
        const cbs_field_def *f = &def->fields[i];
        if ((f->kind == CBS_F_RECORD_ARRAY || f->kind == CBS_F_HANDLE_ARRAY) && f->aux >= 0) {
            rc = check_array(w, root, data, def, f);
        } else if (f->kind == CBS_F_RECORD && w->tb->struct_defs[f->index].checked) {
            size_t n = f->count ? f->count : 1;
            for (size_t e = 0; rc == 0 && e < n; e++) {
                if (f->count)
                    snprintf(w->path + len, sizeof w->path - len, ".%s[%zu]", f->name, e);
                else
                    snprintf(w->path + len, sizeof w->path - len, ".%s", f->name);
                rc = check_record(w, root, data + f->offset + e * f->size,
                                  &w->tb->struct_defs[f->index]);
            }
            w->path[len] = '\0';
        }
    }
    return rc;
}

static int check_record(check_walk *w, cbs_struct *root, unsigned char *data,
                        const cbs_struct_def *def)
{
    if (Py_EnterRecursiveCall(" while checking a struct argument"))
        return -1;
    int rc = check_fields_of(w, root, data, def);
    Py_LeaveRecursiveCall();
    return rc;
}

/* The checks of cbs_arg_struct on s (def->checked). */
static int check_struct(cbs_struct *s, const char *func, const char *param)
{
    check_walk w = {func, param, tables_of_type(Py_TYPE(s)), ""};
    if (!w.tb)
        return -1;
    snprintf(w.path, sizeof w.path, "%s", cbs_short_name(Py_TYPE(s)));
    return check_record(&w, root_of(s), s->data, s->def);
}

int cbs_arg_struct(PyObject *o, PyTypeObject *t, unsigned accept, const char *func,
                   const char *param, void **ptr)
{
    if (Py_TYPE(o) == t) {
        cbs_struct *s = (cbs_struct *)o;
        if ((accept & CBS_ACCEPT_WRITTEN) && cbs_struct_readonly(o)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' is a read-only %s; the call writes it",
                         func, param, cbs_short_name(t));
            return -1;
        }
        if (s->def->checked && check_struct(s, func, param) < 0)
            return -1;
        *ptr = s->data;
        return 0;
    }
    if (o == Py_None && (accept & CBS_ACCEPT_NONE)) {
        *ptr = NULL;
        return 0;
    }
    if (cbs_is_struct_address(o, accept)) {
        /* the caller's memory by its address, as an intptr_t takes it */
        unsigned long long a;
        if (cbs_arg_unsigned(o, (unsigned long long)UINTPTR_MAX, func, param, "address", &a) < 0)
            return -1;
        *ptr = (void *)(uintptr_t)a;
        return 0;
    }
    int address = (accept & CBS_ACCEPT_ADDRESS) != 0, none = (accept & CBS_ACCEPT_NONE) != 0;
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s%s%s, not %.100s", func, param,
                 cbs_short_name(t), address ? (none ? ", an int address" : " or an int address") : "",
                 none ? " or None" : "", Py_TYPE(o)->tp_name);
    return -1;
}

PyObject *cbs_struct_alloc(PyTypeObject *t, void **data)
{
    const cbs_struct_def *def = cbs_struct_def_of(t);
    cbs_struct *s = def ? struct_make(t, def, NULL, NULL) : NULL;
    if (s)
        *data = s->data;
    return (PyObject *)s;
}

/* The field of struct object o whose C name is name when it is a fixed
 * array of one-byte integers that takes exactly its length (no count
 * field); else NULL. */
static const cbs_field_def *byte_array_named(PyObject *o, const char *name)
{
    const cbs_field_def *f = field_named(o, name);
    int bytes = f && (f->kind == CBS_F_SIGNED || f->kind == CBS_F_UNSIGNED) && f->size == 1;
    return bytes && f->count > 0 && f->bit_width < 0 && !fixed_counted(f) ? f : NULL;
}

int cbs_arg_field(PyObject *o, const char *field, PyObject *value, const char *func,
                  const char *param)
{
    /* FIELD.MEMBER...: the members' views share o's bytes */
    PyObject *owner = Py_NewRef(o);
    const char *dot;
    char part[128];
    while (owner && (dot = strchr(field, '.')) != NULL) {
        size_t len = (size_t)(dot - field) < sizeof part - 1 ? (size_t)(dot - field) : sizeof part - 1;
        memcpy(part, field, len);
        part[len] = '\0';
        Py_SETREF(owner, PyObject_GetAttrString(owner, part));
        field = dot + 1;
    }
    /* bytes shorter than a byte-array field fill its start, the rest
     * zero (cuda.bindings.nvml's char[N] parameters: a nonce) */
    PyObject *padded = NULL;
    if (owner && PyBytes_Check(value)) {
        const cbs_field_def *f = byte_array_named(owner, field);
        Py_ssize_t n = f ? (Py_ssize_t)f->count : -1;
        if (n > PyBytes_GET_SIZE(value)) {
            padded = PyBytes_FromStringAndSize(NULL, n);
            if (padded) {
                memset(PyBytes_AS_STRING(padded), 0, (size_t)n);
                memcpy(PyBytes_AS_STRING(padded), PyBytes_AS_STRING(value),
                       (size_t)PyBytes_GET_SIZE(value));
            }
        }
    }
    int rc = owner && (padded || !PyErr_Occurred())
                 ? PyObject_SetAttrString(owner, field, padded ? padded : value)
                 : -1;
    Py_XDECREF(padded);
    Py_XDECREF(owner);
    if (rc == 0)
        return 0;
    PyObject *exc = cbs_take_exception();
    if (!exc)
        return -1;
    /* the field's own message, behind the parameter's name (an IndexError,
     * a sequence's length, as a ValueError); an exception that is no
     * TypeError / ValueError / OverflowError / IndexError (MemoryError)
     * passes as it is */
    PyObject *type = (PyObject *)Py_TYPE(exc);
    if (!PyErr_GivenExceptionMatches(type, PyExc_TypeError) &&
        !PyErr_GivenExceptionMatches(type, PyExc_ValueError) &&
        !PyErr_GivenExceptionMatches(type, PyExc_OverflowError) &&
        !PyErr_GivenExceptionMatches(type, PyExc_IndexError)) {
        cbs_raise_exception(exc);
        return -1;
    }
    /* a sequence of another length is a bad value: ValueError */
    if (PyErr_GivenExceptionMatches(type, PyExc_IndexError))
        type = PyExc_ValueError;
    PyErr_Format(type, "%s(): argument '%s': %S", func, param, exc);
    PyObject *again = cbs_take_exception();
    if (again)
        PyException_SetCause(again, exc); /* steals exc */
    else
        Py_DECREF(exc);
    if (again)
        cbs_raise_exception(again);
    return -1;
}

PyObject *cbs_struct_kept(PyObject *o)
{
    if (!cbs_is_struct_type(Py_TYPE(o)))
        Py_RETURN_NONE;
    cbs_struct *s = (cbs_struct *)o, *root = root_of(s);
    PyObject *out = NULL;
    if (keep_collect(root, (size_t)(s->data - root->data), s->def->size, &out) < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return out ? out : Py_NewRef(Py_None);
}

PyObject *cbs_struct_from(PyTypeObject *t, const void *src)
{
    void *data;
    PyObject *o = cbs_struct_alloc(t, &data);
    if (o)
        memcpy(data, src, ((cbs_struct *)o)->def->size);
    return o;
}

PyObject *cbs_struct_make(PyTypeObject *t, const char *func, const char *const *params,
                          const char *const *fields, Py_ssize_t n, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *argv[CBS_MAKER_MAX_PARAMS];
    if (n < 0 || n > CBS_MAKER_MAX_PARAMS) {
        PyErr_Format(PyExc_SystemError, "%s(): %zd parameters (at most %d)", func, n,
                     CBS_MAKER_MAX_PARAMS);
        return NULL;
    }
    if (cbs_parse_args(func, args, nargs, kwnames, params, n, n, argv) < 0)
        return NULL;
    PyObject *o = PyObject_CallNoArgs((PyObject *)t);
    for (Py_ssize_t k = 0; o && k < n; k++)
        if (PyObject_SetAttrString(o, fields[k], argv[k]) < 0) {
            char what[256];
            snprintf(what, sizeof what, "%s(): argument '%s'", func, params[k]);
            cbs_exception_naming(what);
            Py_CLEAR(o);
        }
    return o;
}
