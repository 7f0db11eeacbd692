/* SPDX-License-Identifier: Apache-2.0 */
/* c_runtime.c — the runtime-API cases of bench/runtime_bench.py called
 * from plain C: the floor cubind.runtime and cuda.bindings.runtime are
 * compared with.
 *
 * A library for runtime_bench.py, which times C in the Python process
 * itself, loop for loop beside the bindings (as paired.py does for the
 * driver): cbr_open(cudart, image) sets up the state every case shares (0
 * on success), cbr_loop(case, n) runs one loop of n calls of one case and
 * returns its ns per call (after a warm-up of n/10 calls), or -1 when the
 * case cannot run; the reason goes to stderr.
 *
 * The runtime is opened with dlopen (`cudart`: runtime_bench.py gives
 * cubind's _cudart.so, the toolkit's static runtime made shared, the code
 * cubind.runtime calls) and every entry point resolved with dlsym, typed
 * by cuda_runtime_api.h's own declarations; no link against a runtime, so
 * ninja builds it anywhere. Kernels come from `image` (bench/kernels.cu
 * as PTX or cubin) through cudaLibraryLoadData and cudaLibraryGetKernel;
 * cudaLaunchKernel takes the cudaKernel_t as its `func`, which is how a
 * Python program launches without nvcc-generated host stubs.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The runtime's entry points, typed by the header's declarations; set by
 * cbr_open, then read-only. */
#define CBR_FUNCS(X)                                                           \
    X(cudaSetDevice) X(cudaGetDevice) X(cudaFree) X(cudaMalloc)                \
    X(cudaStreamCreateWithFlags) X(cudaStreamQuery) X(cudaStreamSynchronize)   \
    X(cudaEventCreateWithFlags) X(cudaEventRecord) X(cudaLibraryLoadData)      \
    X(cudaLibraryGetKernel) X(cudaLaunchKernel) X(cudaGetErrorName)

#define CBR_DECLARE(name) static __typeof__(&name) p_##name;
CBR_FUNCS(CBR_DECLARE)

/* The state every case shares; set by cbr_open, then read-only. */
static cudaStream_t cbr_stream;
static cudaEvent_t cbr_event;
static void *cbr_dptr;
static cudaKernel_t cbr_empty, cbr_small, cbr_k16;

/* The kernels' arguments, the same values as bench.py's (small_values,
 * k16_values): built once, as a C program builds its void*[]. */
static void *cbr_small_args[3];
static void *cbr_k16_args[16];
static float *cbr_p;
static int cbr_i[6] = {1, 2, 3, 4, 5, 6};
static float cbr_f[6] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
static int cbr_n_small = 1024;
static float cbr_a_small = 2.0f;

static int cbr_check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 0;
    fprintf(stderr, "c_runtime: %s: %s\n", what, p_cudaGetErrorName(err));
    return -1;
}

static char *cbr_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *data = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            data = malloc((size_t)size + 1);
            if (data != NULL && fread(data, 1, (size_t)size, f) != (size_t)size) {
                free(data);
                data = NULL;
            }
            if (data != NULL)
                data[size] = '\0'; /* PTX is read as a C string */
        }
    }
    fclose(f);
    return data;
}

static void cbr_build_args(void)
{
    cbr_p = cbr_dptr;
    cbr_small_args[0] = &cbr_p;
    cbr_small_args[1] = &cbr_n_small;
    cbr_small_args[2] = &cbr_a_small;
    /* k16(p0, i0, f0, ..., p3, i3, f3, i4, f4, i5, f5) */
    for (int j = 0; j < 4; j++) {
        cbr_k16_args[3 * j] = &cbr_p;
        cbr_k16_args[3 * j + 1] = &cbr_i[j];
        cbr_k16_args[3 * j + 2] = &cbr_f[j];
    }
    cbr_k16_args[12] = &cbr_i[4];
    cbr_k16_args[13] = &cbr_f[4];
    cbr_k16_args[14] = &cbr_i[5];
    cbr_k16_args[15] = &cbr_f[5];
}

/* Opens the runtime library and resolves every entry point; 0 on success. */
static int cbr_resolve(const char *cudart)
{
    void *lib = dlopen(cudart, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "c_runtime: %s\n", dlerror());
        return -1;
    }
