/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_tmpl.c — libFuzzer target for the template engine (gen/tmpl/tmpl.c).
 *
 * The input is split at NUL bytes into up to four templates, "main", "a",
 * "b" and "c" (so partials of fuzzed text include each other, recursively
 * too); each is added with tmpl_add, and "main" and "a" are rendered with a
 * fixed small context holding every kind of value. Any outcome is fine
 * except a crash, a sanitizer report or a leak; an error must come with a
 * message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "tmpl/tmpl.h"

static tv *context(void)
{
    tv *ctx = tv_map();
    tv_set_str(ctx, "name", "cuInit");
    tv_set_int(ctx, "n", -42);
    tv_set_bool(ctx, "yes", 1);
    tv_set_bool(ctx, "no", 0);
    tv_set_str(ctx, "empty", "");
    tv_set_str(ctx, "which", "b"); /* names a partial: {{>*which}} */
    tv *items = tv_list();
    for (int i = 0; i < 3; i++) {
        tv *m = tv_map();
        tv_set_strf(m, "name", "item%d", i);
        tv_set_int(m, "i", i);
        tv *inner = tv_list();
        tv_push(inner, tv_str("x"));
        tv_push(inner, tv_int(i));
        tv_set(m, "inner", inner);
        tv_push(items, m);
    }
    tv_set(ctx, "items", items);
    tv_set(ctx, "none", tv_list());
    tv *sub = tv_map();
    tv_set_str(sub, "name", "sub");
    tv *subsub = tv_map();
    tv_set_int(subsub, "deep", 7);
    tv_set(sub, "m", subsub);
    tv_set(ctx, "m", sub);
    tv *strs = tv_list();
    tv_push(strs, tv_str("s0"));
    tv_push(strs, tv_str("s1"));
    tv_set(ctx, "strs", strs);
    return ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"main", "a", "b", "c"};
    tmpl_set *ts = tmpl_set_new();
    if (!ts)
        return 0;
    char err[256];
    size_t start = 0;
    for (int t = 0; t < 4 && start <= size; t++) {
        size_t end = start;
        while (end < size && data[end] != 0)
            end++;
        /* An exact-size copy: the engine must not read past len. */
        char *text = malloc(end - start + 1);
        if (!text)
            break;
        memcpy(text, data + start, end - start);
        err[0] = 0;
        if (tmpl_add(ts, names[t], names[t], text, end - start, err, sizeof err) < 0 && !err[0])
            abort(); /* an error without a message */
        free(text);
        start = end + 1;
    }
    tv *ctx = context();
    for (int t = 0; t < 2; t++) {
        if (!tmpl_has(ts, names[t]))
            continue;
        strbuf out;
        memset(&out, 0, sizeof out);
        err[0] = 0;
        if (tmpl_render(ts, names[t], ctx, &out, err, sizeof err) < 0 && !err[0])
            abort();
        sb_free(&out);
    }
    tv_free(ctx);
    tmpl_set_free(ts);
    return 0;
}
