/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_structs.c — template data for the struct and union classes
 * (render_structs.h): the classes' names and docstrings, and the field
 * classes classify_records decided, spelled. Data only: the emitted text
 * is in templates/driver/structs.c.tmpl.
 *
 * Class names follow cuda.bindings: a record with a tag is named by its tag
 * (CUDA_MEMCPY2D_st), one without by its first typedef; records nested
 * without a tag are anon_structN / anon_unionN, numbered in post-order
 * (inner records first) over the header, structs and unions counted apart,
 * anonymous members (flattened into their parent, never exported) counted
 * too. Every typedef name and the tag of a record name the same class.
 */
#define _POSIX_C_SOURCE 200809L
#include "render/render_structs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "render/render_names.h"
#include "render/render_util.h"

/* The class name of handle class `index` of the module's table, "" when
 * none. The name is the model's (a handle, callback or typedef name),
 * which outlives the rendering. */
static const char *handle_name(const cb_classes *c, int index)
{
    return index >= 0 && (size_t)index < c->nhandles ? c->handles[index].name : "";
}

/* A field's snake_case name in a snake_case module (malloc'ed), or NULL:
 * not such a module, the same as pyname, or another field's name. */
static char *snake_field_name(const cb_api *api, const cb_record_class *rc, const char *pyname)
{
    char *snake = rules_snake_field_name(api, pyname);
    if (!snake)
        return NULL;
    int clash = strcmp(snake, pyname) == 0;
    for (size_t k = 0; !clash && k < rc->nfields; k++)
        clash = strcmp(rc->fields[k].pyname, snake) == 0;
    if (clash) {
        free(snake);
        return NULL;
    }
    return snake;
}

/* Whether a snake_case module's record gets the member `name` that
 * cuda.bindings' library structs have (ptr, from_ptr, ...): only where no
 * field answers to that name (the field keeps it). */
static int record_gets_member(const cb_api *api, const cb_record_class *rc, const char *name)
{
    if (!api->snake)
        return 0;
    for (size_t k = 0; k < rc->nfields; k++) {
        char *snake = snake_field_name(api, rc, rc->fields[k].pyname);
        int named = strcmp(rc->fields[k].pyname, name) == 0 || (snake && strcmp(snake, name) == 0);
        free(snake);
        if (named)
            return 0;
    }
    return 1;
}

/* The static constructors of cuda.bindings' library structs
 * (runtime/module/bind_struct_from.h), all three or none. */
static int record_has_constructors(const cb_api *api, const cb_record_class *rc)
{
    return record_gets_member(api, rc, "from_ptr") && record_gets_member(api, rc, "from_buffer") &&
           record_gets_member(api, rc, "from_data");
}

/* Whether the setter of field fc keeps its count field (aux) (bind_struct.h
 * cbs_field_def.sets_count): a fixed counted array always; a field-count
 * pointer field in a snake_case module, whose count is hidden. */
static int sets_count(const cb_api *api, const cb_field_class *fc)
{
    if (fc->aux < 0)
        return 0;
    if (fc->count > 0)
        return fc->kind != CB_FIELD_CHARS;
    return api->snake && (fc->kind == CB_FIELD_RECORD_ARRAY || fc->kind == CB_FIELD_HANDLE_ARRAY);
}

/* Whether field k of rc is the count a counted array's setter keeps: a
 * snake_case module hides its snake_case name, as cuda.bindings hides the
 * field (the array's length says it). */
static int hidden_count(const cb_api *api, const cb_record_class *rc, size_t k)
{
    for (size_t j = 0; api->snake && j < rc->nfields; j++)
        if (sets_count(api, &rc->fields[j]) && rc->fields[j].aux == (long long)k)
            return 1;
    return 0;
}

/* The field table of record class rc (classify_records.h), for the
 * template. class_names: the class name of every record (the stubs type
 * array fields by their element's class). */
static tv *fields_value(const cb_classes *c, const cb_record_class *rc, char **class_names)
{
    const cb_api *api = &c->facts->api;
    tv *out = tv_list();
    for (size_t i = 0; i < rc->nfields; i++) {
        const cb_field_class *fc = &rc->fields[i];
        int records = fc->kind == CB_FIELD_RECORD_ARRAY;
        int handles = fc->kind == CB_FIELD_HANDLE_OUT || fc->kind == CB_FIELD_HANDLE_ARRAY;
        int hidden = hidden_count(api, rc, i);
        tv *fv = tv_map();
        tv_set_int(fv, "sets_count", sets_count(api, fc));
        tv_set_bool(fv, "record_array", records || handles);
        tv_set_str(fv, "elem_class", records                ? class_names[fc->ref]
                                     : handles && fc->ref < 0 ? "int"
                                     : handles              ? handle_name(c, fc->ref)
                                                            : "");
        tv_set_int(fv, "aux", fc->aux);
        tv_set_int(fv, "elem_size", fc->elem_size);
        tv_set_str(fv, "name", fc->pyname); /* classify_records decided it */
        /* and in a snake_case module its snake_case name as well
         * (busId -> bus_id, as cuda.bindings' struct classes name it),
         * where that differs and no other field has it */
        char *snake = snake_field_name(api, rc, fc->pyname);
        /* a hidden count keeps its C name where that is not its
         * snake_case name too (clkMonListSize, not count) */
        char *plain = hidden && !snake ? rules_snake_field_name(api, fc->pyname) : NULL;
        tv_set_bool(fv, "name_hidden", plain && strcmp(plain, fc->pyname) == 0);
        free(plain);
        tv_set_bool(fv, "has_snake_name", snake != NULL && !hidden);
        tv_set_str(fv, "snake_name", snake ? snake : "");
        free(snake);
        tv_set_str(fv, "kind", render_field_kind(fc->kind));
        tv_set_int(fv, "size", fc->size);
        tv_set_int(fv, "ref", fc->ref);
        tv_set_int(fv, "count", fc->count);
        tv_set_int(fv, "offset", fc->offset);
        tv_set_int(fv, "bit_width", fc->bit_width);
        tv_set_int(fv, "bit_offset", fc->bit_offset);
        tv_push(out, fv);
    }
    return out;
}

