/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_registry.c — unit and stress test of runtime/process/rt_registry.c (no
 * Python).
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -O2 -pthread -Iruntime/include \
 *       -Iruntime/process tests/c/test_registry.c \
 *       runtime/process/rt_registry.c -o build/tests/test_registry
 *
 * Also built with clang -fsanitize=thread and -fsanitize=address,undefined.
 * RT_STRESS_OPS (default 100000) sets the operations per churn thread.
 *
 * Every meta and keep-alive item of the test is a heap object with a magic
 * number and is freed by the callback that releases it: a double release
 * is a double free (ASan) or a bad magic, a missing release a leak (LSan)
 * and a count mismatch.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_registry.h"

#include "check.h"


static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- counted meta and keep-alive items ---- */

#define META_MAGIC 0x6d657461u
#define ITEM_MAGIC 0x6b656570u
#define DEAD_MAGIC 0xdeadbeefu

typedef struct {
    uint32_t magic;
    int kind;
    uintptr_t handle; /* 0 when made for publish */
} test_meta;

typedef struct {
    uint32_t magic;
    _Atomic int released;
    int tag;          /* unit tests: identifies the item in the log */
} test_item;

static _Atomic long meta_alloc, meta_freed, meta_caller_freed;
static _Atomic long keep_added, keep_released;
static _Atomic long entries_created, entries_destroyed;
static _Atomic long bad; /* bad magic, double release, wrong key */

/* Release log for the ordering checks of the unit tests. */
static int release_log[64];
static _Atomic int release_log_n;

static test_meta *meta_new(int kind, uintptr_t handle)
{
    test_meta *m = xmalloc(sizeof *m);
    m->magic = META_MAGIC;
    m->kind = kind;
    m->handle = handle;
    atomic_fetch_add_explicit(&meta_alloc, 1, memory_order_relaxed);
    return m;
}

static void meta_free_cb(void *p)
{
    test_meta *m = p;
    if (m->magic != META_MAGIC)
        atomic_fetch_add(&bad, 1);
    m->magic = DEAD_MAGIC;
    free(m);
    atomic_fetch_add_explicit(&meta_freed, 1, memory_order_relaxed);
}

static void meta_caller_free(test_meta *m)
{
    m->magic = DEAD_MAGIC;
    free(m);
    atomic_fetch_add_explicit(&meta_caller_freed, 1, memory_order_relaxed);
}

static test_item *item_new(int tag)
{
    test_item *it = xmalloc(sizeof *it);
    it->magic = ITEM_MAGIC;
    atomic_init(&it->released, 0);
    it->tag = tag;
    return it;
}

/* ctx: the counter to bump (keep_released, or entries_destroyed for the
 * one "sentinel" keep-alive every stress entry gets). */
static void item_release_cb(void *p, void *ctx)
{
    test_item *it = p;
    if (it->magic != ITEM_MAGIC || atomic_exchange(&it->released, 1) != 0)
        atomic_fetch_add(&bad, 1);
    if (it->tag != 0) {
        int i = atomic_fetch_add(&release_log_n, 1);
        if (i < 64)
            release_log[i] = it->tag;
    }
    it->magic = DEAD_MAGIC;
    free(it);
    atomic_fetch_add_explicit((_Atomic long *)ctx, 1, memory_order_relaxed);
}

static int add_keep(rt_registry_entry *e, int tag)
{
    test_item *it = item_new(tag);
    int rc = rt_registry_keep_alive(e, it, item_release_cb, &keep_released);
    if (rc == 0)
        atomic_fetch_add_explicit(&keep_added, 1, memory_order_relaxed);
    else
        free(it);
    return rc;
}

static void add_sentinel(rt_registry_entry *e)
{
    test_item *it = item_new(0);
    if (rt_registry_keep_alive(e, it, item_release_cb, &entries_destroyed) != 0) {
        fprintf(stderr, "keep_alive failed\n");
        exit(2);
    }
    atomic_fetch_add_explicit(&entries_created, 1, memory_order_relaxed);
}

