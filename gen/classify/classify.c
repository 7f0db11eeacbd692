/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify.c — general rules deciding how each parameter crosses the Python
 * boundary (classify.h), plus the special cases of rules.txt.
 *
 * General rules, in order, for a parameter of type P:
 *  - a value (integer, float, enum, handle, value handle) is an input;
 *  - `const char *` is an input string; `void *` / `const void *` host
 *    memory, of as many bytes as a `size_t` parameter right after it says
 *    (C's (buffer, size) pair: nvJitLinkAddData's data, size): a Python
 *    buffer must hold them; a function pointer an input address;
 *  - `const T *`: an array when a count parameter pairs with it (by name:
 *    num<Name> or count), else one struct by pointer;
 *  - `T *` (not const): an output array when a count pairs with it (an
 *    input count, or an in/out `size_t *num<Name>`), `char *` with a
 *    len/length parameter an output byte string, else one output value;
 *  - `const char **` an output string, `void **` an output address (or an
 *    array of addresses when a count pairs with it), `void *const *` and
 *    `const void *const *` an input array of addresses (counted),
 *    `const T **` (T a handle or struct) a driver-owned array whose count
 *    is an output;
 *  - `char *` counted by an in/out size (a rule pairs them): a writable
 *    buffer the caller provides, which must hold that many bytes;
 *  - anything else is unsupported, and so is its function.
 * Special cases come from rules.txt: value handles, in/inout pointers,
 * fixed-size arrays, explicit count pairings, parameter renames, values
 * typed by an attribute (sized by a count when one pairs with them).
 */
#define _POSIX_C_SOURCE 200809L
#include "classify/classify.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/arena.h"

/* The facts of parameter p of f (f a function of the facts' model). */
static const cb_param_facts *pfacts(const cb_facts *facts, const cb_function *f, const cb_param *p)
{
    return &facts->functions[f - facts->model->functions].params[p - f->params];
}

static const cb_function_facts *ffacts(const cb_facts *facts, const cb_function *f)
{
    return &facts->functions[f - facts->model->functions];
}

int classify_is_input(const cb_pclass *pc)
{
    return shapes_is_input(pc->shape);
}

int classify_is_output(const cb_pclass *pc)
{
    return shapes_is_output(pc->shape) && !pc->length_only;
}

static void set_range(cb_pclass *pc, const cb_type *t)
{
    int bits = (int)(t->size * 8);
    pc->is_signed = t->is_signed;
    if (t->is_signed) {
        pc->smax = bits >= 64 ? INT64_MAX : (long long)((1ULL << (bits - 1)) - 1);
        pc->smin = -pc->smax - 1;
    } else {
        pc->umax = bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
        pc->smin = 0; /* the signed view of an unsigned range, for enums */
        pc->smax = bits >= 64 ? INT64_MAX : (long long)pc->umax;
    }
}

/* What one value of type t is; EK_NONE when no rule covers it. */
static cb_ekind elem_kind(const cb_model *m, const cb_facts *facts, const cb_type *t,
                          cb_pclass *pc)
{
    pc->value = t;
    switch (t->kind) {
    case TY_INT:
        set_range(pc, t);
        if (t->canon && (strcmp(t->canon, "_Bool") == 0 || strcmp(t->canon, "bool") == 0))
            return EK_BOOL; /* C's bool: a Python bool out, any object's truth in */
        if (rules_type_rule(facts, CB_D_VALUE_HANDLE, t)) {
            pc->handle = t->name;
            return EK_VALUE_HANDLE;
        }
        return EK_INT;
    case TY_FLOAT:
        return EK_FLOAT;
    case TY_ENUM:
        pc->enum_index = model_type_enum(m, t);
        if (pc->enum_index < 0)
            return EK_NONE;
        set_range(pc, t);
        if (facts->api.enum_args_int) {
            /* enum-args-int: the range of the C int the library's typed
             * bindings declare, whatever the enum's own signedness */
            pc->is_signed = 1;
            pc->smin = INT32_MIN;
            pc->smax = INT32_MAX;
        }
        return EK_ENUM;
    case TY_HANDLE:
        if (facts->api.int_handles)
            return EK_POINTER; /* the API's handles are plain ints */
        pc->handle = t->name;
        return EK_HANDLE;
    case TY_RECORD:
        pc->record_index = model_type_record(m, t);
        return pc->record_index >= 0 ? EK_STRUCT : EK_NONE;
    case TY_POINTER:
        return t->pointee->kind == TY_VOID ? EK_POINTER : EK_NONE;
    default:
        return EK_NONE;
    }
}

static int is_count_name(const char *name)
{
    return (strncmp(name, "num", 3) == 0 && isupper((unsigned char)name[3])) ||
           strcmp(name, "count") == 0;
}

/* Whether integer parameter `size` is the byte size of char buffer `buf`:
 * named len or length (cuDeviceGetName's name, len), or <Stem>Size where
 * <stem> ends buf's name, letter case aside (11.x cuGraphInstantiate's
 * logBuffer, bufferSize). */
static int is_char_buffer_size(const char *size, const char *buf)
{
    if (strcmp(size, "len") == 0 || strcmp(size, "length") == 0)
        return 1;
    size_t n = strlen(size), nb = strlen(buf);
    if (n <= 4 || strcmp(size + n - 4, "Size") != 0 || n - 4 > nb)
        return 0;
    return strncasecmp(size, buf + nb - (n - 4), n - 4) == 0;
}

static int is_int_or_int_pointer(const cb_type *t)
{
    if (t->kind == TY_POINTER)
        t = t->pointee;
    return t->kind == TY_INT;
}

static size_t common_prefix(const char *a, const char *b)
{
    size_t n = 0;
    while (a[n] && b[n] && tolower((unsigned char)a[n]) == tolower((unsigned char)b[n]))
        n++;
    return n;
}

/* The count parameter paired with array parameter `self`, or -1: the rule
 * `count F P C` (or `C-N`: N fewer elements than C says) if any (its
 * fact), else the only count-named integer parameter, else the one whose
 * name (after "num") shares the longest prefix with it, or (a count-stem
 * rule) that comes right before it, named <stem>Count with <stem> a
 * prefix of its name or <stem>Size with <stem> its name
 * (count_stem_length). *less receives N
 * (0 without a rule). */
/* count-stem: the length of <stem> when `count`, the parameter right
 * before array `self`, is its count by name, else 0: <stem>Count counts an
 * array whose name starts with <stem> (NVML's infoCount, infos;
 * sessionCount, sessionInfos), <stem>Size by value an array named <stem>
 * exactly whose elements are no chars (nodeSetSize, nodeSet: elements,
 * where a char buffer's size counts bytes and has its own rules). */
static size_t count_stem_length(const cb_param *count, const cb_param *self)
{
    size_t n = strlen(count->name);
    if (n > 5 && strcmp(count->name + n - 5, "Count") == 0 &&
        common_prefix(count->name, self->name) >= n - 5)
        return n - 5;
    const cb_type *elem = self->type->kind == TY_POINTER ? self->type->pointee : NULL;
    if (n > 4 && strcmp(count->name + n - 4, "Size") == 0 && count->type->kind == TY_INT &&
        strlen(self->name) == n - 4 && strncmp(count->name, self->name, n - 4) == 0 && elem &&
        elem->kind == TY_INT && elem->size > 1)
        return n - 4;
    return 0;
}

static int paired_count_less(const cb_function *f, const cb_facts *facts, const cb_param *self,
                             int *less)
{
    const cb_param_facts *pf = pfacts(facts, f, self);
    *less = pf->count_less;
    if (pf->on[CB_D_COUNT])
        return pf->count;
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < f->nparams; i++) {
        const cb_param *p = &f->params[i];
        if (p == self || !is_int_or_int_pointer(p->type))
            continue;
        if (!is_count_name(p->name)) {
            size_t stem = facts->api.count_stem && self == p + 1 ? count_stem_length(p, self) : 0;
            if (stem && stem + 1 > best_len) {
                best = (int)i;
                best_len = stem + 1;
            }
            continue;
        }
        /* "count" counts any array; num<Name> those whose name starts with
         * Name (allowing a plural's last letter: prefetchLocIdxs), after a
         * pointer's "p" prefix (the runtime's pDependencies,
         * numDependencies). */
        int any = strcmp(p->name, "count") == 0;
        const char *stem = any ? p->name : p->name + 3;
        const char *name = self->name;
        if (!any && name[0] == 'p' && isupper((unsigned char)name[1]) &&
            common_prefix(stem, name + 1) > common_prefix(stem, name))
            name++;
        size_t len = common_prefix(stem, name) + 1;
        if (!any && len < strlen(stem))
            continue;
        if (len > best_len) {
            best = (int)i;
            best_len = len;
        }
    }
    return best;
}

