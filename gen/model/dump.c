/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump.c — the model as JSON (`cubind dump`), for people and for tests.
 *
 * The layout mirrors model.h one to one; keys are the field names there.
 */
#include "model/dump.h"

#include <stdio.h>

static void jstr(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\n': fputs("\\n", o); break;
        case '\r': fputs("\\r", o); break;
        case '\t': fputs("\\t", o); break;
        default:
            if (*p < 0x20)
                fprintf(o, "\\u%04x", *p);
            else
                fputc(*p, o);
        }
    }
    fputc('"', o);
}

void dump_json_string(FILE *o, const char *s)
{
    jstr(o, s);
}

static const char *kind_name(cb_tykind k)
{
    static const char *const names[] = {"void", "int", "float", "enum", "handle",
                                        "record", "pointer", "array", "funcptr", "other"};
    return names[k];
}

static void jtype(FILE *o, const cb_type *t)
{
    fprintf(o, "{\"kind\": \"%s\", \"spelling\": ", kind_name(t->kind));
    jstr(o, t->spelling);
    fputs(", \"canonical\": ", o);
    jstr(o, t->canon);
    if (t->name) {
        fputs(", \"name\": ", o);
        jstr(o, t->name);
    }
    if (t->record_tag && *t->record_tag) {
        fputs(", \"tag\": ", o);
        jstr(o, t->record_tag);
    }
    if (t->is_const)
        fputs(", \"const\": true", o);
    if (t->kind == TY_INT || t->kind == TY_ENUM)
        fprintf(o, ", \"signed\": %s", t->is_signed ? "true" : "false");
    fprintf(o, ", \"size\": %lld, \"align\": %lld", t->size, t->align);
    if (t->kind == TY_ARRAY)
        fprintf(o, ", \"length\": %lld", t->array_len);
    if (t->pointee) {
        fputs(", \"pointee\": ", o);
        jtype(o, t->pointee);
    }
    fputc('}', o);
}

static void jparams(FILE *o, const cb_param *p, size_t n)
{
    fputc('[', o);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", o);
        jstr(o, p[i].name);
        fputs(", \"type\": ", o);
        jtype(o, p[i].type);
        fputc('}', o);
    }
    fputc(']', o);
}

static void dump_functions(FILE *o, const cb_model *m)
{
    fputs("  \"functions\": [\n", o);
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        fputs("    {\"name\": ", o);
        jstr(o, f->name);
        fputs(", \"abi\": ", o);
        jstr(o, f->abi);
        fputs(", \"proc_name\": ", o);
        jstr(o, f->proc_name);
        fprintf(o, ", \"proc_version\": %d, \"per_thread_variant\": %s, \"deprecated\": %s",
                f->proc_version, f->has_ptds ? "true" : "false", f->deprecated ? "true" : "false");
        if (f->interop)
            fputs(", \"interop\": true", o);
        fputs(", \"line\": ", o);
        fprintf(o, "%u, \"returns\": ", f->line);
        jtype(o, f->ret);
        fputs(", \"params\": ", o);
        jparams(o, f->params, f->nparams);
        fputs(", \"doc\": ", o);
        jstr(o, f->doc);
        fputs(i + 1 < m->nfunctions ? "},\n" : "}\n", o);
    }
    fputs("  ],\n", o);
}

static void dump_enums(FILE *o, const cb_model *m)
{
    fputs("  \"enums\": [\n", o);
    for (size_t i = 0; i < m->nenums; i++) {
        const cb_enum *e = &m->enums[i];
        fputs("    {\"name\": ", o);
        jstr(o, e->name);
        fputs(", \"tag\": ", o);
        jstr(o, e->tag);
        fputs(", \"aliases\": [", o);
        for (size_t a = 0; a < e->naliases; a++) {
            if (a)
                fputs(", ", o);
            jstr(o, e->aliases[a]);
        }
        fprintf(o, "], \"size\": %lld, \"signed\": %s, \"values\": [", e->size,
                e->is_signed ? "true" : "false");
        for (size_t k = 0; k < e->nitems; k++) {
            fputs(k ? ", {\"name\": " : "{\"name\": ", o);
            jstr(o, e->items[k].name);
            fprintf(o, ", \"value\": %lld}", e->items[k].value);
        }
        fputs(i + 1 < m->nenums ? "]},\n" : "]}\n", o);
    }
    fputs("  ],\n", o);
}

