/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — cuda.h (and cudaTypedefs.h beside it) → cb_model, with libclang.
 *
 * One translation unit includes both headers. Declarations located in
 * cuda.h become the model; the PFN_<name>_v<version> typedefs of
 * cudaTypedefs.h only decide each function's cuGetProcAddress name and
 * version (pfn.c). Object-like macros give public names
 * (`#define cuMemAlloc cuMemAlloc_v2`) and integer constants (macros.c).
 *
 * Invariant: while parsing, `records_seen[i]` is the canonical cursor of
 * model->records[i], so a typedef or field can find the record it names.
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"
#include "util/strbuf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which kind of header a cursor was declared in: cuda.h, an interop
 * header or the shim (IN_INTEROP: bound like cuda.h), a *Typedefs.h. */
static enum { IN_OTHER, IN_CUDA_H, IN_INTEROP, IN_TYPEDEFS_H } where(CXCursor c, const parser *P)
{
    CXFile f;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    if (!f)
        return IN_OTHER;
    if (clang_File_isEqual(f, P->cuda_h))
        return IN_CUDA_H;
    if (P->typedefs_h && clang_File_isEqual(f, P->typedefs_h))
        return IN_TYPEDEFS_H;
    for (size_t i = 0; i < P->nbound; i++)
        if (clang_File_isEqual(f, P->bound[i]))
            return IN_INTEROP;
    for (size_t i = 0; i < P->npfn_files; i++)
        if (clang_File_isEqual(f, P->pfn_files[i]))
            return IN_TYPEDEFS_H;
    return IN_OTHER;
}

/* ---- functions --------------------------------------------------------- */

/* A library's versioned symbol, `__NAME_<major>_<minor>` (nvJitLink.h
 * declares `__nvJitLinkCreate_13_0` and an inline nvJitLinkCreate calling
 * it): the length of NAME, else 0. */
static size_t versioned_symbol(const char *abi)
{
    size_t n = strlen(abi);
    if (strncmp(abi, "__", 2) != 0)
        return 0;
    const char *p = abi + n;
    for (int part = 0; part < 2; part++) {
        const char *digits = p;
        while (p > abi + 2 && p[-1] >= '0' && p[-1] <= '9')
            p--;
        if (p == digits || p[-1] != '_')
            return 0;
        p--;
    }
    return p > abi + 2 ? (size_t)(p - abi - 2) : 0;
}

/* Adds the function at c to the model; returns it. */
static cb_function *parse_function(parser *P, CXCursor c)
{
    cb_model *m = P->model;
    /* A library's static inline wrappers call the symbol declared beside
     * them, which is what dlsym finds: only that one is bound; the static
     * ones are kept apart (model.h's inlines). */
    cb_function *f = P->library && clang_Cursor_getStorageClass(c) == CX_SC_Static
                         ? ARENA_PUSH(P->arena, m->inlines, m->ninlines, P->cap_inlines)
                         : ARENA_PUSH(P->arena, m->functions, m->nfunctions, P->cap_functions);
    f->abi = px_str(P, clang_getCursorSpelling(c));
    f->name = f->abi;
    f->proc_name = f->abi;
    size_t vn = P->library ? versioned_symbol(f->abi) : 0;
    if (vn)
        f->name = arena_strndup(P->arena, f->abi + 2, vn);
    f->ret = px_type(P, clang_getCursorResultType(c));
    int n = clang_Cursor_getNumArguments(c);
    f->nparams = n > 0 ? (size_t)n : 0;
    f->params = arena_alloc(P->arena, (f->nparams ? f->nparams : 1) * sizeof *f->params);
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        const char *name = px_str(P, clang_getCursorSpelling(a));
        if (!*name) {
            char buf[32];
            snprintf(buf, sizeof buf, "arg%d", i);
            name = arena_strdup(P->arena, buf);
        }
        f->params[i].name = name;
        f->params[i].type = px_type(P, clang_getCursorType(a));
    }
    f->doc = px_doc(P, c);
    f->deprecated = clang_getCursorAvailability(c) == CXAvailability_Deprecated;
    px_location(P, c, &f->file, &f->line);
    return f;
}

/* ---- enums -------------------------------------------------------------- */

