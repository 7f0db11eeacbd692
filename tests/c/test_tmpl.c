/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for gen/tmpl/tmpl.c and gen/util/strbuf.c.  Exits non-zero on any
   failed check; each failure is printed as file:line. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "tmpl/tmpl.h"

static int n_checks, n_failed;

#define CHECK(c) check_((c) != 0, __FILE__, __LINE__, #c)
static void check_(int ok, const char *file, int line, const char *what) {
    n_checks++;
    if (!ok) {
        n_failed++;
        fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    }
}

static int contains(const char *hay, const char *needle) {
    return strstr(hay, needle) != NULL;
}

/* Renders template `name` of ts and compares with want. */
#define EXPECT(ts, name, ctx, want) expect_(__FILE__, __LINE__, ts, name, ctx, want)
static void expect_(const char *file, int line, tmpl_set *ts, const char *name,
                    const tv *ctx, const char *want) {
    strbuf out;
    char err[512];
    int r;
    sb_init(&out);
    r = tmpl_render(ts, name, ctx, &out, err, sizeof err);
    n_checks++;
    if (r != 0) {
        n_failed++;
        fprintf(stderr, "%s:%d: render failed: %s\n", file, line, err);
    } else if (strcmp(out.data ? out.data : "", want) != 0) {
        n_failed++;
        fprintf(stderr, "%s:%d: render mismatch\n--- want ---\n%s\n--- got ---\n%s\n",
                file, line, want, out.data ? out.data : "");
    }
    sb_free(&out);
}

/* Renders and expects failure with each of the (up to 3) substrings. */
#define EXPECT_ERR(ts, name, ctx, s1, s2, s3) \
    expect_err_(__FILE__, __LINE__, ts, name, ctx, s1, s2, s3)
static void expect_err_(const char *file, int line, tmpl_set *ts,
                        const char *name, const tv *ctx, const char *s1,
                        const char *s2, const char *s3) {
    strbuf out;
    char err[512];
    int r;
    sb_init(&out);
    r = tmpl_render(ts, name, ctx, &out, err, sizeof err);
    n_checks++;
    if (r == 0) {
        n_failed++;
        fprintf(stderr, "%s:%d: render succeeded, expected error '%s'\n",
                file, line, s1);
    } else if (!contains(err, s1) || (s2 && !contains(err, s2)) ||
               (s3 && !contains(err, s3))) {
        n_failed++;
        fprintf(stderr, "%s:%d: error '%s' lacks '%s' / '%s' / '%s'\n", file,
                line, err, s1, s2 ? s2 : "", s3 ? s3 : "");
    }
    sb_free(&out);
}

/* Adds a template whose origin is name + ".tmpl"; checks it parses. */
#define ADD(ts, name, text) add_(__FILE__, __LINE__, ts, name, text)
static void add_(const char *file, int line, tmpl_set *ts, const char *name,
                 const char *text) {
    char err[512], origin[256];
    n_checks++;
    snprintf(origin, sizeof origin, "%s.tmpl", name);
    if (tmpl_add(ts, name, origin, text, strlen(text), err, sizeof err) != 0) {
        n_failed++;
        fprintf(stderr, "%s:%d: tmpl_add failed: %s\n", file, line, err);
    }
}

/* One-template render: T1(text, ctx, want). */
#define T1(text, ctx, want) t1_(__FILE__, __LINE__, text, ctx, want)
static void t1_(const char *file, int line, const char *text, const tv *ctx,
                const char *want) {
    tmpl_set *ts = tmpl_set_new();
    add_(file, line, ts, "t", text);
    expect_(file, line, ts, "t", ctx, want);
    tmpl_set_free(ts);
}

