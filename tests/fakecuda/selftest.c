/* SPDX-License-Identifier: Apache-2.0 */
/* selftest.c — checks the TEST-ONLY fake CUDA driver (fakecuda.c).
 * Usage: selftest /path/to/fake/libcuda.so.1   (exit status 0: all passed)
 * Everything is reached the way the bindings reach it: dlopen, dlsym of
 * cuGetProcAddress_v2, then cuGetProcAddress_v2 for every function. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda_control.h"

static int g_fail, g_checks;
#define CHECK(cond)                                                              \
    do {                                                                         \
        g_checks++;                                                              \
        if (!(cond)) {                                                           \
            g_fail++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                        \
    } while (0)
#define CHECK_RC(call, want)                                                     \
    do {                                                                         \
        CUresult r_ = (call);                                                    \
        g_checks++;                                                              \
        if (r_ != (want)) {                                                      \
            g_fail++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s -> %d, want %d\n", __FILE__,         \
                    __LINE__, #call, (int)r_, (int)(want));                      \
        }                                                                        \
    } while (0)
#define OK(call) CHECK_RC(call, CUDA_SUCCESS)

static PFN_cuGetProcAddress_v12000 getproc;

static void *lookup(const char *name, int ver)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CUresult r = getproc(name, &p, ver, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    if (r != CUDA_SUCCESS || !p || st != CU_GET_PROC_ADDRESS_SUCCESS) {
        fprintf(stderr, "FATAL: cannot resolve %s@%d (rc %d)\n", name, ver, (int)r);
        exit(2);
    }
    return p;
}
#define RESOLVE(var, name, ver) PFN_##name##_v##ver var = (PFN_##name##_v##ver)lookup(#name, ver)

/* Control API, via dlsym. */
static int (*fc_reset)(void);
static long long (*fc_call_count)(const char *);
static int (*fc_last_proc_version)(const char *);
static long long (*fc_last_proc_flags)(const char *);
static int (*fc_last_variant)(const char *);
static int (*fc_fail_next)(const char *, int, int);
static int (*fc_set_param_layout)(void *, const char *, int, const size_t *, const size_t *);
static long long (*fc_last_launch_params)(const char *, void *, size_t);
static long long (*fc_launch_count)(const char *);
static int (*fc_last_launch_dims)(const char *, unsigned *);
static int (*fc_last_launch_mode)(const char *);
static long long (*fc_live_handles)(void);
static long long (*fc_pending_callbacks)(void);
static int (*fc_thread_kind)(void);
static long long (*fc_last_module_image)(void *, size_t);

/* Resolved driver functions. */
static PFN_cuInit_v2000 pInit;
static PFN_cuDeviceGetCount_v2000 pDeviceGetCount;
static PFN_cuDevicePrimaryCtxRetain_v7000 pRetain;
static PFN_cuDevicePrimaryCtxRelease_v11000 pRelease;
static PFN_cuCtxSetCurrent_v4000 pSetCurrent;
static PFN_cuCtxGetCurrent_v4000 pGetCurrent;
static PFN_cuCtxPushCurrent_v4000 pPush;
static PFN_cuCtxPopCurrent_v4000 pPop;
static PFN_cuStreamCreate_v2000 pStreamCreate;
static PFN_cuStreamDestroy_v4000 pStreamDestroy;
static PFN_cuStreamSynchronize_v2000 pStreamSync;
static PFN_cuLaunchHostFunc_v10000 pLaunchHostFunc;
static PFN_cuMemAlloc_v3020 pMemAlloc;
static PFN_cuMemFree_v3020 pMemFree;
static PFN_cuMemcpyHtoDAsync_v3020 pHtoDAsync;
static PFN_cuMemcpyDtoH_v3020 pDtoH;
static PFN_cuLaunchKernel_v4000 pLaunch;
static PFN_cuEventCreate_v2000 pEventCreate;
static PFN_cuEventRecord_v2000 pEventRecord;
static PFN_cuEventDestroy_v4000 pEventDestroy;
static PFN_cuStreamWaitEvent_v3020 pWaitEvent;

/* ---- thread-local current context ---- */
struct ctxcheck {
    CUcontext seen;
    CUresult rc_alloc;
    CUcontext other;
};
static void *ctx_thread(void *arg)
{
    struct ctxcheck *c = arg;
    CUdeviceptr d = 0;
    pGetCurrent(&c->seen);
    c->rc_alloc = pMemAlloc(&d, 16);
    pSetCurrent(c->other);
    return NULL;
}

/* ---- host functions and callbacks ---- */
struct hostrec {
    pthread_t thr;
    int kind;
    atomic_int ran;
    int order;
    CUstream stream_arg;
    CUresult status;
};
static atomic_int g_order;
static void host_fn(void *ud)
{
    struct hostrec *h = ud;
    h->thr = pthread_self();
    h->kind = fc_thread_kind();
    h->order = atomic_fetch_add(&g_order, 1);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL); /* make the sync really wait */
    atomic_store(&h->ran, 1);
}
static void stream_cb(CUstream s, CUresult status, void *ud)
{
    struct hostrec *h = ud;
    h->stream_arg = s;
    h->status = status;
    host_fn(ud);
}

/* ---- stream capture: host functions run at each replay ---- */
static atomic_int g_replays;
static void count_fn(void *ud)
{
    (void)ud;
    atomic_fetch_add(&g_replays, 1);
}

/* ---- user objects ---- */
static atomic_int g_destroyed;
static pthread_t g_destroy_thr;
static int g_destroy_kind;
static void uo_destroy(void *p)
{
    g_destroy_thr = pthread_self();
    g_destroy_kind = fc_thread_kind();
    atomic_fetch_add(&g_destroyed, *(int *)p);
}

