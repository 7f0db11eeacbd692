/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_convert.h — a Python value into a kernel parameter's bytes: the
 * packer's table of converters, keyed by the parameter's kind (cbs_kt_kind,
 * bind_kernel_types.h), the scalar writers and pointer forms they share
 * with the (values, types) form, and the packer's one error helper.
 *
 * The table is CBS_CONVERTERS: kind -> (fast part, converter). A
 * converter (bind_convert.c) takes the value, the parameter's size and
 * where its bytes go, and writes them (0) or raises through
 * cbs_arg_error (-1). Its fast part, inline here, writes the values nearly
 * every launch passes without a call (a compact int in range, an exact
 * float, a cubind handle) and returns 1, or returns 0 and leaves the value
 * to the converter, which opens with the same fast part and names any
 * error. The packing loop (bind_packer.c) tries cbs_convert_fast, then
 * cbs_convert. docs/ARCHITECTURE.md shows the table.
 *
 * Stateless; no Python object is kept.
 */
#ifndef CUBIND_BIND_CONVERT_H
#define CUBIND_BIND_CONVERT_H

#include "bind_kernel_types.h"
#include "bind_support.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Which argument a message names: the function ("cuLaunchKernel()"),
 * what the argument is ("kernel parameter", "extra item", "kernelParams",
 * "argtypes item"), its index (-1: the argument as a whole) and, for a
 * kernel parameter of known type, the kernel's name and that type. */
typedef struct {
    const char *fname;
    const char *what;
    Py_ssize_t index;
    const char *kernel;     /* NULL: the type is not known (by size) */
    cbs_ktype type;         /* the declared type, when kernel is set */
    size_t size;            /* the parameter's size, for the type's name */
} arg_ref;

#define AT(fname, what, index) (&(arg_ref){(fname), (what), (index), NULL, 0, 0})

/* The packer's one way to raise: `exc` with the message
 * "FNAME: WHAT INDEX: ['KERNEL' declares TYPE: ]TEXT", TEXT from fmt.
 * fmt NULL re-raises the pending exception so (for exceptions from user
 * code or ctypes), TEXT its str and the original kept as __cause__;
 * an OverflowError stays an OverflowError, a MemoryError is left as it is.
 * Returns -1. */
int cbs_arg_error(PyObject *exc, const arg_ref *a, const char *fmt, ...);

/* ---- forms the converters and the (values, types) form share ------------- */

/* int_bits' general path: any int object, the range error named. */
int cbs_int_bits_slow(PyObject *v, long long min, unsigned long long umax, const char *range,
                      const arg_ref *a, unsigned long long *bits);
/* Copies exactly `size` bytes of o's buffer. 1: done; 0: o has no buffer;
 * -1 raised (another size). */
int cbs_put_buffer_exact(PyObject *o, size_t size, unsigned char *dst, const arg_ref *a);
/* getPtr(): 1 and *addr; 0 when o has no callable getPtr; -1 raised. */
int cbs_call_getptr(PyObject *o, const arg_ref *a, void **addr);
/* __cuda_array_interface__['data'][0]: 1 and *addr; 0 if absent; -1. */
int cbs_cai_pointer(PyObject *o, const arg_ref *a, unsigned long long *addr);
/* The device address o stands for beyond ints and cubind handles (a
 * cuda.bindings handle, a device array, DLPack, an object whose `handle`
 * is one of these): 1 and *addr, 0 when o is none of them, -1. */
int cbs_pointer_of(PyObject *o, const arg_ref *a, int depth, unsigned long long *addr);
/* numpy scalars (by their type's module), complex numbers, numpy bools. */
int cbs_is_numpy_scalar(PyObject *v);
int cbs_is_complex(PyObject *v);
int cbs_is_numpy_bool(PyObject *v);

/* ---- scalar writers and the converters' fast parts ------------------------- */

