/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_layout.c — kernel parameter layouts and a kernel handle's copy
 * (see bind_layout.h).
 */
#include "bind_layout.h"
#include "rt_alloc.h"

#include <stdlib.h>
#include <string.h>

cbs_pack_layout *cbs_layout_alloc(size_t n, void *func, int kind, unsigned long epoch)
{
    size_t m = n ? n : 1;
    cbs_pack_layout *l = rt_malloc(sizeof *l + 2 * m * sizeof(size_t) + m * sizeof(cbs_ktype));
    if (!l)
        return NULL;
    atomic_init(&l->epoch, epoch);
    l->func = func;
    l->kind = kind;
    l->n = n;
    l->off = (size_t *)(l + 1);
    l->size = l->off + n;
    l->type = (cbs_ktype *)(l->size + n);
    memset(l->type, 0, n * sizeof *l->type);
    l->name[0] = '\0';
    l->total = 0;
    l->gaps = 0;
    l->untyped = n > 0; /* every type unknown */
    atomic_init(&l->warned, 0);
    return l;
}

void cbs_layout_measure(cbs_pack_layout *l)
{
    size_t covered = 0;
    l->total = 0;
    for (size_t k = 0; k < l->n; k++) {
        covered += l->size[k];
        if (l->off[k] + l->size[k] > l->total)
            l->total = l->off[k] + l->size[k];
    }
    l->gaps = covered < l->total;
}

int cbs_layout_same(const cbs_pack_layout *a, const cbs_pack_layout *b)
{
    return a->func == b->func && a->kind == b->kind && a->n == b->n && a->total == b->total &&
           memcmp(a->off, b->off, a->n * sizeof *a->off) == 0 &&
           memcmp(a->size, b->size, a->n * sizeof *a->size) == 0 &&
           memcmp(a->type, b->type, a->n * sizeof *a->type) == 0 &&
           strcmp(a->name, b->name) == 0;
}

int cbs_layout_copy_remember(_Atomic(void *) *slot, const cbs_pack_layout *l)
{
    cbs_pack_layout *c = atomic_load_explicit(slot, memory_order_acquire);
    unsigned long epoch = atomic_load_explicit(&l->epoch, memory_order_relaxed);
    if (c) {
        /* Only an equal layout is re-stamped: a copy of another value's
         * kernel (the object's value changed) keeps its old epoch and so
         * never serves again. */
        if (cbs_layout_same(c, l))
            atomic_store_explicit(&c->epoch, epoch, memory_order_release);
        return 0;
    }
    c = cbs_layout_alloc(l->n, l->func, l->kind, epoch);
    if (!c)
        return 0;
    memcpy(c->off, l->off, l->n * sizeof *c->off);
    memcpy(c->size, l->size, l->n * sizeof *c->size);
    memcpy(c->type, l->type, l->n * sizeof *c->type);
    memcpy(c->name, l->name, sizeof c->name);
    c->total = l->total;
    c->gaps = l->gaps;
    c->untyped = l->untyped;
    atomic_store_explicit(&c->warned, atomic_load_explicit(&l->warned, memory_order_relaxed),
                          memory_order_relaxed);
    /* Release: whoever loads the slot sees every field written above. */
    void *none = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &none, c, memory_order_acq_rel,
                                                memory_order_acquire))
        return 1;
    rt_free(c);
    return 0;
}
