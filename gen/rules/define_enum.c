/* SPDX-License-Identifier: Apache-2.0 */
/*
 * define_enum.c — define-enum rules (define_enum.h): their words checked,
 * their enum classes added to the model.
 */
#define _POSIX_C_SOURCE 200809L
#include "rules/define_enum.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "util/strbuf.h"

/* Whether s is a C / Python identifier. */
static int is_identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* Whether an exclusion word's NAME (w, after its '-', up to a '=' that
 * renames it) is `name`. */
static int names(const char *w, const char *name)
{
    size_t n = strcspn(w, "=");
    return strncmp(w, name, n) == 0 && name[n] == '\0';
}

/* The member an exclusion word -NAME=MEMBER renames NAME to (w after its
 * '-'), NULL for a plain -NAME. */
static const char *renamed_to(const char *w)
{
    const char *eq = strchr(w, '=');
    return eq ? eq + 1 : NULL;
}

/* The line's exclusion word naming `name` (after its '-': NAME or
 * NAME=MEMBER), NULL when none does. */
static const char *exclusion(const cb_rule *rule, const char *name)
{
    for (size_t i = 2; i < rule->nargs; i++)
        if (rule->args[i][0] == '-' && names(rule->args[i] + 1, name))
            return rule->args[i] + 1;
    return NULL;
}

/* A define-enum line's STRIP: its third word unless that is an exclusion
 * (or absent), else PREFIX. */
static const char *rule_strip(const cb_rule *rule)
{
    return rule->nargs > 2 && rule->args[2][0] != '-' ? rule->args[2] : rule->args[1];
}

int define_enum_check(const char *path, unsigned line, char *const *args, size_t nargs,
                      char *err, size_t errlen)
{
    const char *cls = args[0], *prefix = args[1];
    if (!is_identifier(cls)) {
        snprintf(err, errlen, "%s:%u: 'define-enum' CLASS '%s' is not an identifier", path, line,
                 cls);
        return -1;
    }
    if (!is_identifier(prefix)) {
        snprintf(err, errlen, "%s:%u: 'define-enum' PREFIX '%s' is not an identifier", path,
                 line, prefix);
        return -1;
    }
    for (size_t i = 2; i < nargs; i++) {
        const char *w = args[i];
        if (w[0] == '-') {
            const char *to = renamed_to(w + 1);
            char *name = strndup(w + 1, strcspn(w + 1, "="));
            if (!name)
                arena_oom();
            int bad = !is_identifier(name) || strncmp(name, prefix, strlen(prefix)) != 0 ||
                      (to && !is_identifier(to));
            free(name);
            if (bad) {
                snprintf(err, errlen,
                         "%s:%u: 'define-enum' excludes '%s', which is no name starting "
                         "with PREFIX '%s' (or no -NAME=MEMBER of two identifiers)",
                         path, line, w + 1, prefix);
                return -1;
            }
            continue;
        }
        if (i != 2) {
            snprintf(err, errlen,
                     "%s:%u: 'define-enum' takes one STRIP, then -NAME exclusions, not '%s'",
                     path, line, w);
            return -1;
        }
        if (!is_identifier(w) || strncmp(prefix, w, strlen(w)) != 0) {
            snprintf(err, errlen, "%s:%u: 'define-enum' STRIP '%s' is not a prefix of PREFIX '%s'",
                     path, line, w, prefix);
            return -1;
        }
    }
    return 0;
}

/* Whether the line selects a constant named `name`: PREFIX..., not
 * excluded. */
static int selects_name(const cb_rule *rule, const char *name)
{
    if (strncmp(name, rule->args[1], strlen(rule->args[1])) != 0)
        return 0;
    const char *w = exclusion(rule, name);
    return !w || renamed_to(w) != NULL; /* -NAME=MEMBER keeps it */
}

/* The member name a -NAME=MEMBER word of the line gives `name`, NULL. */
static const char *rule_rename(const cb_rule *rule, const char *name)
{
    const char *w = exclusion(rule, name);
    return w ? renamed_to(w) : NULL;
}

