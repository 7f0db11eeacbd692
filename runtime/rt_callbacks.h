/*
 * rt_callbacks.h — Python callables as CUDA callbacks: host functions
 * (cuLaunchHostFunc), stream callbacks (cuStreamAddCallback) and user-object
 * destructors (cuUserObjectCreate), with shutdown safety.
 *
 * A payload binds a callable to one callback slot. The driver calls a C
 * trampoline from its own threads with the payload as userData:
 *
 *  - host functions and stream callbacks run the callable right there, in
 *    stream order, after entering the payload's interpreter — unless the
 *    process is shutting down, in which case the call is skipped;
 *  - user-object destructors never enter Python on the driver's thread:
 *    they push the call onto the deferred-cleanup queue (rt_queue.h), which
 *    drains on Python threads (the next binding call, one scheduled pending
 *    call, the atexit handler).
 *
 * Lifetime: a one-shot payload (a host function launched outside stream
 * capture, a stream callback) is released by its trampoline after the run.
 * A host function launched while its stream is being captured becomes part
 * of the graph and must run on every replay: rt_cb_host_attach() hands the
 * payload to a CUDA user object retained by the capture graph, whose
 * destructor releases it (through the queue) when the last graph using it
 * is destroyed.
 *
 * Shutdown: rt_cb_atexit() (registered with atexit by cubind._runtime in
 * the main interpreter) sets the closing flag, waits (thread state
 * detached, bounded) for trampolines already inside Python, drains the
 * queue and closes it. After that no trampoline enters Python; what is
 * still queued or arrives later is leaked on purpose and counted.
 */
#ifndef CUBIND_RT_CALLBACKS_H
#define CUBIND_RT_CALLBACKS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>

#include "cubind_rt.h"

/* Creates a payload (strong references to callable, data and the optional
 * converters for the C arguments of stream callbacks). NULL + exception. */
void *rt_cb_new(int kind, PyObject *callable, PyObject *data, PyObject *stream_type,
                PyObject *result_type);
/* Frees a payload the driver never received (caller holds the GIL). */
void rt_cb_discard(void *payload);
/* The C function to hand the driver for a payload of this kind. */
void *rt_cb_trampoline(int kind);
/* Before launching a host function on `stream`: if the stream is being
 * captured, ties the payload's lifetime to the capture graph and returns 1
 * (the payload is no longer the caller's); 0 when not captured; -1 with an
 * exception on failure (the payload is the caller's unless it was already
 * handed to a user object: then it is leaked, never freed twice). */
int rt_cb_host_attach(void *stream, void *payload);
/* Runs the queued work of the current interpreter (caller holds the GIL). */
void rt_cb_drain(void);
/* Set when work is queued; cleared by the drainer. */
extern atomic_int rt_cb_pending;
/* The atexit step described above. */
void rt_cb_atexit(void);
/* Counters for tests: payloads alive, calls skipped at shutdown, queue
 * items leaked after close. */
void rt_cb_counts(long long out[3]);

#endif
