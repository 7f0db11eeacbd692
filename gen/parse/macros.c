/* SPDX-License-Identifier: Apache-2.0 */
/*
 * macros.c — object-like macros of cuda.h: public names and constants.
 *
 * `#define cuMemAlloc cuMemAlloc_v2` and
 * `#define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2)` give a function
 * its public name. Macros whose body is an integer constant expression of
 * literals, other integer macros, enum constants of the header
 * (`#define CU_STREAM_ATTRIBUTE_PRIORITY CU_LAUNCH_ATTRIBUTE_PRIORITY`),
 * casts, unary minus/~ and the operators << >> | & + - become cb_macro
 * constants. Others are skipped.
 *
 * A macro is evaluated when its definition is visited; one naming what is
 * not known yet (a later macro or enum) is evaluated again after the walk
 * (macro_resolve_pending), until no more of them resolve. The arithmetic
 * here has no C integer types: macro_values.c then gives each constant the
 * value clang computes in its C type (`~0u` is 32 bits wide).
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    parser *P;
    CXToken *toks;
    unsigned n, pos;
    const char *cast; /* type of the outermost cast, if any */
    int is_unsigned;
    int failed;
    int unknown;      /* an identifier named no macro or enum constant (yet) */
    const char *enum_name; /* enum of the last enum constant read */
} expr_state;

static const char *tok(expr_state *s, unsigned i)
{
    if (i >= s->n)
        return "";
    return px_str(s->P, clang_getTokenSpelling(s->P->tu, s->toks[i]));
}

static int tok_is(expr_state *s, unsigned i, const char *text)
{
    return i < s->n && strcmp(tok(s, i), text) == 0;
}

/* The index in model.macros of the constant `name`, or -1. */
static long macro_index(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->nmacros; i++)
        if (strcmp(m->macros[i].name, name) == 0)
            return (long)i;
    return -1;
}

static const cb_macro *find_macro(const cb_model *m, const char *name)
{
    long i = macro_index(m, name);
    return i >= 0 ? &m->macros[i] : NULL;
}

/* The enumerator called `name` among the enums parsed so far, or NULL. */
static const cb_enumerator *find_enum_constant(const cb_model *m, const char *name,
                                               const cb_enum **owner)
{
    for (size_t i = 0; i < m->nenums; i++)
        for (size_t k = 0; k < m->enums[i].nitems; k++)
            if (strcmp(m->enums[i].items[k].name, name) == 0) {
                *owner = &m->enums[i];
                return &m->enums[i].items[k];
            }
    return NULL;
}

static int names_value(const cb_model *m, const char *name)
{
    const cb_enum *owner;
    return find_macro(m, name) || find_enum_constant(m, name, &owner);
}

static long long parse_literal(expr_state *s, const char *text)
{
    char buf[64];
    size_t n = strlen(text);
    if (n == 0 || n >= sizeof buf) {
        s->failed = 1;
        return 0;
    }
    memcpy(buf, text, n + 1);
    while (n > 0 && strchr("uUlL", buf[n - 1])) {
        if (buf[n - 1] == 'u' || buf[n - 1] == 'U')
            s->is_unsigned = 1;
        buf[--n] = '\0';
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 0);
    if (errno || *end || !isdigit((unsigned char)buf[0])) {
        s->failed = 1;
        return 0;
    }
    if (v > INT64_MAX)
        s->is_unsigned = 1;
    return (long long)v;
}

/* Whether tokens from i up to the matching ')' spell a type (a cast). */
static int is_cast(expr_state *s, unsigned i, unsigned *close)
{
    unsigned j = i + 1;
    int saw_name = 0;
    for (; j < s->n && !tok_is(s, j, ")"); j++) {
        CXTokenKind k = clang_getTokenKind(s->toks[j]);
        const char *t = tok(s, j);
        if (k == CXToken_Keyword || (k == CXToken_Identifier && !names_value(s->P->model, t)))
            saw_name = 1;
        else if (strcmp(t, "*") != 0)
            return 0;
    }
    *close = j;
    return saw_name && j + 1 < s->n;
}

static long long parse_expr(expr_state *s, int min_prec);

