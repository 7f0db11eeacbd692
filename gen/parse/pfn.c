/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pfn.c — which cuGetProcAddress name and version each function has.
 *
 * cudaTypedefs.h declares one PFN_<name>_v<version> typedef per ABI variant
 * of each driver entry point (plus _ptds/_ptsz per-thread-stream variants).
 * A declaration of cuda.h gets the variant whose prototype (canonical return
 * and parameter types) equals its own. When several variants share one
 * prototype (cuEventElapsedTime v2000 and v12080; cuDeviceGetUuid v9020 and
 * v11040), the symbol's own suffix picks among them in version order: no
 * suffix is the first variant, `_v2` the second (cuEventElapsedTime_v2 →
 * 12080, 12.4's unsuffixed cuDeviceGetUuid → 9020). The header's
 * CUDA_VERSION is never used: it would hand a 12.4 build cuCtxCreate_v4's
 * version for a header that declares cuCtxCreate_v3.
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits "PFN_cuCtxCreate_v12050_ptsz" into name, version and the flag.
 * Returns 0 when the typedef is not of that shape. */
static int split_pfn(const char *id, char *name, size_t cap, int *version, int *per_thread)
{
    if (strncmp(id, "PFN_", 4) != 0)
        return 0;
    const char *s = id + 4;
    const char *v = NULL;
    for (const char *p = s; (p = strstr(p, "_v")) != NULL; p += 2)
        if (isdigit((unsigned char)p[2]))
            v = p; /* last "_v<digit>" */
    if (!v || (size_t)(v - s) >= cap)
        return 0;
    char *end;
    long ver = strtol(v + 2, &end, 10);
    if (*end && strcmp(end, "_ptds") != 0 && strcmp(end, "_ptsz") != 0)
        return 0;
    memcpy(name, s, (size_t)(v - s));
    name[v - s] = '\0';
    *version = (int)ver;
    *per_thread = *end != '\0';
    return 1;
}

void pfn_collect(parser *P, CXCursor c)
{
    CXString sp = clang_getCursorSpelling(c);
    char name[256];
    int version, per_thread;
    int ok = split_pfn(clang_getCString(sp), name, sizeof name, &version, &per_thread);
    clang_disposeString(sp);
    if (!ok)
        return;
    CXType under = px_desugar(clang_getTypedefDeclUnderlyingType(c));
    if (under.kind != CXType_Pointer)
        return;
    CXType fn = clang_getCanonicalType(clang_getPointeeType(under));
    if (fn.kind != CXType_FunctionProto)
        return;
    pfn_entry *e = ARENA_PUSH(P->arena, P->pfns, P->npfns, P->cap_pfns);
    e->name = arena_strdup(P->arena, name);
    e->version = version;
    e->per_thread = per_thread;
    e->ret = px_str(P, clang_getTypeSpelling(clang_getCanonicalType(clang_getResultType(fn))));
    int n = clang_getNumArgTypes(fn);
    e->nparams = n > 0 ? (size_t)n : 0;
    e->params = arena_alloc(P->arena, (e->nparams ? e->nparams : 1) * sizeof *e->params);
    for (int i = 0; i < n; i++)
        e->params[i] = px_str(P, clang_getTypeSpelling(
                                     clang_getCanonicalType(clang_getArgType(fn, (unsigned)i))));
    px_location(P, c, &e->file, &e->line);
}

static int same_prototype(const pfn_entry *e, const cb_function *f)
{
    if (e->nparams != f->nparams || strcmp(e->ret, f->ret->canon) != 0)
        return 0;
    for (size_t i = 0; i < e->nparams; i++)
        if (strcmp(e->params[i], f->params[i].type->canon) != 0)
            return 0;
    return 1;
}

/* "cuMemAlloc_v2" → "cuMemAlloc"; other names unchanged. */
static void strip_version_suffix(const char *abi, char *out, size_t cap)
{
    snprintf(out, cap, "%s", abi);
    char *v = strrchr(out, '_');
    if (v && v[1] == 'v' && isdigit((unsigned char)v[2])) {
        char *p = v + 2;
        while (isdigit((unsigned char)*p))
            p++;
        if (!*p)
            *v = '\0';
    }
}

static int is_candidate(const pfn_entry *e, const cb_function *f, const char *stripped)
{
    return strcmp(e->name, f->abi) == 0 || strcmp(e->name, f->name) == 0 ||
           strcmp(e->name, stripped) == 0;
}

/* 1 for "cuX", N for "cuX_vN". */
static int suffix_ordinal(const char *abi)
{
    const char *v = strrchr(abi, '_');
    if (v && v[1] == 'v' && isdigit((unsigned char)v[2])) {
        char *end;
        long n = strtol(v + 2, &end, 10);
        if (!*end && n > 0 && n < 1000)
            return (int)n;
    }
    return 1;
}

/* The matching variant: the only one, or the ordinal-th in version order
 * (the newest when the ordinal runs past them). */
static const pfn_entry *pick_variant(parser *P, const cb_function *f, const char *stripped,
                                     int ordinal)
{
    const pfn_entry *match[64];
    size_t n = 0;
    for (size_t k = 0; k < P->npfns && n < 64; k++) {
        const pfn_entry *e = &P->pfns[k];
        if (e->per_thread || !is_candidate(e, f, stripped) || !same_prototype(e, f))
            continue;
        size_t at = n++;
        while (at > 0 && match[at - 1]->version > e->version) {
            match[at] = match[at - 1];
            at--;
        }
        match[at] = e;
    }
    if (n == 0)
        return NULL;
    return match[(size_t)ordinal <= n ? (size_t)ordinal - 1 : n - 1];
}

int pfn_assign_versions(parser *P, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    cb_model *m = P->model;
    for (size_t i = 0; i < m->nfunctions; i++) {
        cb_function *f = &m->functions[i];
        char stripped[256];
        strip_version_suffix(f->abi, stripped, sizeof stripped);
        const pfn_entry *best = pick_variant(P, f, stripped, suffix_ordinal(f->abi));
        if (!best)
            continue; /* proc_version 0: reported by `cubind generate` */
        f->proc_name = best->name;
        f->proc_version = best->version;
        for (size_t k = 0; k < P->npfns; k++)
            if (P->pfns[k].per_thread && strcmp(P->pfns[k].name, best->name) == 0)
                f->has_ptds = 1;
    }
    return 0;
}

void pfn_free(parser *P)
{
    (void)P; /* entries live in the arena */
}
