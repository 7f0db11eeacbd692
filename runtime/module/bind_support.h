/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_support.h — stateless helpers that generated binding modules call:
 * argument parsing and conversion, enum types, handle types, driver entry
 * point resolution.
 *
 * Nothing here keeps state of its own: every Python object it creates is
 * owned by the calling module's state, so several generated modules (and
 * subinterpreters) can link this file without sharing anything. Process-wide
 * state (the loaded driver) lives in the cubind._runtime module only.
 *
 * Error contract: functions returning int give 0 on success and -1 with a
 * Python exception set; functions returning a pointer give NULL with an
 * exception set. Messages name the function and the parameter.
 */
#ifndef CUBIND_BIND_SUPPORT_H
#define CUBIND_BIND_SUPPORT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cubind_compat.h"
#include "cubind_rt.h"

/* ---- arguments ---------------------------------------------------------- */

/* 1 when the str `key` is exactly name[0..len) (len = strlen(name)), 0
 * otherwise: the whole string, so a key with an embedded NUL never matches
 * its prefix. */
int cbs_keyword_is(PyObject *key, const char *name, Py_ssize_t len);

/* Collects a vectorcall's arguments into out[0..nnames) in declaration
 * order (borrowed references, valid for the call). The first nrequired
 * are required; a missing optional one is left NULL (its default). */
int cbs_parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                   const char *const *names, Py_ssize_t nnames, Py_ssize_t nrequired,
                   PyObject **out);

/* The int a C integer takes from o, as cuda.bindings' Cython conversion
 * gives it (the drop-in rule, docs/user-guide.md "Arguments"): o itself
 * when it is an int (bool, int subclasses and enum members as their int
 * value, without calling them); else o.__int__() (a float truncates toward
 * zero, nan raises ValueError, an infinity OverflowError; a result that is
 * no int TypeError); else o.__index__() (which cuda.bindings does not
 * call: cubind also takes such objects). A new reference; NULL without an
 * exception when o has neither (None, str, bytes, structs, objects with
 * only __float__), NULL with the conversion's exception when it raised. */
PyObject *cbs_int_value_slow(PyObject *o);
static CBS_ALWAYS_INLINE PyObject *cbs_int_value(PyObject *o)
{
    if (PyLong_Check(o)) /* the common case, without a call */
        return Py_NewRef(o);
    return cbs_int_value_slow(o);
}
/* The same for a C float or double, as Cython gives it (PyFloat_AsDouble):
 * a float, or o.__float__(), or o.__index__() (ints). 0 with *out set; 1
 * without an exception when o has none of those (str, None, ...); -1 with
 * the conversion's exception. */
int cbs_float_value(PyObject *o, double *out);
/* Replaces a pending ValueError, OverflowError or TypeError by one of the
 * same type whose message starts with `what` ("f(): argument 'x'",
 * "S.field"), the original its cause; any other exception is left as is. */
void cbs_exception_naming(const char *what);

/* Integer conversions with a range (cbs_int_value, then the range);
 * `ctype` is the C type's spelling for messages. TypeError for objects
 * without an integer conversion, OverflowError out of range.
 * cbs_arg_unsigned/cbs_arg_signed (inline, below) take the common case, a
 * small int in range, without a call; the _slow forms do everything. */
int cbs_arg_unsigned_slow(PyObject *o, unsigned long long max, const char *func,
                          const char *param, const char *ctype, unsigned long long *out);
int cbs_arg_signed_slow(PyObject *o, long long min, long long max, const char *func,
                        const char *param, const char *ctype, long long *out);

static CBS_ALWAYS_INLINE int cbs_arg_unsigned(PyObject *o, unsigned long long max,
                                             const char *func, const char *param,
                                             const char *ctype, unsigned long long *out)
{
    long long v;
    if (cbs_compact_int(o, &v) && v >= 0 && (unsigned long long)v <= max) {
        *out = (unsigned long long)v;
        return 0;
    }
    return cbs_arg_unsigned_slow(o, max, func, param, ctype, out);
}