static void dump_records(FILE *o, const cb_model *m)
{
    fputs("  \"records\": [\n", o);
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        fputs("    {\"name\": ", o);
        jstr(o, r->name);
        fputs(", \"tag\": ", o);
        jstr(o, r->tag);
        fprintf(o, ", \"union\": %s, \"nested\": %s, \"size\": %lld, \"align\": %lld, \"aliases\": [",
                r->is_union ? "true" : "false", r->is_nested ? "true" : "false", r->size, r->align);
        for (size_t a = 0; a < r->naliases; a++) {
            if (a)
                fputs(", ", o);
            jstr(o, r->aliases[a]);
        }
        fputs("], \"fields\": [", o);
        for (size_t k = 0; k < r->nfields; k++) {
            const cb_field *f = &r->fields[k];
            fputs(k ? ", {\"name\": " : "{\"name\": ", o);
            jstr(o, f->name);
            fprintf(o, ", \"offset\": %lld", f->offset);
            if (f->bit_width >= 0)
                fprintf(o, ", \"bit_width\": %lld, \"bit_offset\": %lld", f->bit_width, f->bit_offset);
            if (f->nested >= 0) {
                fputs(", \"record\": ", o);
                jstr(o, m->records[f->nested].name);
            }
            fputs(", \"type\": ", o);
            jtype(o, f->type);
            fputc('}', o);
        }
        fputs(i + 1 < m->nrecords ? "]},\n" : "]}\n", o);
    }
    fputs("  ],\n", o);
}

static void dump_rest(FILE *o, const cb_model *m)
{
    fputs("  \"typedefs\": [\n", o);
    for (size_t i = 0; i < m->ntypedefs; i++) {
        fputs("    {\"name\": ", o);
        jstr(o, m->typedefs[i].name);
        fputs(", \"type\": ", o);
        jtype(o, m->typedefs[i].type);
        fputs(i + 1 < m->ntypedefs ? "},\n" : "}\n", o);
    }
    fputs("  ],\n  \"handles\": [\n", o);
    for (size_t i = 0; i < m->nhandles; i++) {
        fputs("    {\"name\": ", o);
        jstr(o, m->handles[i].name);
        fputs(", \"tag\": ", o);
        jstr(o, m->handles[i].tag);
        fputs(i + 1 < m->nhandles ? "},\n" : "}\n", o);
    }
    fputs("  ],\n  \"callbacks\": [\n", o);
    for (size_t i = 0; i < m->ncallbacks; i++) {
        const cb_callback *c = &m->callbacks[i];
        fputs("    {\"name\": ", o);
        jstr(o, c->name);
        fputs(", \"returns\": ", o);
        jtype(o, c->ret);
        fputs(", \"params\": ", o);
        jparams(o, c->params, c->nparams);
        fputs(i + 1 < m->ncallbacks ? "},\n" : "}\n", o);
    }
    fputs("  ],\n  \"macros\": [\n", o);
    for (size_t i = 0; i < m->nmacros; i++) {
        const cb_macro *mc = &m->macros[i];
        fputs("    {\"name\": ", o);
        jstr(o, mc->name);
        if (mc->is_unsigned)
            fprintf(o, ", \"value\": %llu, \"unsigned\": true", (unsigned long long)mc->value);
        else
            fprintf(o, ", \"value\": %lld", mc->value);
        if (*mc->cast) {
            fputs(", \"cast\": ", o);
            jstr(o, mc->cast);
        }
        if (*mc->enum_name) {
            fputs(", \"enum\": ", o);
            jstr(o, mc->enum_name);
        }
        fputs(i + 1 < m->nmacros ? "},\n" : "}\n", o);
    }
    fputs("  ]\n", o);
}

int dump_model(FILE *o, const cb_model *m)
{
    fputs("{\n  \"header\": ", o);
    jstr(o, m->header);
    fputs(",\n  \"typedefs_header\": ", o);
    jstr(o, m->typedefs_header);
    fputs(",\n  \"interop_dir\": ", o);
    if (m->interop_dir)
        jstr(o, m->interop_dir);
    else
        fputs("null", o);
    fputs(",\n  \"interop_includes\": [", o);
    for (size_t i = 0; i < m->ninterop_includes; i++) {
        fputs(i ? ", " : "", o);
        jstr(o, m->interop_includes[i]);
    }
    fprintf(o, "],\n  \"cuda_version\": %lld,\n", m->cuda_version);
    dump_functions(o, m);
    dump_enums(o, m);
    dump_records(o, m);
    dump_rest(o, m);
    fputs("}\n", o);
    return ferror(o) ? -1 : 0;
}
