/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify.h — the classify stage: how each parameter of each function
 * crosses the Python boundary, decided from the model by general rules
 * plus the special cases of the rules file, read as the facts rules_bind
 * resolved (rules_bind.h): this stage never looks a rule up by its
 * directive's name. classify_model also collects the module's handle
 * classes (handles.h) and classifies every record's fields
 * (classify_records.h), so that the render stage only spells what is
 * decided here (render_names.h spells the kinds). `cubind classify`
 * prints all of it (classify_json.h).
 *
 * Pipeline: parse (model.h) -> rules_load + rules_bind (rules.h,
 * rules_bind.h) -> classify (this) -> render (render.h).
 *
 * A function is supported only when every parameter has a kind below; the
 * others are listed by `cubind generate` with the first reason and are not
 * exported at all.
 */
#ifndef CUBIND_CLASSIFY_H
#define CUBIND_CLASSIFY_H

#include "classify/classify_records.h"
#include "classify/handles.h"
#include "model/model.h"
#include "rules/rules.h"
#include "rules/rules_bind.h"
#include "classify/shapes.h"

/* What one C value is, wherever it sits (by value, behind a pointer, in an
 * array). */
typedef enum {
    EK_NONE,
    EK_INT,            /* integer; range in is_signed/umax/smin/smax */
    EK_FLOAT,          /* float or double */
    EK_ENUM,           /* enum: a member of its enum type or an int */
    EK_HANDLE,         /* opaque handle (CUstream): its class, an int or None */
    EK_VALUE_HANDLE,   /* integer handle (CUdevice): its class or an int */
    EK_STRUCT,         /* a struct/union: an instance of its class */
    EK_POINTER,        /* void *: an int address or None */
    EK_BOOL,           /* a one-byte truth value: a bool (any object as input) */
    EK_STRING,         /* a NUL-terminated char[fixed_len]: bytes (or str in) */
    EK_CSTRING         /* a const char * (an element of an input array of
                          strings): bytes or str, held by the call's tuple */
} cb_ekind;

/* One field of a struct parameter that is a Python parameter of its own
 * (an input-fields rule): set on the struct before the call. */
typedef struct {
    const char *field;        /* its C name (the struct class's attribute) */
    const char *pyname;       /* the Python parameter */
    int is_int;               /* an integer or enum field (or a room):
                                 `int` in stubs */
    int is_room;              /* a counted pointer to records: the Python
                                 parameter is their number, an array the
                                 binding makes (cbs_arg_field_room) */
    int is_bytes;             /* a fixed array of 1-byte unsigned integers
                                 (a nonce, a PRM request): `bytes` in
                                 stubs, as the field takes any sequence of
                                 small ints */
} cb_input_field;

/* One ITEM of an output-tuple rule, parsed: FIELD, or FIELD/COUNT. */
typedef struct {
    const char *field;        /* a field of the struct (its C name) */
    const char *count;        /* FIELD/COUNT: the integer field counting
                                 the bytes of array FIELD returned; NULL:
                                 FIELD as the struct object reads it */
} cb_output_item;

