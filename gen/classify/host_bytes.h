/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host_bytes.h — the host-bytes rules (rules_directives.def): a `void *`
 * parameter or struct field that holds host memory, whether the driver
 * reads or writes it, and the parameters or fields giving the bytes a call
 * touches there.
 * The classifier reads a function's rules (classify.h: the byte count of
 * an SH_IN_BUFFER), the struct tables a record's (render_structs.h: the
 * field's extent, checked by runtime/module/bind_struct.c at each call).
 */
#ifndef CUBIND_HOST_BYTES_H
#define CUBIND_HOST_BYTES_H

#include <stddef.h>

#include "model/model.h"
#include "rules/rules.h"

/* The terms of the bytes a call touches (rules_directives.def gives the
 * formula). */
typedef enum {
    HB_SIZE,   /* bytes of one row (the rule's SIZE) */
    HB_ROWS,
    HB_DEPTH,
    HB_PITCH,
    HB_SLICE,
    HB_X,
    HB_Y,
    HB_Z,
    HB_NTERMS
} cb_hb_term;

typedef struct {
    const char *buffer;          /* the parameter or field */
    int writes;                  /* ACCESS is `writes` */
    const char *term[HB_NTERMS]; /* the parameter/field of each term; NULL: absent */
    char when_field[64];         /* when=FIELD:ENUMERATOR, else "" */
    const char *when_value;      /* NULL when no when= */
} cb_host_bytes;

/* Splits a host-bytes rule into *h (pointers into the rule). -1 with
 * "path:line: message" in err for an ACCESS other than reads / writes, an
 * unknown KEY, a term given twice or a `when` without ENUMERATOR. */
int host_bytes_parse(const cb_rules *rules, const cb_rule *rule, cb_host_bytes *h, char *err,
                     size_t errlen);

/* Checks every host-bytes rule whose owner the model has (a rule naming a
 * function or record it lacks is left to rules_unmatched): BUFFER a
 * pointer to void, not const for `writes`; every term an integer
 * parameter or field of the owner, a function's only SIZE; `when` an enum
 * field and one of its enumerators. -1 with "path:line: message" in err. */
int host_bytes_check(const cb_model *m, const cb_rules *rules, char *err, size_t errlen);

/* The value of enumerator `name` of the enum of type t; 0 when found,
 * -1 when t is no enum of the model or lacks it. */
int host_bytes_enumerator(const cb_model *m, const cb_type *t, const char *name, long long *value);

#endif
