/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules_bind.c — binds a rules file to a model (rules_bind.h): every
 * rule's names resolved once, the facts filled, the rules matching
 * nothing counted.
 */
#define _POSIX_C_SOURCE 200809L
#include "rules/rules_bind.h"
#include "rules/define_enum.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "util/strbuf.h"

/* ---- name resolution ----------------------------------------------------- */

const cb_function *rules_function(const cb_model *m, const char *name)
{
    const cb_function *f = model_function(m, name);
    for (size_t i = 0; !f && i < m->nfunctions; i++)
        if (m->functions[i].abi && strcmp(m->functions[i].abi, name) == 0)
            f = &m->functions[i];
    return f;
}

const cb_field *rules_record_field(const cb_model *m, const char *record, const char *field)
{
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_field *f = model_record_named(&m->records[i], record)
                                ? model_field_named(m, &m->records[i], field)
                                : NULL;
        if (f)
            return f;
    }
    return NULL;
}

static int names_typedef(const cb_model *m, const char *name)
{
    return model_typedef_index(m, name) >= 0;
}

static int names_handle(const cb_model *m, const char *name)
{
    return model_handle(m, name) != NULL || names_typedef(m, name);
}

/* The header's static function `name` when it describes a result as an
 * error-string-inline function must: `const char *name(RESULT)`. */
static const cb_function *error_string_inline(const cb_model *m, const cb_api *api, const char *name)
{
    for (size_t i = 0; name && i < m->ninlines; i++) {
        const cb_function *f = &m->inlines[i];
        if (strcmp(f->name, name) != 0)
            continue;
        const cb_type *ret = f->ret->kind == TY_POINTER ? f->ret->pointee : NULL;
        int returns_chars = ret && ret->kind == TY_INT && ret->size == 1;
        int takes_result = f->nparams == 1 && f->params[0].type->kind == TY_ENUM &&
                           model_type_enum(m, f->params[0].type) == model_enum_index(m, api->result);
        return returns_chars && takes_result ? f : NULL;
    }
    return NULL;
}

static int function_has_param(const cb_model *m, const char *function, const char *param)
{
    const cb_function *f = rules_function(m, function);
    return f && model_param_index(f, param) >= 0;
}

/* ---- the facts ------------------------------------------------------------ */

/* Sets b->error to "path:line: DIRECTIVE: ..." unless it is set. */
static void bind_error(cb_facts *b, const cb_rule *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void bind_error(cb_facts *b, const cb_rule *rule, const char *fmt, ...)
{
    if (b->error)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(b->rules->path) + strlen(msg) + 64;
    char *e = arena_alloc(b->arena, n);
    snprintf(e, n, "%s:%u: %s: %s", b->rules->path, rule->line,
             rules_directive(rule->directive)->name, msg);
    b->error = e;
}

/* Each registry kind's name (registry_kinds.def), indexed by the enum. */
static const char *const registry_kind_names[CB_NREG_KINDS] = {
    [CB_REG_KIND_NONE] = "",
#define REGISTRY_KIND(id, name) [CB_REG_KIND_##id] = name,
#include "rules/registry_kinds.def"
};

const char *rules_registry_kind_name(cb_registry_kind k)
{
    return registry_kind_names[k];
}

/* A callback rule's KIND: the rules parser (rules_callback_kind) has
 * refused every word that is not in callback_kinds.def. */
static cb_callback_kind callback_kind(const char *word)
{
    int k = rules_callback_kind(word);
    return k < 0 ? CB_CALLBACK_HOST : (cb_callback_kind)k;
}

/* A registry-kind rule's CONSTANT; CB_REG_KIND_NONE (b->error set, listing
 * the kinds) when it names none of registry_kinds.def. */
static cb_registry_kind registry_kind(cb_facts *b, const cb_rule *rule)
{
    for (int k = CB_REG_KIND_NONE + 1; k < CB_NREG_KINDS; k++)
        if (strcmp(registry_kind_names[k], rule->args[1]) == 0)
            return (cb_registry_kind)k;
    strbuf kinds = {0}; /* "A, B or C" */
    sb_put_alternatives(&kinds, registry_kind_names + CB_REG_KIND_NONE + 1,
                        CB_NREG_KINDS - CB_REG_KIND_NONE - 1, "");
    if (kinds.oom || !kinds.data)
        arena_oom();
    bind_error(b, rule, "'%s' is not a registry kind (%s)", rule->args[1], kinds.data);
    sb_free(&kinds);
    return CB_REG_KIND_NONE;
}

const cb_type_facts *rules_type_facts(const cb_facts *f, const cb_type *t)
{
    if (!t)
        return NULL;
    if (t->handle_index >= 0)
        return &f->handles[t->handle_index];
    if (t->typedef_index >= 0)
        return &f->typedefs[t->typedef_index];
    return NULL;
}

const cb_rule *rules_type_rule(const cb_facts *f, cb_directive d, const cb_type *t)
{
    const cb_type_facts *tf = rules_type_facts(f, t);
    return tf ? tf->on[d] : NULL;
}

static void bind_type_slot(cb_type_facts *tf, const cb_rule *rule, cb_registry_kind kind)
{
    if (tf->on[rule->directive])
        return;
    tf->on[rule->directive] = rule;
    if (rule->directive == CB_D_REGISTRY_KIND)
        tf->registry_kind = kind;
}

/* TYPEDEF and HANDLE rules: the first rule of each directive naming a
 * typedef or opaque handle of the model, in its facts; the integer
 * typedefs of value-handle then value-class rules in order (handles.h). */
static void bind_types(cb_facts *b)
{
    const cb_model *m = b->model;
    const cb_rules *r = b->rules;
    size_t ccap = 0;
    b->typedefs = arena_alloc(b->arena, (m->ntypedefs + 1) * sizeof *b->typedefs);
    b->handles = arena_alloc(b->arena, (m->nhandles + 1) * sizeof *b->handles);
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *rule = &r->rules[i];
        cb_rule_target t = rules_directive(rule->directive)->target;
        if (t != CB_ON_TYPEDEF && t != CB_ON_HANDLE)
            continue;
        cb_registry_kind kind =
            rule->directive == CB_D_REGISTRY_KIND ? registry_kind(b, rule) : CB_REG_KIND_NONE;
        for (size_t k = 0; k < m->ntypedefs; k++)
            if (strcmp(m->typedefs[k].name, rule->args[0]) == 0)
                bind_type_slot(&b->typedefs[k], rule, kind);
        for (size_t k = 0; k < m->nhandles; k++)
            if (strcmp(m->handles[k].name, rule->args[0]) == 0)
                bind_type_slot(&b->handles[k], rule, kind);
    }
    static const cb_directive value[] = {CB_D_VALUE_HANDLE, CB_D_VALUE_CLASS};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < r->nrules; i++) {
            if (r->rules[i].directive != value[d])
                continue;
            for (size_t k = 0; k < b->model->ntypedefs; k++) {
                const cb_typedef *td = &b->model->typedefs[k];
                if (strcmp(td->name, r->rules[i].args[0]) == 0 && td->type->kind == TY_INT) {
                    *ARENA_PUSH(b->arena, b->value_classes, b->nvalue_classes, ccap) = k;
                    break;
                }
            }
        }
}

