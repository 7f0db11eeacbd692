/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — the model's lookups and its arena (model.h), apart from the
 * libclang parser that fills it, so that tools built without libclang (the
 * rules parser's fuzz target) can link what gen/rules/rules.c uses.
 */
#include "model/model.h"

#include <string.h>

#include "model/arena.h"

void model_free(cb_model *m)
{
    if (m)
        arena_destroy(m->arena);
}

#define FIND(arr, n, field, key)                        \
    for (size_t i_ = 0; i_ < (n); i_++)                 \
        if (strcmp((arr)[i_].field, (key)) == 0)        \
            return &(arr)[i_];                          \
    return NULL

void model_forget_docs(cb_model *m)
{
    for (size_t i = 0; i < m->nfunctions; i++)
        m->functions[i].doc = "";
    for (size_t i = 0; i < m->nenums; i++) {
        m->enums[i].doc = "";
        for (size_t k = 0; k < m->enums[i].nitems; k++)
            m->enums[i].items[k].doc = "";
    }
    for (size_t i = 0; i < m->nrecords; i++)
        m->records[i].doc = "";
}

const cb_function *model_function(const cb_model *m, const char *name) { FIND(m->functions, m->nfunctions, name, name); }
const cb_enum *model_enum(const cb_model *m, const char *name) { FIND(m->enums, m->nenums, name, name); }
const cb_handle *model_handle(const cb_model *m, const char *name) { FIND(m->handles, m->nhandles, name, name); }
const cb_callback *model_callback(const cb_model *m, const char *name) { FIND(m->callbacks, m->ncallbacks, name, name); }

int model_param_index(const cb_function *f, const char *name)
{
    for (size_t i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

int model_record_named(const cb_record *r, const char *name)
{
    if (strcmp(r->name, name) == 0 || (*r->tag && strcmp(r->tag, name) == 0))
        return 1;
    for (size_t a = 0; a < r->naliases; a++)
        if (strcmp(r->aliases[a], name) == 0)
            return 1;
    return 0;
}

const cb_record *model_record(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->nrecords; i++)
        if (model_record_named(&m->records[i], name))
            return &m->records[i];
    return NULL;
}

int model_field_is_flexible(const cb_field *f)
{
    return f->type->kind == TY_ARRAY && f->type->array_len == 0;
}

int model_type_is_char(const cb_type *t)
{
    return t->kind == TY_INT && t->size == 1 && t->canon && strstr(t->canon, "char") != NULL &&
           !strstr(t->canon, "unsigned");
}

int model_handle_index(const cb_model *m, const char *name)
{
    const cb_handle *h = name ? model_handle(m, name) : NULL;
    return h ? (int)(h - m->handles) : -1;
}

int model_typedef_index(const cb_model *m, const char *name)
{
    for (size_t i = 0; name && i < m->ntypedefs; i++)
        if (strcmp(m->typedefs[i].name, name) == 0)
            return (int)i;
    return -1;
}

int model_enum_index(const cb_model *m, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < m->nenums; i++)
        if (strcmp(m->enums[i].name, name) == 0 || strcmp(m->enums[i].tag, name) == 0)
            return (int)i;
    return -1;
}

int model_type_enum(const cb_model *m, const cb_type *t)
{
    int idx = model_enum_index(m, t->name);
    if (idx < 0 && t->canon && strncmp(t->canon, "enum ", 5) == 0)
        idx = model_enum_index(m, t->canon + 5);
    return idx;
}

int model_type_record(const cb_model *m, const cb_type *t)
{
    const cb_record *r = NULL;
    if (t->name)
        r = model_record(m, t->name);
    if (!r && t->record_tag && *t->record_tag)
        r = model_record(m, t->record_tag);
    return r ? (int)(r - m->records) : -1;
}

/* Walks r's flattened table: the index of `name` (NULL: none), counting
 * the named fields in *n. */
static long long flat_walk(const cb_model *m, const cb_record *r, const char *name, long long *n)
{
    for (size_t i = 0; i < r->nfields; i++) {
        const cb_field *f = &r->fields[i];
        if (!*f->name) {
            if (f->nested >= 0) {
                long long k = flat_walk(m, &m->records[f->nested], name, n);
                if (k >= 0)
                    return k;
            }
            continue;
        }
        if (name && strcmp(f->name, name) == 0)
            return *n;
        (*n)++;
    }
    return -1;
}

long long model_field_index(const cb_model *m, const cb_record *r, const char *name)
{
    long long n = 0;
    return strcmp(name, "-") == 0 ? -1 : flat_walk(m, r, name, &n);
}

const cb_field *model_field_named(const cb_model *m, const cb_record *r, const char *name)
{
    for (size_t i = 0; i < r->nfields; i++) {
        const cb_field *f = &r->fields[i];
        if (!*f->name && f->nested >= 0) {
            const cb_field *g = model_field_named(m, &m->records[f->nested], name);
            if (g)
                return g;
        } else if (*f->name && strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}

long long model_field_count(const cb_model *m, const cb_record *r)
{
    long long n = 0;
    flat_walk(m, r, NULL, &n);
    return n;
}

void *model_alloc(cb_model *m, size_t n) { return arena_alloc(m->arena, n); }
const char *model_strdup(cb_model *m, const char *s) { return arena_strdup(m->arena, s); }
const char *model_strndup(cb_model *m, const char *s, size_t n) { return arena_strndup(m->arena, s, n); }

int model_release_macro(const char *name)
{
    static const char *const release[] = {"CUDA_VERSION", "CUDART_VERSION"};
    for (size_t i = 0; i < sizeof release / sizeof release[0]; i++)
        if (strcmp(name, release[i]) == 0)
            return (int)i;
    return -1;
}