static int find_enum_cursor(const parser *P, CXCursor decl)
{
    CXCursor canon = clang_getCanonicalCursor(decl);
    for (size_t i = 0; i < P->model->nenums; i++)
        if (clang_equalCursors(P->enums_seen[i], canon))
            return (int)i;
    return -1;
}

static void parse_enum(parser *P, CXCursor c)
{
    if (!clang_isCursorDefinition(c) || find_enum_cursor(P, c) >= 0)
        return;
    cb_model *m = P->model;
    size_t before = P->cap_enums;
    cb_enum *e = ARENA_PUSH(P->arena, m->enums, m->nenums, P->cap_enums);
    if (P->cap_enums != before) {
        P->enums_seen = realloc(P->enums_seen, P->cap_enums * sizeof *P->enums_seen);
        if (!P->enums_seen)
            arena_oom();
    }
    P->enums_seen[m->nenums - 1] = clang_getCanonicalCursor(c);
    e->tag = px_str(P, clang_getCursorSpelling(c));
    if (clang_Cursor_isAnonymous(c))
        e->tag = "";
    e->name = e->tag;
    CXType integer = clang_getEnumDeclIntegerType(c);
    e->is_signed = px_is_signed_kind(integer.kind);
    e->size = clang_Type_getSizeOf(clang_getCursorType(c));
    e->doc = px_doc(P, c);
    size_t cap = 0;
    /* Enumerators are the definition's direct children. */
    CXCursor *kids = NULL;
    size_t nkids = px_children(P, c, &kids);
    for (size_t i = 0; i < nkids; i++) {
        if (clang_getCursorKind(kids[i]) != CXCursor_EnumConstantDecl)
            continue;
        cb_enumerator *it = ARENA_PUSH(P->arena, e->items, e->nitems, cap);
        it->name = px_str(P, clang_getCursorSpelling(kids[i]));
        it->value = e->is_signed ? clang_getEnumConstantDeclValue(kids[i])
                                 : (long long)clang_getEnumConstantDeclUnsignedValue(kids[i]);
        it->doc = px_doc(P, kids[i]);
    }
    free(kids);
}

/* ---- typedefs ----------------------------------------------------------- */

/* A typedef naming enum e, directly or through further typedefs: the first
 * becomes its name, every later one an alias. Invariant: e->name == e->tag
 * (the same pointer, set by parse_enum) until a typedef has named it. */
static void enum_typedef(parser *P, cb_enum *e, const char *name)
{
    if (e->name == e->tag) {
        e->name = name;
        return;
    }
    if (strcmp(e->name, name) == 0)
        return;
    px_add_alias(P, &e->aliases, &e->naliases, name);
}

static void parse_typedef(parser *P, CXCursor c)
{
    cb_model *m = P->model;
    const char *name = px_str(P, clang_getCursorSpelling(c));
    CXType under = clang_getTypedefDeclUnderlyingType(c);
    CXType d = px_desugar(under);
    cb_typedef *td = ARENA_PUSH(P->arena, m->typedefs, m->ntypedefs, P->cap_typedefs);
    td->name = name;
    td->type = px_type(P, under);

    const cb_type *self = px_type(P, clang_getCursorType(c));
    if (self->kind == TY_HANDLE) {
        cb_handle *h = ARENA_PUSH(P->arena, m->handles, m->nhandles, P->cap_handles);
        h->name = name;
        h->tag = self->record_tag;
    } else if (self->kind == TY_FUNCPTR) {
        CXType fn = d.kind == CXType_Pointer ? px_desugar(clang_getPointeeType(d)) : d;
        cb_callback *cb = ARENA_PUSH(P->arena, m->callbacks, m->ncallbacks, P->cap_callbacks);
        cb->name = name;
        cb->ret = px_type(P, clang_getResultType(fn));
        int n = clang_getNumArgTypes(fn);
        cb->nparams = n > 0 ? (size_t)n : 0;
        cb->params = arena_alloc(P->arena, (cb->nparams ? cb->nparams : 1) * sizeof *cb->params);
        /* Parameter names live on the ParmDecl children of the typedef. */
        CXCursor *kids = NULL;
        size_t nkids = px_children(P, c, &kids);
        size_t k = 0;
        for (int i = 0; i < n; i++) {
            const char *pname = NULL;
            while (k < nkids && clang_getCursorKind(kids[k]) != CXCursor_ParmDecl)
                k++;
            if (k < nkids)
                pname = px_str(P, clang_getCursorSpelling(kids[k++]));
            if (!pname || !*pname) {
                char buf[32];
                snprintf(buf, sizeof buf, "arg%d", i);
                pname = arena_strdup(P->arena, buf);
            }
            cb->params[i].name = pname;
            cb->params[i].type = px_type(P, clang_getArgType(fn, (unsigned)i));
        }
        free(kids);
    } else if (d.kind == CXType_Enum) {
        int idx = find_enum_cursor(P, clang_getTypeDeclaration(d));
        if (idx >= 0)
            enum_typedef(P, &m->enums[idx], name);
    } else if (d.kind == CXType_Record) {
        px_record_alias(P, clang_getTypeDeclaration(d), name);
    }
}

