/* SPDX-License-Identifier: Apache-2.0 */
/* c_bench.c — the benchmark cases of bench/ called from plain C: the floor
 * the Python bindings are compared with.
 *
 *   c_bench [--lib PATH] [--image FILE]... [--n N] [--n-launch N]
 *           [--reps R] [--thread-calls N] [--thread-launches N] [--no-threads]
 *           [--launch-submit] [--cpus LIST]
 *
 * The driver is opened with dlopen ("libcuda.so.1", or --lib, or
 * $CUBIND_LIBCUDA) and every entry point is resolved through
 * cuGetProcAddress_v2 with the header's CUDA_VERSION, so each pointer has the
 * ABI of the prototype cuda.h declares (the type of each pointer is taken
 * from that declaration with __typeof__). No link against libcuda.
 *
 * Output: one JSON object per line on stdout,
 *   {"impl": "c", "case": NAME, "ns": BEST_NS_PER_CALL, "n": N, "reps": [...]}
 *   {"impl": "c", "case": "threads_...", "threads": T, "mcalls_per_s": X,
 *    "cpu_share": CPU time / wall time of the threads' loops (1.0: never
 *    descheduled; lower: the machine ran something else on their CPUs),
 *    "rounds": [the rate of each repetition], "cpu_shares": [its share]}
 *   (X is the best of "rounds"; repetition r of every thread count is
 *   round r, so bench/ft_threads.py takes an 8 / 1 ratio per round as it
 *   does for Python)
 *   {"impl": "c", "case": NAME, "status": "n/a", "reason": "..."}
 * Diagnostics go to stderr. Each case is a tight loop of N calls timed with
 * clock_gettime(CLOCK_MONOTONIC); the best of R loops is reported. Launch
 * cases synchronize the stream once after the loop, inside the timed region.
 *
 * Built with -DCB_LIBRARY -shared -fPIC it is instead a library for
 * bench/paired.py, which times C in the Python process itself, loop for
 * loop beside the bindings: cb_lib_open(lib, image, launch_submit) sets up
 * what main does (0 on success), then cb_lib_loop(case, n) runs one loop of
 * n calls of one case and returns its ns per call (after a warm-up of n/10
 * calls), or -1 when the case cannot run. No threads cases there.
 * cb_lib_proc and cb_lib_handle give bench/thin_ext.c the same entry points
 * and handles, so its thin binding calls exactly what C's loops call.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The driver entry points, typed by the header's own declarations. */
#define CB_FUNCS(X)                                                            \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetAttribute)     \
    X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent)          \
    X(cuStreamCreate) X(cuStreamQuery) X(cuStreamSynchronize)                  \
    X(cuStreamDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventQuery)       \
    X(cuEventDestroy) X(cuMemAlloc) X(cuMemFree) X(cuPointerGetAttribute)      \
    X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLaunchKernel)               \
    X(cuGetErrorName)

#define CB_DECLARE(name) static __typeof__(&name) p_##name;
CB_FUNCS(CB_DECLARE)

typedef CUresult (*cb_getproc_fn)(const char *, void **, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult *);

/* Settings; fixed after argument parsing, read by every thread. */
static long cb_n = 200000;
static long cb_n_launch = 20000;
static int cb_launch_submit = 0;   /* --launch-submit */
#define CB_MAX_REPS 64
static int cb_reps = 3;
#ifndef CB_LIBRARY /* the threads cases: the executable only */
static long cb_thread_calls = 200000;
static long cb_thread_launches = 5000;
static int cb_threads = 1;
/* --cpus LIST: thread i of a threads case runs on cb_cpus[i % cb_ncpus]
 * (bench/ft_threads.py picks one logical CPU per physical core first). */
static int cb_cpus[64];
static int cb_ncpus = 0;
#endif

/* The state every case shares, set up once by cb_open. */
static CUdevice cb_dev;
static CUcontext cb_ctx;
static CUstream cb_stream;
static CUevent cb_event;
static CUdeviceptr cb_dptr;
static CUmodule cb_module;

static uint64_t cb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *cb_errname(CUresult r)
{
    const char *s = NULL;
    if (p_cuGetErrorName == NULL || p_cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL)
        return "unknown CUresult";
    return s;
}

/* Library mode: the one case cb_lib_loop runs (NULL: every case), and
 * where its result goes instead of stdout. */
static const char *cb_only;
static double cb_only_ns = -1;

