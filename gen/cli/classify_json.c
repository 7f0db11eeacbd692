/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify_json.c — the classification as JSON (`cubind classify`,
 * classify_json.h).
 *
 * Deterministic: model order throughout, names instead of indexes,
 * header and rules file by base name, rules by their text (not their
 * line, so that moving a rule changes nothing here). One function, one
 * parameter, one field per line, so that a change of the classifier reads
 * as a diff of the golden file (tests/gen/data/classify_cuda13.json).
 */
#include "cli/classify_json.h"

#include <string.h>

#include "model/dump.h"
#include "render/render_names.h"
#include "util/path.h"

static const char *elem_name(cb_ekind e)
{
    switch (e) {
    case EK_NONE: return "none";
    case EK_INT: return "int";
    case EK_FLOAT: return "float";
    case EK_ENUM: return "enum";
    case EK_HANDLE: return "handle";
    case EK_VALUE_HANDLE: return "value_handle";
    case EK_STRUCT: return "struct";
    case EK_POINTER: return "pointer";
    case EK_BOOL: return "bool";
    case EK_STRING: return "string";
    case EK_CSTRING: return "cstring";
    }
    return "?";
}

/* ", "key": "value"" */
static void kv_str(FILE *o, const char *key, const char *value)
{
    fprintf(o, ", \"%s\": ", key);
    dump_json_string(o, value);
}

static void kv_bool(FILE *o, const char *key, int value)
{
    fprintf(o, ", \"%s\": %s", key, value ? "true" : "false");
}

/* ", "key": "the name of parameter k"" or nothing when k < 0. */
static void kv_param(FILE *o, const char *key, const cb_function *f, int k)
{
    if (k >= 0)
        kv_str(o, key, f->params[k].name);
}

/* A rule as one JSON string of its text: "count cuMemcpyBatchAsync dsts
 * count" (a rules line is at most 1024 bytes). */
static void jrule(FILE *o, const cb_rule *r)
{
    char buf[1024];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", rules_directive(r->directive)->name);
    for (size_t a = 0; a < r->nargs && n < sizeof buf; a++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " %s", r->args[a]);
    dump_json_string(o, buf);
}

/* ", "rules": [...]" of the rules in slots on[] (directive order), plus
 * extra (when not NULL and not among them); nothing when none. */
static void kv_rules(FILE *o, const cb_rule *const *on, const cb_rule *const *extra, size_t nextra)
{
    int first = 1;
    for (size_t d = 0; d < CB_NDIRECTIVES; d++) {
        if (!on[d])
            continue;
        fputs(first ? ", \"rules\": [" : ", ", o);
        jrule(o, on[d]);
        first = 0;
    }
    for (size_t i = 0; i < nextra; i++) {
        int seen = !extra[i];
        for (size_t d = 0; !seen && d < CB_NDIRECTIVES; d++)
            seen = on[d] == extra[i];
        if (seen)
            continue;
        fputs(first ? ", \"rules\": [" : ", ", o);
        jrule(o, extra[i]);
        first = 0;
    }
    if (!first)
        fputc(']', o);
}

static const char *direction(const cb_pclass *pc)
{
    int in = classify_is_input(pc), out = classify_is_output(pc);
    return in && out ? "inout" : in ? "in" : out ? "out" : "none";
}

