/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_packer.h — the kernel parameter packer: turns the Python forms of
 * `kernelParams` and `extra` (cuLaunchKernel and friends) into the `void **`
 * arrays the driver receives.
 *
 * kernelParams forms, tried in this order:
 *   1. None                      -> NULL
 *   2. an int                    -> that address (a prepared void *[])
 *   3. an object with the buffer protocol (ctypes array of c_void_p, NumPy
 *      uint64 array, ...)        -> its buffer's address (held until release)
 *   4. (values, types): a 2-tuple of two tuples/lists of equal length whose
 *      second element holds only None and type objects (cuda.bindings' form)
 *   5. any other tuple or list: plain values at the kernel's offsets
 *      (cuFuncGetParamInfo), packed into one argument buffer, each
 *      converted by its parameter's type where that is known (argtypes=,
 *      the kernel's C++ name, its module's PTX), else by its size.
 * Anything else is a TypeError. See bind_packer.c for the conversions.
 *
 * `extra`: None, an int address, or a tuple/list whose items are None (0),
 * ints, objects with getPtr() (its result) or buffers (their address).
 *
 * Plain values (form 5) are laid out in one buffer at the kernel's own
 * offsets, which is what the driver's CU_LAUNCH_PARAM_BUFFER_POINTER takes;
 * a launch whose caller passed no `extra` hands the driver that buffer
 * instead of a pointer per parameter (cbs_pack_prefer_buffer). The bytes
 * the kernel receives are the same; the driver takes one buffer faster:
 * on the H200, 512 int parameters cost 2.9 µs a launch that way against
 * 4.5 µs through kernelParams, 3 or 16 parameters the same or 2-6% less
 * (bench/launch_forms_probe.c).
 *
 * Everything `params` points into stays valid until cbs_pack_release:
 * argument bytes live in the cbs_packed itself (inline, on the caller's
 * stack) or on the heap past the inline bound; values whose storage is used
 * in place are kept alive by references and Py_buffer views held here.
 * The caller may detach its thread state between pack and release but must
 * re-attach before release (it releases buffers and references).
 *
 * Thread safety: no global mutable state: per-call storage is the caller's
 * (cbs_packed, on its stack), per-kernel layouts are immutable metas of
 * entries of the shared registry (see bind_packer.c).
 */
#ifndef CUBIND_BIND_PACKER_H
#define CUBIND_BIND_PACKER_H

#include "bind_support.h"

#include <cuda.h> /* CU_LAUNCH_PARAM_*, for cbs_pack_prefer_buffer */

/* Inline bounds: a launch within them touches no heap. */
#define CBS_PACK_INLINE_PARAMS 64
#define CBS_PACK_INLINE_BYTES 1024
#define CBS_PACK_INLINE_VIEWS 2

typedef struct cbs_packed {
    void **params;                 /* what the driver receives; NULL for None */
    /* ---- private ---- */
    size_t nparams, ndata;         /* reserved: pointers in params, bytes in data */
    unsigned char *data;           /* argument bytes: inline_data or heap */
    void *heap_params;             /* PyMem blocks owned, or NULL */
    void *heap_data;
    PyObject *keep;                /* a strong reference (the values snapshot) */
    PyObject *borrowed;            /* the caller's tuple of plain values, or its
                                      (values, types) of two tuples; not owned:
                                      what cbs_pack_detach keeps when keep is NULL */
    Py_buffer *views;              /* inline_views or a PyMem block */
    Py_ssize_t nviews, views_cap;
    size_t buffer_bytes;           /* plain values: the kernel's parameter bytes in
                                      data (its layout's total), else 0 */
    void *buffer_extra[5];         /* the `extra` list that passes data whole */
    Py_buffer inline_views[CBS_PACK_INLINE_VIEWS];
    void *inline_params[CBS_PACK_INLINE_PARAMS];
    _Alignas(16) unsigned char inline_data[CBS_PACK_INLINE_BYTES];
} cbs_packed;

/* Cheap: sets the small fields only (the inline storage stays untouched).
 * Inline, as is release's common case: every launch packs twice
 * (kernelParams and extra) and releases both. */
static CBS_ALWAYS_INLINE void cbs_pack_init(cbs_packed *p)
{
    p->params = NULL;
    p->nparams = 0;
    p->ndata = 0;
    p->data = NULL;
    p->heap_params = NULL;
    p->heap_data = NULL;
    p->keep = NULL;
    p->borrowed = NULL;
    p->views = p->inline_views;
    p->nviews = 0;
    p->views_cap = CBS_PACK_INLINE_VIEWS;
    p->buffer_bytes = 0;
}

/* What the (values, types) form reads of ctypes (its module, base classes,
 * sizeof and the standard scalar types), once per interpreter: it lives in
 * the module state (cbs_tables), zero-initialised; the first pack that
 * needs it imports ctypes and publishes an immutable block of strong
 * references (compare-and-swap; a thread that loses the race frees its
 * own), later packs read it with one acquire load. Standard scalar types
 * are then recognised by identity, without attribute lookups. */
typedef struct cbs_ctypes_cache {
    _Atomic(struct cbs_ctypes_refs *) refs;
} cbs_ctypes_cache;