/* ---- driving the walk -------------------------------------------------- */

/* Whether c repeats a function or typedef declared earlier in a file this
 * visitor reads (C11 allows both to be declared again): the model holds each
 * once, as its first declaration gave it, so a repeat is not collected. */
static int is_redeclaration(const parser *P, CXCursor c)
{
    CXCursor first = clang_getCanonicalCursor(c);
    return !clang_equalCursors(first, c) && where(first, P) != IN_OTHER;
}

static void visit_top(parser *P, CXCursor c)
{
    int w = where(c, P);
    enum CXCursorKind k = clang_getCursorKind(c);
    if ((k == CXCursor_FunctionDecl || k == CXCursor_TypedefDecl) && is_redeclaration(P, c))
        return;
    if (w == IN_TYPEDEFS_H) {
        if (k == CXCursor_TypedefDecl)
            pfn_collect(P, c);
        return;
    }
    if (w != IN_CUDA_H && w != IN_INTEROP)
        return;
    switch (k) {
    case CXCursor_FunctionDecl:
        parse_function(P, c)->interop = w == IN_INTEROP;
        break;
    case CXCursor_EnumDecl: parse_enum(P, c); break;
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
        if (clang_isCursorDefinition(c))
            px_record(P, c, NULL);
        break;
    case CXCursor_TypedefDecl: parse_typedef(P, c); break;
    case CXCursor_MacroDefinition: macro_collect(P, c); break;
    default: break;
    }
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    fclose(f);
    return 1;
}

/* First error diagnostic as "file:line: message"; 0 when there is none. */
static int first_error(CXTranslationUnit tu, char *err, size_t errlen)
{
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXFile f;
            unsigned line, col;
            clang_getSpellingLocation(clang_getDiagnosticLocation(d), &f, &line, &col, NULL);
            CXString fname = clang_getFileName(f);
            CXString msg = clang_getDiagnosticSpelling(d);
            const char *fn = clang_getCString(fname);
            snprintf(err, errlen, "%s:%u: %s", fn ? fn : "<input>", line,
                     clang_getCString(msg));
            clang_disposeString(fname);
            clang_disposeString(msg);
            clang_disposeDiagnostic(d);
            return 1;
        }
        clang_disposeDiagnostic(d);
    }
    return 0;
}

/* The interop headers bound with cuda.h when they are beside it, in the
 * order they are included, and the header of each one's PFN typedefs. */
static const char *const interop_names[PX_MAX_INTEROP][2] = {
    {"cudaProfiler.h", "cudaProfilerTypedefs.h"},
    {"cudaGL.h", "cudaGLTypedefs.h"},
    {"cudaEGL.h", "cudaEGLTypedefs.h"},
    {"cudaVDPAU.h", "cudaVDPAUTypedefs.h"},
};

/* dir/name in the arena, or NULL when no such file exists. */
static const char *beside(cb_arena *arena, const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = arena_alloc(arena, n);
    snprintf(path, n, "%s/%s", dir, name);
    return file_exists(path) ? path : NULL;
}

/* The virtual main file: cuda.h, the shim and the interop headers present
 * (none, and no shim, when there are none), cudaTypedefs.h and the interop
 * headers' typedef headers; *pfn_paths gets the latter (PX_MAX_INTEROP
 * entries, NULL where absent). */
