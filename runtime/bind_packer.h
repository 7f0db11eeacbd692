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
 *   5. any other tuple or list: plain values typed by the kernel itself
 *      (cuFuncGetParamInfo), packed into one argument buffer at the
 *      kernel's offsets.
 * Anything else is a TypeError. See bind_packer.c for the conversions.
 *
 * `extra`: None, an int address, or a tuple/list whose items are None (0),
 * ints, objects with getPtr() (its result) or buffers (their address).
 *
 * Everything `params` points into stays valid until cbs_pack_release:
 * argument bytes live in the cbs_packed itself (inline, on the caller's
 * stack) or on the heap past the inline bound; values whose storage is used
 * in place are kept alive by references and Py_buffer views held here.
 * The caller may detach its thread state between pack and release but must
 * re-attach before release (it releases buffers and references).
 *
 * Thread safety: no global mutable state except the per-kernel layout
 * cache, a sharded table guarded by mutexes whose entries are immutable,
 * reference-counted layouts (see bind_packer.c).
 */
#ifndef CUBIND_BIND_PACKER_H
#define CUBIND_BIND_PACKER_H

#include "bind_support.h"

/* Inline bounds: a launch within them touches no heap. */
#define CBS_PACK_INLINE_PARAMS 64
#define CBS_PACK_INLINE_BYTES 1024
#define CBS_PACK_INLINE_VIEWS 2

typedef struct cbs_packed {
    void **params;                 /* what the driver receives; NULL for None */
    /* ---- private ---- */
    unsigned char *data;           /* argument bytes: inline_data or heap */
    void *heap_params;             /* PyMem blocks owned, or NULL */
    void *heap_data;
    PyObject *keep;                /* a strong reference (the values snapshot) */
    Py_buffer *views;              /* inline_views or a PyMem block */
    Py_ssize_t nviews, views_cap;
    Py_buffer inline_views[CBS_PACK_INLINE_VIEWS];
    void *inline_params[CBS_PACK_INLINE_PARAMS];
    _Alignas(16) unsigned char inline_data[CBS_PACK_INLINE_BYTES];
} cbs_packed;

/* Cheap: sets the small fields only (the inline storage stays untouched). */
void cbs_pack_init(cbs_packed *p);

/* kernelParams of a launch of CUfunction `func`. `get_param_info` is the
 * driver's cuFuncGetParamInfo (CUresult (*)(CUfunction, size_t, size_t *,
 * size_t *)) or NULL when the driver lacks it (then plain values are a
 * TypeError). 0, or -1 with TypeError / OverflowError / ValueError naming the
 * parameter ("cuLaunchKernel(): kernel parameter 2: ..."). */
int cbs_pack_kernel_params(PyObject *obj, void *func, void *get_param_info, const char *fname,
                           cbs_packed *out);

/* `extra` of a launch (see above). 0, or -1 with an exception set. */
int cbs_pack_extra(PyObject *obj, const char *fname, cbs_packed *out);

/* Releases buffers and references and frees heap storage; safe after a
 * failed pack and on an initialised, unused one; leaves *p initialised. */
void cbs_pack_release(cbs_packed *p);

/* Forgets every cached kernel layout (O(1): bumps a generation). For the
 * bindings of cuModuleUnload / cuLibraryUnload, after a successful unload,
 * since the driver may hand a freed CUfunction's value to a new kernel. */
void cbs_pack_forget_layouts(void);

#endif