static long long parse_unary(expr_state *s)
{
    if (s->pos >= s->n) {
        s->failed = 1;
        return 0;
    }
    const char *t = tok(s, s->pos);
    unsigned close;
    if (strcmp(t, "(") == 0 && is_cast(s, s->pos, &close)) {
        size_t len = 0;
        char type[128] = "";
        for (unsigned j = s->pos + 1; j < close; j++) {
            const char *part = tok(s, j);
            size_t pl = strlen(part);
            if (len + pl + 2 >= sizeof type)
                break;
            if (len && strcmp(part, "*") == 0)
                type[len++] = ' ';
            else if (len)
                type[len++] = ' ';
            memcpy(type + len, part, pl);
            len += pl;
            type[len] = '\0';
        }
        if (!s->cast)
            s->cast = arena_strdup(s->P->arena, type);
        s->pos = close + 1;
        return parse_unary(s);
    }
    if (strcmp(t, "(") == 0) {
        s->pos++;
        long long v = parse_expr(s, 0);
        if (!tok_is(s, s->pos, ")"))
            s->failed = 1;
        s->pos++;
        return v;
    }
    if (strcmp(t, "-") == 0) {
        s->pos++;
        return -parse_unary(s);
    }
    if (strcmp(t, "~") == 0) {
        s->pos++;
        return ~parse_unary(s);
    }
    CXTokenKind k = clang_getTokenKind(s->toks[s->pos]);
    s->pos++;
    if (k == CXToken_Literal)
        return parse_literal(s, t);
    if (k == CXToken_Identifier) {
        const cb_macro *m = find_macro(s->P->model, t);
        if (m) {
            s->is_unsigned |= m->is_unsigned;
            return m->value;
        }
        const cb_enum *owner;
        const cb_enumerator *e = find_enum_constant(s->P->model, t, &owner);
        if (e) {
            s->enum_name = owner->name;
            return e->value;
        }
        s->unknown = 1;
    }
    s->failed = 1;
    return 0;
}

static int precedence(const char *op)
{
    if (strcmp(op, "|") == 0) return 1;
    if (strcmp(op, "&") == 0) return 2;
    if (strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0) return 3;
    if (strcmp(op, "+") == 0 || strcmp(op, "-") == 0) return 4;
    return -1;
}

static long long parse_expr(expr_state *s, int min_prec)
{
    long long lhs = parse_unary(s);
    while (!s->failed && s->pos < s->n) {
        const char *op = tok(s, s->pos);
        int prec = precedence(op);
        if (prec < 0 || prec < min_prec)
            break;
        s->pos++;
        long long rhs = parse_expr(s, prec + 1);
        unsigned long long l = (unsigned long long)lhs, r = (unsigned long long)rhs;
        if (strcmp(op, "|") == 0) lhs = (long long)(l | r);
        else if (strcmp(op, "&") == 0) lhs = (long long)(l & r);
        else if (strcmp(op, "<<") == 0) lhs = r < 64 ? (long long)(l << r) : (s->failed = 1, 0);
        else if (strcmp(op, ">>") == 0) lhs = r < 64 ? (long long)(l >> r) : (s->failed = 1, 0);
        else if (strcmp(op, "+") == 0) lhs = (long long)(l + r);
        else lhs = (long long)(l - r);
    }
    return lhs;
}

/* A macro defined again (after #undef, or with the same body) means what
 * its last definition says, as it does to C code after the header: each
 * public name maps to one symbol (collect_name replaces the earlier
 * mapping), each constant is held once, at the place its first definition
 * had, with the last definition's value (evaluate), and a definition
 * still pending or no longer a constant is dropped (macro_collect). */
static name_macro *find_name(parser *P, const char *public_name)
{
    for (size_t i = 0; i < P->nnames; i++)
        if (strcmp(P->names[i].public_name, public_name) == 0)
            return &P->names[i];
    return NULL;
}

static void collect_name(parser *P, const char *public_name, const char *abi)
{
    /* `#define cuX_v2 __CUDA_API_PTSZ(cuX_v2)` only selects the per-thread
     * variant; it must not rename the function away from `cuX`. */
    if (strcmp(public_name, abi) == 0)
        return;
    name_macro *nm = find_name(P, public_name);
    if (!nm)
        nm = ARENA_PUSH(P->arena, P->names, P->nnames, P->cap_names);
    nm->public_name = public_name;
    nm->abi = abi;
}

