/* SPDX-License-Identifier: Apache-2.0 */
/* doc_rst.c — see doc_rst.h. */
#include "doc_rst.h"

#include <ctype.h>
#include <string.h>

#include "arena.h"
#include "strbuf.h"

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

/* The replacement of the block command `\cmd` (cmd of length n) that starts
 * a line, NULL when the command is not a block command. */
static const char *block_command(const char *cmd, size_t n)
{
    static const struct {
        const char *cmd, *text;
    } map[] = {
        {"brief", ""},     {"details", ""},     {"param", ""},  {"return", "Returns: "},
        {"returns", "Returns: "}, {"note", "Note: "}, {"sa", "See also: "},
        {"deprecated", "Deprecated: "},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].cmd) == n && memcmp(map[i].cmd, cmd, n) == 0)
            return map[i].text;
    return NULL;
}

char *doc_rst(const char *doc)
{
    strbuf sb = {0};
    const char *p = doc;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *s = p, *end = p + len;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (s < end && (*s == '\\' || *s == '@')) {
            size_t n = word_len(s + 1);
            const char *text = block_command(s + 1, n);
            if (text) {
                int is_param = n == 5 && memcmp(s + 1, "param", 5) == 0;
                sb_puts(&sb, text);
                s += 1 + n;
                while (s < end && *s == ' ')
                    s++;
                if (is_param && is_word(*s)) {
                    /* \param NAME - text: "NAME: text" */
                    size_t w = word_len(s);
                    sb_printf(&sb, "%.*s: ", (int)w, s);
                    s += w;
                    while (s < end && (*s == ' ' || *s == '-'))
                        s++;
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
        /* inline markup */
        while (s < end) {
            if ((*s == '\\' || *s == '@') && s + 1 < end && strchr("peb", s[1]) &&
                s + 2 < end && s[2] == ' ') {
                /* the argument: up to a space or punctuation ("*dptr",
                 * "ptr[i]"), a sentence's final '.' excluded */
                const char *w = s + 3;
                size_t n = 0;
                while (w + n < end && !strchr(" \t,;:()", w[n]))
                    n++;
                while (n && w[n - 1] == '.')
                    n--;
                sb_printf(&sb, "%s%.*s%s", s[1] == 'p' ? "``" : "*", (int)n, w,
                          s[1] == 'p' ? "``" : "*");
                s = w + n;
            } else if (s[0] == ':' && s + 1 < end && s[1] == ':' && is_word(s[2])) {
                size_t n = word_len(s + 2);
                sb_printf(&sb, "``%.*s``", (int)n, s + 2);
                s += 2 + n;
            } else if (*s == '\\' && s + 1 < end && is_word(s[1])) {
                s += 1 + word_len(s + 1); /* other markers: dropped */
            } else {
                sb_putc(&sb, *s++);
            }
        }
        sb_putc(&sb, '\n');
        p = eol ? eol + 1 : end;
    }
    if (sb.oom)
        arena_oom();
    if (!sb.data)
        sb_puts(&sb, "");
    return sb.data;
}
