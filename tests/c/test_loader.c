/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loader.c — unit test of runtime/process/rt_loader.c (no Python).
 *
 *   test_loader FAKE_LIBCUDA [V1_STUB]
 *
 * FAKE_LIBCUDA is the test-only fake driver (build/fakecuda/libcuda.so.1),
 * which exports cuGetProcAddress_v2 and the fakecuda_* control functions.
 * V1_STUB, optional, is this very file built as a shared library with
 * -DTEST_LOADER_V1_STUB: an "11.x driver" exporting only the 4-argument
 * cuGetProcAddress, to test the fallback:
 *
 *   gcc -std=c11 -shared -fPIC -DTEST_LOADER_V1_STUB tests/c/test_loader.c \
 *       -o build/test_loader_v1/libcuda.so.1
 *   gcc -std=c11 -pthread -Iruntime/include -Iruntime/process \
 *       tests/c/test_loader.c runtime/process/rt_loader.c -ldl \
 *       -o build/test_loader
 *
 * The loader is once-per-process, so every case runs in a forked child of a
 * parent that never loads anything: each child sets the environment, then
 * exercises a fresh loader. Build it also with -fsanitize=thread (the
 * concurrent first-use cases) and -fsanitize=address,undefined.
 */
#define _GNU_SOURCE /* pthread_barrier_t, setenv, realpath, RTLD_NOLOAD */

#ifdef TEST_LOADER_V1_STUB
/* ---- the stand-in 11.x driver: cuGetProcAddress (v1) only ---- */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static int stub_cuInit(unsigned flags)
{
    return flags == 0 ? 0 : 1; /* CUDA_SUCCESS / CUDA_ERROR_INVALID_VALUE */
}

static _Atomic long long stub_last_flags = -1;

int cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                     uint64_t flags)
{
    (void)cudaVersion;
    atomic_store(&stub_last_flags, (long long)flags);
    if (strcmp(symbol, "cuInit") == 0) {
        int (*f)(unsigned) = stub_cuInit;
        memcpy(pfn, &f, sizeof f);
        return 0;
    }
    *pfn = NULL;
    return 500; /* CUDA_ERROR_NOT_FOUND */
}

/* Same contract as the fake's (tests/fakecuda/fakecuda_control.h), for
 * every name at once. */
long long fakecuda_last_proc_flags(const char *name)
{
    (void)name;
    return atomic_load(&stub_last_flags);
}

#else /* ---- the test program ---- */

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>

#include "cubind_rt.h"
#include "rt_loader.h"

#include "check.h"


#define MISSING_LIB "/nonexistent-cubind-test-dir/libcuda.so.1"
#define NTHREADS 16

static const char *fake_lib;   /* argv[1] */
static const char *v1_lib;     /* argv[2] or NULL */

/* A function exported by an already-loaded library (found again with
 * RTLD_NOLOAD, since the loader opens it RTLD_LOCAL); NULL if absent. */
static void *loaded_sym(const char *lib, const char *name)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    return h != NULL ? dlsym(h, name) : NULL;
}

/* fakecuda_last_proc_flags(name), or -2 when the library lacks it. */
static long long recorded_flags(const char *lib, const char *name)
{
    void *p = loaded_sym(lib, "fakecuda_last_proc_flags");
    long long (*f)(const char *);

    if (p == NULL)
        return -2;
    memcpy(&f, &p, sizeof p);
    return f(name);
}

