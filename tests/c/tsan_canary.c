/* SPDX-License-Identifier: Apache-2.0 */
/* tsan_canary.c — a deliberate data race, for tests/python/test_tsan_canary.py.
 * Built with the TSan extensions' rule (build.ninja: cc_ext_tsan) and loaded
 * into the TSan interpreter, it proves that ThreadSanitizer reports races in
 * such a library. Test-only; never part of cubind. */
#include <pthread.h>

/* Incremented by two threads without synchronization, on purpose. */
static long canary_counter;

static void *canary_bump(void *arg)
{
    for (int i = 0; i < 1000; i++)
        canary_counter++;
    return arg;
}

/* Runs two racing threads to completion; returns the (torn) count. */
__attribute__((visibility("default"))) long tsan_canary_race(void)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, canary_bump, NULL) != 0)
        return -1;
    if (pthread_create(&b, NULL, canary_bump, NULL) != 0) {
        pthread_join(a, NULL);
        return -1;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return canary_counter;
}