static CBS_ALWAYS_INLINE int cbs_arg_signed(PyObject *o, long long min, long long max,
                                           const char *func, const char *param,
                                           const char *ctype, long long *out)
{
    long long v;
    if (cbs_compact_int(o, &v) && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    return cbs_arg_signed_slow(o, min, max, func, param, ctype, out);
}
int cbs_arg_double(PyObject *o, const char *func, const char *param, double *out);

/* `const char *` under the string-addresses rule: an int is the address
 * of a string the caller keeps alive (*holder NULL; 0 is NULL, a negative
 * or too large int OverflowError naming the parameter); anything else as
 * cbs_arg_string. */
int cbs_arg_string_or_address(PyObject *o, const char *func, const char *param,
                              PyObject **holder, const char **out);

/* `const char *`: bytes (used as is) or str (UTF-8); *holder keeps the
 * bytes alive until the caller releases it. Embedded NULs are refused. */
int cbs_arg_string(PyObject *o, const char *func, const char *param, PyObject **holder,
                   const char **out);

/* After a failed PyObject_GetBuffer: a pending BufferError (a buffer of the
 * wrong kind: read-only, not contiguous, ...) becomes TypeError("<what>
 * must be <want> (<the BufferError>)"), the BufferError its cause; any other
 * exception is left as it is. */
void cbs_buffer_error_as_type_error(const char *what, const char *want);

/* Host memory (`void *`): None (NULL), an int address, or an object with
 * the buffer protocol (writable when `writable`), whose buffer the caller
 * releases (view->obj != NULL) after the call. */
int cbs_arg_buffer(PyObject *o, int writable, const char *func, const char *param,
                   Py_buffer *view, void **out);

/* `void *` under the void-ptr-numbers rule, as cuda.bindings.driver's and
 * .runtime's void * helper converts it (an integer conversion first, then
 * the buffer protocol): a number — an object with __int__ or __index__ and
 * no length: a float (truncated), a numpy scalar, an object with __int__ —
 * is an address by its value (nan, negative or too large: the exception of
 * cbs_arg_unsigned naming the parameter); anything else as cbs_arg_buffer
 * takes it: a cubind handle too (a CUdeviceptr is its address, a handle of
 * another kind no address, deliberately). An object with a length (bytes,
 * bytearray, memoryview, an array, even of one item or none) stays its
 * memory. */
int cbs_arg_pointer(PyObject *o, int writable, const char *func, const char *param,
                    Py_buffer *view, void **out);

/* A buffer the callee fills (a buffer-size rule): bytes — written into, as
 * cuda.bindings does with its `char *` arguments (b" " * n) —, any writable
 * buffer, an int address (*len -1: size unknown) or None (NULL, *len -1).
 * view->obj is set when a buffer must be released. */
int cbs_arg_fill_buffer(PyObject *o, const char *func, const char *param, Py_buffer *view,
                        void **out, Py_ssize_t *len);

/* One string of an input array of strings: bytes or str, without a NUL;
 * the pointer borrows from o, which the caller keeps alive (the call's
 * tuple of the sequence). */
int cbs_arg_cstring(PyObject *o, const char *func, const char *param, const char **out);

/* A C function pointer argument: None (NULL), an int address, an instance
 * of the parameter's own function-pointer class `own` (CUhostFn for a
 * CUhostFn parameter, as cuda.bindings takes; NULL: none) or of a class of
 * the same name of another module (cuda.bindings': read through its
 * getPtr()), or a ctypes function pointer (CFUNCTYPE instance). Nothing
 * else: not another handle
 * (a CUstream), whose value is no function (cbs_arg_address would read
 * it). value: 1 with *out set, 0 when o is none of those (no exception),
 * -1 with an exception (an int out of range). arg: the same, but 0 means a
 * Python callable was given (only when callable_too: the caller wraps it),
 * and anything else raises TypeError naming the parameter (-1). */
int cbs_funcptr_value(PyObject *o, PyTypeObject *own, const char *func, const char *param,
                      void **out);
int cbs_arg_funcptr(PyObject *o, PyTypeObject *own, int callable_too, const char *func,
                    const char *param, void **out);

/* An address: None (NULL), an int, or an object whose getPtr() gives an
 * int (a cubind or cuda.bindings handle class). */
int cbs_arg_address(PyObject *o, const char *func, const char *param, void **out);

/* Takes keyword `name` out of a vectorcall's keywords (the launch functions'
 * argtypes=, which their generated parsers do not list): when kwnames
 * holds it, *value = its argument (borrowed), the other arguments are
 * copied into buf (cap items; when they do not fit nothing is taken: the
 * parser then reports the call) and *args / *kwnames name them, *kwnames
 * a new tuple (also stored in *owned, to release) or NULL. 0, or -1 with
 * an exception. */
int cbs_take_keyword(PyObject *const **args, Py_ssize_t nargs, PyObject **kwnames,
                     const char *name, PyObject **buf, Py_ssize_t cap, PyObject **value,
                     PyObject **owned);

/* ---- output arrays ---------------------------------------------------------- */

/* An in/out count above this many entries is first asked of the driver
 * with the output arrays NULL (what it counts bounds them): the driver
 * zeroes every entry past those it fills, and a count far above what
 * exists would have it write that much memory. */
#define CBS_COUNT_PROBE_ABOVE 65536u

/* What one entry of a result list costs beside the C element: its list
 * slot and one small object (a handle, an int), for cbs_out_array. */
#define CBS_RESULT_ENTRY_BYTES (sizeof(PyObject *) + 48)

/* Zeroed storage for n elements of `size` bytes that a driver call fills
 * (an output array sized by a count argument), of which the result then
 * builds `result` bytes per element (0 where the result holds only what
 * the driver reports it filled). Refused before anything is allocated,
 * with MemoryError naming func/param, when n * (size + result) exceeds
 * this machine's physical memory (the count cannot be held); MemoryError
 * when the allocation fails. A large block comes zero-filled from the
 * system, untouched until written (PyMem_RawCalloc: calloc), so a count
 * larger than what the driver fills costs address space, not memory.
 * n > 0; release with PyMem_RawFree. */
void *cbs_out_array(unsigned long long n, size_t size, size_t result, const char *func,
                    const char *param);

/* ---- cubind.launch -------------------------------------------------------- */

/* launch(f, grid, block, /, *args, stream=None, shared_mem=0, argtypes=None),
 * parsed: what
 * the generated function converts with the module's own types (f, stream)
 * is left as objects. Every pointer borrows from the call's arguments. */
typedef struct {
    PyObject *func;                 /* f */
    unsigned int grid[3], block[3]; /* dimensions not given are 1 */
    PyObject *stream;               /* NULL when not given */
    unsigned int shared_mem;
    PyObject *const *values;        /* args: the kernel's arguments */
    size_t nvalues;
    PyObject *argtypes;             /* argtypes=: NULL when not given */
} cbs_launch_args;

/* 0, or -1 with TypeError / OverflowError naming the argument ("launch():
 * argument 'grid[1]' ..."). grid and block: an int (x) or a tuple or list
 * of one to three ints (x, y, z), each converted as every C integer
 * (cbs_int_value: a float truncated). */
int cbs_parse_launch(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     cbs_launch_args *out);

/* ---- int results ---------------------------------------------------------- */

/* The interpreter's cached ints CBS_SMALL_INT_MIN .. CBS_SMALL_INT_MIN +
 * CBS_SMALL_INTS - 1 (-5 .. 256, CPython's small-int cache), held by a
 * module's state so that an int output in that range (an attribute, a
 * count, a flag) is returned without calling PyLong_FromLongLong.
 * Invariant: filled once by cbs_small_ints_init when the module executes,
 * read-only until the module is cleared. On 3.12 and later those ints are
 * immortal, so the Py_NewRef below writes nothing and threads share them
 * freely (free-threaded builds are 3.13+); on 3.10 and 3.11 they belong to
 * the interpreter that executed the module, the one whose state this is. */
#define CBS_SMALL_INT_MIN (-5)
#define CBS_SMALL_INTS 262

/* Fills small[0 .. CBS_SMALL_INTS) with new references; -1 with an
 * exception (what was filled is released by the module's clear). */
int cbs_small_ints_init(PyObject **small);

/* A new reference to the int v: from `small` when cached, else new. */
static CBS_ALWAYS_INLINE PyObject *cbs_int_result(PyObject *const *small, long long v)
{
    /* v - MIN as unsigned: below CBS_SMALL_INTS exactly for MIN <= v < MIN + N */
    unsigned long long k = (unsigned long long)v - (unsigned long long)CBS_SMALL_INT_MIN;
    if (k < CBS_SMALL_INTS)
        return Py_NewRef(small[k]);
    return PyLong_FromLongLong(v);
}

static CBS_ALWAYS_INLINE PyObject *cbs_uint_result(PyObject *const *small, unsigned long long v)
{
    if (v < (unsigned long long)(CBS_SMALL_INTS + CBS_SMALL_INT_MIN))
        return Py_NewRef(small[v - (unsigned long long)CBS_SMALL_INT_MIN]);
    return PyLong_FromUnsignedLongLong(v);
}

/* ---- enums ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    long long value;
} cbs_enum_item;

typedef struct {
    const char *qualname;      /* "cubind.driver.CUresult": static storage */
    const char *doc;
    const cbs_enum_item *items;
    size_t nitems;
    int int_args;              /* 1: arguments convert as a C int (cbs_int_value,
                                  the enum-args-int rule); 0: as int() */
} cbs_enum_def;

