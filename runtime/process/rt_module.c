/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_module.c — the `cubind._runtime` extension module.
 *
 * The one home, per process, of the shared runtime: it links rt_loader.c,
 * rt_callbacks.c and the handle registry (rt_handles.c) and hands them to
 * the generated modules through the capsule `_C_API`
 * (cubind_rt.h), so no generated module carries a second copy of the
 * loader's process-global state (free-threading rule 3).
 *
 * Per interpreter (module state, multi-phase init, PEP 489), it owns the
 * exception classes every generated module raises:
 *
 *   cubind.CUDAError(RuntimeError)              a driver call returned an
 *       error CUresult; CUDAError(result, name, message, func=None),
 *       attributes `result` (the CUresult member, or an int), `name`,
 *       `message`, `func` (the function's name, or None);
 *       str(e) == "func: NAME (value): message" ("NAME (value): message"
 *       without func); e.args == (result, name, message[, func]), so
 *       copy/pickle rebuild it through the constructor.
 *   cubind.DriverNotFoundError(RuntimeError)    the driver could not be
 *       loaded; raised by calls, never by import (import succeeds without a
 *       driver), hence a RuntimeError rather than an ImportError.
 *   cubind.FunctionNotFoundError(RuntimeError)  the loaded driver lacks an
 *       entry point (it is older than the header the bindings came from).
 *
 * The classes are ordinary (heap) Python classes made with
 * PyErr_NewExceptionWithDoc, their methods C functions bound through
 * PyInstanceMethod: instance layout, GC, dict, pickling and subclassing all
 * stay BaseException's. Their __module__ is "cubind" (the package re-exports
 * them), which pickle relies on.
 *
 * Free-threading: the module keeps no mutable C globals but the fork
 * handlers' registration, written once under pthread_once (the capsule
 * table is `static const`; the loader's state is once-initialised in
 * rt_loader.c), and module state is written only by exec and cleared only
 * by GC/teardown, so it declares Py_MOD_GIL_NOT_USED and
 * per-interpreter-GIL support.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>

#include "glibc_pins.h"

#include "cubind_rt.h"
#include "rt_alloc.h"
#include "rt_callbacks.h"
#include "rt_env.h"
#include "rt_handles.h"
#include "rt_loader.h"

/* Strong references, set by exec, dropped by m_clear/m_free. */
typedef struct {
    PyObject *cuda_error;
    PyObject *driver_not_found_error;
    PyObject *function_not_found_error;
} rt_module_state;

static inline rt_module_state *rt_get_state(PyObject *m)
{
    return (rt_module_state *)PyModule_GetState(m);
}

#ifdef CUBIND_FAULT_INJECTION
/* The process's allocation fault state (rt_alloc.h): disarmed at start. */
static rt_alloc_faults rt_faults = {.start = -1};
rt_alloc_faults *rt_alloc_state = &rt_faults;
#endif

/* The capsule's table: one immutable object for the process, shared by all
 * interpreters (it holds no Python objects). */
static const cubind_rt_api rt_api = {
    CUBIND_RT_SIGNATURE,
    sizeof(cubind_rt_api),
    cubind_rt_load,
    cubind_rt_lookup,
    cubind_rt_driver_path,
    rt_cb_new,
    rt_cb_discard,
    rt_cb_trampoline,
    rt_cb_host_attach,
    rt_cb_drain,
    rt_cb_pending_flag,
    rt_h_register,
    rt_h_lookup,
    rt_h_unregister,
    rt_h_unregister_entry,
    rt_h_unregister_kind,
    rt_registry_entry_release,
    rt_registry_meta,
    rt_registry_meta_publish,
    rt_registry_keep_alive,
    rt_registry_add_dependency,
    rt_cb_keep_object,
    rt_h_kernels_unloaded,
    &rt_h_kernel_epoch,
    rt_cb_user_object,
    rt_cb_node_new,
    rt_cb_node_retain,
#ifdef CUBIND_FAULT_INJECTION
    &rt_faults,
#endif
};

