/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_env.c — the process runtime's numeric settings (see rt_env.h).
 */
#include "rt_env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "glibc_pins.h" /* pthread_once */

int rt_env_parse_seconds(const char *v, long long *ms)
{
    long long whole = 0, frac = 0, scale = 1000;
    int digits = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        whole = whole * 10 + (*p - '0');
        if (whole > 1000000000LL)
            return 0;
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    if (!digits || *p)
        return 0;
    *ms = whole * 1000 + frac;
    return 1;
}

static pthread_once_t rt_env_once = PTHREAD_ONCE_INIT;
static long long rt_env_exit_ms = RT_ENV_EXIT_TIMEOUT_DEFAULT_MS; /* written by the once routine */

static void rt_env_read(void)
{
    const char *v = getenv(RT_ENV_EXIT_TIMEOUT);
    if (v && *v && !rt_env_parse_seconds(v, &rt_env_exit_ms)) {
        /* %.200s: an absurdly long value still makes one line */
        fprintf(stderr, "cubind: %s='%.200s' is not a number of seconds >= 0; using %lld s\n",
                RT_ENV_EXIT_TIMEOUT, v, RT_ENV_EXIT_TIMEOUT_DEFAULT_MS / 1000);
        fflush(stderr);
    }
}

void rt_env_check(void)
{
    pthread_once(&rt_env_once, rt_env_read);
}

long long rt_env_exit_timeout_ms(void)
{
    pthread_once(&rt_env_once, rt_env_read);
    return rt_env_exit_ms;
}