/* An enum type of one module: canonical members sorted by value for
 * lookups. Invariant: values[i] < values[i+1]; members[i] is the singleton
 * whose int value is values[i]: of aliases (names of one value, each its
 * own member object), the last declared, as in cuda.bindings. */
typedef struct {
    PyTypeObject *type;
    long long *values;
    PyObject **members;
    size_t n;
    int int_args;              /* the def's int_args */
} cbs_enum;

/* The metaclass of a module's enum classes (iteration, len(), `in`, repr:
 * cuda.bindings' enum class protocol); a new reference. */
PyTypeObject *cbs_enum_meta_create(PyObject *module);
/* Creates the int subclass for def, of metaclass meta, its members as class
 * attributes, `__members__` (name → member in declaration order, one
 * member per name), `_value2member_map_` (also `__singletons__`: value →
 * canonical member) and `_names_by_address_`; adds the type to module. */
int cbs_enum_create(PyObject *module, PyTypeObject *meta, const cbs_enum_def *def, cbs_enum *out);
void cbs_enum_clear(cbs_enum *e);
/* New reference to the member for value; a value the header did not know
 * (a newer driver) gives a new instance whose .name is None. */
PyObject *cbs_enum_member(const cbs_enum *e, long long value);
/* 1 when o is a member of an enum class other than t (cubind's or
 * cuda.bindings' of another name, a Python IntEnum): refused where a t is
 * taken, its value meaning something else there. Never raises. */