static int paired_count(const cb_function *f, const cb_facts *facts, const cb_param *self)
{
    int less;
    return paired_count_less(f, facts, self, &less);
}

/* Whether p is the KERNEL of one of f's kernel-params rules. */
static int is_kernel_of_rule(const cb_function *f, const cb_facts *facts, const cb_param *p)
{
    for (size_t i = 0; i < f->nparams; i++) {
        const cb_param_facts *qf = pfacts(facts, f, &f->params[i]);
        if (qf->on[CB_D_KERNEL_PARAMS] && qf->kernel == (int)(p - f->params))
            return 1;
    }
    return 0;
}

static const char *reason(cb_model *m, const cb_param *p, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof buf, "parameter '%s' (%s): %s", p->name, p->type->spelling, what);
    return model_strdup(m, buf);
}

/* An input array of what `T *const *` p points at, counted by an integer
 * parameter: SH_IN_ARRAY with elements of kind ek and C type `spelling`
 * (T * without the const), or SH_UNSUPPORTED when no count pairs with p. */
static cb_shape counted_input_array(const cb_model *m, const cb_facts *facts, const cb_function *f,
                                    const cb_param *p, cb_pclass *pc, cb_ekind ek,
                                    const char *spelling)
{
    pc->count_index = paired_count(f, facts, p);
    if (pc->count_index < 0 || f->params[pc->count_index].type->kind != TY_INT) {
        pc->count_index = -1;
        return SH_UNSUPPORTED;
    }
    cb_type *elem = model_alloc((cb_model *)m, sizeof *elem);
    *elem = *p->type->pointee;
    elem->is_const = 0;
    elem->spelling = spelling;
    pc->value = elem;
    pc->elem = ek;
    return SH_IN_ARRAY;
}

/* Shape of a `T **` parameter; is_in: an `in` rule names it. */
static cb_shape pointer_to_pointer(const cb_model *m, const cb_facts *facts, const cb_function *f,
                                   const cb_param *p, cb_pclass *pc, int is_in)
{
    const cb_type *inner = p->type->pointee;   /* T * */
    const cb_type *target = inner->pointee;    /* T */
    if ((inner->is_const || is_in) && model_type_is_char(target) && target->is_const)
        /* const char *const * (or const char ** an `in` rule names): an
         * input array of strings when counted */
        return counted_input_array(m, facts, f, p, pc, EK_CSTRING, "const char *");
    if (inner->is_const && target->kind == TY_VOID)
        /* void *const * or const void *const *: addresses the library
         * only reads (cudaMemcpyBatchAsync's dsts and srcs), an input
         * array when counted, each element what a void ** array takes */
        return counted_input_array(m, facts, f, p, pc, EK_POINTER,
                                   target->is_const ? "const void *" : "void *");
    if (p->type->pointee->is_const)
        return SH_UNSUPPORTED;
    if (model_type_is_char(target) && target->is_const) {
        pc->value = inner;
        return SH_OUT_STRING;
    }
    if (target->kind == TY_VOID) {
        pc->elem = EK_POINTER;
        pc->value = inner;
        pc->count_index = paired_count(f, facts, p);
        if (pc->count_index >= 0 && f->params[pc->count_index].type->kind == TY_INT)
            return SH_IN_ARRAY;
        pc->count_index = -1;
        return SH_OUT;
    }
    if (target->is_const) {
        /* const T **: the driver points it at an array it owns, counted by
         * an output; the elements are copied out. */
        pc->elem = elem_kind(m, facts, target, pc);
        pc->count_index = paired_count(f, facts, p);
        if ((pc->elem == EK_HANDLE || pc->elem == EK_STRUCT) && pc->count_index >= 0 &&
            f->params[pc->count_index].type->kind == TY_POINTER)
            return SH_OUT_BORROWED;
        pc->count_index = -1;
    }
    return SH_UNSUPPORTED;
}

/* The callback rule naming p as the callback or as its data, if any. */
static int classify_callback(const cb_facts *facts, const cb_function *f, const cb_param *p,
                             cb_pclass *pc)
{
    const cb_param_facts *pf = pfacts(facts, f, p);
    {
        if (pf->callback_role == CB_CALLBACK_ROLE_FN) {
            pc->shape = SH_CALLBACK;
            pc->data_index = pf->callback_data;
            pc->callback_kind = pf->callback_kind;
            pc->stream_index = -1;
            pc->object_index = -1;
            /* the stream: the parameter of the stream-protocol handle;
             * the object: the handle the function creates (a non-const
             * pointer to a handle, cuUserObjectCreate's CUuserObject *) */
            for (size_t k = 0; k < f->nparams; k++) {
                const cb_type *t = f->params[k].type;
                if (rules_type_rule(facts, CB_D_STREAM_PROTOCOL, t))
                    pc->stream_index = (int)k;
                if (t->kind == TY_POINTER && t->pointee && t->pointee->kind == TY_HANDLE &&
                    !t->pointee->is_const)
                    pc->object_index = (int)k;
            }
            /* a destroy callback's payload is registered under its user object */
            if (pc->data_index < 0 || (pc->callback_kind == CB_CALLBACK_DESTROY && pc->object_index < 0))
                pc->shape = SH_UNSUPPORTED;
            return 1;
        }
        if (pf->callback_role == CB_CALLBACK_ROLE_DATA) {
            pc->shape = SH_CALLBACK_DATA;
            return 1;
        }
    }
    return 0;
}

/* The element of one attribute-type rule's TYPE (its fact: rules_bind.h):
 * a string of char[N], an array of T (fixed_len -1), one _Bool, or what
 * elem_kind makes of the type. EK_NONE when not covered. */
static cb_ekind attribute_elem(cb_model *m, const cb_facts *facts,
                               const cb_attribute_type_fact *t, cb_pclass *c)
{
    c->fixed_len = t->len;
    const cb_type *ty = t->type;
    if (!ty)
        return EK_NONE;
    if (t->len > 0) {
        c->value = ty;
        return EK_STRING;
    }
    if (t->is_bool) {
        c->value = ty;
        return EK_BOOL;
    }
    cb_ekind e = elem_kind(m, facts, ty, c);
    if (e == EK_INT && rules_type_rule(facts, CB_D_VALUE_CLASS, ty)) {
        /* cuda.bindings returns these values as their class (cuuint64_t) */
        e = EK_VALUE_HANDLE;
        c->handle = ty->name;
    }
    return e;
}

/* SH_ATTR_OUT: one case per enumerator of the attribute's enum that has an
 * attribute-type rule. */
static int classify_attribute_output(cb_model *m, const cb_facts *facts, const cb_function *f,
                                     cb_pclass *pc, const char **why)
{
    const cb_param_facts *pf = pfacts(facts, f, pc->param);
    if (!pf->on[CB_D_ATTRIBUTE_OUTPUT] && !pf->on[CB_D_ATTRIBUTE_INPUT])
        return 0;
    int input = pf->attr_input, array = pf->attr_array;
    pc->attr_index = pf->attr;
    if (pf->on[CB_D_COUNT])
        pc->count_index = paired_count(f, facts, pc->param);
    /* the enum of the attribute parameter (rules_bind.h: attr_enum) */
    const cb_enum *e = pc->attr_index >= 0 && pf->attr_enum >= 0 ? &m->enums[pf->attr_enum] : NULL;
    if (!e || (array && input)) {
        pc->shape = SH_UNSUPPORTED;
        *why = reason(m, pc->param, array ? "an array of attributes needs a void ** of outputs "
                                            "and an array of sizes (a count rule)"
                                          : "its attribute parameter is not an enum");
        return 1;
    }
    pc->shape = input ? SH_ATTR_IN : array ? SH_ATTR_OUT_ARRAY : SH_ATTR_OUT;
    pc->attr_cases = model_alloc(m, (e->nitems ? e->nitems : 1) * sizeof *pc->attr_cases);
    pc->attr_names = model_alloc(m, (e->nitems ? e->nitems : 1) * sizeof *pc->attr_names);
    for (size_t i = 0; i < e->nitems; i++) {
        const cb_attribute_type_fact *t = &facts->attribute_type[e - m->enums][i];
        if (!t->rule)
            continue;
        cb_pclass *c = &pc->attr_cases[pc->nattr_cases];
        memset(c, 0, sizeof *c);
        c->param = pc->param;
        c->pyname = pc->pyname;
        c->enum_index = c->record_index = -1;
        c->elem = attribute_elem(m, facts, t, c);
        if (c->elem == EK_NONE || (c->elem == EK_STRUCT && c->value->size > 64) ||
            (c->fixed_len < 0 && (pc->count_index < 0 || input)))
            continue; /* the value buffer holds 64 bytes, strings aside; an
                         array needs the byte size of an output */
        pc->attr_names[pc->nattr_cases++] = e->items[i].name;
    }
    return 1;
}