static uintptr_t handle_of(unsigned key)
{
    return (uintptr_t)0x7f0000000000ULL + (uintptr_t)(key + 1) * 0x200;
}

/* ---- unit tests ---- */

static void test_basic(void)
{
    rt_registry *r = rt_registry_new();
    rt_registry_entry *e = NULL, *e2 = NULL, *x = (rt_registry_entry *)&e;
    uintptr_t h = handle_of(1);
    CHECK(r != NULL);

    test_meta *m = meta_new(1, h);
    CHECK(rt_registry_register(r, 1, h, m, meta_free_cb, NULL, &e) == 0);
    CHECK(e != NULL && rt_registry_entry_refcount(e) == 2);
    CHECK(rt_registry_entry_kind(e) == 1 && rt_registry_entry_handle(e) == h);
    CHECK(rt_registry_entry_is_registered(e));
    CHECK(rt_registry_meta(e) == m);
    CHECK(rt_registry_count(r) == 1);

    /* duplicate live key: -EEXIST, meta not adopted, out NULL */
    test_meta *dup = meta_new(1, h);
    CHECK(rt_registry_register(r, 1, h, dup, meta_free_cb, NULL, &x) == -EEXIST);
    CHECK(x == NULL);
    meta_caller_free(dup);
    /* same handle, other kind: another key */
    CHECK(rt_registry_register(r, 2, h, NULL, NULL, NULL, NULL) == 0);
    CHECK(rt_registry_count(r) == 2);
    CHECK(rt_registry_count_kind(r, 1) == 1 && rt_registry_count_kind(r, 2) == 1);
    CHECK(rt_registry_count_kind(r, 3) == 0);

    CHECK(rt_registry_lookup(r, 1, h, &e2) == 0 && e2 == e);
    CHECK(rt_registry_entry_refcount(e) == 3);
    rt_registry_entry_release(e2);
    CHECK(add_keep(e, 11) == 0);

    /* unregister: unmapped at once; the held reference stays valid */
    CHECK(rt_registry_unregister(r, 1, h) == 0);
    CHECK(rt_registry_lookup(r, 1, h, &x) == -ENOENT && x == NULL);
    CHECK(rt_registry_unregister(r, 1, h) == -ENOENT);
    CHECK(!rt_registry_entry_is_registered(e));
    CHECK(rt_registry_entry_refcount(e) == 1);
    CHECK(rt_registry_meta(e) == m && m->magic == META_MAGIC);
    CHECK(add_keep(e, 12) == 0); /* allowed after unregister */
    CHECK(atomic_load(&keep_released) == 0);

    /* the handle value is reused at once by a new entry */
    CHECK(rt_registry_register(r, 1, h, NULL, NULL, NULL, &e2) == 0);
    CHECK(e2 != e);
    CHECK(rt_registry_unregister_entry(r, e) == -ENOENT); /* stale holder */
    CHECK(rt_registry_lookup(r, 1, h, &x) == 0 && x == e2);
    rt_registry_entry_release(x);

    /* last reference: keep-alives (newest first), then meta */
    atomic_store(&release_log_n, 0);
    rt_registry_entry_release(e);
    CHECK(atomic_load(&keep_released) == 2);
    CHECK(atomic_load(&release_log_n) == 2);
    CHECK(release_log[0] == 12 && release_log[1] == 11);
    CHECK(atomic_load(&meta_freed) == 1);

    CHECK(rt_registry_unregister_entry(r, e2) == 0);
    CHECK(rt_registry_unregister_entry(r, e2) == -ENOENT);
    rt_registry_entry_release(e2);
    CHECK(rt_registry_unregister(r, 2, h) == 0);
    CHECK(rt_registry_count(r) == 0);

    /* argument checks */
    CHECK(rt_registry_register(r, 1, h, NULL, NULL, NULL, &e) == 0);
    CHECK(rt_registry_add_dependency(e, e) == -EINVAL);
    CHECK(rt_registry_add_dependency(e, NULL) == -EINVAL);
    CHECK(rt_registry_keep_alive(e, NULL, NULL, NULL) == -EINVAL);
    CHECK(rt_registry_meta_publish(e, NULL) == NULL);
    rt_registry_entry_release(e);
    rt_registry_free(r); /* unmaps and destroys e */
    CHECK(atomic_load(&meta_alloc) ==
          atomic_load(&meta_freed) + atomic_load(&meta_caller_freed));
}

