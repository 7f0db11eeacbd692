/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi.h — ABI signatures, manifests and drift reports.
 *
 * A function's signature string is
 *
 *     CUresult <abi symbol>(<parameter types>) @<proc name>/<proc version>[ layout=<hash>]
 *
 * Parameter types are spelled canonically (typedefs resolved, records by
 * name, handles as `struct TAG *`, top-level const dropped, parameter names
 * left out). <hash> is the FNV-1a 64 of the canonical layouts (size,
 * alignment, and every field's offset, bit position and canonical type,
 * field names left out) of every record reachable from the parameters: by
 * value, through pointers and arrays, through fields and nested records. A
 * change of any such record's size or of any field's offset or type changes
 * the string; renaming a field does not. Computed here (data); the templates
 * spell it into the module and the consumer header.
 *
 * The commands `manifest`, `abi-diff` and `abi-check` are declared here too
 * (abi_cmd.c); main.c only dispatches to them. abi_set.h and abi_diff.h are
 * the ABI tools' internal interfaces.
 */
#ifndef CUBIND_ABI_H
#define CUBIND_ABI_H

#include "model/model.h"

/* The signature of f (malloc'ed; the caller frees it). */
char *abi_signature(const cb_model *m, const cb_function *f);

/* Every function's signature, indexed like m->functions (one pass for the
 * renderer); free with abi_signatures_free(sigs, m->nfunctions). */
char **abi_signatures(const cb_model *m);
void abi_signatures_free(char **sigs, size_t n);

/* `cubind manifest`, `cubind abi-diff`, `cubind abi-check`: exit statuses.
 * The manifest's --rules FILE reads a library API's header as generating
 * does (its bind-header files; interop_dir, runtime/interop, on the
 * include path). */
int abi_cmd_manifest(int argc, char **argv, const char *interop_dir);
int abi_cmd_diff(int argc, char **argv);
int abi_cmd_check(int argc, char **argv);

#endif