static int cb_wanted(const char *name)
{
    return !cb_only || strcmp(cb_only, name) == 0;
}

static void cb_na(const char *name, const char *why, CUresult r)
{
    if (cb_only) {
        if (cb_wanted(name)) {
            cb_only_ns = -1;
            fprintf(stderr, "c_bench: %s: %s: %s (%d)\n", name, why, cb_errname(r), (int)r);
        }
        return;
    }
    printf("{\"impl\": \"c\", \"case\": \"%s\", \"status\": \"n/a\", "
           "\"reason\": \"%s: %s (%d)\"}\n", name, why, cb_errname(r), (int)r);
    fflush(stdout);
}

static void cb_emit(const char *name, const double *reps, long n)
{
    double best = reps[0];
    for (int i = 1; i < cb_reps; i++)
        if (reps[i] < best)
            best = reps[i];
    if (cb_only) {
        cb_only_ns = best;
        return;
    }
    printf("{\"impl\": \"c\", \"case\": \"%s\", \"status\": \"ok\", \"ns\": %.2f, "
           "\"n\": %ld, \"reps\": [", name, best, n);
    for (int i = 0; i < cb_reps; i++)
        printf("%s%.2f", i ? ", " : "", reps[i]);
    printf("]}\n");
    fflush(stdout);
}

/* Times BODY (which must assign a CUresult to `r`) over N iterations, R
 * times; POST runs once per loop, inside the timing when POST_TIMED is
 * non-zero, right after it otherwise; any error ends the case. */
#define CB_CASE_T(NAME, N, BODY, POST, POST_TIMED)                             \
    do {                                                                       \
        if (!cb_wanted(NAME))                                                  \
            break;                                                             \
        double reps_[CB_MAX_REPS];                                             \
        CUresult r = CUDA_SUCCESS, bad_ = CUDA_SUCCESS;                        \
        for (long i_ = 0; i_ < (N) / 10 + 1 && bad_ == CUDA_SUCCESS; i_++) {   \
            BODY;                                                              \
            bad_ = r;                                                          \
        }                                                                      \
        if (bad_ == CUDA_SUCCESS) { POST; bad_ = r; }                          \
        for (int rep_ = 0; rep_ < cb_reps && bad_ == CUDA_SUCCESS; rep_++) {   \
            uint64_t t0_ = cb_now_ns(), t1_;                                   \
            for (long i_ = 0; i_ < (N); i_++) {                                \
                BODY;                                                          \
                bad_ |= r;                                                     \
            }                                                                  \
            if (POST_TIMED) {                                                  \
                POST;                                                          \
                t1_ = cb_now_ns();                                             \
            } else {                                                           \
                t1_ = cb_now_ns();                                             \
                POST;                                                          \
            }                                                                  \
            bad_ |= r;                                                         \
            reps_[rep_] = (double)(t1_ - t0_) / (double)(N);                   \
        }                                                                      \
        if (bad_ != CUDA_SUCCESS)                                              \
            cb_na(NAME, "call failed", bad_);                                  \
        else                                                                   \
            cb_emit(NAME, reps_, (N));                                         \
    } while (0)

#define CB_CASE(NAME, N, BODY, POST) CB_CASE_T(NAME, N, BODY, POST, 1)

/* Launch cases: with --launch-submit the stream is synchronized after the
 * timing of each loop (the submission cost of N launches, which must fit
 * the driver's queue: keep N small), else inside it (the loop's throughput,
 * bounded by the GPU once the queue is full). */
#define CB_LAUNCH_CASE(NAME, BODY)                                             \
    CB_CASE_T(NAME, cb_n_launch, BODY, r = p_cuStreamSynchronize(cb_stream),   \
              !cb_launch_submit)

#define CB_LAUNCH(f, params)                                                   \
    p_cuLaunchKernel((f), 1, 1, 1, 1, 1, 1, 0, cb_stream, (params), NULL)

static CUfunction cb_function(const char *name)
{
    CUfunction f = NULL;
    CUresult r = p_cuModuleGetFunction(&f, cb_module, name);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "c_bench: cuModuleGetFunction(%s): %s\n", name, cb_errname(r));
        return NULL;
    }
    return f;
}

