/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_packer.c — the kernel parameter packer (see bind_packer.h): the
 * forms of kernelParams and extra, the kernels' layouts, the packed
 * storage; a plain value's bytes come from bind_convert.h's converters.
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
 *                   takes in the typed paths (cbs_pointer_of: a device array,
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
 * by the converter of its parameter's kind (the table CBS_CONVERTERS of
 * bind_convert.h; docs/ARCHITECTURE.md shows it): the kind comes from
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
 * packer is raised by cbs_arg_error. Each converter opens with its fast part
 * (inline, no call: the values nearly every launch passes), which the
 * packing loop tries before calling the converter (cbs_convert_fast: one jump
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
#include "bind_convert.h"
#include "bind_kernel_code.h"
#include "bind_kernel_types.h"
#include "bind_layout.h"
#include "bind_struct.h" /* cbs_tables */
#include "cubind_compat.h"
#include "rt_alloc.h"

#include <cuda.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <wchar.h>

typedef CUresult (*param_info_fn)(CUfunction, size_t, size_t *, size_t *);

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

/* reserve's general case: any part that does not fit p's inline room. */
static int reserve_heap(cbs_packed *p, size_t nparams, size_t nbytes, size_t nviews)
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

/* params: nparams pointers; data: nbytes (16-aligned); views: room for
 * nviews held buffers (reserved up front: a Py_buffer never moves once its
 * exporter has filled it in). Inline: what fits p's inline room (nearly
 * every launch) takes no call. */
static CBS_ALWAYS_INLINE int reserve(cbs_packed *p, size_t nparams, size_t nbytes, size_t nviews)
{
    if (nparams > CBS_PACK_INLINE_PARAMS || nbytes > CBS_PACK_INLINE_BYTES ||
        nviews > (size_t)p->views_cap)
        return reserve_heap(p, nparams, nbytes, nviews);
    p->nparams = nparams;
    p->ndata = nbytes;
    p->params = p->inline_params;
    p->data = p->inline_data;
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
    l->untyped = 0;
}

/* An untyped kernel's plain values (l->untyped, no argtypes=), before they
 * are packed by size: the warning, once per layout (a kernel's, queried
 * once per load; a handle's copy takes the flag with it), naming the
 * kernel and how to type it; and, for the raising face (`strict`), an int
 * refused for a parameter of 2 or 4 bytes (a half's or a float's size),
 * which the kernel may read as a float: by size it would be an integer's
 * bits there (2 reaching a float as 2.8e-45). An 8-byte parameter still
 * takes an int (an address: of an extern "C" kernel's 8-byte parameters
 * nearly all are pointers); a double there has the warning only. 0, or -1
 * with the TypeError, or the warning raised as an error (a warnings
 * filter). */
static int untyped_values(const cbs_pack_layout *l, PyObject *const *items, size_t n,
                          int strict, const char *fname)
{
    const char *name = l->name[0] ? l->name : "(its name unknown)";
    /* the block is malloc'ed, never a const object: its flag may be set */
    _Atomic int *warned = (_Atomic int *)&l->warned;
    if (!atomic_load_explicit(warned, memory_order_relaxed) &&
        !atomic_exchange_explicit(warned, 1, memory_order_relaxed)) {
        PyObject *cubind = PyImport_ImportModule("cubind");
        PyObject *category = cubind ? PyObject_GetAttrString(cubind, "UntypedKernelWarning")
                                    : NULL;
        Py_XDECREF(cubind);
        if (!category)
            return -1;
        int r = PyErr_WarnFormat(category, 1,
                                 "%s: kernel '%s' has no parameter types (neither a C++ name nor "
                                 "PTX): its values are packed by their parameters' sizes alone, "
                                 "so an int for a float parameter reaches it as an integer's "
                                 "bits; pass argtypes= (one type per parameter: \"f4\", \"i4\", "
                                 "\"p\", ctypes or numpy types), or load the kernel's PTX (nvcc "
                                 "-ptx, or a fat binary that holds it)",
                                 fname, name);
        Py_DECREF(category);
        if (r < 0)
            return -1;
    }
    if (!strict)
        return 0;
    for (size_t k = 0; k < n; k++) {
        size_t size = l->size[k];
        if (CBS_KT_KIND(l->type[k]) == CBS_KT_UNKNOWN && (size == 2 || size == 4) &&
            PyLong_Check(items[k]))
            return cbs_arg_error(PyExc_TypeError, AT(fname, "kernel parameter", (Py_ssize_t)k),
                        "kernel '%s' has no parameter types, and an int (%.80R) for its "
                        "%zu bytes would be packed as an integer where the kernel may read a "
                        "float; pass argtypes=, load the kernel's PTX, or give a typed value "
                        "(ctypes.c_int%zu(...), numpy.int%zu(...), or a float)",
                        name, items[k], size, 8 * size, 8 * size);
    }
    return 0;
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
            cbs_arg_error(PyExc_ValueError, AT(fname, "kernel parameter", (Py_ssize_t)n),
                 "the driver reports offset %zu and size %zu", off, size);
            return NULL;
        }
        if (n == cap) {
            if (cap >= ((size_t)1 << 20)) {
                rt_free(pairs);
                cbs_arg_error(PyExc_ValueError, AT(fname, "kernelParams", -1),
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
        cbs_arg_error(PyExc_ValueError, AT(fname, "kernelParams", -1),
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
                                        PyObject *argtypes, int strict, const char *fname,
                                        cbs_packed *out)
{
    const cubind_rt_api *rt = tb->rt;
    if (!func)
        return cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
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
            return cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
                        "plain values need %s (a CUDA 12.4 or newer driver); pass (values, "
                        "types) with ctypes types, or a prepared void *[] instead",
                        param_info_name(kind));
        l = layout_for(tb, kind, func, (param_info_fn)get_param_info, n, fname, &ref);
        if (!l)
            goto done;
        /* warned before the handle's copy is made: the copy takes the flag */
        if (l->untyped && !argtypes && l->n == n && untyped_values(l, items, n, strict, fname) < 0)
            goto done;
        if (slot)
            cbs_layout_copy_remember(slot, l);
    } else if (l->untyped && !argtypes && untyped_values(l, items, n, strict, fname) < 0) {
        goto done;
    }
    if (l->n != n) {
        if (n < l->n)
            cbs_arg_error(PyExc_TypeError, AT(fname, "kernel parameter", (Py_ssize_t)n),
                 "missing: the kernel takes %zu parameters, %zu given", l->n, n);
        else
            cbs_arg_error(PyExc_TypeError, AT(fname, "kernel parameter", (Py_ssize_t)l->n),
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
    /* Read once: every store through dst (unsigned char) may alias *out
     * and *l, so fields read in the loop would be read again per value. */
    unsigned char *data = out->data;
    void **params = out->params;
    const size_t *offs = l->off, *sizes = l->size;
    for (size_t k = 0; k < n; k++) {
        PyObject *v = items[k];
        unsigned char *dst = data + offs[k];
        if (!cbs_convert_fast(v, types[k], sizes[k], dst) &&
            cbs_convert(v, types[k], sizes[k], dst, fname, (Py_ssize_t)k, l->name) < 0)
            goto done;
        params[k] = dst;
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
                      PyObject *argtypes, int strict, const char *fname, cbs_packed *out)
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
                      (size_t)PyTuple_GET_SIZE(values), func, func_obj, argtypes, strict, fname,
                      out);
}

int cbs_pack_values(cbs_tables *tb, PyObject *const *values, size_t n, void *func,
                    PyObject *func_obj, int kind, PyObject *argtypes, int strict,
                    const char *where, cbs_packed *out)
{
    return pack_items(tb, kind, values, n, func, func_obj, argtypes, strict, where, out);
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
        cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
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
        return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
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
        return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
    if (code && PyUnicode_Check(code) && PyUnicode_GetLength(code) == 1) {
        Py_UCS4 ch = PyUnicode_ReadChar(code, 0);
        Py_DECREF(code);
        if (ch == 'z' || ch == 'Z' || ch == 'O' || ch == 'P' || ch == 'g')
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                        "unsupported ctypes type %.100s", ((PyTypeObject *)type)->tp_name);
        int simple = PyObject_IsSubclass(type, r->simple_cdata);
        if (simple < 0)
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
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
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        if (!agg)
            goto unsupported;
        ti->kind = T_AGG;
    }
    {
        PyObject *sz = PyObject_CallOneArg(r->sizeof_fn, type);
        if (!sz)
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        ti->size = PyLong_AsSize_t(sz);
        Py_DECREF(sz);
        if (ti->size == (size_t)-1 && PyErr_Occurred())
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), NULL);
        if (ti->size > ((size_t)1 << 30))
            return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
                        "ctypes type %.100s is too large", ((PyTypeObject *)type)->tp_name);
    }
