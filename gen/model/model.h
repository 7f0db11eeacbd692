/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h — the plain data model of one cuda.h.
 *
 * The parser (parse.c) fills a cb_model from a header with libclang; every
 * later stage (dump, classify, render, abi tools) only reads it. Nothing here
 * is Python-specific.
 *
 * Ownership: every string and array hangs off the model's arena and is freed
 * by model_free() at once; no pointer into a model outlives it.
 */
#ifndef CUBIND_MODEL_H
#define CUBIND_MODEL_H

#include <stddef.h>

/* What a C type is, as far as the later stages need to know. */
typedef enum {
    TY_VOID,
    TY_INT,      /* any integer type (also bool/char); size + is_signed valid */
    TY_FLOAT,    /* float or double; size valid */
    TY_ENUM,     /* an enum (usually through a typedef); name = typedef name */
    TY_HANDLE,   /* typedef of a pointer to an incomplete struct: CUstream */
    TY_RECORD,   /* a complete struct or union, by value; name = typedef/tag */
    TY_POINTER,  /* pointee valid; a pointer to a handle is TY_POINTER → TY_HANDLE */
    TY_ARRAY,    /* fixed-size array: pointee = element, array_len valid; a
                    record's flexible array member has array_len 0, size 0 */
    TY_FUNCPTR,  /* a function pointer (callback); name = typedef name if any */
    TY_OTHER     /* anything else (incomplete records by value, vectors ...) */
} cb_tykind;

typedef struct cb_type {
    cb_tykind kind;
    const char *spelling;  /* as written in the header: "const CUDA_MEMCPY2D *" */
    const char *canon;     /* canonical spelling, typedefs resolved */
    const char *name;      /* outermost typedef or tag name; NULL for builtins/pointers */
    const char *record_tag;/* TY_HANDLE: the struct tag (CUstream_st); TY_RECORD: tag */
    int is_const;          /* the type itself is const-qualified (not the pointee) */
    int is_signed;         /* TY_INT, TY_ENUM */
    long long size, align; /* bytes; -1 when incomplete (void, opaque structs) */
    long long array_len;   /* TY_ARRAY */
    const struct cb_type *pointee; /* TY_POINTER, TY_ARRAY */
    /* What `name` names, resolved once by the parser (a C typedef is
     * declared before any use): the index into model.handles of the
     * opaque handle of that name, and into model.typedefs of its first
     * typedef, each -1 when none. Later stages read these, never the name. */
    int handle_index, typedef_index;
} cb_type;

typedef struct {
    const char *name;      /* parameter name; "argN" when the header gave none */
    const cb_type *type;
} cb_param;

typedef struct {
    const char *name;      /* public name the macros give it: cuMemAlloc */
    const char *abi;       /* the symbol declared: cuMemAlloc_v2 */
    const char *proc_name; /* name to pass to cuGetProcAddress: cuMemAlloc */
    int proc_version;      /* its cudaVersion argument, from cudaTypedefs.h; 0 = no PFN found */
    int has_ptds;          /* a _ptds/_ptsz variant exists (per-thread default stream) */
    const cb_type *ret;
    cb_param *params;
    size_t nparams;
    const char *doc;       /* doc comment text, markers stripped; "" if none */
    int deprecated;
    int interop;           /* declared by an interop header, not cuda.h */
    const char *file;      /* header file and line of the declaration */
    unsigned line;
} cb_function;

typedef struct {
    const char *name;
    long long value;
    const char *doc;
    const char *pyname;    /* its Python name when a rule gives it (a
                              define-enum rule's member), else NULL: the
                              render's naming rules decide */
} cb_enumerator;

typedef struct {
    const char *name;      /* first typedef name (CUresult), or the tag when none */
    const char *tag;       /* enum tag (cudaError_enum), "" if anonymous */
    int is_signed;
    long long size;
    cb_enumerator *items;
    size_t nitems;
    const char **aliases;  /* every further typedef name of this enum, in header
                              order, each once and never `name`: `typedef
                              CUlaunchAttributeID CUstreamAttrID;`, then the
                              macros naming it (`#define cudaStreamAttrID
                              cudaLaunchAttributeID`) */
    size_t naliases;
    const char *doc;
    /* NULL for an enum of the header; for an enum class a define-enum
     * rule made of #define constants (gen/rules/define_enum.h): the
     * prefixes that select them ("NVML_FI_*"). Such an enum names no C
     * type: `name` is its Python class name, each item has a pyname. */
    const char *defined_by;
} cb_enum;

