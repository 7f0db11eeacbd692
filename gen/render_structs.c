/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_structs.c — template data for the struct and union classes
 * (render_structs.h). Data only: the emitted text is in
 * templates/driver/structs.c.tmpl.
 *
 * Class names follow cuda.bindings: a record with a tag is named by its tag
 * (CUDA_MEMCPY2D_st), one without by its first typedef; records nested
 * without a tag are anon_structN / anon_unionN, numbered in post-order
 * (inner records first) over the header, structs and unions counted apart,
 * anonymous members (flattened into their parent, never exported) counted
 * too. Every typedef name and the tag of a record name the same class.
 */
#define _POSIX_C_SOURCE 200809L
#include "render_structs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "classify.h"
#include "handles.h"
#include "host_bytes.h"
#include "render_util.h"

/* What the field-table stages read: the model, the rules and the module's
 * handle classes (handles.h), collected once by the caller for the whole
 * rendering; a handle class's index in hc is its index in the module's
 * handle table. */
typedef struct {
    const cb_model *m;
    const cb_facts *facts;
    const handle_class *hc;
    size_t nhc;
} struct_env;


typedef struct {
    const char *kind;
    long long size, count;
    int ref;
} field_shape;

static field_shape shape_of(const struct_env *env, const cb_type *t, int nested)
{
    const cb_model *m = env->m;
    field_shape s = {"CBS_F_BYTES", t->size > 0 ? t->size : 0, 0, -1};
    switch (t->kind) {
    case TY_INT:
        s.ref = handles_index(env->hc, env->nhc, t->name);
        s.kind = s.ref >= 0 ? "CBS_F_VALUE_HANDLE" : t->is_signed ? "CBS_F_SIGNED" : "CBS_F_UNSIGNED";
        if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8) {
            s.kind = "CBS_F_BYTES";
            s.ref = -1;
        }
        break;
    case TY_FLOAT:
        s.kind = t->size == 4 ? "CBS_F_FLOAT" : t->size == 8 ? "CBS_F_DOUBLE" : "CBS_F_BYTES";
        break;
    case TY_ENUM: {
        int idx = classify_enum_index(m, t->name);
        if (idx < 0 && t->canon && strncmp(t->canon, "enum ", 5) == 0)
            idx = classify_enum_index(m, t->canon + 5);
        s.ref = idx;
        s.kind = idx >= 0 ? "CBS_F_ENUM" : t->is_signed ? "CBS_F_SIGNED" : "CBS_F_UNSIGNED";
        break;
    }
    case TY_HANDLE:
        s.ref = handles_index(env->hc, env->nhc, t->name);
        s.kind = s.ref >= 0 ? "CBS_F_HANDLE" : "CBS_F_POINTER";
        break;
    case TY_RECORD:
        s.ref = nested >= 0 ? nested : classify_record_index(m, t);
        s.kind = s.ref >= 0 ? "CBS_F_RECORD" : "CBS_F_BYTES";
        break;
    case TY_POINTER:
        s.kind = "CBS_F_POINTER";
        break;
    case TY_FUNCPTR:
        s.kind = "CBS_F_FUNCPTR";
        break;
    case TY_ARRAY: {
        const cb_type *e = t->pointee;
        if (!e || e->kind == TY_ARRAY || t->array_len <= 0)
            break; /* opaque bytes */
        if (e->kind == TY_INT && e->size == 1 && e->canon && strcmp(e->canon, "char") == 0) {
            s.kind = "CBS_F_CHARS";
            s.size = 1;
            s.count = t->array_len;
            break;
        }
        field_shape es = shape_of(env, e, nested);
        if (strcmp(es.kind, "CBS_F_BYTES") == 0)
            break;
        es.count = t->array_len;
        return es;
    }
    default:
        break;
    }
    return s;
}

/* The facts of the field `name` of top's flattened table (rules_bind.h),
 * NULL for a field inside an anonymous member (top NULL). */
