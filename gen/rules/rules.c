/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rules.c — reads a rules file (rules.h), the directive table
 * (rules_directives.def) and the API directives. Matching the rules to a
 * header is rules_bind.c's.
 *
 * Invariant: every loaded rule has a known directive and a number of
 * arguments within that directive's range (exactly one number for all but
 * `undo`, whose undo call takes one to six arguments, and `host-bytes`,
 * whose optional terms go up to the limit).
 */
#define _POSIX_C_SOURCE 200809L
#include "rules/rules.h"
#include "rules/define_enum.h"
#include "rules/rules_bind.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

#include "model/arena.h"

static const cb_directive_info directives[CB_NDIRECTIVES] = {
#define CB_DIRECTIVE(id, name, least, most, target, args, doc) \
    [CB_D_##id] = {name, least, most, target, args, doc},
#include "rules/rules_directives.def"
};

const cb_directive_info *rules_directive(cb_directive d)
{
    return &directives[d];
}

/* Each callback kind's word (callback_kinds.def), indexed by the enum. */
static const char *const callback_kind_words[CB_NCALLBACK_KINDS] = {
#define CALLBACK_KIND(id, word) [CB_CALLBACK_##id] = word,
#include "rules/callback_kinds.def"
};

int rules_callback_kind(const char *word)
{
    for (int k = 0; k < CB_NCALLBACK_KINDS; k++)
        if (strcmp(callback_kind_words[k], word) == 0)
            return k;
    return -1;
}

const char *rules_callback_kind_name(cb_callback_kind k)
{
    return callback_kind_words[k];
}

/* The directive named d, -1 when unknown. */
static int directive_index(const char *d)
{
    for (size_t i = 0; i < CB_NDIRECTIVES; i++)
        if (strcmp(directives[i].name, d) == 0)
            return (int)i;
    return -1;
}

/* Prints one group of directives: the API's (api 1) or the others. */
static void print_group(FILE *out, int api)
{
    for (size_t i = 0; i < CB_NDIRECTIVES; i++) {
        const cb_directive_info *d = &directives[i];
        if ((d->target == CB_ON_API) != api)
            continue;
        fprintf(out, "  %s%s%s\n        ", d->name, *d->args ? " " : "", d->args);
        for (const char *c = d->doc; *c; c++) {
            if (*c == '\n')
                fputs("\n        ", out);
            else
                fputc(*c, out);
        }
        fputc('\n', out);
    }
}

void rules_print_directives(FILE *out)
{
    fputs("Special cases:\n", out);
    print_group(out, 0);
    fputs("\nWhat the API is (one of each per rules file; the driver's values where "
          "absent):\n", out);
    print_group(out, 1);
}

int rules_parts_value(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (!n || s[n] || n > 3 || *s == '0')
        return -1;
    int v = atoi(s);
    return v <= CB_PARTS_MAX ? v : -1;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        arena_oom();
    return p;
}

static int parse_line(cb_rules *r, char *line, unsigned lineno, size_t *cap, char *err, size_t errlen)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *words[CB_RULE_MAX_ARGS + 1];
    size_t n = 0;
    /* text_at: the word that is the rest of the line (param-doc's TEXT),
     * known once the directive is; 0 while none is. */
    size_t text_at = 0;
    for (char *p = line;;) {
        p += strspn(p, " \t\r\n");
        if (*p == '\0')
            break;
        if (n == sizeof words / sizeof *words) {
            snprintf(err, errlen, "%s:%u: too many words", r->path, lineno);
            return -1;
        }
        words[n] = p;
        if (n > 0 && n == text_at) {
            size_t len = strlen(p);
            while (len > 0 && strchr(" \t\r\n", p[len - 1]))
                p[--len] = '\0';
            n++;
            break;
        }
        p += strcspn(p, " \t\r\n");
        if (*p != '\0')
            *p++ = '\0';
        if (n++ == 0 && directive_index(words[0]) == CB_D_PARAM_DOC)
            text_at = directives[CB_D_PARAM_DOC].most; /* TEXT, its last argument */
    }
    if (n == 0)
        return 0;
    int d = directive_index(words[0]);
    if (d < 0) {
        snprintf(err, errlen, "%s:%u: unknown directive '%s'", r->path, lineno, words[0]);
        return -1;
    }
    size_t least = directives[d].least, most = directives[d].most;
    if (n - 1 < least || n - 1 > most) {
        if (least == most)
            snprintf(err, errlen, "%s:%u: '%s' takes %zu argument(s), got %zu", r->path, lineno,
                     words[0], least, n - 1);
        else
            snprintf(err, errlen, "%s:%u: '%s' takes %zu to %zu arguments, got %zu", r->path,
                     lineno, words[0], least, most, n - 1);
        return -1;
    }
    if (d == CB_D_KERNEL_CODE && strcmp(words[2], "before") != 0 &&
        strcmp(words[2], "after") != 0) {
        snprintf(err, errlen, "%s:%u: 'kernel-code' takes 'before' or 'after', not '%s'",
                 r->path, lineno, words[2]);
        return -1;
    }
    if (d == CB_D_CALLBACK && rules_callback_kind(words[4]) < 0) {
        strbuf kinds = {0};
        sb_put_alternatives(&kinds, callback_kind_words, CB_NCALLBACK_KINDS, "'");
        snprintf(err, errlen, "%s:%u: 'callback' takes %s, not '%s'", r->path, lineno,
                 kinds.data ? kinds.data : "a kind of callback_kinds.def", words[4]);
        sb_free(&kinds);
        return -1;
    }
    if (d == CB_D_PARTS && rules_parts_value(words[1]) < 0) {
        snprintf(err, errlen, "%s:%u: 'parts' takes a number of translation units from 1 to %d, not '%s'",
                 r->path, lineno, CB_PARTS_MAX, words[1]);
        return -1;
    }
    if (d == CB_D_DEFINE_ENUM && define_enum_check(r->path, lineno, words + 1, n - 1, err, errlen) < 0)
        return -1;
    if (r->nrules == *cap) {
        *cap = *cap ? *cap * 2 : 32;
        cb_rule *grown = realloc(r->rules, *cap * sizeof *grown);
        if (!grown)
            arena_oom();
        r->rules = grown;
    }
    cb_rule *rule = &r->rules[r->nrules++];
    memset(rule, 0, sizeof *rule);
    rule->directive = (cb_directive)d;
    rule->nargs = n - 1;
    for (size_t i = 1; i < n; i++)
        rule->args[i - 1] = xstrdup(words[i]);
    rule->line = lineno;
    return 0;
}

