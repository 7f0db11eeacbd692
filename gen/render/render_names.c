/* SPDX-License-Identifier: Apache-2.0 */
/* render_names.c — see render_names.h. */
#include "render/render_names.h"

/* Each kind's word and runtime enumerator, indexed by the enum. */
typedef struct {
    const char *word, *c;
} spelling;

static const spelling field_kinds[CB_NFIELD_KINDS] = {
    [CB_FIELD_SIGNED] = {"signed", "CBS_F_SIGNED"},
    [CB_FIELD_UNSIGNED] = {"unsigned", "CBS_F_UNSIGNED"},
    [CB_FIELD_FLOAT] = {"float", "CBS_F_FLOAT"},
    [CB_FIELD_DOUBLE] = {"double", "CBS_F_DOUBLE"},
    [CB_FIELD_ENUM] = {"enum", "CBS_F_ENUM"},
    [CB_FIELD_HANDLE] = {"handle", "CBS_F_HANDLE"},
    [CB_FIELD_VALUE_HANDLE] = {"value_handle", "CBS_F_VALUE_HANDLE"},
    [CB_FIELD_RECORD] = {"record", "CBS_F_RECORD"},
    [CB_FIELD_POINTER] = {"pointer", "CBS_F_POINTER"},
    [CB_FIELD_CHARS] = {"chars", "CBS_F_CHARS"},
    [CB_FIELD_FUNCPTR] = {"funcptr", "CBS_F_FUNCPTR"},
    [CB_FIELD_BYTES] = {"bytes", "CBS_F_BYTES"},
    [CB_FIELD_KERNEL_PARAMS] = {"kernel_params", "CBS_F_KERNEL_PARAMS"},
    [CB_FIELD_KERNEL_EXTRA] = {"kernel_extra", "CBS_F_KERNEL_EXTRA"},
    [CB_FIELD_RECORD_ARRAY] = {"record_array", "CBS_F_RECORD_ARRAY"},
    [CB_FIELD_HANDLE_ARRAY] = {"handle_array", "CBS_F_HANDLE_ARRAY"},
    [CB_FIELD_HANDLE_OUT] = {"handle_out", "CBS_F_HANDLE_OUT"},
};

static const spelling handle_kinds[CB_NHANDLE_KINDS] = {
    [CB_HANDLE_POINTER] = {"pointer", "CBS_HANDLE_POINTER"},
    [CB_HANDLE_I32] = {"i32", "CBS_HANDLE_I32"},
    [CB_HANDLE_U32] = {"u32", "CBS_HANDLE_U32"},
    [CB_HANDLE_U64] = {"u64", "CBS_HANDLE_U64"},
};

/* The runtime's enumerator of each callback kind; its word is
 * callback_kinds.def's (rules_callback_kind_name). */
static const char *const callback_kinds[CB_NCALLBACK_KINDS] = {
    [CB_CALLBACK_HOST] = "CUBIND_CB_HOST",
    [CB_CALLBACK_STREAM] = "CUBIND_CB_STREAM",
    [CB_CALLBACK_DESTROY] = "CUBIND_CB_DESTROY",
};

static const char *const registry_actions[] = {
    [CB_REGISTRY_CREATE] = "create",
    [CB_REGISTRY_OWNED] = "owned",
    [CB_REGISTRY_DESTROY] = "destroy",
    [CB_REGISTRY_KEEP] = "keep",
    [CB_REGISTRY_DEPEND] = "depend",
    [CB_REGISTRY_RETAIN] = "retain",
};

const char *render_field_kind(cb_field_kind k) { return field_kinds[k].c; }
const char *render_field_kind_word(cb_field_kind k) { return field_kinds[k].word; }
const char *render_handle_kind(cb_handle_kind k) { return handle_kinds[k].c; }
const char *render_handle_kind_word(cb_handle_kind k) { return handle_kinds[k].word; }
const char *render_callback_kind(cb_callback_kind k) { return callback_kinds[k]; }
const char *render_callback_kind_word(cb_callback_kind k) { return rules_callback_kind_name(k); }
const char *render_registry_action_word(cb_registry_action a) { return registry_actions[a]; }
/* The rules name a registry kind by its runtime enumerator: the one
 * table is rules/registry_kinds.def; "" for none (a keep rule's kind,
 * templates/driver/registry.c.tmpl). */
const char *render_registry_kind(cb_registry_kind k) { return rules_registry_kind_name(k); }
