/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thin_ext.c — `_bench_thin`: the thinnest binding of the benchmark's
 * driver calls, written by hand. What a CPython extension that converts
 * nothing but ints reaches with the real driver behind each call.
 *
 * The floor (floor_ext.c) models the least a binding can cost as C's time
 * plus do-nothing calls timed apart from it. That leaves out one cost no
 * binding escapes: the interpreter's work between two driver calls evicts
 * some of what the driver keeps in the caches, so the same driver call is
 * slower in a Python loop than in C's tight one. This module measures it:
 * its functions take the driver's own arguments as Python ints (handles and
 * addresses too), make the call, and return the output as an int (None for
 * none), raising RuntimeError on a failure; no handle objects, no enums, no
 * status tuples, no parameter packing (a launch takes an address of a
 * prepared void*[], as C's loop does).
 *
 *   bind(name, address, detach)  sets entry point `name` (as cuda.h spells
 *                                it) to the function at `address`, the one
 *                                c_bench's library resolved
 *                                (cb_lib_proc), and whether calls through it
 *                                detach from the interpreter (as cubind's
 *                                do: every function but the keep-gil ones)
 *   NAMES                        the entry points bind() takes
 *   cuCtxGetCurrent() ... cuLaunchKernel(f, gx, gy, gz, bx, by, bz,
 *                                shared, stream, params, extra)
 *
 * Invariant: bind() runs on one thread before any call (bench/paired.py's
 * setup); the entry points are only read after that. Calling a function not
 * yet bound raises RuntimeError. The functions use METH_FASTCALL |
 * METH_KEYWORDS, as cubind's and the floor's do, and take no keywords.
 *
 * Benchmark-only: scripts/gpu-run bench builds it; nothing ships it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* The entry points (cuda.h's names; the header's macros pick each one's
 * ABI variant, as in c_bench.c, which resolved them). */
#define THIN_FUNCS(X)                                                          \
    X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuDeviceGet) X(cuDeviceGetAttribute) \
    X(cuEventRecord) X(cuEventQuery) X(cuStreamQuery) X(cuStreamSynchronize)   \
    X(cuPointerGetAttribute) X(cuMemAlloc) X(cuMemFree) X(cuLaunchKernel)

#define THIN_DECLARE(name)                                                     \
    static __typeof__(&name) p_##name;                                         \
    static int detach_##name = 1;
THIN_FUNCS(THIN_DECLARE)

typedef struct {
    const char *name;
    void *slot;        /* the p_ variable: a function pointer of slot_size bytes */
    size_t slot_size;
    int *detach;
} thin_entry;

#define THIN_ENTRY(name) {#name, &p_##name, sizeof p_##name, &detach_##name},
static const thin_entry thin_entries[] = {THIN_FUNCS(THIN_ENTRY)};
#define THIN_NENTRIES (sizeof thin_entries / sizeof thin_entries[0])

/* ---- argument conversion: ints only ---------------------------------------- */

static int thin_args(const char *fname, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t want)
{
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", fname);
        return -1;
    }
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fname, want, nargs);
        return -1;
    }
    return 0;
}

static int thin_u64(PyObject *o, unsigned long long *out)
{
    *out = PyLong_AsUnsignedLongLong(o);
    return (*out == (unsigned long long)-1 && PyErr_Occurred()) ? -1 : 0;
}

static int thin_uint(PyObject *o, unsigned int *out)
{
    unsigned long long v;
    if (thin_u64(o, &v) < 0)
        return -1;
    if (v > UINT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "does not fit an unsigned int");
        return -1;
    }
    *out = (unsigned int)v;
    return 0;
}

static int thin_int(PyObject *o, int *out)
{
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT_MIN || v > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "does not fit an int");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int thin_ptr(PyObject *o, void **out)
{
    unsigned long long v;
    if (thin_u64(o, &v) < 0)
        return -1;
    *out = (void *)(uintptr_t)v;
    return 0;
}

/* ---- calls ------------------------------------------------------------------- */

/* Calls entry point NAME with ARGS into `r`, detaching around it where
 * bind() said so; an unbound entry point raises. NAME is pasted, never
 * expanded: cuda.h defines some names as macros (cuMemFree is cuMemFree_v2),
 * and the variables are named after the unexpanded ones. Macros that pass a
 * name on use THIN_CALL_AT with the pasted variables. */
