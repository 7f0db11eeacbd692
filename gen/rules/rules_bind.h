/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules_bind.h — the rules of a rules file (rules.h) bound to one model:
 * every rule resolved to what it names, once, into typed facts per
 * function and parameter, per record field, per type name and per
 * enumerator. The classifier (classify.h), the handle classes, the record
 * fields and the renderer read these facts by index; none of them looks a
 * rule up by its directive's name.
 *
 * How a rule's names resolve, in this one place:
 *  - FUNCTION: a function's public name or its declared symbol. For a
 *    function's slot of a directive, a rule naming the public name comes
 *    before one naming the symbol, then file order (one rule follows a
 *    function across releases that renamed it); lists (registry-*,
 *    callback) take every rule naming either, in file order. A function
 *    argument of a rule (undo's UNDO, buffer-size's SIZEFN, error-log's
 *    functions, count-bound's COUNTFN, error-string) is the function of that public name, else
 *    the first declaring that symbol (rules_function).
 *  - PARAM, COUNT, KERNEL, ATTR, DATA: a parameter of that function by name.
 *  - RECORD FIELD: every record whose tag, name or typedef is RECORD, the
 *    field FIELD of its flattened field table (anonymous members' fields
 *    inline, model_field_index).
 *  - TYPEDEF, HANDLE: every typedef and opaque handle of that name (facts
 *    by model index, found from a type: rules_type_facts); ENUMERATOR: an
 *    enumerator of the model;
 *    attribute-type's TYPE: a typedef of the model or a builtin.
 * In every slot the first rule that resolves wins; a later duplicate binds
 * nothing and is reported only when its target is missing too (as every
 * rule is: rules_unmatched).
 *
 * Ownership: the facts live in their own arena (rules_unbind frees it);
 * they point into the model and the rules, which must outlive them.
 */
#ifndef CUBIND_RULES_BIND_H
#define CUBIND_RULES_BIND_H

#include <stddef.h>
#include <stdio.h>

#include "model/model.h"
#include "rules/rules.h"

/* A callback rule's KIND (runtime/process/rt_callbacks.h's CUBIND_CB_*),
 * one enumerator per entry of callback_kinds.def, in its order; the rules
 * parser refuses another (rules_callback_kind). */
typedef enum {
#define CALLBACK_KIND(id, word) CB_CALLBACK_##id,
#include "rules/callback_kinds.def"
    CB_NCALLBACK_KINDS
} cb_callback_kind;

/* The registry-* rule of a function (runtime/include/cubind_rt.h's registry). */
typedef enum {
    CB_REGISTRY_CREATE,
    CB_REGISTRY_OWNED,
    CB_REGISTRY_DESTROY,
    CB_REGISTRY_KEEP,
    CB_REGISTRY_DEPEND,
    CB_REGISTRY_RETAIN
} cb_registry_action;

/* A registry-kind rule's CONSTANT: the registry kind of a handle type
 * (runtime/include/cubind_rt.h's CUBIND_REG_*), one enumerator per entry
 * of registry_kinds.def, in its order; rules_bind refuses another. */
typedef enum {
    CB_REG_KIND_NONE,         /* no registry-kind rule */
#define REGISTRY_KIND(id, name) CB_REG_KIND_##id,
#include "rules/registry_kinds.def"
    CB_NREG_KINDS
} cb_registry_kind;

/* A kernel-code rule's WHEN. */
typedef enum {
    CB_CODE_NONE,
    CB_CODE_BEFORE,
    CB_CODE_AFTER
} cb_code_when;

/* The terms of the bytes a host-bytes rule's call touches
 * (rules_directives.def gives the formula; runtime/module/bind_struct.h's
 * CBS_HB_* in this order). */
typedef enum {
    HB_SIZE,   /* bytes of one row (the rule's SIZE) */
    HB_ROWS,
    HB_DEPTH,
    HB_PITCH,
    HB_SLICE,
    HB_X,
    HB_Y,
    HB_Z,
    HB_NTERMS
} cb_hb_term;

/* One host-bytes rule resolved against its owner: indexes of the
 * function's parameters, or of the record's flattened field table
 * (model_field_index); rules_bind checked that the rule fits (error). */
typedef struct {
    const cb_rule *rule;
    long long buffer;         /* BUFFER; -1 when the record lacks it
                                 (the rule is unmatched) */
    int writes;               /* ACCESS is `writes` */
    long long term[HB_NTERMS];/* each term's parameter or field, -1 absent
                                 (SIZE -1: a constant, below) */
    long long bytes;          /* SIZE as a constant byte count, else 0 */
    long long when;           /* when=: the enum field, -1 without one (or
                                 when it does not resolve) */
    long long when_value;     /* its ENUMERATOR's value, else 0 */
} cb_host_bytes_fact;

/* What a parameter is to a callback rule. */
typedef enum {
    CB_CALLBACK_ROLE_NONE,
    CB_CALLBACK_ROLE_FN,      /* its FN: the callback */
    CB_CALLBACK_ROLE_DATA     /* its DATA: what the driver passes back */
} cb_callback_role;

/* The facts of one parameter. on[d]: the rule of directive d naming this
 * parameter (FUNCTION PARAM ...), NULL when none; the fields below are
 * that rule's other arguments, resolved. */
typedef struct {
    const cb_rule *on[CB_NDIRECTIVES];
    const char *pyname;       /* rename-param-in's PY_NAME, else rename-param's
                                 for this C name; NULL: neither */
    const cb_rule *rename;    /* the rule pyname comes from, NULL */
    int count;                /* count: the integer or integer-pointer
                                 parameter COUNT names, -1 when none */
    int count_less;           /* count: the N of COUNT-N, else 0 */
    int kernel;               /* kernel-params: KERNEL's index, else -1 */
    /* attribute-output (or, without one, attribute-input) */
    int attr;                 /* ATTR's index, else -1 */
    int attr_input;           /* the rule is attribute-input */
    int attr_array;           /* ATTR is a pointer: an array of attributes */
    int attr_enum;            /* the enum index of ATTR's values: ATTR an
                                 enum, or an array of them beside a `void **`
                                 parameter whose count rule (if any) names a
                                 pointer; -1 otherwise */
    long long fixed;          /* fixed: N */
    int size_of;              /* struct-size: STRUCT's index, else -1 */
    int text_size;            /* text: SIZE's index, else -1 */
    int records_count;        /* records, counted-records: COUNT's index,
                                 else -1 */
    const char *records_field; /* records: FIELD, else NULL */
    const char *trampoline;   /* sync-callback: TRAMPOLINE, else NULL */
    const char *cast;         /* handle-cast: HANDLE when the header has that
                                 class; NULL (no rule, or it does not apply) */
    const cb_function *size_fn; /* buffer-size: SIZEFN, NULL when absent */
    /* callback: the first rule naming this parameter as FN or DATA */
    const cb_rule *callback;
    cb_callback_role callback_role;
    int callback_data;        /* ROLE_FN: DATA's index, else -1 */
    cb_callback_kind callback_kind;
    cb_host_bytes_fact host_bytes; /* on[CB_D_HOST_BYTES]'s, resolved */
    const cb_function *count_fn; /* count-bound (on COUNT): COUNTFN, NULL
                                    when absent or the header lacks it */
} cb_param_facts;

/* One registry-* rule of a function, its parameters resolved. */
typedef struct {
    cb_registry_action action;
    int param;                /* its second argument's index, -1 when none */
    int other;                /* its third (DEP, OWNER, TARGET), -1 when none
                                 or `-` */
    int names_other;          /* a third argument other than `-` is given */
} cb_registry_fact;

/* The facts of one function. on[d]: the rule of directive d naming the
 * function (any of its FUNCTION rules), NULL when none. */
typedef struct {
    const cb_rule *on[CB_NDIRECTIVES];
    cb_param_facts *params;   /* parallel to the function's parameters */
    cb_registry_fact *registry; /* its registry-* rules, in file order */
    size_t nregistry;
    cb_code_when code;        /* kernel-code WHEN */
    /* error-log: PARAM's index (-1), SIZEFN and LOGFN (NULL when absent) */
    int log_param;
    const cb_function *log_size_fn, *log_fn;
} cb_function_facts;

/* The facts of one field of a record's flattened field table. */
typedef struct {
    const cb_rule *on[CB_NDIRECTIVES]; /* RECORD FIELD rules naming it
                                          (field-count-query: checked to
                                          have a field-count rule, one per
                                          record) */
    int direct;               /* a field of the record itself, not of an
                                 anonymous member */
    long long func, kern;     /* kernel-params-field: FUNC's and KERN's
                                 indexes in the table, -1 (or `-`) */
    long long count;          /* field-count: COUNT's index, -1 */
    long long count_out;      /* field-count-out: COUNT's index, -1 */
} cb_field_facts;

typedef struct {
    cb_field_facts *fields;   /* one per named field of the flattened table */
    size_t nfields;
    cb_host_bytes_fact *host_bytes; /* host-bytes rules naming the record,
                                       in file order */
    size_t nhost_bytes;
} cb_record_facts;

/* The rules naming one typedef or opaque handle (TYPEDEF, HANDLE): on[d],
 * the first of each. */
typedef struct {
    const cb_rule *on[CB_NDIRECTIVES];
    cb_registry_kind registry_kind; /* on[CB_D_REGISTRY_KIND]'s CONSTANT */
} cb_type_facts;

/* The attribute-type rule of one enumerator, its TYPE resolved: a typedef
 * of the model (a type of the facts carrying the typedef's name; a handle
 * typedef as TY_HANDLE), a builtin (int, unsigned, size_t, _Bool), `char[N]`
 * or `T[]` (rules_directives.def). */
typedef struct {
    const cb_rule *rule;      /* NULL: no rule (the rest is 0) */
    const cb_type *type;      /* the value's type (char[N]: char; T[]: T);
                                 NULL when TYPE names none of these */
    long long len;            /* char[N]: N (a string); T[]: -1; else 0 */
    int is_bool;              /* T is _Bool */
} cb_attribute_type_fact;

/* An undo rule whose two functions the model has, in file order. */
typedef struct {
    const cb_rule *rule;
    size_t function;          /* index of FUNCTION in model.functions */
    const cb_function *undo;  /* UNDO */
    size_t nargs;             /* the ARGs given */
    int *param;               /* per ARG: the parameter of FUNCTION it
                                 names, -1 */
    const char **literal;     /* per ARG: it, when an integer literal;
                                 NULL (with param -1: neither) */
} cb_undo_fact;

/* A maker rule whose record the model has: NAME(PARAM, ...) sets each
 * FIELD (a field of the record itself) from its PARAM. */
typedef struct {
    const cb_rule *rule;
    size_t record;            /* index of RECORD in model.records */
    const char *name;         /* NAME */
    size_t nparams;
    const char **params;      /* per PARAM=FIELD: PARAM */
    const char **fields;      /* ... and FIELD */
} cb_maker_fact;

typedef struct cb_facts {
    const cb_model *model;
    const cb_rules *rules;
    cb_api api;
    const cb_function *error_string_fn; /* the error-string function, NULL */
    /* the error-string-inline function (model.h's inlines), NULL when the
     * header has none of that name and shape: the rule is then unmatched */
    const cb_function *error_string_inline_fn;
    cb_function_facts *functions; /* parallel to model.functions */
    cb_record_facts *records;     /* parallel to model.records */
    cb_attribute_type_fact **attribute_type; /* per enum, per enumerator */
    cb_type_facts *typedefs;      /* parallel to model.typedefs */
    cb_type_facts *handles;       /* parallel to model.handles */
    /* the integer typedefs of value-handle rules, then of value-class
     * rules, each in file order: indexes into model.typedefs (handles.h) */
    size_t *value_classes;
    size_t nvalue_classes;
    cb_undo_fact *undos;
    size_t nundos;
    cb_maker_fact *makers;    /* maker rules naming a record of the model,
                                 in file order */
    size_t nmakers;
    unsigned char *matched;   /* per rule: it matches the header */
    /* "path:line: message" for the first rule whose arguments are wrong:
     * a registry-kind CONSTANT that is no registry kind, or a rule that
     * names what the model has but does not fit it (host-bytes: an ACCESS other than reads /
     * writes, an unknown KEY or one given twice; a BUFFER not a void
     * pointer, or const for `writes`; a term not an integer parameter or
     * field of the owner, a function's term other than SIZE or a constant
     * SIZE; a when= not an enum field and one of its enumerators; a
     * maker's term not PARAM=FIELD, FIELD not the record's, a PARAM
     * twice; a field-count-query FIELD without a field-count rule or no
     * pointer, a record's second field-count-query); NULL
     * when none. The facts are not to be classified then. */
    const char *error;
    cb_arena *arena;
} cb_facts;

/* Binds every rule of r to m. Never fails (out of memory ends the
 * process, arena.h); a rule that does not fit what it names sets
 * f->error. */
cb_facts *rules_bind(const cb_rules *r, const cb_model *m);
void rules_unbind(cb_facts *f);

/* Registry kind k's name in registry_kinds.def: the word a registry-kind
 * rule names it by, which is also the runtime's enumerator
 * ("CUBIND_REG_GRAPH"); "" for CB_REG_KIND_NONE. */
const char *rules_registry_kind_name(cb_registry_kind k);
/* Callback kind k's WORD in callback_kinds.def ("host"); defined beside
 * the parser's check (rules.c), which holds the one table of them. */
const char *rules_callback_kind_name(cb_callback_kind k);

/* The facts of the opaque handle or typedef of the model that type t
 * names (its outermost typedef name), NULL when it names none. */
const cb_type_facts *rules_type_facts(const cb_facts *f, const cb_type *t);
/* The rule of directive d naming the type t names, NULL. */
const cb_rule *rules_type_rule(const cb_facts *f, cb_directive d, const cb_type *t);

/* Writes "path:line: rule 'DIRECTIVE ARG0[ ARG1]' matches nothing in
 * HEADER" to out for each rule that matches nothing in the model: naming
 * a typedef, handle, function, parameter or field it lacks (`undo`: either
 * function; `handle-cast`: also its class; `count-bound`: also COUNTFN; field-count: a field of the
 * wrong type), a rename-param no parameter took, an attribute-type no
 * bound attribute enum holds. Returns how many; out NULL only counts. */
size_t rules_unmatched(const cb_facts *f, FILE *out);

/* The function a rule's name names (public name first, then declared
 * symbol), or NULL. */
const cb_function *rules_function(const cb_model *m, const char *name);
/* The field `field` (of the record itself or an anonymous member) of a record named
 * `record` (tag, name or typedef), or NULL. */
const cb_field *rules_record_field(const cb_model *m, const char *record, const char *field);
/* A field-default rule's VALUE in *value (its two's complement for a
 * negative one); 0 when it is no number (the rule then matches nothing). */
int rules_field_default_value(const cb_rule *rule, unsigned long long *value);

#endif
