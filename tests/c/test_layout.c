/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_layout.c — unit and stress test of runtime/module/bind_layout.c, a
 * kernel handle's own copy of its kernel's layout (no Python).
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -O2 -pthread -Iruntime/include \
 *       -Iruntime/module tests/c/test_layout.c runtime/module/bind_layout.c \
 *       -o build/tests/test_layout
 *
 * Also built with clang -fsanitize=thread and -fsanitize=address,undefined.
 * RT_STRESS_OPS (default 100000) sets the least number of lookups per
 * thread.
 *
 * The stress test is the publication race the packer runs when many threads
 * make the first plain-values launch through one fresh kernel handle: every
 * thread looks the copy up, the ones that miss build the layout and try to
 * publish it, and the ones that hit read every field of a copy another
 * thread wrote. A publication that does not order those writes before the
 * slot's store (a plain or relaxed store, a relaxed load) is a data race
 * ThreadSanitizer reports here; a Python-level test cannot show it, because
 * CPython's own reference-count atomics order the threads anyway.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind_layout.h"

#include "check.h"

enum { KIND = 7, NTHREADS = 16, NSLOTS = 64, PER_ROUND = 4 };

/* Two kernels with different layouts: F takes 3 parameters, G 5. */
static char kernel_f, kernel_g;
#define F ((void *)&kernel_f)
#define G ((void *)&kernel_g)

static size_t params_of(void *func)
{
    return func == F ? 3 : 5;
}

/* The layout "the driver" gives for func: parameter k at offset 8k with
 * size 8 (F) or 4 (G): distinct for the two kernels. */
static cbs_pack_layout *driver_layout(void *func, unsigned long epoch)
{
    size_t n = params_of(func);
    cbs_pack_layout *l = cbs_layout_alloc(n, func, KIND, epoch);
    if (!l) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t k = 0; k < n; k++) {
        l->off[k] = 8 * k;
        l->size[k] = func == F ? 8 : 4;
    }
    cbs_layout_measure(l);
    return l;
}

/* Whether c is, field by field, the layout driver_layout gives for func. */
static int is_layout_of(const cbs_pack_layout *c, void *func)
{
    size_t n = params_of(func);
    if (c->func != func || c->kind != KIND || c->n != n)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (c->off[k] != 8 * k || c->size[k] != (func == F ? 8u : 4u))
            return 0;
    /* F's parameters fill their 24 bytes; G's leave 4 after each but the last */
    return c->total == c->off[n - 1] + c->size[n - 1] && c->gaps == (func == G);
}

/* ---- unit tests ---- */

static void test_alloc_and_same(void)
{
    cbs_pack_layout *a = driver_layout(F, 1), *b = driver_layout(F, 2), *g = driver_layout(G, 1);
    CHECK(a->n == 3 && a->off == (size_t *)(a + 1) && a->size == a->off + 3);
    CHECK(atomic_load(&a->epoch) == 1);
    CHECK(cbs_layout_same(a, b)); /* epochs are not compared */
    CHECK(!cbs_layout_same(a, g));
    b->size[2] = 4;
    CHECK(!cbs_layout_same(a, b));
    b->size[2] = 8;
    b->kind = KIND + 1;
    CHECK(!cbs_layout_same(a, b));
    cbs_pack_layout *empty = cbs_layout_alloc(0, F, KIND, 0);
    CHECK(empty && empty->n == 0 && empty->total == 0);
    free(a);
    free(b);
    free(g);
    free(empty);
}

/* total is the end of the furthest parameter, whatever the order the
 * driver lists them in; gaps is set by padding anywhere below it, the
 * tail's included, and only then. */