/* Functions that return what their non-const pointers point to. */
static int is_getter(const cb_function *f)
{
    return strstr(f->name, "Get") || strstr(f->name, "Enumerate") || strstr(f->name, "Query");
}

static int has_count_for(const cb_function *f, const cb_facts *facts, const cb_param *p)
{
    return !is_count_name(p->name) && paired_count(f, facts, p) >= 0;
}

/* A pointer to what the caller provides: an array when a count pairs with
 * it, else one struct or one opaque handle (its object's value); other
 * pointees are not covered. */
static void provided_input(cb_model *m, const cb_facts *facts, const cb_function *f,
                           const cb_param *p, const cb_type *pt, cb_pclass *pc)
{
    pc->elem = elem_kind(m, facts, pt, pc);
    pc->count_index = paired_count_less(f, facts, p, &pc->count_less);
    if (pc->elem == EK_NONE || pc->elem == EK_POINTER)
        pc->shape = SH_UNSUPPORTED;
    else if (pc->count_index >= 0 && f->params[pc->count_index].type->kind == TY_INT)
        pc->shape = SH_IN_ARRAY;
    else if (pc->elem == EK_STRUCT)
        pc->shape = SH_IN_PTR, pc->count_index = -1;
    else if (pc->elem == EK_HANDLE)
        pc->shape = SH_IN_HANDLE_PTR, pc->count_index = -1;
    else
        pc->shape = SH_UNSUPPORTED;
}

/* A buffer-size rule's parameter: the caller's buffer (char * / void *),
 * or an output array of as many T as the size function gives. The size
 * function takes the parameters before p, each a value, then a pointer to
 * an integer size. */
static void classify_sized(cb_model *m, const cb_facts *facts, const cb_function *f,
                           const cb_param *p, cb_pclass *pc, const char **why)
{
    const cb_type *pt = p->type->pointee;
    const cb_function *sf = pfacts(facts, f, p)->size_fn;
    size_t k = (size_t)(p - f->params);
    int ok = sf && sf->nparams == k + 1 && sf->params[k].type->kind == TY_POINTER &&
             sf->params[k].type->pointee->kind == TY_INT;
    for (size_t i = 0; ok && i < k; i++)
        ok = f->params[i].type->kind != TY_POINTER &&
             strcmp(f->params[i].type->canon, sf->params[i].type->canon) == 0;
    pc->size_fn = sf;
    if (ok && (pt->kind == TY_VOID || model_type_is_char(pt))) {
        pc->shape = SH_OUT_BUFFER;
        pc->elem = EK_POINTER;
        return;
    }
    pc->elem = ok ? elem_kind(m, facts, pt, pc) : EK_NONE;
    pc->shape = pc->elem == EK_INT || pc->elem == EK_ENUM ? SH_OUT_ARRAY : SH_UNSUPPORTED;
    if (pc->shape == SH_UNSUPPORTED)
        *why = reason(m, p, "a buffer-size rule needs a char/void/integer pointer and a size "
                            "function taking the parameters before it and a size pointer");
}

/* A parameter's Python name under the API's python-names rule (snake_case
 * for nvJitLink: numOptions -> num_options); the C name otherwise; either
 * with `_` appended when a Python keyword (rules_python_name). */
static const char *python_param_name(cb_model *m, const cb_facts *facts, const char *name)
{
    cb_api api = facts->api;
    api.name_prefix = "";
    char *py = rules_python_name(&api, name);
    const char *r = model_strdup(m, py);
    free(py);
    return r;
}

/* The byte size of `void *` parameter p by the general rule: the index of
 * the `size_t` parameter right after it, passed by value, or -1. Every
 * (buffer, size) pair of every face gets its length check from here (a
 * host-bytes rule says more: another size, the direction). */
static int byte_size_after(const cb_function *f, const cb_param *p)
{
    const cb_param *next = p + 1;
    if (next >= f->params + f->nparams || next->type->kind != TY_INT)
        return -1;
    return next->type->name && strcmp(next->type->name, "size_t") == 0 ? (int)(next - f->params)
                                                                          : -1;
}

/* A host-bytes rule on a `void *` (or byte pointer) parameter p: its byte
 * count (an integer parameter: rules_bind checked it) and whether the
 * driver writes there. */
static void host_buffer(const cb_facts *facts, const cb_function *f, const cb_param *p,
                        cb_pclass *pc)
{
    const cb_param_facts *pf = pfacts(facts, f, p);
    if (!pf->on[CB_D_HOST_BYTES])
        return;
    pc->count_index = (int)pf->host_bytes.term[HB_SIZE];
    pc->host_writes = pf->host_bytes.writes;
}

/* Whether field k of record r is named by one of the n input fields. */
static int is_input_field(const cb_record *r, size_t k, const cb_input_field *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(r->fields[k].name, in[i].field, strlen(r->fields[k].name)) == 0 &&
            strchr(".", in[i].field[strlen(r->fields[k].name)]))
            return 1; /* the field, or a path through it */
    return 0;
}

/* The type of field path `path` of record r (FIELD, or FIELD.MEMBER...
 * through struct and union fields: nvmlUUID_t's value.str), NULL when r
 * has no such path. */
static const cb_type *path_field_type(const cb_model *m, const cb_record *r, const char *path)
{
    const cb_type *t = NULL;
    while (r && *path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        char name[256];
        if (len >= sizeof name)
            return NULL;
        memcpy(name, path, len);
        name[len] = '\0';
        const cb_field *f = model_field_named(m, r, name); /* anonymous members' too */
        if (!f)
            return NULL;
        t = f->type;
        if (!dot)
            return t;
        int nested = model_type_record(m, t);
        r = nested >= 0 ? &m->records[nested] : NULL;
        path = dot + 1;
    }
    return NULL;
}

/* An input-fields rule's fields of pc's struct (FIELD[=NAME] each, or
 * every field but the struct-version field): 0, or -1 naming one the
 * struct lacks. */
static int input_fields(cb_model *m, const cb_facts *facts, const cb_rule *rule,
                        const cb_record *r, cb_pclass *pc)
{
    const char *version = facts->api.version_field;
    size_t n = rule->nargs > 2 ? rule->nargs - 2 : r->nfields;
    cb_input_field *in = model_alloc(m, (n ? n : 1) * sizeof *in);
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        const char *field = NULL, *name = NULL;
        int if_present = 0; /* FIELD?: where this header's struct has it */
        if (rule->nargs > 2) {
            const char *arg = rule->args[i + 2], *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
            if_present = len > 1 && arg[len - 1] == '?';
            char *c = model_alloc(m, len + 1);
            memcpy(c, arg, len - (size_t)if_present);
            field = c;
            name = eq && eq[1] ? eq + 1 : NULL;
        } else if (!version || strcmp(r->fields[i].name, version) != 0) {
            field = r->fields[i].name;
        }
        if (!field)
            continue;
        const cb_type *t = path_field_type(m, r, field);
        if (!t && if_present)
            continue;
        if (!t)
            return -1;
        in[got].field = field;
        in[got].pyname = name ? name : python_param_name(m, facts, field);
        /* a pointer to records counted by a field-count rule (a field of
         * r itself, not a path) takes their number: a room */
        long long k = model_field_index(m, r, field);
        in[got].is_room = t->kind == TY_POINTER && t->pointee && model_type_record(m, t->pointee) >= 0 &&
                          k >= 0 && facts->records[r - m->records].fields[k].count >= 0;
        in[got].is_int = t->kind == TY_INT || t->kind == TY_ENUM || in[got].is_room;
        in[got].is_bytes = t->kind == TY_ARRAY && t->pointee && t->pointee->kind == TY_INT &&
                           t->pointee->size == 1 && !model_type_is_char(t->pointee);
        got++;
    }
    pc->input_fields = in;
    pc->ninput_fields = got;
    return 0;
}

/* A struct parameter's fields as Python parameters (input-fields) and a
 * versioned output's one field (struct-version): an input struct with an
 * input-fields rule is SH_IN_FIELDS; an output struct takes its input
 * fields before the call, and returns its one field besides the version
 * field and those, unless an output-field or whole-output rule says
 * otherwise. */