#define THIN_CALL(name, r, ...) THIN_CALL_AT(p_##name, detach_##name, #name, r, __VA_ARGS__)
#define THIN_CALL_AT(fn, detach, label, r, ...)                                \
    do {                                                                       \
        if (!(fn)) {                                                           \
            PyErr_SetString(PyExc_RuntimeError, label " is not bound (bind())"); \
            return NULL;                                                       \
        }                                                                      \
        if (detach) {                                                          \
            Py_BEGIN_ALLOW_THREADS                                             \
            (r) = (fn)(__VA_ARGS__);                                           \
            Py_END_ALLOW_THREADS                                               \
        } else {                                                               \
            (r) = (fn)(__VA_ARGS__);                                           \
        }                                                                      \
    } while (0)

static int thin_failed(const char *fname, CUresult r)
{
    if (r == CUDA_SUCCESS)
        return 0;
    PyErr_Format(PyExc_RuntimeError, "%s failed: CUresult %d", fname, (int)r);
    return 1;
}

static PyObject *thin_status(const char *fname, CUresult r)
{
    if (thin_failed(fname, r))
        return NULL;
    Py_RETURN_NONE;
}

#define THIN_FN(name)                                                          \
    static PyObject *thin_##name(PyObject *module, PyObject *const *args,      \
                                 Py_ssize_t nargs, PyObject *kwnames)

THIN_FN(cuCtxGetCurrent)
{
    (void)module;
    (void)args;
    CUcontext ctx = NULL;
    CUresult r;
    if (thin_args("cuCtxGetCurrent", nargs, kwnames, 0) < 0)
        return NULL;
    THIN_CALL(cuCtxGetCurrent, r, &ctx);
    return thin_failed("cuCtxGetCurrent", r) ? NULL : PyLong_FromVoidPtr(ctx);
}

/* The calls taking one handle (or device address) and returning only a
 * status. */
