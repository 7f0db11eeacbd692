/* SPDX-License-Identifier: Apache-2.0 */
/* dump.h — writes a cb_model as JSON (`cubind dump`). */
#ifndef CUBIND_DUMP_H
#define CUBIND_DUMP_H

#include <stdio.h>

#include "model/model.h"

/* Returns 0, or -1 when writing failed. */
int dump_model(FILE *out, const cb_model *m);
/* Writes s (NULL: "") as a JSON string: quotes, escapes, ASCII controls
 * as \u escapes; other bytes as they are (UTF-8 stays UTF-8). */
void dump_json_string(FILE *o, const char *s);

#endif
