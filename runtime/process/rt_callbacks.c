/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_callbacks.c — see rt_callbacks.h.
 *
 * Invariants:
 *  - No code that runs on a driver thread (the trampolines and what they
 *    call) touches CPython: no thread state, no GIL, no Python allocator.
 *    It uses pthread primitives, atomics and the lock-free queue only.
 *  - A payload holds strong references to its Python objects and points at
 *    the state of the interpreter that made it; its objects are released
 *    exactly once, on a thread of that interpreter with it attached (the
 *    runner, a drain, or the caller that discards it).
 *  - Interpreter states (rt_interp) are never freed: a graph may hold a
 *    payload (and so call its trampoline) after its interpreter is gone.
 *  - s->mu is a leaf lock: nothing is called under it, and no thread waits
 *    for a thread state (GIL) while holding it. Waiting on s->mu's
 *    conditions happens with the thread state detached.
 *  - phase only moves NONE -> STARTING -> RUNNING -> CLOSED (STARTING may
 *    fall back to NONE when the start fails), always under s->mu. A request
 *    is queued only while RUNNING; CLOSED is set under s->mu together with
 *    the runner's flush, so every queued request is completed exactly once
 *    (ran, or skipped), and a driver thread never waits for a runner that
 *    will not come.
 *  - A payload's `reg` is its registry entry (a counted reference the
 *    payload owns) or a REG_* state; whoever takes an entry out of `reg`
 *    (atomic exchange) unmaps it and drops that reference, so each entry is
 *    dropped once. A one-shot payload's entry does not own it (meta_free
 *    NULL); a user object's entry does: its meta_free (uo_entry_free) is
 *    the one place such a payload is handed to the queue for its final
 *    step, and it runs once, when the entry dies. Registry calls are pure
 *    C: the driver threads make them too.
 */
#define _POSIX_C_SOURCE 200809L
#include "rt_callbacks.h"

#include "cubind_compat.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <cuda.h>

#include "rt_env.h"
#include "rt_handles.h"
#include "rt_loader.h"
#include "rt_queue.h"

enum { RUNNER_NONE, RUNNER_STARTING, RUNNER_RUNNING, RUNNER_CLOSED };

/* A call handed from a driver thread to the runner. Lives on the driver
 * thread's stack, which waits until `done`; fields are written under the
 * interpreter's mu (next, done, ran) or before queuing (the rest). */
typedef struct rt_req {
    struct rt_req *next;
    struct rt_payload *p;
    CUstream stream;            /* stream callbacks: the C arguments */
    CUresult status;
    int release;                /* one-shot payload: release after the run */
    int done, ran;
} rt_req;

/* The callback state of one interpreter. */
typedef struct rt_interp {
    struct rt_interp *next;     /* rt_interps list; never unlinked */
    int64_t id;                 /* PyInterpreterState_GetID: never reused */
    pthread_mutex_t mu;         /* guards the fields down to `exited` */
    pthread_cond_t wake;        /* the runner: requests, deferred work, close */
    pthread_cond_t done;        /* requests done, start resolved, runner exited */
    _Atomic int phase;          /* RUNNER_*; written under mu */
    unsigned long starter;      /* thread ident of the starter while STARTING */
    rt_req *head, **tail;       /* FIFO of requests waiting for the runner */
    int started;                /* the runner thread was started */
    int exited;                 /* the runner left its loop */
    rt_req *running;            /* the request whose callable runs now, or NULL */
    int abandoned;              /* shutdown stopped waiting for it (never reset) */
    unsigned long runner;       /* thread ident of the runner, once it runs */
    PyObject *handle;           /* 3.13+: the runner's thread handle (this
                                   interpreter's object); set by the starter
                                   before RUNNING, taken under mu by the stopper */
    rt_queue work;              /* deferred items of this interpreter */
    _Atomic int pending;        /* set by the push that made `work` non-empty,
                                   cleared by a drainer before it drains: never
                                   0 while an item waits undrained (drain_work) */
    int main;                   /* the main interpreter's (set before publication) */
} rt_interp;

/* States of rt_payload.reg other than an entry pointer (entries are
 * aligned, so never equal to these). */
enum {
    REG_NONE = 0,    /* not mapped (not yet, or no longer) */
    REG_FAILED = 1,  /* a user object whose entry could not be made */
    REG_GONE = 2     /* a user object whose destructor ran before its creator
                        mapped it: the creator does the destructor's part */
};

typedef struct rt_payload {
    rt_queue_node node;         /* used once, for the deferred step */
    int kind;                   /* CUBIND_CB_* */
    atomic_int persistent;      /* owned by a graph: not released after a run */
    _Atomic uintptr_t reg;      /* its registry entry, or REG_* (see above) */
    atomic_int holders;         /* a host node's: its capsule and the user
                                   objects of graphs holding it; the last
                                   to go unmaps its id (node_unhold) */
    rt_interp *interp;          /* where the callable runs; never freed */
    PyObject *callable, *data, *stream_type, *result_type;
} rt_payload;

static pthread_mutex_t rt_interps_mu = PTHREAD_MUTEX_INITIALIZER;
/* Pushed at the head under rt_interps_mu (release), never unlinked; a
 * node's fields are set before it is published, so readers walk the list
 * from an acquire load of the head without the lock. */
static _Atomic(rt_interp *) rt_interps;
static atomic_llong rt_alive, rt_skipped;
/* Set when the main interpreter starts to shut down: no runner starts after. */
static atomic_int rt_process_closing;
/* Set once the main interpreter's shutdown hook is registered. */
static atomic_int rt_main_hooked;

/* ---- interpreter states ------------------------------------------------------ */

static int64_t current_id(void)
{
    return PyInterpreterState_GetID(PyInterpreterState_Get());
}

static int rt_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

static rt_interp *interp_find(int64_t id)
{
    rt_interp *s = atomic_load_explicit(&rt_interps, memory_order_acquire);
    while (s && s->id != id)
        s = s->next;
    return s;
}

/* The state of interpreter `id`, made when absent and `make` is set (the
 * caller is attached to that interpreter then). NULL when absent, or
 * (make) out of memory. Lookups take no lock. */