typedef struct {
    const char *name;      /* field name; "" for an anonymous struct/union member */
    const cb_type *type;
    long long offset;      /* bytes from the start of the enclosing record */
    long long bit_width;   /* -1 unless a bit-field */
    long long bit_offset;  /* bits from the start of the record, bit-fields only */
    int nested;            /* index into model.records of the member's record type
                              when it is a struct/union defined in place, else -1 */
} cb_field;

typedef struct {
    const char *name;      /* first typedef name, else tag, else synthesised
                              "<outer>.<field>" for records nested anonymously */
    const char *tag;       /* "" if anonymous */
    int is_union;
    int is_nested;         /* defined inside another record */
    int interop;           /* declared by an interop header, not cuda.h */
    long long size, align;
    cb_field *fields;
    size_t nfields;
    const char **aliases;  /* every typedef name of this record, then the
                              macros naming it (`#define cudaStreamAttrValue
                              cudaLaunchAttributeValue`) */
    size_t naliases;
    size_t nmacro_aliases; /* how many of the aliases, the last ones, are macros */
    const char *doc;
} cb_record;

typedef struct {
    const char *name;
    const cb_type *type;   /* the underlying (aliased) type */
} cb_typedef;

typedef struct {
    const char *name;      /* CUstream */
    const char *tag;       /* CUstream_st */
} cb_handle;

typedef struct {
    const char *name;      /* CUhostFn */
    const cb_type *ret;
    cb_param *params;
    size_t nparams;
} cb_callback;

typedef struct {
    const char *name;
    long long value;
    int is_unsigned;       /* written with a U suffix or too large for int64 */
    const char *cast;      /* type named in a cast ("CUstream", "void *"), "" if none */
    const char *enum_name; /* the enum whose constant is the whole body, "" if none */
} cb_macro;

typedef struct cb_arena cb_arena;

typedef struct {
    const char *header;    /* path of cuda.h as given */
    const char *typedefs_header; /* path of cudaTypedefs.h used */
    /* Interop headers bound with cuda.h (cudaProfiler.h, cudaGL.h,
     * cudaEGL.h, cudaVDPAU.h: those beside it, in that order) and the
     * cubind_interop.h shim they were read with; none when model_parse was
     * given no interop directory. Names as included ("cudaGL.h"). */
    const char **interop_headers; size_t ninterop;
    const char *interop_dir;   /* the shim's directory, or NULL */
    /* What generated C includes after cuda.h to see the same declarations,
     * in order: the shim, the interop headers, cudaTypedefs.h, theirs; for
     * a library's header, its bind-header files. */
    const char **interop_includes; size_t ninterop_includes;
    long long cuda_version;/* the release the header states (reported, never used for ABI):
                              its release macro's value, 0 when it has none */
    const char *version_macro; /* that macro: CUDA_VERSION (cuda.h), CUDART_VERSION
                                  (cuda_runtime_api.h); "" when none */
    cb_function *functions; size_t nfunctions;
    /* a library header's static (inline) functions: compiled into the
     * module where generated code calls one (error-string-inline), never
     * bound, as no library exports them */
    cb_function *inlines;   size_t ninlines;
    cb_enum *enums;         size_t nenums;
    cb_record *records;     size_t nrecords;
    cb_typedef *typedefs;   size_t ntypedefs;
    cb_handle *handles;     size_t nhandles;
    cb_callback *callbacks; size_t ncallbacks;
    cb_macro *macros;       size_t nmacros;
    cb_arena *arena;
} cb_model;

/* Parses `header` (cuda.h) and cudaTypedefs.h beside it, and when
 * interop_dir (the directory of cubind_interop.h) is not NULL the interop
 * headers beside it with their *Typedefs.h. Returns NULL and writes
 * "file:line: message" into err on failure; *refused (when not NULL) is
 * then 1 if the header parsed but lacks what the bindings need (not a
 * driver header: no cuInit, no CUresult enum, no CUDA_VERSION...), which
 * the commands report with exit status 2, and 0 for any other failure
 * (unreadable, does not parse). */
cb_model *model_parse(const char *header, const char *interop_dir, char *err, size_t errlen,
                      int *refused);
