/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_sync_callback.c — the thread-local slot and the trampolines of
 * bind_sync_callback.h.
 */
#include "bind_sync_callback.h"

#include "cubind_compat.h"

#include <stdint.h>

/* The context of the driver call this thread is in, NULL outside one. Only
 * this thread reads or writes it. The initial-exec model puts it in the
 * static TLS block glibc reserves for dlopen()ed objects (8 bytes of it),
 * so reading it is one %fs-relative load and the extension needs no
 * __tls_get_addr, hence no ld-linux-x86-64.so.2 beside glibc's libc, libdl
 * and libpthread (tests/wheel checks what the extensions need). */
static _Thread_local cbs_sync_call *current_call __attribute__((tls_model("initial-exec")));

void cbs_sync_enter(cbs_sync_call *call)
{
    call->tstate = PyThreadState_Get();
    call->failed = 0;
    call->prev = current_call;
    current_call = call;
}

int cbs_sync_leave(cbs_sync_call *call)
{
    current_call = call->prev;
    return call->failed ? -1 : 0;
}

/* The context a trampoline may run Python for: this thread's, when it has
 * not failed yet and its thread state is still the one attached (a driver
 * calling the trampoline after the call detached would find none). */
static cbs_sync_call *usable_call(void)
{
    cbs_sync_call *call = current_call;
    if (!call || call->failed || cbs_attached_tstate() != call->tstate)
        return NULL;
    return call;
}

/* r (a new reference, released here) as a byte count: 0 .. SIZE_MAX, or an
 * exception naming the call's function and parameter. */
static int byte_count(cbs_sync_call *call, PyObject *r, int blockSize, size_t *out)
{
    PyObject *i = PyNumber_Index(r);
    if (!i) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): '%s' must return an int (bytes of dynamic shared memory), not %.100s",
                     call->func, call->param, Py_TYPE(r)->tp_name);
        Py_DECREF(r);
        return -1;
    }
    Py_DECREF(r);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        Py_DECREF(i);
        return -1;
    }
    if (overflow < 0 || (!overflow && v < 0)) {
        PyErr_Format(PyExc_ValueError, "%s(): '%s' returned %R for block size %d: a byte count cannot be negative",
                     call->func, call->param, i, blockSize);
        Py_DECREF(i);
        return -1;
    }
    if (overflow > 0) {
        size_t big = PyLong_AsSize_t(i);
        if (big == (size_t)-1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "%s(): '%s' returned %R for block size %d, more than size_t holds",
                         call->func, call->param, i, blockSize);
            Py_DECREF(i);
            return -1;
        }
        *out = big;
    } else {
        *out = (size_t)v;
    }
    Py_DECREF(i);
    return 0;
}

size_t CUDA_CB cbs_sync_b2d_trampoline(int blockSize)
{
    cbs_sync_call *call = usable_call();
    if (!call)
        return 0;
    PyObject *r = PyObject_CallFunction(call->callable, "i", blockSize);
    size_t v = 0;
    if (!r || byte_count(call, r, blockSize, &v) < 0) {
        call->failed = 1; /* the exception stays set until the binding raises it */
        return 0;
    }
    return v;
}
