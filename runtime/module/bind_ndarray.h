/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_ndarray.h — numeric array fields of a snake_case module's records
 * as numpy arrays over the record's own bytes, as cuda.bindings' library
 * modules read them (nvml.ConfComputeGpuAttestationReport().nonce is a
 * uint8 array of 32; nvml.FieldValue(3).field_id an array of 3).
 *
 * The bytes reach numpy through a small exporter object of the module's
 * class `cubind.FieldBuffer` (the buffer protocol: format, shape, strides),
 * which holds a strong reference to the struct object the bytes are of;
 * numpy's array holds the exporter, so the array keeps the record alive
 * and writes through to it, as the struct's own field setters do. A
 * pointer field's array of unsigned integers (placementIds, counted by a
 * hidden count field) reads the same way over the array the field owns,
 * which the exporter keeps too. A read-only record (from_buffer of
 * read-only bytes, from_ptr(readonly=True)) exports read-only bytes:
 * numpy's array is read-only too.
 *
 * numpy is optional: cubind does not depend on it. The first numeric
 * array read of a module imports it once; where the import fails (numpy
 * not installed, or refusing this interpreter), cbs_ndarray_view answers
 * "absent" and the caller keeps its list, for the module's lifetime.
 *
 * Invariants:
 * - An exporter never changes after creation: its owner, address, format,
 *   shape and strides are set before it is shared. Threads share the
 *   array as they share the record (bind_struct.h's free-threading
 *   contract: plain memory; concurrent writes race like C's, no crash).
 * - cbs_tables.numpy_asarray goes NULL (not tried) -> numpy.asarray or
 *   Py_None (absent) once, with one compare-and-swap (a thread that loses
 *   the race drops its own), read with one acquire load; visited and
 *   dropped by the module's traverse and clear slots.
 */
#ifndef CUBIND_BIND_NDARRAY_H
#define CUBIND_BIND_NDARRAY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "bind_struct.h"

/* Creates the exporter class into the module's cbs_tables.field_buffer
 * (the module's state begins with its cbs_tables). 0, or -1 with an
 * exception. */
int cbs_ndarray_type_create(PyObject *module);

/* Whether field f's elements are plain numbers numpy has a type for
 * (signed and unsigned integers, float, double, and enums of 4 bytes as
 * int32, as cuda.bindings' dtypes have them; no bit-field). A scalar
 * enum field of one record still reads as its enum's member. */
int cbs_ndarray_numeric(const cbs_field_def *f);

/* The most dimensions a field array has: records, then a fixed array's
 * elements. */
#define CBS_NDARRAY_MAX_DIMS 2

/* A numpy array over the bytes of owner (a struct object) at data, of
 * field f's element type: ndim (1 or 2) dimensions of shape[k] elements
 * strides[k] bytes apart. Writable unless readonly. A new reference; NULL
 * and no exception when numpy cannot be imported (the caller keeps its
 * list); NULL with an exception otherwise. */
PyObject *cbs_ndarray_view(cbs_tables *tb, PyObject *owner, unsigned char *data,
                           const cbs_field_def *f, int ndim, const Py_ssize_t *shape,
                           const Py_ssize_t *strides, int readonly);

/* A numpy array of the n unsigned integers of f->elem_size bytes each at
 * data, the array pointer field f of owner points at: memory, the object
 * whose bytes those are (the bytes object the field owns), is kept alive
 * by the array, as owner is. Writable unless readonly. Answers as
 * cbs_ndarray_view. */
PyObject *cbs_ndarray_pointed(cbs_tables *tb, PyObject *owner, PyObject *memory,
                              unsigned char *data, const cbs_field_def *f, Py_ssize_t n,
                              int readonly);

/* The module's traverse and clear slots' share. */
int cbs_ndarray_traverse(cbs_tables *tb, visitproc visit, void *arg);
void cbs_ndarray_clear(cbs_tables *tb);

#endif
