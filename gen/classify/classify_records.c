/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify_records.c — the field classes of every record
 * (classify_records.h).
 *
 * A field's kind follows its type: integers by signedness (a handle
 * class's integer typedef as a value handle), floats, enums of the model,
 * handles of a class, records of the model by value, pointers, function
 * pointers, char arrays, arrays of any of these (count elements); anything
 * else is opaque bytes. Then the record rules of the record's own fields
 * (not those of its anonymous members): kernel-params-field and
 * kernel-extra-field on a pointer, field-count on a pointer to a record or
 * handle class (and field-count-query on such a field: the library
 * fills it), field-count-out on a pointer to a handle class (a rule
 * whose field is of another type changes nothing; rules_unmatched
 * reports it). Each field's Python name is decided here too (pyname), so
 * that render_structs only spells it.
 */
#define _POSIX_C_SOURCE 200809L
#include "classify/classify_records.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "classify/classify.h"
#include "rules/rules.h"

/* What the stage reads: the model, the facts and the handle classes. */
typedef struct {
    cb_model *m;
    const cb_facts *facts;
    const handle_class *hc;
    size_t nhc;
} record_env;

typedef struct {
    cb_field_kind kind;
    long long size, count;
    int ref;
} field_shape;

static field_shape shape_of(const record_env *env, const cb_type *t, int nested)
{
    const cb_model *m = env->m;
    field_shape s = {CB_FIELD_BYTES, t->size > 0 ? t->size : 0, 0, -1};
    switch (t->kind) {
    case TY_INT:
        s.ref = handles_index(env->hc, env->nhc, t->name);
        s.kind = s.ref >= 0 ? CB_FIELD_VALUE_HANDLE : t->is_signed ? CB_FIELD_SIGNED : CB_FIELD_UNSIGNED;
        if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8) {
            s.kind = CB_FIELD_BYTES;
            s.ref = -1;
        }
        break;
    case TY_FLOAT:
        s.kind = t->size == 4 ? CB_FIELD_FLOAT : t->size == 8 ? CB_FIELD_DOUBLE : CB_FIELD_BYTES;
        break;
    case TY_ENUM:
        s.ref = model_type_enum(m, t);
        s.kind = s.ref >= 0 ? CB_FIELD_ENUM : t->is_signed ? CB_FIELD_SIGNED : CB_FIELD_UNSIGNED;
        break;
    case TY_HANDLE:
        /* int-handles: a handle field is a plain int, as the API's
         * functions give and take them (cuda.bindings.nvml's device_) */
        s.ref = env->facts->api.int_handles ? -1 : handles_index(env->hc, env->nhc, t->name);
        s.kind = s.ref >= 0 ? CB_FIELD_HANDLE : CB_FIELD_POINTER;
        break;
    case TY_RECORD:
        s.ref = nested >= 0 ? nested : model_type_record(m, t);
        s.kind = s.ref >= 0 ? CB_FIELD_RECORD : CB_FIELD_BYTES;
        break;
    case TY_POINTER:
        s.kind = CB_FIELD_POINTER;
        break;
    case TY_FUNCPTR:
        /* ref: the typedef's function-pointer class (CUhostFn), which
         * the field takes as well as an int (bind_struct.c to_pointer) */
        s.ref = handles_index(env->hc, env->nhc, t->name);
        s.kind = CB_FIELD_FUNCPTR;
        break;
    case TY_ARRAY: {
        const cb_type *e = t->pointee;
        if (!e || e->kind == TY_ARRAY || t->array_len <= 0)
            break; /* opaque bytes */
        if (e->kind == TY_INT && e->size == 1 && e->canon && strcmp(e->canon, "char") == 0) {
            s.kind = CB_FIELD_CHARS;
            s.size = 1;
            s.count = t->array_len;
            break;
        }
        field_shape es = shape_of(env, e, nested);
        if (es.kind == CB_FIELD_BYTES)
            break;
        es.count = t->array_len;
        return es;
    }
    default:
        break;
    }
    return s;
}

/* The facts of the field `name` of top's flattened table, NULL for a
 * field inside an anonymous member (top NULL). */
