/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules.c — reads rules.txt (see rules.h for the directives).
 *
 * Invariant: every loaded rule has a known directive and a number of
 * arguments within that directive's range (exactly one number for all but
 * `undo`, whose undo call takes one to six arguments, and `host-bytes`,
 * whose optional terms go up to the limit).
 */
#define _POSIX_C_SOURCE 200809L
#include "rules.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#include "arena.h"

static const struct {
    const char *name;
    size_t nargs;             /* the fewest arguments */
    size_t most;              /* the most; 0: exactly nargs */
} directives[] = {
    {"value-handle", 1, 0},
    {"value-class", 1, 0},
    {"stream-protocol", 1, 0},
    {"handle-cast", 3, 0},
    {"keep-gil", 1, 0},
    {"rename-param", 2, 0},
    {"rename-param-in", 3, 0},
    {"inout", 2, 0},
    {"in", 2, 0},
    {"out", 2, 0},
    {"fixed", 3, 0},
    {"count", 3, 0},
    {"kernel-params", 3, 0},
    {"kernel-extra", 2, 0},
    {"callback", 4, 0},
    {"sync-callback", 3, 0},
    {"attribute-output", 3, 0},
    {"attribute-input", 3, 0},
    {"attribute-type", 2, 0},
    {"unloads-kernels", 1, 0},
    {"kernel-code", 2, 0},
    {"kernel-params-field", 4, 0},
    {"kernel-extra-field", 2, 0},
    {"field-count", 3, 0},
    {"field-count-out", 3, 0},
    {"registry-kind", 2, 0},
    {"registry-create", 3, 0},
    {"registry-owned", 3, 0},
    {"registry-destroy", 2, 0},
    {"registry-keep", 3, 0},
    {"registry-depend", 3, 0},
    {"undo", 3, CB_RULE_MAX_ARGS},
    /* what the API is (one of each per rules file; the driver's defaults
     * when absent): see rules.h */
    {"module", 2, 0},
    {"result", 2, 0},
    {"error-class", 1, 0},
    {"error-string", 1, 0},
    {"library", 1, 0},
    {"library-env", 1, 0},
    {"library-wheel", 1, 0},
    {"python-names", 2, 0},
    {"int-handles", 0, 0},
    {"header", 1, 0},
    {"capi-sentinel", 1, 0},
    {"in-place", 2, 0},
    {"buffer-size", 3, 0},
    {"error-log", 4, 0},
    {"host-bytes", 4, CB_RULE_MAX_ARGS},
};

/* The index of directive d in directives[], -1 when unknown. */
static int directive_index(const char *d)
{
    for (size_t i = 0; i < sizeof directives / sizeof *directives; i++)
        if (strcmp(directives[i].name, d) == 0)
            return (int)i;
    return -1;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        arena_oom();
    return p;
}

static int parse_line(cb_rules *r, char *line, unsigned lineno, size_t *cap, char *err, size_t errlen)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *words[CB_RULE_MAX_ARGS + 1];
    size_t n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (n == sizeof words / sizeof *words) {
            snprintf(err, errlen, "%s:%u: too many words", r->path, lineno);
            return -1;
        }
        words[n++] = tok;
    }
    if (n == 0)
        return 0;
    int d = directive_index(words[0]);
    if (d < 0) {
        snprintf(err, errlen, "%s:%u: unknown directive '%s'", r->path, lineno, words[0]);
        return -1;
    }
    size_t least = directives[d].nargs, most = directives[d].most ? directives[d].most : least;
    if (n - 1 < least || n - 1 > most) {
        if (least == most)
            snprintf(err, errlen, "%s:%u: '%s' takes %zu argument(s), got %zu", r->path, lineno,
                     words[0], least, n - 1);
        else
            snprintf(err, errlen, "%s:%u: '%s' takes %zu to %zu arguments, got %zu", r->path,
                     lineno, words[0], least, most, n - 1);
        return -1;
    }
    if (strcmp(words[0], "kernel-code") == 0 && strcmp(words[2], "before") != 0 &&
        strcmp(words[2], "after") != 0) {
        snprintf(err, errlen, "%s:%u: 'kernel-code' takes 'before' or 'after', not '%s'",
                 r->path, lineno, words[2]);
        return -1;
    }
    if (r->nrules == *cap) {
        *cap = *cap ? *cap * 2 : 32;
        cb_rule *grown = realloc(r->rules, *cap * sizeof *grown);
        if (!grown)
            arena_oom();
        r->rules = grown;
    }
    cb_rule *rule = &r->rules[r->nrules++];
    memset(rule, 0, sizeof *rule);
    rule->directive = xstrdup(words[0]);
    rule->nargs = n - 1;
    for (size_t i = 1; i < n; i++)
        rule->args[i - 1] = xstrdup(words[i]);
    rule->line = lineno;
    return 0;
}

