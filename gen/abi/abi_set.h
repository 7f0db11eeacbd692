/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi_set.h — the ABI set shared by abi.c (building, manifests),
 * abi_diff.c (comparing two sets) and abi_cmd.c (the commands); internal to
 * the generator's ABI tools.
 *
 * An ABI set is functions (signature strings and the records they reach),
 * records (size, alignment, fields with canonical types) and enums (members
 * and values), built from a parsed header or read back from a manifest, so
 * two headers, two manifests or one of each compare the same way. All of a
 * set's memory is its arena: aset_free releases everything at once.
 */
#ifndef CUBIND_ABI_SET_H
#define CUBIND_ABI_SET_H

#include <stddef.h>

#include "model/arena.h"
#include "model/model.h"
#include "util/strbuf.h"

typedef struct {
    const char *name, *type;
    long long offset, bits, bit_offset; /* bits = -1 unless a bit-field */
} afield;

typedef struct {
    const char *name;
    int is_union;
    long long size, align;
    afield *fields;
    size_t nfields;
    const char *layout; /* canonical, field names left out */
} arecord;

typedef struct {
    const char *name;
    long long value;
} aitem;

typedef struct {
    const char *name;
    aitem *items;
    size_t nitems;
} aenum;

typedef struct {
    const char *name, *abi, *proc, *signature;
    long long version;
    const char **records;
    size_t nrecords;
} afunc;

typedef struct {
    cb_arena *a;
    const char *source;      /* the path given */
    const char *header;      /* base name of the header */
    long long cuda_version;
    const char *inputs_hash; /* FNV-1a 64 of cuda.h + cudaTypedefs.h; "" if unknown */
    afunc *f;
    size_t nf;
    arecord *r;
    size_t nr;
    aenum *e;
    size_t ne;
} aset;

void aset_free(aset *s);

/* A set from a header (parsed) or a manifest (text starting with '{', or a
 * path ending in .json); -1 with "file:line: why" in err on failure. */
int aset_load(aset *s, const char *path, char *err, size_t errlen);

/* The set of a parsed model; its strings point into m's arena. */
void aset_from_model(aset *s, const cb_model *m, const char *source);

/* The manifest JSON of s, one entry per line. */
void aset_write_manifest(strbuf *o, const aset *s);

/* sb's text copied into a (sb freed; out of memory aborts). */
const char *abi_take(cb_arena *a, strbuf *sb);

/* s as a JSON string literal (NULL as ""). */
void abi_json_str(strbuf *o, const char *s);

#endif