static const cb_field_facts *field_facts(const record_env *env, const cb_record *top,
                                         const char *name)
{
    if (!top)
        return NULL;
    long long k = model_field_index(env->m, top, name);
    return k >= 0 ? &env->facts->records[top - env->m->records].fields[k] : NULL;
}

/* kernel-params-field / kernel-extra-field rules: the field's kind and the
 * indexes of the kernel fields it is typed by (bind_struct.h). */
static void kernel_field(const record_env *env, const cb_record *top, const cb_field *f,
                         cb_field_class *fc)
{
    const cb_field_facts *ff = field_facts(env, top, f->name);
    const cb_rule *kp = ff ? ff->on[CB_D_KERNEL_PARAMS_FIELD] : NULL;
    const cb_rule *ke = ff ? ff->on[CB_D_KERNEL_EXTRA_FIELD] : NULL;
    if (f->type->kind != TY_POINTER || (!kp && !ke))
        return;
    fc->kind = kp ? CB_FIELD_KERNEL_PARAMS : CB_FIELD_KERNEL_EXTRA;
    fc->ref = kp ? (int)ff->func : -1;
    fc->aux = kp ? ff->kern : -1;
}

/* The record index of the element type of a field `T *f` whose T is a
 * struct or union of the header, -1 otherwise. */
static int pointee_record(const cb_model *m, const cb_field *f)
{
    if (f->type->kind != TY_POINTER || !f->type->pointee ||
        f->type->pointee->kind != TY_RECORD)
        return -1;
    return model_type_record(m, f->type->pointee);
}

/* field-count rules on a fixed array `T FIELD[N]` (any element kind but
 * char text and opaque bytes): its kind stays T's, aux is COUNT's index
 * (bind_struct.h: "Counted arrays"); on a `T *FIELD` pointing at an array
 * counted by the integer field COUNT: RECORD_ARRAY when T is a struct or union of
 * the header (ref: its record), HANDLE_ARRAY when T is a handle class
 * (ref: its class, elem_size: the bytes of one handle) or an unsigned
 * integer type (ref -1: plain ints, elem_size its bytes); field-count-out
 * rules: HANDLE_OUT (T a handle class, as above); aux is the count
 * field's index in top's table (bind_struct.h). */
static void array_field(const record_env *env, const cb_record *top, const cb_field *f,
                        cb_field_class *fc)
{
    const cb_field_facts *ff = field_facts(env, top, f->name);
    const cb_rule *in = ff ? ff->on[CB_D_FIELD_COUNT] : NULL;
    const cb_rule *out = ff && !in ? ff->on[CB_D_FIELD_COUNT_OUT] : NULL;
    /* a fixed array keeps its element kind; aux: its count field */
    if (in && ff->count >= 0 && f->type->kind == TY_ARRAY && fc->count > 0 &&
        fc->kind != CB_FIELD_CHARS && fc->kind != CB_FIELD_BYTES) {
        fc->aux = ff->count;
        return;
    }
    if ((!in && !out) || f->type->kind != TY_POINTER || !f->type->pointee)
        return;
    long long count = out ? ff->count_out : ff->count;
    int elem = out ? -1 : pointee_record(env->m, f);
    field_shape es = shape_of(env, f->type->pointee, -1);
    int handle = es.kind == CB_FIELD_HANDLE || es.kind == CB_FIELD_VALUE_HANDLE;
    /* plain unsigned integers: a HANDLE_ARRAY of no class (ref -1) */
    int ints = !out && es.kind == CB_FIELD_UNSIGNED;
    if (count < 0 || (elem < 0 && !handle && !ints))
        return;
    fc->kind = elem >= 0 ? CB_FIELD_RECORD_ARRAY : out ? CB_FIELD_HANDLE_OUT : CB_FIELD_HANDLE_ARRAY;
    fc->ref = elem >= 0 ? elem : ints ? -1 : es.ref;
    fc->elem_size = elem >= 0 ? 0 : es.size;
    fc->aux = count;
    fc->fill = !out && ff->on[CB_D_FIELD_COUNT_QUERY] != NULL; /* the library fills it */
}

/* Whether f is a host function's pointer, `void (*)(void *)` (CUhostFn,
 * cudaHostFn_t), the shape whose field also takes a Python callable
 * (runtime/module/bind_struct.c: a host node's callable). */
