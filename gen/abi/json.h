/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h — a small JSON reader for the generator's own files (ABI
 * manifests, `_abi_signatures()` output of a built module).
 *
 * Integers only (no fractions or exponents: the manifests hold none);
 * strings may use every JSON escape, \u escapes are written as UTF-8.
 * Everything hangs off the arena passed in.
 */
#ifndef CUBIND_JSON_H
#define CUBIND_JSON_H

#include <stddef.h>

#include "model/arena.h"

typedef enum { JV_NULL, JV_BOOL, JV_INT, JV_STR, JV_ARR, JV_OBJ } jv_kind;

typedef struct jv {
    jv_kind kind;
    long long num;          /* JV_INT, JV_BOOL */
    const char *str;        /* JV_STR */
    struct jv **items;      /* JV_ARR, JV_OBJ: values in document order */
    const char **keys;      /* JV_OBJ */
    size_t n;
    int line;               /* 1-based line of the text where the value starts */
} jv;

/* Parses text[0..len). NULL with "line N: message" in err on error. */
jv *json_parse(cb_arena *a, const char *text, size_t len, char *err, size_t errlen);
/* obj[key] (first match) or NULL; NULL when obj is not an object. */
const jv *json_get(const jv *obj, const char *key);
/* obj[key] as a string / integer, or def when absent or of another kind. */
const char *json_str(const jv *obj, const char *key, const char *def);
long long json_int(const jv *obj, const char *key, long long def);

#endif