cb_rules *rules_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s:0: cannot open the rules file", path);
        return NULL;
    }
    cb_rules *r = calloc(1, sizeof *r);
    if (!r)
        arena_oom();
    r->path = xstrdup(path);
    size_t cap = 0;
    char buf[1024];
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        lineno++;
        if (!strchr(buf, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line too long", path, lineno);
            rc = -1;
            break;
        }
        rc = parse_line(r, buf, lineno, &cap, err, errlen);
    }
    fclose(f);
    if (rc) {
        rules_free(r);
        return NULL;
    }
    return r;
}

void rules_free(cb_rules *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nrules; i++) {
        for (size_t a = 0; a < r->rules[i].nargs; a++)
            free(r->rules[i].args[a]);
    }
    free(r->rules);
    free(r->path);
    free(r);
}

int rules_api_has_detail(const cb_api *api)
{
    return api->detail_field && api->result_record &&
           strcmp(api->detail_record, api->result_record) == 0;
}

void rules_api(const cb_rules *r, cb_api *api)
{
    memset(api, 0, sizeof *api);
    api->dropin = "driver";
    api->raising = "cu";
    api->result = "CUresult";
    api->success = "CUDA_SUCCESS";
    api->error_class = "CUDAError";
    api->capi_sentinel = "CUDA_ERROR_NOT_FOUND";
    api->parts = 1;
    api->name_prefix = "";
    for (size_t i = 0; i < r->nrules; i++) {
        const cb_rule *rule = &r->rules[i];
        const char *a0 = rule->args[0];
        switch (rule->directive) {
        case CB_D_MODULE:
            api->dropin = strcmp(a0, "-") == 0 ? NULL : a0;
            api->raising = strcmp(rule->args[1], "-") == 0 ? NULL : rule->args[1];
            break;
        case CB_D_RESULT:
            api->result = a0;
            api->success = rule->args[1];
            break;
        case CB_D_RESULT_FIELD:
            api->result_record = a0;
            api->result_field = rule->args[1];
            break;
        case CB_D_RESULT_DETAIL:
            api->detail_record = a0;
            api->detail_field = rule->args[1];
            api->detail_attr = rule->args[2];
            break;
        case CB_D_ERROR_CLASS:
            api->error_class = a0;
            break;
        case CB_D_ERROR_BASE:
            api->error_base = a0;
            break;
        case CB_D_ERROR_STRING:
            api->error_string = a0;
            break;
        case CB_D_ERROR_STRING_INLINE:
            api->error_string_inline = a0;
            break;
        case CB_D_LIBRARY:
            api->is_library = 1;
            if (api->nlibs < CB_API_MAX_LIBS)
                api->libs[api->nlibs++] = a0;
            break;
        case CB_D_LIBRARY_ENV:
            api->env = a0;
            break;
        case CB_D_LIBRARY_BUNDLED:
            api->bundled = a0;
            break;
        case CB_D_LIBRARY_WHEEL:
            if (api->nwheels < CB_API_MAX_LIBS)
                api->wheels[api->nwheels++] = a0;
            break;
        case CB_D_BIND_HEADER:
            if (api->nbind_headers < CB_API_MAX_LIBS)
                api->bind_headers[api->nbind_headers++] = a0;
            break;
        case CB_D_LIBRARY_TOOLKIT_DIR:
            if (api->ntoolkit_dirs < CB_API_MAX_LIBS)
                api->toolkit_dirs[api->ntoolkit_dirs++] = a0;
            break;
        case CB_D_CAPI_SENTINEL:
            api->capi_sentinel = a0;
            break;
        case CB_D_SIZEOF:
            api->sizeof_name = a0;
            break;
        case CB_D_PARTS:
            api->parts = rules_parts_value(a0); /* checked by parse_line */
            break;
        case CB_D_INT_HANDLES:
            api->int_handles = 1;
            break;
        case CB_D_STR_RESULTS:
            api->str_results = 1;
            break;
        case CB_D_NEGATIVE_ERRORS:
            api->negative_errors = 1;
            break;
        case CB_D_STATUS_STR:
            api->status_str = 1;
            break;
        case CB_D_STATUS_STR_MESSAGE:
            api->status_str_message = 1;
            break;
        case CB_D_MESSAGE_STR:
            api->message_str = 1;
            break;
        case CB_D_BUFFERS_NOT_NONE:
            api->buffers_not_none = 1;
            break;
        case CB_D_VOID_PTR_NUMBERS:
            api->void_ptr_numbers = 1;
            break;
        case CB_D_STRING_ADDRESSES:
            api->string_addresses = 1;
            break;
        case CB_D_STRUCT_ADDRESSES:
            api->struct_addresses = 1;
            break;
        case CB_D_ENUM_ARGS_INT:
            api->enum_args_int = 1;
            break;
        case CB_D_PYTHON_WORD:
            if (api->nwords < CB_API_MAX_LIBS)
                api->words[api->nwords++] = a0;
            break;
        case CB_D_FIELD_UNDERSCORE:
            if (api->nunderscored < CB_API_MAX_LIBS)
                api->underscored[api->nunderscored++] = a0;
            break;
        case CB_D_ENUM_PREFIX:
            api->enum_prefix = a0;
            break;
        case CB_D_CHARS_LENGTH:
            api->chars_length = strtoll(a0, NULL, 10);
            break;
        case CB_D_COUNT_QUERY:
            api->count_query = a0;
            break;
        case CB_D_COUNT_STEM:
            api->count_stem = 1;
            break;
        case CB_D_ARRAY_LENGTHS:
            api->array_lengths = 1;
            break;
        case CB_D_ERROR_SUBCLASSES:
            api->error_subclasses = 1;
            break;
        case CB_D_STRUCT_VERSION:
            api->version_field = a0;
            api->version_shift = atoi(rule->args[1]);
            break;
        case CB_D_PYTHON_NAMES:
            api->name_prefix = a0;
            api->snake = strcmp(rule->args[1], "snake") == 0;
            break;
        default: /* not an API directive; `header` is configure's */
            break;
        }
    }
}