static rt_interp *interp_state(int64_t id, int make)
{
    rt_interp *s = interp_find(id);
    if (s || !make)
        return s;
    pthread_mutex_lock(&rt_interps_mu);
    s = interp_find(id);
    if (!s && (s = PyMem_RawCalloc(1, sizeof *s)) != NULL) {
        if (pthread_mutex_init(&s->mu, NULL) != 0) {
            PyMem_RawFree(s);
            s = NULL;
        } else if (pthread_cond_init(&s->wake, NULL) != 0) {
            pthread_mutex_destroy(&s->mu);
            PyMem_RawFree(s);
            s = NULL;
        } else if (pthread_cond_init(&s->done, NULL) != 0) {
            pthread_cond_destroy(&s->wake);
            pthread_mutex_destroy(&s->mu);
            PyMem_RawFree(s);
            s = NULL;
        } else {
            s->id = id;
            s->main = PyInterpreterState_Get() == PyInterpreterState_Main();
            s->tail = &s->head;
            rt_queue_init(&s->work);
            atomic_init(&s->phase, RUNNER_NONE);
            atomic_init(&s->pending, 0);
            s->next = atomic_load_explicit(&rt_interps, memory_order_relaxed);
            atomic_store_explicit(&rt_interps, s, memory_order_release);
        }
    }
    pthread_mutex_unlock(&rt_interps_mu);
    return s;
}

/* ---- payloads -------------------------------------------------------------- */

static rt_interp *runner_for_current(void);
static void payload_release(rt_payload *p);

/* Takes the payload's entry out of `reg` (leaving `to`), unmaps it if it
 * is still the entry mapped at its key, and drops the payload's reference
 * to it. Returns the state found when it held no entry. Pure C, any thread. */
static uintptr_t entry_drop(rt_payload *p, uintptr_t to)
{
    uintptr_t v = atomic_exchange(&p->reg, to);
    if (v <= REG_GONE)
        return v;
    rt_registry_entry *e = (rt_registry_entry *)v;
    rt_h_unregister_entry(e);
    rt_registry_entry_release(e);
    return REG_NONE;
}

/* A one-shot payload is in flight from its creation: mapped by address.
 * 0, or -1 with MemoryError (the payload is still the caller's). */
static int oneshot_register(rt_payload *p)
{
    rt_registry_entry *e = NULL;
    int rc = rt_h_register(CUBIND_REG_CALLBACK, (uintptr_t)p, p, NULL, NULL, &e);
    if (rc != 0) {
        /* -EEXIST cannot happen: a payload's entry is unmapped before the
         * payload is freed, so no live entry has this address. */
        PyErr_NoMemory();
        return -1;
    }
    atomic_store(&p->reg, (uintptr_t)e);
    return 0;
}

void *rt_cb_new(int kind, PyObject *callable, PyObject *data, PyObject *stream_type,
                PyObject *result_type)
{
    if (!PyCallable_Check(callable)) {
        PyErr_Format(PyExc_TypeError, "a CUDA callback must be callable, not %.100s",
                     Py_TYPE(callable)->tp_name);
        return NULL;
    }
    rt_interp *s = runner_for_current();
    if (!s)
        return NULL;
    rt_payload *p = PyMem_RawCalloc(1, sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    p->kind = kind;
    p->interp = s;
    p->callable = Py_NewRef(callable);
    p->data = Py_NewRef(data ? data : Py_None);
    p->stream_type = Py_XNewRef(stream_type);
    p->result_type = Py_XNewRef(result_type);
    atomic_fetch_add(&rt_alive, 1);
    if ((kind == CUBIND_CB_HOST || kind == CUBIND_CB_STREAM) && oneshot_register(p) < 0) {
        payload_release(p);
        return NULL;
    }
    return p;
}

/* Requires the payload's interpreter attached. A one-shot payload's entry
 * (if still mapped) is dropped first; a user object's is gone already. */
static void payload_release(rt_payload *p)
{
    entry_drop(p, REG_NONE);
    Py_CLEAR(p->callable);
    Py_CLEAR(p->data);
    Py_CLEAR(p->stream_type);
    Py_CLEAR(p->result_type);
    PyMem_RawFree(p);
    atomic_fetch_sub(&rt_alive, 1);
}

void rt_cb_discard(void *payload)
{
    if (payload)
        payload_release(payload);
}

static void report(rt_payload *p, const char *where)
{
    if (PyErr_Occurred()) {
#if PY_VERSION_HEX >= 0x030D0000
        PyErr_FormatUnraisable("Exception ignored in cubind %s %R", where, p->callable);
#else
        (void)where;
        PyErr_WriteUnraisable(p->callable);
#endif
    }
}

/* ---- the deferred queue ----------------------------------------------------- */

/* The main interpreter's queue is also drained by one pending call
 * (Py_AddPendingCall): its main thread runs it between two bytecodes, even
 * while the runner is busy in a long callable.
 *
 *  - pc_state moves PC_NOT_YET -> PC_OPEN (the main interpreter's import,
 *    once its atexit step is registered) -> PC_CLOSED (that atexit step),
 *    never back, always under pc_mu. Py_AddPendingCall is called only under
 *    pc_mu with pc_state PC_OPEN, so never once the atexit step returned:
 *    from a thread without a thread state it reads the main interpreter's
 *    state, which finalization frees.
 *  - pc_mu is a leaf lock: under it only Py_AddPendingCall (which takes
 *    CPython's pending-calls lock, never the GIL). The import and atexit
 *    steps take it with their thread state detached (a holder waiting,
 *    detached, for CPython's lock in a free-threaded build may need the
 *    world restarted, which an attached waiter would prevent). A
 *    scheduler may wait for it attached, but only behind a holder whose
 *    pending call was already added (pc_scheduled keeps a second scheduler
 *    out until the pending function ran), which blocks no more.
 *  - pc_scheduled: 1 from the exchange that wins the right to schedule
 *    until the pending function clears it (before it drains), or until the
 *    scheduling failed; so at most one pending call is outstanding. A push
 *    that finds it set needs no call: the clear is ordered after that push
 *    (seq_cst), so the outstanding call's drain sees the item. */
enum { PC_NOT_YET, PC_OPEN, PC_CLOSED };
static pthread_mutex_t pc_mu = PTHREAD_MUTEX_INITIALIZER;
static int pc_state; /* PC_*; guarded by pc_mu */
static atomic_int pc_scheduled;
static _Atomic(rt_interp *) pc_interp; /* the main interpreter's state */
static atomic_llong pc_count;          /* pending calls scheduled (tests) */

/* Whether Py_AddPendingCall from this thread targets the main interpreter:
 * always on 3.12+; before, from a thread without a thread state (its
 * fallback) or with one of the main interpreter. Only under pc_mu, open. */
static int pc_targets_main(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return 1;
#else
    PyThreadState *t = cbs_attached_tstate();
    if (!t)
        t = PyGILState_GetThisThreadState();
    return !t || PyThreadState_GetInterpreter(t) == PyInterpreterState_Main();
#endif
}

static int pc_run(void *arg);

/* Any thread, no thread state needed; never blocks but on pc_mu. */
static void pc_schedule(void)
{
    if (atomic_exchange(&pc_scheduled, 1))
        return; /* one is outstanding */
    int rc = -1;
    pthread_mutex_lock(&pc_mu);
    if (pc_state == PC_OPEN && pc_targets_main())
        rc = Py_AddPendingCall(pc_run, NULL);
    pthread_mutex_unlock(&pc_mu);
    if (rc == 0)
        atomic_fetch_add(&pc_count, 1);
    else
        atomic_store(&pc_scheduled, 0); /* the other drainers remain */
}

/* Every drainer of s's queue (a binding call, the runner, the pending call,
 * the atexit step) goes through here: the flag is cleared before the queue
 * is emptied, so a push that lands after the drain looked finds the queue
 * empty, is its first item again and sets the flag anew. */
static void drain_work(rt_interp *s)
{
    atomic_store(&s->pending, 0);
    rt_queue_drain(&s->work);
}

/* The pending function, on the main thread, attached. Copes with the queue
 * already closed (the drain runs nothing) and with finalization (nothing
 * runs); never raises (a callable's error went to sys.unraisablehook). */
static int pc_run(void *arg)
{
    (void)arg;
    atomic_store(&pc_scheduled, 0);
    rt_interp *s = atomic_load(&pc_interp);
    if (s && PyInterpreterState_Get() == PyInterpreterState_Main() && !rt_finalizing())
        drain_work(s);
    if (PyErr_Occurred())
        PyErr_WriteUnraisable(NULL);
    return 0;
}

/* From any thread, never entering Python: pushes n onto s's queue and, when
 * it made the queue non-empty, schedules its drains (the runner, woken;
 * the pending call, for the main interpreter). The item may be run (and
 * freed) as soon as it is pushed: only s (never freed) is touched after.
 * 0, or -1 when the queue is closed: the item was not taken (the caller
 * leaks it on purpose; the queue counts it). */
static int push(rt_interp *s, rt_queue_node *n)
{
    int rc = rt_queue_push(&s->work, n);
    if (rc == RT_QUEUE_FIRST) {
        atomic_store(&s->pending, 1);
        pthread_mutex_lock(&s->mu);
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->mu);
        if (s->main)
            pc_schedule();
    }
    return rc == RT_QUEUE_CLOSED ? -1 : 0;
}

