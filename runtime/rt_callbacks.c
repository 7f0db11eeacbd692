/*
 * rt_callbacks.c — see rt_callbacks.h.
 *
 * Invariants:
 *  - A payload holds strong references to its Python objects; they are
 *    released exactly once, always with the interpreter entered (in a
 *    trampoline that entered it, or in a drain on a Python thread).
 *  - A trampoline enters Python only between rt_enter() and rt_leave();
 *    rt_closing is set before the atexit step waits for rt_inflight to reach
 *    zero, and both are sequentially consistent, so once the wait ends no
 *    trampoline is inside Python or will enter it.
 *  - Only the main interpreter's payloads exist (rt_cb_new refuses others),
 *    so every queued item belongs to the interpreter that drains it.
 */
#define _POSIX_C_SOURCE 200809L
#include "rt_callbacks.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#include "rt_loader.h"
#include "rt_queue.h"

typedef struct {
    rt_queue_node node;         /* used once, for the deferred step */
    int kind;                   /* CUBIND_CB_* */
    atomic_int persistent;      /* owned by a graph: not released after a run */
    PyObject *callable, *data, *stream_type, *result_type;
} rt_payload;

atomic_int rt_cb_pending;
static rt_queue rt_work;                 /* zero-initialised is valid */
static atomic_int rt_closing, rt_inflight;
static atomic_llong rt_alive, rt_skipped;

/* ---- entering Python from a driver thread -------------------------------- */

static int rt_is_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

static int rt_enter(void)
{
    atomic_fetch_add(&rt_inflight, 1);
    if (atomic_load(&rt_closing) || rt_is_finalizing()) {
        atomic_fetch_sub(&rt_inflight, 1);
        atomic_fetch_add(&rt_skipped, 1);
        return 0;
    }
    return 1;
}

static void rt_leave(void)
{
    atomic_fetch_sub(&rt_inflight, 1);
}

/* ---- payloads -------------------------------------------------------------- */

void *rt_cb_new(int kind, PyObject *callable, PyObject *data, PyObject *stream_type,
                PyObject *result_type)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cubind: Python callables as CUDA callbacks are supported in the main "
                        "interpreter only (pass a C function pointer in subinterpreters)");
        return NULL;
    }
    if (!PyCallable_Check(callable)) {
        PyErr_Format(PyExc_TypeError, "a CUDA callback must be callable, not %.100s",
                     Py_TYPE(callable)->tp_name);
        return NULL;
    }
    rt_payload *p = PyMem_RawCalloc(1, sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    p->kind = kind;
    p->callable = Py_NewRef(callable);
    p->data = Py_NewRef(data ? data : Py_None);
    p->stream_type = Py_XNewRef(stream_type);
    p->result_type = Py_XNewRef(result_type);
    atomic_fetch_add(&rt_alive, 1);
    return p;
}

/* Requires the interpreter entered. */
static void payload_release(rt_payload *p)
{
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

static int pending_drain(void *unused)
{
    (void)unused;
    rt_cb_drain();
    return 0;
}

/* From any thread, never entering Python. */
static void defer(rt_payload *p, void (*run)(void *))
{
    rt_queue_node_init(&p->node, run, p);
    int rc = rt_queue_push(&rt_work, &p->node);
    if (rc == RT_QUEUE_FIRST) {
        atomic_store(&rt_cb_pending, 1);
        /* Callable without an attached thread state; on failure the work
         * waits for the next binding call or the atexit drain. */
        (void)Py_AddPendingCall(pending_drain, NULL);
    }
    /* RT_QUEUE_CLOSED: shutdown has begun; the payload is leaked on
     * purpose (counted by the queue). */
}

void rt_cb_drain(void)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main())
        return;
    atomic_store(&rt_cb_pending, 0);
    rt_queue_drain(&rt_work);
}

/* ---- trampolines --------------------------------------------------------- */

static void run_host(rt_payload *p)
{
    PyObject *r = PyObject_CallOneArg(p->callable, p->data);
    Py_XDECREF(r);
    report(p, "host function");
}

static void CUDA_CB host_trampoline(void *arg)
{
    rt_payload *p = arg;
    int persistent = atomic_load(&p->persistent);
    if (!rt_enter())
        return; /* shutting down: skipped; a one-shot payload is leaked */
    PyGILState_STATE g = PyGILState_Ensure();
    run_host(p);
    if (!persistent)
        payload_release(p);
    PyGILState_Release(g);
    rt_leave();
}

static void CUDA_CB stream_trampoline(CUstream stream, CUresult status, void *arg)
{
    rt_payload *p = arg;
    if (!rt_enter())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
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
    payload_release(p);
    PyGILState_Release(g);
    rt_leave();
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

static void CUDA_CB destroy_trampoline(void *arg)
{
    defer(arg, run_destroy);
}

/* The graph that owned a persistent host function is gone. */
static void run_release(void *arg)
{
    payload_release(arg);
}

static void CUDA_CB graph_release_trampoline(void *arg)
{
    defer(arg, run_release);
}

void *rt_cb_trampoline(int kind)
{
    switch (kind) {
    case CUBIND_CB_HOST: return (void *)host_trampoline;
    case CUBIND_CB_STREAM: return (void *)stream_trampoline;
    case CUBIND_CB_DESTROY: return (void *)destroy_trampoline;
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
        rc = create(&obj, p, graph_release_trampoline, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    if (rc == CUDA_SUCCESS) {
        /* From here the graph owns the payload, whatever happens next. */
        atomic_store(&p->persistent, 1);
        rc = retain(graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE);
    }
    if (rc != CUDA_SUCCESS) {
        PyErr_Format(PyExc_RuntimeError,
                     "cubind: could not tie a host function to the capture graph (CUresult %d)",
                     (int)rc);
        return -1;
    }
    return 1;
}

/* ---- shutdown ---------------------------------------------------------------- */

void rt_cb_atexit(void)
{
    atomic_store(&rt_closing, 1);
    /* Wait, detached, for trampolines already running Python. */
    Py_BEGIN_ALLOW_THREADS
    for (int i = 0; i < 5000 && atomic_load(&rt_inflight) > 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    Py_END_ALLOW_THREADS
    rt_cb_drain();
    rt_queue_close(&rt_work);
}

void rt_cb_counts(long long out[3])
{
    out[0] = atomic_load(&rt_alive);
    out[1] = atomic_load(&rt_skipped);
    out[2] = (long long)rt_queue_leaked(&rt_work);
}
