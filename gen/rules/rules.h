/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules.h — the special cases of a rules file (gen/rules.txt for the
 * driver, gen/<api>.rules for a library): the exceptions to the
 * classifier's general rules, and what the API is. Each line is a
 * directive and its arguments; `#` starts a comment.
 *
 * The directives, the arguments each takes and what they mean are one
 * table, gen/rules/rules_directives.def: the cb_directive enum below, the
 * parser's arities and `cubind rules` (the documentation it prints) all
 * come from it.
 *
 * A rule's FUNCTION is a function's public name (cuMemAlloc) or the
 * symbol its header declares (cuMemAlloc_v2): a rule naming the symbol
 * follows a function that another release declares under that name
 * (12.x's cuGraphAddDependencies_v2). A RECORD is a record's tag or any
 * of its typedef names.
 *
 * The pipeline: rules_load reads and checks the file's syntax (directive
 * names, arities, the few arguments that take a fixed set of words, a
 * define-enum line's words); define_enums (define_enum.h) adds the enum
 * classes of define-enum rules to the model; rules_bind (rules_bind.h)
 * resolves every rule against the model once, into facts per function
 * and parameter, per record field, per type and per enumerator, and
 * reports the rules that match nothing; the later stages read those
 * facts, never a directive by its name.
 */
#ifndef CUBIND_RULES_H
#define CUBIND_RULES_H

#include <stddef.h>
#include <stdio.h>

#include "model/model.h"

/* The most arguments a directive takes (`host-bytes`: OWNER, BUFFER,
 * ACCESS, SIZE and up to eight KEY=NAME terms). */
#define CB_RULE_MAX_ARGS 12
/* The most translation units a `parts` rule may ask for (render.h's
 * RENDER_MAX_FILES leaves room for them), and the same as text. */
#define CB_PARTS_MAX 16
#define CB_PARTS_TEXT_(n) #n
#define CB_PARTS_TEXT(n) CB_PARTS_TEXT_(n)
#define CB_PARTS_MAX_TEXT CB_PARTS_TEXT(CB_PARTS_MAX)

/* One enumerator per directive of rules_directives.def, in its order. */
typedef enum {
#define CB_DIRECTIVE(id, name, least, most, target, args, doc) CB_D_##id,
#include "rules/rules_directives.def"
    CB_NDIRECTIVES
} cb_directive;

/* What a directive's first arguments name, for the binding. */
typedef enum {
    CB_ON_TYPEDEF,        /* TYPEDEF: an integer typedef of the header */
    CB_ON_HANDLE,         /* HANDLE: an opaque handle (or a typedef) */
    CB_ON_FUNCTION,       /* FUNCTION [WORD]: a function */
    CB_ON_FUNCTIONS,      /* FUNCTION FUNCTION ...: two functions (undo) */
    CB_ON_PARAM,          /* FUNCTION PARAM ...: a function's parameter */
    CB_ON_PARAM_NAME,     /* C_NAME ...: every parameter of that name */
    CB_ON_ENUMERATOR,     /* ENUMERATOR ...: an enumerator */
    CB_ON_FIELD,          /* RECORD FIELD ...: a record's field */
    CB_ON_RECORD,         /* RECORD ...: a record (tag or typedef) */
    CB_ON_PARAM_OR_FIELD, /* OWNER BUFFER ...: a parameter or a field */
    CB_ON_MACROS,         /* CLASS PREFIX ...: the #define constants named
                             PREFIX... (define_enum.h) */
    CB_ON_API             /* what the API is: nothing of the header, or
                             what rules_bind checks (result, error-string) */
} cb_rule_target;

/* A directive's row of the table. */
typedef struct {
    const char *name;
    size_t least, most;       /* the arguments it takes */
    cb_rule_target target;
    const char *args;         /* "FUNCTION PARAM N" */
    const char *doc;          /* its documentation, lines joined by \n */
} cb_directive_info;

/* The row of directive d (d < CB_NDIRECTIVES). */
const cb_directive_info *rules_directive(cb_directive d);
/* Prints every directive (ARGS and DOC, API directives last) for
 * `cubind rules`. */
void rules_print_directives(FILE *out);
/* The cb_callback_kind (rules_bind.h) of word, a callback rule's KIND in
 * callback_kinds.def; -1 when it is none. */
int rules_callback_kind(const char *word);

typedef struct {
    cb_directive directive;
    char *args[CB_RULE_MAX_ARGS];
    size_t nargs;             /* within the directive's least..most */
    unsigned line;
} cb_rule;

typedef struct {
    char *path;
    cb_rule *rules;
    size_t nrules;
} cb_rules;

/* Loads rules from path. Returns NULL and writes "path:line: message" into
 * err on a syntax error, an unknown directive, a directive with a number
 * of arguments it does not take, a kernel-code WHEN other than before /
 * after or a callback KIND other than host / stream / destroy. */
cb_rules *rules_load(const char *path, char *err, size_t errlen);
void rules_free(cb_rules *r);

#define CB_API_MAX_LIBS 12

/* The API directives of a rules file, the driver's values where absent.
 * Strings point into the rules. */
typedef struct {
    const char *dropin, *raising;   /* module names; NULL for a face not made */
    const char *result, *success;   /* result enum and its success value */
    /* result-field: the struct holding the result enum, and its field
     * (NULL: the functions return the enum itself) */
    const char *result_record, *result_field;
    /* result-detail: a second status field of that struct (NULL: none)
     * and the exception attribute carrying it */
    const char *detail_record, *detail_field, *detail_attr;
    const char *error_class;        /* cubind.<error_class> */
    const char *error_base;         /* error-base: NULL for RuntimeError */
    const char *error_string;       /* NULL when none */
    const char *error_string_inline; /* error-string-inline: NULL when none */
    int is_library;                 /* a `library` rule: dlsym, no cudaTypedefs.h */
    const char *libs[CB_API_MAX_LIBS];
    size_t nlibs;
    const char *env;                /* NULL when none */
    const char *bundled;            /* library-bundled: NULL when none */
    const char *wheels[CB_API_MAX_LIBS];
    size_t nwheels;
    /* bind-header: headers bound as the header's own, NULL-terminated */
    const char *bind_headers[CB_API_MAX_LIBS + 1];
    size_t nbind_headers;
    const char *toolkit_dirs[CB_API_MAX_LIBS]; /* library-toolkit-dir */
    size_t ntoolkit_dirs;
    const char *name_prefix;        /* "" when none */
    int snake;                      /* python-names ... snake */
    const char *words[CB_API_MAX_LIBS]; /* python-word: whole lower-case words */
    size_t nwords;
    const char *underscored[CB_API_MAX_LIBS]; /* field-underscore: WORD -> WORD_ */
    size_t nunderscored;
    const char *enum_prefix;        /* enum-prefix: NULL when none */
    long long chars_length;         /* chars-length: 0 when none */
    const char *count_query;        /* count-query: its STATUS, NULL when none */
    int count_stem;                 /* count-stem: <stem>Count counts <stem>... */
    int array_lengths;              /* array-lengths: an input array's count is
                                       its length */
    int error_subclasses;           /* error-subclasses: one class per status */
    const char *version_field;      /* struct-version: NULL when none */
    int version_shift;
    int int_handles;                /* int-handles: opaque handles are plain ints */
    int str_results;                /* str-results: a returned char * is a str */
    int enum_args_int;              /* enum-args-int: enums convert as a C int */
    int status_str;                 /* status-str: str(error) is 'NAME (value)' */
    int status_str_message;         /* status-str-message: ... ': message' */
    int message_str;                /* message-str: str(error) is the message alone */
    int buffers_not_none;           /* buffers-not-none: None is no buffer */
    int void_ptr_numbers;           /* void-ptr-numbers: a number is an address */
    int string_addresses;           /* string-addresses: a const char * takes an int */
    int struct_addresses;           /* struct-addresses: a struct pointer takes an int */
    int negative_errors;            /* negative-errors: a negative integer result fails */
    const char *capi_sentinel;      /* what a C API entry returns having raised */
    const char *sizeof_name;        /* sizeof: the size function's name, NULL */
    int parts;                      /* parts: translation units of the module, 1.. */
} cb_api;

/* 1 when a result-detail rule names a field of result-field's struct:
 * the functions returning that struct check both statuses. */
int rules_api_has_detail(const cb_api *api);

/* The N of a `parts N` rule: 1..CB_PARTS_MAX, else -1. */
int rules_parts_value(const char *s);
/* Fills api from r's API directives. */
void rules_api(const cb_rules *r, cb_api *api);
/* A function's or parameter's Python name under the API's python-names
 * rule (malloc'ed): its prefix stripped, snake_case when asked, and a
 * trailing `_` when it would be a Python keyword (`lambda` -> `lambda_`). */
char *rules_python_name(const cb_api *api, const char *name);
/* A type's class name in a snake_case module (python-names ... snake):
 * the type's name without the API's prefix, matched ignoring case (cuFile
 * functions, CUfile types), and without a trailing `_t`
 * (CUfileDriverStatusFlags_t -> DriverStatusFlags), malloc'ed; NULL when
 * the API is not snake_case or the name lacks the prefix. */
char *rules_type_pyname(const cb_api *api, const char *name);
/* A header enum's Python class name (malloc'ed): rules_type_pyname's in
 * a snake_case module, else the name without the API's prefix
 * (nvJitLinkInputType -> InputType); enum classes keep their CamelCase. */
char *rules_enum_pyname(const cb_api *api, const char *name);
/* A C name as a Python identifier (malloc'ed): the name, with a trailing
 * `_` when it is a Python keyword. Struct fields are named by it. */
char *rules_python_identifier(const char *name);
/* A struct field's snake_case name in a snake_case module (malloc'ed):
 * pyname (its Python identifier) in snake_case, keeping any prefix the
 * API strips from functions, with a trailing `_` when a field-underscore
 * rule names it (device -> device_); NULL when the API is not snake. */
char *rules_snake_field_name(const cb_api *api, const char *pyname);

#endif