int cbs_is_other_enum(PyObject *o, PyTypeObject *t);
/* The int an enum argument takes from o: int(o), as cuda.bindings converts
 * enum parameters and fields (an int as it is, a float truncated, a str or
 * bytes parsed, __int__, __index__). New reference, or NULL with int()'s
 * exception. */
PyObject *cbs_enum_int_value(PyObject *o);
/* Accepts a member of e's type or what cbs_enum_int_value converts (what
 * cbs_int_value converts when e->int_args: no str or bytes), not a member
 * of another enum class; checks the range of the C enum. Inline:
 * a member of e's type or an exact int, small and in range, without a
 * call. */
int cbs_arg_enum_slow(PyObject *o, const cbs_enum *e, long long min, long long max,
                      const char *func, const char *param, long long *out);

static CBS_ALWAYS_INLINE int cbs_arg_enum(PyObject *o, const cbs_enum *e, long long min,
                                         long long max, const char *func, const char *param,
                                         long long *out)
{
    long long v;
    if ((Py_IS_TYPE(o, e->type) || PyLong_CheckExact(o)) && cbs_compact_int(o, &v) &&
        v >= min && v <= max) {
        *out = v;
        return 0;
    }
    return cbs_arg_enum_slow(o, e, min, max, func, param, out);
}