/* The field-default rules of record class rc (record i): bind_struct.h's
 * cbs_field_default, one per integer field a rule gives a value. */
static tv *defaults_value(const cb_classes *c, size_t i, const cb_record_class *rc)
{
    const cb_model *m = c->facts->model;
    const cb_record *r = &m->records[i];
    tv *list = tv_list();
    for (size_t k = 0; k < rc->nfields; k++) {
        const cb_field_class *fc = &rc->fields[k];
        long long x = model_field_index(m, r, fc->field->name);
        const cb_rule *rule = x >= 0 ? c->facts->records[i].fields[x].on[CB_D_FIELD_DEFAULT] : NULL;
        unsigned long long value;
        if (!rule || (fc->kind != CB_FIELD_SIGNED && fc->kind != CB_FIELD_UNSIGNED) ||
            fc->bit_width >= 0 || fc->count || !rules_field_default_value(rule, &value))
            continue;
        tv *d = tv_map();
        tv_set_int(d, "offset", fc->offset);
        tv_set_int(d, "size", fc->size);
        tv_set_strf(d, "value", "%lluull", value);
        tv_push(list, d);
    }
    return list;
}

/* The host extents of record class rc, as bind_struct.h's
 * cbs_host_extent. */
static tv *extents_value(const cb_record_class *rc)
{
    tv *list = tv_list();
    for (size_t i = 0; i < rc->nextents; i++) {
        const cb_extent *x = &rc->extents[i];
        tv *e = tv_map();
        tv_set_int(e, "buffer", x->buffer);
        tv_set_int(e, "writes", x->writes);
        tv_set_int(e, "when", x->when);
        tv_set_int(e, "when_value", x->when_value);
        tv_set_int(e, "bytes", x->bytes);
        tv *terms = tv_list();
        for (int t = 0; t < HB_NTERMS; t++)
            tv_push(terms, tv_int(x->term[t]));
        tv_set(e, "terms", terms);
        tv_push(list, e);
    }
    return list;
}

typedef struct {
    char **names;          /* class name per record (malloc'ed) */
    int nstruct, nunion;
} naming;

static char *dup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        arena_oom();
    return d;
}

static void name_post_order(const cb_model *m, size_t idx, naming *nm, int depth)
{
    const cb_record *r = &m->records[idx];
    if (depth > 64)
        return;
    for (size_t i = 0; i < r->nfields; i++)
        if (r->fields[i].nested >= 0 && (size_t)r->fields[i].nested != idx)
            name_post_order(m, (size_t)r->fields[i].nested, nm, depth + 1);
    if (nm->names[idx])
        return;
    char buf[64];
    if (*r->tag) {
        nm->names[idx] = dup(r->tag);
    } else if (r->is_nested) {
        if (r->is_union)
            snprintf(buf, sizeof buf, "anon_union%d", nm->nunion++);
        else
            snprintf(buf, sizeof buf, "anon_struct%d", nm->nstruct++);
        nm->names[idx] = dup(buf);
    } else {
        nm->names[idx] = dup(r->name);
    }
}

