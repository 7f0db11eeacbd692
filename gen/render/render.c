/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render.c — model + classes → template values → files in the output
 * directory.
 *
 * This is where the generator computes data for the templates (names,
 * indices, ranges, literal spellings of numbers and strings); the text of
 * the generated code is all in templates/. Every output is rendered into
 * memory first; only when all rendered does render_write() write them, each
 * to a temporary file renamed over the old one, the old ones kept (linked)
 * until every rename succeeded and renamed back if one failed: a failed run
 * leaves the previous set of outputs untouched, never half of each.
 */
#define _POSIX_C_SOURCE 200809L
#include "render/render.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/abi.h"
#include "model/arena.h"
#include "util/checksum.h"
#include "render/doc_rst.h"
#include "classify/handles.h"
#include "render/render_names.h"
#include "render/render_structs.h"
#include "render/render_util.h"
#include "util/path.h"

/* A C declaration of something of type `spelling`, for driver/c_decl.c:
 * a function pointer spelled out ("int (*)(void *)") puts the name inside
 * its "(*)" (type_funcptr, type_head "int ", type_tail "(void *)"); any
 * other type is type_head then the name, after a space unless the
 * spelling ends in '*' (type_spaced). */
static void set_decl_type(tv *p, const char *spelling)
{
    const char *star = strstr(spelling, "(*)");
    size_t n = strlen(spelling);
    tv_set_bool(p, "type_funcptr", star != NULL);
    tv_set(p, "type_head", star ? tv_strf("%.*s", (int)(star - spelling), spelling) : tv_str(spelling));
    tv_set_str(p, "type_tail", star ? star + 3 : "");
    tv_set_bool(p, "type_spaced", !star && !(n && spelling[n - 1] == '*'));
}

/* The parameters of f as driver/c_params.c declares them: {cname, type},
 * the type as set_decl_type splits it. */
static tv *c_params_value(const cb_function *f)
{
    tv *list = tv_list();
    for (size_t i = 0; i < f->nparams; i++) {
        tv *p = tv_map();
        tv_set_str(p, "cname", f->params[i].name);
        tv_set_str(p, "type", f->params[i].type->spelling);
        set_decl_type(p, f->params[i].type->spelling);
        tv_push(list, p);
    }
    return list;
}

/* ---- Python names (python-names rule) -------------------------------- */

/* How many leading characters every enumerator of e shares, cut after an
 * underscore (NVJITLINK_INPUT_ of NVJITLINK_INPUT_PTX ...; a lone
 * enumerator's all but its last word: CUFILE_ of CUFILE_BATCH); 0 for an
 * enum without enumerators. */
static size_t shared_prefix(const cb_enum *e)
{
    if (e->nitems < 1)
        return 0;
    size_t n = strlen(e->items[0].name);
    for (size_t k = 1; k < e->nitems; k++) {
        size_t i = 0;
        while (i < n && e->items[k].name[i] == e->items[0].name[i])
            i++;
        n = i;
    }
    while (n && e->items[0].name[n - 1] != '_')
        n--;
    return n;
}

/* shared_prefix when the API asks for snake names, else 0. */
static size_t enum_common_prefix(const cb_api *api, const cb_enum *e)
{
    return api->snake ? shared_prefix(e) : 0;
}

/* strdup, out of memory fatal (arena_oom). */
static char *dup_or_die(const char *s)
{
    char *d = strdup(s);
    if (!d)
        arena_oom();
    return d;
}

/* The words of enum e's class name in upper snake case (COOLER_TARGET of
 * nvmlCoolerTarget_t's CoolerTarget); the caller frees. */
