/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_loader.h — process-wide loading of the CUDA driver (libcuda.so.1) and
 * resolution of its entry points through cuGetProcAddress.
 *
 * Pure C, no Python: linked into the `cubind._runtime` extension (exactly one
 * copy per process, handed to generated modules through the capsule of
 * cubind_rt.h) and into the C tests.
 *
 * All functions are thread-safe and may be called from any thread at any
 * time, including concurrently before the first load. The first call of any
 * of cubind_rt_load / cubind_rt_lookup performs the load; every later call
 * sees the same, immutable outcome.
 */
#ifndef CUBIND_RT_LOADER_H
#define CUBIND_RT_LOADER_H

/* Environment variables, read once, by the first load. */
#define CUBIND_RT_ENV_LIBCUDA "CUBIND_LIBCUDA"
#define CUBIND_RT_ENV_PTDS "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"
#define CUBIND_RT_DEFAULT_LIBCUDA "libcuda.so.1"

/* The capsule entries (see cubind_rt.h for the contracts). */
int cubind_rt_load(const char **why);
void *cubind_rt_lookup(const char *name, int version, int *status);
const char *cubind_rt_driver_path(void);

/* Diagnostics, not in the capsule. After a successful load: the flags passed
 * to every cuGetProcAddress call (CUBIND_CU_GET_PROC_ADDRESS_*), and 2 or 1
 * for the cuGetProcAddress flavour in use (_v2, or the 11.x 4-argument one).
 * Both load first; 0 when the load failed. */
unsigned long long cubind_rt_lookup_flags(void);
int cubind_rt_proc_address_abi(void);

#endif