static void write_param(FILE *o, const cb_model *m, const cb_fclass *fc, size_t k,
                        const cb_param_facts *pf)
{
    const cb_function *f = fc->fn;
    const cb_pclass *pc = &fc->params[k];
    fputs("{\"name\": ", o);
    dump_json_string(o, f->params[k].name);
    kv_str(o, "type", f->params[k].type->spelling);
    kv_str(o, "shape", shapes_name(pc->shape)); /* shapes.def's name */
    kv_str(o, "direction", direction(pc));
    kv_str(o, "elem", elem_name(pc->elem));
    if (strcmp(pc->pyname, f->params[k].name) != 0)
        kv_str(o, "pyname", pc->pyname);
    if (pc->optional)
        kv_bool(o, "optional", 1);
    if (pc->is_count)
        kv_bool(o, "is_count", 1);
    if (pc->enum_index >= 0)
        kv_str(o, "enum", m->enums[pc->enum_index].name);
    if (pc->record_index >= 0)
        kv_str(o, "record", m->records[pc->record_index].name);
    if (pc->handle)
        kv_str(o, "handle", pc->handle);
    if (pc->cast_from)
        kv_str(o, "cast_from", pc->cast_from);
    if (pc->kernel_index >= 0) /* classify.h: the fields a shape lacks are -1 */
        kv_param(o, "kernel", f, pc->kernel_index);
    else
        kv_param(o, "count", f, pc->count_index);
    if (pc->count_less)
        fprintf(o, ", \"count_less\": %d", pc->count_less);
    kv_param(o, "params", f, pc->params_index);
    if (pc->fixed_len) /* set only for the SH_*_FIXED shapes */
        fprintf(o, ", \"fixed_len\": %lld", pc->fixed_len);
    if (pc->host_writes >= 0)
        kv_str(o, "host_access", pc->host_writes ? "writes" : "reads");
    if (pc->output_field)
        kv_str(o, "output_field", pc->output_field);
    if (pc->noutput_items) { /* output-tuple: its ITEMs as the rule gives them */
        fputs(", \"output_tuple\": [", o);
        for (size_t i = 0; i < pc->noutput_items; i++) {
            const cb_output_item *it = &pc->output_items[i];
            fprintf(o, "%s\"%s%s%s\"", i ? ", " : "", it->field, it->count ? "/" : "",
                    it->count ? it->count : "");
        }
        fputc(']', o);
    }
    if (pc->fill_field) /* field-count-query: the array the library fills */
        kv_str(o, "fill_field", pc->fill_field);
    if (pc->ninput_fields) { /* input-fields: "FIELD=PYNAME" each */
        fputs(", \"input_fields\": [", o);
        for (size_t i = 0; i < pc->ninput_fields; i++) {
            fprintf(o, "%s\"%s=%s\"", i ? ", " : "", pc->input_fields[i].field,
                    pc->input_fields[i].pyname);
        }
        fputc(']', o);
    }
    if (pc->data_index >= 0) {
        kv_str(o, "callback_kind", render_callback_kind_word(pc->callback_kind));
        kv_param(o, "data", f, pc->data_index);
        kv_param(o, "stream", f, pc->stream_index);
        kv_param(o, "object", f, pc->object_index);
    }
    if (pc->trampoline)
        kv_str(o, "trampoline", pc->trampoline);
    if (pc->attr_index >= 0) {
        kv_param(o, "attr", f, pc->attr_index);
        fputs(", \"attr_cases\": [", o);
        for (size_t i = 0; i < pc->nattr_cases; i++) {
            fputs(i ? ", {\"enumerator\": " : "{\"enumerator\": ", o);
            dump_json_string(o, pc->attr_names[i]);
            kv_str(o, "elem", elem_name(pc->attr_cases[i].elem));
            if (pc->attr_cases[i].fixed_len)
                fprintf(o, ", \"fixed_len\": %lld", pc->attr_cases[i].fixed_len);
            fputc('}', o);
        }
        fputc(']', o);
    }
    if (pc->size_fn)
        kv_str(o, "size_fn", pc->size_fn->name);
    if (pc->bound_fn) {
        kv_str(o, "count_bound", pc->bound_fn->name);
        kv_param(o, "count_bound_arg", f, pc->bound_arg);
    }
    const cb_rule *extra[] = {pf->rename, pf->callback};
    kv_rules(o, pf->on, extra, sizeof extra / sizeof *extra);
    fputc('}', o);
}

