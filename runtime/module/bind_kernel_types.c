/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_kernel_types.c — parameter types from mangled names and type strings
 * (see bind_kernel_types.h).
 *
 * The demangler reads the subset of the Itanium C++ ABI a kernel's name
 * uses: a function name (plain, in namespaces, a template instance), an
 * optional return type (template instances), then the parameter types:
 * builtin types, pointers, references, cv-qualifiers, function types,
 * class and enum names (opaque: a CBS_KT_BLOB), template parameters
 * (T_, T0_ ...) and substitutions (S_, S0_ ..., St, Sa ...). Whatever else
 * it meets (an operator name, a pack expansion, an expression) makes it
 * give up: the caller then knows no types, and packs by size. A
 * substitution stands for the type (or name prefix) it refers to; the
 * table holds only what a parameter's kind needs.
 */
#include "bind_kernel_types.h"
#include "bind_fatbin_codec.h"
#include "rt_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUBS 64
#define MAX_TARGS 32
#define MAX_DEPTH 32

typedef struct {
    const char *p;
    cbs_ktype subs[MAX_SUBS];
    size_t nsubs;
    cbs_ktype targs[MAX_TARGS];
    size_t ntargs;
    int depth;
    int ok;
} demangler;

static void add_sub(demangler *d, cbs_ktype t)
{
    if (d->nsubs < MAX_SUBS)
        d->subs[d->nsubs++] = t;
    else
        d->ok = 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* <source-name> ::= <length> <identifier> */
static void source_name(demangler *d)
{
    size_t len = 0;
    if (!is_digit(*d->p)) {
        d->ok = 0;
        return;
    }
    while (is_digit(*d->p)) {
        len = len * 10 + (size_t)(*d->p++ - '0');
        if (len > 4096) {
            d->ok = 0;
            return;
        }
    }
    for (size_t k = 0; k < len; k++)
        if (d->p[k] == '\0') {
            d->ok = 0;
            return;
        }
    d->p += len;
}

/* <seq-id> _ (base 36, upper case), after S or T: the index + 1, or 0 for
 * the bare "_". -1 when malformed. Invariant of every step here: d->p
 * moves past a character only once it is known not to be the name's NUL
 * (a name cut short, "_ZN1aT5", ends inside the id: the NUL is malformed,
 * never skipped). */
static long seq_id(demangler *d)
{
    long v = 0;
    if (*d->p == '_') {
        d->p++;
        return 0;
    }
    for (char c; (c = *d->p) != '_'; d->p++) {
        if (is_digit(c))
            v = v * 36 + (c - '0');
        else if (c >= 'A' && c <= 'Z')
            v = v * 36 + (c - 'A' + 10);
        else
            return -1; /* the NUL included */
        if (v > 100000)
            return -1;
    }
    d->p++;
    return v + 1;
}

static cbs_ktype type(demangler *d);

/* I <template-arg>+ E; the function name's (record) bind T_, T0_ ... */
static void template_args(demangler *d, int record)
{
    d->p++; /* I */
    if (record)
        d->ntargs = 0;
    while (d->ok && *d->p != 'E') {
        cbs_ktype t = CBS_KT(CBS_KT_BLOB, 0);
        if (*d->p == 'L') {
            /* a literal: L <type> <value> E, or L _Z <encoding> E */
            const char *e = strchr(d->p, 'E');
            if (!e || d->p[1] == '_') {
                d->ok = 0;
                return;
            }
            d->p = e + 1;
        } else if (*d->p == 'X' || *d->p == 'J') {
            d->ok = 0; /* expressions and packs: not read */
            return;
        } else {
            t = type(d);
        }
        if (record) {
            if (d->ntargs == MAX_TARGS) {
                d->ok = 0;
                return;
            }
            d->targs[d->ntargs++] = t;
        }
    }
    if (*d->p != 'E')
        d->ok = 0;
    else
        d->p++;
}

/* A substitution S...: the kind it stands for. */
static cbs_ktype substitution(demangler *d)
{
    d->p++; /* S */
    char c = *d->p;
    if (c == 't') { /* St <unqualified-name>: std::name */
        d->p++;
        source_name(d);
        return CBS_KT(CBS_KT_BLOB, 0);
    }
    if (c == 'a' || c == 'b' || c == 's' || c == 'i' || c == 'o' || c == 'd') {
        d->p++;
        return CBS_KT(CBS_KT_BLOB, 0);
    }
    long id = seq_id(d);
    if (id < 0 || (size_t)id >= d->nsubs) {
        d->ok = 0;
        return 0;
    }
    return d->subs[id];
}

/* The components of N ... E after N (and its cv-qualifiers); `function`:
 * this is the function's own name (its last component is not a
 * substitution candidate, and its template arguments bind T_). Returns 1
 * when the name ended with template arguments. */
static int nested_name(demangler *d, int function)
{
    int templated = 0;
    while (*d->p == 'K' || *d->p == 'V' || *d->p == 'r' || *d->p == 'R' || *d->p == 'O')
        d->p++;
    while (d->ok && *d->p != 'E') {
        templated = 0;
        if (is_digit(*d->p)) {
            source_name(d);
        } else if (*d->p == 'S') {
            (void)substitution(d);
            if (*d->p != 'I')
                continue; /* a substitution is no new candidate */
        } else if (*d->p == 'I') {
            template_args(d, function);
            templated = 1;
        } else if (*d->p == 'T') {
            d->p++;
            if (seq_id(d) < 0)
                d->ok = 0;
        } else if ((*d->p == 'C' || *d->p == 'D') && is_digit(d->p[1])) {
            d->p += 2; /* a constructor or destructor */
        } else {
            d->ok = 0;
            return 0;
        }
        if (*d->p != 'E' || !function)
            add_sub(d, CBS_KT(CBS_KT_BLOB, 0));
    }
    if (*d->p != 'E')
        d->ok = 0;
    else
        d->p++;
    return templated;
}

static cbs_ktype builtin(char c)
{
    switch (c) {
    case 'b': return CBS_KT(CBS_KT_BOOL, 1);
    case 'c': case 'a': return CBS_KT(CBS_KT_INT, 1);
    case 'h': return CBS_KT(CBS_KT_UINT, 1);
    case 's': return CBS_KT(CBS_KT_INT, 2);
    case 't': return CBS_KT(CBS_KT_UINT, 2);
    case 'i': case 'w': return CBS_KT(CBS_KT_INT, 4);
    case 'j': return CBS_KT(CBS_KT_UINT, 4);
    case 'l': case 'x': return CBS_KT(CBS_KT_INT, 8);
    case 'm': case 'y': return CBS_KT(CBS_KT_UINT, 8);
    case 'n': case 'o': return CBS_KT(CBS_KT_BLOB, 16);
    case 'f': return CBS_KT(CBS_KT_FLOAT, 4);
    case 'd': return CBS_KT(CBS_KT_FLOAT, 8);
    case 'v': return CBS_KT(CBS_KT_UNKNOWN, 0);
    default: return (cbs_ktype)-1;
    }
}

static cbs_ktype type(demangler *d)
{
    if (!d->ok || ++d->depth > MAX_DEPTH) {
        d->ok = 0;
        return 0;
    }
    cbs_ktype t = 0;
    char c = *d->p;
    cbs_ktype b = builtin(c);
    if (b != (cbs_ktype)-1) {
        d->p++;
        t = b;
    } else if (c == 'P' || c == 'R' || c == 'O') {
        d->p++;
        (void)type(d);
        t = CBS_KT(CBS_KT_PTR, sizeof(void *));
        add_sub(d, t);
    } else if (c == 'K' || c == 'V' || c == 'r') {
        /* <CV-qualifiers> ::= [r] [V] [K]: all of them and the type they
         * qualify are one substitution candidate (PVKj: VKj, not Kj) */
        while (*d->p == 'r' || *d->p == 'V' || *d->p == 'K')
            d->p++;
        t = type(d);
        add_sub(d, t);
    } else if (c == 'T') {
        d->p++;
        long id = seq_id(d);
        if (id < 0 || (size_t)id >= d->ntargs) {
            d->ok = 0;
            return 0;
        }
        t = d->targs[id];
        add_sub(d, t);
    } else if (c == 'S') {
        t = substitution(d);
        if (d->ok && *d->p == 'I') {
            template_args(d, 0);
            t = CBS_KT(CBS_KT_BLOB, 0);
            add_sub(d, t);
        }
    } else if (is_digit(c) || c == 'N' || c == 'u') {
        if (c == 'N') {
            d->p++;
            nested_name(d, 0);
        } else {
            if (c == 'u')
                d->p++;
            source_name(d);
            if (d->ok && *d->p == 'I') {
                add_sub(d, CBS_KT(CBS_KT_BLOB, 0)); /* the template's name */
                template_args(d, 0);
            }
        }
        t = CBS_KT(CBS_KT_BLOB, 0);
        add_sub(d, t);
    } else if (c == 'F') {
        d->p++;
        while (d->ok && *d->p != 'E')
            (void)type(d);
        if (*d->p == 'E')
            d->p++;
        else
            d->ok = 0;
        t = CBS_KT(CBS_KT_UNKNOWN, 0);
        add_sub(d, t);
    } else if (c == 'D') {
        if (d->p[1] == 'h') {
            d->p += 2;
            t = CBS_KT(CBS_KT_FLOAT, 2);
        } else if (d->p[1] == 's') {
            d->p += 2;
            t = CBS_KT(CBS_KT_UINT, 2);
        } else if (d->p[1] == 'i') {
            d->p += 2;
            t = CBS_KT(CBS_KT_UINT, 4);
        } else if (d->p[1] == 'n') {
            d->p += 2;
            t = CBS_KT(CBS_KT_PTR, sizeof(void *));
        } else if (strncmp(d->p, "DF16_", 5) == 0) {
            d->p += 5;
            t = CBS_KT(CBS_KT_FLOAT, 2);
        } else {
            d->ok = 0;
        }
    } else {
        d->ok = 0;
    }
    d->depth--;
    return t;
}

int cbs_kt_from_mangled(const char *name, size_t n, cbs_ktype *out)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return 0;
    demangler d = {.p = name + 2, .ok = 1};
    int templated = 0;
    if (*d.p == 'N') {
        d.p++;
        templated = nested_name(&d, 1);
    } else if (*d.p == 'S' && d.p[1] == 't') {
        d.p += 2;
        source_name(&d);
    } else if (is_digit(*d.p)) {
        source_name(&d);
        if (d.ok && *d.p == 'I') {
            add_sub(&d, CBS_KT(CBS_KT_BLOB, 0)); /* the template's name */
            template_args(&d, 1);
            templated = 1;
        }
    } else {
        return 0; /* local names, operators, special names */
    }
    if (d.ok && templated)
        (void)type(&d); /* a template instance encodes its return type first */
    size_t k = 0;
    if (d.ok && *d.p == 'v' && (d.p[1] == '\0' || d.p[1] == '.')) {
        d.p++; /* (void): no parameters */
    } else {
        while (d.ok && *d.p && *d.p != '.') {
            cbs_ktype t = type(&d);
            if (!d.ok || k == n)
                return 0;
            out[k++] = t;
        }
    }
    return d.ok && k == n && (*d.p == '\0' || *d.p == '.');
}