static char *enum_class_words(const cb_api *api, const cb_enum *e)
{
    char *cls = rules_type_pyname(api, e->name);
    size_t ncls = strlen(api->name_prefix);
    const char *base = cls ? cls : strncmp(e->name, api->name_prefix, ncls) == 0 ? e->name + ncls : e->name;
    char *words = rules_python_name(api, base);
    for (char *p = words; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    free(cls);
    return words;
}

/* REST (a member's name less the enum-prefix) less the words W where they
 * stand whole: "W_" at its start (VALUE_TYPE_DOUBLE -> DOUBLE) or "_W_"
 * in its middle (THERMAL_COOLER_TARGET_NONE -> THERMAL_NONE), something
 * left after them; NULL when W is not there so. The caller frees. */
static char *without_words(const char *rest, const char *w)
{
    size_t n = strlen(w);
    if (!n)
        return NULL;
    if (strncmp(rest, w, n) == 0 && rest[n] == '_' && rest[n + 1])
        return dup_or_die(rest + n + 1);
    for (const char *p = strchr(rest, '_'); p; p = strchr(p + 1, '_')) {
        if (strncmp(p + 1, w, n) == 0 && p[1 + n] == '_' && p[2 + n]) {
            size_t head = (size_t)(p - rest) + 1; /* through the '_' */
            char *s = malloc(strlen(rest) - n);
            if (!s)
                arena_oom();
            memcpy(s, rest, head);
            strcpy(s + head, p + 2 + n);
            return s;
        }
    }
    return NULL;
}

/* Whether removing W from every member of e that has the enum-prefix
 * leaves each an identifier (none starting with a digit). */
static int words_leave_identifiers(const cb_api *api, const cb_enum *e, const char *w)
{
    size_t np = strlen(api->enum_prefix);
    int ok = 1;
    for (size_t k = 0; ok && k < e->nitems; k++) {
        if (strncmp(e->items[k].name, api->enum_prefix, np) != 0)
            continue;
        char *s = without_words(e->items[k].name + np, w);
        ok = !s || !isdigit((unsigned char)s[0]);
        free(s);
    }
    return ok;
}

/* The words every member of e loses under an enum-prefix rule, as
 * cuda.bindings.nvml names them: the class's name (enum_class_words),
 * or, where that would leave a member starting with a digit
 * (NVML_NVLINK_VERSION_1_0 of NvlinkVersion), all its words but the last,
 * for every member alike (VERSION_1_0 and VERSION_INVALID); "" when even
 * that would. The caller frees. */
static char *enum_lost_words(const cb_api *api, const cb_enum *e)
{
    char *w = enum_class_words(api, e);
    if (words_leave_identifiers(api, e, w))
        return w;
    char *last = strrchr(w, '_');
    *(last ? last : w) = '\0';
    if (!words_leave_identifiers(api, e, w))
        *w = '\0';
    return w;
}

/* The Python name of member k of e (the caller frees): under an
 * enum-prefix rule (PREFIX), a member with PREFIX loses it and the words
 * LOST (enum_lost_words) where they stand whole (NVML_VALUE_TYPE_DOUBLE of
 * ValueType -> DOUBLE), or PREFIX only (NVML_BRAND_TESLA of BrandType ->
 * BRAND_TESLA); without the rule, or for a member lacking PREFIX, it
 * loses `common` characters (enum_common_prefix). */
static char *enum_member_pyname(const cb_api *api, const cb_enum *e, size_t k, size_t common,
                                const char *lost)
{
    const char *name = e->items[k].name;
    size_t np = api->enum_prefix ? strlen(api->enum_prefix) : 0;
    if (!np || strncmp(name, api->enum_prefix, np) != 0 || !name[np])
        return dup_or_die(name + common);
    char *s = without_words(name + np, lost);
    return s ? s : dup_or_die(name + np);
}

/* Sets key of v to an enum class's Python name (rules_enum_pyname). */
static void set_enum_pyname(tv *v, const char *key, const cb_api *api, const char *name)
{
    char *py = rules_enum_pyname(api, name);
    tv_set_str(v, key, py);
    free(py);
}

/* The same for enum e: a define-enum rule's class keeps its name. */
static void set_enum_class(tv *v, const char *key, const cb_api *api, const cb_enum *e)
{
    if (e->defined_by)
        tv_set_str(v, key, e->name);
    else
        set_enum_pyname(v, key, api, e->name);
}

/* ---- functions ---------------------------------------------------------- */

/* A type's spelling without its own const ("const CUgraphNode" →
 * "CUgraphNode", but "const void *" stays): the type of a local the call's
 * array is built in. */
static const char *unqualified(const cb_type *t)
{
    const char *s = t->spelling;
    return t->is_const && strncmp(s, "const ", 6) == 0 ? s + 6 : s;
}

/* "shape_template": the partial of shape s (templates/shapes/<name>.tmpl
 * of shapes.def), which every phase renders with {{>*shape_template}}. */
static void set_shape_template(tv *p, cb_shape s)
{
    tv_set_strf(p, "shape_template", "shapes/%s", shapes_name(s));
}

/* The shape's template (set_shape_template), one boolean per element
 * kind and the direction: every key is set for every parameter. An
 * EK_HANDLE whose class holds no pointer (classify's pointer_handle) is
 * spelled as a value handle. */
static void set_shape_flags(tv *p, const cb_pclass *pc)
{
    set_shape_template(p, pc->shape);
    cb_ekind e = pc->elem;
    tv_set_bool(p, "ek_signed", e == EK_INT && pc->is_signed);
    tv_set_bool(p, "ek_unsigned", e == EK_INT && !pc->is_signed);
    tv_set_bool(p, "ek_float", e == EK_FLOAT);
    tv_set_bool(p, "ek_enum", e == EK_ENUM);
    tv_set_bool(p, "ek_handle_pointer", e == EK_HANDLE && pc->pointer_handle);
    tv_set_bool(p, "ek_value_handle", e == EK_VALUE_HANDLE || (e == EK_HANDLE && !pc->pointer_handle));
    tv_set_bool(p, "ek_struct", e == EK_STRUCT);
    tv_set_bool(p, "ek_pointer", e == EK_POINTER);
    tv_set_bool(p, "ek_bool", e == EK_BOOL);
    tv_set_bool(p, "has_output_field", pc->output_field != NULL);
    tv_set_str(p, "output_field", pc->output_field ? pc->output_field : "");
    tv_set_bool(p, "has_output_count", pc->output_count != NULL);
    tv_set_str(p, "output_count", pc->output_count ? pc->output_count : "");
    /* output-tuple: its items, each {field, has_count, count} */
    tv_set_bool(p, "has_output_tuple", pc->noutput_items > 0);
    tv_set_bool(p, "returns_struct", !pc->output_field && !pc->noutput_items);
    tv_set_int(p, "noutput_items", (long long)pc->noutput_items);
    tv *items = tv_list();
    for (size_t i = 0; i < pc->noutput_items; i++) {
        const cb_output_item *it = &pc->output_items[i];
        tv *iv = tv_map();
        tv_set_str(iv, "field", it->field);
        tv_set_bool(iv, "has_count", it->count != NULL);
        tv_set_str(iv, "count", it->count ? it->count : "");
        tv_push(items, iv);
    }
    tv_set(p, "output_items", items);
    tv_set_bool(p, "ek_string", e == EK_STRING);
    tv_set_bool(p, "ek_cstring", e == EK_CSTRING);
    tv_set_bool(p, "is_input", classify_is_input(pc));
    tv_set_bool(p, "is_output", classify_is_output(pc));
}

/* Position of parameter k among the function's Python inputs. */
static int in_index_of(const cb_fclass *fc, int k)
{
    int n = 0;
    for (int i = 0; i < k; i++)
        n += classify_is_input(&fc->params[i]);
    return n;
}

/* Parameter k as another parameter's template names it: its C name and
 * its shape's template, whose value phase spells the C expression of its
 * value (templates/driver/param_value.c). */
static tv *param_ref(const cb_fclass *fc, int k)
{
    tv *r = tv_map();
    tv_set_str(r, "cname", fc->params[k].param->name);
    set_shape_template(r, fc->params[k].shape);
    return r;
}

/* The count parameter of pc as a list of one param_ref, empty when pc has
 * none (templates/driver/count_value.c gives 0 then). */
static tv *count_ref(const cb_fclass *fc, const cb_pclass *pc)
{
    tv *list = tv_list();
    if (pc->count_index >= 0 && shapes_count(pc->shape) != COUNT_NONE)
        tv_push(list, param_ref(fc, pc->count_index));
    return list;
}

/* Bytes of the value buffer of an attribute parameter: 64, or its longest
 * string case. */
static long long attr_buffer_size(const cb_pclass *pc)
{
    long long n = 64;
    for (size_t i = 0; i < pc->nattr_cases; i++)
        if (pc->attr_cases[i].elem == EK_STRING && pc->attr_cases[i].fixed_len > n)
            n = pc->attr_cases[i].fixed_len;
    return n;
}

/* A buffer-size rule's size function, for driver/size_fn_call.c.tmpl: its
 * slot, the leading parameters it shares with the function (size_args), the
 * type of its size. */
static void size_value(tv *p, const cb_fclass *fc, const cb_pclass *pc)
{
    const cb_function *sf = pc->size_fn;
    tv_set_bool(p, "has_size_fn", sf != NULL);
    if (!sf)
        return;
    tv_set_str(p, "size_name", sf->name);
    tv_set_str(p, "size_proc_name", sf->proc_name);
    tv_set_int(p, "size_proc_version", sf->proc_version);
    tv_set_str(p, "size_type", sf->params[sf->nparams - 1].type->pointee->spelling);
    tv *args = tv_list();
    for (size_t i = 0; i + 1 < sf->nparams; i++)
        tv_push(args, param_ref(fc, (int)i));
    tv_set(p, "size_args", args);
}

/* A count-bound rule's count function, for the size phase of
 * shapes/out_array.tmpl: its slot, the type of the count it writes and the
 * handle parameter it is called with (bound_arg, a list of one param_ref). */
static void count_bound_value(tv *p, const cb_fclass *fc, const cb_pclass *pc)
{
    const cb_function *bf = pc->bound_fn;
    tv_set_bool(p, "has_count_bound", bf != NULL);
    tv *arg = tv_list();
    if (bf)
        tv_push(arg, param_ref(fc, pc->bound_arg));
    tv_set(p, "bound_arg", arg);
    tv_set_str(p, "bound_name", bf ? bf->name : "");
    tv_set_str(p, "bound_proc_name", bf ? bf->proc_name : "");
    tv_set_int(p, "bound_proc_version", bf ? bf->proc_version : 0);
    tv_set_str(p, "bound_type", bf ? bf->params[0].type->pointee->spelling : "");
}

/* The stubs' Python type of field `name` of an output struct as its
 * object reads it: int for an integer, enum or (int-handles) handle, str
 * for a char array (text under chars-length), the class of the records a
 * pointer field points at, Any for the rest. */
static const char *field_pytype(const cb_model *m, const cb_api *api, const cb_pclass *pc,
                                const char *name)
{
    const cb_field *f = pc->record_index >= 0 ? model_field_named(m, &m->records[pc->record_index], name)
                                              : NULL;
    if (!f)
        return "Any";
    const cb_type *t = f->type;
    if (t->kind == TY_INT || t->kind == TY_ENUM || (t->kind == TY_HANDLE && api->int_handles))
        return "int";
    const cb_type *e = t->kind == TY_ARRAY ? t->pointee : NULL;
    if (e && model_type_is_char(e) && api->chars_length > 0)
        return "str";
    /* a pointer to records (a field-count array): its class */
    int ri = t->kind == TY_POINTER && t->pointee ? model_type_record(m, t->pointee) : -1;
    if (ri >= 0 && !m->records[ri].is_nested && !strchr(m->records[ri].name, '<'))
        return m->records[ri].name;
    return "Any";
}

static tv *param_value(const cb_model *m, const cb_api *api, const cb_fclass *fc, const cb_pclass *pc,
                       int in_index, int out_index)
{
    const cb_function *f = fc->fn;
    tv *p = tv_map();
    tv_set_str(p, "cname", pc->param->name);
    tv_set_str(p, "pyname", pc->pyname);
    /* its description for the docstrings (a param-doc rule), C-escaped */
    tv_set_bool(p, "has_doc", pc->doc != NULL);
    tv_set(p, "doc", c_string_chars(pc->doc ? pc->doc : "", pc->doc ? strlen(pc->doc) : 0));
    tv_set_str(p, "fname", f->name);
    tv_set_str(p, "ptype", pc->param->type->spelling);
    set_decl_type(p, pc->param->type->spelling);
    tv_set_bool(p, "funcptr_class", pc->funcptr_class);
    tv_set_str(p, "ctype", unqualified(pc->value));
    tv_set_str(p, "output_pytype", pc->output_field ? field_pytype(m, api, pc, pc->output_field) : "Any");
    /* output-tuple: each item's type (bytes for FIELD/COUNT) */
    tv *item_types = tv_list();
    for (size_t i = 0; i < pc->noutput_items; i++) {
        const cb_output_item *it = &pc->output_items[i];
        tv_push(item_types, tv_str(it->count ? "bytes" : field_pytype(m, api, pc, it->field)));
    }
    tv_set(p, "output_item_pytypes", item_types);
    tv_set_int(p, "in_index", in_index);
    tv_set_int(p, "out_index", out_index);
    /* an input or output after the first: the stubs put ", " before it */
    tv_set_bool(p, "later_input", in_index > 0);
    tv_set_bool(p, "later_output", out_index > 0);
    tv_set_strf(p, "umax", "%llu", pc->umax);
    tv_set(p, "smin", ll_literal(pc->smin));
    tv_set(p, "smax", ll_literal(pc->smax));
    tv_set_str(p, "enum_name", pc->enum_index >= 0 ? m->enums[pc->enum_index].name : "");
    if (pc->enum_index >= 0)
        set_enum_pyname(p, "enum_pyname", api, m->enums[pc->enum_index].name);
    else
        tv_set_str(p, "enum_pyname", "");
    tv_set_str(p, "handle_name", pc->handle ? pc->handle : "");
    /* a class implementing __cuda_stream__: the parameter also takes any
     * object that does (the stubs' _CudaStreamLike) */
    tv_set_bool(p, "stream_like", pc->stream_like);
    /* a handle-cast rule: the other class the parameter takes */
    tv_set_str(p, "cast_handle", pc->cast_from ? pc->cast_from : "");
    tv_set_bool(p, "has_cast", pc->cast_from != NULL);
    tv_set_int(p, "record_index", pc->record_index);
    tv_set_str(p, "struct_name", pc->record_index >= 0 ? m->records[pc->record_index].name : "");
    tv_set_bool(p, "struct_named", pc->record_index >= 0 && !m->records[pc->record_index].is_nested &&
                                        !strchr(m->records[pc->record_index].name, '<'));
    /* array-lengths (or a records rule's count): the array whose length it
     * is, a records array (its length in {{length_of}}_n) or a sequence */
    tv_set_str(p, "length_of", pc->length_of >= 0 ? f->params[pc->length_of].name : "");
    tv_set_bool(p, "length_of_records",
                pc->length_of >= 0 && (fc->params[pc->length_of].shape == SH_IN_RECORDS ||
                                       fc->params[pc->length_of].shape == SH_INOUT_RECORDS));
    tv_set_str(p, "length_of_pyname", pc->length_of >= 0 ? fc->params[pc->length_of].pyname : "");
    int has_count = pc->count_index >= 0 && shapes_count(pc->shape) != COUNT_NONE;
    tv_set_str(p, "count_cname", has_count ? f->params[pc->count_index].name : "");
    tv_set_str(p, "count_pyname", has_count ? fc->params[pc->count_index].pyname : "");
    /* the kernel a kernel-parameters parameter is packed for */
    int kernel = pc->kernel_index;
    tv_set_str(p, "kernel_cname", kernel >= 0 ? f->params[kernel].name : "");
    tv_set_int(p, "kernel_in_index", kernel >= 0 ? in_index_of(fc, kernel) : -1);
    const char *kernel_cast = kernel >= 0 ? fc->params[kernel].cast_from : NULL;
    tv_set_bool(p, "kernel_has_cast", kernel_cast != NULL);
    tv_set_str(p, "kernel_cast_handle", kernel_cast ? kernel_cast : "");
    tv_set_str(p, "kernel_handle", kernel >= 0 && fc->params[kernel].handle ? fc->params[kernel].handle : "");
    tv_set_bool(p, "has_params_sibling", pc->params_index >= 0);
    tv_set_str(p, "params_cname", pc->params_index >= 0 ? f->params[pc->params_index].name : "");
    /* a count read and written (a pointer): the array gets what it says
     * after, whether or not the count is returned too (length_only) */
    const cb_pclass *cnt = pc->count_index >= 0 ? &fc->params[pc->count_index] : NULL;
    tv_set_bool(p, "count_is_inout", cnt && shapes_is_input(cnt->shape) && shapes_is_output(cnt->shape));
    tv_set(p, "count_param", count_ref(fc, pc));
    tv_set_bool(p, "has_count", has_count);
    /* a struct-size rule on a fixed-rule array: the array whose bytes */
    tv_set_bool(p, "size_of_fixed", pc->size_of_fixed >= 0);
    tv_set_str(p, "size_of_cname", pc->size_of_fixed >= 0 ? f->params[pc->size_of_fixed].name : "");
    /* field-count-query: the array field of the output struct the
     * library fills, after a call that asks its count (shapes/out_struct) */
    tv_set_bool(p, "has_fill", pc->fill_field != NULL);
    tv_set_str(p, "fill_field", pc->fill_field ? pc->fill_field : "");
    tv_set_str(p, "fill_count", pc->fill_count ? pc->fill_count : "");
    /* a records rule: the integer field its sequence's values set */
    tv_set_bool(p, "has_records_field", pc->records_field != NULL);
    tv_set_str(p, "records_field", pc->records_field ? pc->records_field : "");
    /* a kernel-code function's code image: a Python buffer must hold what
     * the driver reads of it (bind_kernel_code.h) */
    tv_set_bool(p, "code_image", fc->code_image >= 0 && pc == &fc->params[fc->code_image]);
    tv_set_int(p, "fixed_len", pc->fixed_len);
    tv_set_int(p, "count_less", pc->count_less);
    tv_set_bool(p, "fixed_bytes", pc->fixed_bytes);
    int cb = pc->data_index >= 0; /* a callback: its data, stream, user object */
    /* CUBIND_CB_DESTROY for a parameter that is no callback (unused) */
    cb_callback_kind kind = cb ? pc->callback_kind : CB_CALLBACK_DESTROY;
    tv_set_str(p, "callback_kind", render_callback_kind(kind));
    tv_set_bool(p, "callback_host", cb && kind == CB_CALLBACK_HOST);
    tv_set_bool(p, "callback_stream", cb && kind == CB_CALLBACK_STREAM);
    tv_set_str(p, "data_cname", cb ? f->params[pc->data_index].name : "");
    tv_set_int(p, "data_in_index", cb ? in_index_of(fc, pc->data_index) : -1);
    tv_set_str(p, "stream_cname", cb && pc->stream_index >= 0 ? f->params[pc->stream_index].name : "");
    /* the class a stream callback's stream argument is made of (CUstream, cudaStream_t) */
    const char *stream_handle = cb && pc->stream_index >= 0 ? fc->params[pc->stream_index].handle : NULL;
    tv_set_str(p, "stream_handle", stream_handle ? stream_handle : "");
    tv_set_bool(p, "callback_destroy", cb && kind == CB_CALLBACK_DESTROY);
    tv_set_str(p, "object_cname", cb && pc->object_index >= 0 ? f->params[pc->object_index].name : "");
    tv_set_str(p, "trampoline", pc->trampoline ? pc->trampoline : "");
    tv_set_bool(p, "optional", pc->optional);
    /* an optional parameter's default: None where it means "none given"
     * (a caller's struct), else 0 */
    tv_set_str(p, "default_value", pc->shape == SH_INTO_STRUCT ? "None" : "0");
    size_value(p, fc, pc);
    count_bound_value(p, fc, pc);
    tv_set_bool(p, "writable", pc->writable);
    /* a caller's buffer whose count counts elements wider than a byte (a
     * host-bytes rule's size_t *), and their C type; else it counts bytes */
    const cb_type *pointee = pc->param->type->kind == TY_POINTER ? pc->param->type->pointee : NULL;
    int counts_elements = pc->shape == SH_IN_BUFFER && pointee && pointee->kind == TY_INT &&
                          pointee->size > 1;
    tv_set_bool(p, "counts_elements", counts_elements);
    tv_set_str(p, "elem_type", counts_elements ? unqualified(pointee) : "");
    /* an SH_TEXT_SIZE's variable: its integer type, passed by address
     * when the parameter is a pointer to it */
    int text_size = pc->shape == SH_TEXT_SIZE;
    tv_set_bool(p, "by_address", text_size && pointee);
    tv_set_str(p, "text_size_type", text_size ? unqualified(pointee ? pointee : pc->param->type) : "");
    set_shape_flags(p, pc);
    int attr = pc->attr_index >= 0; /* typed by an attribute parameter */
    tv_set_str(p, "attr_cname", attr ? f->params[pc->attr_index].name : "");
    /* an array of values: their number, the count of the attributes */
    tv_set(p, "attr_count_param", attr ? count_ref(fc, &fc->params[pc->attr_index]) : tv_list());
    /* the byte size the binding passes for an attribute value: a count
     * neither in nor out (the binding sets it, shapes.def's dir) */
    int sized = attr && cnt && !classify_is_input(cnt) && !classify_is_output(cnt);
    /* else a count that is an input: the byte size of a value, or the
     * array of sizes of an array of values (sized slots) */
    int by_input = attr && cnt && !sized;
    tv_set_str(p, "attr_sizes_cname", by_input ? f->params[pc->count_index].name : "");
    tv_set_bool(p, "attr_sized_slots", by_input);
    tv_set_int(p, "attr_buf_size", attr_buffer_size(pc));
    tv_set_bool(p, "attr_sets_size", sized);
    tv_set_bool(p, "attr_sized_buffer", by_input);
    tv *cases = tv_list();
    for (size_t i = 0; i < pc->nattr_cases; i++) {
        const cb_pclass *c = &pc->attr_cases[i];
        tv *cv = tv_map();
        tv_set_str(cv, "enumerator", pc->attr_names[i]);
        tv_set_str(cv, "fname", f->name);
        tv_set_str(cv, "pyname", pc->pyname);
        tv_set_strf(cv, "umax", "%llu", c->umax);
        tv_set(cv, "smin", ll_literal(c->smin));
        tv_set(cv, "smax", ll_literal(c->smax));
        tv_set_str(cv, "ctype", unqualified(c->value));
        tv_set_str(cv, "enum_name", c->enum_index >= 0 ? m->enums[c->enum_index].name : "");
        tv_set_str(cv, "handle_name", c->handle ? c->handle : "");
        tv_set_bool(cv, "has_cast", 0);
        tv_set_int(cv, "record_index", c->record_index);
        tv_set_bool(cv, "attr_array", c->fixed_len < 0);
        tv_set_int(cv, "fixed_len", c->fixed_len);
        tv_set_bool(cv, "attr_sets_size", sized);
        tv_set_str(cv, "count_cname", sized ? f->params[pc->count_index].name : "");
        tv_set_str(cv, "cname", pc->param->name);
        set_shape_flags(cv, c);
        tv_push(cases, cv);
    }
    tv_set(p, "attr_cases", cases);
    return p;
}

/* The registry-* rules of a function, for function.c.tmpl. */
static tv *registry_value(const cb_fclass *fc)
{
    tv *list = tv_list();
    for (size_t i = 0; i < fc->nreg; i++) {
        const cb_regact *ra = &fc->reg[i];
        tv *v = tv_map();
        tv_set_bool(v, "reg_create", ra->action == CB_REGISTRY_CREATE);
        tv_set_bool(v, "reg_owned", ra->action == CB_REGISTRY_OWNED);
        tv_set_bool(v, "reg_destroy", ra->action == CB_REGISTRY_DESTROY);
        tv_set_bool(v, "reg_keep", ra->action == CB_REGISTRY_KEEP);
        tv_set_bool(v, "reg_depend", ra->action == CB_REGISTRY_DEPEND);
        tv_set_bool(v, "reg_retain", ra->action == CB_REGISTRY_RETAIN);
        tv_set_str(v, "cname", fc->params[ra->param].param->name);
        tv_set_str(v, "kind", render_registry_kind(ra->kind));
        if (ra->action == CB_REGISTRY_KEEP || ra->action == CB_REGISTRY_RETAIN)
            tv_set_int(v, "in_index", in_index_of(fc, ra->param));
        else
            tv_set(v, "handle_param", param_ref(fc, ra->param));
        tv_set_str(v, "other_kind", ra->other >= 0 ? render_registry_kind(ra->other_kind) : "");
        /* driver/other_handle_value.c: a list of one, or 0 when empty */
        tv *other = tv_list();
        if (ra->other >= 0)
            tv_push(other, param_ref(fc, ra->other));
        tv_set(v, "other_param", other);
        tv_push(list, v);
    }
    return list;
}

/* Whether parameter k is one of the undo call's arguments. */
static int undo_passes(const cb_undo *ud, int k)
{
    for (size_t a = 0; a < ud->nargs; a++)
        if (ud->param[a] == k)
            return 1;
    return 0;
}

/* The undo rule of a function, for undo.c.tmpl: a list of one entry (the
 * undo function, its argument expressions, the registry entries its
 * success unregisters), or empty. */
static tv *undo_value(const cb_fclass *fc)
{
    tv *list = tv_list();
    const cb_undo *ud = fc->undo;
    if (!ud)
        return list;
    tv *v = tv_map();
    tv_set_str(v, "undo_name", ud->fn->name);
    tv_set_str(v, "undo_proc_name", ud->fn->proc_name);
    tv_set_int(v, "undo_proc_version", ud->fn->proc_version);
    tv *args = tv_list();
    for (size_t a = 0; a < ud->nargs; a++) {
        int k = ud->param[a];
        tv *av = k < 0 ? tv_map() : param_ref(fc, k);
        tv_set_bool(av, "is_literal", k < 0);
        tv_set_str(av, "literal", k < 0 ? ud->literal[a] : "");
        tv_push(args, av);
    }
    tv_set(v, "undo_args", args);
    tv *reg = tv_list();
    for (size_t i = 0; i < fc->nreg; i++) {
        const cb_regact *ra = &fc->reg[i];
        if (ra->action != CB_REGISTRY_CREATE || !undo_passes(ud, ra->param))
            continue;
        tv *rv = tv_map();
        tv_set_str(rv, "cname", fc->params[ra->param].param->name);
        tv_set_str(rv, "kind", render_registry_kind(ra->kind));
        tv_set(rv, "handle_param", param_ref(fc, ra->param));
        tv_push(reg, rv);
    }
    tv_set(v, "undo_registry", reg);
    tv_push(list, v);
    return list;
}

/* The error-log rule of a function, for error_log.c.tmpl: a list of one
 * entry, or empty. */
static tv *error_log_value(const cb_fclass *fc)
{
    tv *list = tv_list();
    if (!fc->log_fn || fc->log_param < 0)
        return list;
    tv *v = tv_map();
    tv_set_str(v, "log_cname", fc->params[fc->log_param].param->name);
    tv_set_str(v, "log_size_name", fc->log_size_fn->name);
    tv_set_str(v, "log_size_proc_name", fc->log_size_fn->proc_name);
    tv_set_int(v, "log_size_proc_version", fc->log_size_fn->proc_version);
    tv_set_str(v, "log_name", fc->log_fn->name);
    tv_set_str(v, "log_proc_name", fc->log_fn->proc_name);
    tv_set_int(v, "log_proc_version", fc->log_fn->proc_version);
    tv_push(list, v);
    return list;
}

static tv *function_value(const cb_model *m, const cb_api *api, const cb_facts *facts,
                          const cb_fclass *fc)
{
    const cb_function *f = fc->fn;
    tv *fn = tv_map();
    tv_set_str(fn, "name", f->name);
    char *pyname = rules_python_name(api, f->name);
    tv_set_str(fn, "pyname", pyname);
    /* the names the module gives the binding: its own, then an alias
     * rule's (both faces' method tables and stubs) */
    tv *def_names = tv_list(), *own = tv_map();
    tv_set_str(own, "def_name", pyname);
    tv_set_str(own, "doc_suffix", "");
    tv_push(def_names, own);
    const cb_rule *alias = facts->functions[f - m->functions].on[CB_D_ALIAS];
    tv *aliases = tv_list();
    if (alias) {
        tv *a = tv_map();
        tv_set_str(a, "def_name", alias->args[1]);
        tv_set_str(a, "doc_suffix", "_alias");
        tv_push(def_names, a);
        tv_push(aliases, tv_str(alias->args[1]));
    }
    tv_set(fn, "def_names", def_names);
    tv_set(fn, "aliases", aliases);
    tv_set_bool(fn, "returns_string", fc->returns_string);
    tv_set_bool(fn, "returns_void", fc->returns_void);
    tv_set_bool(fn, "returns_value", fc->returns_value);
    tv_set_bool(fn, "returns_record", fc->returns_record >= 0);
    tv_set_int(fn, "ret_record_index", fc->returns_record);
    tv_set_str(fn, "ret_record", fc->returns_record >= 0 ? m->records[fc->returns_record].name : "");
    tv_set_bool(fn, "returns_status", !fc->returns_string && !fc->returns_void &&
                                          !fc->returns_value && fc->returns_record < 0);
    /* rc starts as success where the call sets no status */
    tv_set_bool(fn, "rc_preset", fc->returns_string || fc->returns_void || fc->returns_value ||
                                     fc->returns_record >= 0);
    tv_set_bool(fn, "ret_signed", f->ret->is_signed);
    tv_set_bool(fn, "negative_errors", fc->returns_value && f->ret->is_signed && api->negative_errors);
    tv_set_str(fn, "status_field", fc->returns_field ? api->result_field : "");
    tv_set_bool(fn, "returns_field", fc->returns_field);
    /* result-detail: the struct's second status, checked after the call */
    int detail = fc->returns_field && rules_api_has_detail(api);
    tv_set_bool(fn, "has_detail", detail);
    tv_set_str(fn, "detail_field", detail ? api->detail_field : "");
    tv_set(fn, "error_log", error_log_value(fc));
    tv_set_str(fn, "proc_name", f->proc_name);
    tv_set_int(fn, "proc_version", f->proc_version);
    /* driver/c_prototype.c: the C prototype, from ret and params */
    tv_set_str(fn, "ret", f->ret->spelling);

    tv *params = tv_list(), *inputs = tv_list(), *attached = tv_list();
    int nin = 0, nout = fc->returns_string + fc->returns_value + (fc->returns_record >= 0),
        nrequired = 0;
    for (size_t i = 0; i < f->nparams; i++) {
        const cb_pclass *pc = &fc->params[i];
        int in = classify_is_input(pc), out = classify_is_output(pc);
        tv *pv = param_value(m, api, fc, pc, in ? nin : -1, out ? nout : -1);
        tv_push(params, pv);
        if (shapes_attach(pc->shape) == ATTACH_WHEN)
            tv_push(attached, param_ref(fc, (int)i));
        nout += out;
        if (in) {
            tv *iv = tv_map();
            tv_set_str(iv, "pyname", pc->pyname);
            tv_push(inputs, iv);
            nin++;
            if (!pc->optional)
                nrequired = nin;
        }
        /* its input-fields, Python parameters after it (required) */
        tv *fields = tv_list();
        for (size_t k = 0; k < pc->ninput_fields; k++) {
            const cb_input_field *in_f = &pc->input_fields[k];
            tv *fv = tv_map(), *iv = tv_map();
            tv_set_str(fv, "field", in_f->field);
            tv_set_bool(fv, "is_room", in_f->is_room);
            tv_set_str(fv, "pyname", in_f->pyname);
            tv_set_int(fv, "in_index", nin);
            tv_set_bool(fv, "later_input", nin > 0);
            tv_set_bool(fv, "optional", 0);
            tv_set_bool(fv, "has_doc", 0);
            tv_set_str(fv, "field_pytype", in_f->is_int ? "int" : in_f->is_bytes ? "bytes" : "Any");
            tv_push(fields, fv);
            tv_set_str(iv, "pyname", in_f->pyname);
            tv_push(inputs, iv);
            nrequired = ++nin;
        }
        tv_set(pv, "input_fields", fields);
    }
    tv_set_int(fn, "nrequired", nrequired);
    tv_set(fn, "params", params);
    tv_set(fn, "inputs", inputs);
    /* the parameters of an ATTACH_WHEN shape (shapes.def): the call keeps
     * the thread state attached when one's attach phase holds */
    tv_set_bool(fn, "has_attached", tv_len(attached) > 0);
    tv_set(fn, "attached", attached);
    tv_set_int(fn, "nin", nin);
    tv_set_int(fn, "nout", nout);
    tv_set_bool(fn, "has_inputs", nin > 0);
    tv_set_bool(fn, "has_outputs", nout > 0);
    tv_set_bool(fn, "cache_result", fc->cache_result);
    tv_set_bool(fn, "cache_raising_result", fc->cache_raising_result);
    tv_set_bool(fn, "one_output", nout == 1);
    tv_set_bool(fn, "many_outputs", nout > 1);
    tv_set_bool(fn, "keep_gil", fc->keep_gil);
    tv_set_bool(fn, "unloads_kernels", fc->unloads_kernels);
    tv_set_bool(fn, "code_before", fc->code_before);
    tv_set_bool(fn, "code_after", fc->code_after);
    /* the code image as a list of one param_ref (empty when none): its
     * buffer's length goes to the after hook */
    tv *image = tv_list();
    if (fc->code_image >= 0)
        tv_push(image, param_ref(fc, fc->code_image));
    tv_set(fn, "code_image_param", image);
    tv_set(fn, "registry", registry_value(fc));
    tv_set(fn, "undo", undo_value(fc));

    /* The docstrings (templates/driver/docstring.c), one per face, read
     * the parameters above, and the header's documentation when the model
     * kept it (`generate --header-docs`; model_forget_docs empties it
     * otherwise). */
    tv_set_bool(fn, "deprecated", f->deprecated);
    tv_set_bool(fn, "has_header_doc", *f->doc != '\0');
    if (*f->doc)
        tv_set(fn, "header_doc", doc_rst(f->doc));
    tv *faces = tv_list();
    for (int raising = 0; raising < 2; raising++) {
        if (!(raising ? api->raising : api->dropin))
            continue; /* a face the module does not have gets no docstring */
        tv *face = tv_map();
        tv_set_bool(face, "raising", raising);
        tv_push(faces, face);
    }
    tv_set(fn, "faces", faces);
    free(pyname);
    return fn;
}

/* ---- the C API (capsule table, consumer header) ------------------------ */

/* "DRIVER", "NVRTC": the module's name in upper case (malloc'ed), for the
 * C API's macros. */
static char *capi_prefix(const cb_api *api)
{
    const char *module = api->dropin ? api->dropin : api->raising;
    char *upper = dup_or_die(module);
    for (char *p = upper; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return upper;
}

/* The headers generated C includes after cuda.h when interop headers are
 * bound (model.h: interop_includes), each {name}; an empty list without. */
static tv *interop_includes_value(const cb_model *m)
{
    tv *list = tv_list();
    for (size_t i = 0; i < m->ninterop_includes; i++) {
        tv *h = tv_map();
        tv_set_str(h, "name", m->interop_includes[i]);
        tv_push(list, h);
    }
    return list;
}

/* Whether the C API carries function f: the functions the API's manifest
 * reads (`cubind manifest`, gen/abi/abi_cmd.c), so that `cubind abi-check`
 * finds the table and the manifest alike: the header's and, for an API whose
 * rules name bind-header files (the runtime's), theirs; the driver's
 * manifest is cuda.h's alone, without its interop headers. And only
 * functions called through a PFN type, which return a status, a pointer,
 * a struct (all zero when the entry point raised), an integer (-1 then)
 * or nothing. */
static int capi_carries(const cb_function *f, const cb_classes *c, const cb_api *api)
{
    if (f->interop && !api->nbind_headers)
        return 0;
    if (f->ret->kind != TY_ENUM && f->ret->kind != TY_POINTER && f->ret->kind != TY_RECORD &&
        f->ret->kind != TY_INT && f->ret->kind != TY_VOID)
        return 0; /* a float: no value to report an exception with */
    for (size_t k = 0; k < c->nfunctions; k++)
        if (c->functions[k].fn == f)
            return c->functions[k].callable; /* no PFN typedef: no type to call it through */
    return 0;
}

/* The consumer header's guard word of a bind-header file: its name in upper
 * case, every other character '_' ("cuda_gl_interop.h": CUDA_GL_INTEROP_H). */
static char *capi_guard(const char *file)
{
    char *g = strdup(path_base(file));
    if (!g)
        arena_oom();
    for (char *p = g; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    return g;
}

/* The file declaring f when that is a bind-header file, else "". */
static const char *capi_file(const cb_function *f)
{
    return f->interop && f->file ? path_base(f->file) : "";
}

/* One function of the C API: its parameter declarations and call
 * arguments as the header spells them, its ABI signature sig (abi.h). */
static tv *capi_entry_value(const cb_function *f, const cb_classes *c, const cb_api *api,
                            const char *sig)
{
    int field = f->ret->kind == TY_RECORD && api->result_record && f->ret->name &&
                strcmp(f->ret->name, api->result_record) == 0;
    int keep_gil = 0;
    for (size_t k = 0; k < c->nfunctions; k++)
        if (c->functions[k].fn == f)
            keep_gil = c->functions[k].supported && c->functions[k].keep_gil;
    tv *e = tv_map();
    tv_set_str(e, "name", f->name);
    tv_set_str(e, "proc_name", f->proc_name);
    tv_set_int(e, "version", f->proc_version);
    tv_set(e, "cparams", c_params_value(f));
    tv_set(e, "signature", c_string_literal(sig));
    tv_set_bool(e, "keep_gil", keep_gil);
    /* the result enum, or a pointer (an error-string function): what
     * the entry point returns, and when it raised */
    tv_set_str(e, "ret", f->ret->spelling);
    tv_set_bool(e, "ret_pointer", f->ret->kind == TY_POINTER);
    /* a result-field struct: the sentinel status in its field */
    tv_set_bool(e, "ret_field", field);
    tv_set_str(e, "ret_field_name", field ? api->result_field : "");
    tv_set_bool(e, "ret_status", f->ret->kind == TY_ENUM);
    /* any other struct returned by value: all zero when it raised */
    tv_set_bool(e, "ret_record", f->ret->kind == TY_RECORD && !field);
    /* an integer: -1 when it raised; a void function: only the exception tells */
    tv_set_bool(e, "ret_int", f->ret->kind == TY_INT);
    tv_set_bool(e, "ret_void", f->ret->kind == TY_VOID);
    return e;
}

/* The C API's functions (capi_carries), grouped by the file declaring
 * them: [{file, guard, guarded, entries}], first the header's own
 * (guarded false, file ""), then one group per bind-header file in the
 * order the header's model first names it. The module's table holds every
 * group; the consumer header declares a guarded group's functions, and
 * includes its file, only when the extension defines
 * CUBIND_<MODULE>_API_WITH_<guard> (its file may need headers the
 * toolkit lacks: cuda_gl_interop.h includes GL/gl.h). */
static tv *capi_groups_value(const cb_model *m, const cb_classes *c, const cb_api *api)
{
    char **sigs = abi_signatures(m);
    /* the files, "" first; a model's functions come from its header and
     * at most api->nbind_headers files */
    const char *files[CB_API_MAX_LIBS + 2] = {""};
    size_t nfiles = 1;
    for (size_t i = 0; i < m->nfunctions; i++) {
        const char *file = capi_file(&m->functions[i]);
        size_t k = 0;
        while (k < nfiles && strcmp(files[k], file) != 0)
            k++;
        if (k == nfiles && nfiles < sizeof files / sizeof *files &&
            capi_carries(&m->functions[i], c, api))
            files[nfiles++] = file;
    }
    tv *groups = tv_list();
    for (size_t g = 0; g < nfiles; g++) {
        tv *entries = tv_list();
        for (size_t i = 0; i < m->nfunctions; i++)
            if (capi_carries(&m->functions[i], c, api) &&
                strcmp(capi_file(&m->functions[i]), files[g]) == 0)
                tv_push(entries, capi_entry_value(&m->functions[i], c, api, sigs[i]));
        tv *gv = tv_map();
        char *guard = capi_guard(files[g]);
        tv_set_str(gv, "file", files[g]);
        tv_set_str(gv, "guard", guard);
        tv_set_bool(gv, "guarded", g > 0);
        tv_set(gv, "entries", entries);
        free(guard);
        tv_push(groups, gv);
    }
    abi_signatures_free(sigs, m->nfunctions);
    return groups;
}

/* ---- struct layout checks -------------------------------------------------- */

/* Named members nested in one another, at most (a member deeper is left
 * out of the checks). */
enum { LAYOUT_MAX_DEPTH = 32 };

/* The names of path[0..n) as a list of strings (driver/member_path.c
 * joins them). */
static tv *path_value(const char *const *path, size_t n)
{
    tv *list = tv_list();
    for (size_t i = 0; i < n; i++)
        tv_push(list, tv_str(path[i]));
    return list;
}

/* Appends {path, offset} for every named member reachable from record r
 * (bit-fields and flexible array members left out) without crossing an
 * array, offsets relative to the top:
 * path the names of the named members it is in (path[0..depth), an
 * anonymous member adds none), then its own. */
static void layout_fields(const cb_model *m, const cb_record *r, const char **path, size_t depth,
                          long long base, tv *out, long long *count)
{
    for (size_t i = 0; i < r->nfields; i++) {
        const cb_field *f = &r->fields[i];
        if (f->bit_width >= 0 || f->offset < 0)
            continue;
        if (model_field_is_flexible(f))
            continue; /* sizeof cannot name it */
        size_t d = depth;
        if (*f->name) {
            if (d == LAYOUT_MAX_DEPTH)
                continue; /* deeper than any header nests */
            path[d++] = f->name;
            tv *fv = tv_map();
            tv_set(fv, "path", path_value(path, d));
            tv_set_int(fv, "offset", base + f->offset);
            tv_push(out, fv);
            (*count)++;
        }
        if (f->nested >= 0 && f->type->kind == TY_RECORD)
            layout_fields(m, &m->records[f->nested], path, d, base + f->offset, out, count);
    }
}

/* Every top-level record with a known layout: {ctype, size, align,
 * fields: [{path, offset}]}; counts added to *nrecords and *nfields. The
 * struct layout check asserts these values; the C API's layout hashes
 * (capi_layouts partial) are computed from the same list by the compiler.
 * with_interop: also the records of the interop headers (the layout
 * check, which includes them). */
static tv *layout_records(const cb_model *m, int with_interop, long long *nrecords,
                          long long *nfields)
{
    tv *records = tv_list();
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        /* the C API's layouts are cuda.h's: a consumer includes nothing else */
        if (r->is_nested || r->size <= 0 || (r->interop && !with_interop))
            continue;
        tv *rv = tv_map();
        /* driver/record_ctype.c spells its C type */
        tv_set_bool(rv, "has_alias", r->naliases > 0);
        tv_set_str(rv, "alias", r->naliases ? r->aliases[0] : "");
        tv_set_bool(rv, "is_union", r->is_union);
        tv_set_str(rv, "tag", r->tag ? r->tag : "");
        tv_set_int(rv, "size", r->size);
        tv_set_int(rv, "align", r->align);
        tv *fields = tv_list();
        const char *path[LAYOUT_MAX_DEPTH];
        layout_fields(m, r, path, 0, 0, fields, nfields);
        tv_set(rv, "fields", fields);
        tv_push(records, rv);
        (*nrecords)++;
    }
    return records;
}

/* The function the consumer header's example calls: the first returning
 * the API's status (its result enum, or the result-field struct holding
 * it), else the first; "" when none. */
static const char *capi_example(const cb_model *m, const cb_api *api)
{
    const char *status = api->result_field ? api->result_record : api->result;
    for (size_t i = 0; status && i < m->nfunctions; i++)
        if (strcmp(m->functions[i].ret->spelling, status) == 0)
            return m->functions[i].name;
    return m->nfunctions ? m->functions[0].name : "";
}

/* What the C API's templates read of the API (capi_types.c.tmpl). */
static void capi_api_value(tv *root, const cb_model *m, const cb_classes *c, const cb_api *api)
{
    char *upper = capi_prefix(api);
    tv_set_str(root, "capi_prefix", upper);
    free(upper);
    tv_set_str(root, "module", api->dropin ? api->dropin : api->raising);
    tv_set_str(root, "result_type", api->result);
    tv_set_str(root, "capi_sentinel", api->capi_sentinel);
    /* result-field: the functions return that struct, the status (and
     * the sentinel) in its field */
    tv_set_bool(root, "has_result_field", api->result_field != NULL);
    tv_set_str(root, "result_record", api->result_field ? api->result_record : "");
    tv_set_str(root, "result_field", api->result_field ? api->result_field : "");
    tv_set_str(root, "capi_example", capi_example(m, api));
    tv_set(root, "capi_groups", capi_groups_value(m, c, api));
    long long nrecords = 0, nfields = 0;
    tv_set(root, "layouts", layout_records(m, 0, &nrecords, &nfields));
}

static tv *consumer_context(const cb_model *m, const cb_classes *c, const cb_api *api)
{
    tv *root = tv_map();
    capi_api_value(root, m, c, api);
    tv_set_str(root, "header", path_base(m->header));
    tv_set_int(root, "cuda_version", m->cuda_version);
    return root;
}

/* ---- the driver module ------------------------------------------------ */

static tv *enums_value(const cb_model *m, const cb_api *api)
{
    tv *list = tv_list();
    for (size_t i = 0; i < m->nenums; i++) {
        const cb_enum *e = &m->enums[i];
        size_t cut = enum_common_prefix(api, e);
        char *lost = api->enum_prefix ? enum_lost_words(api, e) : NULL;
        tv *ev = tv_map();
        tv_set_int(ev, "index", (long long)i);
        tv_set_str(ev, "name", e->name);
        set_enum_class(ev, "pyname", api, e);
        tv_set_bool(ev, "from_macros", e->defined_by != NULL);
        tv_set_str(ev, "defined_by", e->defined_by ? e->defined_by : "");
        tv_set_int(ev, "nitems", (long long)e->nitems);
        tv_set_bool(ev, "has_doc", *e->doc != '\0');
        tv_set(ev, "doc", c_string_literal(e->doc));
        tv *items = tv_list();
        for (size_t k = 0; k < e->nitems; k++) {
            tv *it = tv_map();
            tv_set_str(it, "name", e->items[k].name);
            if (e->items[k].pyname) {
                tv_set_str(it, "pyname", e->items[k].pyname);
            } else {
                char *py = enum_member_pyname(api, e, k, cut, lost);
                tv_set_str(it, "pyname", py);
                free(py);
            }
            set_enum_class(it, "enum_class", api, e);
            tv_set(it, "value", ll_literal(e->items[k].value));
            tv_push(items, it);
        }
        tv_set(ev, "items", items);
        free(lost);
        tv *aliases = tv_list();
        for (size_t a = 0; a < e->naliases; a++) {
            tv *av = tv_map();
            tv_set_str(av, "name", e->aliases[a]);
            tv_set_str(av, "target", e->name);
            set_enum_class(av, "target_pyname", api, e);
            tv_set_int(av, "index", (long long)i);
            tv_push(aliases, av);
        }
        tv_set(ev, "aliases", aliases);
        tv_push(list, ev);
    }
    return list;
}

static tv *macros_value(const cb_model *m)
{
    tv *list = tv_list();
    for (size_t i = 0; i < m->nmacros; i++) {
        tv *mv = tv_map();
        tv_set_str(mv, "name", m->macros[i].name);
        tv_set(mv, "value", ll_literal(m->macros[i].value));
        tv_set_int(mv, "is_unsigned", m->macros[i].is_unsigned);
        tv_push(list, mv);
    }
    return list;
}

/* The maker rules (rules_bind.h): NAME(PARAM, ...) returning a new object
 * of struct class `index` (model.records' order) with each field set. */
static tv *makers_value(const cb_model *m, const cb_facts *facts)
{
    tv *list = tv_list();
    for (size_t i = 0; i < facts->nmakers; i++) {
        const cb_maker_fact *mk = &facts->makers[i];
        tv *v = tv_map();
        tv_set_str(v, "name", mk->name);
        tv_set_int(v, "index", (long long)mk->record);
        tv_set_str(v, "record", m->records[mk->record].name);
        tv_set_int(v, "nparams", (long long)mk->nparams);
        tv *params = tv_list();
        for (size_t k = 0; k < mk->nparams; k++) {
            tv *p = tv_map();
            tv_set_str(p, "param", mk->params[k]);
            tv_set_str(p, "field", mk->fields[k]);
            tv_push(params, p);
        }
        tv_set(v, "params", params);
        tv_push(list, v);
    }
    return list;
}

static tv *procs_value(const cb_model *m)
{
    tv *list = tv_list();
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        tv *p = tv_map();
        tv_set_int(p, "index", (long long)i);
        tv_set_str(p, "name", f->name);
        tv_set_str(p, "proc_name", f->proc_name);
        tv_set_int(p, "version", f->proc_version);
        /* a library's entry point type (the driver's come from cudaTypedefs.h) */
        tv_set(p, "cparams", c_params_value(f));
        tv_set_str(p, "ret", f->ret->spelling);
        tv_push(list, p);
    }
    return list;
}

/* The API a rules file names (rules.h: module, result, error-class, ...). */
static void api_value(tv *root, const cb_api *api)
{
    tv_set_str(root, "module", api->dropin ? api->dropin : api->raising);
    tv_set_bool(root, "has_dropin", api->dropin != NULL);
    tv_set_str(root, "raising_module", api->raising ? api->raising : "");
    tv_set_bool(root, "has_raising", api->raising != NULL);
    tv_set_str(root, "result_type", api->result);
    set_enum_pyname(root, "result_pyname", api, api->result);
    tv_set_str(root, "success", api->success);
    tv_set_str(root, "error_class", api->error_class);
    tv_set_str(root, "error_base", api->error_base ? api->error_base : "");
    tv_set_bool(root, "is_library", api->is_library);
    tv_set_bool(root, "is_driver", !api->is_library);
    tv_set_bool(root, "has_error_string", api->error_string != NULL);
    tv_set_bool(root, "has_result_detail", rules_api_has_detail(api));
    tv_set_str(root, "detail_attr", rules_api_has_detail(api) ? api->detail_attr : "");
    tv_set_str(root, "error_string", api->error_string ? api->error_string : "");
    tv_set_str(root, "library_env", api->env ? api->env : "");
    tv_set_str(root, "library_bundled", api->bundled ? api->bundled : "");
    tv_set_bool(root, "str_results", api->str_results);
    tv_set_bool(root, "enum_args_int", api->enum_args_int);
    tv_set_bool(root, "status_str", api->status_str);
    /* how a status-str class's str() begins: 'NAME (value)' unless
     * message-str, then ': message' with status-str-message */
    tv_set_bool(root, "status_str_name_value", api->status_str && !api->message_str);
    tv_set_bool(root, "status_str_message", api->status_str && (api->status_str_message || api->message_str));
    tv_set_bool(root, "buffers_not_none", api->buffers_not_none);
    tv_set_bool(root, "void_ptr_numbers", api->void_ptr_numbers);
    tv_set_bool(root, "string_addresses", api->string_addresses);
    tv_set_bool(root, "struct_addresses", api->struct_addresses);
    tv_set_bool(root, "has_chars_length", api->chars_length > 0);
    tv_set_int(root, "chars_length", api->chars_length);
    tv_set_bool(root, "has_count_query", api->count_query != NULL);
    tv_set_str(root, "count_query", api->count_query ? api->count_query : "");
    tv *libs = tv_list(), *wheels = tv_list(), *toolkit_dirs = tv_list();
    for (size_t i = 0; i < api->nlibs; i++)
        tv_push(libs, tv_str(api->libs[i]));
    for (size_t i = 0; i < api->nwheels; i++)
        tv_push(wheels, tv_str(api->wheels[i]));
    for (size_t i = 0; i < api->ntoolkit_dirs; i++)
        tv_push(toolkit_dirs, tv_str(api->toolkit_dirs[i]));
    tv_set(root, "library_files", libs);
    tv_set(root, "library_wheels", wheels);
    tv_set(root, "library_toolkit_dirs", toolkit_dirs);
}

/* The phases of a shape's template (shapes.def's SHAPE_PHASE): phase.<P>
 * a map setting phase_<P> true and every other phase_<Q> false, which
 * {{#phase.P}} pushes so that {{>*shape_template}} renders phase P only,
 * also where one phase names another parameter's value phase. */
static void phases_value(tv *root)
{
    tv *phase = tv_map();
    for (int i = 0; shapes_phase(i); i++) {
        tv *flags = tv_map();
        for (int k = 0; shapes_phase(k); k++) {
            char key[64];
            snprintf(key, sizeof key, "phase_%s", shapes_phase(k));
            tv_set_bool(flags, key, k == i);
        }
        tv_set(phase, shapes_phase(i), flags);
    }
    tv_set(root, "phase", phase);
}

/* "error_subclasses": with an error-subclasses rule, one entry per error
 * member of the result enum (every one but the success value), its C
 * name (`enumerator`) and its class's name (`name`): the member without
 * the enum's common prefix and a leading ERROR_, in CamelCase, and Error
 * (NVML_ERROR_GPU_IS_LOST -> GpuIsLostError). Empty without the rule or
 * the enum. */
static tv *error_subclasses_value(const cb_model *m, const cb_api *api)
{
    tv *list = tv_list();
    const cb_enum *e = api->error_subclasses ? model_enum(m, api->result) : NULL;
    if (!e)
        return list;
    size_t n = shared_prefix(e);
    for (size_t k = 0; k < e->nitems; k++) {
        const char *w = e->items[k].name + n;
        if (strcmp(e->items[k].name, api->success) == 0)
            continue;
        if (strncmp(w, "ERROR_", 6) == 0)
            w += 6;
        char name[256];
        size_t o = 0;
        for (int up = 1; *w && o + 6 < sizeof name; w++) {
            if (*w == '_') {
                up = 1;
                continue;
            }
            name[o++] = (char)(up ? toupper((unsigned char)*w) : tolower((unsigned char)*w));
            up = 0;
        }
        memcpy(name + o, "Error", 6);
        tv *v = tv_map();
        tv_set_str(v, "enumerator", e->items[k].name);
        tv_set_str(v, "name", name);
        tv_push(list, v);
    }
    return list;
}

/* The template data of a module. fns, when not NULL, receives the value
 * of each bound function, in the order of `functions` (c->nsupported
 * entries), for render_module to mark the unit each goes into. */
static tv *driver_context(const cb_model *m, const cb_classes *c, const cb_rules *rules, tv **fns)
{
    tv *root = tv_map();
    cb_api api;
    rules_api(rules, &api);
    api_value(root, &api);
    tv *subclasses = error_subclasses_value(m, &api);
    tv_set_bool(root, "has_error_subclasses", tv_len(subclasses) > 0);
    tv_set(root, "error_subclasses", subclasses);
    const cb_function *es = c->facts->error_string_fn;
    tv_set_str(root, "error_string_proc_name", es ? es->proc_name : "");
    tv_set_int(root, "error_string_proc_version", es ? es->proc_version : 0);
    const cb_function *inl = c->facts->error_string_inline_fn;
    tv_set_bool(root, "has_error_string_inline", inl != NULL);
    tv_set_str(root, "error_string_inline", inl ? inl->name : "");
    /* also bound, as an error-string function is: its Python name loses
     * the API's prefix matched ignoring case, as a type's does
     * (cufileop_status_error -> op_status_error) */
    char *inl_stem = inl ? rules_type_pyname(&api, inl->name) : NULL;
    char *inl_py = inl ? rules_python_name(&api, inl_stem ? inl_stem : inl->name) : NULL;
    tv_set_str(root, "error_string_inline_py", inl_py ? inl_py : "");
    free(inl_py);
    free(inl_stem);
    /* status-str-message: the result-detail (a CUDA driver status) prints
     * after the message */
    tv_set_bool(root, "status_str_cuda_status",
                api.status_str && api.status_str_message && rules_api_has_detail(&api));
    tv_set_str(root, "header", path_base(m->header));
    tv_set_int(root, "cuda_version", m->cuda_version);
    tv_set(root, "interop_includes", interop_includes_value(m));
    tv_set(root, "enums", enums_value(m, &api));
    phases_value(root);
    tv_set_int(root, "nenums", (long long)m->nenums);

    const handle_class *hc = c->handles;
    size_t nhc = c->nhandles;
    tv *handles = tv_list();
    for (size_t i = 0; i < nhc; i++) {
        tv *h = tv_map();
        tv_set_int(h, "index", (long long)i);
        tv_set_str(h, "name", hc[i].name);
        tv_set_str(h, "kind", render_handle_kind(hc[i].kind));
        tv_set_bool(h, "names_kernel", hc[i].names_kernel);
        tv_set_bool(h, "stream_protocol", hc[i].stream_protocol);
        tv_set_bool(h, "interned", hc[i].interned);
        tv_set_bool(h, "has_base", hc[i].base_module != NULL);
        tv_set_str(h, "base_module", hc[i].base_module ? hc[i].base_module : "");
        tv_set_str(h, "base_name", hc[i].base_name ? hc[i].base_name : "");
        tv_push(handles, h);
    }
    tv_set(root, "handles", handles);
    tv_set_int(root, "nhandles", (long long)nhc);
    tv_set(root, "structs", structs_value(m, c));
    tv_set_bool(root, "raising", 0);

    tv_set(root, "procs", procs_value(m));
    tv_set_int(root, "nprocs", (long long)m->nfunctions);
    tv *functions = tv_list();
    for (size_t i = 0; i < c->nfunctions; i++)
        if (c->functions[i].supported) {
            tv *fn = function_value(m, &api, c->facts, &c->functions[i]);
            if (fns)
                fns[tv_len(functions)] = fn;
            tv_push(functions, fn);
        }
    tv_set_int(root, "nbound", (long long)tv_len(functions));
    tv_set(root, "functions", functions);
    tv_set(root, "macros", macros_value(m));
    tv_set(root, "makers", makers_value(m, c->facts));
    tv_set_bool(root, "has_sizeof", api.sizeof_name != NULL);
    tv_set_str(root, "sizeof_name", api.sizeof_name ? api.sizeof_name : "");
    const cb_function *gn = c->runtime_fns.get_error_name, *gs = c->runtime_fns.get_error_string;
    tv_set_int(root, "error_name_version", gn ? gn->proc_version : 0);
    tv_set_int(root, "error_string_version", gs ? gs->proc_version : 0);
    tv_set_bool(root, "has_func_get_param_info", c->runtime_fns.func_get_param_info != NULL);
    tv_set_bool(root, "has_kernel_get_param_info", c->runtime_fns.kernel_get_param_info != NULL);
    tv_set_bool(root, "has_func_get_name", c->runtime_fns.func_get_name != NULL);
    tv_set_bool(root, "has_kernel_get_name", c->runtime_fns.kernel_get_name != NULL);
    tv_set_bool(root, "has_func_get_module", c->runtime_fns.func_get_module != NULL);
    tv_set_bool(root, "has_kernel_get_library", c->runtime_fns.kernel_get_library != NULL);
    /* cubind.launch: cuLaunchKernel's entry point, when the header has it,
     * and the other class its kernel parameter takes (a handle-cast rule). */
    const cb_function *lk = c->runtime_fns.launch_kernel;
    if (lk) {
        tv *launch = tv_map();
        tv_set_str(launch, "proc_name", lk->proc_name);
        tv_set_int(launch, "proc_version", lk->proc_version);
        tv_set_bool(launch, "has_cast", c->launch_cast != NULL);
        tv_set_str(launch, "cast_handle", c->launch_cast ? c->launch_cast : "");
        tv_set(root, "launch", launch);
    } else {
        tv_set_bool(root, "launch", 0);
    }
    capi_api_value(root, m, c, &api);
    return root;
}

static tv *layout_context(const cb_model *m)
{
    tv *root = tv_map();
    tv_set(root, "interop_includes", interop_includes_value(m));
    long long nfields = 0, nrecords = 0;
    tv_set(root, "records", layout_records(m, 1, &nrecords, &nfields));
    tv_set_int(root, "nrecords", nrecords);
    tv_set_int(root, "nfields", nfields);
    return root;
}

static tv *report_context(const cb_model *m, const cb_classes *c)
{
    tv *root = tv_map();
    tv_set_str(root, "header", path_base(m->header));
    tv_set_int(root, "nsupported", (long long)c->nsupported);
    tv_set_int(root, "nfunctions", (long long)c->nfunctions);
    tv *list = tv_list();
    for (size_t i = 0; i < c->nfunctions; i++) {
        if (c->functions[i].supported)
            continue;
        tv *u = tv_map();
        tv_set_str(u, "name", c->functions[i].fn->name);
        tv_set_str(u, "why", c->functions[i].why);
        tv_push(list, u);
    }
    tv_set(root, "unsupported", list);
    return root;
}

/* ---- outputs -------------------------------------------------------------- */

/* The generated header a file gets (checksum.h: the stamp covers the body
 * after it): a C comment, or "#" lines for stubs and text files. */
enum { HEADER_C, HEADER_HASH };

/* Renders template `name` with ctx (kept) into out->files[]: the
 * generated header with the body's checksum, then the body. */
static int render_template(render_output *out, const tmpl_set *ts, const cb_model *m, const char *tmpl,
                           const char *file, const tv *ctx, int header, char *err, size_t errlen)
{
    strbuf body = {0};
    int rc = tmpl_render(ts, tmpl, ctx, &body, err, errlen);
    if (rc < 0) {
        sb_free(&body);
        return -1;
    }
    strbuf whole = {0};
    {
        char sum[CHECKSUM_HEX + 1];
        checksum_hex(body.data ? body.data : "", body.len, sum);
        tv *h = tv_map();
        tv_set_str(h, "file", file);
        tv_set_str(h, "header", path_base(m->header));
        tv_set_int(h, "cuda_version", m->cuda_version);
        tv_set_str(h, "version_macro", m->version_macro);
        tv_set_bool(h, "has_version", *m->version_macro != 0);
        tv_set_str(h, "checksum", sum);
        rc = header == HEADER_C
                 ? tmpl_render(ts, "generated_header", h, &whole, err, errlen)
                 : tmpl_render(ts, "generated_header_hash", h, &whole, err, errlen);
        tv_free(h);
        if (rc < 0) {
            sb_free(&body);
            sb_free(&whole);
            return -1;
        }
    }
    sb_append(&whole, body.data ? body.data : "", body.len);
    sb_free(&body);
    if (whole.oom || out->nfiles == RENDER_MAX_FILES) {
        sb_free(&whole);
        snprintf(err, errlen, "%s: out of memory", file);
        return -1;
    }
    snprintf(out->names[out->nfiles], sizeof out->names[out->nfiles], "%s", file);
    out->files[out->nfiles].name = out->names[out->nfiles];
    out->files[out->nfiles].data = whole.data;
    out->files[out->nfiles].len = whole.len;
    out->nfiles++;
    return 0;
}

/* render_template, then ctx freed. */
static int render_one(render_output *out, const tmpl_set *ts, const cb_model *m, const char *tmpl,
                      const char *file, tv *ctx, int header, char *err, size_t errlen)
{
    int rc = render_template(out, ts, m, tmpl, file, ctx, header, err, errlen);
    tv_free(ctx);
    return rc;
}

/* The translation unit of each bound function (data only; the units'
 * text is the templates'): with one unit, 0 for all; with n > 1, the
 * main unit 0 keeps the tables, the capsule and init, and units 1..n-1
 * get the functions in header order, cut where the running weight (a
 * function's parameters, for what its binding's size grows with) best
 * divides the total into n-1 equal shares. Returns how many were bound. */
static size_t assign_parts(const cb_classes *c, int nparts, int *part)
{
    long long total = 0, before = 0;
    for (size_t i = 0; i < c->nfunctions; i++)
        if (c->functions[i].supported)
            total += 1 + (long long)c->functions[i].fn->nparams;
    size_t k = 0;
    for (size_t i = 0; i < c->nfunctions; i++) {
        if (!c->functions[i].supported)
            continue;
        long long w = 1 + (long long)c->functions[i].fn->nparams;
        if (nparts <= 1) {
            part[k++] = 0;
            continue;
        }
        /* the share holding this function's midpoint */
        long long share = (2 * before + w) * (nparts - 1) / (2 * total);
        part[k++] = 1 + (int)(share < nparts - 1 ? share : nparts - 2);
        before += w;
    }
    return k;
}

/* A module's translation units (a `parts` rule says how many):
 * <module>_internal.h, what they share; <module>.c, the main one; and
 * <module>_part1.c .. <module>_part<n-1>.c. One context renders them
 * all, each function's in_part set for the unit being rendered. */
static int render_module(render_output *out, const tmpl_set *ts, const cb_model *m,
                         const cb_classes *c, const cb_rules *rules, const cb_api *api,
                         char *err, size_t errlen)
{
    const char *module = api->dropin ? api->dropin : api->raising;
    tv **fns = calloc(c->nfunctions + 1, sizeof *fns);
    int *part = calloc(c->nfunctions + 1, sizeof *part);
    if (!fns || !part) {
        free(fns);
        free(part);
        snprintf(err, errlen, "%s.c: out of memory", module);
        return -1;
    }
    tv *ctx = driver_context(m, c, rules, fns);
    char header[128], file[160];
    snprintf(header, sizeof header, "%s_internal.h", module);
    tv_set_str(ctx, "internal_header", header);
    size_t nbound = assign_parts(c, api->parts, part);
    int rc = render_template(out, ts, m, "driver/internal.h", header, ctx, HEADER_C, err, errlen);
    for (int unit = 0; rc == 0 && unit < api->parts; unit++) {
        for (size_t k = 0; k < nbound; k++)
            tv_set_bool(fns[k], "in_part", part[k] == unit);
        if (unit == 0)
            snprintf(file, sizeof file, "%s.c", module);
        else
            snprintf(file, sizeof file, "%s_part%d.c", module, unit);
        rc = render_template(out, ts, m, unit == 0 ? "driver/module.c" : "driver/part.c", file,
                             ctx, HEADER_C, err, errlen);
    }
    tv_free(ctx);
    free(fns);
    free(part);
    return rc;
}

/* The typing stub of one face of an API: the module's data, read by the
 * stub templates. `raising` says what the functions return; a raising face
 * beside a drop-in module re-exports that module's classes (`reexports`),
 * the other face defines them, and holds the raising face's module object
 * as _<raising> (driver._cu, nvrtc._rtc) when there is one. */
static tv *stub_context(const cb_model *m, const cb_classes *c, const cb_rules *rules,
                        const cb_api *api, int raising)
{
    tv *root = driver_context(m, c, rules, NULL);
    tv_set_bool(root, "raising", raising);
    tv_set_str(root, "face", raising ? api->raising : api->dropin);
    tv_set_bool(root, "reexports", raising && api->dropin);
    tv_set_bool(root, "has_face_module", api->dropin && api->raising);
    return root;
}

/* The typing stubs of an API: <dropin>.pyi and <raising>.pyi, one per face
 * the API has (driver.pyi and cu.pyi, nvrtc.pyi and rtc.pyi, nvjitlink.pyi). */
static int render_stubs(render_output *out, const tmpl_set *ts, const cb_model *m,
                        const cb_classes *c, const cb_rules *rules, const cb_api *api,
                        char *err, size_t errlen)
{
    for (int raising = 0; raising < 2; raising++) {
        const char *face = raising ? api->raising : api->dropin;
        if (!face)
            continue;
        char file[128];
        snprintf(file, sizeof file, "%s.pyi", face);
        if (render_one(out, ts, m, "stubs/module.pyi", file, stub_context(m, c, rules, api, raising),
                       HEADER_HASH, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* A library API's outputs (a `library` rule): its module, its list of
 * functions not bound and its consumer header, named after the module, and
 * its stubs. */
static int render_library(render_output *out, const tmpl_set *ts, const cb_model *m,
                          const cb_classes *c, const cb_rules *rules, const cb_api *api,
                          char *err, size_t errlen)
{
    const char *module = api->dropin ? api->dropin : api->raising;
    char report[128], header[128];
    snprintf(report, sizeof report, "%s_unsupported.txt", module);
    snprintf(header, sizeof header, "cubind_%s_api.h", module);
    return render_module(out, ts, m, c, rules, api, err, errlen) < 0 ||
                   render_one(out, ts, m, "report.txt", report, report_context(m, c), HEADER_HASH,
                              err, errlen) < 0 ||
                   render_one(out, ts, m, "consumer/cubind_driver_api.h", header,
                              consumer_context(m, c, api), HEADER_C, err, errlen) < 0 ||
                   render_stubs(out, ts, m, c, rules, api, err, errlen) < 0
               ? -1
               : 0;
}

int render_all(render_output *out, const tmpl_set *ts, const cb_model *m, const cb_classes *c,
               const cb_rules *rules, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cb_api api;
    rules_api(rules, &api);
    if (api.is_library) {
        if (render_library(out, ts, m, c, rules, &api, err, errlen) < 0) {
            render_output_free(out);
            return -1;
        }
        return 0;
    }
    if (render_module(out, ts, m, c, rules, &api, err, errlen) < 0 ||
        render_one(out, ts, m, "checks/struct_layout.c", "struct_layout_check.c",
                   layout_context(m), HEADER_C, err, errlen) < 0 ||
        render_one(out, ts, m, "report.txt", "unsupported.txt", report_context(m, c), HEADER_HASH, err,
                   errlen) < 0 ||
        render_one(out, ts, m, "consumer/cubind_driver_api.h", "cubind_driver_api.h",
                   consumer_context(m, c, &api), HEADER_C, err, errlen) < 0 ||
        render_stubs(out, ts, m, c, rules, &api, err, errlen) < 0) {
        render_output_free(out);
        return -1;
    }
    return 0;
}

void render_output_free(render_output *out)
{
    for (size_t i = 0; i < out->nfiles; i++)
        free(out->files[i].data);
    out->nfiles = 0;
}

static int write_all(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int bad = w != len;
    if (fclose(f) != 0)
        bad = 1;
    return bad ? -1 : 0;
}

/* Puts the previous outputs back after renames [0, done) succeeded: what
 * existed is renamed back from its kept link, what did not is removed. */
static void render_roll_back(size_t done, char final[][4096], char kept[][4096], const int *had)
{
    for (size_t i = 0; i < done; i++) {
        if (had[i])
            rename(kept[i], final[i]);
        else
            unlink(final[i]);
    }
}

int render_write(const render_output *out, const char *dir, char *err, size_t errlen)
{
    char tmp[RENDER_MAX_FILES][4096], final[RENDER_MAX_FILES][4096],
        kept[RENDER_MAX_FILES][4096];
    int had[RENDER_MAX_FILES] = {0};
    size_t written = 0;
    for (; written < out->nfiles; written++) {
        const render_file *f = &out->files[written];
        snprintf(final[written], sizeof final[written], "%s/%s", dir, f->name);
        snprintf(tmp[written], sizeof tmp[written], "%s/.%s.tmp.%ld", dir, f->name, (long)getpid());
        snprintf(kept[written], sizeof kept[written], "%s/.%s.old.%ld", dir, f->name,
                 (long)getpid());
        if (write_all(tmp[written], f->data, f->len) < 0) {
            snprintf(err, errlen, "%s:0: cannot write: %s", final[written], strerror(errno));
            unlink(tmp[written]);
            break;
        }
    }
    if (written < out->nfiles) {
        for (size_t i = 0; i < written; i++)
            unlink(tmp[i]);
        return -1;
    }
    /* A directory in an output's place would fail its rename after the
     * earlier ones were renamed: refuse before replacing anything. Every
     * previous output is kept as a second link, so that a rename failing
     * part-way (for any other reason) can put the old set back: the
     * directory then holds the whole new set or the whole old one. */
    size_t nkept = 0;
    const char *why = NULL;
    for (; nkept < out->nfiles; nkept++) {
        struct stat st;
        if (lstat(final[nkept], &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            why = "cannot replace: is a directory";
            break;
        }
        unlink(kept[nkept]);
        if (link(final[nkept], kept[nkept]) < 0) {
            snprintf(err, errlen, "%s:0: cannot keep the previous version while replacing it: %s",
                     final[nkept], strerror(errno));
            why = "";
            break;
        }
        had[nkept] = 1;
    }
    if (why) {
        if (*why)
            snprintf(err, errlen, "%s:0: %s", final[nkept], why);
        for (size_t k = 0; k < out->nfiles; k++) {
            unlink(tmp[k]);
            if (had[k])
                unlink(kept[k]);
        }
        return -1;
    }
    /* Every temporary exists: renaming cannot run out of space. */
    for (size_t i = 0; i < out->nfiles; i++) {
        if (rename(tmp[i], final[i]) < 0) {
            snprintf(err, errlen, "%s:0: cannot rename into place: %s", final[i], strerror(errno));
            render_roll_back(i, final, kept, had);
            for (size_t k = 0; k < out->nfiles; k++) {
                unlink(tmp[k]);
                if (had[k])
                    unlink(kept[k]);
            }
            return -1;
        }
    }
    for (size_t i = 0; i < out->nfiles; i++)
        if (had[i])
            unlink(kept[i]);
    return 0;
}
