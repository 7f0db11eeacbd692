/*
 * classify.c — general rules deciding each parameter's kind (classify.h).
 *
 * General rules, in order:
 *  - integers, floats, enums and handles by value are inputs;
 *  - a non-const pointer to one of those is an output the call returns,
 *    unless the function also takes an element count (a parameter named
 *    num* or count that is not this one): then the pointer is an array and
 *    is not supported by these kinds;
 *  - everything else (in-structs, buffers, strings, callbacks, arrays) is
 *    unsupported for now and makes the function unsupported.
 * Integer typedefs named by a `value-handle` rule are value handles.
 */
#define _POSIX_C_SOURCE 200809L
#include "classify.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

int classify_enum_index(const cb_model *m, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < m->nenums; i++)
        if (strcmp(m->enums[i].name, name) == 0 || strcmp(m->enums[i].tag, name) == 0)
            return (int)i;
    return -1;
}

/* The enum index of an enum type, through typedef or tag name or canonical
 * spelling ("enum CUresult_enum"). */
static int enum_of(const cb_model *m, const cb_type *t)
{
    int idx = classify_enum_index(m, t->name);
    if (idx < 0 && strncmp(t->canon, "enum ", 5) == 0)
        idx = classify_enum_index(m, t->canon + 5);
    return idx;
}

static void set_range(cb_pclass *pc, const cb_type *t)
{
    int bits = (int)(t->size * 8);
    pc->is_signed = t->is_signed;
    if (t->is_signed) {
        pc->smax = bits >= 64 ? INT64_MAX : (long long)((1ULL << (bits - 1)) - 1);
        pc->smin = -pc->smax - 1;
    } else {
        pc->umax = bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
        pc->smin = 0; /* the signed view of an unsigned range, for enums */
        pc->smax = bits >= 64 ? INT64_MAX : (long long)pc->umax;
    }
}

static int is_count_name(const char *name)
{
    return (strncmp(name, "num", 3) == 0 && isupper((unsigned char)name[3])) ||
           strcmp(name, "count") == 0;
}

/* Whether some parameter other than `self` counts elements of an array. */
static int has_other_count(const cb_function *f, const cb_param *self)
{
    for (size_t i = 0; i < f->nparams; i++) {
        const cb_param *p = &f->params[i];
        if (p == self || !is_count_name(p->name))
            continue;
        const cb_type *t = p->type->kind == TY_POINTER ? p->type->pointee : p->type;
        if (t->kind == TY_INT)
            return 1;
    }
    return 0;
}

/* Kind of a value (not pointer) type, as an input; PK_UNSUPPORTED if none. */
static cb_pkind value_kind(const cb_model *m, const cb_rules *rules, const cb_type *t,
                           cb_pclass *pc)
{
    switch (t->kind) {
    case TY_INT:
        set_range(pc, t);
        if (t->name && rules_find(rules, "value-handle", t->name)) {
            pc->handle = t->name;
            return PK_IN_VALUE_HANDLE;
        }
        return PK_IN_INT;
    case TY_FLOAT:
        return PK_IN_FLOAT;
    case TY_ENUM:
        pc->enum_index = enum_of(m, t);
        if (pc->enum_index < 0)
            return PK_UNSUPPORTED;
        set_range(pc, t);
        return PK_IN_ENUM;
    case TY_HANDLE:
        pc->handle = t->name;
        return PK_IN_HANDLE;
    default:
        return PK_UNSUPPORTED;
    }
}

static const char *reason(cb_model *m, const cb_param *p, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof buf, "parameter '%s' (%s): %s", p->name, p->type->spelling, what);
    return model_strdup(m, buf);
}

static void classify_param(cb_model *m, const cb_rules *rules, const cb_function *f,
                           const cb_param *p, cb_pclass *pc, const char **why)
{
    pc->param = p;
    pc->value = p->type;
    pc->enum_index = -1;
    const cb_type *t = p->type;
    if (t->kind != TY_POINTER) {
        pc->kind = value_kind(m, rules, t, pc);
        if (pc->kind == PK_UNSUPPORTED)
            *why = reason(m, p, "no general rule for this type by value yet");
        return;
    }
    const cb_type *pt = t->pointee;
    if (pt->is_const) {
        pc->kind = PK_UNSUPPORTED;
        *why = reason(m, p, "input arrays and in-structs are not supported yet");
        return;
    }
    if (has_other_count(f, p)) {
        pc->kind = PK_UNSUPPORTED;
        *why = reason(m, p, "arrays with a count are not supported yet");
        return;
    }
    cb_pkind in = value_kind(m, rules, pt, pc);
    pc->value = pt;
    switch (in) {
    case PK_IN_INT: pc->kind = PK_OUT_INT; break;
    case PK_IN_FLOAT: pc->kind = PK_OUT_FLOAT; break;
    case PK_IN_ENUM: pc->kind = PK_OUT_ENUM; break;
    case PK_IN_HANDLE: pc->kind = PK_OUT_HANDLE; break;
    case PK_IN_VALUE_HANDLE: pc->kind = PK_OUT_VALUE_HANDLE; break;
    default:
        pc->kind = PK_UNSUPPORTED;
        *why = reason(m, p, "outputs of this type are not supported yet");
    }
}

static int is_out(cb_pkind k)
{
    return k >= PK_OUT_INT && k <= PK_OUT_VALUE_HANDLE;
}

cb_classes *classify_model(cb_model *m, const cb_rules *rules)
{
    cb_classes *c = calloc(1, sizeof *c);
    if (!c)
        arena_oom();
    c->nfunctions = m->nfunctions;
    c->functions = model_alloc(m, (m->nfunctions ? m->nfunctions : 1) * sizeof *c->functions);
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        cb_fclass *fc = &c->functions[i];
        fc->fn = f;
        fc->params = model_alloc(m, (f->nparams ? f->nparams : 1) * sizeof *fc->params);
        const char *why = NULL;
        if (f->ret->kind != TY_ENUM || classify_enum_index(m, "CUresult") != enum_of(m, f->ret))
            why = model_strdup(m, "does not return CUresult");
        for (size_t k = 0; k < f->nparams; k++) {
            const char *pwhy = NULL;
            classify_param(m, rules, f, &f->params[k], &fc->params[k], &pwhy);
            if (pwhy && !why)
                why = pwhy;
            if (is_out(fc->params[k].kind))
                fc->nout++;
            else
                fc->nin++;
        }
        if (!f->proc_version && !why)
            why = model_strdup(m, "no PFN typedef in cudaTypedefs.h matches its prototype");
        fc->supported = why == NULL;
        fc->why = why ? why : "";
        fc->keep_gil = rules_find(rules, "keep-gil", f->name) != NULL;
        if (fc->supported)
            c->nsupported++;
    }
    return c;
}

void classes_free(cb_classes *c)
{
    free(c);
}
