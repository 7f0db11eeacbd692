/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi.c — ABI sets (abi_set.h): canonical types, signatures (abi.h), the set
 * of a parsed header, and manifests written and read back. Comparing two
 * sets is abi_diff.c's job; the commands are abi_cmd.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include "abi/abi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/abi_set.h"
#include "model/arena.h"
#include "util/checksum.h"
#include "abi/json.h"
#include "util/strbuf.h"
#include "util/path.h"

#define MANIFEST_FORMAT "cubind-abi-manifest/1"

void aset_free(aset *s)
{
    if (s && s->a)
        arena_destroy(s->a);
}

const char *abi_take(cb_arena *a, strbuf *sb)
{
    if (sb->oom)
        arena_oom();
    const char *s = arena_strdup(a, sb->data ? sb->data : "");
    sb_free(sb);
    return s;
}

/* ---- canonical types ------------------------------------------------------- */

static int find_record(const cb_model *m, const cb_type *t)
{
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        if (!r->is_nested && t->record_tag && *t->record_tag && strcmp(r->tag, t->record_tag) == 0)
            return (int)i;
    }
    if (!t->name)
        return -1;
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        if (r->is_nested)
            continue;
        if (strcmp(r->name, t->name) == 0)
            return (int)i;
        for (size_t k = 0; k < r->naliases; k++)
            if (strcmp(r->aliases[k], t->name) == 0)
                return (int)i;
    }
    return -1;
}

/* clang's canonical spelling without a leading "const " or trailing
 * " const"/"const" (qualifiers are written by tname itself). */
static void put_canon(strbuf *sb, const char *canon)
{
    size_t n = strlen(canon);
    if (strncmp(canon, "const ", 6) == 0) {
        canon += 6;
        n -= 6;
    }
    if (n >= 5 && strcmp(canon + n - 5, "const") == 0) {
        n -= 5;
        while (n && canon[n - 1] == ' ')
            n--;
    }
    sb_append(sb, canon, n);
}

/* A type's canonical spelling: typedefs resolved, records by their model
 * name (which never holds a path or a line, unlike clang's spelling of
 * anonymous records), handles as `struct TAG *`. `nested` is the field's
 * in-place record, -1 if none. */
static void tname(strbuf *sb, const cb_model *m, const cb_type *t, int nested)
{
    switch (t->kind) {
    case TY_POINTER:
        tname(sb, m, t->pointee, -1);
        if (!(sb->len && sb->data[sb->len - 1] == '*'))
            sb_putc(sb, ' ');
        sb_puts(sb, t->is_const ? "*const" : "*");
        return;
    case TY_ARRAY:
        tname(sb, m, t->pointee, nested);
        sb_printf(sb, "[%lld]", t->array_len);
        return;
    case TY_RECORD: {
        int i = nested >= 0 ? nested : find_record(m, t);
        if (t->is_const)
            sb_puts(sb, "const ");
        if (i >= 0)
            sb_printf(sb, "%s %s", m->records[i].is_union ? "union" : "struct", m->records[i].name);
        else
            put_canon(sb, t->canon);
        return;
    }
    case TY_HANDLE:
        sb_printf(sb, "struct %s *%s", t->record_tag ? t->record_tag : "?", t->is_const ? "const" : "");
        return;
    case TY_ENUM:
        if (t->is_const)
            sb_puts(sb, "const ");
        if (strchr(t->canon, '('))
            sb_printf(sb, "enum %s<%lld>", t->name ? t->name : "?", t->size);
        else
            put_canon(sb, t->canon);
        return;
    default:
        if (t->is_const)
            sb_puts(sb, "const ");
        put_canon(sb, t->canon);
        return;
    }
}

/* Marks every record reachable from t. */
static void reach(const cb_model *m, const cb_type *t, int nested, char *marks)
{
    if (t->kind == TY_POINTER) {
        reach(m, t->pointee, -1, marks);
        return;
    }
    if (t->kind == TY_ARRAY) {
        reach(m, t->pointee, nested, marks);
        return;
    }
    if (t->kind != TY_RECORD)
        return;
    int i = nested >= 0 ? nested : find_record(m, t);
    if (i < 0 || marks[i])
        return;
    marks[i] = 1;
    const cb_record *r = &m->records[i];
    for (size_t k = 0; k < r->nfields; k++)
        reach(m, r->fields[k].type, r->fields[k].nested, marks);
}

