/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_convert.c — see bind_convert.h: the converters (the slow half of
 * each kind's conversion; bind_convert.h has the fast half and the table),
 * the pointer forms, and the packer's one error helper.
 */
#include "bind_convert.h"
#include "bind_record.h"
#include "cubind_compat.h"

#include <stdarg.h>

/* ---- errors --------------------------------------------------------------- */

int cbs_arg_error(PyObject *exc, const arg_ref *a, const char *fmt, ...)
{
    PyObject *orig = NULL, *msg;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        msg = PyUnicode_FromFormatV(fmt, ap);
        va_end(ap);
    } else {
        orig = cbs_take_exception();
        if (orig && PyErr_GivenExceptionMatches(orig, PyExc_MemoryError)) {
            cbs_raise_exception(orig);
            return -1;
        }
        if (orig && PyErr_GivenExceptionMatches(orig, PyExc_OverflowError))
            exc = PyExc_OverflowError;
        msg = orig ? PyObject_Str(orig) : PyUnicode_FromString("conversion failed");
    }
    if (!msg) {
        Py_XDECREF(orig);
        return -1;
    }
    char type[64] = "";
    if (a->kernel) {
        char name[48];
        cbs_kt_name(a->type, a->size, name, sizeof name);
        snprintf(type, sizeof type, "%s: ", name);
    }
    const char *kq = a->kernel ? "'" : "";
    const char *kd = a->kernel ? "' declares " : "";
    const char *kn = a->kernel ? (a->kernel[0] ? a->kernel : "the kernel") : "";
    if (a->index >= 0)
        PyErr_Format(exc, "%s: %s %zd: %s%.200s%s%s%U", a->fname, a->what, a->index, kq, kn, kd,
                     type, msg);
    else
        PyErr_Format(exc, "%s: %s: %s%.200s%s%s%U", a->fname, a->what, kq, kn, kd, type, msg);
    Py_DECREF(msg);
    if (orig) {
        PyObject *mine = cbs_take_exception();
        if (!mine) {
            Py_DECREF(orig);
            return -1;
        }
        PyException_SetCause(mine, orig);
        cbs_raise_exception(mine);
    }
    return -1;
}

/* A value a typed parameter refuses: TEXT then the value's type and repr. */
#define REFUSE(exc, a, text, v) \
    cbs_arg_error((exc), (a), text " %.100s (%.80R)", Py_TYPE(v)->tp_name, (v))

/* ---- scalar writers ------------------------------------------------------- */

/* int_bits' general path: any int object, the range error named. */
int cbs_int_bits_slow(PyObject *v, long long min, unsigned long long umax, const char *range,
                         const arg_ref *a,
                         unsigned long long *bits)
{
    int overflow = 0;
    long long ll = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (ll == -1 && PyErr_Occurred())
        return cbs_arg_error(PyExc_TypeError, a, NULL);
    if (overflow == 0) {
        if (!signed_fits(ll, min, umax))
            goto range_error;
        *bits = (unsigned long long)ll;
        return 0;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            goto range_error;
        }
        if (u > umax)
            goto range_error;
        *bits = u;
        return 0;
    }
range_error:
    return cbs_arg_error(PyExc_OverflowError, a, "%R is out of range for %s", v, range);
}

/* Plain int into a `size`-byte parameter. Inlined (as put_float is) into
 * conv_by_size: every plain int and float of every launch takes it. */
static CBS_ALWAYS_INLINE int put_plain_int(PyObject *v, size_t size, unsigned char *dst,
                                           const arg_ref *a)
{
    if (!is_int_size(size))
        return cbs_arg_error(PyExc_TypeError, a,
                    "an int does not fit a %zu-byte parameter (pass bytes or a ctypes "
                    "Structure of that size)", size);
    unsigned long long bits;
    if (int_bits(v, size_min[size], size_umax[size], size_range[size], a, &bits) < 0)
        return -1;
    store_bits(dst, size, bits);
    return 0;
}