/* ---- handles -------------------------------------------------------------- */

/* How a handle class stores its C value (what getPtr() points at). */
typedef enum {
    CBS_HANDLE_POINTER,        /* opaque pointer: CUstream */
    CBS_HANDLE_I32,            /* int: CUdevice */
    CBS_HANDLE_U32,            /* unsigned int: CUlogIterator */
    CBS_HANDLE_U64             /* unsigned long long: CUdeviceptr */
} cbs_handle_kind;

typedef struct {
    PyObject_HEAD
    union {
        void *ptr;
        int i32;
        unsigned int u32;
        unsigned long long u64;
    } value;                   /* the C value, unless `view` is set */
    void *view;                /* NULL; or the address of the C value this
                                  handle reads and writes instead of `value`
                                  (cuda.bindings' _ptr=: mapped memory a kernel
                                  writes), which must outlive the handle.
                                  getPtr() is cbs_handle_storage() */
    unsigned char kind;        /* a cbs_handle_kind */
    unsigned char interned;    /* 1: one shared immortal object of an intern
                                  table (bind_intern.h); __init__ refuses it */
} cbs_handle;

/* A handle class that names a kernel (the CUfunction of a launch) carries
 * one more slot: the kernel packer's private cache of the kernel's
 * parameter layout (bind_packer.c), so that a launch through the same
 * object reads it without the registry's lock.
 * Invariants: `layout` is NULL or a malloc'ed block the packer wrote before
 * publishing it; it is set at most once (compare-and-swap from NULL) and
 * freed only by the object's deallocation, when no call can be using it. */
typedef struct {
    cbs_handle base;
    _Atomic(void *) layout;
} cbs_kernel_handle;

/* The deallocator of kernel handle classes (frees `layout`); also how the
 * packer recognises one: this module's kernel handle classes, and another
 * module's classes derived from them (handle-base), which inherit it. */
void cbs_kernel_handle_dealloc(PyObject *o);

/* o's layout slot when o is a kernel handle, else NULL. */
static CBS_ALWAYS_INLINE _Atomic(void *) *cbs_kernel_layout_slot(PyObject *o)
{
    if (Py_TYPE(o)->tp_dealloc != cbs_kernel_handle_dealloc)
        return NULL;
    return &((cbs_kernel_handle *)o)->layout;
}

/* What a handle class is besides its kind (cbs_handle_type_create's flags):
 * KERNEL: a kernel handle class (cbs_kernel_handle, with a layout cache);
 * STREAM: a stream class (the stream-protocol rule): it has
 * __cuda_stream__(), and its constructor and every parameter of the class
 * (cbs_arg_handle) also take an object implementing that protocol. */
enum cbs_handle_class_flags {
    CBS_HANDLE_CLASS_KERNEL = 1,
    CBS_HANDLE_CLASS_STREAM = 2,
    CBS_HANDLE_CLASS_INTERNED = 4 /* an intern rule: outputs come from the module's
                                     intern table (bind_intern.h) */
};

/* Creates the class `qualname` with docstring `doc` (both of static
 * storage) and adds it to module. base: NULL, or another cubind module's
 * handle class of the same C type that the class derives from (a
 * handle-base rule: cubind.runtime's cudaStream_t from cubind.driver's
 * CUstream, as cuda.bindings' classes derive); TypeError when base is not
 * a cubind handle class. Python code cannot derive from a handle class
 * (__init_subclass__ refuses). */
PyTypeObject *cbs_handle_type_create(PyObject *module, const char *qualname, cbs_handle_kind kind,
                                     unsigned flags, PyTypeObject *base, const char *doc);
