/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_sync_callback.h — Python callables as callbacks that the driver
 * calls synchronously: on the calling thread, during the driver call, and
 * never after it returns, with no user data (the sync-callback rule of
 * gen/rules/rules.h: cuOccupancyMaxPotentialBlockSize's CUoccupancyB2DSize).
 *
 * Without user data the trampoline cannot be told which callable to run;
 * it finds it through a thread-local slot that points at a per-call
 * context (cbs_sync_call) on the binding's stack. No mutable global: the
 * slot is _Thread_local, so concurrent calls on several threads each see
 * their own context, and a nested call (the callable calling the binding
 * again) pushes its context and restores the previous one when it leaves.
 *
 * Thread state: a call given a Python callable keeps its thread state
 * attached for the whole driver call (the generated code does not detach
 * then). The trampoline then runs Python without attaching: it cannot block
 * on the GIL while the driver's frames are on the stack (the driver may hold
 * its own locks around the callback, and another thread holding the GIL
 * could be waiting for them), nor be stopped by interpreter finalization
 * (PyEval_RestoreThread exits a non-main thread during finalization, which
 * would unwind through the driver). The cost: other threads wait for the
 * GIL during the call, which computes without blocking. A call given a C
 * address detaches as usual.
 *
 * Errors: the first exception the callable raises, or a TypeError /
 * ValueError / OverflowError for a result that is not an int in
 * 0 .. SIZE_MAX, stays set on the attached thread state; the trampoline
 * returns 0 then and for every later call in the same driver call, without
 * running Python again; cbs_sync_leave reports it (-1) and the binding
 * raises it after the driver returns. A trampoline called on a thread with
 * no context in its slot (a driver calling it from another thread) returns
 * 0 without touching Python.
 */
#ifndef CUBIND_BIND_SYNC_CALLBACK_H
#define CUBIND_BIND_SYNC_CALLBACK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda.h>
#include <stddef.h>

/* One driver call's context. Invariants while entered: it is the value of
 * the calling thread's slot; `tstate` is that thread's, attached; `failed`
 * implies an exception set on tstate. */
typedef struct cbs_sync_call {
    PyObject *callable;          /* borrowed from the call's arguments */
    const char *func, *param;    /* for messages: the function, the parameter */
    PyThreadState *tstate;       /* set by cbs_sync_enter */
    struct cbs_sync_call *prev;  /* the slot's value before (a nested call) */
    int failed;
} cbs_sync_call;

/* Points the calling thread's slot at call (thread state attached). */
void cbs_sync_enter(cbs_sync_call *call);
/* Restores the slot; 0, or -1 with the callable's exception set. */
int cbs_sync_leave(cbs_sync_call *call);

/* The trampoline of CUoccupancyB2DSize (size_t (int blockSize)): calls
 * callable(blockSize) and returns its int result, or 0 (see above). */
size_t CUDA_CB cbs_sync_b2d_trampoline(int blockSize);

#endif