static int host_fn_shape(const cb_field *f)
{
    const cb_type *t = f->type;
    return t->kind == TY_FUNCPTR && t->canon && strcmp(t->canon, "void (*)(void *)") == 0 &&
           f->bit_width < 0;
}

/* Whether f is a `void *` (a callback's data). */
static int void_pointer(const cb_field *f)
{
    const cb_type *t = f->type;
    return t->kind == TY_POINTER && t->pointee && t->pointee->kind == TY_VOID &&
           f->bit_width < 0;
}

/* The Python attribute name of field f (cb_field_class.pyname), in the
 * model's arena: a keyword takes a trailing `_` (rules_python_identifier),
 * and so does getPtr, which the method every struct class has would hide. */
static const char *field_pyname(cb_model *m, const cb_field *f)
{
    char *id = rules_python_identifier(strcmp(f->name, "getPtr") == 0 ? "getPtr_" : f->name);
    const char *s = model_strdup(m, id);
    free(id);
    return s;
}

/* Appends r's named fields at byte offset base to rc; anonymous members
 * flattened. top: the record the table is for (the rules name it, and
 * name an anonymous member's fields as its own: nvmlPRMTLV_v1_t's inData,
 * in its union). */
static void add_fields(const record_env *env, const cb_record *r, const cb_record *top,
                       long long base, cb_record_class *rc)
{
    const cb_model *m = env->m;
    for (size_t i = 0; i < r->nfields; i++) {
        const cb_field *f = &r->fields[i];
        if (!*f->name) {
            if (f->nested >= 0)
                add_fields(env, &m->records[f->nested], top, base + f->offset, rc);
            continue;
        }
        if (model_field_is_flexible(f))
            continue; /* beyond the record's bytes: a struct object never reaches it */
        field_shape s = shape_of(env, f->type, f->nested);
        cb_field_class *fc = &rc->fields[rc->nfields++];
        *fc = (cb_field_class){f, field_pyname(env->m, f), 0, -1, 0, s.kind, s.size, s.count,
                               s.ref, -1, 0, 0};
        kernel_field(env, top, f, fc);
        array_field(env, top, f, fc);
        /* chars-length: the API's char arrays are text (aux 1: a str up to
         * the first NUL, bind_struct.h), as its char * outputs are */
        if (fc->kind == CB_FIELD_CHARS && env->facts->api.chars_length)
            fc->aux = 1;
        /* a host function followed by its `void *` data: aux of the
         * function names the data field (bind_struct.h) */
        if (i > 0 && rc->nfields >= 2 && fc->kind == CB_FIELD_POINTER && void_pointer(f) &&
            host_fn_shape(&r->fields[i - 1]) && fc[-1].field == &r->fields[i - 1] &&
            fc[-1].kind == CB_FIELD_FUNCPTR && fc[-1].count == 0)
            fc[-1].aux = (long long)(rc->nfields - 1);
        if (f->bit_width >= 0) {
            fc->offset = base + f->bit_offset / 8;
            fc->bit_width = f->bit_width;
            fc->bit_offset = f->bit_offset % 8;
        } else {
            fc->offset = base + (f->offset > 0 ? f->offset : 0);
        }
    }
}

/* The host-bytes rules of record r, one extent each (their facts). */
static void add_extents(const record_env *env, const cb_record *r, cb_record_class *rc)
{
    cb_model *m = env->m;
    const cb_record_facts *rf = &env->facts->records[r - m->records];
    rc->extents = model_alloc(m, (rf->nhost_bytes + 1) * sizeof *rc->extents);
    for (size_t i = 0; i < rf->nhost_bytes; i++) {
        const cb_host_bytes_fact *h = &rf->host_bytes[i];
        cb_extent *e = &rc->extents[rc->nextents++];
        e->buffer = h->buffer;
        e->writes = h->writes;
        e->when = h->when;
        e->when_value = h->when_value;
        e->bytes = h->bytes;
        for (int t = 0; t < HB_NTERMS; t++)
            e->term[t] = h->term[t];
    }
}

/* Whether a call must check record i: own[i] (a counted array of its own
 * or a host extent), or a record it holds by value or in an array it owns
 * must. memo: -1 unknown; a record never holds itself by value, so a
 * record in progress is 0. */
