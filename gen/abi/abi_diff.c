/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_diff.c — what changed between two ABI sets, and the reports (abi_diff.h).
 *
 * Entries are matched by public name. A function a release renamed (the same
 * symbol and signature bound under another public name) is one removal and
 * one change or addition, both noting the rename.
 */
#include "abi/abi_diff.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "util/strbuf.h"

enum { CH_REMOVED, CH_CHANGED, CH_ADDED };
static const char *const change_names[] = {"removed", "changed", "added"};

typedef struct {
    int change;
    const char *name;
    const char *old, *new; /* signatures / layouts summaries; NULL when absent */
    const char **notes;
    size_t nnotes, cap;
    int breaking;
} dentry;

typedef struct {
    dentry *items;
    size_t n, cap;
} dlist;

/* Everything, the struct itself included, lives in the arena a. */
struct abi_diff {
    cb_arena *a;
    dlist functions, records, enums;
    int breaking;
};
typedef struct abi_diff adiff;

static dentry *dpush(adiff *d, dlist *l, int change, const char *name, int breaking)
{
    dentry *e = ARENA_PUSH(d->a, l->items, l->n, l->cap);
    e->change = change;
    e->name = name;
    e->breaking = breaking;
    if (breaking)
        d->breaking = 1;
    return e;
}

static void note(adiff *d, dentry *e, const char *fmt, ...) SB_PRINTF(3, 4);
static void note(adiff *d, dentry *e, const char *fmt, ...)
{
    strbuf sb = {0};
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    *ARENA_PUSH(d->a, e->notes, e->nnotes, e->cap) = abi_take(d->a, &sb);
}

static const afunc *find_func(const aset *s, const char *name)
{
    for (size_t i = 0; i < s->nf; i++)
        if (strcmp(s->f[i].name, name) == 0)
            return &s->f[i];
    return NULL;
}

static const arecord *find_rec(const aset *s, const char *name)
{
    for (size_t i = 0; i < s->nr; i++)
        if (strcmp(s->r[i].name, name) == 0)
            return &s->r[i];
    return NULL;
}

static const aenum *find_enum(const aset *s, const char *name)
{
    for (size_t i = 0; i < s->ne; i++)
        if (strcmp(s->e[i].name, name) == 0)
            return &s->e[i];
    return NULL;
}

static size_t proto_len(const char *sig)
{
    const char *l = strstr(sig, " layout=");
    return l ? (size_t)(l - sig) : strlen(sig);
}

static const char *record_summary(cb_arena *a, const arecord *r)
{
    strbuf sb = {0};
    sb_printf(&sb, "%s size=%lld align=%lld, %zu fields", r->is_union ? "union" : "struct", r->size,
              r->align, r->nfields);
    return abi_take(a, &sb);
}

/* Display name of field k: its name, or "(anonymous N)". */
static const char *field_label(cb_arena *a, const arecord *r, size_t k)
{
    if (*r->fields[k].name)
        return r->fields[k].name;
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        n += !*r->fields[i].name;
    strbuf sb = {0};
    sb_printf(&sb, "(anonymous %zu)", n + 1);
    return abi_take(a, &sb);
}

static int field_index(cb_arena *a, const arecord *r, const char *label)
{
    for (size_t k = 0; k < r->nfields; k++)
        if (strcmp(field_label(a, r, k), label) == 0)
            return (int)k;
    return -1;
}

static void field_pos(strbuf *sb, const afield *f)
{
    if (f->bits >= 0)
        sb_printf(sb, "@%lld bit %lld width %lld", f->offset, f->bit_offset, f->bits);
    else
        sb_printf(sb, "@%lld", f->offset);
}

