/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_intern.h — a module's table of interned handles: on a free-threaded
 * build, in the main interpreter, every output of an interned class (an
 * `intern` rule: CUdevice, CUfunction, CUkernel) holding one value is one
 * shared immortal object. Threads that pass one device or kernel object
 * around then write no shared reference count (bind_support.h:
 * cbs_handle_out; docs/design.md, "Shared handles").
 *
 * Invariants:
 *   - keyed by (class, value) only, and an interned object never changes:
 *     its value is set before it is published and __init__ refuses it
 *     (cbs_handle_init), so handing it out again is safe whatever the
 *     value names now (a device, or a kernel loaded at the address of one
 *     unloaded before: the object is just that value, as a new one would
 *     be; a kernel's layout copy is checked against the driver's epoch,
 *     bind_layout.h);
 *   - insert-only and bounded: at most CBS_INTERN_MAX objects, each made
 *     immortal before it is published (release store into an empty slot,
 *     under the table's lock) and never removed, so a lock-free reader
 *     that finds one may use it for as long as the process lives; past
 *     the bound an output is a new, mortal object (correct, only slower);
 *     so at most CBS_INTERN_MAX small objects outlive the values they
 *     held, however often modules are loaded and unloaded;
 *   - lookups read the slots with acquire loads and write nothing shared.
 *
 * GIL builds and subinterpreters have no table (cbs_intern_create gives
 * NULL): there every output is a new object, as before.
 */
#ifndef CUBIND_BIND_INTERN_H
#define CUBIND_BIND_INTERN_H

#include "bind_support.h"

/* Slots of a table (a power of two), and how many objects it holds at
 * most: half of them, so that a probe always ends at an empty slot. */
#define CBS_INTERN_SLOTS 4096u
#define CBS_INTERN_MAX (CBS_INTERN_SLOTS / 2)
#define CBS_INTERN_CLASSES 8 /* interned classes of one module, at most */

/* A table for a module executing now: *out NULL where handles are not
 * interned (a GIL build, a subinterpreter). 0, or -1 with MemoryError. */
int cbs_intern_create(struct cbs_intern **out);
/* Adds class t to the interned classes of `intern` (NULL: nothing). */
void cbs_intern_class(struct cbs_intern *intern, PyTypeObject *t);
/* Frees the table; the objects it interned are immortal and stay. */
void cbs_intern_free(struct cbs_intern *intern);

#endif