static char *main_text_for(cb_model *m, int library, const char *header, const char *typedefs,
                           const char *dir, const char **pfn_paths,
                           const char *const *bind_headers)
{
    strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "#include \"%s\"\n", header);
    /* a library's bind-header files, which its header may not include
     * itself (cuda_runtime_api.h does not include library_types.h) */
    size_t nbind = 0;
    while (bind_headers && bind_headers[nbind])
        nbind++;
    const char *shim = m->interop_dir ? beside(m->arena, m->interop_dir, "cubind_interop.h") : NULL;
    int any = 0; /* the shim only with an interop header to read; a
                  * library's bind-header files include it themselves */
    for (size_t i = 0; shim && !library && i < PX_MAX_INTEROP; i++)
        any |= beside(m->arena, dir, interop_names[i][0]) != NULL;
    if (!any)
        shim = NULL;
    const char **inc = NULL;
    if (shim) {
        sb_printf(&sb, "#include \"%s\"\n", shim);
        m->interop_headers = arena_alloc(m->arena, PX_MAX_INTEROP * sizeof *m->interop_headers);
        inc = arena_alloc(m->arena, (2 * PX_MAX_INTEROP + 2 + nbind) * sizeof *inc);
        inc[m->ninterop_includes++] = "cubind_interop.h";
        for (size_t i = 0; i < PX_MAX_INTEROP; i++) {
            const char *h = beside(m->arena, dir, interop_names[i][0]);
            pfn_paths[i] = h ? beside(m->arena, dir, interop_names[i][1]) : NULL;
            if (h) {
                sb_printf(&sb, "#include \"%s\"\n", h);
                m->interop_headers[m->ninterop++] = interop_names[i][0];
                inc[m->ninterop_includes++] = interop_names[i][0];
            }
        }
        inc[m->ninterop_includes++] = "cudaTypedefs.h";
    }
    if (nbind && !inc)
        inc = arena_alloc(m->arena, nbind * sizeof *inc);
    for (size_t i = 0; i < nbind; i++) {
        sb_printf(&sb, "#include \"%s/%s\"\n", dir, bind_headers[i]);
        inc[m->ninterop_includes++] = arena_strdup(m->arena, bind_headers[i]);
    }
    sb_printf(&sb, "#include \"%s\"\n", typedefs);
    for (size_t i = 0; shim && i < PX_MAX_INTEROP; i++)
        if (pfn_paths[i]) {
            sb_printf(&sb, "#include \"%s\"\n", pfn_paths[i]);
            inc[m->ninterop_includes++] = interop_names[i][1];
        }
    m->interop_includes = inc;
    return sb.data ? sb.data : strdup("");
}

cb_model *model_parse(const char *header, const char *interop_dir, char *err, size_t errlen,
                      int *refused)
{
    return model_parse_api(header, 0, interop_dir, NULL, err, errlen, refused);
}

int model_is_library_header(const char *header)
{
    const char *slash = strrchr(header, '/');
    return strcmp(slash ? slash + 1 : header, "cuda.h") != 0;
}

cb_model *model_parse_any(const char *header, char *err, size_t errlen, int *refused)
{
    return model_parse_api(header, model_is_library_header(header), NULL, NULL, err, errlen,
                           refused);
}

static int bind_beside(parser *P, const char *dir, const char *const *names, char *err,
                       size_t errlen);
static int check_beside(const char *header, const char *dir, const char *const *names,
                        char *err, size_t errlen);

cb_model *model_parse_api(const char *header, int library, const char *interop_dir,
                          const char *const *bind_headers, char *err, size_t errlen,
                          int *refused)
{
    return model_parse_api_in(header, library, interop_dir, bind_headers, NULL, err, errlen,
                              refused);
}