/* The slots of the function (and parameter) a FUNCTION rule names: pass 0
 * binds rules naming public names, pass 1 those naming a declared symbol
 * (into the slots still empty). */
static void bind_slots(cb_facts *b, const cb_rule *rule, int pass)
{
    const cb_model *m = b->model;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        int named = pass == 0 ? strcmp(rule->args[0], f->name) == 0
                              : f->abi && strcmp(f->abi, f->name) != 0 &&
                                    strcmp(rule->args[0], f->abi) == 0;
        if (!named)
            continue;
        cb_function_facts *ff = &b->functions[i];
        if (!ff->on[rule->directive])
            ff->on[rule->directive] = rule;
        int k = rule->nargs >= 2 ? model_param_index(f, rule->args[1]) : -1;
        if (k >= 0 && !ff->params[k].on[rule->directive])
            ff->params[k].on[rule->directive] = rule;
    }
}

static int names_function(const char *name, const cb_function *f)
{
    return strcmp(name, f->name) == 0 || (f->abi && strcmp(name, f->abi) == 0);
}

static int is_int_or_int_pointer(const cb_type *t)
{
    if (t->kind == TY_POINTER)
        t = t->pointee;
    return t->kind == TY_INT;
}

/* The enum of an attribute rule's ATTR (rules_bind.h: attr_enum). */
static int attribute_enum(const cb_model *m, const cb_function *f, size_t k,
                          const cb_param_facts *pf)
{
    const cb_type *t = f->params[pf->attr].type;
    const cb_type *dt = f->params[k].type;
    if (pf->attr_array) {
        /* an array of sizes is optional: without one each value has a
         * fixed-size slot (and array-valued attributes are left out) */
        int count = pf->on[CB_D_COUNT] ? pf->count : -1;
        int unsized = count >= 0 && f->params[count].type->kind != TY_POINTER;
        if (unsized || dt->kind != TY_POINTER || dt->pointee->kind != TY_POINTER ||
            dt->pointee->pointee->kind != TY_VOID)
            return -1;
        t = t->pointee;
    }
    return model_type_enum(m, t);
}

/* The first rename-param rule for C name `name`, NULL. */
static const cb_rule *rename_rule(const cb_rules *r, const char *name)
{
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].directive == CB_D_RENAME_PARAM && strcmp(r->rules[i].args[0], name) == 0)
            return &r->rules[i];
    return NULL;
}

/* The first attribute-type rule for enumerator `name`, NULL. */
static const cb_rule *attribute_type_rule(const cb_rules *r, const char *name)
{
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].directive == CB_D_ATTRIBUTE_TYPE &&
            strcmp(r->rules[i].args[0], name) == 0)
            return &r->rules[i];
    return NULL;
}

static void mark(cb_facts *b, const cb_rule *rule)
{
    if (rule)
        b->matched[rule - b->rules->rules] = 1;
}

/* The other arguments of parameter k's rules, resolved. */
static void resolve_param(cb_facts *b, const cb_function *f, size_t k, cb_param_facts *pf)
{
    const cb_model *m = b->model;
    const cb_rule *r;
    pf->count = pf->kernel = pf->attr = pf->attr_enum = pf->size_of = pf->text_size = -1;
    pf->records_count = -1;
    if ((r = pf->on[CB_D_RENAME_PARAM_IN])) {
        pf->pyname = r->args[2];
        pf->rename = r;
    } else if ((r = rename_rule(b->rules, f->params[k].name))) {
        pf->pyname = r->args[1];
        pf->rename = r;
        mark(b, r); /* a rename-param matches when a parameter takes it */
    }
    if ((r = pf->on[CB_D_COUNT])) {
        const char *c = r->args[2], *minus = strchr(c, '-');
        size_t n = minus ? (size_t)(minus - c) : strlen(c);
        pf->count_less = minus ? atoi(minus + 1) : 0;
        for (size_t i = 0; i < f->nparams && pf->count < 0; i++)
            if (i != k && is_int_or_int_pointer(f->params[i].type) &&
                strlen(f->params[i].name) == n && strncmp(f->params[i].name, c, n) == 0)
                pf->count = (int)i;
    }
    if ((r = pf->on[CB_D_KERNEL_PARAMS]))
        pf->kernel = model_param_index(f, r->args[2]);
    if ((r = pf->on[CB_D_FIXED]))
        pf->fixed = strtoll(r->args[2], NULL, 10);
    if ((r = pf->on[CB_D_STRUCT_SIZE]))
        pf->size_of = model_param_index(f, r->args[2]);
    if ((r = pf->on[CB_D_TEXT]) && r->nargs > 2)
        pf->text_size = model_param_index(f, r->args[2]);
    if ((r = pf->on[CB_D_RECORDS]) || (r = pf->on[CB_D_COUNTED_RECORDS])) {
        pf->records_count = model_param_index(f, r->args[2]);
        pf->records_field = r->nargs > 3 ? r->args[3] : NULL;
    }
    if ((r = pf->on[CB_D_SYNC_CALLBACK]))
        pf->trampoline = r->args[2];
    if ((r = pf->on[CB_D_HANDLE_CAST]) && model_handle(m, r->args[2]))
        pf->cast = r->args[2];
    if ((r = pf->on[CB_D_BUFFER_SIZE]))
        pf->size_fn = rules_function(m, r->args[2]);
    r = pf->on[CB_D_ATTRIBUTE_OUTPUT];
    pf->attr_input = !r && pf->on[CB_D_ATTRIBUTE_INPUT];
    if (!r)
        r = pf->on[CB_D_ATTRIBUTE_INPUT];
    if (r && (pf->attr = model_param_index(f, r->args[2])) >= 0) {
        pf->attr_array = f->params[pf->attr].type->kind == TY_POINTER;
        pf->attr_enum = attribute_enum(m, f, k, pf);
    }
}

