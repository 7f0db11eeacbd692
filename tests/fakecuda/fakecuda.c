/* SPDX-License-Identifier: Apache-2.0 */
/* fakecuda.c — a TEST-ONLY fake of the CUDA driver (libcuda.so.1).
 *
 * This is a test double for CI machines without a GPU, loaded by the cubind
 * bindings through CUBIND_LIBCUDA=/path/to/libcuda.so.1. It implements a small
 * subset of the driver API on the host (device memory is malloc'd host
 * memory, kernels never run but vectorAdd and scaleArray, for examples/), records what it
 * is given, and is inspected and
 * driven through the fakecuda_* control API (fakecuda_control.h). It is not,
 * and does not pretend to be, a CUDA implementation; it never ships.
 *
 * Only cuGetProcAddress, cuGetProcAddress_v2 and the fakecuda_* functions are
 * exported: every other entry point is a static function reachable only
 * through cuGetProcAddress (by base name and ABI version, like the driver).
 *
 * Locking: one global mutex G protects all state; user callbacks, host
 * functions and user-object destructors run on the fake's own threads with G
 * released. Threads: one lazily created worker per stream (the NULL stream of
 * each context has its own) and one deferred-destructor thread.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h> /* cuProfilerStart/Stop (no GL/EGL types needed) */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda_control.h"

/* cuda.h maps cuGetProcAddress to cuGetProcAddress_v2; this library exports
 * both ABI symbols, the old one with its 4-argument prototype. */
#undef cuGetProcAddress
#define FK_EXPORT __attribute__((visibility("default")))
FK_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

#define FK_NDEV 2
#define FK_DRIVER_VERSION 13000
#define FK_TOTAL_MEM (80ull << 30)
#define FK_PRIO_GREATEST (-5)
#define FK_STACK_MAX 64
#define FK_NB 4096u
#define FK_MAGIC 0xFACEC0DAu
/* A compute capability NVRTC accepts (sm_90), so user code that compiles
 * for the device's architecture works on the fake. */
#define FK_CC_MAJOR 9
#define FK_CC_MINOR 0

/* ------------------------------------------------------------------ */
/* Base names of the implemented functions (without the "cu" prefix). */

#define FK_NAMES(X)                                                            \
    X(GetProcAddress) X(Init) X(DriverGetVersion) X(DeviceGet)                 \
    X(DeviceGetCount) X(DeviceGetName) X(DeviceGetUuid) X(DeviceTotalMem)      \
    X(DeviceGetAttribute) X(DevicePrimaryCtxRetain) X(DevicePrimaryCtxRelease) \
    X(DevicePrimaryCtxReset) X(DevicePrimaryCtxGetState)                       \
    X(DevicePrimaryCtxSetFlags) X(CtxCreate) X(CtxDestroy) X(CtxGetCurrent)    \
    X(CtxSetCurrent) X(CtxPushCurrent) X(CtxPopCurrent) X(CtxGetDevice)        \
    X(CtxSynchronize) X(CtxGetApiVersion) X(CtxGetStreamPriorityRange)         \
    X(StreamCreate) X(StreamCreateWithPriority) X(StreamDestroy)               \
    X(StreamQuery) X(StreamIsCapturing) X(StreamSynchronize) X(StreamGetFlags) X(StreamGetPriority) \
    X(StreamGetCtx) X(StreamWaitEvent) X(StreamAddCallback) X(LaunchHostFunc)  \
    X(EventCreate) X(EventRecord) X(EventQuery) X(EventSynchronize)            \
    X(EventDestroy) X(EventElapsedTime) X(MemAlloc) X(MemFree) X(MemcpyHtoD)   \
    X(MemcpyDtoH) X(MemcpyDtoD) X(MemcpyHtoDAsync) X(MemcpyDtoHAsync)          \
    X(MemcpyDtoDAsync) X(MemsetD8) X(MemsetD32) X(MemAllocHost) X(MemFreeHost) \
    X(MemGetInfo) X(PointerGetAttribute) X(GetErrorName) X(GetErrorString)     \
    X(UserObjectCreate) X(UserObjectRetain) X(UserObjectRelease)               \
    X(GraphCreate) X(GraphDestroy) X(GraphRetainUserObject)                    \
    X(GraphReleaseUserObject) X(ModuleLoadData) X(ModuleLoadDataEx)            \
    X(ModuleLoadFatBinary)                                                     \
    X(ModuleUnload) X(ModuleGetFunction) X(LibraryLoadData) X(LibraryUnload)   \
    X(LibraryGetKernel) X(KernelGetFunction) X(LibraryGetModule) X(FuncGetParamInfo)               \
    X(FuncGetAttribute) X(LaunchKernel) X(LaunchKernelEx)                      \
    X(LaunchCooperativeKernel) X(StreamGetCaptureInfo) X(LogsDumpToMemory)    \
    X(MemRangeGetAttribute) X(MemRangeGetAttributes) X(CoredumpGetAttribute)   \
    X(CoredumpGetAttributeGlobal) X(CoredumpSetAttribute)                      \
    X(CoredumpSetAttributeGlobal) X(DevSmResourceSplitByCount)                      \
    X(KernelGetParamInfo) X(GraphAddKernelNode)                                \
    X(GraphKernelNodeSetParams) X(GraphExecKernelNodeSetParams) X(GraphAddNode) \
    X(GraphClone) X(GraphInstantiateWithFlags) X(GraphLaunch) X(GraphExecDestroy) \
    X(GraphExecUpdate)                                                         \
    X(LaunchCooperativeKernelMultiDevice) X(OccupancyMaxPotentialBlockSize)    \
    X(OccupancyMaxPotentialBlockSizeWithFlags) X(GraphAddExternalSemaphoresSignalNode) \
    X(FuncGetName) X(KernelGetName) X(FuncGetModule) X(KernelGetLibrary)       \
    X(LinkCreate) X(LinkAddData) X(LinkAddFile) X(LinkComplete) X(LinkDestroy) \
    X(ModuleLoad) X(LibraryLoadFromFile)                                           \
    X(Memcpy2D) X(Memcpy2DUnaligned) X(Memcpy3D) X(GraphGetNodes) X(GraphGetRootNodes) \
    X(GraphGetEdges) X(ModuleGetFunctionCount) X(ModuleEnumerateFunctions)    \
    X(LibraryGetKernelCount) X(LibraryEnumerateKernels)                        \
    X(PointerGetAttributes) X(ProfilerStart) X(ProfilerStop) X(GraphAddHostNode)     \
    X(GraphHostNodeSetParams) X(StreamBeginCapture) X(StreamEndCapture)       \
    X(GraphExecHostNodeSetParams) X(LogsRegisterCallback) X(LogsUnregisterCallback)    \
    X(DeviceRegisterAsyncNotification) X(DeviceUnregisterAsyncNotification)

enum {
#define FK_ENUM(n) FN_##n,
    FK_NAMES(FK_ENUM)
#undef FK_ENUM
    FN__COUNT
};

static const char *const fn_names[FN__COUNT] = {
#define FK_STR(n) "cu" #n,
    FK_NAMES(FK_STR)
#undef FK_STR
};

static int fn_index(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < FN__COUNT; i++)
        if (strcmp(fn_names[i], name) == 0)
            return i;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Global state. */

static pthread_mutex_t G = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_progress = PTHREAD_COND_INITIALIZER; /* any progress */
#define LOCK() pthread_mutex_lock(&G)
#define UNLOCK() pthread_mutex_unlock(&G)

static atomic_int g_inited;
static atomic_llong g_calls[FN__COUNT];
static atomic_int g_variant[FN__COUNT];
static atomic_int g_nfaults;
static struct { int result, nth, every; } g_fault[FN__COUNT]; /* under G */
static int g_driver_version = FK_DRIVER_VERSION;              /* under G */
static uint64_t g_epoch = 1;                                   /* under G */
static uint64_t g_next_id = 1;                                 /* under G */
static int g_shutdown;                                         /* under G */
static int g_threads_alive;                                    /* under G */
static long long g_pending_cb, g_pending_d;                    /* under G */
static unsigned long long g_used[FK_NDEV];                     /* under G */

/* Thread-local: current-context stack and the kind of thread. */
struct tls_ent {
    struct ctx *c;
    uint64_t id;
};
static _Thread_local struct tls_ent t_stack[FK_STACK_MAX];
static _Thread_local int t_depth;
static _Thread_local uint64_t t_epoch;
static _Thread_local int t_kind; /* 0 user, 1 stream worker, 2 destructor */

/* ------------------------------------------------------------------ */
/* Call counting and fault injection. */

static CUresult fk_enter(int fn, int ver)
{
    atomic_fetch_add(&g_calls[fn], 1);
    if (ver)
        atomic_store(&g_variant[fn], ver);
    if (!atomic_load(&g_nfaults))
        return CUDA_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    LOCK();
    if (g_fault[fn].result) {
        if (g_fault[fn].every) {
            r = (CUresult)g_fault[fn].result;
        } else if (--g_fault[fn].nth <= 0) {
            r = (CUresult)g_fault[fn].result;
            g_fault[fn].result = 0;
            atomic_fetch_sub(&g_nfaults, 1);
        }
    }
    UNLOCK();
    return r;
}

#define ENTERV(n, v)                                                           \
    do {                                                                       \
        CUresult e_ = fk_enter(FN_##n, (v));                                   \
        if (e_ != CUDA_SUCCESS)                                                \
            return e_;                                                         \
    } while (0)
#define ENTER(n) ENTERV(n, 0)
/* Counted, fault-checked, and cuInit(0) required. */
#define ENTERI_V(n, v)                                                         \
    do {                                                                       \
        ENTERV(n, v);                                                          \
        if (!atomic_load(&g_inited))                                           \
            return CUDA_ERROR_NOT_INITIALIZED;                                 \
    } while (0)
#define ENTERI(n) ENTERI_V(n, 0)

/* ------------------------------------------------------------------ */
/* Handle registry: a hash set of live objects, keyed by handle address (or,
 * for allocations, by base address). Handles given by the caller are looked
 * up here before being dereferenced, so stale or garbage handles are
 * detected; ids (never reused) tell a new object at a recycled address from
 * the old one. */

enum { K_NONE, K_CTX, K_STREAM, K_EVENT, K_DMEM, K_HMEM, K_MODULE, K_FUNC,
       K_LIBRARY, K_KERNEL, K_UOBJ, K_GRAPH, K_GNODE, K_GEXEC, K_LINK, K_LIBMODULE,
       K_CBREG, K__N };

struct ctx;
struct obj {
    uint32_t magic;
    int kind;
    uintptr_t key;
    uint64_t id;
    struct ctx *owner;
    struct obj *hnext;
};

static struct obj *g_tab[FK_NB];
static long long g_nkind[K__N];

static size_t hsh(uintptr_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 40) & (FK_NB - 1);
}

static void reg_add(struct obj *o, int kind, uintptr_t key, struct ctx *owner)
{
    o->magic = FK_MAGIC;
    o->kind = kind;
    o->key = key ? key : (uintptr_t)o;
    o->id = g_next_id++;
    o->owner = owner;
    size_t b = hsh(o->key);
    o->hnext = g_tab[b];
    g_tab[b] = o;
    g_nkind[kind]++;
}

static struct obj *reg_find(uintptr_t key, int kind)
{
    if (!key)
        return NULL;
    for (struct obj *o = g_tab[hsh(key)]; o; o = o->hnext)
        if (o->key == key && o->kind == kind && o->magic == FK_MAGIC)
            return o;
    return NULL;
}

static void reg_del(struct obj *o)
{
    struct obj **pp = &g_tab[hsh(o->key)];
    while (*pp && *pp != o)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = o->hnext;
        g_nkind[o->kind]--;
    }
    o->magic = 0;
    o->hnext = NULL;
}

/* Snapshot of the live objects matching a predicate (caller frees). */
static struct obj **reg_collect(int kind, struct ctx *owner, int any_owner, size_t *n)
{
    size_t cap = 16, k = 0;
    struct obj **v = malloc(cap * sizeof *v);
    for (size_t b = 0; v && b < FK_NB; b++)
        for (struct obj *o = g_tab[b]; o; o = o->hnext) {
            if ((kind && o->kind != kind) || (!any_owner && o->owner != owner))
                continue;
            if (k == cap) {
                struct obj **nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv)
                    break;
                v = nv;
                cap *= 2;
            }
            v[k++] = o;
        }
    *n = v ? k : 0;
    return v;
}

/* ------------------------------------------------------------------ */
/* Object types. */

struct stream;
struct ctx {
    struct obj h;
    int dev;
    unsigned flags;
    int primary;
    int refcount; /* primary only */
    struct stream *nullstream;
};

enum { W_HOSTFN, W_CALLBACK, W_RECORD, W_WAIT, W_COPY, W_KERNEL, W_UNREF };
struct mem;
struct work {
    struct work *next;
    int type;
    CUhostFn fn;
    CUstreamCallback cb;
    CUstream uh;
    void *ud;
    struct obj *ev;
    uint64_t evid, gen;
    void *dst;
    const void *src;
    size_t n;
    struct mem *m1, *m2;
    const struct fk_kernel *kern; /* W_KERNEL: the kernel the fake runs */
    unsigned char kargs[32];      /* W_KERNEL: its packed parameters */
    unsigned long long threads;   /* W_KERNEL: threads the grid has */
    struct gref *refs;            /* W_UNREF: user-object references a graph
                                     launch held, released when it is done */
    size_t nrefs;
};

struct fk_kernel {
    const char *name;
    int nparams;
    const size_t *off, *sz;
    size_t len; /* bytes of its packed parameters */
    void (*run)(const unsigned char *bytes, unsigned long long threads); /* under G */
};

struct graph;
struct stream {
    struct obj h;
    struct ctx *ctx;
    struct graph *capture; /* the graph being captured into, or NULL (under G) */
    unsigned flags;
    int prio;
    int is_null;
    pthread_cond_t cv_work, cv_idle;
    struct work *head, *tail;
    int busy, stop, started, exited, refs;
    pthread_t thr;
};

struct event {
    struct obj h;
    unsigned flags;
    uint64_t req_gen, done_gen;
    double t_ms;
};

struct mem {
    struct obj h;
    size_t size;
    int dev;
    int pending; /* async copies queued that touch it */
};

struct func {
    struct obj h;
    char *name;
    struct module *mod; /* cuFuncGetModule's answer (a kernel's: its library's module) */
    struct func *sib;
    int nparams; /* -1: no layout of its own */
    size_t *off, *sz;
};

struct module {
    struct obj h;
    struct func *funcs;
};

struct kernel {
    struct obj h;
    char *name;
    struct library *lib;
    struct kernel *sib;
    struct func *fn;
};

/* A library's module (K_LIBMODULE, owned by its library): what
 * cuLibraryGetModule returns and cuFuncGetModule answers for the functions of
 * the library's kernels; it holds those functions (cuKernelGetFunction and
 * cuModuleGetFunction on it give the same one for a name), as the real
 * driver's per-context module of a library does. Not a live handle of its
 * own, and cuModuleUnload refuses it. */
struct library {
    struct obj h;
    struct kernel *kernels;
    struct module mod;
};

/* A link state: cuLinkComplete's image is a fixed text naming the state
 * (the fake never links), owned by the state. */
struct link {
    struct obj h;
    char image[64];
};

struct uobj {
    struct obj h;
    void *ptr;
    CUhostFn destroy;
    unsigned refs;
};

struct gref {
    struct uobj *u;
    uint64_t id;
    unsigned n;
};
/* A kernel node's copy of what it launches (the driver copies the
 * argument bytes when the node is added or set). */
struct kcap {
    char *name;           /* NULL for a host node */
    CUhostFn fn;          /* a host node's function and its user data */
    void *ud;
    unsigned dims[7];
    unsigned char *bytes;
    size_t len;
    int mode;
};
struct gnode {            /* K_GNODE: owned by its graph */
    struct obj h;
    struct kcap k;
};
struct graph {
    struct obj h;
    struct gref *r;
    size_t n, cap;
    struct gnode **nodes;
    size_t nn;
};
struct xnode {
    uintptr_t node;       /* the graph node it was instantiated from */
    struct kcap k;
};
struct gexec {            /* K_GEXEC */
    struct obj h;
    struct xnode *x;
    size_t n;
    struct gref *r;       /* its graph's user-object references, as the
                             driver's executable graphs hold them */
    size_t nr;
};

static struct ctx *g_primary[FK_NDEV];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *fk_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ------------------------------------------------------------------ */
/* Contexts and the per-thread current-context stack (all under G). */

static void ensure_primaries(void)
{
    for (int d = 0; d < FK_NDEV; d++)
        if (!g_primary[d]) {
            struct ctx *c = calloc(1, sizeof *c);
            if (!c)
                abort();
            c->dev = d;
            c->primary = 1;
            reg_add(&c->h, K_CTX, 0, NULL);
            g_primary[d] = c;
        }
}

static void tls_sync(void)
{
    if (t_epoch != g_epoch) {
        t_depth = 0;
        t_epoch = g_epoch;
    }
}

static struct ctx *ctx_lookup(CUcontext h)
{
    struct ctx *c = (struct ctx *)reg_find((uintptr_t)h, K_CTX);
    if (c && c->primary && c->refcount == 0)
        return NULL; /* inactive primary context */
    return c;
}

static struct ctx *cur_ctx(CUresult *err)
{
    tls_sync();
    if (t_depth == 0) {
        *err = CUDA_ERROR_INVALID_CONTEXT;
        return NULL;
    }
    struct tls_ent e = t_stack[t_depth - 1];
    struct ctx *c = (struct ctx *)reg_find((uintptr_t)e.c, K_CTX);
    if (!c || c->h.id != e.id || (c->primary && c->refcount == 0)) {
        *err = CUDA_ERROR_CONTEXT_IS_DESTROYED;
        return NULL;
    }
    *err = CUDA_SUCCESS;
    return c;
}

static int valid_ctx_flags(unsigned f)
{
    return (f & ~0xFFu) == 0 && (f & 0x7u) != 3 && (f & 0x7u) <= 4;
}

/* ------------------------------------------------------------------ */
/* Streams and their worker threads. */

static struct stream *stream_new(struct ctx *c, unsigned flags, int prio, int is_null)
{
    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = c;
    s->flags = flags;
    s->prio = prio;
    s->is_null = is_null;
    s->refs = 1;
    s->h.kind = K_STREAM;
    s->h.owner = c;
    pthread_cond_init(&s->cv_work, NULL);
    pthread_cond_init(&s->cv_idle, NULL);
    return s;
}

static void refs_give(struct gref *r, size_t n);

static void work_drop(struct work *w)
{
    if (w->type == W_HOSTFN || w->type == W_CALLBACK)
        g_pending_cb--;
    if (w->refs)
        refs_give(w->refs, w->nrefs);
    if (w->m1)
        w->m1->pending--;
    if (w->m2)
        w->m2->pending--;
    free(w);
}

static void stream_unref(struct stream *s)
{
    if (--s->refs > 0)
        return;
    while (s->head) {
        struct work *w = s->head;
        s->head = w->next;
        work_drop(w);
    }
    pthread_cond_destroy(&s->cv_work);
    pthread_cond_destroy(&s->cv_idle);
    free(s);
}

static void run_work(struct stream *s, struct work *w)
{
    switch (w->type) {
    case W_HOSTFN:
        UNLOCK();
        w->fn(w->ud);
        LOCK();
        g_pending_cb--;
        break;
    case W_CALLBACK:
        UNLOCK();
        w->cb(w->uh, CUDA_SUCCESS, w->ud);
        LOCK();
        g_pending_cb--;
        break;
    case W_COPY:
        UNLOCK();
        memmove(w->dst, w->src, w->n);
        LOCK();
        if (w->m1)
            w->m1->pending--;
        if (w->m2)
            w->m2->pending--;
        pthread_cond_broadcast(&g_progress);
        break;
    case W_RECORD: {
        struct event *ev = (struct event *)reg_find((uintptr_t)w->ev, K_EVENT);
        if (ev && ev->h.id == w->evid && w->gen > ev->done_gen) {
            ev->done_gen = w->gen;
            ev->t_ms = now_ms();
        }
        pthread_cond_broadcast(&g_progress);
        break;
    }
    case W_KERNEL:
        w->kern->run(w->kargs, w->threads);
        break;
    case W_UNREF:
        refs_give(w->refs, w->nrefs);
        w->refs = NULL;
        break;
    case W_WAIT:
        while (!g_shutdown) {
            struct event *ev = (struct event *)reg_find((uintptr_t)w->ev, K_EVENT);
            if (!ev || ev->h.id != w->evid || ev->done_gen >= w->gen)
                break;
            pthread_cond_wait(&g_progress, &G);
        }
        break;
    }
    (void)s;
    w->m1 = w->m2 = NULL;
}

static void *worker_main(void *arg)
{
    struct stream *s = arg;
    t_kind = 1;
    LOCK();
    for (;;) {
        while (!s->head && !s->stop && !g_shutdown)
            pthread_cond_wait(&s->cv_work, &G);
        if (g_shutdown || !s->head)
            break;
        struct work *w = s->head;
        s->head = w->next;
        if (!s->head)
            s->tail = NULL;
        s->busy = 1;
        run_work(s, w);
        s->busy = 0;
        free(w);
        if (!s->head)
            pthread_cond_broadcast(&s->cv_idle);
    }
    s->exited = 1;
    g_threads_alive--;
    pthread_cond_broadcast(&s->cv_idle);
    pthread_cond_broadcast(&g_progress);
    stream_unref(s); /* the worker's own reference */
    UNLOCK();
    return NULL;
}

static CUresult stream_enqueue(struct stream *s, struct work *w)
{
    if (!s->started) {
        if (pthread_create(&s->thr, NULL, worker_main, s) != 0) {
            free(w);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->started = 1;
        s->refs++;
        g_threads_alive++;
    }
    w->next = NULL;
    if (s->tail)
        s->tail->next = w;
    else
        s->head = w;
    s->tail = w;
    if (w->type == W_HOSTFN || w->type == W_CALLBACK)
        g_pending_cb++;
    pthread_cond_signal(&s->cv_work);
    return CUDA_SUCCESS;
}

/* Stream handle -> stream. 0, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD all
 * map to the NULL stream of the current context (the fake does not model
 * per-thread default streams separately). */
static CUresult stream_resolve(CUstream h, struct stream **out)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        CUresult e;
        struct ctx *c = cur_ctx(&e);
        if (!c)
            return e;
        if (!c->nullstream && !(c->nullstream = stream_new(c, 0, 0, 1)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = c->nullstream;
        return CUDA_SUCCESS;
    }
    struct stream *s = (struct stream *)reg_find((uintptr_t)h, K_STREAM);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = s;
    return CUDA_SUCCESS;
}

static CUresult stream_sync(struct stream *s)
{
    if (t_kind)
        return CUDA_ERROR_NOT_PERMITTED;
    s->refs++;
    while ((s->head || s->busy) && s->started && !s->exited && !g_shutdown)
        pthread_cond_wait(&s->cv_idle, &G);
    stream_unref(s);
    return CUDA_SUCCESS;
}

/* Stop streams (already out of the registry / detached from their context),
 * join their workers with G released, drop the references. Called under G. */
static void streams_retire(struct stream **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        v[i]->stop = 1;
        pthread_cond_broadcast(&v[i]->cv_work);
    }
    UNLOCK();
    for (size_t i = 0; i < n; i++) {
        if (!v[i]->started)
            continue;
        if (pthread_equal(v[i]->thr, pthread_self()))
            pthread_detach(v[i]->thr); /* destroyed from its own callback */
        else
            pthread_join(v[i]->thr, NULL);
    }
    LOCK();
    for (size_t i = 0; i < n; i++)
        stream_unref(v[i]);
}