cb_model *model_parse_api_in(const char *header, int library, const char *interop_dir,
                             const char *const *bind_headers, const char *include_dir,
                             char *err, size_t errlen, int *refused)
{
    int dummy;
    if (!refused)
        refused = &dummy;
    *refused = 0;
    if (!file_exists(header)) {
        snprintf(err, errlen, "%s:0: cannot open the header", header);
        return NULL;
    }
    char *dir = dir_of(header);
    if (!dir)
        arena_oom();
    if (check_beside(header, dir, bind_headers, err, errlen) < 0) {
        free(dir);
        return NULL;
    }
    /* a library's "typedefs" is its header's path, a driver's the file
     * beside it: room for the longer */
    size_t tlen = strlen(header) + strlen(dir) + sizeof "/cudaTypedefs.h";
    char *typedefs = malloc(tlen);
    if (!typedefs)
        arena_oom();
    /* a library has no PFN typedefs: the header alone, twice included */
    snprintf(typedefs, tlen, "%s%s", library ? header : dir, library ? "" : "/cudaTypedefs.h");
    if (!library && !file_exists(typedefs)) {
        snprintf(err, errlen,
                 "%s:0: cudaTypedefs.h not found beside it (needed for the "
                 "cuGetProcAddress version of each function)", header);
        free(dir);
        free(typedefs);
        return NULL;
    }

    cb_arena *arena = arena_create();
    cb_model *m = arena_alloc(arena, sizeof *m);
    m->arena = arena;
    m->header = arena_strdup(arena, header);
    m->version_macro = "";
    m->typedefs_header = arena_strdup(arena, library ? "" : typedefs);
    m->interop_dir = interop_dir ? arena_strdup(arena, interop_dir) : NULL;

    /* A virtual main file includes every header in one translation unit;
     * the shim's directory stands in for the GL/EGL include paths. */
    const char *pfn_paths[PX_MAX_INTEROP] = {0};
    char *main_text = main_text_for(m, library, header, typedefs, dir, pfn_paths, bind_headers);
    size_t ilen = strlen(dir) + 3;
    char *include_flag = malloc(ilen);
    size_t slen = (interop_dir ? strlen(interop_dir) : 0) + 3;
    char *shim_flag = malloc(slen);
    size_t xlen = (include_dir ? strlen(include_dir) : 0) + 3;
    char *extra_flag = malloc(xlen);
    if (!main_text || !include_flag || !shim_flag || !extra_flag)
        arena_oom();
    snprintf(include_flag, ilen, "-I%s", dir);
    snprintf(shim_flag, slen, "-I%s", interop_dir ? interop_dir : ".");
    snprintf(extra_flag, xlen, "-I%s", include_dir ? include_dir : ".");
    /* the optional flags last: the shim's, then include_dir's */
    const char *args[7] = {"-x", "c", "-std=c11", include_flag, "-ferror-limit=1"};
    int nargs = 5;
    if (interop_dir)
        args[nargs++] = shim_flag;
    if (include_dir)
        args[nargs++] = extra_flag;
    struct CXUnsavedFile unsaved = {"cubind_main.c", main_text, (unsigned long)strlen(main_text)};

    CXIndex index = clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode rc = clang_parseTranslationUnit2(
        index, "cubind_main.c", args, nargs, &unsaved, 1,
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies,
        &tu);
    parser P = {0};
    int ok = 0;
    if (rc != CXError_Success || !tu) {
        snprintf(err, errlen, "%s:0: libclang could not parse it (error %d)", header, (int)rc);
    } else if (!first_error(tu, err, errlen)) {
        P.arena = arena;
        P.model = m;
        P.tu = tu;
        P.cuda_h = clang_getFile(tu, header);
        P.typedefs_h = library ? NULL : clang_getFile(tu, typedefs);
        P.library = library;
        if (m->ninterop) {
            P.bound[P.nbound++] = clang_getFile(tu, beside(arena, interop_dir, "cubind_interop.h"));
            for (size_t i = 0; i < m->ninterop; i++)
                P.bound[P.nbound++] = clang_getFile(tu, beside(arena, dir, m->interop_headers[i]));
            for (size_t i = 0; i < PX_MAX_INTEROP; i++)
                if (pfn_paths[i])
                    P.pfn_files[P.npfn_files++] = clang_getFile(tu, pfn_paths[i]);
        }
        /* a library's bind-header files that include the GL/EGL/VDPAU
         * stand-ins (cuda_gl_interop.h): their types are the library's */
        CXFile shim_h = library && interop_dir
                            ? clang_getFile(tu, beside(arena, interop_dir, "cubind_interop.h"))
                            : NULL;
        if (shim_h)
            P.bound[P.nbound++] = shim_h;
        ok = bind_beside(&P, dir, bind_headers, err, errlen) == 0;
    }
    if (ok) {
        CXCursor *top = NULL;
        size_t ntop = px_children(&P, clang_getTranslationUnitCursor(tu), &top);
        for (size_t i = 0; i < ntop; i++)
            visit_top(&P, top[i]);
        free(top);
        macro_resolve_pending(&P);
        macro_check_values(&P, index, main_text, args, nargs);
        macro_apply_names(&P);
        ok = library || pfn_assign_versions(&P, err, errlen) == 0;
        if (ok && !library && px_check_model(&P, err, errlen) < 0) {
            ok = 0;
            *refused = 1;
        }
    }
    free(P.enums_seen);
    free(P.records_seen);
    pfn_free(&P);
    macro_free(&P);
    px_comments_free(&P);
    if (tu)
        clang_disposeTranslationUnit(tu);
    clang_disposeIndex(index);
    free(main_text);
    free(include_flag);
    free(shim_flag);
    free(extra_flag);
    free(dir);
    free(typedefs);
    if (!ok) {
        arena_destroy(arena);
        return NULL;
    }
    return m;
}

