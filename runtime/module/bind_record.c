/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_record.c — see bind_record.h. Calls nothing of bind_struct.c: the
 * class's own slots (tp_clear, tp_free) are reached through the type.
 */
#include "bind_record.h"

void cbs_record_dealloc(PyObject *self)
{
    cbs_struct *s = (cbs_struct *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    tp->tp_clear(self);
    Py_CLEAR(s->owner);
    Py_CLEAR(s->base); /* after the views of its bytes: none remain */
    PyMem_Free(s->alloc);
    s->alloc = NULL;
    s->data = NULL;
    tp->tp_free(self);
    Py_DECREF(tp);
}

int cbs_struct_bytes(PyObject *o, const unsigned char **data, size_t *size)
{
    if (!cbs_is_struct_type(Py_TYPE(o)))
        return 0;
    const cbs_struct *s = (const cbs_struct *)o;
    *data = s->data;
    *size = s->def->size;
    return 1;
}

int cbs_struct_pointer_is_null(PyObject *self, const cbs_field_def *f)
{
    const cbs_struct *s = (const cbs_struct *)self;
    return cbs_read_u(s->data + f->offset, f->size) == 0;
}

PyObject *cbs_struct_driver_handle(PyObject *self, const cbs_field_def *f, PyTypeObject *t,
                                   Py_ssize_t i)
{
    cbs_struct *s = (cbs_struct *)self;
    const unsigned char *a =
        (const unsigned char *)(uintptr_t)cbs_read_u(s->data + f->offset, f->size);
    /* Not filled yet (NULL): each item is the NULL handle, as cuda.bindings
     * reads it (cuda-python's test_conditional checks int(item) == 0 before
     * cuGraphAddNode); nothing is dereferenced and nothing built ahead. */
    if (!a)
        return cbs_handle_new(t, 0);
    return cbs_handle_new(t, cbs_read_u(a + (size_t)i * f->elem_size, f->elem_size));
}