static void test_measure(void)
{
    static const struct {
        size_t n, off[4], size[4], total;
        int gaps;
    } cases[] = {
        {0, {0}, {0}, 0, 0},
        {3, {0, 8, 12}, {8, 4, 4}, 16, 0},      /* (float *, int, float) */
        {2, {0, 8}, {8, 1}, 9, 0},              /* (u64 *, char): no tail padding */
        {2, {0, 8}, {1, 8}, 16, 1},             /* (char, u64 *) */
        {3, {16, 0, 8}, {4, 8, 8}, 20, 0},      /* listed out of order */
        {3, {24, 0, 8}, {4, 8, 8}, 28, 1},      /* a hole at 16..23 */
        {1, {0}, {2048}, 2048, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cbs_pack_layout *l = cbs_layout_alloc(cases[c].n, F, KIND, 0);
        CHECK(l != NULL);
        if (!l)
            continue;
        for (size_t k = 0; k < cases[c].n; k++) {
            l->off[k] = cases[c].off[k];
            l->size[k] = cases[c].size[k];
        }
        cbs_layout_measure(l);
        CHECK(l->total == cases[c].total);
        CHECK(l->gaps == cases[c].gaps);
        free(l);
    }
}

static void test_copy(void)
{
    _Atomic(void *) slot;
    atomic_init(&slot, NULL);
    CHECK(cbs_layout_copy_get(&slot, KIND, F, 1, 3) == NULL);

    cbs_pack_layout *l = driver_layout(F, 1);
    CHECK(cbs_layout_copy_remember(&slot, l) == 1);
    const cbs_pack_layout *c = cbs_layout_copy_get(&slot, KIND, F, 1, 3);
    CHECK(c != NULL && c != l && is_layout_of(c, F)); /* a copy, not l */
    /* Served only for the same kernel, kind, count and epoch. */
    CHECK(cbs_layout_copy_get(&slot, KIND, G, 1, 3) == NULL);
    CHECK(cbs_layout_copy_get(&slot, KIND + 1, F, 1, 3) == NULL);
    CHECK(cbs_layout_copy_get(&slot, KIND, F, 1, 2) == NULL);
    CHECK(cbs_layout_copy_get(&slot, KIND, F, 2, 3) == NULL);

    /* A new epoch: the registry's path finds the same layout, the copy is
     * re-stamped in place, not replaced. */
    cbs_pack_layout *again = driver_layout(F, 2);
    CHECK(cbs_layout_copy_remember(&slot, again) == 0);
    CHECK(cbs_layout_copy_get(&slot, KIND, F, 2, 3) == c);

    /* The object's value changed to G: G's layout never re-stamps F's copy
     * and never replaces it (the copy is set once). */
    cbs_pack_layout *other = driver_layout(G, 3);
    CHECK(cbs_layout_copy_remember(&slot, other) == 0);
    CHECK(atomic_load(&slot) == c && atomic_load(&c->epoch) == 2);
    CHECK(cbs_layout_copy_get(&slot, KIND, G, 3, 5) == NULL);

    free(l);
    free(again);
    free(other);
    free(atomic_load(&slot));
}

/* ---- stress: the first launches through fresh objects, from 16 threads ---- */

static _Atomic(void *) slots[NSLOTS];
static _Atomic unsigned long epoch = 1;
static pthread_barrier_t round_start, round_end;
static long rounds;

typedef struct {
    int id;
    long lookups, hits, misses, published, wrong; /* this thread's counts */
} worker;

static void *churn(void *arg)
{
    worker *w = arg;
    for (long r = 0; r < rounds; r++) {
        pthread_barrier_wait(&round_start);
        for (int rep = 0; rep < PER_ROUND; rep++) {
            for (int i = 0; i < NSLOTS; i++) {
                int s = (i + w->id * 5) % NSLOTS; /* threads meet on every slot */
                /* A few threads launch G through the object: its value was
                 * changed (__init__ again) while others launch F. */
                void *func = (w->id % 4 == 3) ? G : F;
                unsigned long e = atomic_load_explicit(&epoch, memory_order_acquire);
                const cbs_pack_layout *c =
                    cbs_layout_copy_get(&slots[s], KIND, func, e, params_of(func));
                w->lookups++;
                if (c) {
                    w->hits++;
                    if (!is_layout_of(c, func))
                        w->wrong++;
                    continue;
                }
                w->misses++;
                cbs_pack_layout *l = driver_layout(func, e); /* the registry's path */
                w->published += cbs_layout_copy_remember(&slots[s], l);
                free(l);
            }
            /* Thread 0 plays a module unload now and then: a new epoch,
             * after which the first lookup of each slot misses and the
             * registry's path re-stamps the copy. */
            if (w->id == 0 && rep == PER_ROUND / 2)
                atomic_fetch_add_explicit(&epoch, 1, memory_order_acq_rel);
        }
        pthread_barrier_wait(&round_end);
        /* The main thread frees the round's copies (the objects die). */
    }
    return NULL;
}

static void test_stress(void)
{
    const char *env = getenv("RT_STRESS_OPS");
    long ops = env ? atol(env) : 100000;
    long per_round = (long)PER_ROUND * NSLOTS;
    rounds = (ops + per_round - 1) / per_round;

    pthread_barrier_init(&round_start, NULL, NTHREADS + 1);
    pthread_barrier_init(&round_end, NULL, NTHREADS + 1);
    worker w[NTHREADS];
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){.id = i};
        pthread_create(&t[i], NULL, churn, &w[i]);
    }
    long copies_f = 0, copies_g = 0, bad_copies = 0;
    double t0 = now_s();
    for (long r = 0; r < rounds; r++) {
        for (int s = 0; s < NSLOTS; s++)
            atomic_store(&slots[s], NULL); /* fresh objects */
        pthread_barrier_wait(&round_start);
        pthread_barrier_wait(&round_end);
        for (int s = 0; s < NSLOTS; s++) {
            cbs_pack_layout *c = atomic_load(&slots[s]);
            if (c && is_layout_of(c, F))
                copies_f++;
            else if (c && is_layout_of(c, G))
                copies_g++;
            else
                bad_copies++;
            free(c);
        }
    }
    double dt = now_s() - t0;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&round_start);
    pthread_barrier_destroy(&round_end);

    long lookups = 0, hits = 0, misses = 0, published = 0, wrong = 0, min_lookups = ops;
    for (int i = 0; i < NTHREADS; i++) {
        lookups += w[i].lookups;
        hits += w[i].hits;
        misses += w[i].misses;
        published += w[i].published;
        wrong += w[i].wrong;
        if (w[i].lookups < min_lookups)
            min_lookups = w[i].lookups;
    }
    printf("  stress: %d threads, %ld rounds of %d fresh slots, %ld lookups (%ld hits, %ld "
           "misses), %ld copies published, %.2f s\n",
           NTHREADS, rounds, NSLOTS, lookups, hits, misses, published, dt);
    CHECK(min_lookups >= ops);                      /* every thread did its share */
    CHECK(lookups == (long)NTHREADS * rounds * per_round);
    CHECK(hits + misses == lookups);                /* nothing lost */
    CHECK(published == rounds * NSLOTS);            /* exactly one copy per object */
    CHECK(copies_f + copies_g == rounds * NSLOTS && bad_copies == 0);
    CHECK(wrong == 0);                              /* every hit was its own kernel's */
    CHECK(hits > 0);                                /* the copies were used */
}

int main(void)
{
    test_alloc_and_same();
    test_measure();
    test_copy();
    test_stress();
    if (failures)
        fprintf(stderr, "test_layout: %d failure(s)\n", failures);
    else
        printf("test_layout: ok\n");
    return failures != 0;
}