/* callback rules, in file order: the first naming a parameter as FN or
 * DATA decides what it is. */
static void bind_callbacks(cb_facts *b, size_t i)
{
    const cb_function *f = &b->model->functions[i];
    cb_function_facts *ff = &b->functions[i];
    for (size_t n = 0; n < b->rules->nrules; n++) {
        const cb_rule *r = &b->rules->rules[n];
        if (r->directive != CB_D_CALLBACK || !names_function(r->args[0], f))
            continue;
        for (size_t k = 0; k < f->nparams; k++) {
            cb_param_facts *pf = &ff->params[k];
            if (pf->callback_role != CB_CALLBACK_ROLE_NONE)
                continue;
            if (strcmp(r->args[1], f->params[k].name) == 0 ||
                strcmp(r->args[2], f->params[k].name) == 0)
                pf->callback = r;
            if (strcmp(r->args[1], f->params[k].name) == 0) {
                pf->callback_role = CB_CALLBACK_ROLE_FN;
                pf->callback_data = model_param_index(f, r->args[2]);
                pf->callback_kind = callback_kind(r->args[3]);
            } else if (strcmp(r->args[2], f->params[k].name) == 0) {
                pf->callback_role = CB_CALLBACK_ROLE_DATA;
            }
        }
    }
}

/* registry-* rules naming f by either name, in file order. */
static void bind_registry(cb_facts *b, size_t i)
{
    const cb_function *f = &b->model->functions[i];
    cb_function_facts *ff = &b->functions[i];
    size_t cap = 0;
    for (size_t n = 0; n < b->rules->nrules; n++) {
        const cb_rule *r = &b->rules->rules[n];
        cb_registry_action a;
        switch (r->directive) {
        case CB_D_REGISTRY_CREATE: a = CB_REGISTRY_CREATE; break;
        case CB_D_REGISTRY_OWNED: a = CB_REGISTRY_OWNED; break;
        case CB_D_REGISTRY_DESTROY: a = CB_REGISTRY_DESTROY; break;
        case CB_D_REGISTRY_KEEP: a = CB_REGISTRY_KEEP; break;
        case CB_D_REGISTRY_DEPEND: a = CB_REGISTRY_DEPEND; break;
        case CB_D_REGISTRY_RETAIN: a = CB_REGISTRY_RETAIN; break;
        default: continue;
        }
        if (!names_function(r->args[0], f))
            continue;
        cb_registry_fact *rf = ARENA_PUSH(b->arena, ff->registry, ff->nregistry, cap);
        rf->action = a;
        rf->param = model_param_index(f, r->args[1]);
        rf->names_other = r->nargs > 2 && strcmp(r->args[2], "-") != 0;
        rf->other = rf->names_other ? model_param_index(f, r->args[2]) : -1;
    }
}

static void bind_functions(cb_facts *b)
{
    const cb_model *m = b->model;
    const cb_rules *r = b->rules;
    b->functions = arena_alloc(b->arena, (m->nfunctions + 1) * sizeof *b->functions);
    for (size_t i = 0; i < m->nfunctions; i++) {
        b->functions[i].params =
            arena_alloc(b->arena, (m->functions[i].nparams + 1) * sizeof *b->functions[i].params);
        for (size_t k = 0; k < m->functions[i].nparams; k++)
            b->functions[i].params[k].callback_data = -1;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t n = 0; n < r->nrules; n++) {
            cb_rule_target t = rules_directive(r->rules[n].directive)->target;
            if (t == CB_ON_FUNCTION || t == CB_ON_FUNCTIONS || t == CB_ON_PARAM ||
                t == CB_ON_PARAM_OR_FIELD)
                bind_slots(b, &r->rules[n], pass);
        }
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        cb_function_facts *ff = &b->functions[i];
        bind_callbacks(b, i);
        bind_registry(b, i);
        for (size_t k = 0; k < f->nparams; k++)
            resolve_param(b, f, k, &ff->params[k]);
        const cb_rule *code = ff->on[CB_D_KERNEL_CODE];
        ff->code = !code                               ? CB_CODE_NONE
                   : strcmp(code->args[1], "before") == 0 ? CB_CODE_BEFORE
                                                          : CB_CODE_AFTER;
        const cb_rule *log = ff->on[CB_D_ERROR_LOG];
        ff->log_param = log ? model_param_index(f, log->args[1]) : -1;
        ff->log_size_fn = log ? rules_function(m, log->args[2]) : NULL;
        ff->log_fn = log ? rules_function(m, log->args[3]) : NULL;
    }
}

/* Whether the RECORD FIELD a rule names is a field of the record itself
 * that is a pointer. */
static int is_pointer_field(const cb_model *m, const cb_rule *rule)
{
    const cb_field *f = rules_record_field(m, rule->args[0], rule->args[1]);
    return f && f->type->kind == TY_POINTER;
}