/* ---- CUDAError methods (bound as instance methods; args[0] is self) ---- */

static PyObject *rt_cuda_error_init(PyObject *unused, PyObject *args,
                                    PyObject *kwds)
{
    static char *kwlist[] = {"self", "result", "name", "message", "func", NULL};
    PyObject *self, *result, *name, *message, *func = Py_None, *t;
    int rc;

    (void)unused;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOUU|O:CUDAError", kwlist,
                                     &self, &result, &name, &message, &func))
        return NULL;
    if (func != Py_None && !PyUnicode_Check(func)) {
        PyErr_Format(PyExc_TypeError, "CUDAError() argument 'func' must be str or None, not %.100s",
                     Py_TYPE(func)->tp_name);
        return NULL;
    }
    /* args holds exactly the constructor's arguments, keywords included,
     * so BaseException.__reduce__ (type, args, __dict__) round-trips. */
    t = func == Py_None ? PyTuple_Pack(3, result, name, message)
                        : PyTuple_Pack(4, result, name, message, func);
    if (t == NULL)
        return NULL;
    rc = PyObject_SetAttrString(self, "args", t);
    Py_DECREF(t);
    if (rc < 0 || PyObject_SetAttrString(self, "result", result) < 0 ||
        PyObject_SetAttrString(self, "name", name) < 0 ||
        PyObject_SetAttrString(self, "message", message) < 0 ||
        PyObject_SetAttrString(self, "func", func) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* "func: NAME (value): message" ("NAME (value): message" when func is
 * None); value is int(result) when result is an int (or an IntEnum member),
 * else repr(result). An instance whose __init__ never ran (made by __new__)
 * falls back to BaseException.__str__. */
static PyObject *rt_cuda_error_str(PyObject *unused, PyObject *self)
{
    PyObject *result = NULL, *name = NULL, *message = NULL, *value = NULL, *func = NULL;
    PyObject *s = NULL;

    (void)unused;
    result = PyObject_GetAttrString(self, "result");
    if (result != NULL)
        name = PyObject_GetAttrString(self, "name");
    if (name != NULL)
        message = PyObject_GetAttrString(self, "message");
    if (message != NULL)
        func = PyObject_GetAttrString(self, "func");
    if (func == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            s = ((PyTypeObject *)PyExc_RuntimeError)->tp_str(self);
        }
        goto done;
    }
    value = PyLong_Check(result) ? PyNumber_Long(result)
                                 : PyObject_Repr(result);
    if (value != NULL)
        s = func == Py_None ? PyUnicode_FromFormat("%S (%S): %S", name, value, message)
                            : PyUnicode_FromFormat("%S: %S (%S): %S", func, name, value, message);
done:
    Py_XDECREF(func);
    Py_XDECREF(value);
    Py_XDECREF(message);
    Py_XDECREF(name);
    Py_XDECREF(result);
    return s;
}

static PyMethodDef rt_cuda_error_init_def = {
    "__init__", (PyCFunction)(void (*)(void))rt_cuda_error_init,
    METH_VARARGS | METH_KEYWORDS,
    PyDoc_STR("CUDAError(result, name, message, func=None)"),
};

static PyMethodDef rt_cuda_error_str_def = {
    "__str__", rt_cuda_error_str, METH_O,
    PyDoc_STR("Return 'func: NAME (value): message'."),
};

/* dict[name] = instancemethod(C function named by def). */
static int rt_add_method(PyObject *dict, PyMethodDef *def, PyObject *modname)
{
    PyObject *f, *im;
    int rc;

    f = PyCFunction_NewEx(def, NULL, modname);
    if (f == NULL)
        return -1;
    im = PyInstanceMethod_New(f);
    Py_DECREF(f);
    if (im == NULL)
        return -1;
    rc = PyDict_SetItemString(dict, def->ml_name, im);
    Py_DECREF(im);
    return rc;
}

