/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strbuf: a growable byte buffer.
 *
 * Invariants: len <= cap; when data is not NULL, data[len] == '\0' (so data
 * is a C string whenever it holds no NUL bytes of its own); data is NULL only
 * while nothing has been appended.  A zero-initialised strbuf is a valid
 * empty buffer, so `strbuf sb = {0};` and sb_init(&sb) are equivalent.
 *
 * Errors are sticky: when an allocation fails (or vsnprintf reports an
 * error) the buffer sets oom, keeps what it had, and every later append is a
 * no-op returning -1.  Callers may ignore the return values and check
 * sb->oom once at the end.  sb_free releases the memory and clears oom.
 */
#ifndef CUBIND_STRBUF_H
#define CUBIND_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define SB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SB_PRINTF(f, a)
#endif

typedef struct {
    char *data;
    size_t len, cap;
    int oom;
} strbuf;

void sb_init(strbuf *sb);
void sb_free(strbuf *sb);
/* Each returns 0, or -1 when the buffer is (or just became) oom. */
int sb_append(strbuf *sb, const char *s, size_t n);
int sb_puts(strbuf *sb, const char *s);
int sb_putc(strbuf *sb, int c);
int sb_printf(strbuf *sb, const char *fmt, ...) SB_PRINTF(2, 3);
int sb_vprintf(strbuf *sb, const char *fmt, va_list ap) SB_PRINTF(2, 0);
/* The n words as alternatives for an error message, each between quote
 * marks: "'a', 'b' or 'c'" (quote "'"), "a or b" (quote ""). */
int sb_put_alternatives(strbuf *sb, const char *const *words, size_t n, const char *quote);

#endif
