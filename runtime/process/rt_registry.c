/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_registry.c — the handle registry (see rt_registry.h for the contract).
 *
 * Representation
 *
 *   The registry is RT_REGISTRY_SHARDS shards; a key (kind, handle) hashes
 *   to one shard (top bits of the hash) and to one bucket of that shard's
 *   chained hash table (low bits). Chains are intrusive: an entry's `chain`
 *   field links it into its bucket, so mapping an entry allocates nothing
 *   but the entry itself, and a failed table growth just leaves longer
 *   chains (it is retried at the next insert): inserting never fails for
 *   lack of table memory.
 *
 * Locks and locking order
 *
 *   - shard->mu protects shard->buckets, shard->nbuckets, shard->count, the
 *     `chain` field of every entry mapped in that shard, and writes of the
 *     entry's `mapped` flag.
 *   - Shard locks are leaves: a thread holds at most one shard lock at a
 *     time and takes no other lock under it. No callback (release,
 *     meta_free) and no entry destruction ever runs under a shard lock:
 *     unregister unlinks under the lock and drops the map's reference after
 *     unlocking. So callbacks may re-enter the registry freely.
 *   - Everything else in an entry is either immutable after register
 *     (kind, handle, hash, meta_free) or an atomic (refs, meta, keeps,
 *     deps, mapped).
 *
 * Invariants
 *
 *   - An entry is mapped (reachable from a bucket) iff `mapped` is true;
 *     a mapped entry holds one reference owned by the map, so refs >= 1
 *     while mapped. Hence lookup may increment refs under the shard lock
 *     without a CAS loop: the count cannot be 0 there.
 *   - refs == 0 means unmapped and unreachable from anyone: the one thread
 *     that took refs from 1 to 0 owns the entry exclusively and destroys
 *     it; it reuses `chain` as the link of its local destroy worklist.
 *   - keeps and deps are push-only (lock-free Treiber prepends) while
 *     refs > 0; they are consumed once, by the destroyer.
 *   - meta goes from NULL to non-NULL at most once after register (CAS);
 *     it is never replaced while refs > 0.
 *
 * Memory orders
 *
 *   - refs: retain is relaxed (the caller already holds a reference, so
 *     nothing is published by it); release is acq_rel: the release half
 *     orders every access a holder made to the entry (keep-alive pushes,
 *     meta reads) before the decrement, the acquire half makes the
 *     destroyer (the last decrement) see all of them. (acq_rel on the RMW
 *     instead of a release RMW plus an acquire fence: same cost on x86,
 *     and ThreadSanitizer understands it.)
 *   - meta: publish CAS is acq_rel on success (release: the candidate's
 *     contents are visible to whoever acquires the pointer; acquire: pairs
 *     with a prior publisher) and acquire on failure (the loser reads the
 *     winner's contents); readers load with acquire.
 *   - keeps/deps heads: push CAS with release (the node's fields before
 *     the node pointer); the destroyer exchanges with acquire. (The refs
 *     acq_rel chain already orders them; the explicit pair keeps each
 *     list self-contained.)
 *   - mapped: written under the shard lock with release, read with acquire
 *     by rt_registry_entry_is_registered (a snapshot).
 */
#include "rt_registry.h"
#include "rt_alloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define RT_REG_INITIAL_BUCKETS 16 /* per shard; a power of two */
#define RT_REG_SHARD_BITS 6       /* log2(RT_REGISTRY_SHARDS) */

/* A keep-alive: owned by its entry from a successful push until the
 * destroyer calls release and frees the node. */
typedef struct rt_reg_keep {
    struct rt_reg_keep *next;
    void *item;
    rt_registry_release_fn release;
    void *ctx;
} rt_reg_keep;

/* A dependency: the node owns one reference to `entry`. */
typedef struct rt_reg_dep {
    struct rt_reg_dep *next;
    rt_registry_entry *entry;
} rt_reg_dep;

struct rt_registry_entry {
    rt_registry_entry *chain; /* bucket chain (shard lock); destroy worklist
                                 link once refs == 0 */
    uint64_t hash;            /* immutable */
    uintptr_t handle;         /* immutable */
    int kind;                 /* immutable */
    rt_registry_meta_free_fn meta_free; /* immutable */
    _Atomic size_t refs;
    _Atomic(void *) meta;
    _Atomic(rt_reg_keep *) keeps;
    _Atomic(rt_reg_dep *) deps;
    _Atomic bool mapped;
};

/* One shard, on its own cache line(s) so that two shards' locks do not
 * share a line. */
typedef struct rt_reg_shard {
    _Alignas(64) pthread_mutex_t mu;
    rt_registry_entry **buckets; /* nbuckets chains (mu) */
    size_t nbuckets;             /* a power of two (mu) */
    size_t count;                /* mapped entries in this shard (mu) */
} rt_reg_shard;

struct rt_registry {
    rt_reg_shard shards[RT_REGISTRY_SHARDS];
};

_Static_assert(RT_REGISTRY_SHARDS == 1 << RT_REG_SHARD_BITS,
               "RT_REG_SHARD_BITS must be log2(RT_REGISTRY_SHARDS)");

/* splitmix64's finalizer over the key: handles are pointers whose low bits
 * are often zero and whose high bits are all alike. */
static uint64_t rt_reg_hash(int kind, uintptr_t handle)
{
    uint64_t x = (uint64_t)handle ^ ((uint64_t)(unsigned)kind * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static rt_reg_shard *rt_reg_shard_of(rt_registry *r, uint64_t hash)
{
    /* top bits pick the shard, low bits the bucket: independent */
    return &r->shards[hash >> (64 - RT_REG_SHARD_BITS)];
}

static rt_registry_entry **rt_reg_bucket(rt_reg_shard *s, uint64_t hash)
{
    return &s->buckets[hash & (s->nbuckets - 1)];
}

rt_registry *rt_registry_new(void)
{
    size_t size = sizeof(rt_registry);
    size = (size + 63) & ~(size_t)63; /* aligned_alloc: a multiple of 64 */
    rt_registry *r = rt_aligned_alloc(64, size);
    if (r == NULL)
        return NULL;
    size_t i;
    for (i = 0; i < RT_REGISTRY_SHARDS; i++) {
        rt_reg_shard *s = &r->shards[i];
        s->buckets = rt_calloc(RT_REG_INITIAL_BUCKETS, sizeof *s->buckets);
        s->nbuckets = RT_REG_INITIAL_BUCKETS;
        s->count = 0;
        if (s->buckets == NULL || pthread_mutex_init(&s->mu, NULL) != 0) {
            rt_free(s->buckets);
            goto fail;
        }
    }
    return r;
fail:
    while (i-- > 0) {
        pthread_mutex_destroy(&r->shards[i].mu);
        rt_free(r->shards[i].buckets);
    }
    rt_free(r);
    return NULL;
}

/* Doubles s's table when it is fuller than one entry per bucket. Caller
 * holds s->mu. On allocation failure nothing changes. */
static void rt_reg_maybe_grow(rt_reg_shard *s)
{
    if (s->count <= s->nbuckets || s->nbuckets > (SIZE_MAX / 2) / sizeof *s->buckets)
        return;
    size_t n = s->nbuckets * 2;
    rt_registry_entry **nb = rt_calloc(n, sizeof *nb);
    if (nb == NULL)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        rt_registry_entry *e = s->buckets[i];
        while (e != NULL) {
            rt_registry_entry *next = e->chain;
            rt_registry_entry **b = &nb[e->hash & (n - 1)];
            e->chain = *b;
            *b = e;
            e = next;
        }
    }
    rt_free(s->buckets);
    s->buckets = nb;
    s->nbuckets = n;
}

/* The link pointing at the mapped entry with this key, or at the NULL end
 * of its chain. Caller holds s->mu. */
static rt_registry_entry **rt_reg_find(rt_reg_shard *s, uint64_t hash,
                                       int kind, uintptr_t handle)
{
    rt_registry_entry **p = rt_reg_bucket(s, hash);
    while (*p != NULL &&
           !((*p)->hash == hash && (*p)->handle == handle && (*p)->kind == kind))
        p = &(*p)->chain;
    return p;
}

/* Unlinks the entry *p from s (caller holds s->mu); the map's reference is
 * now the caller's to drop, after unlocking. */
static rt_registry_entry *rt_reg_unlink(rt_reg_shard *s, rt_registry_entry **p)
{
    rt_registry_entry *e = *p;
    *p = e->chain;
    e->chain = NULL;
    s->count--;
    atomic_store_explicit(&e->mapped, false, memory_order_release);
    return e;
}

void rt_registry_entry_retain(rt_registry_entry *e)
{
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

/* Drops one reference; true when it was the last one (the caller now owns
 * the entry exclusively and must destroy it). */
static bool rt_reg_drop(rt_registry_entry *e)
{
    return atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1;
}

/* Destroys `e` (refs == 0, unmapped) and every dependency whose last
 * reference it held, iteratively: `chain` links the worklist. */
static void rt_reg_destroy(rt_registry_entry *e)
{
    rt_registry_entry *work = e;
    e->chain = NULL;
    while (work != NULL) {
        rt_registry_entry *cur = work;
        work = cur->chain;

        rt_reg_keep *k = atomic_exchange_explicit(&cur->keeps, NULL,
                                                  memory_order_acquire);
        while (k != NULL) {
            rt_reg_keep *next = k->next;
            k->release(k->item, k->ctx);
            rt_free(k);
            k = next;
        }

        void *meta = atomic_exchange_explicit(&cur->meta, NULL,
                                              memory_order_acquire);
        if (meta != NULL && cur->meta_free != NULL)
            cur->meta_free(meta);

        rt_reg_dep *d = atomic_exchange_explicit(&cur->deps, NULL,
                                                 memory_order_acquire);
        while (d != NULL) {
            rt_reg_dep *next = d->next;
            if (rt_reg_drop(d->entry)) {
                d->entry->chain = work;
                work = d->entry;
            }
            rt_free(d);
            d = next;
        }
        rt_free(cur);
    }
}

void rt_registry_entry_release(rt_registry_entry *e)
{
    if (e != NULL && rt_reg_drop(e))
        rt_reg_destroy(e);
}

static void rt_reg_push_dep(rt_registry_entry *e, rt_reg_dep *d)
{
    d->next = atomic_load_explicit(&e->deps, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&e->deps, &d->next, d,
                                                  memory_order_release,
                                                  memory_order_relaxed))
        ;
}

int rt_registry_register(rt_registry *r, int kind, uintptr_t handle,
                         void *meta, rt_registry_meta_free_fn meta_free,
                         rt_registry_entry *dep, rt_registry_entry **out)
{
    if (out != NULL)
        *out = NULL;
    /* Allocate everything first: past the lock nothing can fail. */
    rt_registry_entry *e = rt_malloc(sizeof *e);
    rt_reg_dep *d = NULL;
    if (e == NULL)
        return -ENOMEM;
    if (dep != NULL && (d = rt_malloc(sizeof *d)) == NULL) {
        rt_free(e);
        return -ENOMEM;
    }
    e->chain = NULL;
    e->hash = rt_reg_hash(kind, handle);
    e->handle = handle;
    e->kind = kind;
    e->meta_free = meta_free;
    atomic_init(&e->refs, out != NULL ? 2 : 1);
    atomic_init(&e->meta, meta);
    atomic_init(&e->keeps, NULL);
    atomic_init(&e->deps, NULL);
    atomic_init(&e->mapped, true);
    if (d != NULL) {
        /* e is still private: the push cannot race, and the caller's own
         * reference keeps dep alive across the retain. */
        d->entry = dep;
        rt_registry_entry_retain(dep);
        rt_reg_push_dep(e, d);
    }

    rt_reg_shard *s = rt_reg_shard_of(r, e->hash);
    pthread_mutex_lock(&s->mu);
    rt_registry_entry **p = rt_reg_find(s, e->hash, kind, handle);
    if (*p != NULL) {
        pthread_mutex_unlock(&s->mu);
        if (d != NULL)
            rt_registry_entry_release(dep); /* never the last: caller's */
        rt_free(d);
        rt_free(e);
        return -EEXIST;
    }
    *p = e; /* the end of the chain */
    s->count++;
    rt_reg_maybe_grow(s);
    pthread_mutex_unlock(&s->mu);
    if (out != NULL)
        *out = e;
    return 0;
}

int rt_registry_lookup(rt_registry *r, int kind, uintptr_t handle,
                       rt_registry_entry **out)
{
    uint64_t h = rt_reg_hash(kind, handle);
    rt_reg_shard *s = rt_reg_shard_of(r, h);
    pthread_mutex_lock(&s->mu);
    rt_registry_entry *e = *rt_reg_find(s, h, kind, handle);
    if (e != NULL)
        rt_registry_entry_retain(e); /* refs >= 1 (the map's) here */
    pthread_mutex_unlock(&s->mu);
    *out = e;
    return e != NULL ? 0 : -ENOENT;
}

int rt_registry_unregister(rt_registry *r, int kind, uintptr_t handle)
{
    uint64_t h = rt_reg_hash(kind, handle);
    rt_reg_shard *s = rt_reg_shard_of(r, h);
    pthread_mutex_lock(&s->mu);
    rt_registry_entry **p = rt_reg_find(s, h, kind, handle);
    rt_registry_entry *e = *p != NULL ? rt_reg_unlink(s, p) : NULL;
    pthread_mutex_unlock(&s->mu);
    if (e == NULL)
        return -ENOENT;
    rt_registry_entry_release(e); /* the map's reference, outside the lock */
    return 0;
}

int rt_registry_unregister_entry(rt_registry *r, rt_registry_entry *e)
{
    rt_reg_shard *s = rt_reg_shard_of(r, e->hash);
    pthread_mutex_lock(&s->mu);
    rt_registry_entry **p = rt_reg_bucket(s, e->hash);
    while (*p != NULL && *p != e)
        p = &(*p)->chain;
    rt_registry_entry *found = *p != NULL ? rt_reg_unlink(s, p) : NULL;
    pthread_mutex_unlock(&s->mu);
    if (found == NULL)
        return -ENOENT;
    rt_registry_entry_release(found); /* never the last: the caller's */
    return 0;
}

size_t rt_registry_unregister_kind(rt_registry *r, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < RT_REGISTRY_SHARDS; i++) {
        rt_reg_shard *s = &r->shards[i];
        rt_registry_entry *list = NULL;
        pthread_mutex_lock(&s->mu);
        for (size_t b = 0; b < s->nbuckets; b++) {
            rt_registry_entry **p = &s->buckets[b];
            while (*p != NULL) {
                if ((*p)->kind != kind) {
                    p = &(*p)->chain;
                    continue;
                }
                rt_registry_entry *e = rt_reg_unlink(s, p); /* *p is now the next */
                e->chain = list;
                list = e;
                n++;
            }
        }
        pthread_mutex_unlock(&s->mu);
        while (list != NULL) { /* the map's references, outside the lock */
            rt_registry_entry *e = list;
            list = e->chain;
            e->chain = NULL;
            rt_registry_entry_release(e);
        }
    }
    return n;
}

void rt_registry_fork_prepare(rt_registry *r)
{
    for (size_t i = 0; i < RT_REGISTRY_SHARDS; i++)
        pthread_mutex_lock(&r->shards[i].mu);
}

void rt_registry_fork_release(rt_registry *r)
{
    for (size_t i = RT_REGISTRY_SHARDS; i-- > 0;)
        pthread_mutex_unlock(&r->shards[i].mu);
}

size_t rt_registry_count(rt_registry *r)
{
    size_t n = 0;
    for (size_t i = 0; i < RT_REGISTRY_SHARDS; i++) {
        rt_reg_shard *s = &r->shards[i];
        pthread_mutex_lock(&s->mu);
        n += s->count;
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

size_t rt_registry_count_kind(rt_registry *r, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < RT_REGISTRY_SHARDS; i++) {
        rt_reg_shard *s = &r->shards[i];
        pthread_mutex_lock(&s->mu);
        for (size_t b = 0; b < s->nbuckets; b++)
            for (rt_registry_entry *e = s->buckets[b]; e != NULL; e = e->chain)
                n += e->kind == kind;
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

void rt_registry_free(rt_registry *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < RT_REGISTRY_SHARDS; i++) {
        rt_reg_shard *s = &r->shards[i];
        /* No concurrent caller (contract); still, as everywhere, unlink
         * under the lock (collecting the entries through `chain`) and drop
         * the map's references after unlocking. */
        rt_registry_entry *list = NULL;
        pthread_mutex_lock(&s->mu);
        for (size_t b = 0; b < s->nbuckets; b++)
            while (s->buckets[b] != NULL) {
                rt_registry_entry *e = rt_reg_unlink(s, &s->buckets[b]);
                e->chain = list;
                list = e;
            }
        pthread_mutex_unlock(&s->mu);
        while (list != NULL) {
            rt_registry_entry *e = list;
            list = e->chain;
            e->chain = NULL;
            rt_registry_entry_release(e);
        }
        pthread_mutex_destroy(&s->mu);
        rt_free(s->buckets);
    }
    rt_free(r);
}

int rt_registry_entry_kind(const rt_registry_entry *e)
{
    return e->kind;
}

uintptr_t rt_registry_entry_handle(const rt_registry_entry *e)
{
    return e->handle;
}

int rt_registry_entry_is_registered(rt_registry_entry *e)
{
    return atomic_load_explicit(&e->mapped, memory_order_acquire);
}

size_t rt_registry_entry_refcount(rt_registry_entry *e)
{
    return atomic_load_explicit(&e->refs, memory_order_relaxed);
}

void *rt_registry_meta(rt_registry_entry *e)
{
    return atomic_load_explicit(&e->meta, memory_order_acquire);
}

void *rt_registry_meta_publish(rt_registry_entry *e, void *candidate)
{
    void *cur = NULL;
    if (candidate == NULL)
        return rt_registry_meta(e);
    if (atomic_compare_exchange_strong_explicit(&e->meta, &cur, candidate,
                                                memory_order_acq_rel,
                                                memory_order_acquire))
        return candidate;
    return cur; /* the winner; the candidate stays the caller's */
}

int rt_registry_keep_alive(rt_registry_entry *e, void *item,
                           rt_registry_release_fn release, void *ctx)
{
    if (release == NULL)
        return -EINVAL;
    rt_reg_keep *k = rt_malloc(sizeof *k);
    if (k == NULL)
        return -ENOMEM;
    k->item = item;
    k->release = release;
    k->ctx = ctx;
    k->next = atomic_load_explicit(&e->keeps, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&e->keeps, &k->next, k,
                                                  memory_order_release,
                                                  memory_order_relaxed))
        ;
    return 0;
}

int rt_registry_add_dependency(rt_registry_entry *e, rt_registry_entry *dep)
{
    if (dep == NULL || dep == e)
        return -EINVAL;
    rt_reg_dep *d = rt_malloc(sizeof *d);
    if (d == NULL)
        return -ENOMEM;
    d->entry = dep;
    rt_registry_entry_retain(dep);
    rt_reg_push_dep(e, d);
    return 0;
}
