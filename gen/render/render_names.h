/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_names.h — the one table of the names the classify stage's kinds
 * go by outside the generator: the runtime's enumerator each is spelled
 * as in generated code (CBS_F_*, CBS_HANDLE_*, CUBIND_CB_*, CUBIND_REG_*),
 * and the word for it in `cubind classify` and in rules (host, create).
 * The registry kinds alone have their table in the rules stage
 * (rules/registry_kinds.def), since a rule names one by its enumerator.
 * The generator's C compares the enums, never these strings.
 */
#ifndef CUBIND_RENDER_NAMES_H
#define CUBIND_RENDER_NAMES_H

#include "classify/classify_records.h"
#include "classify/handles.h"
#include "rules/rules_bind.h"

/* The runtime's enumerator: "CBS_F_RECORD_ARRAY" (runtime/module/bind_struct.h). */
const char *render_field_kind(cb_field_kind k);
/* "record_array" */
const char *render_field_kind_word(cb_field_kind k);
/* "CBS_HANDLE_U64" (runtime/module/bind_support.h) */
const char *render_handle_kind(cb_handle_kind k);
/* "u64" */
const char *render_handle_kind_word(cb_handle_kind k);
/* "CUBIND_CB_HOST" (runtime/include/cubind_rt.h) */
const char *render_callback_kind(cb_callback_kind k);
/* "host", the callback rule's KIND */
const char *render_callback_kind_word(cb_callback_kind k);
/* "create", the registry-* rule's suffix */
const char *render_registry_action_word(cb_registry_action a);
/* "CUBIND_REG_GRAPH" (runtime/include/cubind_rt.h), "" for none: the
 * name rules/registry_kinds.def gives it, the rules' word too */
const char *render_registry_kind(cb_registry_kind k);

#endif