static inline void store_bits(unsigned char *dst, size_t size, unsigned long long bits)
{
    switch (size) {
    case 1: { uint8_t v = (uint8_t)bits; memcpy(dst, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)bits; memcpy(dst, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(dst, &v, 4); break; }
    default: { uint64_t v = (uint64_t)bits; memcpy(dst, &v, 8); break; }
    }
}

/* ll in [min, umax] (min <= 0). */
static inline int signed_fits(long long ll, long long min, unsigned long long umax)
{
    return ll >= min && (ll <= 0 || (unsigned long long)ll <= umax);
}

/* An int object in [min, umax] (min <= 0): its two's complement bits.
 * 0, or -1 with OverflowError (range) or another error set. Inline: a
 * small int in range (the common case: every packed int) without a call. */
static CBS_ALWAYS_INLINE int int_bits(PyObject *v, long long min, unsigned long long umax,
                                      const char *range, const arg_ref *a, unsigned long long *bits)
{
    long long ll;
    if (cbs_compact_int(v, &ll) && signed_fits(ll, min, umax)) {
        *bits = (unsigned long long)ll;
        return 0;
    }
    return cbs_int_bits_slow(v, min, umax, range, a, bits);
}

static const long long size_min[9] = {0, -128, -32768, 0, -2147483647LL - 1, 0, 0, 0,
                                      -9223372036854775807LL - 1};
static const unsigned long long size_umax[9] = {0, 0xFFULL, 0xFFFFULL, 0, 0xFFFFFFFFULL, 0, 0, 0,
                                                0xFFFFFFFFFFFFFFFFULL};
static const char *const size_range[9] = {
    NULL, "a 1-byte integer (-128..255)", "a 2-byte integer (-32768..65535)", NULL,
    "a 4-byte integer (-2147483648..4294967295)", NULL, NULL, NULL,
    "an 8-byte integer (-2**63..2**64-1)"};

static inline int is_int_size(size_t size)
{
    return size == 1 || size == 2 || size == 4 || size == 8;
}

static CBS_ALWAYS_INLINE int put_float(double d, size_t size, unsigned char *dst,
                                       const arg_ref *a)
{
    if (size == 4) {
        if (isfinite(d) && fabs(d) > FLT_MAX) {
            char text[40];
            snprintf(text, sizeof text, "%.17g", d);
            return cbs_arg_error(PyExc_OverflowError, a,
                        "%s is out of range for a float32", text);
        }
        float f = (float)d;
        memcpy(dst, &f, 4);
        return 0;
    }
    if (size == 8) {
        memcpy(dst, &d, 8);
        return 0;
    }
    return cbs_arg_error(PyExc_TypeError, a,
                "a float does not fit a %zu-byte parameter (4: float32, 8: float64)", size);
}

/* A float into a 4- or 8-byte floating parameter, without a call: 1 when
 * written, 0 when put_float must name the error (out of float's range, or
 * another size). */
static CBS_ALWAYS_INLINE int put_float_common(double d, size_t size, unsigned char *dst)
{
    if (size == 8) {
        memcpy(dst, &d, 8);
        return 1;
    }
    if (size == 4 && !(fabs(d) > FLT_MAX && isfinite(d))) {
        float f = (float)d;
        memcpy(dst, &f, 4);
        return 1;
    }
    return 0;
}

/* A compact int v (cbs_compact_int) in [min, max] into `size` bytes: 1
 * when written, 0 when v is another object or out of that range. */
static CBS_ALWAYS_INLINE int put_compact_in(PyObject *v, long long min, long long max,
                                            size_t size, unsigned char *dst)
{
    long long small;
    if (!cbs_compact_int(v, &small) || small < min || small > max)
        return 0;
    store_bits(dst, size, (unsigned long long)small);
    return 1;
}

/* An 8-byte handle of v's bits into a pointer or an 8-byte integer
 * parameter that takes every 64-bit pattern: 1 when written. */
static CBS_ALWAYS_INLINE int put_handle64(PyObject *v, unsigned char *dst)
{
    if (!cbs_is_handle(v) || ((const cbs_handle *)v)->kind == CBS_HANDLE_I32)
        return 0;
    uint64_t bits = cbs_handle_bits((const cbs_handle *)v);
    memcpy(dst, &bits, 8);
    return 1;
}

/* An integer parameter's range: signed, unsigned, either (PTX's .uN and
 * .bN: nvcc declares an int .u32) or bool. -1 for a size no integer has. */
static CBS_ALWAYS_INLINE int int_range(cbs_kt_kind k, size_t size, long long *min,
                                       unsigned long long *max)
{
    if (!is_int_size(size))
        return -1;
    if (k == CBS_KT_BOOL) {
        *min = 0;
        *max = 1;
    } else if (k == CBS_KT_INT) {
        *min = size_min[size];
        *max = size_umax[size] >> 1;
    } else if (k == CBS_KT_BITS) {
        *min = size_min[size];
        *max = size_umax[size];
    } else {
        *min = 0;
        *max = size_umax[size];
    }
    return 0;
}

/* An int (of one digit or so) in a 4- or 8-byte parameter, an exact float
 * in a 4- or 8-byte one, a handle in an 8-byte one. */
static CBS_ALWAYS_INLINE int by_size_fast(PyObject *v, size_t size, unsigned char *dst)
{
    long long small;
    if (cbs_compact_int(v, &small)) {
        if (size == 8) {
            uint64_t bits = (uint64_t)small;
            memcpy(dst, &bits, 8);
            return 1;
        }
        if (size == 4 && small >= INT32_MIN && small <= (long long)UINT32_MAX) {
            uint32_t bits = (uint32_t)small;
            memcpy(dst, &bits, 4);
            return 1;
        }
        return 0;
    }
    if (PyFloat_CheckExact(v))
        return put_float_common(PyFloat_AS_DOUBLE(v), size, dst);
    if (size == 8 && cbs_is_handle(v)) {
        uint64_t bits = cbs_handle_bits((const cbs_handle *)v);
        memcpy(dst, &bits, 8);
        return 1;
    }
    return 0;
}

/* A compact int v in the range of integer kind k, `size` bytes: 1 when
 * written (the integer fast parts' general form, for the sizes they do not
 * name). */
static CBS_ALWAYS_INLINE int compact_in_kind(PyObject *v, cbs_kt_kind k, size_t size,
                                             unsigned char *dst)
{
    long long min, small;
    unsigned long long max;
    if (!cbs_compact_int(v, &small) || int_range(k, size, &min, &max) < 0 ||
        !signed_fits(small, min, max))
        return 0;
    store_bits(dst, size, (unsigned long long)small);
    return 1;
}

/* A compact int in the kind's range, for the sizes kernels declare most
 * with their ranges as constants (a compact int's value is a Py_ssize_t,
 * so the 8-byte ranges end at LLONG_MAX); an 8-byte parameter that takes
 * every 64-bit pattern also a handle's bits. */
static CBS_ALWAYS_INLINE int int_fast(PyObject *v, size_t size, unsigned char *dst)
{
    if (size == 4)
        return put_compact_in(v, INT32_MIN, INT32_MAX, 4, dst);
    if (size == 8)
        return put_compact_in(v, LLONG_MIN, LLONG_MAX, 8, dst);
    return compact_in_kind(v, CBS_KT_INT, size, dst);
}

static CBS_ALWAYS_INLINE int uint_fast(PyObject *v, size_t size, unsigned char *dst)
{
    if (size == 4)
        return put_compact_in(v, 0, UINT32_MAX, 4, dst);
    if (size == 8)
        return put_compact_in(v, 0, LLONG_MAX, 8, dst) || put_handle64(v, dst);
    return compact_in_kind(v, CBS_KT_UINT, size, dst);
}

static CBS_ALWAYS_INLINE int bits_fast(PyObject *v, size_t size, unsigned char *dst)
{
    if (size == 4)
        return put_compact_in(v, INT32_MIN, UINT32_MAX, 4, dst);
    if (size == 8)
        return put_compact_in(v, LLONG_MIN, LLONG_MAX, 8, dst) || put_handle64(v, dst);
    return compact_in_kind(v, CBS_KT_BITS, size, dst);
}

static CBS_ALWAYS_INLINE int bool_fast(PyObject *v, size_t size, unsigned char *dst)
{
    return compact_in_kind(v, CBS_KT_BOOL, size, dst);
}

static CBS_ALWAYS_INLINE int pointer_fast(PyObject *v, size_t size, unsigned char *dst)
{
    return size == 8 && (put_compact_in(v, 0, LLONG_MAX, 8, dst) || put_handle64(v, dst));
}

static CBS_ALWAYS_INLINE int float_fast(PyObject *v, size_t size, unsigned char *dst)
{
    return PyFloat_CheckExact(v) && put_float_common(PyFloat_AS_DOUBLE(v), size, dst);
}

static CBS_ALWAYS_INLINE int blob_fast(PyObject *v, size_t size, unsigned char *dst)
{
    (void)v, (void)size, (void)dst;
    return 0;
}

/* kind -> (fast part, converter): the one place that maps a parameter's
 * kind to how its value becomes bytes (docs/ARCHITECTURE.md shows it). */
#define CBS_CONVERTERS(X)                         \
    X(CBS_KT_UNKNOWN, by_size_fast, conv_by_size) \
    X(CBS_KT_INT, int_fast, conv_integer)         \
    X(CBS_KT_UINT, uint_fast, conv_integer)       \
    X(CBS_KT_BITS, bits_fast, conv_integer)       \
    X(CBS_KT_BOOL, bool_fast, conv_integer)       \
    X(CBS_KT_FLOAT, float_fast, conv_float)       \
    X(CBS_KT_PTR, pointer_fast, conv_pointer)     \
    X(CBS_KT_BLOB, blob_fast, conv_blob)

/* The fast part of t's converter, inline: 1 when v was written. */
static CBS_ALWAYS_INLINE int cbs_convert_fast(PyObject *v, cbs_ktype t, size_t size,
                                              unsigned char *dst)
{
    switch (CBS_KT_KIND(t)) {
#define CBS_CONVERTER_CASE(kind, fast, conv) \
    case kind:                                \
        return fast(v, size, dst);
        CBS_CONVERTERS(CBS_CONVERTER_CASE)
#undef CBS_CONVERTER_CASE
    }
    return 0;
}

/* Parameter `index` of kernel `kernel` (its name, "" when unknown), of type
 * t (CBS_KT_UNKNOWN: by size), `size` bytes at dst: its converter. 0, or
 * -1 raised naming fname, the parameter and, for a known t, the kernel and
 * t. Not inline: the packing loop calls it only for what the fast parts
 * leave, and keeps its own frame small. */
int cbs_convert(PyObject *v, cbs_ktype t, size_t size, unsigned char *dst, const char *fname,
                Py_ssize_t index, const char *kernel);

#endif