/* RECORD FIELD rules. */
static void bind_records(cb_facts *b)
{
    const cb_model *m = b->model;
    const cb_rules *r = b->rules;
    b->records = arena_alloc(b->arena, (m->nrecords + 1) * sizeof *b->records);
    for (size_t i = 0; i < m->nrecords; i++) {
        cb_record_facts *rf = &b->records[i];
        rf->nfields = (size_t)model_field_count(m, &m->records[i]);
        rf->fields = arena_alloc(b->arena, (rf->nfields + 1) * sizeof *rf->fields);
    }
    for (size_t n = 0; n < r->nrules; n++) {
        const cb_rule *rule = &r->rules[n];
        cb_rule_target t = rules_directive(rule->directive)->target;
        if (t != CB_ON_FIELD)
            continue;
        for (size_t i = 0; i < m->nrecords; i++) {
            const cb_record *rec = &m->records[i];
            cb_record_facts *rf = &b->records[i];
            if (!model_record_named(rec, rule->args[0]))
                continue;
            long long k = model_field_index(m, rec, rule->args[1]);
            if (k < 0 || rf->fields[k].on[rule->directive])
                continue;
            cb_field_facts *ff = &rf->fields[k];
            ff->on[rule->directive] = rule;
            switch (rule->directive) {
            case CB_D_KERNEL_PARAMS_FIELD:
                ff->func = model_field_index(m, rec, rule->args[2]);
                ff->kern = model_field_index(m, rec, rule->args[3]);
                break;
            case CB_D_FIELD_COUNT:
                ff->count = model_field_index(m, rec, rule->args[2]);
                break;
            case CB_D_FIELD_COUNT_OUT:
                ff->count_out = model_field_index(m, rec, rule->args[2]);
                break;
            default:
                break;
            }
        }
    }
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *rec = &m->records[i];
        cb_record_facts *rf = &b->records[i];
        for (size_t k = 0; k < rec->nfields; k++) {
            long long x = *rec->fields[k].name ? model_field_index(m, rec, rec->fields[k].name) : -1;
            if (x >= 0)
                rf->fields[x].direct = 1;
        }
        const cb_rule *fill = NULL; /* the record's field-count-query rule */
        for (size_t k = 0; k < rf->nfields; k++) {
            cb_field_facts *ff = &rf->fields[k];
            const cb_rule *q = ff->on[CB_D_FIELD_COUNT_QUERY];
            if (q && fill)
                bind_error(b, q, "%s has one already (%s)", q->args[0], fill->args[1]);
            else if (q && !ff->on[CB_D_FIELD_COUNT])
                bind_error(b, q, "%s.%s has no field-count rule", q->args[0], q->args[1]);
            else if (q && !is_pointer_field(m, q))
                bind_error(b, q, "%s.%s is no pointer", q->args[0], q->args[1]);
            fill = fill ? fill : q;
            if (!ff->on[CB_D_KERNEL_PARAMS_FIELD])
                ff->func = ff->kern = -1;
            if (!ff->on[CB_D_FIELD_COUNT])
                ff->count = -1;
            if (!ff->on[CB_D_FIELD_COUNT_OUT])
                ff->count_out = -1;
        }
    }
}

/* ---- host-bytes rules ------------------------------------------------------ */

/* The KEY= of each term; SIZE has none (it is positional). */
static const char *const term_keys[HB_NTERMS] = {
    NULL, "rows", "depth", "pitch", "slice", "x", "y", "z",
};

/* A host-bytes rule split into its words (pointers into the rule). */
typedef struct {
    const char *buffer;
    int writes;
    const char *term[HB_NTERMS]; /* the parameter/field of each term; NULL: absent */
    long long bytes;             /* SIZE a constant (term[HB_SIZE] NULL), else 0 */
    char when_field[64];         /* when=FIELD:ENUMERATOR, else "" */
    const char *when_value;      /* NULL when no when= */
} hb_words;



/* A SIZE that is a constant byte count: a positive decimal integer. */
static long long constant_bytes(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (!n || s[n] || n > 15)
        return -1;
    return strtoll(s, NULL, 10);
}

/* Splits a host-bytes rule into *h; -1 (b->error set) for an ACCESS other
 * than reads / writes, a constant SIZE of 0, an unknown KEY, a term given
 * twice or a `when` without ENUMERATOR. */
static int hb_parse(cb_facts *b, const cb_rule *rule, hb_words *h)
{
    memset(h, 0, sizeof *h);
    h->buffer = rule->args[1];
    if (strcmp(rule->args[2], "reads") != 0 && strcmp(rule->args[2], "writes") != 0) {
        bind_error(b, rule, "ACCESS must be reads or writes, not '%s'", rule->args[2]);
        return -1;
    }
    h->writes = strcmp(rule->args[2], "writes") == 0;
    long long bytes = constant_bytes(rule->args[3]);
    if (bytes == 0) {
        bind_error(b, rule, "a constant SIZE must be at least 1 byte");
        return -1;
    }
    if (bytes > 0)
        h->bytes = bytes;
    else
        h->term[HB_SIZE] = rule->args[3];
    for (size_t a = 4; a < rule->nargs; a++) {
        const char *arg = rule->args[a];
        const char *eq = strchr(arg, '=');
        size_t klen = eq ? (size_t)(eq - arg) : 0;
        int t = -1;
        for (int k = 1; eq && k < HB_NTERMS; k++)
            if (strlen(term_keys[k]) == klen && strncmp(arg, term_keys[k], klen) == 0)
                t = k;
        int is_when = eq && klen == 4 && strncmp(arg, "when", 4) == 0;
        const char *colon = is_when ? strchr(eq + 1, ':') : NULL;
        size_t wlen = colon ? (size_t)(colon - eq - 1) : 0;
        if ((t < 0 && !is_when) || !eq[1] ||
            (is_when && (!wlen || wlen >= sizeof h->when_field || !colon[1]))) {
            bind_error(b, rule,
                     "'%s' is not rows=, depth=, pitch=, slice=, x=, y=, z= or "
                     "when=FIELD:ENUMERATOR",
                     arg);
            return -1;
        }
        if ((is_when && h->when_value) || (t >= 0 && h->term[t])) {
            bind_error(b, rule, "'%.*s' given twice", (int)klen, arg);
            return -1;
        }
        if (is_when) {
            memcpy(h->when_field, eq + 1, wlen);
            h->when_field[wlen] = '\0';
            h->when_value = colon + 1;
        } else {
            h->term[t] = eq + 1;
        }
    }
    return 0;
}

