/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_callbacks.h — Python callables as CUDA callbacks: host functions
 * (cuLaunchHostFunc), stream callbacks (cuStreamAddCallback) and user-object
 * destructors (cuUserObjectCreate), with shutdown safety.
 *
 * A payload binds a callable to one callback slot and to the interpreter
 * that registered it. The driver calls a C trampoline from its own threads
 * with the payload as userData. Trampolines never enter CPython (no thread
 * state, no GIL, no Python allocation on a driver thread), so they cannot
 * crash or abort under allocation failure, and subinterpreters work:
 *
 *  - host functions and stream callbacks are handed to the interpreter's
 *    runner, one Python thread per interpreter, started by the first
 *    registration of a Python callable there (its thread state is made on
 *    that Python thread, where a failure is an ordinary exception). The
 *    driver's thread waits (pthread mutex and condition) until the runner
 *    has run the callable, so stream order is kept. The runner runs the
 *    callables of its interpreter one at a time, in arrival order;
 *    exceptions go to sys.unraisablehook;
 *  - user-object destructors push the call onto the interpreter's
 *    deferred-cleanup queue (rt_queue.h), which drains on that
 *    interpreter's Python threads: the runner (woken by the push), the
 *    next binding call, the atexit step, and for the main interpreter one
 *    pending call (Py_AddPendingCall, scheduled by the push that made the
 *    queue non-empty, at most one outstanding, never after the atexit
 *    step), which the main thread runs between two bytecodes even while
 *    the runner is busy in a long host function.
 *
 * Lifetime: a one-shot payload (a host function launched outside stream
 * capture, a stream callback) is released by the runner after the run. A
 * host function launched while its stream is being captured becomes part
 * of the graph and must run on every replay: rt_cb_host_attach() hands the
 * payload to a CUDA user object retained by the capture graph, whose
 * destructor releases it (through the queue) when the last graph using it
 * is destroyed. A graph host node's Python callable (rt_cb_node_new) is
 * a multi-shot payload mapped under an id that the node's userData holds;
 * it lives while its capsule does (kept by the graphs, nodes and
 * executable graphs given it) and through every call in progress. An
 * interpreter's callback state is never freed (a graph may outlive the
 * interpreter).
 *
 * Registry (rt_handles.h; one contract with every other kind of handle):
 *  - a one-shot payload is mapped as CUBIND_REG_CALLBACK, keyed by its
 *    address, from rt_cb_new until it is released (after its run, when
 *    discarded) or its call is skipped at shutdown (unmapped by the driver
 *    thread, pure C); the entry's meta is the payload, not owned by it;
 *  - a payload owned by a user object (a Python destroy callable given to
 *    cuUserObjectCreate, or a captured host function) is mapped as
 *    CUBIND_REG_USER_OBJECT, keyed by the CUuserObject, by its creator
 *    (rt_cb_user_object) before the handle reaches Python. The entry owns
 *    the payload (meta). The destroy trampoline (driver thread, pure C)
 *    unmaps it and drops the payload's reference to it; the entry's meta
 *    destructor then pushes the payload onto its interpreter's deferred
 *    queue, which calls destroy(ptr) (destroy payloads) and drops the
 *    Python references on a Python thread, exactly once.
 *  - a host node's payload is mapped as CUBIND_REG_NODE_CALLBACK, keyed by
 *    an id (a process-wide counter, never reused), from rt_cb_node_new
 *    until its capsule dies; the entry owns the payload (meta, freed as a
 *    user object's). The node trampoline looks the id up and holds the
 *    entry through the call; an id no longer mapped is a skipped call.
 * An entry that cannot be made (out of memory: malloc, not CPython's
 * allocators) makes rt_cb_new fail with MemoryError; for a user object it
 * only leaves the payload unregistered (its destructor still runs once).
 *
 * Shutdown, per interpreter: the runner is stopped by a hook registered with
 * threading._register_atexit, which runs when the interpreter starts to
 * shut down (before threads are joined and before atexit callbacks): the
 * callable in progress finishes, calls still queued and every later call
 * are skipped (the driver's thread returns at once, never waits), counted.
 * The wait for the callable in progress is bounded: CUBIND_EXIT_TIMEOUT
 * seconds (default 5) for all interpreters together, ended at once by
 * SIGINT; a callable still running then is named in one line on stderr and
 * left running with its state (nothing is freed, its driver thread keeps
 * waiting), and no later step waits for it again. The main interpreter's
 * runner is a daemon thread (3.13+), so CPython's own join of non-daemon
 * threads at exit does not wait for it either.
 * rt_cb_atexit() (registered with atexit by cubind._runtime in every
 * interpreter) then, in the main interpreter, closes the pending-call
 * wake-up (nothing calls Py_AddPendingCall after it), drains the queue and
 * closes it; what arrives later is leaked on purpose and counted.
 */
#ifndef CUBIND_RT_CALLBACKS_H
#define CUBIND_RT_CALLBACKS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cubind_rt.h"
#include "rt_registry.h"

/* Creates a payload (strong references to callable, data and the optional
 * converters for the C arguments of stream callbacks), starting this
 * interpreter's runner first if needed. NULL + exception (MemoryError;
 * RuntimeError once the interpreter is shutting down, or where it may not
 * start threads). */
void *rt_cb_new(int kind, PyObject *callable, PyObject *data, PyObject *stream_type,
                PyObject *result_type);
/* Frees a payload the driver never received (caller holds the GIL). */
void rt_cb_discard(void *payload);
/* The C function to hand the driver for a payload of this kind. */
void *rt_cb_trampoline(int kind);
/* Before launching a host function on `stream`: if the stream is being
 * captured, ties the payload's lifetime to the capture graph and returns 1
 * (the payload is no longer the caller's); 0 when not captured; -1 with an
 * exception on failure (the payload is the caller's: a user object made for
 * it whose retain by the graph failed is leaked and never calls back). */
int rt_cb_host_attach(void *stream, void *payload);
/* After the driver created user object `object` owning `payload` (and
 * before anyone else can know the handle): maps it as
 * CUBIND_REG_USER_OBJECT (above). Pure C; never fails. A stale entry of a
 * user object whose destructor has not run yet, at the same value, is
 * replaced (it still releases its own payload). */
void rt_cb_user_object(void *payload, uintptr_t object);
/* A host node's Python callable (the capsule's cb_node; cubind_rt.h):
 * a capsule owning one reference to a CUBIND_REG_NODE_CALLBACK entry,
 * keyed by a fresh id, whose meta is a multi-shot payload. The node
 * trampoline (rt_cb_trampoline(CUBIND_CB_NODE)) looks the id up on the
 * driver's thread and holds the entry while the runner calls the callable,
 * so the payload lives through every call in progress; a call whose id is
 * no longer mapped (every graph, executable graph and struct holding the
 * capsule is gone) is skipped and counted, never run on freed memory. When
 * the capsule dies its entry is unmapped; the entry's death hands the
 * payload to the deferred queue, which drops its Python references on a
 * thread of its interpreter. New reference, or NULL with an exception. */
PyObject *rt_cb_node_new(PyObject *callable, PyObject *data, uintptr_t c_data);
/* After a graph took a node payload's capsule (the registry-retain rules):
 * a CUDA user object holding the payload's entry (one more holder: the id
 * stays mapped while it lives), moved into `graph`. The driver keeps it
 * for every executable graph of the graph and their launches in flight,
 * and calls its destructor (pure C) after. 0, or -1 with RuntimeError. */
int rt_cb_node_retain(PyObject *capsule, uintptr_t graph);
/* Runs the queued work of the current interpreter (caller attached). */
void rt_cb_drain(void);
/* The current interpreter's flag (caller attached): non-zero while work
 * waits on its queue, so a relaxed load decides whether to call
 * rt_cb_drain. Each interpreter has its own: a drain in one never hides
 * another's work. Made on first use and never freed; NULL with MemoryError. */
_Atomic int *rt_cb_pending_flag(void);
/* The main interpreter's import step: registers `stop`
 * (_stop_callback_runner) with threading's shutdown hooks. Until it has
 * run, subinterpreters refuse Python callables. 0, or -1 + exception. */
int rt_cb_main_init(PyObject *stop);
/* The runner's body (cubind._runtime._callback_runner, the target of the
 * thread rt_cb_new starts); returns once the runner is stopped. */
void rt_cb_runner(void);
/* The threading shutdown hook (_stop_callback_runner): a subinterpreter
 * stops and joins its own runner; the main interpreter stops the runners
 * of every interpreter (and no runner starts after that). Idempotent;
 * never raises. */
void rt_cb_runner_stop(void);
/* The atexit step described above, for the current interpreter. */
void rt_cb_atexit(void);
/* fork() (pthread_atfork, registered once by cubind._runtime). prepare
 * takes the interpreters' list lock and every interpreter's lock, so the
 * child inherits none held by a thread it does not have; parent releases
 * them. child also forgets the runners: their threads are not in the child
 * (phase back to none: a later Python callback starts a new one; an
 * interpreter that closed stays closed; forked by a callable on the runner,
 * the child's one thread is that runner, which closes: it ends when the
 * callable returns), drops the parent's requests
 * (their driver threads are not here either), and the queued deferred
 * work (the parent's: it runs there; counted as leaked here); so the
 * child's shutdown waits for no runner and runs no destructor twice. */
void rt_cb_fork_prepare(void);
void rt_cb_fork_parent(void);
void rt_cb_fork_child(void);
/* A strong reference to drop on a thread of the interpreter it was taken
 * in (the registry's Python keep-alives, rt_handles.c). new: attached;
 * NULL when out of memory (no exception). drop: any thread, pure C but for
 * the DECREF it does at once on a thread attached to that interpreter;
 * elsewhere (a driver thread, a detached thread, another interpreter's) it
 * queues the DECREF on that interpreter's deferred queue, drained like a
 * destructor's; once that queue is closed the reference is leaked. */
typedef struct rt_cb_ref rt_cb_ref;
rt_cb_ref *rt_cb_ref_new(PyObject *obj);
void rt_cb_ref_drop(rt_cb_ref *r);
/* A Python keep-alive on registry entry e (the capsule's reg_keep_object):
 * a reference to obj, dropped on obj's interpreter when the entry is
 * destroyed (rt_cb_ref_drop). 0, or -ENOMEM / the registry's error. */
int rt_cb_keep_object(rt_registry_entry *e, PyObject *obj);
/* The main interpreter's import step, once its atexit step is registered:
 * opens the pending-call wake-up of its queue (rt_callbacks.c). */
void rt_cb_pending_open(void);
/* The first part of the main interpreter's atexit step: closes it for good
 * (pc_mu; rt_callbacks.c). Attached; also a test hook. */
void rt_cb_pending_close(void);
/* Pending calls scheduled so far (tests). */
long long rt_cb_pending_calls(void);
/* Counters for tests, over all interpreters: payloads alive, calls skipped
 * at shutdown, queue items leaked after close. */
void rt_cb_counts(long long out[3]);

#endif