/* ------------------------------------------------------------------ */
/* Freeing objects (under G). */

static void func_free(struct func *f)
{
    reg_del(&f->h);
    free(f->name);
    free(f->off);
    free(f->sz);
    free(f);
}

static void obj_free(struct obj *o)
{
    switch (o->kind) {
    case K_DMEM:
    case K_HMEM: {
        struct mem *m = (struct mem *)o;
        if (o->kind == K_DMEM && m->dev >= 0 && m->dev < FK_NDEV)
            g_used[m->dev] -= m->size;
        void *base = (void *)o->key;
        reg_del(o);
        free(base);
        free(m);
        return;
    }
    case K_MODULE: {
        struct module *m = (struct module *)o;
        while (m->funcs) {
            struct func *f = m->funcs;
            m->funcs = f->sib;
            func_free(f);
        }
        break;
    }
    case K_LIBRARY: {
        struct library *l = (struct library *)o;
        while (l->kernels) {
            struct kernel *k = l->kernels;
            l->kernels = k->sib;
            reg_del(&k->h); /* k->fn is one of l->mod's functions */
            free(k->name);
            free(k);
        }
        while (l->mod.funcs) {
            struct func *f = l->mod.funcs;
            l->mod.funcs = f->sib;
            func_free(f);
        }
        reg_del(&l->mod.h);
        break;
    }
    case K_LIBMODULE:
        return; /* owned by its library */
    case K_FUNC:
        func_free((struct func *)o);
        return;
    case K_KERNEL:
        return; /* owned by its library */
    case K_LINK:
        break;
    case K_GRAPH: {
        struct graph *g = (struct graph *)o;
        for (size_t i = 0; i < g->nn; i++) {
            reg_del(&g->nodes[i]->h);
            free(g->nodes[i]->k.name);
            free(g->nodes[i]->k.bytes);
            free(g->nodes[i]);
        }
        free(g->nodes);
        free(g->r);
        break;
    }
    case K_GNODE:
        return; /* owned by its graph */
    case K_GEXEC: {
        struct gexec *x = (struct gexec *)o;
        for (size_t i = 0; i < x->n; i++) {
            free(x->x[i].k.name);
            free(x->x[i].k.bytes);
        }
        free(x->x);
        free(x->r); /* references given back by cuGraphExecDestroy (reset: none) */
        break;
    }
    case K_CTX: {
        struct ctx *c = (struct ctx *)o;
        for (int d = 0; d < FK_NDEV; d++)
            if (g_primary[d] == c)
                g_primary[d] = NULL;
        break;
    }
    default:
        break;
    }
    reg_del(o);
    free(o);
}

/* Wait until no queued async copy touches m; returns m if it is still live. */
static struct mem *mem_quiesce(struct mem *m, int kind)
{
    uintptr_t key = m->h.key;
    uint64_t id = m->h.id;
    while (m->pending > 0 && !t_kind && !g_shutdown) {
        pthread_cond_wait(&g_progress, &G);
        m = (struct mem *)reg_find(key, kind);
        if (!m || m->h.id != id)
            return NULL;
    }
    return m;
}

/* Destroy everything a context owns (streams first: their pending work is
 * drained), and the context itself if `drop`. Called under G; releases G
 * while joining workers. */
static void ctx_teardown(struct ctx *c, int drop)
{
    size_t n = 0;
    struct obj **v = reg_collect(K_STREAM, c, 0, &n);
    struct stream **sv = malloc((n + 1) * sizeof *sv);
    size_t ns = 0;
    for (size_t i = 0; sv && i < n; i++) {
        reg_del(v[i]);
        sv[ns++] = (struct stream *)v[i];
    }
    free(v);
    if (sv && c->nullstream)
        sv[ns++] = c->nullstream;
    c->nullstream = NULL;
    if (drop)
        reg_del(&c->h);
    if (sv)
        streams_retire(sv, ns);
    free(sv);
    /* mem_quiesce may release G: remember (key, kind, id), look up again. */
    v = reg_collect(0, c, 0, &n);
    struct { uintptr_t key; int kind; uint64_t id; } *t = malloc((n + 1) * sizeof *t);
    for (size_t i = 0; t && i < n; i++) {
        t[i].key = v[i]->key;
        t[i].kind = v[i]->kind;
        t[i].id = v[i]->id;
    }
    free(v);
    for (size_t i = 0; t && i < n; i++) {
        struct obj *o = reg_find(t[i].key, t[i].kind);
        if (!o || o->id != t[i].id)
            continue;
        if ((o->kind == K_DMEM || o->kind == K_HMEM) &&
            !(o = (struct obj *)mem_quiesce((struct mem *)o, o->kind)))
            continue;
        obj_free(o);
    }
    free(t);
    if (drop)
        free(c);
}

/* ------------------------------------------------------------------ */
/* Deferred destructor thread for user objects. */

struct dwork {
    struct dwork *next;
    CUhostFn fn;
    void *ptr;
};
static struct dwork *g_dq_head, *g_dq_tail;
static pthread_cond_t g_dcv = PTHREAD_COND_INITIALIZER;
static int g_dthr_started, g_dthr_stop, g_dthr_exited;
static pthread_t g_dthr;

static void *destructor_main(void *arg)
{
    (void)arg;
    t_kind = 2;
    LOCK();
    for (;;) {
        while (!g_dq_head && !g_dthr_stop && !g_shutdown)
            pthread_cond_wait(&g_dcv, &G);
        if (g_shutdown || !g_dq_head)
            break;
        struct dwork *d = g_dq_head;
        g_dq_head = d->next;
        if (!g_dq_head)
            g_dq_tail = NULL;
        UNLOCK();
        d->fn(d->ptr);
        LOCK();
        free(d);
        g_pending_d--;
        pthread_cond_broadcast(&g_progress);
    }
    g_threads_alive--;
    g_dthr_exited = 1;
    pthread_cond_broadcast(&g_progress);
    UNLOCK();
    return NULL;
}

static void uobj_unref(struct uobj *u, unsigned count)
{
    u->refs -= count;
    if (u->refs > 0)
        return;
    CUhostFn fn = u->destroy;
    void *ptr = u->ptr;
    obj_free(&u->h);
    if (!fn)
        return;
    struct dwork *d = calloc(1, sizeof *d);
    if (!d)
        return;
    d->fn = fn;
    d->ptr = ptr;
    if (!g_dthr_started) {
        if (pthread_create(&g_dthr, NULL, destructor_main, NULL) != 0) {
            free(d);
            return;
        }
        g_dthr_started = 1;
        g_dthr_exited = 0;
        g_threads_alive++;
    }
    if (g_dq_tail)
        g_dq_tail->next = d;
    else
        g_dq_head = d;
    g_dq_tail = d;
    g_pending_d++;
    pthread_cond_signal(&g_dcv);
}

/* User-object references (under G): a copy of n references `src` holds,
 * each taken again (references whose object is gone are left out); NULL
 * when there are none or memory is short (then none are taken). */
static struct gref *refs_take(const struct gref *src, size_t n, size_t *out_n)
{
    *out_n = 0;
    struct gref *r = n ? calloc(n, sizeof *r) : NULL;
    for (size_t i = 0; r && i < n; i++) {
        struct uobj *u = (struct uobj *)reg_find((uintptr_t)src[i].u, K_UOBJ);
        if (!u || u->h.id != src[i].id || !src[i].n || u->refs > UINT32_MAX - src[i].n)
            continue;
        u->refs += src[i].n;
        r[(*out_n)++] = src[i];
    }
    return r;
}

/* Gives back the references refs_take took, and frees the copy. */
static void refs_give(struct gref *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct uobj *u = (struct uobj *)reg_find((uintptr_t)r[i].u, K_UOBJ);
        if (u && u->h.id == r[i].id)
            uobj_unref(u, r[i].n <= u->refs ? r[i].n : u->refs);
    }
    free(r);
}

/* ------------------------------------------------------------------ */
/* Kernel parameter layouts and launch records (by kernel name, under G). */

struct layout {
    struct layout *next;
    char *name;
    int n;
    size_t *off, *sz;
};
struct lrec {
    struct lrec *next;
    char *name;
    long long count;
    unsigned char *bytes;
    size_t len;
    unsigned dims[9];
    int mode;
    void *stream;
};
static struct layout *g_layouts;
static struct lrec *g_lrecs;
static unsigned char g_image[16];
static long long g_image_len = -1;

static struct layout *layout_find(const char *name)
{
    for (struct layout *l = g_layouts; l; l = l->next)
        if (strcmp(l->name, name) == 0)
            return l;
    return NULL;
}

static struct lrec *lrec_find(const char *name, int create)
{
    for (struct lrec *r = g_lrecs; r; r = r->next)
        if (strcmp(r->name, name) == 0)
            return r;
    if (!create)
        return NULL;
    struct lrec *r = calloc(1, sizeof *r);
    if (!r || !(r->name = fk_strdup(name))) {
        free(r);
        return NULL;
    }
    r->next = g_lrecs;
    g_lrecs = r;
    return r;
}

static void record_image(const void *image)
{
    const unsigned char *p = image;
    size_t i = 0;
    while (i < sizeof g_image) {
        g_image[i] = p[i];
        if (!p[i++])
            break;
    }
    g_image_len = (long long)i;
}

/* ------------------------------------------------------------------ */
/* Errors. The table is derived from the CUresult enum of cuda.h 13.0: names
 * are the enumerator names; strings are the driver's for the common ones and
 * otherwise the first sentence of the header's comment. */

#define FK_ERRORS(E) \
    E(CUDA_SUCCESS, "no error") \
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument") \
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory") \
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error") \
    E(CUDA_ERROR_DEINITIALIZED, "This indicates that the CUDA driver is in the process of shutting down.") \
    E(CUDA_ERROR_PROFILER_DISABLED, "This indicates profiler is not initialized for this run.") \
    E(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "This error return is deprecated as of CUDA 5.0.") \
    E(CUDA_ERROR_PROFILER_ALREADY_STARTED, "This error return is deprecated as of CUDA 5.0.") \
    E(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "This error return is deprecated as of CUDA 5.0.") \
    E(CUDA_ERROR_STUB_LIBRARY, "This indicates that the CUDA driver that the application has loaded is a stub library.") \
    E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "This indicates that the API call requires a newer CUDA driver than the one currently installed.") \
    E(CUDA_ERROR_DEVICE_UNAVAILABLE, "This indicates that requested CUDA device is unavailable at the current time.") \
    E(CUDA_ERROR_NO_DEVICE, "This indicates that no CUDA-capable devices were detected by the installed CUDA driver.") \
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal") \
    E(CUDA_ERROR_DEVICE_NOT_LICENSED, "This error indicates that the Grid license is not applied.") \
    E(CUDA_ERROR_INVALID_IMAGE, "This indicates that the device kernel image is invalid.") \
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context") \
    E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "This indicated that the context being supplied as a parameter to the API call was already the active context.") \
    E(CUDA_ERROR_MAP_FAILED, "This indicates that a map or register operation has failed.") \
    E(CUDA_ERROR_UNMAP_FAILED, "This indicates that an unmap or unregister operation has failed.") \
    E(CUDA_ERROR_ARRAY_IS_MAPPED, "This indicates that the specified array is currently mapped and thus cannot be destroyed.") \
    E(CUDA_ERROR_ALREADY_MAPPED, "This indicates that the resource is already mapped.") \
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "This indicates that there is no kernel image available that is suitable for the device.") \
    E(CUDA_ERROR_ALREADY_ACQUIRED, "This indicates that a resource has already been acquired.") \
    E(CUDA_ERROR_NOT_MAPPED, "This indicates that a resource is not mapped.") \
    E(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "This indicates that a mapped resource is not available for access as an array.") \
    E(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "This indicates that a mapped resource is not available for access as a pointer.") \
    E(CUDA_ERROR_ECC_UNCORRECTABLE, "This indicates that an uncorrectable ECC error was detected during execution.") \
    E(CUDA_ERROR_UNSUPPORTED_LIMIT, "This indicates that the CUlimit passed to the API call is not supported by the active device.") \
    E(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "This indicates that the CUcontext passed to the API call can only be bound to a single CPU thread at a...") \
    E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "This indicates that peer access is not supported across the given devices.") \
    E(CUDA_ERROR_INVALID_PTX, "This indicates that a PTX JIT compilation failed.") \
    E(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "This indicates an error with OpenGL or DirectX context.") \
    E(CUDA_ERROR_NVLINK_UNCORRECTABLE, "This indicates that an uncorrectable NVLink error was detected during the execution.") \
    E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "This indicates that the PTX JIT compiler library was not found.") \
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "This indicates that the provided PTX was compiled with an unsupported toolchain.") \
    E(CUDA_ERROR_JIT_COMPILATION_DISABLED, "This indicates that the PTX JIT compilation was disabled.") \
    E(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "This indicates that the CUexecAffinityType passed to the API call is not supported by the active device.") \
    E(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "This indicates that the code to be compiled by the PTX JIT contains unsupported call to cudaDeviceSynchronize.") \
    E(CUDA_ERROR_CONTAINED, "This indicates that an exception occurred on the device that is now contained by the GPU's error...") \
    E(CUDA_ERROR_INVALID_SOURCE, "This indicates that the device kernel source is invalid.") \
    E(CUDA_ERROR_FILE_NOT_FOUND, "This indicates that the file specified was not found.") \
    E(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "This indicates that a link to a shared object failed to resolve.") \
    E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "This indicates that initialization of a shared object failed.") \
    E(CUDA_ERROR_OPERATING_SYSTEM, "This indicates that an OS call failed.") \
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle") \
    E(CUDA_ERROR_ILLEGAL_STATE, "This indicates that a resource required by the API call is not in a valid state to perform the requested...") \
    E(CUDA_ERROR_LOSSY_QUERY, "This indicates an attempt was made to introspect an object in a way that would discard semantically...") \
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found") \
    E(CUDA_ERROR_NOT_READY, "device not ready") \
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "While executing a kernel, the device encountered a load or store instruction on an invalid memory address.") \
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "This indicates that a launch did not occur because it did not have appropriate resources.") \
    E(CUDA_ERROR_LAUNCH_TIMEOUT, "This indicates that the device kernel took too long to execute.") \
    E(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "This error indicates a kernel launch that uses an incompatible texturing mode.") \
    E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "This error indicates that a call to cuCtxEnablePeerAccess() is trying to re-enable peer access to a...") \
    E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "This error indicates that cuCtxDisablePeerAccess() is trying to disable peer access which has not been...") \
    E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "This error indicates that the primary context for the specified device has already been initialized.") \
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "This error indicates that the context current to the calling thread has been destroyed using cuCtxDestroy,...") \
    E(CUDA_ERROR_ASSERT, "A device-side assert triggered during kernel execution.") \
    E(CUDA_ERROR_TOO_MANY_PEERS, "This error indicates that the hardware resources required to enable peer access have been exhausted for...") \
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "This error indicates that the memory range passed to cuMemHostRegister() has already been registered.") \
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "This error indicates that the pointer passed to cuMemHostUnregister() does not correspond to any currently...") \
    E(CUDA_ERROR_HARDWARE_STACK_ERROR, "While executing a kernel, the device encountered a stack error.") \
    E(CUDA_ERROR_ILLEGAL_INSTRUCTION, "While executing a kernel, the device encountered an illegal instruction.") \
    E(CUDA_ERROR_MISALIGNED_ADDRESS, "While executing a kernel, the device encountered a load or store instruction on a memory address which is...") \
    E(CUDA_ERROR_INVALID_ADDRESS_SPACE, "While executing a kernel, the device encountered an instruction which can only operate on memory locations...") \
    E(CUDA_ERROR_INVALID_PC, "While executing a kernel, the device program counter wrapped its address space.") \
    E(CUDA_ERROR_LAUNCH_FAILED, "An exception occurred on the device while executing a kernel.") \
    E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "This error indicates that the number of blocks launched per grid for a kernel that was launched via either...") \
    E(CUDA_ERROR_TENSOR_MEMORY_LEAK, "An exception occurred on the device while exiting a kernel using tensor memory: the tensor memory was not...") \
    E(CUDA_ERROR_NOT_PERMITTED, "This error indicates that the attempted operation is not permitted.") \
    E(CUDA_ERROR_NOT_SUPPORTED, "This error indicates that the attempted operation is not supported on the current system or device.") \
    E(CUDA_ERROR_SYSTEM_NOT_READY, "This error indicates that the system is not yet ready to start any CUDA work.") \
    E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "This error indicates that there is a mismatch between the versions of the display driver and the CUDA driver.") \
    E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "This error indicates that the system was upgraded to run with forward compatibility but the visible...") \
    E(CUDA_ERROR_MPS_CONNECTION_FAILED, "This error indicates that the MPS client failed to connect to the MPS control daemon or the MPS server.") \
    E(CUDA_ERROR_MPS_RPC_FAILURE, "This error indicates that the remote procedural call between the MPS server and the MPS client failed.") \
    E(CUDA_ERROR_MPS_SERVER_NOT_READY, "This error indicates that the MPS server is not ready to accept new MPS client requests.") \
    E(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "This error indicates that the hardware resources required to create MPS client have been exhausted.") \
    E(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "This error indicates the the hardware resources required to support device connections have been exhausted.") \
    E(CUDA_ERROR_MPS_CLIENT_TERMINATED, "This error indicates that the MPS client has been terminated by the server.") \
    E(CUDA_ERROR_CDP_NOT_SUPPORTED, "This error indicates that the module is using CUDA Dynamic Parallelism, but the current configuration,...") \
    E(CUDA_ERROR_CDP_VERSION_MISMATCH, "This error indicates that a module contains an unsupported interaction between different versions of CUDA...") \
    E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "This error indicates that the operation is not permitted when the stream is capturing.") \
    E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "This error indicates that the current capture sequence on the stream has been invalidated due to a...") \
    E(CUDA_ERROR_STREAM_CAPTURE_MERGE, "This error indicates that the operation would have resulted in a merge of two independent capture sequences.") \
    E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "This error indicates that the capture was not initiated in this stream.") \
    E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "This error indicates that the capture sequence contains a fork that was not joined to the primary stream.") \
    E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "This error indicates that a dependency would have been created which crosses the capture sequence boundary.") \
    E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "This error indicates a disallowed implicit dependency on a current capture sequence from cudaStreamLegacy.") \
    E(CUDA_ERROR_CAPTURED_EVENT, "This error indicates that the operation is not permitted on an event which was last recorded in a...") \
    E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "A stream capture sequence not initiated with the CU_STREAM_CAPTURE_MODE_RELAXED argument to...") \
    E(CUDA_ERROR_TIMEOUT, "This error indicates that the timeout specified for the wait operation has lapsed.") \
    E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "This error indicates that the graph update was not performed because it included changes which violated...") \
    E(CUDA_ERROR_EXTERNAL_DEVICE, "This indicates that an async error has occurred in a device outside of CUDA.") \
    E(CUDA_ERROR_INVALID_CLUSTER_SIZE, "Indicates a kernel launch error due to cluster misconfiguration.") \
    E(CUDA_ERROR_FUNCTION_NOT_LOADED, "Indiciates a function handle is not loaded when calling an API that requires a loaded function.") \
    E(CUDA_ERROR_INVALID_RESOURCE_TYPE, "This error indicates one or more resources passed in are not valid resource types for the operation.") \
    E(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "This error indicates one or more resources are insufficient or non-applicable for the operation.") \
    E(CUDA_ERROR_KEY_ROTATION, "This error indicates that an error happened during the key rotation sequence.") \
    E(CUDA_ERROR_UNKNOWN, "This indicates that an unknown internal error has occurred.")

static const char *err_name(CUresult r)
{
    switch (r) {
#define FK_ECASE(n, s) case n: return #n;
    FK_ERRORS(FK_ECASE)
#undef FK_ECASE
    default: return NULL;
    }
}

static const char *err_string(CUresult r)
{
    switch (r) {
#define FK_ECASE(n, s) case n: return s;
    FK_ERRORS(FK_ECASE)
#undef FK_ECASE
    default: return NULL;
    }
}