static int wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 2000; i++) {
        if (atomic_load(v) >= want)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* ---- stress ---- */
static CUcontext g_pctx;
static CUfunction g_kfunc;
static atomic_int g_stress_hits;
static void stress_fn(void *ud)
{
    (void)ud;
    atomic_fetch_add(&g_stress_hits, 1);
}
static void *stress_thread(void *arg)
{
    int id = (int)(intptr_t)arg, bad = 0;
    if (pPush(g_pctx) != CUDA_SUCCESS)
        bad++;
    for (int it = 0; it < 40; it++) {
        CUstream s;
        CUdeviceptr d;
        CUevent ev;
        unsigned char in[64], out[64];
        memset(in, id + it, sizeof in);
        if (pStreamCreate(&s, 0) || pMemAlloc(&d, sizeof in) || pEventCreate(&ev, 0)) {
            bad++;
            break;
        }
        bad += pHtoDAsync(d, in, sizeof in, s) != CUDA_SUCCESS;
        bad += pLaunchHostFunc(s, stress_fn, NULL) != CUDA_SUCCESS;
        bad += pEventRecord(ev, s) != CUDA_SUCCESS;
        bad += pWaitEvent(NULL, ev, 0) != CUDA_SUCCESS;
        bad += pLaunchHostFunc(NULL, stress_fn, NULL) != CUDA_SUCCESS;
        int x = id, y = it;
        void *params[] = {&x, &y};
        bad += pLaunch(g_kfunc, 1, 1, 1, 32, 1, 1, 0, s, params, NULL) != CUDA_SUCCESS;
        bad += pStreamSync(s) != CUDA_SUCCESS;
        bad += pDtoH(out, d, sizeof out) != CUDA_SUCCESS;
        bad += memcmp(in, out, sizeof in) != 0;
        bad += pStreamSync(NULL) != CUDA_SUCCESS;
        bad += pEventDestroy(ev) != CUDA_SUCCESS;
        bad += pStreamDestroy(s) != CUDA_SUCCESS;
        bad += pMemFree(d) != CUDA_SUCCESS;
    }
    CUcontext popped;
    if (pPop(&popped) != CUDA_SUCCESS || popped != g_pctx)
        bad++;
    return (void *)(intptr_t)bad;
}

static PFN_cuCtxCreate_v12050 pCreate4g;
static PFN_cuCtxDestroy_v4000 pCtxDestroyG;
static PFN_cuUserObjectCreate_v11030 pUOCreateG;
static PFN_cuUserObjectRelease_v11030 pUOReleaseG;
static CUstream g_shared;
static atomic_int g_uo_destroyed;
static void uo_count(void *p)
{
    (void)p;
    atomic_fetch_add(&g_uo_destroyed, 1);
}
static void *stress2_thread(void *arg)
{
    int id = (int)(intptr_t)arg, bad = 0;
    for (int it = 0; it < 20; it++) {
        CUcontext c;
        CUstream s;
        CUdeviceptr d;
        CUuserObject u;
        static unsigned char src[4096];
        if (pCreate4g(&c, NULL, 0, (id + it) & 1)) {
            bad++;
            break;
        }
        bad += pStreamCreate(&s, 0) != CUDA_SUCCESS;
        bad += pMemAlloc(&d, sizeof src) != CUDA_SUCCESS;
        bad += pHtoDAsync(d, src, sizeof src, s) != CUDA_SUCCESS; /* pending at destroy */
        bad += pLaunchHostFunc(s, stress_fn, NULL) != CUDA_SUCCESS;
        bad += pLaunchHostFunc(g_shared, stress_fn, NULL) != CUDA_SUCCESS;
        bad += pUOCreateG(&u, NULL, uo_count, 2, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) != 0;
        bad += pUOReleaseG(u, 1) != CUDA_SUCCESS;
        bad += pUOReleaseG(u, 1) != CUDA_SUCCESS;
        bad += pCtxDestroyG(c) != CUDA_SUCCESS; /* drains s, frees d */
        /* s is gone; another thread may already own a stream at the same
         * address (handle values are reused), so only a crash or a wrong
         * error is a failure here. */
        CUresult rs = pStreamSync(s);
        bad += rs != CUDA_ERROR_INVALID_HANDLE && rs != CUDA_SUCCESS;
        bad += pPush(g_pctx) != CUDA_SUCCESS;
        bad += pStreamSync(g_shared) != CUDA_SUCCESS;
        CUcontext popped;
        bad += pPop(&popped) != CUDA_SUCCESS;
    }
    return (void *)(intptr_t)bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s /path/to/libcuda.so.1\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    *(void **)&getproc = dlsym(lib, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v11030 getproc1;
    *(void **)&getproc1 = dlsym(lib, "cuGetProcAddress");
#define SYM(v, n) *(void **)&v = dlsym(lib, n); if (!v) { fprintf(stderr, "no %s\n", n); return 2; }
    SYM(fc_reset, "fakecuda_reset");
    SYM(fc_call_count, "fakecuda_call_count");
    SYM(fc_last_proc_version, "fakecuda_last_proc_version");
    SYM(fc_last_proc_flags, "fakecuda_last_proc_flags");
    SYM(fc_last_variant, "fakecuda_last_variant");
    SYM(fc_fail_next, "fakecuda_fail_next");
    SYM(fc_set_param_layout, "fakecuda_set_param_layout");
    SYM(fc_last_launch_params, "fakecuda_last_launch_params");
    SYM(fc_launch_count, "fakecuda_launch_count");
    SYM(fc_last_launch_dims, "fakecuda_last_launch_dims");
    SYM(fc_last_launch_mode, "fakecuda_last_launch_mode");
    SYM(fc_live_handles, "fakecuda_live_handles");
    SYM(fc_pending_callbacks, "fakecuda_pending_callbacks");
    SYM(fc_thread_kind, "fakecuda_thread_kind");
    SYM(fc_last_module_image, "fakecuda_last_module_image");
    if (!getproc || !getproc1) {
        fprintf(stderr, "cuGetProcAddress{,_v2} not exported\n");
        return 2;
    }

    /* ---- cuGetProcAddress ---- */
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st;
    /* an unknown name: success, NULL, SYMBOL_NOT_FOUND (as the 13.0 driver) */
    CHECK_RC(getproc("cuNoSuchFunction", &p, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(fc_last_proc_version("cuNoSuchFunction") == 13000);
    p = (void *)1;
    CHECK_RC(getproc("cuMemAlloc", &p, 3000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    p = (void *)1;
    CHECK_RC(getproc("cuMemAlloc_v2", &p, 13000, 0, &st), CUDA_SUCCESS); /* base names only */
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    p = (void *)1;
    CHECK_RC(getproc1("cuNoSuchFunction", &p, 13000, 0), CUDA_ERROR_NOT_FOUND); /* 11.x: no status */
    CHECK(p == NULL);
    CHECK_RC(getproc("cuInit", &p, 13010, 0, &st), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(getproc("cuInit", &p, 13000, 4, &st), CUDA_ERROR_INVALID_VALUE);
    OK(getproc("cuInit", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(fc_last_proc_version("cuInit") == 12000 && fc_last_proc_flags("cuInit") == 2);
    CHECK(fc_last_proc_version("cuNeverAsked") == -1);
    void *p1 = NULL;
    OK(getproc1("cuInit", &p1, 2000, 0));
    CHECK(p1 == p);
    OK(getproc("cuGetProcAddress", &p1, 12000, 0, &st));
    CHECK(p1 == (void *)getproc);

    /* ---- initialization ---- */
    pInit = (PFN_cuInit_v2000)lookup("cuInit", 2000);
    pDeviceGetCount = (PFN_cuDeviceGetCount_v2000)lookup("cuDeviceGetCount", 2000);
    RESOLVE(pDriverGetVersion, cuDriverGetVersion, 2020);
    int n = -1;
    CHECK_RC(pDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    OK(pDriverGetVersion(&n));
    CHECK(n == 13000);
    CHECK_RC(pInit(1), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    OK(pInit(0));
    OK(pDeviceGetCount(&n));
    CHECK(n == 2);

    /* ---- errors ---- */
    RESOLVE(pErrName, cuGetErrorName, 6000);
    RESOLVE(pErrString, cuGetErrorString, 6000);
    const char *s = NULL;
    OK(pErrName(CUDA_ERROR_INVALID_VALUE, &s));
    CHECK(s && strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
    OK(pErrName(CUDA_ERROR_UNKNOWN, &s));
    CHECK(s && strcmp(s, "CUDA_ERROR_UNKNOWN") == 0);
    OK(pErrString(CUDA_ERROR_OUT_OF_MEMORY, &s));
    CHECK(s && strcmp(s, "out of memory") == 0);
    s = "x";
    CHECK_RC(pErrName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CHECK(s == NULL);
    s = "x";
    CHECK_RC(pErrString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CHECK(s == NULL);

    /* ---- devices ---- */
    RESOLVE(pDeviceGet, cuDeviceGet, 2000);
    RESOLVE(pDeviceGetAttribute, cuDeviceGetAttribute, 2000);
    RESOLVE(pDeviceGetName, cuDeviceGetName, 2000);
    RESOLVE(pDeviceTotalMem, cuDeviceTotalMem, 3020);
    RESOLVE(pDeviceGetUuid, cuDeviceGetUuid, 11040);
    CUdevice dev = -1;
    OK(pDeviceGet(&dev, 1));
    CHECK(dev == 1);
    CHECK_RC(pDeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE);
    CHECK_RC(pDeviceGet(&dev, -1), CUDA_ERROR_INVALID_DEVICE);
    int v = 0;
    OK(pDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1));
    CHECK(v == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT * 1000 + 1);
    CHECK_RC(pDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pDeviceGetAttribute(&v, (CUdevice_attribute)1, 5), CUDA_ERROR_INVALID_DEVICE);
    char name[128];
    OK(pDeviceGetName(name, sizeof name, 0));
    CHECK(strstr(name, "Fake") != NULL);
    char tiny[4];
    OK(pDeviceGetName(tiny, sizeof tiny, 0));
    CHECK(tiny[3] == 0);
    size_t total = 0;
    OK(pDeviceTotalMem(&total, 0));
    CHECK(total == (80ull << 30));
    CUuuid u0, u1;
    OK(pDeviceGetUuid(&u0, 0));
    OK(pDeviceGetUuid(&u1, 1));
    CHECK(memcmp(&u0, &u1, sizeof u0) != 0);
    CHECK(fc_last_variant("cuDeviceGetUuid") == 11040);

    /* ---- contexts ---- */
    pRetain = (PFN_cuDevicePrimaryCtxRetain_v7000)lookup("cuDevicePrimaryCtxRetain", 7000);
    pRelease = (PFN_cuDevicePrimaryCtxRelease_v11000)lookup("cuDevicePrimaryCtxRelease", 11000);
    pSetCurrent = (PFN_cuCtxSetCurrent_v4000)lookup("cuCtxSetCurrent", 4000);
    pGetCurrent = (PFN_cuCtxGetCurrent_v4000)lookup("cuCtxGetCurrent", 4000);
    pPush = (PFN_cuCtxPushCurrent_v4000)lookup("cuCtxPushCurrent", 4000);
    pPop = (PFN_cuCtxPopCurrent_v4000)lookup("cuCtxPopCurrent", 4000);
    pMemAlloc = (PFN_cuMemAlloc_v3020)lookup("cuMemAlloc", 3020);
    pMemFree = (PFN_cuMemFree_v3020)lookup("cuMemFree", 3020);
    RESOLVE(pGetState, cuDevicePrimaryCtxGetState, 7000);
    PFN_cuDevicePrimaryCtxSetFlags_v11000 pSetFlags1 = /* v1 typedef: internal-only */
        (PFN_cuDevicePrimaryCtxSetFlags_v11000)lookup("cuDevicePrimaryCtxSetFlags", 7000);
    RESOLVE(pSetFlags2, cuDevicePrimaryCtxSetFlags, 11000);
    RESOLVE(pCtxDestroy, cuCtxDestroy, 4000);
    RESOLVE(pCtxGetDevice, cuCtxGetDevice, 2000);
    RESOLVE(pCtxGetDevice2, cuCtxGetDevice, 13000);
    RESOLVE(pCtxSync, cuCtxSynchronize, 2000);
    RESOLVE(pCtxApi, cuCtxGetApiVersion, 3020);
    CUdeviceptr dptr = 0;
    CHECK_RC(pMemAlloc(&dptr, 16), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_RC(pCtxSync(), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext cur = (CUcontext)1;
    OK(pGetCurrent(&cur));
    CHECK(cur == NULL);
    unsigned flags = 99;
    int active = 99;
    OK(pGetState(0, &flags, &active));
    CHECK(flags == 0 && active == 0);
    CUcontext pctx = NULL, pctx2 = NULL, pctx1 = NULL;
    OK(pRetain(&pctx, 0));
    OK(pRetain(&pctx2, 0));
    CHECK(pctx && pctx == pctx2);
    OK(pRetain(&pctx1, 1));
    CHECK(pctx1 && pctx1 != pctx);
    OK(pGetState(0, &flags, &active));
    CHECK(active == 1);
    CHECK_RC(pSetFlags1(0, CU_CTX_SCHED_YIELD), CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
    OK(pSetFlags2(0, CU_CTX_SCHED_YIELD));
    OK(pGetState(0, &flags, &active));
    CHECK(flags == CU_CTX_SCHED_YIELD);
    CHECK_RC(pCtxDestroy(pctx), CUDA_ERROR_INVALID_CONTEXT); /* primary */
    OK(pSetCurrent(pctx));
    OK(pGetCurrent(&cur));
    CHECK(cur == pctx);
    CUdevice cd = -1;
    OK(pCtxGetDevice(&cd));
    CHECK(cd == 0);
    OK(pCtxGetDevice2(&cd, pctx1));
    CHECK(cd == 1 && fc_last_variant("cuCtxGetDevice") == 13000);
    CHECK_RC(pCtxGetDevice2(&cd, (CUcontext)&cd), CUDA_ERROR_INVALID_CONTEXT);
    unsigned api = 0;
    OK(pCtxApi(NULL, &api));
    CHECK(api == 3020);
    /* Thread-local: another thread has no current context and its own stack. */
    struct ctxcheck cc = {(CUcontext)1, CUDA_SUCCESS, pctx1};
    pthread_t th;
    pthread_create(&th, NULL, ctx_thread, &cc);
    pthread_join(th, NULL);
    CHECK(cc.seen == NULL && cc.rc_alloc == CUDA_ERROR_INVALID_CONTEXT);
    OK(pGetCurrent(&cur));
    CHECK(cur == pctx);
    OK(pPush(pctx1));
    OK(pCtxGetDevice(&cd));
    CHECK(cd == 1);
    OK(pPop(&cur));
    CHECK(cur == pctx1);
    OK(pCtxGetDevice(&cd));
    CHECK(cd == 0);
    CHECK_RC(pPush((CUcontext)&cd), CUDA_ERROR_INVALID_CONTEXT);

    /* cuCtxCreate: one implementation per ABI. */
    RESOLVE(pCreate2, cuCtxCreate, 3020);
    RESOLVE(pCreate3, cuCtxCreate, 11040);
    RESOLVE(pCreate4, cuCtxCreate, 12050);
    CHECK((void *)pCreate2 != (void *)pCreate3 && (void *)pCreate3 != (void *)pCreate4);
    CHECK(fc_last_proc_version("cuCtxCreate") == 12050);
    CHECK(lookup("cuCtxCreate", 12040) == (void *)pCreate3);
    CHECK(lookup("cuCtxCreate", 13000) == (void *)pCreate4);
    CHECK(lookup("cuCtxCreate", 11000) == (void *)pCreate2);
    CUcontext c2 = NULL, c3 = NULL, c4 = NULL;
    OK(pCreate2(&c2, 0, 1));
    CHECK(fc_last_variant("cuCtxCreate") == 3020);
    OK(pGetCurrent(&cur));
    CHECK(cur == c2);
    OK(pCtxGetDevice(&cd));
    CHECK(cd == 1);
    OK(pCreate3(&c3, NULL, 0, 0, 0));
    CHECK(fc_last_variant("cuCtxCreate") == 11040);
    OK(pCreate4(&c4, NULL, 0, 1));
    CHECK(fc_last_variant("cuCtxCreate") == 12050);
    CHECK_RC(pCreate2(&c2, 0, 7), CUDA_ERROR_INVALID_DEVICE);
    CHECK(c2 && c3 && c4 && c2 != c3 && c3 != c4);
    OK(pCtxDestroy(c4)); /* current: popped */
    OK(pGetCurrent(&cur));
    CHECK(cur == c3);
    CHECK_RC(pCtxDestroy(c4), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_RC(pCtxDestroy((CUcontext)&cd), CUDA_ERROR_INVALID_CONTEXT);
    OK(pCtxDestroy(c3));
    OK(pCtxDestroy(c2));
    OK(pGetCurrent(&cur));
    CHECK(cur == pctx);

    /* ---- memory ---- */
    pDtoH = (PFN_cuMemcpyDtoH_v3020)lookup("cuMemcpyDtoH", 3020);
    pHtoDAsync = (PFN_cuMemcpyHtoDAsync_v3020)lookup("cuMemcpyHtoDAsync", 3020);
    RESOLVE(pHtoD, cuMemcpyHtoD, 3020);
    RESOLVE(pDtoD, cuMemcpyDtoD, 3020);
    RESOLVE(pDtoHAsync, cuMemcpyDtoHAsync, 3020);
    RESOLVE(pMemsetD8, cuMemsetD8, 3020);
    RESOLVE(pMemsetD32, cuMemsetD32, 3020);
    RESOLVE(pMemGetInfo, cuMemGetInfo, 3020);
    RESOLVE(pAllocHost, cuMemAllocHost, 3020);
    RESOLVE(pFreeHost, cuMemFreeHost, 2000);
    RESOLVE(pPtrAttr, cuPointerGetAttribute, 4000);
    CUdeviceptr d1 = 0, d2 = 0;
    OK(pMemAlloc(&d1, 1000));
    OK(pMemAlloc(&d2, 1000));
    CHECK(d1 % 256 == 0);
    CHECK_RC(pMemAlloc(&d2, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pMemAlloc(&d2, (size_t)(81ull << 30)), CUDA_ERROR_OUT_OF_MEMORY);
    size_t fr = 0, tot = 0;
    OK(pMemGetInfo(&fr, &tot));
    CHECK(tot == (80ull << 30) && fr == tot - 2000);
    unsigned char buf[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = (unsigned char)(i * 7);
    OK(pHtoD(d1, buf, sizeof buf));
    OK(pDtoD(d2, d1, sizeof buf));
    memset(back, 0, sizeof back);
    OK(pDtoH(back, d2, sizeof back));
    CHECK(memcmp(buf, back, sizeof buf) == 0);
    CHECK_RC(pHtoD(d1 + 900, buf, 101), CUDA_ERROR_INVALID_VALUE);
    OK(pHtoD(d1 + 900, buf, 100));
    OK(pMemsetD8(d1, 0xAB, 10));
    OK(pMemsetD32(d1 + 16, 0x01020304u, 4));
    CHECK_RC(pMemsetD32(d1 + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
    OK(pDtoH(back, d1, 32));
    unsigned w32;
    memcpy(&w32, back + 20, 4);
    CHECK(back[0] == 0xAB && back[9] == 0xAB && back[10] == buf[10] && w32 == 0x01020304u);
    CUcontext owner = NULL;
    OK(pPtrAttr(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, d1 + 5));
    CHECK(owner == pctx);
    unsigned mt = 0;
    OK(pPtrAttr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d1));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CUdeviceptr dp = 0;
    OK(pPtrAttr(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d1 + 5));
    CHECK(dp == d1 + 5);
    CHECK_RC(pPtrAttr(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)buf),
             CUDA_ERROR_INVALID_VALUE);
    void *hp = NULL;
    OK(pAllocHost(&hp, 64));
    OK(pPtrAttr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)hp));
    CHECK(mt == CU_MEMORYTYPE_HOST);
    OK(pFreeHost(hp));
    CHECK_RC(pFreeHost(hp), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pMemFree(d1 + 1), CUDA_ERROR_INVALID_VALUE);

    /* ---- streams, host functions, callbacks, events ---- */
    pStreamCreate = (PFN_cuStreamCreate_v2000)lookup("cuStreamCreate", 2000);
    pStreamDestroy = (PFN_cuStreamDestroy_v4000)lookup("cuStreamDestroy", 4000);
    pStreamSync = (PFN_cuStreamSynchronize_v2000)lookup("cuStreamSynchronize", 2000);
    pLaunchHostFunc = (PFN_cuLaunchHostFunc_v10000)lookup("cuLaunchHostFunc", 10000);
    pEventCreate = (PFN_cuEventCreate_v2000)lookup("cuEventCreate", 2000);
    pEventRecord = (PFN_cuEventRecord_v2000)lookup("cuEventRecord", 2000);
    pEventDestroy = (PFN_cuEventDestroy_v4000)lookup("cuEventDestroy", 4000);
    pWaitEvent = (PFN_cuStreamWaitEvent_v3020)lookup("cuStreamWaitEvent", 3020);
    RESOLVE(pStreamCreatePrio, cuStreamCreateWithPriority, 5050);
    RESOLVE(pStreamQuery, cuStreamQuery, 2000);
    RESOLVE(pStreamGetFlags, cuStreamGetFlags, 5050);
    RESOLVE(pStreamGetPrio, cuStreamGetPriority, 5050);
    RESOLVE(pStreamGetCtx, cuStreamGetCtx, 9020);
    RESOLVE(pStreamGetCtx2, cuStreamGetCtx, 12050);
    RESOLVE(pAddCallback, cuStreamAddCallback, 5000);
    RESOLVE(pEventQuery, cuEventQuery, 2000);
    RESOLVE(pEventSync, cuEventSynchronize, 2000);
    RESOLVE(pElapsed, cuEventElapsedTime, 12080);
    CUstream st1 = NULL, st2 = NULL;
    OK(pStreamCreate(&st1, CU_STREAM_NON_BLOCKING));
    OK(pStreamCreatePrio(&st2, 0, -100));
    CHECK_RC(pStreamCreate(&st2, 8), CUDA_ERROR_INVALID_VALUE);
    int prio = 0;
    OK(pStreamGetPrio(st2, &prio));
    CHECK(prio == -5);
    OK(pStreamGetFlags(st1, &flags));
    CHECK(flags == CU_STREAM_NON_BLOCKING);
    OK(pStreamGetCtx(st1, &cur));
    CHECK(cur == pctx);
    CUgreenCtx gc = (CUgreenCtx)1;
    OK(pStreamGetCtx2(CU_STREAM_LEGACY, &cur, &gc));
    CHECK(cur == pctx && gc == NULL && fc_last_variant("cuStreamGetCtx") == 12050);
    CHECK_RC(pStreamQuery((CUstream)&cd), CUDA_ERROR_INVALID_HANDLE);
    struct hostrec h1 = {0}, h2 = {0}, h3 = {0};
    atomic_store(&g_order, 0);
    OK(pLaunchHostFunc(st1, host_fn, &h1));
    OK(pAddCallback(st1, stream_cb, &h2, 0));
    CHECK_RC(pAddCallback(st1, stream_cb, &h2, 1), CUDA_ERROR_INVALID_VALUE);
    OK(pStreamSync(st1));
    CHECK(atomic_load(&h1.ran) && atomic_load(&h2.ran));
    CHECK(!pthread_equal(h1.thr, pthread_self()) && pthread_equal(h1.thr, h2.thr));
    CHECK(h1.kind == 1 && h1.order == 0 && h2.order == 1);
    CHECK(h2.stream_arg == st1 && h2.status == CUDA_SUCCESS);
    CHECK(fc_pending_callbacks() == 0);
    OK(pStreamQuery(st1));
    OK(pLaunchHostFunc(NULL, host_fn, &h3)); /* the NULL stream has its own worker */
    OK(pCtxSync());
    CHECK(atomic_load(&h3.ran) && !pthread_equal(h3.thr, pthread_self()) &&
          !pthread_equal(h3.thr, h1.thr));
    /* async copy ordered before a host function on the same stream */
    unsigned char abuf[256], aback[256];
    memset(abuf, 0x5A, sizeof abuf);
    memset(aback, 0, sizeof aback);
    OK(pHtoDAsync(d2, abuf, sizeof abuf, st2));
    OK(pDtoHAsync(aback, d2, sizeof aback, st2));
    OK(pStreamSync(st2));
    CHECK(memcmp(abuf, aback, sizeof abuf) == 0);
    /* events */
    CUevent e1, e2, e3;
    OK(pEventCreate(&e1, 0));
    OK(pEventCreate(&e2, 0));
    OK(pEventCreate(&e3, CU_EVENT_DISABLE_TIMING));
    CHECK_RC(pEventCreate(&e3, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    float ms = -1;
    CHECK_RC(pElapsed(&ms, e1, e2), CUDA_ERROR_INVALID_HANDLE); /* never recorded */
    OK(pEventQuery(e1));
    struct hostrec h4 = {0};
    OK(pEventRecord(e1, st1));
    OK(pLaunchHostFunc(st1, host_fn, &h4));
    OK(pEventRecord(e2, st1));
    OK(pWaitEvent(st2, e2, 0));
    OK(pEventRecord(e3, st2));
    OK(pEventSync(e3));
    CHECK(atomic_load(&h4.ran)); /* st2 waited for e2, recorded after h4 on st1 */
    OK(pEventQuery(e2));
    OK(pElapsed(&ms, e1, e2));
    CHECK(ms >= 1.0f);
    CHECK_RC(pElapsed(&ms, e1, e3), CUDA_ERROR_INVALID_HANDLE);
    OK(pEventDestroy(e1));
    OK(pEventDestroy(e2));
    OK(pEventDestroy(e3));
    CHECK_RC(pEventDestroy(e3), CUDA_ERROR_INVALID_HANDLE);
    OK(pStreamDestroy(st1));
    OK(pStreamDestroy(st2));
    CHECK_RC(pStreamDestroy(st2), CUDA_ERROR_INVALID_HANDLE);

    /* ---- user objects and graphs ---- */
    RESOLVE(pUOCreate, cuUserObjectCreate, 11030);
    RESOLVE(pUORetain, cuUserObjectRetain, 11030);
    RESOLVE(pUORelease, cuUserObjectRelease, 11030);
    RESOLVE(pGraphCreate, cuGraphCreate, 10000);
    RESOLVE(pGraphDestroy, cuGraphDestroy, 10000);
    RESOLVE(pGraphRetainUO, cuGraphRetainUserObject, 11030);
    RESOLVE(pGraphReleaseUO, cuGraphReleaseUserObject, 11030);
    static int one = 1, ten = 10;
    CUuserObject uo, uo2;
    CHECK_RC(pUOCreate(&uo, &one, uo_destroy, 1, 0), CUDA_ERROR_INVALID_VALUE);
    OK(pUOCreate(&uo, &one, uo_destroy, 2, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    OK(pUORetain(uo, 1));
    OK(pUORelease(uo, 2));
    CHECK(atomic_load(&g_destroyed) == 0);
    OK(pUORelease(uo, 1));
    CHECK(wait_for(&g_destroyed, 1));
    CHECK(!pthread_equal(g_destroy_thr, pthread_self()) && g_destroy_kind == 2);
    CHECK_RC(pUORelease(uo, 1), CUDA_ERROR_INVALID_HANDLE);
    CUgraph graph;
    OK(pGraphCreate(&graph, 0));
    OK(pUOCreate(&uo2, &ten, uo_destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    OK(pGraphRetainUO(graph, uo2, 1, CU_GRAPH_USER_OBJECT_MOVE));
    OK(pGraphRetainUO(graph, uo2, 2, 0));
    OK(pGraphReleaseUO(graph, uo2, 1));
    CHECK_RC(pGraphReleaseUO(graph, uo2, 5), CUDA_ERROR_INVALID_VALUE);
    CHECK(atomic_load(&g_destroyed) == 1);
    OK(pGraphDestroy(graph));
    CHECK(wait_for(&g_destroyed, 11));

    /* ---- stream capture of host functions ---- */
    RESOLVE(pBeginCapture, cuStreamBeginCapture, 10010);
    RESOLVE(pEndCapture, cuStreamEndCapture, 10000);
    RESOLVE(pIsCapturing, cuStreamIsCapturing, 10000);
    RESOLVE(pCaptureInfo, cuStreamGetCaptureInfo, 11030);
    RESOLVE(pGetNodes, cuGraphGetNodes, 10000);
    RESOLVE(pInstantiate, cuGraphInstantiateWithFlags, 11040);
    RESOLVE(pGraphLaunch, cuGraphLaunch, 10000);
    RESOLVE(pExecDestroy, cuGraphExecDestroy, 10000);
    CUstream cs;
    CUgraph capg = NULL, ended = NULL;
    OK(pStreamCreate(&cs, 0));
    CHECK_RC(pBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_RC(pEndCapture(cs, &ended), CUDA_ERROR_ILLEGAL_STATE);
    OK(pBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_RC(pBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    CUstreamCaptureStatus cst = CU_STREAM_CAPTURE_STATUS_NONE;
    OK(pIsCapturing(cs, &cst));
    CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    cuuint64_t cid = 0;
    OK(pCaptureInfo(cs, &cst, &cid, &capg, NULL, NULL));
    CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE && capg != NULL && cid != 0);
    OK(pLaunchHostFunc(cs, count_fn, NULL));
    OK(pEndCapture(cs, &ended));
    CHECK(ended == capg);
    OK(pIsCapturing(cs, &cst));
    CHECK(cst == CU_STREAM_CAPTURE_STATUS_NONE);
    OK(pStreamSync(cs));
    CHECK(atomic_load(&g_replays) == 0); /* captured, not run */
    size_t nnodes = 0;
    OK(pGetNodes(capg, NULL, &nnodes));
    CHECK(nnodes == 1);
    CUgraphExec gx;
    OK(pInstantiate(&gx, capg, 0));
    OK(pGraphLaunch(gx, cs));
    OK(pGraphLaunch(gx, cs));
    OK(pStreamSync(cs));
    CHECK(atomic_load(&g_replays) == 2); /* once per replay, on the stream */
    OK(pExecDestroy(gx));
    OK(pGraphDestroy(capg));
    OK(pBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(pLaunchHostFunc(cs, count_fn, NULL));
    OK(pStreamDestroy(cs)); /* ends the capture, its graph freed */
    CHECK(atomic_load(&g_replays) == 2);

    /* ---- modules, parameter layout, launches ---- */
    RESOLVE(pModLoad, cuModuleLoadData, 2000);
    RESOLVE(pModUnload, cuModuleUnload, 2000);
    RESOLVE(pModGetFunction, cuModuleGetFunction, 2000);
    RESOLVE(pParamInfo, cuFuncGetParamInfo, 12040);
    RESOLVE(pFuncAttr, cuFuncGetAttribute, 2020);
    RESOLVE(pLaunchEx, cuLaunchKernelEx, 11060);
    RESOLVE(pLaunchCoop, cuLaunchCooperativeKernel, 9000);
    RESOLVE(pLibLoad, cuLibraryLoadData, 12000);
    RESOLVE(pLibUnload, cuLibraryUnload, 12000);
    RESOLVE(pLibGetKernel, cuLibraryGetKernel, 12000);
    RESOLVE(pKernelGetFunc, cuKernelGetFunction, 12000);
    pLaunch = (PFN_cuLaunchKernel_v4000)lookup("cuLaunchKernel", 4000);
    CUmodule mod;
    OK(pModLoad(&mod, "\x7f" "ELF-fake-image"));
    unsigned char img[32];
    CHECK(fc_last_module_image(img, sizeof img) == 16 && memcmp(img, "\x7f" "ELF", 4) == 0);
    CUfunction fa, fa2, fb;
    OK(pModGetFunction(&fa, mod, "axpy"));
    OK(pModGetFunction(&fa2, mod, "axpy"));
    OK(pModGetFunction(&fb, mod, "anything_at_all"));
    CHECK(fa == fa2 && fa != fb);
    size_t po, ps;
    CHECK_RC(pParamInfo(fa, 0, &po, &ps), CUDA_ERROR_INVALID_VALUE); /* no layout */
    size_t offs[3] = {0, 8, 16}, sizes[3] = {4, 8, 2};
    CHECK(fc_set_param_layout(NULL, "axpy", 3, offs, sizes) == 0);
    OK(pParamInfo(fa, 1, &po, &ps));
    CHECK(po == 8 && ps == 8);
    CHECK_RC(pParamInfo(fa, 3, &po, &ps), CUDA_ERROR_INVALID_VALUE);
    int a = 0x11223344;
    double x = 2.5;
    short sh = 0x5566;
    void *params[] = {&a, &x, &sh};
    CHECK_RC(pLaunch(fa, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pLaunch(fa, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pLaunch((CUfunction)&a, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    OK(pLaunch(fa, 4, 5, 6, 32, 2, 1, 128, NULL, params, NULL));
    unsigned char want[18] = {0}, got[64];
    memcpy(want, &a, 4);
    memcpy(want + 8, &x, 8);
    memcpy(want + 16, &sh, 2);
    CHECK(fc_last_launch_params("axpy", got, sizeof got) == 18);
    CHECK(memcmp(got, want, 18) == 0);
    unsigned dims[9];
    CHECK(fc_last_launch_dims("axpy", dims) == 0);
    CHECK(dims[0] == 4 && dims[1] == 5 && dims[2] == 6 && dims[3] == 32 && dims[4] == 2 &&
          dims[5] == 1 && dims[6] == 128 && dims[7] == 1);
    CHECK(fc_launch_count("axpy") == 1 && fc_last_launch_mode("axpy") == 1);
    /* extra = packed buffer */
    unsigned char packed[24];
    size_t psize = sizeof packed;
    for (int i = 0; i < 24; i++)
        packed[i] = (unsigned char)(100 + i);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                     CU_LAUNCH_PARAM_END};
    OK(pLaunch(fa, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, extra));
    CHECK(fc_last_launch_params("axpy", got, sizeof got) == 24 && memcmp(got, packed, 24) == 0);
    CHECK(fc_last_launch_mode("axpy") == 2);
    CHECK_RC(pLaunch(fa, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra), CUDA_ERROR_INVALID_VALUE);
    /* per-function layout wins over the by-name one */
    size_t o1[1] = {4}, s1[1] = {4};
    CHECK(fc_set_param_layout((void *)fb, NULL, 1, o1, s1) == 0);
    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 2;
    cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 3;
    cfg.sharedMemBytes = 7;
    OK(pLaunchEx(&cfg, fb, params, NULL));
    CHECK(fc_last_launch_params("anything_at_all", got, sizeof got) == 8);
    CHECK(memcmp(got, "\0\0\0\0", 4) == 0 && memcmp(got + 4, &a, 4) == 0);
    OK(pLaunchCoop(fa, 1, 1, 1, 1, 1, 1, 0, NULL, params));
    CHECK(fc_launch_count("axpy") == 3);
    int fattr = 0;
    OK(pFuncAttr(&fattr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fa));
    CHECK(fattr == 1024);
    /* library / kernel path; a CUkernel may stand for a CUfunction */
    CUlibrary libh;
    CUkernel kern;
    CUfunction kf;
    OK(pLibLoad(&libh, "fatbin", NULL, NULL, 0, NULL, NULL, 0));
    OK(pLibGetKernel(&kern, libh, "axpy"));
    OK(pKernelGetFunc(&kf, kern));
    OK(pParamInfo(kf, 2, &po, &ps));
    CHECK(po == 16 && ps == 2);
    OK(pLaunch((CUfunction)kern, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CHECK(fc_launch_count("axpy") == 4);
    OK(pLibUnload(libh));
    OK(pModUnload(mod));
    CHECK_RC(pModGetFunction(&fa, mod, "x"), CUDA_ERROR_INVALID_HANDLE);
    CHECK_RC(pLaunch(fa, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);

    /* ---- fault injection and call counts ---- */
    long long before = fc_call_count("cuMemAlloc");
    CHECK(fc_fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY, 1) == 0);
    CUdeviceptr d3 = 0;
    CHECK_RC(pMemAlloc(&d3, 8), CUDA_ERROR_OUT_OF_MEMORY);
    OK(pMemAlloc(&d3, 8));
    OK(pMemFree(d3));
    CHECK(fc_fail_next("cuMemFree", CUDA_ERROR_UNKNOWN, 2) == 0);
    OK(pMemAlloc(&d3, 8));
    CHECK_RC(pMemFree(0), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(pMemFree(d3), CUDA_ERROR_UNKNOWN);
    OK(pMemFree(d3));
    CHECK(fc_fail_next("cuCtxGetCurrent", CUDA_ERROR_LAUNCH_FAILED, 0) == 0);
    CHECK_RC(pGetCurrent(&cur), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_RC(pGetCurrent(&cur), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(fc_fail_next("cuCtxGetCurrent", 0, 0) == 0);
    OK(pGetCurrent(&cur));
    CHECK(fc_call_count("cuMemAlloc") == before + 3);
    CHECK(fc_call_count("cuNoSuch") == -1 && fc_fail_next("cuNoSuch", 1, 1) == -1);

    /* ---- 16-thread stress ---- */
    CUmodule smod;
    OK(pModLoad(&smod, "x"));
    OK(pModGetFunction(&g_kfunc, smod, "stress"));
    size_t so[2] = {0, 4}, ss[2] = {4, 4};
    fc_set_param_layout(NULL, "stress", 2, so, ss);
    g_pctx = pctx;
    pthread_t ths[16];
    for (int i = 0; i < 16; i++)
        pthread_create(&ths[i], NULL, stress_thread, (void *)(intptr_t)i);
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        void *r;
        pthread_join(ths[i], &r);
        bad += (int)(intptr_t)r;
    }
    CHECK(bad == 0);
    OK(pCtxSync());
    CHECK(atomic_load(&g_stress_hits) == 16 * 40 * 2);
    CHECK(fc_launch_count("stress") == 16 * 40);
    OK(pModUnload(smod));
    /* contexts created and destroyed with work pending; one shared stream */
    pCreate4g = pCreate4;
    pCtxDestroyG = pCtxDestroy;
    pUOCreateG = pUOCreate;
    pUOReleaseG = pUORelease;
    atomic_store(&g_stress_hits, 0);
    OK(pStreamCreate(&g_shared, 0));
    long long live0 = fc_live_handles();
    for (int i = 0; i < 16; i++)
        pthread_create(&ths[i], NULL, stress2_thread, (void *)(intptr_t)i);
    bad = 0;
    for (int i = 0; i < 16; i++) {
        void *r;
        pthread_join(ths[i], &r);
        bad += (int)(intptr_t)r;
    }
    CHECK(bad == 0);
    OK(pStreamSync(g_shared));
    CHECK(atomic_load(&g_stress_hits) == 16 * 20 * 2);
    CHECK(wait_for(&g_uo_destroyed, 16 * 20));
    CHECK(fc_live_handles() == live0);
    OK(pStreamDestroy(g_shared));

    /* ---- leaks, release, reset ---- */
    OK(pMemFree(d1));
    OK(pMemFree(d2));
    CHECK(fc_live_handles() == 2); /* two retained primary contexts */
    OK(pRelease(0));
    OK(pRelease(0));
    CHECK_RC(pRelease(0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_RC(pMemAlloc(&d3, 8), CUDA_ERROR_CONTEXT_IS_DESTROYED); /* still current */
    OK(pRelease(1));
    CHECK(fc_live_handles() == 0);
    OK(pRetain(&pctx, 0));
    OK(pMemAlloc(&d3, 8)); /* left for reset to drop */
    CUstream leak;
    OK(pStreamCreate(&leak, 0));
    OK(pLaunchHostFunc(leak, host_fn, &h1));
    CHECK(fc_live_handles() == 3);
    /* Parents that own children, left for reset (tests/fuzz/README.md,
     * finding 4: freeing a library freed its kernels, which reset then read
     * and freed again; build/tests/fakecuda_selftest_asan catches that). */
    OK(pLibLoad(&libh, "fatbin", NULL, NULL, 0, NULL, NULL, 0));
    OK(pLibGetKernel(&kern, libh, "axpy"));
    OK(pKernelGetFunc(&kf, kern));
    OK(pLibGetKernel(&kern, libh, "other"));
    OK(pModLoad(&mod, "\x7f" "ELF-fake-image"));
    OK(pModGetFunction(&fa, mod, "axpy"));
    OK(pModGetFunction(&fb, mod, "anything_at_all"));
    CHECK(fc_live_handles() > 3);
    CHECK(fc_reset() == 0);
    CHECK(fc_live_handles() == 0 && fc_pending_callbacks() == 0);
    CHECK_RC(pDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    CHECK(fc_call_count("cuMemAlloc") == 0);
    CHECK(fc_last_proc_version("cuCtxCreate") == 11000); /* lookups survive reset */
    OK(pInit(0));
    OK(pGetCurrent(&cur));
    CHECK(cur == NULL);
    CHECK(fc_reset() == 0);

    printf("fakecuda selftest: %d checks, %d failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
