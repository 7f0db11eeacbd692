/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_queue.c — unit and stress test of runtime/process/rt_queue.c (no
 * Python).
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -O2 -pthread -Iruntime/process \
 *       tests/c/test_queue.c runtime/process/rt_queue.c \
 *       -o build/tests/test_queue
 *
 * Also built with clang -fsanitize=thread and -fsanitize=address,undefined.
 * RT_STRESS_OPS (default 100000) sets the items pushed per producer.
 *
 * The stress test mimics the Python layer: a producer whose push returns
 * RT_QUEUE_FIRST hands one "pending call" token to the drainers, and the
 * drainers drain only when they hold a token. So it checks, besides
 * exactly-once and per-producer FIFO, that no item is stranded (a lost
 * wake-up would leave items queued with no token left: the test times out
 * on that and fails).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_queue.h"

#include "check.h"


/* ---- unit tests, on static items (what close leaks is not heap) ---- */

typedef struct {
    rt_queue_node node;
    int id;
    int ran;
} unit_item;

static rt_queue uq;
static int unit_order[64];
static int unit_n;

static void unit_run(void *arg)
{
    unit_item *it = arg;
    it->ran++;
    unit_order[unit_n++] = it->id;
}

static void test_basic(void)
{
    static unit_item it[5];
    rt_queue_init(&uq);
    unit_n = 0;
    CHECK(!rt_queue_pending(&uq));
    CHECK(rt_queue_drain(&uq) == 0);
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        it[i].ran = 0;
        rt_queue_node_init(&it[i].node, unit_run, &it[i]);
        int st = rt_queue_push(&uq, &it[i].node);
        CHECK(st == (i == 0 ? RT_QUEUE_FIRST : RT_QUEUE_QUEUED));
    }
    CHECK(rt_queue_pending(&uq));
    CHECK(rt_queue_drain(&uq) == 5);
    CHECK(!rt_queue_pending(&uq));
    for (int i = 0; i < 5; i++) {
        CHECK(it[i].ran == 1);
        CHECK(unit_order[i] == i); /* FIFO */
    }
    /* empty again: the next push is FIRST again */
    rt_queue_node_init(&it[0].node, unit_run, &it[0]);
    CHECK(rt_queue_push(&uq, &it[0].node) == RT_QUEUE_FIRST);
    CHECK(rt_queue_drain(&uq) == 1);
    CHECK(it[0].ran == 2);
    CHECK(rt_queue_leaked(&uq) == 0);
}

/* An item whose run pushes another item and re-enters drain. */
static unit_item reent_child;
static size_t reent_inner_drain = 99;

static void reent_run(void *arg)
{
    unit_item *it = arg;
    it->ran++;
    rt_queue_node_init(&reent_child.node, unit_run, &reent_child);
    CHECK(rt_queue_push(&uq, &reent_child.node) == RT_QUEUE_FIRST);
    reent_inner_drain = rt_queue_drain(&uq); /* this drain owns: 0 */
}

static void test_reentrant(void)
{
    static unit_item parent;
    rt_queue_init(&uq);
    unit_n = 0;
    parent.ran = 0;
    reent_child.ran = 0;
    reent_child.id = 7;
    rt_queue_node_init(&parent.node, reent_run, &parent);
    rt_queue_push(&uq, &parent.node);
    CHECK(rt_queue_drain(&uq) == 2); /* the child runs in the same drain */
    CHECK(reent_inner_drain == 0);
    CHECK(parent.ran == 1 && reent_child.ran == 1);
}

static void test_close(void)
{
    static unit_item it[16];
    rt_queue_init(&uq);
    for (int i = 0; i < 16; i++) {
        it[i].id = i;
        it[i].ran = 0;
        rt_queue_node_init(&it[i].node, unit_run, &it[i]);
    }
    for (int i = 0; i < 10; i++)
        rt_queue_push(&uq, &it[i].node);
    CHECK(!rt_queue_is_closed(&uq));
    CHECK(rt_queue_close(&uq) == 10); /* queued at close: leaked */
    CHECK(rt_queue_is_closed(&uq));
    CHECK(rt_queue_close(&uq) == 0);  /* idempotent */
    CHECK(rt_queue_leaked(&uq) == 10);
    for (int i = 10; i < 16; i++)
        CHECK(rt_queue_push(&uq, &it[i].node) == RT_QUEUE_CLOSED);
    CHECK(rt_queue_leaked(&uq) == 16);
    CHECK(!rt_queue_pending(&uq));
    CHECK(rt_queue_drain(&uq) == 0);
    for (int i = 0; i < 16; i++)
        CHECK(it[i].ran == 0);
}

/* close from inside a run: the rest of the batch is cut and leaked. */
static void closing_run(void *arg)
{
    unit_item *it = arg;
    it->ran++;
    rt_queue_close(&uq);
}