static CUresult fk_GetErrorName(CUresult error, const char **pStr)
{
    ENTER(GetErrorName);
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    *pStr = err_name(error);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fk_GetErrorString(CUresult error, const char **pStr)
{
    ENTER(GetErrorString);
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    *pStr = err_string(error);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------ */
/* Initialization and devices. */

static CUresult fk_Init(unsigned int Flags)
{
    ENTER(Init);
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    ensure_primaries();
    atomic_store(&g_inited, 1);
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_DriverGetVersion(int *driverVersion)
{
    ENTER(DriverGetVersion);
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *driverVersion = g_driver_version;
    UNLOCK();
    return CUDA_SUCCESS;
}

#define CHECK_DEV(d) if ((d) < 0 || (d) >= FK_NDEV) return CUDA_ERROR_INVALID_DEVICE

static CUresult fk_DeviceGet(CUdevice *device, int ordinal)
{
    ENTERI(DeviceGet);
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(ordinal);
    *device = ordinal;
    return CUDA_SUCCESS;
}

static CUresult fk_DeviceGetCount(int *count)
{
    ENTERI(DeviceGetCount);
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = FK_NDEV;
    return CUDA_SUCCESS;
}

static CUresult fk_DeviceGetName(char *name, int len, CUdevice dev)
{
    ENTERI(DeviceGetName);
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    snprintf(name, (size_t)len, "Fake CUDA Device %d (cubind test double)", dev);
    return CUDA_SUCCESS;
}

static CUresult uuid_impl(CUuuid *uuid, CUdevice dev)
{
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    static const char tag[] = "FAKECUDA-UUID-";
    for (int i = 0; i < 16; i++)
        uuid->bytes[i] = i < 14 ? tag[i] : (char)(i == 14 ? 0 : dev);
    return CUDA_SUCCESS;
}

static CUresult fk_DeviceGetUuid_v1(CUuuid *uuid, CUdevice dev)
{
    ENTERI_V(DeviceGetUuid, 9020);
    return uuid_impl(uuid, dev);
}

static CUresult fk_DeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    ENTERI_V(DeviceGetUuid, 11040);
    return uuid_impl(uuid, dev);
}

static CUresult fk_DeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    ENTERI(DeviceTotalMem);
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    *bytes = (size_t)FK_TOTAL_MEM;
    return CUDA_SUCCESS;
}

static CUresult fk_DeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    ENTERI(DeviceGetAttribute);
    if (!pi || (int)attrib < 1 || (int)attrib >= (int)CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        *pi = FK_CC_MAJOR;
    else if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        *pi = FK_CC_MINOR;
    else
        *pi = (int)attrib * 1000 + dev;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Primary contexts. */

static CUresult fk_DevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    ENTERI(DevicePrimaryCtxRetain);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    LOCK();
    ensure_primaries();
    g_primary[dev]->refcount++;
    *pctx = (CUcontext)(void *)g_primary[dev];
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
    CHECK_DEV(dev);
    LOCK();
    ensure_primaries();
    struct ctx *c = g_primary[dev];
    CUresult r = CUDA_SUCCESS;
    if (c->refcount == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--c->refcount == 0) {
        c->flags = 0;
        ctx_teardown(c, 0);
    }
    UNLOCK();
    return r;
}

static CUresult fk_DevicePrimaryCtxRelease_v1(CUdevice dev)
{
    ENTERI_V(DevicePrimaryCtxRelease, 7000);
    return primary_release(dev);
}

static CUresult fk_DevicePrimaryCtxRelease_v2(CUdevice dev)
{
    ENTERI_V(DevicePrimaryCtxRelease, 11000);
    return primary_release(dev);
}

static CUresult primary_reset(CUdevice dev)
{
    CHECK_DEV(dev);
    LOCK();
    ensure_primaries();
    struct ctx *c = g_primary[dev];
    c->flags = 0;
    ctx_teardown(c, 0);
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_DevicePrimaryCtxReset_v1(CUdevice dev)
{
    ENTERI_V(DevicePrimaryCtxReset, 7000);
    return primary_reset(dev);
}

static CUresult fk_DevicePrimaryCtxReset_v2(CUdevice dev)
{
    ENTERI_V(DevicePrimaryCtxReset, 11000);
    return primary_reset(dev);
}

static CUresult fk_DevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    ENTERI(DevicePrimaryCtxGetState);
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    LOCK();
    ensure_primaries();
    *flags = g_primary[dev]->flags;
    *active = g_primary[dev]->refcount > 0;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult primary_set_flags(CUdevice dev, unsigned flags, int v1)
{
    CHECK_DEV(dev);
    if (!valid_ctx_flags(flags))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    ensure_primaries();
    CUresult r = CUDA_SUCCESS;
    if (v1 && g_primary[dev]->refcount > 0)
        r = CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE; /* the _v1 ABI refused this */
    else
        g_primary[dev]->flags = flags;
    UNLOCK();
    return r;
}

static CUresult fk_DevicePrimaryCtxSetFlags_v1(CUdevice dev, unsigned int flags)
{
    ENTERI_V(DevicePrimaryCtxSetFlags, 7000);
    return primary_set_flags(dev, flags, 1);
}

static CUresult fk_DevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    ENTERI_V(DevicePrimaryCtxSetFlags, 11000);
    return primary_set_flags(dev, flags, 0);
}

/* ------------------------------------------------------------------ */
/* Created contexts and the current-context stack. */

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    if (!pctx || !valid_ctx_flags(flags))
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(dev);
    LOCK();
    tls_sync();
    CUresult r = CUDA_SUCCESS;
    struct ctx *c = calloc(1, sizeof *c);
    if (!c || t_depth >= FK_STACK_MAX) {
        free(c);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        c->dev = dev;
        c->flags = flags;
        reg_add(&c->h, K_CTX, 0, NULL);
        t_stack[t_depth].c = c;
        t_stack[t_depth].id = c->h.id;
        t_depth++;
        *pctx = (CUcontext)(void *)c;
    }
    UNLOCK();
    return r;
}

static CUresult fk_CtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    ENTERI_V(CtxCreate, 3020);
    return ctx_create(pctx, flags, dev);
}

static CUresult fk_CtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                int numParams, unsigned int flags, CUdevice dev)
{
    ENTERI_V(CtxCreate, 11040);
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

static CUresult fk_CtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev)
{
    ENTERI_V(CtxCreate, 12050);
    (void)ctxCreateParams;
    return ctx_create(pctx, flags, dev);
}

static CUresult fk_CtxDestroy(CUcontext ctx)
{
    ENTERI(CtxDestroy);
    LOCK();
    struct ctx *c = (struct ctx *)reg_find((uintptr_t)ctx, K_CTX);
    if (!c || c->primary) {
        UNLOCK();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    tls_sync();
    if (t_depth > 0 && t_stack[t_depth - 1].c == c && t_stack[t_depth - 1].id == c->h.id)
        t_depth--;
    ctx_teardown(c, 1);
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_CtxGetCurrent(CUcontext *pctx)
{
    ENTERI(CtxGetCurrent);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    tls_sync();
    *pctx = t_depth ? (CUcontext)(void *)t_stack[t_depth - 1].c : NULL;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_CtxSetCurrent(CUcontext ctx)
{
    ENTERI(CtxSetCurrent);
    LOCK();
    tls_sync();
    CUresult r = CUDA_SUCCESS;
    if (!ctx) {
        if (t_depth > 0)
            t_depth--;
    } else {
        struct ctx *c = ctx_lookup(ctx);
        if (!c)
            r = CUDA_ERROR_INVALID_CONTEXT;
        else {
            if (t_depth == 0)
                t_depth = 1;
            t_stack[t_depth - 1].c = c;
            t_stack[t_depth - 1].id = c->h.id;
        }
    }
    UNLOCK();
    return r;
}

static CUresult fk_CtxPushCurrent(CUcontext ctx)
{
    ENTERI(CtxPushCurrent);
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    tls_sync();
    CUresult r = CUDA_SUCCESS;
    struct ctx *c = ctx_lookup(ctx);
    if (!c)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (t_depth >= FK_STACK_MAX)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        t_stack[t_depth].c = c;
        t_stack[t_depth].id = c->h.id;
        t_depth++;
    }
    UNLOCK();
    return r;
}

static CUresult fk_CtxPopCurrent(CUcontext *pctx)
{
    ENTERI(CtxPopCurrent);
    LOCK();
    tls_sync();
    CUresult r = CUDA_SUCCESS;
    if (t_depth == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else {
        t_depth--;
        if (pctx)
            *pctx = (CUcontext)(void *)t_stack[t_depth].c;
    }
    UNLOCK();
    return r;
}

/* ctx NULL: the current context. */
static struct ctx *ctx_arg(CUcontext ctx, CUresult *e)
{
    if (!ctx)
        return cur_ctx(e);
    struct ctx *c = ctx_lookup(ctx);
    *e = c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    return c;
}

static CUresult ctx_get_device(CUdevice *device, CUcontext ctx)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = ctx_arg(ctx, &e);
    if (c)
        *device = c->dev;
    UNLOCK();
    return e;
}

static CUresult fk_CtxGetDevice_v1(CUdevice *device)
{
    ENTERI_V(CtxGetDevice, 2000);
    return ctx_get_device(device, NULL);
}

static CUresult fk_CtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    ENTERI_V(CtxGetDevice, 13000);
    return ctx_get_device(device, ctx);
}

static CUresult ctx_sync(CUcontext ctx)
{
    LOCK();
    CUresult e;
    struct ctx *c = ctx_arg(ctx, &e);
    if (c && t_kind)
        e = CUDA_ERROR_NOT_PERMITTED;
    if (c && !t_kind) {
        size_t n = 0;
        struct obj **v = reg_collect(K_STREAM, c, 0, &n);
        struct stream *ns = c->nullstream;
        if (ns)
            ns->refs++;
        for (size_t i = 0; v && i < n; i++)
            ((struct stream *)v[i])->refs++;
        if (ns) {
            stream_sync(ns);
            stream_unref(ns);
        }
        for (size_t i = 0; v && i < n; i++) {
            stream_sync((struct stream *)v[i]);
            stream_unref((struct stream *)v[i]);
        }
        free(v);
    }
    UNLOCK();
    return e;
}

static CUresult fk_CtxSynchronize_v1(void)
{
    ENTERI_V(CtxSynchronize, 2000);
    return ctx_sync(NULL);
}

static CUresult fk_CtxSynchronize_v2(CUcontext ctx)
{
    ENTERI_V(CtxSynchronize, 13000);
    return ctx_sync(ctx);
}

static CUresult fk_CtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    ENTERI(CtxGetApiVersion);
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    if (ctx_arg(ctx, &e))
        *version = 3020;
    UNLOCK();
    return e;
}

static CUresult fk_CtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    ENTERI(CtxGetStreamPriorityRange);
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = FK_PRIO_GREATEST;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Streams. */

static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    if (prio < FK_PRIO_GREATEST)
        prio = FK_PRIO_GREATEST;
    if (prio > 0)
        prio = 0;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    if (c) {
        struct stream *s = stream_new(c, flags, prio, 0);
        if (!s)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            reg_add(&s->h, K_STREAM, 0, c);
            *ph = (CUstream)(void *)s;
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_StreamCreate(CUstream *phStream, unsigned int Flags)
{
    ENTERI(StreamCreate);
    return stream_create(phStream, Flags, 0);
}

static CUresult fk_StreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    ENTERI(StreamCreateWithPriority);
    return stream_create(phStream, flags, priority);
}

static CUresult fk_StreamDestroy(CUstream hStream)
{
    ENTERI(StreamDestroy);
    LOCK();
    struct stream *s = (struct stream *)reg_find((uintptr_t)hStream, K_STREAM);
    if (!s) {
        UNLOCK();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (s->capture)
        obj_free(&s->capture->h); /* an unfinished capture ends with its stream */
    s->capture = NULL;
    reg_del(&s->h);
    streams_retire(&s, 1);
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_StreamQuery(CUstream hStream)
{
    ENTERI(StreamQuery);
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS && (s->head || s->busy))
        e = CUDA_ERROR_NOT_READY;
    UNLOCK();
    return e;
}

/* A stream is capturing between cuStreamBeginCapture and cuStreamEndCapture. */
static CUresult fk_StreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    ENTERI(StreamIsCapturing);
    if (!captureStatus)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS)
        *captureStatus = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    UNLOCK();
    return e;
}

/* Stream capture: cuStreamBeginCapture makes a graph the stream owns until
 * cuStreamEndCapture hands it out. Only host functions are captured (as
 * host nodes, run on the stream each cuGraphLaunch); other work on a
 * capturing stream runs as it would uncaptured. The NULL stream cannot
 * capture, as on the driver. */
static CUresult fk_StreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
{
    ENTERI(StreamBeginCapture);
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    struct graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS && s->is_null)
        e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (e == CUDA_SUCCESS && s->capture)
        e = CUDA_ERROR_ILLEGAL_STATE;
    if (e == CUDA_SUCCESS) {
        reg_add(&g->h, K_GRAPH, 0, NULL);
        s->capture = g;
    }
    UNLOCK();
    if (e != CUDA_SUCCESS)
        free(g);
    return e;
}

static CUresult fk_StreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    ENTERI(StreamEndCapture);
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS && !s->capture)
        e = CUDA_ERROR_ILLEGAL_STATE;
    if (e == CUDA_SUCCESS) {
        *phGraph = (CUgraph)(void *)s->capture;
        s->capture = NULL;
    }
    UNLOCK();
    return e;
}

/* A host node of fn(ud) appended to graph g (under G); *out: the node
 * (out may be NULL). Each cuGraphLaunch of an executable graph of it
 * queues the call on the stream, whose own thread makes it, as the
 * driver's does. */
static CUresult graph_add_host(struct graph *g, CUhostFn fn, void *ud, CUgraphNode *out)
{
    struct gnode *n = calloc(1, sizeof *n);
    struct gnode **more = n ? realloc(g->nodes, (g->nn + 1) * sizeof *more) : NULL;
    if (!more) {
        free(n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->nodes = more;
    n->k.fn = fn;
    n->k.ud = ud;
    reg_add(&n->h, K_GNODE, 0, NULL);
    g->nodes[g->nn++] = n;
    if (out)
        *out = (CUgraphNode)(void *)n;
    return CUDA_SUCCESS;
}

static CUresult fk_StreamSynchronize(CUstream hStream)
{
    ENTERI(StreamSynchronize);
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS)
        e = stream_sync(s);
    UNLOCK();
    return e;
}

static CUresult fk_StreamGetFlags(CUstream hStream, unsigned int *flags)
{
    ENTERI(StreamGetFlags);
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS)
        *flags = s->flags;
    UNLOCK();
    return e;
}

static CUresult fk_StreamGetPriority(CUstream hStream, int *priority)
{
    ENTERI(StreamGetPriority);
    if (!priority)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS)
        *priority = s->prio;
    UNLOCK();
    return e;
}

static CUresult stream_get_ctx(CUstream hStream, CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS)
        *pctx = (CUcontext)(void *)s->ctx;
    UNLOCK();
    return e;
}

static CUresult fk_StreamGetCtx_v1(CUstream hStream, CUcontext *pctx)
{
    ENTERI_V(StreamGetCtx, 9020);
    return stream_get_ctx(hStream, pctx);
}

static CUresult fk_StreamGetCtx_v2(CUstream hStream, CUcontext *pctx, CUgreenCtx *pGreenCtx)
{
    ENTERI_V(StreamGetCtx, 12050);
    CUresult e = stream_get_ctx(hStream, pctx);
    if (e == CUDA_SUCCESS && pGreenCtx)
        *pGreenCtx = NULL;
    return e;
}

static CUresult fk_StreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    ENTERI(StreamWaitEvent);
    if (Flags & ~1u)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    struct event *ev = (struct event *)reg_find((uintptr_t)hEvent, K_EVENT);
    if (e == CUDA_SUCCESS && !ev)
        e = CUDA_ERROR_INVALID_HANDLE;
    if (e == CUDA_SUCCESS && ev->done_gen < ev->req_gen) {
        struct work *w = calloc(1, sizeof *w);
        if (!w)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            w->type = W_WAIT;
            w->ev = &ev->h;
            w->evid = ev->h.id;
            w->gen = ev->req_gen;
            e = stream_enqueue(s, w);
        }
    }
    UNLOCK();
    return e;
}

static CUresult enqueue_call(CUstream hStream, int type, CUhostFn fn, CUstreamCallback cb, void *ud)
{
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS) {
        struct work *w = calloc(1, sizeof *w);
        if (!w)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            w->type = type;
            w->fn = fn;
            w->cb = cb;
            w->ud = ud;
            w->uh = hStream;
            e = stream_enqueue(s, w);
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_StreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags)
{
    ENTERI(StreamAddCallback);
    if (!callback || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return enqueue_call(hStream, W_CALLBACK, NULL, callback, userData);
}

static CUresult fk_LaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    ENTERI(LaunchHostFunc);
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    int captured = e == CUDA_SUCCESS && s->capture;
    if (captured)
        e = graph_add_host(s->capture, fn, userData, NULL);
    UNLOCK();
    if (e != CUDA_SUCCESS || captured)
        return e;
    return enqueue_call(hStream, W_HOSTFN, fn, NULL, userData);
}

/* ------------------------------------------------------------------ */
/* Events. */

static CUresult fk_EventCreate(CUevent *phEvent, unsigned int Flags)
{
    ENTERI(EventCreate);
    if (!phEvent || (Flags & ~7u) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    if (c) {
        struct event *ev = calloc(1, sizeof *ev);
        if (!ev)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            ev->flags = Flags;
            reg_add(&ev->h, K_EVENT, 0, c);
            *phEvent = (CUevent)(void *)ev;
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_EventRecord(CUevent hEvent, CUstream hStream)
{
    ENTERI(EventRecord);
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct stream *s = NULL;
    struct event *ev = (struct event *)reg_find((uintptr_t)hEvent, K_EVENT);
    if (!ev)
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS) {
        struct work *w = calloc(1, sizeof *w);
        if (!w)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            w->type = W_RECORD;
            w->ev = &ev->h;
            w->evid = ev->h.id;
            w->gen = ++ev->req_gen;
            e = stream_enqueue(s, w);
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_EventQuery(CUevent hEvent)
{
    ENTERI(EventQuery);
    LOCK();
    struct event *ev = (struct event *)reg_find((uintptr_t)hEvent, K_EVENT);
    CUresult e = !ev ? CUDA_ERROR_INVALID_HANDLE
                     : ev->done_gen < ev->req_gen ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    UNLOCK();
    return e;
}

static CUresult fk_EventSynchronize(CUevent hEvent)
{
    ENTERI(EventSynchronize);
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct event *ev = (struct event *)reg_find((uintptr_t)hEvent, K_EVENT);
    if (!ev)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (ev->done_gen < ev->req_gen && t_kind)
        e = CUDA_ERROR_NOT_PERMITTED;
    else {
        uint64_t id = ev->h.id, want = ev->req_gen;
        while (!g_shutdown) {
            ev = (struct event *)reg_find((uintptr_t)hEvent, K_EVENT);
            if (!ev || ev->h.id != id || ev->done_gen >= want)
                break;
            pthread_cond_wait(&g_progress, &G);
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_EventDestroy(CUevent hEvent)
{
    ENTERI(EventDestroy);
    LOCK();
    struct obj *o = reg_find((uintptr_t)hEvent, K_EVENT);
    if (o) {
        obj_free(o);
        pthread_cond_broadcast(&g_progress);
    }
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult elapsed(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct event *a = (struct event *)reg_find((uintptr_t)hStart, K_EVENT);
    struct event *b = (struct event *)reg_find((uintptr_t)hEnd, K_EVENT);
    if (!a || !b || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) || !a->req_gen ||
        !b->req_gen)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (a->done_gen < a->req_gen || b->done_gen < b->req_gen)
        e = CUDA_ERROR_NOT_READY;
    else
        *pMilliseconds = (float)(b->t_ms - a->t_ms);
    UNLOCK();
    return e;
}

static CUresult fk_EventElapsedTime_v1(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    ENTERI_V(EventElapsedTime, 2000);
    return elapsed(pMilliseconds, hStart, hEnd);
}

static CUresult fk_EventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    ENTERI_V(EventElapsedTime, 12080);
    return elapsed(pMilliseconds, hStart, hEnd);
}

/* ------------------------------------------------------------------ */
/* Memory. Device memory is host memory from posix_memalign (256-aligned like
 * the driver's allocations); CUdeviceptr is its address. */

static struct mem *mem_containing(uintptr_t p, size_t n)
{
    struct mem *m = (struct mem *)reg_find(p, K_DMEM);
    if (!m)
        m = (struct mem *)reg_find(p, K_HMEM);
    if (!m)
        for (size_t b = 0; !m && b < FK_NB; b++)
            for (struct obj *o = g_tab[b]; o; o = o->hnext)
                if ((o->kind == K_DMEM || o->kind == K_HMEM) && p >= o->key &&
                    p - o->key < ((struct mem *)o)->size) {
                    m = (struct mem *)o;
                    break;
                }
    if (!m || p < m->h.key || p - m->h.key > m->size || n > m->size - (p - m->h.key))
        return NULL;
    return m;
}

static CUresult mem_alloc(void **out, size_t bytesize, int kind)
{
    if (!out || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    if (c) {
        void *p = NULL;
        struct mem *m = NULL;
        if ((kind == K_DMEM && bytesize > FK_TOTAL_MEM - g_used[c->dev]) ||
            posix_memalign(&p, 256, bytesize) != 0 || !(m = calloc(1, sizeof *m))) {
            free(p);
            e = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            m->size = bytesize;
            m->dev = c->dev;
            if (kind == K_DMEM)
                g_used[c->dev] += bytesize;
            reg_add(&m->h, kind, (uintptr_t)p, c);
            *out = p;
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_MemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    ENTERI(MemAlloc);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    CUresult e = mem_alloc(&p, bytesize, K_DMEM);
    if (e == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return e;
}

static CUresult fk_MemAllocHost_v2(void **pp, size_t bytesize)
{
    ENTERI(MemAllocHost);
    return mem_alloc(pp, bytesize, K_HMEM);
}

static CUresult mem_free(uintptr_t p, int kind)
{
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        struct mem *m = (struct mem *)reg_find(p, kind);
        if (m && m->pending > 0 && t_kind)
            e = CUDA_ERROR_NOT_PERMITTED;
        else if (!m || !(m = mem_quiesce(m, kind)))
            e = CUDA_ERROR_INVALID_VALUE;
        else
            obj_free(&m->h);
    }
    UNLOCK();
    return e;
}

static CUresult fk_MemFree_v2(CUdeviceptr dptr)
{
    ENTERI(MemFree);
    return mem_free((uintptr_t)dptr, K_DMEM);
}

static CUresult fk_MemFreeHost(void *p)
{
    ENTERI(MemFreeHost);
    return mem_free((uintptr_t)p, K_HMEM);
}

static CUresult fk_MemGetInfo_v2(size_t *free_, size_t *total)
{
    ENTERI(MemGetInfo);
    if (!free_ || !total)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    if (c) {
        *free_ = (size_t)(FK_TOTAL_MEM - g_used[c->dev]);
        *total = (size_t)FK_TOTAL_MEM;
    }
    UNLOCK();
    return e;
}

/* Synchronous copies: checked against the allocations and done under G. */
static CUresult copy_sync(void *dst, int dst_dev, const void *src, int src_dev, size_t n)
{
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        if ((dst_dev && !mem_containing((uintptr_t)dst, n)) ||
            (src_dev && !mem_containing((uintptr_t)src, n)) || (n && (!dst || !src)))
            e = CUDA_ERROR_INVALID_VALUE;
        else if (n)
            memmove(dst, src, n);
    }
    UNLOCK();
    return e;
}

/* Asynchronous copies: checked now, done by the stream's worker. */
static CUresult copy_async(void *dst, int dst_dev, const void *src, int src_dev, size_t n,
                           CUstream hStream)
{
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    struct mem *m1 = NULL, *m2 = NULL;
    if (e == CUDA_SUCCESS &&
        ((dst_dev && !(m1 = mem_containing((uintptr_t)dst, n))) ||
         (src_dev && !(m2 = mem_containing((uintptr_t)src, n))) || (n && (!dst || !src))))
        e = CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS && n) {
        struct work *w = calloc(1, sizeof *w);
        if (!w)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            w->type = W_COPY;
            w->dst = dst;
            w->src = src;
            w->n = n;
            w->m1 = m1;
            w->m2 = m2;
            if (m1)
                m1->pending++;
            if (m2)
                m2->pending++;
            e = stream_enqueue(s, w);
            if (e != CUDA_SUCCESS) {
                if (m1)
                    m1->pending--;
                if (m2)
                    m2->pending--;
            }
        }
    }
    UNLOCK();
    return e;
}

#define DP(x) ((void *)(uintptr_t)(x))

static CUresult fk_MemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    ENTERI(MemcpyHtoD);
    return copy_sync(DP(dstDevice), 1, srcHost, 0, ByteCount);
}

static CUresult fk_MemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    ENTERI(MemcpyDtoH);
    return copy_sync(dstHost, 0, DP(srcDevice), 1, ByteCount);
}

static CUresult fk_MemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    ENTERI(MemcpyDtoD);
    return copy_sync(DP(dstDevice), 1, DP(srcDevice), 1, ByteCount);
}

static CUresult fk_MemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                      size_t ByteCount, CUstream hStream)
{
    ENTERI(MemcpyHtoDAsync);
    return copy_async(DP(dstDevice), 1, srcHost, 0, ByteCount, hStream);
}

static CUresult fk_MemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream)
{
    ENTERI(MemcpyDtoHAsync);
    return copy_async(dstHost, 0, DP(srcDevice), 1, ByteCount, hStream);
}

static CUresult fk_MemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount, CUstream hStream)
{
    ENTERI(MemcpyDtoDAsync);
    return copy_async(DP(dstDevice), 1, DP(srcDevice), 1, ByteCount, hStream);
}