cb_rules *rules_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s:0: cannot open the rules file", path);
        return NULL;
    }
    cb_rules *r = calloc(1, sizeof *r);
    if (!r)
        arena_oom();
    r->path = xstrdup(path);
    size_t cap = 0;
    char buf[1024];
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        lineno++;
        if (!strchr(buf, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line too long", path, lineno);
            rc = -1;
            break;
        }
        rc = parse_line(r, buf, lineno, &cap, err, errlen);
    }
    fclose(f);
    if (rc) {
        rules_free(r);
        return NULL;
    }
    return r;
}

void rules_free(cb_rules *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nrules; i++) {
        free(r->rules[i].directive);
        for (size_t a = 0; a < r->rules[i].nargs; a++)
            free(r->rules[i].args[a]);
    }
    free(r->rules);
    free(r->path);
    free(r);
}

cb_rule *rules_find(const cb_rules *r, const char *directive, const char *name)
{
    for (size_t i = 0; i < r->nrules; i++) {
        cb_rule *rule = &r->rules[i];
        if (rule->nargs >= 1 && strcmp(rule->directive, directive) == 0 &&
            strcmp(rule->args[0], name) == 0) {
            rule->used = 1;
            return rule;
        }
    }
    return NULL;
}

cb_rule *rules_find2(const cb_rules *r, const char *directive, const char *function,
                     const char *param)
{
    for (size_t i = 0; i < r->nrules; i++) {
        cb_rule *rule = &r->rules[i];
        if (rule->nargs >= 2 && strcmp(rule->directive, directive) == 0 &&
            strcmp(rule->args[0], function) == 0 && strcmp(rule->args[1], param) == 0) {
            rule->used = 1;
            return rule;
        }
    }
    return NULL;
}

cb_rule *rules_find_fn(const cb_rules *r, const char *directive, const cb_function *f,
                       const char *param)
{
    cb_rule *rule = param ? rules_find2(r, directive, f->name, param)
                          : rules_find(r, directive, f->name);
    if (!rule && f->abi && strcmp(f->abi, f->name) != 0)
        rule = param ? rules_find2(r, directive, f->abi, param) : rules_find(r, directive, f->abi);
    return rule;
}

int rules_names_function(const char *name, const cb_function *f)
{
    return strcmp(name, f->name) == 0 || (f->abi && strcmp(name, f->abi) == 0);
}

const cb_function *rules_function(const cb_model *m, const char *name)
{
    const cb_function *f = model_function(m, name);
    for (size_t i = 0; !f && i < m->nfunctions; i++)
        if (m->functions[i].abi && strcmp(m->functions[i].abi, name) == 0)
            f = &m->functions[i];
    return f;
}

static int names_typedef(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->ntypedefs; i++)
        if (strcmp(m->typedefs[i].name, name) == 0)
            return 1;
    return 0;
}

static int function_has_param(const cb_model *m, const char *function, const char *param)
{
    const cb_function *f = rules_function(m, function);
    for (size_t i = 0; f && i < f->nparams; i++)
        if (strcmp(f->params[i].name, param) == 0)
            return 1;
    return 0;
}

static int names_handle(const cb_model *m, const char *name)
{
    for (size_t i = 0; i < m->nhandles; i++)
        if (strcmp(m->handles[i].name, name) == 0)
            return 1;
    return names_typedef(m, name);
}