/* Dependencies keep their targets alive; destruction order. */
static void test_dependencies(void)
{
    rt_registry *r = rt_registry_new();
    rt_registry_entry *ctx, *mod, *fn;
    long kr0 = atomic_load(&keep_released);
    CHECK(rt_registry_register(r, 0, handle_of(1), NULL, NULL, NULL, &ctx) == 0);
    CHECK(rt_registry_register(r, 1, handle_of(2), NULL, NULL, ctx, &mod) == 0);
    CHECK(rt_registry_register(r, 2, handle_of(3), NULL, NULL, mod, &fn) == 0);
    CHECK(rt_registry_add_dependency(fn, ctx) == 0);
    CHECK(add_keep(ctx, 1) == 0);
    CHECK(add_keep(mod, 2) == 0);
    CHECK(add_keep(fn, 3) == 0);
    /* ctx: map + mine + mod's dep + fn's dep */
    CHECK(rt_registry_entry_refcount(ctx) == 4);
    CHECK(rt_registry_entry_refcount(mod) == 3);
    rt_registry_entry_release(ctx);
    rt_registry_entry_release(mod);
    rt_registry_entry_release(fn);

    /* destroy the parents first: they live on for their dependents */
    CHECK(rt_registry_unregister(r, 0, handle_of(1)) == 0);
    CHECK(rt_registry_unregister(r, 1, handle_of(2)) == 0);
    CHECK(atomic_load(&keep_released) == kr0);
    atomic_store(&release_log_n, 0);
    CHECK(rt_registry_unregister(r, 2, handle_of(3)) == 0);
    CHECK(atomic_load(&keep_released) == kr0 + 3);
    CHECK(atomic_load(&release_log_n) == 3);
    CHECK(release_log[0] == 3 && release_log[1] == 2 && release_log[2] == 1);
    CHECK(rt_registry_count(r) == 0);
    rt_registry_free(r);
}

/* A long dependency chain is destroyed iteratively (no deep recursion),
 * and the shards' tables grow. */
static void test_chain(size_t n)
{
    rt_registry *r = rt_registry_new();
    rt_registry_entry *prev = NULL, *e = NULL;
    long d0 = atomic_load(&entries_destroyed);
    for (size_t i = 0; i < n; i++) {
        if (rt_registry_register(r, 3, handle_of((unsigned)i), NULL, NULL, prev,
                                 &e) != 0) {
            CHECK(!"register");
            break;
        }
        add_sentinel(e);
        rt_registry_entry_release(prev);
        prev = e;
    }
    CHECK(rt_registry_count(r) == n);
    for (size_t i = 0; i < n; i++) {
        rt_registry_entry *x;
        if (rt_registry_lookup(r, 3, handle_of((unsigned)i), &x) != 0 ||
            rt_registry_entry_handle(x) != handle_of((unsigned)i))
            failures++;
        rt_registry_entry_release(x);
    }
    for (size_t i = 0; i < n; i++) /* the root first */
        if (rt_registry_unregister(r, 3, handle_of((unsigned)i)) != 0)
            failures++;
    CHECK(rt_registry_count(r) == 0);
    CHECK(atomic_load(&entries_destroyed) == d0); /* all held by the tail */
    rt_registry_entry_release(prev);               /* cascade of n */
    CHECK(atomic_load(&entries_destroyed) == d0 + (long)n);
    rt_registry_free(r);
}