int cbs_kt_from_string(const char *s, cbs_ktype *out)
{
    static const struct { const char *name; cbs_kt_kind kind; size_t size; } names[] = {
        {"p", CBS_KT_PTR, sizeof(void *)}, {"P", CBS_KT_PTR, sizeof(void *)},
        {"?", CBS_KT_BOOL, 1}, {"b1", CBS_KT_BOOL, 1}, {"bool", CBS_KT_BOOL, 1},
        {"float16", CBS_KT_FLOAT, 2}, {"float32", CBS_KT_FLOAT, 4}, {"float64", CBS_KT_FLOAT, 8},
        {"float", CBS_KT_FLOAT, 4}, {"double", CBS_KT_FLOAT, 8},
        {"int8", CBS_KT_INT, 1}, {"int16", CBS_KT_INT, 2}, {"int32", CBS_KT_INT, 4},
        {"int64", CBS_KT_INT, 8}, {"int", CBS_KT_INT, 4},
        {"uint8", CBS_KT_UINT, 1}, {"uint16", CBS_KT_UINT, 2}, {"uint32", CBS_KT_UINT, 4},
        {"uint64", CBS_KT_UINT, 8},
    };
    if (*s == '<' || *s == '=' || *s == '|')
        s++; /* numpy's byte order: little-endian or native only */
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(s, names[k].name) == 0) {
            *out = CBS_KT(names[k].kind, names[k].size);
            return 1;
        }
    cbs_kt_kind kind;
    switch (s[0]) {
    case 'f': kind = CBS_KT_FLOAT; break;
    case 'i': kind = CBS_KT_INT; break;
    case 'u': kind = CBS_KT_UINT; break;
    default: return 0;
    }
    if (s[1] < '1' || s[1] > '8' || s[2] != '\0')
        return 0;
    size_t size = (size_t)(s[1] - '0');
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return 0;
    if (kind == CBS_KT_FLOAT && size == 1)
        return 0;
    *out = CBS_KT(kind, size);
    return 1;
}