/* Queues run(p) on p's interpreter (above). Once that interpreter has
 * finished its atexit step the payload is leaked on purpose. */
static void defer(rt_payload *p, void (*run)(void *))
{
    rt_queue_node_init(&p->node, run, p);
    (void)push(p->interp, &p->node);
}

void rt_cb_drain(void)
{
    rt_interp *s = interp_state(current_id(), 0);
    if (s)
        drain_work(s);
}

_Atomic int *rt_cb_pending_flag(void)
{
    rt_interp *s = interp_state(current_id(), 1);
    if (!s) {
        PyErr_NoMemory();
        return NULL;
    }
    return &s->pending;
}

/* ---- Python references dropped on their own interpreter -------------------- */

struct rt_cb_ref {
    rt_queue_node node;
    PyObject *obj;
    rt_interp *interp;
};

rt_cb_ref *rt_cb_ref_new(PyObject *obj)
{
    rt_interp *s = interp_state(current_id(), 1);
    rt_cb_ref *r = s ? PyMem_RawMalloc(sizeof *r) : NULL;
    if (!r)
        return NULL;
    r->obj = Py_NewRef(obj);
    r->interp = s;
    return r;
}

static void ref_run(void *arg)
{
    rt_cb_ref *r = arg;
    Py_DECREF(r->obj);
    PyMem_RawFree(r);
}

void rt_cb_ref_drop(rt_cb_ref *r)
{
    PyThreadState *t = cbs_attached_tstate();
    if (t && PyInterpreterState_GetID(PyThreadState_GetInterpreter(t)) == r->interp->id) {
        ref_run(r);
        return;
    }
    rt_queue_node_init(&r->node, ref_run, r);
    (void)push(r->interp, &r->node); /* closed: the reference is leaked */
}

/* The registry's release callback for Python objects: the reference is
 * dropped at once on a thread attached to the object's interpreter (a
 * binding call there), and otherwise queued for that interpreter's Python
 * threads (rt_cb_ref_drop): no thread ever enters an
 * interpreter here, so there is no check-then-act against finalization and
 * no thread state made for the main interpreter on another's behalf. Once
 * the interpreter's atexit step closed its queue the reference is leaked on
 * purpose (free-threading rule 5). */
/* Invariant: a Python keep-alive holds one strong reference (an rt_cb_ref),
 * dropped exactly once, by py_release, on a thread attached to the
 * object's interpreter: at once, or later through that interpreter's
 * deferred queue (never after its atexit step: then it is leaked). */
static void py_release(void *item, void *ctx)
{
    (void)ctx;
    rt_cb_ref_drop(item);
}

int rt_cb_keep_object(rt_registry_entry *e, PyObject *obj)
{
    rt_cb_ref *r = rt_cb_ref_new(obj);
    if (!r)
        return -ENOMEM;
    int rc = rt_registry_keep_alive(e, r, py_release, NULL);
    if (rc != 0)
        rt_cb_ref_drop(r); /* attached to obj's interpreter: dropped now */
    return rc;
}

/* A user-object destructor: destroy(ptr), later, on a Python thread. */
static void run_destroy(void *arg)
{
    rt_payload *p = arg;
    PyObject *r = PyObject_CallOneArg(p->callable, p->data);
    Py_XDECREF(r);
    report(p, "user object destructor");
    payload_release(p);
}

/* A payload whose owner (a graph, or a skipped one-shot call) is done. */
static void run_release(void *arg)
{
    payload_release(arg);
}

/* The final step of a payload a user object owned, on a Python thread
 * later: destroy(ptr) for a destroy payload, then the release. */
static void defer_final(rt_payload *p)
{
    defer(p, p->kind == CUBIND_CB_DESTROY ? run_destroy : run_release);
}

/* The meta destructor of a CUBIND_REG_USER_OBJECT entry (any thread, pure
 * C): the entry died, the payload goes to the queue. */
static void uo_entry_free(void *meta)
{
    defer_final(meta);
}

