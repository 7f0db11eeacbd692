/* SPDX-License-Identifier: Apache-2.0 */
/* handles.c — see handles.h. */
#include "handles.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

static const char *int_kind(const cb_type *t)
{
    return t->size == 8 ? "CBS_HANDLE_U64" : t->is_signed ? "CBS_HANDLE_I32" : "CBS_HANDLE_U32";
}

/* Whether `name` is the type of the KERNEL parameter of a kernel-params
 * rule (CUfunction: the kernel a launch's plain values are typed by). */
static int names_kernel(const cb_model *m, const cb_rules *rules, const char *name)
{
    for (size_t i = 0; i < rules->nrules; i++) {
        const cb_rule *r = &rules->rules[i];
        if (strcmp(r->directive, "kernel-params") != 0)
            continue;
        for (size_t k = 0; k < m->nfunctions; k++) {
            const cb_function *f = &m->functions[k];
            if (strcmp(f->name, r->args[0]) != 0)
                continue;
            for (size_t j = 0; j < f->nparams; j++)
                if (strcmp(f->params[j].name, r->args[2]) == 0 && f->params[j].type->name &&
                    strcmp(f->params[j].type->name, name) == 0)
                    return 1;
        }
    }
    return 0;
}

handle_class *handles_collect(const cb_model *m, const cb_rules *rules, size_t *count)
{
    size_t n = 0;
    handle_class *h = calloc(m->nhandles + m->ncallbacks + rules->nrules + 1, sizeof *h);
    if (!h)
        arena_oom();
    for (size_t i = 0; i < m->nhandles; i++)
        h[n++] = (handle_class){m->handles[i].name, "CBS_HANDLE_POINTER",
                                names_kernel(m, rules, m->handles[i].name),
                                rules_find(rules, "stream-protocol", m->handles[i].name) != NULL};
    for (size_t i = 0; i < m->ncallbacks; i++)
        h[n++] = (handle_class){m->callbacks[i].name, "CBS_HANDLE_POINTER", 0, 0};
    static const char *const directives[] = {"value-handle", "value-class"};
    for (size_t d = 0; d < 2; d++) {
        for (size_t i = 0; i < rules->nrules; i++) {
            const cb_rule *r = &rules->rules[i];
            if (strcmp(r->directive, directives[d]) != 0)
                continue;
            for (size_t k = 0; k < m->ntypedefs; k++) {
                const cb_typedef *td = &m->typedefs[k];
                if (strcmp(td->name, r->args[0]) == 0 && td->type->kind == TY_INT) {
                    h[n++] = (handle_class){td->name, int_kind(td->type), 0, 0};
                    break;
                }
            }
        }
    }
    *count = n;
    return h;
}

int handles_index(const handle_class *h, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(h[i].name, name) == 0)
            return (int)i;
    return -1;
}

int handles_is_pointer(const handle_class *h, size_t n, const char *name)
{
    int i = handles_index(h, n, name);
    return i >= 0 && strcmp(h[i].kind, "CBS_HANDLE_POINTER") == 0;
}