/* Expects tmpl_add to fail with "t.tmpl:LINE:" and substring s. */
#define PARSE_ERR(text, lineno, s) parse_err_(__FILE__, __LINE__, text, lineno, s)
static void parse_err_(const char *file, int line, const char *text,
                       int lineno, const char *s) {
    tmpl_set *ts = tmpl_set_new();
    char err[512], prefix[64];
    int r = tmpl_add(ts, "t", "t.tmpl", text, strlen(text), err, sizeof err);
    snprintf(prefix, sizeof prefix, "t.tmpl:%d: ", lineno);
    n_checks++;
    if (r == 0) {
        n_failed++;
        fprintf(stderr, "%s:%d: parse succeeded, expected '%s'\n", file, line, s);
    } else if (strncmp(err, prefix, strlen(prefix)) != 0 || !contains(err, s)) {
        n_failed++;
        fprintf(stderr, "%s:%d: error '%s' is not '%s...%s...'\n", file, line,
                err, prefix, s);
    }
    n_checks++;
    if (tmpl_has(ts, "t")) {
        n_failed++;
        fprintf(stderr, "%s:%d: failed template was added\n", file, line);
    }
    tmpl_set_free(ts);
}

static tv *str_list(const char *const *items) {
    tv *l = tv_list();
    for (; *items; items++)
        tv_push(l, tv_str(*items));
    return l;
}

static void test_strbuf(void) {
    strbuf sb;
    char big[300];
    sb_init(&sb);
    CHECK(sb.len == 0 && !sb.oom);
    CHECK(sb_append(&sb, "ab", 2) == 0);
    CHECK(sb_putc(&sb, 'c') == 0);
    CHECK(sb_puts(&sb, "de") == 0);
    CHECK(sb_append(&sb, "", 0) == 0);
    CHECK(strcmp(sb.data, "abcde") == 0 && sb.len == 5);
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK(sb_printf(&sb, "[%s|%d]", big, 42) == 0);
    CHECK(sb.len == 5 + 1 + 299 + 4 && strcmp(sb.data + sb.len - 4, "|42]") == 0);
    CHECK(sb.data[sb.len] == '\0');
    sb.oom = 1; /* sticky: later calls are no-ops */
    CHECK(sb_puts(&sb, "more") == -1 && sb.len == 309);
    CHECK(sb_printf(&sb, "%d", 1) == -1 && sb.len == 309);
    sb_free(&sb);
    CHECK(sb.data == NULL && sb.len == 0 && !sb.oom);
    CHECK(sb_printf(&sb, "%s", "") == 0 && sb.data && sb.data[0] == '\0');
    sb_free(&sb);
}

static void test_values(void) {
    tv *c = tv_map(), *m = tv_map(), *inner = tv_map();
    tv_set_str(c, "name", "cuMemAlloc");
    tv_set_int(c, "n", -42);
    tv_set_strf(c, "f", "%s_v%d", "cuCtxCreate", 2);
    tv_set(c, "g", tv_strf("<%03d>", 7));
    tv_set_str(inner, "c", "deep");
    tv_set(m, "b", inner);
    tv_set(c, "a", m);
    tv_set_str(c, "empty", "");
    T1("x {{name}}({{n}}) {{f}}{{g}}", c, "x cuMemAlloc(-42) cuCtxCreate_v2<007>");
    T1("{{ name }}|{{a.b.c}}|{{ a.b.c }}|{{empty}}|", c, "cuMemAlloc|deep|deep||");
    T1("no tags at all\n", c, "no tags at all\n");
    T1("", c, "");
    /* text is copied byte for byte: braces, "}}", CRLF, trailing blanks */
    T1("int a[1] = { {0} }; }} } {x}\r\n  \t\n", c,
       "int a[1] = { {0} }; }} } {x}\r\n  \t\n");
    /* replacing a key keeps one entry with the new value */
    tv_set_str(c, "name", "cuMemFree");
    T1("{{name}}", c, "cuMemFree");
    CHECK(tv_len(c) == 0);
    tv_free(c);

    c = tv_map();
    tv_set(c, "l", tv_list());
    tv_push(NULL, tv_str("leak-free")); /* NULL container: item freed */
    tv_set(NULL, "k", tv_int(1));
    CHECK(tv_len(NULL) == 0);
    tv_free(NULL);
    tv_free(c);
}

