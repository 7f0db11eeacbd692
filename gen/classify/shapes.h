/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shapes.h — the parameter shapes of shapes.def: the cb_shape enum and
 * what the other stages ask of a shape. Adding a shape is a line in
 * shapes.def (its checklist is there), never a case here.
 */
#ifndef CUBIND_SHAPES_H
#define CUBIND_SHAPES_H

/* Which side of the Python call a shape is on (shapes.def's dir). */
enum {
    SHAPE_HIDDEN = 0, /* neither: the binding sets it */
    SHAPE_IN = 1,     /* a Python argument */
    SHAPE_OUT = 2,    /* an element of the result */
    SHAPE_INOUT = SHAPE_IN | SHAPE_OUT
};

/* What a pointer count parameter of a shape becomes (shapes.def's count). */
typedef enum {
    COUNT_INOUT,    /* SH_COUNT_INOUT: in, then out, 0 by default */
    COUNT_REQUIRED, /* SH_INOUT: in, then out, required */
    COUNT_SET,      /* SH_ATTR_SIZE: set by the binding */
    COUNT_TEXT,     /* SH_TEXT_SIZE: the text buffer's size, by value
                       or by address, set by the binding */
    COUNT_LEN,      /* SH_ARRAY_LENGTH: an integer by value, the
                       array's length, set by the binding */
    COUNT_KEPT,     /* keeps the shape classify gave it */
    COUNT_NONE      /* count_index is no count */
} shape_count;

/* Whether a result holding a shape's output is a plain value (shapes.def's
 * plain). */
typedef enum {
    PLAIN_NO,
    PLAIN_YES,
    PLAIN_ELEM,  /* when its element is a plain value */
    PLAIN_CASES  /* when every attribute's value is one plain element */
} shape_plain;

/* Whether Python code may run inside the C call for a shape (shapes.def's
 * attach). */
typedef enum {
    ATTACH_NO,   /* the call detaches the thread state for it */
    ATTACH_WHEN  /* the call stays attached when its attach phase holds */
} shape_attach;

/* How a parameter crosses the boundary: one enumerator per shapes.def
 * line, in its order, then SH_UNSUPPORTED (a parameter no rule covers). */
typedef enum {
#define SHAPE(id, name, dir, count, plain, attach) id,
#include "classify/shapes.def"
#undef SHAPE
    SH_UNSUPPORTED
} cb_shape;

/* The number of shapes (SH_UNSUPPORTED not counted). */
#define SHAPES_COUNT ((int)SH_UNSUPPORTED)

/* shapes.def's name of a shape ("value", "out_borrowed"), "unsupported"
 * for SH_UNSUPPORTED. */
const char *shapes_name(cb_shape s);
/* Whether a parameter of shape s is a Python argument / part of the
 * result; SH_UNSUPPORTED is neither. */
int shapes_is_input(cb_shape s);
int shapes_is_output(cb_shape s);
/* shapes.def's count and plain columns; SH_UNSUPPORTED: COUNT_INOUT,
 * PLAIN_NO. */
shape_count shapes_count(cb_shape s);
shape_plain shapes_plain(cb_shape s);
/* shapes.def's attach column; SH_UNSUPPORTED: ATTACH_NO. */
shape_attach shapes_attach(cb_shape s);

/* The phases of shapes.def's SHAPE_PHASE list, by index (NULL past the
 * last): "decl", "in", ... */
const char *shapes_phase(int i);

#endif
