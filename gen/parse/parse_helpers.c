/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse_helpers.c — the parser's shared helpers (parse_internal.h): strings
 * and types read from libclang into the arena, locations, doc comments,
 * a cursor's children. Every file of gen/parse/ may call them; they call
 * no other file of gen/parse/ but comments.c (a doc comment libclang does
 * not attach), so the files' calls go one way: parse.c above records.c,
 * pfn.c, macros.c and macro_values.c, all of them above this file.
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- names --------------------------------------------------------------- */

int px_add_alias(parser *P, const char ***aliases, size_t *n, const char *name)
{
    for (size_t a = 0; a < *n; a++)
        if (strcmp((*aliases)[a], name) == 0)
            return 0;
    size_t cap = *n; /* aliases grow one at a time: capacity == count */
    const char **slot = ARENA_PUSH(P->arena, *aliases, *n, cap);
    *slot = name;
    return 1;
}

/* ---- small libclang helpers ------------------------------------------- */

const char *px_str(parser *P, CXString s)
{
    const char *c = clang_getCString(s);
    const char *r = arena_strdup(P->arena, c ? c : "");
    clang_disposeString(s);
    return r;
}

/* Strips typedef and elaborated sugar; qualifiers are dropped with them. */
CXType px_desugar(CXType t)
{
    for (;;) {
        if (t.kind == CXType_Typedef)
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        else if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Attributed)
            t = clang_Type_getModifiedType(t);
        else
            return t;
    }
}

static int is_integer_kind(enum CXTypeKind k)
{
    return k >= CXType_Bool && k <= CXType_Int128;
}

int px_is_signed_kind(enum CXTypeKind k)
{
    return (k >= CXType_Char_S && k <= CXType_Int128) || k == CXType_Enum;
}

/* Whether a record type has no definition in the translation unit. */
static int is_incomplete_record(CXType t)
{
    CXCursor decl = clang_getTypeDeclaration(t);
    return clang_Cursor_isNull(clang_getCursorDefinition(decl));
}

/* The typedef or tag name naming t, or NULL for builtins and pointers. */
static const char *type_name(parser *P, CXType t)
{
    if (t.kind == CXType_Elaborated)
        t = clang_Type_getNamedType(t);
    if (t.kind == CXType_Typedef)
        return px_str(P, clang_getTypedefName(t));
    if (t.kind == CXType_Record || t.kind == CXType_Enum) {
        CXCursor d = clang_getTypeDeclaration(t);
        const char *tag = px_str(P, clang_getCursorSpelling(d));
        return *tag ? tag : NULL;
    }
    return NULL;
}

/* The one handle of the model whose typedef points at the struct declared
 * by decl, -1 when none or several do. */
static long long handle_of_tag(parser *P, CXCursor decl)
{
    const char *tag = px_str(P, clang_getCursorSpelling(decl));
    long long found = -1;
    for (size_t i = 0; *tag && i < P->model->nhandles; i++)
        if (P->model->handles[i].tag && strcmp(P->model->handles[i].tag, tag) == 0) {
            if (found >= 0)
                return -1;
            found = (long long)i;
        }
    return found;
}