static void struct_fields(cb_model *m, const cb_facts *facts, const cb_function *f,
                          const cb_param *p, cb_pclass *pc, const char **why)
{
    const cb_param_facts *pf = pfacts(facts, f, p);
    const cb_rule *rule = pf->on[CB_D_INPUT_FIELDS];
    int out = pc->shape == SH_OUT_STRUCT, in = pc->shape == SH_IN_PTR && pc->elem == EK_STRUCT;
    if (rule && !out && !in) {
        if (pc->shape != SH_UNSUPPORTED) {
            pc->shape = SH_UNSUPPORTED;
            *why = reason(m, p, "an input-fields rule needs a pointer to a struct");
        }
        return;
    }
    if (!out && !in)
        return;
    const cb_record *r = &m->records[pc->record_index];
    if (rule && input_fields(m, facts, rule, r, pc) < 0) {
        pc->shape = SH_UNSUPPORTED;
        *why = reason(m, p, "the input-fields rule names no field of its struct");
        return;
    }
    if (rule && in)
        pc->shape = SH_IN_FIELDS;
    long long offset = 0;
    if (!out || pc->output_field || pc->noutput_items || pf->on[CB_D_WHOLE_OUTPUT] ||
        !classify_record_version(&facts->api, r, &offset))
        return;
    const char *one = NULL;
    size_t left = 0;
    for (size_t k = 0; k < r->nfields; k++)
        if (strcmp(r->fields[k].name, facts->api.version_field) != 0 && *r->fields[k].name &&
            !is_input_field(r, k, pc->input_fields, pc->ninput_fields)) {
            one = r->fields[k].name;
            left++;
        }
    if (left == 1)
        pc->output_field = one;
}

/* struct-addresses: a whole struct output (no output-field, no input
 * fields, no array the library fills) may be the caller's, as
 * cuda.bindings takes its address (SH_INTO_STRUCT, an optional input). */
static void caller_struct(const cb_facts *facts, cb_pclass *pc)
{
    if (!facts->api.struct_addresses || pc->shape != SH_OUT_STRUCT || pc->output_field ||
        pc->noutput_items || pc->ninput_fields || pc->record_index < 0)
        return;
    const cb_record_facts *rf = &facts->records[pc->record_index];
    for (size_t k = 0; k < rf->nfields; k++)
        if (rf->fields[k].on[CB_D_FIELD_COUNT_QUERY])
            return;
    pc->shape = SH_INTO_STRUCT;
    pc->optional = 1;
}

/* output-tuple: each ITEM a field of the struct; FIELD/COUNT an array
 * field and an integer field (not a bit-field) of the same struct. The
 * items parsed into pc->output_items: 0, or -1 with *why. */
static int output_tuple(cb_model *m, const cb_rule *rule, const cb_param *p, cb_pclass *pc,
                        const char **why)
{
    const cb_record *r = &m->records[pc->record_index];
    size_t n = rule->nargs - 2;
    cb_output_item *items = model_alloc(m, n * sizeof *items);
    for (size_t i = 0; i < n; i++) {
        const char *item = rule->args[i + 2], *slash = strchr(item, '/');
        items[i].field = slash ? model_strndup(m, item, (size_t)(slash - item)) : item;
        items[i].count = slash ? slash + 1 : NULL;
        const cb_field *k = model_field_named(m, r, items[i].field);
        const cb_field *c = slash ? model_field_named(m, r, items[i].count) : NULL;
        if (!k || (slash && (k->type->kind != TY_ARRAY || !c || c->type->kind != TY_INT ||
                             c->bit_width >= 0))) {
            *why = reason(m, p, "an output-tuple ITEM names no field of its struct (or FIELD/COUNT "
                                "no array and integer field)");
            return -1;
        }
    }
    pc->output_items = items;
    pc->noutput_items = n;
    return 0;
}