static const cb_field_facts *field_facts(const struct_env *env, const cb_record *top,
                                         const char *name)
{
    if (!top)
        return NULL;
    long long k = model_field_index(env->m, top, name);
    return k >= 0 ? &env->facts->records[top - env->m->records].fields[k] : NULL;
}

/* kernel-params-field / kernel-extra-field rules: the field's kind and the
 * indexes of the kernel fields it is typed by (bind_struct.h). */
static void kernel_field(const struct_env *env, const cb_record *top, const cb_field *f,
                         field_shape *s, long long *aux)
{
    const cb_field_facts *ff = field_facts(env, top, f->name);
    const cb_rule *kp = ff ? ff->on[CB_D_KERNEL_PARAMS_FIELD] : NULL;
    const cb_rule *ke = ff ? ff->on[CB_D_KERNEL_EXTRA_FIELD] : NULL;
    if (f->type->kind != TY_POINTER || (!kp && !ke))
        return;
    s->kind = kp ? "CBS_F_KERNEL_PARAMS" : "CBS_F_KERNEL_EXTRA";
    s->ref = kp ? (int)ff->func : -1;
    *aux = kp ? ff->kern : -1;
}

/* The record index of the element type of a field `T *f` whose T is a
 * struct or union of the header, -1 otherwise. */
static int pointee_record(const cb_model *m, const cb_field *f)
{
    if (f->type->kind != TY_POINTER || !f->type->pointee ||
        f->type->pointee->kind != TY_RECORD)
        return -1;
    return classify_record_index(m, f->type->pointee);
}

/* field-count rules: a `T *FIELD` pointing at an array counted by the
 * integer field COUNT becomes CBS_F_RECORD_ARRAY when T is a struct or
 * union of the header (ref: its record), CBS_F_HANDLE_ARRAY when T is a
 * handle class (ref: its class, *elem_size: the bytes of one handle);
 * field-count-out rules: CBS_F_HANDLE_OUT (T a handle class, as above);
 * aux is the count field's index in top's table (bind_struct.h). A rule
 * whose fields are not of those types changes nothing here;
 * rules_unmatched reports it. */
static void array_field(const struct_env *env, const cb_record *top, const cb_field *f,
                        field_shape *s, long long *aux, long long *elem_size)
{
    const cb_model *m = env->m;
    const cb_field_facts *ff = field_facts(env, top, f->name);
    const cb_rule *fc = ff ? ff->on[CB_D_FIELD_COUNT] : NULL;
    const cb_rule *out = ff && !fc ? ff->on[CB_D_FIELD_COUNT_OUT] : NULL;
    if (out)
        fc = out;
    if (!fc || f->type->kind != TY_POINTER || !f->type->pointee)
        return;
    long long count = out ? ff->count_out : ff->count;
    int elem = out ? -1 : pointee_record(m, f);
    field_shape es = shape_of(env, f->type->pointee, -1);
    int handle = strcmp(es.kind, "CBS_F_HANDLE") == 0 || strcmp(es.kind, "CBS_F_VALUE_HANDLE") == 0;
    if (count < 0 || (elem < 0 && !handle))
        return;
    s->kind = elem >= 0 ? "CBS_F_RECORD_ARRAY" : out ? "CBS_F_HANDLE_OUT" : "CBS_F_HANDLE_ARRAY";
    s->ref = elem >= 0 ? elem : es.ref;
    *elem_size = elem >= 0 ? 0 : es.size;
    *aux = count;
}

/* The class name of handle class `index` of the module's table, "" when
 * none. The name is the model's (a handle, callback or typedef name),
 * which outlives the rendering. */
static const char *handle_name(const struct_env *env, int index)
{
    return index >= 0 && (size_t)index < env->nhc ? env->hc[index].name : "";
}

/* Appends r's fields at byte offset base; anonymous members flattened.
 * top: the record the field table is for (rules name it), NULL inside an
 * anonymous member. class_names: the class name of every record (the
 * stubs type array fields by their element's class). *counted is set when
 * a field is a counted array of records or handles. */