static void test_sections(void) {
    static const char *const names[] = {"a", "b", "c", NULL};
    tv *c = tv_map(), *params = tv_list(), *m = tv_map();
    int i;
    for (i = 0; i < 3; i++) {
        tv *p = tv_map();
        tv_set_strf(p, "name", "p%d", i);
        tv_set_bool(p, "out", i == 1);
        tv_push(params, p);
    }
    tv_set(c, "params", params);
    tv_set(c, "strs", str_list(names));
    tv_set(c, "none", tv_list());
    tv_set_str(m, "x", "mx");
    tv_set(c, "m", m);
    tv_set_bool(c, "yes", 1);
    tv_set_bool(c, "no", 0);
    tv_set_str(c, "fn", "cuLaunch");
    tv_set_str(c, "x", "outer-x");
    tv_set_int(c, "num", 5);
    tv_set(c, "emptymap", tv_map());

    T1("{{#params}}[{{name}}]{{/params}}", c, "[p0][p1][p2]");
    T1("{{#strs}}<{{.}}>{{/strs}}", c, "<a><b><c>");
    T1("{{#m}}{{x}}{{/m}} {{x}}", c, "mx outer-x");
    T1("{{#m}}{{fn}}{{/m}}", c, "cuLaunch"); /* found in an outer frame */
    T1("{{#params}}{{fn}}.{{name}} {{/params}}", c,
       "cuLaunch.p0 cuLaunch.p1 cuLaunch.p2 ");
    T1("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}", c, "Y");
    T1("{{^yes}}Y{{/yes}}{{^no}}N{{/no}}", c, "N");
    T1("{{^none}}empty{{/none}}{{^params}}nonempty{{/params}}", c, "empty");
    T1("{{#none}}never{{/none}}", c, "");
    T1("{{^m}}map{{/m}}{{^fn}}str{{/fn}}{{^emptymap}}em{{/emptymap}}", c, "");
    T1("{{#fn}}<{{.}}>{{/fn}}{{#num}}({{.}}){{/num}}", c, "<cuLaunch>(5)");
    T1("{{#emptymap}}once{{/emptymap}}", c, "once");
    /* a bool section pushes no frame: {{.}} is still the list item */
    T1("{{#strs}}{{.}}{{#yes}}!{{.}}{{/yes}} {{/strs}}", c, "a!a b!b c!c ");
    T1("{{#params}}{{#out}}*{{/out}}{{name}}{{/params}}", c, "p0*p1p2");
    T1("{{# params }}{{ name }}{{/ params }}", c, "p0p1p2");
    T1("{{#params}}{{name}}{{^@last}}, {{/@last}}{{/params}}", c, "p0, p1, p2");
    T1("{{#params}}{{@index}}{{#@first}}F{{/@first}}{{#@last}}L{{/@last}};{{/params}}",
       c, "0F;1;2L;");
    /* @index answers from the innermost list frame, through map frames */
    T1("{{#params}}{{#strs}}{{@index}}{{/strs}}/{{#m}}{{@index}}{{/m}} {{/params}}",
       c, "012/0 012/1 012/2 ");
    /* dotted name into a list item's map */
    T1("{{#params}}{{m.x}}{{/params}}", c, "mxmxmx");
    tv_free(c);
}