/* rt_registry_free with mapped entries; a held one survives it. */
static void test_free_nonempty(void)
{
    rt_registry *r = rt_registry_new();
    rt_registry_entry *held;
    long d0 = atomic_load(&entries_destroyed);
    for (unsigned i = 0; i < 100; i++) {
        rt_registry_entry *e;
        CHECK(rt_registry_register(r, 5, handle_of(i), NULL, NULL, NULL, &e) == 0);
        add_sentinel(e);
        rt_registry_entry_release(e);
    }
    CHECK(rt_registry_lookup(r, 5, handle_of(42), &held) == 0);
    rt_registry_free(r);
    CHECK(atomic_load(&entries_destroyed) == d0 + 99);
    CHECK(rt_registry_entry_handle(held) == handle_of(42));
    rt_registry_entry_release(held);
    CHECK(atomic_load(&entries_destroyed) == d0 + 100);
}

/* unregister_kind unmaps exactly the entries of one kind; held entries
 * live on; the key can be registered again at once. */
static void test_unregister_kind(void)
{
    rt_registry *r = rt_registry_new();
    rt_registry_entry *held;
    long d0 = atomic_load(&entries_destroyed);
    for (unsigned i = 0; i < 300; i++) {
        rt_registry_entry *e;
        CHECK(rt_registry_register(r, 1 + (int)(i % 3), handle_of(i / 3), NULL, NULL, NULL,
                                   &e) == 0);
        add_sentinel(e);
        rt_registry_entry_release(e);
    }
    CHECK(rt_registry_lookup(r, 2, handle_of(7), &held) == 0);
    CHECK(rt_registry_unregister_kind(r, 2) == 100);
    CHECK(rt_registry_count(r) == 200);
    CHECK(rt_registry_count_kind(r, 1) == 100 && rt_registry_count_kind(r, 2) == 0);
    CHECK(rt_registry_count_kind(r, 3) == 100);
    CHECK(atomic_load(&entries_destroyed) == d0 + 99);
    CHECK(!rt_registry_entry_is_registered(held));
    rt_registry_entry *e;
    CHECK(rt_registry_lookup(r, 2, handle_of(8), &e) == -ENOENT);
    CHECK(rt_registry_lookup(r, 1, handle_of(8), &e) == 0);
    rt_registry_entry_release(e);
    CHECK(rt_registry_register(r, 2, handle_of(7), NULL, NULL, NULL, NULL) == 0);
    CHECK(rt_registry_unregister_kind(r, 2) == 1);
    CHECK(rt_registry_unregister_kind(r, 4) == 0);
    rt_registry_entry_release(held);
    CHECK(atomic_load(&entries_destroyed) == d0 + 100);
    rt_registry_free(r);
    CHECK(atomic_load(&entries_destroyed) == d0 + 300);
}

/* Purging one kind while other threads register, look up and publish meta
 * in it (the kernel-layout pattern) and work on another kind: no entry is
 * lost or freed twice (ThreadSanitizer and the magic checks). */
#define NPURGE 8
static rt_registry *purge_r;
static _Atomic int purge_stop;

static void *purge_worker(void *arg)
{
    size_t t = (size_t)arg;
    for (unsigned i = 0; i < 20000; i++) {
        int kind = 1 + (int)((i + t) % 2);
        uintptr_t h = handle_of((i * 7 + (unsigned)t) % 64);
        rt_registry_entry *e;
        if (rt_registry_lookup(purge_r, kind, h, &e) != 0 &&
            rt_registry_register(purge_r, kind, h, NULL, meta_free_cb, NULL, &e) != 0)
            continue; /* lost a register race */
        if (rt_registry_meta(e) == NULL) {
            test_meta *mine = meta_new(kind, h);
            if (rt_registry_meta_publish(e, mine) != mine)
                meta_caller_free(mine);
        }
        test_meta *m = rt_registry_meta(e);
        if (m->magic != META_MAGIC || m->kind != kind)
            atomic_fetch_add(&bad, 1);
        rt_registry_entry_release(e);
    }
    return NULL;
}

static void *purger(void *arg)
{
    (void)arg;
    while (!atomic_load(&purge_stop))
        rt_registry_unregister_kind(purge_r, 1);
    return NULL;
}