static void add_fields(const struct_env *env, const cb_record *r, const cb_record *top,
                       long long base, char **class_names, tv *out, long long *n, int *counted)
{
    const cb_model *m = env->m;
    for (size_t i = 0; i < r->nfields; i++) {
        const cb_field *f = &r->fields[i];
        if (!*f->name) {
            if (f->nested >= 0)
                add_fields(env, &m->records[f->nested], NULL, base + f->offset, class_names,
                           out, n, counted);
            continue;
        }
        field_shape s = shape_of(env, f->type, f->nested);
        long long aux = -1, elem_size = 0;
        kernel_field(env, top, f, &s, &aux);
        array_field(env, top, f, &s, &aux, &elem_size);
        int records = strcmp(s.kind, "CBS_F_RECORD_ARRAY") == 0;
        int driver_handles = strcmp(s.kind, "CBS_F_HANDLE_OUT") == 0;
        int handles = driver_handles || strcmp(s.kind, "CBS_F_HANDLE_ARRAY") == 0;
        *counted |= records || (handles && !driver_handles);
        tv *fv = tv_map();
        tv_set_bool(fv, "record_array", records || handles);
        tv_set_str(fv, "elem_class", records   ? class_names[s.ref]
                                     : handles ? handle_name(env, s.ref)
                                               : "");
        tv_set_int(fv, "aux", aux);
        tv_set_int(fv, "elem_size", elem_size);
        tv_set_str(fv, "name", f->name);
        tv_set_str(fv, "kind", s.kind);
        tv_set_int(fv, "size", s.size);
        tv_set_int(fv, "ref", s.ref);
        tv_set_int(fv, "count", s.count);
        if (f->bit_width >= 0) {
            tv_set_int(fv, "offset", base + f->bit_offset / 8);
            tv_set_int(fv, "bit_width", f->bit_width);
            tv_set_int(fv, "bit_offset", f->bit_offset % 8);
        } else {
            tv_set_int(fv, "offset", base + (f->offset > 0 ? f->offset : 0));
            tv_set_int(fv, "bit_width", -1);
            tv_set_int(fv, "bit_offset", 0);
        }
        tv_push(out, fv);
        (*n)++;
    }
}

/* The host-bytes rules of record r (rules.h), one entry each: the field
 * indexes of its buffer, terms and `when` field in r's table, as
 * bind_struct.h's cbs_host_extent. host_bytes_check validated them. */
static tv *extents_of(const struct_env *env, const cb_record *r)
{
    const cb_model *m = env->m;
    const cb_record_facts *rf = &env->facts->records[r - m->records];
    tv *list = tv_list();
    for (size_t i = 0; i < rf->nhost_bytes; i++) {
        const cb_rule *rule = rf->host_bytes[i];
        cb_host_bytes h;
        char err[256];
        if (host_bytes_parse(env->facts->rules, rule, &h, err, sizeof err) < 0)
            continue;
        tv *e = tv_map();
        tv_set_int(e, "buffer", model_field_index(m, r, h.buffer));
        tv_set_int(e, "writes", h.writes);
        long long when = -1, value = 0;
        if (h.when_value) {
            const cb_field *wf = rules_record_field(m, rule->args[0], h.when_field);
            when = model_field_index(m, r, h.when_field);
            if (!wf || host_bytes_enumerator(m, wf->type, h.when_value, &value) < 0)
                when = -1;
        }
        tv_set_int(e, "when", when);
        tv_set_int(e, "when_value", value);
        strbuf terms = {0};
        for (int t = 0; t < HB_NTERMS; t++)
            sb_printf(&terms, "%s%lld", t ? ", " : "", h.term[t] ? model_field_index(m, r, h.term[t]) : -1);
        if (terms.oom)
            arena_oom();
        tv_set_str(e, "terms", terms.data);
        sb_free(&terms);
        tv_push(list, e);
    }
    return list;
}

