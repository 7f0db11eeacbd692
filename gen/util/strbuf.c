/* SPDX-License-Identifier: Apache-2.0 */
/* strbuf: a growable byte buffer (see strbuf.h). */
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(strbuf *sb) {
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
}

void sb_free(strbuf *sb) {
    free(sb->data);
    sb_init(sb);
}

/* Makes room for n more bytes plus the terminating NUL. */
static int sb_grow(strbuf *sb, size_t n) {
    size_t need, cap;
    char *p;
    if (sb->oom)
        return -1;
    if (n >= (size_t)-1 - sb->len) {
        sb->oom = 1;
        return -1;
    }
    need = sb->len + n + 1;
    if (need <= sb->cap)
        return 0;
    cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap > (size_t)-1 / 2 ? need : cap * 2;
    p = realloc(sb->data, cap);
    if (!p) {
        sb->oom = 1;
        return -1;
    }
    sb->data = p;
    sb->cap = cap;
    return 0;
}

int sb_append(strbuf *sb, const char *s, size_t n) {
    if (sb_grow(sb, n) != 0)
        return -1;
    if (n)
        memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

int sb_puts(strbuf *sb, const char *s) {
    return sb_append(sb, s, strlen(s));
}

int sb_put_alternatives(strbuf *sb, const char *const *words, size_t n, const char *quote) {
    for (size_t i = 0; i < n; i++)
        sb_printf(sb, "%s%s%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", quote, words[i], quote);
    return sb->oom ? -1 : 0;
}

int sb_putc(strbuf *sb, int c) {
    char ch = (char)c;
    return sb_append(sb, &ch, 1);
}

int sb_vprintf(strbuf *sb, const char *fmt, va_list ap) {
    va_list ap2;
    int n;
    if (sb_grow(sb, 0) != 0)
        return -1;
    va_copy(ap2, ap);
    n = vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        sb->data[sb->len] = '\0';
        sb->oom = 1;
        return -1;
    }
    if ((size_t)n >= sb->cap - sb->len) {
        if (sb_grow(sb, (size_t)n) != 0) {
            sb->data[sb->len] = '\0';
            return -1;
        }
        va_copy(ap2, ap);
        n = vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap2);
        va_end(ap2);
        if (n < 0) {
            sb->data[sb->len] = '\0';
            sb->oom = 1;
            return -1;
        }
    }
    sb->len += (size_t)n;
    return 0;
}

int sb_printf(strbuf *sb, const char *fmt, ...) {
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = sb_vprintf(sb, fmt, ap);
    va_end(ap);
    return r;
}
