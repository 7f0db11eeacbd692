/* SPDX-License-Identifier: Apache-2.0 */
/*
 * records.c — struct and union definitions: size, alignment, and every
 * field's offset and type, nested records included.
 *
 * A record defined inside another (named `union {...} res;` or anonymous
 * `union {...};`) becomes its own cb_record with is_nested set; the field
 * that holds it refers to it by index (cb_field.nested). Field offsets are
 * relative to the record that directly contains the field.
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_record(const parser *P, CXCursor decl)
{
    CXCursor canon = clang_getCanonicalCursor(decl);
    for (size_t i = 0; i < P->model->nrecords; i++)
        if (clang_equalCursors(P->records_seen[i], canon))
            return (int)i;
    return -1;
}

void px_record_alias(parser *P, CXCursor decl, const char *typedef_name)
{
    int idx = find_record(P, decl);
    if (idx < 0)
        return;
    cb_record *r = &P->model->records[idx];
    px_add_alias(P, &r->aliases, &r->naliases, typedef_name);
    if (!*r->tag && r->naliases == 1)
        r->name = typedef_name;
}

static char *join_name(const char *outer, const char *field)
{
    size_t n = strlen(outer) + strlen(field) + 2;
    char *s = malloc(n);
    if (!s)
        arena_oom();
    snprintf(s, n, "%s.%s", outer, field);
    return s;
}

/* Gives a nested record its final name once the field holding it is known. */
static void name_nested(parser *P, int idx, const char *outer, const char *field)
{
    cb_record *r = &P->model->records[idx];
    if (*r->tag)
        return;
    char *s = join_name(outer, *field ? field : "<anon>");
    r->name = arena_strdup(P->arena, s);
    free(s);
}

/* Byte offset of an anonymous member: that of its first named field seen
 * from the parent, minus the field's own offset inside the member. */
static long long anonymous_member_offset(parser *P, CXType parent, const cb_record *member)
{
    for (size_t i = 0; i < member->nfields; i++) {
        const cb_field *f = &member->fields[i];
        if (!*f->name)
            continue;
        long long bits = clang_Type_getOffsetOf(parent, f->name);
        if (bits >= 0)
            return bits / 8 - f->offset;
    }
    (void)P;
    return 0;
}

int px_record(parser *P, CXCursor c, const char *outer_name)
{
    int existing = find_record(P, c);
    if (existing >= 0)
        return existing;
    cb_model *m = P->model;
    size_t before = P->cap_records;
    cb_record *r = ARENA_PUSH(P->arena, m->records, m->nrecords, P->cap_records);
    if (P->cap_records != before) {
        P->records_seen = realloc(P->records_seen, P->cap_records * sizeof *P->records_seen);
        if (!P->records_seen)
            arena_oom();
    }
    int idx = (int)(m->nrecords - 1);
    P->records_seen[idx] = clang_getCanonicalCursor(c);
    r->is_union = clang_getCursorKind(c) == CXCursor_UnionDecl;
    r->is_nested = outer_name != NULL;
    {
        CXFile file;
        clang_getSpellingLocation(clang_getCursorLocation(c), &file, NULL, NULL, NULL);
        r->interop = !file || !clang_File_isEqual(file, P->cuda_h);
    }
    r->tag = clang_Cursor_isAnonymous(c) ? "" : px_str(P, clang_getCursorSpelling(c));
    if (strncmp(r->tag, "struct (", 8) == 0 || strncmp(r->tag, "union (", 7) == 0)
        r->tag = "";
    r->name = *r->tag ? r->tag : (outer_name ? outer_name : "<anonymous>");
    CXType t = clang_getCursorType(c);
    r->size = clang_Type_getSizeOf(t);
    r->align = clang_Type_getAlignOf(t);
    r->doc = px_doc(P, c);
    const char *self_name = r->name;

    CXCursor *kids = NULL;
    size_t nkids = px_children(P, c, &kids);
    size_t cap_fields = 0;
    int pending = -1; /* a nested record not yet claimed by a field */
    for (size_t i = 0; i < nkids; i++) {
        CXCursor k = kids[i];
        enum CXCursorKind kind = clang_getCursorKind(k);
        if ((kind == CXCursor_StructDecl || kind == CXCursor_UnionDecl) &&
            clang_isCursorDefinition(k)) {
            pending = px_record(P, k, self_name);
            r = &m->records[idx]; /* px_record may have grown the array */
            if (clang_Cursor_isAnonymousRecordDecl(k)) {
                cb_field *f = ARENA_PUSH(P->arena, r->fields, r->nfields, cap_fields);
                f->name = "";
                f->type = px_type(P, clang_getCursorType(k));
                f->nested = pending;
                f->bit_width = -1;
                f->offset = anonymous_member_offset(P, t, &m->records[pending]);
                name_nested(P, pending, self_name, "");
                pending = -1;
            }
            continue;
        }
        if (kind != CXCursor_FieldDecl)
            continue;
        cb_field *f = ARENA_PUSH(P->arena, r->fields, r->nfields, cap_fields);
        f->name = px_str(P, clang_getCursorSpelling(k));
        CXType ft = clang_getCursorType(k);
        f->type = px_type(P, ft);
        if (px_desugar(ft).kind == CXType_IncompleteArray) {
            /* A flexible array member (`int data[]`): px_type reads `T x[]`
             * as the pointer it is among parameters; in a record it is an
             * array taking none of the record's bytes. */
            cb_type *flex = arena_alloc(P->arena, sizeof *flex);
            *flex = *f->type;
            flex->kind = TY_ARRAY;
            flex->array_len = 0;
            flex->size = 0;
            f->type = flex;
        }
        long long bits = clang_Cursor_getOffsetOfField(k);
        f->offset = bits >= 0 ? bits / 8 : -1;
        f->bit_width = clang_Cursor_isBitField(k) ? clang_getFieldDeclBitWidth(k) : -1;
        f->bit_offset = f->bit_width >= 0 ? bits : 0;
        f->nested = -1;
        if (pending >= 0) {
            CXType elem = px_desugar(ft);
            while (elem.kind == CXType_ConstantArray)
                elem = px_desugar(clang_getArrayElementType(elem));
            if (clang_equalCursors(clang_getCanonicalCursor(clang_getTypeDeclaration(elem)),
                                   P->records_seen[pending])) {
                f->nested = pending;
                name_nested(P, pending, self_name, f->name);
                pending = -1;
            }
        }
    }
    free(kids);
    return idx;
}