static int record_checked(const record_env *env, size_t i, const int *own, signed char *memo);

static int members_checked(const record_env *env, const cb_record *r, const cb_record *top,
                           const int *own, signed char *memo)
{
    const cb_model *m = env->m;
    for (size_t k = 0; k < r->nfields; k++) {
        const cb_field *f = &r->fields[k];
        if (!*f->name) {
            if (f->nested >= 0 && members_checked(env, &m->records[f->nested], top, own, memo))
                return 1;
            continue;
        }
        const cb_type *t = f->type->kind == TY_ARRAY ? f->type->pointee : f->type;
        const cb_field_facts *ff = field_facts(env, top, f->name);
        int idx = -1;
        if (t && t->kind == TY_RECORD)
            idx = f->nested >= 0 ? f->nested : model_type_record(m, t);
        else if (ff && ff->on[CB_D_FIELD_COUNT])
            idx = pointee_record(m, f);
        if (idx >= 0 && record_checked(env, (size_t)idx, own, memo))
            return 1;
    }
    return 0;
}

static int record_checked(const record_env *env, size_t i, const int *own, signed char *memo)
{
    if (memo[i] < 0) {
        memo[i] = 0;
        memo[i] = (signed char)(own[i] || members_checked(env, &env->m->records[i],
                                                          &env->m->records[i], own, memo));
    }
    return memo[i];
}

cb_record_class *classify_records(cb_model *m, const cb_facts *facts, const handle_class *hc,
                                  size_t nhc)
{
    const record_env env = {m, facts, hc, nhc};
    cb_record_class *rcs = model_alloc(m, (m->nrecords + 1) * sizeof *rcs);
    int *own = calloc(m->nrecords + 1, sizeof *own);
    signed char *memo = malloc(m->nrecords + 1);
    if (!own || !memo)
        arena_oom();
    memset(memo, -1, m->nrecords + 1);
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        cb_record_class *rc = &rcs[i];
        rc->fields = model_alloc(m, (facts->records[i].nfields + 1) * sizeof *rc->fields);
        add_fields(&env, r, r, 0, rc);
        add_extents(&env, r, rc);
        /* a counted array the struct object owns (a driver-filled
         * HANDLE_OUT array is the driver's), or a host extent */
        for (size_t k = 0; k < rc->nfields; k++)
            own[i] |= rc->fields[k].kind == CB_FIELD_RECORD_ARRAY ||
                      rc->fields[k].kind == CB_FIELD_HANDLE_ARRAY;
        own[i] |= rc->nextents > 0;
    }
    for (size_t i = 0; i < m->nrecords; i++)
        rcs[i].checked = record_checked(&env, i, own, memo);
    free(own);
    free(memo);
    return rcs;
}

/* N of a name ending in _vN, _vN_t or _vN_st (nvmlMemory_v2_t: 2); 0 for
 * any other name. */
static unsigned long name_version(const char *name)
{
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, "_st") == 0)
        n -= 3;
    else if (n > 2 && strcmp(name + n - 2, "_t") == 0)
        n -= 2;
    size_t d = n;
    while (d && isdigit((unsigned char)name[d - 1]))
        d--;
    if (d == n || d < 2 || name[d - 1] != 'v' || name[d - 2] != '_')
        return 0;
    return strtoul(name + d, NULL, 10);
}

unsigned long long classify_record_version(const cb_api *api, const cb_record *r, long long *offset)
{
    unsigned long v = 0;
    if (!api->version_field || r->size <= 0)
        return 0;
    v = name_version(r->name);
    if (!v && *r->tag)
        v = name_version(r->tag);
    for (size_t a = 0; !v && a < r->naliases; a++)
        v = name_version(r->aliases[a]);
    for (size_t k = 0; v && k < r->nfields; k++) {
        const cb_field *f = &r->fields[k];
        if (strcmp(f->name, api->version_field) == 0 && f->bit_width < 0 &&
            strcmp(f->type->spelling, "unsigned int") == 0) {
            *offset = f->offset;
            return ((unsigned long long)r->size | (unsigned long long)v << api->version_shift) &
                   0xffffffffull;
        }
    }
    return 0;
}