static void test_standalone(void) {
    static const char *const names[] = {"a", "b", NULL};
    tv *c = tv_map();
    tv_set(c, "items", str_list(names));
    tv_set_bool(c, "yes", 1);
    tv_set_bool(c, "no", 0);
    tv_set_str(c, "v", "V");

    T1("begin\n"
       "{{#items}}\n"
       "  item {{.}}\n"
       "  {{#yes}}\n"
       "    yes\n"
       "  {{/yes}}\n"
       "  {{^yes}}\n"
       "    not yes\n"
       "  {{/yes}}\n"
       "{{/items}}\n"
       "end\n",
       c, "begin\n  item a\n    yes\n  item b\n    yes\nend\n");
    T1("begin\r\n"
       "\t{{#items}}  \r\n"
       "x{{.}}\r\n"
       "{{/items}}\r\n"
       "end\r\n",
       c, "begin\r\nxa\r\nxb\r\nend\r\n");
    /* standalone at start and end of the template, no final newline */
    T1("{{#yes}}\nin\n{{/yes}}", c, "in\n");
    /* comments: inline, standalone, multi-line standalone */
    T1("a{{! inline }}b\n"
       "  {{! standalone }}\n"
       "c\n"
       "{{! multi\n"
       "    line {{ comment\n"
       "}}\n"
       "d {{!x}}\n",
       c, "ab\nc\nd \n");
    /* a line continued in a comment: the comment takes the newline and
     * the next line's indent with it, so one output line can be written
     * over several template lines (templates/ keep lines <= 160 chars);
     * a section tag after the comment's close is not standalone */
    T1("f(a, {{!\n"
       "      }}b, {{#yes}}{{!\n"
       "      }}c{{/yes}});\n",
       c, "f(a, b, c);\n");
    /* not standalone: two tags on a line, or other text on the line */
    T1("{{#yes}}{{/yes}}\n", c, "\n");
    T1(" {{#yes}}x{{/yes}}\n", c, " x\n");
    T1("x {{#no}}\n{{/no}} y\n", c, "x  y\n");
    /* value tags are never standalone */
    T1("  {{v}}\n", c, "  V\n");
    /* blank lines kept as written */
    T1("a\n\n{{#yes}}\n\nb\n{{/yes}}\n", c, "a\n\n\nb\n");
    tv_free(c);
}

static void test_partials(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *params = tv_list();
    int i;
    for (i = 0; i < 2; i++) {
        tv *p = tv_map();
        tv_set_strf(p, "name", "p%d", i);
        tv_set_str(p, "doc", "line1\nline2");
        tv_push(params, p);
    }
    tv_set(c, "params", params);
    tv_set_str(c, "fn", "cuF");

    ADD(ts, "param", "/* {{name}} of {{fn}} */\nuse({{name}});\n");
    ADD(ts, "inline", "<{{fn}}>");
    ADD(ts, "body", "{\n"
                    "    {{#params}}\n"
                    "    {{>param}}\n"
                    "    {{/params}}\n"
                    "}\n");
    ADD(ts, "outer", "static int f(void)\n"
                     "{{>body}}\n"
                     "void g(void) {\n"
                     "    if (1)\n"
                     "        {{>body}}\n"
                     "}\n");
    ADD(ts, "mid", "x {{>inline}} y\n");
    ADD(ts, "doc", "{{#params}}\n"
                   "{{doc}}\n"
                   "\n"
                   "{{/params}}\n");
    ADD(ts, "docs", "  {{>doc}}\n");
    ADD(ts, "crlfp", "x{{fn}}\r\ny\r\n");
    ADD(ts, "crlf", "a\r\n  {{>crlfp}}\r\nb\r\n");

    EXPECT(ts, "mid", c, "x <cuF> y\n");
    EXPECT(ts, "body", c,
           "{\n"
           "    /* p0 of cuF */\n"
           "    use(p0);\n"
           "    /* p1 of cuF */\n"
           "    use(p1);\n"
           "}\n");
    /* nested standalone partials: indentation accumulates */
    EXPECT(ts, "outer", c,
           "static int f(void)\n"
           "{\n"
           "    /* p0 of cuF */\n"
           "    use(p0);\n"
           "    /* p1 of cuF */\n"
           "    use(p1);\n"
           "}\n"
           "void g(void) {\n"
           "    if (1)\n"
           "        {\n"
           "            /* p0 of cuF */\n"
           "            use(p0);\n"
           "            /* p1 of cuF */\n"
           "            use(p1);\n"
           "        }\n"
           "}\n");
    /* every non-empty line gets the indentation, values' lines included;
       empty lines stay empty */
    EXPECT(ts, "docs", c, "  line1\n  line2\n\n  line1\n  line2\n\n");
    EXPECT(ts, "crlf", c, "a\r\n  xcuF\r\n  y\r\nb\r\n");
    tmpl_set_free(ts);
    tv_free(c);
}