static const char *layout_of(cb_arena *a, const arecord *r)
{
    strbuf sb = {0};
    sb_printf(&sb, "%s:%s size=%lld align=%lld {", r->name, r->is_union ? "union" : "struct",
              r->size, r->align);
    for (size_t i = 0; i < r->nfields; i++) {
        const afield *f = &r->fields[i];
        if (f->bits >= 0)
            sb_printf(&sb, "@%lld.%lld/%lld:%s;", f->offset, f->bit_offset, f->bits, f->type);
        else
            sb_printf(&sb, "@%lld:%s;", f->offset, f->type);
    }
    sb_putc(&sb, '}');
    return abi_take(a, &sb);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* ---- a set from a model ------------------------------------------------------ */

static int read_file(const char *path, strbuf *sb)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_append(sb, buf, n);
    int bad = ferror(f);
    fclose(f);
    return bad || sb->oom ? -1 : 0;
}

static void build_records(aset *s, const cb_model *m)
{
    s->r = arena_alloc(s->a, (m->nrecords + 1) * sizeof *s->r);
    s->nr = m->nrecords;
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *mr = &m->records[i];
        arecord *r = &s->r[i];
        r->name = mr->name;
        r->is_union = mr->is_union;
        r->size = mr->size;
        r->align = mr->align;
        r->fields = arena_alloc(s->a, (mr->nfields + 1) * sizeof *r->fields);
        r->nfields = mr->nfields;
        for (size_t k = 0; k < mr->nfields; k++) {
            const cb_field *mf = &mr->fields[k];
            strbuf t = {0};
            tname(&t, m, mf->type, mf->nested);
            r->fields[k] = (afield){mf->name, abi_take(s->a, &t), mf->offset, mf->bit_width,
                                    mf->bit_width >= 0 ? mf->bit_offset : 0};
        }
        r->layout = layout_of(s->a, r);
    }
}

/* Fills s->f[k] (signature and reachable records) for model function k. */
static void build_function(aset *s, const cb_model *m, size_t k, char *marks, const char **layouts)
{
    const cb_function *mf = &m->functions[k];
    afunc *f = &s->f[k];
    f->name = mf->name;
    f->abi = mf->abi;
    f->proc = mf->proc_name;
    f->version = mf->proc_version;
    memset(marks, 0, m->nrecords + 1);
    strbuf sb = {0};
    /* the result type by its name (CUresult, nvrtcResult), else spelled out */
    if (mf->ret->name) {
        sb_puts(&sb, mf->ret->name);
    } else {
        cb_type r = *mf->ret;
        r.is_const = 0;
        tname(&sb, m, &r, -1);
    }
    sb_printf(&sb, " %s(", mf->abi);
    for (size_t i = 0; i < mf->nparams; i++) {
        cb_type t = *mf->params[i].type;
        t.is_const = 0; /* top-level qualifiers are not part of a function's type */
        if (i)
            sb_puts(&sb, ", ");
        tname(&sb, m, &t, -1);
        reach(m, &t, -1, marks);
    }
    if (!mf->nparams)
        sb_puts(&sb, "void");
    sb_printf(&sb, ") @%s/%d", mf->proc_name, mf->proc_version);
    size_t n = 0;
    for (size_t i = 0; i < m->nrecords; i++)
        if (marks[i])
            layouts[n++] = s->r[i].layout;
    if (n) {
        qsort(layouts, n, sizeof *layouts, cmp_str);
        strbuf all = {0};
        for (size_t i = 0; i < n; i++)
            sb_printf(&all, "%s\n", layouts[i]);
        if (all.oom)
            arena_oom();
        char hex[CHECKSUM_HEX + 1];
        checksum_hex(all.data, all.len, hex);
        sb_free(&all);
        sb_printf(&sb, " layout=%s", hex);
        f->records = arena_alloc(s->a, n * sizeof *f->records);
        f->nrecords = n;
        for (size_t i = 0; i < n; i++) {
            const char *colon = strchr(layouts[i], ':');
            f->records[i] = arena_strndup(s->a, layouts[i], (size_t)(colon - layouts[i]));
        }
    }
    f->signature = abi_take(s->a, &sb);
}

