/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_queue.c — the deferred-cleanup queue (see rt_queue.h for the
 * contract).
 *
 * Representation
 *
 *   `head` is a Treiber stack of pushed nodes (the most recent first), NULL
 *   when empty, or the address of rt_queue_closed_mark once closed (a node
 *   that is never run nor written). Producers only ever prepend; nodes
 *   leave the stack only as a whole list (drain, close), so the classic
 *   ABA problem of Treiber pops does not arise: a push's CAS succeeds only
 *   if head still equals the value the node's `next` was set to, whatever
 *   happened in between, and that is all its correctness needs.
 *
 *   `draining` is the drain ownership flag: only its owner takes lists off
 *   `head` and runs them, so batches run one after another, never
 *   interleaved; with the reversal of each batch (LIFO -> FIFO) that gives
 *   push order across batches and drainers. A drainer that cannot take
 *   ownership returns at once (it never waits: a Python thread waiting
 *   here for another that is running DECREFs could deadlock on the GIL).
 *
 *   `closed` is a flag set once by close, read by a drain between items so
 *   that it stops running a batch taken before the close. `leaked` counts
 *   the items close made unrunnable.
 *
 * No lost wake-up
 *
 *   Claim: an item pushed while the queue is open is run, unless the queue
 *   is closed first, provided every RT_QUEUE_FIRST push is followed by one
 *   rt_queue_drain call. Each item is preceded (in head's modification
 *   order) by a FIRST push of the same "non-empty episode", whose drain D
 *   either (a) takes ownership and loops until it sees head empty, running
 *   it, or (b) fails to take ownership because an owner O holds it. In (b)
 *   O, after releasing ownership, re-reads head and starts over when it is
 *   non-empty. All of these operations (the push CAS, D's failed ownership
 *   CAS, O's release store and O's re-read) are seq_cst, so they lie in a
 *   single total order consistent with happens-before: push < D's CAS
 *   (D was scheduled after the push) < O's release (D read the owned value,
 *   which O's release store later overwrote) < O's re-read. So O's re-read
 *   sees the item, or a later state in which some owner already took it,
 *   and O (or a newer owner, by the same argument) runs it. (With
 *   acquire/release alone, O's store and re-read would form the
 *   store-buffering pattern, where both sides may miss each other.)
 *
 * Memory orders
 *
 *   - push: CAS on head, seq_cst on success (its release half publishes the
 *     node's fields and the contents of the item that embeds it; seq_cst for
 *     the argument above), relaxed on failure (the value read is only
 *     compared and stored into the private node).
 *   - drain: the CAS taking the list off head is seq_cst (acquire half:
 *     the nodes and items pushed become visible); the ownership CAS and the
 *     release store of `draining` are seq_cst (acquire/release halves hand
 *     whatever the previous owner's items touched over to the next owner;
 *     seq_cst for the argument above), and so is the re-read of head.
 *   - close: the store of `closed` and the exchange of head are seq_cst.
 *     The drainer's per-item read of `closed` is relaxed: it is a prompt
 *     stop signal and orders nothing (an item already running when close
 *     is called finishes, whatever the order).
 *   - leaked: relaxed counter; read it after joining the threads (tests).
 */
#include "rt_queue.h"

#include <stdint.h>

/* The closed state of `head`. Its address is the mark; it is never run,
 * written or linked. */
static rt_queue_node rt_queue_closed_mark;
#define RT_QUEUE_CLOSED_MARK (&rt_queue_closed_mark)

void rt_queue_init(rt_queue *q)
{
    atomic_init(&q->head, NULL);
    atomic_init(&q->draining, 0);
    atomic_init(&q->closed, 0);
    atomic_init(&q->leaked, 0);
}

void rt_queue_node_init(rt_queue_node *node, void (*run)(void *arg),
                        void *arg)
{
    node->next = NULL;
    node->run = run;
    node->arg = arg;
}