/* The value of enumerator `name` of the enum of type t; 0 when found,
 * -1 when t is no enum of the model or lacks it. */
static int enumerator_value(const cb_model *m, const cb_type *t, const char *name,
                            long long *value)
{
    int e = t->kind == TY_ENUM ? model_type_enum(m, t) : -1;
    for (size_t k = 0; e >= 0 && k < m->enums[e].nitems; k++)
        if (strcmp(m->enums[e].items[k].name, name) == 0) {
            *value = m->enums[e].items[k].value;
            return 0;
        }
    return -1;
}

/* The type of the owner's parameter or field `name`, NULL when none. */
static const cb_type *hb_member_type(const cb_model *m, const cb_function *f, const char *owner,
                                     const char *name)
{
    if (f) {
        int i = model_param_index(f, name);
        return i < 0 ? NULL : f->params[i].type;
    }
    const cb_field *fd = rules_record_field(m, owner, name);
    return fd && fd->bit_width < 0 ? fd->type : NULL;
}

/* Checks a host-bytes rule whose owner the model has (a rule naming a
 * function or record it lacks is left to rules_unmatched): BUFFER a
 * pointer to void (a function's also to integers: `const char *` of IR
 * holding NULs, cuFile's `const size_t *` arrays, SIZE counting them;
 * any pointer for a field's constant SIZE), not const
 * for `writes`; every term an integer
 * parameter or field of the owner, a function's only SIZE (and not a
 * constant); `when` an enum field and one of its enumerators. -1 with
 * b->error set. */
static int hb_check(cb_facts *b, const cb_rule *rule, const hb_words *h)
{
    const cb_model *m = b->model;
    const char *owner = rule->args[0];
    const cb_function *f = rules_function(m, owner);
    const cb_type *bt = hb_member_type(m, f, owner, h->buffer);
    if (!bt)
        return 0; /* the owner lacks it: rules_unmatched reports the rule */
    const char *what = f ? "parameter" : "field";
    /* a constant SIZE is the size of what a typed field points to
     * (CUmemDecompressParams.dstActBytes); a computed one counts bytes of
     * a void pointer's memory */
    if (bt->kind != TY_POINTER || !bt->pointee ||
        (bt->pointee->kind != TY_VOID && !(f && bt->pointee->kind == TY_INT) && !h->bytes)) {
        bind_error(b, rule, "%s '%s' of %s is not a void or integer pointer", what, h->buffer,
                   owner);
        return -1;
    }
    if (h->writes && bt->pointee->is_const) {
        bind_error(b, rule, "%s '%s' of %s is const: the driver cannot write it", what, h->buffer,
                 owner);
        return -1;
    }
    if (f && h->bytes) {
        bind_error(b, rule, "a function parameter's SIZE is a parameter, not a constant");
        return -1;
    }
    for (int t = 0; t < HB_NTERMS; t++) {
        if (!h->term[t])
            continue;
        if (f && t != HB_SIZE) {
            bind_error(b, rule, "a function parameter takes only SIZE, not %s=", term_keys[t]);
            return -1;
        }
        const cb_type *tt = hb_member_type(m, f, owner, h->term[t]);
        if (!tt || tt->kind != TY_INT) {
            bind_error(b, rule, "'%s' is not an integer %s of %s", h->term[t], what, owner);
            return -1;
        }
    }
    if (!h->when_value)
        return 0;
    const cb_type *wt = f ? NULL : hb_member_type(m, f, owner, h->when_field);
    long long v;
    if (!wt || enumerator_value(m, wt, h->when_value, &v) < 0) {
        bind_error(b, rule, "when= needs an enum field of %s and one of its enumerators", owner);
        return -1;
    }
    return 0;
}

/* host-bytes rules, in file order: each split and checked (the first
 * that does not fit sets b->error and ends the binding of them), then
 * resolved into the facts of the parameter it names (its slot: bind_slots)
 * and of every record it names. */
static void bind_host_bytes(cb_facts *b)
{
    const cb_model *m = b->model;
    const cb_rules *r = b->rules;
    hb_words *words = arena_alloc(b->arena, (r->nrules + 1) * sizeof *words);
    for (size_t n = 0; n < r->nrules; n++)
        if (r->rules[n].directive == CB_D_HOST_BYTES &&
            (hb_parse(b, &r->rules[n], &words[n]) < 0 || hb_check(b, &r->rules[n], &words[n]) < 0))
            return;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        for (size_t k = 0; k < f->nparams; k++) {
            cb_param_facts *pf = &b->functions[i].params[k];
            const cb_rule *rule = pf->on[CB_D_HOST_BYTES];
            if (!rule)
                continue;
            const hb_words *h = &words[rule - r->rules];
            cb_host_bytes_fact *hf = &pf->host_bytes;
            hf->rule = rule;
            hf->buffer = (long long)k;
            hf->writes = h->writes;
            hf->bytes = h->bytes;
            hf->when = -1;
            for (int t = 0; t < HB_NTERMS; t++)
                hf->term[t] = h->term[t] ? model_param_index(f, h->term[t]) : -1;
        }
    }
    for (size_t n = 0; n < r->nrules; n++) {
        const cb_rule *rule = &r->rules[n];
        if (rule->directive != CB_D_HOST_BYTES)
            continue;
        const hb_words *h = &words[n];
        for (size_t i = 0; i < m->nrecords; i++) {
            const cb_record *rec = &m->records[i];
            cb_record_facts *rf = &b->records[i];
            int buffer = model_record_named(rec, rule->args[0])
                             ? model_field_index(m, rec, h->buffer) : -1;
            /* a record lacking BUFFER gets no extent: rules_unmatched
             * reports the rule, and no fact holds a field it lacks */
            if (buffer < 0)
                continue;
            size_t cap = rf->nhost_bytes; /* grown one at a time */
            cb_host_bytes_fact *hf = ARENA_PUSH(b->arena, rf->host_bytes, rf->nhost_bytes, cap);
            hf->rule = rule;
            hf->buffer = buffer;
            hf->writes = h->writes;
            hf->bytes = h->bytes;
            hf->when = -1;
            hf->when_value = 0;
            if (h->when_value) {
                const cb_field *wf = rules_record_field(m, rule->args[0], h->when_field);
                hf->when = model_field_index(m, rec, h->when_field);
                if (!wf || enumerator_value(m, wf->type, h->when_value, &hf->when_value) < 0)
                    hf->when = -1;
            }
            for (int t = 0; t < HB_NTERMS; t++)
                hf->term[t] = h->term[t] ? model_field_index(m, rec, h->term[t]) : -1;
        }
    }
}

