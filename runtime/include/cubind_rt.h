/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUBIND_RT_CAPSULE_NAME "cubind._runtime._C_API"

/* Generated modules compare this (strcmp) with their own copy at import and
 * fail with ImportError naming both when they differ. Bump the version
 * number whenever the struct changes. */
#define CUBIND_RT_SIGNATURE                                                  \
    "cubind-rt 7: int load(const char**); void *lookup(const char*, int, int*); " \
    "const char *driver_path(void); void *cb_new(int, PyObject*, PyObject*, PyObject*, " \
    "PyObject*); void cb_discard(void*); void *cb_trampoline(int); " \
    "int cb_host_attach(void*, void*); void drain(void); atomic_int *pending_flag(void); " \
    "registry: int reg_register(int, uintptr_t, void*, void(*)(void*), entry*, entry**); " \
    "int reg_lookup(int, uintptr_t, entry**); int reg_unregister(int, uintptr_t); " \
    "int reg_unregister_entry(entry*); size_t reg_unregister_kind(int); " \
    "void reg_release(entry*); void *reg_meta(entry*); void *reg_meta_publish(entry*, void*); " \
    "int reg_keep_alive(entry*, void*, void(*)(void*, void*), void*); " \
    "int reg_add_dependency(entry*, entry*); int reg_keep_object(entry*, PyObject*); " \
    "void kernels_unloaded(void); atomic_ulong *kernel_epoch; " \
    "void cb_user_object(void*, uintptr_t); " \
    "PyObject *cb_node(PyObject*, PyObject*, uintptr_t); " \
    "int cb_node_retain(PyObject*, uintptr_t)" CUBIND_RT_SIGNATURE_FAULTS

/* Test builds (-DCUBIND_FAULT_INJECTION, rt_alloc.h) have one more entry,
 * and say so: a test build's module never imports a release runtime or the
 * other way round. */
#ifdef CUBIND_FAULT_INJECTION
#define CUBIND_RT_SIGNATURE_FAULTS "; test build: rt_alloc_faults *faults"
#else
#define CUBIND_RT_SIGNATURE_FAULTS ""
#endif

/* Kinds of Python callbacks (rt_callbacks.h). */
enum {
    CUBIND_CB_HOST = 1,     /* CUhostFn of cuLaunchHostFunc: fn(userData) */
    CUBIND_CB_STREAM = 2,   /* CUstreamCallback: fn(hStream, status, userData) */
    CUBIND_CB_DESTROY = 3,  /* CUhostFn of cuUserObjectCreate: destroy(ptr) */
    CUBIND_CB_NODE = 4      /* CUhostFn of a graph's host node: fn(userData),
                               userData a node payload's id (cb_node) */
};

/* A host node's Python callable (cb_node): the object a struct's function
 * field keeps. A PyCapsule of this name whose pointer is the struct below,
 * immutable once made; the payload it stands for is mapped in the registry
 * as CUBIND_REG_NODE_CALLBACK under `id` (never reused) while the capsule
 * lives, and the node's C userData is that id. */
#define CUBIND_NODE_CB_CAPSULE "cubind._runtime.node_callback"
typedef struct cubind_node_cb {
    uintptr_t id;              /* the registry key, handed to the driver as userData */
    struct _object *callable;  /* called with data on each run of the node */
    struct _object *data;      /* the userData object given (None for NULL) */
    uintptr_t c_data;          /* the userData value given (an address, 0) */
    struct rt_registry_entry *entry; /* the capsule's reference to its entry */
} cubind_node_cb;

/* Kinds of the shared handle registry (rt_registry.h;
 * runtime/process/README.md says who registers and unregisters each). Keys
 * are raw handle values. */