/* Copies exactly `size` bytes of o's buffer. 1: done; 0: o has no buffer. */
int cbs_put_buffer_exact(PyObject *o, size_t size, unsigned char *dst, const arg_ref *a)
{
    /* A str is text, never a parameter's bytes: numpy.str_ exports its
     * UCS-4 code points as a buffer ('x' would be the int 120). */
    if (!PyObject_CheckBuffer(o) || PyUnicode_Check(o))
        return 0;
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0)
        return cbs_arg_error(PyExc_TypeError, a, NULL);
    if ((size_t)view.len != size) {
        Py_ssize_t len = view.len;
        PyBuffer_Release(&view);
        return cbs_arg_error(PyExc_TypeError, a,
                    "%.100s of %zd bytes given for a %zu-byte parameter", Py_TYPE(o)->tp_name,
                    len, size);
    }
    memcpy(dst, view.buf, size);
    PyBuffer_Release(&view);
    return 1;
}

/* getPtr(): 1 and *addr; 0 when o has no callable getPtr; -1 on error. */
int cbs_call_getptr(PyObject *o, const arg_ref *a,
                       void **addr)
{
    if (cbs_is_handle(o)) {
        /* cubind's own handles (their classes can be neither subclassed
         * nor changed): getPtr() is the address of the value they hold. */
        *addr = cbs_handle_storage((cbs_handle *)o);
        return 1;
    }
    const unsigned char *rec;
    size_t rec_size;
    if (cbs_struct_bytes(o, &rec, &rec_size)) {
        /* cubind's structs (not subclassable either): getPtr() is the
         * address of their bytes */
        *addr = (void *)rec;
        return 1;
    }
    PyObject *m;
    int r = cbs_optional_attr(o, "getPtr", &m);
    if (r <= 0)
        return r < 0 ? cbs_arg_error(PyExc_TypeError, a, NULL) : 0;
    if (!PyCallable_Check(m)) {
        Py_DECREF(m);
        return 0;
    }
    PyObject *res = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    if (!res)
        return cbs_arg_error(PyExc_TypeError, a, NULL);
    if (!PyLong_Check(res)) {
        cbs_arg_error(PyExc_TypeError, a, "getPtr() of %.100s returned %.100s, not int",
             Py_TYPE(o)->tp_name, Py_TYPE(res)->tp_name);
        Py_DECREF(res);
        return -1;
    }
    unsigned long long bits;
    int rc = int_bits(res, 0, (unsigned long long)UINTPTR_MAX, "an address", a,
                      &bits);
    Py_DECREF(res);
    if (rc < 0)
        return -1;
    *addr = (void *)(uintptr_t)bits;
    return 1;
}

/* __cuda_array_interface__['data'][0]: 1 and *addr; 0 if absent; -1. */
int cbs_cai_pointer(PyObject *o, const arg_ref *a, unsigned long long *addr)
{
    PyObject *cai;
    int r = cbs_optional_attr(o, "__cuda_array_interface__", &cai);
    if (r <= 0)
        return r < 0 ? cbs_arg_error(PyExc_TypeError, a, NULL) : 0;
    PyObject *data = PyMapping_Check(cai) ? PyMapping_GetItemString(cai, "data") : NULL;
    Py_DECREF(cai);
    if (!data) {
        PyErr_Clear();
        return cbs_arg_error(PyExc_TypeError, a,
                    "__cuda_array_interface__ of %.100s has no 'data'", Py_TYPE(o)->tp_name);
    }
    PyObject *ptr = PySequence_Check(data) && PySequence_Size(data) >= 1
                        ? PySequence_GetItem(data, 0) : NULL;
    Py_DECREF(data);
    if (!ptr || !PyLong_Check(ptr)) {
        Py_XDECREF(ptr);
        PyErr_Clear();
        return cbs_arg_error(PyExc_TypeError, a,
                    "__cuda_array_interface__['data'] of %.100s is not (int, bool)",
                    Py_TYPE(o)->tp_name);
    }
    int rc = int_bits(ptr, 0, (unsigned long long)UINTPTR_MAX, "an address", a, addr);
    Py_DECREF(ptr);
    return rc < 0 ? -1 : 1;
}

/* ---- device pointers ------------------------------------------------------ */

/* DLPack's tensor header (dlpack.h, ABI-stable since v0.6): what a pointer
 * parameter reads of a producer's capsule. */