static void test_unregister_kind_race(void)
{
    purge_r = rt_registry_new();
    long b0 = atomic_load(&bad);
    pthread_t w[NPURGE], p;
    pthread_create(&p, NULL, purger, NULL);
    for (size_t i = 0; i < NPURGE; i++)
        pthread_create(&w[i], NULL, purge_worker, (void *)i);
    for (size_t i = 0; i < NPURGE; i++)
        pthread_join(w[i], NULL);
    atomic_store(&purge_stop, 1);
    pthread_join(p, NULL);
    rt_registry_unregister_kind(purge_r, 1);
    CHECK(rt_registry_count(purge_r) <= 64);
    rt_registry_free(purge_r);
    CHECK(atomic_load(&bad) == b0);
    CHECK(atomic_load(&meta_alloc) ==
          atomic_load(&meta_freed) + atomic_load(&meta_caller_freed));
}

/* 16 threads publish different candidates at once: one winner. */
#define NPUB 16
static rt_registry_entry *pub_entry;
static void *pub_seen[NPUB];
static _Atomic int pub_won;
static pthread_barrier_t pub_barrier;

static void *publisher(void *arg)
{
    size_t i = (size_t)arg;
    test_meta *mine = meta_new(9, i);
    pthread_barrier_wait(&pub_barrier);
    void *w = rt_registry_meta_publish(pub_entry, mine);
    if (w == mine) {
        atomic_fetch_add(&pub_won, 1);
    } else {
        /* the winner's contents are visible (acquire) */
        if (((test_meta *)w)->magic != META_MAGIC)
            atomic_fetch_add(&bad, 1);
        meta_caller_free(mine);
    }
    if (rt_registry_meta(pub_entry) != w)
        atomic_fetch_add(&bad, 1);
    pub_seen[i] = w;
    return NULL;
}

static void test_publish_race(int rounds)
{
    for (int round = 0; round < rounds; round++) {
        rt_registry *r = rt_registry_new();
        pthread_t t[NPUB];
        long mf0 = atomic_load(&meta_freed), mc0 = atomic_load(&meta_caller_freed);
        CHECK(rt_registry_register(r, 9, handle_of(9), NULL, meta_free_cb, NULL,
                                   &pub_entry) == 0);
        atomic_store(&pub_won, 0);
        pthread_barrier_init(&pub_barrier, NULL, NPUB);
        for (size_t i = 0; i < NPUB; i++)
            pthread_create(&t[i], NULL, publisher, (void *)i);
        for (size_t i = 0; i < NPUB; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&pub_barrier);
        CHECK(atomic_load(&pub_won) == 1);
        for (size_t i = 1; i < NPUB; i++)
            CHECK(pub_seen[i] == pub_seen[0]);
        CHECK(atomic_load(&meta_caller_freed) - mc0 == NPUB - 1);
        CHECK(rt_registry_unregister(r, 9, handle_of(9)) == 0);
        CHECK(atomic_load(&meta_freed) == mf0); /* still referenced */
        rt_registry_entry_release(pub_entry);
        CHECK(atomic_load(&meta_freed) - mf0 == 1); /* the survivor, once */
        rt_registry_free(r);
    }
}

/* ---- stress: 16 threads churning overlapping keys ---- */

#define NTHREADS 16
#define NPARENTS 64
#define NKEYS 4096  /* child keys per kind */
#define SPAN 1024   /* keys a thread touches: [t * 256, t * 256 + SPAN) */
#define NHELD 8     /* references a thread keeps across operations */
#define KIND_PARENT 0

static rt_registry *sr;
static size_t ops_per_thread;
static pthread_barrier_t churn_barrier;
static _Atomic long n_reg, n_exist, n_lookup_hit, n_unreg, n_publish_lost;

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void check_entry(rt_registry_entry *e, int kind, uintptr_t h)
{
    if (rt_registry_entry_kind(e) != kind || rt_registry_entry_handle(e) != h)
        atomic_fetch_add(&bad, 1);
    test_meta *m = rt_registry_meta(e);
    if (m != NULL && (m->magic != META_MAGIC ||
                      (m->handle != 0 && (m->handle != h || m->kind != kind))))
        atomic_fetch_add(&bad, 1);
}