/* name without the API's prefix, in snake_case when the API says so
 * (nvJitLinkGetLinkedLTOIRSize -> get_linked_ltoir_size): an underscore
 * before a capital that follows a lower-case letter or digit, or that
 * ends a run of capitals before a lower-case letter. */
/* Python's keywords (keyword.kwlist of 3.13). A C name cannot be most of
 * them, but a header may use any of the others: `from`, `in`, `lambda`. */
static const char *const python_keywords[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break",
    "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
    "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield",
};

static int is_python_keyword(const char *name)
{
    for (size_t i = 0; i < sizeof python_keywords / sizeof *python_keywords; i++)
        if (strcmp(python_keywords[i], name) == 0)
            return 1;
    return 0;
}

/* The malloc'ed name s with `_` appended (s reallocated); returns it. */
static char *underscored(char *s)
{
    size_t n = strlen(s);
    char *r = realloc(s, n + 2);
    if (!r)
        arena_oom();
    r[n] = '_';
    r[n + 1] = '\0';
    return r;
}

/* Appends `_` to the malloc'ed name s when it is a keyword; returns it. */
static char *unkeyword(char *s)
{
    return is_python_keyword(s) ? underscored(s) : s;
}

char *rules_python_identifier(const char *name)
{
    char *s = strdup(name);
    if (!s)
        arena_oom();
    return unkeyword(s);
}