PyDoc_STRVAR(rt_cuda_error_doc,
"CUDAError(result, name, message, func=None)\n"
"\n"
"A CUDA driver call returned an error. ``result`` is the CUresult member (or\n"
"the int when the value is unknown to the bindings), ``name`` its name\n"
"(e.g. 'CUDA_ERROR_INVALID_VALUE'), ``message`` the driver's description,\n"
"``func`` the function that failed ('cuMemAlloc'; None when not given).\n"
"str(e) is 'func: NAME (value): message'.");

static PyObject *rt_new_cuda_error(void)
{
    PyObject *dict, *modname, *type = NULL;

    dict = PyDict_New();
    modname = PyUnicode_FromString("cubind");
    if (dict != NULL && modname != NULL &&
        rt_add_method(dict, &rt_cuda_error_init_def, modname) == 0 &&
        rt_add_method(dict, &rt_cuda_error_str_def, modname) == 0)
        type = PyErr_NewExceptionWithDoc("cubind.CUDAError", rt_cuda_error_doc,
                                         PyExc_RuntimeError, dict);
    Py_XDECREF(modname);
    Py_XDECREF(dict);
    return type;
}

/* ---- module functions ---- */

PyDoc_STRVAR(rt_driver_status_doc,
"_driver_status() -> (loaded: bool, path_or_reason: str)\n"
"\n"
"Loads the CUDA driver if no call has yet (once per process; later calls\n"
"report the first outcome). On success, the path of the loaded library;\n"
"on failure, what was tried and why each attempt failed.");

static PyObject *rt_driver_status(PyObject *m, PyObject *unused)
{
    const char *why = NULL, *text;
    PyObject *s, *res;
    int rc;

    (void)m;
    (void)unused;
    /* dlopen may take long (or take the loader lock): never hold the GIL
     * while waiting on it. load() does not touch Python. */
    Py_BEGIN_ALLOW_THREADS
    rc = cubind_rt_load(&why);
    Py_END_ALLOW_THREADS
    text = rc == 0 ? cubind_rt_driver_path() : why;
    /* paths and dlerror() text are file-system bytes, not necessarily UTF-8 */
    s = PyUnicode_DecodeFSDefault(text != NULL ? text : "");
    if (s == NULL)
        return NULL;
    res = PyTuple_Pack(2, rc == 0 ? Py_True : Py_False, s);
    Py_DECREF(s);
    return res;
}

static PyObject *rt_callback_counts(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    long long c[3];
    rt_cb_counts(c);
    return Py_BuildValue("{sLsLsLsL}", "alive", c[0], "skipped", c[1], "leaked", c[2],
                         "pending_calls", rt_cb_pending_calls());
}

static PyObject *rt_registry_count_py(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromSize_t(rt_h_count());
}

/* The registry's kinds by name (cubind_rt.h), for _registry_counts(). */
static const struct {
    const char *name;
    int kind;
} rt_reg_kinds[] = {
    {"kernel_layout", CUBIND_REG_KERNEL_LAYOUT},
    {"kernel_layout_kern", CUBIND_REG_KERNEL_LAYOUT_KERN},
    {"graph", CUBIND_REG_GRAPH},
    {"graph_exec", CUBIND_REG_GRAPH_EXEC},
    {"graph_node", CUBIND_REG_GRAPH_NODE},
    {"user_object", CUBIND_REG_USER_OBJECT},
    {"callback", CUBIND_REG_CALLBACK},
    {"code_module", CUBIND_REG_CODE_MODULE},
    {"code_library", CUBIND_REG_CODE_LIBRARY},
    {"code_link", CUBIND_REG_CODE_LINK},
    {"code_image", CUBIND_REG_CODE_IMAGE},
    {"nvrtc_program", CUBIND_REG_NVRTC_PROGRAM},
    {"callback_handle", CUBIND_REG_CALLBACK_HANDLE},
    {"node_callback", CUBIND_REG_NODE_CALLBACK},
};