remember:
    if (c->nseen < TCACHE)
        c->seen[c->nseen++] = *ti;
    return 0;
unsupported:
    return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i),
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
    int r = cbs_put_buffer_exact(v, size, dst, AT(c->fname, "kernel parameter", i));
    if (r == 0)
        return cbs_arg_error(PyExc_TypeError, AT(c->fname, "kernel parameter", i), "%.100s has no buffer",
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
    if (cbs_is_numpy_bool(v)) {
        int t = PyObject_IsTrue(v);
        if (t < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        d = t ? 1.0 : 0.0;
    } else if (nb && nb->nb_index && !PyFloat_Check(v)) {
        PyObject *n = PyNumber_Index(v);
        if (!n)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        d = PyLong_AsDouble(n);
        int same = -1;
        if (!(d == -1.0 && PyErr_Occurred())) {
            PyObject *back = PyLong_FromDouble(d);
            same = back ? PyObject_RichCompareBool(back, n, Py_EQ) : -1;
            Py_XDECREF(back);
        }
        Py_DECREF(n);
        if (same < 0)
            return cbs_arg_error(PyExc_OverflowError, a, NULL);
        if (!same || (size == 4 && isfinite(d) && fabs(d) <= FLT_MAX && (double)(float)d != d))
            return cbs_arg_error(PyExc_TypeError, a, "%s: %R is not exactly representable", type, v);
    } else if (nb && nb->nb_float && !cbs_is_complex(v)) {
        d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        if (size == 4 && isfinite(d) && fabs(d) <= FLT_MAX && (double)(float)d != d)
            return cbs_arg_error(PyExc_TypeError, a, "%s: %R is not exactly a float", type, v);
    } else {
        return cbs_arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s", type,
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
        int r = cbs_call_getptr(v, a, &addr);
        if (r < 0)
            return -1;
        if (r > 0) {
            *param = addr;          /* the object's storage; the snapshot keeps it alive */
            return 0;
        }
        if (PyObject_CheckBuffer(v)) {
            Py_buffer *view = hold_view(out, v, PyBUF_ANY_CONTIGUOUS);
            if (!view)
                return cbs_arg_error(PyExc_TypeError, a, NULL);
            *param = view->buf;
            return 0;
        }
        if (!PyLong_CheckExact(v) && !PyBool_Check(v)) {
            PyObject *n = NULL;
            r = enum_member_int(v, &n);
            if (r < 0)
                return cbs_arg_error(PyExc_TypeError, a, NULL);
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
        return cbs_arg_error(PyExc_TypeError, a,
                    "with type None the value must have getPtr(), be a ctypes Structure (or "
                    "another buffer) or an enum member, not %.100s", Py_TYPE(v)->tp_name);
    }
    case T_BOOL: {
        int t = PyObject_IsTrue(v);
        if (t < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
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
        return cbs_arg_error(PyExc_TypeError, a,
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
        return cbs_arg_error(PyExc_TypeError, a,
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
                return cbs_arg_error(PyExc_TypeError, a, "%.100s needs an int, not %.100s",
                            ((PyTypeObject *)ti->type)->tp_name, Py_TYPE(v)->tp_name);
            if (!(n = PyNumber_Index(v)))
                return cbs_arg_error(PyExc_TypeError, a, NULL);
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
        if (cbs_is_complex(v)) /* its __float__ (numpy's) drops the imaginary part */
            return cbs_arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s",
                        ti->kind == T_F32 ? "c_float" : "c_double", Py_TYPE(v)->tp_name);
        if (cbs_is_numpy_scalar(v))
            return ctypes_numpy_float(v, size, slot, a);
        if (PyFloat_Check(v)) {
            d = PyFloat_AS_DOUBLE(v);
        } else if (PyLong_Check(v) || (Py_TYPE(v)->tp_as_number &&
                                       (Py_TYPE(v)->tp_as_number->nb_float ||
                                        Py_TYPE(v)->tp_as_number->nb_index))) {
            d = PyFloat_AsDouble(v);
            if (d == -1.0 && PyErr_Occurred())
                return cbs_arg_error(PyExc_TypeError, a, NULL);
        } else {
            /* cuda.bindings lets a c_float stand for a c_double (classify
             * read c->refs for this parameter's type). */
            int is_cf = ti->kind == T_F64 &&
                        PyObject_TypeCheck(v, (PyTypeObject *)c->refs->c_float);
            if (!is_cf)
                return cbs_arg_error(PyExc_TypeError, a, "%s needs a float, not %.100s",
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
        int r = cbs_call_getptr(v, a, &addr);
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
        r = cbs_cai_pointer(v, a, &bits);
        if (r == 0)
            r = cbs_pointer_of(v, a, 0, &bits);
        if (r < 0)
            return -1;
        if (r > 0) {
            store_bits(slot, sizeof(void *), bits);
            return 0;
        }
        return cbs_arg_error(PyExc_TypeError, a,
                    "c_void_p needs an int, a c_void_p, an object with getPtr(), a device "
                    "array (__cuda_array_interface__, DLPack) or an object whose handle is "
                    "one, not %.100s",
                    Py_TYPE(v)->tp_name);
    }
    case T_AGG: {
        int r = PyObject_IsInstance(v, ti->type);
        if (r < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        if (!r)
            return cbs_arg_error(PyExc_TypeError, a, "expected a %.100s instance, not %.100s",
                        ((PyTypeObject *)ti->type)->tp_name, Py_TYPE(v)->tp_name);
        return copy_instance(v, ti->size, slot, c, i);
    }
    case T_SIMPLE: {
        int r = PyObject_IsInstance(v, ti->type);
        if (r < 0)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        PyObject *inst = r ? Py_NewRef(v) : PyObject_CallOneArg(ti->type, v);
        if (!inst)
            return cbs_arg_error(PyExc_TypeError, a, NULL);
        r = copy_instance(inst, ti->size, slot, c, i);
        Py_DECREF(inst);
        return r;
    }
    }
    return cbs_arg_error(PyExc_SystemError, a, "bad type kind");
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
        cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
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
        return cbs_arg_error(PyExc_TypeError, AT(fname, "argtypes", -1),
                    "expected a tuple or list of types, not %.100s", Py_TYPE(argtypes)->tp_name);
    PyObject *types = snapshot(argtypes);
    if (!types)
        return -1;
    int rc = -1;
    size_t n = (size_t)PyTuple_GET_SIZE(types);
    if (n != l->n) {
        cbs_arg_error(PyExc_TypeError, AT(fname, "argtypes", -1),
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
            cbs_arg_error(PyExc_TypeError, AT(fname, "argtypes item", ix),
                 "%R is not a type (a ctypes type, a numpy dtype, a string such as 'f4', "
                 "'i8' or 'p', or None)", t);
            goto done;
        }
        size_t declared = CBS_KT_SIZE(out[k]);
        if (declared && declared != l->size[k]) {
            cbs_arg_error(PyExc_TypeError, AT(fname, "argtypes item", ix),
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
                           int kind, PyObject *argtypes, int strict, const char *fname,
                           cbs_packed *out)
{
    /* The common case first: an exact tuple of other than two items can
     * only be plain values (no buffer, not an int, not (values, types)),
     * so it skips the checks below. */
    if (PyTuple_CheckExact(obj) && PyTuple_GET_SIZE(obj) != 2)
        return pack_plain(tb, kind, obj, func, func_obj, argtypes, strict, fname, out);
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
            return cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1), NULL);
        if (view->len % (Py_ssize_t)sizeof(void *) != 0)
            return cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
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
        return pack_plain(tb, kind, obj, func, func_obj, argtypes, strict, fname, out);
    }
    return cbs_arg_error(PyExc_TypeError, AT(fname, "kernelParams", -1),
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
        return cbs_arg_error(PyExc_ValueError, AT(fname, "extra item", (Py_ssize_t)size_at),
                    "the CU_LAUNCH_PARAM_BUFFER_SIZE buffer has %zd bytes, fewer than the %zu of "
                    "the size_t the driver reads there", size_view->len, sizeof(size_t));
    size_t need;
    memcpy(&need, size_view->buf, sizeof need);
    if (ptr_view && (size_t)ptr_view->len < need)
        return cbs_arg_error(PyExc_ValueError, AT(fname, "extra item", (Py_ssize_t)ptr_at),
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
        return cbs_arg_error(PyExc_TypeError, AT(fname, "extra", -1),
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
                return cbs_arg_error(PyExc_TypeError, AT(fname, "extra item", (Py_ssize_t)k), NULL);
            addr = view->buf;
            if (extra_value_of(out->params, k, CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT))
                ptr_view = view, ptr_at = k;
            else if (extra_value_of(out->params, k, CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT))
                size_view = view, size_at = k;
        } else {
            int r = cbs_call_getptr(v, AT(fname, "extra item", (Py_ssize_t)k), &addr);
            if (r < 0)
                return -1;
            if (r == 0)
                return cbs_arg_error(PyExc_TypeError, AT(fname, "extra item", (Py_ssize_t)k),
                            "expected an int, None, a buffer or an object with getPtr(), not "
                            "%.100s", Py_TYPE(v)->tp_name);
        }
        out->params[k] = addr;
    }
    out->params[n] = NULL;
    return extra_check(fname, ptr_view, ptr_at, size_view, size_at);
}
