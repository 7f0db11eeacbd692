/* SPDX-License-Identifier: Apache-2.0 */
/* handles.c — see handles.h. */
#include "classify/handles.h"

#include <stdlib.h>
#include <string.h>

#include "model/arena.h"

static cb_handle_kind int_kind(const cb_type *t)
{
    return t->size == 8 ? CB_HANDLE_U64 : t->is_signed ? CB_HANDLE_I32 : CB_HANDLE_U32;
}

/* Whether model.handles[handle] is the type of the KERNEL parameter of a
 * kernel-params rule (CUfunction: the kernel a launch's plain values are
 * typed by). */
static int is_kernel_handle(const cb_model *m, const cb_facts *facts, size_t handle)
{
    for (size_t k = 0; k < m->nfunctions; k++) {
        const cb_function *f = &m->functions[k];
        for (size_t j = 0; j < f->nparams; j++) {
            int kernel = facts->functions[k].params[j].kernel;
            const cb_type *t = kernel >= 0 ? f->params[kernel].type : NULL;
            if (t && t->handle_index >= 0 && (size_t)t->handle_index == handle)
                return 1;
        }
    }
    return 0;
}

handle_class *handles_collect(const cb_model *m, const cb_facts *facts, size_t *count)
{
    size_t n = 0;
    handle_class *h = calloc(m->nhandles + m->ncallbacks + facts->nvalue_classes + 1, sizeof *h);
    if (!h)
        arena_oom();
    for (size_t i = 0; i < m->nhandles; i++) {
        const cb_rule *base = facts->handles[i].on[CB_D_HANDLE_BASE];
        h[n++] = (handle_class){m->handles[i].name, CB_HANDLE_POINTER,
                                is_kernel_handle(m, facts, i),
                                facts->handles[i].on[CB_D_STREAM_PROTOCOL] != NULL,
                                facts->handles[i].on[CB_D_INTERN] != NULL,
                                base ? base->args[1] : NULL, base ? base->args[2] : NULL};
    }
    for (size_t i = 0; i < m->ncallbacks; i++)
        h[n++] = (handle_class){m->callbacks[i].name, CB_HANDLE_POINTER, 0, 0, 0, NULL, NULL};
    for (size_t i = 0; i < facts->nvalue_classes; i++) {
        const cb_typedef *td = &m->typedefs[facts->value_classes[i]];
        h[n++] = (handle_class){td->name, int_kind(td->type), 0, 0,
                                facts->typedefs[facts->value_classes[i]].on[CB_D_INTERN] != NULL,
                                NULL, NULL};
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
