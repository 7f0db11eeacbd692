/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_util.h — literal spellings shared by the render stages
 * (render.c, render_structs.c).
 */
#ifndef CUBIND_RENDER_UTIL_H
#define CUBIND_RENDER_UTIL_H

#include "tmpl.h"

/* s as a C string literal, one source line per line of text. */
tv *c_string_literal(const char *s);

#endif