static PyObject *rt_registry_counts_py(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < sizeof rt_reg_kinds / sizeof rt_reg_kinds[0]; i++) {
        PyObject *n = PyLong_FromSize_t(rt_h_count_kind(rt_reg_kinds[i].kind));
        if (!n || PyDict_SetItemString(d, rt_reg_kinds[i].name, n) < 0)
            Py_CLEAR(d);
        Py_XDECREF(n);
    }
    return d;
}

static PyObject *rt_drain_now(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    rt_cb_drain();
    Py_RETURN_NONE;
}

/* _drop_on_new_thread(factory) (tests): keeps obj = factory() alive on a
 * fresh registry entry (reg_keep_object) as its only reference, unmaps the
 * entry, and drops the entry's last reference on a new pthread that has no
 * thread state, the way a driver thread would; returns once that thread is
 * joined. */
enum { RT_TEST_KIND = 1000 }; /* a kind no generated module uses */

static void *rt_release_entry(void *e)
{
    rt_registry_entry_release(e);
    return NULL;
}

static PyObject *rt_drop_on_new_thread(PyObject *m, PyObject *factory)
{
    (void)m;
    PyObject *obj = PyObject_CallNoArgs(factory);
    if (!obj)
        return NULL;
    rt_registry_entry *e = NULL;
    int rc = rt_h_register(RT_TEST_KIND, (uintptr_t)obj, NULL, NULL, NULL, &e);
    if (rc == 0 && (rc = rt_cb_keep_object(e, obj)) == 0)
        rc = rt_h_unregister_entry(e);
    Py_DECREF(obj); /* kept by the entry alone, or freed */
    if (rc != 0) {
        if (e) {
            rt_h_unregister_entry(e);
            rt_registry_entry_release(e);
        }
        return PyErr_Format(PyExc_RuntimeError, "registry error %d", rc);
    }
    pthread_t t;
    Py_BEGIN_ALLOW_THREADS
    rc = pthread_create(&t, NULL, rt_release_entry, e);
    if (rc == 0)
        pthread_join(t, NULL);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        rt_registry_entry_release(e);
        return PyErr_Format(PyExc_OSError, "pthread_create: %d", rc);
    }
    Py_RETURN_NONE;
}

static PyObject *rt_close_pending_calls(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    rt_cb_pending_close();
    Py_RETURN_NONE;
}

static PyObject *rt_atexit(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    rt_cb_atexit();
    Py_RETURN_NONE;
}

static PyObject *rt_callback_runner(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    rt_cb_runner();
    Py_RETURN_NONE;
}

static PyObject *rt_stop_callback_runner(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    rt_cb_runner_stop();
    Py_RETURN_NONE;
}

#ifdef CUBIND_FAULT_INJECTION
/* _fail_allocations(start, stop=0): test builds only (rt_alloc.h). */
static PyObject *rt_fail_allocations(PyObject *m, PyObject *args)
{
    (void)m;
    long long start, stop = 0;
    if (!PyArg_ParseTuple(args, "L|L:_fail_allocations", &start, &stop))
        return NULL;
    if (stop < 0 || (stop != 0 && start >= 0 && stop <= start)) {
        PyErr_SetString(PyExc_ValueError, "_fail_allocations: stop must be 0 or past start");
        return NULL;
    }
    rt_alloc_arm(&rt_faults, start, stop);
    Py_RETURN_NONE;
}

static PyObject *rt_alloc_counts(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return Py_BuildValue("{sLsLsL}", "live", atomic_load(&rt_faults.live), "failed",
                         atomic_load(&rt_faults.failed), "counted", atomic_load(&rt_faults.next));
}
#endif

