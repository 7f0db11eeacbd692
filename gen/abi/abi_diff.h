/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_diff.h — comparing two ABI sets (abi_set.h) and reporting the result
 * as text or JSON; internal to the generator's ABI tools.
 *
 * Breaking, for abi-diff's exit status: a removed function, a changed
 * signature, a record whose layout changed (size, alignment, or any field's
 * offset, bit position or canonical type; field renames alone are not), an
 * enum member removed or with a changed value, a removed enum. Added
 * functions, records, enums and enum members, and removed records, are
 * reported but not breaking.
 */
#ifndef CUBIND_ABI_DIFF_H
#define CUBIND_ABI_DIFF_H

#include <stdio.h>

#include "abi/abi_set.h"

typedef struct abi_diff abi_diff;

/* What changed from o to n (never NULL: out of memory aborts). */
abi_diff *abi_diff_sets(const aset *o, const aset *n);
void abi_diff_free(abi_diff *d);

/* Whether anything breaking changed; how many function entries there are. */
int abi_diff_breaking(const abi_diff *d);
size_t abi_diff_nfunctions(const abi_diff *d);

/* The report: a title line naming cmd, both sides, counts, then removed,
 * changed and added entries; records and enums only with_types. */
void abi_diff_write_text(FILE *o, const char *cmd, const aset *old, const aset *new,
                         const abi_diff *d, int with_types);
void abi_diff_write_json(FILE *f, const aset *old, const aset *new, const abi_diff *d,
                         int with_types);

#endif