/* Whether a call must check record i (bind_struct.h: cbs_struct_def
 * .checked): own[i] (a counted array or a host extent of its own), or a
 * record it holds by value or in an array it owns must. memo: -1 unknown;
 * a record never holds itself by value, so a record in progress is 0. */
static int record_checked(const struct_env *env, size_t i, const int *own, signed char *memo);

static int members_checked(const struct_env *env, const cb_record *r, const cb_record *top,
                           const int *own, signed char *memo)
{
    const cb_model *m = env->m;
    for (size_t k = 0; k < r->nfields; k++) {
        const cb_field *f = &r->fields[k];
        if (!*f->name) {
            if (f->nested >= 0 && members_checked(env, &m->records[f->nested], top, own, memo))
                return 1;
            continue;
        }
        const cb_type *t = f->type->kind == TY_ARRAY ? f->type->pointee : f->type;
        int idx = -1;
        if (t && t->kind == TY_RECORD)
            idx = f->nested >= 0 ? f->nested : classify_record_index(m, t);
        else if (field_facts(env, top, f->name) && field_facts(env, top, f->name)->on[CB_D_FIELD_COUNT])
            idx = pointee_record(m, f);
        if (idx >= 0 && record_checked(env, (size_t)idx, own, memo))
            return 1;
    }
    return 0;
}

static int record_checked(const struct_env *env, size_t i, const int *own, signed char *memo)
{
    if (memo[i] < 0) {
        memo[i] = 0;
        memo[i] = (signed char)(own[i] || members_checked(env, &env->m->records[i],
                                                          &env->m->records[i], own, memo));
    }
    return memo[i];
}

typedef struct {
    char **names;          /* class name per record (malloc'ed) */
    int nstruct, nunion;
} naming;

static char *dup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        arena_oom();
    return d;
}

static void name_post_order(const cb_model *m, size_t idx, naming *nm, int depth)
{
    const cb_record *r = &m->records[idx];
    if (depth > 64)
        return;
    for (size_t i = 0; i < r->nfields; i++)
        if (r->fields[i].nested >= 0 && (size_t)r->fields[i].nested != idx)
            name_post_order(m, (size_t)r->fields[i].nested, nm, depth + 1);
    if (nm->names[idx])
        return;
    char buf[64];
    if (*r->tag) {
        nm->names[idx] = dup(r->tag);
    } else if (r->is_nested) {
        if (r->is_union)
            snprintf(buf, sizeof buf, "anon_union%d", nm->nunion++);
        else
            snprintf(buf, sizeof buf, "anon_struct%d", nm->nstruct++);
        nm->names[idx] = dup(buf);
    } else {
        nm->names[idx] = dup(r->name);
    }
}