const char *cbs_kt_name(cbs_ktype t, size_t size, char *buf, size_t cap)
{
    static const char *const ints[9] = {NULL, "signed char", "short", NULL, "int",
                                         NULL, NULL, NULL, "long long"};
    static const char *const floats[9] = {NULL, NULL, "half", NULL, "float",
                                          NULL, NULL, NULL, "double"};
    const char *name = NULL;
    if (size <= 8) {
        switch (CBS_KT_KIND(t)) {
        case CBS_KT_INT: name = ints[size]; break;
        case CBS_KT_BITS:
            if (ints[size]) {
                snprintf(buf, cap, "a %zu-bit integer%s", 8 * size,
                         size == 8 ? " or pointer" : "");
                return buf;
            }
            break;
        case CBS_KT_UINT:
            if (ints[size]) {
                snprintf(buf, cap, "unsigned %s", size == 1 ? "char" : ints[size]);
                return buf;
            }
            break;
        case CBS_KT_BOOL: name = "bool"; break;
        case CBS_KT_FLOAT: name = floats[size]; break;
        case CBS_KT_PTR: name = "a pointer"; break;
        default: break;
        }
    }
    if (name)
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "a %zu-byte value", size);
    return buf;
}

/* ---- PTX ------------------------------------------------------------------- */