/* One end of a 2D/3D copy: host or device memory (arrays are not faked),
 * and where its box starts. */
struct box_end {
    unsigned char *base;
    int dev;
    size_t x, y, z, pitch, height;
};

static CUresult box_end(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y,
                        size_t z, size_t pitch, size_t height, struct box_end *out)
{
    if (t != CU_MEMORYTYPE_HOST && t != CU_MEMORYTYPE_DEVICE && t != CU_MEMORYTYPE_UNIFIED)
        return CUDA_ERROR_NOT_SUPPORTED; /* arrays */
    out->base = t == CU_MEMORYTYPE_HOST ? (unsigned char *)(uintptr_t)host : DP(dev);
    out->dev = t != CU_MEMORYTYPE_HOST;
    out->x = x, out->y = y, out->z = z, out->pitch = pitch, out->height = height;
    return out->base ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The last 2D/3D copy (under G): its width, rows and depth, and the byte
 * offsets of its first source and destination row from their bases
 * (fakecuda_last_copy_box); -1: none since reset. */
static long long g_last_box[5] = {-1, -1, -1, -1, -1};

/* A box of depth slices of rows rows of width bytes, row by row (the
 * device rows checked against the allocations, as copy_sync does). */
static CUresult copy_box(const struct box_end *d, const struct box_end *s, size_t width,
                         size_t rows, size_t depth)
{
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        for (size_t k = 0; e == CUDA_SUCCESS && k < depth; k++)
            for (size_t r = 0; e == CUDA_SUCCESS && r < rows; r++) {
                unsigned char *dp = d->base + ((d->z + k) * d->height + d->y + r) * d->pitch + d->x;
                const unsigned char *sp =
                    s->base + ((s->z + k) * s->height + s->y + r) * s->pitch + s->x;
                if ((d->dev && !mem_containing((uintptr_t)dp, width)) ||
                    (s->dev && !mem_containing((uintptr_t)sp, width)))
                    e = CUDA_ERROR_INVALID_VALUE;
                else
                    memmove(dp, sp, width);
            }
        long long box[5] = {(long long)width, (long long)rows, (long long)depth,
                            (long long)((s->z * s->height + s->y) * s->pitch + s->x),
                            (long long)((d->z * d->height + d->y) * d->pitch + d->x)};
        memcpy(g_last_box, box, sizeof box);
    }
    UNLOCK();
    return e;
}

static CUresult memcpy2d(const CUDA_MEMCPY2D *p)
{
    struct box_end s, d;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = box_end(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, 0,
                         p->srcPitch, 0, &s);
    if (e == CUDA_SUCCESS)
        e = box_end(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, 0,
                    p->dstPitch, 0, &d);
    return e == CUDA_SUCCESS ? copy_box(&d, &s, p->WidthInBytes, p->Height, 1) : e;
}

static CUresult fk_Memcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
    ENTERI(Memcpy2D);
    return memcpy2d(pCopy);
}

static CUresult fk_Memcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    ENTERI(Memcpy2DUnaligned);
    return memcpy2d(pCopy);
}

static CUresult fk_Memcpy3D_v2(const CUDA_MEMCPY3D *p)
{
    ENTERI(Memcpy3D);
    struct box_end s, d;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = box_end(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY,
                         p->srcZ, p->srcPitch, p->srcHeight, &s);
    if (e == CUDA_SUCCESS)
        e = box_end(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY,
                    p->dstZ, p->dstPitch, p->dstHeight, &d);
    return e == CUDA_SUCCESS ? copy_box(&d, &s, p->WidthInBytes, p->Height, p->Depth) : e;
}

long long fakecuda_last_copy_box(long long *out5)
{
    if (!out5)
        return -1;
    LOCK();
    memcpy(out5, g_last_box, sizeof g_last_box);
    UNLOCK();
    return out5[0] < 0 ? -1 : 0;
}

static CUresult fk_MemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    ENTERI(MemsetD8);
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        if (!mem_containing((uintptr_t)dstDevice, N))
            e = CUDA_ERROR_INVALID_VALUE;
        else
            memset(DP(dstDevice), uc, N);
    }
    UNLOCK();
    return e;
}

static CUresult fk_MemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    ENTERI(MemsetD32);
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        if ((dstDevice & 3) || N > SIZE_MAX / 4 || !mem_containing((uintptr_t)dstDevice, N * 4))
            e = CUDA_ERROR_INVALID_VALUE;
        else
            for (size_t i = 0; i < N; i++)
                memcpy((unsigned char *)DP(dstDevice) + 4 * i, &ui, 4);
    }
    UNLOCK();
    return e;
}

/* One pointer attribute of allocation m (under G). */
static CUresult pointer_attribute(struct mem *m, CUpointer_attribute attribute, CUdeviceptr ptr,
                                  void *data)
{
    CUresult e = CUDA_SUCCESS;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = (CUcontext)(void *)m->h.owner;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data =
            m->h.kind == K_DMEM ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = ptr;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (m->h.kind == K_HMEM)
            *(void **)data = DP(ptr);
        else
            e = CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = (unsigned long long)m->h.id;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = m->dev;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = (CUdeviceptr)m->h.key;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = m->size;
        break;
    default:
        e = CUDA_ERROR_NOT_SUPPORTED; /* not modelled by the fake */
        break;
    }
    return e;
}

static CUresult fk_PointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    ENTERI(PointerGetAttribute);
    if (!data || (int)attribute < 1 || (int)attribute > 21)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct mem *m = mem_containing((uintptr_t)ptr, 0);
    CUresult e = m ? pointer_attribute(m, attribute, ptr, data) : CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    return e;
}

/* cudaProfiler.h: nothing to profile; only counted (fakecuda_call_count)
 * and checked for cuInit. The fake has no GL, EGL or VDPAU interop:
 * those lookups answer CUDA_ERROR_NOT_FOUND. */
static CUresult fk_ProfilerStart(void)
{
    ENTERI(ProfilerStart);
    return CUDA_SUCCESS;
}

static CUresult fk_ProfilerStop(void)
{
    ENTERI(ProfilerStop);
    return CUDA_SUCCESS;
}

/* The list form: like the driver, a pointer that is no allocation gets
 * default values (0; -2, CU_DEVICE_INVALID, for the device ordinal) and
 * CUDA_SUCCESS. Each data[i] has room for the value of attributes[i]. */
static CUresult fk_PointerGetAttributes(unsigned int numAttributes,
                                        CUpointer_attribute *attributes, void **data,
                                        CUdeviceptr ptr)
{
    ENTERI(PointerGetAttributes);
    if (!numAttributes || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned int i = 0; i < numAttributes; i++)
        if (!data[i] || (int)attributes[i] < 1 || (int)attributes[i] > 21)
            return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct mem *m = mem_containing((uintptr_t)ptr, 0);
    for (unsigned int i = 0; e == CUDA_SUCCESS && i < numAttributes; i++) {
        if (m)
            e = pointer_attribute(m, attributes[i], ptr, data[i]);
        else if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
            *(int *)data[i] = -2;
        else
            memset(data[i], 0, sizeof(unsigned long long));
    }
    UNLOCK();
    return e;
}

/* ------------------------------------------------------------------ */
/* User objects and (minimal) graphs: a graph only owns user-object refs. */

static CUresult fk_UserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy,
                                    unsigned int initialRefcount, unsigned int flags)
{
    ENTERI(UserObjectCreate);
    if (!object_out || !destroy || initialRefcount == 0 ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        return CUDA_ERROR_INVALID_VALUE;
    struct uobj *u = calloc(1, sizeof *u);
    if (!u)
        return CUDA_ERROR_OUT_OF_MEMORY;
    u->ptr = ptr;
    u->destroy = destroy;
    u->refs = initialRefcount;
    LOCK();
    reg_add(&u->h, K_UOBJ, 0, NULL);
    *object_out = (CUuserObject)(void *)u;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_UserObjectRetain(CUuserObject object, unsigned int count)
{
    ENTERI(UserObjectRetain);
    if (count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct uobj *u = (struct uobj *)reg_find((uintptr_t)object, K_UOBJ);
    CUresult e = !u ? CUDA_ERROR_INVALID_HANDLE
                    : u->refs > UINT32_MAX - count ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (e == CUDA_SUCCESS)
        u->refs += count;
    UNLOCK();
    return e;
}

static CUresult fk_UserObjectRelease(CUuserObject object, unsigned int count)
{
    ENTERI(UserObjectRelease);
    if (count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct uobj *u = (struct uobj *)reg_find((uintptr_t)object, K_UOBJ);
    /* Over-release is undefined in the driver; the fake reports it. */
    CUresult e = !u ? CUDA_ERROR_INVALID_HANDLE
                    : count > u->refs ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (e == CUDA_SUCCESS)
        uobj_unref(u, count);
    UNLOCK();
    return e;
}

static CUresult fk_GraphCreate(CUgraph *phGraph, unsigned int flags)
{
    ENTERI(GraphCreate);
    if (!phGraph || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    reg_add(&g->h, K_GRAPH, 0, NULL);
    *phGraph = (CUgraph)(void *)g;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_GraphDestroy(CUgraph hGraph)
{
    ENTERI(GraphDestroy);
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    if (g) {
        for (size_t i = 0; i < g->n; i++) {
            struct uobj *u = (struct uobj *)reg_find((uintptr_t)g->r[i].u, K_UOBJ);
            if (u && u->h.id == g->r[i].id && g->r[i].n)
                uobj_unref(u, g->r[i].n <= u->refs ? g->r[i].n : u->refs);
        }
        obj_free(&g->h);
    }
    UNLOCK();
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static struct gref *graph_ref(struct graph *g, struct uobj *u, int create)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->r[i].u == u && g->r[i].id == u->h.id)
            return &g->r[i];
    if (!create)
        return NULL;
    if (g->n == g->cap) {
        size_t nc = g->cap ? 2 * g->cap : 4;
        struct gref *nr = realloc(g->r, nc * sizeof *nr);
        if (!nr)
            return NULL;
        g->r = nr;
        g->cap = nc;
    }
    g->r[g->n] = (struct gref){u, u->h.id, 0};
    return &g->r[g->n++];
}

static CUresult fk_GraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                         unsigned int flags)
{
    ENTERI(GraphRetainUserObject);
    if (count == 0 || (flags & ~(unsigned)CU_GRAPH_USER_OBJECT_MOVE))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct graph *g = (struct graph *)reg_find((uintptr_t)graph, K_GRAPH);
    struct uobj *u = (struct uobj *)reg_find((uintptr_t)object, K_UOBJ);
    struct gref *r = NULL;
    if (!g || !u)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if ((flags & CU_GRAPH_USER_OBJECT_MOVE) ? count > u->refs : u->refs > UINT32_MAX - count)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!(r = graph_ref(g, u, 1)))
        e = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        if (!(flags & CU_GRAPH_USER_OBJECT_MOVE))
            u->refs += count;
        r->n += count;
    }
    UNLOCK();
    return e;
}

static CUresult fk_GraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count)
{
    ENTERI(GraphReleaseUserObject);
    if (count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct graph *g = (struct graph *)reg_find((uintptr_t)graph, K_GRAPH);
    struct uobj *u = (struct uobj *)reg_find((uintptr_t)object, K_UOBJ);
    struct gref *r = NULL;
    if (!g || !u)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!(r = graph_ref(g, u, 0)) || count > r->n || count > u->refs)
        e = CUDA_ERROR_INVALID_VALUE;
    else {
        r->n -= count;
        uobj_unref(u, count);
    }
    UNLOCK();
    return e;
}

/* ------------------------------------------------------------------ */
/* Modules, libraries, functions. Any image loads; any name resolves. */

static struct func *func_new(const char *name, struct ctx *owner)
{
    struct func *f = calloc(1, sizeof *f);
    if (!f || !(f->name = fk_strdup(name))) {
        free(f);
        return NULL;
    }
    f->nparams = -1;
    reg_add(&f->h, K_FUNC, 0, owner);
    return f;
}

static CUresult module_load(CUmodule *module, const void *image)
{
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    if (c) {
        struct module *m = calloc(1, sizeof *m);
        if (!m)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            record_image(image);
            reg_add(&m->h, K_MODULE, 0, c);
            *module = (CUmodule)(void *)m;
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_ModuleLoadData(CUmodule *module, const void *image)
{
    ENTERI(ModuleLoadData);
    return module_load(module, image);
}

static CUresult fk_ModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    ENTERI(ModuleLoadDataEx);
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    return module_load(module, image);
}

/* A fat binary is an image as any other here (the packer reads its PTX). */
static CUresult fk_ModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    ENTERI(ModuleLoadFatBinary);
    return module_load(module, fatCubin);
}

/* A file the fake loads code from: it must exist; its path is the image. */
static CUresult code_file(const char *path)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return path ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
    fclose(f);
    return CUDA_SUCCESS;
}

static CUresult fk_ModuleLoad(CUmodule *module, const char *fname)
{
    ENTERI(ModuleLoad);
    CUresult e = code_file(fname);
    return e != CUDA_SUCCESS ? e : module_load(module, fname);
}

static CUresult fk_ModuleUnload(CUmodule hmod)
{
    ENTERI(ModuleUnload);
    LOCK();
    struct obj *o = reg_find((uintptr_t)hmod, K_MODULE);
    if (o)
        obj_free(o);
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* m's function `name`, made on first use (under G); NULL: out of memory. */
static struct func *module_function(struct module *m, const char *name)
{
    struct func *f;
    for (f = m->funcs; f && strcmp(f->name, name) != 0; f = f->sib)
        ;
    if (!f && (f = func_new(name, NULL))) {
        f->mod = m;
        f->sib = m->funcs;
        m->funcs = f;
    }
    return f;
}

static CUresult fk_ModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    ENTERI(ModuleGetFunction);
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct module *m = (struct module *)reg_find((uintptr_t)hmod, K_MODULE);
    if (!m)
        m = (struct module *)reg_find((uintptr_t)hmod, K_LIBMODULE);
    struct func *f = NULL;
    if (!m)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!(f = module_function(m, name)))
        e = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *hfunc = (CUfunction)(void *)f;
    UNLOCK();
    return e;
}

/* A module holds the functions cuModuleGetFunction resolved in it so far
 * (any name resolves), a library the kernels cuLibraryGetKernel resolved:
 * sibling lists, newest first, which the driver counts and enumerates
 * oldest first. sib_list walks one (next: a member's sibling) and returns
 * how many members it has; with put, it hands put the first cap members
 * of the oldest-first order with their index there. At most cap handles
 * are written; the rest of the caller's array is left as it was. */
typedef const void *(*sib_next_fn)(const void *member);
typedef void (*sib_put_fn)(void *out, unsigned int index, const void *member);

static unsigned int sib_list(const void *first, sib_next_fn next, sib_put_fn put, void *out,
                             unsigned int cap)
{
    unsigned int n = 0;
    for (const void *p = first; p; p = next(p))
        n++;
    /* entry i of the oldest-first order is n - 1 - (its place in the list) */
    unsigned int i = n;
    for (const void *p = put ? first : NULL; p; p = next(p))
        if (--i < cap)
            put(out, i, p);
    return n;
}

static const void *func_next(const void *f) { return ((const struct func *)f)->sib; }
static const void *kernel_next(const void *k) { return ((const struct kernel *)k)->sib; }

static void put_function(void *out, unsigned int i, const void *f)
{
    ((CUfunction *)out)[i] = (CUfunction)(uintptr_t)f;
}

static void put_kernel(void *out, unsigned int i, const void *k)
{
    ((CUkernel *)out)[i] = (CUkernel)(uintptr_t)k;
}

static CUresult fk_ModuleGetFunctionCount(unsigned int *count, CUmodule hmod)
{
    ENTERI(ModuleGetFunctionCount);
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct module *m = (struct module *)reg_find((uintptr_t)hmod, K_MODULE);
    if (m)
        *count = sib_list(m->funcs, func_next, NULL, NULL, 0);
    UNLOCK();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_ModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions,
                                            CUmodule mod)
{
    ENTERI(ModuleEnumerateFunctions);
    if (!functions && numFunctions)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct module *m = (struct module *)reg_find((uintptr_t)mod, K_MODULE);
    if (m)
        sib_list(m->funcs, func_next, put_function, functions, numFunctions);
    UNLOCK();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* cuLibraryLoadData's and cuLibraryLoadFromFile's body (code: the image,
 * or the file's path). */
static CUresult library_load(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                             void **jitOptionsValues, unsigned int numJitOptions,
                             CUlibraryOption *libraryOptions, void **libraryOptionValues,
                             unsigned int numLibraryOptions)
{
    if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
        (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    struct library *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    record_image(code);
    reg_add(&l->h, K_LIBRARY, 0, NULL);
    reg_add(&l->mod.h, K_LIBMODULE, 0, NULL);
    *library = (CUlibrary)(void *)l;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_LibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    ENTERI(LibraryLoadData);
    return library_load(library, code, jitOptions, jitOptionsValues, numJitOptions,
                        libraryOptions, libraryOptionValues, numLibraryOptions);
}

static CUresult fk_LibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                       CUjit_option *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions)
{
    ENTERI(LibraryLoadFromFile);
    CUresult e = code_file(fileName);
    return e != CUDA_SUCCESS ? e
                             : library_load(library, fileName, jitOptions, jitOptionsValues,
                                            numJitOptions, libraryOptions, libraryOptionValues,
                                            numLibraryOptions);
}

static CUresult fk_LibraryUnload(CUlibrary library)
{
    ENTERI(LibraryUnload);
    LOCK();
    struct obj *o = reg_find((uintptr_t)library, K_LIBRARY);
    if (o)
        obj_free(o);
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_LibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    ENTERI(LibraryGetModule);
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        struct library *l = (struct library *)reg_find((uintptr_t)library, K_LIBRARY);
        if (!l)
            e = CUDA_ERROR_INVALID_HANDLE;
        else
            *pMod = (CUmodule)(void *)&l->mod;
    }
    UNLOCK();
    return e;
}

static CUresult fk_LibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    ENTERI(LibraryGetKernel);
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct library *l = (struct library *)reg_find((uintptr_t)library, K_LIBRARY);
    struct kernel *k = NULL;
    if (!l)
        e = CUDA_ERROR_INVALID_HANDLE;
    else {
        for (k = l->kernels; k && strcmp(k->name, name) != 0; k = k->sib)
            ;
        if (!k && (k = calloc(1, sizeof *k)) != NULL) {
            if (!(k->name = fk_strdup(name))) {
                free(k);
                k = NULL;
            } else {
                reg_add(&k->h, K_KERNEL, 0, NULL);
                k->lib = l;
                k->sib = l->kernels;
                l->kernels = k;
            }
        }
        if (!k)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else
            *pKernel = (CUkernel)(void *)k;
    }
    UNLOCK();
    return e;
}

/* A library's kernels: counted and enumerated as a module's functions are
 * (sib_list). */
static CUresult fk_LibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    ENTERI(LibraryGetKernelCount);
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct library *l = (struct library *)reg_find((uintptr_t)lib, K_LIBRARY);
    if (l)
        *count = sib_list(l->kernels, kernel_next, NULL, NULL, 0);
    UNLOCK();
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_LibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
                                           CUlibrary lib)
{
    ENTERI(LibraryEnumerateKernels);
    if (!kernels && numKernels)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct library *l = (struct library *)reg_find((uintptr_t)lib, K_LIBRARY);
    if (l)
        sib_list(l->kernels, kernel_next, put_kernel, kernels, numKernels);
    UNLOCK();
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_KernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    ENTERI(KernelGetFunction);
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    if (cur_ctx(&e)) {
        struct kernel *k = (struct kernel *)reg_find((uintptr_t)kernel, K_KERNEL);
        if (!k)
            e = CUDA_ERROR_INVALID_HANDLE;
        else if (!k->fn && !(k->fn = module_function(&k->lib->mod, k->name)))
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else
            *pFunc = (CUfunction)(void *)k->fn;
    }
    UNLOCK();
    return e;
}

/* A CUfunction, or a CUkernel passed in its place (the driver allows that). */
static struct func *func_lookup(CUfunction h, const char **name)
{
    struct func *f = (struct func *)reg_find((uintptr_t)h, K_FUNC);
    if (f) {
        *name = f->name;
        return f;
    }
    struct kernel *k = (struct kernel *)reg_find((uintptr_t)h, K_KERNEL);
    if (k) {
        *name = k->name;
        return k->fn; /* may be NULL: then only the layout by name applies */
    }
    *name = NULL;
    return NULL;
}

/* The kernels the fake runs, so that examples/ can check their results on
 * it in CI, each on the launch stream, in its order, over the elements the
 * grid covers; a pointer not in the fake's memory for those elements writes
 * nothing. A kernel's layout applies unless one was set.
 *   vectorAdd(const float *A, const float *B, float *C, int n): C[i] = A[i] + B[i]
 *   scaleArray(float *p, int n, float a): p[i] = a * p[i]  (examples/nvrtc_launch.py) */
static const size_t vector_add_off[4] = {0, 8, 16, 24}, vector_add_sz[4] = {8, 8, 8, 4};
static const size_t scale_off[3] = {0, 8, 12}, scale_sz[3] = {8, 4, 4};

