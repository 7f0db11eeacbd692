/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.h — bump allocator owning everything a cb_model points to.
 *
 * The generator is a command-line tool: allocation failure prints
 * "cubind: out of memory" and exits with status 1 (outputs are renamed into
 * place only after everything rendered, so nothing half-written remains).
 */
#ifndef CUBIND_ARENA_H
#define CUBIND_ARENA_H

#include <stddef.h>

typedef struct cb_arena cb_arena;

cb_arena *arena_create(void);
void arena_destroy(cb_arena *a);
void *arena_alloc(cb_arena *a, size_t n);            /* zeroed */
char *arena_strdup(cb_arena *a, const char *s);
char *arena_strndup(cb_arena *a, const char *s, size_t n);
/* Returns storage for at least n + 1 elements of `size` bytes holding the
 * n elements of `items` (the old storage stays in the arena until
 * arena_destroy). Slots past n are zeroed. */
void *arena_grow(cb_arena *a, void *items, size_t n, size_t *cap, size_t size);
/* Appends a zeroed element to the growable array `arr` (n used, cap
 * allocated) and evaluates to a pointer to it. */
#define ARENA_PUSH(a, arr, n, cap) \
    ((arr) = arena_grow((a), (arr), (n), &(cap), sizeof *(arr)), &(arr)[(n)++])
void arena_oom(void);

#endif