typedef struct {
    void *data;
    int32_t device_type, device_id;
    int32_t ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;

typedef struct {
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(void *);
    uint64_t flags;
    dl_tensor tensor;
} dl_versioned;

/* DLPack's device types of memory a kernel can address: CUDA, CUDA host
 * (pinned), CUDA managed. */
static int dl_cuda_device(long long t)
{
    return t == 2 || t == 3 || t == 13;
}

/* o.__dlpack__()'s data pointer, for an object on a CUDA device
 * (__dlpack_device__): 1 and *addr; 0 when o has no __dlpack_device__; -1.
 * The capsule is dropped unconsumed: its destructor gives the tensor back
 * to the producer; o keeps the memory alive for the launch. */
static int dlpack_pointer(PyObject *o, const arg_ref *a,
                          unsigned long long *addr)
{
    PyObject *m;
    int r = cbs_optional_attr(o, "__dlpack_device__", &m);
    if (r <= 0)
        return r < 0 ? cbs_arg_error(PyExc_TypeError, a, NULL) : 0;
    PyObject *dev = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    if (!dev)
        return cbs_arg_error(PyExc_TypeError, a, NULL);
    long long type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2) {
        type = PyLong_AsLongLong(PyTuple_GET_ITEM(dev, 0));
        if (type == -1 && PyErr_Occurred())
            PyErr_Clear();
    }
    Py_DECREF(dev);
    if (!dl_cuda_device(type))
        return cbs_arg_error(PyExc_TypeError, a,
                    "%.100s is on DLPack device type %lld, not CUDA memory",
                    Py_TYPE(o)->tp_name, type);
    PyObject *cap = PyObject_CallMethod(o, "__dlpack__", NULL);
    if (!cap)
        return cbs_arg_error(PyExc_TypeError, a, NULL);
    const dl_tensor *t = NULL;
    if (PyCapsule_IsValid(cap, "dltensor"))
        t = PyCapsule_GetPointer(cap, "dltensor"); /* DLManagedTensor starts with it */
    else if (PyCapsule_IsValid(cap, "dltensor_versioned"))
        t = &((const dl_versioned *)PyCapsule_GetPointer(cap, "dltensor_versioned"))->tensor;
    if (!t) {
        Py_DECREF(cap);
        return cbs_arg_error(PyExc_TypeError, a,
                    "__dlpack__() of %.100s did not return a DLPack capsule",
                    Py_TYPE(o)->tp_name);
    }
    *addr = (unsigned long long)(uintptr_t)t->data + t->byte_offset;
    Py_DECREF(cap);
    return 1;
}

/* The device address an object stands for, when it is one of the pointer
 * forms beyond ints and cubind handles: a cuda.bindings handle (getPtr()
 * and __int__: CUdeviceptr), __cuda_array_interface__, DLPack on a CUDA
 * device, or an object whose `handle` is one of these or an int
 * (cuda.core's Buffer). 1 and *addr, 0 when o is none of them, -1. */