void rt_cb_user_object(void *payload, uintptr_t object)
{
    rt_payload *p = payload;
    rt_registry_entry *e = NULL;
    int rc = rt_h_register(CUBIND_REG_USER_OBJECT, object, p, uo_entry_free, NULL, &e);
    if (rc == -EEXIST) {
        /* The driver reused the value of a user object whose destructor has
         * not run yet: its entry is stale. Unmapping it leaves it alive
         * until that destructor drops its payload's reference. */
        rt_registry_entry *old = NULL;
        if (rt_h_lookup(CUBIND_REG_USER_OBJECT, object, &old) == 0) {
            rt_h_unregister_entry(old);
            rt_registry_entry_release(old);
        }
        rc = rt_h_register(CUBIND_REG_USER_OBJECT, object, p, uo_entry_free, NULL, &e);
    }
    uintptr_t expect = REG_NONE;
    if (atomic_compare_exchange_strong(&p->reg, &expect, rc == 0 ? (uintptr_t)e : REG_FAILED))
        return;
    /* REG_GONE: the destructor already ran and left its part to us. */
    if (rc == 0) {
        rt_h_unregister_entry(e);
        rt_registry_entry_release(e); /* the last reference: uo_entry_free */
    } else {
        defer_final(p);
    }
}

/* ---- host nodes' Python callables ------------------------------------------------ */

/* The last id given to a node payload: ids are never reused, so a driver
 * thread calling with the id of a payload that is gone finds nothing
 * (no other payload answers to it). */
static _Atomic unsigned long long node_ids;

/* One holder of a node entry is done (pure C, any thread): the last
 * unmaps the id, then its reference is dropped; the entry dies once no
 * node call in progress holds it, and its death hands the payload to the
 * queue (uo_entry_free). Holders are added only while the capsule (one
 * of them) lives, so the count never rises from 0. */
static void node_unhold(rt_registry_entry *e)
{
    rt_payload *p = rt_registry_meta(e);
    if (atomic_fetch_sub(&p->holders, 1) == 1)
        rt_h_unregister_entry(e);
    rt_registry_entry_release(e);
}

/* Attached (the capsule's destructor, or a failed construction). */
static void node_free(cubind_node_cb *n)
{
    if (n->entry)
        node_unhold(n->entry);
    Py_XDECREF(n->callable);
    Py_XDECREF(n->data);
    PyMem_RawFree(n);
}

static void node_capsule_free(PyObject *capsule)
{
    cubind_node_cb *n = PyCapsule_GetPointer(capsule, CUBIND_NODE_CB_CAPSULE);
    if (n)
        node_free(n);
    else
        PyErr_Clear();
}

PyObject *rt_cb_node_new(PyObject *callable, PyObject *data, uintptr_t c_data)
{
    rt_payload *p = rt_cb_new(CUBIND_CB_NODE, callable, data, NULL, NULL);
    if (!p)
        return NULL;
    atomic_store(&p->persistent, 1); /* runs on every launch of its graphs */
    atomic_store(&p->holders, 1);    /* the capsule */
    cubind_node_cb *n = PyMem_RawCalloc(1, sizeof *n);
    if (!n) {
        payload_release(p);
        return PyErr_NoMemory();
    }
    n->id = (uintptr_t)(atomic_fetch_add(&node_ids, 1) + 1);
    /* -EEXIST cannot happen (ids are unique); on -ENOMEM the payload was
     * not adopted and is still ours */
    if (rt_h_register(CUBIND_REG_NODE_CALLBACK, n->id, p, uo_entry_free, NULL, &n->entry) != 0) {
        n->entry = NULL;
        PyMem_RawFree(n);
        payload_release(p);
        return PyErr_NoMemory();
    }
    n->callable = Py_NewRef(callable);
    n->data = Py_NewRef(data ? data : Py_None);
    n->c_data = c_data;
    PyObject *capsule = PyCapsule_New(n, CUBIND_NODE_CB_CAPSULE, node_capsule_free);
    if (!capsule)
        node_free(n);
    return capsule;
}

/* ---- the runner ----------------------------------------------------------------- */

static void run_host(rt_payload *p)
{
    PyObject *r = PyObject_CallOneArg(p->callable, p->data);
    Py_XDECREF(r);
    report(p, "host function");
}

static void run_stream(rt_payload *p, CUstream stream, CUresult status)
{
    PyObject *s = PyLong_FromVoidPtr((void *)stream), *st = PyLong_FromLong((long)status);
    PyObject *hs = s && p->stream_type ? PyObject_CallOneArg(p->stream_type, s) : Py_XNewRef(s);
    PyObject *rs = st && p->result_type ? PyObject_CallOneArg(p->result_type, st) : Py_XNewRef(st);
    if (hs && rs) {
        PyObject *r = PyObject_CallFunctionObjArgs(p->callable, hs, rs, p->data, NULL);
        Py_XDECREF(r);
    }
    report(p, "stream callback");
    Py_XDECREF(s);
    Py_XDECREF(st);
    Py_XDECREF(hs);
    Py_XDECREF(rs);
}

/* Attached, on the runner. Once it returns the driver thread may be gone:
 * nothing of r but its completion is touched afterwards. s->running is r
 * while the callable runs: a stopper giving up on it names the callable,
 * which it may read only until then (the payload is released after). */
static void run_request(rt_interp *s, rt_req *r)
{
    rt_payload *p = r->p;
    if (p->kind == CUBIND_CB_STREAM)
        run_stream(p, r->stream, r->status);
    else
        run_host(p);
    pthread_mutex_lock(&s->mu);
    s->running = NULL;
    pthread_mutex_unlock(&s->mu);
    if (r->release)
        payload_release(p);
}

/* Under s->mu: completes every queued request as skipped. */
static void flush_requests(rt_interp *s)
{
    for (rt_req *r = s->head; r; r = r->next)
        r->done = 1;
    s->head = NULL;
    s->tail = &s->head;
    pthread_cond_broadcast(&s->done);
}

/* The runner's body: the target of the thread rt_cb_new starts, with its
 * own thread state (made by CPython on the starting thread). Serves
 * requests in arrival order and drains the deferred queue until the phase
 * is CLOSED; then completes what is still queued as skipped and returns. */
void rt_cb_runner(void)
{
    rt_interp *s = interp_state(current_id(), 0);
    if (!s)
        return; /* not started by rt_cb_new */
    pthread_mutex_lock(&s->mu);
    s->runner = PyThread_get_thread_ident();
    pthread_mutex_unlock(&s->mu);
    rt_req *r = NULL;
    int closed = 0;
    while (!closed) {
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&s->mu);
        if (r) {
            r->done = r->ran = 1;
            pthread_cond_broadcast(&s->done);
        }
        while (!s->head && atomic_load(&s->phase) != RUNNER_CLOSED && !rt_queue_pending(&s->work))
            pthread_cond_wait(&s->wake, &s->mu);
        closed = atomic_load(&s->phase) == RUNNER_CLOSED;
        r = NULL;
        if (closed) {
            flush_requests(s);
        } else if (s->head) {
            r = s->head;
            s->head = r->next;
            if (!s->head)
                s->tail = &s->head;
            s->running = r;
        }
        pthread_mutex_unlock(&s->mu);
        Py_END_ALLOW_THREADS
        drain_work(s);
        if (r)
            run_request(s, r);
    }
    /* Signalled attached: before Python 3.13 (no thread handle) the thread
     * state of this thread is deleted before it gives up the GIL, so the
     * stopper, which re-attaches after seeing `exited`, finds it gone. */
    pthread_mutex_lock(&s->mu);
    s->exited = 1;
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
}

