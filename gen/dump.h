/* SPDX-License-Identifier: Apache-2.0 */
/* dump.h — writes a cb_model as JSON (`cubind dump`). */
#ifndef CUBIND_DUMP_H
#define CUBIND_DUMP_H

#include <stdio.h>

#include "model.h"

/* Returns 0, or -1 when writing failed. */
int dump_model(FILE *out, const cb_model *m);

#endif