/* The number of elements a kernel of n elements covers with threads threads. */
static size_t covered(int n, unsigned long long threads)
{
    return n < 0 ? 0 : (size_t)n < threads ? (size_t)n : (size_t)threads;
}

static void run_vector_add(const unsigned char *bytes, unsigned long long threads)
{
    uintptr_t p[3];
    int n;
    memcpy(p, bytes, sizeof p);
    memcpy(&n, bytes + 24, sizeof n);
    size_t count = covered(n, threads);
    for (int i = 0; i < 3; i++)
        if (count && !mem_containing(p[i], count * sizeof(float)))
            return;
    const float *a = (const float *)p[0], *b = (const float *)p[1];
    float *c = (float *)p[2];
    for (size_t i = 0; i < count; i++)
        c[i] = a[i] + b[i];
}

static void run_scale(const unsigned char *bytes, unsigned long long threads)
{
    uintptr_t p;
    int n;
    float a;
    memcpy(&p, bytes, sizeof p);
    memcpy(&n, bytes + 8, sizeof n);
    memcpy(&a, bytes + 12, sizeof a);
    size_t count = covered(n, threads);
    if (count && !mem_containing(p, count * sizeof(float)))
        return;
    float *x = (float *)p;
    for (size_t i = 0; i < count; i++)
        x[i] = a * x[i];
}

static const struct fk_kernel fk_kernels[] = {
    {"vectorAdd", 4, vector_add_off, vector_add_sz, 28, run_vector_add},
    {"scaleArray", 3, scale_off, scale_sz, 16, run_scale},
};

/* The kernel the fake runs by that name, or NULL. */
static const struct fk_kernel *fk_kernel_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof fk_kernels / sizeof fk_kernels[0]; i++)
        if (strcmp(fk_kernels[i].name, name) == 0)
            return &fk_kernels[i];
    return NULL;
}

/* Effective layout: the function's own, else by name, else none (n = -1). */
static int layout_of(struct func *f, const char *name, const size_t **off, const size_t **sz)
{
    if (f && f->nparams >= 0) {
        *off = f->off;
        *sz = f->sz;
        return f->nparams;
    }
    struct layout *l = layout_find(name);
    if (l) {
        *off = l->off;
        *sz = l->sz;
        return l->n;
    }
    const struct fk_kernel *k = fk_kernel_named(name);
    if (k) {
        *off = k->off;
        *sz = k->sz;
        return k->nparams;
    }
    return -1;
}

static CUresult fk_FuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                    size_t *paramSize)
{
    ENTERI(FuncGetParamInfo);
    LOCK();
    CUresult e = CUDA_SUCCESS;
    /* a CUkernel is refused here (INVALID_HANDLE), as by the real driver:
     * its parameters are cuKernelGetParamInfo's */
    struct func *f = (struct func *)reg_find((uintptr_t)func, K_FUNC);
    const char *name = f ? f->name : NULL;
    const size_t *off = NULL, *sz = NULL;
    int n;
    if (!name)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if ((n = layout_of(f, name, &off, &sz)) < 0 || paramIndex >= (size_t)n)
        e = CUDA_ERROR_INVALID_VALUE;
    else {
        if (paramOffset)
            *paramOffset = off[paramIndex];
        if (paramSize)
            *paramSize = sz[paramIndex];
    }
    UNLOCK();
    return e;
}

static CUresult fk_FuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    ENTERI(FuncGetAttribute);
    if (!pi || (int)attrib < 0 || (int)attrib >= (int)CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    const char *name;
    func_lookup(hfunc, &name);
    CUresult e = name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    if (e != CUDA_SUCCESS)
        return e;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 48 * 1024; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Launches: nothing runs; the packed parameters and dims are recorded. */

/* The bytes a kernel receives from kernelParams (each at its declared
 * offset, gaps zero) or from extra's CU_LAUNCH_PARAM_BUFFER_POINTER; the
 * driver copies them at launch (and when a graph node is set). Caller
 * holds G. */
static CUresult capture_params(struct func *f, const char *name, void **kernelParams, void **extra,
                               unsigned char **bytes_out, size_t *len_out, int *mode_out)
{
    CUresult e = CUDA_SUCCESS;
    unsigned char *bytes = NULL;
    size_t len = 0;
    int mode = 0;
    const size_t *off = NULL, *sz = NULL;
    int n = layout_of(f, name, &off, &sz);
    size_t need = 0;
    for (int i = 0; i < n; i++)
        if (off[i] + sz[i] > need)
            need = off[i] + sz[i];
    if (kernelParams) {
        mode = 1;
        if (n > 0 && !(bytes = calloc(1, need ? need : 1))) {
            e = CUDA_ERROR_OUT_OF_MEMORY;
            goto fail;
        }
        for (int i = 0; i < n; i++) {
            if (!kernelParams[i]) {
                e = CUDA_ERROR_INVALID_VALUE;
                goto fail;
            }
            memcpy(bytes + off[i], kernelParams[i], sz[i]);
        }
        len = n > 0 ? need : 0;
    } else if (extra) {
        void *bp = NULL;
        size_t *sp = NULL;
        mode = 2;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                bp = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                sp = extra[i + 1];
            else {
                e = CUDA_ERROR_INVALID_VALUE;
                goto fail;
            }
        }
        if (!bp || !sp || (n > 0 && *sp < need)) {
            e = CUDA_ERROR_INVALID_VALUE;
            goto fail;
        }
        len = *sp;
        if (len && !(bytes = malloc(len))) {
            e = CUDA_ERROR_OUT_OF_MEMORY;
            goto fail;
        }
        if (len)
            memcpy(bytes, bp, len);
    } else if (n > 0) {
        e = CUDA_ERROR_INVALID_VALUE;
        goto fail;
    }
    *bytes_out = bytes;
    *len_out = len;
    *mode_out = mode;
    return CUDA_SUCCESS;
fail:
    free(bytes);
    return e;
}

static CUresult launch(CUfunction hf, const unsigned g[3], const unsigned b[3], unsigned shmem,
                       CUstream hStream, void **kernelParams, void **extra)
{
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    const char *name = NULL;
    struct func *f = NULL;
    struct stream *s = NULL;
    unsigned char *bytes = NULL;
    size_t len = 0;
    int mode = 0;
    if (!c)
        goto out;
    f = func_lookup(hf, &name);
    if (!name) {
        e = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2] ||
        (unsigned long long)b[0] * b[1] * b[2] > 1024 || (kernelParams && extra)) {
        e = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if ((e = stream_resolve(hStream, &s)) != CUDA_SUCCESS)
        goto out;
    if ((e = capture_params(f, name, kernelParams, extra, &bytes, &len, &mode)) != CUDA_SUCCESS)
        goto out;
    struct lrec *r = lrec_find(name, 1);
    if (!r) {
        e = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    free(r->bytes);
    r->bytes = bytes;
    bytes = NULL;
    r->len = len;
    r->count++;
    r->mode = mode;
    r->stream = (void *)hStream;
    unsigned d[9] = {g[0], g[1], g[2], b[0], b[1], b[2], shmem, hStream == NULL, 0};
    memcpy(r->dims, d, sizeof d);
    const struct fk_kernel *k = fk_kernel_named(name);
    if (k && r->len >= k->len && k->len <= sizeof ((struct work *)0)->kargs) {
        struct work *w = calloc(1, sizeof *w);
        if (!w) {
            e = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        w->type = W_KERNEL;
        w->kern = k;
        memcpy(w->kargs, r->bytes, k->len);
        w->threads = (unsigned long long)g[0] * g[1] * g[2] * b[0] * b[1] * b[2];
        e = stream_enqueue(s, w);
    }
out:
    free(bytes);
    UNLOCK();
    return e;
}

static CUresult fk_LaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra)
{
    ENTERI(LaunchKernel);
    unsigned g[3] = {gridDimX, gridDimY, gridDimZ}, b[3] = {blockDimX, blockDimY, blockDimZ};
    return launch(f, g, b, sharedMemBytes, hStream, kernelParams, extra);
}

/* The attributes of the last cuLaunchKernelEx (under G): per attribute its
 * id and the first 8 bytes of its value; g_launch_attrs_n = numAttrs (-1:
 * never called), the first FK_LAUNCH_ATTRS_MAX kept. The fake reads every
 * one of numAttrs, as the driver does. */
#define FK_LAUNCH_ATTRS_MAX 8
static unsigned long long g_launch_attrs[FK_LAUNCH_ATTRS_MAX][2];
static long long g_launch_attrs_n = -1;

static CUresult fk_LaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    ENTERI(LaunchKernelEx);
    if (!config || (config->numAttrs && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    g_launch_attrs_n = config->numAttrs;
    for (unsigned i = 0; i < config->numAttrs && i < FK_LAUNCH_ATTRS_MAX; i++) {
        unsigned long long v;
        memcpy(&v, &config->attrs[i].value, sizeof v);
        g_launch_attrs[i][0] = (unsigned long long)config->attrs[i].id;
        g_launch_attrs[i][1] = v;
    }
    UNLOCK();
    unsigned g[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    unsigned b[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    return launch(f, g, b, config->sharedMemBytes, config->hStream, kernelParams, extra);
}

static CUresult fk_LaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams)
{
    ENTERI(LaunchCooperativeKernel);
    unsigned g[3] = {gridDimX, gridDimY, gridDimZ}, b[3] = {blockDimX, blockDimY, blockDimZ};
    return launch(f, g, b, sharedMemBytes, hStream, kernelParams, NULL);
}

/* The entries of the last cuLaunchCooperativeKernelMultiDevice (under G):
 * per entry function, grid x,y,z, block x,y,z, sharedMemBytes, hStream;
 * g_multi_n = numDevices (-1: never called), the first FK_MULTI_MAX kept. */
#define FK_MULTI_MAX 8
static unsigned long long g_multi[FK_MULTI_MAX][9];
static long long g_multi_n = -1;
static unsigned g_multi_flags;

/* Reads all numDevices entries (as the driver does: a caller passing fewer
 * makes it read past them) and launches each in the current context. */
static CUresult fk_LaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList,
                                                      unsigned int numDevices, unsigned int flags)
{
    ENTERI(LaunchCooperativeKernelMultiDevice);
    if (!launchParamsList || !numDevices || (flags & ~3u))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    g_multi_n = numDevices;
    g_multi_flags = flags;
    for (unsigned i = 0; i < numDevices; i++) {
        const CUDA_LAUNCH_PARAMS *p = &launchParamsList[i];
        unsigned long long rec[9] = {(uintptr_t)p->function, p->gridDimX, p->gridDimY,
                                     p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                                     p->sharedMemBytes, (uintptr_t)p->hStream};
        if (i < FK_MULTI_MAX)
            memcpy(g_multi[i], rec, sizeof rec);
    }
    UNLOCK();
    for (unsigned i = 0; i < numDevices; i++) {
        const CUDA_LAUNCH_PARAMS *p = &launchParamsList[i];
        unsigned g[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
        unsigned b[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
        CUresult e = launch(p->function, g, b, p->sharedMemBytes, p->hStream, p->kernelParams, NULL);
        if (e != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Occupancy: a made-up model that the tests recompute exactly. Block sizes
 * 32, 64, ... up to blockSizeLimit (0: 1024) are tried in that order, each
 * needing smem = blockSizeToDynamicSMemSize(size) (when given, else
 * dynamicSMemSize) bytes. Blocks per SM: min(2048 / size, 32, and when
 * smem > 0, 65536 / smem). The result is the size of most resident threads
 * (blocks * size; the larger size on a tie), minGridSize its blocks per SM
 * times FK_OCC_SMS. The callback runs on the calling thread, outside G.
 * The values the callback returned in this thread's last call are kept
 * (fakecuda_last_occupancy_calls); with fakecuda_set_occupancy_foreign(1)
 * the callback is first called once more, from a thread of the fake, with
 * block size 32 (fakecuda_last_foreign_b2d). */
#define FK_OCC_SMS 4
#define FK_OCC_MAX_CALLS 64
static _Thread_local long long t_occ_values[FK_OCC_MAX_CALLS];
static _Thread_local int t_occ_calls;
static atomic_int g_occ_foreign;
static atomic_llong g_occ_foreign_result = -1;

static void *occ_foreign_call(void *cb)
{
    CUoccupancyB2DSize f;
    memcpy(&f, &cb, sizeof f);
    atomic_store(&g_occ_foreign_result, (long long)f(32));
    return NULL;
}

static CUresult occupancy(int *minGridSize, int *blockSize, CUfunction func,
                          CUoccupancyB2DSize b2d, size_t dynamicSMemSize, int blockSizeLimit,
                          unsigned flags)
{
    if (!minGridSize || !blockSize || blockSizeLimit < 0 || (flags & ~1u))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e;
    struct ctx *c = cur_ctx(&e);
    const char *name = NULL;
    if (c)
        func_lookup(func, &name);
    UNLOCK();
    if (!c)
        return e;
    if (!name)
        return CUDA_ERROR_INVALID_HANDLE;
    if (b2d && atomic_load(&g_occ_foreign)) {
        pthread_t t;
        void *arg;
        memcpy(&arg, &b2d, sizeof arg);
        if (pthread_create(&t, NULL, occ_foreign_call, arg) != 0)
            return CUDA_ERROR_OPERATING_SYSTEM;
        pthread_join(t, NULL);
    }
    int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
    long long best_threads = 0, best_blocks = 0;
    int best_size = 0;
    t_occ_calls = 0;
    for (int size = 32; size <= limit; size += 32) {
        size_t smem = dynamicSMemSize;
        if (b2d) {
            smem = b2d(size);
            if (t_occ_calls < FK_OCC_MAX_CALLS)
                t_occ_values[t_occ_calls++] = (long long)smem;
        }
        long long blocks = 2048 / size < 32 ? 2048 / size : 32;
        if (smem && (long long)(65536 / smem) < blocks)
            blocks = (long long)(65536 / smem);
        if (blocks * size >= best_threads && blocks > 0) {
            best_threads = blocks * size;
            best_blocks = blocks;
            best_size = size;
        }
    }
    *blockSize = best_size;
    *minGridSize = (int)(best_blocks * FK_OCC_SMS);
    return CUDA_SUCCESS;
}

static CUresult fk_OccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                                  CUfunction func, CUoccupancyB2DSize b2d,
                                                  size_t dynamicSMemSize, int blockSizeLimit)
{
    ENTERI(OccupancyMaxPotentialBlockSize);
    return occupancy(minGridSize, blockSize, func, b2d, dynamicSMemSize, blockSizeLimit, 0);
}

static CUresult fk_OccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize,
                                                           CUfunction func,
                                                           CUoccupancyB2DSize b2d,
                                                           size_t dynamicSMemSize,
                                                           int blockSizeLimit, unsigned int flags)
{
    ENTERI(OccupancyMaxPotentialBlockSizeWithFlags);
    return occupancy(minGridSize, blockSize, func, b2d, dynamicSMemSize, blockSizeLimit, flags);
}

/* ------------------------------------------------------------------ */
/* Graph kernel nodes: a node copies its argument bytes when added or set
 * (as the driver does); cuGraphInstantiate copies the nodes; cuGraphLaunch
 * records each kernel node as a launch (fakecuda_last_launch_params). */

static CUresult kcap_make(const CUDA_KERNEL_NODE_PARAMS_v2 *p, struct kcap *k)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const char *name = NULL;
    struct func *f = func_lookup(p->func ? p->func : (CUfunction)(void *)p->kern, &name);
    if (!name)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!p->gridDimX || !p->gridDimY || !p->gridDimZ || !p->blockDimX || !p->blockDimY ||
        !p->blockDimZ || (p->kernelParams && p->extra))
        return CUDA_ERROR_INVALID_VALUE;
    struct kcap n = {0};
    CUresult e = capture_params(f, name, p->kernelParams, p->extra, &n.bytes, &n.len, &n.mode);
    if (e != CUDA_SUCCESS)
        return e;
    if (!(n.name = fk_strdup(name))) {
        free(n.bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    unsigned d[7] = {p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                     p->blockDimZ, p->sharedMemBytes};
    memcpy(n.dims, d, sizeof d);
    free(k->name);
    free(k->bytes);
    *k = n;
    return CUDA_SUCCESS;
}

static CUresult kcap_copy(struct kcap *dst, const struct kcap *src)
{
    *dst = *src;
    dst->name = src->name ? fk_strdup(src->name) : NULL;
    dst->bytes = src->len ? malloc(src->len) : NULL;
    if ((src->name && !dst->name) || (src->len && !dst->bytes)) {
        free(dst->name);
        free(dst->bytes);
        memset(dst, 0, sizeof *dst);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (src->len)
        memcpy(dst->bytes, src->bytes, src->len);
    return CUDA_SUCCESS;
}

static CUresult graph_add(struct graph *g, const CUDA_KERNEL_NODE_PARAMS_v2 *p, CUgraphNode *out)
{
    struct gnode *n = calloc(1, sizeof *n);
    struct gnode **more = realloc(g->nodes, (g->nn + 1) * sizeof *more);
    if (!n || !more) {
        free(n);
        if (more)
            g->nodes = more;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->nodes = more;
    CUresult e = kcap_make(p, &n->k);
    if (e != CUDA_SUCCESS) {
        free(n);
        return e;
    }
    reg_add(&n->h, K_GNODE, 0, NULL);
    g->nodes[g->nn++] = n;
    *out = (CUgraphNode)(void *)n;
    return CUDA_SUCCESS;
}

/* cuGraphGetNodes / cuGraphGetRootNodes (the fake's nodes have no edges:
 * every node is a root). As the driver documents: nodes NULL only counts;
 * else the first min(*num, nodes) entries are the nodes, every further
 * entry up to *num is set to NULL, and *num becomes the number filled. */
static CUresult graph_nodes(CUgraph hGraph, CUgraphNode *nodes, size_t *num)
{
    if (!num)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    CUresult e = g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (g && nodes) {
        size_t n = g->nn < *num ? g->nn : *num;
        for (size_t i = 0; i < *num; i++)
            nodes[i] = i < n ? (CUgraphNode)(void *)g->nodes[i] : NULL;
        *num = n;
    } else if (g) {
        *num = g->nn;
    }
    UNLOCK();
    return e;
}

static CUresult fk_GraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    ENTERI(GraphGetNodes);
    return graph_nodes(hGraph, nodes, numNodes);
}

static CUresult fk_GraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{
    ENTERI(GraphGetRootNodes);
    return graph_nodes(hGraph, rootNodes, numRootNodes);
}

/* cuGraphGetEdges: the fake's graphs have no edges. As documented: from
 * and to NULL only count; else every entry up to *numEdges of from, to
 * (and edgeData, when given) is cleared, and *numEdges becomes 0. */
static CUresult fk_GraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                 CUgraphEdgeData *edgeData, size_t *numEdges)
{
    ENTERI(GraphGetEdges);
    if (!numEdges || (!from != !to))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = reg_find((uintptr_t)hGraph, K_GRAPH) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (e == CUDA_SUCCESS && from) {
        for (size_t i = 0; i < *numEdges; i++) {
            from[i] = to[i] = NULL;
            if (edgeData)
                memset(&edgeData[i], 0, sizeof edgeData[i]);
        }
    }
    if (e == CUDA_SUCCESS)
        *numEdges = 0;
    UNLOCK();
    return e;
}

static CUresult fk_GraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ENTERI(GraphAddKernelNode);
    if (!phGraphNode || (numDependencies && !dependencies))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    CUresult e = g ? graph_add(g, nodeParams, phGraphNode) : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return e;
}

/* Host nodes (cuGraphAddHostNode, cuGraphAddNode of a host node): run on
 * the stream's own thread at each cuGraphLaunch, as captured host
 * functions are; cuGraphHostNodeSetParams gives the graph's node a new
 * function and data (executable graphs made before keep theirs). */
static CUresult fk_GraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                    const CUgraphNode *dependencies, size_t numDependencies,
                                    const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    ENTERI(GraphAddHostNode);
    if (!phGraphNode || !nodeParams || !nodeParams->fn || (numDependencies && !dependencies))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    CUresult e = g ? graph_add_host(g, nodeParams->fn, nodeParams->userData, phGraphNode)
                   : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return e;
}

static CUresult fk_GraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    ENTERI(GraphHostNodeSetParams);
    if (!nodeParams || !nodeParams->fn)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct gnode *n = (struct gnode *)reg_find((uintptr_t)hNode, K_GNODE);
    CUresult e = !n ? CUDA_ERROR_INVALID_HANDLE : n->k.name ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (e == CUDA_SUCCESS) {
        n->k.fn = nodeParams->fn;
        n->k.ud = nodeParams->userData;
    }
    UNLOCK();
    return e;
}

/* The external semaphores of the last cuGraphAddExternalSemaphoresSignalNode
 * or cuGraphAddNode of a signal node (under G): g_ext_sems_n = numExtSems (-1: never called), the first
 * FK_EXT_SEMS_MAX handle values kept. The fake reads every one of
 * numExtSems, as the driver does, and has no semaphore nodes: a call on a
 * live graph is recorded and answers CUDA_ERROR_NOT_SUPPORTED. */
#define FK_EXT_SEMS_MAX 8
static unsigned long long g_ext_sems[FK_EXT_SEMS_MAX];
static long long g_ext_sems_n = -1;

/* A signal node of n semaphores for hGraph: recorded, never made. */
static CUresult signal_node(CUgraph hGraph, CUexternalSemaphore const *arr, const void *params,
                            unsigned n)
{
    if (n && (!arr || !params))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = reg_find((uintptr_t)hGraph, K_GRAPH) ? CUDA_ERROR_NOT_SUPPORTED
                                                       : CUDA_ERROR_INVALID_HANDLE;
    if (e == CUDA_ERROR_NOT_SUPPORTED) {
        g_ext_sems_n = n;
        for (unsigned i = 0; i < n; i++) {
            unsigned long long v = (unsigned long long)(uintptr_t)arr[i];
            if (i < FK_EXT_SEMS_MAX)
                g_ext_sems[i] = v;
        }
    }
    UNLOCK();
    return e;
}

/* Conditional nodes (cuGraphAddNode): the driver makes `size` body graphs
 * and writes its own array of them into the caller's phGraph_out. The
 * fake's arrays are FK_COND_SLOTS fixed slots reused in turn (an array
 * stays valid for that many later nodes; the bodies are registered graphs,
 * freed by fakecuda_reset like any). The node is recorded as a kernel node
 * named "conditional" that is never launched with parameters. */
#define FK_COND_MAX 8
#define FK_COND_SLOTS 64
static CUgraph g_cond_bodies[FK_COND_SLOTS][FK_COND_MAX];
static unsigned g_cond_next; /* under G */

static CUresult conditional_add(CUgraph hGraph, CUDA_CONDITIONAL_NODE_PARAMS *c, CUgraphNode *out)
{
    if (c->size == 0 || c->size > FK_COND_MAX ||
        (c->type == CU_GRAPH_COND_TYPE_IF && c->size > 2) ||
        (c->type == CU_GRAPH_COND_TYPE_WHILE && c->size != 1))
        return CUDA_ERROR_INVALID_VALUE;
    struct gnode *n = calloc(1, sizeof *n);
    struct graph *bodies[FK_COND_MAX] = {0};
    int ok = n != NULL;
    for (unsigned i = 0; ok && i < c->size; i++)
        ok = (bodies[i] = calloc(1, sizeof *bodies[i])) != NULL;
    if (ok)
        ok = (n->k.name = fk_strdup("conditional")) != NULL;
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    struct gnode **more = ok && g ? realloc(g->nodes, (g->nn + 1) * sizeof *more) : NULL;
    if (!g || !more) {
        UNLOCK();
        for (unsigned i = 0; i < FK_COND_MAX; i++)
            free(bodies[i]);
        if (n)
            free(n->k.name);
        free(n);
        return !g ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->nodes = more;
    CUgraph *slot = g_cond_bodies[g_cond_next++ % FK_COND_SLOTS];
    for (unsigned i = 0; i < c->size; i++) {
        reg_add(&bodies[i]->h, K_GRAPH, 0, NULL);
        slot[i] = (CUgraph)(void *)bodies[i];
    }
    reg_add(&n->h, K_GNODE, 0, NULL);
    g->nodes[g->nn++] = n;
    c->phGraph_out = slot;
    *out = (CUgraphNode)(void *)n;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_GraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                const CUgraphNode *dependencies,
                                const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                CUgraphNodeParams *nodeParams)
{
    ENTERI(GraphAddNode);
    (void)dependencyData;
    if (!phGraphNode || !nodeParams || (numDependencies && !dependencies))
        return CUDA_ERROR_INVALID_VALUE;
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL) {
        /* recorded as by cuGraphAddExternalSemaphoresSignalNode: every one
         * of numExtSems read, no node made */
        const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2 *sp = &nodeParams->extSemSignal;
        return signal_node(hGraph, sp->extSemArray, sp->paramsArray, sp->numExtSems);
    }
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return conditional_add(hGraph, &nodeParams->conditional, phGraphNode);
    if (nodeParams->type == CU_GRAPH_NODE_TYPE_HOST) {
        if (!nodeParams->host.fn)
            return CUDA_ERROR_INVALID_VALUE;
        LOCK();
        struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
        CUresult e = g ? graph_add_host(g, nodeParams->host.fn, nodeParams->host.userData,
                                        phGraphNode)
                       : CUDA_ERROR_INVALID_HANDLE;
        UNLOCK();
        return e;
    }
    if (nodeParams->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_NOT_SUPPORTED; /* kernel, host and conditional nodes only */
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memcpy(&p, &nodeParams->kernel, sizeof p); /* v3 has v2's layout */
    LOCK();
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    CUresult e = g ? graph_add(g, &p, phGraphNode) : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return e;
}

static CUresult fk_GraphAddExternalSemaphoresSignalNode(
    CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
    size_t numDependencies, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams)
{
    ENTERI(GraphAddExternalSemaphoresSignalNode);
    if (!phGraphNode || !nodeParams || (numDependencies && !dependencies))
        return CUDA_ERROR_INVALID_VALUE;
    return signal_node(hGraph, nodeParams->extSemArray, nodeParams->paramsArray,
                       nodeParams->numExtSems);
}

static CUresult fk_GraphKernelNodeSetParams(CUgraphNode hNode,
                                            const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ENTERI(GraphKernelNodeSetParams);
    LOCK();
    struct gnode *n = (struct gnode *)reg_find((uintptr_t)hNode, K_GNODE);
    CUresult e = n ? kcap_make(nodeParams, &n->k) : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    return e;
}

static CUresult fk_GraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ENTERI(GraphExecKernelNodeSetParams);
    LOCK();
    struct gexec *x = (struct gexec *)reg_find((uintptr_t)hGraphExec, K_GEXEC);
    CUresult e = x ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; x && i < x->n; i++)
        if (x->x[i].node == (uintptr_t)hNode)
            e = kcap_make(nodeParams, &x->x[i].k);
    UNLOCK();
    return e;
}

/* A host node of an executable graph takes a new function and data; the
 * graph's own node keeps its old ones (as the driver does). */
static CUresult fk_GraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                              const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    ENTERI(GraphExecHostNodeSetParams);
    if (!nodeParams || !nodeParams->fn)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct gexec *x = (struct gexec *)reg_find((uintptr_t)hGraphExec, K_GEXEC);
    CUresult e = x ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; x && i < x->n; i++) {
        struct kcap *k = &x->x[i].k;
        if (x->x[i].node == (uintptr_t)hNode && !k->name) {
            k->fn = nodeParams->fn;
            k->ud = nodeParams->userData;
            e = CUDA_SUCCESS;
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_GraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    ENTERI(GraphClone);
    if (!phGraphClone)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct graph *o = (struct graph *)reg_find((uintptr_t)originalGraph, K_GRAPH);
    struct graph *g = o ? calloc(1, sizeof *g) : NULL;
    if (!o)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!g || !(g->nodes = calloc(o->nn + 1, sizeof *g->nodes)))
        e = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; e == CUDA_SUCCESS && i < o->nn; i++) {
        struct gnode *n = calloc(1, sizeof *n);
        if (!n || kcap_copy(&n->k, &o->nodes[i]->k) != CUDA_SUCCESS) {
            free(n);
            e = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        reg_add(&n->h, K_GNODE, 0, NULL);
        g->nodes[g->nn++] = n;
    }
    if (g) {
        reg_add(&g->h, K_GRAPH, 0, NULL);
        if (e == CUDA_SUCCESS)
            *phGraphClone = (CUgraph)(void *)g;
        else
            obj_free(&g->h);
    }
    UNLOCK();
    return e;
}