static void cb_calls(void)
{
    CUcontext ctx;
    CUdevice dev;
    int value;
    unsigned int memtype;

    CB_CASE("ctx_get_current", cb_n, r = p_cuCtxGetCurrent(&ctx), (void)0);
    CB_CASE("ctx_set_current", cb_n, r = p_cuCtxSetCurrent(cb_ctx), (void)0);
    CB_CASE("device_get", cb_n, r = p_cuDeviceGet(&dev, 0), (void)0);
    CB_CASE("device_get_attribute", cb_n,
            r = p_cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cb_dev),
            (void)0);
    CB_CASE("event_record", cb_n, r = p_cuEventRecord(cb_event, cb_stream),
            r = p_cuStreamSynchronize(cb_stream));
    CB_CASE("event_query", cb_n, r = p_cuEventQuery(cb_event), (void)0);
    CB_CASE("stream_query", cb_n, r = p_cuStreamQuery(cb_stream), (void)0);
    CB_CASE("pointer_get_attribute", cb_n,
            r = p_cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cb_dptr),
            (void)0);
    CB_CASE("mem_alloc_free", cb_n_launch, {
        CUdeviceptr p;
        r = p_cuMemAlloc(&p, 1024);
        if (r == CUDA_SUCCESS)
            r = p_cuMemFree(p);
    }, (void)0);
}

static void cb_launches(void)
{
    CUfunction f_empty = cb_function("empty"), f_small = cb_function("small"),
               f_k16 = cb_function("k16"), f_k512 = cb_function("k512"),
               f_big = cb_function("big_struct");

    if (f_empty)
        CB_LAUNCH_CASE("launch_empty_kernel", r = CB_LAUNCH(f_empty, NULL));
    else
        cb_na("launch_empty_kernel", "no kernel", CUDA_ERROR_NOT_FOUND);

    if (f_small) {
        int n = 1024;
        float a = 2.0f;
        void *params[3] = {&cb_dptr, &n, &a};
        CB_LAUNCH_CASE("launch_small_kernel", r = CB_LAUNCH(f_small, params));
    } else {
        cb_na("launch_small_kernel", "no kernel", CUDA_ERROR_NOT_FOUND);
    }

    if (f_k16) {
        /* k16(p0, i0, f0, p1, i1, f1, p2, i2, f2, p3, i3, f3, i4, f4, i5, f5) */
        CUdeviceptr ptrs[4] = {cb_dptr, cb_dptr, cb_dptr, cb_dptr};
        int ints[6] = {1, 2, 3, 4, 5, 6};
        float floats[6] = {1, 2, 3, 4, 5, 6};
        void *params[16] = {&ptrs[0], &ints[0], &floats[0], &ptrs[1], &ints[1], &floats[1],
                            &ptrs[2], &ints[2], &floats[2], &ptrs[3], &ints[3], &floats[3],
                            &ints[4], &floats[4], &ints[5], &floats[5]};
        CB_LAUNCH_CASE("launch_16_args", r = CB_LAUNCH(f_k16, params));
    } else {
        cb_na("launch_16_args", "no kernel", CUDA_ERROR_NOT_FOUND);
    }

    if (f_k512) {
        static int ints[512];
        static void *params[512];
        for (int i = 0; i < 512; i++) {
            ints[i] = i;
            params[i] = &ints[i];
        }
        CB_LAUNCH_CASE("launch_512_args", r = CB_LAUNCH(f_k512, params));
    } else {
        cb_na("launch_512_args", "no kernel", CUDA_ERROR_NOT_FOUND);
    }

    if (f_big) {
        static struct { int v[512]; } s;
        void *params[1] = {&s};
        for (int i = 0; i < 512; i++)
            s.v[i] = i;
        CB_LAUNCH_CASE("launch_2048b", r = CB_LAUNCH(f_big, params));
    } else {
        cb_na("launch_2048b", "no kernel", CUDA_ERROR_NOT_FOUND);
    }
}

#ifndef CB_LIBRARY /* the threads cases: the executable only */
/* ------------------------------------------------------------------ */
/* Threads: T threads each make a fixed number of calls; the rate is all the
 * calls over the wall time from the first thread's start to the last
 * thread's end (each thread stamps its own loop, so a late wake-up of the
 * main thread cannot shorten the measured span). */

enum cb_tkind { CB_T_ATTR, CB_T_PTRATTR, CB_T_LAUNCH };

struct cb_tjob {
    enum cb_tkind kind;
    pthread_barrier_t *start;
    CUfunction fn;
    CUresult status;
    int cpu;                 /* pinned to this CPU, or -1 */
    uint64_t t_start, t_end; /* this thread's timed loop, cb_now_ns() */
    uint64_t cpu_ns;         /* CPU time the thread used in that loop */
};

