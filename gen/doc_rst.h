/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doc_rst.h — a header's Doxygen documentation comment as reStructuredText,
 * for docstrings generated with `cubind generate --header-docs` (the user's
 * own header, at build time; committed out/ holds no header prose).
 */
#ifndef CUBIND_DOC_RST_H
#define CUBIND_DOC_RST_H

/* A malloc'd reST rendering of `doc` (comment markers already stripped):
 * `\brief` dropped, `\param name - text` as a "name: text" line,
 * `\return`/`\returns` as "Returns:", `\note` as "Note:", `\sa` as "See
 * also:", `\p x`/`\e x`/`\b x` and `::name` as inline literals, other
 * `\word` markers and NVIDIA's `\note_*`-style aliases on a line of their
 * own dropped. Never NULL (aborts on out of memory, like the arena). */
char *doc_rst(const char *doc);

#endif