static void classify_param(cb_model *m, const cb_facts *facts, const cb_function *f,
                           const cb_param *p, cb_pclass *pc, const char **why)
{
    pc->param = p;
    pc->value = p->type;
    pc->enum_index = -1;
    pc->record_index = -1;
    pc->count_index = -1;
    pc->params_index = -1;
    pc->host_writes = -1;
    pc->cast_from = NULL;
    pc->output_field = NULL;
    pc->output_count = NULL;
    pc->output_items = NULL;
    pc->noutput_items = 0;
    pc->records_field = NULL;
    pc->size_of_fixed = -1;
    pc->input_fields = NULL;
    pc->ninput_fields = 0;
    pc->length_of = -1;
    const cb_param_facts *pf = pfacts(facts, f, p);
    pc->pyname = pf->pyname ? pf->pyname : python_param_name(m, facts, p->name);
    pc->doc = pf->on[CB_D_PARAM_DOC] ? pf->on[CB_D_PARAM_DOC]->args[2] : NULL;
    const cb_type *t = p->type;
    if (pf->on[CB_D_INPUT_FIELDS] &&
        (t->kind != TY_POINTER || model_type_record(m, t->pointee) < 0)) {
        pc->shape = SH_UNSUPPORTED;
        *why = reason(m, p, "an input-fields rule needs a pointer to a struct");
        return;
    }
    if (classify_callback(facts, f, p, pc) || classify_attribute_output(m, facts, f, pc, why))
        return;

    if (t->kind == TY_FUNCPTR) {
        pc->shape = pf->trampoline ? SH_SYNC_CALLBACK : SH_IN_FUNCPTR;
        pc->trampoline = pf->trampoline;
        pc->elem = EK_POINTER;
        return;
    }
    if (pf->on[CB_D_SYNC_CALLBACK]) {
        pc->shape = SH_UNSUPPORTED;
        *why = reason(m, p, "a sync-callback rule needs a function pointer parameter");
        return;
    }
    if (pf->on[CB_D_ADDRESS]) {
        /* an address by value, whatever it points to */
        pc->shape = t->kind == TY_POINTER ? SH_VALUE : SH_UNSUPPORTED;
        pc->elem = EK_POINTER;
        if (pc->shape == SH_UNSUPPORTED)
            *why = reason(m, p, "an address rule needs a pointer parameter");
        return;
    }
    if (pf->on[CB_D_TEXT]) {
        /* text the library writes: a char * and its optional size */
        int named = pf->on[CB_D_TEXT]->nargs > 2; /* a SIZE the function must have */
        int fits = t->kind == TY_POINTER && model_type_is_char(t->pointee) && !t->pointee->is_const &&
                   facts->api.chars_length > 0 && (!named || pf->text_size >= 0) &&
                   (pf->text_size < 0 || is_int_or_int_pointer(f->params[pf->text_size].type));
        pc->shape = fits ? SH_OUT_TEXT : SH_UNSUPPORTED;
        pc->count_index = fits ? pf->text_size : -1;
        if (!fits)
            *why = reason(m, p, "a text rule needs a char * output, an integer SIZE of the function and a chars-length rule");
        return;
    }
    if (pf->on[CB_D_RECORDS] || pf->on[CB_D_COUNTED_RECORDS]) {
        /* records of a struct class read (and written) in place; with
         * counted-records, read, their count the caller's argument */
        const cb_type *pt = t->kind == TY_POINTER ? t->pointee : NULL;
        const cb_type *ct = pf->records_count >= 0 ? f->params[pf->records_count].type : NULL;
        pc->elem = pt ? elem_kind(m, facts, pt, pc) : EK_NONE;
        int fits = pc->elem == EK_STRUCT && ct && ct->kind == TY_INT;
        if (fits && pf->records_field) {
            const cb_record *r = &m->records[pc->record_index];
            int k = model_field_index(m, r, pf->records_field);
            fits = k >= 0 && r->fields[k].type->kind == TY_INT && r->fields[k].bit_width < 0;
            pc->records_field = fits ? pf->records_field : NULL;
        }
        pc->shape = !fits                          ? SH_UNSUPPORTED
                    : pf->on[CB_D_COUNTED_RECORDS]   ? SH_IN_COUNTED_RECORDS
                    : is_getter(f) && !pt->is_const ? SH_INOUT_RECORDS
                                                      : SH_IN_RECORDS;
        pc->count_index = fits ? pf->records_count : -1;
        if (!fits)
            *why = reason(m, p, "a records rule needs a pointer to a struct class, an integer COUNT by value and FIELD an integer field of the struct");
        return;
    }
    if (pf->on[CB_D_STRUCT_SIZE]) {
        /* the size of the struct STRUCT points to, or of the N elements it
         * points to under a fixed rule; value: that struct (element) */
        const cb_type *st = pf->size_of >= 0 ? f->params[pf->size_of].type : NULL;
        int fixed = pf->size_of >= 0 && pfacts(facts, f, &f->params[pf->size_of])->on[CB_D_FIXED];
        int fits = t->kind == TY_INT && st && st->kind == TY_POINTER && st->pointee->size > 0 &&
                   (st->pointee->kind == TY_RECORD || fixed);
        pc->shape = fits ? SH_STRUCT_SIZE : SH_UNSUPPORTED;
        if (fits) {
            pc->value = st->pointee;
            pc->size_of_fixed = fixed ? pf->size_of : -1;
        } else {
            *why = reason(m, p, "a struct-size rule needs an integer and a pointer to a struct (or to the elements of a fixed rule)");
        }
        return;
    }
    if (t->kind != TY_POINTER) {
        pc->elem = elem_kind(m, facts, t, pc);
        /* an address by value only as an int-handles API's handle */
        pc->shape = pc->elem == EK_NONE || (pc->elem == EK_POINTER && t->kind != TY_HANDLE)
                        ? SH_UNSUPPORTED
                        : SH_VALUE;
        if (pc->shape == SH_UNSUPPORTED)
            *why = reason(m, p, "no general rule for this type by value");
        /* A class this header lacks (CUkernel before CUDA 12.0): the rule
         * does not apply here (rules_unmatched reports it); pf->cast is
         * NULL then. */
        if (pf->cast && pc->elem == EK_HANDLE) {
            pc->cast_from = pf->cast;
        } else if (pf->cast) {
            pc->shape = SH_UNSUPPORTED;
            *why = reason(m, p, "a handle-cast rule needs a handle parameter and a handle class");
        }
        return;
    }

    const cb_type *pt = t->pointee;
    if (pf->on[CB_D_IN_PLACE]) {
        pc->elem = elem_kind(m, facts, pt, pc);
        pc->shape = pc->elem == EK_HANDLE || (pc->elem == EK_POINTER && pt->kind == TY_HANDLE)
                        ? SH_IN_PLACE
                        : SH_UNSUPPORTED;
        if (pc->shape == SH_UNSUPPORTED)
            *why = reason(m, p, "an in-place rule needs a pointer to a handle");
        return;
    }
    if (pf->on[CB_D_BUFFER_SIZE]) {
        classify_sized(m, facts, f, p, pc, why);
        return;
    }
    if (pf->on[CB_D_KERNEL_PARAMS]) {
        pc->count_index = pf->kernel;
        pc->shape = pc->count_index >= 0 ? SH_KERNEL_PARAMS : SH_UNSUPPORTED;
        return;
    }
    if (pf->on[CB_D_KERNEL_EXTRA]) {
        pc->shape = SH_KERNEL_EXTRA;
        for (const cb_param *q = f->params; q < p; q++)
            if (pfacts(facts, f, q)->on[CB_D_KERNEL_PARAMS])
                pc->params_index = (int)(q - f->params);
        return;
    }
    if (pt->kind == TY_VOID && is_kernel_of_rule(f, facts, p)) {
        /* the kernel of a kernel-params rule as a `const void *` (the
         * runtime's func): an address by value, which the packer types
         * the kernel's parameters by; never a buffer */
        pc->shape = SH_VALUE;
        pc->elem = EK_POINTER;
        pc->value = t;
        return;
    }
    const cb_rule *fixed = pf->on[CB_D_FIXED];
    int is_in = pf->on[CB_D_IN] != NULL;
    int is_out = pf->on[CB_D_OUT] != NULL;
    if (pf->on[CB_D_INOUT]) {
        pc->elem = elem_kind(m, facts, pt, pc);
        pc->shape = pc->elem == EK_NONE || pc->elem == EK_STRUCT ? SH_UNSUPPORTED : SH_INOUT;
    } else if (fixed) {
        pc->elem = elem_kind(m, facts, pt, pc);
        pc->fixed_len = pf->fixed;
        pc->shape = pc->elem == EK_NONE ? SH_UNSUPPORTED
                    : (pt->is_const || is_in) ? SH_IN_FIXED
                                              : SH_OUT_FIXED;
    } else if (pt->kind == TY_VOID && is_out) {
        /* void * the library writes an address into (an out rule): the
         * address, an int output */
        pc->shape = SH_OUT;
        pc->elem = EK_POINTER;
        pc->value = t;
    } else if (pt->kind == TY_VOID || (pt->kind == TY_INT && pf->on[CB_D_HOST_BYTES])) {
        /* void *, or bytes a host-bytes rule sizes (rules_bind checked it) */
        pc->shape = SH_IN_BUFFER;
        pc->elem = EK_POINTER;
        pc->count_index = pf->on[CB_D_UNSIZED] ? -1 : byte_size_after(f, p);
        host_buffer(facts, f, p, pc);
    } else if (model_type_is_char(pt) && pt->is_const) {
        pc->shape = SH_IN_STRING;
    } else if (pt->kind == TY_POINTER && is_in && !(model_type_is_char(pt->pointee) && pt->pointee->is_const)) {
        pc->elem = EK_POINTER;
        pc->value = pt;
        pc->count_index = paired_count(f, facts, p);
        pc->shape = pc->count_index >= 0 ? SH_IN_ARRAY : SH_UNSUPPORTED;
    } else if (pt->kind == TY_POINTER) {
        pc->shape = pointer_to_pointer(m, facts, f, p, pc, is_in);
    } else if (pt->is_const || is_in) {
        provided_input(m, facts, f, p, pt, pc);
    } else if (model_type_is_char(pt)) {
        pc->count_index = -1;
        for (size_t i = 0; i < f->nparams; i++)
            if (f->params[i].type->kind == TY_INT && is_char_buffer_size(f->params[i].name, p->name))
                pc->count_index = (int)i;
        pc->shape = pc->count_index >= 0 ? SH_OUT_CHARS : SH_UNSUPPORTED;
        int size = pc->count_index < 0 ? paired_count(f, facts, p) : -1;
        if (size >= 0 && f->params[size].type->kind == TY_POINTER) {
            /* the caller's buffer, filled in place up to an in/out size */
            pc->shape = SH_IN_BUFFER;
            pc->elem = EK_POINTER;
            pc->count_index = size;
        }
    } else if (is_out) {
        pc->elem = elem_kind(m, facts, pt, pc);
        if (pf->on[CB_D_COUNT])
            pc->count_index = paired_count(f, facts, p);
        pc->shape = pc->elem == EK_NONE     ? SH_UNSUPPORTED
                    : pc->count_index >= 0  ? SH_OUT_ARRAY
                    : pc->elem == EK_STRUCT ? SH_OUT_STRUCT
                                            : SH_OUT;
    } else if (!is_getter(f) && (pt->kind == TY_RECORD || has_count_for(f, facts, p))) {
        /* Outside getters, a struct or array behind a non-const pointer is
         * something the caller provides (the driver may update it). */
        provided_input(m, facts, f, p, pt, pc);
    } else {
        pc->elem = elem_kind(m, facts, pt, pc);
        pc->count_index = is_count_name(p->name) ? -1 : paired_count(f, facts, p);
        if (pc->elem == EK_NONE)
            pc->shape = SH_UNSUPPORTED;
        else if (pc->count_index < 0)
            pc->shape = pc->elem == EK_STRUCT ? SH_OUT_STRUCT : SH_OUT;
        else if (f->params[pc->count_index].type->kind == TY_INT ||
                 f->params[pc->count_index].type->kind == TY_POINTER)
            pc->shape = SH_OUT_ARRAY;
        else
            pc->shape = SH_UNSUPPORTED;
    }
    if (pf->on[CB_D_OUTPUT_FIELD] && pc->shape == SH_OUT_STRUCT) {
        /* output-field: one field of the struct, which must have it */
        const cb_rule *rule = pf->on[CB_D_OUTPUT_FIELD];
        const char *name = rule->args[2], *count = rule->nargs > 3 ? rule->args[3] : NULL;
        const cb_record *r = &m->records[pc->record_index];
        const cb_field *k = count ? model_field_named(m, r, count) : NULL;
        if (model_field_named(m, r, name) &&
            (!count || (k && k->type->kind == TY_INT && k->bit_width < 0))) {
            pc->output_field = name;
            pc->output_count = count;
        } else {
            pc->shape = SH_UNSUPPORTED;
            *why = reason(m, p, "the output-field rule names no field of its struct (or COUNT no integer field)");
        }
    } else if (pf->on[CB_D_OUTPUT_FIELD] && pc->shape != SH_UNSUPPORTED) {
        pc->shape = SH_UNSUPPORTED;
        *why = reason(m, p, "an output-field rule needs a struct output");
    }
    if (pf->on[CB_D_OUTPUT_TUPLE] && pc->shape != SH_UNSUPPORTED) {
        if (pc->shape != SH_OUT_STRUCT || pc->output_field) {
            pc->shape = SH_UNSUPPORTED;
            *why = reason(m, p, "an output-tuple rule needs a struct output (and no output-field rule)");
        } else if (output_tuple(m, pf->on[CB_D_OUTPUT_TUPLE], p, pc, why) < 0) {
            pc->shape = SH_UNSUPPORTED;
        }
    }
    struct_fields(m, facts, f, p, pc, why);
    caller_struct(facts, pc);
    if (pc->shape == SH_UNSUPPORTED && !*why)
        *why = reason(m, p, "no general rule or special case covers it");
}