static uint64_t cb_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *cb_tmain(void *arg)
{
    struct cb_tjob *job = arg;
    CUresult r = p_cuCtxSetCurrent(cb_ctx);
    CUstream s = NULL;
    int value;
    unsigned int memtype;

    if (job->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(job->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
    }
    if (r == CUDA_SUCCESS && job->kind == CB_T_LAUNCH)
        r = p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    pthread_barrier_wait(job->start);
    uint64_t cpu0 = cb_thread_cpu_ns();
    job->t_start = cb_now_ns();
    if (r == CUDA_SUCCESS) {
        switch (job->kind) {
        case CB_T_ATTR:
            for (long i = 0; i < cb_thread_calls; i++)
                r |= p_cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cb_dev);
            break;
        case CB_T_PTRATTR:
            for (long i = 0; i < cb_thread_calls; i++)
                r |= p_cuPointerGetAttribute(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cb_dptr);
            break;
        case CB_T_LAUNCH:
            for (long i = 0; i < cb_thread_launches; i++)
                r |= p_cuLaunchKernel(job->fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
            if (r == CUDA_SUCCESS)
                r = p_cuStreamSynchronize(s);
            break;
        }
    }
    job->t_end = cb_now_ns();
    job->cpu_ns = cb_thread_cpu_ns() - cpu0;
    /* Wait for every thread before destroying the stream, so a destroy
     * never overlaps another thread's timed loop. */
    pthread_barrier_wait(job->start);
    if (s)
        p_cuStreamDestroy(s);
    job->status = r;
    return NULL;
}

static void cb_thread_case(const char *name, enum cb_tkind kind, CUfunction fn)
{
    static const int counts[] = {1, 2, 4, 8};
    long per_thread = kind == CB_T_LAUNCH ? cb_thread_launches : cb_thread_calls;

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int t = counts[c];
        double best = 0, best_share = 0;
        double rates[CB_MAX_REPS], shares[CB_MAX_REPS];
        int done = 0; /* repetitions measured: rates[0..done) */
        CUresult bad = CUDA_SUCCESS;
        for (int rep = 0; rep < cb_reps && bad == CUDA_SUCCESS; rep++) {
            pthread_t tid[8];
            struct cb_tjob jobs[8];
            pthread_barrier_t start;
            uint64_t t0 = UINT64_MAX, t1 = 0, cpu = 0, wall = 0;
            pthread_barrier_init(&start, NULL, (unsigned)t + 1);
            for (int i = 0; i < t; i++) {
                jobs[i] = (struct cb_tjob){kind, &start, fn, CUDA_SUCCESS,
                                           cb_ncpus ? cb_cpus[i % cb_ncpus] : -1, 0, 0, 0};
                pthread_create(&tid[i], NULL, cb_tmain, &jobs[i]);
            }
            pthread_barrier_wait(&start);
            pthread_barrier_wait(&start);
            for (int i = 0; i < t; i++) {
                pthread_join(tid[i], NULL);
                bad |= jobs[i].status;
                cpu += jobs[i].cpu_ns;
                wall += jobs[i].t_end - jobs[i].t_start;
                if (jobs[i].t_start < t0)
                    t0 = jobs[i].t_start;
                if (jobs[i].t_end > t1)
                    t1 = jobs[i].t_end;
            }
            pthread_barrier_destroy(&start);
            double rate = (double)t * (double)per_thread / ((double)(t1 - t0) / 1e9) / 1e6;
            double share = wall ? (double)cpu / (double)wall : 0;
            rates[done] = rate;
            shares[done++] = share;
            if (rate > best) {
                best = rate;
                best_share = share;
            }
        }
        if (bad != CUDA_SUCCESS) {
            cb_na(name, "call failed in a thread", bad);
            return;
        }
        printf("{\"impl\": \"c\", \"case\": \"%s\", \"status\": \"ok\", \"threads\": %d, "
               "\"calls_per_thread\": %ld, \"mcalls_per_s\": %.3f, \"cpu_share\": %.3f",
               name, t, per_thread, best, best_share);
        for (int pass = 0; pass < 2; pass++) {
            const double *v = pass ? shares : rates;
            printf(", \"%s\": [", pass ? "cpu_shares" : "rounds");
            for (int i = 0; i < done; i++)
                printf("%s%.3f", i ? ", " : "", v[i]);
            printf("]");
        }
        printf("}\n");
        fflush(stdout);
    }
}
#endif /* !CB_LIBRARY */

