/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct_from.h — the static constructors of a snake_case module's
 * struct classes (cbs_struct_def.constructors), as cuda.bindings' library
 * modules (nvml, cufile) have them. Class methods (cls is the class; the
 * classes cannot be subclassed):
 *
 *   from_ptr(ptr, readonly=False, owner=None)
 *       owner None: a new object owning a copy of the sizeof(struct) bytes
 *       at ptr (cuda.bindings copies too); else an object viewing the bytes
 *       at ptr, holding a strong reference to owner for its lifetime.
 *       readonly: its field writes (and its nested views') raise
 *       ValueError. ptr 0: ValueError; not an int: TypeError.
 *   from_buffer(buffer)
 *       views the bytes of an object with the buffer protocol: C-contiguous,
 *       items of one byte, exactly sizeof(struct) bytes long (ValueError
 *       naming `buffer` otherwise; TypeError without the protocol);
 *       read-only when the buffer is.
 *   from_data(data)
 *       an instance of cls is returned as is; else as from_buffer, for any
 *       item size (a one-element numpy array of a structured dtype included:
 *       cubind has no per-class dtype to compare), errors naming `data`.
 *
 * Lifetime: a from_buffer / from_data object holds a memoryview of the
 * buffer in cbs_struct.base, so the buffer's export (and its exporter) live
 * as long as the object and its views: a bytearray cannot be resized under
 * it. base and readonly are set before the new object is returned and never
 * change, so threads share them without synchronisation.
 *
 * The objects are made through the class's own constructor (cls() for a
 * copy, cls(_ptr=address) for a view): nothing of bind_struct.c is called.
 * Error contract as bind_support.h.
 */
#ifndef CUBIND_BIND_STRUCT_FROM_H
#define CUBIND_BIND_STRUCT_FROM_H

#include "bind_struct.h"

/* METH_CLASS | METH_FASTCALL | METH_KEYWORDS (cls: the class). */
PyObject *cbs_struct_from_ptr(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames);
PyObject *cbs_struct_from_buffer(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);
PyObject *cbs_struct_from_data(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames);

#endif