/* One block: the header, `n` entries, then every entry's types and the
 * NUL-terminated names. */
typedef struct {
    const char *name;
    size_t nparams;
    const cbs_ktype *types;
} kt_entry;

struct cbs_kt_table {
    size_t n;
    uintptr_t origin; /* cbs_kt_table_derive's mark; 0 otherwise */
    kt_entry e[];
};

/* A growing list of entries while parsing (malloc'ed). */
typedef struct {
    kt_entry *e;
    size_t n, cap;
    size_t bytes; /* names and types, for the final block */
} kt_list;

static void list_free(kt_list *l)
{
    for (size_t k = 0; k < l->n; k++) {
        rt_free((void *)l->e[k].name);
        rt_free((void *)l->e[k].types);
    }
    rt_free(l->e);
}

static int list_add(kt_list *l, const char *name, size_t namelen, const cbs_ktype *types,
                    size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        kt_entry *e = rt_realloc(l->e, cap * sizeof *e);
        if (!e)
            return -1;
        l->e = e;
        l->cap = cap;
    }
    char *nm = rt_malloc(namelen + 1);
    cbs_ktype *t = rt_malloc((n ? n : 1) * sizeof *t);
    if (!nm || !t) {
        rt_free(nm);
        rt_free(t);
        return -1;
    }
    memcpy(nm, name, namelen);
    nm[namelen] = '\0';
    if (n)
        memcpy(t, types, n * sizeof *t);
    l->e[l->n++] = (kt_entry){nm, n, t};
    l->bytes += namelen + 1 + n * sizeof *t;
    return 0;
}

/* The final block from a list (emptied). */
static cbs_kt_table *list_finish(kt_list *l)
{
    if (!l->n) {
        list_free(l);
        return NULL;
    }
    size_t head = sizeof(cbs_kt_table) + l->n * sizeof(kt_entry);
    head = (head + sizeof(cbs_ktype) - 1) / sizeof(cbs_ktype) * sizeof(cbs_ktype);
    cbs_kt_table *t = rt_malloc(head + l->bytes);
    if (t) {
        /* types first (aligned), names after */
        cbs_ktype *types = (cbs_ktype *)((char *)t + head);
        size_t ntypes = 0;
        for (size_t k = 0; k < l->n; k++)
            ntypes += l->e[k].nparams;
        char *names = (char *)(types + ntypes);
        t->n = l->n;
        t->origin = 0;
        for (size_t k = 0; k < l->n; k++) {
            size_t len = strlen(l->e[k].name) + 1;
            memcpy(names, l->e[k].name, len);
            if (l->e[k].nparams)
                memcpy(types, l->e[k].types, l->e[k].nparams * sizeof *types);
            t->e[k] = (kt_entry){names, l->e[k].nparams, types};
            names += len;
            types += l->e[k].nparams;
        }
    }
    list_free(l);
    return t;
}

/* A reader over [p, end): PTX text, comments skipped as blanks. Skipping
 * stops at a NUL too: a text of unknown length is read no further than
 * its NUL (what the driver reads of it). */
typedef struct {
    const char *p, *end;
} ptx_reader;

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           c == '$' || c == '%';
}

static void skip_blank(ptx_reader *r)
{
    while (r->p < r->end) {
        char c = *r->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            r->p++;
        } else if (c == '/' && r->p + 1 < r->end && r->p[1] == '/') {
            while (r->p < r->end && *r->p != '\n' && *r->p)
                r->p++;
        } else if (c == '/' && r->p + 1 < r->end && r->p[1] == '*') {
            r->p += 2;
            while (r->p < r->end && *r->p &&
                   !(r->p[0] == '*' && r->p + 1 < r->end && r->p[1] == '/'))
                r->p++;
            if (r->p >= r->end || !*r->p)
                return; /* the text ends inside the comment */
            r->p += 2;
        } else {
            return;
        }
    }
}

