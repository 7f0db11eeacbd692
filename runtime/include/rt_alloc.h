/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_alloc.h — the runtime's plain C allocations (malloc, calloc, realloc,
 * aligned_alloc, free), with a test-only fault-injection mode.
 *
 * Every block the runtime takes from the C heap (registry entries, buckets,
 * keep-alives and dependencies, kernel layouts, the layout query's scratch)
 * comes from rt_malloc/rt_calloc/rt_realloc/rt_aligned_alloc and goes back
 * through rt_free. Blocks from CPython's allocators (PyMem_*, PyObject_*)
 * are not these: _testcapi.set_nomemory fails those.
 *
 * Release builds (no CUBIND_FAULT_INJECTION): each name is the C library
 * function itself (an object-like macro), so calls and function pointers
 * (`rt_free` as a registry meta_free) are exactly the plain ones.
 *
 * Test builds (-DCUBIND_FAULT_INJECTION; tests/fuzz/build_asan.py only):
 *   - allocations are numbered from 0 in the order they start, counted
 *     from the last rt_alloc_arm(); those numbered in [start, stop) return
 *     NULL without calling the allocator (stop 0: no end); start < 0 is
 *     disarmed (the default);
 *   - `live` is the number of blocks allocated and not yet freed through
 *     rt_free (rt_free(NULL) and a failed allocation change nothing), so a
 *     sweep can check the runtime leaked nothing;
 *   - there is one state per process: it lives in cubind._runtime (defined
 *     in rt_module.c), every other extension reaches it through the capsule
 *     (cubind_rt_api.faults, set by cbs_import_runtime) before its first
 *     allocation; `rt_alloc_state` is each shared object's hidden pointer
 *     to it, NULL before import (then nothing fails and nothing is
 *     counted);
 *   - every field is atomic: allocations happen on any thread, without the
 *     GIL. Python sets it with cubind._runtime._fail_allocations(start,
 *     stop) and reads it with _alloc_counts() (both exist only in these
 *     builds).
 */
#ifndef RT_ALLOC_H
#define RT_ALLOC_H

#include <stdlib.h>

#ifndef CUBIND_FAULT_INJECTION

#define rt_malloc malloc
#define rt_calloc calloc
#define rt_realloc realloc
#define rt_aligned_alloc aligned_alloc
#define rt_free free

#else

#include <stdatomic.h>

typedef struct rt_alloc_faults {
    _Atomic long long next;   /* the number the next allocation gets */
    _Atomic long long start;  /* first number that fails; < 0: none */
    _Atomic long long stop;   /* first number past them; 0: no end */
    _Atomic long long live;   /* blocks allocated, not yet freed */
    _Atomic long long failed; /* allocations failed since the last arm */
} rt_alloc_faults;

extern rt_alloc_faults *rt_alloc_state;

/* Starts numbering allocations at 0 again; [start, stop) will fail. */
static inline void rt_alloc_arm(rt_alloc_faults *f, long long start, long long stop)
{
    atomic_store(&f->start, -1);
    atomic_store(&f->next, 0);
    atomic_store(&f->failed, 0);
    atomic_store(&f->stop, stop);
    atomic_store(&f->start, start);
}

/* Non-zero when the allocation starting now must fail. */
static inline int rt_alloc_fails_now(void)
{
    rt_alloc_faults *f = rt_alloc_state;
    if (!f)
        return 0;
    long long start = atomic_load(&f->start);
    if (start < 0)
        return 0;
    long long n = atomic_fetch_add(&f->next, 1), stop = atomic_load(&f->stop);
    if (n < start || (stop != 0 && n >= stop))
        return 0;
    atomic_fetch_add(&f->failed, 1);
    return 1;
}

static inline void *rt_alloc_counted(void *p)
{
    if (p && rt_alloc_state)
        atomic_fetch_add(&rt_alloc_state->live, 1);
    return p;
}

static inline void *rt_malloc(size_t n)
{
    return rt_alloc_fails_now() ? NULL : rt_alloc_counted(malloc(n));
}

static inline void *rt_calloc(size_t n, size_t size)
{
    return rt_alloc_fails_now() ? NULL : rt_alloc_counted(calloc(n, size));
}

static inline void *rt_aligned_alloc(size_t align, size_t n)
{
    return rt_alloc_fails_now() ? NULL : rt_alloc_counted(aligned_alloc(align, n));
}

/* Like realloc: on failure p is untouched and still the caller's. */
static inline void *rt_realloc(void *p, size_t n)
{
    if (rt_alloc_fails_now())
        return NULL;
    void *q = realloc(p, n);
    return p ? q : rt_alloc_counted(q);
}

static inline void rt_free(void *p)
{
    if (p && rt_alloc_state)
        atomic_fetch_sub(&rt_alloc_state->live, 1);
    free(p);
}

#endif /* CUBIND_FAULT_INJECTION */
#endif