static CUresult fk_GraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                    unsigned long long flags)
{
    ENTERI(GraphInstantiateWithFlags);
    if (!phGraphExec || flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    struct gexec *x = g ? calloc(1, sizeof *x) : NULL;
    if (!g)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!x || !(x->x = calloc(g->nn + 1, sizeof *x->x)))
        e = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; e == CUDA_SUCCESS && i < g->nn; i++) {
        x->x[i].node = (uintptr_t)g->nodes[i];
        if ((e = kcap_copy(&x->x[i].k, &g->nodes[i]->k)) == CUDA_SUCCESS)
            x->n++;
    }
    if (e == CUDA_SUCCESS) /* the graph's user objects, for as long as x lives */
        x->r = refs_take(g->r, g->n, &x->nr);
    if (x) {
        reg_add(&x->h, K_GEXEC, 0, NULL);
        if (e == CUDA_SUCCESS)
            *phGraphExec = (CUgraphExec)(void *)x;
        else
            obj_free(&x->h);
    }
    UNLOCK();
    return e;
}

/* cuGraphExecUpdate: an executable graph takes the nodes of a graph of
 * as many nodes (the fake's graphs have no edges: the same topology),
 * node by node, each of the same type; otherwise nothing changes and the
 * result is CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED (or
 * _NODE_TYPE_CHANGED). */
static CUresult fk_GraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                   CUgraphExecUpdateResultInfo *resultInfo)
{
    ENTERI(GraphExecUpdate);
    if (!resultInfo)
        return CUDA_ERROR_INVALID_VALUE;
    memset(resultInfo, 0, sizeof *resultInfo);
    LOCK();
    struct gexec *x = (struct gexec *)reg_find((uintptr_t)hGraphExec, K_GEXEC);
    struct graph *g = (struct graph *)reg_find((uintptr_t)hGraph, K_GRAPH);
    CUresult e = x && g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    CUgraphExecUpdateResult r = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (e == CUDA_SUCCESS && x->n != g->nn)
        r = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; e == CUDA_SUCCESS && r == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < x->n; i++)
        if (!x->x[i].k.name != !g->nodes[i]->k.name)
            r = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
    struct kcap *fresh = e == CUDA_SUCCESS && r == CU_GRAPH_EXEC_UPDATE_SUCCESS
                             ? calloc(x->n + 1, sizeof *fresh)
                             : NULL;
    if (e == CUDA_SUCCESS && r == CU_GRAPH_EXEC_UPDATE_SUCCESS && !fresh)
        e = CUDA_ERROR_OUT_OF_MEMORY;
    size_t done = 0;
    for (; fresh && e == CUDA_SUCCESS && done < x->n; done++)
        e = kcap_copy(&fresh[done], &g->nodes[done]->k);
    if (fresh && e == CUDA_SUCCESS) {
        for (size_t i = 0; i < x->n; i++) {
            free(x->x[i].k.name);
            free(x->x[i].k.bytes);
            x->x[i].k = fresh[i];
            x->x[i].node = (uintptr_t)g->nodes[i];
        }
        /* the new graph's user objects replace the old ones */
        size_t nr = 0;
        struct gref *r = refs_take(g->r, g->n, &nr);
        refs_give(x->r, x->nr);
        x->r = r;
        x->nr = nr;
    } else if (fresh) {
        for (size_t i = 0; i < done; i++) {
            free(fresh[i].name);
            free(fresh[i].bytes);
        }
    }
    free(fresh);
    UNLOCK();
    resultInfo->result = r;
    if (e == CUDA_SUCCESS && r != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        e = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    return e;
}

static CUresult fk_GraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    ENTERI(GraphLaunch);
    LOCK();
    struct stream *s = NULL;
    struct gexec *x = (struct gexec *)reg_find((uintptr_t)hGraphExec, K_GEXEC);
    CUresult e = x ? stream_resolve(hStream, &s) : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; e == CUDA_SUCCESS && i < x->n; i++) {
        const struct kcap *k = &x->x[i].k;
        if (!k->name) { /* a host node: its call, queued on the stream */
            struct work *w = calloc(1, sizeof *w);
            if (!w) {
                e = CUDA_ERROR_OUT_OF_MEMORY;
                break;
            }
            w->type = W_HOSTFN;
            w->fn = k->fn;
            w->ud = k->ud;
            w->uh = hStream;
            e = stream_enqueue(s, w);
            continue;
        }
        struct lrec *r = lrec_find(k->name, 1);
        unsigned char *bytes = k->len ? malloc(k->len) : NULL;
        if (!r || (k->len && !bytes)) {
            free(bytes);
            e = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        if (k->len)
            memcpy(bytes, k->bytes, k->len);
        free(r->bytes);
        r->bytes = bytes;
        r->len = k->len;
        r->count++;
        r->mode = k->mode;
        r->stream = (void *)hStream;
        unsigned d[9] = {k->dims[0], k->dims[1], k->dims[2], k->dims[3], k->dims[4],
                         k->dims[5], k->dims[6], hStream == NULL, 0};
        memcpy(r->dims, d, sizeof d);
    }
    if (e == CUDA_SUCCESS && x->nr) {
        /* the launch holds the user objects until its work is done, as the
         * driver's does: an executable graph destroyed meanwhile does not
         * release them under it */
        struct work *w = calloc(1, sizeof *w);
        if (!w)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            w->type = W_UNREF;
            e = stream_enqueue(s, w); /* frees w on failure */
            if (e == CUDA_SUCCESS) /* its worker waits for G meanwhile */
                w->refs = refs_take(x->r, x->nr, &w->nrefs);
        }
    }
    UNLOCK();
    return e;
}

static CUresult fk_GraphExecDestroy(CUgraphExec hGraphExec)
{
    ENTERI(GraphExecDestroy);
    LOCK();
    struct gexec *x = (struct gexec *)reg_find((uintptr_t)hGraphExec, K_GEXEC);
    if (x) {
        /* its launches still queued hold their own references (W_UNREF) */
        refs_give(x->r, x->nr);
        x->r = NULL;
        x->nr = 0;
        obj_free(&x->h);
    }
    UNLOCK();
    return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_FuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    ENTERI(FuncGetModule);
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct func *f = (struct func *)reg_find((uintptr_t)hfunc, K_FUNC);
    if (f && f->mod)
        *hmod = (CUmodule)(void *)f->mod;
    UNLOCK();
    return !f ? CUDA_ERROR_INVALID_HANDLE : f->mod ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult fk_KernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    ENTERI(KernelGetLibrary);
    if (!pLib)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct kernel *k = (struct kernel *)reg_find((uintptr_t)kernel, K_KERNEL);
    if (k)
        *pLib = (CUlibrary)(void *)k->lib;
    UNLOCK();
    return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_LinkCreate(unsigned int numOptions, CUjit_option *options,
                              void **optionValues, CUlinkState *stateOut)
{
    ENTERI(LinkCreate);
    if (!stateOut || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    struct link *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    reg_add(&l->h, K_LINK, 0, NULL);
    snprintf(l->image, sizeof l->image, "fake linked image %llu", (unsigned long long)l->h.id);
    *stateOut = (CUlinkState)(void *)l;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult link_check(CUlinkState state)
{
    LOCK();
    struct obj *o = reg_find((uintptr_t)state, K_LINK);
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_LinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int numOptions, CUjit_option *options,
                               void **optionValues)
{
    ENTERI(LinkAddData);
    (void)type, (void)name;
    if (!data || !size || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    return link_check(state);
}

static CUresult fk_LinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                               unsigned int numOptions, CUjit_option *options,
                               void **optionValues)
{
    ENTERI(LinkAddFile);
    (void)type;
    if (!path || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult e = code_file(path);
    return e != CUDA_SUCCESS ? e : link_check(state);
}

static CUresult fk_LinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    ENTERI(LinkComplete);
    if (!cubinOut || !sizeOut)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct link *l = (struct link *)reg_find((uintptr_t)state, K_LINK);
    if (l) {
        *cubinOut = l->image;
        *sizeOut = strlen(l->image) + 1;
    }
    UNLOCK();
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_LinkDestroy(CUlinkState state)
{
    ENTERI(LinkDestroy);
    LOCK();
    struct obj *o = reg_find((uintptr_t)state, K_LINK);
    if (o)
        obj_free(o);
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The name a function (K_FUNC) or kernel (K_KERNEL) was asked for by
 * (cuModuleGetFunction, cuLibraryGetKernel): mangled for a C++ kernel. */
static CUresult name_of(const char **name, uintptr_t h, int kind)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct obj *o = reg_find(h, kind);
    if (o)
        *name = kind == K_FUNC ? ((struct func *)o)->name : ((struct kernel *)o)->name;
    UNLOCK();
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fk_FuncGetName(const char **name, CUfunction hfunc)
{
    ENTERI(FuncGetName);
    return name_of(name, (uintptr_t)hfunc, K_FUNC);
}

static CUresult fk_KernelGetName(const char **name, CUkernel hfunc)
{
    ENTERI(KernelGetName);
    return name_of(name, (uintptr_t)hfunc, K_KERNEL);
}

static CUresult fk_KernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
                                      size_t *paramSize)
{
    ENTERI(KernelGetParamInfo);
    LOCK();
    CUresult e = CUDA_SUCCESS;
    struct kernel *k = (struct kernel *)reg_find((uintptr_t)kernel, K_KERNEL);
    const size_t *off = NULL, *sz = NULL;
    int n;
    if (!k)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if ((n = layout_of(k->fn, k->name, &off, &sz)) < 0 || paramIndex >= (size_t)n)
        e = CUDA_ERROR_INVALID_VALUE;
    else {
        if (paramOffset)
            *paramOffset = off[paramIndex];
        if (paramSize)
            *paramSize = sz[paramIndex];
    }
    UNLOCK();
    return e;
}

/* ------------------------------------------------------------------ */
/* cuGetProcAddress: (base name, first version of that ABI, implementation,
 * cudaTypedefs.h type). The types are checked at compile time below. The
 * _ptsz/_ptds variants are the same functions here: with the fake, every
 * special stream handle means the context's NULL stream. */

/* ------------------------------------------------------------------ */
/* Stream capture info, driver logs, range attributes, coredump settings and
 * SM splits: canned behaviour, enough to check the bindings' marshalling. */

/* The stream fakecuda_set_capture made "capturing" (under G); its
 * dependencies are a fake-owned array, as the real driver's are. */
#define FK_CAP_MAX 4
static CUstream g_cap_stream;
static int g_cap_on;
static unsigned long long g_cap_id;
static size_t g_cap_n;
static CUgraphNode g_cap_nodes[FK_CAP_MAX];
static CUgraphEdgeData g_cap_edges[FK_CAP_MAX];

static CUresult fk_StreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out, CUgraph *graph_out,
                                        const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out)
{
    ENTERI(StreamGetCaptureInfo);
    if (!captureStatus_out || (edgeData_out && !dependencies_out))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct stream *s = NULL;
    CUresult e = stream_resolve(hStream, &s);
    if (e == CUDA_SUCCESS && g_cap_on && hStream == g_cap_stream) {
        *captureStatus_out = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id_out)
            *id_out = g_cap_id;
        if (graph_out)
            *graph_out = NULL;
        if (dependencies_out)
            *dependencies_out = g_cap_nodes;
        if (edgeData_out)
            *edgeData_out = g_cap_edges;
        if (numDependencies_out)
            *numDependencies_out = g_cap_n;
    } else if (e == CUDA_SUCCESS && s->capture) {
        /* a capture of cuStreamBeginCapture: its graph, no dependencies */
        *captureStatus_out = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id_out)
            *id_out = s->capture->h.id;
        if (graph_out)
            *graph_out = (CUgraph)(void *)s->capture;
        if (dependencies_out)
            *dependencies_out = NULL;
        if (edgeData_out)
            *edgeData_out = NULL;
        if (numDependencies_out)
            *numDependencies_out = 0;
    } else if (e == CUDA_SUCCESS) {
        *captureStatus_out = CU_STREAM_CAPTURE_STATUS_NONE; /* the rest is left as is */
    }
    UNLOCK();
    return e;
}

/* The 11.3 ABI (no edge data): what cubind's runtime asks for. */
static CUresult fk_StreamGetCaptureInfo_v11030(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out, CUgraph *graph_out,
                                               const CUgraphNode **dependencies_out,
                                               size_t *numDependencies_out)
{
    return fk_StreamGetCaptureInfo(hStream, captureStatus_out, id_out, graph_out,
                                   dependencies_out, NULL, numDependencies_out);
}

/* The driver's log buffer: fixed text; an iterator is a byte offset in it. */
static const char g_log_text[] = "[fake] first entry\n[fake] second entry\n";

/* Registered callbacks (K_CBREG): a logs callback, or an async
 * notification callback of one device, until unregistered. The fake never
 * notifies; it calls every logs callback once per cuLogsDumpToMemory (after
 * the dump, outside G, on the caller's thread), so a test can see that a
 * registered function is still callable. */
struct cbreg {
    struct obj h;
    CUlogsCallback log_fn;    /* a logs callback, or NULL */
    CUasyncCallback async_fn; /* an async notification callback, or NULL */
    void *ud;
    CUdevice dev;
};

static CUresult fk_LogsRegisterCallback(CUlogsCallback callbackFunc, void *userData,
                                        CUlogsCallbackHandle *callback_out)
{
    ENTER(LogsRegisterCallback);
    if (!callbackFunc || !callback_out)
        return CUDA_ERROR_INVALID_VALUE;
    struct cbreg *r = calloc(1, sizeof *r);
    if (!r)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->log_fn = callbackFunc;
    r->ud = userData;
    LOCK();
    reg_add(&r->h, K_CBREG, 0, NULL);
    *callback_out = (CUlogsCallbackHandle)(void *)r;
    UNLOCK();
    return CUDA_SUCCESS;
}

/* Unregisters r (a logs one when logs, else of device dev) under G. */
static CUresult cbreg_remove(uintptr_t h, int logs, CUdevice dev)
{
    LOCK();
    struct cbreg *r = (struct cbreg *)reg_find(h, K_CBREG);
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    if (r && (logs ? r->log_fn != NULL : r->async_fn != NULL && r->dev == dev)) {
        reg_del(&r->h);
        free(r);
        e = CUDA_SUCCESS;
    }
    UNLOCK();
    return e;
}

static CUresult fk_LogsUnregisterCallback(CUlogsCallbackHandle callback)
{
    ENTER(LogsUnregisterCallback);
    return cbreg_remove((uintptr_t)callback, 1, 0);
}

static CUresult fk_DeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc,
                                                   void *userData, CUasyncCallbackHandle *callback)
{
    ENTERI(DeviceRegisterAsyncNotification);
    if (device < 0 || device >= FK_NDEV)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!callbackFunc || !callback)
        return CUDA_ERROR_INVALID_VALUE;
    struct cbreg *r = calloc(1, sizeof *r);
    if (!r)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->async_fn = callbackFunc;
    r->ud = userData;
    r->dev = device;
    LOCK();
    reg_add(&r->h, K_CBREG, 0, NULL);
    *callback = (CUasyncCallbackHandle)(void *)r;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult fk_DeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback)
{
    ENTERI(DeviceUnregisterAsyncNotification);
    return cbreg_remove((uintptr_t)callback, 0, device);
}

/* Calls every registered logs callback once (outside G). */
static void cbreg_log(const char *message)
{
    size_t n = 0, k = 0;
    LOCK();
    struct obj **v = reg_collect(K_CBREG, NULL, 1, &n);
    struct { CUlogsCallback fn; void *ud; } *calls = n ? calloc(n, sizeof *calls) : NULL;
    for (size_t i = 0; calls && i < n; i++) {
        struct cbreg *r = (struct cbreg *)v[i];
        if (r->log_fn) {
            calls[k].fn = r->log_fn;
            calls[k++].ud = r->ud;
        }
    }
    UNLOCK();
    free(v);
    for (size_t i = 0; i < k; i++)
        calls[i].fn(calls[i].ud, CU_LOG_LEVEL_WARNING, (char *)message, strlen(message));
    free(calls);
}

static CUresult fk_LogsDumpToMemory(CUlogIterator *iterator, char *buffer, size_t *size,
                                    unsigned int flags)
{
    ENTER(LogsDumpToMemory);
    if (!buffer || !size || flags)
        return CUDA_ERROR_INVALID_VALUE;
    size_t total = sizeof g_log_text - 1, from = iterator ? (size_t)*iterator : 0;
    if (from > total)
        from = total;
    if (*size == 0) {
        *size = 0;
        return CUDA_ERROR_INVALID_VALUE;
    }
    size_t n = total - from < *size - 1 ? total - from : *size - 1;
    memcpy(buffer, g_log_text + from, n);
    buffer[n] = '\0';
    *size = n;
    if (iterator)
        *iterator = (CUlogIterator)(from + n);
    cbreg_log("fake log: dumped");
    return CUDA_SUCCESS;
}