static PyMethodDef rt_methods[] = {
#ifdef CUBIND_FAULT_INJECTION
    {"_fail_allocations", rt_fail_allocations, METH_VARARGS,
     "_fail_allocations(start, stop=0): the runtime's C allocations numbered [start, stop) "
     "from now fail (stop 0: no end; start < 0: none). Test builds only."},
    {"_alloc_counts", rt_alloc_counts, METH_NOARGS,
     "The runtime's C blocks alive, allocations failed and counted since the last "
     "_fail_allocations. Test builds only."},
#endif
    {"_driver_status", rt_driver_status, METH_NOARGS, rt_driver_status_doc},
    {"_callback_counts", rt_callback_counts, METH_NOARGS,
     "Payloads alive, callbacks skipped at shutdown, deferred items leaked after close."},
    {"_registry_count", rt_registry_count_py, METH_NOARGS,
     "Entries mapped in the shared handle registry, every kind (tests)."},
    {"_registry_counts", rt_registry_counts_py, METH_NOARGS,
     "Entries mapped in the shared handle registry, per kind: {name: count} (tests)."},
    {"_drain", rt_drain_now, METH_NOARGS, "Runs deferred callback work now (tests)."},
    {"_drop_on_new_thread", rt_drop_on_new_thread, METH_O,
     "Keeps obj on a registry entry whose last reference a new thread without a thread "
     "state drops (tests)."},
    {"_close_pending_calls", rt_close_pending_calls, METH_NOARGS,
     "The first part of the main interpreter's atexit step: no pending call is scheduled "
     "from then on (tests)."},
    {"_atexit", rt_atexit, METH_NOARGS,
     "The shutdown step for callbacks; registered with atexit, not for direct use."},
    {"_callback_runner", rt_callback_runner, METH_NOARGS,
     "The body of the thread that runs Python callbacks; not for direct use."},
    {"_stop_callback_runner", rt_stop_callback_runner, METH_NOARGS,
     "Stops and joins the callback runner; registered with threading, not for direct use."},
    {NULL, NULL, 0, NULL},
};

/* ---- module lifecycle ---- */

static int rt_add_type(PyObject *m, const char *attr, PyObject **slot,
                       PyObject *type)
{
    if (type == NULL)
        return -1;
    *slot = type; /* the state owns this reference from now on */
    return PyModule_AddObjectRef(m, attr, type);
}

/* fork(): no lock of the runtime is inherited held by a thread the child
 * does not have, and the child forgets the callback runners (a forked
 * child of a process that ran Python callbacks would otherwise wait for its
 * runner forever at exit). Registered once per process. Order: the
 * registry's locks, then the callbacks' (each set is of leaf locks:
 * neither is taken while the other is held). */
static void rt_fork_prepare(void)
{
    rt_h_fork_prepare();
    rt_cb_fork_prepare();
}

static void rt_fork_parent(void)
{
    rt_cb_fork_parent();
    rt_h_fork_release();
}

static void rt_fork_child(void)
{
    rt_cb_fork_child();
    rt_h_fork_release();
}

static pthread_once_t rt_fork_once = PTHREAD_ONCE_INIT;
static int rt_fork_registered;

static void rt_fork_register(void)
{
    rt_fork_registered = pthread_atfork(rt_fork_prepare, rt_fork_parent, rt_fork_child) == 0;
}

