/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.c — the model's allocator: bump allocation in large blocks, all
 * freed at once by model_free().
 *
 * Invariant: every block in the chain was malloc'ed by arena_alloc and is
 * freed exactly once, by arena_destroy. Allocations are zeroed and aligned
 * to max_align_t.
 */
#include "model/arena.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cb_block {
    struct cb_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

struct cb_arena {
    struct cb_block *head;
};

enum { ARENA_BLOCK = 1 << 20 };

cb_arena *arena_create(void)
{
    cb_arena *a = calloc(1, sizeof *a);
    if (!a)
        arena_oom();
    return a;
}

void arena_destroy(cb_arena *a)
{
    if (!a)
        return;
    struct cb_block *b = a->head;
    while (b) {
        struct cb_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

void arena_oom(void)
{
    fputs("cubind: out of memory\n", stderr);
    exit(1);
}

void *arena_alloc(cb_arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) / align * align;
    if (n == 0)
        n = align;
    struct cb_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (!b)
            arena_oom();
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(cb_arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(cb_arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

void *arena_grow(cb_arena *a, void *items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *grown = arena_alloc(a, ncap * size);
    if (n)
        memcpy(grown, items, n * size);
    *cap = ncap;
    return grown;
}
