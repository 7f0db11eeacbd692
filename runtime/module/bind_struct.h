/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_struct.h — the classes of a generated module's structs and unions.
 *
 * The generated module describes each record of the header with static
 * tables (cbs_struct_def: size, alignment, one cbs_field_def per field, the
 * PyGetSetDef array that exposes them) and asks this file to make a class
 * of it. Every field of every class is read and written by the same two
 * functions, cbs_struct_get / cbs_struct_set, which find the field in the
 * getset closure.
 *
 * Instances:
 *   - an owning instance holds `size` zeroed bytes of its own (PyMem_Calloc:
 *     16-aligned, enough for every record of cuda.h);
 *   - a view (a nested record field, an element of an array of records)
 *     points into another instance's bytes and holds a strong reference to
 *     the instance that owns them, so `desc.res.array.hArray = h` writes the
 *     parent's bytes and the parent outlives the view;
 *   - `T(_ptr=address)` wraps foreign memory without owning it. Lifetime
 *     caveat: nothing keeps that memory alive; the caller must keep it valid
 *     for as long as the instance (and its views) are used.
 * Kernel parameter fields (CBS_F_KERNEL_PARAMS / _EXTRA, from the
 * kernel-params-field rules) take every form a launch takes; the packed
 * buffer (bind_packer.h: cbs_pack_detach) becomes a kept object of the
 * field, so it and the values it came from live as long as the struct (and
 * copies of it). Plain values are typed by the kernel in the struct's func
 * (else kern) field at the time of assignment: set it first.
 * Arrays of records (CBS_F_RECORD_ARRAY, from the field-count rules): the
 * pointer field also takes a list or tuple of instances of its element
 * class. Their bytes are copied into a new array root: an owning instance
 * of the element class with nelems records, whose keep dict takes over
 * what each element kept (so the elements' own pointer targets live as
 * long as the array), and which is the field's kept object. Reading the
 * field gives a list of views of that array while the field still points
 * at it (cuda.bindings gives instances wrapping the same memory), else the
 * int address as for any pointer field (NULL in a snake_case module: an
 * empty list, "Counted arrays" below); an empty list sets NULL. The count
 * field stays the caller's to set; cbs_arg_struct raises ValueError when it
 * says more records than the owned array holds, or (the field set from a
 * buffer) than fit in the buffer's bytes.
 * Arrays of handles (CBS_F_HANDLE_ARRAY, the field-count rules on a `T *`
 * whose T is a handle class, extSemArray): the same for a list or tuple of
 * instances of the handle class (or ints, the handles' values): the values
 * are copied into a bytes object of nelems * elem_size bytes, the field's
 * kept object (immutable: no Python code can write or move the array; only
 * a library filling it, cbs_struct_fill, writes it, during its call);
 * reading gives a list of new handle objects of those values while the
 * field still points at it, else the int address. Count check as above.
 * Host buffers (cbs_host_extent, from the host-bytes rules): a pointer
 * field set from a Python buffer (its memoryview is the kept object) is
 * checked when the struct is passed to a call, while the field still
 * points into it and its `when` field holds the given value: the buffer
 * must hold the bytes the call touches, computed from integer fields of
 * the same record (ValueError naming the field, the buffer's length and
 * the bytes needed) and, where the driver writes, be writable
 * (TypeError). An int address, a struct or an object with getPtr() is
 * not checked, as in C.
 * Checks at every depth: cbs_arg_struct walks the record passed, its
 * nested records (every member of a union: a check applies only where the
 * field still holds the address of what its owner keeps; members that lay
 * out the same bytes alike are the same check, named by the first), and the
 * elements of the record arrays it owns, so the same struct is checked
 * when nested (CUgraphNodeParams.extSemSignal) as when passed directly;
 * messages name the path (CUgraphNodeParams_st.extSemSignal.numExtSems).
 *
 * Counted arrays (field-count rules on a fixed array, `T FIELD[N]` with
 * an integer count field COUNT of the same record, nvmlClkMonStatus_t's
 * clkMonList): the count says how many of the N elements are valid, so
 * the field reads as a list of the first min(COUNT, N) elements (a COUNT
 * larger than N, junk from from_buffer or from_ptr, is clamped: reading
 * never goes past the array) and takes a list or tuple of at most N
 * elements (ValueError naming the field beyond), written first, the rest
 * zeroed, and COUNT set to their number (sets_count). In a snake_case
 * module the count field's snake_case name is hidden, as cuda.bindings
 * hides it (its C name still answers); the field-count pointer fields of
 * such a module (sets_count) likewise set COUNT to the length of a list
 * set (0 for None or an empty list; an int address leaves it as it is)
 * and read as at most COUNT elements of the array they own (COUNT is
 * written after the pointer is published: a reader in between sees at
 * most the owned array, the clamp), or as an empty list while NULL, as
 * cuda.bindings reads them. A count whose C name is its
 * snake_case name too (`count`) is hidden whole.
 *
 * Filled arrays (field-count-query rules, cbs_struct_fill below): a
 * function's output struct gets, after the call that asked the library
 * for the count, a zeroed array of that many elements that the object
 * owns, which the library fills in the next call; it reads as above.
 *
 * Driver-filled handle arrays (CBS_F_HANDLE_OUT, phGraph_out): the field
 * is the driver's to set (cuGraphAddNode writes it into the struct passed);
 * reading it gives a lazy read-only sequence (bind_handle_seq.h) as long
 * as its count field says when read, as cuda.bindings' list is; each item
 * is the handle read from where the field points when it is accessed, and
 * the NULL handle while the field is NULL, as cuda.bindings reads it
 * (reading the field builds nothing: no loop over a count that describes
 * no memory). Like C, reading trusts
 * a non-NULL address: a garbage address the caller wrote there is the
 * caller's fault.
 * Pointer fields set from Python objects keep those objects alive (a
 * function-pointer field set from a ctypes function pointer too: its code
 * dies with it; not from an int address): the
 * root instance (the owner of the bytes) has a dict `keep` from the field's
 * byte offset in the root to the object; writing the field again replaces
 * or drops the entry, and copying a record into another copies the entries
 * with it.
 *
 * Module invariant: a generated module's state begins with a `cbs_tables`
 * member (module.c.tmpl: module_state.tables), so that
 * `(cbs_tables *)PyType_GetModuleState(type)` finds the enum types, handle
 * classes and struct classes that field conversions need.
 *
 * Free-threading: instances are plain memory like the C structs they
 * mirror: concurrent writes of the same field race like in C (no crash, no
 * Python object corrupted); the `keep` dict is created once with an atomic
 * compare-exchange and is itself thread-safe. A scalar pointer field
 * (CBS_F_POINTER, _FUNCPTR, _RECORD_ARRAY, _HANDLE_ARRAY) changes with its
 * kept object in one step for the other setters of such fields of the
 * same root (the root's `publish` mutex; under the GIL, no Python code
 * runs in between): whichever value wins, the object it points into is the one kept, so two
 * threads setting it cannot leave it pointing at freed memory.
 *
 * Error contract as bind_support.h: -1 or NULL with an exception set;
 * messages name the class and the field.
 */
#ifndef CUBIND_BIND_STRUCT_H
#define CUBIND_BIND_STRUCT_H

#include "bind_packer.h"
#include "bind_support.h"

/* How a field's bytes are converted to and from Python. */
typedef enum {
    CBS_F_SIGNED,        /* signed integer of `size` bytes */
    CBS_F_UNSIGNED,      /* unsigned integer of `size` bytes */
    CBS_F_FLOAT,         /* float */
    CBS_F_DOUBLE,        /* double */
    CBS_F_ENUM,          /* enum tables.enums[index]; `size` bytes */
    CBS_F_HANDLE,        /* opaque handle: class tables.handles[index] */
    CBS_F_VALUE_HANDLE,  /* integer handle (CUdeviceptr): tables.handles[index] */
    CBS_F_RECORD,        /* nested record: class tables.structs[index] */
    CBS_F_POINTER,       /* data pointer: an int address */
    CBS_F_CHARS,         /* char array: bytes, zero-padded when shorter;
                            with aux 1, text: reads as a str up to the
                            first NUL (UTF-8, undecodable bytes replaced),
                            takes a str (UTF-8) or bytes */
    CBS_F_FUNCPTR,       /* function pointer: an int address, an instance of
                            tables.handles[index] (its class; -1: none) or a
                            ctypes function pointer; with aux (a host
                            function), also a Python callable */
    CBS_F_BYTES,         /* opaque bytes (a type the generator cannot describe) */
    CBS_F_KERNEL_PARAMS, /* void **kernelParams: every form cuLaunchKernel takes
                            (bind_packer.h); index: the CUfunction field typing
                            plain values, aux: the CUkernel field or -1 */
    CBS_F_KERNEL_EXTRA,  /* void **extra: every form of a launch's extra */
    CBS_F_RECORD_ARRAY,  /* T *: a pointer field that also takes a list of
                            records tables.structs[index] (field-count rules);
                            aux: the integer field counting them, or -1 */
    CBS_F_HANDLE_ARRAY,  /* T *: a pointer field that also takes a list of
                            handles tables.handles[index] of elem_size bytes
                            each (field-count rules); aux as above; index
                            -1: plain unsigned integers of elem_size bytes
                            (ints both ways: nvml's vgpuTypeIds) */
    CBS_F_HANDLE_OUT     /* T *: a pointer to an array of handles that the
                            driver owns and fills (field-count-out rules):
                            set like CBS_F_POINTER; reads as a sequence
                            (bind_handle_seq.h) of as many handles
                            tables.handles[index] (elem_size bytes each)
                            as integer field aux says, each read from the
                            array on access; ValueError while NULL */
} cbs_field_kind;

typedef struct {
    const char *name;
    size_t offset;       /* bytes from the start of the record */
    size_t size;         /* of one element */
    cbs_field_kind kind;
    int index;           /* enum, handle or struct index in the tables; -1 */
    size_t count;        /* array length; 0 = scalar */
    int bit_width;       /* -1 unless a bit-field (integer kinds only) */
    int bit_offset;      /* bit-fields: bits from `offset` (little-endian) */
    int aux;             /* CBS_F_KERNEL_PARAMS, _RECORD_ARRAY,
                            _HANDLE_ARRAY: see above; a fixed array
                            (count > 0, not CBS_F_CHARS): its integer
                            count field, or -1 (see "Counted arrays"); CBS_F_FUNCPTR of a
                            host function (void (*)(void *)): its data
                            field (`void *userData` after it), which
                            makes the field take a Python callable
                            (bind_struct.c: a host node's callable);
                            else -1 */
    size_t elem_size;    /* CBS_F_HANDLE_ARRAY: bytes of one handle (1, 2,
                            4 or 8); else 0 */
    int sets_count;      /* a counted array whose count field aux the
                            array's setter keeps (see "Counted arrays"):
                            1 for every fixed counted array; a
                            CBS_F_RECORD_ARRAY / _HANDLE_ARRAY field of a
                            snake_case module, whose count is hidden; else
                            0 */
} cbs_field_def;

/* The terms of the bytes a call touches through a host buffer, in the
 * order of gen/rules/rules_bind.h's cb_hb_term: the bytes needed are ((z +
 * depth - 1) * slice + y + rows - 1) * pitch + x + size, none when size,
 * rows or depth is 0 (an absent rows or depth is 1, any other term 0). */
enum { CBS_HB_SIZE, CBS_HB_ROWS, CBS_HB_DEPTH, CBS_HB_PITCH, CBS_HB_SLICE, CBS_HB_X, CBS_HB_Y,
       CBS_HB_Z, CBS_HB_NTERMS };

/* A host-bytes rule on a pointer field of a record (see above). Every
 * index is into the record's field table. */
typedef struct {
    int buffer;                /* the CBS_F_POINTER field */
    int writes;                /* the driver writes there: writable */
    int when;                  /* an enum field, or -1: always checked */
    long long when_value;      /* checked while `when` holds this */
    int terms[CBS_HB_NTERMS];  /* integer fields; -1: absent */
    unsigned long long size;   /* a constant SIZE (terms[CBS_HB_SIZE] -1:
                                  the rule gave a byte count), else 0 */
} cbs_host_extent;

/* A field-default rule (gen/rules/rules_directives.def): the integer
 * field of `size` bytes at `offset` holds `value` in every object that
 * owns its memory, from its allocation (dim3's 1, 1, 1). */
typedef struct {
    size_t offset, size;
    unsigned long long value;
} cbs_field_default;

typedef struct {
    const char *qualname;      /* "cubind.driver.CUDA_MEMCPY2D_st" */
    const char *doc;
    size_t size, align;
    const cbs_field_def *fields;
    size_t nfields;
    PyGetSetDef *getset;       /* one entry per field, closure = &fields[i] */
    int checked;               /* cbs_arg_struct has something to check: a
                                  CBS_F_RECORD_ARRAY or _HANDLE_ARRAY field
                                  with a count, a host extent, or a nested
                                  record or owned array element that has */
    const cbs_host_extent *extents;
    size_t nextents;
    /* a struct-version rule's versioned struct (gen/rules/rules.h): the
     * value of its version field at version_offset, stored in every
     * instance allocated here, zeroed otherwise (nvmlMemory_v2_t's
     * sizeof | 2 << 24); 0 when not versioned */
    size_t version_offset;
    unsigned int version;
    const cbs_field_default *defaults; /* field-default rules, or NULL */
    size_t ndefaults;
    int constructors;          /* the class has cuda.bindings' from_ptr,
                                  from_buffer and from_data (snake_case
                                  modules: bind_struct_from.h) */
} cbs_struct_def;

/* What field conversions need from the module. A generated module_state
 * begins with one (see the invariant above). */
/* cbs_tables.kernel_proc's functions: a kernel's name (a CUfunction's, a
 * CUkernel's), and the module / library it belongs to. */
enum { CBS_KPROC_FUNC_NAME, CBS_KPROC_KERNEL_NAME, CBS_KPROC_FUNC_MODULE,
       CBS_KPROC_KERNEL_LIBRARY, CBS_KPROC_COUNT };

typedef struct cbs_tables {
    cbs_enum *enums;
    PyTypeObject **handles;
    PyTypeObject **structs;
    const cbs_struct_def *struct_defs;
    size_t nstructs;
    size_t nenums, nhandles;   /* to check the field tables at import */
    const cubind_rt_api *rt;   /* the shared runtime (kernel layouts) */
    /* cuFuncGetParamInfo (kern 0) or cuKernelGetParamInfo (kern 1) of the
     * module, or NULL (absent; no exception set) */
    void *(*param_info)(struct cbs_tables *tables, int kern);
    /* the driver functions that say what a kernel is (CBS_KPROC_*), or
     * NULL (absent; no exception set) */
    void *(*kernel_proc)(struct cbs_tables *tables, int which);
    cbs_ctypes_cache ctypes;   /* the packer's, for (values, types) (bind_packer.h) */
    PyTypeObject *handle_seq;  /* the class driver-filled handle arrays read
                                  as (bind_handle_seq.h), set at module
                                  init before any struct class exists */
    PyTypeObject *field_buffer; /* the class a snake_case record's numeric
                                  arrays lend their bytes to numpy through
                                  (bind_ndarray.h), set at module init
                                  before any struct class exists */
    _Atomic(PyObject *) numpy_asarray; /* numpy.asarray once imported;
                                  Py_None: numpy cannot be imported; NULL:
                                  not tried yet (bind_ndarray.h) */
} cbs_tables;

typedef struct {
    PyObject_HEAD
    unsigned char *data;       /* size bytes: owned, a view's, or foreign */
    PyObject *owner;           /* views: the root instance; NULL for a root */
    _Atomic(PyObject *) keep;  /* roots: offset -> kept object, lazily */
    const cbs_struct_def *def;
    void *alloc;               /* owned storage to free (data is inside) */
    int owns;                  /* data was allocated here */
    size_t nelems;             /* an array root: data holds nelems records
                                  (nelems * def->size bytes); else 0 */
#ifdef Py_GIL_DISABLED
    PyMutex publish;           /* roots: held while a pointer field and its
                                  kept object change together */
#endif
    PyObject *base;            /* roots of from_ptr(owner=) / from_buffer /
                                  from_data (bind_struct_from.h): what keeps
                                  the viewed bytes alive (the owner, or a
                                  memoryview holding the buffer's export);
                                  set before the object is shared, dropped
                                  in dealloc; else NULL */
    int readonly;              /* roots: field writes raise ValueError (views
                                  ask their root); fixed at creation */
    int sized;                 /* a snake_case class's object whose number
                                  of records is `length` (bind_struct_array.h:
                                  T(0), a view of a record array field),
                                  set before the object is shared; 0: one
                                  record, or nelems of an array root */
    Py_ssize_t length;
} cbs_struct;

/* The number of records of a struct object (1 unless an array: a sized
 * object's length, an array root's nelems). */
Py_ssize_t cbs_struct_array_len(PyObject *self);

/* The getset functions of every field (closure: const cbs_field_def *). */
PyObject *cbs_struct_get(PyObject *self, void *closure);
int cbs_struct_set(PyObject *self, PyObject *value, void *closure);
/* `ptr` of a snake_case module's record: the address of the C struct the
 * object holds or views, as getPtr() (closure unused). */
PyObject *cbs_struct_get_ptr(PyObject *self, void *closure);

/* Creates the class for def (not added to the module: the caller adds it
 * under each of its names). The module's state must begin with its filled
 * cbs_tables: every field's index is checked against it (SystemError). */
PyTypeObject *cbs_struct_type_create(PyObject *module, const cbs_struct_def *def);
/* The same with `extra` type slots (a {0, NULL}-ended array of at most 8,
 * or NULL): each replaces the class's slot of its id, or is added
 * (bind_struct_array.c: cuda.bindings' array classes). */
PyTypeObject *cbs_struct_type_create_with(PyObject *module, const cbs_struct_def *def,
                                          const PyType_Slot *extra);

/* For the classes built on these (bind_struct_array.h). */
/* The description of t, one of its module's struct classes; NULL with
 * TypeError (not a struct class) or SystemError (no module state). */
const cbs_struct_def *cbs_struct_def_of(PyTypeObject *t);
/* Whether s (a root or a view) is read-only: its root's `readonly`. */
int cbs_struct_readonly(PyObject *s);
/* How many elements of the fixed array field f of s (f->count > 0) hold
 * values: f->count, or for a counted array min(COUNT, f->count), a
 * negative COUNT as 0 ("Counted arrays" above). */
size_t cbs_struct_fixed_len(cbs_struct *s, const cbs_field_def *f);
/* A new owning instance of t (def: its description) holding n zeroed
 * records, each but for its version and field defaults: an array root
 * (cbs_struct.nelems = n) when n > 1, the one record of T() otherwise. */
PyObject *cbs_struct_records(PyTypeObject *t, const cbs_struct_def *def, size_t n);
/* A new view, an instance of t (def: its description), of the record at
 * data inside the storage of `of` (a struct object, root or view: the view
 * holds the root). */
PyObject *cbs_struct_view(PyTypeObject *t, const cbs_struct_def *def, PyObject *of,
                          unsigned char *data);
/* The same, as an array of `length` records from data (a snake_case
 * class's sized object, bind_struct_array.h). */
PyObject *cbs_struct_array_view(PyTypeObject *t, const cbs_struct_def *def, PyObject *of,
                                unsigned char *data, Py_ssize_t length);
/* The class's tp_new (T(_ptr=0): an address to wrap, or zeroed storage),
 * tp_init (field keywords) and tp_repr (one record's fields). */
PyObject *cbs_struct_new(PyTypeObject *t, PyObject *args, PyObject *kwds);
int cbs_struct_init(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *cbs_struct_repr(PyObject *self);

/* What a struct parameter takes besides an instance of its class
 * (cbs_arg_struct's `accept`, or-ed): None for NULL; an int address of the
 * caller's memory, unchecked (a struct-addresses module, as cuda.bindings'
 * intptr_t parameters); and whether the library writes the struct (an
 * instance that is read-only is refused). */
enum {
    CBS_ACCEPT_NONE = 1,
    CBS_ACCEPT_ADDRESS = 2,
    CBS_ACCEPT_WRITTEN = 4,
};

/* Whether o is what CBS_ACCEPT_ADDRESS takes where `accept` allows it: an
 * int (not a bool), the caller's memory by its address. */
static inline int cbs_is_struct_address(PyObject *o, unsigned accept)
{
    return (accept & CBS_ACCEPT_ADDRESS) && PyIndex_Check(o) && !PyBool_Check(o);
}

/* Function marshalling. An instance of t gives its data pointer; None gives
 * NULL and an int (not a bool) its address where `accept` says so;
 * anything else is a TypeError naming func/param, and so is a read-only
 * instance of a struct the call writes (CBS_ACCEPT_WRITTEN).
 * At any depth of the record (see "Checks at every depth"): ValueError
 * naming func/param and the field's path when a count field says more
 * elements than the array its field-count field owns holds (the driver
 * would read past it), or than the buffer it was set from holds; ValueError
 * when a host buffer holds fewer bytes than the call touches, TypeError
 * when the call writes a read-only one. */
int cbs_arg_struct(PyObject *o, PyTypeObject *t, unsigned accept, const char *func,
                   const char *param, void **ptr);
/* A new owning, zeroed instance of t and its data pointer (out-structs). */
PyObject *cbs_struct_alloc(PyTypeObject *t, void **data);
/* Sets field `field` of the struct object o from the Python argument
 * value as assigning the attribute does (the field's conversions and
 * checks: an input-fields rule's parameters); on failure the exception is
 * raised again as its own type (an IndexError as a ValueError) naming
 * func/param: 0, or -1 with it set. */
int cbs_arg_field(PyObject *o, const char *field, PyObject *value, const char *func,
                  const char *param);
/* The Python objects o's bytes keep alive (pointer fields, kernel
 * parameters): a new list of (offset, object) pairs, or None when there
 * are none; NULL with an exception. For the registry (registry-keep). */
PyObject *cbs_struct_kept(PyObject *o);

/* The calls with an array a field-count-query output gets at most
 * (gen/rules/rules_directives.def; templates/shapes/out_struct.tmpl):
 * after the call asking the count, one per count the library gives that
 * is larger than the last (the count grew between the calls). */
#define CBS_FILL_TRIES 4

/* A field-count-query output's array: when the count field of the
 * field-count pointer field `field` (its C name) of struct object o,
 * as the library wrote it, says more elements than *have (the length of
 * the array o got here last; 0 at first), the field gets a new zeroed
 * array of that many that o owns (records of the field's element class,
 * or values of elem_size bytes: a bytes object only o's keep dict holds,
 * which the library writes during the next call), published as setting a
 * list does; *have becomes its length and 1 is returned: call the library
 * again. 0 when the count is at most *have (nothing more to fill). -1
 * with an exception: SystemError (o has no such field), MemoryError. */
int cbs_struct_fill(PyObject *o, const char *field, size_t *have);

/* An input-fields rule's room field (`FIELD=NAME` on a counted pointer
 * array): the Python argument value, a number n of at least 1 that the
 * field's count field can hold, gives the field a new zeroed array of n
 * elements that o owns and sets its count field to n (the room the
 * library may fill). 0, or -1 with TypeError, OverflowError or ValueError
 * naming func and param (SystemError: o has no such field). */
int cbs_arg_field_room(PyObject *o, const char *field, PyObject *value, const char *func,
                       const char *param);

/* An output-field rule's value: field `field` of struct object o as
 * reading the attribute gives it, but with `count` (the C name of an
 * integer field of o the library wrote; NULL: all of it) only its first
 * `count` elements: a view of the records (keeping the array alive), or a
 * slice of a list or numpy array. A new reference, or NULL. */
PyObject *cbs_struct_field_head(PyObject *o, const char *field, const char *count);

/* An output-tuple rule's value: a tuple of n items of struct object o,
 * item i from items[2i] (a field's C name) and items[2i+1]: NULL, the
 * field as reading the attribute gives it; else the C name of an integer
 * field of o the library wrote, the field's bytes (a fixed array), the
 * first that many of them, clamped to the array's bytes. A new reference,
 * or NULL (SystemError: o has no such field). */
PyObject *cbs_struct_fields_tuple(PyObject *o, const char *const *items, size_t n);

/* A new owning instance of t holding a copy of src's size bytes. */
PyObject *cbs_struct_from(PyTypeObject *t, const void *src);

/* The most parameters a maker takes (cbs_struct_make). */
#define CBS_MAKER_MAX_PARAMS 16

/* A maker rule's function, func(params[0], ...): a new zeroed instance of t
 * with field fields[k] set from params[k]'s argument by the field's setter,
 * in order. The arguments are parsed as a binding's (positional or by
 * keyword, all required); a value the setter refuses is its TypeError /
 * ValueError / OverflowError naming func and the parameter. n is at most
 * CBS_MAKER_MAX_PARAMS (SystemError otherwise). */
PyObject *cbs_struct_make(PyTypeObject *t, const char *func, const char *const *params,
                          const char *const *fields, Py_ssize_t n, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames);

#endif
