/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_loader.c — process-wide loading of the CUDA driver.
 *
 * Publication: the whole of `rt_drv` is written by rt_load_once, which runs
 * exactly once per process under pthread_once (concurrent first callers
 * block until it is done), and is never written again. Its last act is a
 * release store of the outcome into the atomic `rt_state`; readers
 * acquire-load `rt_state` and read rt_drv only when it is non-zero. So rt_drv
 * is immutable whenever it is read, there is no check-then-act lazy global,
 * and the function pointers in it need no atomics of their own. (The
 * acquire load is the fast path; pthread_once is the slow path and is itself
 * a barrier, so either route orders the reads after the writes.)
 *
 * The environment is read (getenv) only inside the once routine; like any
 * getenv, that races with a concurrent setenv in another thread, which is
 * the caller's to avoid.
 *
 * The driver is never dlclose'd, not even on failure after a successful
 * dlopen: generated modules cache entry points for the process lifetime and
 * may call them from CUDA's own threads during interpreter finalization.
 */
#define _GNU_SOURCE 1 /* dlinfo, RTLD_DI_LINKMAP (1: as pyconfig.h of 3.10 defines it) */
#include "rt_loader.h"
#include "cubind_rt.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"

/* cuGetProcAddress_v2 (CUDA >= 12.0) and the 4-argument cuGetProcAddress of
 * 11.3+ drivers. CUresult and CUdriverProcAddressQueryResult are C enums
 * (int-sized); cuuint64_t is uint64_t. */
typedef int (*rt_gpa_v2_fn)(const char *symbol, void **pfn, int cudaVersion,
                            uint64_t flags, int *symbolStatus);
typedef int (*rt_gpa_v1_fn)(const char *symbol, void **pfn, int cudaVersion,
                            uint64_t flags);

_Static_assert(sizeof(void *) == sizeof(rt_gpa_v2_fn) &&
                   sizeof(void *) == sizeof(rt_gpa_v1_fn),
               "dlsym results must fit the function pointers");

#define RT_WHY_CAP 4096
#define RT_PATH_CAP 4096

/* Invariants (after the once barrier):
 *   ok == 1: exactly one of gpa_v2 / gpa_v1 is non-NULL (gpa_v2 preferred),
 *            path holds the loaded file's path, why is "";
 *   ok == 0: both are NULL, path is "", why says what was tried and why each
 *            attempt failed.
 * flags is the cuGetProcAddress flags value, fixed at load. */
static struct {
    int ok;
    rt_gpa_v2_fn gpa_v2;
    rt_gpa_v1_fn gpa_v1;
    uint64_t flags;
    char path[RT_PATH_CAP];
    char why[RT_WHY_CAP];
} rt_drv;

enum { RT_UNLOADED = 0, RT_LOADED = 1, RT_FAILED = 2 };
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static _Atomic int rt_state = RT_UNLOADED; /* set once, release, by
                                              rt_load_once */

/* 1 when s is a non-zero decimal integer that fits a long, 0 when it is
 * zero, -1 when it is not an integer or out of range: what strtol(s, &end,
 * 10) accepts (leading white space, a sign, digits), then trailing blanks.
 * Spelled out because glibc >= 2.38 binds strtol, under _GNU_SOURCE, to
 * __isoc23_strtol@GLIBC_2.38, which would raise the glibc the wheels need
 * (glibc_pins.h). */
static int rt_decimal_nonzero(const char *s)
{
    unsigned long long v = 0, limit = LONG_MAX;
    int neg;

    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    if (neg)
        limit += 1; /* LONG_MIN's magnitude */
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return *s != '\0' ? -1 : v != 0;
}

/* A non-zero integer (surrounding blanks allowed) selects per-thread default
 * stream; anything else, unset or unparsable, selects legacy stream. */
static uint64_t rt_stream_flags_from_env(void)
{
    const char *s = getenv(CUBIND_RT_ENV_PTDS);

    if (s == NULL || rt_decimal_nonzero(s) != 1)
        return CUBIND_CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    return CUBIND_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
}

/* Sets rt_drv.why; an over-long message is truncated (still a C string). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void rt_set_why(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(rt_drv.why, sizeof rt_drv.why, fmt, ap);
    va_end(ap);
}

static const char *rt_dlerror(void)
{
    const char *e = dlerror();
    return e != NULL ? e : "unknown dlerror";
}

/* dlopen's error for FILE without the "FILE: " glibc puts first, so a
 * message that names FILE itself does not name it twice. */
static const char *rt_dlopen_error(const char *file)
{
    const char *e = rt_dlerror();
    size_t n = strlen(file);

    if (strncmp(e, file, n) == 0 && e[n] == ':' && e[n + 1] == ' ')
        return e + n + 2;
    return e;
}

