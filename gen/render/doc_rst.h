/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doc_rst.h — a header's Doxygen documentation comment as the pieces of a
 * reStructuredText docstring, for docstrings generated with `cubind
 * generate --header-docs` (the user's own header, at build time; committed
 * out/ holds no header prose). templates/driver/header_doc.c.tmpl spells
 * them: the words and markup it adds are there, the header's text here.
 */
#ifndef CUBIND_DOC_RST_H
#define CUBIND_DOC_RST_H

#include "tmpl/tmpl.h"

/* The lines of `doc` (comment markers already stripped), a list of maps:
 *   lead_returns, lead_note, lead_see_also, lead_deprecated: the line
 *     starts with `\return`/`\returns`, `\note`, `\sa`, `\deprecated`;
 *   lead_param, param: `\param NAME - text`, its NAME;
 *   runs: the rest of the line, a list of {text, literal, emphasis}: plain
 *     text, an inline literal (`\p x`, `::name`) or emphasis (`\e x`,
 *     `\b x`).
 * `\brief` and `\details` lead nothing; other `\word` markers and NVIDIA's
 * `\note_*`-style aliases on a line of their own are dropped. Texts are
 * escaped for a C string literal (render_util.h: c_string_chars). Never
 * NULL (aborts on out of memory, like the arena). */
tv *doc_rst(const char *doc);

#endif