/* {{>*name}}: the partial a value names; each parameter picks its own. */
static void test_dynamic_partials(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *params = tv_list(), *p;
    p = tv_map();
    tv_set_str(p, "name", "a");
    tv_set_str(p, "kind", "shapes/value");
    tv_push(params, p);
    p = tv_map();
    tv_set_str(p, "name", "b");
    tv_set_str(p, "kind", "shapes/out");
    tv_push(params, p);
    tv_set(c, "params", params);
    tv_set_str(c, "unknown", "shapes/none");
    tv_set_int(c, "number", 3);

    ADD(ts, "shapes/value", "int {{name}}_v;\n");
    ADD(ts, "shapes/out", "int {{name}}_out;\n");
    ADD(ts, "decls", "{\n"
                     "{{#params}}\n"
                     "    {{> *kind }}\n"
                     "{{/params}}\n"
                     "}\n");
    ADD(ts, "bad", "{{>*unknown}}");
    ADD(ts, "missing", "{{>*nothing}}");
    ADD(ts, "notstring", "{{>*number}}");
    EXPECT(ts, "decls", c, "{\n    int a_v;\n    int b_out;\n}\n");
    EXPECT_ERR(ts, "bad", c, "bad.tmpl:1:", "unknown partial 'shapes/none'", NULL);
    EXPECT_ERR(ts, "missing", c, "missing.tmpl:1:", "missing value 'nothing'", NULL);
    EXPECT_ERR(ts, "notstring", c, "notstring.tmpl:1:", "'number' is a int", NULL);
    PARSE_ERR("{{>*}}", 1, "empty name");
    PARSE_ERR("{{>*a..b}}", 1, "invalid name");
    tmpl_set_free(ts);
    tv_free(c);
}

/* A partial inside a line loses its output's final line ending, "\n" or
   "\r\n" (one only); a standalone one keeps it. */
static void test_inline_partial_line_ending(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *args = tv_list();
    tv_push(args, tv_str("x"));
    tv_push(args, tv_str("y"));
    tv_set(c, "args", args);
    tv_set_bool(c, "yes", 1);

    ADD(ts, "arg", "{{#yes}}\n{{.}}_v\n{{/yes}}\n");
    ADD(ts, "call", "f({{#args}}{{>arg}}{{^@last}}, {{/@last}}{{/args}});\n");
    ADD(ts, "two", "a\n\n");
    ADD(ts, "crlf", "b\r\n");
    ADD(ts, "none", "c");
    ADD(ts, "empty", "{{^yes}}\nnever\n{{/yes}}\n");
    ADD(ts, "pieces", "[{{>two}}|{{>crlf}}|{{>none}}|{{>empty}}]\n");
    ADD(ts, "lines", "{{#args}}\n  {{>arg}}\n{{/args}}\n");
    EXPECT(ts, "call", c, "f(x_v, y_v);\n");
    EXPECT(ts, "pieces", c, "[a\n|b|c|]\n");
    EXPECT(ts, "lines", c, "  x_v\n  y_v\n");
    tmpl_set_free(ts);
    tv_free(c);
}

static void test_parse_errors(void) {
    PARSE_ERR("a\n{{#sec}}\nb\n", 2, "unclosed section '{{#sec}}'");
    PARSE_ERR("a\n{{#x}}\n{{^y}}\n{{/y}}\n\n", 2, "unclosed section '{{#x}}'");
    PARSE_ERR("{{#a}}\n\n{{/b}}\n{{/a}}\n", 3, "mismatched close tag '{{/b}}'");
    PARSE_ERR("{{#a}}\n\n{{/b}}\n{{/a}}\n", 3, "opened at line 1");
    PARSE_ERR("x\ny\n{{/a}}\n", 3, "close tag '{{/a}}' without an open section");
    PARSE_ERR("x\n\n{{ name\n", 3, "unterminated tag");
    PARSE_ERR("x {{! comment\nnever closed\n", 1, "unterminated tag");
    PARSE_ERR("\n{{}}\n", 2, "empty name");
    PARSE_ERR("\n\n{{#  }}{{/}}\n", 3, "empty name");
    PARSE_ERR("{{>}}\n", 1, "empty name");
    PARSE_ERR("{{a b}}\n", 1, "invalid name");
    PARSE_ERR("{{a..b}}\n", 1, "invalid name");
    PARSE_ERR("{{{triple}}}\n", 1, "invalid name");
    PARSE_ERR("{{@count}}\n", 1, "unknown special name");
    /* line numbers count newlines inside multi-line comments and removed
       standalone lines */
    PARSE_ERR("{{! one\ntwo\n}}\n{{#s}}\n\n{{/t}}\n", 6, "mismatched");
    {
        strbuf deep;
        int i;
        sb_init(&deep);
        for (i = 0; i < TMPL_MAX_NEST + 1; i++)
            sb_puts(&deep, "{{#a}}");
        PARSE_ERR(deep.data, 1, "sections nested deeper than");
        sb_free(&deep);
    }
}