/* Second pass: counts of arrays. An input array's count stays an input (as
 * in cuda.bindings); a pointer count becomes what the array's shape says
 * (shapes.def's count column): in/out (0 by default) for an output array,
 * in/out and required for a caller's buffer, an output for a driver-owned
 * array, set by the binding for an attribute's value. */
static void mark_counts(cb_fclass *fc, const cb_api *api)
{
    const cb_function *f = fc->fn;
    for (size_t i = 0; i < f->nparams; i++) {
        cb_pclass *pc = &fc->params[i];
        shape_count becomes = shapes_count(pc->shape); /* shapes.def */
        if (pc->count_index < 0 || becomes == COUNT_NONE)
            continue;
        cb_pclass *count = &fc->params[pc->count_index];
        count->is_count = 1;
        if (pc->shape == SH_OUT_CHARS && api->chars_length > 0 && count->shape == SH_VALUE)
            count->optional = 1; /* chars-length: 0, the default, is its N */
        if (becomes == COUNT_TEXT) {
            count->shape = SH_TEXT_SIZE; /* by value or by address */
            continue;
        }
        if (becomes == COUNT_LEN ||
            (api->array_lengths && pc->shape == SH_IN_ARRAY && count->shape == SH_VALUE &&
             count->elem == EK_INT)) {
            count->shape = SH_ARRAY_LENGTH; /* array-lengths: the sequence's */
            count->length_of = (int)i;
            continue;
        }
        if (count->param->type->kind != TY_POINTER || becomes == COUNT_KEPT)
            continue; /* an array of sizes stays an input array */
        if (count->elem != EK_INT)
            count->shape = SH_UNSUPPORTED;
        else if (becomes == COUNT_SET)
            count->shape = SH_ATTR_SIZE;
        else if (becomes == COUNT_REQUIRED)
            count->shape = SH_INOUT;
        else {
            count->shape = SH_COUNT_INOUT;
            count->optional = 1;
            /* count-query: the list alone, as cuda.bindings.nvml returns */
            count->length_only = api->count_query != NULL && pc->shape == SH_OUT_ARRAY;
        }
    }
}

/* An array of attribute values needs its attributes and, when it has
 * them, their sizes as input arrays (the attributes' count is the number
 * of values). */
static void check_attribute_arrays(cb_fclass *fc)
{
    for (size_t i = 0; i < fc->fn->nparams; i++) {
        cb_pclass *pc = &fc->params[i];
        if (pc->shape == SH_ATTR_OUT_ARRAY &&
            (fc->params[pc->attr_index].shape != SH_IN_ARRAY ||
             (pc->count_index >= 0 && fc->params[pc->count_index].shape != SH_IN_ARRAY)))
            pc->shape = SH_UNSUPPORTED;
    }
}

/* A default only where every later input has one too (Python's rule). */
static void trim_defaults(cb_fclass *fc)
{
    int required_after = 0;
    for (size_t k = fc->fn->nparams; k-- > 0;) {
        cb_pclass *pc = &fc->params[k];
        if (!classify_is_input(pc))
            continue;
        if (required_after)
            pc->optional = 0;
        required_after |= !pc->optional;
    }
}

static const char *first_unsupported(const cb_fclass *fc)
{
    for (size_t i = 0; i < fc->fn->nparams; i++)
        if (fc->params[i].shape == SH_UNSUPPORTED)
            return "unsupported";
    return NULL;
}

static int code_image_param(const cb_fclass *fc);
static void classify_registry(cb_model *m, const cb_facts *facts, cb_fclass *fc);

/* The error-log rule of fc, resolved: PARAM a handle value, SIZEFN(handle,
 * size_t *) and LOGFN(handle, char *) functions of the header. */
static void classify_error_log(cb_model *m, const cb_facts *facts, cb_fclass *fc)
{
    const cb_function_facts *ff = ffacts(facts, fc->fn);
    fc->log_param = -1;
    if (!ff->on[CB_D_ERROR_LOG])
        return;
    fc->log_param = ff->log_param;
    fc->log_size_fn = ff->log_size_fn;
    fc->log_fn = ff->log_fn;
    if (fc->log_param < 0 || fc->params[fc->log_param].shape != SH_VALUE ||
        fc->params[fc->log_param].param->type->kind != TY_HANDLE || !fc->log_size_fn || !fc->log_fn ||
        fc->log_size_fn->nparams != 2 || fc->log_fn->nparams != 2) {
        fc->supported = 0;
        fc->why = model_strdup(m, "its error-log rule does not name a handle parameter and "
                                  "two functions (handle, size_t *) and (handle, char *)");
    }
}

/* Whether f describes a result, `const char *f(RESULT)`: the error-string
 * function and its kin (cudaGetErrorName), bound as returning
 * (SUCCESS, bytes). */
static int is_error_string(const cb_model *m, const cb_facts *facts, const cb_function *f)
{
    const cb_api *api = &facts->api;
    return f->ret->kind == TY_POINTER &&
           model_type_is_char(f->ret->pointee) && f->nparams == 1 && f->params[0].type->kind == TY_ENUM &&
           model_type_enum(m, f->params[0].type) == model_enum_index(m, api->result);
}

/* How f returns (classify.h): its status (the result enum, or the
 * result-field rule's struct holding it: *field set), nothing or an integer
 * (a library's void or integer function: *kind_void / *kind_value set).
 * 0 when none of these: the function is not bound. */
static int returns_kind(const cb_model *m, const cb_api *api, const cb_function *f, int *field,
                        int *kind_void, int *kind_value)
{
    *field = *kind_void = *kind_value = 0;
    if (f->ret->kind == TY_ENUM && model_enum_index(m, api->result) == model_type_enum(m, f->ret))
        return 1;
    if (api->result_record && f->ret->kind == TY_RECORD && f->ret->name &&
        strcmp(f->ret->name, api->result_record) == 0)
        return *field = 1;
    if (api->is_library && f->ret->kind == TY_VOID)
        return *kind_void = 1;
    if (api->is_library && f->ret->kind == TY_INT)
        return *kind_value = 1;
    return 0;
}

/* The index in cb_classes.handles of pc's handle class, -1 when pc names
 * none or one the module lacks. */
static int handle_of(const cb_classes *c, const cb_pclass *pc)
{
    return pc->handle ? handles_index(c->handles, c->nhandles, pc->handle) : -1;
}

/* Whether handle class hi (handle_of) holds a pointer. */
static int holds_pointer(const cb_classes *c, int hi)
{
    return hi >= 0 && c->handles[hi].kind == CB_HANDLE_POINTER;
}

/* field-count-query: an output struct's field the library fills
 * (classify_records.h: fill, one per record, rules_bind checks), and its
 * count field; NULL for any other parameter. */
static void fill_of(const cb_classes *c, cb_pclass *pc)
{
    pc->fill_field = pc->fill_count = NULL;
    if (pc->shape != SH_OUT_STRUCT || pc->record_index < 0)
        return;
    const cb_record_class *rc = &c->records[pc->record_index];
    for (size_t k = 0; k < rc->nfields; k++) {
        const cb_field_class *fc = &rc->fields[k];
        if (fc->fill && fc->aux >= 0 && (size_t)fc->aux < rc->nfields) {
            pc->fill_field = fc->field->name;
            pc->fill_count = rc->fields[fc->aux].field->name;
            return;
        }
    }
}

/* What render reads of a parameter beyond its shape, made consistent
 * once every parameter is classified (classify.h: derive_params): the
 * indices a shape does not use are -1, so that render tests an index, never
 * a shape, and reads a handle's kind from a flag, never by its name. */
