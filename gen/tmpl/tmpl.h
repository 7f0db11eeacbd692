/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tmpl: cubind's template engine.  Every byte the generator emits comes from
 * a template; the C that walks the model only builds a tree of values (tv)
 * and asks for a template to be rendered with it.  The language is
 * logic-less and mustache-like.
 *
 * Text between tags is copied byte for byte (it is C and Python source).
 * Nothing is ever escaped.  There is no delimiter switching, so a template
 * can never contain a literal "{{" outside a tag: write C initialisers as
 * "{ {" or emit the braces from a value.  A lone "}}" in text is fine.
 *
 * Tags (whitespace around the name is allowed: {{ name }}, {{# name }}):
 *
 *   {{name}}      inserts a string or int value.  A missing name, or a name
 *                 that holds a list, map or bool, is an error.
 *   {{a.b.c}}     dotted name: "a" is looked up in the context stack, then
 *                 "b" and "c" in the maps it leads to (no further stack
 *                 search once "a" is found).
 *   {{.}}         the current item (innermost frame), e.g. a string item
 *                 of a list.
 *   {{#name}}..{{/name}}
 *                 section: a list renders the body once per item, with the
 *                 item pushed as a frame; a map renders it once with the map
 *                 pushed; a string or int renders it once with the value
 *                 pushed (so {{.}} reads it); a bool renders it once if true
 *                 and pushes nothing.  A missing name is an error: the C must
 *                 set every key a template reads, booleans included.
 *   {{^name}}..{{/name}}
 *                 inverted section: renders once, pushing nothing, if the
 *                 value is false or an empty list.  Missing is an error.
 *   {{@index}} {{@first}} {{@last}}
 *                 answered by the innermost list-iteration frame: the 0-based
 *                 index (int) and whether the item is the first / last
 *                 (bools).  {{#params}}{{name}}{{^@last}}, {{/@last}}{{/params}}
 *                 joins names with commas.
 *   {{>name}}     partial: renders template "name" of the same set with the
 *                 current context stack.  Unknown partials and nesting deeper
 *                 than TMPL_MAX_DEPTH (recursion) are errors.  A partial tag
 *                 inside a line (not standalone) inserts the partial's output
 *                 without its final line ending, so that a template written
 *                 as lines (each file ending in a newline) can give a piece
 *                 of a line: "f({{>arg}})" with arg's text "x\n" gives "f(x)".
 *   {{>*name}}    dynamic partial: as {{>...}}, the partial named by the
 *                 string value `name` (looked up as {{name}} is).  A missing
 *                 or non-string value is an error.
 *   {{! text }}   comment; emits nothing; may span lines.  A comment that
 *                 opens at a line's end and closes on the next line
 *                 ("a, {{!" newline "  }}b") takes that newline and indent
 *                 with it: one output line written over several template
 *                 lines (templates/ keep lines <= 160 characters).
 *
 * Lookup: a name's first component is searched from the innermost frame
 * outwards; frames that are not maps (strings, ints) are skipped.
 *
 * Standalone lines: a line holding only spaces/tabs and exactly one section
 * open, section close, inverted, comment or partial tag is removed entirely,
 * including its indentation and its line ending ("\n" or "\r\n").  Value
 * tags are never standalone.  The indentation of a standalone partial tag is
 * added to every non-empty line the partial emits (its text and its values,
 * and nested partials' output, cumulatively), so nested generated code keeps
 * its indentation.  Empty lines get no indentation (no trailing whitespace).
 *
 * Errors are reported as "origin:line: message", where origin is the file
 * name given to tmpl_add and line is that of the offending tag.  Parse-time
 * errors (tmpl_add): unterminated tag, empty or invalid name, unclosed
 * section (line where it was opened), mismatched or stray close tag,
 * sections nested deeper than TMPL_MAX_NEST.  Render-time errors
 * (tmpl_render): missing value, wrong kind of value, unknown partial,
 * partial recursion, out of memory.  An error inside a partial names the
 * partial's origin and line, followed by " (included from origin:line)" for
 * each enclosing partial tag, as far as err has room.
 *
 * Memory: nothing here aborts or exits.  tv constructors return NULL when
 * allocation fails.  tv_push / tv_set given a NULL item (or failing to grow,
 * or given a container of the wrong kind) free the item and mark the
 * container incomplete; rendering fails with "out of memory" when it reaches
 * an incomplete container, or when ctx is NULL.  Every tv function accepts
 * NULL containers (and does nothing).
 */
#ifndef CUBIND_TMPL_H
#define CUBIND_TMPL_H

#include <stddef.h>

#include "util/strbuf.h"

#define TMPL_MAX_DEPTH 64  /* nested partial renders */
#define TMPL_MAX_NEST 100  /* nested sections within one template */

#if defined(__GNUC__) || defined(__clang__)
#define TV_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TV_PRINTF(f, a)
#endif

/* A template value: string, int, bool, list or map (maps keep insertion
   order).  A tree of values is owned by its root. */
typedef struct tv tv;

tv *tv_str(const char *s); /* copies s; NULL s gives NULL */
tv *tv_strf(const char *fmt, ...) TV_PRINTF(1, 2);
tv *tv_int(long long v); /* rendered in decimal */
tv *tv_bool(int b);
tv *tv_list(void);
tv *tv_map(void);
void tv_push(tv *list, tv *item);               /* takes ownership of item */
void tv_set(tv *map, const char *key, tv *val); /* takes ownership; replaces */
void tv_set_str(tv *map, const char *key, const char *s);
void tv_set_strf(tv *map, const char *key, const char *fmt, ...) TV_PRINTF(3, 4);
void tv_set_int(tv *map, const char *key, long long v);
void tv_set_bool(tv *map, const char *key, int b);
size_t tv_len(const tv *list); /* items of a list; 0 for anything else */
void tv_free(tv *v);

/* A set of named templates that may include each other as partials. */
typedef struct tmpl_set tmpl_set;

tmpl_set *tmpl_set_new(void); /* NULL when out of memory */
/* Parses text[0..len) and adds it as `name` (e.g. "driver/module.c");
   origin is the file name used in messages.  Returns 0, or -1 with
   "origin:line: message" in err (syntax error, duplicate name, out of
   memory); err may be NULL when errlen is 0. */
int tmpl_add(tmpl_set *ts, const char *name, const char *origin,
             const char *text, size_t len, char *err, size_t errlen);
/* Adds every file ending in ".tmpl" under dir, recursively (entries whose
   name starts with '.' are skipped), in sorted order.  A template's name is
   its path relative to dir, '/'-separated, without ".tmpl"; its origin is
   dir + "/" + that path.  Returns 0 or -1 with a message in err. */
int tmpl_load_dir(tmpl_set *ts, const char *dir, char *err, size_t errlen);
int tmpl_has(const tmpl_set *ts, const char *name);
/* How many templates the set holds, and the origin (file name) of the i-th
   in insertion order; NULL past the end. For dependency files. */
size_t tmpl_count(const tmpl_set *ts);
const char *tmpl_origin(const tmpl_set *ts, size_t i);
/* Renders `name` with ctx as the outermost context frame, appending to out.
   Returns 0, or -1 with "origin:line: message" in err; on -1 whatever was
   appended to out is garbage. */
int tmpl_render(const tmpl_set *ts, const char *name, const tv *ctx,
                strbuf *out, char *err, size_t errlen);
void tmpl_set_free(tmpl_set *ts);

#endif