typedef struct cb_pclass {
    cb_shape shape;           /* how it crosses the boundary (shapes.def) */
    cb_ekind elem;
    const cb_param *param;
    const char *pyname;       /* the Python name (rename-param rules applied) */
    const char *doc;          /* its param-doc rule's TEXT, else NULL */
    const cb_type *value;     /* the element type: the param, or its pointee */
    int enum_index;           /* EK_ENUM: index into model.enums, else -1 */
    int record_index;         /* EK_STRUCT: index into model.records, else -1 */
    const char *handle;       /* EK_HANDLE / EK_VALUE_HANDLE: class name */
    const char *cast_from;    /* EK_HANDLE: another class the parameter also
                                 takes (a handle-cast rule), else NULL */
    int count_index;          /* arrays: index of the count parameter, else -1;
                                 SH_KERNEL_PARAMS: index of the CUfunction */
    int params_index;         /* SH_KERNEL_EXTRA: index of the kernelParams
                                 parameter it pairs with (an earlier one:
                                 the call packs it first), else -1 */
    long long fixed_len;      /* SH_*_FIXED: element count, else 0 */
    int host_writes;          /* SH_IN_BUFFER with a host-bytes rule: 1 when
                                 the driver writes the buffer, 0 when it
                                 only reads it (count_index: its byte
                                 count); -1 without a rule */
    int count_less;           /* SH_IN_ARRAY: holds count - count_less elements
                                 (a `count F P C-N` rule: globalStrides) */
    int data_index;           /* SH_CALLBACK: index of its SH_CALLBACK_DATA */
    int stream_index;         /* SH_CALLBACK: the stream-protocol handle
                                 parameter (CUstream), or -1 */
    int object_index;         /* SH_CALLBACK: the handle output the function
                                 creates (CUuserObject *), or -1 */
    cb_callback_kind callback_kind; /* SH_CALLBACK: its callback rule's KIND */
    const char *trampoline;   /* SH_SYNC_CALLBACK: the runtime's C function */
    const char *output_field; /* SH_OUT_STRUCT: the field an output-field
                                 rule returns instead of the struct (or
                                 the one field of a versioned struct
                                 besides its version and input_fields),
                                 NULL */
    const char *output_count; /* SH_OUT_STRUCT: the integer field an
                                 output-field rule's COUNT names (only
                                 that many elements of output_field are
                                 returned), NULL */
    const cb_output_item *output_items; /* SH_OUT_STRUCT: an output-tuple
                                 rule's ITEMs, the tuple returned instead
                                 of the struct; NULL */
    size_t noutput_items;     /* how many; 0 without the rule */
    int size_of_fixed;        /* SH_STRUCT_SIZE: the fixed-rule array whose
                                 bytes it is (its N elements), else -1 */
    const char *records_field; /* SH_IN/INOUT_RECORDS: the integer field a
                                 value of the sequence sets (the records
                                 rule's FIELD), NULL */
    /* SH_IN_FIELDS / SH_OUT_STRUCT: the fields an input-fields rule
     * takes as Python parameters (after this parameter's place), set on
     * the struct before the call; NULL and 0 for every other parameter */
    const cb_input_field *input_fields;
    size_t ninput_fields;
    int length_of;            /* SH_ARRAY_LENGTH: the SH_IN_ARRAY whose
                                 length it is, else -1 */
    /* SH_ATTR_OUT / SH_ATTR_IN: the attribute parameter and, per enumerator
     * with a known type, the element that enumerator's value is (a case with
     * fixed_len -1 is an array of them filling the `count` bytes of an
     * output sized by its count parameter; EK_STRING cases hold fixed_len
     * chars). count_index, when set, is the byte size: an input (the buffer
     * the driver fills has that many bytes) or an SH_ATTR_SIZE; for
     * SH_ATTR_OUT_ARRAY the input array of sizes, and attr_index the input
     * array of attributes, whose count is the number of values. */
    int attr_index;
    struct cb_pclass *attr_cases;
    const char **attr_names;
    size_t nattr_cases;
    /* buffer-size rule: the function giving the size of an SH_OUT_BUFFER
     * (bytes) or of an SH_OUT_ARRAY (elements), called with the parameters
     * before this one (each an SH_VALUE) and a pointer to the size */
    const cb_function *size_fn;
    int optional;             /* an input with a default (0 / None) */
    int is_count;             /* the count of some array (used for checks) */
    int length_only;          /* an SH_COUNT_INOUT under count-query: its
                                 value after the call is its array's
                                 length, not returned (classify_is_output) */
    /* integer range of EK_INT / EK_VALUE_HANDLE / EK_ENUM values */
    int is_signed;
    unsigned long long umax;
    long long smin, smax;
    /* Set last, from the above (classify.c: derive_params), so that render
     * tests indices and flags, never a shape: data_index, stream_index and
     * object_index are -1 outside SH_CALLBACK, attr_index outside the
     * SH_ATTR_* shapes with an attribute, trampoline NULL outside
     * SH_SYNC_CALLBACK. */
    int kernel_index;         /* SH_KERNEL_PARAMS: the CUfunction parameter
                                 (its count_index), else -1 */
    int funcptr_class;        /* SH_IN_FUNCPTR whose type is a handle class
                                 (CUhostFn): it also takes that class */
    int stream_like;          /* its handle class implements
                                 __cuda_stream__ (handles.h) */
    int pointer_handle;       /* `handle` names a class of cb_classes.handles
                                 holding a pointer (CB_HANDLE_POINTER), else
                                 0: an EK_HANDLE without one is passed as an
                                 integer; set for attr_cases too */
    int writable;             /* SH_IN_BUFFER the call writes: its
                                 host-bytes rule says so, or else the
                                 pointee is not const */
    int fixed_bytes;          /* SH_OUT_FIXED of a char type: bytes */
    /* count-bound rule (classify_count_bounds): an SH_OUT_ARRAY whose
     * input count a count function bounds above CBS_COUNT_PROBE_ABOVE,
     * called as bound_fn(&count, parameter bound_arg); NULL and -1 for
     * every other parameter */
    const cb_function *bound_fn;
    int bound_arg;
    /* field-count-query (classify_records.h: fill; set by derive_params):
     * an SH_OUT_STRUCT whose record has an array the library fills, its
     * field's C name and its count field's; NULL for every other
     * parameter */
    const char *fill_field, *fill_count;
} cb_pclass;

/* Whether a parameter appears in the Python signature / the result. */
int classify_is_input(const cb_pclass *pc);
int classify_is_output(const cb_pclass *pc);

/* One registry-* rule of a function (rules.h), its names resolved. */
typedef struct {
    cb_registry_action action;
    int param;                /* create/owned: the handle output; destroy,
                                 depend: the handle; keep: the struct input */
    int other;                /* create: DEP; owned: OWNER; keep: TARGET;
                                 depend: DEP; -1 for none */
    cb_registry_kind kind;    /* the registry kind of param's handle type
                                 (CB_REG_KIND_NONE for keep) */
    cb_registry_kind other_kind; /* other's, or CB_REG_KIND_NONE */
} cb_regact;

