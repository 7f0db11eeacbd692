/* SPDX-License-Identifier: Apache-2.0 */
/* shapes.c — shapes.def as a table (shapes.h). */
#include "classify/shapes.h"

#include <stddef.h>

typedef struct {
    const char *name;
    int dir;
    shape_count count;
    shape_plain plain;
    shape_attach attach;
} shape_info;

/* Indexed by cb_shape: the enum and this table come from the same lines. */
static const shape_info shapes[] = {
#define SHAPE(id, name, dir, count, plain, attach) [id] = {#name, dir, count, plain, attach},
#include "classify/shapes.def"
#undef SHAPE
    [SH_UNSUPPORTED] = {"unsupported", SHAPE_HIDDEN, COUNT_INOUT, PLAIN_NO, ATTACH_NO},
};

static const shape_info *info(cb_shape s)
{
    return (unsigned)s <= (unsigned)SH_UNSUPPORTED ? &shapes[s] : &shapes[SH_UNSUPPORTED];
}

const char *shapes_name(cb_shape s)
{
    return info(s)->name;
}

int shapes_is_input(cb_shape s)
{
    return (info(s)->dir & SHAPE_IN) != 0;
}

int shapes_is_output(cb_shape s)
{
    return (info(s)->dir & SHAPE_OUT) != 0;
}

shape_count shapes_count(cb_shape s)
{
    return info(s)->count;
}

shape_plain shapes_plain(cb_shape s)
{
    return info(s)->plain;
}

shape_attach shapes_attach(cb_shape s)
{
    return info(s)->attach;
}

static const char *const phases[] = {
#define SHAPE_PHASE(name) #name,
#include "classify/shapes.def"
#undef SHAPE_PHASE
    NULL,
};

const char *shapes_phase(int i)
{
    return i >= 0 && i < (int)(sizeof phases / sizeof *phases) ? phases[i] : NULL;
}