const cb_field *rules_record_field(const cb_model *m, const char *record, const char *field)
{
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *rec = &m->records[i];
        int named = strcmp(rec->tag, record) == 0 || strcmp(rec->name, record) == 0;
        for (size_t a = 0; !named && a < rec->naliases; a++)
            named = strcmp(rec->aliases[a], record) == 0;
        for (size_t k = 0; named && k < rec->nfields; k++)
            if (strcmp(rec->fields[k].name, field) == 0)
                return &rec->fields[k];
    }
    return NULL;
}

static int record_has_field(const cb_model *m, const char *record, const char *field)
{
    return rules_record_field(m, record, field) != NULL;
}

/* Whether integer typedef `name` is a handle class: a value-handle or
 * value-class rule names it (handles.h). */
static int names_value_handle(const cb_rules *r, const char *name)
{
    return name && (rules_find(r, "value-handle", name) || rules_find(r, "value-class", name));
}

/* Whether `field-count RECORD FIELD COUNT` (or field-count-out: records
 * 0) describes the header: FIELD of RECORD points at a struct or union of
 * the header (when records) or at a handle (an opaque handle of the
 * header, an integer handle of a value-handle / value-class rule), COUNT
 * is an integer field of RECORD (not a bit-field). */
static int field_count_matches(const cb_rules *r, const cb_model *m, const cb_rule *rule,
                               int records)
{
    const cb_field *a = rules_record_field(m, rule->args[0], rule->args[1]);
    const cb_field *c = rules_record_field(m, rule->args[0], rule->args[2]);
    const cb_type *e = a && a->type->kind == TY_POINTER ? a->type->pointee : NULL;
    int record = e && e->kind == TY_RECORD &&
                 ((e->name && model_record(m, e->name)) ||
                  (e->record_tag && *e->record_tag && model_record(m, e->record_tag)));
    int handle = e && e->name &&
                 ((e->kind == TY_HANDLE && names_handle(m, e->name)) ||
                  (e->kind == TY_INT && names_value_handle(r, e->name)));
    return ((records && record) || handle) && c && c->type->kind == TY_INT && c->bit_width < 0;
}

size_t rules_unmatched(const cb_rules *r, const cb_model *m, FILE *out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *rule = &r->rules[i];
        int found;
        if (strcmp(rule->directive, "value-handle") == 0 ||
            strcmp(rule->directive, "value-class") == 0)
            found = names_typedef(m, rule->args[0]);
        else if (strcmp(rule->directive, "registry-kind") == 0 ||
                 strcmp(rule->directive, "stream-protocol") == 0)
            found = names_handle(m, rule->args[0]);
        else if (strcmp(rule->directive, "kernel-params-field") == 0 ||
                 strcmp(rule->directive, "kernel-extra-field") == 0)
            found = record_has_field(m, rule->args[0], rule->args[1]);
        else if (strcmp(rule->directive, "field-count") == 0)
            found = field_count_matches(r, m, rule, 1);
        else if (strcmp(rule->directive, "field-count-out") == 0)
            found = field_count_matches(r, m, rule, 0);
        else if (strcmp(rule->directive, "host-bytes") == 0)
            found = function_has_param(m, rule->args[0], rule->args[1]) ||
                    record_has_field(m, rule->args[0], rule->args[1]);
        else if (strcmp(rule->directive, "undo") == 0)
            found = rules_function(m, rule->args[0]) != NULL &&
                    rules_function(m, rule->args[1]) != NULL;
        else if (strcmp(rule->directive, "handle-cast") == 0)
            found = function_has_param(m, rule->args[0], rule->args[1]) &&
                    names_handle(m, rule->args[2]);
        else if (strcmp(rule->directive, "kernel-code") == 0) /* FUNCTION WHEN */
            found = rules_function(m, rule->args[0]) != NULL;
        else if (rules_is_api(rule->directive))
            found = rules_api_matches(m, rule);
        else if (strcmp(rule->directive, "rename-param") == 0 ||
                 strcmp(rule->directive, "attribute-type") == 0)
            found = rule->used; /* set when a parameter or attribute used it */
        else
            found = rules_function(m, rule->args[0]) != NULL &&
                    (rule->nargs < 2 || function_has_param(m, rule->args[0], rule->args[1]));
        if (!found && out) {
            fprintf(out, "%s:%u: rule '%s %s%s%s' matches nothing in %s\n", r->path, rule->line,
                    rule->directive, rule->args[0], rule->nargs > 1 ? " " : "",
                    rule->nargs > 1 ? rule->args[1] : "", m->header);
        }
        n += !found;
    }
    return n;
}