/* A type named in an attribute-type rule: a typedef of the header or one
 * of the builtins int, unsigned, size_t, _Bool. NULL when unknown. */
static const cb_type *named_type(cb_facts *b, const char *name)
{
    const cb_model *m = b->model;
    int i = model_typedef_index(m, name);
    if (i >= 0) {
        /* The typedef's own name must survive: wrap its target. */
        cb_type *t = arena_alloc(b->arena, sizeof *t);
        *t = *m->typedefs[i].type;
        t->name = m->typedefs[i].name;
        t->spelling = m->typedefs[i].name;
        t->handle_index = model_handle_index(m, t->name);
        t->typedef_index = i;
        if (t->kind == TY_POINTER && t->pointee->kind == TY_OTHER)
            t->kind = TY_HANDLE; /* a handle typedef seen through its target */
        return t;
    }
    static const struct {
        const char *name;
        int size, is_signed;
    } builtins[] = {{"int", 4, 1}, {"unsigned", 4, 0}, {"size_t", 8, 0}, {"_Bool", 1, 0}};
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (strcmp(builtins[i].name, name) == 0) {
            cb_type *t = arena_alloc(b->arena, sizeof *t);
            t->kind = TY_INT;
            t->spelling = t->canon = builtins[i].name;
            t->size = t->align = builtins[i].size;
            t->is_signed = builtins[i].is_signed;
            t->handle_index = t->typedef_index = -1;
            return t;
        }
    return NULL;
}

/* An attribute-type rule's TYPE resolved into *a: a type of named_type(),
 * `char[N]` (a NUL-terminated string of at most N - 1 chars), or `T[]`
 * (an array of T filling the value's byte size); type NULL when none
 * (char[0], X[N] of another X, an unknown name). */
static void resolve_attribute_type(cb_facts *b, const cb_rule *rule, cb_attribute_type_fact *a)
{
    char name[128];
    snprintf(name, sizeof name, "%s", rule->args[1]);
    a->rule = rule;
    char *bracket = strchr(name, '[');
    if (bracket) {
        a->len = bracket[1] == ']' ? -1 : strtoll(bracket + 1, NULL, 10);
        *bracket = '\0';
        if (a->len == 0)
            return;
    }
    if (bracket && a->len > 0) {
        if (strcmp(name, "char") != 0)
            return;
        cb_type *t = arena_alloc(b->arena, sizeof *t);
        t->kind = TY_INT;
        t->spelling = t->canon = "char";
        t->size = t->align = 1;
        t->handle_index = t->typedef_index = -1;
        a->type = t;
        return;
    }
    a->type = named_type(b, name);
    a->is_bool = a->type && strcmp(name, "_Bool") == 0;
}

/* Per enumerator its attribute-type rule, resolved; an attribute enum of
 * a bound attribute rule marks the rules of its enumerators as matching
 * (an attribute-input rule over an array of attributes binds none). */
static void bind_attribute_types(cb_facts *b)
{
    const cb_model *m = b->model;
    b->attribute_type = arena_alloc(b->arena, (m->nenums + 1) * sizeof *b->attribute_type);
    for (size_t e = 0; e < m->nenums; e++) {
        b->attribute_type[e] =
            arena_alloc(b->arena, (m->enums[e].nitems + 1) * sizeof *b->attribute_type[e]);
        for (size_t k = 0; k < m->enums[e].nitems; k++) {
            const cb_rule *rule = attribute_type_rule(b->rules, m->enums[e].items[k].name);
            if (rule)
                resolve_attribute_type(b, rule, &b->attribute_type[e][k]);
        }
    }
    for (size_t i = 0; i < m->nfunctions; i++)
        for (size_t k = 0; k < m->functions[i].nparams; k++) {
            const cb_param_facts *pf = &b->functions[i].params[k];
            /* a callback's parameters are not attribute values */
            if (pf->callback_role != CB_CALLBACK_ROLE_NONE || pf->attr_enum < 0 ||
                (pf->attr_array && pf->attr_input))
                continue;
            for (size_t n = 0; n < m->enums[pf->attr_enum].nitems; n++)
                mark(b, b->attribute_type[pf->attr_enum][n].rule);
        }
}

/* Whether s is a whole decimal integer literal (an optional '-'). */
static int is_int_literal(const char *s)
{
    const char *d = *s == '-' ? s + 1 : s;
    if (!*d)
        return 0;
    for (; *d; d++)
        if (*d < '0' || *d > '9')
            return 0;
    return 1;
}

/* undo rules whose functions the model has, each ARG resolved to a
 * parameter of FUNCTION or an integer literal (classify_undo checks
 * them). */
static void bind_undos(cb_facts *b)
{
    size_t cap = 0;
    for (size_t n = 0; n < b->rules->nrules; n++) {
        const cb_rule *r = &b->rules->rules[n];
        if (r->directive != CB_D_UNDO)
            continue;
        const cb_function *f = rules_function(b->model, r->args[0]);
        const cb_function *u = rules_function(b->model, r->args[1]);
        if (!f || !u)
            continue; /* reported by rules_unmatched */
        cb_undo_fact *uf = ARENA_PUSH(b->arena, b->undos, b->nundos, cap);
        uf->rule = r;
        uf->function = (size_t)(f - b->model->functions);
        uf->undo = u;
        uf->nargs = r->nargs - 2;
        uf->param = arena_alloc(b->arena, (uf->nargs + 1) * sizeof *uf->param);
        uf->literal = arena_alloc(b->arena, (uf->nargs + 1) * sizeof *uf->literal);
        for (size_t a = 0; a < uf->nargs; a++) {
            const char *arg = r->args[a + 2];
            int literal = is_int_literal(arg);
            uf->param[a] = literal ? -1 : model_param_index(f, arg);
            uf->literal[a] = literal ? arg : NULL;
        }
    }
}