int rt_queue_push(rt_queue *q, rt_queue_node *node)
{
    rt_queue_node *h = atomic_load_explicit(&q->head, memory_order_relaxed);
    do {
        if (h == RT_QUEUE_CLOSED_MARK) {
            atomic_fetch_add_explicit(&q->leaked, 1, memory_order_relaxed);
            return RT_QUEUE_CLOSED;
        }
        node->next = h; /* node is still private: a plain store */
    } while (!atomic_compare_exchange_weak_explicit(&q->head, &h, node,
                                                    memory_order_seq_cst,
                                                    memory_order_relaxed));
    return h == NULL ? RT_QUEUE_FIRST : RT_QUEUE_QUEUED;
}

/* Takes the whole list off head, leaving it empty; NULL when empty or
 * closed (the closed mark stays). */
static rt_queue_node *rt_queue_take(rt_queue *q)
{
    rt_queue_node *h = atomic_load_explicit(&q->head, memory_order_seq_cst);
    do {
        if (h == NULL || h == RT_QUEUE_CLOSED_MARK)
            return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&q->head, &h, NULL,
                                                    memory_order_seq_cst,
                                                    memory_order_seq_cst));
    return h;
}

static size_t rt_queue_length(const rt_queue_node *n)
{
    size_t k = 0;
    for (; n != NULL; n = n->next)
        k++;
    return k;
}

size_t rt_queue_drain(rt_queue *q)
{
    size_t ran = 0;
    for (;;) {
        int free_ = 0;
        if (!atomic_compare_exchange_strong_explicit(&q->draining, &free_, 1,
                                                     memory_order_seq_cst,
                                                     memory_order_seq_cst))
            return ran; /* the owner will run what is queued */

        /* Owner: take batches until the stack is empty. */
        rt_queue_node *batch;
        while ((batch = rt_queue_take(q)) != NULL) {
            rt_queue_node *fifo = NULL; /* reverse: oldest first */
            while (batch != NULL) {
                rt_queue_node *next = batch->next;
                batch->next = fifo;
                fifo = batch;
                batch = next;
            }
            while (fifo != NULL) {
                if (atomic_load_explicit(&q->closed, memory_order_relaxed)) {
                    atomic_fetch_add_explicit(&q->leaked, rt_queue_length(fifo),
                                              memory_order_relaxed);
                    break;
                }
                rt_queue_node *next = fifo->next; /* run may free the node */
                fifo->run(fifo->arg);
                ran++;
                fifo = next;
            }
        }

        atomic_store_explicit(&q->draining, 0, memory_order_seq_cst);
        /* Re-check (see "No lost wake-up"): a drain that gave up while we
         * owned the flag left its items to us. */
        rt_queue_node *h = atomic_load_explicit(&q->head, memory_order_seq_cst);
        if (h == NULL || h == RT_QUEUE_CLOSED_MARK)
            return ran;
    }
}

int rt_queue_pending(rt_queue *q)
{
    rt_queue_node *h = atomic_load_explicit(&q->head, memory_order_acquire);
    return h != NULL && h != RT_QUEUE_CLOSED_MARK;
}

size_t rt_queue_close(rt_queue *q)
{
    atomic_store_explicit(&q->closed, 1, memory_order_seq_cst);
    rt_queue_node *h = atomic_exchange_explicit(&q->head, RT_QUEUE_CLOSED_MARK,
                                                memory_order_seq_cst);
    if (h == RT_QUEUE_CLOSED_MARK)
        return 0;
    size_t n = rt_queue_length(h);
    atomic_fetch_add_explicit(&q->leaked, n, memory_order_relaxed);
    return n;
}

int rt_queue_is_closed(rt_queue *q)
{
    return atomic_load_explicit(&q->closed, memory_order_acquire);
}

size_t rt_queue_after_fork_child(rt_queue *q)
{
    atomic_store_explicit(&q->draining, 0, memory_order_relaxed);
    rt_queue_node *h = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (h == NULL || h == RT_QUEUE_CLOSED_MARK)
        return 0;
    atomic_store_explicit(&q->head, NULL, memory_order_relaxed);
    size_t n = rt_queue_length(h);
    atomic_fetch_add_explicit(&q->leaked, n, memory_order_relaxed);
    return n;
}

size_t rt_queue_leaked(rt_queue *q)
{
    return atomic_load_explicit(&q->leaked, memory_order_relaxed);
}