static void diff_record(adiff *d, const arecord *o, const arecord *n)
{
    /* Layout strings start with the record's name, which is the same here. */
    int layout = strcmp(o->layout, n->layout) != 0;
    int renamed = 0;
    for (size_t k = 0; !layout && k < o->nfields; k++)
        renamed |= strcmp(o->fields[k].name, n->fields[k].name) != 0;
    if (!layout && !renamed)
        return;
    dentry *e = dpush(d, &d->records, CH_CHANGED, n->name, layout);
    e->old = record_summary(d->a, o);
    e->new = record_summary(d->a, n);
    if (o->size != n->size)
        note(d, e, "size %lld -> %lld", o->size, n->size);
    if (o->align != n->align)
        note(d, e, "align %lld -> %lld", o->align, n->align);
    if (o->is_union != n->is_union)
        note(d, e, "%s -> %s", o->is_union ? "union" : "struct", n->is_union ? "union" : "struct");
    for (size_t k = 0; k < o->nfields; k++) {
        const char *label = field_label(d->a, o, k);
        const afield *of = &o->fields[k];
        int j = field_index(d->a, n, label);
        strbuf p = {0};
        field_pos(&p, of);
        if (j < 0) {
            note(d, e, "field %s removed (was %s %s)", label, p.data, of->type);
        } else {
            const afield *nf = &n->fields[j];
            strbuf q = {0};
            field_pos(&q, nf);
            if (strcmp(p.data, q.data) != 0)
                note(d, e, "field %s moved %s -> %s", label, p.data, q.data);
            if (strcmp(of->type, nf->type) != 0)
                note(d, e, "field %s type %s -> %s", label, of->type, nf->type);
            sb_free(&q);
        }
        sb_free(&p);
    }
    for (size_t k = 0; k < n->nfields; k++) {
        const char *label = field_label(d->a, n, k);
        if (field_index(d->a, o, label) < 0) {
            strbuf q = {0};
            field_pos(&q, &n->fields[k]);
            note(d, e, "field %s added %s %s", label, q.data, n->fields[k].type);
            sb_free(&q);
        }
    }
    if (!layout)
        note(d, e, "fields renamed only: the layout is unchanged");
}

