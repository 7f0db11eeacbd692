/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_queue.h — the deferred-cleanup queue of the shared runtime: a
 * lock-free multi-producer queue of work items that must not run where they
 * are produced (CUDA callback threads, graph user-object destructors) and
 * run instead on a thread that calls rt_queue_drain (a Python-owned thread:
 * the interpreter's callback runner, woken by the push; for the main
 * interpreter the main thread, through one pending call; the next binding
 * call; atexit).
 *
 * Pure C, no Python.
 *
 * Producers (any thread, any time, including concurrently with drains and
 * with close):
 *   - rt_queue_push never blocks, never takes a lock, never allocates and
 *     cannot fail: the node is embedded in the item pushed (intrusive), and
 *     the push is one CAS loop on the queue's head.
 *   - It returns RT_QUEUE_FIRST when the queue went from empty to
 *     non-empty: that producer, and only it, schedules one drain (the
 *     Python layer: it wakes the interpreter's runner and, for the main
 *     interpreter, schedules one pending call). Every other push returns
 *     RT_QUEUE_QUEUED and schedules nothing: a drain is already due. A
 *     drain that finds another drain in progress returns at once, and the
 *     drain in progress re-checks the queue before it finishes, so an item
 *     is never stranded behind a scheduled drain (no lost wake-up). If
 *     scheduling fails, the item waits for
 *     the next binding call or atexit drain; it is never lost.
 *
 * Drainers (any number of threads, concurrently):
 *   - one drain at a time runs items (the others return 0 at once, the
 *     running one taking over their work); items run on the draining
 *     thread, each exactly once, in push order for the items of one
 *     producer (in fact in the order of their successful pushes, which is
 *     a total order).
 *   - an item's run(arg) may push new items (they run in the same drain)
 *     and may call rt_queue_drain (it returns 0: the drain in progress is
 *     this one).
 *
 * Ownership of a node: the producer's until rt_queue_push returns
 * RT_QUEUE_QUEUED or RT_QUEUE_FIRST; the queue's from then until the
 * drainer calls run(arg); run's from then (run may free the item that
 * embeds the node: the drainer reads nothing of the node after calling
 * run). A push that returns RT_QUEUE_CLOSED did not take the node.
 *
 * Finalization: rt_queue_close (when interpreter finalization starts, after
 * the last drain) makes the queue refuse to run anything more: items queued
 * at that moment, items pushed later, and the not yet run rest of the batch
 * of a drain in progress are never run, and are counted in
 * rt_queue_leaked. Leaking is deliberate: running them would enter a
 * finalizing interpreter. The queue object itself must stay valid while any
 * producer may still push (static storage, or never freed).
 */
#ifndef CUBIND_RT_QUEUE_H
#define CUBIND_RT_QUEUE_H

#include <stdatomic.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Embedded in the item pushed. Fields are private to the queue once
 * pushed; initialize with rt_queue_node_init before each push. */
typedef struct rt_queue_node {
    struct rt_queue_node *next;
    void (*run)(void *arg);
    void *arg;
} rt_queue_node;

/* The queue. Zero-initialized storage (a static object) is a valid empty
 * queue, as is one set up by rt_queue_init. Fields are private. */
typedef struct rt_queue {
    _Atomic(rt_queue_node *) head; /* LIFO of pushed nodes, or the closed
                                      mark */
    _Atomic int draining;          /* 1 while a drainer owns the drain */
    _Atomic int closed;            /* set once by rt_queue_close */
    _Atomic size_t leaked;         /* items never run because closed */
} rt_queue;

/* rt_queue_push results (none is a failure). */
enum {
    RT_QUEUE_QUEUED = 0, /* queued; a drain is already due */
    RT_QUEUE_FIRST = 1,  /* queued onto an empty queue: schedule one drain */
    RT_QUEUE_CLOSED = 2  /* closed: not queued, never run, counted leaked;
                            the node is still the caller's */
};

void rt_queue_init(rt_queue *q);

/* Sets up `node` to call run(arg) when drained. */
void rt_queue_node_init(rt_queue_node *node, void (*run)(void *arg),
                        void *arg);

/* From any thread; lock-free, never blocks, never allocates. */
int rt_queue_push(rt_queue *q, rt_queue_node *node);

/* Runs every queued item on this thread, also those pushed while it runs;
 * returns how many ran by this call. Returns 0 at once when another drain
 * is in progress (that one runs the items) or the queue is closed. */
size_t rt_queue_drain(rt_queue *q);

/* 1 when items are queued (a hint for the fast path of a binding call:
 * `if (rt_queue_pending(q)) rt_queue_drain(q);`), else 0. */
int rt_queue_pending(rt_queue *q);

/* Closes the queue (idempotent; see the header comment). Returns the
 * number of queued items this call leaked. */
size_t rt_queue_close(rt_queue *q);

int rt_queue_is_closed(rt_queue *q);

/* Items leaked because the queue was closed (queued at close, pushed
 * after, or cut from a drain in progress). */
size_t rt_queue_leaked(rt_queue *q);

/* In the child of fork() only (one thread): the queued items are the
 * parent's work (the parent runs them; running them here too would run a
 * user object's destructor twice): they are forgotten, counted in
 * rt_queue_leaked, and their count returned. A drain that a thread of the
 * parent owned at the fork will never finish here: its ownership is given
 * up so that drains run again (the items it had taken are neither run nor
 * counted). A closed queue stays closed. */
size_t rt_queue_after_fork_child(rt_queue *q);

#ifdef __cplusplus
}
#endif
#endif
