/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_handles.c — see rt_handles.h.
 *
 * Invariants:
 *  - rt_h_reg goes from NULL to a registry once and never back; it is
 *    published (release) under rt_h_make_mu by the first use that could
 *    make it, and read with one acquire load. A use that could not make it
 *    (out of memory) publishes nothing, so a later use tries again.
 *  - Only register makes the registry; every other call on an absent one
 *    answers as an empty registry would (nothing is mapped yet).
 *  - fork(): prepare holds rt_h_make_mu (no creation in progress, none can
 *    publish) and then every lock of the registry, if it exists; release
 *    drops them in the parent and in the child.
 *  - rt_h_kernel_epoch only grows; it is bumped (release) BEFORE the layouts
 *    are unmapped, so a layout computed by a launch racing with an unload
 *    either is unmapped by the purge or carries an epoch older than the
 *    current one (the packer then treats it as stale).
 */
#include "rt_handles.h"

#include <errno.h>
#include <pthread.h>

#include "glibc_pins.h"

#include "cubind_rt.h"

static pthread_mutex_t rt_h_make_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(rt_registry *) rt_h_reg;
_Atomic unsigned long rt_h_kernel_epoch;

/* The registry, or NULL while none has been made. */
static rt_registry *existing(void)
{
    return atomic_load_explicit(&rt_h_reg, memory_order_acquire);
}

/* The registry, made on first use; NULL when it could not be made (the
 * next call tries again). */
static rt_registry *made(void)
{
    rt_registry *r = existing();
    if (r)
        return r;
    pthread_mutex_lock(&rt_h_make_mu);
    r = atomic_load_explicit(&rt_h_reg, memory_order_relaxed);
    if (!r && (r = rt_registry_new()) != NULL)
        atomic_store_explicit(&rt_h_reg, r, memory_order_release);
    pthread_mutex_unlock(&rt_h_make_mu);
    return r;
}

void rt_h_fork_prepare(void)
{
    pthread_mutex_lock(&rt_h_make_mu);
    rt_registry *r = existing();
    if (r)
        rt_registry_fork_prepare(r);
}

void rt_h_fork_release(void)
{
    rt_registry *r = existing();
    if (r)
        rt_registry_fork_release(r);
    pthread_mutex_unlock(&rt_h_make_mu);
}

int rt_h_register(int kind, uintptr_t handle, void *meta, void (*meta_free)(void *),
                  rt_registry_entry *dep, rt_registry_entry **out)
{
    rt_registry *r = made();
    if (!r) {
        if (out)
            *out = NULL;
        return -ENOMEM;
    }
    return rt_registry_register(r, kind, handle, meta, meta_free, dep, out);
}

int rt_h_lookup(int kind, uintptr_t handle, rt_registry_entry **out)
{
    rt_registry *r = existing();
    if (!r) {
        *out = NULL;
        return -ENOENT;
    }
    return rt_registry_lookup(r, kind, handle, out);
}

int rt_h_unregister(int kind, uintptr_t handle)
{
    rt_registry *r = existing();
    return r ? rt_registry_unregister(r, kind, handle) : -ENOENT;
}

int rt_h_unregister_entry(rt_registry_entry *e)
{
    rt_registry *r = existing();
    return r && e ? rt_registry_unregister_entry(r, e) : -ENOENT;
}

size_t rt_h_unregister_kind(int kind)
{
    rt_registry *r = existing();
    return r ? rt_registry_unregister_kind(r, kind) : 0;
}

size_t rt_h_count(void)
{
    rt_registry *r = existing();
    return r ? rt_registry_count(r) : 0;
}

size_t rt_h_count_kind(int kind)
{
    rt_registry *r = existing();
    return r ? rt_registry_count_kind(r, kind) : 0;
}

void rt_h_kernels_unloaded(void)
{
    atomic_fetch_add_explicit(&rt_h_kernel_epoch, 1, memory_order_acq_rel);
    rt_h_unregister_kind(CUBIND_REG_KERNEL_LAYOUT);
    rt_h_unregister_kind(CUBIND_REG_KERNEL_LAYOUT_KERN);
}
