/* SPDX-License-Identifier: Apache-2.0 */
/*
 * comments.c — the doc comment written right before a declaration, for the
 * declarations libclang gives none.
 *
 * libclang 14 attaches no comment to a declaration whose name is a macro
 * expansion: `CUresult CUDAAPI cuMemAlloc(...)` under
 * `#define cuMemAlloc cuMemAlloc_v2` (or `__CUDA_API_PTSZ(cuX)`) declares
 * cuMemAlloc_v2 at a location inside the expansion, and clang looks for
 * comments only before locations in a file. The comment is still in cuda.h
 * right before the declaration's first token, so this module finds it there.
 *
 * Invariant: `P->comments` lists every comment token of cuda.h (as clang's
 * lexer sees them, so a comment opener inside a string or another comment
 * is never mistaken for one) by ascending begin offset; it is built on first use.
 */
#define _POSIX_C_SOURCE 200809L
#include "parse/parse_internal.h"

#include <stdlib.h>
#include <string.h>

static unsigned file_offset(CXSourceLocation loc)
{
    unsigned off = 0;
    clang_getExpansionLocation(loc, NULL, NULL, NULL, &off);
    return off;
}

static void collect_comments(parser *P)
{
    P->comments_ready = 1;
    size_t size = 0;
    const char *text = clang_getFileContents(P->tu, P->cuda_h, &size);
    if (!text)
        return;
    P->cuda_text = text;
    P->cuda_len = size;
    CXSourceRange whole = clang_getRange(clang_getLocationForOffset(P->tu, P->cuda_h, 0),
                                         clang_getLocationForOffset(P->tu, P->cuda_h,
                                                                    (unsigned)size));
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(P->tu, whole, &toks, &n);
    size_t cap = 0;
    for (unsigned i = 0; i < n; i++) {
        if (clang_getTokenKind(toks[i]) != CXToken_Comment)
            continue;
        CXSourceRange r = clang_getTokenExtent(P->tu, toks[i]);
        if (P->ncomments == cap) {
            cap = cap ? cap * 2 : 1024;
            comment_span *grown = realloc(P->comments, cap * sizeof *grown);
            if (!grown)
                arena_oom();
            P->comments = grown;
        }
        P->comments[P->ncomments].begin = file_offset(clang_getRangeStart(r));
        P->comments[P->ncomments].end = file_offset(clang_getRangeEnd(r));
        P->ncomments++;
    }
    clang_disposeTokens(P->tu, toks, n);
}

/* Whether text[b, e) is a block doc comment that documents what follows it:
 * it opens with slash-star-star or slash-star-bang, neither followed by '<'
 * (such a comment documents what precedes it), and is not the empty
 * slash-star-star-slash. */
static int is_leading_doc(const char *text, unsigned b, unsigned e)
{
    if (e < b + 5 || strncmp(text + b, "/*", 2) != 0)
        return 0;
    char third = text[b + 2], fourth = text[b + 3];
    return (third == '*' || third == '!') && fourth != '<' && !(third == '*' && fourth == '/');
}

const char *px_comment_before(parser *P, CXCursor c)
{
    if (!P->comments_ready)
        collect_comments(P);
    CXSourceRange extent = clang_getCursorExtent(c);
    CXFile f;
    unsigned start = 0;
    clang_getExpansionLocation(clang_getRangeStart(extent), &f, NULL, NULL, &start);
    if (!f || !clang_File_isEqual(f, P->cuda_h) || !P->ncomments || start > P->cuda_len)
        return NULL;
    /* The last comment that ends at or before the declaration's start. */
    size_t lo = 0, hi = P->ncomments;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->comments[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const comment_span *cm = &P->comments[lo - 1];
    /* Only white space may separate it from the declaration. */
    for (unsigned i = cm->end; i < start; i++)
        if (!strchr(" \t\r\n\f\v", P->cuda_text[i]))
            return NULL;
    if (!is_leading_doc(P->cuda_text, cm->begin, cm->end))
        return NULL;
    return arena_strndup(P->arena, P->cuda_text + cm->begin, cm->end - cm->begin);
}

void px_comments_free(parser *P)
{
    free(P->comments);
    P->comments = NULL;
    P->ncomments = 0;
}