static void defer(parser *P, CXCursor c)
{
    if (P->npending_macros == P->cap_pending_macros) {
        P->cap_pending_macros = P->cap_pending_macros ? P->cap_pending_macros * 2 : 16;
        CXCursor *grown = realloc(P->pending_macros,
                                  P->cap_pending_macros * sizeof *grown);
        if (!grown)
            arena_oom();
        P->pending_macros = grown;
    }
    P->pending_macros[P->npending_macros++] = c;
}

/* Whether target is name, tag or one of the n aliases. */
static int names_type(const char *target, const char *name, const char *tag,
                      const char *const *aliases, size_t n)
{
    if (strcmp(name, target) == 0 || (tag && strcmp(tag, target) == 0))
        return 1;
    for (size_t a = 0; a < n; a++)
        if (strcmp(aliases[a], target) == 0)
            return 1;
    return 0;
}

/* `#define NAME TYPE` naming an enum, or a top-level struct or union,
 * already parsed (by its name, tag or an alias): NAME becomes one more
 * alias of it (`#define cudaStreamAttrID cudaLaunchAttributeID`, `#define
 * cudaStreamAttrValue cudaLaunchAttributeValue`), as a typedef would; 0
 * when TYPE names none. */
static int type_macro_alias(parser *P, const char *name, const char *target)
{
    cb_model *m = P->model;
    for (size_t i = 0; i < m->nenums; i++) {
        cb_enum *e = &m->enums[i];
        if (names_type(target, e->name, e->tag, e->aliases, e->naliases)) {
            px_add_alias(P, &e->aliases, &e->naliases, name);
            return 1;
        }
    }
    for (size_t i = 0; i < m->nrecords; i++) {
        cb_record *r = &m->records[i];
        if (!r->is_nested && names_type(target, r->name, r->tag, r->aliases, r->naliases)) {
            r->nmacro_aliases += (size_t)px_add_alias(P, &r->aliases, &r->naliases, name);
            return 1;
        }
    }
    return 0;
}

enum outcome { TAKEN, SKIPPED, UNKNOWN_NAME };

static enum outcome evaluate(parser *P, CXCursor c)
{
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(P->tu, clang_getCursorExtent(c), &toks, &n);
    expr_state s = {P, toks, n, 1, NULL, 0, 0, 0, NULL};
    const char *name = n ? tok(&s, 0) : "";
    enum outcome r = SKIPPED;
    /* one identifier after the name: another name of an enum, of a value
     * (evaluated below), or of a function (`#define cuMemAlloc cuMemAlloc_v2`) */
    int one_name = n == 2 && clang_getTokenKind(toks[1]) == CXToken_Identifier;
    if (one_name && type_macro_alias(P, name, tok(&s, 1))) {
        r = TAKEN;
    } else if (one_name && !names_value(P->model, tok(&s, 1)) && strncmp(name, "cu", 2) == 0 &&
               strncmp(tok(&s, 1), "cu", 2) == 0) {
        collect_name(P, name, tok(&s, 1));
        /* the macros come before the declarations: until all are parsed,
         * the target may yet be an enum's or a value's name, asked again
         * then (macro_resolve_pending); the function name stays harmless */
        r = P->macros_resolving ? TAKEN : UNKNOWN_NAME;
    } else if (n == 5 && strncmp(name, "cu", 2) == 0 &&
               (tok_is(&s, 1, "__CUDA_API_PTDS") || tok_is(&s, 1, "__CUDA_API_PTSZ")) &&
               tok_is(&s, 2, "(") && tok_is(&s, 4, ")")) {
        collect_name(P, name, tok(&s, 3));
        r = TAKEN;
    } else if (n >= 2 && name[0] != '_') {
        long long v = parse_expr(&s, 0);
        if (!s.failed && s.pos == n) {
            cb_model *m = P->model;
            long at = macro_index(m, name);
            cb_macro *mac = at >= 0 ? &m->macros[at]
                                    : ARENA_PUSH(P->arena, m->macros, m->nmacros, P->cap_macros);
            mac->name = name;
            mac->value = v;
            mac->is_unsigned = s.is_unsigned;
            mac->cast = s.cast ? s.cast : "";
            /* Only a body that is one enum constant has that enum's type. */
            mac->enum_name = n == 2 && s.enum_name ? s.enum_name : "";
            if (model_release_macro(name) >= 0 &&
                (!*m->version_macro ||
                 model_release_macro(name) <= model_release_macro(m->version_macro))) {
                m->cuda_version = v;
                m->version_macro = name;
                P->cuda_version_known = strcmp(name, "CUDA_VERSION") == 0;
            }
            r = TAKEN;
        } else if (s.unknown) {
            r = UNKNOWN_NAME;
        }
    }
    clang_disposeTokens(P->tu, toks, n);
    return r;
}