const cb_type *px_type(parser *P, CXType t)
{
    cb_type *ty = arena_alloc(P->arena, sizeof *ty);
    CXType d = px_desugar(t);
    ty->spelling = px_str(P, clang_getTypeSpelling(t));
    ty->canon = px_str(P, clang_getTypeSpelling(clang_getCanonicalType(t)));
    ty->name = type_name(P, t);
    ty->handle_index = model_handle_index(P->model, ty->name);
    ty->typedef_index = model_typedef_index(P->model, ty->name);
    ty->is_const = clang_isConstQualifiedType(t);
    long long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
    ty->size = size < 0 ? -1 : size;
    ty->align = align < 0 ? -1 : align;

    if (d.kind == CXType_Void) {
        ty->kind = TY_VOID;
    } else if (is_integer_kind(d.kind)) {
        ty->kind = TY_INT;
        ty->is_signed = px_is_signed_kind(d.kind);
    } else if (d.kind == CXType_Float || d.kind == CXType_Double) {
        ty->kind = TY_FLOAT;
    } else if (d.kind == CXType_Enum) {
        ty->kind = TY_ENUM;
        CXType integer = clang_getEnumDeclIntegerType(clang_getTypeDeclaration(d));
        ty->is_signed = px_is_signed_kind(integer.kind);
    } else if (d.kind == CXType_Record) {
        ty->kind = is_incomplete_record(d) ? TY_OTHER : TY_RECORD;
        ty->record_tag = px_str(P, clang_getCursorSpelling(clang_getTypeDeclaration(d)));
    } else if (d.kind == CXType_Pointer) {
        CXType pointee = clang_getPointeeType(d);
        CXType pd = px_desugar(pointee);
        if (pd.kind == CXType_FunctionProto || pd.kind == CXType_FunctionNoProto) {
            ty->kind = TY_FUNCPTR;
        } else if (t.kind != CXType_Pointer && pd.kind == CXType_Record &&
                   is_incomplete_record(pd)) {
            /* Only a typedef of such a pointer is a handle type. */
            ty->kind = TY_HANDLE;
            ty->record_tag = px_str(P, clang_getCursorSpelling(clang_getTypeDeclaration(pd)));
        } else if (pd.kind == CXType_Record && is_incomplete_record(pd) &&
                   handle_of_tag(P, clang_getTypeDeclaration(pd)) >= 0) {
            /* A bare pointer to the struct of one handle typedef declared
             * before (`struct cudaGraphicsResource *` for
             * cudaGraphicsResource_t) is that handle. */
            long long h = handle_of_tag(P, clang_getTypeDeclaration(pd));
            ty->kind = TY_HANDLE;
            ty->record_tag = P->model->handles[h].tag;
            ty->name = P->model->handles[h].name;
            ty->handle_index = h;
            ty->typedef_index = model_typedef_index(P->model, ty->name);
        } else {
            ty->kind = TY_POINTER;
            ty->pointee = px_type(P, pointee);
        }
    } else if (d.kind == CXType_ConstantArray) {
        ty->kind = TY_ARRAY;
        ty->array_len = clang_getArraySize(d);
        ty->pointee = px_type(P, clang_getArrayElementType(d));
    } else if (d.kind == CXType_IncompleteArray) {
        ty->kind = TY_POINTER;
        ty->pointee = px_type(P, clang_getArrayElementType(d));
    } else if (d.kind == CXType_FunctionProto) {
        ty->kind = TY_FUNCPTR;
    } else {
        ty->kind = TY_OTHER;
    }
    return ty;
}

void px_location(parser *P, CXCursor c, const char **file, unsigned *line)
{
    CXFile f;
    unsigned l, col, off;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, &l, &col, &off);
    *file = f ? px_str(P, clang_getFileName(f)) : "";
    *line = l;
}

/* A raw comment's text with the comment markers removed. */
static const char *strip_markers(parser *P, const char *text)
{
    size_t n = strlen(text);
    char *out = arena_alloc(P->arena, n + 1);
    size_t o = 0;
    const char *p = text, *end = text + n;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const char *s = p;
        while (s < eol && (*s == ' ' || *s == '\t'))
            s++;
        if (eol - s >= 3 && (strncmp(s, "/**", 3) == 0 || strncmp(s, "/*!", 3) == 0))
            s += 3;
        else if (eol - s >= 2 && strncmp(s, "*/", 2) == 0)
            s += 2;
        else if (s < eol && *s == '*' && !(eol - s >= 2 && s[1] == '/'))
            s += 1;
        if (s < eol && *s == ' ')
            s++;
        const char *e = eol;
        if (e - s >= 2 && strncmp(e - 2, "*/", 2) == 0)
            e -= 2;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        memcpy(out + o, s, (size_t)(e - s));
        o += (size_t)(e - s);
        out[o++] = '\n';
        p = eol < end ? eol + 1 : end;
    }
    while (o > 0 && out[o - 1] == '\n')
        o--;
    size_t start = 0;
    while (start < o && out[start] == '\n')
        start++;
    out[o] = '\0';
    return out + start;
}

/* Doc comment text with the comment markers removed, "" when none. When
 * libclang attaches none (it never does where the declaration's name is a
 * macro expansion) the doc comment right before the declaration is used. */
const char *px_doc(parser *P, CXCursor c)
{
    CXString raw = clang_Cursor_getRawCommentText(c);
    const char *text = clang_getCString(raw);
    const char *doc;
    if (text && *text) {
        doc = strip_markers(P, text);
    } else {
        const char *before = px_comment_before(P, c);
        doc = before ? strip_markers(P, before) : "";
    }
    clang_disposeString(raw);
    return doc;
}

/* ---- a cursor's children ----------------------------------------------- */

typedef struct {
    CXCursor *items;
    size_t n, cap;
} cursor_list;

static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    cursor_list *l = data;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        CXCursor *grown = realloc(l->items, l->cap * sizeof *grown);
        if (!grown)
            arena_oom();
        l->items = grown;
    }
    l->items[l->n++] = c;
    return CXChildVisit_Continue;
}

size_t px_children(parser *P, CXCursor c, CXCursor **out)
{
    (void)P;
    cursor_list l = {0};
    clang_visitChildren(c, collect, &l);
    *out = l.items;
    return l.n;
}