/* A C/Python identifier made of name (for records never reached above). */
static char *identifier(const char *name)
{
    char *s = dup(name);
    for (char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            *p = '_';
    return s;
}

static void add_alias(tv *aliases, const char **seen, size_t *nseen, const char *name, size_t idx,
                      const char *target)
{
    if (!name || !*name || strchr(name, '<') || strchr(name, '.'))
        return;
    for (size_t i = 0; i < *nseen; i++)
        if (strcmp(seen[i], name) == 0)
            return;
    seen[(*nseen)++] = name;
    tv *a = tv_map();
    tv_set_str(a, "name", name);
    tv_set_int(a, "index", (long long)idx);
    tv_set_str(a, "target", target);            /* the class it names */
    tv_set_bool(a, "is_alias", strcmp(name, target) != 0);
    tv_push(aliases, a);
}

tv *structs_value(const cb_model *m, const cb_facts *facts, const handle_class *hc, size_t nhc)
{
    const struct_env env = {m, facts, hc, nhc};
    naming nm = {calloc(m->nrecords + 1, sizeof(char *)), 0, 0};
    char *anon_member = calloc(m->nrecords + 1, 1);
    size_t cap_seen = 1;
    for (size_t i = 0; i < m->nrecords; i++)
        cap_seen += m->records[i].naliases + 3;
    const char **seen = calloc(cap_seen, sizeof *seen);
    if (!nm.names || !anon_member || !seen)
        arena_oom();
    for (size_t i = 0; i < m->nrecords; i++)
        for (size_t k = 0; k < m->records[i].nfields; k++) {
            const cb_field *f = &m->records[i].fields[k];
            if (!*f->name && f->nested >= 0)
                anon_member[f->nested] = 1;
        }
    for (size_t i = 0; i < m->nrecords; i++)
        if (!m->records[i].is_nested)
            name_post_order(m, i, &nm, 0);
    for (size_t i = 0; i < m->nrecords; i++)
        if (!nm.names[i])
            nm.names[i] = identifier(m->records[i].name);

    tv *root = tv_map();
    tv *records = tv_list(), *aliases = tv_list();
    size_t nseen = 0;
    int *own = calloc(m->nrecords + 1, sizeof *own);
    signed char *memo = malloc(m->nrecords + 1);
    tv **rvs = calloc(m->nrecords + 1, sizeof *rvs);
    if (!own || !memo || !rvs)
        arena_oom();
    memset(memo, -1, m->nrecords + 1);
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        tv *rv = tv_map();
        tv_set_int(rv, "index", (long long)i);
        tv_set_str(rv, "name", nm.names[i]);
        tv_set_int(rv, "size", r->size > 0 ? r->size : 0);
        tv_set_int(rv, "align", r->align > 0 ? r->align : 1);
        tv *fields = tv_list();
        long long n = 0;
        int counted = 0;
        add_fields(&env, r, r, 0, nm.names, fields, &n, &counted);
        tv_set(rv, "fields", fields);
        tv *extents = extents_of(&env, r);
        size_t nextents = tv_len(extents);
        tv_set(rv, "extents", extents);
        tv_set_int(rv, "nextents", (long long)nextents);
        tv_set_bool(rv, "has_extents", nextents > 0);
        own[i] = counted || nextents > 0;
        rvs[i] = rv;
        tv_set_int(rv, "nfields", n);
        tv_set_bool(rv, "exported", !anon_member[i]);

        strbuf doc = {0};
        sb_printf(&doc, "%s(_ptr=0, **fields)\n--\n\n%s %s", nm.names[i],
                  r->is_union ? "union" : "struct", *r->tag ? r->tag : r->name);
        for (size_t a = 0; a < r->naliases; a++)
            sb_printf(&doc, "%s%s", a ? ", " : " (typedef ", r->aliases[a]);
        sb_printf(&doc, "%s, %lld bytes.%s%s", r->naliases ? ")" : "", r->size,
                  r->doc && *r->doc ? "\n\n" : "", r->doc ? r->doc : "");
        if (doc.oom)
            arena_oom();
        tv_set(rv, "doc", c_string_literal(doc.data));
        sb_free(&doc);
        tv_push(records, rv);

        if (anon_member[i])
            continue;
        add_alias(aliases, seen, &nseen, nm.names[i], i, nm.names[i]);
        add_alias(aliases, seen, &nseen, r->tag, i, nm.names[i]);
        add_alias(aliases, seen, &nseen, r->name, i, nm.names[i]);
        for (size_t a = 0; a < r->naliases; a++)
            add_alias(aliases, seen, &nseen, r->aliases[a], i, nm.names[i]);
    }
    for (size_t i = 0; i < m->nrecords; i++)
        tv_set_int(rvs[i], "checked", record_checked(&env, i, own, memo));
    free(own);
    free(memo);
    free(rvs);
    tv_set(root, "records", records);
    tv_set_int(root, "count", (long long)m->nrecords);
    tv_set(root, "aliases", aliases);
    for (size_t i = 0; i < m->nrecords; i++)
        free(nm.names[i]);
    free(nm.names);
    free(anon_member);
    free(seen);
    return root;
}
