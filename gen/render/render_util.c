/* SPDX-License-Identifier: Apache-2.0 */
/* render_util.c — literal spellings (render_util.h). */
#include "render/render_util.h"

#include <limits.h>
#include <string.h>

#include "util/strbuf.h"

tv *ll_literal(long long v)
{
    if (v == LLONG_MIN)
        return tv_str("(-9223372036854775807LL - 1)");
    return tv_strf("%lldLL", v);
}

/* Appends s[0..n) escaped for a C string literal; with split, each line
 * ending but a final one also ends the literal's source line: "a\nb"
 * gives "a\n", a line break, then "b" indented by four spaces. */
static void escape_into(strbuf *sb, const char *s, size_t n, int split)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    for (; p < end; p++) {
        switch (*p) {
        case '"': sb_puts(sb, "\\\""); break;
        case '\\': sb_puts(sb, "\\\\"); break;
        case '\n': sb_puts(sb, split && p + 1 < end ? "\\n\"\n    \"" : "\\n"); break;
        case '\t': sb_puts(sb, "\\t"); break;
        case '?': sb_puts(sb, "\\?"); break; /* no trigraphs */
        default:
            if (*p < 0x20 || *p >= 0x7f)
                sb_printf(sb, "\\%03o", *p);
            else
                sb_putc(sb, *p);
        }
    }
}

static tv *take(strbuf *sb)
{
    tv *r = sb->oom ? NULL : tv_str(sb->data ? sb->data : "");
    sb_free(sb);
    return r;
}

tv *c_string_literal(const char *s)
{
    strbuf sb = {0};
    sb_putc(&sb, '"');
    escape_into(&sb, s, strlen(s), 1);
    sb_putc(&sb, '"');
    return take(&sb);
}

tv *c_string_chars(const char *s, size_t n)
{
    strbuf sb = {0};
    escape_into(&sb, s, n, 0);
    return take(&sb);
}