/* How many times needle occurs in hay (0 for NULL). */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = hay; p != NULL && (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* ---- cases (each runs in its own process) ---- */

static void case_missing_override(void)
{
    const char *why = NULL, *why2 = NULL;
    int st = -1;

    setenv("CUBIND_LIBCUDA", MISSING_LIB, 1);
    CHECK(cubind_rt_load(&why) == -1);
    CHECK(why != NULL && strstr(why, "CUBIND_LIBCUDA=" MISSING_LIB) != NULL);
    CHECK(why != NULL && strstr(why, "could not load the CUDA driver") != NULL);
    /* the path once (dlerror's own copy of it dropped), and what it must name */
    CHECK(count_of(why, MISSING_LIB) == 1);
    CHECK(why != NULL && strstr(why, "NVIDIA driver") != NULL);
    if (why != NULL)
        printf("  why: %s\n", why);
    /* the first outcome sticks, even if the environment changes */
    setenv("CUBIND_LIBCUDA", fake_lib, 1);
    CHECK(cubind_rt_load(&why2) == -1 && why2 == why);
    CHECK(cubind_rt_load(NULL) == -1);
    CHECK(cubind_rt_lookup("cuInit", 2000, &st) == NULL);
    CHECK(st == CUBIND_LOOKUP_NO_DRIVER);
    CHECK(cubind_rt_lookup("cuInit", 2000, NULL) == NULL);
    CHECK(cubind_rt_driver_path() == NULL);
    CHECK(cubind_rt_lookup_flags() == 0);
    CHECK(cubind_rt_proc_address_abi() == 0);
}

static void case_not_a_driver(void)
{
    const char *why = NULL;

    setenv("CUBIND_LIBCUDA", "libm.so.6", 1); /* loads, but is no driver */
    CHECK(cubind_rt_load(&why) == -1);
    CHECK(why != NULL && strstr(why, "CUBIND_LIBCUDA=libm.so.6") != NULL);
    CHECK(why != NULL && strstr(why, "cuGetProcAddress_v2") != NULL);
    if (why != NULL)
        printf("  why: %s\n", why);
    CHECK(cubind_rt_driver_path() == NULL);
}

/* Unset or empty CUBIND_LIBCUDA: the system's libcuda.so.1. CI machines have
 * none; a GPU machine has one. Either outcome must be coherent. */
static void case_default(int empty)
{
    const char *why = NULL;
    int rc;

    if (empty)
        setenv("CUBIND_LIBCUDA", "", 1);
    else
        unsetenv("CUBIND_LIBCUDA");
    CHECK(cubind_rt_driver_path() == NULL); /* does not load by itself */
    rc = cubind_rt_load(&why);
    if (rc == 0) {
        CHECK(cubind_rt_driver_path() != NULL);
        printf("  system driver: %s\n", cubind_rt_driver_path());
    } else {
        CHECK(why != NULL && strstr(why, "libcuda.so.1") != NULL);
        CHECK(why != NULL && strstr(why, "set CUBIND_LIBCUDA") != NULL);
        CHECK(why != NULL && strstr(why, "CUBIND_LIBCUDA=") == NULL);
        /* what to install, and the file named once before dlerror's reason */
        CHECK(why != NULL && strstr(why, "install the NVIDIA driver") != NULL);
        CHECK(count_of(why, "libcuda.so.1: libcuda.so.1") == 0);
        CHECK(count_of(why, "(libcuda.so.1:") == 0);
        if (why != NULL)
            printf("  why: %s\n", why);
    }
}

static void case_fake(void)
{
    char want[PATH_MAX], got[PATH_MAX];
    const char *path;
    void *p;
    int st = -1;
    int (*cu_init)(unsigned);

    setenv("CUBIND_LIBCUDA", fake_lib, 1);
    unsetenv(CUBIND_RT_ENV_PTDS);
    CHECK(cubind_rt_load(NULL) == 0);
    CHECK(cubind_rt_proc_address_abi() == 2);
    path = cubind_rt_driver_path();
    CHECK(path != NULL);
    CHECK(path != NULL && realpath(path, got) != NULL &&
          realpath(fake_lib, want) != NULL && strcmp(got, want) == 0);

    p = cubind_rt_lookup("cuInit", 2000, &st);
    CHECK(p != NULL && st == CUBIND_LOOKUP_OK);
    if (p != NULL) {
        memcpy(&cu_init, &p, sizeof p);
        CHECK(cu_init(0) == 0); /* the pointer is callable */
    }
    st = -1;
    CHECK(cubind_rt_lookup("cuNoSuchThing", 12000, &st) == NULL);
    CHECK(st == CUBIND_LOOKUP_NOT_FOUND);
    st = -1;
    CHECK(cubind_rt_lookup(NULL, 12000, &st) == NULL);
    CHECK(st == CUBIND_LOOKUP_NOT_FOUND);

    /* Older than the oldest variant: the driver says VERSION_NOT_SUFFICIENT
     * (or plain NOT_FOUND); either way no pointer. */
    st = -1;
    CHECK(cubind_rt_lookup("cuCtxCreate", 1000, &st) == NULL);
    CHECK(st == CUBIND_LOOKUP_VERSION_NOT_SUFFICIENT ||
          st == CUBIND_LOOKUP_NOT_FOUND);
    printf("  cuCtxCreate@1000: status %d\n", st);

    CHECK(cubind_rt_lookup_flags() == CUBIND_CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    if (recorded_flags(fake_lib, "cuInit") == -2)
        printf("  SKIP recorded flags: no fakecuda_last_proc_flags\n");
    else
        CHECK(recorded_flags(fake_lib, "cuInit") ==
              (long long)CUBIND_CU_GET_PROC_ADDRESS_LEGACY_STREAM);

    /* A version above the driver's: "this driver does not have it". */
    p = loaded_sym(fake_lib, "fakecuda_set_driver_version");
    if (p != NULL) {
        int (*set_ver)(int);
        memcpy(&set_ver, &p, sizeof p);
        set_ver(11000);
        st = -1;
        CHECK(cubind_rt_lookup("cuInit", 12000, &st) == NULL);
        CHECK(st == CUBIND_LOOKUP_NOT_FOUND);
        set_ver(13000);
    }
}

/* PTDS environment value -> flags passed to cuGetProcAddress. */
static void case_ptds(const char *value, unsigned long long want)
{
    int st = -1;
    long long rec;

    setenv("CUBIND_LIBCUDA", fake_lib, 1);
    setenv(CUBIND_RT_ENV_PTDS, value, 1);
    CHECK(cubind_rt_load(NULL) == 0);
    CHECK(cubind_rt_lookup_flags() == want);
    CHECK(cubind_rt_lookup("cuInit", 2000, &st) != NULL);
    rec = recorded_flags(fake_lib, "cuInit");
    if (rec == -2)
        printf("  SKIP recorded flags: no fakecuda_last_proc_flags\n");
    else
        CHECK(rec == (long long)want);
    /* read once, at load */
    setenv(CUBIND_RT_ENV_PTDS, want == 2 ? "0" : "1", 1);
    CHECK(cubind_rt_lookup_flags() == want);
}

struct thread_result {
    int rc, st_init, st_missing;
    const char *why, *path;
    void *pfn_init, *pfn_missing;
    int disagreements;
};

static pthread_barrier_t start_line;

static void *thread_main(void *arg)
{
    struct thread_result *r = arg;
    int i, st;

    pthread_barrier_wait(&start_line); /* all hit the first use together */
    r->rc = cubind_rt_load(&r->why);
    r->pfn_init = cubind_rt_lookup("cuInit", 2000, &r->st_init);
    r->pfn_missing = cubind_rt_lookup("cuNoSuchThing", 12000, &r->st_missing);
    r->path = cubind_rt_driver_path();
    for (i = 0; i < 200; i++) {
        if (cubind_rt_lookup("cuInit", 2000, &st) != r->pfn_init ||
            st != r->st_init)
            r->disagreements++;
        if (cubind_rt_driver_path() != r->path)
            r->disagreements++;
    }
    return NULL;
}

static void case_threads(const char *lib, int expect_rc)
{
    pthread_t th[NTHREADS];
    struct thread_result res[NTHREADS];
    int i;

    setenv("CUBIND_LIBCUDA", lib, 1);
    unsetenv(CUBIND_RT_ENV_PTDS);
    memset(res, 0, sizeof res);
    pthread_barrier_init(&start_line, NULL, NTHREADS);
    for (i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, &res[i]) == 0);
    for (i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start_line);

    CHECK(res[0].rc == expect_rc);
    if (expect_rc == 0) {
        CHECK(res[0].pfn_init != NULL && res[0].st_init == CUBIND_LOOKUP_OK);
        CHECK(res[0].pfn_missing == NULL &&
              res[0].st_missing == CUBIND_LOOKUP_NOT_FOUND);
        CHECK(res[0].path != NULL);
    } else {
        CHECK(res[0].why != NULL && res[0].pfn_init == NULL &&
              res[0].st_init == CUBIND_LOOKUP_NO_DRIVER);
    }
    for (i = 0; i < NTHREADS; i++) {
        CHECK(res[i].rc == res[0].rc);
        CHECK(res[i].why == res[0].why);
        CHECK(res[i].path == res[0].path);
        CHECK(res[i].pfn_init == res[0].pfn_init);
        CHECK(res[i].st_init == res[0].st_init);
        CHECK(res[i].pfn_missing == NULL);
        CHECK(res[i].st_missing == res[0].st_missing);
        CHECK(res[i].disagreements == 0);
    }
}

static void case_v1(void)
{
    void *p;
    int st = -1;
    int (*cu_init)(unsigned);

    setenv("CUBIND_LIBCUDA", v1_lib, 1);
    setenv(CUBIND_RT_ENV_PTDS, "1", 1);
    CHECK(cubind_rt_load(NULL) == 0);
    CHECK(cubind_rt_proc_address_abi() == 1);
    p = cubind_rt_lookup("cuInit", 2000, &st);
    CHECK(p != NULL && st == CUBIND_LOOKUP_OK);
    if (p != NULL) {
        memcpy(&cu_init, &p, sizeof p);
        CHECK(cu_init(0) == 0);
    }
    CHECK(recorded_flags(v1_lib, "cuInit") ==
          (long long)CUBIND_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    st = -1;
    CHECK(cubind_rt_lookup("cuNoSuchThing", 12000, &st) == NULL);
    CHECK(st == CUBIND_LOOKUP_NOT_FOUND);
}

/* ---- driver ---- */

enum { C_MISSING, C_NOT_DRIVER, C_UNSET, C_EMPTY, C_FAKE, C_PTDS_1,
       C_PTDS_0, C_PTDS_BAD, C_PTDS_SPACED, C_PTDS_SIGNED, C_PTDS_HUGE, C_PTDS_HEX,
       C_PTDS_TRAILING, C_THREADS, C_THREADS_MISSING, C_V1 };

static void run_in_child(int which)
{
    switch (which) {
    case C_MISSING: case_missing_override(); break;
    case C_NOT_DRIVER: case_not_a_driver(); break;
    case C_UNSET: case_default(0); break;
    case C_EMPTY: case_default(1); break;
    case C_FAKE: case_fake(); break;
    case C_PTDS_1: case_ptds("1", 2); break;
    case C_PTDS_0: case_ptds("0", 1); break;
    case C_PTDS_BAD: case_ptds("yes", 1); break;
    case C_PTDS_SPACED: case_ptds(" 7 ", 2); break;
    case C_PTDS_SIGNED: case_ptds("\t-3\n", 2); break;
    case C_PTDS_HUGE: case_ptds("99999999999999999999", 1); break;
    case C_PTDS_HEX: case_ptds("0x1", 1); break;
    case C_PTDS_TRAILING: case_ptds("7 z", 1); break;
    case C_THREADS: case_threads(fake_lib, 0); break;
    case C_THREADS_MISSING: case_threads(MISSING_LIB, -1); break;
    case C_V1: case_v1(); break;
    }
}

static int run_case(int which, const char *name)
{
    pid_t pid;
    int status = 0;

    printf("%s\n", name);
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        run_in_child(which);
        fflush(stdout);
        fflush(stderr);
        _exit(failures == 0 ? 0 : 1);
    }
    if (waitpid(pid, &status, 0) < 0) {
        perror("waitpid");
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("  ok\n");
        return 0;
    }
    printf("  FAILED (status %d)\n", status);
    return 1;
}

int main(int argc, char **argv)
{
    int bad = 0;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s FAKE_LIBCUDA [V1_STUB]\n", argv[0]);
        return 2;
    }
    fake_lib = argv[1];
    v1_lib = argc == 3 ? argv[2] : NULL;
    if (access(fake_lib, R_OK) != 0) {
        fprintf(stderr, "test_loader: cannot read %s\n", fake_lib);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    bad += run_case(C_MISSING, "missing CUBIND_LIBCUDA target fails, names it");
    bad += run_case(C_NOT_DRIVER, "library without cuGetProcAddress fails");
    bad += run_case(C_UNSET, "unset CUBIND_LIBCUDA: system libcuda.so.1");
    bad += run_case(C_EMPTY, "empty CUBIND_LIBCUDA counts as unset");
    bad += run_case(C_FAKE, "fake driver: load, lookup, statuses");
    bad += run_case(C_PTDS_1, "PTDS=1 -> PER_THREAD_DEFAULT_STREAM");
    bad += run_case(C_PTDS_0, "PTDS=0 -> LEGACY_STREAM");
    bad += run_case(C_PTDS_BAD, "PTDS=yes -> LEGACY_STREAM");
    bad += run_case(C_PTDS_SPACED, "PTDS=' 7 ' -> PER_THREAD_DEFAULT_STREAM");
    bad += run_case(C_PTDS_SIGNED, "PTDS='\\t-3\\n' -> PER_THREAD_DEFAULT_STREAM");
    bad += run_case(C_PTDS_HUGE, "PTDS=99999999999999999999 (out of range) -> LEGACY_STREAM");
    bad += run_case(C_PTDS_HEX, "PTDS=0x1 (decimal only) -> LEGACY_STREAM");
    bad += run_case(C_PTDS_TRAILING, "PTDS='7 z' -> LEGACY_STREAM");
    bad += run_case(C_THREADS, "16 threads, concurrent first use (fake)");
    bad += run_case(C_THREADS_MISSING,
                    "16 threads, concurrent first use (missing)");
    if (v1_lib != NULL)
        bad += run_case(C_V1, "11.x driver: 4-argument cuGetProcAddress");
    else
        printf("SKIP 11.x driver fallback: no V1_STUB argument\n");

    printf("%s: %d case(s) failed\n", bad ? "FAIL" : "PASS", bad);
    return bad ? 1 : 0;
}

#endif /* TEST_LOADER_V1_STUB */