#define CBR_RESOLVE(name)                                                      \
    if ((*(void **)&p_##name = dlsym(lib, #name)) == NULL) {                   \
        fprintf(stderr, "c_runtime: no %s in %s\n", #name, cudart);            \
        return -1;                                                             \
    }
    CBR_FUNCS(CBR_RESOLVE)
#undef CBR_RESOLVE
    return 0;
}

int cbr_open(const char *cudart, const char *image)
{
    if (cudart == NULL || cbr_resolve(cudart) != 0)
        return -1;
    if (cbr_check(p_cudaSetDevice(0), "cudaSetDevice") ||
        cbr_check(p_cudaFree(NULL), "cudaFree(NULL)") ||
        cbr_check(p_cudaStreamCreateWithFlags(&cbr_stream, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags") ||
        cbr_check(p_cudaEventCreateWithFlags(&cbr_event, cudaEventDisableTiming),
                  "cudaEventCreateWithFlags") ||
        cbr_check(p_cudaMalloc(&cbr_dptr, 1 << 20), "cudaMalloc"))
        return -1;
    cbr_build_args();
    if (image == NULL)
        return 0; /* the launch cases then report -1 */
    char *data = cbr_read_file(image);
    if (data == NULL) {
        fprintf(stderr, "c_runtime: cannot read %s\n", image);
        return 0;
    }
    cudaLibrary_t lib;
    if (cbr_check(p_cudaLibraryLoadData(&lib, data, NULL, NULL, 0, NULL, NULL, 0),
                  "cudaLibraryLoadData") == 0) {
        cbr_check(p_cudaLibraryGetKernel(&cbr_empty, lib, "empty"), "cudaLibraryGetKernel(empty)");
        cbr_check(p_cudaLibraryGetKernel(&cbr_small, lib, "small"), "cudaLibraryGetKernel(small)");
        cbr_check(p_cudaLibraryGetKernel(&cbr_k16, lib, "k16"), "cudaLibraryGetKernel(k16)");
    }
    free(data);
    return 0;
}

static double cbr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One call of a case; nonzero when it failed. */
typedef int (*cbr_call_fn)(void);

static int cbr_get_device(void)
{
    int dev;
    return p_cudaGetDevice(&dev) != cudaSuccess;
}

static int cbr_stream_query(void)
{
    cudaError_t err = p_cudaStreamQuery(cbr_stream);
    return err != cudaSuccess && err != cudaErrorNotReady;
}

static int cbr_event_record(void)
{
    return p_cudaEventRecord(cbr_event, cbr_stream) != cudaSuccess;
}

static int cbr_malloc_free(void)
{
    void *p;
    return p_cudaMalloc(&p, 1024) != cudaSuccess || p_cudaFree(p) != cudaSuccess;
}

static int cbr_launch(cudaKernel_t k, void **args)
{
    dim3 one = {1, 1, 1};
    return p_cudaLaunchKernel((const void *)k, one, one, args, 0, cbr_stream) != cudaSuccess;
}

static int cbr_launch_empty(void) { return cbr_launch(cbr_empty, NULL); }
static int cbr_launch_small(void) { return cbr_launch(cbr_small, cbr_small_args); }
static int cbr_launch_16(void) { return cbr_launch(cbr_k16, cbr_k16_args); }

/* The cases, by the names runtime_bench.py uses; `sync` marks the cases
 * whose loop ends with a cudaStreamSynchronize inside the timing. */
static const struct {
    const char *name;
    cbr_call_fn call;
    int sync;
    cudaKernel_t *kernel; /* launch cases: NULL when the image lacks it */
} cbr_cases[] = {
    {"get_device", cbr_get_device, 0, NULL},
    {"stream_query", cbr_stream_query, 0, NULL},
    {"event_record", cbr_event_record, 1, NULL},
    {"malloc_free", cbr_malloc_free, 0, NULL},
    {"launch_empty", cbr_launch_empty, 1, &cbr_empty},
    {"launch_small", cbr_launch_small, 1, &cbr_small},
    {"launch_16", cbr_launch_16, 1, &cbr_k16},
};

static double cbr_run(cbr_call_fn call, int sync, long n)
{
    double t0 = cbr_now_ns();
    for (long i = 0; i < n; i++)
        if (call() != 0)
            return -1;
    if (sync && p_cudaStreamSynchronize(cbr_stream) != cudaSuccess)
        return -1;
    return (cbr_now_ns() - t0) / (double)n;
}

double cbr_loop(const char *name, long n)
{
    for (size_t i = 0; i < sizeof cbr_cases / sizeof cbr_cases[0]; i++) {
        if (strcmp(cbr_cases[i].name, name) != 0)
            continue;
        if (cbr_cases[i].kernel != NULL && *cbr_cases[i].kernel == NULL) {
            fprintf(stderr, "c_runtime: %s: no kernel loaded\n", name);
            return -1;
        }
        if (n <= 0 || cbr_run(cbr_cases[i].call, cbr_cases[i].sync, n / 10 + 1) < 0) {
            fprintf(stderr, "c_runtime: %s failed\n", name);
            return -1;
        }
        return cbr_run(cbr_cases[i].call, cbr_cases[i].sync, n);
    }
    fprintf(stderr, "c_runtime: unknown case %s\n", name);
    return -1;
}
