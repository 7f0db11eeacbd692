/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_record.h — a struct instance as bytes: what the files below
 * bind_struct.c read of an instance of a generated struct class without
 * calling into it (the packer: a struct passed by value; the lazy handle
 * sequence: a driver-filled handle array field).
 *
 * A struct class is recognised by its deallocator, cbs_record_dealloc,
 * which every struct class uses (bind_struct.c's type spec): no per-type
 * data, no module state. The instance's layout is cbs_struct
 * (bind_struct.h).
 */
#ifndef CUBIND_BIND_RECORD_H
#define CUBIND_BIND_RECORD_H

#include "bind_struct.h"

#include <string.h>

/* Every struct class's tp_dealloc: untracks, clears through the class's
 * tp_clear, drops the owner and the base (what keeps viewed bytes alive)
 * and frees the bytes an owning instance holds. */
void cbs_record_dealloc(PyObject *self);

/* 1 when t is a generated struct class (any module's). */
static inline int cbs_is_struct_type(PyTypeObject *t)
{
    return t->tp_dealloc == cbs_record_dealloc;
}

/* An unsigned field of `size` bytes (1, 2, 4, else 8) at p. */
static inline unsigned long long cbs_read_u(const unsigned char *p, size_t size)
{
    switch (size) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* 1 when o is an instance of a generated struct class (any module's: the
 * classes cannot be subclassed), with *data its bytes (owned, a view's or
 * foreign) and *size the record's size; 0 otherwise. No exception. For the
 * packer: a struct passed by value is its bytes. */
int cbs_struct_bytes(PyObject *o, const unsigned char **data, size_t *size);

/* Handle i of CBS_F_HANDLE_OUT field f of struct instance s, of class t,
 * read from the array the field points at now; while the field is NULL
 * (never dereferenced) the NULL handle, as cuda.bindings reads it.
 * bind_handle_seq.c's items. */
PyObject *cbs_struct_driver_handle(PyObject *s, const cbs_field_def *f, PyTypeObject *t,
                                   Py_ssize_t i);
/* 1 when pointer field f of struct instance s is NULL now. */
int cbs_struct_pointer_is_null(PyObject *s, const cbs_field_def *f);

#endif