static void test_render_errors(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *l = tv_list(), *m = tv_map();
    char err[512];
    strbuf out;
    tv_push(l, tv_str("i"));
    tv_set(c, "list", l);
    tv_set_str(m, "s", "str");
    tv_set(c, "m", m);
    tv_set_bool(c, "flag", 1);
    tv_set_str(c, "name", "N");

    ADD(ts, "missing", "ok {{name}}\n\n  x {{nope}}\n");
    ADD(ts, "missing_sec", "a\n{{#nosuch}}\n{{/nosuch}}\n");
    ADD(ts, "missing_inv", "a\nb\n{{^nosuch}}\n{{/nosuch}}\n");
    ADD(ts, "missing_dot", "\n{{m.t}}\n");
    ADD(ts, "not_map", "{{m.s.x}}\n");
    ADD(ts, "list_value", "\n{{list}}\n");
    ADD(ts, "bool_value", "{{flag}}\n");
    ADD(ts, "map_value", "{{m}}\n");
    ADD(ts, "at_outside", "{{#m}}{{@index}}{{/m}}\n");
    ADD(ts, "item_frame_missing", "{{#list}}\n{{#m}}{{zz}}{{/m}}\n{{/list}}\n");
    ADD(ts, "unknown_partial", "a\nb\n  {{>no/such/partial}}\n");
    ADD(ts, "bad_inner", "line1\n{{#list}}\n{{undefined_in_partial}}\n{{/list}}\n");
    ADD(ts, "outer", "x\n{{>bad_inner}}\n");
    ADD(ts, "rec", "r\n{{#flag}}\n{{>rec}}\n{{/flag}}\n");

    EXPECT_ERR(ts, "missing", c, "missing.tmpl:3: ", "missing value 'nope'", NULL);
    EXPECT_ERR(ts, "missing_sec", c, "missing_sec.tmpl:2: ", "missing value 'nosuch'", NULL);
    EXPECT_ERR(ts, "missing_inv", c, "missing_inv.tmpl:3: ", "missing value 'nosuch'", NULL);
    EXPECT_ERR(ts, "missing_dot", c, "missing_dot.tmpl:2: ", "missing value 'm.t'", NULL);
    EXPECT_ERR(ts, "not_map", c, "not_map.tmpl:1: ", "'m.s' is a string, not a map", NULL);
    EXPECT_ERR(ts, "list_value", c, "list_value.tmpl:2: ", "'list' is a list", NULL);
    EXPECT_ERR(ts, "bool_value", c, "bool_value.tmpl:1: ", "'flag' is a bool", NULL);
    EXPECT_ERR(ts, "map_value", c, "map_value.tmpl:1: ", "'m' is a map", NULL);
    EXPECT_ERR(ts, "at_outside", c, "at_outside.tmpl:1: ", "outside a list section", NULL);
    EXPECT_ERR(ts, "item_frame_missing", c, "item_frame_missing.tmpl:2: ",
               "missing value 'zz'", NULL);
    EXPECT_ERR(ts, "unknown_partial", c, "unknown_partial.tmpl:3: ",
               "unknown partial 'no/such/partial'", NULL);
    EXPECT_ERR(ts, "outer", c, "bad_inner.tmpl:3: ",
               "missing value 'undefined_in_partial'",
               "(included from outer.tmpl:2)");
    EXPECT_ERR(ts, "rec", c, "rec.tmpl:3: ", "nested deeper than 64", "'rec'");
    EXPECT_ERR(ts, "nonexistent", c, "unknown template 'nonexistent'", NULL, NULL);
    EXPECT_ERR(ts, "missing", NULL, "missing.tmpl", "out of memory", NULL);

    /* a duplicate name is refused and the first template kept */
    CHECK(tmpl_add(ts, "missing", "dup.tmpl", "x", 1, err, sizeof err) == -1);
    CHECK(contains(err, "dup.tmpl") && contains(err, "already defined in missing.tmpl"));
    /* err may be NULL */
    CHECK(tmpl_add(ts, "bad", "bad.tmpl", "{{#a}}", 6, NULL, 0) == -1);
    sb_init(&out);
    CHECK(tmpl_render(ts, "missing", c, &out, NULL, 0) == -1);
    /* a NULL set (tmpl_set_new out of memory) fails cleanly */
    CHECK(tmpl_add(NULL, "x", "x.tmpl", "x", 1, err, sizeof err) == -1);
    CHECK(contains(err, "out of memory"));
    CHECK(tmpl_render(NULL, "x", c, &out, err, sizeof err) == -1);
    CHECK(!tmpl_has(NULL, "x"));
    sb_free(&out);
    tmpl_set_free(ts);
    tv_free(c);
}