/* Calls mod.name(*args) (args a tuple) with keywords kw; new reference. */
static PyObject *call_attr(const char *mod, const char *name, PyObject *args, PyObject *kw)
{
    PyObject *m = PyImport_ImportModule(mod);
    PyObject *f = m ? PyObject_GetAttrString(m, name) : NULL;
    PyObject *r = f && args ? PyObject_Call(f, args, kw) : NULL;
    Py_XDECREF(f);
    Py_XDECREF(m);
    return r;
}

/* Registers `stop` with threading: it runs when the interpreter starts to
 * shut down, before threads are joined and before atexit. (What
 * concurrent.futures uses for the same purpose; it refuses once shutdown has
 * begun.) 0, or -1 with an exception. */
static int register_stop(PyObject *stop)
{
    PyObject *args = PyTuple_Pack(1, stop);
    PyObject *r = args ? call_attr("threading", "_register_atexit", args, NULL) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int rt_cb_main_init(PyObject *stop)
{
    if (register_stop(stop) < 0)
        return -1;
    atomic_store(&rt_main_hooked, 1);
    return 0;
}

/* Starts the runner thread (a subinterpreter registers its stop step with
 * threading first; the main interpreter did at import). 0, or -1 with an
 * exception (MemoryError; RuntimeError once shutdown has begun or where
 * the interpreter may not start threads). */
static int runner_start(rt_interp *s)
{
    PyObject *rt = PyImport_ImportModule("cubind._runtime");
    PyObject *stop = rt ? PyObject_GetAttrString(rt, "_stop_callback_runner") : NULL;
    PyObject *body = rt ? PyObject_GetAttrString(rt, "_callback_runner") : NULL;
    Py_XDECREF(rt);
    int ok = stop && body && (PyInterpreterState_Get() == PyInterpreterState_Main() ||
                              register_stop(stop) == 0);
    PyObject *r = NULL;
    if (ok) {
#if PY_VERSION_HEX >= 0x030D0000
        /* Joinable; joined by the stop hook once it left its loop. The main
         * interpreter's is a daemon thread, so that CPython's own join of
         * every non-daemon thread at exit (unbounded) never waits for a
         * callable that does not return: the stop hook's wait is bounded.
         * A subinterpreter's is not (daemon threads are refused there by
         * default), so a callable that never returns holds up the end of
         * its subinterpreter. */
        PyObject *kw = Py_BuildValue("{sO}", "daemon", s->main ? Py_True : Py_False);
        PyObject *args = kw ? PyTuple_Pack(1, body) : NULL;
        r = args ? call_attr("_thread", "start_joinable_thread", args, kw) : NULL;
        Py_XDECREF(kw);
        s->handle = Py_XNewRef(r); /* written before RUNNING is published */
#else
        (void)s; /* no handle: see rt_cb_runner's exit */
        PyObject *none = PyTuple_New(0);
        PyObject *args = none ? PyTuple_Pack(2, body, none) : NULL;
        Py_XDECREF(none);
        r = args ? call_attr("_thread", "start_new_thread", args, NULL) : NULL;
#endif
        Py_XDECREF(args);
    }
    Py_XDECREF(stop);
    Py_XDECREF(body);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The state of the current interpreter with its runner started (once; the
 * first caller starts it, concurrent ones wait). NULL with an exception. */
static rt_interp *runner_for_current(void)
{
#if PY_VERSION_HEX < 0x030D0000
    /* Before 3.13 a subinterpreter that has a thread of its own cannot be
     * run or destroyed through the interpreters module, and Py_Finalize
     * does not end subinterpreters left alive: their runner could run
     * Python while the process finalizes. */
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cubind: Python callables as CUDA callbacks need Python 3.13+ in a "
                        "subinterpreter (pass a C function pointer, or use the main "
                        "interpreter)");
        return NULL;
    }
#endif
    if (PyInterpreterState_Get() != PyInterpreterState_Main() && !atomic_load(&rt_main_hooked)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cubind: Python callables as CUDA callbacks in a subinterpreter need "
                        "cubind imported in the main interpreter first (its shutdown stops the "
                        "callback threads of every interpreter)");
        return NULL;
    }
    rt_interp *s = interp_state(current_id(), 1);
    if (!s) {
        PyErr_NoMemory();
        return NULL;
    }
    if (atomic_load(&s->phase) == RUNNER_RUNNING)
        return s;
    unsigned long me = PyThread_get_thread_ident();
    int phase;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&s->mu);
    while (atomic_load(&s->phase) == RUNNER_STARTING && s->starter != me)
        pthread_cond_wait(&s->done, &s->mu);
    phase = atomic_load(&s->phase);
    if (phase == RUNNER_NONE && atomic_load(&rt_process_closing)) {
        phase = RUNNER_CLOSED;
        atomic_store(&s->phase, RUNNER_CLOSED);
    }
    if (phase == RUNNER_NONE) {
        atomic_store(&s->phase, RUNNER_STARTING);
        s->starter = me;
    }
    pthread_mutex_unlock(&s->mu);
    Py_END_ALLOW_THREADS
    switch (phase) {
    case RUNNER_RUNNING:
        return s;
    case RUNNER_CLOSED:
        PyErr_SetString(PyExc_RuntimeError,
                        "cubind: this interpreter is shutting down; Python callables can no "
                        "longer be given to CUDA");
        return NULL;
    case RUNNER_STARTING:
        PyErr_SetString(PyExc_RuntimeError,
                        "cubind: a Python CUDA callback was registered while this thread "
                        "was starting the callback runner");
        return NULL;
    }
    int rc = runner_start(s);
    pthread_mutex_lock(&s->mu);
    s->started = rc == 0;
    atomic_store(&s->phase, rc == 0 ? RUNNER_RUNNING : RUNNER_NONE);
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
    return rc == 0 ? s : NULL;
}

/* ---- bounded waits at shutdown ----------------------------------------------- */

/* The time of day in milliseconds. gettimeofday, not clock_gettime: the
 * latter's default version is GLIBC_2.17 (older glibc has it in librt
 * only), which would raise the wheels' manylinux tag (glibc_pins.h). A
 * clock step during the wait shifts its end by as much. */
static long long now_ms(void)
{
    struct timeval t;
    gettimeofday(&t, NULL);
    return (long long)t.tv_sec * 1000 + t.tv_usec / 1000;
}