static void hold(rt_registry_entry **held, uint64_t r, rt_registry_entry *e)
{
    rt_registry_entry **slot = &held[r % NHELD];
    rt_registry_entry_release(*slot);
    *slot = e;
}

static void *churn(void *arg)
{
    unsigned t = (unsigned)(size_t)arg;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (t + 1);
    rt_registry_entry *held[NHELD] = {0};
    long reg = 0, exist = 0, hit = 0, unreg = 0, lost = 0;
    pthread_barrier_wait(&churn_barrier);

    for (size_t op = 0; op < ops_per_thread; op++) {
        uint64_t r = xorshift(&seed);
        unsigned choice = (unsigned)(r % 100);
        int kind = 1 + (int)((r >> 8) & 1);
        unsigned key = (t * 256 + (unsigned)((r >> 16) % SPAN)) % NKEYS;
        uintptr_t h = handle_of(key);
        rt_registry_entry *e = NULL;

        if (choice < 30) { /* create: register, maybe on a parent */
            rt_registry_entry *parent = NULL;
            rt_registry_lookup(sr, KIND_PARENT,
                               handle_of((unsigned)((r >> 32) % NPARENTS)), &parent);
            test_meta *m = (r >> 40) & 1 ? meta_new(kind, h) : NULL;
            int rc = rt_registry_register(sr, kind, h, m, meta_free_cb, parent, &e);
            if (rc == 0) {
                reg++;
                add_sentinel(e);
                if ((r >> 41) & 1)
                    add_keep(e, 0);
                if ((r >> 42) & 1)
                    hold(held, r >> 43, e);
                else
                    rt_registry_entry_release(e);
            } else {
                if (rc != -EEXIST || e != NULL)
                    atomic_fetch_add(&bad, 1);
                exist++;
                if (m != NULL)
                    meta_caller_free(m);
            }
            rt_registry_entry_release(parent);
        } else if (choice < 60) { /* from-handle: lookup */
            if (rt_registry_lookup(sr, kind, h, &e) == 0) {
                hit++;
                check_entry(e, kind, h);
                if (rt_registry_meta(e) == NULL && ((r >> 40) & 3) == 0) {
                    test_meta *c = meta_new(kind, 0);
                    void *w = rt_registry_meta_publish(e, c);
                    if (w != c) {
                        lost++;
                        meta_caller_free(c);
                    }
                }
                if (((r >> 42) & 3) == 0)
                    add_keep(e, 0);
                if ((r >> 44) & 1)
                    hold(held, r >> 45, e);
                else
                    rt_registry_entry_release(e);
            } else if (e != NULL) {
                atomic_fetch_add(&bad, 1);
            }
        } else if (choice < 85) { /* destroy */
            if (rt_registry_unregister(sr, kind, h) == 0)
                unreg++;
        } else if (choice < 90) { /* a holder destroys its own entry */
            rt_registry_entry *he = held[(r >> 8) % NHELD];
            if (he != NULL) {
                check_entry(he, rt_registry_entry_kind(he),
                            rt_registry_entry_handle(he));
                if (rt_registry_unregister_entry(sr, he) == 0)
                    unreg++;
            }
        } else { /* parents come and go too */
            uintptr_t ph = handle_of((unsigned)((r >> 8) % NPARENTS));
            if ((r >> 20) & 1) {
                test_meta *m = meta_new(KIND_PARENT, ph);
                if (rt_registry_register(sr, KIND_PARENT, ph, m, meta_free_cb,
                                         NULL, &e) == 0) {
                    reg++;
                    add_sentinel(e);
                    rt_registry_entry_release(e);
                } else {
                    exist++;
                    meta_caller_free(m); /* not adopted */
                }
            } else if (rt_registry_unregister(sr, KIND_PARENT, ph) == 0) {
                unreg++;
            }
        }
    }
    for (int i = 0; i < NHELD; i++)
        rt_registry_entry_release(held[i]);
    atomic_fetch_add(&n_reg, reg);
    atomic_fetch_add(&n_exist, exist);
    atomic_fetch_add(&n_lookup_hit, hit);
    atomic_fetch_add(&n_unreg, unreg);
    atomic_fetch_add(&n_publish_lost, lost);
    return NULL;
}