/* One attribute of a range of fake memory, for cuMemRangeGetAttribute(s). */
static CUresult mem_range_attribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
                                    CUdeviceptr devPtr, size_t count)
{
    if (!data || !count)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct mem *m = mem_containing((uintptr_t)devPtr, 0);
    UNLOCK();
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    int v;
    switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY:
        /* device 0, then CU_DEVICE_INVALID in the extra space */
        if (dataSize == 0 || dataSize % 4)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < dataSize / 4; i++) {
            v = i == 0 ? 0 : CU_DEVICE_INVALID;
            memcpy((char *)data + 4 * i, &v, 4);
        }
        return CUDA_SUCCESS;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
        if (dataSize != sizeof(CUmemLocationType))
            return CUDA_ERROR_INVALID_VALUE;
        *(CUmemLocationType *)data = attribute == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE
                                         ? CU_MEM_LOCATION_TYPE_DEVICE
                                         : CU_MEM_LOCATION_TYPE_HOST;
        return CUDA_SUCCESS;
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: v = 1; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: v = CU_DEVICE_CPU; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: v = CU_DEVICE_INVALID; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: v = 1; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: v = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (dataSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(data, &v, 4);
    return CUDA_SUCCESS;
}

static CUresult fk_MemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
                                        CUdeviceptr devPtr, size_t count)
{
    ENTERI(MemRangeGetAttribute);
    return mem_range_attribute(data, dataSize, attribute, devPtr, count);
}

/* Each attribute as cuMemRangeGetAttribute gives it, into data[i] of
 * dataSizes[i] bytes; the first failure is the result. */
static CUresult fk_MemRangeGetAttributes(void **data, size_t *dataSizes,
                                         CUmem_range_attribute *attributes, size_t numAttributes,
                                         CUdeviceptr devPtr, size_t count)
{
    ENTERI(MemRangeGetAttributes);
    if (!data || !dataSizes || !attributes || !numAttributes)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttributes; i++) {
        CUresult e = mem_range_attribute(data[i], dataSizes[i], attributes[i], devPtr, count);
        if (e != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

/* Coredump settings, per scope (0: the current context's, 1: global), under
 * G: the four booleans, the file and pipe names, the generation flags. */
struct coredump {
    unsigned char flag[5]; /* indexed by CU_COREDUMP_ENABLE_ON_EXCEPTION.. */
    char file[1024], pipe[1024];
    int gen_flags;
};
static struct coredump g_coredump[2];

/* Where setting attrib lives and its size; NULL for an unknown one. */
static void *coredump_slot(struct coredump *c, CUcoredumpSettings attrib, size_t *size)
{
    switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION: case CU_COREDUMP_TRIGGER_HOST:
    case CU_COREDUMP_LIGHTWEIGHT: case CU_COREDUMP_ENABLE_USER_TRIGGER:
        *size = 1;
        return &c->flag[attrib];
    case CU_COREDUMP_FILE: *size = sizeof c->file; return c->file;
    case CU_COREDUMP_PIPE: *size = sizeof c->pipe; return c->pipe;
    case CU_COREDUMP_GENERATION_FLAGS: *size = sizeof c->gen_flags; return &c->gen_flags;
    default: return NULL;
    }
}

/* A string setting is read up to its NUL within *size; others take exactly
 * their size. NULL value: *size receives the size expected. */
static CUresult coredump_get(int global, CUcoredumpSettings attrib, void *value, size_t *size)
{
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    size_t need;
    void *slot = coredump_slot(&g_coredump[global], attrib, &need);
    CUresult e = CUDA_SUCCESS;
    if (!slot)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!value)
        *size = need;
    else if (*size < need)
        e = CUDA_ERROR_INVALID_VALUE;
    else
        memcpy(value, slot, need);
    UNLOCK();
    return e;
}

static CUresult coredump_set(int global, CUcoredumpSettings attrib, void *value, size_t *size)
{
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    size_t need;
    void *slot = coredump_slot(&g_coredump[global], attrib, &need);
    CUresult e = CUDA_SUCCESS;
    int is_string = attrib == CU_COREDUMP_FILE || attrib == CU_COREDUMP_PIPE;
    if (!slot)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!value)
        *size = need;
    else if (is_string ? (*size == 0 || *size > need || memchr(value, 0, *size) == NULL)
                       : *size != need)
        e = CUDA_ERROR_INVALID_VALUE;
    else
        memcpy(slot, value, *size);
    UNLOCK();
    return e;
}

static CUresult fk_CoredumpGetAttribute(CUcoredumpSettings attrib, void *value, size_t *size)
{
    ENTERI(CoredumpGetAttribute);
    return coredump_get(0, attrib, value, size);
}

static CUresult fk_CoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void *value, size_t *size)
{
    ENTERI(CoredumpGetAttributeGlobal);
    return coredump_get(1, attrib, value, size);
}

static CUresult fk_CoredumpSetAttribute(CUcoredumpSettings attrib, void *value, size_t *size)
{
    ENTERI(CoredumpSetAttribute);
    return coredump_set(0, attrib, value, size);
}

static CUresult fk_CoredumpSetAttributeGlobal(CUcoredumpSettings attrib, void *value, size_t *size)
{
    ENTERI(CoredumpSetAttributeGlobal);
    return coredump_set(1, attrib, value, size);
}

/* Splits input's SMs into groups of minCount: as many as fit, or as many
 * as *nbGroups asks for; what is left goes to remaining. */
static CUresult fk_DevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups,
                                             const CUdevResource *input, CUdevResource *remaining,
                                             unsigned int useFlags, unsigned int minCount)
{
    ENTERI(DevSmResourceSplitByCount);
    if (!nbGroups || !input || input->type != CU_DEV_RESOURCE_TYPE_SM || minCount == 0 ||
        minCount > input->sm.smCount || useFlags > 3)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned int fit = input->sm.smCount / minCount;
    if (!result) {
        *nbGroups = fit;
        return CUDA_SUCCESS;
    }
    unsigned int n = *nbGroups < fit ? *nbGroups : fit;
    for (unsigned int i = 0; i < n; i++) {
        memset(&result[i], 0, sizeof result[i]);
        result[i].type = CU_DEV_RESOURCE_TYPE_SM;
        result[i].sm.smCount = minCount;
    }
    *nbGroups = n;
    if (remaining) {
        memset(remaining, 0, sizeof *remaining);
        remaining->type = CU_DEV_RESOURCE_TYPE_SM;
        remaining->sm.smCount = input->sm.smCount - n * minCount;
    }
    return CUDA_SUCCESS;
}

#define FK_PROCS(P)                                                                     \
    P(GetProcAddress, 11030, cuGetProcAddress, PFN_cuGetProcAddress_v11030)             \
    P(GetProcAddress, 12000, cuGetProcAddress_v2, PFN_cuGetProcAddress_v12000)          \
    P(Init, 2000, fk_Init, PFN_cuInit_v2000)                                            \
    P(DriverGetVersion, 2020, fk_DriverGetVersion, PFN_cuDriverGetVersion_v2020)        \
    P(DeviceGet, 2000, fk_DeviceGet, PFN_cuDeviceGet_v2000)                             \
    P(DeviceGetCount, 2000, fk_DeviceGetCount, PFN_cuDeviceGetCount_v2000)              \
    P(DeviceGetName, 2000, fk_DeviceGetName, PFN_cuDeviceGetName_v2000)                 \
    P(DeviceGetUuid, 9020, fk_DeviceGetUuid_v1, PFN_cuDeviceGetUuid_v9020)              \
    P(DeviceGetUuid, 11040, fk_DeviceGetUuid_v2, PFN_cuDeviceGetUuid_v11040)            \
    P(DeviceTotalMem, 3020, fk_DeviceTotalMem_v2, PFN_cuDeviceTotalMem_v3020)           \
    P(DeviceGetAttribute, 2000, fk_DeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)  \
    P(DevicePrimaryCtxRetain, 7000, fk_DevicePrimaryCtxRetain,                          \
      PFN_cuDevicePrimaryCtxRetain_v7000)                                               \
    P(DevicePrimaryCtxRelease, 7000, fk_DevicePrimaryCtxRelease_v1,                     \
      PFN_cuDevicePrimaryCtxRelease_v11000)                                             \
    P(DevicePrimaryCtxRelease, 11000, fk_DevicePrimaryCtxRelease_v2,                    \
      PFN_cuDevicePrimaryCtxRelease_v11000)                                             \
    P(DevicePrimaryCtxReset, 7000, fk_DevicePrimaryCtxReset_v1,                         \
      PFN_cuDevicePrimaryCtxReset_v11000)                                               \
    P(DevicePrimaryCtxReset, 11000, fk_DevicePrimaryCtxReset_v2,                        \
      PFN_cuDevicePrimaryCtxReset_v11000)                                               \
    P(DevicePrimaryCtxGetState, 7000, fk_DevicePrimaryCtxGetState,                      \
      PFN_cuDevicePrimaryCtxGetState_v7000)                                             \
    P(DevicePrimaryCtxSetFlags, 7000, fk_DevicePrimaryCtxSetFlags_v1,                   \
      PFN_cuDevicePrimaryCtxSetFlags_v11000)                                            \
    P(DevicePrimaryCtxSetFlags, 11000, fk_DevicePrimaryCtxSetFlags_v2,                  \
      PFN_cuDevicePrimaryCtxSetFlags_v11000)                                            \
    P(CtxCreate, 3020, fk_CtxCreate_v2, PFN_cuCtxCreate_v3020)                          \
    P(CtxCreate, 11040, fk_CtxCreate_v3, PFN_cuCtxCreate_v11040)                        \
    P(CtxCreate, 12050, fk_CtxCreate_v4, PFN_cuCtxCreate_v12050)                        \
    P(CtxDestroy, 4000, fk_CtxDestroy, PFN_cuCtxDestroy_v4000)                          \
    P(CtxGetCurrent, 4000, fk_CtxGetCurrent, PFN_cuCtxGetCurrent_v4000)                 \
    P(CtxSetCurrent, 4000, fk_CtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                 \
    P(CtxPushCurrent, 4000, fk_CtxPushCurrent, PFN_cuCtxPushCurrent_v4000)              \
    P(CtxPopCurrent, 4000, fk_CtxPopCurrent, PFN_cuCtxPopCurrent_v4000)                 \
    P(CtxGetDevice, 2000, fk_CtxGetDevice_v1, PFN_cuCtxGetDevice_v2000)                 \
    P(CtxGetDevice, 13000, fk_CtxGetDevice_v2, PFN_cuCtxGetDevice_v13000)               \
    P(CtxSynchronize, 2000, fk_CtxSynchronize_v1, PFN_cuCtxSynchronize_v2000)           \
    P(CtxSynchronize, 13000, fk_CtxSynchronize_v2, PFN_cuCtxSynchronize_v13000)         \
    P(CtxGetApiVersion, 3020, fk_CtxGetApiVersion, PFN_cuCtxGetApiVersion_v3020)        \
    P(CtxGetStreamPriorityRange, 5050, fk_CtxGetStreamPriorityRange,                    \
      PFN_cuCtxGetStreamPriorityRange_v5050)                                            \
    P(StreamCreate, 2000, fk_StreamCreate, PFN_cuStreamCreate_v2000)                    \
    P(StreamCreateWithPriority, 5050, fk_StreamCreateWithPriority,                      \
      PFN_cuStreamCreateWithPriority_v5050)                                             \
    P(StreamDestroy, 4000, fk_StreamDestroy, PFN_cuStreamDestroy_v4000)                 \
    P(StreamQuery, 2000, fk_StreamQuery, PFN_cuStreamQuery_v2000)                       \
    P(StreamIsCapturing, 10000, fk_StreamIsCapturing, PFN_cuStreamIsCapturing_v10000)   \
    P(StreamBeginCapture, 10010, fk_StreamBeginCapture, PFN_cuStreamBeginCapture_v10010) \
    P(StreamEndCapture, 10000, fk_StreamEndCapture, PFN_cuStreamEndCapture_v10000)      \
    P(StreamGetCaptureInfo, 11030, fk_StreamGetCaptureInfo_v11030,                      \
      PFN_cuStreamGetCaptureInfo_v11030)                                                \
    P(StreamSynchronize, 2000, fk_StreamSynchronize, PFN_cuStreamSynchronize_v2000)     \
    P(StreamGetFlags, 5050, fk_StreamGetFlags, PFN_cuStreamGetFlags_v5050)              \
    P(StreamGetPriority, 5050, fk_StreamGetPriority, PFN_cuStreamGetPriority_v5050)     \
    P(StreamGetCtx, 9020, fk_StreamGetCtx_v1, PFN_cuStreamGetCtx_v9020)                 \
    P(StreamGetCtx, 12050, fk_StreamGetCtx_v2, PFN_cuStreamGetCtx_v12050)               \
    P(StreamWaitEvent, 3020, fk_StreamWaitEvent, PFN_cuStreamWaitEvent_v3020)           \
    P(StreamAddCallback, 5000, fk_StreamAddCallback, PFN_cuStreamAddCallback_v5000)     \
    P(LaunchHostFunc, 10000, fk_LaunchHostFunc, PFN_cuLaunchHostFunc_v10000)            \
    P(EventCreate, 2000, fk_EventCreate, PFN_cuEventCreate_v2000)                       \
    P(EventRecord, 2000, fk_EventRecord, PFN_cuEventRecord_v2000)                       \
    P(EventQuery, 2000, fk_EventQuery, PFN_cuEventQuery_v2000)                          \
    P(EventSynchronize, 2000, fk_EventSynchronize, PFN_cuEventSynchronize_v2000)        \
    P(EventDestroy, 4000, fk_EventDestroy, PFN_cuEventDestroy_v4000)                    \
    P(EventElapsedTime, 2000, fk_EventElapsedTime_v1, PFN_cuEventElapsedTime_v2000)     \
    P(EventElapsedTime, 12080, fk_EventElapsedTime_v2, PFN_cuEventElapsedTime_v12080)   \
    P(MemAlloc, 3020, fk_MemAlloc_v2, PFN_cuMemAlloc_v3020)                             \
    P(MemFree, 3020, fk_MemFree_v2, PFN_cuMemFree_v3020)                                \
    P(MemcpyHtoD, 3020, fk_MemcpyHtoD_v2, PFN_cuMemcpyHtoD_v3020)                       \
    P(MemcpyDtoH, 3020, fk_MemcpyDtoH_v2, PFN_cuMemcpyDtoH_v3020)                       \
    P(MemcpyDtoD, 3020, fk_MemcpyDtoD_v2, PFN_cuMemcpyDtoD_v3020)                       \
    P(MemcpyHtoDAsync, 3020, fk_MemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v3020)        \
    P(MemcpyDtoHAsync, 3020, fk_MemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v3020)        \
    P(MemcpyDtoDAsync, 3020, fk_MemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v3020)        \
    P(Memcpy2D, 3020, fk_Memcpy2D_v2, PFN_cuMemcpy2D_v3020)                             \
    P(Memcpy2DUnaligned, 3020, fk_Memcpy2DUnaligned_v2, PFN_cuMemcpy2DUnaligned_v3020)  \
    P(Memcpy3D, 3020, fk_Memcpy3D_v2, PFN_cuMemcpy3D_v3020)                             \
    P(MemsetD8, 3020, fk_MemsetD8_v2, PFN_cuMemsetD8_v3020)                             \
    P(MemsetD32, 3020, fk_MemsetD32_v2, PFN_cuMemsetD32_v3020)                          \
    P(MemAllocHost, 3020, fk_MemAllocHost_v2, PFN_cuMemAllocHost_v3020)                 \
    P(MemFreeHost, 2000, fk_MemFreeHost, PFN_cuMemFreeHost_v2000)                       \
    P(MemGetInfo, 3020, fk_MemGetInfo_v2, PFN_cuMemGetInfo_v3020)                       \
    P(PointerGetAttribute, 4000, fk_PointerGetAttribute, PFN_cuPointerGetAttribute_v4000) \
    P(PointerGetAttributes, 7000, fk_PointerGetAttributes, PFN_cuPointerGetAttributes_v7000) \
    P(ProfilerStart, 4000, fk_ProfilerStart, PFN_cuProfilerStart_v4000)                 \
    P(ProfilerStop, 4000, fk_ProfilerStop, PFN_cuProfilerStop_v4000)                    \
    P(GetErrorName, 6000, fk_GetErrorName, PFN_cuGetErrorName_v6000)                    \
    P(GetErrorString, 6000, fk_GetErrorString, PFN_cuGetErrorString_v6000)              \
    P(UserObjectCreate, 11030, fk_UserObjectCreate, PFN_cuUserObjectCreate_v11030)      \
    P(UserObjectRetain, 11030, fk_UserObjectRetain, PFN_cuUserObjectRetain_v11030)      \
    P(UserObjectRelease, 11030, fk_UserObjectRelease, PFN_cuUserObjectRelease_v11030)   \
    P(GraphCreate, 10000, fk_GraphCreate, PFN_cuGraphCreate_v10000)                     \
    P(GraphDestroy, 10000, fk_GraphDestroy, PFN_cuGraphDestroy_v10000)                  \
    P(GraphRetainUserObject, 11030, fk_GraphRetainUserObject,                           \
      PFN_cuGraphRetainUserObject_v11030)                                               \
    P(GraphReleaseUserObject, 11030, fk_GraphReleaseUserObject,                         \
      PFN_cuGraphReleaseUserObject_v11030)                                              \
    P(ModuleLoadData, 2000, fk_ModuleLoadData, PFN_cuModuleLoadData_v2000)              \
    P(ModuleLoad, 2000, fk_ModuleLoad, PFN_cuModuleLoad_v2000)                          \
    P(LibraryLoadFromFile, 12000, fk_LibraryLoadFromFile, PFN_cuLibraryLoadFromFile_v12000) \
    P(ModuleLoadDataEx, 2010, fk_ModuleLoadDataEx, PFN_cuModuleLoadDataEx_v2010)        \
    P(ModuleLoadFatBinary, 2000, fk_ModuleLoadFatBinary, PFN_cuModuleLoadFatBinary_v2000) \
    P(ModuleUnload, 2000, fk_ModuleUnload, PFN_cuModuleUnload_v2000)                    \
    P(ModuleGetFunction, 2000, fk_ModuleGetFunction, PFN_cuModuleGetFunction_v2000)     \
    P(LibraryLoadData, 12000, fk_LibraryLoadData, PFN_cuLibraryLoadData_v12000)         \
    P(LibraryUnload, 12000, fk_LibraryUnload, PFN_cuLibraryUnload_v12000)               \
    P(LibraryGetKernel, 12000, fk_LibraryGetKernel, PFN_cuLibraryGetKernel_v12000)      \
    P(ModuleGetFunctionCount, 12040, fk_ModuleGetFunctionCount,                         \
      PFN_cuModuleGetFunctionCount_v12040)                                              \
    P(ModuleEnumerateFunctions, 12040, fk_ModuleEnumerateFunctions,                     \
      PFN_cuModuleEnumerateFunctions_v12040)                                            \
    P(LibraryGetKernelCount, 12040, fk_LibraryGetKernelCount,                           \
      PFN_cuLibraryGetKernelCount_v12040)                                               \
    P(LibraryEnumerateKernels, 12040, fk_LibraryEnumerateKernels,                       \
      PFN_cuLibraryEnumerateKernels_v12040)                                             \
    P(KernelGetFunction, 12000, fk_KernelGetFunction, PFN_cuKernelGetFunction_v12000)   \
    P(LibraryGetModule, 12000, fk_LibraryGetModule, PFN_cuLibraryGetModule_v12000)      \
    P(FuncGetParamInfo, 12040, fk_FuncGetParamInfo, PFN_cuFuncGetParamInfo_v12040)     \
    P(FuncGetAttribute, 2020, fk_FuncGetAttribute, PFN_cuFuncGetAttribute_v2020)        \
    P(LaunchKernel, 4000, fk_LaunchKernel, PFN_cuLaunchKernel_v4000)                    \
    P(LaunchKernelEx, 11060, fk_LaunchKernelEx, PFN_cuLaunchKernelEx_v11060)            \
    P(LaunchCooperativeKernel, 9000, fk_LaunchCooperativeKernel,                        \
      PFN_cuLaunchCooperativeKernel_v9000)                                              \
    P(StreamGetCaptureInfo, 12030, fk_StreamGetCaptureInfo,                             \
      PFN_cuStreamGetCaptureInfo_v12030)                                                \
    P(LogsDumpToMemory, 12090, fk_LogsDumpToMemory, PFN_cuLogsDumpToMemory_v12090)     \
    P(LogsRegisterCallback, 12090, fk_LogsRegisterCallback,                             \
      PFN_cuLogsRegisterCallback_v12090)                                                \
    P(LogsUnregisterCallback, 12090, fk_LogsUnregisterCallback,                         \
      PFN_cuLogsUnregisterCallback_v12090)                                              \
    P(DeviceRegisterAsyncNotification, 12040, fk_DeviceRegisterAsyncNotification,       \
      PFN_cuDeviceRegisterAsyncNotification_v12040)                                     \
    P(DeviceUnregisterAsyncNotification, 12040, fk_DeviceUnregisterAsyncNotification,   \
      PFN_cuDeviceUnregisterAsyncNotification_v12040)                                   \
    P(MemRangeGetAttribute, 8000, fk_MemRangeGetAttribute,                              \
      PFN_cuMemRangeGetAttribute_v8000)                                                 \
    P(MemRangeGetAttributes, 8000, fk_MemRangeGetAttributes,                            \
      PFN_cuMemRangeGetAttributes_v8000)                                                \
    P(CoredumpGetAttribute, 12010, fk_CoredumpGetAttribute,                             \
      PFN_cuCoredumpGetAttribute_v12010)                                                \
    P(CoredumpGetAttributeGlobal, 12010, fk_CoredumpGetAttributeGlobal,                 \
      PFN_cuCoredumpGetAttributeGlobal_v12010)                                          \
    P(CoredumpSetAttribute, 12010, fk_CoredumpSetAttribute,                             \
      PFN_cuCoredumpSetAttribute_v12010)                                                \
    P(CoredumpSetAttributeGlobal, 12010, fk_CoredumpSetAttributeGlobal,                 \
      PFN_cuCoredumpSetAttributeGlobal_v12010)                                          \
    P(DevSmResourceSplitByCount, 12040, fk_DevSmResourceSplitByCount,                   \
      PFN_cuDevSmResourceSplitByCount_v12040)                                       \
    P(KernelGetParamInfo, 12040, fk_KernelGetParamInfo, PFN_cuKernelGetParamInfo_v12040) \
    P(FuncGetName, 12030, fk_FuncGetName, PFN_cuFuncGetName_v12030)                   \
    P(FuncGetModule, 11000, fk_FuncGetModule, PFN_cuFuncGetModule_v11000)             \
    P(KernelGetLibrary, 12050, fk_KernelGetLibrary, PFN_cuKernelGetLibrary_v12050)    \
    P(LinkCreate, 6050, fk_LinkCreate, PFN_cuLinkCreate_v6050)                        \
    P(LinkAddData, 6050, fk_LinkAddData, PFN_cuLinkAddData_v6050)                     \
    P(LinkAddFile, 6050, fk_LinkAddFile, PFN_cuLinkAddFile_v6050)                     \
    P(LinkComplete, 5050, fk_LinkComplete, PFN_cuLinkComplete_v5050)                  \
    P(LinkDestroy, 5050, fk_LinkDestroy, PFN_cuLinkDestroy_v5050)                     \
    P(KernelGetName, 12030, fk_KernelGetName, PFN_cuKernelGetName_v12030)             \
    P(GraphAddKernelNode, 12000, fk_GraphAddKernelNode, PFN_cuGraphAddKernelNode_v12000) \
    P(GraphKernelNodeSetParams, 12000, fk_GraphKernelNodeSetParams,                     \
      PFN_cuGraphKernelNodeSetParams_v12000)                                            \
    P(GraphExecKernelNodeSetParams, 12000, fk_GraphExecKernelNodeSetParams,             \
      PFN_cuGraphExecKernelNodeSetParams_v12000)                                        \
    P(GraphAddNode, 12030, fk_GraphAddNode, PFN_cuGraphAddNode_v12030)                  \
    P(GraphAddHostNode, 10000, fk_GraphAddHostNode, PFN_cuGraphAddHostNode_v10000)      \
    P(GraphHostNodeSetParams, 10000, fk_GraphHostNodeSetParams,                         \
      PFN_cuGraphHostNodeSetParams_v10000)                                              \
    P(GraphExecHostNodeSetParams, 10020, fk_GraphExecHostNodeSetParams,                 \
      PFN_cuGraphExecHostNodeSetParams_v10020)                                          \
    P(GraphGetNodes, 10000, fk_GraphGetNodes, PFN_cuGraphGetNodes_v10000)               \
    P(GraphGetRootNodes, 10000, fk_GraphGetRootNodes, PFN_cuGraphGetRootNodes_v10000)   \
    P(GraphGetEdges, 12030, fk_GraphGetEdges, PFN_cuGraphGetEdges_v12030)               \
    P(GraphClone, 10000, fk_GraphClone, PFN_cuGraphClone_v10000)                        \
    P(GraphInstantiateWithFlags, 11040, fk_GraphInstantiate, PFN_cuGraphInstantiateWithFlags_v11040) \
    P(GraphLaunch, 10000, fk_GraphLaunch, PFN_cuGraphLaunch_v10000)                     \
    P(GraphExecDestroy, 10000, fk_GraphExecDestroy, PFN_cuGraphExecDestroy_v10000)   \
    P(GraphExecUpdate, 12000, fk_GraphExecUpdate, PFN_cuGraphExecUpdate_v12000)         \
    P(LaunchCooperativeKernelMultiDevice, 9000, fk_LaunchCooperativeKernelMultiDevice,  \
      PFN_cuLaunchCooperativeKernelMultiDevice_v9000)                                   \
    P(OccupancyMaxPotentialBlockSize, 6050, fk_OccupancyMaxPotentialBlockSize,          \
      PFN_cuOccupancyMaxPotentialBlockSize_v6050)                                       \
    P(OccupancyMaxPotentialBlockSizeWithFlags, 7000,                                    \
      fk_OccupancyMaxPotentialBlockSizeWithFlags,                                       \
      PFN_cuOccupancyMaxPotentialBlockSizeWithFlags_v7000)                              \
    P(GraphAddExternalSemaphoresSignalNode, 11020, fk_GraphAddExternalSemaphoresSignalNode, \
      PFN_cuGraphAddExternalSemaphoresSignalNode_v11020)

/* Compile-time ABI check: each implementation has its PFN type exactly. */
#define FK_CHECK(n, ver, impl, pfn) \
    static const pfn fk_check_##n##_##ver __attribute__((unused)) = impl;
FK_PROCS(FK_CHECK)
#undef FK_CHECK

struct proc {
    int fn;
    int ver;
    void *p;
};
static const struct proc g_procs[] = {
#define FK_PROC(n, ver, impl, pfn) {FN_##n, ver, (void *)impl},
    FK_PROCS(FK_PROC)
#undef FK_PROC
};

struct prec {
    struct prec *next;
    char name[128];
    int ver, count;
    long long flags;
};
static struct prec *g_precs;

static struct prec *prec_find(const char *name, int create)
{
    for (struct prec *r = g_precs; r; r = r->next)
        if (strncmp(r->name, name, sizeof r->name - 1) == 0)
            return r;
    struct prec *r = create ? calloc(1, sizeof *r) : NULL;
    if (r) {
        snprintf(r->name, sizeof r->name, "%s", name);
        r->next = g_precs;
        g_precs = r;
    }
    return r;
}

static CUresult proc_lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *symbolStatus)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct prec *r = prec_find(symbol, 1);
    if (r) {
        r->ver = cudaVersion;
        r->flags = (long long)flags;
        r->count++;
    }
    int dv = g_driver_version;
    UNLOCK();
    *pfn = NULL;
    if ((flags & ~(cuuint64_t)3) || cudaVersion > dv)
        return CUDA_ERROR_INVALID_VALUE;
    int found = 0;
    const struct proc *best = NULL;
    for (size_t i = 0; i < sizeof g_procs / sizeof g_procs[0]; i++) {
        const struct proc *p = &g_procs[i];
        if (p->ver > dv || strcmp(fn_names[p->fn], symbol) != 0)
            continue; /* a driver older than the entry point does not know it */
        found = 1;
        if (p->ver <= cudaVersion && (!best || p->ver > best->ver))
            best = p;
    }
    if (best) {
        *pfn = best->p;
        if (symbolStatus)
            *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    if (symbolStatus)
        *symbolStatus = found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                              : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    /* As the 13.0 driver answers (tests/gpu/test_scenarios_gpu.py::
     * test_get_proc_address): a name it does not know is CUDA_SUCCESS with a
     * NULL pfn and SYMBOL_NOT_FOUND; too old a version is NOT_FOUND. The
     * 11.x entry point has no status to say which: NOT_FOUND for both. */
    return symbolStatus && !found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

FK_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    ENTERV(GetProcAddress, 12000);
    return proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

FK_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    ENTERV(GetProcAddress, 11030);
    return proc_lookup(symbol, pfn, cudaVersion, flags, NULL);
}

