/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c — the model's lookups and its arena (model.h), apart from the
 * libclang parser that fills it, so that tools built without libclang (the
 * rules parser's fuzz target) can link what gen/rules.c uses.
 */
#include "model.h"

#include <string.h>

#include "arena.h"

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

const cb_record *model_record(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        if (strcmp(r->name, name) == 0 || (*r->tag && strcmp(r->tag, name) == 0))
            return r;
        for (size_t a = 0; a < r->naliases; a++)
            if (strcmp(r->aliases[a], name) == 0)
                return r;
    }
    return NULL;
}

void *model_alloc(cb_model *m, size_t n) { return arena_alloc(m->arena, n); }
const char *model_strdup(cb_model *m, const char *s) { return arena_strdup(m->arena, s); }
const char *model_strndup(cb_model *m, const char *s, size_t n) { return arena_strndup(m->arena, s, n); }