/* Whether the line selects macro mac: an integer constant without a cast
 * that a long long holds, of a name it selects. */
static int selects(const cb_rule *rule, const cb_macro *mac)
{
    return !*mac->cast && !(mac->is_unsigned && mac->value < 0) && selects_name(rule, mac->name);
}

int define_enum_matches(const cb_model *m, const cb_rule *rule)
{
    for (size_t i = 0; i < m->nmacros; i++)
        if (selects(rule, &m->macros[i]))
            return 1;
    for (size_t i = 0; i < m->nenums; i++)
        for (size_t k = 0; !m->enums[i].defined_by && k < m->enums[i].nitems; k++)
            if (selects_name(rule, m->enums[i].items[k].name))
                return 1;
    return 0;
}

/* The member name of macro `name` under a line stripping `strip`
 * (malloc'ed): the rest of the name, in upper snake case when it has
 * lower-case letters: an underscore before each capital that follows a
 * lower-case letter or a digit (XidCriticalError -> XID_CRITICAL_ERROR,
 * PState -> PSTATE), as cuda.bindings.nvml names them. */
static char *member_name(const char *name, const char *strip)
{
    const char *rest = name + strlen(strip);
    int camel = 0;
    for (const char *c = rest; *c; c++)
        camel |= islower((unsigned char)*c) != 0;
    strbuf sb = {0};
    sb_puts(&sb, "");
    for (size_t i = 0; rest[i]; i++) {
        unsigned char c = (unsigned char)rest[i], prev = i ? (unsigned char)rest[i - 1] : 0;
        if (camel && i && isupper(c) && (islower(prev) || isdigit(prev)))
            sb_putc(&sb, '_');
        sb_putc(&sb, camel ? (char)toupper(c) : (char)c);
    }
    if (sb.oom || !sb.data)
        arena_oom();
    return sb.data;
}

/* The first define-enum rule of r naming `cls` (lines of one CLASS form
 * one enum, reported at the first). */
static const cb_rule *first_line(const cb_rules *r, const char *cls)
{
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].directive == CB_D_DEFINE_ENUM && strcmp(r->rules[i].args[0], cls) == 0)
            return &r->rules[i];
    return NULL;
}

/* Writes "path:line: define-enum: ..." of rule into err; returns -1. */
static int fail(const cb_rules *r, const cb_rule *rule, char *err, size_t errlen, const char *what,
                const char *a, const char *b)
{
    snprintf(err, errlen, "%s:%u: define-enum: ", r->path, rule->line);
    size_t n = strlen(err);
    snprintf(err + n, errlen - n, what, a, b);
    return -1;
}

/* Whether a header enum's Python class is named cls. */
static int header_enum_named(const cb_api *api, const cb_model *m, size_t nheader, const char *cls)
{
    int clash = 0;
    for (size_t i = 0; !clash && i < nheader; i++) {
        char *py = rules_enum_pyname(api, m->enums[i].name);
        clash = strcmp(py, cls) == 0 || strcmp(m->enums[i].name, cls) == 0;
        free(py);
    }
    return clash;
}

/* The first line of CLASS cls selecting the constant `name` (a macro
 * when mac is not NULL, else an enumerator), NULL when none does. */
static const cb_rule *selecting_line(const cb_rules *r, const char *cls, const char *name,
                                     const cb_macro *mac)
{
    for (size_t k = 0; k < r->nrules; k++) {
        const cb_rule *rule = &r->rules[k];
        if (rule->directive == CB_D_DEFINE_ENUM && strcmp(rule->args[0], cls) == 0 &&
            (mac ? selects(rule, mac) : selects_name(rule, name)))
            return rule;
    }
    return NULL;
}

/* Appends the constant `name` = value, selected by rule, to e (cap its
 * items' room); nothing when e has its member name with that value (a
 * header spelling one constant twice: NVML_GPU_INTSTANCE_PROFILE_CAPS_P2P
 * and, later, NVML_GPU_INSTANCE_PROFILE_CAPS_P2P). -1 with err set when
 * the member name is no identifier or e has it with another value. */