static int rt_exec(PyObject *m)
{
    rt_module_state *st = rt_get_state(m);
    PyObject *cap;
    int rc;

    if (rt_add_type(m, "CUDAError", &st->cuda_error, rt_new_cuda_error()) < 0)
        return -1;
    if (rt_add_type(m, "DriverNotFoundError", &st->driver_not_found_error,
                    PyErr_NewExceptionWithDoc(
                        "cubind.DriverNotFoundError",
                        "The CUDA driver (libcuda.so.1, or $CUBIND_LIBCUDA) "
                        "could not be loaded; the message says what was "
                        "tried.",
                        PyExc_RuntimeError, NULL)) < 0)
        return -1;
    if (rt_add_type(m, "FunctionNotFoundError", &st->function_not_found_error,
                    PyErr_NewExceptionWithDoc(
                        "cubind.FunctionNotFoundError",
                        "The loaded CUDA driver has no entry point for this "
                        "function in the ABI version the bindings were "
                        "generated for (the driver is older than the header).",
                        PyExc_RuntimeError, NULL)) < 0)
        return -1;

    /* The settings are checked at import: junk is reported now, once per
     * process, not at exit when it would first matter. */
    rt_env_check();
    pthread_once(&rt_fork_once, rt_fork_register);
    if (!rt_fork_registered) {
        PyErr_SetString(PyExc_RuntimeError, "cubind: pthread_atfork failed");
        return -1;
    }
    /* The main interpreter's shutdown stops the callback runners of every
     * interpreter, before CPython ends leftover subinterpreters. */
    if (PyInterpreterState_Get() == PyInterpreterState_Main()) {
        PyObject *stop = PyObject_GetAttrString(m, "_stop_callback_runner");
        rc = stop ? rt_cb_main_init(stop) : -1;
        Py_XDECREF(stop);
        if (rc < 0)
            return -1;
    }
    /* Deferred callback work of this interpreter is drained, then refused,
     * before it finalizes (registered at import: atexit runs it after the
     * handlers registered later). */
    {
        PyObject *atexit = PyImport_ImportModule("atexit");
        PyObject *hook = PyObject_GetAttrString(m, "_atexit");
        PyObject *r = atexit && hook ? PyObject_CallMethod(atexit, "register", "O", hook) : NULL;
        Py_XDECREF(atexit);
        Py_XDECREF(hook);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    /* Only now may the main interpreter's queue schedule pending calls: the
     * atexit step that stops them is registered. */
    if (PyInterpreterState_Get() == PyInterpreterState_Main())
        rt_cb_pending_open();

    cap = PyCapsule_New((void *)&rt_api, CUBIND_RT_CAPSULE_NAME, NULL);
    if (cap == NULL)
        return -1;
    rc = PyModule_AddObjectRef(m, "_C_API", cap);
    Py_DECREF(cap);
    if (rc < 0)
        return -1;
    return PyModule_AddStringConstant(m, "_C_API_SIGNATURE",
                                      CUBIND_RT_SIGNATURE);
}

static int rt_traverse(PyObject *m, visitproc visit, void *arg)
{
    rt_module_state *st = rt_get_state(m);

    if (st == NULL)
        return 0;
    Py_VISIT(st->cuda_error);
    Py_VISIT(st->driver_not_found_error);
    Py_VISIT(st->function_not_found_error);
    return 0;
}

static int rt_clear(PyObject *m)
{
    rt_module_state *st = rt_get_state(m);

    if (st == NULL)
        return 0;
    Py_CLEAR(st->cuda_error);
    Py_CLEAR(st->driver_not_found_error);
    Py_CLEAR(st->function_not_found_error);
    return 0;
}

static void rt_module_free(void *m)
{
    (void)rt_clear((PyObject *)m);
}

static PyModuleDef_Slot rt_slots[] = {
    {Py_mod_exec, (void *)rt_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

PyDoc_STRVAR(rt_module_doc,
"cubind's shared runtime: the process-wide CUDA driver loader (exported to\n"
"the generated modules as the capsule _C_API) and the exception classes.");

static struct PyModuleDef rt_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cubind._runtime",
    .m_doc = rt_module_doc,
    .m_size = sizeof(rt_module_state),
    .m_methods = rt_methods,
    .m_slots = rt_slots,
    .m_traverse = rt_traverse,
    .m_clear = rt_clear,
    .m_free = rt_module_free,
};

PyMODINIT_FUNC PyInit__runtime(void)
{
    return PyModuleDef_Init(&rt_module);
}
