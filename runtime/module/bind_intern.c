/* SPDX-License-Identifier: Apache-2.0 */
/* bind_intern.c — see bind_intern.h. */
#include "bind_intern.h"

#include <stdlib.h>

struct cbs_intern {
    PyTypeObject *classes[CBS_INTERN_CLASSES]; /* set at exec, read-only after */
    size_t nclasses;
#ifdef Py_GIL_DISABLED
    PyMutex lock;  /* serializes inserts; lookups take no lock */
#endif
    size_t count;  /* objects held; written under `lock` only */
    _Atomic(PyObject *) slots[CBS_INTERN_SLOTS]; /* NULL, or an interned handle */
};

int cbs_intern_create(struct cbs_intern **out)
{
    *out = NULL;
#ifdef Py_GIL_DISABLED
    if (PyInterpreterState_Get() != PyInterpreterState_Main())
        return 0; /* a subinterpreter's objects stay mortal (cbs_share_object) */
    *out = calloc(1, sizeof **out); /* every slot NULL, the lock unlocked */
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
#endif
    return 0;
}

void cbs_intern_class(struct cbs_intern *intern, PyTypeObject *t)
{
    if (intern && intern->nclasses < CBS_INTERN_CLASSES)
        intern->classes[intern->nclasses++] = t;
}

void cbs_intern_free(struct cbs_intern *intern)
{
    if (!intern)
        return;
    for (size_t i = 0; i < CBS_INTERN_SLOTS; i++)
        Py_XDECREF(atomic_load_explicit(&intern->slots[i], memory_order_relaxed)); /* immortal: nothing */
    free(intern);
}

#ifdef Py_GIL_DISABLED
/* The first slot of (t, bits)'s probe sequence. */
static size_t home(PyTypeObject *t, unsigned long long bits)
{
    unsigned long long h = (bits ^ ((unsigned long long)(uintptr_t)t >> 4)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 40) & (CBS_INTERN_SLOTS - 1);
}

/* The interned object of (t, bits), borrowed, or NULL with *empty the
 * slot where it would go. Lock-free: a slot once set never changes. */
static PyObject *find(struct cbs_intern *intern, PyTypeObject *t, unsigned long long bits,
                      size_t *empty)
{
    for (size_t i = home(t, bits);; i = (i + 1) & (CBS_INTERN_SLOTS - 1)) {
        PyObject *o = atomic_load_explicit(&intern->slots[i], memory_order_acquire);
        if (!o) {
            *empty = i;
            return NULL;
        }
        if (Py_TYPE(o) == t && cbs_handle_bits((const cbs_handle *)o) == bits)
            return o;
    }
}
#endif

PyObject *cbs_intern_handle(struct cbs_intern *intern, PyTypeObject *t, unsigned long long bits)
{
#ifdef Py_GIL_DISABLED
    size_t k = 0;
    while (k < intern->nclasses && intern->classes[k] != t)
        k++;
    if (k == intern->nclasses)
        return cbs_handle_new(t, bits);
    size_t slot;
    PyObject *o = find(intern, t, bits, &slot);
    if (o)
        return Py_NewRef(o); /* immortal: writes nothing */
    PyMutex_Lock(&intern->lock);
    o = find(intern, t, bits, &slot); /* another thread may have added it */
    if (!o && intern->count < CBS_INTERN_MAX) {
        o = cbs_handle_new(t, bits);
        if (o) {
            ((cbs_handle *)o)->interned = 1;
            cbs_share_object(o); /* made here, seen by no other thread yet */
            atomic_store_explicit(&intern->slots[slot], o, memory_order_release);
            intern->count++;
        }
    } else if (!o) {
        PyMutex_Unlock(&intern->lock);
        return cbs_handle_new(t, bits); /* the table is full: a mortal object of its own */
    }
    PyMutex_Unlock(&intern->lock);
    return o ? Py_NewRef(o) : NULL;
#else
    (void)intern;
    return cbs_handle_new(t, bits);
#endif
}
