/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_registry.h — the handle registry of the shared runtime: a thread-safe
 * map from (kind, raw handle value) to a reference-counted entry.
 *
 * Pure C, no Python: the registry never calls Python itself. What it holds
 * for Python (keep-alive references) it hands back through release
 * callbacks, which the Python layer implements (DECREF on a Python thread,
 * or a push onto the deferred-cleanup queue of rt_queue.h).
 *
 * One contract for every kind (kinds are small integers chosen by the
 * caller; none is special-cased):
 *
 *   create    -> rt_registry_register(kind, handle, ...)
 *   from-handle -> rt_registry_lookup(kind, handle, &e) ... entry_release(e)
 *   destroy   -> rt_registry_unregister(kind, handle)   (BEFORE the driver
 *                call that frees the handle: once the driver has freed it
 *                it may hand the same value to another thread's create,
 *                whose register would then fail with -EEXIST)
 *
 * An entry carries
 *   - meta: one pointer slot with a destructor fixed at register time. It is
 *     either given at register or published later, once, by
 *     rt_registry_meta_publish (CAS from NULL; the first publisher wins);
 *   - keep-alives: (item, release, ctx) triples; release(item, ctx) is
 *     called exactly once, when the entry is destroyed;
 *   - dependencies: counted references to other entries (a function on its
 *     module, a stream on its context), dropped when the entry is destroyed.
 *
 * Lifetime: the map holds one reference to each mapped entry; lookup and
 * register (with `out`) hand the caller one more. Unregister removes the
 * entry from the map at once (the same (kind, handle) can be registered
 * again immediately) and drops the map's reference; the entry lives until
 * its last reference is gone. Then, on the thread dropping that reference
 * and with no registry lock held, it releases, in this order: its
 * keep-alives (most recently added first), its meta (meta_free), its
 * dependencies (which may in turn destroy them; iteratively, not
 * recursively). Every item is released exactly once.
 *
 * Callbacks (release, meta_free) run on whatever thread drops the last
 * reference, which can be a CUDA callback thread if such a thread holds a
 * reference; they must therefore not enter Python directly. They may call
 * any rt_registry_* function (no registry lock is held while they run).
 *
 * Dependencies must form a DAG. A dependency given at register time always
 * does (it existed before the dependent); rt_registry_add_dependency can
 * close a cycle, which is never freed (a leak, not a crash); it refuses
 * only the trivial self-cycle.
 *
 * Return codes: 0, or a negative errno value: -ENOMEM (nothing changed;
 * ownership of what was passed in stays with the caller), -EEXIST, -ENOENT,
 * -EINVAL.
 */
#ifndef CUBIND_RT_REGISTRY_H
#define CUBIND_RT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_registry rt_registry;
typedef struct rt_registry_entry rt_registry_entry;

typedef void (*rt_registry_meta_free_fn)(void *meta);
typedef void (*rt_registry_release_fn)(void *item, void *ctx);

/* Number of shards (each with its own mutex). A power of two. */
#define RT_REGISTRY_SHARDS 64

/* A new, empty registry; NULL when out of memory. */
rt_registry *rt_registry_new(void);

/* Unmaps every entry still mapped and drops the map's reference to each
 * (entries the caller still references live on, and stay valid), then frees
 * the registry. Must not run concurrently with any other call on `r`; no
 * call on `r` may follow (rt_registry_entry_* calls on surviving entries
 * are fine: entries do not point back to their registry). NULL is a no-op. */
void rt_registry_free(rt_registry *r);

/* Maps (kind, handle) to a new entry. `meta` (may be NULL) becomes the
 * entry's meta, freed with meta_free (may be NULL: nothing to free) when the
 * entry is destroyed; meta_free also frees a meta published later. `dep`
 * (may be NULL) is a referenced entry the new one depends on: it gets one
 * more reference, held until the new entry is destroyed (the caller keeps
 * its own). With `out` non-NULL, *out receives a counted reference to the
 * new entry (to rt_registry_entry_release); it is NULL on error.
 *   0; -EEXIST: (kind, handle) is already mapped (nothing changed, meta not
 *   adopted); -ENOMEM (same). */
int rt_registry_register(rt_registry *r, int kind, uintptr_t handle,
                         void *meta, rt_registry_meta_free_fn meta_free,
                         rt_registry_entry *dep, rt_registry_entry **out);