/* The same for any header; library != 0: a shared library's header (the
 * functions declared, their symbols for dlsym, `__NAME_<maj>_<min>`
 * versioned symbols named NAME), without cudaTypedefs.h, interop headers
 * and the driver header's checks; typedefs_header is then "".
 * bind_headers (NULL, or a NULL-terminated list of at most
 * MODEL_MAX_BIND_HEADERS names of headers beside `header` that it
 * may include): they are included after it, and their declarations are
 * the model's as the header's own are (driver_types.h for
 * cuda_runtime_api.h); one that is not there is an error. */
#define MODEL_MAX_BIND_HEADERS 12
cb_model *model_parse_api(const char *header, int library, const char *interop_dir,
                          const char *const *bind_headers, char *err, size_t errlen,
                          int *refused);
/* model_parse_api with include_dir (NULL: none): one more directory
 * searched, after the header's own, for the headers it includes (the
 * cuda.h that cufile.h includes, when cufile.h comes from elsewhere). */
cb_model *model_parse_api_in(const char *header, int library, const char *interop_dir,
                             const char *const *bind_headers, const char *include_dir,
                             char *err, size_t errlen, int *refused);
/* For the ABI tools, which take headers without rules: a header named
 * cuda.h is the driver's (read without the interop headers), any other
 * (nvrtc.h, nvJitLink.h) a library's. */
int model_is_library_header(const char *header);
/* The rank of a macro stating a header's release, lower preferred when a
 * header sees several (CUDA_VERSION 0, CUDART_VERSION 1); -1 for others. */
int model_release_macro(const char *name);
cb_model *model_parse_any(const char *header, char *err, size_t errlen, int *refused);
void model_free(cb_model *m);

/* Empties every documentation comment of the model (functions, enums and
 * their members, records): what `cubind generate` does unless
 * --header-docs, so that generated files hold none of the header's prose. */
void model_forget_docs(cb_model *m);

/* Lookups by name; NULL when absent. Linear: the stages call them rarely. */
const cb_function *model_function(const cb_model *m, const char *name);
const cb_enum *model_enum(const cb_model *m, const char *name);
const cb_record *model_record(const cb_model *m, const char *name);
/* Whether f is a flexible array member (`int data[]`, the parser's
 * zero-length TY_ARRAY): no bytes of its record, so no attribute of the
 * struct class and no entry in the layout checks. */
int model_field_is_flexible(const cb_field *f);
/* Whether t is a char or signed char (text's element; an unsigned char is
 * a byte). */
int model_type_is_char(const cb_type *t);
/* Whether `name` names record r: its name, its tag (when it has one) or
 * one of its typedefs. model_record's test, for callers holding a record. */
int model_record_named(const cb_record *r, const char *name);
const cb_handle *model_handle(const cb_model *m, const char *name);
/* The index of f's parameter `name`, -1 when f has none of that name. */
int model_param_index(const cb_function *f, const char *name);
const cb_callback *model_callback(const cb_model *m, const char *name);

/* Index into model.enums of the enum named `name` (typedef or tag), -1
 * when none or name is NULL. */
int model_enum_index(const cb_model *m, const char *name);
/* Index into model.handles of the first handle named `name`, and into
 * model.typedefs of the first typedef of that name (C11 allows repeating
 * one); -1 when none or name is NULL. */
int model_handle_index(const cb_model *m, const char *name);
int model_typedef_index(const cb_model *m, const char *name);
/* The enum index of enum type t: through its typedef or tag name, or its
 * canonical spelling ("enum CUresult_enum"); -1 when none. */
int model_type_enum(const cb_model *m, const cb_type *t);
/* The record index of struct/union type t: through its typedef or tag
 * name; -1 when none. */
int model_type_record(const cb_model *m, const cb_type *t);
/* The index of the named field `name` in record r's flattened field table
 * (its named fields, those of anonymous members inline, in order), -1
 * when none or name is "-". */
long long model_field_index(const cb_model *m, const cb_record *r, const char *name);
/* The named field `name` of record r, looked for as model_field_index
 * does (inside anonymous members too); NULL when none. */
const cb_field *model_field_named(const cb_model *m, const cb_record *r, const char *name);
/* The number of named fields of that table. */
long long model_field_count(const cb_model *m, const cb_record *r);

/* Arena allocation for the model's contents (zeroed). The generator is a
 * command-line tool: an allocation failure here ends the process with
 * "cubind: out of memory" and exit status 1, never a crash or partial output
 * (outputs are only renamed into place after everything was rendered). */
void *model_alloc(cb_model *m, size_t n);
const char *model_strdup(cb_model *m, const char *s);
const char *model_strndup(cb_model *m, const char *s, size_t n);

#endif