int cbs_pointer_of(PyObject *o, const arg_ref *a, int depth,
                      unsigned long long *addr)
{
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (PyLong_Check(o) || (nb && nb->nb_index)) {
        PyObject *n = PyNumber_Index(o);
        if (!n)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        int rc = int_bits(n, 0, (unsigned long long)UINTPTR_MAX, "an address", a,
                          addr);
        Py_DECREF(n);
        return rc < 0 ? -1 : 1;
    }
    if (nb && nb->nb_int && !nb->nb_float) {
        PyObject *m;
        int r = cbs_optional_attr(o, "getPtr", &m);
        if (r < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        if (r > 0) {
            Py_DECREF(m);
            PyObject *n = PyNumber_Long(o);
            if (!n)
                return cbs_arg_error(PyExc_TypeError, a, NULL);
            r = int_bits(n, 0, (unsigned long long)UINTPTR_MAX, "an address", a,
                         addr);
            Py_DECREF(n);
            return r < 0 ? -1 : 1;
        }
    }
    int r = cbs_cai_pointer(o, a, addr);
    if (r != 0)
        return r;
    r = dlpack_pointer(o, a, addr);
    if (r != 0 || depth > 0)
        return r;
    PyObject *h;
    r = cbs_optional_attr(o, "handle", &h);
    if (r <= 0)
        return r < 0 ? cbs_arg_error(PyExc_TypeError, a, NULL) : 0;
    if (cbs_is_handle(h)) {
        *addr = cbs_handle_bits((const cbs_handle *)h);
        r = 1;
    } else {
        r = cbs_pointer_of(h, a, depth + 1, addr);
    }
    Py_DECREF(h);
    return r;
}

/* ---- value tests ------------------------------------------------------------ */

/* A numpy scalar (numpy.float64 subclasses float): converted only when
 * exact. Recognised by its type's module, without importing numpy. */
int cbs_is_numpy_scalar(PyObject *v)
{
    return strncmp(Py_TYPE(v)->tp_name, "numpy.", 6) == 0;
}

/* A complex number: Python's complex and its subclasses (numpy.complex128)
 * and numpy's other complex scalars (complex64, clongdouble), whose
 * __float__ drops the imaginary part: never a real parameter's value. */
int cbs_is_complex(PyObject *v)
{
    const char *n = Py_TYPE(v)->tp_name;
    return PyComplex_Check(v) || strncmp(n, "numpy.complex", 13) == 0 ||
           strncmp(n, "numpy.clong", 11) == 0;
}

/* numpy.bool_ (numpy.bool in numpy 2): a truth value, neither an integer
 * (its __index__ is deprecated, then gone) nor a float. */
int cbs_is_numpy_bool(PyObject *v)
{
    const char *n = Py_TYPE(v)->tp_name;
    return strcmp(n, "numpy.bool_") == 0 || strcmp(n, "numpy.bool") == 0;
}

/* ---- converters: a plain value into its kernel parameter's bytes ---------- */
/*
 * One converter per kind of parameter (cbs_kt_kind), in `converters`
 * below; argtypes=, the kernel's mangled name, its module's PTX and a
 * CUkernel's getters only choose the kind (the layout's or argtypes'
 * cbs_ktype), CBS_KT_UNKNOWN (no type known) choosing the converter by
 * size. A converter takes the value, the parameter's size and where its
 * bytes go, writes them (0) or raises through cbs_arg_error (-1), `a` naming
 * the parameter (and, for a known type, the kernel and the type).
 *
 * Each converter opens with its fast part (KIND_fast: the values nearly
 * every launch passes, without a call: a compact int in range, an exact
 * float, a cubind handle), which pack_items also tries inline before the
 * call (cbs_convert_fast: one jump on the kind); the fast part writes
 * exactly what its converter writes, or returns 0 and leaves it to the
 * converter (which names any error).
 */

/* A handle h's C value into an integer or pointer parameter of range
 * [min, max] (min <= 0): 1 when it fits and was written, else 0. */
static int put_handle_in(const cbs_handle *h, long long min, unsigned long long max, size_t size,
                         unsigned char *dst)
{
    unsigned long long bits = cbs_handle_bits(h);
    if (!(h->kind == CBS_HANDLE_I32 ? signed_fits((long long)bits, min, max) : bits <= max))
        return 0;
    store_bits(dst, size, bits);
    return 1;
}

/* The kind of the parameter `a` names (CBS_KT_UNKNOWN when by size). */
static cbs_kt_kind kind_of(const arg_ref *a)
{
    return a->kernel ? CBS_KT_KIND(a->type) : CBS_KT_UNKNOWN;
}

/* -- CBS_KT_UNKNOWN: by the parameter's size alone ------------------------- */

static int conv_by_size(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    if (by_size_fast(v, size, dst))
        return 0;
    if (PyLong_Check(v))
        return put_plain_int(v, size, dst, a);
    if (PyFloat_CheckExact(v))
        return put_float(PyFloat_AS_DOUBLE(v), size, dst, a);
    if (cbs_is_handle(v)) {
        /* The common case after int and float: the C value it holds, when
         * it fits the parameter, else its int() through put_plain_int (which
         * names the range); never the attribute lookups below (a failed
         * lookup costs an exception). */
        if (is_int_size(size) &&
            put_handle_in((const cbs_handle *)v, size_min[size], size_umax[size], size, dst))
            return 0;
        PyObject *n = PyNumber_Index(v);
        if (!n)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        int rc = put_plain_int(n, size, dst, a);
        Py_DECREF(n);
        return rc;
    }
    const unsigned char *rec;
    size_t rec_size;
    if (cbs_struct_bytes(v, &rec, &rec_size)) {
        /* A struct of the bindings (CUextent3D, ...) by value: its bytes,
         * copied now (the caller's tuple keeps it alive until then). */
        if (rec_size != size)
            return cbs_arg_error(PyExc_TypeError, a,
                             "%.100s of %zu bytes given for a %zu-byte parameter",
                             Py_TYPE(v)->tp_name, rec_size, size);
        memcpy(dst, rec, size);
        return 0;
    }
    int r;
    if (cbs_is_numpy_bool(v)) {
        /* as a Python bool (its buffer is 1 byte, whatever the parameter) */
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        return put_plain_int(b ? Py_True : Py_False, size, dst, a);
    }
    if (!PyBytes_CheckExact(v) && !PyByteArray_CheckExact(v)) {
        /* A device array is passed by its address, whatever else it is:
         * asked first, as CuPy's arrays also export the buffer protocol
         * (for host-accessible memory only; it raises for device memory). */
        unsigned long long addr;
        r = cbs_cai_pointer(v, a, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            if (size != 8)
                return cbs_arg_error(PyExc_TypeError, a,
                                 "a device array (__cuda_array_interface__) is a pointer: the "
                                 "parameter must have 8 bytes, not %zu", size);
            store_bits(dst, 8, addr);
            return 0;
        }
    }
    r = cbs_put_buffer_exact(v, size, dst, a);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (PyFloat_Check(v))
        return put_float(PyFloat_AS_DOUBLE(v), size, dst, a);
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    PyObject *n = NULL;
    if (nb && nb->nb_index) {
        n = PyNumber_Index(v);
    } else if (nb && nb->nb_int) {
        PyObject *m;
        r = cbs_optional_attr(v, "getPtr", &m);
        if (r < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        if (r > 0) {
            Py_DECREF(m);
            n = PyNumber_Long(v);
        }
    }
    if (!n && !PyErr_Occurred() && size == 8) {
        /* an 8-byte parameter may be a pointer: DLPack, cuda.core's Buffer */
        unsigned long long addr;
        r = cbs_pointer_of(v, a, 0, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            store_bits(dst, 8, addr);
            return 0;
        }
    }
    if (!n) {
        if (PyErr_Occurred())
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        return cbs_arg_error(PyExc_TypeError, a,
                         "cannot pass %.100s by value (expected int, float, a handle, bytes or "
                         "another buffer, a ctypes value or an object with "
                         "__cuda_array_interface__)", Py_TYPE(v)->tp_name);
    }
    r = put_plain_int(n, size, dst, a);
    Py_DECREF(n);
    return r;
}

/* -- the typed converters' shared steps ------------------------------------ */

/* The numeric forms every typed converter but the blob's reads alike: an
 * int, a numpy bool (as a Python bool: 0 or 1, exactly: its __index__ is
 * deprecated, and gone in numpy 2), or another object with __index__
 * (numpy integers: exactly). 1 with *n a new reference to the int and
 * *exact set, 0 when v is none of them, -1. */
static int typed_int_of(PyObject *v, const arg_ref *a, PyObject **n, int *exact)
{
    *exact = 0;
    if (PyLong_Check(v)) {
        *n = Py_NewRef(v);
        return 1;
    }
    if (cbs_is_numpy_bool(v)) {
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        *n = Py_NewRef(b ? Py_True : Py_False);
        *exact = 1;
        return 1;
    }
    return 0;
}

/* int(v) of an object with __index__: a new reference, or NULL raised. */
static PyObject *index_of(PyObject *v, const arg_ref *a)
{
    PyObject *n = PyNumber_Index(v);
    if (!n)
        cbs_arg_error(PyExc_TypeError, a, NULL);
    return n;
}

/* A device array (__cuda_array_interface__), asked before any number: CuPy
 * arrays and PyTorch tensors have __index__ and __float__ too; then, after
 * the numbers, DLPack or an object whose handle is a pointer (`late`).
 * 1 when written, 0 when v is neither, -1. */
static int typed_pointer(PyObject *v, int late, unsigned char *dst, const arg_ref *a)
{
    unsigned long long addr;
    int r = late ? cbs_pointer_of(v, a, 0, &addr) : cbs_cai_pointer(v, a, &addr);
    if (r > 0)
        store_bits(dst, 8, addr);
    return r;
}

/* bytes, a ctypes value or Structure, another buffer: its bytes, of exactly
 * the parameter's size; else what the type refuses. */
static int typed_bytes_or_refuse(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    int r = cbs_put_buffer_exact(v, size, dst, a);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return REFUSE(PyExc_TypeError, a, "cannot take", v);
}

/* A struct of the bindings: only a blob of its size takes one. */
static int typed_struct(PyObject *v, int blob, size_t size, unsigned char *dst,
                        const arg_ref *a)
{
    const unsigned char *rec;
    size_t rec_size;
    if (!cbs_struct_bytes(v, &rec, &rec_size))
        return 0;
    if (!blob || rec_size != size)
        return REFUSE(PyExc_TypeError, a, "cannot take", v);
    memcpy(dst, rec, size);
    return 1;
}

/* d into a floating parameter of `size` bytes; exact: only when the value
 * is that type's exactly (numpy scalars). */
static int float_from_double(double d, int exact, size_t size, unsigned char *dst,
                             const arg_ref *a, PyObject *v)
{
    if (size == 8) {
        memcpy(dst, &d, 8);
        return 0;
    }
    if (size == 4) {
        if (isfinite(d) && fabs(d) > FLT_MAX)
            return REFUSE(PyExc_OverflowError, a, "out of range:", v);
        float f = (float)d;
        if (exact && (double)f != d && !isnan(d))
            return REFUSE(PyExc_TypeError, a, "not exactly a float:", v);
        memcpy(dst, &f, 4);
        return 0;
    }
    if (size == 2) {
        if (PyFloat_Pack2(d, (char *)dst, 1) < 0) {
            PyErr_Clear();
            return REFUSE(PyExc_OverflowError, a, "out of range:", v);
        }
        if (exact && !isnan(d) && PyFloat_Unpack2((const char *)dst, 1) != d)
            return REFUSE(PyExc_TypeError, a, "not exactly a half:", v);
        return 0;
    }
    return REFUSE(PyExc_TypeError, a, "no float fits", v);
}

/* What a typed kind does with each form of value (convert_typed). */
typedef struct {
    /* An int object (exact: a numpy integer or bool, converted only when
     * the type holds it exactly), its value's bytes or the error. */
    int (*from_int)(PyObject *n, int exact, size_t size, unsigned char *dst, const arg_ref *a,
                    PyObject *v);
    int floats;              /* a numpy float converts (exactly), else refused */
    int handles;             /* a handle converts, else refused */
    int handle_fits;         /* its C value is written when in [hmin, hmax] */
    long long hmin;
    unsigned long long hmax;
    int pointers;            /* a device array, DLPack, a handle object: its address */
} typed_rules;

/* A typed kind's value after its fast part and its own float check, in
 * one order for every kind: an int or numpy bool, a handle (its value when
 * it fits, else its int(), which names the range), a struct (refused), a
 * device array before any number (CuPy arrays and PyTorch tensors have
 * __index__ and __float__ too), another object with __index__ (exactly),
 * a complex number (refused), a numpy float, the other pointer forms, a
 * buffer of exactly the parameter's size. */
static int convert_typed(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a,
                         const typed_rules *t)
{
    PyObject *n = NULL;
    int exact, r = typed_int_of(v, a, &n, &exact);
    if (r == 0 && cbs_is_handle(v)) {
        if (!t->handles)
            return REFUSE(PyExc_TypeError, a, "a handle given:", v);
        if (t->handle_fits && put_handle_in((const cbs_handle *)v, t->hmin, t->hmax, size, dst))
            return 0;
        r = (n = index_of(v, a)) ? 1 : -1;
    }
    if (r == 0 && (r = typed_struct(v, 0, size, dst, a)) != 0)
        return -1;
    if (r == 0 && t->pointers && (r = typed_pointer(v, 0, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    if (r == 0 && nb && nb->nb_index) {
        r = (n = index_of(v, a)) ? 1 : -1;
        exact = 1;
    }
    if (r < 0)
        return -1;
    if (r > 0) {
        r = t->from_int(n, exact, size, dst, a, v);
        Py_DECREF(n);
        return r;
    }
    if (cbs_is_complex(v))
        return REFUSE(PyExc_TypeError, a, "a complex number given:", v);
    if (nb && nb->nb_float && !PyBytes_Check(v)) {
        if (!t->floats)
            return REFUSE(PyExc_TypeError, a, "a float given:", v);
        double d = PyFloat_AsDouble(v); /* numpy floats: exactly */
        if (d == -1.0 && PyErr_Occurred())
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        return float_from_double(d, 1, size, dst, a, v);
    }
    if (t->pointers && (r = typed_pointer(v, 1, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    return typed_bytes_or_refuse(v, size, dst, a);
}

/* -- CBS_KT_INT, _UINT, _BITS, _BOOL: integers ----------------------------- */

/* An int object n into an integer parameter whose range is [min, max]
 * (ranged 0: a size no integer has): in that range, or an OverflowError
 * naming the type. */
static int integer_in_range(PyObject *n, int ranged, long long min, unsigned long long max,
                            size_t size, unsigned char *dst, const arg_ref *a, PyObject *v)
{
    unsigned long long bits;
    if (!ranged)
        return REFUSE(PyExc_TypeError, a, "an integer cannot be", v);
    if (int_bits(n, min, max, "its type", a, &bits) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
        return REFUSE(PyExc_OverflowError, a, "out of range:", v);
    }
    store_bits(dst, size, bits);
    return 0;
}

/* integer_in_range of the parameter's own kind (convert_typed's int form). */
static int integer_from_int(PyObject *n, int exact, size_t size, unsigned char *dst,
                            const arg_ref *a, PyObject *v)
{
    long long min = 0;
    unsigned long long max = 0;
    (void)exact; /* an integer type holds every integer of its range */
    int ranged = int_range(kind_of(a), size, &min, &max) == 0;
    return integer_in_range(n, ranged, min, max, size, dst, a, v);
}

/* Any integer kind: a compact int in range (the fast parts' general form,
 * for the other sizes), an int, a numpy bool or integer, a handle, in the
 * type's range; an 8-byte .bN also a pointer's forms. A float, a complex
 * number or a struct is refused. */
static int conv_integer(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    cbs_kt_kind k = kind_of(a);
    long long min = 0, small;
    unsigned long long max = 0;
    int ranged = int_range(k, size, &min, &max) == 0;
    if (cbs_compact_int(v, &small) && ranged && signed_fits(small, min, max)) {
        store_bits(dst, size, (unsigned long long)small);
        return 0;
    }
    if (PyFloat_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    if (PyLong_Check(v)) /* convert_typed's first form, without its reference */
        return integer_in_range(v, ranged, min, max, size, dst, a, v);
    typed_rules t = {integer_from_int, 0, 1, ranged, min, max, k == CBS_KT_BITS && size == 8};
    return convert_typed(v, size, dst, a, &t);
}

/* -- CBS_KT_PTR: pointers --------------------------------------------------- */

static int pointer_from_int(PyObject *n, int exact, size_t size, unsigned char *dst,
                            const arg_ref *a, PyObject *v)
{
    unsigned long long bits;
    (void)exact;
    if (size != 8)
        return REFUSE(PyExc_TypeError, a, "an integer cannot be", v);
    if (int_bits(n, 0, (unsigned long long)UINTPTR_MAX, "an address", a, &bits) < 0)
        return -1;
    store_bits(dst, 8, bits);
    return 0;
}

/* An int 0..2^64-1, a handle, a numpy integer, a device array
 * (__cuda_array_interface__, DLPack), a cuda.bindings handle (getPtr() and
 * __int__), an object whose `handle` is one of these (cuda.core's Buffer),
 * a buffer of 8 bytes. A float, a complex number or a struct is refused. */
static int conv_pointer(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    /* a handle's value fits an 8-byte pointer; another size: its int()
     * names the error */
    typed_rules t = {pointer_from_int, 0, 1, size == 8, 0, (unsigned long long)UINTPTR_MAX, 1};
    if (pointer_fast(v, size, dst))
        return 0;
    if (PyFloat_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    if (PyLong_Check(v)) /* convert_typed's first form, without its reference */
        return pointer_from_int(v, 0, size, dst, a, v);
    return convert_typed(v, size, dst, a, &t);
}

/* -- CBS_KT_FLOAT: floating types ------------------------------------------ */

/* An int object into a float32 as C converts a long long or unsigned long
 * long to float (one rounding, to nearest): 1 when written; 0 (no error
 * set) when n is outside both types, for the caller's double path. */
static int int_to_float32(PyObject *n, unsigned char *dst)
{
    int overflow;
    long long s = PyLong_AsLongLongAndOverflow(n, &overflow);
    float f;
    if (!overflow) {
        if (s == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        f = (float)s;
    } else if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(n);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear(); /* above 2**64: through a double (no C type holds it) */
            return 0;
        }
        f = (float)u;
    } else {
        return 0;
    }
    memcpy(dst, &f, 4);
    return 1;
}

/* An int object into a floating parameter as C converts an integer to a
 * floating type: rounded once, from the integer itself where a C integer
 * type holds it (through a double, an int above 2**53 would be rounded
 * twice); exact: only when the type holds it exactly. */
static int float_from_int(PyObject *n, int exact, size_t size, unsigned char *dst,
                          const arg_ref *a, PyObject *v)
{
    if (size == 4 && !exact && int_to_float32(n, dst))
        return 0;
    double d = PyLong_AsDouble(n);
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return REFUSE(PyExc_OverflowError, a, "out of range:", v);
    }
    if (exact) {
        PyObject *back = PyLong_FromDouble(d);
        int same = back ? PyObject_RichCompareBool(back, n, Py_EQ) : -1;
        Py_XDECREF(back);
        if (same < 0)
            return -1;
        if (!same)
            return REFUSE(PyExc_TypeError, a, "not exactly representable:", v);
    }
    return float_from_double(d, exact, size, dst, a, v);
}

/* A float (numpy's only when exact), an int (rounded, as C converts), a
 * numpy bool or integer (exactly). A handle, a complex number or a struct
 * is refused. */
static int conv_float(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    static const typed_rules t = {float_from_int, 1, 0, 0, 0, 0, 0};
    if (float_fast(v, size, dst))
        return 0;
    if (PyFloat_Check(v)) /* numpy.float64 is a float too: exact only */
        return float_from_double(PyFloat_AS_DOUBLE(v), cbs_is_numpy_scalar(v), size, dst, a, v);
    if (PyLong_Check(v)) /* convert_typed's first form, without its reference */
        return float_from_int(v, 0, size, dst, a, v);
    return convert_typed(v, size, dst, a, &t);
}

/* -- CBS_KT_BLOB: a user type by value ------------------------------------- */

/* bytes, a struct of the bindings or another buffer of exactly its size.
 * A number or a handle is refused. */
static int conv_blob(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    if (PyFloat_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    if (PyLong_Check(v))
        return REFUSE(PyExc_TypeError, a, "an integer cannot be", v);
    if (cbs_is_handle(v))
        return REFUSE(PyExc_TypeError, a, "a handle given:", v);
    int r = typed_struct(v, 1, size, dst, a);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return typed_bytes_or_refuse(v, size, dst, a);
}

/* -- the table --------------------------------------------------------------- */

typedef int (*converter)(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a);

#define CBS_CONVERTER_ENTRY(kind, fast, conv) [kind] = conv,
static const converter converters[] = {CBS_CONVERTERS(CBS_CONVERTER_ENTRY)};
#undef CBS_CONVERTER_ENTRY

int cbs_convert(PyObject *v, cbs_ktype t, size_t size, unsigned char *dst, const char *fname,
                Py_ssize_t index, const char *kernel)
{
    cbs_kt_kind k = CBS_KT_KIND(t);
    arg_ref a = {fname, "kernel parameter", index, k != CBS_KT_UNKNOWN ? kernel : NULL, t, size};
    if ((size_t)k >= sizeof converters / sizeof converters[0] || !converters[k])
        return cbs_arg_error(PyExc_SystemError, &a, "no converter for kind %d", (int)k);
    return converters[k](v, size, dst, &a);
}