/* New reference to the class `name` of module `module` (imported); an
 * exception when it is not there or not a class. */
PyTypeObject *cbs_import_class(const char *module, const char *name);
/* 1 when an object of class ot holds a value of handle class t: ot is t,
 * a class derived from t (another module's, by a handle-base rule), or t's
 * own base; such an object has cbs_handle's layout. Never raises. */
int cbs_handle_related(PyTypeObject *ot, PyTypeObject *t);
/* New handle object of type t holding bits (the C value, zero-extended). */
PyObject *cbs_handle_new(PyTypeObject *t, unsigned long long bits);
/* The __init__ of every handle class of this module (and of nothing else):
 * how its handle objects are recognised. Python code cannot subclass them;
 * another cubind module's classes derived by handle-base rules have their
 * own (cbs_handle_related tells those). */
int cbs_handle_init(PyObject *self, PyObject *args, PyObject *kwds);
/* 1 when o is a cubind handle of any class, else 0. One compare; never
 * raises. */
static CBS_ALWAYS_INLINE int cbs_is_handle(PyObject *o)
{
    return Py_TYPE(o)->tp_init == cbs_handle_init;
}
/* The C value of a handle of `kind` stored at `at`, zero-extended (an
 * I32 value sign-extended: its int() value). */
static CBS_ALWAYS_INLINE unsigned long long cbs_handle_bits_at(unsigned char kind, const void *at)
{
    switch (kind) {
    case CBS_HANDLE_POINTER: { void *v; memcpy(&v, at, sizeof v); return (unsigned long long)(uintptr_t)v; }
    case CBS_HANDLE_I32: { int v; memcpy(&v, at, sizeof v); return (unsigned long long)(long long)v; }
    case CBS_HANDLE_U32: { unsigned int v; memcpy(&v, at, sizeof v); return v; }
    default: { unsigned long long v; memcpy(&v, at, sizeof v); return v; }
    }
}
/* cbs_handle_bits of a handle that views memory (h->view set). Out of
 * line: only handles made with _ptr= have a view, and a branch that picks
 * the address before one read costs every other handle. */
unsigned long long cbs_handle_view_bits(const cbs_handle *h);
/* The C value a handle object holds (cbs_handle_bits_at's form), from
 * `value` or the memory its view names. */
static CBS_ALWAYS_INLINE unsigned long long cbs_handle_bits(const cbs_handle *h)
{
    if (h->view)
        return cbs_handle_view_bits(h);
    return cbs_handle_bits_at(h->kind, &h->value);
}
/* Where h's C value is: its own `value`, or the memory it views. */
static CBS_ALWAYS_INLINE void *cbs_handle_storage(cbs_handle *h)
{
    return h->view ? h->view : (void *)&h->value;
}
/* Stores bits (cbs_handle_bits' form) as h's C value, where it is. */
static CBS_ALWAYS_INLINE void cbs_handle_set_bits(cbs_handle *h, unsigned long long bits)
{
    void *at = cbs_handle_storage(h);
    switch (h->kind) {
    case CBS_HANDLE_POINTER: { void *v = (void *)(uintptr_t)bits; memcpy(at, &v, sizeof v); break; }
    case CBS_HANDLE_I32: { int v = (int)(long long)bits; memcpy(at, &v, sizeof v); break; }
    case CBS_HANDLE_U32: { unsigned int v = (unsigned int)bits; memcpy(at, &v, sizeof v); break; }
    default: memcpy(at, &bits, sizeof bits); break;
    }
}

/* A module's table of interned handles (bind_intern.h); NULL where none. */
struct cbs_intern;
/* New reference to the handle of class t holding bits from `intern`
 * (bind_intern.h); a new object when t is not an interned class. */
PyObject *cbs_intern_handle(struct cbs_intern *intern, PyTypeObject *t, unsigned long long bits);

/* A handle output of class t holding bits (a new reference): the shared
 * object of the module's intern table on a free-threaded build when the
 * module has one (`intern` not NULL: main interpreter) and t is an
 * interned class, else a new object. GIL builds: cbs_handle_new, the
 * table never looked at. Inline: every handle output takes it. */
