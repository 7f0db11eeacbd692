/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse_internal.h — shared state of the parser's modules (parse.c,
 * records.c, pfn.c, macros.c, macro_values.c, comments.c) and the shared
 * helpers of parse_helpers.c. Not used outside the parser.
 *
 * The files call one way: parse.c (the walk) calls records.c, pfn.c,
 * macros.c, macro_values.c and parse_helpers.c; those call
 * parse_helpers.c (and comments.c), never parse.c
 * (tests/gen/test_call_graph.py).
 */
#ifndef CUBIND_PARSE_INTERNAL_H
#define CUBIND_PARSE_INTERNAL_H

#include <clang-c/Index.h>

#include "model/arena.h"
#include "model/model.h"

/* One PFN_<name>_v<version>[_ptds|_ptsz] typedef of cudaTypedefs.h. */
typedef struct {
    const char *name;       /* the cuGetProcAddress symbol: cuCtxCreate */
    int version;            /* 12050 */
    int per_thread;         /* a _ptds or _ptsz variant */
    const char *ret;        /* canonical return type */
    const char **params;    /* canonical parameter types */
    size_t nparams;
    const char *file;
    unsigned line;
} pfn_entry;

/* One `#define public_name abi_name` (possibly through __CUDA_API_PTDS). */
typedef struct {
    const char *public_name;
    const char *abi;
} name_macro;

/* Byte offsets in cuda.h of one comment: [begin, end). */
typedef struct {
    unsigned begin, end;
} comment_span;

/* Interop headers model_parse knows: interop_names in parse.c. */
#define PX_MAX_INTEROP 4

typedef struct {
    cb_arena *arena;
    cb_model *model;
    CXTranslationUnit tu;
    CXFile cuda_h, typedefs_h; /* typedefs_h NULL for a library */
    int library;               /* model_parse_api's library */
    /* the interop headers and the shim, and a library's bind-header files
     * (bound like cuda.h); the interop headers' *Typedefs.h (read for PFN
     * versions like cudaTypedefs.h) */
    CXFile bound[PX_MAX_INTEROP + 1 + MODEL_MAX_BIND_HEADERS], pfn_files[PX_MAX_INTEROP];
    size_t nbound, npfn_files;
    /* capacities of the model's growable arrays */
    size_t cap_functions, cap_inlines, cap_enums, cap_records, cap_typedefs, cap_handles,
           cap_callbacks, cap_macros;
    CXCursor *enums_seen;   /* canonical cursor of model->enums[i]; malloc'ed */
    CXCursor *records_seen; /* canonical cursor of model->records[i]; malloc'ed */
    pfn_entry *pfns; size_t npfns, cap_pfns;        /* in the arena */
    name_macro *names; size_t nnames, cap_names;    /* in the arena */
    /* comments.c: cuda.h's comments, collected on first use; malloc'ed */
    comment_span *comments; size_t ncomments; int comments_ready;
    const char *cuda_text; size_t cuda_len;         /* owned by the TU */
    /* macros.c: macros whose value named what was not yet known; malloc'ed */
    CXCursor *pending_macros; size_t npending_macros, cap_pending_macros;
    int macros_resolving; /* macro_resolve_pending has begun */
    /* macros.c: where cuda.h defines CUDA_VERSION (line 0: nowhere), and
     * whether that definition was an integer constant (model->cuda_version) */
    unsigned cuda_version_line;
    int cuda_version_known;
} parser;

/* parse_helpers.c */
const char *px_str(parser *P, CXString s);
/* 1 for a signed integer type kind. */
int px_is_signed_kind(enum CXTypeKind k);
CXType px_desugar(CXType t);
const cb_type *px_type(parser *P, CXType t);
const char *px_doc(parser *P, CXCursor c);
void px_location(parser *P, CXCursor c, const char **file, unsigned *line);
/* Direct children of c in a malloc'ed array the caller frees. */
size_t px_children(parser *P, CXCursor c, CXCursor **out);
/* Appends name to the aliases (*aliases, *n: an enum's or a record's, grown
 * one at a time) unless it is one already (C11 allows repeating a typedef);
 * 1 when it was appended. */
int px_add_alias(parser *P, const char ***aliases, size_t *n, const char *name);
int px_check_model(parser *P, char *err, size_t errlen);

/* records.c: a struct/union definition (and those nested in it); returns its
 * index in model->records. `outer_name` names the enclosing field path for
 * anonymous nested records, NULL at top level. */
int px_record(parser *P, CXCursor c, const char *outer_name);
void px_record_alias(parser *P, CXCursor decl, const char *typedef_name);

/* comments.c: the raw text of the block doc comment separated from c's
 * first token by white space only, or NULL; for the declarations whose
 * comment libclang does not find (their name is a macro expansion). */
const char *px_comment_before(parser *P, CXCursor c);
void px_comments_free(parser *P);

/* pfn.c */
void pfn_collect(parser *P, CXCursor typedef_cursor);
int pfn_assign_versions(parser *P, char *err, size_t errlen);
void pfn_free(parser *P);

/* macros.c */
void macro_collect(parser *P, CXCursor macro);
/* Evaluates again the macros macro_collect could not, now that every enum
 * constant of the header is known. */
void macro_resolve_pending(parser *P);
void macro_apply_names(parser *P);
void macro_free(parser *P);

/* macro_values.c: replaces each constant's value by clang's evaluation of
 * it after the headers (main_text, parsed with args), in its C type. */
void macro_check_values(parser *P, CXIndex index, const char *main_text,
                        const char *const *args, int nargs);

#endif