#define THIN_ONE_HANDLE(name, ctype)                                           \
    static PyObject *thin_##name(PyObject *module, PyObject *const *args,      \
                                 Py_ssize_t nargs, PyObject *kwnames)          \
    {                                                                          \
        (void)module;                                                          \
        void *handle;                                                          \
        CUresult r;                                                            \
        if (thin_args(#name, nargs, kwnames, 1) < 0 || thin_ptr(args[0], &handle) < 0) \
            return NULL;                                                       \
        THIN_CALL_AT(p_##name, detach_##name, #name, r, (ctype)(uintptr_t)handle); \
        return thin_status(#name, r);                                          \
    }
THIN_ONE_HANDLE(cuCtxSetCurrent, CUcontext)
THIN_ONE_HANDLE(cuEventQuery, CUevent)
THIN_ONE_HANDLE(cuStreamQuery, CUstream)
THIN_ONE_HANDLE(cuStreamSynchronize, CUstream)
THIN_ONE_HANDLE(cuMemFree, CUdeviceptr)

THIN_FN(cuDeviceGet)
{
    (void)module;
    int ordinal;
    CUdevice dev = 0;
    CUresult r;
    if (thin_args("cuDeviceGet", nargs, kwnames, 1) < 0 || thin_int(args[0], &ordinal) < 0)
        return NULL;
    THIN_CALL(cuDeviceGet, r, &dev, ordinal);
    return thin_failed("cuDeviceGet", r) ? NULL : PyLong_FromLong(dev);
}

THIN_FN(cuDeviceGetAttribute)
{
    (void)module;
    int attrib, dev, value = 0;
    CUresult r;
    if (thin_args("cuDeviceGetAttribute", nargs, kwnames, 2) < 0 ||
        thin_int(args[0], &attrib) < 0 || thin_int(args[1], &dev) < 0)
        return NULL;
    THIN_CALL(cuDeviceGetAttribute, r, &value, (CUdevice_attribute)attrib, (CUdevice)dev);
    return thin_failed("cuDeviceGetAttribute", r) ? NULL : PyLong_FromLong(value);
}

THIN_FN(cuEventRecord)
{
    (void)module;
    void *event, *stream;
    CUresult r;
    if (thin_args("cuEventRecord", nargs, kwnames, 2) < 0 || thin_ptr(args[0], &event) < 0 ||
        thin_ptr(args[1], &stream) < 0)
        return NULL;
    THIN_CALL(cuEventRecord, r, (CUevent)event, (CUstream)stream);
    return thin_status("cuEventRecord", r);
}

/* The attribute's value is read from a zeroed 8-byte buffer: exact for the
 * 8-byte attributes, and for the 4-byte ones on a little-endian machine
 * (the benchmark asks for CU_POINTER_ATTRIBUTE_MEMORY_TYPE, an unsigned
 * int, on x86-64). */
THIN_FN(cuPointerGetAttribute)
{
    (void)module;
    int attribute;
    unsigned long long ptr, value = 0;
    CUresult r;
    if (thin_args("cuPointerGetAttribute", nargs, kwnames, 2) < 0 ||
        thin_int(args[0], &attribute) < 0 || thin_u64(args[1], &ptr) < 0)
        return NULL;
    THIN_CALL(cuPointerGetAttribute, r, &value, (CUpointer_attribute)attribute,
              (CUdeviceptr)ptr);
    return thin_failed("cuPointerGetAttribute", r) ? NULL : PyLong_FromUnsignedLongLong(value);
}

THIN_FN(cuMemAlloc)
{
    (void)module;
    unsigned long long size;
    CUdeviceptr dptr = 0;
    CUresult r;
    if (thin_args("cuMemAlloc", nargs, kwnames, 1) < 0 || thin_u64(args[0], &size) < 0)
        return NULL;
    THIN_CALL(cuMemAlloc, r, &dptr, (size_t)size);
    return thin_failed("cuMemAlloc", r) ? NULL : PyLong_FromUnsignedLongLong(dptr);
}

/* params and extra: addresses of prepared void*[] arrays, 0 for NULL. */
THIN_FN(cuLaunchKernel)
{
    (void)module;
    void *f, *stream, *params, *extra;
    unsigned int dims[6], shared;
    CUresult r;
    if (thin_args("cuLaunchKernel", nargs, kwnames, 11) < 0 || thin_ptr(args[0], &f) < 0)
        return NULL;
    for (int i = 0; i < 6; i++)
        if (thin_uint(args[1 + i], &dims[i]) < 0)
            return NULL;
    if (thin_uint(args[7], &shared) < 0 || thin_ptr(args[8], &stream) < 0 ||
        thin_ptr(args[9], &params) < 0 || thin_ptr(args[10], &extra) < 0)
        return NULL;
    THIN_CALL(cuLaunchKernel, r, (CUfunction)f, dims[0], dims[1], dims[2], dims[3], dims[4],
              dims[5], shared, (CUstream)stream, (void **)params, (void **)extra);
    return thin_status("cuLaunchKernel", r);
}

/* ---- bind() and the module ------------------------------------------------ */

static PyObject *thin_bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    (void)module;
    const char *name;
    void *address;
    int detach;
    if (thin_args("bind", nargs, kwnames, 3) < 0)
        return NULL;
    if (!(name = PyUnicode_AsUTF8(args[0])) || thin_ptr(args[1], &address) < 0 ||
        (detach = PyObject_IsTrue(args[2])) < 0)
        return NULL;
    if (!address) {
        PyErr_Format(PyExc_ValueError, "bind(%s): address is 0", name);
        return NULL;
    }
    for (size_t i = 0; i < THIN_NENTRIES; i++) {
        const thin_entry *e = &thin_entries[i];
        if (strcmp(e->name, name) != 0)
            continue;
        /* An object pointer's bits as the function pointer (POSIX: dlsym's
         * contract, which cuGetProcAddress shares). */
        if (e->slot_size != sizeof address) {
            PyErr_SetString(PyExc_RuntimeError, "function pointers differ from void *");
            return NULL;
        }
        memcpy(e->slot, &address, sizeof address);
        *e->detach = detach;
        Py_RETURN_NONE;
    }
    PyErr_Format(PyExc_ValueError, "bind: unknown entry point %R", args[0]);
    return NULL;
}

#define THIN_METHOD(name)                                                      \
    {#name, (PyCFunction)(void (*)(void))thin_##name, METH_FASTCALL | METH_KEYWORDS, \
     #name "(...): the driver call, ints in and out; raises RuntimeError on a failure."},
static PyMethodDef thin_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))thin_bind, METH_FASTCALL | METH_KEYWORDS,
     "bind(name, address, detach): sets an entry point before any call."},
    THIN_FUNCS(THIN_METHOD)
    {NULL, NULL, 0, NULL},
};

static int thin_exec(PyObject *module)
{
    PyObject *names = PyTuple_New((Py_ssize_t)THIN_NENTRIES);
    if (!names)
        return -1;
    for (size_t i = 0; i < THIN_NENTRIES; i++) {
        PyObject *s = PyUnicode_FromString(thin_entries[i].name);
        if (!s) {
            Py_DECREF(names);
            return -1;
        }
        PyTuple_SET_ITEM(names, (Py_ssize_t)i, s);
    }
    int rc = PyModule_AddObjectRef(module, "NAMES", names);
    Py_DECREF(names);
    return rc;
}

static PyModuleDef_Slot thin_slots[] = {
    {Py_mod_exec, (void *)thin_exec},
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef thin_module = {
    PyModuleDef_HEAD_INIT, "_bench_thin",
    "The benchmark's thin binding: the driver calls with ints in and out (bench/thin_ext.c).",
    0, thin_methods, thin_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bench_thin(void)
{
    return PyModuleDef_Init(&thin_module);
}
