/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct_array.h — the struct classes of a snake_case module
 * (cbs_struct_def.constructors) as cuda.bindings' library modules have
 * them (nvml's FieldValue, ProcessInfo, ...): a class is also the array of
 * its records.
 *
 *   T(size=1, **fields)
 *       size records, each zeroed but for its version and field defaults;
 *       T() and T(1) are the one record every other class makes, T(0) an
 *       empty array. size is an int >= 0 (TypeError, ValueError naming
 *       `size`); an array too
 *       large to allocate is a MemoryError. A field keyword, by either
 *       name of the field, is `obj.field = value` (below: for size > 1,
 *       one value per record); another keyword is a TypeError.
 *       `_ptr=` (keyword
 *       only) wraps an address, as the driver's classes' T(_ptr): what
 *       from_ptr uses. A positional int is `size`, never an address: the
 *       driver face's T(address) is cuda.bindings.driver's, and read on a
 *       snake_case class it wrapped address 1 (cuda.bindings makes an
 *       array of one).
 *   len(obj), obj[i], iteration
 *       size records; obj[i] (negative i from the end) a view of record i
 *       that keeps the array alive and writes through to it; IndexError
 *       outside. A single record is its own array of one.
 *   obj.field (size > 1)
 *       a list of each record's value (a numeric field: a numpy array over
 *       the records' bytes, bind_ndarray.h, where numpy can be imported;
 *       so is one record's fixed numeric array); obj.field = values sets record i's
 *       field to values[i], values a sequence of exactly size items
 *       (ValueError naming the field otherwise; a value that does not
 *       convert leaves every record as it was). A field whose write keeps
 *       an object or copies a record (pointers, nested records) is set one
 *       record at a time (TypeError). A single
 *       record's field reads and writes as in bind_struct.h.
 *   repr (size > 1)
 *       <cubind.MODULE.NAME_Array_N object at ADDRESS>, as cuda.bindings.
 *   obj.ptr, a function argument
 *       the address of record 0: a function taking `T *` with a count
 *       reads the records in order.
 *   rec.items, a fixed array of records `U items[N]` of one record
 *       an array view of class U (cbs_struct.sized): its N records, or for
 *       a counted array the first min(COUNT, N) (bind_struct.h's "Counted
 *       arrays"), holding rec's root and writing through; an empty array
 *       for a count of 0, as cuda.bindings' nested class's array. Set as
 *       bind_struct.h says (a list of records).
 *
 * The size of an object never changes: threads share an array as they
 * share a record (bind_struct.h's contract for field reads and writes).
 */
#ifndef CUBIND_BIND_STRUCT_ARRAY_H
#define CUBIND_BIND_STRUCT_ARRAY_H

#include "bind_struct.h"

/* The class for def, a snake_case module's (def->constructors), as
 * cbs_struct_type_create makes the others. */
PyTypeObject *cbs_struct_array_type_create(PyObject *module, const cbs_struct_def *def);

/* The getset functions of a snake_case class's fields (closure: const
 * cbs_field_def *): an array's per-record lists, else cbs_struct_get/set. */
PyObject *cbs_struct_array_get(PyObject *self, void *closure);
int cbs_struct_array_set(PyObject *self, PyObject *value, void *closure);

/* A records rule's argument (gen/rules/rules_directives.def): o itself
 * when an object of class t (an array of any size: the library reads and
 * writes its records in place), else a new array of t holding o's items in
 * order, o a non-empty sequence (not str or bytes) of records of t (their
 * bytes copied: a pointer field's kept object is not) or, with `field` (a
 * C field name of t), of values of that field, each set on a zeroed
 * record as `record.field = value`. A new reference, *data its first
 * record, *n its length; NULL with TypeError or ValueError naming func,
 * param and the item. */
PyObject *cbs_struct_array_arg(PyObject *o, PyTypeObject *t, const char *field, const char *func,
                               const char *param, void **data, size_t *n);

/* A counted-records rule's argument, its count the caller's: None (no
 * records: *data NULL, *n 0); an int address of the caller's records when
 * `accept` has CBS_ACCEPT_ADDRESS (bind_struct.h; *n SIZE_MAX: their
 * number unknown, unchecked, as in C); else as cbs_struct_array_arg
 * without a field. A new reference to hold (None for the first two);
 * NULL with an exception naming func and param. */
PyObject *cbs_counted_records_arg(PyObject *o, PyTypeObject *t, unsigned accept, const char *func,
                                  const char *param, void **data, size_t *n);

#endif