static void test_close_during_drain(void)
{
    static unit_item it[6];
    rt_queue_init(&uq);
    unit_n = 0;
    for (int i = 0; i < 6; i++) {
        it[i].id = i;
        it[i].ran = 0;
        rt_queue_node_init(&it[i].node, i == 2 ? closing_run : unit_run, &it[i]);
        rt_queue_push(&uq, &it[i].node);
    }
    CHECK(rt_queue_drain(&uq) == 3); /* items 0, 1, 2 (which closes) */
    CHECK(it[0].ran == 1 && it[1].ran == 1 && it[2].ran == 1);
    CHECK(it[3].ran == 0 && it[4].ran == 0 && it[5].ran == 0);
    CHECK(rt_queue_leaked(&uq) == 3);
}

/* ---- stress: 16 producers, 2 token-driven drainers ---- */

#define NPROD 16
#define NDRAIN 2

typedef struct {
    rt_queue_node node;
    unsigned producer;
    unsigned seq;
} stress_item;

static rt_queue sq;
static size_t per_producer;
static _Atomic unsigned char *ran_flags; /* [producer * per_producer + seq] */
/* Last seq run per producer. Plain ints: only the drain owner touches
 * them, so ThreadSanitizer checks that drain ownership orders the owners. */
static long last_seq[NPROD];
static _Atomic size_t total_ran;
static _Atomic long double_runs, fifo_errors;
static _Atomic long tokens;     /* scheduled, not yet started, drains */
static _Atomic long firsts;     /* RT_QUEUE_FIRST pushes */
static _Atomic int producers_done;
static _Atomic int stop_drainers;
static pthread_barrier_t start;

static void stress_run(void *arg)
{
    stress_item *it = arg;
    size_t idx = (size_t)it->producer * per_producer + it->seq;
    if (atomic_exchange_explicit(&ran_flags[idx], 1, memory_order_relaxed))
        atomic_fetch_add(&double_runs, 1);
    if ((long)it->seq != last_seq[it->producer] + 1)
        atomic_fetch_add(&fifo_errors, 1);
    last_seq[it->producer] = it->seq;
    free(it); /* run owns the item, node included */
    atomic_fetch_add_explicit(&total_ran, 1, memory_order_relaxed);
}