static CBS_ALWAYS_INLINE PyObject *cbs_handle_out(struct cbs_intern *intern, PyTypeObject *t,
                                                  unsigned long long bits)
{
#ifdef Py_GIL_DISABLED
    if (intern)
        return cbs_intern_handle(intern, t, bits);
#else
    (void)intern;
#endif
    return cbs_handle_new(t, bits);
}

/* prev (a new reference) when it is a handle of type t holding bits that
 * only the caller's previous result holds (reference count 1: prev is
 * borrowed from that result), else cbs_handle_out. A handle someone else
 * holds is never returned again: handles are mutable (__init__, writes
 * through getPtr()), and two results sharing one object would change
 * together. GIL builds only call it with a prev (see reusable_result).
 * bits as the generated code passes it (the C value converted to unsigned
 * long long) is what cbs_handle_bits gives for a handle holding that
 * value; other bits only cost the reuse. Inline: every handle output
 * takes it. intern: the module's table (cbs_handle_out). */
static CBS_ALWAYS_INLINE PyObject *cbs_handle_reuse(PyObject *prev, struct cbs_intern *intern,
                                                    PyTypeObject *t, unsigned long long bits)
{
    if (prev && Py_REFCNT(prev) == 1 && Py_TYPE(prev) == t && !((const cbs_handle *)prev)->view &&
        cbs_handle_bits((const cbs_handle *)prev) == bits)
        return Py_NewRef(prev);
    return cbs_handle_out(intern, t, bits);
}

/* A `T *` parameter to one handle of class t (SH_IN_HANDLE_PTR): *ptr is
 * the address of the value an instance of exactly t holds (the driver may
 * rewrite it: the caller's object changes, as cuda.bindings' does), or the
 * address cuda.bindings' handle of that class gives through getPtr();
 * None gives NULL. The object must outlive the call (it is an argument).
 * TypeError naming the parameter otherwise. */
int cbs_arg_handle_ref(PyObject *o, PyTypeObject *t, const char *func, const char *param,
                       void **ptr);
/* Mixed code bases: 1 when class t is cuda.bindings.driver's class of the
 * same name as cubind's class `ours` (its __module__ and name), whose
 * objects cubind takes where it takes its own; never raises. */
int cbs_is_foreign_twin(PyTypeObject *t, PyTypeObject *ours);
/* 1 when t is a handle class of cuda.bindings.driver (getPtr and int()). */
int cbs_is_foreign_handle(PyTypeObject *t);

/* The module function _native_handle(obj) (cubind.utils'
 * get_cuda_native_handle): the C value of an opaque-pointer handle as an
 * int, for a handle of this library's classes or cuda.bindings.driver's
 * (read through int(), as cuda.bindings reads its own); any other object,
 * integer-valued handles (CUdevice, CUdeviceptr) included, raises
 * TypeError "Unknown type: <class ...>" as cuda.bindings.utils does. */
PyObject *cbs_native_handle(PyObject *module, PyObject *obj);

/* Accepts None (0), an instance of t (or of a class cbs_handle_related
 * relates to t), any int (int subclasses such as
 * enum members included) in the C type's range, cuda.bindings' handle of
 * the same class name or of t's base's name, or derived from one (read
 * through int()),
 * and for a stream class an object implementing the CUDA stream protocol;
 * an instance of another handle class is a TypeError. Inline: an instance
 * of exactly t without a call. */
int cbs_arg_handle_slow(PyObject *o, PyTypeObject *t, const char *func, const char *param,
                        unsigned long long *bits);

static CBS_ALWAYS_INLINE int cbs_arg_handle(PyObject *o, PyTypeObject *t, const char *func,
                                           const char *param, unsigned long long *bits)
{
    if (Py_IS_TYPE(o, t)) {
        *bits = cbs_handle_bits((const cbs_handle *)o);
        return 0;
    }
    if (o == Py_None) {
        *bits = 0;
        return 0;
    }
    return cbs_arg_handle_slow(o, t, func, param, bits);
}