enum { LEFT, TIMED_OUT, INTERRUPTED };

/* Waits (attached on entry and return) until s's runner has left its
 * loop, or until `deadline` (now_ms) passes, in slices of 50 ms with
 * the thread state detached; between slices the main thread runs signal
 * handlers, so SIGINT ends the wait (INTERRUPTED, the KeyboardInterrupt
 * set). */
static int wait_left(rt_interp *s, long long deadline)
{
    for (;;) {
        int exited;
        Py_BEGIN_ALLOW_THREADS
        long long end = now_ms() + 50;
        struct timespec slice = {(time_t)(end / 1000), (long)(end % 1000) * 1000000L};
        pthread_mutex_lock(&s->mu);
        if (!s->exited)
            pthread_cond_timedwait(&s->done, &s->mu, &slice);
        exited = s->exited;
        pthread_mutex_unlock(&s->mu);
        Py_END_ALLOW_THREADS
        if (exited)
            return LEFT;
        if (PyErr_CheckSignals() < 0)
            return INTERRUPTED;
        if (now_ms() >= deadline)
            return TIMED_OUT;
    }
}

/* What s's runner is running, for the message: "host function <repr>"
 * (a new str; NULL when out of memory, or when the runner has left its
 * loop after all: *left is then set). Marks s abandoned: no later stop
 * waits for it again. Attached; never raises. */
static PyObject *abandon(rt_interp *s, int *left)
{
    pthread_mutex_lock(&s->mu);
    s->abandoned = 1;
    *left = s->exited;
    PyObject *callable = NULL;
    int kind = 0;
    if (s->running && !*left) {
        callable = Py_NewRef(s->running->p->callable);
        kind = s->running->p->kind;
    }
    pthread_mutex_unlock(&s->mu);
    if (*left)
        return NULL;
    if (!callable) {
        /* Not in a host function or stream callback: in the deferred work
         * it drains between them. */
        PyObject *what = PyUnicode_FromString("a user-object destructor or deferred release");
        if (!what)
            PyErr_Clear();
        return what;
    }
    PyObject *what = PyUnicode_FromFormat(
        "%s %R", kind == CUBIND_CB_STREAM ? "stream callback" : "host function", callable);
    if (!what) {
        PyErr_Clear();
        what = PyUnicode_FromFormat("%s of type %s",
                                    kind == CUBIND_CB_STREAM ? "stream callback" : "host function",
                                    Py_TYPE(callable)->tp_name);
        if (!what)
            PyErr_Clear();
    }
    Py_DECREF(callable);
    return what;
}

/* Stops the runner of s: no request is accepted from now on, the call in
 * progress (if any) finishes, queued ones are skipped, and the runner has
 * left its loop, attached, when this returns, so that no later
 * finalization step can catch it half-way (unless this thread is the runner
 * itself, stopping from inside a callable: it then leaves its loop after
 * that callable). The wait ends at `deadline` (or on SIGINT): a callable
 * that does not return by then is left running, with its state (never
 * freed), and its name appended to `stuck` (a list; NULL: not named).
 * `own`: s is the current interpreter's, whose thread handle (3.13+) is
 * joined here once the runner has left. Idempotent (a runner given up on
 * is not waited for again); returns INTERRUPTED when SIGINT ended the wait
 * (the KeyboardInterrupt cleared), else LEFT or TIMED_OUT; never raises. */
static int stop_one(rt_interp *s, int own, long long deadline, PyObject *stuck)
{
    unsigned long me = PyThread_get_thread_ident();
    int wait;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&s->mu);
    while (atomic_load(&s->phase) == RUNNER_STARTING)
        pthread_cond_wait(&s->done, &s->mu);
    wait = s->started && s->runner != me && !s->abandoned && !s->exited;
    atomic_store(&s->phase, RUNNER_CLOSED);
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
    Py_END_ALLOW_THREADS
    int outcome = wait ? wait_left(s, deadline) : LEFT;
    if (outcome != LEFT) {
        if (outcome == INTERRUPTED)
            PyErr_Clear();
        int left;
        PyObject *what = abandon(s, &left);
        if (what && stuck && PyList_Append(stuck, what) < 0)
            PyErr_Clear();
        Py_XDECREF(what);
        if (!left)
            return outcome;
    }
    PyObject *h = NULL;
    if (own) {
        pthread_mutex_lock(&s->mu);
        if (s->exited) {
            h = s->handle;
            s->handle = NULL;
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (h) {
        PyObject *r = PyObject_CallMethod(h, "join", NULL);
        if (!r)
            PyErr_WriteUnraisable(h);
        Py_XDECREF(r);
        Py_DECREF(h);
    }
    return outcome == INTERRUPTED ? INTERRUPTED : LEFT;
}

/* One line on stderr naming the callables shutdown stopped waiting for. */
static void report_stuck(PyObject *stuck, int interrupted, long long waited_ms)
{
    Py_ssize_t n = PyList_Size(stuck);
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *names = sep ? PyUnicode_Join(sep, stuck) : NULL;
    PyObject *line =
        names ? PyUnicode_FromFormat(
                    "cubind: exiting without waiting for %zd Python callback%s still running "
                    "after %lld.%03lld s%s (%U); left running (CUBIND_EXIT_TIMEOUT sets the "
                    "wait)\n",
                    n, n == 1 ? "" : "s", waited_ms / 1000, waited_ms % 1000,
                    interrupted ? ", wait interrupted" : "", names)
              : NULL;
    const char *text = line ? PyUnicode_AsUTF8(line) : NULL;
    if (text) {
        fputs(text, stderr);
        fflush(stderr);
    } else {
        PyErr_Clear();
    }
    Py_XDECREF(line);
    Py_XDECREF(names);
    Py_XDECREF(sep);
}

/* The threading shutdown hook of an interpreter. A subinterpreter stops its
 * own runner. The main interpreter stops every interpreter's runner: its
 * shutdown is the last moment when CPython lets other threads attach, and
 * subinterpreters still alive are ended only later (3.13+: after the
 * runtime started finalizing, when a runner that re-attached would be
 * killed half-way). One deadline bounds the waits for all of them
 * (rt_env_exit_timeout_ms); what still runs then is named in one line on stderr
 * and left running. */
void rt_cb_runner_stop(void)
{
    int64_t id = current_id();
    long long start = now_ms(), deadline = start + rt_env_exit_timeout_ms();
    PyObject *stuck = PyList_New(0);
    if (!stuck)
        PyErr_Clear(); /* the wait stays bounded; only the names are lost */
    int interrupted = 0;
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        rt_interp *s = interp_state(id, 0);
        if (s)
            interrupted = stop_one(s, 1, deadline, stuck) == INTERRUPTED;
    } else {
        atomic_store(&rt_process_closing, 1);
        /* Nodes are only ever pushed at the head and never unlinked, and a
         * node's `next` is set before it is published: walking from a head
         * read under the lock needs no lock. A state added after that read
         * sees rt_process_closing and never starts a runner. After SIGINT
         * the others are not waited for. */
        pthread_mutex_lock(&rt_interps_mu);
        rt_interp *head = rt_interps;
        pthread_mutex_unlock(&rt_interps_mu);
        for (rt_interp *s = head; s; s = s->next)
            if (stop_one(s, s->id == id, interrupted ? 0 : deadline, stuck) == INTERRUPTED)
                interrupted = 1;
    }
    if (stuck && PyList_Size(stuck))
        report_stuck(stuck, interrupted, now_ms() - start);
    Py_XDECREF(stuck);
}

