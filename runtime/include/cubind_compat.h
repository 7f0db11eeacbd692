/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cubind_compat.h — the one header of shims for CPython API newer than the
 * oldest supported version (3.10), and small helpers every binding module
 * file shares. Static inline: no state.
 */
#ifndef CUBIND_COMPAT_H
#define CUBIND_COMPAT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* 3.10: cbs_compact_int reads ob_digit (3.11's Python.h has it) */
#endif
#include <string.h>

/* For the few tiny helpers on every generated call's path: inlined at each
 * use whatever the compiler's growth limits. The generated driver.c is one
 * large translation unit, and GCC stops inlining even small static inline
 * functions there once the unit has grown by its limit (callgrind showed
 * PyTuple_GET_SIZE and make_result1 called out of line from hot
 * functions; later cbs_arg_unsigned and proc, in every launch, once
 * another inline helper had grown the unit), so "static inline" alone
 * gives no such promise. Every helper on a call's fast path is marked. */
#if defined(__GNUC__) || defined(__clang__)
#define CBS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define CBS_ALWAYS_INLINE inline
#endif

/* PyDict_GetItemRef (3.13+) semantics on every version: 1 and a new
 * reference when found, 0 when absent, -1 with an exception. */
static inline int cbs_dict_get_ref(PyObject *dict, PyObject *key, PyObject **out)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyDict_GetItemRef(dict, key, out);
#else
    PyObject *v = PyDict_GetItemWithError(dict, key);
    *out = v ? Py_NewRef(v) : NULL;
    return v ? 1 : (PyErr_Occurred() ? -1 : 0);
#endif
}

/* The items of o as a tuple (a new reference): o itself when it is a tuple,
 * else a snapshot, so no other thread's change to a list passed in can free
 * an item while it is in use (free-threading rule 2: PySequence_Fast hands
 * a list back as it is, and its items are borrowed from it). NULL with
 * TypeError(msg) when o is not iterable. */
static inline PyObject *cbs_sequence_tuple(PyObject *o, const char *msg)
{
    PyObject *seq = PySequence_Fast(o, msg);
    if (!seq || PyTuple_CheckExact(seq))
        return seq;
    PyObject *t = PyList_AsTuple(seq); /* PySequence_Fast made a list */
    Py_DECREF(seq);
    return t;
}

/* The thread state attached to this thread, NULL when it has none or has
 * detached it; reads a thread-local only and never fails (callable from a
 * thread CPython has never seen). */
static inline PyThreadState *cbs_attached_tstate(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked();
#else
    return _PyThreadState_UncheckedGet();
#endif
}

/* The raised exception, taken and normalized (PyErr_GetRaisedException,
 * 3.12+, on every version); NULL when none. */
static inline PyObject *cbs_take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

/* Raises exc again (PyErr_SetRaisedException); steals the reference. */
static inline void cbs_raise_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

/* PyFloat_Pack2 / PyFloat_Unpack2 (IEEE half precision) are public from
 * 3.11; 3.10 has them under a leading underscore, taking unsigned char. */
#if PY_VERSION_HEX < 0x030B0000
static inline int cbs_float_pack2(double x, char *p, int le)
{
    return _PyFloat_Pack2(x, (unsigned char *)p, le);
}
static inline double cbs_float_unpack2(const char *p, int le)
{
    return _PyFloat_Unpack2((const unsigned char *)p, le);
}
#define PyFloat_Pack2 cbs_float_pack2
#define PyFloat_Unpack2 cbs_float_unpack2
#endif

/* The unqualified name of a type ("CUresult" for "cubind.driver.CUresult"). */
static inline const char *cbs_short_name(PyTypeObject *t)
{
    const char *dot = strrchr(t->tp_name, '.');
    return dot ? dot + 1 : t->tp_name;
}

/* The value of an int (or int subclass) that fits in a machine word,
 * without a call (3.12+ exposes compact ints inline; on 3.10 and 3.11 an
 * int of at most one digit): 1 and *v; 0 when o is not one, and the
 * caller takes the general path.
 * Any int subclass qualifies (enum members, bool): its value is stored as
 * an int's is, and int() of it is that value whatever it overrides. */