enum {
    CUBIND_REG_KERNEL_LAYOUT = 1,   /* CUfunction -> its parameter layout (meta,
                                       bind_packer.c); purged by kernels_unloaded */
    CUBIND_REG_KERNEL_LAYOUT_KERN = 2, /* CUkernel -> its parameter layout */
    CUBIND_REG_GRAPH = 3,           /* CUgraph: keep-alives of its nodes' arguments */
    CUBIND_REG_GRAPH_EXEC = 4,      /* CUgraphExec: depends on its graph */
    CUBIND_REG_GRAPH_NODE = 5,      /* CUgraphNode: keep-alives of set-params calls;
                                       owned by its graph */
    CUBIND_REG_USER_OBJECT = 6,     /* CUuserObject made with a Python destroy
                                       callable (or for a captured host function)
                                       -> its callback payload (meta) */
    CUBIND_REG_CALLBACK = 7,        /* a one-shot host function / stream callback
                                       payload, keyed by its address, in flight */
    /* PTX parameter types of loaded code (bind_kernel_code.h) */
    CUBIND_REG_CODE_MODULE = 8,     /* CUmodule -> its PTX's kernel types */
    CUBIND_REG_CODE_LIBRARY = 9,    /* CUlibrary -> same */
    CUBIND_REG_CODE_LINK = 10,      /* CUlinkState -> its PTX so far, its image */
    CUBIND_REG_CODE_IMAGE = 11,     /* a linked image's address -> its PTX's types */
    CUBIND_REG_NVRTC_PROGRAM = 12,  /* nvrtcProgram: keep-alives of the callback
                                       and payload nvrtcSetFlowCallback gave it */
    CUBIND_REG_CALLBACK_HANDLE = 13, /* CUlogsCallbackHandle, CUasyncCallbackHandle:
                                       keep-alives of the registered function
                                       and its data, until unregistered */
    CUBIND_REG_NODE_CALLBACK = 14   /* a host node's Python callable: its id ->
                                       its multi-shot payload (meta, owned),
                                       mapped while its cb_node capsule lives */
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
struct rt_registry_entry; /* rt_registry.h */

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
    /* Runs the current interpreter's deferred work (user-object
     * destructors, dropped keep-alives) on this thread (attached). */
    void (*drain)(void);
    /* The current interpreter's flag (caller attached), for its module
     * state: non-zero while deferred work waits on that interpreter's queue,
     * so a relaxed load decides whether to call drain(). Valid for the life
     * of the process; NULL with MemoryError. */
    _Atomic int *(*pending_flag)(void);

    /* The process-wide handle registry (rt_registry.h): the same contract,
     * one shared instance. Return codes are rt_registry's (0 or -errno);
     * -ENOMEM also when the registry itself could not be created. None of
     * these touches Python, except reg_keep_object. */
    int (*reg_register)(int kind, uintptr_t handle, void *meta, void (*meta_free)(void *),
                        struct rt_registry_entry *dep, struct rt_registry_entry **out);
    int (*reg_lookup)(int kind, uintptr_t handle, struct rt_registry_entry **out);
    int (*reg_unregister)(int kind, uintptr_t handle);
    int (*reg_unregister_entry)(struct rt_registry_entry *e);
    size_t (*reg_unregister_kind)(int kind);
    void (*reg_release)(struct rt_registry_entry *e);
    void *(*reg_meta)(struct rt_registry_entry *e);
    void *(*reg_meta_publish)(struct rt_registry_entry *e, void *candidate);
    int (*reg_keep_alive)(struct rt_registry_entry *e, void *item,
                          void (*release)(void *item, void *ctx), void *ctx);
    int (*reg_add_dependency)(struct rt_registry_entry *e, struct rt_registry_entry *dep);
    /* Keeps a strong reference to `obj` until `e` is destroyed (caller has
     * an attached thread state). The reference is dropped on the thread
     * that destroys e when that thread is attached to obj's interpreter;
     * from any other thread (a driver's, a detached one, another
     * interpreter's) it is queued on obj's interpreter's deferred queue,
     * never entering an interpreter there; leaked once that queue is
     * closed (its atexit step). 0 or -ENOMEM (obj not kept). */
    int (*reg_keep_object)(struct rt_registry_entry *e, struct _object *obj);
    /* After a successful module or library unload: bumps *kernel_epoch, then
     * unmaps every kernel layout. */
    void (*kernels_unloaded)(void);
    /* Layouts computed at an older epoch are stale (acquire load). */
    _Atomic unsigned long *kernel_epoch;
    /* After a successful cuUserObjectCreate given a payload of cb_new
     * (CUBIND_CB_DESTROY): registers the user object `object` as
     * CUBIND_REG_USER_OBJECT with the payload as its meta, before the handle
     * reaches Python. Never fails: when the entry cannot be made the payload
     * stays unregistered and its destructor still runs, exactly once. */
    void (*cb_user_object)(void *payload, uintptr_t object);
    /* A host node's Python callable (caller attached): a new
     * CUBIND_NODE_CB_CAPSULE capsule for callable, called with `data` each
     * time a graph runs a node whose function is cb_trampoline(
     * CUBIND_CB_NODE) and whose userData is the capsule's id, starting
     * this interpreter's runner first if needed; c_data is the C value the
     * caller's userData had. NULL with an exception (TypeError: not
     * callable; MemoryError; RuntimeError at shutdown). */
    struct _object *(*cb_node)(struct _object *callable, struct _object *data, uintptr_t c_data);
    /* After graph `graph` took node capsule `capsule` (the registry-retain
     * rules): a CUDA user object moved into the graph also holds the
     * callable, so the driver keeps it for the graph's executable graphs
     * and their launches in flight (caller attached). 0, or -1 with
     * RuntimeError. */
    int (*cb_node_retain)(struct _object *capsule, uintptr_t graph);
#ifdef CUBIND_FAULT_INJECTION
    /* The process's one allocation fault state (rt_alloc.h). */
    struct rt_alloc_faults *faults;
#endif
} cubind_rt_api;

#ifdef __cplusplus
}
#endif
#endif