/* Whether every bind-header file (model_parse_api) is a file beside the
 * header, and there are at most MODEL_MAX_BIND_HEADERS: 0, or -1 with
 * "header:0: message" in err. */
static int check_beside(const char *header, const char *dir, const char *const *names,
                        char *err, size_t errlen)
{
    for (size_t i = 0; names && names[i]; i++) {
        size_t n = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(n);
        if (!path)
            arena_oom();
        snprintf(path, n, "%s/%s", dir, names[i]);
        int there = file_exists(path);
        free(path);
        if (!there) {
            snprintf(err, errlen, "%s:0: %s is not a header beside it", header, names[i]);
            return -1;
        }
        if (i >= MODEL_MAX_BIND_HEADERS) {
            snprintf(err, errlen, "%s:0: more than %d bind-header files", header,
                     MODEL_MAX_BIND_HEADERS);
            return -1;
        }
    }
    return 0;
}

/* The bind-header files (checked by check_beside, included by
 * main_text_for) into P->bound; -1 with "header:0: message" in err when
 * the translation unit lacks one. */
static int bind_beside(parser *P, const char *dir, const char *const *names, char *err,
                       size_t errlen)
{
    for (size_t i = 0; names && names[i]; i++) {
        const char *path = beside(P->arena, dir, names[i]);
        CXFile f = path ? clang_getFile(P->tu, path) : NULL;
        if (!f) {
            snprintf(err, errlen, "%s:0: %s was not read with it", P->model->header, names[i]);
            return -1;
        }
        P->bound[P->nbound++] = f;
    }
    return 0;
}

/* A header that parses but is not cuda.h must not produce empty bindings. */
int px_check_model(parser *P, char *err, size_t errlen)
{
    static const char *const required[] = {"cuInit", "cuGetErrorName", "cuDriverGetVersion"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        if (!model_function(P->model, required[i])) {
            snprintf(err, errlen, "%s:0: not a CUDA driver header: no declaration of %s",
                     P->model->header, required[i]);
            return -1;
        }
    }
    /* An absent declaration has no line: 0 names the file as a whole. A
     * CUresult that is not an enum is pointed at where it is used first. */
    if (!model_enum(P->model, "CUresult")) {
        const cb_function *init = model_function(P->model, "cuInit");
        snprintf(err, errlen,
                 "%s:%u: not a CUDA driver header: no CUresult enum (the return type of cuInit, "
                 "declared here)",
                 init->file, init->line);
        return -1;
    }
    /* The release is stamped into the module, the capsule table and the
     * manifest: a header that does not say which it is is refused. */
    if (!P->cuda_version_line) {
        snprintf(err, errlen, "%s:0: not a CUDA driver header: no CUDA_VERSION macro",
                 P->model->header);
        return -1;
    }
    if (!P->cuda_version_known || P->model->cuda_version <= 0) {
        snprintf(err, errlen,
                 "%s:%u: not a CUDA driver header: CUDA_VERSION is not a positive integer "
                 "constant",
                 P->model->header, P->cuda_version_line);
        return -1;
    }
    return 0;
}