static void test_stress(void)
{
    pthread_t t[NTHREADS];
    long m0 = atomic_load(&meta_alloc), mf0 = atomic_load(&meta_freed),
         mc0 = atomic_load(&meta_caller_freed);
    long k0 = atomic_load(&keep_added), kr0 = atomic_load(&keep_released);
    long c0 = atomic_load(&entries_created), d0 = atomic_load(&entries_destroyed);
    sr = rt_registry_new();
    CHECK(sr != NULL);
    pthread_barrier_init(&churn_barrier, NULL, NTHREADS);
    double t0 = now_s();
    for (size_t i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, churn, (void *)i);
    for (size_t i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    double t1 = now_s();
    pthread_barrier_destroy(&churn_barrier);

    /* Quiescent. Hold the parents still mapped, destroy every child, then
     * each parent must be back to map + ours: no dependency left. */
    rt_registry_entry *parents[NPARENTS];
    size_t nchildren_left = 0;
    for (unsigned p = 0; p < NPARENTS; p++)
        rt_registry_lookup(sr, KIND_PARENT, handle_of(p), &parents[p]);
    for (int kind = 1; kind <= 2; kind++)
        for (unsigned k = 0; k < NKEYS; k++)
            nchildren_left += rt_registry_unregister(sr, kind, handle_of(k)) == 0;
    for (unsigned p = 0; p < NPARENTS; p++)
        if (parents[p] != NULL) {
            CHECK(rt_registry_entry_refcount(parents[p]) == 2);
            CHECK(rt_registry_unregister_entry(sr, parents[p]) == 0);
            CHECK(rt_registry_entry_refcount(parents[p]) == 1);
            rt_registry_entry_release(parents[p]);
        }
    CHECK(rt_registry_count(sr) == 0);

    long created = atomic_load(&entries_created) - c0;
    long destroyed = atomic_load(&entries_destroyed) - d0;
    long kadd = atomic_load(&keep_added) - k0;
    long krel = atomic_load(&keep_released) - kr0;
    long malloc_ = atomic_load(&meta_alloc) - m0;
    long mfreed = atomic_load(&meta_freed) - mf0;
    long mcaller = atomic_load(&meta_caller_freed) - mc0;
    CHECK(created == atomic_load(&n_reg));
    CHECK(created == destroyed);
    CHECK(kadd == krel);
    CHECK(malloc_ == mfreed + mcaller);
    CHECK(atomic_load(&bad) == 0);
    printf("  stress: %d threads x %zu ops (%.2f s): %ld registered, %ld "
           "-EEXIST, %ld lookup hits, %ld unregistered (+%zu at the end), "
           "%ld keep-alives released of %ld, %ld entries destroyed of %ld, "
           "metas %ld = %ld freed by the registry + %ld by callers "
           "(%ld publish losers)\n",
           NTHREADS, ops_per_thread, t1 - t0, atomic_load(&n_reg),
           atomic_load(&n_exist), atomic_load(&n_lookup_hit),
           atomic_load(&n_unreg), nchildren_left, krel, kadd, destroyed,
           created, malloc_, mfreed, mcaller, atomic_load(&n_publish_lost));
    rt_registry_free(sr);
}

int main(void)
{
    const char *env = getenv("RT_STRESS_OPS");
    ops_per_thread = env != NULL && *env ? strtoul(env, NULL, 10) : 100000;
    if (ops_per_thread == 0)
        ops_per_thread = 1;

    printf("test_registry\n");
    test_basic();
    test_dependencies();
    test_chain(200000);
    test_free_nonempty();
    test_unregister_kind();
    test_unregister_kind_race();
    test_publish_race(50);
    test_stress();
    if (failures) {
        fprintf(stderr, "test_registry: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_registry: all passed\n");
    return 0;
}