/* The module's clear and traverse slots: release / visit the block. */
void cbs_ctypes_cache_clear(cbs_ctypes_cache *cache);
int cbs_ctypes_cache_traverse(cbs_ctypes_cache *cache, visitproc visit, void *arg);

/* kernelParams of a launch of kernel `func`: a CUfunction (kind
 * CUBIND_REG_KERNEL_LAYOUT, typed by cuFuncGetParamInfo) or a CUkernel
 * (CUBIND_REG_KERNEL_LAYOUT_KERN, cuKernelGetParamInfo); a CUkernel given
 * as a CUfunction (an int, cuda.core's Kernel.handle), which
 * cuFuncGetParamInfo refuses, is typed as a CUkernel. tb: the module's
 * tables (the runtime, the ctypes cache, the getters); a driver without
 * the getter takes no plain values (TypeError). Plain values convert by
 * the parameter's type where it is known: from argtypes (a sequence of one
 * ctypes type, numpy dtype or type string per parameter, NULL when not
 * given) or from the kernel's C++ name (cuFuncGetName); else by its size:
 * then the first such launch of the kernel warns (cubind.UntypedKernelWarning),
 * and with `strict` (the raising face) an int for a parameter of 2 or 4
 * bytes is a TypeError (the kernel may read a half or a float there).
 * `where` prefixes messages ("cuLaunchKernel()",
 * "CUDA_KERNEL_NODE_PARAMS.kernelParams"). 0, or -1 with TypeError /
 * OverflowError / ValueError naming the parameter ("cuLaunchKernel():
 * kernel parameter 2: ..."). Layouts are cached in rt's registry, and
 * also in func_obj, the Python object `func` was read from (NULL when
 * none), when it is a kernel handle (cbs_kernel_handle): a launch through
 * that object then reads the layout without the registry's lock. */
struct cbs_tables;
int cbs_pack_kernel_params(struct cbs_tables *tb, PyObject *obj, void *func, PyObject *func_obj,
                           int kind, PyObject *argtypes, int strict, const char *where,
                           cbs_packed *out);

/* The plain-values form given as an array: values[0..n), alive and
 * unchanged for the call (a vectorcall's arguments: cubind.launch). As
 * cbs_pack_kernel_params otherwise; *out keeps no reference to them. */
int cbs_pack_values(struct cbs_tables *tb, PyObject *const *values, size_t n, void *func,
                    PyObject *func_obj, int kind, PyObject *argtypes, int strict,
                    const char *where, cbs_packed *out);

/* 1 when obj is the plain-values form (it needs the kernel's layout). */
int cbs_pack_needs_kernel(PyObject *obj);

/* `extra` of a launch (see above). 0, or -1 with an exception set. Inline:
 * None and a small address (the usual extra=0 or None) without a call. */
int cbs_pack_extra_slow(PyObject *obj, const char *where, cbs_packed *out);

static CBS_ALWAYS_INLINE int cbs_pack_extra(PyObject *obj, const char *where, cbs_packed *out)
{
    long long addr;
    if (obj == Py_None) {
        out->params = NULL;
        return 0;
    }
    if (cbs_compact_int(obj, &addr) && addr >= 0) {
        out->params = (void **)(uintptr_t)addr;
        return 0;
    }
    return cbs_pack_extra_slow(obj, where, out);
}

/* A launch's kernelParams pack `kp` and extra pack `ex`, both packed: when
 * kp holds plain values (its bytes already at the kernel's offsets) and
 * the caller's extra is NULL, the driver is to receive them as one buffer:
 * ex's list then names kp's bytes and kp passes NULL. Otherwise both stay
 * as packed. ex's list lives in kp: release ex no later than kp (a launch
 * releases both after the call). */
static CBS_ALWAYS_INLINE void cbs_pack_prefer_buffer(cbs_packed *kp, cbs_packed *ex)
{
    if (!kp->buffer_bytes || ex->params)
        return;
    kp->buffer_extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    kp->buffer_extra[1] = kp->data;
    kp->buffer_extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    kp->buffer_extra[3] = &kp->buffer_bytes;
    kp->buffer_extra[4] = CU_LAUNCH_PARAM_END;
    ex->params = kp->buffer_extra;
    kp->params = NULL;
}

/* Moves a successful pack to the heap, for a struct field that must keep
 * it (CUDA_KERNEL_NODE_PARAMS.kernelParams): returns a new object owning
 * the copy (pointers into the argument bytes rebased), the buffer views
 * (acquired again, so they stay where exporters put them) and the values,
 * and sets *params to what the driver must receive, valid while the
 * object lives. *p is released either way. NULL with an exception. */
PyObject *cbs_pack_detach(cbs_packed *p, void ***params);

/* cbs_pack_release's slow path: releases the buffer views and references
 * and frees the heap storage p owns, then re-initialises p. */
void cbs_pack_release_owned(cbs_packed *p);

/* Releases buffers and references and frees heap storage; safe after a
 * failed pack and on an initialised, unused one; leaves *p initialised.
 * Idempotent: what it releases it forgets, and a pack that owns nothing (it
 * used only the inline storage and no references: the common launch) is
 * left as it is, already released, without a call. */
static CBS_ALWAYS_INLINE void cbs_pack_release(cbs_packed *p)
{
    if (p->nviews || p->views != p->inline_views || p->heap_params || p->heap_data || p->keep)
        cbs_pack_release_owned(p);
}

#endif