static void derive_params(const cb_classes *c, cb_fclass *fc)
{
    for (size_t k = 0; k < fc->fn->nparams; k++) {
        cb_pclass *pc = &fc->params[k];
        /* a function-pointer parameter also takes its own class (CUhostFn)
         * where its type is one; a bare pointer type (nvrtc's) has none */
        pc->funcptr_class = pc->shape == SH_IN_FUNCPTR &&
                            handles_index(c->handles, c->nhandles, pc->param->type->spelling) >= 0;
        int hi = handle_of(c, pc);
        pc->stream_like = hi >= 0 && c->handles[hi].stream_protocol;
        pc->pointer_handle = holds_pointer(c, hi);
        for (size_t i = 0; i < pc->nattr_cases; i++)
            pc->attr_cases[i].pointer_handle = holds_pointer(c, handle_of(c, &pc->attr_cases[i]));
        /* a host-bytes rule says whether the driver writes; else the constness */
        pc->writable = pc->shape == SH_IN_BUFFER &&
                       (pc->host_writes >= 0 ? pc->host_writes : !pc->param->type->pointee->is_const);
        /* a fixed array of char is a byte string (cuDeviceGetLuid's luid) */
        pc->fixed_bytes = pc->shape == SH_OUT_FIXED && pc->value->kind == TY_INT && pc->value->size == 1 &&
                          strstr(pc->value->canon, "char") != NULL;
        pc->kernel_index = pc->shape == SH_KERNEL_PARAMS ? pc->count_index : -1;
        if (pc->shape != SH_CALLBACK)
            pc->data_index = pc->stream_index = pc->object_index = -1;
        if (pc->shape != SH_ATTR_OUT && pc->shape != SH_ATTR_IN && pc->shape != SH_ATTR_OUT_ARRAY)
            pc->attr_index = -1;
        if (pc->shape != SH_SYNC_CALLBACK)
            pc->trampoline = NULL;
        fill_of(c, pc);
    }
}

/* 1 when an element is a plain value (an int, float, bool, enum member,
 * handle or address): results made only of such values are kept between
 * calls for reuse (result_cache in templates/driver/results.c); structs,
 * lists and bytes are not held alive after the caller drops them. */
