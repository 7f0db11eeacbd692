/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify_json.h — the classification of a header as JSON (`cubind
 * classify`): every function (supported or not, and why), each parameter
 * with its shape, direction (in, out, inout, none), element kind and the
 * rules that applied to it; the handle classes; every record with its
 * field classes; the rules that match nothing.
 */
#ifndef CUBIND_CLASSIFY_JSON_H
#define CUBIND_CLASSIFY_JSON_H

#include <stdio.h>

#include "classify/classify.h"

/* Writes c (classified from m) to o; 0, or -1 when writing failed. */
int classify_json(FILE *o, const cb_model *m, const cb_classes *c);

#endif