static void write_function(FILE *o, const cb_model *m, const cb_classes *c, size_t i)
{
    const cb_fclass *fc = &c->functions[i];
    const cb_function *f = fc->fn;
    const cb_function_facts *ff = &c->facts->functions[i];
    fputs("    {\"name\": ", o);
    dump_json_string(o, f->name);
    if (f->abi && strcmp(f->abi, f->name) != 0)
        kv_str(o, "symbol", f->abi);
    kv_bool(o, "supported", fc->supported);
    if (!fc->supported)
        kv_str(o, "why", fc->why);
    if (f->interop)
        kv_str(o, "file", path_base(f->file));
    fprintf(o, ", \"inputs\": %zu, \"outputs\": %zu", fc->nin, fc->nout);
    if (fc->returns_string)
        kv_bool(o, "returns_string", 1);
    if (fc->returns_void)
        kv_bool(o, "returns_void", 1);
    if (fc->returns_value)
        kv_bool(o, "returns_value", 1);
    if (fc->returns_field)
        kv_bool(o, "returns_field", 1);
    if (fc->returns_record >= 0)
        kv_str(o, "returns_record", m->records[fc->returns_record].name);
    if (fc->keep_gil)
        kv_bool(o, "keep_gil", 1);
    if (fc->unloads_kernels)
        kv_bool(o, "unloads_kernels", 1);
    if (fc->code_before || fc->code_after)
        kv_str(o, "kernel_code", fc->code_before ? "before" : "after");
    if (fc->log_fn) {
        kv_param(o, "error_log", f, fc->log_param);
        kv_str(o, "error_log_fn", fc->log_fn->name);
    }
    if (fc->undo) {
        fputs(", \"undo\": {\"function\": ", o);
        dump_json_string(o, fc->undo->fn->name);
        fputs(", \"args\": [", o);
        for (size_t a = 0; a < fc->undo->nargs; a++) {
            if (a)
                fputs(", ", o);
            dump_json_string(o, fc->undo->param[a] >= 0 ? f->params[fc->undo->param[a]].name
                                                       : fc->undo->literal[a]);
        }
        fputs("]}", o);
    }
    if (fc->nreg) {
        fputs(", \"registry\": [", o);
        for (size_t r = 0; r < fc->nreg; r++) {
            const cb_regact *ra = &fc->reg[r];
            fputs(r ? ", {\"action\": " : "{\"action\": ", o);
            dump_json_string(o, render_registry_action_word(ra->action));
            kv_param(o, "param", f, ra->param);
            kv_param(o, "other", f, ra->other);
            if (ra->kind != CB_REG_KIND_NONE)
                kv_str(o, "kind", render_registry_kind(ra->kind));
            if (ra->other >= 0 && ra->other_kind != CB_REG_KIND_NONE)
                kv_str(o, "other_kind", render_registry_kind(ra->other_kind));
            fputc('}', o);
        }
        fputc(']', o);
    }
    /* the rules of the function itself: those naming no parameter */
    const cb_rule *own[CB_NDIRECTIVES] = {0};
    for (size_t d = 0; d < CB_NDIRECTIVES; d++) {
        cb_rule_target t = rules_directive((cb_directive)d)->target;
        if (t == CB_ON_FUNCTION || t == CB_ON_FUNCTIONS || d == CB_D_ERROR_LOG)
            own[d] = ff->on[d];
    }
    kv_rules(o, own, NULL, 0);
    fputs(", \"params\": [", o);
    for (size_t k = 0; k < f->nparams; k++) {
        fputs(k ? ",\n        " : "\n        ", o);
        write_param(o, m, fc, k, &ff->params[k]);
    }
    fputs("]}", o);
}

/* The name field index k of record class rc refers to, "" when none. */
static const char *field_name(const cb_record_class *rc, long long k)
{
    return k >= 0 && (size_t)k < rc->nfields ? rc->fields[k].field->name : "";
}

/* What a field class's ref names: its enum, handle class or record. */
static const char *ref_name(const cb_model *m, const cb_classes *c, const cb_field_class *fc)
{
    if (fc->ref < 0)
        return NULL;
    switch (fc->kind) {
    case CB_FIELD_ENUM:
        return m->enums[fc->ref].name;
    case CB_FIELD_HANDLE:
    case CB_FIELD_VALUE_HANDLE:
    case CB_FIELD_HANDLE_ARRAY:
    case CB_FIELD_HANDLE_OUT:
        return c->handles[fc->ref].name;
    case CB_FIELD_RECORD:
    case CB_FIELD_RECORD_ARRAY:
        return m->records[fc->ref].name;
    default:
        return NULL;
    }
}

