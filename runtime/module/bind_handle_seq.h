/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_handle_seq.h — the lazy read-only sequence a driver-filled handle
 * array field (CBS_F_HANDLE_OUT, phGraph_out) reads as.
 *
 * Invariants:
 * - Immutable after creation: the length (the count field's value when the
 *   field was read), the field, the handle class and the strong reference
 *   to the struct instance read never change, so threads share one object
 *   without locks (free-threaded builds included).
 * - The instance reference keeps the struct's bytes (and so the pointer
 *   field) valid for the object's life. The pointer is read from them at
 *   each item access: a sequence read before the driver filled the field
 *   (cuGraphAddNode) gives the driver's handles after.
 * - Items are built on access, one handle per index, read from the array
 *   the field points at; nothing is built for len(), repr() builds at most
 *   CBS_HANDLE_SEQ_REPR_ITEMS. While the pointer is NULL no item is read:
 *   an item access raises ValueError naming the field (len() still works).
 * - Like C, a non-NULL address is trusted to hold `len` handles.
 */
#ifndef CUBIND_BIND_HANDLE_SEQ_H
#define CUBIND_BIND_HANDLE_SEQ_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "bind_struct.h"

/* Items repr() shows before "..." */
#define CBS_HANDLE_SEQ_REPR_ITEMS 4

/* Creates the sequence class into the module's cbs_tables.handle_seq (the
 * module's state begins with its cbs_tables). 0, or -1 with an exception. */
int cbs_handle_seq_type_create(PyObject *module);

/* The sequence of field f (CBS_F_HANDLE_OUT) of instance s, of n handles
 * of class item. A new reference, or NULL with an exception. */
PyObject *cbs_handle_seq_new(cbs_tables *tb, PyObject *s, const cbs_field_def *f,
                             PyTypeObject *item, Py_ssize_t n);

#endif
