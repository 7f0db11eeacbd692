/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_env.h — the process runtime's numeric settings from the environment,
 * each read and checked once per process.
 *
 * CUBIND_EXIT_TIMEOUT: how long an interpreter's exit waits for Python
 * callbacks still running (rt_callbacks.h), in seconds, decimals allowed
 * ("0.5"); default 5, also when empty (as CUBIND_LIBCUDA). A value that
 * is not such a number (negative, non-numeric, past 10**9 s) is reported
 * once on stderr with the value used instead ("cubind: CUBIND_EXIT_TIMEOUT='-1' is not a number of
 * seconds >= 0; using 5 s"), never silently replaced.
 *
 * Read at cubind._runtime's import (rt_env_check) and at the first use,
 * whichever comes first (pthread_once): a later change of the environment
 * is not seen. Pure C, no Python: safe on any thread.
 */
#ifndef CUBIND_RT_ENV_H
#define CUBIND_RT_ENV_H

#define RT_ENV_EXIT_TIMEOUT "CUBIND_EXIT_TIMEOUT"
#define RT_ENV_EXIT_TIMEOUT_DEFAULT_MS 5000LL

/* Reads and checks every setting now, reporting junk (once). */
void rt_env_check(void);

/* CUBIND_EXIT_TIMEOUT in milliseconds (the default when unset or junk). */
long long rt_env_exit_timeout_ms(void);

/* Parses a number of seconds >= 0 ("5", "0.25"; at most 10**9 s, digits
 * past the millisecond ignored) into *ms: 1, else 0 (*ms untouched).
 * Spelled out: no strtod (rt_loader.c: glibc 2.38's renamed parsers). */
int rt_env_parse_seconds(const char *v, long long *ms);

#endif