static void *producer(void *arg)
{
    unsigned p = (unsigned)(size_t)arg;
    pthread_barrier_wait(&start);
    for (size_t i = 0; i < per_producer; i++) {
        stress_item *it = malloc(sizeof *it);
        if (it == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        it->producer = p;
        it->seq = (unsigned)i;
        rt_queue_node_init(&it->node, stress_run, it);
        int st = rt_queue_push(&sq, &it->node);
        if (st == RT_QUEUE_FIRST) { /* "Py_AddPendingCall" */
            atomic_fetch_add(&firsts, 1);
            atomic_fetch_add(&tokens, 1);
        } else if (st != RT_QUEUE_QUEUED) {
            atomic_fetch_add(&fifo_errors, 1000000);
        }
        if ((i & 31) == 0)
            sched_yield(); /* let the drainers in on 2 cores */
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static void *drainer(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    while (!atomic_load(&stop_drainers)) {
        long t = atomic_load(&tokens);
        if (t > 0 && atomic_compare_exchange_weak(&tokens, &t, t - 1))
            rt_queue_drain(&sq); /* the "pending call" */
        else
            sched_yield();
    }
    return NULL;
}

static void test_stress(void)
{
    size_t total = per_producer * NPROD;
    pthread_t pt[NPROD], dt[NDRAIN];
    rt_queue_init(&sq);
    ran_flags = calloc(total, sizeof *ran_flags);
    CHECK(ran_flags != NULL);
    if (ran_flags == NULL)
        return;
    for (int p = 0; p < NPROD; p++)
        last_seq[p] = -1;
    pthread_barrier_init(&start, NULL, NPROD + NDRAIN);
    double t0 = now_s();
    for (int d = 0; d < NDRAIN; d++)
        pthread_create(&dt[d], NULL, drainer, NULL);
    for (int p = 0; p < NPROD; p++)
        pthread_create(&pt[p], NULL, producer, (void *)(size_t)p);
    for (int p = 0; p < NPROD; p++)
        pthread_join(pt[p], NULL);
    /* Every item must run through the scheduled drains alone. */
    double deadline = now_s() + 10;
    while (atomic_load(&total_ran) < total && now_s() < deadline)
        sched_yield();
    atomic_store(&stop_drainers, 1);
    for (int d = 0; d < NDRAIN; d++)
        pthread_join(dt[d], NULL);
    double t1 = now_s();

    size_t ran = atomic_load(&total_ran);
    if (ran != total)
        fprintf(stderr, "  lost wake-up: %zu of %zu ran, %ld tokens left, "
                "pending=%d\n", ran, total, atomic_load(&tokens),
                rt_queue_pending(&sq));
    CHECK(ran == total);
    CHECK(atomic_load(&double_runs) == 0);
    CHECK(atomic_load(&fifo_errors) == 0);
    size_t missing = 0;
    for (size_t i = 0; i < total; i++)
        missing += !atomic_load_explicit(&ran_flags[i], memory_order_relaxed);
    CHECK(missing == 0);
    for (int p = 0; p < NPROD; p++)
        CHECK(last_seq[p] == (long)per_producer - 1);
    CHECK(!rt_queue_pending(&sq));
    CHECK(rt_queue_leaked(&sq) == 0);
    printf("  stress: %d producers x %zu items, %d drainers: %zu ran exactly "
           "once, FIFO per producer, %ld scheduled drains, %.2f s\n",
           NPROD, per_producer, NDRAIN, ran, atomic_load(&firsts), t1 - t0);

    /* Leftover drain: nothing. Then close: pushes are leaked, never run. */
    CHECK(rt_queue_drain(&sq) == 0);
    rt_queue_close(&sq);
    static stress_item late[8];
    for (int i = 0; i < 8; i++) {
        rt_queue_node_init(&late[i].node, stress_run, &late[i]);
        CHECK(rt_queue_push(&sq, &late[i].node) == RT_QUEUE_CLOSED);
    }
    CHECK(rt_queue_drain(&sq) == 0);
    CHECK(rt_queue_leaked(&sq) == 8);
    CHECK(atomic_load(&total_ran) == total);
    pthread_barrier_destroy(&start);
    free(ran_flags);
}

/* ---- close racing with producers and a drainer: each item exactly once
 * either run or leaked. Items are static (what close leaks is not heap). */

#define RACE_PER 2000
static stress_item race_items[NPROD][RACE_PER];
static _Atomic unsigned char race_ran[NPROD][RACE_PER];
static _Atomic size_t race_closed_refused; /* pushes answered CLOSED */
static _Atomic int race_stop;
static _Atomic size_t race_pushed;
static rt_queue rq;

static void race_run(void *arg)
{
    stress_item *it = arg;
    if (atomic_exchange(&race_ran[it->producer][it->seq], 1))
        atomic_fetch_add(&double_runs, 1);
}

static void *race_producer(void *arg)
{
    unsigned p = (unsigned)(size_t)arg;
    pthread_barrier_wait(&start);
    for (unsigned i = 0; i < RACE_PER; i++) {
        race_items[p][i].producer = p;
        race_items[p][i].seq = i;
        rt_queue_node_init(&race_items[p][i].node, race_run, &race_items[p][i]);
        if (rt_queue_push(&rq, &race_items[p][i].node) == RT_QUEUE_CLOSED)
            atomic_fetch_add(&race_closed_refused, 1);
        atomic_fetch_add(&race_pushed, 1);
        if ((i & 63) == 0)
            sched_yield();
    }
    return NULL;
}

static void *race_drainer(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    while (!atomic_load(&race_stop))
        if (rt_queue_drain(&rq) == 0)
            sched_yield();
    return NULL;
}

static void test_close_race(void)
{
    pthread_t pt[NPROD], dt;
    rt_queue_init(&rq);
    atomic_store(&double_runs, 0);
    pthread_barrier_init(&start, NULL, NPROD + 2);
    pthread_create(&dt, NULL, race_drainer, NULL);
    for (int p = 0; p < NPROD; p++)
        pthread_create(&pt[p], NULL, race_producer, (void *)(size_t)p);
    pthread_barrier_wait(&start);
    /* close about half-way through the pushes */
    while (atomic_load(&race_pushed) < (size_t)NPROD * RACE_PER / 2)
        sched_yield();
    rt_queue_close(&rq);
    for (int p = 0; p < NPROD; p++)
        pthread_join(pt[p], NULL);
    atomic_store(&race_stop, 1);
    pthread_join(dt, NULL);
    size_t ran = 0;
    for (int p = 0; p < NPROD; p++)
        for (int i = 0; i < RACE_PER; i++)
            ran += atomic_load(&race_ran[p][i]);
    size_t leaked = rt_queue_leaked(&rq);
    CHECK(atomic_load(&double_runs) == 0);
    CHECK(ran + leaked == (size_t)NPROD * RACE_PER);
    CHECK(leaked >= atomic_load(&race_closed_refused));
    CHECK(rt_queue_drain(&rq) == 0);
    printf("  close race: %zu ran, %zu leaked (%zu refused at push), "
           "sum %d\n", ran, leaked, atomic_load(&race_closed_refused),
           NPROD * RACE_PER);
    pthread_barrier_destroy(&start);
}

int main(void)
{
    const char *env = getenv("RT_STRESS_OPS");
    per_producer = env != NULL && *env ? strtoul(env, NULL, 10) : 100000;
    if (per_producer == 0)
        per_producer = 1;

    printf("test_queue\n");
    test_basic();
    test_reentrant();
    test_close();
    test_close_during_drain();
    test_stress();
    test_close_race();
    if (failures) {
        fprintf(stderr, "test_queue: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_queue: all passed\n");
    return 0;
}
