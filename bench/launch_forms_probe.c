/* SPDX-License-Identifier: Apache-2.0 */
/*
 * launch_forms_probe.c — what the driver itself charges for the two ways a
 * launch can carry its arguments: `kernelParams` (an array of pointers, one
 * per parameter, that the driver follows and copies from) against `extra`
 * (CU_LAUNCH_PARAM_BUFFER_POINTER: one buffer already laid out at the
 * kernel's offsets). A binding that packs plain values into one buffer (as
 * cubind's packer does) can hand the driver either; this measures which the
 * driver takes faster, in C, with nothing of Python in the way.
 *
 * On the GPU machine, from the repository root:
 *   nvcc -ptx -arch=sm_90 bench/kernels.cu -o build/bench/kernels.ptx
 *   gcc -std=c11 -O2 -Wall -Wextra -I$CUDA_HOME/include bench/launch_forms_probe.c \
 *       -o build/bench/launch_forms_probe -lcuda
 *   build/bench/launch_forms_probe build/bench/kernels.ptx [rounds]
 *
 * Each round times every (kernel, form, timing) loop once, in turn, so the
 * machine's drifts fall on every form alike; the median over the rounds is
 * printed, in ns per launch. Timing "sync": the loop includes its final
 * cuStreamSynchronize (throughput); "submit": 256 launches, synchronized
 * after the clock stops (submission cost).
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                             \
    do {                                                                        \
        CUresult r_ = (call);                                                   \
        if (r_ != CUDA_SUCCESS) {                                               \
            const char *n_ = NULL;                                              \
            cuGetErrorName(r_, &n_);                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                    n_ ? n_ : "?");                                             \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define MAX_ROUNDS 64
#define MAX_BYTES 4096

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One kernel's arguments in both forms: `params` points into `buf`, which
 * holds the values at the kernel's own offsets (cuFuncGetParamInfo). */
typedef struct {
    const char *name;
    CUfunction f;
    size_t nparams, bytes;
    void *params[512];
    _Alignas(16) unsigned char buf[MAX_BYTES];
    double ns[2][2][MAX_ROUNDS]; /* [form][timing][round] */
} probe_kernel;

static void layout(probe_kernel *k, CUdeviceptr dptr)
{
    size_t off, size, end = 0;
    k->nparams = 0;
    while (k->nparams < 512 && cuFuncGetParamInfo(k->f, k->nparams, &off, &size) == CUDA_SUCCESS) {
        unsigned char *slot = k->buf + off;
        if (size == 8)
            memcpy(slot, &dptr, 8);
        else if (size == 4) {
            int v = (int)k->nparams + 1;
            memcpy(slot, &v, 4);
        } else {
            memset(slot, 0, size);
        }
        k->params[k->nparams++] = slot;
        if (off + size > end)
            end = off + size;
    }
    k->bytes = end;
}

static double loop(probe_kernel *k, int form, int submit, CUstream s, long n)
{
    size_t bytes = k->bytes;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, k->buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                     CU_LAUNCH_PARAM_END};
    void **params = k->nparams ? k->params : NULL;
    void **ex = k->nparams ? extra : NULL;
    double t0 = now_ns(), t1;
    for (long i = 0; i < n; i++) {
        if (form == 0)
            CHECK(cuLaunchKernel(k->f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
        else
            CHECK(cuLaunchKernel(k->f, 1, 1, 1, 1, 1, 1, 0, s, NULL, ex));
    }
    if (!submit)
        CHECK(cuStreamSynchronize(s));
    t1 = now_ns();
    if (submit)
        CHECK(cuStreamSynchronize(s));
    return (t1 - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    static probe_kernel ks[] = {{.name = "small"}, {.name = "k16"}, {.name = "k512"},
                                {.name = "big_struct"}};
    const int nk = (int)(sizeof ks / sizeof ks[0]);
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUstream s;
    CUdeviceptr dptr;

    if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s KERNELS.ptx [rounds 1..%d]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoad(&mod, argv[1]));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&dptr, 1 << 20));
    for (int i = 0; i < nk; i++) {
        CHECK(cuModuleGetFunction(&ks[i].f, mod, ks[i].name));
        layout(&ks[i], dptr);
        loop(&ks[i], 0, 0, s, 1000); /* warm both forms */
        loop(&ks[i], 1, 0, s, 1000);
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < nk; i++)
            for (int t = 0; t < 2; t++)
                for (int f = 0; f < 2; f++) {
                    /* alternate which form goes first */
                    int form = (r % 2) ? 1 - f : f;
                    ks[i].ns[form][t][r] = loop(&ks[i], form, t, s, t ? 256 : 20000);
                }
    printf("kernel      params bytes | sync: kernelParams  extra  extra/kp | submit: kernelParams  extra  extra/kp\n");
    for (int i = 0; i < nk; i++) {
        double m[2][2];
        for (int f = 0; f < 2; f++)
            for (int t = 0; t < 2; t++)
                m[f][t] = median(ks[i].ns[f][t], rounds);
        printf("%-11s %6zu %5zu | %18.0f %6.0f %8.3f | %20.0f %6.0f %8.3f\n", ks[i].name,
               ks[i].nparams, ks[i].bytes, m[0][0], m[1][0], m[1][0] / m[0][0], m[0][1], m[1][1],
               m[1][1] / m[0][1]);
    }
    printf("median of %d rounds, ns per launch\n", rounds);
    return 0;
}