static int add_member(const cb_rules *r, const cb_rule *rule, cb_model *m, cb_enum *e,
                      size_t *cap, const char *name, long long value, char *err, size_t errlen)
{
    const char *to = rule_rename(rule, name);
    char *py = to ? strdup(to) : member_name(name, rule_strip(rule));
    if (!py)
        arena_oom();
    int bad = !is_identifier(py);
    const cb_enumerator *twice = NULL;
    for (size_t k = 0; !bad && !twice && k < e->nitems; k++)
        if (strcmp(e->items[k].pyname, py) == 0)
            twice = &e->items[k];
    if (twice && twice->value == value) {
        free(py);
        return 0;
    }
    if (bad || twice) {
        fail(r, rule, err, errlen,
             bad ? "the member name '%s' of %s is not an identifier"
                 : "the member name '%s' of %s repeats one of its class with another value",
             py, name);
        free(py);
        return -1;
    }
    cb_enumerator *it = ARENA_PUSH(m->arena, e->items, e->nitems, *cap);
    it->name = model_strdup(m, name);
    it->value = value;
    it->doc = "";
    it->pyname = model_strdup(m, py);
    free(py);
    return 0;
}

/* Builds the enum of CLASS `first->args[0]` from every line naming it
 * into e: the macros it selects in header order, then the enumerators of
 * the header's nheader enums; e->nitems 0 when no line selects one. */
static int build_enum(const cb_rules *r, const cb_rule *first, cb_model *m, size_t nheader,
                      cb_enum *e, char *err, size_t errlen)
{
    const char *cls = first->args[0];
    size_t cap = 0;
    for (size_t i = 0; i < m->nmacros; i++) {
        const cb_macro *mac = &m->macros[i];
        const cb_rule *rule = selecting_line(r, cls, mac->name, mac);
        if (rule && add_member(r, rule, m, e, &cap, mac->name, mac->value, err, errlen) < 0)
            return -1;
    }
    for (size_t i = 0; i < nheader; i++)
        for (size_t k = 0; k < m->enums[i].nitems; k++) {
            const cb_enumerator *en = &m->enums[i].items[k];
            const cb_rule *rule = selecting_line(r, cls, en->name, NULL);
            if (rule && add_member(r, rule, m, e, &cap, en->name, en->value, err, errlen) < 0)
                return -1;
        }
    if (!e->nitems)
        return 0;
    strbuf by = {0};
    sb_puts(&by, "");
    for (size_t k = 0; k < r->nrules; k++) {
        const cb_rule *rule = &r->rules[k];
        if (rule->directive == CB_D_DEFINE_ENUM && strcmp(rule->args[0], cls) == 0 &&
            define_enum_matches(m, rule)) /* the lines this header's constants meet */
            sb_printf(&by, "%s%s*", *by.data ? ", " : "", rule->args[1]);
    }
    if (by.oom || !by.data)
        arena_oom();
    e->name = model_strdup(m, cls);
    e->tag = "";
    e->is_signed = 1;
    e->size = (long long)sizeof(long long);
    e->doc = "";
    e->defined_by = model_strdup(m, by.data);
    sb_free(&by);
    return 0;
}

int define_enums(const cb_rules *r, const cb_api *api, cb_model *m, char *err, size_t errlen)
{
    size_t nheader = m->nenums, cap = m->nenums;
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *rule = &r->rules[i];
        if (rule->directive != CB_D_DEFINE_ENUM || first_line(r, rule->args[0]) != rule)
            continue;
        if (header_enum_named(api, m, nheader, rule->args[0]))
            return fail(r, rule, err, errlen, "CLASS '%s' names an enum of the header%s",
                        rule->args[0], "");
        cb_enum e = {0};
        if (build_enum(r, rule, m, nheader, &e, err, errlen) < 0)
            return -1;
        if (e.nitems) /* none selected: rules_unmatched reports the lines */
            *ARENA_PUSH(m->arena, m->enums, m->nenums, cap) = e;
    }
    return 0;
}
