/*
 * abi.c — ABI signatures, manifests, `abi-diff` and `abi-check` (abi.h).
 *
 * Everything works on an "ABI set": functions (signature strings and the
 * records they reach), records (size, alignment, fields with canonical
 * types) and enums (members and values). A set is built from a parsed
 * header or read back from a manifest (`cubind manifest`), so two headers,
 * two manifests or one of each compare the same way.
 *
 * Breaking, for abi-diff's exit status: a removed function, a changed
 * signature, a record whose layout changed (size, alignment, or any field's
 * offset, bit position or canonical type; field renames alone are not), an
 * enum member removed or with a changed value, a removed enum. Added
 * functions, records, enums and enum members, and removed records, are
 * reported but not breaking.
 */
#define _POSIX_C_SOURCE 200809L
#include "abi.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "checksum.h"
#include "json.h"
#include "strbuf.h"

extern char **environ;

#define MANIFEST_FORMAT "cubind-abi-manifest/1"

/* ---- ABI sets --------------------------------------------------------------- */

typedef struct {
    const char *name, *type;
    long long offset, bits, bit_offset; /* bits = -1 unless a bit-field */
} afield;

typedef struct {
    const char *name;
    int is_union;
    long long size, align;
    afield *fields;
    size_t nfields;
    const char *layout; /* canonical, field names left out */
} arecord;

typedef struct {
    const char *name;
    long long value;
} aitem;

typedef struct {
    const char *name;
    aitem *items;
    size_t nitems;
} aenum;

typedef struct {
    const char *name, *abi, *proc, *signature;
    long long version;
    const char **records;
    size_t nrecords;
} afunc;

typedef struct {
    cb_arena *a;
    const char *source;      /* the path given */
    const char *header;      /* base name of the header */
    long long cuda_version;
    const char *inputs_hash; /* FNV-1a 64 of cuda.h + cudaTypedefs.h; "" if unknown */
    afunc *f;
    size_t nf;
    arecord *r;
    size_t nr;
    aenum *e;
    size_t ne;
} aset;

static void aset_free(aset *s)
{
    if (s && s->a)
        arena_destroy(s->a);
}

static const char *sb_take(cb_arena *a, strbuf *sb)
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
    return sb_take(a, &sb);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* ---- a set from a model ------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

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
            r->fields[k] = (afield){mf->name, sb_take(s->a, &t), mf->offset, mf->bit_width,
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
    sb_printf(&sb, "CUresult %s(", mf->abi);
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
    f->signature = sb_take(s->a, &sb);
}