/* ------------------------------------------------------------------ */

static void *cb_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long size;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[size] = 0; /* PTX must be NUL-terminated */
    fclose(f);
    return buf;
}

#define CB_CHECK(call)                                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, "c_bench: %s: %s (%d)\n", #call, cb_errname(r_), (int)r_); \
            return 1;                                                          \
        }                                                                      \
    } while (0)

/* What main does before the cases: opens the driver at `lib`, resolves
 * every entry point, makes device 0's primary context current, creates the
 * stream, event and device memory, and loads the first of the images that
 * loads (none loaded: the launch cases are n/a). 0, or 1 with the reason
 * on stderr. */
static int cb_open(const char *lib, const char *const *images, int nimages)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    cb_getproc_fn getproc;
    if (!h) {
        fprintf(stderr, "c_bench: dlopen(%s): %s\n", lib, dlerror());
        return 1;
    }
    getproc = (cb_getproc_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!getproc) {
        fprintf(stderr, "c_bench: %s has no cuGetProcAddress_v2 (driver older than 12.0)\n", lib);
        return 1;
    }
#define CB_RESOLVE(name)                                                       \
    {                                                                          \
        CUdriverProcAddressQueryResult q_;                                     \
        if (getproc(#name, (void **)&p_##name, CUDA_VERSION,                   \
                    CU_GET_PROC_ADDRESS_DEFAULT, &q_) != CUDA_SUCCESS || !p_##name) { \
            fprintf(stderr, "c_bench: cuGetProcAddress(%s) failed (%d)\n", #name, (int)q_); \
            return 1;                                                          \
        }                                                                      \
    }
    CB_FUNCS(CB_RESOLVE)

    CB_CHECK(p_cuInit(0));
    CB_CHECK(p_cuDeviceGet(&cb_dev, 0));
    CB_CHECK(p_cuDevicePrimaryCtxRetain(&cb_ctx, cb_dev));
    CB_CHECK(p_cuCtxSetCurrent(cb_ctx));
    CB_CHECK(p_cuStreamCreate(&cb_stream, CU_STREAM_NON_BLOCKING));
    CB_CHECK(p_cuEventCreate(&cb_event, CU_EVENT_DISABLE_TIMING));
    CB_CHECK(p_cuEventRecord(cb_event, cb_stream));
    CB_CHECK(p_cuStreamSynchronize(cb_stream));
    CB_CHECK(p_cuMemAlloc(&cb_dptr, 4096));
    for (int i = 0; i < nimages && !cb_module; i++) {
        void *image = cb_read_file(images[i]);
        CUresult r;
        if (!image) {
            fprintf(stderr, "c_bench: cannot read %s\n", images[i]);
            continue;
        }
        r = p_cuModuleLoadData(&cb_module, image);
        free(image);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "c_bench: cuModuleLoadData(%s): %s\n", images[i], cb_errname(r));
            cb_module = NULL;
        } else {
            fprintf(stderr, "c_bench: kernels from %s\n", images[i]);
        }
    }
    return 0;
}

#ifdef CB_LIBRARY

int cb_lib_open(const char *lib, const char *image, int launch_submit)
{
    const char *images[1] = {image};
    cb_launch_submit = launch_submit;
    cb_reps = 1;
    return cb_open(lib && *lib ? lib : "libcuda.so.1", images, image ? 1 : 0);
}

double cb_lib_loop(const char *name, long n)
{
    if (!name || n < 1)
        return -1;
    cb_only = name;
    cb_only_ns = -1;
    cb_n = cb_n_launch = n;
    cb_calls();
    if (cb_module)
        cb_launches();
    return cb_only_ns;
}

/* For bench/thin_ext.c, after cb_lib_open: the entry point resolved for
 * `name` (one of CB_FUNCS, as cuda.h spells it), or NULL. */