/* Allocation failures while building the context surface as render errors
   (simulated by the NULL a failed constructor returns, and by misuse). */
static void test_incomplete_context(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *l = tv_list(), *s = tv_str("s");
    ADD(ts, "list", "{{#l}}{{.}}{{/l}}");
    ADD(ts, "val", "{{k}}");
    ADD(ts, "other", "{{ok}}");

    tv_push(l, tv_str("a"));
    tv_push(l, NULL); /* e.g. tv_str failed */
    tv_set(c, "l", l);
    tv_set_str(c, "ok", "fine");
    EXPECT_ERR(ts, "list", c, "list.tmpl:1: ", "out of memory", NULL);
    tv_set(c, "k", NULL); /* e.g. tv_strf failed: the map is incomplete */
    EXPECT_ERR(ts, "val", c, "val.tmpl:1: ", "out of memory", NULL);
    EXPECT_ERR(ts, "other", c, "other.tmpl:1: ", "out of memory", NULL);
    tv_free(c);

    c = tv_map();
    tv_set(c, "s", s);
    tv_set_str(s, "x", "y"); /* tv_set on a string: item dropped, s marked */
    tv_push(c, tv_str("z"));  /* tv_push on a map: c marked */
    ADD(ts, "s", "{{s}}");
    EXPECT_ERR(ts, "s", c, "s.tmpl:1: ", "out of memory", NULL);
    CHECK(tv_str(NULL) == NULL);
    tv_free(c);
    tmpl_set_free(ts);
}

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void test_load_dir(void) {
    char dir[] = "/tmp/test_tmpl_XXXXXX", p[512], err[512];
    tmpl_set *ts;
    tv *c = tv_map();
    CHECK(mkdtemp(dir) != NULL);
    snprintf(p, sizeof p, "%s/driver", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/driver/params", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/top.tmpl", dir);
    CHECK(write_file(p, "top {{x}}\n{{>driver/module.c}}\n") == 0);
    snprintf(p, sizeof p, "%s/driver/module.c.tmpl", dir);
    CHECK(write_file(p, "module\n  {{>driver/params/scalar}}\n") == 0);
    snprintf(p, sizeof p, "%s/driver/params/scalar.tmpl", dir);
    CHECK(write_file(p, "scalar {{x}}\n") == 0);
    snprintf(p, sizeof p, "%s/driver/notes.txt", dir);
    CHECK(write_file(p, "{{#not a template\n") == 0);
    snprintf(p, sizeof p, "%s/driver/.hidden.tmpl", dir);
    CHECK(write_file(p, "{{#broken\n") == 0);

    tv_set_str(c, "x", "X");
    ts = tmpl_set_new();
    CHECK(tmpl_load_dir(ts, dir, err, sizeof err) == 0);
    CHECK(tmpl_has(ts, "top"));
    CHECK(tmpl_has(ts, "driver/module.c"));
    CHECK(tmpl_has(ts, "driver/params/scalar"));
    CHECK(!tmpl_has(ts, "driver/notes.txt") && !tmpl_has(ts, "driver/notes"));
    CHECK(!tmpl_has(ts, "driver/.hidden"));
    EXPECT(ts, "top", c, "top X\nmodule\n  scalar X\n");
    tmpl_set_free(ts);

    /* a syntax error names the file and line */
    snprintf(p, sizeof p, "%s/driver/params/bad.tmpl", dir);
    CHECK(write_file(p, "ok\n{{#open}}\n") == 0);
    ts = tmpl_set_new();
    CHECK(tmpl_load_dir(ts, dir, err, sizeof err) == -1);
    CHECK(contains(err, "driver/params/bad.tmpl:2: unclosed section"));
    tmpl_set_free(ts);
    ts = tmpl_set_new();
    snprintf(p, sizeof p, "%s/nonexistent", dir);
    CHECK(tmpl_load_dir(ts, p, err, sizeof err) == -1);
    CHECK(contains(err, "nonexistent") && contains(err, "cannot open directory"));
    tmpl_set_free(ts);

    unlink(p);
    snprintf(p, sizeof p, "%s/driver/params/bad.tmpl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/driver/params/scalar.tmpl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/driver/params", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/driver/module.c.tmpl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/driver/notes.txt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/driver/.hidden.tmpl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/driver", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/top.tmpl", dir);
    unlink(p);
    CHECK(rmdir(dir) == 0);
    tv_free(c);
}