static int is_plain_value_elem(cb_ekind elem)
{
    switch (elem) {
    case EK_INT: case EK_FLOAT: case EK_ENUM: case EK_HANDLE: case EK_VALUE_HANDLE:
    case EK_POINTER: case EK_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* 1 when an output parameter gives a plain value (shapes.def's plain
 * column). An attribute-typed output does when every attribute's value is a
 * single plain element (an attribute without a type rule gives an int). */
static int is_plain_value_output(const cb_pclass *pc)
{
    switch (shapes_plain(pc->shape)) {
    case PLAIN_YES:
        return 1;
    case PLAIN_ELEM:
        return is_plain_value_elem(pc->elem);
    case PLAIN_CASES:
        for (size_t i = 0; i < pc->nattr_cases; i++)
            if (pc->attr_cases[i].fixed_len != 0 || !is_plain_value_elem(pc->attr_cases[i].elem))
                return 0;
        return 1;
    case PLAIN_NO:
        break;
    }
    return 0;
}

/* Whether fc's result may be kept for reuse (classify.h: cache_result).
 * The raising face returns a lone output itself: only a handle can be
 * reused from one call to the next (cbs_handle_reuse), an int cannot. */
static void derive_function(cb_fclass *fc)
{
    int cache = !fc->returns_string && !fc->returns_value && fc->returns_record < 0,
        handle_outputs = 0;
    for (size_t k = 0; k < fc->fn->nparams; k++) {
        const cb_pclass *pc = &fc->params[k];
        if (!classify_is_output(pc))
            continue;
        cache &= is_plain_value_output(pc);
        handle_outputs += pc->elem == EK_HANDLE || pc->elem == EK_VALUE_HANDLE;
    }
    fc->cache_result = cache;
    fc->cache_raising_result = cache && (fc->nout > 1 || handle_outputs == 1);
}

/* The driver functions the module's own code calls (classify.h:
 * runtime_fns), and the handle-cast class of cuLaunchKernel's kernel. */
static void derive_runtime_fns(cb_model *m, cb_classes *c)
{
    c->runtime_fns.get_error_name = model_function(m, "cuGetErrorName");
    c->runtime_fns.get_error_string = model_function(m, "cuGetErrorString");
    c->runtime_fns.func_get_param_info = model_function(m, "cuFuncGetParamInfo");
    c->runtime_fns.kernel_get_param_info = model_function(m, "cuKernelGetParamInfo");
    c->runtime_fns.func_get_name = model_function(m, "cuFuncGetName");
    c->runtime_fns.kernel_get_name = model_function(m, "cuKernelGetName");
    c->runtime_fns.func_get_module = model_function(m, "cuFuncGetModule");
    c->runtime_fns.kernel_get_library = model_function(m, "cuKernelGetLibrary");
    const cb_function *lk = model_function(m, "cuLaunchKernel");
    c->runtime_fns.launch_kernel = lk;
    c->launch_cast = NULL;
    for (size_t i = 0; lk && i < c->nfunctions; i++)
        if (c->functions[i].fn == lk && lk->nparams > 0)
            c->launch_cast = c->functions[i].params[0].cast_from;
}

/* An unbound rule's reason: its words after FUNCTION, joined by spaces;
 * NULL without a rule. */
static const char *unbound_reason(cb_model *m, const cb_rule *rule)
{
    if (!rule)
        return NULL;
    char buf[512] = "";
    size_t n = 0;
    for (size_t a = 1; a < rule->nargs && n < sizeof buf; a++) {
        int w = snprintf(buf + n, sizeof buf - n, "%s%s", a > 1 ? " " : "", rule->args[a]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return model_strdup(m, buf);
}

cb_classes *classify_model(cb_model *m, const cb_facts *facts)
{
    const cb_api api = facts->api;
    cb_classes *c = calloc(1, sizeof *c);
    if (!c)
        arena_oom();
    c->nfunctions = m->nfunctions;
    c->facts = facts;
    c->handles = handles_collect(m, facts, &c->nhandles);
    c->records = classify_records(m, facts, c->handles, c->nhandles);
    c->functions = model_alloc(m, (m->nfunctions ? m->nfunctions : 1) * sizeof *c->functions);
    for (size_t i = 0; i < m->nfunctions; i++) {
        const cb_function *f = &m->functions[i];
        cb_fclass *fc = &c->functions[i];
        fc->fn = f;
        fc->params = model_alloc(m, (f->nparams ? f->nparams : 1) * sizeof *fc->params);
        const char *why = NULL;
        fc->returns_string = is_error_string(m, facts, f);
        int kind_ok = fc->returns_string || returns_kind(m, &api, f, &fc->returns_field,
                                                         &fc->returns_void, &fc->returns_value);
        /* a record by value that is no status (cudaCreateChannelDesc): the
         * call cannot fail, its value is the first output */
        fc->returns_record = !kind_ok && f->ret->kind == TY_RECORD ? model_type_record(m, f->ret)
                                                                   : -1;
        if (!kind_ok && fc->returns_record < 0) {
            char buf[128];
            snprintf(buf, sizeof buf, "does not return %s", api.result);
            why = model_strdup(m, buf);
        }
        for (size_t k = 0; k < f->nparams; k++) {
            const char *pwhy = NULL;
            classify_param(m, facts, f, &f->params[k], &fc->params[k], &pwhy);
            if (pwhy && !why)
                why = pwhy;
        }
        mark_counts(fc, &facts->api);
        check_attribute_arrays(fc);
        trim_defaults(fc);
        for (size_t k = 0; k < f->nparams; k++) {
            fc->nin += (size_t)classify_is_input(&fc->params[k]);
            fc->nout += (size_t)classify_is_output(&fc->params[k]);
        }
        fc->nout += (size_t)fc->returns_string + (size_t)fc->returns_value +
                    (size_t)(fc->returns_record >= 0);
        if (!why && first_unsupported(fc))
            why = model_strdup(m, "a parameter is unsupported");
        fc->callable = f->proc_version || api.is_library;
        if (!fc->callable && !why)
            why = model_strdup(m, "no PFN typedef in cudaTypedefs.h matches its prototype");
        if (!why)
            why = unbound_reason(m, ffacts(facts, f)->on[CB_D_UNBOUND]);
        fc->supported = why == NULL;
        fc->why = why ? why : "";
        const cb_function_facts *ff = ffacts(facts, f);
        fc->keep_gil = ff->on[CB_D_KEEP_GIL] != NULL;
        fc->unloads_kernels = ff->on[CB_D_UNLOADS_KERNELS] != NULL;
        /* kernel-code hooks live in the driver's module (bind_kernel_code.c):
         * a library API has no modules or kernels to type. */
        fc->code_before = !api.is_library && ff->code == CB_CODE_BEFORE;
        fc->code_after = !api.is_library && ff->code == CB_CODE_AFTER;
        fc->code_image = fc->code_after ? code_image_param(fc) : -1;
        classify_registry(m, facts, fc);
        classify_error_log(m, facts, fc);
        derive_params(c, fc);
        derive_function(fc);
        if (fc->supported)
            c->nsupported++;
    }
    derive_runtime_fns(m, c);
    return c;
}

/* The code image of a kernel-code function: its one SH_IN_BUFFER parameter
 * without a count (cuModuleLoadData's image ...), whose length a Python
 * buffer bounds; -1 when there is none or more than one (cuLinkAddData's
 * data has its size). */
static int code_image_param(const cb_fclass *fc)
{
    int found = -1;
    for (size_t k = 0; k < fc->fn->nparams; k++) {
        const cb_pclass *pc = &fc->params[k];
        if (pc->shape != SH_IN_BUFFER || pc->count_index >= 0)
            continue;
        if (found >= 0)
            return -1;
        found = (int)k;
    }
    return found;
}

/* The registry kind of the handle type of parameter k (CB_REG_KIND_NONE
 * if none). */
static cb_registry_kind reg_kind(const cb_facts *facts, const cb_fclass *fc, int k)
{
    const cb_pclass *pc = k >= 0 ? &fc->params[k] : NULL;
    const cb_type_facts *tf = pc && pc->handle ? rules_type_facts(facts, pc->value) : NULL;
    return tf ? tf->registry_kind : CB_REG_KIND_NONE;
}

/* The registry-* rules naming f. A rule whose parameters do not resolve to
 * registered handle kinds makes the function unsupported (a rules error,
 * reported with the function). */
static void classify_registry(cb_model *m, const cb_facts *facts, cb_fclass *fc)
{
    const cb_function_facts *ff = ffacts(facts, fc->fn);
    if (!ff->nregistry)
        return;
    fc->reg = model_alloc(m, ff->nregistry * sizeof *fc->reg);
    for (size_t i = 0; i < ff->nregistry; i++) {
        const cb_registry_fact *rf = &ff->registry[i];
        cb_regact *ra = &fc->reg[fc->nreg++];
        ra->action = rf->action;
        ra->param = rf->param;
        ra->other = rf->other;
        /* keep and retain take a struct argument and a target handle */
        int keep = rf->action == CB_REGISTRY_KEEP || rf->action == CB_REGISTRY_RETAIN;
        ra->kind = keep ? CB_REG_KIND_NONE : reg_kind(facts, fc, ra->param);
        ra->other_kind = reg_kind(facts, fc, ra->other);
        int bad = ra->param < 0 || (rf->names_other && ra->other < 0);
        bad |= !keep && ra->kind == CB_REG_KIND_NONE;
        bad |= ra->other >= 0 && ra->other_kind == CB_REG_KIND_NONE;
        bad |= rf->action == CB_REGISTRY_RETAIN && ra->other_kind != CB_REG_KIND_GRAPH;
        bad |= keep && (ra->other < 0 || (fc->params[ra->param].shape != SH_IN_PTR &&
                                          fc->params[ra->param].shape != SH_IN_FUNCPTR &&
                                          fc->params[ra->param].shape != SH_IN_BUFFER));
        if (bad && fc->supported) {
            fc->supported = 0;
            fc->why = model_strdup(m, "a registry rule names a parameter without a registry kind");
        }
    }
}

/* Checks one undo rule of fc (its fact) and sets fc->undo; -1 with err
 * on a bad argument. */
static int resolve_undo(cb_model *m, const cb_facts *facts, const cb_undo_fact *uf,
                        cb_fclass *fc, char *err, size_t errlen)
{
    const cb_function *f = fc->fn, *u = uf->undo;
    const cb_rule *r = uf->rule;
    size_t n = uf->nargs;
    if (fc->undo) {
        snprintf(err, errlen, "%s:%u: a second undo rule for %s", facts->rules->path, r->line, f->name);
        return -1;
    }
    if (n != u->nparams) {
        snprintf(err, errlen, "%s:%u: undo %s passes %zu argument(s) to %s, which takes %zu",
                 facts->rules->path, r->line, f->name, n, u->name, u->nparams);
        return -1;
    }
    if (!u->proc_version) {
        snprintf(err, errlen, "%s:%u: undo %s: %s has no PFN typedef to call it through",
                 facts->rules->path, r->line, f->name, u->name);
        return -1;
    }
    cb_undo *ud = model_alloc(m, sizeof *ud);
    ud->fn = u;
    ud->nargs = n;
    ud->param = model_alloc(m, (n ? n : 1) * sizeof *ud->param);
    ud->literal = model_alloc(m, (n ? n : 1) * sizeof *ud->literal);
    for (size_t a = 0; a < n; a++) {
        ud->param[a] = uf->param[a];
        ud->literal[a] = uf->literal[a];
        if (ud->param[a] < 0 && !ud->literal[a]) {
            snprintf(err, errlen, "%s:%u: undo argument '%s' is not a parameter of %s",
                     facts->rules->path, r->line, r->args[a + 2], f->name);
            return -1;
        }
        if (ud->param[a] < 0)
            continue;
        const cb_pclass *pc = &fc->params[ud->param[a]];
        if ((pc->shape != SH_OUT && pc->shape != SH_VALUE) || pc->elem == EK_STRUCT) {
            snprintf(err, errlen,
                     "%s:%u: undo argument '%s' of %s is neither a scalar output nor a scalar input",
                     facts->rules->path, r->line, r->args[a + 2], f->name);
            return -1;
        }
    }
    fc->undo = ud;
    return 0;
}

int classify_undo(cb_model *m, cb_classes *c, const cb_facts *facts, char *err, size_t errlen)
{
    /* the undo rules whose functions the model has (the others are
     * reported by rules_unmatched), in file order */
    for (size_t i = 0; i < facts->nundos; i++) {
        const cb_undo_fact *uf = &facts->undos[i];
        if (resolve_undo(m, facts, uf, &c->functions[uf->function], err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* The count-bound rule r on parameter k of fc, checked and recorded on the
 * output array it counts; -1 with err when it does not fit. */
static int resolve_count_bound(const cb_facts *facts, const cb_rule *r, cb_fclass *fc, size_t k,
                               const cb_function *u, char *err, size_t errlen)
{
    const cb_function *f = fc->fn;
    const char *path = facts->rules->path;
    const cb_type *count = u->nparams == 2 ? u->params[0].type : NULL;
    int bound_arg = -1;
    for (size_t j = 0; count && j < f->nparams; j++)
        if (bound_arg < 0 && fc->params[j].shape == SH_VALUE && f->params[j].type->kind == TY_HANDLE &&
            strcmp(f->params[j].type->canon, u->params[1].type->canon) == 0)
            bound_arg = (int)j;
    if (!count || count->kind != TY_POINTER || count->pointee->kind != TY_INT ||
        count->pointee->is_signed || bound_arg < 0) {
        snprintf(err, errlen,
                 "%s:%u: count-bound %s: %s must take (unsigned int *count, H) with H the type "
                 "of a handle parameter of %s", path, r->line, f->name, u->name, f->name);
        return -1;
    }
    if (!u->proc_version && !facts->api.is_library) {
        snprintf(err, errlen, "%s:%u: count-bound %s: %s has no PFN typedef to call it through",
                 path, r->line, f->name, u->name);
        return -1;
    }
    if (!fc->supported)
        return 0; /* its shapes say nothing: unsupported for another reason */
    cb_pclass *array = NULL;
    for (size_t j = 0; j < f->nparams; j++)
        if (fc->params[j].shape == SH_OUT_ARRAY && fc->params[j].count_index == (int)k &&
            !fc->params[j].size_fn)
            array = &fc->params[j];
    const cb_pclass *pc = &fc->params[k];
    if (!array || pc->shape != SH_VALUE || pc->elem != EK_INT || pc->is_signed) {
        snprintf(err, errlen,
                 "%s:%u: count-bound %s: '%s' is not the unsigned input count of an output array",
                 path, r->line, f->name, pc->param->name);
        return -1;
    }
    array->bound_fn = u;
    array->bound_arg = bound_arg;
    return 0;
}

int classify_count_bounds(cb_model *m, cb_classes *c, const cb_facts *facts, char *err,
                          size_t errlen)
{
    (void)m;
    for (size_t i = 0; i < c->nfunctions; i++) {
        cb_fclass *fc = &c->functions[i];
        for (size_t k = 0; k < fc->fn->nparams; k++) {
            fc->params[k].bound_fn = NULL;
            fc->params[k].bound_arg = -1;
        }
        for (size_t k = 0; k < fc->fn->nparams; k++) {
            const cb_param_facts *pf = &facts->functions[i].params[k];
            const cb_rule *r = pf->on[CB_D_COUNT_BOUND];
            /* COUNTFN missing from the header: rules_unmatched reports it */
            if (r && pf->count_fn &&
                resolve_count_bound(facts, r, fc, k, pf->count_fn, err, errlen) < 0)
                return -1;
        }
    }
    return 0;
}

void classes_free(cb_classes *c)
{
    if (c)
        free(c->handles);
    free(c);
}