static void build_from_model(aset *s, const cb_model *m, const char *source)
{
    s->a = arena_create();
    if (!s->a)
        arena_oom();
    s->source = arena_strdup(s->a, source);
    s->header = arena_strdup(s->a, base_name(m->header));
    s->cuda_version = m->cuda_version;
    strbuf in = {0};
    if (read_file(m->header, &in) == 0 && read_file(m->typedefs_header, &in) == 0) {
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
    build_from_model(&s, m, m->header);
    char *sig = strdup(s.f[f - m->functions].signature);
    aset_free(&s);
    if (!sig)
        arena_oom();
    return sig;
}

char **abi_signatures(const cb_model *m)
{
    aset s = {0};
    build_from_model(&s, m, m->header);
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

static void jstr(strbuf *o, const char *s)
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
static void write_manifest(strbuf *o, const aset *s)
{
    sb_printf(o, "{\n  \"format\": \"%s\",\n  \"header\": ", MANIFEST_FORMAT);
    jstr(o, s->header);
    sb_printf(o, ",\n  \"cuda_version\": %lld,\n  \"inputs_fnv1a64\": ", s->cuda_version);
    jstr(o, s->inputs_hash);
    sb_puts(o, ",\n  \"functions\": [");
    for (size_t i = 0; i < s->nf; i++) {
        const afunc *f = &s->f[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        jstr(o, f->name);
        sb_puts(o, ", \"abi\": ");
        jstr(o, f->abi);
        sb_puts(o, ", \"proc\": ");
        jstr(o, f->proc);
        sb_printf(o, ", \"version\": %lld, \"signature\": ", f->version);
        jstr(o, f->signature);
        sb_puts(o, ", \"records\": [");
        for (size_t k = 0; k < f->nrecords; k++) {
            if (k)
                sb_puts(o, ", ");
            jstr(o, f->records[k]);
        }
        sb_puts(o, "]}");
    }
    sb_puts(o, "\n  ],\n  \"records\": [");
    for (size_t i = 0; i < s->nr; i++) {
        const arecord *r = &s->r[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        jstr(o, r->name);
        sb_printf(o, ", \"kind\": \"%s\", \"size\": %lld, \"align\": %lld, \"fields\": [",
                  r->is_union ? "union" : "struct", r->size, r->align);
        for (size_t k = 0; k < r->nfields; k++) {
            const afield *f = &r->fields[k];
            sb_puts(o, k ? ",\n      {\"name\": " : "\n      {\"name\": ");
            jstr(o, f->name);
            sb_printf(o, ", \"offset\": %lld, ", f->offset);
            if (f->bits >= 0)
                sb_printf(o, "\"bit_offset\": %lld, \"bits\": %lld, ", f->bit_offset, f->bits);
            sb_puts(o, "\"type\": ");
            jstr(o, f->type);
            sb_putc(o, '}');
        }
        sb_puts(o, r->nfields ? "]}" : "]}");
    }
    sb_puts(o, "\n  ],\n  \"enums\": [");
    for (size_t i = 0; i < s->ne; i++) {
        const aenum *e = &s->e[i];
        sb_puts(o, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        jstr(o, e->name);
        sb_puts(o, ", \"items\": [");
        for (size_t k = 0; k < e->nitems; k++) {
            sb_puts(o, k ? ",\n      [" : "\n      [");
            jstr(o, e->items[k].name);
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
        snprintf(err, errlen, "%s:0: not a cubind ABI manifest: \"%s\" missing or of the wrong type",
                 path, key);
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
        snprintf(err, errlen, "%s:1: not a cubind ABI manifest (format \"%s\", expected \"%s\")",
                 path, format, MANIFEST_FORMAT);
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
            snprintf(err, errlen, "%s:0: function #%zu has no name or signature", path, i);
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
static int load_input(aset *s, const char *path, char *err, size_t errlen)
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
    cb_model *m = model_parse(path, err, errlen);
    if (!m)
        return -1;
    build_from_model(s, m, path);
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

/* ---- diffs ----------------------------------------------------------------- */

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

typedef struct {
    cb_arena *a;
    dlist functions, records, enums;
    int breaking;
} adiff;

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
    *ARENA_PUSH(d->a, e->notes, e->nnotes, e->cap) = sb_take(d->a, &sb);
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
    return sb_take(a, &sb);
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
    return sb_take(a, &sb);
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

static void diff_sets(adiff *d, const aset *o, const aset *n)
{
    memset(d, 0, sizeof *d);
    d->a = arena_create();
    if (!d->a)
        arena_oom();
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
            e->old = sb_take(d->a, &sb);
        }
    for (size_t i = 0; i < n->ne; i++) {
        const aenum *ne = &n->e[i], *oe = find_enum(o, ne->name);
        if (!oe) {
            dentry *e = dpush(d, &d->enums, CH_ADDED, ne->name, 0);
            strbuf sb = {0};
            sb_printf(&sb, "%zu members", ne->nitems);
            e->new = sb_take(d->a, &sb);
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

static void write_text(FILE *o, const char *cmd, const aset *old, const aset *new, const adiff *d,
                       int with_types)
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
        jstr(o, e->name);
        sb_printf(o, ", \"breaking\": %s, \"old\": ", e->breaking ? "true" : "false");
        if (e->old)
            jstr(o, e->old);
        else
            sb_puts(o, "null");
        sb_puts(o, ", \"new\": ");
        if (e->new)
            jstr(o, e->new);
        else
            sb_puts(o, "null");
        sb_puts(o, ", \"notes\": [");
        for (size_t k = 0; k < e->nnotes; k++) {
            if (k)
                sb_puts(o, ", ");
            jstr(o, e->notes[k]);
        }
        sb_puts(o, "]}");
    }
    sb_printf(o, "%s]%s\n", l->n ? "\n  " : "", last ? "" : ",");
}

static void json_side(strbuf *o, const char *key, const aset *s)
{
    sb_printf(o, "  \"%s\": {\"source\": ", key);
    jstr(o, s->source);
    sb_puts(o, ", \"header\": ");
    jstr(o, s->header);
    sb_printf(o, ", \"cuda_version\": %lld},\n", s->cuda_version);
}

static void json_counts(strbuf *o, const char *key, const dlist *l, int last)
{
    sb_printf(o, "    \"%s\": {\"added\": %zu, \"removed\": %zu, \"changed\": %zu, \"breaking\": %zu}%s\n",
              key, count(l, CH_ADDED), count(l, CH_REMOVED), count(l, CH_CHANGED),
              count_breaking(l), last ? "" : ",");
}

static void write_json(FILE *f, const aset *old, const aset *new, const adiff *d, int with_types)
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

/* ---- commands ---------------------------------------------------------------- */

static const char usage_manifest[] =
    "usage: cubind manifest --header cuda.h [--out FILE]\n"
    "\n"
    "Writes the ABI manifest of cuda.h (and cudaTypedefs.h beside it) as JSON:\n"
    "every function with its signature string and the records it reaches,\n"
    "every record's layout, every enum's members. On stdout unless --out.\n";

static const char usage_diff[] =
    "usage: cubind abi-diff OLD NEW [--json]\n"
    "\n"
    "Compares two headers (cuda.h, with cudaTypedefs.h beside it) or saved ABI\n"
    "manifests (`cubind manifest`), in any combination: functions added,\n"
    "removed and changed (both signatures), record layout changes, enum member\n"
    "changes. Text, or JSON with --json. Exit 1 when something breaking\n"
    "changed (a function removed or its signature changed, a record's layout\n"
    "changed, an enum member removed or renumbered), 0 otherwise, 2 on a usage\n"
    "error.\n";

static const char usage_check[] =
    "usage: cubind abi-check MODULE --header cuda.h [--python PYTHON] [--json]\n"
    "\n"
    "Compares the C entry points a built cubind.driver exports (its capsule\n"
    "table, read through cubind.driver._abi_signatures() in PYTHON, default\n"
    "python3) with the signatures cuda.h gives. MODULE is the module's .so\n"
    "inside a cubind/ package directory, a directory holding cubind/, an\n"
    "importable module name (cubind.driver: an installed wheel), or a saved\n"
    "ABI manifest (.json). Exit 1 on any drift (a signature differs, a\n"
    "function is missing on either side), 0 when none, 2 on a usage error.\n";

static int want_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
    return 0;
}

int abi_cmd_manifest(int argc, char **argv)
{
    if (want_help(argc, argv, usage_manifest))
        return 0;
    const char *header = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        if ((strcmp(argv[i], "--header") == 0 || strcmp(argv[i], "--out") == 0) && i + 1 < argc) {
            *(argv[i][2] == 'h' ? &header : &out) = argv[i + 1];
            i++;
        } else {
            fprintf(stderr, "cubind manifest: %s: unknown option or missing value\n%s", argv[i],
                    usage_manifest);
            return 2;
        }
    }
    if (!header) {
        fprintf(stderr, "cubind manifest: --header is required\n%s", usage_manifest);
        return 2;
    }
    char err[2048];
    cb_model *m = model_parse(header, err, sizeof err);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    aset s = {0};
    build_from_model(&s, m, header);
    strbuf o = {0};
    write_manifest(&o, &s);
    aset_free(&s);
    model_free(m);
    if (o.oom)
        arena_oom();
    int rc = 0;
    if (out) {
        /* Written beside, renamed into place: a failure leaves the old one. */
        strbuf tmp = {0};
        sb_printf(&tmp, "%s.tmp.%ld", out, (long)getpid());
        FILE *f = tmp.oom ? NULL : fopen(tmp.data, "wb");
        int bad = !f || fwrite(o.data, 1, o.len, f) != o.len;
        if (f && fclose(f) != 0)
            bad = 1;
        if (bad || rename(tmp.data, out) < 0) {
            fprintf(stderr, "%s:0: cannot write: %s\n", out, strerror(errno));
            if (tmp.data)
                unlink(tmp.data);
            rc = 1;
        }
        sb_free(&tmp);
    } else if (fwrite(o.data, 1, o.len, stdout) != o.len || fflush(stdout) != 0) {
        fprintf(stderr, "cubind manifest: cannot write to stdout\n");
        rc = 1;
    }
    sb_free(&o);
    return rc;
}

int abi_cmd_diff(int argc, char **argv)
{
    if (want_help(argc, argv, usage_diff))
        return 0;
    const char *paths[2] = {NULL, NULL};
    int json = 0, np = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' || np == 2) {
            fprintf(stderr, "cubind abi-diff: %s: unexpected argument\n%s", argv[i], usage_diff);
            return 2;
        } else {
            paths[np++] = argv[i];
        }
    }
    if (np != 2) {
        fprintf(stderr, "cubind abi-diff: needs OLD and NEW\n%s", usage_diff);
        return 2;
    }
    char err[2048];
    aset old, new;
    if (load_input(&old, paths[0], err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (load_input(&new, paths[1], err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        aset_free(&old);
        return 2;
    }
    adiff d;
    diff_sets(&d, &old, &new);
    if (json)
        write_json(stdout, &old, &new, &d, 1);
    else
        write_text(stdout, "abi-diff", &old, &new, &d, 1);
    int rc = d.breaking ? 1 : 0;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "cubind abi-diff: cannot write to stdout\n");
        rc = 2;
    }
    arena_destroy(d.a);
    aset_free(&old);
    aset_free(&new);
    return rc;
}

/* Runs PYTHON -c CODE ROOT NAME and reads its stdout. */
static int run_python(const char *python, const char *root, const char *name, strbuf *out)
{
    static const char code[] =
        "import importlib, json, sys\n"
        "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
        "m = importlib.import_module(sys.argv[2])\n"
        "print(json.dumps(m._abi_signatures(), sort_keys=True))\n";
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *args[] = {(char *)python, "-c", (char *)code, (char *)root, (char *)name, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        errno = rc;
        return -1;
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            sb_append(out, buf, (size_t)n);
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !out->oom ? 0 : 1;
}

/* The module's functions and signatures, as a set without records/enums. */
static int load_module(aset *s, const char *what, const char *python, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    size_t len = strlen(what);
    struct stat st;
    if ((len > 5 && strcmp(what + len - 5, ".json") == 0))
        return load_input(s, what, err, errlen);
    s->a = arena_create();
    if (!s->a)
        arena_oom();
    s->source = arena_strdup(s->a, what);
    s->header = "";
    char root[4096], name[256];
    if (stat(what, &st) == 0 && S_ISREG(st.st_mode)) {
        /* .../<root>/cubind/driver.cpython-XY.so */
        snprintf(root, sizeof root, "%s", what);
        char *slash = strrchr(root, '/');
        const char *file = slash ? slash + 1 : root;
        snprintf(name, sizeof name, "cubind.%.*s", (int)strcspn(file, "."), file);
        if (slash)
            *slash = '\0';
        else
            snprintf(root, sizeof root, ".");
        slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(root, sizeof root, ".");
    } else if (stat(what, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A directory holding cubind/, or the cubind/ package itself. */
        snprintf(root, sizeof root, "%s/cubind", what);
        if (stat(root, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(root, sizeof root, "%s", what);
        } else {
            snprintf(root, sizeof root, "%s/..", what);
        }
        snprintf(name, sizeof name, "cubind.driver");
    } else {
        root[0] = '\0';
        snprintf(name, sizeof name, "%s", what);
    }
    strbuf out = {0};
    int rc = run_python(python, root, name, &out);
    if (rc != 0) {
        snprintf(err, errlen, "%s:0: could not read the module's table with %s (%s)", what, python,
                 rc < 0 ? strerror(errno) : "the import or _abi_signatures() failed, see above");
        sb_free(&out);
        return -1;
    }
    char jerr[256];
    const jv *root_v = json_parse(s->a, out.data ? out.data : "", out.len, jerr, sizeof jerr);
    sb_free(&out);
    if (!root_v || root_v->kind != JV_OBJ) {
        snprintf(err, errlen, "%s:0: _abi_signatures() printed no JSON object (%s)", what,
                 root_v ? "not an object" : jerr);
        return -1;
    }
    s->f = arena_alloc(s->a, (root_v->n + 1) * sizeof *s->f);
    for (size_t i = 0; i < root_v->n; i++) {
        if (root_v->items[i]->kind != JV_STR)
            continue;
        afunc *f = &s->f[s->nf++];
        f->name = f->abi = f->proc = root_v->keys[i];
        f->signature = root_v->items[i]->str;
    }
    return 0;
}

int abi_cmd_check(int argc, char **argv)
{
    if (want_help(argc, argv, usage_check))
        return 0;
    const char *module = NULL, *header = NULL, *python = "python3";
    int json = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if ((strcmp(argv[i], "--header") == 0 || strcmp(argv[i], "--python") == 0) &&
                   i + 1 < argc) {
            *(argv[i][2] == 'h' ? &header : &python) = argv[i + 1];
            i++;
        } else if (argv[i][0] != '-' && !module) {
            module = argv[i];
        } else {
            fprintf(stderr, "cubind abi-check: %s: unexpected argument\n%s", argv[i], usage_check);
            return 2;
        }
    }
    if (!module || !header) {
        fprintf(stderr, "cubind abi-check: needs MODULE and --header\n%s", usage_check);
        return 2;
    }
    char err[2048];
    aset mod, hdr;
    if (load_input(&hdr, header, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (load_module(&mod, module, python, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        aset_free(&hdr);
        return 2;
    }
    /* Only the functions: the module side is its capsule table. */
    aset hf = hdr, mf = mod;
    hf.nr = hf.ne = mf.nr = mf.ne = 0;
    adiff d;
    diff_sets(&d, &mf, &hf);
    /* Anything at all differing is drift here, added functions included. */
    int drift = d.functions.n != 0;
    if (json)
        write_json(stdout, &mf, &hf, &d, 0);
    else {
        write_text(stdout, "abi-check (old: the module's table, new: the header)", &mf, &hf, &d, 0);
        printf("\n%s\n", drift ? "abi-check: DRIFT: the module does not match the header"
                               : "abi-check: the module matches the header");
    }
    arena_destroy(d.a);
    aset_free(&mod);
    aset_free(&hdr);
    return drift ? 1 : 0;
}
