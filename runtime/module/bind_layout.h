/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_layout.h — a kernel's parameter layout (offset and size of each
 * parameter, as cuFuncGetParamInfo reports them) and a kernel handle
 * object's own copy of it. No Python here: the packer (bind_packer.c) asks
 * the driver and the registry; this file holds the block and the lock-free
 * publication of the copy, which tests/c/test_layout.c churns from many
 * threads under ThreadSanitizer.
 *
 * A copy lives in a slot (a kernel handle's `layout`, bind_support.h):
 * NULL until the first plain-values launch through the object publishes
 * one, freed with the object. Launches from many threads through one
 * object read it with one acquire load and a few compares: no lock, and no
 * write to anything shared but the copy's epoch stamp, once after a module
 * unload.
 *
 * Invariants of a slot's copy:
 *   - published once (compare-and-swap from NULL, release), never replaced
 *     while the object lives; a thread that loses the race frees its own;
 *   - func, kind, n, total, gaps, off and size never change once published;
 *   - its epoch is rewritten, but only to an epoch E at which the layout
 *     the driver gave for (kind, func) at E equals the copy. So a copy whose
 *     epoch is the current epoch is func's layout now.
 */
#ifndef CUBIND_BIND_LAYOUT_H
#define CUBIND_BIND_LAYOUT_H

#include "bind_kernel_types.h"

#include <stdatomic.h>
#include <stddef.h>

#define CBS_LAYOUT_NAME 64 /* a kernel's name as messages give it (truncated) */

/* One malloc'ed block (free() releases it), immutable once published
 * except for `epoch` in a slot's copy and `warned`. */
typedef struct cbs_pack_layout {
    _Atomic unsigned long epoch; /* the runtime's kernel epoch at which this is func's layout */
    void *func;                  /* the kernel (a CUfunction or CUkernel) and its registry kind */
    int kind;
    size_t n;
    size_t total; /* max(offset + size) */
    int gaps;     /* some byte below total is no parameter's (alignment
                     padding): a packer zeroes the buffer before filling it */
    size_t *off;  /* n entries each, in the same block */
    size_t *size;
    cbs_ktype *type; /* n entries: each parameter's type where known (from
                        its C++ name), else CBS_KT_UNKNOWN (typed by size) */
    char name[CBS_LAYOUT_NAME]; /* the kernel's name, "" when unknown */
    int untyped;                /* some parameter's type is unknown (packed by size) */
    _Atomic int warned;         /* the packer's warning about untyped packing was given
                                   (or its launch typed the kernel with argtypes=):
                                   the one field besides epoch written once published */
} cbs_pack_layout;

/* A block for n parameters (off and size uninitialised, total and gaps
 * 0: cbs_layout_measure sets them once off and size are filled; every type
 * unknown (untyped when n > 0), not warned, no name), or NULL when out of
 * memory. */
cbs_pack_layout *cbs_layout_alloc(size_t n, void *func, int kind, unsigned long epoch);

/* Sets l->total and l->gaps from l->off and l->size (parameters do not
 * overlap: a kernel's never do). */
void cbs_layout_measure(cbs_pack_layout *l);

/* Whether a and b describe the same kernel with the same parameters and
 * types (epochs not compared). */
int cbs_layout_same(const cbs_pack_layout *a, const cbs_pack_layout *b);

/* The slot's copy when it serves a launch of func (registry kind `kind`)
 * with nvalues values at `epoch` (the current kernel epoch), else NULL.
 * Compared with func, not assumed: an object's value can change after its
 * copy was made (__init__ called again, or a write through getPtr()).
 * Inline: every plain-values launch through a kernel handle takes it. */
static inline const cbs_pack_layout *cbs_layout_copy_get(_Atomic(void *) *slot, int kind,
                                                         void *func, unsigned long epoch,
                                                         size_t nvalues)
{
    const cbs_pack_layout *c = atomic_load_explicit(slot, memory_order_acquire);
    if (c && c->func == func && c->kind == kind && c->n == nvalues &&
        atomic_load_explicit(&c->epoch, memory_order_acquire) == epoch)
        return c;
    return NULL;
}

/* After the registry's path gave l (func's layout at l->epoch, asked of the
 * driver at that epoch): stamps the slot's copy with that epoch when it
 * equals l, or publishes a copy of l when the slot has none. Best effort:
 * no copy (no memory, or another thread published first) only means the
 * next launch takes the registry's path again. Returns 1 when this call
 * published the copy, 0 otherwise (for tests). */
int cbs_layout_copy_remember(_Atomic(void *) *slot, const cbs_pack_layout *l);

#endif