int rules_is_api(const char *d)
{
    static const char *const api[] = {"module", "result", "error-class", "error-string",
                                      "library", "library-env", "library-wheel", "python-names",
                                      "int-handles", "header", "capi-sentinel"};
    for (size_t i = 0; i < sizeof api / sizeof *api; i++)
        if (strcmp(api[i], d) == 0)
            return 1;
    return 0;
}

int rules_api_matches(const cb_model *m, const cb_rule *rule)
{
    if (strcmp(rule->directive, "result") == 0)
        return model_enum(m, rule->args[0]) != NULL;
    if (strcmp(rule->directive, "error-string") == 0)
        return rules_function(m, rule->args[0]) != NULL;
    return 1; /* names nothing of the header */
}

void rules_api(const cb_rules *r, cb_api *api)
{
    memset(api, 0, sizeof *api);
    api->dropin = "driver";
    api->raising = "cu";
    api->result = "CUresult";
    api->success = "CUDA_SUCCESS";
    api->error_class = "CUDAError";
    api->capi_sentinel = "CUDA_ERROR_NOT_FOUND";
    api->name_prefix = "";
    for (size_t i = 0; i < r->nrules; i++) {
        cb_rule *rule = &r->rules[i];
        const char *d = rule->directive, *a0 = rule->args[0];
        if (!rules_is_api(d))
            continue;
        rule->used = 1;
        if (strcmp(d, "module") == 0) {
            api->dropin = strcmp(a0, "-") == 0 ? NULL : a0;
            api->raising = strcmp(rule->args[1], "-") == 0 ? NULL : rule->args[1];
        } else if (strcmp(d, "result") == 0) {
            api->result = a0;
            api->success = rule->args[1];
        } else if (strcmp(d, "error-class") == 0) {
            api->error_class = a0;
        } else if (strcmp(d, "error-string") == 0) {
            api->error_string = a0;
        } else if (strcmp(d, "library") == 0) {
            api->is_library = 1;
            if (api->nlibs < CB_API_MAX_LIBS)
                api->libs[api->nlibs++] = a0;
        } else if (strcmp(d, "library-env") == 0) {
            api->env = a0;
        } else if (strcmp(d, "library-wheel") == 0) {
            if (api->nwheels < CB_API_MAX_LIBS)
                api->wheels[api->nwheels++] = a0;
        } else if (strcmp(d, "capi-sentinel") == 0) {
            api->capi_sentinel = a0;
        } else if (strcmp(d, "int-handles") == 0) {
            api->int_handles = 1;
        } else if (strcmp(d, "python-names") == 0) {
            api->name_prefix = a0;
            api->snake = strcmp(rule->args[1], "snake") == 0;
        }
    }
}

/* name without the API's prefix, in snake_case when the API says so
 * (nvJitLinkGetLinkedLTOIRSize -> get_linked_ltoir_size): an underscore
 * before a capital that follows a lower-case letter or digit, or that
 * ends a run of capitals before a lower-case letter. */
char *rules_python_name(const cb_api *api, const char *name)
{
    size_t np = strlen(api->name_prefix);
    if (np && strncmp(name, api->name_prefix, np) == 0 && name[np])
        name += np;
    strbuf sb = {0};
    if (!api->snake)
        sb_puts(&sb, name);
    for (size_t i = 0; api->snake && name[i]; i++) {
        unsigned char c = (unsigned char)name[i], prev = i ? (unsigned char)name[i - 1] : 0,
                      next = (unsigned char)name[i + 1];
        if (i && isupper(c) &&
            (islower(prev) || isdigit(prev) || (isupper(prev) && next && islower(next))))
            sb_putc(&sb, '_');
        sb_putc(&sb, (char)tolower(c));
    }
    if (sb.oom || !sb.data)
        arena_oom();
    return sb.data; /* malloc'ed */
}

int rules_has(const cb_rules *r, const char *directive)
{
    for (size_t i = 0; i < r->nrules; i++)
        if (strcmp(r->rules[i].directive, directive) == 0)
            return r->rules[i].used = 1;
    return 0;
}