static CBS_ALWAYS_INLINE int cbs_compact_int(PyObject *o, long long *v)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (PyLong_Check(o) && PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        *v = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
        return 1;
    }
#else
    /* 3.10 and 3.11, whose int layout is frozen: ob_size is the signed
     * count of digits (30 or 15 bits each). One digit or none is what
     * 3.12 calls compact; zero may have no digit allocated. */
    if (PyLong_Check(o)) {
        Py_ssize_t n = Py_SIZE(o);
        if (n == 0) {
            *v = 0;
            return 1;
        }
        if (n == 1 || n == -1) {
            *v = (long long)n * (long long)((PyLongObject *)o)->ob_digit[0];
            return 1;
        }
    }
#endif
    return 0;
}

/* Free-threaded builds: makes `o` immortal so that reference counting it
 * from many threads costs no atomic operation on a shared count. Without
 * this, eight threads calling one cubind function contend on the function
 * object's shared reference count (every call takes and drops a reference)
 * and run slower together than one thread alone.
 *
 * For objects that live as long as their module and are used by every
 * thread: the module objects, their functions, enum members, types, the
 * shared success tuple and interned handles (bind_intern.h). Only in the main
 * interpreter (callers check): there the module lives until the process
 * ends, so immortality leaks nothing that would otherwise be freed before
 * exit; a subinterpreter's modules are freed with it and stay mortal.
 *
 * Invariant (cubind's own condition): `o` was created by the calling
 * thread and no other thread holds a reference yet (its shared count, flag
 * bits aside, is zero); otherwise it is left as it is, which is always
 * correct, only slower. References this thread holds may be many: the
 * module object, its types and enum members are referenced by the import
 * machinery, the module's dict and state, and a type by its own __mro__.
 * The fields written are those of CPython's public object header for
 * free-threaded 3.13 and later (ob_ref_local equal to UINT32_MAX is what
 * Py_INCREF, Py_DECREF and, from 3.14, sys._is_immortal test for
 * immortality). GIL builds: a no-op (their reference counts are not
 * contended atomics).
 *
 * Versions: 3.13 and 3.14 have no public call for this, so they write the
 * fields (this is the one place that does). 3.14's public
 * PyUnstable_Object_EnableDeferredRefcount is no substitute: it applies to
 * GC-tracked objects only (handles and enum members are not) and spares
 * only the interpreter's own stack references, while a member put into
 * every result tuple, or an argument a C function stores, is still
 * counted. 3.15 (alpha 7) adds the public PyUnstable_SetImmortal, which is
 * tried first; as added, it refuses an object that is not uniquely
 * referenced (local count 1: an interned handle qualifies, the module,
 * its types and enum members do not), and those take the same path as on
 * 3.13 and 3.14. */
static inline void cbs_make_immortal(PyObject *o)
{
#if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030D0000
#if PY_VERSION_HEX >= 0x030F00A7
    if (PyUnstable_SetImmortal(o))
        return;
#endif
    /* Other threads' references: the shared count proper, without its low
     * flag bits (a weak reference may exist; 3.13's deferred reference
     * counting), which do not matter once immortal. */
    Py_ssize_t shared = o->ob_ref_shared >> _Py_REF_SHARED_SHIFT;
#if PY_VERSION_HEX >= 0x030E0000
    /* 3.14 counts deferred reference counting (module objects, heap types)
     * as a fixed bias in the shared count instead: CPython's internal
     * _Py_REF_DEFERRED, PY_SSIZE_T_MAX / 8. Exactly the bias: no other
     * thread's reference (anything else is left mortal). */
    if (shared == PY_SSIZE_T_MAX / 8)
        shared = 0;
#endif
    if (o->ob_tid != _Py_ThreadId() || shared != 0)
        return;
    if (PyObject_IS_GC(o) && PyObject_GC_IsTracked(o))
        PyObject_GC_UnTrack(o); /* immortal objects take no part in collection */
    o->ob_ref_local = UINT32_MAX;
    o->ob_ref_shared = 0;
#else
    (void)o;
#endif
}

#endif
