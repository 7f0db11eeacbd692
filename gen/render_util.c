/* SPDX-License-Identifier: Apache-2.0 */
/* render_util.c — literal spellings (render_util.h). */
#include "render_util.h"

#include <limits.h>

#include "strbuf.h"

tv *ll_literal(long long v)
{
    if (v == LLONG_MIN)
        return tv_str("(-9223372036854775807LL - 1)");
    return tv_strf("%lldLL", v);
}

tv *c_string_literal(const char *s)
{
    strbuf sb = {0};
    sb_putc(&sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': sb_puts(&sb, "\\\""); break;
        case '\\': sb_puts(&sb, "\\\\"); break;
        case '\n': sb_puts(&sb, p[1] ? "\\n\"\n    \"" : "\\n"); break;
        case '\t': sb_puts(&sb, "\\t"); break;
        case '?': sb_puts(&sb, "\\?"); break; /* no trigraphs */
        default:
            if (*p < 0x20 || *p >= 0x7f)
                sb_printf(&sb, "\\%03o", *p);
            else
                sb_putc(&sb, *p);
        }
    }
    sb_putc(&sb, '"');
    tv *r = sb.oom ? NULL : tv_str(sb.data);
    sb_free(&sb);
    return r;
}
