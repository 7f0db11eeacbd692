/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.h — the C tests' one assertion: CHECK(cond) reports a failing
 * condition with file and line and counts it in `failures` (each test's
 * main returns non-zero when it is not 0), and now_s() for timing.
 */
#ifndef CUBIND_TEST_CHECK_H
#define CUBIND_TEST_CHECK_H

#include <stdio.h>
#include <time.h>

static int failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
