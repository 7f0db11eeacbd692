/* SPDX-License-Identifier: Apache-2.0 */
/*
 * define_enum.h — the define-enum rule (rules_directives.def): enum
 * classes made of a header's integer constants (#define constants, and
 * enumerators a later header has as constants), as cuda.bindings builds
 * nvml.FieldId from NVML_FI_* or nvml.EventType from nvmlEventType*.
 *
 *   define-enum CLASS PREFIX [STRIP] [-NAME[=MEMBER]...]
 *
 * Three steps: define_enum_check checks one line's words when the rules
 * file is read (rules_load); define_enums appends one cb_enum per CLASS
 * to the model before the rules are bound, so that every later stage
 * (classify, render, the stubs) treats it as it treats the header's
 * enums; define_enum_matches says whether one line selects a constant
 * (rules_unmatched). Invariant after define_enums: each such enum has at
 * least one item, its items' pynames are distinct Python identifiers,
 * and its name is no other enum's.
 */
#ifndef CUBIND_DEFINE_ENUM_H
#define CUBIND_DEFINE_ENUM_H

#include <stddef.h>

#include "model/model.h"
#include "rules/rules.h"

/* Checks a define-enum line's arguments (args[0..nargs-1], nargs >= 2):
 * CLASS, PREFIX and STRIP identifiers, STRIP a prefix of PREFIX, at most
 * one STRIP, each further word -NAME with NAME starting with PREFIX.
 * 0, or -1 with "path:line: message" in err. */
int define_enum_check(const char *path, unsigned line, char *const *args, size_t nargs,
                      char *err, size_t errlen);

/* Appends to m one enum per CLASS of r's define-enum rules that selects
 * at least one constant; api names the header's enums' Python classes
 * (rules_enum_pyname) a CLASS must differ from. 0, or -1 with
 * "path:line: define-enum: message" in err. */
int define_enums(const cb_rules *r, const cb_api *api, cb_model *m, char *err, size_t errlen);

/* Whether the define-enum rule selects a constant of m. */
int define_enum_matches(const cb_model *m, const cb_rule *rule);

#endif
