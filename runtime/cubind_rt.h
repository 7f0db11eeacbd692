/*
 * cubind_rt.h — the capsule API of the shared runtime: the contract between
 * the `cubind._runtime` extension (which owns the one copy per process of
 * the driver loader) and every generated module (which only consumes it).
 *
 * A consumer does, at import (its exec slot):
 *
 *     const cubind_rt_api *rt =
 *         PyCapsule_Import(CUBIND_RT_CAPSULE_NAME, 0);
 *     if (rt == NULL) return -1;
 *     if (strcmp(rt->signature, CUBIND_RT_SIGNATURE) != 0 ||
 *         rt->size < sizeof(cubind_rt_api))
 *         -> ImportError naming both signature strings
 *
 * Invariants of the table:
 *   - it is a `static const` object inside `cubind._runtime`; the pointer is
 *     valid for the life of the process (the extension is never unloaded
 *     while a consumer that imported it is alive, and the driver behind it
 *     is never dlclose'd);
 *   - no entry touches Python or needs the GIL: they may be called with the
 *     GIL released, from any thread, including CUDA callback threads;
 *   - CUBIND_RT_SIGNATURE changes (its version number is bumped) whenever
 *     the struct or the meaning of an entry changes; the check is strict
 *     equality. `size` is a second guard: a consumer never reads past it.
 *
 * This header does not include cuda.h (consumers include it themselves);
 * the CUDA constants the runtime uses are mirrored below as plain integers.
 */
#ifndef CUBIND_RT_H
#define CUBIND_RT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUBIND_RT_CAPSULE_NAME "cubind._runtime._C_API"

/* Generated modules compare this (strcmp) with their own copy at import and
 * fail with ImportError naming both when they differ. Bump the version
 * number whenever the struct changes. */
#define CUBIND_RT_SIGNATURE                                                  \
    "cubind-rt 2: int load(const char**); void *lookup(const char*, int, int*); " \
    "const char *driver_path(void); void *cb_new(int, PyObject*, PyObject*, PyObject*, " \
    "PyObject*); void cb_discard(void*); void *cb_trampoline(int); " \
    "int cb_host_attach(void*, void*); void drain(void); atomic_int *pending"

/* Kinds of Python callbacks (rt_callbacks.h). */
enum {
    CUBIND_CB_HOST = 1,     /* CUhostFn of cuLaunchHostFunc: fn(userData) */
    CUBIND_CB_STREAM = 2,   /* CUstreamCallback: fn(hStream, status, userData) */
    CUBIND_CB_DESTROY = 3   /* CUhostFn of cuUserObjectCreate: destroy(ptr) */
};

/* `*status` values of lookup(). */
enum {
    CUBIND_LOOKUP_OK = 0,
    CUBIND_LOOKUP_NO_DRIVER = 1,               /* load() failed */
    CUBIND_LOOKUP_NOT_FOUND = 2,               /* unknown to this driver, or
                                                  newer than it */
    CUBIND_LOOKUP_VERSION_NOT_SUFFICIENT = 3   /* exists, but only in an ABI
                                                  newer than `version` */
};

/* Mirror of CUdriverProcAddress_flags (cuda.h, CUDA >= 11.3). */
#define CUBIND_CU_GET_PROC_ADDRESS_DEFAULT 0ULL
#define CUBIND_CU_GET_PROC_ADDRESS_LEGACY_STREAM 1ULL                /* 1 << 0 */
#define CUBIND_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ULL    /* 1 << 1 */

/* Mirror of CUdriverProcAddressQueryResult (cuda.h, CUDA >= 12.0). */
#define CUBIND_CU_GET_PROC_ADDRESS_SUCCESS 0
#define CUBIND_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1
#define CUBIND_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT 2

struct _object; /* PyObject, without needing Python.h here */

typedef struct cubind_rt_api {
    const char *signature;   /* == CUBIND_RT_SIGNATURE */
    size_t size;             /* sizeof(cubind_rt_api) */

    /* Loads the driver once per process (thread-safe; later calls return the
     * first result). 0 on success; -1 and *why = a static, human-readable
     * description of every path tried and the dlerror() of each. `why` may
     * be NULL. Never touches Python. */
    int (*load)(const char **why);

    /* Resolves one driver entry point through
     * cuGetProcAddress_v2(name, &pfn, version, flags, &status) (falls back
     * to the 4-argument cuGetProcAddress of 11.x drivers when _v2 is
     * absent). `name` is the base name ("cuCtxCreate"), `version` the ABI
     * version of the variant wanted (from cudaTypedefs.h, e.g. 3020).
     * flags = PER_THREAD_DEFAULT_STREAM when the environment variable
     * CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM held a non-zero integer at
     * load time, else LEGACY_STREAM. Returns the pointer, or NULL with
     * *status set (NO_DRIVER, NOT_FOUND, VERSION_NOT_SUFFICIENT); `status`
     * may be NULL. Loads the driver first if needed. Thread-safe, never
     * touches Python; callers cache the result themselves. */
    void *(*lookup)(const char *name, int version, int *status);

    /* The path the driver was loaded from (after load succeeded), or NULL
     * (not loaded yet, or load failed). Static storage. */
    const char *(*driver_path)(void);

    /* Python callables as CUDA callbacks (rt_callbacks.h). Each takes and
     * returns what its rt_cb_* counterpart does; PyObject is declared as an
     * opaque struct here so this header needs no Python.h. */
    void *(*cb_new)(int kind, struct _object *callable, struct _object *data,
                    struct _object *stream_type, struct _object *result_type);
    void (*cb_discard)(void *payload);
    void *(*cb_trampoline)(int kind);
    int (*cb_host_attach)(void *stream, void *payload);
    /* Runs deferred work (user-object destructors) on a Python thread. */
    void (*drain)(void);
    /* Non-zero while deferred work waits: a relaxed load is enough to decide
     * whether to call drain(). */
    _Atomic int *pending;
} cubind_rt_api;

#ifdef __cplusplus
}
#endif
#endif
