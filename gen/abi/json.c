/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c — see json.h. Recursive descent; nesting is bounded (64 levels).
 */
#include "abi/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    cb_arena *a;
    const char *p, *end;
    int line;
    char *err;
    size_t errlen;
    int failed;
} jparser;

static void jfail(jparser *j, const char *what)
{
    if (!j->failed && j->errlen)
        snprintf(j->err, j->errlen, "line %d: %s", j->line, what);
    j->failed = 1;
}

static void skip_ws(jparser *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        if (*j->p == '\n')
            j->line++;
        j->p++;
    }
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static const char *parse_string(jparser *j)
{
    /* j->p is at the opening quote; the decoded text is never longer. */
    const char *s = ++j->p, *q = s;
    while (q < j->end && *q != '"')
        q += *q == '\\' && q + 1 < j->end ? 2 : 1;
    char *out = arena_alloc(j->a, (size_t)(q - s) + 1), *o = out;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20) {
            jfail(j, "control character in a string");
            return NULL;
        }
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        if (j->p >= j->end)
            break;
        char e = *j->p++;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned v = 0;
            for (int k = 0; k < 4; k++) {
                int h = j->p < j->end ? hexval(*j->p++) : -1;
                if (h < 0) {
                    jfail(j, "bad \\u escape");
                    return NULL;
                }
                v = v * 16 + (unsigned)h;
            }
            if (v < 0x80) {
                *o++ = (char)v;
            } else if (v < 0x800) {
                *o++ = (char)(0xc0 | (v >> 6));
                *o++ = (char)(0x80 | (v & 0x3f));
            } else {
                *o++ = (char)(0xe0 | (v >> 12));
                *o++ = (char)(0x80 | ((v >> 6) & 0x3f));
                *o++ = (char)(0x80 | (v & 0x3f));
            }
            break;
        }
        default:
            jfail(j, "bad escape in a string");
            return NULL;
        }
    }
    if (j->p >= j->end) {
        jfail(j, "unterminated string");
        return NULL;
    }
    j->p++;
    *o = '\0';
    return out;
}

static jv *parse_value(jparser *j, int depth);

static jv *new_value(jparser *j, jv_kind k)
{
    jv *v = arena_alloc(j->a, sizeof *v);
    v->kind = k;
    v->line = j->line;
    return v;
}

static jv *parse_container(jparser *j, int depth, int is_obj)
{
    jv *v = new_value(j, is_obj ? JV_OBJ : JV_ARR);
    size_t cap = 0, kcap = 0, kn = 0;
    char close = is_obj ? '}' : ']';
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return v;
    }
    for (;;) {
        skip_ws(j);
        if (is_obj) {
            if (j->p >= j->end || *j->p != '"') {
                jfail(j, "expected a key");
                return NULL;
            }
            const char *key = parse_string(j);
            if (!key)
                return NULL;
            *ARENA_PUSH(j->a, v->keys, kn, kcap) = key;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                jfail(j, "expected ':'");
                return NULL;
            }
            j->p++;
        }
        jv *item = parse_value(j, depth + 1);
        if (!item)
            return NULL;
        *ARENA_PUSH(j->a, v->items, v->n, cap) = item;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return v;
        }
        jfail(j, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        return NULL;
    }
}

static jv *parse_value(jparser *j, int depth)
{
    if (depth > 64) {
        jfail(j, "nested too deeply");
        return NULL;
    }
    skip_ws(j);
    if (j->p >= j->end) {
        jfail(j, "unexpected end of input");
        return NULL;
    }
    char c = *j->p;
    if (c == '{' || c == '[')
        return parse_container(j, depth, c == '{');
    if (c == '"') {
        const char *s = parse_string(j);
        if (!s)
            return NULL;
        jv *v = new_value(j, JV_STR);
        v->str = s;
        return v;
    }
    static const struct {
        const char *word;
        jv_kind kind;
        int value;
    } words[] = {{"true", JV_BOOL, 1}, {"false", JV_BOOL, 0}, {"null", JV_NULL, 0}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[i].word, n) == 0) {
            j->p += n;
            jv *v = new_value(j, words[i].kind);
            v->num = words[i].value;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[32];
        size_t n = 0;
        while (j->p < j->end && n + 1 < sizeof buf && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')))
            buf[n++] = *j->p++;
        buf[n] = '\0';
        if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) {
            jfail(j, "only integers are supported");
            return NULL;
        }
        char *endp;
        jv *v = new_value(j, JV_INT);
        v->num = strtoll(buf, &endp, 10);
        if (*endp) {
            jfail(j, "bad number");
            return NULL;
        }
        return v;
    }
    jfail(j, "unexpected character");
    return NULL;
}

jv *json_parse(cb_arena *a, const char *text, size_t len, char *err, size_t errlen)
{
    jparser j = {a, text, text + len, 1, err, errlen, 0};
    jv *v = parse_value(&j, 0);
    if (!v)
        return NULL;
    skip_ws(&j);
    if (j.p != j.end) {
        jfail(&j, "trailing characters after the value");
        return NULL;
    }
    return v;
}

const jv *json_get(const jv *obj, const char *key)
{
    if (!obj || obj->kind != JV_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

const char *json_str(const jv *obj, const char *key, const char *def)
{
    const jv *v = json_get(obj, key);
    return v && v->kind == JV_STR ? v->str : def;
}

long long json_int(const jv *obj, const char *key, long long def)
{
    const jv *v = json_get(obj, key);
    return v && v->kind == JV_INT ? v->num : def;
}