void *cb_lib_proc(const char *name)
{
#define CB_PROC(fn)                                                            \
    if (name && strcmp(name, #fn) == 0) {                                      \
        void *p_;                                                              \
        memcpy(&p_, &p_##fn, sizeof p_);                                       \
        return p_;                                                             \
    }
    CB_FUNCS(CB_PROC)
#undef CB_PROC
    return NULL;
}

/* For bench/thin_ext.c, after cb_lib_open: one of the handles the C loops
 * use, as an integer ("ctx", "dev", "stream", "event", "dptr", or a kernel
 * of the loaded module by name), or 0 when there is none. */
unsigned long long cb_lib_handle(const char *name)
{
    if (!name)
        return 0;
    if (strcmp(name, "ctx") == 0)
        return (uintptr_t)cb_ctx;
    if (strcmp(name, "dev") == 0)
        return (unsigned long long)cb_dev;
    if (strcmp(name, "stream") == 0)
        return (uintptr_t)cb_stream;
    if (strcmp(name, "event") == 0)
        return (uintptr_t)cb_event;
    if (strcmp(name, "dptr") == 0)
        return cb_dptr;
    return cb_module ? (uintptr_t)cb_function(name) : 0;
}

#else

int main(int argc, char **argv)
{
    const char *lib = getenv("CUBIND_LIBCUDA");
    const char *images[4];
    int nimages = 0;
    int version = 0;

    if (!lib || !*lib)
        lib = "libcuda.so.1";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-threads")) { cb_threads = 0; continue; }
        if (!strcmp(a, "--launch-submit")) { cb_launch_submit = 1; continue; }
        if (!v) { fprintf(stderr, "c_bench: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--lib")) lib = v;
        else if (!strcmp(a, "--image") && nimages < 4) images[nimages++] = v;
        else if (!strcmp(a, "--n")) cb_n = atol(v);
        else if (!strcmp(a, "--n-launch")) cb_n_launch = atol(v);
        else if (!strcmp(a, "--reps")) cb_reps = atoi(v);
        else if (!strcmp(a, "--thread-calls")) cb_thread_calls = atol(v);
        else if (!strcmp(a, "--thread-launches")) cb_thread_launches = atol(v);
        else if (!strcmp(a, "--cpus")) {
            /* a comma-separated list of CPU numbers */
            for (const char *q = v; *q && cb_ncpus < 64;) {
                char *end;
                long c = strtol(q, &end, 10);
                if (end == q || c < 0 || c >= CPU_SETSIZE) {
                    fprintf(stderr, "c_bench: bad --cpus %s\n", v);
                    return 2;
                }
                cb_cpus[cb_ncpus++] = (int)c;
                q = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') {
                    fprintf(stderr, "c_bench: bad --cpus %s\n", v);
                    return 2;
                }
            }
        }
        else { fprintf(stderr, "c_bench: unknown option %s\n", a); return 2; }
    }
    if (cb_reps < 1 || cb_reps > CB_MAX_REPS || cb_n < 1 || cb_n_launch < 1) {
        fprintf(stderr, "c_bench: --reps must be 1..16 and N positive\n");
        return 2;
    }

    if (cb_open(lib, images, nimages) != 0)
        return 1;
    CB_CHECK(p_cuDriverGetVersion(&version));
    printf("{\"impl\": \"c\", \"case\": \"meta\", \"driver_version\": %d, \"header_version\": %d, "
           "\"lib\": \"%s\", \"n\": %ld, \"n_launch\": %ld, \"reps\": %d, "
           "\"launch_timing\": \"%s\"}\n",
           version, CUDA_VERSION, lib, cb_n, cb_n_launch, cb_reps,
           cb_launch_submit ? "submit" : "sync");
    fflush(stdout);

    cb_calls();
    if (cb_module) {
        cb_launches();
    } else {
        static const char *const launch_cases[] = {"launch_empty_kernel", "launch_small_kernel",
                                                   "launch_16_args", "launch_512_args", "launch_2048b"};
        for (size_t i = 0; i < sizeof launch_cases / sizeof launch_cases[0]; i++)
            cb_na(launch_cases[i], "no module loaded (pass --image)", CUDA_ERROR_NOT_FOUND);
    }

    if (cb_threads) {
        cb_thread_case("threads_device_get_attribute", CB_T_ATTR, NULL);
        cb_thread_case("threads_pointer_get_attribute", CB_T_PTRATTR, NULL);
        if (cb_module) {
            CUfunction f = cb_function("empty");
            if (f)
                cb_thread_case("threads_launch_empty_kernel", CB_T_LAUNCH, f);
        }
    }

    p_cuMemFree(cb_dptr);
    p_cuEventDestroy(cb_event);
    p_cuStreamDestroy(cb_stream);
    return 0;
}

#endif /* CB_LIBRARY */