/* ---- trampolines (driver threads; no Python) ------------------------------------- */

/* Hands r to the runner of r->p's interpreter and waits until it ran, so
 * the stream goes on only after the callable returned. When the runner no
 * longer takes calls, the call is skipped: counted, and a one-shot payload
 * is handed to the deferred queue for release (leaked once that is closed). */
static void hand_over(rt_req *r)
{
    rt_interp *s = r->p->interp;
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->phase) == RUNNER_RUNNING) {
        r->next = NULL;
        *s->tail = r;
        s->tail = &r->next;
        pthread_cond_signal(&s->wake);
        while (!r->done)
            pthread_cond_wait(&s->done, &s->mu);
    }
    int ran = r->ran;
    pthread_mutex_unlock(&s->mu);
    if (!ran) {
        atomic_fetch_add(&rt_skipped, 1);
        if (r->release) {
            entry_drop(r->p, REG_NONE); /* no longer in flight */
            defer(r->p, run_release);
        }
    }
}

static void CUDA_CB host_trampoline(void *arg)
{
    rt_payload *p = arg;
    rt_req r = {.p = p, .release = !atomic_load(&p->persistent)};
    hand_over(&r);
}

static void CUDA_CB stream_trampoline(CUstream stream, CUresult status, void *arg)
{
    rt_req r = {.p = arg, .stream = stream, .status = status, .release = 1};
    hand_over(&r);
}

/* A graph's host node: arg is a node payload's id. The entry found holds
 * the payload through the call; a payload no longer mapped (its capsule
 * died: every graph and executable graph holding it was destroyed through
 * cubind, a launch still in flight) is not called, counted as skipped.
 * The release may be the entry's last: its payload then goes to the
 * queue (pure C). */
static void CUDA_CB node_trampoline(void *arg)
{
    rt_registry_entry *e = NULL;
    if (rt_h_lookup(CUBIND_REG_NODE_CALLBACK, (uintptr_t)arg, &e) != 0) {
        atomic_fetch_add(&rt_skipped, 1);
        return;
    }
    rt_req r = {.p = rt_registry_meta(e), .release = 0};
    hand_over(&r);
    rt_registry_entry_release(e);
}

/* The user object owning the payload is destroyed (a user's, or the one
 * of a captured host function, whose graphs are all gone): its entry is
 * unmapped and dropped here, and its death hands the payload to the queue.
 * Before the creator mapped it (REG_NONE), the creator does that. */
static void CUDA_CB user_object_trampoline(void *arg)
{
    rt_payload *p = arg;
    if (entry_drop(p, REG_GONE) == REG_FAILED)
        defer_final(p);
}

void *rt_cb_trampoline(int kind)
{
    switch (kind) {
    case CUBIND_CB_HOST: return (void *)host_trampoline;
    case CUBIND_CB_STREAM: return (void *)stream_trampoline;
    case CUBIND_CB_DESTROY: return (void *)user_object_trampoline;
    case CUBIND_CB_NODE: return (void *)node_trampoline;
    default: return NULL;
    }
}

/* ---- graphs ------------------------------------------------------------------ */

/* The driver entry points this needs, in ABI variants every driver since
 * CUDA 11.3 has (their prototypes spelled out: not taken from the header
 * being bound, whose variants may be newer). */
