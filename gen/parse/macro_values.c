/* SPDX-License-Identifier: Apache-2.0 */
/*
 * macro_values.c — each constant macro's value as C computes it.
 *
 * macros.c decides which macros are constants (and records a body's cast
 * and enum); its arithmetic has no C integer types, so `~0u` or `1u << 31`
 * would come out as 64-bit values. Here every constant is declared once
 * more after the headers, in a second translation unit,
 *
 *     static const __auto_type cubind_value_N = (NAME);
 *
 * (N its index in model.macros), and clang's evaluation of that
 * initializer, in the type C gives the expression, replaces a value that
 * differs. A constant clang does not evaluate as an integer (a pointer
 * cast such as `((CUstream)0x1)`) keeps macros.c's value. Invariant after
 * macro_check_values: every macro's value is the one a C program including
 * the same headers sees (tests/gen/test_gen_model.py compares with gcc).
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

#define VALUE_PREFIX "cubind_value_"

/* Takes the value of the declaration `cubind_value_N` for macro N. */
static void take_value(cb_model *m, CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    const char *name = clang_getCString(s);
    char *end = NULL;
    unsigned long n = strncmp(name, VALUE_PREFIX, sizeof VALUE_PREFIX - 1) == 0
                          ? strtoul(name + sizeof VALUE_PREFIX - 1, &end, 10)
                          : 0;
    int ours = end && !*end && n < m->nmacros;
    clang_disposeString(s);
    if (!ours)
        return;
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (!r)
        return;
    if (clang_EvalResult_getKind(r) == CXEval_Int) {
        cb_macro *mac = &m->macros[n];
        int is_unsigned = clang_EvalResult_isUnsignedInt(r) != 0;
        long long v = is_unsigned ? (long long)clang_EvalResult_getAsUnsigned(r)
                                  : clang_EvalResult_getAsLongLong(r);
        if (v != mac->value) {
            mac->value = v;
            mac->is_unsigned = is_unsigned;
            if (strcmp(mac->name, m->version_macro) == 0)
                m->cuda_version = v;
        }
    }
    clang_EvalResult_dispose(r);
}

void macro_check_values(parser *P, CXIndex index, const char *main_text,
                        const char *const *args, int nargs)
{
    cb_model *m = P->model;
    if (!m->nmacros)
        return;
    strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, main_text);
    for (size_t i = 0; i < m->nmacros; i++)
        sb_printf(&sb, "static const __auto_type " VALUE_PREFIX "%zu = (%s);\n", i,
                  m->macros[i].name);
    if (sb.oom || !sb.data)
        arena_oom();
    struct CXUnsavedFile unsaved = {"cubind_values.c", sb.data, (unsigned long)strlen(sb.data)};
    CXTranslationUnit tu = NULL;
    if (clang_parseTranslationUnit2(index, "cubind_values.c", args, nargs, &unsaved, 1,
                                    CXTranslationUnit_SkipFunctionBodies, &tu) == CXError_Success &&
        tu) {
        CXCursor *top = NULL;
        size_t ntop = px_children(P, clang_getTranslationUnitCursor(tu), &top);
        for (size_t i = 0; i < ntop; i++)
            if (clang_getCursorKind(top[i]) == CXCursor_VarDecl)
                take_value(m, top[i]);
        free(top);
        clang_disposeTranslationUnit(tu);
    }
    free(sb.data);
}
