/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify_records.h — how each field of each struct and union crosses the
 * Python boundary: the classify stage's part for records, as classify.h's
 * is for functions. Decided from the model, the module's handle classes
 * (handles.h) and the record rules' facts (rules_bind.h: kernel-params-field,
 * kernel-extra-field, field-count, field-count-out, field-count-query,
 * host-bytes); the
 * struct tables (render_structs.h) only spell what is decided here, for
 * runtime/module/bind_struct.h.
 */
#ifndef CUBIND_CLASSIFY_RECORDS_H
#define CUBIND_CLASSIFY_RECORDS_H

#include <stddef.h>

#include "classify/handles.h"
#include "model/model.h"
#include "rules/rules_bind.h"

/* What a field is (runtime/module/bind_struct.h's cbs_field_kind, spelled by
 * render_names.h). */
typedef enum {
    CB_FIELD_SIGNED,        /* signed integer of `size` bytes */
    CB_FIELD_UNSIGNED,      /* unsigned integer of `size` bytes */
    CB_FIELD_FLOAT,
    CB_FIELD_DOUBLE,
    CB_FIELD_ENUM,          /* ref: its enum */
    CB_FIELD_HANDLE,        /* opaque handle; ref: its handle class */
    CB_FIELD_VALUE_HANDLE,  /* integer handle; ref: its handle class */
    CB_FIELD_RECORD,        /* a record by value; ref: its record */
    CB_FIELD_POINTER,       /* a data pointer */
    CB_FIELD_CHARS,         /* a char array (count chars); aux 1: text
                               (the chars-length rule), else -1 */
    CB_FIELD_FUNCPTR,       /* a function pointer; aux: a host function's
                               `void *` data field after it, -1 */
    CB_FIELD_BYTES,         /* opaque bytes: a type not described */
    CB_FIELD_KERNEL_PARAMS, /* kernel-params-field: ref FUNC, aux KERN */
    CB_FIELD_KERNEL_EXTRA,  /* kernel-extra-field */
    CB_FIELD_RECORD_ARRAY,  /* field-count over records: ref the record,
                               aux COUNT */
    CB_FIELD_HANDLE_ARRAY,  /* field-count over handles: ref the class,
                               aux COUNT, elem_size one handle's bytes;
                               over unsigned integers: ref -1 */
    CB_FIELD_HANDLE_OUT,    /* field-count-out: as HANDLE_ARRAY, the
                               driver's array */
    CB_NFIELD_KINDS
} cb_field_kind;

/* One named field of a record's flattened table (anonymous members'
 * fields inline, model_field_index's order). */
typedef struct {
    const cb_field *field;
    const char *pyname;       /* its Python attribute: the C name, `_`
                                 appended to a Python keyword and to
                                 getPtr (every struct class's method) */
    long long offset;         /* bytes from the record's start; a bit-field's
                                 byte holding its first bit */
    long long bit_width;      /* -1 unless a bit-field */
    long long bit_offset;     /* a bit-field's first bit in that byte */
    cb_field_kind kind;
    long long size;           /* bytes of one element */
    long long count;          /* array elements, 0 for a single value */
    int ref;                  /* enum, handle class or record index, -1 */
    long long aux;            /* the kind's other field index, -1; a
                                 fixed array (count > 0) of a field-count
                                 rule: its count field */
    long long elem_size;      /* HANDLE_ARRAY / HANDLE_OUT: one handle */
    int fill;                 /* RECORD_ARRAY / HANDLE_ARRAY of a
                                 field-count-query rule: a function's
                                 output of the record gets it filled by
                                 the library (classify.h: fill_field) */
} cb_field_class;

/* A host-bytes rule of the record, resolved to field indexes of its table
 * (bind_struct.h's cbs_host_extent; its fact, which rules_bind checked). */
typedef struct {
    long long buffer;
    int writes;
    long long when;           /* the when= enum field, -1 */
    long long when_value;     /* its enumerator's value */
    long long term[HB_NTERMS];/* -1 for an absent term */
    long long bytes;          /* a constant SIZE (term[HB_SIZE] -1), else 0 */
} cb_extent;

typedef struct {
    cb_field_class *fields;
    size_t nfields;
    cb_extent *extents;
    size_t nextents;
    int checked;              /* a call must check the struct
                                 (bind_struct.h: cbs_struct_def.checked) */
} cb_record_class;

/* Classifies every record of m (parallel to model.records); strings and
 * arrays live in the model's arena. hc: the module's handle classes. */
cb_record_class *classify_records(cb_model *m, const cb_facts *facts, const handle_class *hc,
                                  size_t nhc);

/* A struct-version rule's value of record r's version field (sizeof | N
 * << shift, with N from its tag or a typedef name, rules.h), and the
 * field's offset in *offset; 0 when r is not versioned: no rule, no _vN
 * name, or no `unsigned int` field of the rule's name. */
unsigned long long classify_record_version(const cb_api *api, const cb_record *r,
                                           long long *offset);

#endif
