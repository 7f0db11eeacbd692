/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_util.h — literal spellings shared by the render stages
 * (render.c, render_structs.c): a value of the model written as a C token
 * the templates insert as it is.
 */
#ifndef CUBIND_RENDER_UTIL_H
#define CUBIND_RENDER_UTIL_H

#include <stddef.h>

#include "tmpl/tmpl.h"

/* s as a C string literal, one source line per line of text ("a\n"
 * "b"), escaped so that the compiler reads back exactly s. */
tv *c_string_literal(const char *s);

/* s[0..n) escaped to stand inside a C string literal, without the quotes
 * ("\n" stays on the line). */
tv *c_string_chars(const char *s, size_t n);

/* v as a C expression of type long long valid for every value
 * ("-5LL"; LLONG_MIN spelled so that no literal overflows). */
tv *ll_literal(long long v);

#endif