char *rules_snake_field_name(const cb_api *api, const char *pyname)
{
    if (!api->snake)
        return NULL;
    cb_api plain = *api;
    plain.name_prefix = ""; /* a field keeps any prefix the API strips */
    char *snake = rules_python_name(&plain, pyname);
    for (size_t i = 0; i < api->nunderscored; i++)
        if (strcmp(snake, api->underscored[i]) == 0)
            return underscored(snake);
    return snake;
}

char *rules_type_pyname(const cb_api *api, const char *name)
{
    size_t np = strlen(api->name_prefix), n = strlen(name);
    if (!api->snake || !np || n <= np || strncasecmp(name, api->name_prefix, np) != 0)
        return NULL;
    name += np;
    n -= np;
    if (n > 2 && strcmp(name + n - 2, "_t") == 0)
        n -= 2;
    char *s = strndup(name, n);
    if (!s)
        arena_oom();
    return s;
}

char *rules_enum_pyname(const cb_api *api, const char *name)
{
    char *snake = rules_type_pyname(api, name);
    if (snake)
        return snake;
    size_t np = strlen(api->name_prefix);
    return xstrdup(np && strncmp(name, api->name_prefix, np) == 0 && name[np] ? name + np : name);
}

/* The length of the python-word rule's word that s starts with, 0 when
 * none does (the longest when several do). */
static size_t python_word_at(const cb_api *api, const char *s)
{
    size_t best = 0;
    for (size_t k = 0; k < api->nwords; k++) {
        size_t n = strlen(api->words[k]);
        if (n > best && strncmp(s, api->words[k], n) == 0)
            best = n;
    }
    return best;
}

char *rules_python_name(const cb_api *api, const char *name)
{
    size_t np = strlen(api->name_prefix);
    if (np && strncmp(name, api->name_prefix, np) == 0 && name[np])
        name += np;
    strbuf sb = {0};
    if (!api->snake)
        sb_puts(&sb, name);
    for (size_t i = 0; api->snake && name[i]; i++) {
        size_t w = python_word_at(api, name + i);
        if (w) {
            /* a python-word rule's word: one lower-case word */
            if (i && name[i - 1] != '_')
                sb_putc(&sb, '_');
            for (size_t k = 0; k < w; k++)
                sb_putc(&sb, (char)tolower((unsigned char)name[i + k]));
            i += w - 1;
            continue;
        }
        unsigned char c = (unsigned char)name[i], prev = i ? (unsigned char)name[i - 1] : 0,
                      next = (unsigned char)name[i + 1];
        if (i && isupper(c) &&
            (islower(prev) || isdigit(prev) || (isupper(prev) && next && islower(next))))
            sb_putc(&sb, '_');
        sb_putc(&sb, (char)tolower(c));
    }
    if (sb.oom || !sb.data)
        arena_oom();
    return unkeyword(sb.data); /* malloc'ed */
}