/* Drops the pending definition of `name` a later one replaces. */
static void drop_pending(parser *P, const char *name)
{
    size_t kept = 0;
    for (size_t i = 0; i < P->npending_macros; i++) {
        CXString n = clang_getCursorSpelling(P->pending_macros[i]);
        int same = strcmp(clang_getCString(n), name) == 0;
        clang_disposeString(n);
        if (!same)
            P->pending_macros[kept++] = P->pending_macros[i];
    }
    P->npending_macros = kept;
}

/* Removes model.macros[i], keeping the others in order. */
static void drop_macro(cb_model *m, size_t i)
{
    memmove(&m->macros[i], &m->macros[i + 1], (m->nmacros - i - 1) * sizeof m->macros[0]);
    m->nmacros--;
}

void macro_collect(parser *P, CXCursor c)
{
    if (clang_Cursor_isMacroFunctionLike(c) || clang_Cursor_isMacroBuiltin(c))
        return;
    if (!P->cuda_version_line) {
        CXString n = clang_getCursorSpelling(c);
        if (strcmp(clang_getCString(n), "CUDA_VERSION") == 0) {
            const char *file;
            px_location(P, c, &file, &P->cuda_version_line);
        }
        clang_disposeString(n);
    }
    CXString spelling = clang_getCursorSpelling(c);
    const char *name = clang_getCString(spelling);
    drop_pending(P, name);
    long earlier = macro_index(P->model, name);
    clang_disposeString(spelling);
    enum outcome r = evaluate(P, c);
    if (r != TAKEN && earlier >= 0)
        drop_macro(P->model, (size_t)earlier);
    if (r == UNKNOWN_NAME)
        defer(P, c);
}

void macro_resolve_pending(parser *P)
{
    P->macros_resolving = 1;
    int progress = 1;
    while (progress) {
        progress = 0;
        size_t kept = 0;
        for (size_t i = 0; i < P->npending_macros; i++) {
            if (evaluate(P, P->pending_macros[i]) == TAKEN)
                progress = 1;
            else
                P->pending_macros[kept++] = P->pending_macros[i];
        }
        P->npending_macros = kept;
    }
}

/* A function the header also declares under its public name, before
 * renaming it (cufile.h declares cuFileDriverClose, then
 * `#define cuFileDriverClose cuFileDriverClose_v2`): calls by that name
 * reach the renamed symbol, so the plain declaration leaves the model. */
static void drop_superseded(cb_model *m, const char *public_name, const char *abi)
{
    size_t kept = 0;
    for (size_t k = 0; k < m->nfunctions; k++) {
        const cb_function *f = &m->functions[k];
        if (strcmp(f->abi, public_name) == 0 && strcmp(public_name, abi) != 0)
            continue;
        m->functions[kept++] = *f;
    }
    m->nfunctions = kept;
}

void macro_apply_names(parser *P)
{
    cb_model *m = P->model;
    for (size_t i = 0; i < P->nnames; i++) {
        int renamed = 0;
        for (size_t k = 0; k < m->nfunctions; k++) {
            cb_function *f = &m->functions[k];
            if (strcmp(f->abi, P->names[i].abi) == 0) {
                f->name = P->names[i].public_name;
                renamed = 1;
            }
        }
        if (renamed)
            drop_superseded(m, P->names[i].public_name, P->names[i].abi);
    }
}

void macro_free(parser *P)
{
    free(P->pending_macros); /* everything else lives in the arena */
    P->pending_macros = NULL;
    P->npending_macros = P->cap_pending_macros = 0;
}
