/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_packer.c — the kernel parameter packer (see bind_packer.h).
 *
 * Conversions
 * -----------
 * (values, types), cuda.bindings' form. Every parameter gets its own slot
 * (8 bytes, zeroed, 16-aligned regions for larger ctypes types) and
 * params[i] points at it, except where noted:
 *   c_bool          truth value of the object (c_bool instances included)
 *   c_char          bytes/bytearray of length 1, an int 0..255, a c_char
 *   c_wchar         str of length 1, a c_wchar
 *   c_byte ... c_ulonglong, c_size_t
 *                   an int (enums included) or an object with __index__ in
 *                   the C type's range (unsigned types also take the
 *                   negative half of the signed range, two's complement, as
 *                   ctypes does), or an instance of that very type
 *   c_float         a float/int/object with __float__ (finite values beyond
 *                   float32's range are an OverflowError), a c_float; a
 *                   numpy scalar only when float32 holds it exactly
 *   c_double        same for float64, and a c_float (as cuda.bindings allows)
 *   c_void_p        an int 0..2^64-1, a c_void_p, or an object with getPtr()
 *                   whose result is stored (cuda.bindings' semantics: the
 *                   address of the object's storage); else what a pointer
 *                   takes in the typed paths (pointer_of: a device array,
 *                   DLPack, an object whose handle is one)
 *   None            an object with getPtr() (a handle, a struct of the
 *                   bindings, cuda.bindings' objects): params[i] = getPtr()
 *                   (the object's storage: the kernel receives its C value
 *                   or the struct's bytes); an
 *                   object with the buffer protocol (a ctypes Structure, ...):
 *                   params[i] = its buffer (view held); an enum member (an
 *                   int subclass with _value2member_map_): an int32
 *   another ctypes type (Structure, Union, Array, or a simple type other
 *                   than the above): an instance of it (a simple type also
 *                   converts by calling the type), its bytes copied
 * Standard ctypes scalar types are recognised by identity with the ctypes
 * attribute of that name, read once per interpreter (cbs_ctypes_cache,
 * bind_packer.h); other types by their `_type_` code and base classes, once
 * per distinct type per call (a small per-call table); values then convert
 * without ctypes. cubind's own handles' and structs' getPtr() is read
 * without a call.
 *
 * Plain values: parameter i has (offset_i, size_i) from cuFuncGetParamInfo;
 * all values go into one buffer at those offsets. Each value is converted
 * by the converter of its parameter's kind (the table `converters`, under
 * "converters" below; docs/ARCHITECTURE.md shows it): the kind comes from
 * argtypes=, else from the layout, which types the parameters from the
 * kernel's mangled name or its module's PTX (bind_kernel_types.h;
 * docs/kernel-arguments.md has the table), else is CBS_KT_UNKNOWN, whose
 * converter goes by the parameter's size. Nothing else decides how a plain
 * value becomes bytes.
 *   integer kinds  int, bool, enum, handle, __index__ in the type's range
 *                  (OverflowError); a float is a TypeError
 *   floating kind  int (rounded, as C converts), float; numpy scalars only
 *                  when exactly representable; a handle is a TypeError
 *   pointer kind   int 0..2^64-1, handles, getPtr()+__int__ handles,
 *                  __cuda_array_interface__, DLPack on a CUDA device, an
 *                  object whose `handle` is one of these (cuda.core's
 *                  Buffer); a float is a TypeError
 *   blob kind      bytes, bindings structs, buffers of exactly their size
 *   any known kind a buffer of exactly its size, copied
 * Errors of a known kind name the parameter's index, the kernel and the
 * declared type. Where the type is not known, by the parameter's size:
 *   int / bool / int subclass (enums)  -> an integer of size_i bytes (1, 2,
 *       4, 8), range -2^(8s-1) .. 2^(8s)-1 (signed or unsigned)
 *   float (exactly)                    -> float32 (size 4) or float64 (8)
 *   buffer-protocol object (bytes, ctypes instance or Structure, NumPy
 *       scalar or array)               -> its bytes; its length must be size_i
 *   a struct of the bindings (cbs_struct_bytes: CUextent3D, ...) -> its
 *       bytes; its size must be size_i
 *   float subclass without a buffer    -> as float
 *   __cuda_array_interface__           -> data[0], size_i must be 8
 *   __index__ (cubind handles)         -> as int
 *   getPtr() and __int__ (cuda.bindings handles) -> int(obj), as int
 *   DLPack, cuda.core Buffer (size_i 8) -> the device address
 * A wrong count, a size no rule covers, or a value out of range raises
 * before anything is launched, naming the parameter. Every error of the
 * packer is raised by arg_error. Each converter opens with its fast part
 * (inline, no call: the values nearly every launch passes), which the
 * packing loop tries before calling the converter (convert_fast: one jump
 * on the kind); both write the same bytes for any value the fast part
 * takes.
 *
 * Kernel layouts
 * --------------
 * No global mutable state here: a kernel's layout is the meta of its entry
 * in the shared registry of cubind._runtime (kind CUBIND_REG_KERNEL_LAYOUT
 * keyed by the CUfunction value, CUBIND_REG_KERNEL_LAYOUT_KERN by the
 * CUkernel value), with the parameters' types where known (type_kernel:
 * the kernel's name and its module's PTX table, asked once, with the
 * layout; launches read them from the cached layout), computed outside
 * any lock by the first launch and
 * registered with it; a racing first launch that finds the key taken uses
 * its own copy once. An entry is immutable; a launch holds a reference to
 * it while packing.
 *
 * Hazard: the driver may reuse a CUfunction's value for another kernel
 * after cuModuleUnload / cuLibraryUnload. Three defences:
 *   1. cubind's cuModuleUnload and cuLibraryUnload (the `unloads-kernels`
 *      rule) call rt->kernels_unloaded() after a successful unload: the
 *      epoch is bumped, then every layout entry unmapped;
 *   2. a layout records the epoch it was computed at (read before asking
 *      the driver): one computed by a launch racing with an unload is
 *      stale, never used again, and replaced;
 *   3. a value count different from the cached count re-queries the layout
 *      before reporting a count error.
 * What stays undetected: a module unloaded by another library (not through
 * cubind) whose CUfunction value the driver hands out again for a kernel
 * with the same parameter count. Launches do not re-query the driver: one
 * cuFuncGetParamInfo per launch cost about as much as the rest of packing.
 */
#include "bind_packer.h"
#include "bind_kernel_code.h"
#include "bind_kernel_types.h"
#include "bind_layout.h"
#include "bind_record.h"
#include "cubind_compat.h"
#include "rt_alloc.h"

#include <cuda.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <wchar.h>

typedef CUresult (*param_info_fn)(CUfunction, size_t, size_t *, size_t *);

/* ---- errors --------------------------------------------------------------- */

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
static int arg_error(PyObject *exc, const arg_ref *a, const char *fmt, ...)
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
    arg_error((exc), (a), text " %.100s (%.80R)", Py_TYPE(v)->tp_name, (v))

/* ---- storage -------------------------------------------------------------- */

void cbs_pack_release_owned(cbs_packed *p)
{
    for (Py_ssize_t i = 0; i < p->nviews; i++)
        PyBuffer_Release(&p->views[i]);
    if (p->views != p->inline_views)
        PyMem_Free(p->views);
    PyMem_Free(p->heap_params); /* PyMem_Free(NULL) does nothing */
    PyMem_Free(p->heap_data);
    Py_CLEAR(p->keep);
    cbs_pack_init(p);
}

/* ---- detached packs (owned by a struct field) ----------------------------- */

#define CBS_PACK_BLOCK "cubind.packed_kernel_params"

/* One PyMem block: this header, then nparams pointers, then (16-aligned)
 * ndata argument bytes. views is a separate PyMem array whose Py_buffers
 * never move after acquisition.
 *
 * The detached pack is a 2-tuple (capsule owning the block, the values):
 * the values are held by the tuple, not by the capsule, so the garbage
 * collector sees them (a tuple is traversed) and a cycle through them (a
 * struct whose kernelParams hold the struct itself) is collected: the
 * struct's clear drops the tuple. Buffer views hold their exporters
 * invisibly to the collector, as every Py_buffer does. */
typedef struct {
    Py_buffer *views;
    Py_ssize_t nviews;
} pack_block;

static void pack_block_free(PyObject *capsule)
{
    pack_block *b = PyCapsule_GetPointer(capsule, CBS_PACK_BLOCK);
    if (!b)
        return;
    for (Py_ssize_t i = 0; i < b->nviews; i++)
        PyBuffer_Release(&b->views[i]);
    PyMem_Free(b->views);
    PyMem_Free(b);
}

PyObject *cbs_pack_detach(cbs_packed *p, void ***params)
{
    size_t head = (sizeof(pack_block) + 15) & ~(size_t)15;
    size_t ptrs = (p->nparams * sizeof(void *) + 15) & ~(size_t)15;
    int copied = p->params && (p->params == p->inline_params ||
                               (void *)p->params == p->heap_params);
    PyObject *cap, *owner = NULL;
    pack_block *b = PyMem_Calloc(1, head + (copied ? ptrs + p->ndata : 0));
    if (!b) {
        PyErr_NoMemory();
        goto done;
    }
    if (p->nviews) {
        b->views = PyMem_Calloc((size_t)p->nviews, sizeof(Py_buffer));
        if (!b->views) {
            PyMem_Free(b);
            PyErr_NoMemory();
            goto done;
        }
    }
    /* Same exporters, same flags: while the old views are held the objects
     * cannot resize, so each new view has the same buf. */
    for (Py_ssize_t i = 0; i < p->nviews; i++) {
        if (PyObject_GetBuffer(p->views[i].obj, &b->views[i], PyBUF_ANY_CONTIGUOUS) < 0 ||
            b->views[i].buf != p->views[i].buf) {
            if (!PyErr_Occurred()) {
                PyBuffer_Release(&b->views[i]);
                PyErr_SetString(PyExc_BufferError, "a kernel argument's buffer moved");
            }
            for (Py_ssize_t k = 0; k < i; k++)
                PyBuffer_Release(&b->views[k]);
            PyMem_Free(b->views);
            PyMem_Free(b);
            goto done;
        }
        b->nviews = i + 1;
    }
    *params = p->params;
    if (copied) {
        void **np = (void **)((unsigned char *)b + head);
        unsigned char *nd = (unsigned char *)np + ptrs;
        memcpy(nd, p->data, p->ndata);
        for (size_t k = 0; k < p->nparams; k++) {
            /* pointers into the argument bytes move with them (compared as
             * integers: the others point into unrelated objects) */
            uintptr_t q = (uintptr_t)p->params[k], d = (uintptr_t)p->data;
            int inside = p->data && q >= d && q - d <= p->ndata;
            np[k] = inside ? (void *)(nd + (q - d)) : p->params[k];
        }
        *params = np;
    }
    cap = PyCapsule_New(b, CBS_PACK_BLOCK, pack_block_free);
    if (!cap) {
        for (Py_ssize_t i = 0; i < b->nviews; i++)
            PyBuffer_Release(&b->views[i]);
        PyMem_Free(b->views);
        PyMem_Free(b);
        goto done;
    }
    PyObject *values = p->keep ? p->keep : p->borrowed;
    owner = PyTuple_Pack(2, cap, values ? values : Py_None);
    Py_DECREF(cap);
done:
    cbs_pack_release(p);
    return owner;
}

/* params: nparams pointers; data: nbytes (16-aligned); views: room for
 * nviews held buffers (reserved up front: a Py_buffer never moves once its
 * exporter has filled it in). */
static int reserve(cbs_packed *p, size_t nparams, size_t nbytes, size_t nviews)
{
    p->nparams = nparams;
    p->ndata = nbytes;
    if (nparams <= CBS_PACK_INLINE_PARAMS) {
        p->params = p->inline_params;
    } else {
        if (nparams > PY_SSIZE_T_MAX / sizeof(void *)) {
            PyErr_NoMemory();
            return -1;
        }
        p->heap_params = PyMem_Malloc(nparams * sizeof(void *));
        if (!p->heap_params) {
            PyErr_NoMemory();
            return -1;
        }
        p->params = p->heap_params;
    }
    if (nbytes <= CBS_PACK_INLINE_BYTES) {
        p->data = p->inline_data;
    } else {
        /* PyMem_Malloc's blocks are 16-aligned on 64-bit platforms. */
        p->heap_data = PyMem_Malloc(nbytes);
        if (!p->heap_data) {
            PyErr_NoMemory();
            return -1;
        }
        p->data = p->heap_data;
    }
    if (nviews > (size_t)p->views_cap) {
        if (nviews > PY_SSIZE_T_MAX / sizeof(Py_buffer)) {
            PyErr_NoMemory();
            return -1;
        }
        Py_buffer *v = PyMem_Malloc(nviews * sizeof(Py_buffer));
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        p->views = v;
        p->views_cap = (Py_ssize_t)nviews;
    }
    return 0;
}

/* Acquires a view into the next reserved slot (held until release).
 * Bounded by what reserve() set aside, whatever the first pass counted:
 * Python code run between the passes (a getPtr() or __index__ found
 * through __getattr__, say) can give a value's class the buffer protocol,
 * and a view past the reserved slots would be written over the stack. */
static Py_buffer *hold_view(cbs_packed *p, PyObject *o, int flags)
{
    if (p->nviews >= p->views_cap) {
        PyErr_Format(PyExc_RuntimeError,
                     "%.100s gained the buffer protocol while the kernel's arguments "
                     "were converted", Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_buffer *v = &p->views[p->nviews];
    if (PyObject_GetBuffer(o, v, flags) < 0)
        return NULL;
    p->nviews++;
    return v;
}

/* A snapshot of a tuple or list: the items stay alive while we call into
 * Python (getPtr(), __index__, ...) even if another thread edits the list. */
static PyObject *snapshot(PyObject *seq)
{
    if (PyTuple_Check(seq))
        return Py_NewRef(seq);
    return PyList_AsTuple(seq);
}

/* ---- scalar writers ------------------------------------------------------- */

static void store_bits(unsigned char *dst, size_t size, unsigned long long bits)
{
    switch (size) {
    case 1: { uint8_t v = (uint8_t)bits; memcpy(dst, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)bits; memcpy(dst, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(dst, &v, 4); break; }
    default: { uint64_t v = (uint64_t)bits; memcpy(dst, &v, 8); break; }
    }
}

/* ll in [min, umax] (min <= 0). */
static int signed_fits(long long ll, long long min, unsigned long long umax)
{
    return ll >= min && (ll <= 0 || (unsigned long long)ll <= umax);
}

/* int_bits' general path: any int object, the range error named. */
static int int_bits_slow(PyObject *v, long long min, unsigned long long umax, const char *range,
                         const arg_ref *a,
                         unsigned long long *bits)
{
    int overflow = 0;
    long long ll = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (ll == -1 && PyErr_Occurred())
        return arg_error(PyExc_TypeError, a, NULL);
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
    return arg_error(PyExc_OverflowError, a, "%R is out of range for %s", v, range);
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
    return int_bits_slow(v, min, umax, range, a, bits);
}

static const long long size_min[9] = {0, -128, -32768, 0, -2147483647LL - 1, 0, 0, 0,
                                      -9223372036854775807LL - 1};
static const unsigned long long size_umax[9] = {0, 0xFFULL, 0xFFFFULL, 0, 0xFFFFFFFFULL, 0, 0, 0,
                                                0xFFFFFFFFFFFFFFFFULL};
static const char *const size_range[9] = {
    NULL, "a 1-byte integer (-128..255)", "a 2-byte integer (-32768..65535)", NULL,
    "a 4-byte integer (-2147483648..4294967295)", NULL, NULL, NULL,
    "an 8-byte integer (-2**63..2**64-1)"};

static int is_int_size(size_t size)
{
    return size == 1 || size == 2 || size == 4 || size == 8;
}

/* Plain int into a `size`-byte parameter. Inlined (as put_float is) into
 * conv_by_size: every plain int and float of every launch takes it. */
static CBS_ALWAYS_INLINE int put_plain_int(PyObject *v, size_t size, unsigned char *dst,
                                           const arg_ref *a)
{
    if (!is_int_size(size))
        return arg_error(PyExc_TypeError, a,
                    "an int does not fit a %zu-byte parameter (pass bytes or a ctypes "
                    "Structure of that size)", size);
    unsigned long long bits;
    if (int_bits(v, size_min[size], size_umax[size], size_range[size], a, &bits) < 0)
        return -1;
    store_bits(dst, size, bits);
    return 0;
}

static CBS_ALWAYS_INLINE int put_float(double d, size_t size, unsigned char *dst,
                                       const arg_ref *a)
{
    if (size == 4) {
        if (isfinite(d) && fabs(d) > FLT_MAX) {
            char text[40];
            snprintf(text, sizeof text, "%.17g", d);
            return arg_error(PyExc_OverflowError, a,
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
    return arg_error(PyExc_TypeError, a,
                "a float does not fit a %zu-byte parameter (4: float32, 8: float64)", size);
}

/* Copies exactly `size` bytes of o's buffer. 1: done; 0: o has no buffer. */
static int put_buffer_exact(PyObject *o, size_t size, unsigned char *dst, const arg_ref *a)
{
    /* A str is text, never a parameter's bytes: numpy.str_ exports its
     * UCS-4 code points as a buffer ('x' would be the int 120). */
    if (!PyObject_CheckBuffer(o) || PyUnicode_Check(o))
        return 0;
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0)
        return arg_error(PyExc_TypeError, a, NULL);
    if ((size_t)view.len != size) {
        Py_ssize_t len = view.len;
        PyBuffer_Release(&view);
        return arg_error(PyExc_TypeError, a,
                    "%.100s of %zd bytes given for a %zu-byte parameter", Py_TYPE(o)->tp_name,
                    len, size);
    }
    memcpy(dst, view.buf, size);
    PyBuffer_Release(&view);
    return 1;
}

/* getPtr(): 1 and *addr; 0 when o has no callable getPtr; -1 on error. */
static int call_getptr(PyObject *o, const arg_ref *a,
                       void **addr)
{
    if (cbs_is_handle(o)) {
        /* cubind's own handles (their classes can be neither subclassed
         * nor changed): getPtr() is the address of the value they hold. */
        *addr = &((cbs_handle *)o)->value;
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
        return r < 0 ? arg_error(PyExc_TypeError, a, NULL) : 0;
    if (!PyCallable_Check(m)) {
        Py_DECREF(m);
        return 0;
    }
    PyObject *res = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    if (!res)
        return arg_error(PyExc_TypeError, a, NULL);
    if (!PyLong_Check(res)) {
        arg_error(PyExc_TypeError, a, "getPtr() of %.100s returned %.100s, not int",
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
static int cai_pointer(PyObject *o, const arg_ref *a, unsigned long long *addr)
{
    PyObject *cai;
    int r = cbs_optional_attr(o, "__cuda_array_interface__", &cai);
    if (r <= 0)
        return r < 0 ? arg_error(PyExc_TypeError, a, NULL) : 0;
    PyObject *data = PyMapping_Check(cai) ? PyMapping_GetItemString(cai, "data") : NULL;
    Py_DECREF(cai);
    if (!data) {
        PyErr_Clear();
        return arg_error(PyExc_TypeError, a,
                    "__cuda_array_interface__ of %.100s has no 'data'", Py_TYPE(o)->tp_name);
    }
    PyObject *ptr = PySequence_Check(data) && PySequence_Size(data) >= 1
                        ? PySequence_GetItem(data, 0) : NULL;
    Py_DECREF(data);
    if (!ptr || !PyLong_Check(ptr)) {
        Py_XDECREF(ptr);
        PyErr_Clear();
        return arg_error(PyExc_TypeError, a,
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
        return r < 0 ? arg_error(PyExc_TypeError, a, NULL) : 0;
    PyObject *dev = PyObject_CallNoArgs(m);
    Py_DECREF(m);
    if (!dev)
        return arg_error(PyExc_TypeError, a, NULL);
    long long type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2) {
        type = PyLong_AsLongLong(PyTuple_GET_ITEM(dev, 0));
        if (type == -1 && PyErr_Occurred())
            PyErr_Clear();
    }
    Py_DECREF(dev);
    if (!dl_cuda_device(type))
        return arg_error(PyExc_TypeError, a,
                    "%.100s is on DLPack device type %lld, not CUDA memory",
                    Py_TYPE(o)->tp_name, type);
    PyObject *cap = PyObject_CallMethod(o, "__dlpack__", NULL);
    if (!cap)
        return arg_error(PyExc_TypeError, a, NULL);
    const dl_tensor *t = NULL;
    if (PyCapsule_IsValid(cap, "dltensor"))
        t = PyCapsule_GetPointer(cap, "dltensor"); /* DLManagedTensor starts with it */
    else if (PyCapsule_IsValid(cap, "dltensor_versioned"))
        t = &((const dl_versioned *)PyCapsule_GetPointer(cap, "dltensor_versioned"))->tensor;
    if (!t) {
        Py_DECREF(cap);
        return arg_error(PyExc_TypeError, a,
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
static int pointer_of(PyObject *o, const arg_ref *a, int depth,
                      unsigned long long *addr)
{
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (PyLong_Check(o) || (nb && nb->nb_index)) {
        PyObject *n = PyNumber_Index(o);
        if (!n)
            return arg_error(PyExc_TypeError, a, NULL);
        int rc = int_bits(n, 0, (unsigned long long)UINTPTR_MAX, "an address", a,
                          addr);
        Py_DECREF(n);
        return rc < 0 ? -1 : 1;
    }
    if (nb && nb->nb_int && !nb->nb_float) {
        PyObject *m;
        int r = cbs_optional_attr(o, "getPtr", &m);
        if (r < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        if (r > 0) {
            Py_DECREF(m);
            PyObject *n = PyNumber_Long(o);
            if (!n)
                return arg_error(PyExc_TypeError, a, NULL);
            r = int_bits(n, 0, (unsigned long long)UINTPTR_MAX, "an address", a,
                         addr);
            Py_DECREF(n);
            return r < 0 ? -1 : 1;
        }
    }
    int r = cai_pointer(o, a, addr);
    if (r != 0)
        return r;
    r = dlpack_pointer(o, a, addr);
    if (r != 0 || depth > 0)
        return r;
    PyObject *h;
    r = cbs_optional_attr(o, "handle", &h);
    if (r <= 0)
        return r < 0 ? arg_error(PyExc_TypeError, a, NULL) : 0;
    if (cbs_is_handle(h)) {
        *addr = cbs_handle_bits((const cbs_handle *)h);
        r = 1;
    } else {
        r = pointer_of(h, a, depth + 1, addr);
    }
    Py_DECREF(h);
    return r;
}

/* ---- value tests ------------------------------------------------------------ */

/* A numpy scalar (numpy.float64 subclasses float): converted only when
 * exact. Recognised by its type's module, without importing numpy. */
static int is_numpy_scalar(PyObject *v)
{
    return strncmp(Py_TYPE(v)->tp_name, "numpy.", 6) == 0;
}

/* A complex number: Python's complex and its subclasses (numpy.complex128)
 * and numpy's other complex scalars (complex64, clongdouble), whose
 * __float__ drops the imaginary part: never a real parameter's value. */
static int is_complex(PyObject *v)
{
    const char *n = Py_TYPE(v)->tp_name;
    return PyComplex_Check(v) || strncmp(n, "numpy.complex", 13) == 0 ||
           strncmp(n, "numpy.clong", 11) == 0;
}

/* numpy.bool_ (numpy.bool in numpy 2): a truth value, neither an integer
 * (its __index__ is deprecated, then gone) nor a float. */
static int is_numpy_bool(PyObject *v)
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
 * bytes go, writes them (0) or raises through arg_error (-1), `a` naming
 * the parameter (and, for a known type, the kernel and the type).
 *
 * Each converter opens with its fast part (KIND_fast: the values nearly
 * every launch passes, without a call: a compact int in range, an exact
 * float, a cubind handle), which pack_items also tries inline before the
 * call (cbs_convert_fast: one jump on the kind); the fast part writes
 * exactly what its converter writes, or returns 0 and leaves it to the
 * converter (which names any error).
 */

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

/* The kind of the parameter `a` names (CBS_KT_UNKNOWN when by size). */
static cbs_kt_kind kind_of(const arg_ref *a)
{
    return a->kernel ? CBS_KT_KIND(a->type) : CBS_KT_UNKNOWN;
}

/* -- CBS_KT_UNKNOWN: by the parameter's size alone ------------------------- */

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
            return arg_error(PyExc_TypeError, a, NULL);
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
            return arg_error(PyExc_TypeError, a,
                             "%.100s of %zu bytes given for a %zu-byte parameter",
                             Py_TYPE(v)->tp_name, rec_size, size);
        memcpy(dst, rec, size);
        return 0;
    }
    int r;
    if (is_numpy_bool(v)) {
        /* as a Python bool (its buffer is 1 byte, whatever the parameter) */
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        return put_plain_int(b ? Py_True : Py_False, size, dst, a);
    }
    if (!PyBytes_CheckExact(v) && !PyByteArray_CheckExact(v)) {
        /* A device array is passed by its address, whatever else it is:
         * asked first, as CuPy's arrays also export the buffer protocol
         * (for host-accessible memory only; it raises for device memory). */
        unsigned long long addr;
        r = cai_pointer(v, a, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            if (size != 8)
                return arg_error(PyExc_TypeError, a,
                                 "a device array (__cuda_array_interface__) is a pointer: the "
                                 "parameter must have 8 bytes, not %zu", size);
            store_bits(dst, 8, addr);
            return 0;
        }
    }
    r = put_buffer_exact(v, size, dst, a);
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
            return arg_error(PyExc_TypeError, a, NULL);
        if (r > 0) {
            Py_DECREF(m);
            n = PyNumber_Long(v);
        }
    }
    if (!n && !PyErr_Occurred() && size == 8) {
        /* an 8-byte parameter may be a pointer: DLPack, cuda.core's Buffer */
        unsigned long long addr;
        r = pointer_of(v, a, 0, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            store_bits(dst, 8, addr);
            return 0;
        }
    }
    if (!n) {
        if (PyErr_Occurred())
            return arg_error(PyExc_TypeError, a, NULL);
        return arg_error(PyExc_TypeError, a,
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
    if (is_numpy_bool(v)) {
        int b = PyObject_IsTrue(v);
        if (b < 0)
            return arg_error(PyExc_TypeError, a, NULL);
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
        arg_error(PyExc_TypeError, a, NULL);
    return n;
}

/* A device array (__cuda_array_interface__), asked before any number: CuPy
 * arrays and PyTorch tensors have __index__ and __float__ too; then, after
 * the numbers, DLPack or an object whose handle is a pointer (`late`).
 * 1 when written, 0 when v is neither, -1. */
static int typed_pointer(PyObject *v, int late, unsigned char *dst, const arg_ref *a)
{
    unsigned long long addr;
    int r = late ? pointer_of(v, a, 0, &addr) : cai_pointer(v, a, &addr);
    if (r > 0)
        store_bits(dst, 8, addr);
    return r;
}

/* bytes, a ctypes value or Structure, another buffer: its bytes, of exactly
 * the parameter's size; else what the type refuses. */
static int typed_bytes_or_refuse(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    int r = put_buffer_exact(v, size, dst, a);
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

/* -- CBS_KT_INT, _UINT, _BITS, _BOOL: integers ----------------------------- */

/* An int object into an integer parameter of kind k: in its range, or an
 * OverflowError naming the type. */
static int integer_from_int(PyObject *n, cbs_kt_kind k, size_t size, unsigned char *dst,
                            const arg_ref *a, PyObject *v)
{
    long long min;
    unsigned long long max, bits;
    if (int_range(k, size, &min, &max) < 0)
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

/* Any integer kind: a compact int in range (the fast parts' general form,
 * for the other sizes), an int, a numpy bool or integer, a handle whose
 * value fits (else its int(), which names the range); an 8-byte .bN also
 * a pointer's forms. A float, a complex number or a struct is refused. */
static int conv_integer(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a)
{
    cbs_kt_kind k = kind_of(a);
    int wide = k == CBS_KT_BITS && size == 8; /* may hold a pointer */
    long long min = 0, small;
    unsigned long long max = 0;
    int has_range = int_range(k, size, &min, &max) == 0;
    if (cbs_compact_int(v, &small) && has_range && signed_fits(small, min, max)) {
        store_bits(dst, size, (unsigned long long)small);
        return 0;
    }
    if (PyFloat_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    PyObject *n;
    int exact, r = typed_int_of(v, a, &n, &exact);
    if (r == 0 && cbs_is_handle(v)) {
        if (has_range && put_handle_in((const cbs_handle *)v, min, max, size, dst))
            return 0;
        r = (n = index_of(v, a)) ? 1 : -1;
    }
    if (r == 0 && (r = typed_struct(v, 0, size, dst, a)) != 0)
        return -1;
    if (r == 0 && wide && (r = typed_pointer(v, 0, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    if (r == 0 && nb && nb->nb_index)
        r = (n = index_of(v, a)) ? 1 : -1;
    if (r < 0)
        return -1;
    if (r > 0) {
        r = integer_from_int(n, k, size, dst, a, v);
        Py_DECREF(n);
        return r;
    }
    if (is_complex(v))
        return REFUSE(PyExc_TypeError, a, "a complex number given:", v);
    if (nb && nb->nb_float && !PyBytes_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    if (wide && (r = typed_pointer(v, 1, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    return typed_bytes_or_refuse(v, size, dst, a);
}

/* -- CBS_KT_PTR: pointers --------------------------------------------------- */

static CBS_ALWAYS_INLINE int pointer_fast(PyObject *v, size_t size, unsigned char *dst)
{
    return size == 8 && (put_compact_in(v, 0, LLONG_MAX, 8, dst) || put_handle64(v, dst));
}

static int pointer_from_int(PyObject *n, size_t size, unsigned char *dst, const arg_ref *a,
                            PyObject *v)
{
    unsigned long long bits;
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
    if (pointer_fast(v, size, dst))
        return 0;
    if (PyFloat_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    PyObject *n;
    int exact, r = typed_int_of(v, a, &n, &exact);
    if (r == 0 && cbs_is_handle(v)) {
        if (size == 8 && put_handle_in((const cbs_handle *)v, 0,
                                       (unsigned long long)UINTPTR_MAX, 8, dst))
            return 0;
        r = (n = index_of(v, a)) ? 1 : -1;
    }
    if (r == 0 && (r = typed_struct(v, 0, size, dst, a)) != 0)
        return -1;
    if (r == 0 && (r = typed_pointer(v, 0, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    if (r == 0 && nb && nb->nb_index)
        r = (n = index_of(v, a)) ? 1 : -1;
    if (r < 0)
        return -1;
    if (r > 0) {
        r = pointer_from_int(n, size, dst, a, v);
        Py_DECREF(n);
        return r;
    }
    if (is_complex(v))
        return REFUSE(PyExc_TypeError, a, "a complex number given:", v);
    if (nb && nb->nb_float && !PyBytes_Check(v))
        return REFUSE(PyExc_TypeError, a, "a float given:", v);
    if ((r = typed_pointer(v, 1, dst, a)) != 0)
        return r < 0 ? -1 : 0;
    return typed_bytes_or_refuse(v, size, dst, a);
}

/* -- CBS_KT_FLOAT: floating types ------------------------------------------ */

static CBS_ALWAYS_INLINE int float_fast(PyObject *v, size_t size, unsigned char *dst)
{
    return PyFloat_CheckExact(v) && put_float_common(PyFloat_AS_DOUBLE(v), size, dst);
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
    if (float_fast(v, size, dst))
        return 0;
    if (PyFloat_Check(v)) /* numpy.float64 is a float too: exact only */
        return float_from_double(PyFloat_AS_DOUBLE(v), is_numpy_scalar(v), size, dst, a, v);
    PyObject *n;
    int exact, r = typed_int_of(v, a, &n, &exact);
    if (r == 0 && cbs_is_handle(v))
        return REFUSE(PyExc_TypeError, a, "a handle given:", v);
    if (r == 0 && (r = typed_struct(v, 0, size, dst, a)) != 0)
        return -1;
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    if (r == 0 && nb && nb->nb_index) {
        r = (n = index_of(v, a)) ? 1 : -1;
        exact = 1;
    }
    if (r < 0)
        return -1;
    if (r > 0) {
        r = float_from_int(n, exact, size, dst, a, v);
        Py_DECREF(n);
        return r;
    }
    if (is_complex(v))
        return REFUSE(PyExc_TypeError, a, "a complex number given:", v);
    if (nb && nb->nb_float && !PyBytes_Check(v)) {
        /* numpy floats: exactly */
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return arg_error(PyExc_TypeError, a, NULL);
        return float_from_double(d, 1, size, dst, a, v);
    }
    return typed_bytes_or_refuse(v, size, dst, a);
}

/* -- CBS_KT_BLOB: a user type by value ------------------------------------- */

static CBS_ALWAYS_INLINE int blob_fast(PyObject *v, size_t size, unsigned char *dst)
{
    (void)v, (void)size, (void)dst;
    return 0;
}

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

/* kind -> (fast part, converter): the one place that maps a parameter's
 * kind to how its value becomes bytes (docs/ARCHITECTURE.md shows it). */
#define CBS_CONVERTERS(X)                 \
    X(CBS_KT_UNKNOWN, by_size_fast, conv_by_size) \
    X(CBS_KT_INT, int_fast, conv_integer)  \
    X(CBS_KT_UINT, uint_fast, conv_integer) \
    X(CBS_KT_BITS, bits_fast, conv_integer) \
    X(CBS_KT_BOOL, bool_fast, conv_integer) \
    X(CBS_KT_FLOAT, float_fast, conv_float) \
    X(CBS_KT_PTR, pointer_fast, conv_pointer) \
    X(CBS_KT_BLOB, blob_fast, conv_blob)

typedef int (*converter)(PyObject *v, size_t size, unsigned char *dst, const arg_ref *a);

#define CBS_CONVERTER_ENTRY(kind, fast, conv) [kind] = conv,
static const converter converters[] = {CBS_CONVERTERS(CBS_CONVERTER_ENTRY)};
#undef CBS_CONVERTER_ENTRY

/* The fast part of t's converter, inline: 1 when v was written. */
static CBS_ALWAYS_INLINE int convert_fast(PyObject *v, cbs_ktype t, size_t size,
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

/* Parameter i of layout l, of type t (CBS_KT_UNKNOWN: by size): its
 * converter, `a` naming the parameter and, when t is known, the kernel
 * and t. */
static int convert(PyObject *v, cbs_ktype t, const cbs_pack_layout *l, size_t i,
                   unsigned char *dst, const char *fname)
{
    cbs_kt_kind k = CBS_KT_KIND(t);
    arg_ref a = {fname, "kernel parameter", (Py_ssize_t)i, NULL, t, l->size[i]};
    if (k != CBS_KT_UNKNOWN)
        a.kernel = l->name;
    if ((size_t)k >= sizeof converters / sizeof converters[0] || !converters[k])
        return arg_error(PyExc_SystemError, &a, "no converter for kind %d", (int)k);
    return converters[k](v, l->size[i], dst, &a);
}

/* ---- kernel layouts, cached in the shared registry ----------------------- */

/* The driver function that reports a kernel's parameters, for messages:
 * CUBIND_REG_KERNEL_LAYOUT is a CUfunction's, _KERN a CUkernel's. */
static const char *param_info_name(int kind)
{
    return kind == CUBIND_REG_KERNEL_LAYOUT_KERN ? "cuKernelGetParamInfo" : "cuFuncGetParamInfo";
}

/* Layouts (bind_layout.h) are published as the meta of a
 * CUBIND_REG_KERNEL_LAYOUT(_KERN) entry (freed by the registry with rt_free()
 * when the entry is destroyed), or copied into a kernel handle's slot. */

typedef CUresult (*name_fn)(const char **, void *);
typedef CUresult (*owner_fn)(void **, void *);

/* Types l's parameters where they can be known (bind_kernel_types.h): from
 * the kernel's name when it is a mangled C++ name, else from the PTX its
 * module or library was loaded from (bind_kernel_code.h); kept only when
 * every parameter's size agrees with the driver's. Leaves them unknown
 * otherwise. Keeps the name for messages. */
static void type_kernel(cbs_tables *tb, int kern, void *func, cbs_pack_layout *l)
{
    void *proc = tb->kernel_proc(tb, kern ? CBS_KPROC_KERNEL_NAME : CBS_KPROC_FUNC_NAME);
    const char *name = NULL;
    if (!proc || ((name_fn)proc)(&name, func) != CUDA_SUCCESS || !name)
        return;
    snprintf(l->name, sizeof l->name, "%s", name);
    int known = l->n && cbs_kt_from_mangled(name, l->n, l->type);
    void *owner = NULL;
    if (l->n && !known &&
        (proc = tb->kernel_proc(tb, kern ? CBS_KPROC_KERNEL_LIBRARY : CBS_KPROC_FUNC_MODULE)) &&
        ((owner_fn)proc)(&owner, func) == CUDA_SUCCESS)
        known = cbs_code_types(tb->rt, kern ? CUBIND_REG_CODE_LIBRARY : CUBIND_REG_CODE_MODULE,
                               (uintptr_t)owner, name, l->n, l->type);
    if (!known) {
        memset(l->type, 0, l->n * sizeof *l->type);
        return;
    }
    for (size_t k = 0; k < l->n; k++) {
        size_t declared = CBS_KT_SIZE(l->type[k]);
        if (CBS_KT_KIND(l->type[k]) == CBS_KT_UNKNOWN || (declared && declared != l->size[k])) {
            /* not what the driver reports: this name is not read right */
            memset(l->type, 0, l->n * sizeof *l->type);
            return;
        }
    }
}

/* Queries the driver for func's whole layout: a new layout (malloc'ed, the
 * caller's) or NULL with an exception. A CUkernel given as a CUfunction
 * (cuFuncGetParamInfo: INVALID_HANDLE) is asked of cuKernelGetParamInfo;
 * its layout is then cached under the CUfunction kind, as func is. */
static cbs_pack_layout *query_layout(cbs_tables *tb, void *func, int kind, param_info_fn gpi,
                                     unsigned long epoch, const char *fname)
{
    int kern = kind == CUBIND_REG_KERNEL_LAYOUT_KERN;
    size_t cap = 16, n = 0;
    size_t *pairs = rt_malloc(2 * cap * sizeof *pairs);
    if (!pairs) {
        PyErr_NoMemory();
        return NULL;
    }
    CUresult rc;
    for (;;) {
        size_t off = 0, size = 0;
        rc = gpi((CUfunction)func, n, &off, &size);
        if (rc == CUDA_ERROR_INVALID_HANDLE && n == 0 && !kern &&
            (gpi = (param_info_fn)tb->param_info(tb, 1)) != NULL) {
            kern = 1; /* a CUkernel: asked again of cuKernelGetParamInfo */
            continue;
        }
        if (rc != CUDA_SUCCESS)
            break;
        if (off > ((size_t)1 << 30) || size > ((size_t)1 << 30)) {
            rt_free(pairs);
            arg_error(PyExc_ValueError, AT(fname, "kernel parameter", (Py_ssize_t)n),
                 "the driver reports offset %zu and size %zu", off, size);
            return NULL;
        }
        if (n == cap) {
            if (cap >= ((size_t)1 << 20)) {
                rt_free(pairs);
                arg_error(PyExc_ValueError, AT(fname, "kernelParams", -1),
                     "the driver reports more than %zu parameters", cap);
                return NULL;
            }
            size_t *more = rt_realloc(pairs, 4 * cap * sizeof *pairs);
            if (!more) {
                rt_free(pairs);
                PyErr_NoMemory();
                return NULL;
            }
            pairs = more;
            cap *= 2;
        }
        pairs[2 * n] = off;
        pairs[2 * n + 1] = size;
        n++;
    }
    if (n == 0 && rc != CUDA_ERROR_INVALID_VALUE) {
        rt_free(pairs);
        arg_error(PyExc_ValueError, AT(fname, "kernelParams", -1),
             "cannot read the kernel's parameters (%s returned CUresult %d)",
             param_info_name(kern ? CUBIND_REG_KERNEL_LAYOUT_KERN : kind), (int)rc);
        return NULL;
    }
    cbs_pack_layout *l = cbs_layout_alloc(n, func, kind, epoch);
    if (!l) {
        rt_free(pairs);
        PyErr_NoMemory();
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        l->off[k] = pairs[2 * k];
        l->size[k] = pairs[2 * k + 1];
    }
    cbs_layout_measure(l);
    rt_free(pairs);
    type_kernel(tb, kern, func, l);
    return l;
}

/* Who keeps a layout alive while a pack uses it: a counted registry entry
 * whose meta it is, or (when publishing failed) the packer itself. */
typedef struct {
    struct rt_registry_entry *entry;
    cbs_pack_layout *own;
} layout_ref;

static void layout_unref(const cubind_rt_api *rt, layout_ref *r)
{
    if (r->entry)
        rt->reg_release(r->entry);
    if (r->own) /* rare: skip free(NULL)'s call on every launch */
        rt_free(r->own);
}

/* The layout of kernel `func` (registry kind `kind`), valid until
 * layout_unref(ref). A cached layout is used when it is of the current
 * epoch and has nvalues parameters; otherwise (first launch, a module was
 * unloaded meanwhile, or a different count) the driver is asked again and
 * the entry replaced. A different count that finds a different layout in
 * the same epoch means the driver reused the function value for another
 * kernel after a module was unloaded behind cubind's back (by another
 * library): that starts a new epoch, as an unload through cubind does
 * (every cached layout may be an unloaded kernel's, kernel handles' copies
 * included), and the layout is asked for again in it. NULL with an
 * exception on failure. */
static const cbs_pack_layout *layout_for(cbs_tables *tb, int kind, void *func,
                                         param_info_fn gpi, size_t nvalues, const char *fname,
                                         layout_ref *ref)
{
    const cubind_rt_api *rt = tb->rt;
    ref->entry = NULL;
    ref->own = NULL;
    for (int may_restart = 1;; may_restart = 0) {
        unsigned long epoch = atomic_load_explicit(rt->kernel_epoch, memory_order_acquire);
        struct rt_registry_entry *e, *known = NULL;
        if (rt->reg_lookup(kind, (uintptr_t)func, &e) == 0) {
            const cbs_pack_layout *l = rt->reg_meta(e);
            int current = l && atomic_load_explicit(&l->epoch, memory_order_relaxed) == epoch;
            if (current && l->n == nvalues) {
                ref->entry = e;
                return l;
            }
            rt->reg_unregister_entry(e); /* stale: only if still the mapped one */
            if (current && may_restart)
                known = e; /* compared below, then released */
            else
                rt->reg_release(e);
        }
        cbs_pack_layout *l = query_layout(tb, func, kind, gpi, epoch, fname);
        if (known) {
            int reused = l && !cbs_layout_same(l, rt->reg_meta(known));
            rt->reg_release(known);
            if (reused) {
                rt_free(l);
                rt->kernels_unloaded();
                continue;
            }
        }
        if (!l)
            return NULL;
        if (rt->reg_register(kind, (uintptr_t)func, l, rt_free, NULL, &e) == 0) {
            ref->entry = e; /* the entry owns l now */
            return l;
        }
        /* -EEXIST (a racing first launch published first) or -ENOMEM: use
         * ours for this launch only. */
        ref->own = l;
        return l;
    }
}

/* A launch through a kernel handle object (cbs_kernel_handle) reads the
 * object's own copy of the layout (bind_layout.h: its invariants, and why
 * it takes no lock); after a module unload the first launch through the
 * object takes the registry's path and re-stamps the copy when the
 * kernel's layout is unchanged. */

/* argtypes= of a launch: one type per parameter into out[0..l->n) (a
 * ctypes type, a numpy dtype, a type string, or None: by size). Defined
 * with the (values, types) form, whose ctypes reading it shares. */
static int argtypes_parse(cbs_tables *tb, PyObject *argtypes, const cbs_pack_layout *l,
                          const char *fname, cbs_ktype *out);

/* Plain values items[0..n) at the kernel's offsets: the items stay alive
 * and unchanged for the call (a tuple, or a vectorcall's arguments).
 * Inlined into its two callers, as it was the body of pack_plain. Each
 * value converts by its parameter's type where known (argtypes, else the
 * layout's), else by its size. */
static CBS_ALWAYS_INLINE int pack_items(cbs_tables *tb, int kind, PyObject *const *items,
                                        size_t n, void *func, PyObject *func_obj,
                                        PyObject *argtypes, const char *fname, cbs_packed *out)
{
    const cubind_rt_api *rt = tb->rt;
    if (!func)
        return arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
                    "plain values are typed by the kernel, which is NULL");
    int rc = -1;
    layout_ref ref = {NULL, NULL};
    _Atomic(void *) *slot = func_obj ? cbs_kernel_layout_slot(func_obj) : NULL;
    const cbs_pack_layout *l = NULL;
    cbs_ktype inline_types[CBS_PACK_INLINE_PARAMS], *given = NULL;
    if (slot)
        l = cbs_layout_copy_get(slot, kind, func,
                                atomic_load_explicit(rt->kernel_epoch, memory_order_acquire), n);
    if (!l) {
        void *get_param_info = tb->param_info(tb, kind == CUBIND_REG_KERNEL_LAYOUT_KERN);
        if (!get_param_info)
            return arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
                        "plain values need %s (a CUDA 12.4 or newer driver); pass (values, "
                        "types) with ctypes types, or a prepared void *[] instead",
                        param_info_name(kind));
        l = layout_for(tb, kind, func, (param_info_fn)get_param_info, n, fname, &ref);
        if (!l)
            goto done;
        if (slot)
            cbs_layout_copy_remember(slot, l);
    }
    if (l->n != n) {
        if (n < l->n)
            arg_error(PyExc_TypeError, AT(fname, "kernel parameter", (Py_ssize_t)n),
                 "missing: the kernel takes %zu parameters, %zu given", l->n, n);
        else
            arg_error(PyExc_TypeError, AT(fname, "kernel parameter", (Py_ssize_t)l->n),
                 "unexpected: the kernel takes %zu parameters, %zu given", l->n, n);
        goto done;
    }
    if (n == 0) {
        out->params = NULL;
        rc = 0;
        goto done;
    }
    const cbs_ktype *types = l->type; /* CBS_KT_UNKNOWN where untyped */
    if (argtypes) {
        given = n <= CBS_PACK_INLINE_PARAMS ? inline_types : PyMem_Malloc(n * sizeof *given);
        if (!given) {
            PyErr_NoMemory();
            goto done;
        }
        if (argtypes_parse(tb, argtypes, l, fname, given) < 0)
            goto done;
        types = given;
    }
    if (reserve(out, n, l->total, 0) < 0)
        goto done;
    /* The driver may receive the buffer whole (cbs_pack_prefer_buffer):
     * padding between parameters is zeroed, never stack bytes. */
    if (l->gaps)
        memset(out->data, 0, l->total);
    for (size_t k = 0; k < n; k++) {
        PyObject *v = items[k];
        unsigned char *dst = out->data + l->off[k];
        if (!convert_fast(v, types[k], l->size[k], dst) &&
            convert(v, types[k], l, k, dst, fname) < 0)
            goto done;
        out->params[k] = dst;
    }
    out->buffer_bytes = l->total;
    rc = 0;
done:
    if (given && given != inline_types)
        PyMem_Free(given);
    layout_unref(rt, &ref);
    return rc;
}

static int pack_plain(cbs_tables *tb, int kind, PyObject *seq, void *func, PyObject *func_obj,
                      PyObject *argtypes, const char *fname, cbs_packed *out)
{
    /* Every value is copied into the argument bytes (a converter keeps no
     * view and no reference): a launch needs the values only while they
     * convert, cbs_pack_detach keeps them with the node. A tuple is
     * borrowed (the caller holds it for the whole call; no reference to
     * take and drop per launch), a list converts from a snapshot (code a
     * conversion runs may change the list), owned by *out. */
    PyObject *values;
    if (PyTuple_Check(seq)) {
        values = out->borrowed = seq;
    } else {
        values = out->keep = snapshot(seq);
        if (!values)
            return -1;
    }
    return pack_items(tb, kind, ((PyTupleObject *)values)->ob_item,
                      (size_t)PyTuple_GET_SIZE(values), func, func_obj, argtypes, fname, out);
}

int cbs_pack_values(cbs_tables *tb, PyObject *const *values, size_t n, void *func,
                    PyObject *func_obj, int kind, PyObject *argtypes, const char *where,
                    cbs_packed *out)
{
    return pack_items(tb, kind, values, n, func, func_obj, argtypes, where, out);
}

/* ---- (values, types) ------------------------------------------------------ */

enum tkind {
    T_NONE, T_BOOL, T_CHAR, T_WCHAR, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64,
    T_F32, T_F64, T_VOIDP,
    T_AGG,          /* Structure, Union, Array: an instance, bytes copied */
    T_SIMPLE        /* another simple ctypes type: converted by calling it */
};

typedef struct {
    PyObject *type;         /* borrowed: the types snapshot keeps it alive */
    enum tkind kind;
    size_t size;
} tinfo;

#define TCACHE 8

/* The standard ctypes scalar types, recognised by identity with the ctypes
 * attribute of that name (c_size_t is c_ulong, c_ssize_t c_long). classify
 * searches them in this order: kernels' commonest parameter types first. */
static const struct {
    const char *name;
    enum tkind kind;
    size_t size;
} std_ctypes[] = {
    {"c_void_p", T_VOIDP, sizeof(void *)}, {"c_int", T_I32, 4}, {"c_float", T_F32, 4},
    {"c_double", T_F64, 8}, {"c_uint", T_U32, 4},
    {"c_long", sizeof(long) == 8 ? T_I64 : T_I32, sizeof(long)},
    {"c_ulong", sizeof(long) == 8 ? T_U64 : T_U32, sizeof(long)},
    {"c_longlong", T_I64, 8}, {"c_ulonglong", T_U64, 8},
    {"c_short", T_I16, 2}, {"c_ushort", T_U16, 2}, {"c_byte", T_I8, 1}, {"c_ubyte", T_U8, 1},
    {"c_bool", T_BOOL, sizeof(_Bool)}, {"c_char", T_CHAR, 1},
    {"c_wchar", T_WCHAR, sizeof(wchar_t)},
};
#define N_STD_CTYPES (sizeof std_ctypes / sizeof std_ctypes[0])

/* What the (values, types) form needs of ctypes, read once per interpreter
 * (cbs_ctypes_cache): strong references, never changed once published. */
struct cbs_ctypes_refs {
    PyObject *module, *simple_cdata, *structure, *union_type, *array, *sizeof_fn;
    PyObject *std[N_STD_CTYPES];
    PyObject *c_float; /* borrowed from std[] */
};

static void refs_free(struct cbs_ctypes_refs *r)
{
    PyObject **all[] = {&r->module, &r->simple_cdata, &r->structure, &r->union_type, &r->array,
                        &r->sizeof_fn};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        Py_CLEAR(*all[k]);
    for (size_t k = 0; k < N_STD_CTYPES; k++)
        Py_CLEAR(r->std[k]);
    PyMem_Free(r);
}

/* Imports ctypes and reads its attributes: a new block, or NULL with an
 * exception. */
static struct cbs_ctypes_refs *refs_load(void)
{
    struct cbs_ctypes_refs *r = PyMem_Calloc(1, sizeof *r);
    if (!r) {
        PyErr_NoMemory();
        return NULL;
    }
    r->module = PyImport_ImportModule("ctypes");
    if (!r->module)
        goto fail;
    struct { PyObject **dst; const char *name; } attrs[] = {
        {&r->simple_cdata, "_SimpleCData"}, {&r->structure, "Structure"},
        {&r->union_type, "Union"}, {&r->array, "Array"}, {&r->sizeof_fn, "sizeof"},
    };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++)
        if (!(*attrs[k].dst = cbs_attr(r->module, attrs[k].name)))
            goto fail;
    for (size_t k = 0; k < N_STD_CTYPES; k++) {
        if (!(r->std[k] = cbs_attr(r->module, std_ctypes[k].name)))
            goto fail;
        if (std_ctypes[k].kind == T_F32)
            r->c_float = r->std[k];
    }
    return r;
fail:
    refs_free(r);
    return NULL;
}

/* The interpreter's block: loaded by the first (values, types) pack that
 * needs it; a thread that loses the race to publish frees its own. */
static const struct cbs_ctypes_refs *refs_get(cbs_ctypes_cache *cache)
{
    struct cbs_ctypes_refs *r = atomic_load_explicit(&cache->refs, memory_order_acquire);
    if (r)
        return r;
    r = refs_load();
    if (!r)
        return NULL;
    struct cbs_ctypes_refs *none = NULL;
    if (atomic_compare_exchange_strong_explicit(&cache->refs, &none, r, memory_order_acq_rel,
                                                memory_order_acquire))
        return r;
    refs_free(r);
    return none; /* the winner's */
}

void cbs_ctypes_cache_clear(cbs_ctypes_cache *cache)
{
    struct cbs_ctypes_refs *r = atomic_exchange_explicit(&cache->refs, NULL, memory_order_acq_rel);
    if (r)
        refs_free(r);
}

int cbs_ctypes_cache_traverse(cbs_ctypes_cache *cache, visitproc visit, void *arg)
{
    struct cbs_ctypes_refs *r = atomic_load_explicit(&cache->refs, memory_order_acquire);
    if (!r)
        return 0;
    PyObject *all[] = {r->module, r->simple_cdata, r->structure, r->union_type, r->array,
                       r->sizeof_fn};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        Py_VISIT(all[k]);
    for (size_t k = 0; k < N_STD_CTYPES; k++)
        Py_VISIT(r->std[k]);
    return 0;
}

typedef struct {
    const char *fname;
    cbs_ctypes_cache *cache;
    const struct cbs_ctypes_refs *refs; /* the cache's, once needed (borrowed) */
    tinfo seen[TCACHE];
    int nseen;
} tctx;

/* The interpreter's ctypes block, or NULL with an exception naming
 * parameter i. */
static const struct cbs_ctypes_refs *ctypes_refs(tctx *c, Py_ssize_t i)
{
    if (!c->refs && !(c->refs = refs_get(c->cache)))
        arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
    return c->refs;
}

static int classify(tctx *c, PyObject *type, Py_ssize_t i, tinfo *ti)
{
    for (int k = 0; k < c->nseen; k++)
        if (c->seen[k].type == type) {
            *ti = c->seen[k];
            if (k) { /* the next parameter most likely has this type too */
                c->seen[k] = c->seen[0];
                c->seen[0] = *ti;
            }
            return 0;
        }
    ti->type = type;
    ti->size = 8;
    if (type == Py_None) {
        ti->kind = T_NONE;
        goto remember;
    }
    if (!PyType_Check(type))
        return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                    "types[%zd] must be a ctypes type or None, not %.100s", i,
                    Py_TYPE(type)->tp_name);
    const struct cbs_ctypes_refs *r = ctypes_refs(c, i);
    if (!r)
        return -1;
    for (size_t k = 0; k < N_STD_CTYPES; k++)
        if (r->std[k] == type) {
            ti->kind = std_ctypes[k].kind;
            ti->size = std_ctypes[k].size;
            goto remember;
        }
    /* Not a standard scalar type itself: a subclass of one, another simple
     * type, or an aggregate. */
    PyObject *code = NULL;
    if (cbs_optional_attr(type, "_type_", &code) < 0)
        return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
    if (code && PyUnicode_Check(code) && PyUnicode_GetLength(code) == 1) {
        Py_UCS4 ch = PyUnicode_ReadChar(code, 0);
        Py_DECREF(code);
        if (ch == 'z' || ch == 'Z' || ch == 'O' || ch == 'P' || ch == 'g')
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                        "unsupported ctypes type %.100s", ((PyTypeObject *)type)->tp_name);
        int simple = PyObject_IsSubclass(type, r->simple_cdata);
        if (simple < 0)
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        if (!simple)
            goto unsupported;
        ti->kind = T_SIMPLE;
    } else {
        Py_XDECREF(code);
        int agg = PyObject_IsSubclass(type, r->structure);
        if (agg == 0)
            agg = PyObject_IsSubclass(type, r->union_type);
        if (agg == 0)
            agg = PyObject_IsSubclass(type, r->array);
        if (agg < 0)
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        if (!agg)
            goto unsupported;
        ti->kind = T_AGG;
    }
    {
        PyObject *sz = PyObject_CallOneArg(r->sizeof_fn, type);
        if (!sz)
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        ti->size = PyLong_AsSize_t(sz);
        Py_DECREF(sz);
        if (ti->size == (size_t)-1 && PyErr_Occurred())
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        if (ti->size > ((size_t)1 << 30))
            return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                        "ctypes type %.100s is too large", ((PyTypeObject *)type)->tp_name);
    }
remember:
    if (c->nseen < TCACHE)
        c->seen[c->nseen++] = *ti;
    return 0;
unsupported:
    return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                "unsupported type %.100s (expected a ctypes type or None)",
                ((PyTypeObject *)type)->tp_name);
}

/* An enum member of any binding (cubind's, cuda.bindings' driver or
 * runtime enums, a Python enum.Enum): its class has an enum's tables
 * (_value2member_map_ or __members__). 1 with *n its value (int(v), or
 * v.value for a member that is no int), 0 when v is no enum member, -1. */
static int enum_member_int(PyObject *v, PyObject **n)
{
    PyObject *table;
    int r = cbs_optional_attr((PyObject *)Py_TYPE(v), "_value2member_map_", &table);
    if (r == 0)
        r = cbs_optional_attr((PyObject *)Py_TYPE(v), "__members__", &table);
    if (r <= 0)
        return r;
    Py_DECREF(table);
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    if (PyLong_Check(v) || (nb && nb->nb_index)) {
        *n = PyNumber_Index(v);
        return *n ? 1 : -1;
    }
    PyObject *value = PyObject_GetAttrString(v, "value");
    if (!value)
        return -1;
    *n = PyNumber_Index(value);
    Py_DECREF(value);
    return *n ? 1 : -1;
}

/* Bytes of an instance of exactly ti->type (a ctypes value). */
static int copy_instance(PyObject *v, size_t size, unsigned char *dst, tctx *c, Py_ssize_t i)
{
    int r = put_buffer_exact(v, size, dst, AT(c->fname, "kernel parameter", i));
    if (r == 0)
        return arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), "%.100s has no buffer",
                    Py_TYPE(v)->tp_name);
    return r < 0 ? -1 : 0;
}

/* A numpy scalar v for the (values, types) form's c_float / c_double
 * (`size` bytes): its value when that type holds it exactly, as the typed
 * converters take numpy scalars (float_from_double), else TypeError; out
 * of float's range is an OverflowError. A bool is 0.0 or 1.0. */
static int ctypes_numpy_float(PyObject *v, size_t size, unsigned char *slot, const arg_ref *a)
{
    const char *type = size == 4 ? "c_float" : "c_double";
    PyNumberMethods *nb = Py_TYPE(v)->tp_as_number;
    double d;
    if (is_numpy_bool(v)) {
        int t = PyObject_IsTrue(v);
        if (t < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        d = t ? 1.0 : 0.0;
    } else if (nb && nb->nb_index && !PyFloat_Check(v)) {
        PyObject *n = PyNumber_Index(v);
        if (!n)
            return arg_error(PyExc_TypeError, a, NULL);
        d = PyLong_AsDouble(n);
        int same = -1;
        if (!(d == -1.0 && PyErr_Occurred())) {
            PyObject *back = PyLong_FromDouble(d);
            same = back ? PyObject_RichCompareBool(back, n, Py_EQ) : -1;
            Py_XDECREF(back);
        }
        Py_DECREF(n);
        if (same < 0)
            return arg_error(PyExc_OverflowError, a, NULL);
        if (!same || (size == 4 && isfinite(d) && fabs(d) <= FLT_MAX && (double)(float)d != d))
            return arg_error(PyExc_TypeError, a, "%s: %R is not exactly representable", type, v);
    } else if (nb && nb->nb_float && !is_complex(v)) {
        d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return arg_error(PyExc_TypeError, a, NULL);
        if (size == 4 && isfinite(d) && fabs(d) <= FLT_MAX && (double)(float)d != d)
            return arg_error(PyExc_TypeError, a, "%s: %R is not exactly a float", type, v);
    } else {
        return arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s", type,
                         Py_TYPE(v)->tp_name);
    }
    return put_float(d, size, slot, a);
}

static const struct { long long min; unsigned long long umax; const char *range; } krange[] = {
    [T_I8] = {-128, 127, "c_byte (-128..127)"},
    [T_U8] = {-128, 255, "c_ubyte (-128..255)"},
    [T_I16] = {-32768, 32767, "c_short (-32768..32767)"},
    [T_U16] = {-32768, 65535, "c_ushort (-32768..65535)"},
    [T_I32] = {-2147483647LL - 1, 2147483647ULL, "c_int (-2**31..2**31-1)"},
    [T_U32] = {-2147483647LL - 1, 4294967295ULL, "c_uint (-2**31..2**32-1)"},
    [T_I64] = {-9223372036854775807LL - 1, 9223372036854775807ULL, "a 64-bit signed integer"},
    [T_U64] = {-9223372036854775807LL - 1, 0xFFFFFFFFFFFFFFFFULL, "a 64-bit unsigned integer"},
};

static int put_typed(PyObject *v, const tinfo *ti, unsigned char *slot, void **param,
                     cbs_packed *out, tctx *c, Py_ssize_t i)
{
    const arg_ref *a = AT(c->fname, "kernel parameter", i);
    *param = slot;
    switch (ti->kind) {
    case T_NONE: {
        void *addr;
        int r = call_getptr(v, a, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            *param = addr;          /* the object's storage; the snapshot keeps it alive */
            return 0;
        }
        if (PyObject_CheckBuffer(v)) {
            Py_buffer *view = hold_view(out, v, PyBUF_ANY_CONTIGUOUS);
            if (!view)
                return arg_error(PyExc_TypeError, a, NULL);
            *param = view->buf;
            return 0;
        }
        if (!PyLong_CheckExact(v) && !PyBool_Check(v)) {
            PyObject *n = NULL;
            r = enum_member_int(v, &n);
            if (r < 0)
                return arg_error(PyExc_TypeError, a, NULL);
            if (r > 0) {
                unsigned long long bits;
                r = int_bits(n, size_min[4], size_umax[4], "an enum (32 bits)", a,
                             &bits);
                Py_DECREF(n);
                if (r < 0)
                    return -1;
                store_bits(slot, 4, bits);
                return 0;
            }
        }
        return arg_error(PyExc_TypeError, a,
                    "with type None the value must have getPtr(), be a ctypes Structure (or "
                    "another buffer) or an enum member, not %.100s", Py_TYPE(v)->tp_name);
    }
    case T_BOOL: {
        int t = PyObject_IsTrue(v);
        if (t < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        _Bool b = t != 0;
        memcpy(slot, &b, sizeof b);
        return 0;
    }
    case T_CHAR:
        if ((PyBytes_Check(v) && PyBytes_GET_SIZE(v) == 1)) {
            slot[0] = (unsigned char)PyBytes_AS_STRING(v)[0];
            return 0;
        }
        if (PyByteArray_Check(v) && PyByteArray_GET_SIZE(v) == 1) {
            slot[0] = (unsigned char)PyByteArray_AS_STRING(v)[0];
            return 0;
        }
        if (PyLong_Check(v)) {
            unsigned long long bits;
            if (int_bits(v, 0, 255, "c_char (0..255)", a, &bits) < 0)
                return -1;
            slot[0] = (unsigned char)bits;
            return 0;
        }
        if (Py_TYPE(v) == (PyTypeObject *)ti->type)
            return copy_instance(v, 1, slot, c, i);
        return arg_error(PyExc_TypeError, a,
                    "c_char needs bytes of length 1 or an int 0..255, not %.100s",
                    Py_TYPE(v)->tp_name);
    case T_WCHAR:
        if (PyUnicode_Check(v) && PyUnicode_GetLength(v) == 1) {
            wchar_t w = (wchar_t)PyUnicode_ReadChar(v, 0);
            memcpy(slot, &w, sizeof w);
            return 0;
        }
        if (Py_TYPE(v) == (PyTypeObject *)ti->type)
            return copy_instance(v, sizeof(wchar_t), slot, c, i);
        return arg_error(PyExc_TypeError, a,
                    "c_wchar needs a str of length 1, not %.100s", Py_TYPE(v)->tp_name);
    case T_I8: case T_U8: case T_I16: case T_U16:
    case T_I32: case T_U32: case T_I64: case T_U64: {
        if (Py_TYPE(v) == (PyTypeObject *)ti->type)
            return copy_instance(v, ti->size, slot, c, i);
        /* an int as it is (the caller's tuple keeps it alive), another
         * number through __index__ */
        PyObject *n = PyLong_Check(v) ? v : NULL;
        if (!n) {
            if (!Py_TYPE(v)->tp_as_number || !Py_TYPE(v)->tp_as_number->nb_index)
                return arg_error(PyExc_TypeError, a, "%.100s needs an int, not %.100s",
                            ((PyTypeObject *)ti->type)->tp_name, Py_TYPE(v)->tp_name);
            if (!(n = PyNumber_Index(v)))
                return arg_error(PyExc_TypeError, a, NULL);
        }
        unsigned long long bits;
        int r = int_bits(n, krange[ti->kind].min, krange[ti->kind].umax, krange[ti->kind].range,
                         a, &bits);
        if (n != v)
            Py_DECREF(n);
        if (r < 0)
            return -1;
        store_bits(slot, ti->size, bits);
        return 0;
    }
    case T_F32:
    case T_F64: {
        size_t size = ti->kind == T_F32 ? 4 : 8;
        if (Py_TYPE(v) == (PyTypeObject *)ti->type)
            return copy_instance(v, size, slot, c, i);
        double d;
        if (is_complex(v)) /* its __float__ (numpy's) drops the imaginary part */
            return arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s",
                        ti->kind == T_F32 ? "c_float" : "c_double", Py_TYPE(v)->tp_name);
        if (is_numpy_scalar(v))
            return ctypes_numpy_float(v, size, slot, a);
        if (PyFloat_Check(v)) {
            d = PyFloat_AS_DOUBLE(v);
        } else if (PyLong_Check(v) || (Py_TYPE(v)->tp_as_number &&
                                       (Py_TYPE(v)->tp_as_number->nb_float ||
                                        Py_TYPE(v)->tp_as_number->nb_index))) {
            d = PyFloat_AsDouble(v);
            if (d == -1.0 && PyErr_Occurred())
                return arg_error(PyExc_TypeError, a, NULL);
        } else {
            /* cuda.bindings lets a c_float stand for a c_double (classify
             * read c->refs for this parameter's type). */
            int is_cf = ti->kind == T_F64 &&
                        PyObject_TypeCheck(v, (PyTypeObject *)c->refs->c_float);
            if (!is_cf)
                return arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s",
                            ti->kind == T_F32 ? "c_float" : "c_double", Py_TYPE(v)->tp_name);
            float f;
            if (copy_instance(v, 4, (unsigned char *)&f, c, i) < 0)
                return -1;
            d = f;
        }
        return put_float(d, size, slot, a);
    }
    case T_VOIDP: {
        if (PyLong_Check(v)) {
            unsigned long long bits;
            if (int_bits(v, 0, (unsigned long long)UINTPTR_MAX, "c_void_p (0..2**64-1)", a, &bits) < 0)
                return -1;
            store_bits(slot, sizeof(void *), bits);
            return 0;
        }
        if (Py_TYPE(v) == (PyTypeObject *)ti->type)
            return copy_instance(v, sizeof(void *), slot, c, i);
        void *addr;
        int r = call_getptr(v, a, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            memcpy(slot, &addr, sizeof addr);
            return 0;
        }
        /* what a pointer takes elsewhere: a device array (before any number:
         * CuPy arrays have __index__ too), DLPack, an object whose `handle`
         * is one (cuda.core's Buffer), an integer object */
        unsigned long long bits;
        r = cai_pointer(v, a, &bits);
        if (r == 0)
            r = pointer_of(v, a, 0, &bits);
        if (r < 0)
            return -1;
        if (r > 0) {
            store_bits(slot, sizeof(void *), bits);
            return 0;
        }
        return arg_error(PyExc_TypeError, a,
                    "c_void_p needs an int, a c_void_p, an object with getPtr(), a device "
                    "array (__cuda_array_interface__, DLPack) or an object whose handle is "
                    "one, not %.100s",
                    Py_TYPE(v)->tp_name);
    }
    case T_AGG: {
        int r = PyObject_IsInstance(v, ti->type);
        if (r < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        if (!r)
            return arg_error(PyExc_TypeError, a, "expected a %.100s instance, not %.100s",
                        ((PyTypeObject *)ti->type)->tp_name, Py_TYPE(v)->tp_name);
        return copy_instance(v, ti->size, slot, c, i);
    }
    case T_SIMPLE: {
        int r = PyObject_IsInstance(v, ti->type);
        if (r < 0)
            return arg_error(PyExc_TypeError, a, NULL);
        PyObject *inst = r ? Py_NewRef(v) : PyObject_CallOneArg(ti->type, v);
        if (!inst)
            return arg_error(PyExc_TypeError, a, NULL);
        r = copy_instance(inst, ti->size, slot, c, i);
        Py_DECREF(inst);
        return r;
    }
    }
    return arg_error(PyExc_SystemError, a, "bad type kind");
}

static size_t slot_bytes(const tinfo *ti)
{
    if (ti->kind == T_AGG || ti->kind == T_SIMPLE)
        return ti->size <= 8 ? 8 : (ti->size + 15) & ~(size_t)15;
    return 8;
}

/* One parameter of a (values, types) pack: its type and its slot's offset
 * in the argument bytes. */
typedef struct {
    tinfo ti;
    size_t off;
} typed_slot;
#define TYPED_INLINE 16

static int pack_typed(cbs_ctypes_cache *ctypes_cache, PyObject *obj, PyObject *types_in,
                      const char *fname, cbs_packed *out)
{
    int rc = -1;
    PyObject *values_in = PyTuple_GET_ITEM(obj, 0);
    PyObject *values = snapshot(values_in), *types = values ? snapshot(types_in) : NULL;
    tctx c = {fname, ctypes_cache, NULL, {{0}}, 0};
    if (!types)
        goto done;
    if (values == values_in && types == PyTuple_GET_ITEM(obj, 1)) {
        /* Both tuples already: the caller's (values, types) cannot change
         * and lives for the call; cbs_pack_detach keeps it as it is. */
        out->borrowed = obj;
    } else {
        /* One reference keeps both snapshots (and so every value) alive. */
        PyObject *pair = PyTuple_Pack(2, values, types);
        if (!pair)
            goto done;
        out->keep = pair;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    if (n != PyTuple_GET_SIZE(types)) {
        arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
             "(values, types) of different lengths: %zd values, %zd types", n,
             PyTuple_GET_SIZE(types));
        goto done;
    }
    if (n == 0) {
        out->params = NULL;
        rc = 0;
        goto done;
    }
    /* Pass 1: classify, lay the slots out (on the stack for a few
     * parameters, else on the heap); pass 2 converts into them. */
    typed_slot inline_plan[TYPED_INLINE], *plan = inline_plan;
    if ((size_t)n > TYPED_INLINE && !(plan = PyMem_Malloc((size_t)n * sizeof *plan))) {
        PyErr_NoMemory();
        goto done;
    }
    size_t total = 0, nnone = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (classify(&c, PyTuple_GET_ITEM(types, k), k, &plan[k].ti) < 0)
            goto free_plan;
        size_t sb = slot_bytes(&plan[k].ti);
        if (sb > 8)
            total = (total + 15) & ~(size_t)15;
        plan[k].off = total;
        total += sb;
        /* a view is held only for a None-typed value with a buffer */
        nnone += plan[k].ti.kind == T_NONE && PyObject_CheckBuffer(PyTuple_GET_ITEM(values, k));
    }
    if (reserve(out, (size_t)n, total, nnone) < 0)
        goto free_plan;
    memset(out->data, 0, total);
    for (Py_ssize_t k = 0; k < n; k++)
        if (put_typed(PyTuple_GET_ITEM(values, k), &plan[k].ti, out->data + plan[k].off,
                      &out->params[k], out, &c, k) < 0)
            goto free_plan;
    rc = 0;
free_plan:
    if (plan != inline_plan)
        PyMem_Free(plan);
done:
    Py_XDECREF(values);
    Py_XDECREF(types);
    return rc;
}

/* ---- argtypes= -------------------------------------------------------------- */

/* A ctypes type's kind as a kernel parameter type. */
static cbs_ktype ktype_of_ctypes(const tinfo *ti)
{
    switch (ti->kind) {
    case T_NONE: return CBS_KT(CBS_KT_UNKNOWN, 0);
    case T_BOOL: return CBS_KT(CBS_KT_BOOL, ti->size);
    case T_CHAR: case T_I8: case T_I16: case T_I32: case T_I64: case T_WCHAR:
        return CBS_KT(CBS_KT_INT, ti->size);
    case T_U8: case T_U16: case T_U32: case T_U64: return CBS_KT(CBS_KT_UINT, ti->size);
    case T_F32: case T_F64: return CBS_KT(CBS_KT_FLOAT, ti->size);
    case T_VOIDP: return CBS_KT(CBS_KT_PTR, ti->size);
    case T_AGG: case T_SIMPLE: break;
    }
    return CBS_KT(CBS_KT_BLOB, ti->size);
}

/* A numpy dtype (duck-typed: a one-letter `kind` and an int `itemsize`):
 * 1 and *out, 0 when o is none, -1 with an exception. */
static int ktype_of_dtype(PyObject *o, cbs_ktype *out)
{
    PyObject *kind, *itemsize;
    int r = cbs_optional_attr(o, "kind", &kind);
    if (r <= 0)
        return r;
    r = cbs_optional_attr(o, "itemsize", &itemsize);
    if (r <= 0) {
        Py_DECREF(kind);
        return r;
    }
    Py_ssize_t size = PyLong_Check(itemsize) ? PyLong_AsSsize_t(itemsize) : -1;
    Py_ssize_t klen = 0;
    const char *k = PyUnicode_Check(kind) ? PyUnicode_AsUTF8AndSize(kind, &klen) : NULL;
    r = 0;
    /* one character, the whole str: "f\0junk" is no kind */
    if (k && klen == 1 && size > 0 && size <= (1 << 20)) {
        r = 1;
        switch (k[0]) {
        case 'b': *out = CBS_KT(CBS_KT_BOOL, size); break;
        case 'i': *out = CBS_KT(CBS_KT_INT, size); break;
        case 'u': *out = CBS_KT(CBS_KT_UINT, size); break;
        case 'f': *out = CBS_KT(CBS_KT_FLOAT, size); break;
        case 'V': *out = CBS_KT(CBS_KT_BLOB, size); break;
        default: r = 0;
        }
    }
    Py_DECREF(kind);
    Py_DECREF(itemsize);
    PyErr_Clear(); /* a failed AsSsize_t / AsUTF8: not a dtype */
    return r;
}

static int argtypes_parse(cbs_tables *tb, PyObject *argtypes, const cbs_pack_layout *l,
                          const char *fname, cbs_ktype *out)
{
    if (!PyTuple_Check(argtypes) && !PyList_Check(argtypes))
        return arg_error(PyExc_TypeError, AT(fname, "argtypes", -1),
                    "expected a tuple or list of types, not %.100s", Py_TYPE(argtypes)->tp_name);
    PyObject *types = snapshot(argtypes);
    if (!types)
        return -1;
    int rc = -1;
    size_t n = (size_t)PyTuple_GET_SIZE(types);
    if (n != l->n) {
        arg_error(PyExc_TypeError, AT(fname, "argtypes", -1),
             "%zu types given, the kernel takes %zu parameters", n, l->n);
        goto done;
    }
    tctx c = {fname, &tb->ctypes, NULL, {{0}}, 0};
    for (size_t k = 0; k < n; k++) {
        PyObject *t = PyTuple_GET_ITEM(types, k);
        Py_ssize_t ix = (Py_ssize_t)k;
        int r = 0;
        if (t == Py_None) {
            out[k] = CBS_KT(CBS_KT_UNKNOWN, 0);
            continue;
        }
        if (PyUnicode_Check(t)) {
            Py_ssize_t len;
            const char *s = PyUnicode_AsUTF8AndSize(t, &len);
            if (!s)
                goto done;
            /* the whole str: "f4\0junk" is no type (C would stop at the NUL) */
            r = strlen(s) == (size_t)len && cbs_kt_from_string(s, &out[k]);
        } else if (PyType_Check(t)) {
            tinfo ti;
            if (classify(&c, t, ix, &ti) < 0)
                goto done;
            out[k] = ktype_of_ctypes(&ti);
            r = 1;
        } else {
            r = ktype_of_dtype(t, &out[k]);
            if (r < 0)
                goto done;
        }
        if (!r) {
            arg_error(PyExc_TypeError, AT(fname, "argtypes item", ix),
                 "%R is not a type (a ctypes type, a numpy dtype, a string such as 'f4', "
                 "'i8' or 'p', or None)", t);
            goto done;
        }
        size_t declared = CBS_KT_SIZE(out[k]);
        if (declared && declared != l->size[k]) {
            arg_error(PyExc_TypeError, AT(fname, "argtypes item", ix),
                 "%R has %zu bytes, the kernel's parameter %zd has %zu", t, declared, ix,
                 l->size[k]);
            goto done;
        }
    }
    rc = 0;
done:
    Py_DECREF(types);
    return rc;
}

/* (values, types): a 2-tuple of two tuples/lists, the second holding only
 * None and types. 1 and *types_out (a new reference to a snapshot of the
 * types), 0 when obj is not of that form, -1 on error. */
static int typed_form(PyObject *obj, PyObject **types_out)
{
    *types_out = NULL;
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2)
        return 0;
    PyObject *v = PyTuple_GET_ITEM(obj, 0), *t = PyTuple_GET_ITEM(obj, 1);
    if (!(PyTuple_Check(v) || PyList_Check(v)) || !(PyTuple_Check(t) || PyList_Check(t)))
        return 0;
    PyObject *types = snapshot(t);
    if (!types)
        return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(types); k++) {
        PyObject *e = PyTuple_GET_ITEM(types, k);
        if (e != Py_None && !PyType_Check(e)) {
            Py_DECREF(types);
            return 0;
        }
    }
    *types_out = types;
    return 1;
}

/* ---- entry points ----------------------------------------------------------- */

int cbs_pack_needs_kernel(PyObject *obj)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj))
        return 0;
    PyObject *types;
    int typed = typed_form(obj, &types);
    if (typed < 0) {
        PyErr_Clear(); /* the pack itself reports it */
        return 0;
    }
    Py_XDECREF(types);
    return !typed;
}

int cbs_pack_kernel_params(cbs_tables *tb, PyObject *obj, void *func, PyObject *func_obj,
                           int kind, PyObject *argtypes, const char *fname, cbs_packed *out)
{
    /* The common case first: an exact tuple of other than two items can
     * only be plain values (no buffer, not an int, not (values, types)),
     * so it skips the checks below. */
    if (PyTuple_CheckExact(obj) && PyTuple_GET_SIZE(obj) != 2)
        return pack_plain(tb, kind, obj, func, func_obj, argtypes, fname, out);
    if (obj == Py_None) {
        out->params = NULL;
        return 0;
    }
    if (PyLong_Check(obj)) {
        unsigned long long bits;
        if (int_bits(obj, 0, (unsigned long long)UINTPTR_MAX, "an address", AT(fname, "kernelParams", -1), &bits) < 0)
            return -1;
        out->params = (void **)(uintptr_t)bits;
        return 0;
    }
    if (PyObject_CheckBuffer(obj)) {
        Py_buffer *view = hold_view(out, obj, PyBUF_ANY_CONTIGUOUS);
        if (!view)
            return arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1), NULL);
        if (view->len % (Py_ssize_t)sizeof(void *) != 0)
            return arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
                        "a buffer of %zd bytes is not an array of pointers", view->len);
        out->params = (void **)view->buf;
        return 0;
    }
    if (PyTuple_Check(obj) || PyList_Check(obj)) {
        PyObject *types;
        int typed = typed_form(obj, &types);
        if (typed < 0)
            return -1;
        if (typed) {
            int rc = pack_typed(&tb->ctypes, obj, types, fname, out);
            Py_DECREF(types);
            return rc;
        }
        return pack_plain(tb, kind, obj, func, func_obj, argtypes, fname, out);
    }
    return arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
                "expected None, an int address, a buffer of pointers, (values, types) or a "
                "tuple/list of values, not %.100s", Py_TYPE(obj)->tp_name);
}

/* 1 when item k of extra (params[0..k) already packed) is the value of
 * key `key`: extra is key, value pairs up to CU_LAUNCH_PARAM_END, which
 * the driver reads no further than. */
static int extra_value_of(void *const *params, size_t k, uintptr_t key)
{
    if (k % 2 == 0)
        return 0;
    for (size_t i = 0; i < k; i += 2)
        if ((uintptr_t)params[i] == CU_LAUNCH_PARAM_END_AS_INT)
            return 0;
    return (uintptr_t)params[k - 1] == key;
}

/* The buffers given in extra as Python buffers against what the driver
 * reads there: a size_t through CU_LAUNCH_PARAM_BUFFER_SIZE's value, as
 * many bytes as it says through CU_LAUNCH_PARAM_BUFFER_POINTER's. An int
 * address stays unchecked, as in C. 0, or -1 with ValueError. */
static int extra_check(const char *fname, const Py_buffer *ptr_view, size_t ptr_at,
                       const Py_buffer *size_view, size_t size_at)
{
    if (!size_view)
        return 0;
    if (size_view->len < (Py_ssize_t)sizeof(size_t))
        return arg_error(PyExc_ValueError, AT(fname, "extra item", (Py_ssize_t)size_at),
                    "the CU_LAUNCH_PARAM_BUFFER_SIZE buffer has %zd bytes, fewer than the %zu of "
                    "the size_t the driver reads there", size_view->len, sizeof(size_t));
    size_t need;
    memcpy(&need, size_view->buf, sizeof need);
    if (ptr_view && (size_t)ptr_view->len < need)
        return arg_error(PyExc_ValueError, AT(fname, "extra item", (Py_ssize_t)ptr_at),
                    "the CU_LAUNCH_PARAM_BUFFER_POINTER buffer has %zd bytes, fewer than the %zu "
                    "its CU_LAUNCH_PARAM_BUFFER_SIZE (item %zu) says the driver reads",
                    ptr_view->len, need, size_at);
    return 0;
}

int cbs_pack_extra_slow(PyObject *obj, const char *fname, cbs_packed *out)
{
    if (PyLong_Check(obj)) {
        unsigned long long bits;
        if (int_bits(obj, 0, (unsigned long long)UINTPTR_MAX, "an address", AT(fname, "extra", -1), &bits) < 0)
            return -1;
        out->params = (void **)(uintptr_t)bits;
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj))
        return arg_error(PyExc_TypeError, AT(fname, "extra", -1),
                    "expected None, an int address or a tuple/list of ints, None and buffers, "
                    "not %.100s", Py_TYPE(obj)->tp_name);
    PyObject *items = snapshot(obj);
    if (!items)
        return -1;
    out->keep = items;
    size_t n = (size_t)PyTuple_GET_SIZE(items);
    size_t nbuf = 0;
    for (size_t k = 0; k < n; k++)
        nbuf += PyObject_CheckBuffer(PyTuple_GET_ITEM(items, k)) != 0;
    /* One more pointer: a terminating CU_LAUNCH_PARAM_END, always. */
    if (reserve(out, n + 1, 0, nbuf) < 0)
        return -1;
    /* The Python buffer given as item k, or NULL (checked below). */
    const Py_buffer *ptr_view = NULL, *size_view = NULL;
    size_t ptr_at = 0, size_at = 0;
    for (size_t k = 0; k < n; k++) {
        PyObject *v = PyTuple_GET_ITEM(items, k);
        void *addr = NULL;
        if (v == Py_None) {
            addr = NULL;
        } else if (PyLong_Check(v)) {
            unsigned long long bits;
            if (int_bits(v, 0, (unsigned long long)UINTPTR_MAX, "an address",
                         AT(fname, "extra item", (Py_ssize_t)k), &bits) < 0)
                return -1;
            addr = (void *)(uintptr_t)bits;
        } else if (PyObject_CheckBuffer(v) && (size_t)out->nviews < nbuf) {
            Py_buffer *view = hold_view(out, v, PyBUF_ANY_CONTIGUOUS);
            if (!view)
                return arg_error(PyExc_TypeError, AT(fname, "extra item", (Py_ssize_t)k), NULL);
            addr = view->buf;
            if (extra_value_of(out->params, k, CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT))
                ptr_view = view, ptr_at = k;
            else if (extra_value_of(out->params, k, CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT))
                size_view = view, size_at = k;
        } else {
            int r = call_getptr(v, AT(fname, "extra item", (Py_ssize_t)k), &addr);
            if (r < 0)
                return -1;
            if (r == 0)
                return arg_error(PyExc_TypeError, AT(fname, "extra item", (Py_ssize_t)k),
                            "expected an int, None, a buffer or an object with getPtr(), not "
                            "%.100s", Py_TYPE(v)->tp_name);
        }
        out->params[k] = addr;
    }
    out->params[n] = NULL;
    return extra_check(fname, ptr_view, ptr_at, size_view, size_at);
}
