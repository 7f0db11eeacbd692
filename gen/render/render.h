/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.h — renders the templates for one model into memory, then writes
 * every file at once (temporary files renamed into place, the old ones put
 * back if any rename fails), so a failed run never leaves a half-written
 * output directory nor a mix of old and new outputs.
 */
#ifndef CUBIND_RENDER_H
#define CUBIND_RENDER_H

#include <stddef.h>

#include "classify/classify.h"
#include "model/model.h"
#include "rules/rules.h"
#include "tmpl/tmpl.h"

/* a module's units (CB_PARTS_MAX), its header, and the other outputs */
#define RENDER_MAX_FILES (CB_PARTS_MAX + 8)

typedef struct {
    const char *name;  /* file name inside the output directory */
    char *data;        /* malloc'ed */
    size_t len;
} render_file;

typedef struct {
    render_file files[RENDER_MAX_FILES];
    size_t nfiles;
    char names[RENDER_MAX_FILES][128];  /* files[i].name points to names[i] */
} render_output;

/* Renders every output; -1 with "file:line: message" in err. */
int render_all(render_output *out, const tmpl_set *ts, const cb_model *m, const cb_classes *c,
               const cb_rules *rules, char *err, size_t errlen);
/* Writes them into dir (which must exist); -1 with a message, nothing
 * replaced, when any write fails. */
int render_write(const render_output *out, const char *dir, char *err, size_t errlen);
void render_output_free(render_output *out);

#endif