/* ---- matching ----------------------------------------------------------- */

/* Whether FIELD's type is a fixed array a field-count rule may count:
 * `T FIELD[N]`, T neither char (text) nor an array. */
static int countable_fixed_array(const cb_field *a)
{
    const cb_type *t = a ? a->type : NULL;
    const cb_type *e = t && t->kind == TY_ARRAY && t->array_len > 0 ? t->pointee : NULL;
    return e && e->kind != TY_ARRAY && e->kind != TY_VOID &&
           !(e->kind == TY_INT && e->size == 1 && e->canon && strcmp(e->canon, "char") == 0);
}

/* Whether `field-count RECORD FIELD COUNT` (or field-count-out: records
 * 0) describes the header: FIELD of RECORD points at a struct or union of
 * the header (when records) or at a handle (an opaque handle of the
 * header, an integer handle of a value-handle / value-class rule), or
 * (field-count) at an unsigned integer, or is a fixed array of any other
 * element than char; COUNT
 * is another integer field of RECORD (not a bit-field). */
static int field_count_matches(const cb_facts *b, const cb_rule *rule, int records)
{
    const cb_model *m = b->model;
    const cb_field *a = rules_record_field(m, rule->args[0], rule->args[1]);
    const cb_field *c = rules_record_field(m, rule->args[0], rule->args[2]);
    if (records && countable_fixed_array(a))
        return c && c != a && c->type->kind == TY_INT && c->bit_width < 0;
    const cb_type *e = a && a->type->kind == TY_POINTER ? a->type->pointee : NULL;
    int record = e && e->kind == TY_RECORD && model_type_record(m, e) >= 0;
    int value_handle = e && (rules_type_rule(b, CB_D_VALUE_HANDLE, e) ||
                             rules_type_rule(b, CB_D_VALUE_CLASS, e));
    int handle = e && e->name &&
                 ((e->kind == TY_HANDLE && names_handle(m, e->name)) ||
                  (e->kind == TY_INT && value_handle));
    /* field-count over plain unsigned integers (nvml's vgpuTypeIds) */
    int ints = records && e && e->kind == TY_INT && !e->is_signed &&
               (e->size == 1 || e->size == 2 || e->size == 4 || e->size == 8);
    return ((records && record) || handle || ints) && c && c->type->kind == TY_INT &&
           c->bit_width < 0;
}

/* The record a RECORD argument names (tag, name or typedef), -1. */
static long long record_index(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->nrecords; i++)
        if (model_record_named(&m->records[i], name))
            return (long long)i;
    return -1;
}

/* maker rules: each term split into PARAM and FIELD, checked against the
 * record (a wrong term is a path:line error where the record exists). */
static void bind_makers(cb_facts *b)
{
    const cb_model *m = b->model;
    const cb_rules *r = b->rules;
    b->makers = arena_alloc(b->arena, (r->nrules + 1) * sizeof *b->makers);
    for (size_t n = 0; n < r->nrules; n++) {
        const cb_rule *rule = &r->rules[n];
        long long rec = rule->directive == CB_D_MAKER ? record_index(m, rule->args[0]) : -1;
        if (rec < 0)
            continue;
        cb_maker_fact *mk = &b->makers[b->nmakers];
        mk->rule = rule;
        mk->record = (size_t)rec;
        mk->name = rule->args[1];
        mk->nparams = rule->nargs - 2;
        mk->params = arena_alloc(b->arena, (mk->nparams + 1) * sizeof *mk->params);
        mk->fields = arena_alloc(b->arena, (mk->nparams + 1) * sizeof *mk->fields);
        for (size_t k = 0; k < mk->nparams; k++) {
            const char *term = rule->args[k + 2];
            const char *eq = strchr(term, '=');
            if (!eq || eq == term || !eq[1]) {
                bind_error(b, rule, "'%s' is not PARAM=FIELD", term);
                return;
            }
            mk->params[k] = arena_strndup(b->arena, term, (size_t)(eq - term));
            mk->fields[k] = eq + 1;
            if (!rules_record_field(m, rule->args[0], mk->fields[k])) {
                bind_error(b, rule, "%s has no field '%s'", rule->args[0], mk->fields[k]);
                return;
            }
            for (size_t j = 0; j < k; j++)
                if (strcmp(mk->params[j], mk->params[k]) == 0) {
                    bind_error(b, rule, "parameter '%s' given twice", mk->params[k]);
                    return;
                }
        }
        b->nmakers++;
    }
}

int rules_field_default_value(const cb_rule *rule, unsigned long long *value)
{
    const char *text = rule->args[2];
    char *end;
    long long v = strtoll(text, &end, 0);
    *value = (unsigned long long)v;
    return *text && !*end;
}

/* Whether a field of a snake_case module's records is named word (a
 * field-underscore rule; the name before the rule's `_`). */
static int field_underscore_matches(const cb_facts *b, const char *word)
{
    const cb_model *m = b->model;
    for (size_t i = 0; i < m->nrecords; i++)
        for (size_t k = 0; k < m->records[i].nfields; k++) {
            const char *name = m->records[i].fields[k].name;
            if (!*name)
                continue;
            char *id = rules_python_identifier(name);
            char *snake = rules_snake_field_name(&b->api, id);
            size_t n = strlen(word);
            int hit = snake && strncmp(snake, word, n) == 0 && strcmp(snake + n, "_") == 0;
            free(id);
            free(snake);
            if (hit)
                return 1;
        }
    return 0;
}