typedef CUresult (CUDAAPI *is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (CUDAAPI *capture_info_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *,
                                            CUgraph *, const CUgraphNode **, size_t *);
typedef CUresult (CUDAAPI *user_object_create_fn)(CUuserObject *, void *, CUhostFn, unsigned int,
                                                  unsigned int);
typedef CUresult (CUDAAPI *graph_retain_fn)(CUgraph, CUuserObject, unsigned int, unsigned int);

static void *lookup_or_raise(const char *name, int version)
{
    int status = 0;
    void *fn = cubind_rt_lookup(name, version, &status);
    if (!fn)
        PyErr_Format(PyExc_RuntimeError, "cubind: the driver lacks %s (status %d)", name,
                     status);
    return fn;
}

/* RuntimeError: the driver refused to tie `what` to a graph. -1. */
static int tie_failed(const char *what, CUresult rc)
{
    PyErr_Format(PyExc_RuntimeError, "cubind: could not tie %s (CUresult %d)", what, (int)rc);
    return -1;
}

int rt_cb_host_attach(void *stream, void *payload)
{
    rt_payload *p = payload;
    is_capturing_fn is_capturing =
        (is_capturing_fn)(uintptr_t)lookup_or_raise("cuStreamIsCapturing", 10000);
    if (!is_capturing)
        return -1;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (is_capturing((CUstream)stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return 0; /* not captured (or the launch will report the error) */
    capture_info_fn info = (capture_info_fn)(uintptr_t)lookup_or_raise("cuStreamGetCaptureInfo", 11030);
    user_object_create_fn create =
        (user_object_create_fn)(uintptr_t)lookup_or_raise("cuUserObjectCreate", 11030);
    graph_retain_fn retain =
        (graph_retain_fn)(uintptr_t)lookup_or_raise("cuGraphRetainUserObject", 11030);
    if (!info || !create || !retain)
        return -1;
    CUgraph graph = NULL;
    CUuserObject obj = NULL;
    CUresult rc = info((CUstream)stream, &status, NULL, &graph, NULL, NULL);
    if (rc == CUDA_SUCCESS)
        rc = create(&obj, p, user_object_trampoline, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    if (rc == CUDA_SUCCESS) {
        /* From here the payload runs on every replay and is no longer in
         * flight. If the retain fails, our reference to obj is leaked (its
         * destructor never runs) and the payload is the caller's again. */
        atomic_store(&p->persistent, 1);
        entry_drop(p, REG_NONE);
        rc = retain(graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE);
        if (rc == CUDA_SUCCESS)
            rt_cb_user_object(p, (uintptr_t)obj); /* the graph owns the payload */
    }
    if (rc != CUDA_SUCCESS)
        return tie_failed("a host function to the capture graph", rc);
    return 1;
}

/* The destructor of a user object holding a node entry for a graph (a
 * driver thread, once the graph and its executable graphs, launches in
 * flight included, are done with it): pure C. */
static void CUDA_CB node_user_object_trampoline(void *arg)
{
    node_unhold(arg);
}

typedef CUresult (CUDAAPI *user_object_release_fn)(CUuserObject, unsigned int);

int rt_cb_node_retain(PyObject *capsule, uintptr_t graph)
{
    cubind_node_cb *n = PyCapsule_GetPointer(capsule, CUBIND_NODE_CB_CAPSULE);
    if (!n)
        return -1;
    user_object_create_fn create =
        (user_object_create_fn)(uintptr_t)lookup_or_raise("cuUserObjectCreate", 11030);
    graph_retain_fn retain =
        (graph_retain_fn)(uintptr_t)lookup_or_raise("cuGraphRetainUserObject", 11030);
    user_object_release_fn release =
        (user_object_release_fn)(uintptr_t)lookup_or_raise("cuUserObjectRelease", 11030);
    if (!create || !retain || !release)
        return -1;
    /* the user object's holder: a reference to the entry and a count,
     * both given back by its destructor */
    rt_registry_entry *e = n->entry;
    rt_registry_entry_retain(e);
    atomic_fetch_add(&((rt_payload *)rt_registry_meta(e))->holders, 1);
    CUuserObject obj = NULL;
    CUresult rc = create(&obj, e, node_user_object_trampoline, 1,
                         CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    if (rc != CUDA_SUCCESS) {
        node_unhold(e); /* the capsule still holds it: no unmap here */
    } else if ((rc = retain((CUgraph)graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE)) != CUDA_SUCCESS) {
        /* our reference back to the driver: the destructor gives the
         * holder back, on the driver's time */
        release(obj, 1);
    }
    return rc == CUDA_SUCCESS ? 0 : tie_failed("a host node's callable to its graph", rc);
}

/* ---- fork ------------------------------------------------------------------ */

/* Lock order: rt_interps_mu, then each s->mu in list order. Nothing else
 * takes two of these (s->mu is a leaf; interp_state holds rt_interps_mu
 * alone), so prepare cannot deadlock. The states list cannot change while
 * rt_interps_mu is held. */
void rt_cb_fork_prepare(void)
{
    pthread_mutex_lock(&rt_interps_mu);
    for (rt_interp *s = rt_interps; s; s = s->next)
        pthread_mutex_lock(&s->mu);
}

void rt_cb_fork_parent(void)
{
    for (rt_interp *s = rt_interps; s; s = s->next)
        pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&rt_interps_mu);
}

void rt_cb_fork_child(void)
{
    unsigned long me = PyThread_get_thread_ident(); /* pthread_self: safe here */
    for (rt_interp *s = rt_interps; s; s = s->next) {
        if (s->started && s->runner == me)
            /* Forked by a callable on the runner: this thread is that runner,
             * the child's only thread. It leaves its loop when the callable
             * returns (its thread then ends, and the child with it) instead
             * of waiting for requests no driver thread will make. */
            atomic_store(&s->phase, RUNNER_CLOSED);
        else if (atomic_load(&s->phase) != RUNNER_CLOSED)
            atomic_store(&s->phase, RUNNER_NONE);
        s->starter = 0;
        s->started = 0;
        s->exited = 0;
        s->runner = 0;
        s->running = NULL;
        /* The parent's runner's thread handle: a Python object cannot be
         * released in a fork handler; its reference is left. */
        s->handle = NULL;
        /* Requests live on the stacks of driver threads of the parent. */
        s->head = NULL;
        s->tail = &s->head;
        /* Conditions may record waiters of the parent's threads: made anew
         * (no thread of this process waits on them). */
        memset(&s->wake, 0, sizeof s->wake);
        memset(&s->done, 0, sizeof s->done);
        pthread_cond_init(&s->wake, NULL);
        pthread_cond_init(&s->done, NULL);
        rt_queue_after_fork_child(&s->work);
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&rt_interps_mu);
    /* pc_mu is not taken by prepare (its holder may wait, attached, in
     * Py_AddPendingCall for a lock that a thread stopping the world for
     * fork keeps it from getting back): a parent's thread may have held
     * it; it is made anew (only this thread is here), and the right to
     * schedule is given back (a pending call the parent scheduled may
     * still come: it drains an empty queue). */
    memset(&pc_mu, 0, sizeof pc_mu);
    pthread_mutex_init(&pc_mu, NULL);
    atomic_store(&pc_scheduled, 0);
}

/* ---- shutdown ---------------------------------------------------------------- */

/* pc_mu is taken detached here too (see rt_cb_pending_close). */
void rt_cb_pending_open(void)
{
    rt_interp *s = interp_state(current_id(), 1);
    if (!s)
        return; /* out of memory: the other drainers remain */
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&pc_mu);
    if (pc_state == PC_NOT_YET) {
        atomic_store(&pc_interp, s);
        pc_state = PC_OPEN;
    }
    pthread_mutex_unlock(&pc_mu);
    Py_END_ALLOW_THREADS
}

/* Under pc_mu, detached (a scheduler holding pc_mu may wait inside
 * Py_AddPendingCall for CPython's lock): when this returns, no thread is
 * inside Py_AddPendingCall for cubind and none will call it again. */
void rt_cb_pending_close(void)
{
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&pc_mu);
    pc_state = PC_CLOSED;
    pthread_mutex_unlock(&pc_mu);
    Py_END_ALLOW_THREADS
}

/* The main interpreter's step closes the pending-call wake-up first; a
 * pending call already scheduled then finds the queue drained or closed. */
void rt_cb_atexit(void)
{
    if (PyInterpreterState_Get() == PyInterpreterState_Main())
        rt_cb_pending_close();
    rt_interp *s = interp_state(current_id(), 0);
    if (!s)
        return;
    rt_cb_runner_stop();
    drain_work(s);
    rt_queue_close(&s->work);
}

long long rt_cb_pending_calls(void)
{
    return atomic_load(&pc_count);
}

void rt_cb_counts(long long out[3])
{
    out[0] = atomic_load(&rt_alive);
    out[1] = atomic_load(&rt_skipped);
    long long leaked = 0;
    pthread_mutex_lock(&rt_interps_mu);
    for (rt_interp *s = rt_interps; s; s = s->next)
        leaked += (long long)rt_queue_leaked(&s->work);
    pthread_mutex_unlock(&rt_interps_mu);
    out[2] = leaked;
}