void aset_from_model(aset *s, const cb_model *m, const char *source)
{
    s->a = arena_create();
    if (!s->a)
        arena_oom();
    s->source = arena_strdup(s->a, source);
    s->header = arena_strdup(s->a, path_base(m->header));
    s->cuda_version = m->cuda_version;
    strbuf in = {0};
    if (read_file(m->header, &in) == 0 &&
        (!*m->typedefs_header || read_file(m->typedefs_header, &in) == 0)) {
        char hex[CHECKSUM_HEX + 1];
        checksum_hex(in.data ? in.data : "", in.len, hex);
        s->inputs_hash = arena_strdup(s->a, hex);
    } else {
        s->inputs_hash = "";
    }
    sb_free(&in);
    build_records(s, m);
    s->f = arena_alloc(s->a, (m->nfunctions + 1) * sizeof *s->f);
    s->nf = m->nfunctions;
    char *marks = malloc(m->nrecords + 1);
    const char **layouts = malloc((m->nrecords + 1) * sizeof *layouts);
    if (!marks || !layouts)
        arena_oom();
    for (size_t k = 0; k < m->nfunctions; k++)
        build_function(s, m, k, marks, layouts);
    free(marks);
    free(layouts);
    s->e = arena_alloc(s->a, (m->nenums + 1) * sizeof *s->e);
    s->ne = m->nenums;
    for (size_t i = 0; i < m->nenums; i++) {
        const cb_enum *me = &m->enums[i];
        s->e[i].name = me->name;
        s->e[i].nitems = me->nitems;
        s->e[i].items = arena_alloc(s->a, (me->nitems + 1) * sizeof *s->e[i].items);
        for (size_t k = 0; k < me->nitems; k++)
            s->e[i].items[k] = (aitem){me->items[k].name, me->items[k].value};
    }
}

char *abi_signature(const cb_model *m, const cb_function *f)
{
    aset s = {0};
    aset_from_model(&s, m, m->header);
    char *sig = strdup(s.f[f - m->functions].signature);
    aset_free(&s);
    if (!sig)
        arena_oom();
    return sig;
}

char **abi_signatures(const cb_model *m)
{
    aset s = {0};
    aset_from_model(&s, m, m->header);
    char **sigs = calloc(m->nfunctions + 1, sizeof *sigs);
    if (!sigs)
        arena_oom();
    for (size_t k = 0; k < m->nfunctions; k++)
        if (!(sigs[k] = strdup(s.f[k].signature)))
            arena_oom();
    aset_free(&s);
    return sigs;
}

void abi_signatures_free(char **sigs, size_t n)
{
    if (!sigs)
        return;
    for (size_t k = 0; k < n; k++)
        free(sigs[k]);
    free(sigs);
}

/* ---- manifests ------------------------------------------------------------- */

void abi_json_str(strbuf *o, const char *s)
{
    sb_putc(o, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': sb_puts(o, "\\\""); break;
        case '\\': sb_puts(o, "\\\\"); break;
        case '\n': sb_puts(o, "\\n"); break;
        case '\r': sb_puts(o, "\\r"); break;
        case '\t': sb_puts(o, "\\t"); break;
        default:
            if (*p < 0x20)
                sb_printf(o, "\\u%04x", *p);
            else
                sb_putc(o, *p);
        }
    }
    sb_putc(o, '"');
}

/* One function, record field or enum member per line, so a manifest's git
 * diff reads like an ABI diff. */