/* ~3000 functions of ~30 keys each through per-item partials: the generator's
   largest output is about this size. */
static void test_speed(void) {
    tmpl_set *ts = tmpl_set_new();
    tv *c = tv_map(), *fns = tv_list();
    strbuf out;
    char err[512];
    clock_t t0;
    double ms;
    int i, k, r;
    for (i = 0; i < 3000; i++) {
        tv *f = tv_map(), *params = tv_list();
        for (k = 0; k < 28; k++)
            tv_set_strf(f, k == 0 ? "name" : k == 1 ? "ret" : "key", "cuFunction%d_%d", i, k);
        tv_set_strf(f, "k2", "k2");
        tv_set_bool(f, "deprecated", i % 7 == 0);
        for (k = 0; k < 8; k++) {
            tv *p = tv_map();
            tv_set_strf(p, "name", "param%d", k);
            tv_set_str(p, "type", "CUdeviceptr");
            tv_push(params, p);
        }
        tv_set(f, "params", params);
        tv_push(fns, f);
    }
    tv_set(c, "functions", fns);
    tv_set_str(c, "module", "driver");
    ADD(ts, "param", "{{type}} {{name}}{{^@last}}, {{/@last}}");
    ADD(ts, "fn", "static PyObject *\n"
                  "{{module}}_{{name}}(PyObject *self, PyObject *const *args)\n"
                  "{\n"
                  "    {{#deprecated}}\n"
                  "    if (warn_deprecated(\"{{name}}\") < 0) return NULL;\n"
                  "    {{/deprecated}}\n"
                  "    {{#params}}\n"
                  "    {{type}} {{name}}; /* {{@index}} of {{ret}} */\n"
                  "    {{/params}}\n"
                  "    CUresult r = {{name}}({{#params}}{{>param}}{{/params}});\n"
                  "    return check(r);\n"
                  "}\n\n");
    ADD(ts, "module", "/* generated */\n{{#functions}}\n{{>fn}}\n{{/functions}}\n");
    sb_init(&out);
    t0 = clock();
    r = tmpl_render(ts, "module", c, &out, err, sizeof err);
    ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
    CHECK(r == 0);
    CHECK(out.len > 2000000);
    printf("speed: rendered %zu bytes in %.1f ms\n", out.len, ms);
    CHECK(ms < 2000.0); /* generous: sanitizer builds run this too */
    sb_free(&out);
    tmpl_set_free(ts);
    tv_free(c);
}

int main(void) {
    test_strbuf();
    test_values();
    test_sections();
    test_standalone();
    test_partials();
    test_dynamic_partials();
    test_inline_partial_line_ending();
    test_parse_errors();
    test_render_errors();
    test_incomplete_context();
    test_load_dir();
    test_speed();
    printf("test_tmpl: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