/* A C/Python identifier made of name (for records never reached above). */
static char *identifier(const char *name)
{
    char *s = dup(name);
    for (char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            *p = '_';
    return s;
}

static void add_alias(tv *aliases, const char **seen, size_t *nseen, const char *name, size_t idx,
                      const char *target)
{
    if (!name || !*name || strchr(name, '<') || strchr(name, '.'))
        return;
    for (size_t i = 0; i < *nseen; i++)
        if (strcmp(seen[i], name) == 0)
            return;
    seen[(*nseen)++] = name;
    tv *a = tv_map();
    tv_set_str(a, "name", name);
    tv_set_int(a, "index", (long long)idx);
    tv_set_str(a, "target", target);            /* the class it names */
    tv_set_bool(a, "is_alias", strcmp(name, target) != 0);
    tv_push(aliases, a);
}

tv *structs_value(const cb_model *m, const cb_classes *c)
{
    naming nm = {calloc(m->nrecords + 1, sizeof(char *)), 0, 0};
    char *anon_member = calloc(m->nrecords + 1, 1);
    size_t cap_seen = 1;
    for (size_t i = 0; i < m->nrecords; i++)
        cap_seen += m->records[i].naliases + 4;
    const char **seen = calloc(cap_seen, sizeof *seen);
    if (!nm.names || !anon_member || !seen)
        arena_oom();
    for (size_t i = 0; i < m->nrecords; i++)
        for (size_t k = 0; k < m->records[i].nfields; k++) {
            const cb_field *f = &m->records[i].fields[k];
            if (!*f->name && f->nested >= 0)
                anon_member[f->nested] = 1;
        }
    for (size_t i = 0; i < m->nrecords; i++)
        if (!m->records[i].is_nested)
            name_post_order(m, i, &nm, 0);
    for (size_t i = 0; i < m->nrecords; i++)
        if (!nm.names[i])
            nm.names[i] = identifier(m->records[i].name);

    tv *root = tv_map();
    tv *records = tv_list(), *aliases = tv_list();
    size_t nseen = 0;
    for (size_t i = 0; i < m->nrecords; i++) {
        const cb_record *r = &m->records[i];
        tv *rv = tv_map();
        tv_set_int(rv, "index", (long long)i);
        tv_set_str(rv, "name", nm.names[i]);
        tv_set_int(rv, "size", r->size > 0 ? r->size : 0);
        tv_set_int(rv, "align", r->align > 0 ? r->align : 1);
        long long version_offset = 0;
        unsigned long long version = classify_record_version(&c->facts->api, r, &version_offset);
        tv_set_int(rv, "version_offset", version_offset);
        tv_set_strf(rv, "version", "%lluu", version);
        const cb_record_class *rc = &c->records[i];
        tv_set(rv, "fields", fields_value(c, rc, nm.names));
        tv_set(rv, "extents", extents_value(rc));
        tv *defaults = defaults_value(c, i, rc);
        tv_set_bool(rv, "has_defaults", tv_len(defaults) > 0);
        tv_set_int(rv, "ndefaults", (long long)tv_len(defaults));
        tv_set(rv, "defaults", defaults);
        tv_set_int(rv, "nextents", (long long)rc->nextents);
        tv_set_bool(rv, "has_extents", rc->nextents > 0);
        tv_set_int(rv, "nfields", (long long)rc->nfields);
        tv_set_bool(rv, "has_ptr", record_gets_member(&c->facts->api, rc, "ptr"));
        tv_set_bool(rv, "constructors", record_has_constructors(&c->facts->api, rc));
        tv_set_bool(rv, "exported", !anon_member[i]);
        tv_set_int(rv, "checked", rc->checked);

        /* its docstring (driver/struct_doc.c): the C type, its typedefs,
         * its size and the header's documentation, if kept */
        tv_set_bool(rv, "is_union", r->is_union);
        tv_set_str(rv, "c_tag", *r->tag ? r->tag : r->name);
        tv *typedefs = tv_list(); /* the typedefs only, not the macros naming it */
        for (size_t a = 0; a + r->nmacro_aliases < r->naliases; a++)
            tv_push(typedefs, tv_str(r->aliases[a]));
        tv_set(rv, "typedefs", typedefs);
        tv_set_int(rv, "doc_size", r->size);
        tv_set_bool(rv, "has_doc", r->doc && *r->doc);
        tv_set(rv, "doc", c_string_literal(r->doc ? r->doc : ""));
        tv_push(records, rv);

        if (anon_member[i])
            continue;
        add_alias(aliases, seen, &nseen, nm.names[i], i, nm.names[i]);
        add_alias(aliases, seen, &nseen, r->tag, i, nm.names[i]);
        add_alias(aliases, seen, &nseen, r->name, i, nm.names[i]);
        for (size_t a = 0; a < r->naliases; a++)
            add_alias(aliases, seen, &nseen, r->aliases[a], i, nm.names[i]);
        /* and in a snake_case module its typedefs' Python names
         * (CUfileDescr_t -> Descr, nvmlMemory_v2_t -> Memory_v2:
         * rules_type_pyname); a tag (nvmlMemory_st) is no typedef */
        for (size_t a = 0; a <= r->naliases; a++) {
            const char *cname = a < r->naliases ? r->aliases[a] : r->name;
            size_t len = strlen(cname);
            char *py = len > 2 && strcmp(cname + len - 2, "_t") == 0
                           ? rules_type_pyname(&c->facts->api, cname)
                           : NULL;
            if (py) {
                const char *kept = arena_strdup(m->arena, py); /* `seen` holds it */
                add_alias(aliases, seen, &nseen, kept, i, nm.names[i]);
                free(py);
            }
        }
    }
    tv_set(root, "records", records);
    tv_set_int(root, "count", (long long)m->nrecords);
    tv_set(root, "aliases", aliases);
    for (size_t i = 0; i < m->nrecords; i++)
        free(nm.names[i]);
    free(nm.names);
    free(anon_member);
    free(seen);
    return root;
}