/* *out = a counted reference to the entry mapped at (kind, handle): 0; or
 * *out = NULL and -ENOENT. */
int rt_registry_lookup(rt_registry *r, int kind, uintptr_t handle,
                       rt_registry_entry **out);

/* Unmaps (kind, handle) and drops the map's reference: 0, or -ENOENT. */
int rt_registry_unregister(rt_registry *r, int kind, uintptr_t handle);

/* Unmaps `e` itself, only if it is still the entry mapped at its key (a
 * stale holder never unmaps a successor that reuses the handle value): 0,
 * or -ENOENT. The caller's own reference to e is untouched. */
int rt_registry_unregister_entry(rt_registry *r, rt_registry_entry *e);

/* Unmaps every entry of `kind` (shard by shard, each under its lock) and
 * drops the map's reference to each, after unlocking; returns how many.
 * Entries registered concurrently may or may not be unmapped (a snapshot
 * per shard); entries held elsewhere live on, unmapped. For invalidating a
 * whole kind at once (kernel layouts after a module unload). */
size_t rt_registry_unregister_kind(rt_registry *r, int kind);

/* fork(): prepare takes every shard lock (in shard order; shard locks are
 * leaves, so this cannot deadlock with a thread holding one), so that the
 * child never inherits a lock held by a thread it does not have; parent and
 * child release them (the child's one thread is the one that took them). */
void rt_registry_fork_prepare(rt_registry *r);
void rt_registry_fork_release(rt_registry *r);

/* Number of mapped entries (takes every shard lock in turn; a snapshot). */
size_t rt_registry_count(rt_registry *r);

/* Number of mapped entries of `kind` (walks every chain, each shard under
 * its lock in turn; a snapshot, for tests and diagnostics). */
size_t rt_registry_count_kind(rt_registry *r, int kind);

/* Reference counting. retain: the caller must already hold a reference.
 * release: NULL is a no-op; dropping the last reference destroys the entry
 * (see the header comment) on this thread. */
void rt_registry_entry_retain(rt_registry_entry *e);
void rt_registry_entry_release(rt_registry_entry *e);

/* Immutable key of the entry. */
int rt_registry_entry_kind(const rt_registry_entry *e);
uintptr_t rt_registry_entry_handle(const rt_registry_entry *e);

/* 1 while `e` is mapped, 0 once unregistered (a snapshot: another thread
 * may unregister it right after). */
int rt_registry_entry_is_registered(rt_registry_entry *e);

/* Current reference count (a snapshot, for tests and diagnostics). */
size_t rt_registry_entry_refcount(rt_registry_entry *e);

/* The meta pointer (acquire load: what the publisher wrote before
 * publishing is visible), or NULL when none was given nor published. */
void *rt_registry_meta(rt_registry_entry *e);

/* Once-only publish of lazily computed meta. If the slot is empty it
 * becomes `candidate` (the entry now owns it) and candidate is returned;
 * otherwise the slot is unchanged and the current (winning) pointer is
 * returned, and the candidate stays the caller's, who frees it:
 *
 *     void *m = rt_registry_meta(e);
 *     if (m == NULL) {
 *         void *mine = compute();
 *         m = rt_registry_meta_publish(e, mine);
 *         if (m != mine) free_layout(mine);
 *     }
 *
 * candidate == NULL just returns the current value. */
void *rt_registry_meta_publish(rt_registry_entry *e, void *candidate);

/* Adds a keep-alive: release(item, ctx) will be called exactly once, when
 * `e` is destroyed. The caller holds a reference to e. Allowed after e was
 * unregistered (it is then released with e's last reference). 0;
 * -EINVAL (release NULL); -ENOMEM (item not adopted: still the caller's). */
int rt_registry_keep_alive(rt_registry_entry *e, void *item,
                           rt_registry_release_fn release, void *ctx);

/* Makes `e` depend on `dep` (both referenced by the caller): dep gets one
 * more reference, dropped when e is destroyed. 0; -EINVAL (dep NULL or
 * dep == e); -ENOMEM (nothing changed). */
int rt_registry_add_dependency(rt_registry_entry *e, rt_registry_entry *dep);

#ifdef __cplusplus
}
#endif
#endif