/* ------------------------------------------------------------------ */
/* Control API (fakecuda_control.h). */

FK_EXPORT int fakecuda_reset(void)
{
    if (t_kind)
        return -1;
    LOCK();
    /* 1. Streams: drain and join every worker. */
    size_t n = 0, nc = 0;
    struct obj **v = reg_collect(K_STREAM, NULL, 1, &n);
    struct obj **cv = reg_collect(K_CTX, NULL, 1, &nc);
    struct stream **sv = malloc((n + nc + 1) * sizeof *sv);
    size_t ns = 0;
    for (size_t i = 0; sv && i < n; i++) {
        reg_del(v[i]);
        sv[ns++] = (struct stream *)v[i];
    }
    for (size_t i = 0; sv && i < nc; i++) {
        struct ctx *c = (struct ctx *)cv[i];
        if (c->nullstream)
            sv[ns++] = c->nullstream;
        c->nullstream = NULL;
    }
    free(v);
    free(cv);
    if (sv)
        streams_retire(sv, ns);
    free(sv);
    /* 2. Run the queued user-object destructors, then stop that thread. */
    if (g_dthr_started) {
        g_dthr_stop = 1;
        pthread_cond_broadcast(&g_dcv);
        pthread_t t = g_dthr;
        UNLOCK();
        pthread_join(t, NULL);
        LOCK();
        g_dthr_started = 0;
        g_dthr_stop = 0;
        g_dthr_exited = 0;
    }
    /* 3. Graphs (and their nodes), then everything else. */
    v = reg_collect(K_GRAPH, NULL, 1, &n);
    for (size_t i = 0; v && i < n; i++)
        obj_free(v[i]);
    free(v);
    /* Owners only, chosen before anything is freed: freeing a module or a
     * library frees its functions and kernels, which are in v too (their
     * kind cannot be read once their owner went). No other kind frees an
     * object of v. */
    v = reg_collect(0, NULL, 1, &n);
    size_t owners = 0;
    for (size_t i = 0; v && i < n; i++)
        if (v[i]->kind != K_FUNC && v[i]->kind != K_KERNEL && v[i]->kind != K_LIBMODULE)
            v[owners++] = v[i];
    for (size_t i = 0; v && i < owners; i++)
        obj_free(v[i]);
    free(v);
    v = reg_collect(0, NULL, 1, &n); /* functions of kernels never fetched */
    for (size_t i = 0; v && i < n; i++)
        if (v[i]->magic == FK_MAGIC && v[i]->kind == K_FUNC)
            obj_free(v[i]);
    free(v);
    g_primary[0] = g_primary[1] = NULL;
    memset(g_used, 0, sizeof g_used);
    while (g_layouts) {
        struct layout *l = g_layouts;
        g_layouts = l->next;
        free(l->name);
        free(l->off);
        free(l->sz);
        free(l);
    }
    while (g_lrecs) {
        struct lrec *r = g_lrecs;
        g_lrecs = r->next;
        free(r->name);
        free(r->bytes);
        free(r);
    }
    for (int i = 0; i < FN__COUNT; i++) {
        atomic_store(&g_calls[i], 0);
        atomic_store(&g_variant[i], 0);
        g_fault[i].result = 0;
    }
    atomic_store(&g_nfaults, 0);
    g_image_len = -1;
    g_driver_version = FK_DRIVER_VERSION;
    g_cap_on = 0;
    g_cap_stream = NULL;
    g_multi_n = -1;
    g_launch_attrs_n = -1;
    g_ext_sems_n = -1;
    g_last_box[0] = -1;
    atomic_store(&g_occ_foreign, 0);
    atomic_store(&g_occ_foreign_result, -1);
    memset(g_coredump, 0, sizeof g_coredump);
    g_epoch++;
    tls_sync();
    atomic_store(&g_inited, 0);
    UNLOCK();
    return 0;
}

FK_EXPORT long long fakecuda_call_count(const char *name)
{
    int i = fn_index(name);
    return i < 0 ? -1 : atomic_load(&g_calls[i]);
}

FK_EXPORT int fakecuda_last_proc_version(const char *name)
{
    if (!name)
        return -1;
    LOCK();
    struct prec *r = prec_find(name, 0);
    int v = r ? r->ver : -1;
    UNLOCK();
    return v;
}

FK_EXPORT long long fakecuda_last_proc_flags(const char *name)
{
    if (!name)
        return -1;
    LOCK();
    struct prec *r = prec_find(name, 0);
    long long v = r ? r->flags : -1;
    UNLOCK();
    return v;
}

FK_EXPORT int fakecuda_proc_lookup_count(const char *name)
{
    if (!name)
        return 0;
    LOCK();
    struct prec *r = prec_find(name, 0);
    int v = r ? r->count : 0;
    UNLOCK();
    return v;
}

FK_EXPORT void fakecuda_clear_proc_records(void)
{
    LOCK();
    while (g_precs) {
        struct prec *r = g_precs;
        g_precs = r->next;
        free(r);
    }
    UNLOCK();
}

FK_EXPORT int fakecuda_last_variant(const char *name)
{
    int i = fn_index(name);
    int v = i < 0 ? 0 : atomic_load(&g_variant[i]);
    return v ? v : -1;
}

FK_EXPORT int fakecuda_fail_next(const char *name, int result, int nth)
{
    int i = fn_index(name);
    if (i < 0 || nth < 0)
        return -1;
    LOCK();
    if (g_fault[i].result)
        atomic_fetch_sub(&g_nfaults, 1);
    g_fault[i].result = result;
    g_fault[i].nth = nth;
    g_fault[i].every = nth == 0;
    if (result)
        atomic_fetch_add(&g_nfaults, 1);
    UNLOCK();
    return 0;
}

static int copy_layout(int count, const size_t *offsets, const size_t *sizes, size_t **o,
                       size_t **s)
{
    *o = *s = NULL;
    if (count <= 0)
        return 0;
    *o = malloc((size_t)count * sizeof **o);
    *s = malloc((size_t)count * sizeof **s);
    if (!*o || !*s) {
        free(*o);
        free(*s);
        return -1;
    }
    memcpy(*o, offsets, (size_t)count * sizeof **o);
    memcpy(*s, sizes, (size_t)count * sizeof **s);
    return 0;
}

FK_EXPORT int fakecuda_set_param_layout(void *f, const char *kernel_name, int count,
                              const size_t *offsets, const size_t *sizes)
{
    if (count < -1 || (count > 0 && (!offsets || !sizes)) || (!f && !kernel_name))
        return -1;
    for (int i = 0; i < count; i++)
        if (offsets[i] > SIZE_MAX / 2 || sizes[i] > SIZE_MAX / 2)
            return -1;
    size_t *o, *s;
    if (copy_layout(count, offsets, sizes, &o, &s) != 0)
        return -1;
    int rc = 0;
    LOCK();
    if (f) {
        struct func *fn = (struct func *)reg_find((uintptr_t)f, K_FUNC);
        if (!fn) {
            rc = -1;
        } else {
            free(fn->off);
            free(fn->sz);
            fn->nparams = count;
            fn->off = o;
            fn->sz = s;
            o = s = NULL;
        }
    } else {
        struct layout *l = layout_find(kernel_name);
        if (count < 0) {
            if (l) {
                struct layout **pp = &g_layouts;
                while (*pp != l)
                    pp = &(*pp)->next;
                *pp = l->next;
                free(l->name);
                free(l->off);
                free(l->sz);
                free(l);
            }
        } else {
            if (!l && (l = calloc(1, sizeof *l)) != NULL) {
                if (!(l->name = fk_strdup(kernel_name))) {
                    free(l);
                    l = NULL;
                } else {
                    l->next = g_layouts;
                    g_layouts = l;
                }
            }
            if (!l) {
                rc = -1;
            } else {
                free(l->off);
                free(l->sz);
                l->n = count;
                l->off = o;
                l->sz = s;
                o = s = NULL;
            }
        }
    }
    UNLOCK();
    free(o);
    free(s);
    return rc;
}

FK_EXPORT long long fakecuda_last_launch_params(const char *kernel_name, void *buf, size_t cap)
{
    if (!kernel_name)
        return -1;
    LOCK();
    struct lrec *r = lrec_find(kernel_name, 0);
    long long n = -1;
    if (r) {
        n = (long long)r->len;
        if (buf && r->len)
            memcpy(buf, r->bytes, r->len < cap ? r->len : cap);
    }
    UNLOCK();
    return n;
}

FK_EXPORT long long fakecuda_launch_count(const char *kernel_name)
{
    if (!kernel_name)
        return 0;
    LOCK();
    struct lrec *r = lrec_find(kernel_name, 0);
    long long n = r ? r->count : 0;
    UNLOCK();
    return n;
}

FK_EXPORT int fakecuda_last_launch_dims(const char *kernel_name, unsigned *out9)
{
    if (!kernel_name || !out9)
        return -1;
    LOCK();
    struct lrec *r = lrec_find(kernel_name, 0);
    if (r)
        memcpy(out9, r->dims, sizeof r->dims);
    UNLOCK();
    return r ? 0 : -1;
}

FK_EXPORT int fakecuda_last_launch_mode(const char *kernel_name)
{
    if (!kernel_name)
        return -1;
    LOCK();
    struct lrec *r = lrec_find(kernel_name, 0);
    int m = r ? r->mode : -1;
    UNLOCK();
    return m;
}

FK_EXPORT void *fakecuda_last_launch_stream(const char *kernel_name)
{
    if (!kernel_name)
        return NULL;
    LOCK();
    struct lrec *r = lrec_find(kernel_name, 0);
    void *s = r ? r->stream : NULL;
    UNLOCK();
    return s;
}

FK_EXPORT long long fakecuda_last_multi_launch(unsigned long long *out, size_t cap)
{
    LOCK();
    long long n = g_multi_n;
    for (long long i = 0; out && i < n && i < FK_MULTI_MAX && (size_t)i < cap; i++)
        memcpy(out + 9 * i, g_multi[i], sizeof g_multi[i]);
    UNLOCK();
    return n;
}

FK_EXPORT long long fakecuda_last_launch_attrs(unsigned long long *out, size_t cap)
{
    LOCK();
    long long n = g_launch_attrs_n;
    for (long long i = 0; out && i < n && i < FK_LAUNCH_ATTRS_MAX && (size_t)i < cap; i++)
        memcpy(out + 2 * i, g_launch_attrs[i], sizeof g_launch_attrs[i]);
    UNLOCK();
    return n;
}

FK_EXPORT long long fakecuda_last_ext_sems(unsigned long long *out, size_t cap)
{
    LOCK();
    long long n = g_ext_sems_n;
    for (long long i = 0; out && i < n && i < FK_EXT_SEMS_MAX && (size_t)i < cap; i++)
        out[i] = g_ext_sems[i];
    UNLOCK();
    return n;
}

FK_EXPORT int fakecuda_last_multi_launch_flags(void)
{
    LOCK();
    int f = g_multi_n < 0 ? -1 : (int)g_multi_flags;
    UNLOCK();
    return f;
}

FK_EXPORT int fakecuda_last_occupancy_calls(long long *out, size_t cap)
{
    for (int i = 0; out && i < t_occ_calls && (size_t)i < cap; i++)
        out[i] = t_occ_values[i];
    return t_occ_calls;
}

FK_EXPORT int fakecuda_set_occupancy_foreign(int on)
{
    atomic_store(&g_occ_foreign, on != 0);
    if (on)
        atomic_store(&g_occ_foreign_result, -1);
    return 0;
}

FK_EXPORT long long fakecuda_last_foreign_b2d(void)
{
    return atomic_load(&g_occ_foreign_result);
}

FK_EXPORT long long fakecuda_live_handles(void)
{
    LOCK();
    long long n = g_nkind[K_CTX] + g_nkind[K_STREAM] + g_nkind[K_EVENT] + g_nkind[K_DMEM] +
                  g_nkind[K_HMEM] + g_nkind[K_MODULE] + g_nkind[K_LIBRARY] +
                  g_nkind[K_GRAPH] + g_nkind[K_UOBJ] + g_nkind[K_GEXEC] + g_nkind[K_LINK];
    for (int d = 0; d < FK_NDEV; d++)
        if (g_primary[d] && g_primary[d]->refcount == 0)
            n--;
    UNLOCK();
    return n;
}

FK_EXPORT long long fakecuda_pending_callbacks(void)
{
    LOCK();
    long long n = g_pending_cb + g_pending_d;
    UNLOCK();
    return n;
}

FK_EXPORT long long fakecuda_pending_destructors(void)
{
    LOCK();
    long long n = g_pending_d;
    UNLOCK();
    return n;
}

FK_EXPORT int fakecuda_thread_kind(void)
{
    return t_kind;
}

FK_EXPORT long long fakecuda_last_module_image(void *buf, size_t cap)
{
    LOCK();
    long long n = g_image_len;
    if (n > 0 && buf)
        memcpy(buf, g_image, (size_t)n < cap ? (size_t)n : cap);
    UNLOCK();
    return n;
}

FK_EXPORT int fakecuda_set_capture(void *stream, unsigned long long id, size_t n)
{
    if (n > FK_CAP_MAX)
        return -1;
    LOCK();
    g_cap_stream = (CUstream)stream;
    g_cap_on = stream != NULL;
    g_cap_id = id;
    g_cap_n = n;
    for (size_t i = 0; i < FK_CAP_MAX; i++) {
        g_cap_nodes[i] = (CUgraphNode)(uintptr_t)(0x1000 * (i + 1));
        memset(&g_cap_edges[i], 0, sizeof g_cap_edges[i]);
        g_cap_edges[i].from_port = (unsigned char)i;
        g_cap_edges[i].type = (unsigned char)(i % 2);
    }
    UNLOCK();
    return 0;
}

FK_EXPORT int fakecuda_set_driver_version(int version)
{
    if (version <= 0)
        return -1;
    LOCK();
    g_driver_version = version;
    UNLOCK();
    return 0;
}

/* fork(): like CUDA, the fake is not usable in a child (its worker threads
 * stay in the parent), but a child may exit: G is taken around fork so the
 * child never inherits it held by a worker, and the child's destructor
 * leaves the parent's workers alone. */
static int g_forked_child; /* written only in a child, by its one thread */

static void fk_fork_prepare(void)
{
    LOCK();
}

static void fk_fork_parent(void)
{
    UNLOCK();
}

static void fk_fork_child(void)
{
    g_forked_child = 1;
    UNLOCK();
}

__attribute__((constructor)) static void fk_fork_init(void)
{
    pthread_atfork(fk_fork_prepare, fk_fork_parent, fk_fork_child);
}

/* On unload / exit: never hang. Workers stop without running queued work;
 * wait at most a second for those in the middle of a user callback. */
__attribute__((destructor)) static void fk_fini(void)
{
    if (g_forked_child)
        return; /* the workers are the parent's */
    LOCK();
    g_shutdown = 1;
    size_t n = 0;
    struct obj **v = reg_collect(K_STREAM, NULL, 1, &n);
    for (size_t i = 0; v && i < n; i++)
        pthread_cond_broadcast(&((struct stream *)v[i])->cv_work);
    free(v);
    v = reg_collect(K_CTX, NULL, 1, &n);
    for (size_t i = 0; v && i < n; i++)
        if (((struct ctx *)v[i])->nullstream)
            pthread_cond_broadcast(&((struct ctx *)v[i])->nullstream->cv_work);
    free(v);
    pthread_cond_broadcast(&g_dcv);
    pthread_cond_broadcast(&g_progress);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 1;
    int self = t_kind ? 1 : 0;
    while (g_threads_alive > self)
        if (pthread_cond_timedwait(&g_progress, &G, &dl) == ETIMEDOUT)
            break;
    /* Join the workers that have exited (they no longer need G); the others
     * (stuck in a user callback) are left alone. */
    v = reg_collect(0, NULL, 1, &n);
    for (size_t i = 0; v && i < n; i++) {
        struct stream *s = NULL;
        if (v[i]->kind == K_STREAM)
            s = (struct stream *)v[i];
        else if (v[i]->kind == K_CTX)
            s = ((struct ctx *)v[i])->nullstream;
        if (s && s->started && s->exited && !pthread_equal(s->thr, pthread_self())) {
            pthread_join(s->thr, NULL);
            s->started = 0;
        }
    }
    free(v);
    if (g_dthr_started && g_dthr_exited && !pthread_equal(g_dthr, pthread_self())) {
        pthread_join(g_dthr, NULL);
        g_dthr_started = 0;
    }
    UNLOCK();
}