/* The next word (a directive ".x" or an identifier): its start and length,
 * 0 when the next character starts neither. */
static size_t word(ptx_reader *r, const char **start)
{
    skip_blank(r);
    *start = r->p;
    const char *q = r->p;
    if (q < r->end && *q == '.')
        q++;
    while (q < r->end && is_ident(*q))
        q++;
    r->p = q;
    return (size_t)(q - *start);
}

static int word_is(const char *w, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(w, s, len) == 0;
}

/* The type of a scalar .param's type directive (".u32"...), or (unsigned)-1. */
static cbs_ktype ptx_scalar(const char *w, size_t len)
{
    static const struct { const char *name; cbs_kt_kind kind; size_t size; } t[] = {
        {".s8", CBS_KT_INT, 1}, {".s16", CBS_KT_INT, 2}, {".s32", CBS_KT_INT, 4},
        {".s64", CBS_KT_INT, 8}, {".u8", CBS_KT_BITS, 1}, {".u16", CBS_KT_BITS, 2},
        {".u32", CBS_KT_BITS, 4}, {".u64", CBS_KT_BITS, 8}, {".b8", CBS_KT_BITS, 1},
        {".b16", CBS_KT_BITS, 2}, {".b32", CBS_KT_BITS, 4}, {".b64", CBS_KT_BITS, 8},
        {".f16", CBS_KT_FLOAT, 2}, {".f32", CBS_KT_FLOAT, 4}, {".f64", CBS_KT_FLOAT, 8},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (word_is(w, len, t[k].name))
            return CBS_KT(t[k].kind, t[k].size);
    return (cbs_ktype)-1;
}

/* One ".param ..." of an entry's list, after ".param": its type. 0 when
 * it is one this reader does not know (then the entry is left out). */
static int ptx_param(ptx_reader *r, cbs_ktype *out)
{
    cbs_ktype t = (cbs_ktype)-1;
    int ptr = 0;
    for (;;) {
        const char *w;
        size_t len = word(r, &w);
        if (!len)
            return 0;
        if (w[0] != '.') {
            /* the parameter's name, then [N] for a byte array */
            skip_blank(r);
            if (r->p < r->end && *r->p == '[') {
                size_t n = 0;
                r->p++;
                while (r->p < r->end && is_digit(*r->p) && n < (1u << 20))
                    n = n * 10 + (size_t)(*r->p++ - '0');
                if (r->p >= r->end || *r->p != ']' || t == (cbs_ktype)-1)
                    return 0;
                r->p++;
                *out = CBS_KT(CBS_KT_BLOB, n * CBS_KT_SIZE(t));
                return 1;
            }
            if (t == (cbs_ktype)-1)
                return 0;
            *out = ptr ? CBS_KT(CBS_KT_PTR, 8) : t;
            return 1;
        }
        if (word_is(w, len, ".ptr")) {
            ptr = 1;
        } else if (word_is(w, len, ".align")) {
            (void)word(r, &w); /* its number */
        } else if (word_is(w, len, ".global") || word_is(w, len, ".const") ||
                   word_is(w, len, ".local") || word_is(w, len, ".shared")) {
            /* the state space a .ptr points to */
        } else {
            cbs_ktype s = ptx_scalar(w, len);
            if (s == (cbs_ktype)-1)
                return 0; /* .texref, .samplerref, vector types ... */
            t = s;
        }
    }
}

/* Reads the entry after ".entry" into l; 0, or -1 when out of memory. */
static int ptx_entry(ptx_reader *r, kt_list *l)
{
    const char *name;
    size_t namelen = word(r, &name);
    if (!namelen || name[0] == '.')
        return 0;
    cbs_ktype types[512];
    size_t n = 0;
    skip_blank(r);
    if (r->p < r->end && *r->p == '(') {
        r->p++;
        for (;;) {
            skip_blank(r);
            if (r->p < r->end && *r->p == ')')
                break;
            const char *w;
            size_t len = word(r, &w);
            if (!word_is(w, len, ".param") || n == sizeof types / sizeof types[0] ||
                !ptx_param(r, &types[n]))
                return 0;
            n++;
            skip_blank(r);
            if (r->p < r->end && *r->p == ',')
                r->p++;
        }
    }
    return list_add(l, name, namelen, types, n);
}

/* Every .entry of the PTX text [p, end) into l. */
static int ptx_text(const char *p, const char *end, kt_list *l)
{
    ptx_reader r = {p, end};
    while (r.p < r.end) {
        skip_blank(&r);
        if (r.p >= r.end)
            break;
        if (*r.p != '.' && !is_ident(*r.p)) {
            r.p++;
            continue;
        }
        const char *w;
        size_t len = word(&r, &w);
        if (!len) {
            r.p++;
            continue;
        }
        if (word_is(w, len, ".entry") && ptx_entry(&r, l) < 0)
            return -1;
    }
    return 0;
}

/* Whether [p, p + len) begins like PTX text: blanks and comments, then a
 * directive (nvcc starts with comments, then .version). */
static int looks_like_ptx(const char *p, size_t len)
{
    ptx_reader r = {p, p + len};
    skip_blank(&r);
    return r.p < r.end && *r.p == '.';
}

/* The length of the NUL-terminated text at p, at most cap. */
static size_t text_len(const char *p, size_t cap)
{
    const char *z = memchr(p, '\0', cap);
    return z ? (size_t)(z - p) : cap;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Whether p starts with the 4 bytes of magic (little-endian), read one by
 * one: no byte of an image of unknown length is read past a mismatch (a
 * text's NUL mismatches every magic). */
static int has_magic(const unsigned char *p, size_t len, uint32_t magic)
{
    if (len && len < 16)
        return 0;
    for (int k = 0; k < 4; k++)
        if (p[k] != (unsigned char)(magic >> (8 * k)))
            return 0;
    return 1;
}

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FATBIN_KIND_PTX 1u
#define PTX_MAX ((size_t)1 << 30)

/* A fat binary's header (16 bytes at p): magic; version; the entries'
 * offset, 2 bytes at 6; their size, 8 bytes at 8. 1 and *head, *body when
 * they are sane (an offset past the header, at most PTX_MAX of entries),
 * else 0. */
static int fatbin_header(const unsigned char *p, uint64_t *head, uint64_t *body)
{
    uint16_t h;
    memcpy(&h, p + 6, 2);
    *head = h;
    *body = rd64(p + 8);
    return h >= 16 && *body <= PTX_MAX;
}

/* What an entry holds for this reader: its header's size and its payload's
 * (the bytes to the next entry), and, for a PTX entry to read, how its text
 * is stored (bind_fatbin_codec.h), the bytes of it stored (`stored`, from
 * the payload's start) and the text's size once decoded (`text`). */
typedef struct {
    uint64_t ehead, payload;
    int ptx;          /* a PTX entry to read */
    cbs_codec codec;  /* how its text is stored */
    uint64_t stored;  /* its bytes as stored, at most payload */
    uint64_t text;    /* its text's size: stored when plain */
} fatbin_item;

/* One entry's header (64 bytes at e, `room` bytes left in the entries from
 * e): kind, 2 bytes at 0; header size, 4 at 4; payload size, 8 at 8 (the
 * stored bytes padded to 8); a compressed payload's stored size, 4 at 16;
 * flags, 8 at 40 (the codec); a compressed payload's decoded size, 8 at 56;
 * the payload follows the header. 1 and *it when the entry fits in room,
 * else 0 (malformed: the walk stops). A PTX entry is one to read when it is
 * plain, or compressed with a known codec, a stored size within its
 * payload (0: all of it) and a decoded size of 1 to PTX_MAX bytes that
 * the stored bytes can make (cbs_codec_max_decoded: a junk header is not
 * a 1 GiB allocation). */
static int fatbin_entry(const unsigned char *e, uint64_t room, fatbin_item *it)
{
    uint16_t kind;
    memcpy(&kind, e, 2);
    it->ehead = rd32(e + 4);
    it->payload = rd64(e + 8);
    if (it->ehead < 64 || it->ehead > room || it->payload > room - it->ehead)
        return 0;
    it->codec = cbs_codec_of_flags(rd64(e + 40));
    it->stored = it->payload;
    it->text = it->payload;
    if (it->codec != CBS_CODEC_PLAIN) {
        uint64_t stored = rd32(e + 16);
        it->stored = stored ? stored : it->payload;
        it->text = rd64(e + 56);
    }
    it->ptx = kind == FATBIN_KIND_PTX && it->codec != CBS_CODEC_UNKNOWN && it->stored &&
              it->stored <= it->payload && it->text && it->text <= PTX_MAX &&
              it->text <= cbs_codec_max_decoded(it->codec, it->stored);
    return 1;
}

/* A PTX payload of len bytes (its text ends at its first NUL, if any) into
 * l, when it begins as PTX does (else it is a payload this parser does not
 * understand: skipped). 0, or -1 when out of memory. */
static int ptx_payload(const char *text, size_t len, kt_list *l)
{
    if (!looks_like_ptx(text, len))
        return 0;
    return ptx_text(text, text + text_len(text, len), l);
}

/* An entry's PTX (it->ptx) stored at `stored` (it->stored bytes) into l:
 * read as it is, or decoded first into a block of its declared size (a
 * payload that does not decode to exactly that is skipped). 0, or -1 when
 * out of memory. */
static int ptx_entry_payload(const fatbin_item *it, const unsigned char *stored, kt_list *l)
{
    if (it->codec == CBS_CODEC_PLAIN)
        return ptx_payload((const char *)stored, (size_t)it->stored, l);
    char *text = rt_malloc((size_t)it->text);
    if (!text)
        return -1;
    int rc = cbs_codec_decode(it->codec, stored, (size_t)it->stored, text, (size_t)it->text)
                 ? ptx_payload(text, (size_t)it->text, l)
                 : 0;
    rt_free(text);
    return rc;
}

/* The PTX entries of the fat binary at p (the layout: fatbin_header,
 * fatbin_entry), plain or compressed. */
static int fatbin(const unsigned char *p, size_t len, kt_list *l)
{
    uint64_t head, body;
    if ((len && len < 16) || !fatbin_header(p, &head, &body) || (len && head + body > len))
        return 0;
    const unsigned char *e = p + head, *end = p + head + body;
    while (end - e >= 64) {
        fatbin_item it;
        if (!fatbin_entry(e, (uint64_t)(end - e), &it))
            return 0;
        if (it.ptx && ptx_entry_payload(&it, e + it.ehead, l) < 0)
            return -1;
        e += it.ehead + it.payload;
    }
    return 0;
}

/* The largest bytes a file reader reads at once to find whether a text is
 * PTX: its blanks and comments before the first directive. */
#define FILE_HEAD 4096

/* A fat binary file's PTX entries, through read: its headers, then each
 * PTX payload to read alone, as stored (never the other entries' bytes). */
static int fatbin_file(cbs_kt_read_fn read, void *src, uint64_t size, const unsigned char *p,
                       kt_list *l)
{
    uint64_t head, body;
    if (!fatbin_header(p, &head, &body) || head > size || body > size - head)
        return 0;
    uint64_t at = head, end = head + body;
    unsigned char e[64];
    while (end - at >= 64) {
        fatbin_item it;
        if (!read(src, at, e, sizeof e) || !fatbin_entry(e, end - at, &it))
            return 0;
        if (it.ptx) {
            unsigned char *stored = rt_malloc((size_t)it.stored);
            if (!stored)
                return -1;
            int rc = read(src, at + it.ehead, stored, (size_t)it.stored)
                         ? ptx_entry_payload(&it, stored, l)
                         : 0;
            rt_free(stored);
            if (rc < 0)
                return -1;
        }
        at += it.ehead + it.payload;
    }
    return 0;
}

cbs_kt_table *cbs_kt_table_from_reader(cbs_kt_read_fn read, void *src, uint64_t size)
{
    unsigned char p[FILE_HEAD];
    size_t n = size < sizeof p ? (size_t)size : sizeof p;
    if (n < 4 || !read(src, 0, p, n))
        return NULL;
    kt_list l = {0};
    int rc = 0;
    if (rd32(p) == FATBIN_MAGIC) {
        if (n >= 16)
            rc = fatbin_file(read, src, size, p, &l);
    } else if (looks_like_ptx((const char *)p, n) && size <= PTX_MAX) {
        /* a text beginning as PTX: all of it is the PTX to read (an ELF
         * cubin, a wrapper, anything else is read no further) */
        char *text = rt_malloc((size_t)size);
        if (!text)
            return NULL;
        if (read(src, 0, text, (size_t)size))
            rc = ptx_text(text, text + text_len(text, (size_t)size), &l);
        rt_free(text);
    }
    if (rc < 0) {
        list_free(&l);
        return NULL;
    }
    return list_finish(&l);
}

static uint16_t rd16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* An ELF64 image's extent as its header declares it: the end of the header
 * and of its program and section header tables (UINT64_MAX when a table's
 * bounds overflow). Sections' contents are not added: a table the driver
 * reads first, and a loader rejecting a valid file would be worse than one
 * trusting a truncated one as C does. Only for len >= 64. */
static uint64_t elf64_extent(const unsigned char *p)
{
    uint64_t phoff = rd64(p + 0x20), shoff = rd64(p + 0x28);
    uint64_t phsize = (uint64_t)rd16(p + 0x36) * rd16(p + 0x38);
    uint64_t shsize = (uint64_t)rd16(p + 0x3A) * rd16(p + 0x3C);
    if (phoff > UINT64_MAX - phsize || shoff > UINT64_MAX - shsize)
        return UINT64_MAX;
    uint64_t end = 64;
    if (phsize && phoff + phsize > end)
        end = phoff + phsize;
    if (shsize && shoff + shsize > end)
        end = shoff + shsize;
    return end;
}

int cbs_kt_image_fits(const void *image, size_t len, int nul_after, unsigned long long *need)
{
    const unsigned char *p = image;
    *need = 0;
    if (len >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') {
        *need = 64;
        if (len < 64)
            return CBS_IMAGE_SHORT;
        if (p[4] != 2) /* not ELFCLASS64 (a cubin is): unchecked */
            return CBS_IMAGE_OK;
        uint64_t end = elf64_extent(p);
        *need = end;
        return end > len ? CBS_IMAGE_SHORT : CBS_IMAGE_OK;
    }
    if (len >= 4 && rd32(p) == FATBIN_MAGIC) {
        if (len < 16) {
            *need = 16;
            return CBS_IMAGE_SHORT;
        }
        uint64_t body = rd64(p + 8), head = rd16(p + 6);
        *need = body > UINT64_MAX - head ? UINT64_MAX : head + body;
        return *need > len ? CBS_IMAGE_SHORT : CBS_IMAGE_OK;
    }
    if (len >= 4 && rd32(p) == FATBIN_WRAPPER_MAGIC) {
        /* {int magic; int version; const unsigned long long *data; ...}:
         * the data it points to lies outside the buffer, unchecked (an
         * address, as in C) */
        *need = 16;
        return len < 16 ? CBS_IMAGE_SHORT : CBS_IMAGE_OK;
    }
    /* anything else the driver reads as NUL-terminated text */
    return (len && memchr(p, '\0', len)) || nul_after ? CBS_IMAGE_OK : CBS_IMAGE_NO_NUL;
}

cbs_kt_table *cbs_kt_table_from_image(const void *image, size_t len)
{
    if (!image)
        return NULL;
    const unsigned char *p = image;
    kt_list l = {0};
    int rc = 0;
    if (has_magic(p, len, FATBIN_WRAPPER_MAGIC)) {
        /* {int magic; int version; const unsigned long long *data; ...} */
        const unsigned char *data;
        memcpy(&data, p + 8, sizeof data);
        if (data && has_magic(data, 0, FATBIN_MAGIC))
            rc = fatbin(data, 0, &l);
    } else if (has_magic(p, len, FATBIN_MAGIC)) {
        rc = fatbin(p, len, &l);
    } else if (looks_like_ptx((const char *)p, len ? len : PTX_MAX)) {
        /* checked first: an image that is no text (a cubin) is read no
         * further than its first bytes */
        size_t n = text_len((const char *)p, len ? len : PTX_MAX);
        rc = ptx_text((const char *)p, (const char *)p + n, &l);
    }
    if (rc < 0) {
        list_free(&l);
        return NULL;
    }
    return list_finish(&l);
}

cbs_kt_table *cbs_kt_table_merge(const cbs_kt_table *a, const cbs_kt_table *b)
{
    kt_list l = {0};
    const cbs_kt_table *both[2] = {a, b};
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; both[t] && k < both[t]->n; k++) {
            const kt_entry *e = &both[t]->e[k];
            if (list_add(&l, e->name, strlen(e->name), e->types, e->nparams) < 0) {
                list_free(&l);
                return NULL;
            }
        }
    return list_finish(&l);
}

cbs_kt_table *cbs_kt_table_derive(const cbs_kt_table *t, uintptr_t origin)
{
    cbs_kt_table *copy = cbs_kt_table_merge(t, NULL);
    if (copy)
        copy->origin = origin;
    return copy;
}

uintptr_t cbs_kt_table_origin(const cbs_kt_table *t)
{
    return t ? t->origin : 0;
}

void cbs_kt_table_free(void *table)
{
    rt_free(table);
}

int cbs_kt_table_find(const cbs_kt_table *t, const char *name, size_t n, cbs_ktype *out)
{
    const kt_entry *found = NULL;
    for (size_t k = 0; t && k < t->n; k++)
        if (strcmp(t->e[k].name, name) == 0) {
            if (found)
                return 0; /* two entries of one name (linked PTX): unknown */
            found = &t->e[k];
        }
    if (!found || found->nparams != n)
        return 0;
    memcpy(out, found->types, n * sizeof *out);
    return 1;
}