static void write_record(FILE *o, const cb_model *m, const cb_classes *c, size_t i)
{
    const cb_record *r = &m->records[i];
    const cb_record_class *rc = &c->records[i];
    fputs("    {\"name\": ", o);
    dump_json_string(o, r->name);
    if (*r->tag && strcmp(r->tag, r->name) != 0)
        kv_str(o, "tag", r->tag);
    if (r->is_union)
        kv_bool(o, "union", 1);
    if (rc->checked)
        kv_bool(o, "checked", 1);
    if (rc->nextents)
        fprintf(o, ", \"host_extents\": %zu", rc->nextents);
    fputs(", \"fields\": [", o);
    for (size_t k = 0; k < rc->nfields; k++) {
        const cb_field_class *fc = &rc->fields[k];
        fputs(k ? ",\n        {\"name\": " : "\n        {\"name\": ", o);
        dump_json_string(o, fc->field->name);
        if (strcmp(fc->pyname, fc->field->name) != 0)
            kv_str(o, "pyname", fc->pyname);
        kv_str(o, "kind", render_field_kind_word(fc->kind));
        fprintf(o, ", \"offset\": %lld, \"size\": %lld", fc->offset, fc->size);
        if (fc->count)
            fprintf(o, ", \"count\": %lld", fc->count);
        if (fc->bit_width >= 0)
            fprintf(o, ", \"bit_width\": %lld, \"bit_offset\": %lld", fc->bit_width,
                    fc->bit_offset);
        const char *ref = ref_name(m, c, fc);
        if (ref)
            kv_str(o, "ref", ref);
        if (fc->kind == CB_FIELD_KERNEL_PARAMS && fc->ref >= 0)
            kv_str(o, "function_field", field_name(rc, fc->ref));
        if (fc->aux >= 0)
            kv_str(o, fc->kind == CB_FIELD_KERNEL_PARAMS ? "kernel_field"
                      : fc->kind == CB_FIELD_FUNCPTR     ? "data_field"
                                                         : "count_field",
                   field_name(rc, fc->aux));
        if (fc->fill) /* field-count-query: a function's output gets it filled */
            kv_bool(o, "filled", 1);
        fputc('}', o);
    }
    fputs("]}", o);
}

int classify_json(FILE *o, const cb_model *m, const cb_classes *c)
{
    const cb_facts *facts = c->facts;
    fputs("{\"header\": ", o);
    dump_json_string(o, path_base(m->header));
    kv_str(o, "rules", path_base(facts->rules->path));
    fprintf(o, ", \"cuda_version\": %lld", m->cuda_version);
    fprintf(o, ",\n  \"nfunctions\": %zu, \"nsupported\": %zu,\n  \"functions\": [", c->nfunctions,
            c->nsupported);
    for (size_t i = 0; i < c->nfunctions; i++) {
        fputs(i ? ",\n" : "\n", o);
        write_function(o, m, c, i);
    }
    fputs("],\n  \"handles\": [", o);
    for (size_t i = 0; i < c->nhandles; i++) {
        const handle_class *h = &c->handles[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", o);
        dump_json_string(o, h->name);
        kv_str(o, "kind", render_handle_kind_word(h->kind));
        if (h->names_kernel)
            kv_bool(o, "names_kernel", 1);
        if (h->stream_protocol)
            kv_bool(o, "stream_protocol", 1);
        if (h->interned)
            kv_bool(o, "interned", 1);
        fputc('}', o);
    }
    fputs("],\n  \"records\": [", o);
    for (size_t i = 0; i < m->nrecords; i++) {
        fputs(i ? ",\n" : "\n", o);
        write_record(o, m, c, i);
    }
    fputs("],\n  \"unmatched_rules\": [", o);
    size_t n = 0;
    for (size_t i = 0; i < facts->rules->nrules; i++) {
        if (facts->matched[i])
            continue;
        fputs(n++ ? ",\n    " : "\n    ", o);
        jrule(o, &facts->rules->rules[i]);
    }
    fputs("]}\n", o);
    return ferror(o) ? -1 : 0;
}