static dentry *find_entry(dlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

/* A function removed under one name whose exact signature (symbol, types,
 * cuGetProcAddress name and version, layouts) the new side binds under
 * another: a release renamed it (12.x's cuGraphAddDependencies_v2 is
 * 13.0's cuGraphAddDependencies). Both entries say so; the removal stays
 * breaking, since code calling the old name no longer finds it. */
static void note_renames(adiff *d, const aset *n)
{
    for (size_t i = 0; i < d->functions.n; i++) {
        dentry *gone = &d->functions.items[i];
        if (gone->change != CH_REMOVED)
            continue;
        for (size_t k = 0; k < n->nf; k++) {
            if (strcmp(n->f[k].signature, gone->old) != 0)
                continue;
            note(d, gone, "renamed: the same signature is bound as %s now", n->f[k].name);
            dentry *heir = find_entry(&d->functions, n->f[k].name);
            if (heir)
                note(d, heir, "renamed: the signature removed %s had", gone->name);
            break;
        }
    }
}

abi_diff *abi_diff_sets(const aset *o, const aset *n)
{
    cb_arena *a = arena_create();
    if (!a)
        arena_oom();
    adiff *d = arena_alloc(a, sizeof *d);
    d->a = a;
    for (size_t i = 0; i < o->nf; i++)
        if (!find_func(n, o->f[i].name))
            dpush(d, &d->functions, CH_REMOVED, o->f[i].name, 1)->old = o->f[i].signature;
    for (size_t i = 0; i < n->nf; i++) {
        const afunc *nf = &n->f[i], *of = find_func(o, nf->name);
        if (!of) {
            dpush(d, &d->functions, CH_ADDED, nf->name, 0)->new = nf->signature;
            continue;
        }
        if (strcmp(of->signature, nf->signature) == 0)
            continue;
        dentry *e = dpush(d, &d->functions, CH_CHANGED, nf->name, 1);
        e->old = of->signature;
        e->new = nf->signature;
        size_t po = proto_len(of->signature), pn = proto_len(nf->signature);
        if (po != pn || memcmp(of->signature, nf->signature, po) != 0)
            note(d, e, "prototype or ABI variant changed");
        for (size_t k = 0; k < nf->nrecords; k++) {
            const arecord *rn = find_rec(n, nf->records[k]), *ro = find_rec(o, nf->records[k]);
            int was = 0;
            for (size_t j = 0; j < of->nrecords; j++)
                was |= strcmp(of->records[j], nf->records[k]) == 0;
            if (!was)
                note(d, e, "now reaches record %s", nf->records[k]);
            else if (rn && ro && strcmp(rn->layout, ro->layout) != 0)
                note(d, e, "layout of record %s changed", nf->records[k]);
        }
        for (size_t j = 0; j < of->nrecords; j++) {
            int still = 0;
            for (size_t k = 0; k < nf->nrecords; k++)
                still |= strcmp(of->records[j], nf->records[k]) == 0;
            if (!still)
                note(d, e, "no longer reaches record %s", of->records[j]);
        }
    }
    note_renames(d, n);
    for (size_t i = 0; i < o->nr; i++)
        if (!find_rec(n, o->r[i].name))
            dpush(d, &d->records, CH_REMOVED, o->r[i].name, 0)->old = record_summary(d->a, &o->r[i]);
    for (size_t i = 0; i < n->nr; i++) {
        const arecord *ro = find_rec(o, n->r[i].name);
        if (!ro)
            dpush(d, &d->records, CH_ADDED, n->r[i].name, 0)->new = record_summary(d->a, &n->r[i]);
        else
            diff_record(d, ro, &n->r[i]);
    }
    for (size_t i = 0; i < o->ne; i++)
        if (!find_enum(n, o->e[i].name)) {
            dentry *e = dpush(d, &d->enums, CH_REMOVED, o->e[i].name, 1);
            strbuf sb = {0};
            sb_printf(&sb, "%zu members", o->e[i].nitems);
            e->old = abi_take(d->a, &sb);
        }
    for (size_t i = 0; i < n->ne; i++) {
        const aenum *ne = &n->e[i], *oe = find_enum(o, ne->name);
        if (!oe) {
            dentry *e = dpush(d, &d->enums, CH_ADDED, ne->name, 0);
            strbuf sb = {0};
            sb_printf(&sb, "%zu members", ne->nitems);
            e->new = abi_take(d->a, &sb);
            continue;
        }
        dentry *e = NULL;
        for (size_t k = 0; k < oe->nitems; k++) {
            const aitem *it = &oe->items[k], *nt = NULL;
            for (size_t j = 0; j < ne->nitems && !nt; j++)
                if (strcmp(ne->items[j].name, it->name) == 0)
                    nt = &ne->items[j];
            if (nt && nt->value == it->value)
                continue;
            if (!e)
                e = dpush(d, &d->enums, CH_CHANGED, ne->name, 1);
            e->breaking = d->breaking = 1;
            if (nt)
                note(d, e, "%s changed %lld -> %lld", it->name, it->value, nt->value);
            else
                note(d, e, "%s removed (was %lld)", it->name, it->value);
        }
        for (size_t j = 0; j < ne->nitems; j++) {
            int had = 0;
            for (size_t k = 0; k < oe->nitems && !had; k++)
                had = strcmp(oe->items[k].name, ne->items[j].name) == 0;
            if (had)
                continue;
            if (!e)
                e = dpush(d, &d->enums, CH_CHANGED, ne->name, 0);
            note(d, e, "%s added = %lld", ne->items[j].name, ne->items[j].value);
        }
    }
    return d;
}

void abi_diff_free(abi_diff *d)
{
    if (d)
        arena_destroy(d->a);
}

int abi_diff_breaking(const abi_diff *d)
{
    return d->breaking;
}

size_t abi_diff_nfunctions(const abi_diff *d)
{
    return d->functions.n;
}

static size_t count(const dlist *l, int change)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->items[i].change == change;
    return n;
}

static size_t count_breaking(const dlist *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->items[i].breaking;
    return n;
}

static void text_section(FILE *o, const char *title, const dlist *l, int change)
{
    if (!count(l, change))
        return;
    fprintf(o, "\n== %s %s (%zu)\n", title, change_names[change], count(l, change));
    for (size_t i = 0; i < l->n; i++) {
        const dentry *e = &l->items[i];
        if (e->change != change)
            continue;
        fprintf(o, "%c %s%s\n", change == CH_ADDED ? '+' : change == CH_REMOVED ? '-' : '~', e->name,
                e->breaking ? "  [breaking]" : "");
        if (e->old)
            fprintf(o, "    old: %s\n", e->old);
        if (e->new)
            fprintf(o, "    new: %s\n", e->new);
        for (size_t k = 0; k < e->nnotes; k++)
            fprintf(o, "    - %s\n", e->notes[k]);
    }
}

