/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host_bytes.c — see host_bytes.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "classify/host_bytes.h"

#include "classify/classify.h"
#include "rules/rules_bind.h"

#include <stdio.h>
#include <string.h>

/* The KEY= of each term; SIZE has none (it is positional). */
static const char *const term_keys[HB_NTERMS] = {
    NULL, "rows", "depth", "pitch", "slice", "x", "y", "z",
};

int host_bytes_parse(const cb_rules *rules, const cb_rule *rule, cb_host_bytes *h, char *err,
                     size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->buffer = rule->args[1];
    if (strcmp(rule->args[2], "reads") != 0 && strcmp(rule->args[2], "writes") != 0) {
        snprintf(err, errlen, "%s:%u: host-bytes: ACCESS must be reads or writes, not '%s'",
                 rules->path, rule->line, rule->args[2]);
        return -1;
    }
    h->writes = strcmp(rule->args[2], "writes") == 0;
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
            snprintf(err, errlen,
                     "%s:%u: host-bytes: '%s' is not rows=, depth=, pitch=, slice=, x=, y=, z= "
                     "or when=FIELD:ENUMERATOR",
                     rules->path, rule->line, arg);
            return -1;
        }
        if ((is_when && h->when_value) || (t >= 0 && h->term[t])) {
            snprintf(err, errlen, "%s:%u: host-bytes: '%.*s' given twice", rules->path,
                     rule->line, (int)klen, arg);
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

int host_bytes_enumerator(const cb_model *m, const cb_type *t, const char *name, long long *value)
{
    int e = t->kind == TY_ENUM ? model_type_enum(m, t) : -1;
    for (size_t k = 0; e >= 0 && k < m->enums[e].nitems; k++)
        if (strcmp(m->enums[e].items[k].name, name) == 0) {
            *value = m->enums[e].items[k].value;
            return 0;
        }
    return -1;
}

static const cb_type *param_type(const cb_function *f, const char *name)
{
    int i = model_param_index(f, name);
    return i < 0 ? NULL : f->params[i].type;
}

/* The type of the owner's parameter or field `name`, NULL when none. */
static const cb_type *member_type(const cb_model *m, const cb_function *f, const char *owner,
                                  const char *name)
{
    if (f)
        return param_type(f, name);
    const cb_field *fd = rules_record_field(m, owner, name);
    return fd && fd->bit_width < 0 ? fd->type : NULL;
}

static int check_rule(const cb_model *m, const cb_rules *rules, const cb_rule *rule, char *err,
                      size_t errlen)
{
    cb_host_bytes h;
    if (host_bytes_parse(rules, rule, &h, err, errlen) < 0)
        return -1;
    const char *owner = rule->args[0];
    const cb_function *f = rules_function(m, owner);
    const cb_type *bt = member_type(m, f, owner, h.buffer);
    if (!bt)
        return 0; /* the owner lacks it: rules_unmatched reports the rule */
    const char *what = f ? "parameter" : "field";
    if (bt->kind != TY_POINTER || !bt->pointee || bt->pointee->kind != TY_VOID) {
        snprintf(err, errlen, "%s:%u: host-bytes: %s '%s' of %s is not a void pointer",
                 rules->path, rule->line, what, h.buffer, owner);
        return -1;
    }
    if (h.writes && bt->pointee->is_const) {
        snprintf(err, errlen, "%s:%u: host-bytes: %s '%s' of %s is const: the driver cannot write it",
                 rules->path, rule->line, what, h.buffer, owner);
        return -1;
    }
    for (int t = 0; t < HB_NTERMS; t++) {
        if (!h.term[t])
            continue;
        if (f && t != HB_SIZE) {
            snprintf(err, errlen, "%s:%u: host-bytes: a function parameter takes only SIZE, not %s=",
                     rules->path, rule->line, term_keys[t]);
            return -1;
        }
        const cb_type *tt = member_type(m, f, owner, h.term[t]);
        if (!tt || tt->kind != TY_INT) {
            snprintf(err, errlen, "%s:%u: host-bytes: '%s' is not an integer %s of %s",
                     rules->path, rule->line, h.term[t], what, owner);
            return -1;
        }
    }
    if (!h.when_value)
        return 0;
    const cb_type *wt = f ? NULL : member_type(m, f, owner, h.when_field);
    long long v;
    if (!wt || host_bytes_enumerator(m, wt, h.when_value, &v) < 0) {
        snprintf(err, errlen, "%s:%u: host-bytes: when= needs an enum field of %s and one of its "
                 "enumerators", rules->path, rule->line, owner);
        return -1;
    }
    return 0;
}

int host_bytes_check(const cb_model *m, const cb_rules *rules, char *err, size_t errlen)
{
    for (size_t i = 0; i < rules->nrules; i++)
        if (rules->rules[i].directive == CB_D_HOST_BYTES &&
            check_rule(m, rules, &rules->rules[i], err, errlen) < 0)
            return -1;
    return 0;
}