/* The undo rule of a function (rules.h), from its fact (rules_bind.h)
 * checked by classify_undo: what to call when the driver created
 * something but the result could not be built. */
typedef struct {
    const cb_function *fn;    /* the undo function (a proc slot of its own) */
    int *param;               /* per argument: the parameter it names, or -1 */
    const char **literal;     /* per argument with param -1: an integer */
    size_t nargs;             /* fn->nparams */
} cb_undo;

typedef struct {
    const cb_function *fn;
    cb_pclass *params;        /* fn->nparams entries */
    cb_undo *undo;            /* NULL when no undo rule names fn */
    cb_regact *reg;           /* registry-* rules of this function */
    size_t nreg;
    size_t nin, nout;
    int supported;
    const char *why;          /* first reason it is not, "" when supported */
    int keep_gil;             /* a trivial getter: the call does not detach */
    int callable;             /* it has an entry point to call through: a
                                 library's symbol, or a driver function with a
                                 PFN typedef in cudaTypedefs.h (the C API
                                 exports only these, supported or not) */
    int returns_string;       /* the error-string function: returns const char * */
    /* A library's function without a status (classify.c's returns_kind):
     * returns_void returns nothing; returns_value an integer, its first
     * output. Both always succeed. returns_field: it returns the status in
     * the result-field rule's struct. */
    int returns_void, returns_value, returns_field;
    /* a function returning a record of the model by value (cudaCreateChannelDesc):
     * its index in model.records, the call's first output (its status
     * is the success value); -1 for any other */
    long long returns_record;
    /* error-log rule: on failure the raising face's exception carries the
     * log LOGFN writes for parameter log_param (SIZEFN gives its size) */
    const cb_function *log_size_fn, *log_fn;
    int log_param;
    int unloads_kernels;      /* success invalidates cached kernel layouts */
    int code_before, code_after; /* kernel-code hooks (bind_kernel_code.h) */
    /* Set last (classify.c: derive_function): a result made only of plain
     * values (shapes.def's plain column) is kept for reuse between calls
     * (result_cache, templates/driver/results.c); the raising face keeps
     * it only when it is more than one value or a lone handle. */
    int cache_result, cache_raising_result;
    int code_image;           /* code_after: the code image parameter (the one
                                 SH_IN_BUFFER without a count), checked before
                                 the call and its length passed to the hook;
                                 else -1 */
} cb_fclass;

typedef struct {
    cb_fclass *functions;     /* parallel to model.functions */
    size_t nfunctions, nsupported;
    const cb_facts *facts;    /* the rules' facts it was classified by */
    handle_class *handles;    /* the module's handle classes (handles.h) */
    size_t nhandles;
    cb_record_class *records; /* parallel to model.records
                                 (classify_records.h) */
    /* Driver functions the module's own code calls (templates/driver/
     * module.c.tmpl, launch.c.tmpl), NULL where the header lacks one
     * (and in a library API's module). */
    struct {
        const cb_function *get_error_name, *get_error_string;
        const cb_function *func_get_param_info, *kernel_get_param_info;
        const cb_function *func_get_name, *kernel_get_name;
        const cb_function *func_get_module, *kernel_get_library;
        const cb_function *launch_kernel;
    } runtime_fns;
    const char *launch_cast;  /* the other class launch_kernel's kernel
                                 parameter takes (a handle-cast rule), or
                                 NULL */
} cb_classes;

/* Classifies every function, collects the handle classes and classifies
 * every record; strings live in the model's arena. */
cb_classes *classify_model(cb_model *m, const cb_facts *facts);
/* Checks the undo facts of classified functions. A rule whose functions
 * both exist must pass as many arguments as the undo function takes, each a
 * scalar output or input of the function, or an integer literal; a second
 * undo rule for a function is refused too. -1 with "path:line: message" in
 * err otherwise. A rule naming a function the model lacks is left to
 * rules_unmatched. */
int classify_undo(cb_model *m, cb_classes *c, const cb_facts *facts, char *err, size_t errlen);
/* Resolves the count-bound rules of classified functions (after
 * classify_model; every parameter's bound_fn / bound_arg set): COUNT must
 * be the unsigned input count of an output array (SH_VALUE counting an
 * SH_OUT_ARRAY without a buffer-size rule) and COUNTFN take (unsigned
 * integer *, H) with H the type of a handle parameter of FUNCTION passed
 * by value, and have a PFN typedef (a library API: none needed). -1 with
 * "path:line: message" in err otherwise. A rule naming a function or
 * parameter the model lacks is left to rules_unmatched; one on a function
 * that is unsupported for other reasons only has COUNTFN checked. */
int classify_count_bounds(cb_model *m, cb_classes *c, const cb_facts *facts, char *err,
                          size_t errlen);
void classes_free(cb_classes *c);

#endif