static void summary_counts(FILE *o, const char *what, const dlist *l)
{
    fprintf(o, "%-10s %4zu added, %4zu removed, %4zu changed (%zu breaking)\n", what,
            count(l, CH_ADDED), count(l, CH_REMOVED), count(l, CH_CHANGED), count_breaking(l));
}

void abi_diff_write_text(FILE *o, const char *cmd, const aset *old, const aset *new,
                         const abi_diff *d, int with_types)
{
    fprintf(o, "cubind %s\n  old: %s (%s, CUDA_VERSION %lld)\n  new: %s (%s, CUDA_VERSION %lld)\n\n",
            cmd, old->source, *old->header ? old->header : "-", old->cuda_version, new->source,
            *new->header ? new->header : "-", new->cuda_version);
    summary_counts(o, "functions:", &d->functions);
    if (with_types) {
        summary_counts(o, "records:", &d->records);
        summary_counts(o, "enums:", &d->enums);
    }
    fprintf(o, "breaking: %s\n", d->breaking ? "yes" : "no");
    static const int order[] = {CH_REMOVED, CH_CHANGED, CH_ADDED};
    for (size_t i = 0; i < 3; i++)
        text_section(o, "functions", &d->functions, order[i]);
    for (size_t i = 0; with_types && i < 3; i++)
        text_section(o, "records", &d->records, order[i]);
    for (size_t i = 0; with_types && i < 3; i++)
        text_section(o, "enums", &d->enums, order[i]);
}

static void json_list(strbuf *o, const char *key, const dlist *l, int last)
{
    sb_printf(o, "  \"%s\": [", key);
    for (size_t i = 0; i < l->n; i++) {
        const dentry *e = &l->items[i];
        sb_printf(o, "%s\n    {\"change\": \"%s\", \"name\": ", i ? "," : "", change_names[e->change]);
        abi_json_str(o, e->name);
        sb_printf(o, ", \"breaking\": %s, \"old\": ", e->breaking ? "true" : "false");
        if (e->old)
            abi_json_str(o, e->old);
        else
            sb_puts(o, "null");
        sb_puts(o, ", \"new\": ");
        if (e->new)
            abi_json_str(o, e->new);
        else
            sb_puts(o, "null");
        sb_puts(o, ", \"notes\": [");
        for (size_t k = 0; k < e->nnotes; k++) {
            if (k)
                sb_puts(o, ", ");
            abi_json_str(o, e->notes[k]);
        }
        sb_puts(o, "]}");
    }
    sb_printf(o, "%s]%s\n", l->n ? "\n  " : "", last ? "" : ",");
}

static void json_side(strbuf *o, const char *key, const aset *s)
{
    sb_printf(o, "  \"%s\": {\"source\": ", key);
    abi_json_str(o, s->source);
    sb_puts(o, ", \"header\": ");
    abi_json_str(o, s->header);
    sb_printf(o, ", \"cuda_version\": %lld},\n", s->cuda_version);
}

static void json_counts(strbuf *o, const char *key, const dlist *l, int last)
{
    sb_printf(o, "    \"%s\": {\"added\": %zu, \"removed\": %zu, \"changed\": %zu, \"breaking\": %zu}%s\n",
              key, count(l, CH_ADDED), count(l, CH_REMOVED), count(l, CH_CHANGED),
              count_breaking(l), last ? "" : ",");
}

void abi_diff_write_json(FILE *f, const aset *old, const aset *new, const abi_diff *d,
                         int with_types)
{
    strbuf o = {0};
    sb_puts(&o, "{\n");
    json_side(&o, "old", old);
    json_side(&o, "new", new);
    sb_printf(&o, "  \"breaking\": %s,\n  \"summary\": {\n", d->breaking ? "true" : "false");
    json_counts(&o, "functions", &d->functions, !with_types);
    if (with_types) {
        json_counts(&o, "records", &d->records, 0);
        json_counts(&o, "enums", &d->enums, 1);
    }
    sb_puts(&o, "  },\n");
    json_list(&o, "functions", &d->functions, !with_types);
    if (with_types) {
        json_list(&o, "records", &d->records, 0);
        json_list(&o, "enums", &d->enums, 1);
    }
    sb_puts(&o, "}\n");
    if (o.oom)
        arena_oom();
    fwrite(o.data, 1, o.len, f);
    sb_free(&o);
}