void aset_write_manifest(strbuf *o, const aset *s)
{
    sb_printf(o, "{\n  \"format\": \"%s\",\n  \"header\": ", MANIFEST_FORMAT);
    abi_json_str(o, s->header);
    sb_printf(o, ",\n  \"cuda_version\": %lld,\n  \"inputs_fnv1a64\": ", s->cuda_version);
    abi_json_str(o, s->inputs_hash);
    sb_puts(o, ",\n  \"functions\": [");
    for (size_t i = 0; i < s->nf; i++) {
        const afunc *f = &s->f[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        abi_json_str(o, f->name);
        sb_puts(o, ", \"abi\": ");
        abi_json_str(o, f->abi);
        sb_puts(o, ", \"proc\": ");
        abi_json_str(o, f->proc);
        sb_printf(o, ", \"version\": %lld, \"signature\": ", f->version);
        abi_json_str(o, f->signature);
        sb_puts(o, ", \"records\": [");
        for (size_t k = 0; k < f->nrecords; k++) {
            if (k)
                sb_puts(o, ", ");
            abi_json_str(o, f->records[k]);
        }
        sb_puts(o, "]}");
    }
    sb_puts(o, "\n  ],\n  \"records\": [");
    for (size_t i = 0; i < s->nr; i++) {
        const arecord *r = &s->r[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        abi_json_str(o, r->name);
        sb_printf(o, ", \"kind\": \"%s\", \"size\": %lld, \"align\": %lld, \"fields\": [",
                  r->is_union ? "union" : "struct", r->size, r->align);
        for (size_t k = 0; k < r->nfields; k++) {
            const afield *f = &r->fields[k];
            sb_puts(o, k ? ",\n      {\"name\": " : "\n      {\"name\": ");
            abi_json_str(o, f->name);
            sb_printf(o, ", \"offset\": %lld, ", f->offset);
            if (f->bits >= 0)
                sb_printf(o, "\"bit_offset\": %lld, \"bits\": %lld, ", f->bit_offset, f->bits);
            sb_puts(o, "\"type\": ");
            abi_json_str(o, f->type);
            sb_putc(o, '}');
        }
        sb_puts(o, r->nfields ? "]}" : "]}");
    }
    sb_puts(o, "\n  ],\n  \"enums\": [");
    for (size_t i = 0; i < s->ne; i++) {
        const aenum *e = &s->e[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        abi_json_str(o, e->name);
        sb_puts(o, ", \"items\": [");
        for (size_t k = 0; k < e->nitems; k++) {
            sb_puts(o, k ? ",\n      [" : "\n      [");
            abi_json_str(o, e->items[k].name);
            sb_printf(o, ", %lld]", e->items[k].value);
        }
        sb_puts(o, "]}");
    }
    sb_puts(o, "\n  ]\n}\n");
}

static const jv *want(const jv *obj, const char *key, jv_kind kind, const char *path, char *err,
                      size_t errlen)
{
    const jv *v = json_get(obj, key);
    if (!v || v->kind != kind) {
        snprintf(err, errlen, "%s:%d: not a cubind ABI manifest: \"%s\" %s", path,
                 v ? v->line : obj->line, key, v ? "is of the wrong type" : "is missing");
        return NULL;
    }
    return v;
}

static int load_manifest(aset *s, const char *path, const char *text, size_t len, char *err,
                         size_t errlen)
{
    char jerr[256];
    const jv *root = json_parse(s->a, text, len, jerr, sizeof jerr);
    if (!root) {
        const char *line = jerr + 5; /* "line N: ..." */
        snprintf(err, errlen, "%s:%.*s", path, (int)strcspn(line, ":"), line);
        snprintf(err + strlen(err), errlen - strlen(err), ": invalid JSON: %s",
                 strchr(jerr, ':') ? strchr(jerr, ':') + 2 : jerr);
        return -1;
    }
    const char *format = json_str(root, "format", "");
    if (strcmp(format, MANIFEST_FORMAT) != 0) {
        const jv *at = json_get(root, "format");
        snprintf(err, errlen, "%s:%d: not a cubind ABI manifest (format \"%s\", expected \"%s\")",
                 path, at ? at->line : root->line, format, MANIFEST_FORMAT);
        return -1;
    }
    s->header = json_str(root, "header", "");
    s->cuda_version = json_int(root, "cuda_version", 0);
    s->inputs_hash = json_str(root, "inputs_fnv1a64", "");
    const jv *fs = want(root, "functions", JV_ARR, path, err, errlen);
    const jv *rs = fs ? want(root, "records", JV_ARR, path, err, errlen) : NULL;
    const jv *es = rs ? want(root, "enums", JV_ARR, path, err, errlen) : NULL;
    if (!es)
        return -1;
    s->f = arena_alloc(s->a, (fs->n + 1) * sizeof *s->f);
    s->nf = fs->n;
    for (size_t i = 0; i < fs->n; i++) {
        const jv *o = fs->items[i];
        afunc *f = &s->f[i];
        f->name = json_str(o, "name", NULL);
        f->signature = json_str(o, "signature", NULL);
        if (!f->name || !f->signature) {
            snprintf(err, errlen, "%s:%d: function #%zu has no name or signature (strings)", path,
                     o->line, i);
            return -1;
        }
        f->abi = json_str(o, "abi", f->name);
        f->proc = json_str(o, "proc", f->name);
        f->version = json_int(o, "version", 0);
        const jv *recs = json_get(o, "records");
        if (recs && recs->kind == JV_ARR) {
            f->records = arena_alloc(s->a, (recs->n + 1) * sizeof *f->records);
            for (size_t k = 0; k < recs->n; k++)
                if (recs->items[k]->kind == JV_STR)
                    f->records[f->nrecords++] = recs->items[k]->str;
        }
    }
    s->r = arena_alloc(s->a, (rs->n + 1) * sizeof *s->r);
    s->nr = rs->n;
    for (size_t i = 0; i < rs->n; i++) {
        const jv *o = rs->items[i];
        arecord *r = &s->r[i];
        r->name = json_str(o, "name", "?");
        r->is_union = strcmp(json_str(o, "kind", "struct"), "union") == 0;
        r->size = json_int(o, "size", -1);
        r->align = json_int(o, "align", -1);
        const jv *fl = json_get(o, "fields");
        size_t nf = fl && fl->kind == JV_ARR ? fl->n : 0;
        r->fields = arena_alloc(s->a, (nf + 1) * sizeof *r->fields);
        r->nfields = nf;
        for (size_t k = 0; k < nf; k++) {
            const jv *fo = fl->items[k];
            r->fields[k] = (afield){json_str(fo, "name", ""), json_str(fo, "type", "?"),
                                    json_int(fo, "offset", -1), json_int(fo, "bits", -1),
                                    json_int(fo, "bit_offset", 0)};
        }
        r->layout = layout_of(s->a, r);
    }
    s->e = arena_alloc(s->a, (es->n + 1) * sizeof *s->e);
    s->ne = es->n;
    for (size_t i = 0; i < es->n; i++) {
        const jv *o = es->items[i];
        aenum *e = &s->e[i];
        e->name = json_str(o, "name", "?");
        const jv *items = json_get(o, "items");
        size_t n = items && items->kind == JV_ARR ? items->n : 0;
        e->items = arena_alloc(s->a, (n + 1) * sizeof *e->items);
        for (size_t k = 0; k < n; k++) {
            const jv *it = items->items[k];
            if (it->kind == JV_ARR && it->n == 2 && it->items[0]->kind == JV_STR &&
                it->items[1]->kind == JV_INT)
                e->items[e->nitems++] = (aitem){it->items[0]->str, it->items[1]->num};
        }
    }
    return 0;
}

/* A header (parsed) or a manifest (a .json file, or any file starting with
 * '{'). */
int aset_load(aset *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    strbuf text = {0};
    if (read_file(path, &text) < 0) {
        snprintf(err, errlen, "%s:0: cannot read: %s", path, strerror(errno));
        sb_free(&text);
        return -1;
    }
    const char *p = text.data ? text.data : "";
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    size_t n = strlen(path);
    if (*p == '{' || (n > 5 && strcmp(path + n - 5, ".json") == 0)) {
        s->a = arena_create();
        if (!s->a)
            arena_oom();
        s->source = arena_strdup(s->a, path);
        int rc = load_manifest(s, path, text.data ? text.data : "", text.len, err, errlen);
        sb_free(&text);
        return rc;
    }
    sb_free(&text);
    cb_model *m = model_parse_any(path, err, errlen, NULL);
    if (!m)
        return -1;
    aset_from_model(s, m, path);
    /* The set's strings point into the model's arena: keep copies. */
    for (size_t i = 0; i < s->nf; i++) {
        afunc *f = &s->f[i];
        f->name = arena_strdup(s->a, f->name);
        f->abi = arena_strdup(s->a, f->abi);
        f->proc = arena_strdup(s->a, f->proc);
    }
    for (size_t i = 0; i < s->nr; i++) {
        s->r[i].name = arena_strdup(s->a, s->r[i].name);
        for (size_t k = 0; k < s->r[i].nfields; k++)
            s->r[i].fields[k].name = arena_strdup(s->a, s->r[i].fields[k].name);
    }
    for (size_t i = 0; i < s->ne; i++) {
        s->e[i].name = arena_strdup(s->a, s->e[i].name);
        for (size_t k = 0; k < s->e[i].nitems; k++)
            s->e[i].items[k].name = arena_strdup(s->a, s->e[i].items[k].name);
    }
    model_free(m);
    return 0;
}

