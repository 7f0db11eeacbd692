/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_c_callback.h — a C function given to a callback parameter as a
 * Python object that owns the function's code (a ctypes function pointer:
 * its thunk is freed with it), kept alive for as long as the driver may
 * call it.
 *
 * An int address is the caller's to keep valid, as in C, and is handed to
 * the driver as it is. A ctypes function pointer is not: the caller may
 * drop it right after the call (cuLaunchHostFunc(s, CFUNCTYPE(None,
 * c_void_p)(f), None)), and the driver would then call freed memory. So it
 * is wrapped in a Python callable that calls the C function with the C
 * arguments, and goes the way of a Python callable: a payload of the
 * process runtime (rt_callbacks.h), released after the one call of a host
 * function or stream callback, with the capture graph of a captured host
 * function, after a user object's destructor ran. The wrapper holds the
 * function object and the callback data's buffer (a bytes, bytearray ...:
 * held exported, so it neither moves nor goes), both released with it.
 *
 * The C function then runs on the interpreter's callback runner (a Python
 * thread), the thread state detached during the call; the driver's thread
 * waits for it there as for a Python callable, so stream order is kept.
 */
#ifndef CUBIND_BIND_C_CALLBACK_H
#define CUBIND_BIND_C_CALLBACK_H

#include "bind_support.h" /* Python.h first */

/* Whether o, a C function pointer argument that cbs_arg_funcptr took, is an
 * object owning the function's code (a ctypes function pointer), not an
 * int address, None, or a handle object of class `own` (or another
 * module's class of that name) holding an address. */
int cbs_funcptr_owned(PyObject *o, PyTypeObject *own);

/* The Python callable for rt_cb_new (kind: CUBIND_CB_HOST, _STREAM or
 * _DESTROY) that calls C function fn, owned by fnobj, with the callback
 * data `data` converted as the C path converts it (None, an int address
 * or a buffer: TypeError naming func's parameter `param`). New reference,
 * or NULL with an exception. */
PyObject *cbs_c_callback_new(int kind, PyObject *fnobj, void *fn, PyObject *data,
                             const char *func, const char *param);

#endif