/* Whether one rule matches the model (rules_unmatched). */
static int rule_matches(const cb_facts *b, const cb_rule *rule)
{
    const cb_model *m = b->model;
    const char *a0 = rule->args[0];
    switch (rule->directive) {
    case CB_D_RENAME_PARAM:
    case CB_D_ATTRIBUTE_TYPE:
        return b->matched[rule - b->rules->rules]; /* set when bound */
    case CB_D_HANDLE_CAST:
        return function_has_param(m, a0, rule->args[1]) && names_handle(m, rule->args[2]);
    case CB_D_FIELD_COUNT:
        return field_count_matches(b, rule, 1);
    case CB_D_FIELD_COUNT_OUT:
        return field_count_matches(b, rule, 0);
    case CB_D_FIELD_COUNT_QUERY: { /* RECORD FIELD: a field-count pointer that matches */
        long long i = record_index(m, a0);
        long long k = i >= 0 ? model_field_index(m, &m->records[i], rule->args[1]) : -1;
        const cb_rule *count = k >= 0 ? b->records[i].fields[k].on[CB_D_FIELD_COUNT] : NULL;
        return count && is_pointer_field(m, rule) && field_count_matches(b, count, 1);
    }
    case CB_D_FIELD_DEFAULT: { /* RECORD FIELD VALUE: an integer field, a number */
        const cb_field *f = rules_record_field(m, a0, rule->args[1]);
        unsigned long long v;
        return f && f->type->kind == TY_INT && f->bit_width < 0 && f->type->size <= 8 &&
               rules_field_default_value(rule, &v);
    }
    case CB_D_KERNEL_CODE: /* FUNCTION WHEN */
    case CB_D_ALIAS:       /* FUNCTION NAME */
    case CB_D_UNBOUND:     /* FUNCTION WHY... */
        return rules_function(m, a0) != NULL;
    case CB_D_RESULT:
        return model_enum(m, a0) != NULL;
    case CB_D_ERROR_STRING:
        return rules_function(m, a0) != NULL;
    case CB_D_ERROR_STRING_INLINE:
        return b->error_string_inline_fn != NULL;
    case CB_D_TEXT: /* FUNCTION PARAM [SIZE] */
        return function_has_param(m, a0, rule->args[1]) &&
               (rule->nargs < 3 || function_has_param(m, a0, rule->args[2]));
    case CB_D_RECORDS: /* FUNCTION PARAM COUNT [FIELD] */
    case CB_D_COUNTED_RECORDS: /* FUNCTION PARAM COUNT */
        return function_has_param(m, a0, rule->args[1]) && function_has_param(m, a0, rule->args[2]);
    case CB_D_FIELD_UNDERSCORE:
        return field_underscore_matches(b, a0);
    case CB_D_COUNT_BOUND: /* FUNCTION COUNT COUNTFN */
        return function_has_param(m, a0, rule->args[1]) && rules_function(m, rule->args[2]);
    default:
        break;
    }
    switch (rules_directive(rule->directive)->target) {
    case CB_ON_TYPEDEF:
        return names_typedef(m, a0);
    case CB_ON_HANDLE:
        return names_handle(m, a0);
    case CB_ON_FIELD:
        return rules_record_field(m, a0, rule->args[1]) != NULL;
    case CB_ON_RECORD:
        return record_index(m, a0) >= 0;
    case CB_ON_PARAM_OR_FIELD:
        return function_has_param(m, a0, rule->args[1]) ||
               rules_record_field(m, a0, rule->args[1]) != NULL;
    case CB_ON_FUNCTIONS:
        return rules_function(m, a0) != NULL && rules_function(m, rule->args[1]) != NULL;
    case CB_ON_MACROS:
        return define_enum_matches(m, rule);
    case CB_ON_API:
        return 1; /* names nothing of the header */
    default: /* FUNCTION [PARAM ...] */
        return rules_function(m, a0) != NULL &&
               (rule->nargs < 2 || function_has_param(m, a0, rule->args[1]));
    }
}

/* count-bound rules: the COUNT parameter's COUNTFN (classify_count_bounds
 * checks what it is). */
static void bind_count_bounds(cb_facts *b)
{
    for (size_t i = 0; i < b->model->nfunctions; i++)
        for (size_t k = 0; k < b->model->functions[i].nparams; k++) {
            cb_param_facts *pf = &b->functions[i].params[k];
            const cb_rule *r = pf->on[CB_D_COUNT_BOUND];
            pf->count_fn = r ? rules_function(b->model, r->args[2]) : NULL;
        }
}

cb_facts *rules_bind(const cb_rules *r, const cb_model *m)
{
    cb_arena *a = arena_create();
    if (!a)
        arena_oom();
    cb_facts *b = arena_alloc(a, sizeof *b);
    b->arena = a;
    b->model = m;
    b->rules = r;
    b->matched = arena_alloc(a, r->nrules + 1);
    rules_api(r, &b->api);
    b->error_string_fn = b->api.error_string ? rules_function(m, b->api.error_string) : NULL;
    b->error_string_inline_fn = error_string_inline(m, &b->api, b->api.error_string_inline);
    bind_types(b);
    bind_functions(b);
    bind_count_bounds(b);
    bind_records(b);
    bind_host_bytes(b);
    bind_attribute_types(b);
    bind_undos(b);
    bind_makers(b);
    for (size_t i = 0; i < r->nrules; i++)
        b->matched[i] = (unsigned char)rule_matches(b, &r->rules[i]);
    return b;
}

void rules_unbind(cb_facts *f)
{
    if (f)
        arena_destroy(f->arena);
}

size_t rules_unmatched(const cb_facts *f, FILE *out)
{
    size_t n = 0;
    for (size_t i = 0; i < f->rules->nrules; i++) {
        const cb_rule *rule = &f->rules->rules[i];
        if (f->matched[i])
            continue;
        n++;
        if (out)
            fprintf(out, "%s:%u: rule '%s %s%s%s' matches nothing in %s\n", f->rules->path,
                    rule->line, rules_directive(rule->directive)->name, rule->args[0],
                    rule->nargs > 1 ? " " : "", rule->nargs > 1 ? rule->args[1] : "",
                    f->model->header);
    }
    return n;
}