/* The same for a parameter that also takes an instance of class `also`,
 * whose value the header allows to be cast to t (a handle-cast rule: a
 * CUkernel for a launch's CUfunction). */
int cbs_arg_handle_cast_slow(PyObject *o, PyTypeObject *t, PyTypeObject *also, const char *func,
                             const char *param, unsigned long long *bits);

static CBS_ALWAYS_INLINE int cbs_arg_handle_cast(PyObject *o, PyTypeObject *t, PyTypeObject *also,
                                                const char *func, const char *param,
                                                unsigned long long *bits)
{
    if (Py_IS_TYPE(o, t) || Py_IS_TYPE(o, also)) {
        *bits = cbs_handle_bits((const cbs_handle *)o);
        return 0;
    }
    if (o == Py_None) {
        *bits = 0;
        return 0;
    }
    return cbs_arg_handle_cast_slow(o, t, also, func, param, bits);
}

/* ---- driver entry points -------------------------------------------------- */

/* One slot of a generated module's driver table. */
typedef struct {
    const char *name;          /* public name, for messages */
    const char *proc_name;     /* name passed to cuGetProcAddress */
    int version;               /* its cudaVersion argument */
} cbs_proc;

/* Resolves and publishes *slot (release) on first use; NULL with
 * DriverNotFoundError or FunctionNotFoundError set when impossible. Any
 * thread may race here: every racer stores the same pointer. */
void *cbs_resolve(const cubind_rt_api *rt, _Atomic(void *) *slot, const cbs_proc *proc,
                  PyObject *driver_not_found, PyObject *function_not_found);

static CBS_ALWAYS_INLINE void *cbs_proc_get(const cubind_rt_api *rt, _Atomic(void *) *slot,
                                            const cbs_proc *proc, PyObject *driver_not_found,
                                            PyObject *function_not_found)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (fn)
        return fn;
    return cbs_resolve(rt, slot, proc, driver_not_found, function_not_found);
}

/* Attribute lookups by a C name, through the interned str of the name
 * (see bind_support.c: a fresh str per lookup would stay referenced by
 * CPython's type attribute cache). cbs_attr: new reference or NULL with an
 * exception. cbs_optional_attr: 1 and a new reference, 0 and NULL when
 * absent (no exception), -1 on another error. cbs_has_attr: 1 or 0, any
 * error cleared (as PyObject_HasAttrString). */
PyObject *cbs_attr(PyObject *o, const char *name);

/* Sets attribute `name` of o to v through the interned name, as cbs_attr
 * reads one (a fresh name per call would be kept by the type attribute
 * cache: the library sweep's leak check, issue 42 item 9). 0, or -1 with an
 * exception set. */
int cbs_set_attr(PyObject *o, const char *name, PyObject *v);
int cbs_optional_attr(PyObject *o, const char *name, PyObject **out);
int cbs_has_attr(PyObject *o, const char *name);

/* Adds v to module as name, stealing the reference (also on failure). */
int cbs_module_add(PyObject *module, const char *name, PyObject *v);

/* Free-threaded builds, main interpreter only: makes the objects every
 * thread uses immortal (cbs_make_immortal: no shared reference count to
 * contend on): the module object itself, its functions and types
 * (exception classes excepted), the members of its n enums and their
 * metaclass. Call at the end of the module's exec,
 * before the module is visible to other threads. No-op elsewhere. */
void cbs_share_module_objects(PyObject *module, const cbs_enum *enums, size_t n);
/* The same for one more object the module's state holds and hands to every
 * thread (one created by this thread that no other thread has seen yet). */
void cbs_share_object(PyObject *o);

/* ---- import ------------------------------------------------------------- */

/* Imports cubind._runtime, checks its capsule signature (ImportError naming
 * both strings on mismatch) and returns its API; *runtime_module receives a
 * new reference to the module (to fetch the exception classes from). */
const cubind_rt_api *cbs_import_runtime(PyObject **runtime_module);

#endif