static void rt_load(void)
{
    const char *override = getenv(CUBIND_RT_ENV_LIBCUDA);
    const char *file;
    void *h, *sym;
    struct link_map *lm = NULL;

    /* An empty CUBIND_LIBCUDA counts as unset (dlopen("") would return the
     * main program). A non-empty one is the only path tried: a wrong
     * override must fail loudly, never fall back to the system driver. */
    if (override != NULL && override[0] == '\0')
        override = NULL;
    file = override != NULL ? override : CUBIND_RT_DEFAULT_LIBCUDA;

    (void)dlerror(); /* clear any stale error of this thread */
    h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        if (override != NULL)
            rt_set_why("could not load the CUDA driver from %s=%s (%s); "
                       "it must name the NVIDIA driver's libcuda.so.1, or be "
                       "unset to use the system's",
                       CUBIND_RT_ENV_LIBCUDA, override, rt_dlopen_error(file));
        else
            rt_set_why("could not load the CUDA driver %s (%s); install the "
                       "NVIDIA driver, or set %s to the path of its "
                       "libcuda.so.1",
                       file, rt_dlopen_error(file), CUBIND_RT_ENV_LIBCUDA);
        return;
    }

    /* The path actually opened (the search result for a bare soname). */
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
        lm->l_name != NULL && lm->l_name[0] != '\0')
        snprintf(rt_drv.path, sizeof rt_drv.path, "%s", lm->l_name);
    else
        snprintf(rt_drv.path, sizeof rt_drv.path, "%s", file);

    /* dlsym returns void *; converting it to a function pointer is what
     * POSIX requires to work. Done through memcpy to stay clear of ISO C's
     * object-to-function pointer conversion warning. */
    (void)dlerror();
    sym = dlsym(h, "cuGetProcAddress_v2");
    if (sym != NULL) {
        memcpy(&rt_drv.gpa_v2, &sym, sizeof sym);
    } else {
        sym = dlsym(h, "cuGetProcAddress");
        if (sym != NULL)
            memcpy(&rt_drv.gpa_v1, &sym, sizeof sym);
    }
    if (sym == NULL) {
        rt_set_why("could not load the CUDA driver: %s%s%s (%s): it exports "
                   "neither cuGetProcAddress_v2 nor cuGetProcAddress (%s); "
                   "a driver of CUDA 11.3 or newer is required",
                   override != NULL ? CUBIND_RT_ENV_LIBCUDA : "",
                   override != NULL ? "=" : "", file, rt_drv.path,
                   rt_dlerror());
        rt_drv.path[0] = '\0';
        return; /* h stays open on purpose: see the header comment */
    }

    rt_drv.flags = rt_stream_flags_from_env();
    rt_drv.ok = 1;
}

static void rt_load_once(void)
{
    rt_load();
    atomic_store_explicit(&rt_state, rt_drv.ok ? RT_LOADED : RT_FAILED,
                          memory_order_release);
}

int cubind_rt_load(const char **why)
{
    int st = atomic_load_explicit(&rt_state, memory_order_acquire);

    if (st == RT_UNLOADED) {
        pthread_once(&rt_once, rt_load_once);
        st = atomic_load_explicit(&rt_state, memory_order_acquire);
    }
    if (st == RT_LOADED)
        return 0;
    if (why != NULL)
        *why = rt_drv.why;
    return -1;
}

void *cubind_rt_lookup(const char *name, int version, int *status)
{
    int dummy, r, qres = -1;
    void *pfn = NULL;

    if (status == NULL)
        status = &dummy;
    if (cubind_rt_load(NULL) != 0) {
        *status = CUBIND_LOOKUP_NO_DRIVER;
        return NULL;
    }
    if (name == NULL) {
        *status = CUBIND_LOOKUP_NOT_FOUND;
        return NULL;
    }
    if (rt_drv.gpa_v2 != NULL) {
        r = rt_drv.gpa_v2(name, &pfn, version, rt_drv.flags, &qres);
        if (r == 0 && pfn != NULL &&
            qres == CUBIND_CU_GET_PROC_ADDRESS_SUCCESS) {
            *status = CUBIND_LOOKUP_OK;
            return pfn;
        }
        /* The driver reports VERSION_NOT_SUFFICIENT together with a
         * non-success CUresult (CUDA_ERROR_NOT_FOUND); every other failure,
         * including a version above the driver's (CUDA_ERROR_INVALID_VALUE),
         * means "this driver does not have it". */
        *status = qres == CUBIND_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      ? CUBIND_LOOKUP_VERSION_NOT_SUFFICIENT
                      : CUBIND_LOOKUP_NOT_FOUND;
        return NULL;
    }
    /* 11.x driver: no query result, so "not found" covers both cases. */
    r = rt_drv.gpa_v1(name, &pfn, version, rt_drv.flags);
    if (r == 0 && pfn != NULL) {
        *status = CUBIND_LOOKUP_OK;
        return pfn;
    }
    *status = CUBIND_LOOKUP_NOT_FOUND;
    return NULL;
}

const char *cubind_rt_driver_path(void)
{
    /* Does not load (a diagnostic has no side effect): NULL until a load
     * has succeeded. */
    return atomic_load_explicit(&rt_state, memory_order_acquire) == RT_LOADED
               ? rt_drv.path
               : NULL;
}

unsigned long long cubind_rt_lookup_flags(void)
{
    return cubind_rt_load(NULL) == 0 ? (unsigned long long)rt_drv.flags : 0;
}

int cubind_rt_proc_address_abi(void)
{
    if (cubind_rt_load(NULL) != 0)
        return 0;
    return rt_drv.gpa_v2 != NULL ? 2 : 1;
}
