/* SPDX-License-Identifier: Apache-2.0 */
/* doc_rst.c — see doc_rst.h. */
#include "render/doc_rst.h"

#include <ctype.h>
#include <string.h>

#include "model/arena.h"
#include "render/render_util.h"

static int is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Length of the identifier at p (0 when none). */
static size_t word_len(const char *p)
{
    size_t n = 0;
    while (is_word(p[n]))
        n++;
    return n;
}

/* The lead key of the block command `\cmd` (cmd of length n) that starts a
 * line ("" for one that leads nothing), NULL when the command is not a
 * block command. */
static const char *block_command(const char *cmd, size_t n)
{
    static const struct {
        const char *cmd, *lead;
    } map[] = {
        {"brief", ""},         {"details", ""},      {"param", "lead_param"},
        {"return", "lead_returns"}, {"returns", "lead_returns"}, {"note", "lead_note"},
        {"sa", "lead_see_also"},  {"deprecated", "lead_deprecated"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].cmd) == n && memcmp(map[i].cmd, cmd, n) == 0)
            return map[i].lead;
    return NULL;
}

static const char *const leads[] = {"lead_returns", "lead_note", "lead_see_also",
                                    "lead_deprecated", "lead_param"};

/* Appends a run of s[0..n) to runs: plain text (kind NULL) or the key of
 * its markup ("literal", "emphasis"). An empty plain run is skipped. */
static void add_run(tv *runs, const char *s, size_t n, const char *kind)
{
    if (!n && !kind)
        return;
    tv *r = tv_map();
    tv_set(r, "text", c_string_chars(s, n));
    tv_set_bool(r, "literal", kind && strcmp(kind, "literal") == 0);
    tv_set_bool(r, "emphasis", kind && strcmp(kind, "emphasis") == 0);
    tv_push(runs, r);
}

/* The runs of line s[0..end): inline markup split out of the text. */
static tv *line_runs(const char *s, const char *end)
{
    tv *runs = tv_list();
    const char *text = s;
    while (s < end) {
        if ((*s == '\\' || *s == '@') && s + 1 < end && strchr("peb", s[1]) && s + 2 < end &&
            s[2] == ' ') {
            /* the argument: up to a space or punctuation ("*dptr",
             * "ptr[i]"), a sentence's final '.' excluded */
            const char *w = s + 3;
            size_t n = 0;
            while (w + n < end && !strchr(" \t,;:()", w[n]))
                n++;
            while (n && w[n - 1] == '.')
                n--;
            add_run(runs, text, (size_t)(s - text), NULL);
            add_run(runs, w, n, s[1] == 'p' ? "literal" : "emphasis");
            s = text = w + n;
        } else if (s[0] == ':' && s + 1 < end && s[1] == ':' && is_word(s[2])) {
            size_t n = word_len(s + 2);
            add_run(runs, text, (size_t)(s - text), NULL);
            add_run(runs, s + 2, n, "literal");
            s = text = s + 2 + n;
        } else if (*s == '\\' && s + 1 < end && is_word(s[1])) {
            add_run(runs, text, (size_t)(s - text), NULL);
            s = text = s + 1 + word_len(s + 1); /* other markers: dropped */
        } else {
            s++;
        }
    }
    add_run(runs, text, (size_t)(s - text), NULL);
    return runs;
}

tv *doc_rst(const char *doc)
{
    tv *lines = tv_list();
    const char *p = doc;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *s = p, *end = p + len, *lead = "", *param = NULL;
        size_t param_len = 0;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (s < end && (*s == '\\' || *s == '@')) {
            size_t n = word_len(s + 1);
            const char *l = block_command(s + 1, n);
            if (l) {
                lead = l;
                s += 1 + n;
                while (s < end && *s == ' ')
                    s++;
                if (strcmp(l, "lead_param") == 0 && is_word(*s)) {
                    /* \param NAME - text */
                    param = s;
                    param_len = word_len(s);
                    s += param_len;
                    while (s < end && (*s == ' ' || *s == '-'))
                        s++;
                } else if (strcmp(l, "lead_param") == 0) {
                    lead = "";
                }
            } else if (n) {
                /* an alias of NVIDIA's own (\note_null_stream, \notefnerr)
                 * standing alone: its text is not in the header */
                const char *t = s + 1 + n;
                while (t < end && *t == ' ')
                    t++;
                if (t == end) {
                    p = eol ? eol + 1 : end;
                    continue;
                }
            }
        } else {
            s = p;
        }
        tv *line = tv_map();
        for (size_t i = 0; i < sizeof leads / sizeof *leads; i++)
            tv_set_bool(line, leads[i], strcmp(lead, leads[i]) == 0);
        tv_set(line, "param", c_string_chars(param ? param : "", param_len));
        tv_set(line, "runs", line_runs(s, end));
        tv_push(lines, line);
        p = eol ? eol + 1 : end;
    }
    if (!lines)
        arena_oom();
    return lines;
}
