/* SPDX-License-Identifier: Apache-2.0 */
/* fakecuda_control.h — control API of the TEST-ONLY fake CUDA driver.
 *
 * The fake driver (tests/fakecuda/fakecuda.c, built as libcuda.so.1) is a test
 * double for CI machines without a GPU. It is NOT a CUDA implementation and
 * never ships. These functions are exported next to cuGetProcAddress{,_v2} so
 * tests can drive and inspect it; every argument and result is an int,
 * pointer, size_t or char* so that Python's ctypes can call them directly.
 *
 * Names are base names as given to cuGetProcAddress ("cuMemAlloc", never
 * "cuMemAlloc_v2"). Unless stated otherwise a function returns 0 on success
 * and -1 on a bad argument or an unknown name.
 */
#ifndef FAKECUDA_CONTROL_H
#define FAKECUDA_CONTROL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Drop all driver state: contexts, streams (their workers are drained and
 * joined), events, allocations, modules, libraries, graphs, user objects
 * (their destructors are NOT called), call counters, fault injections,
 * parameter layouts, launch records; cuInit must be called again; the driver
 * version goes back to 13000. Lookup records of cuGetProcAddress are kept (the
 * bindings resolve once per process); fakecuda_clear_proc_records drops them.
 * Queued user-object destructors are run before it returns.
 * Returns -1 (doing nothing) when called from a fake-driver thread. */
int fakecuda_reset(void);

/* Calls of a function (base name) through pointers cuGetProcAddress handed
 * out, every ABI variant together, fault-injected calls included. -1: unknown. */
long long fakecuda_call_count(const char *name);

/* The cudaVersion / flags / number of cuGetProcAddress lookups of `name`
 * (any name, even unknown to the fake); -1 / -1 / 0 if never looked up. */
int fakecuda_last_proc_version(const char *name);
long long fakecuda_last_proc_flags(const char *name);
int fakecuda_proc_lookup_count(const char *name);
void fakecuda_clear_proc_records(void);

/* The ABI version of the implementation last CALLED for a function that the
 * fake implements in several variants (cuCtxCreate: 3020, 11040 or 12050;
 * cuCtxGetDevice / cuCtxSynchronize: 2000 or 13000; cuStreamGetCtx: 9020 or
 * 12050; cuDevicePrimaryCtxSetFlags/Release/Reset: 7000 or 11000;
 * cuEventElapsedTime: 2000 or 12080; cuDeviceGetUuid: 9020 or 11040;
 * cuGetProcAddress: 11030 or 12000). -1 if never called / single-variant. */
int fakecuda_last_variant(const char *name);

/* Fault injection: make the nth call of `name` from now return `result`
 * (nth = 1: the next call) once, or every call when nth = 0, until reset.
 * result = 0 (CUDA_SUCCESS) clears the injection for that name. An injected
 * call is counted and has no other effect. */
int fakecuda_fail_next(const char *name, int result, int nth);

/* Kernel parameter layout. f non-NULL: for that CUfunction only (wins over a
 * layout by name); f NULL: for every function named kernel_name (from
 * cuModuleGetFunction or cuKernelGetFunction, now or later). count = -1
 * removes the layout; count >= 0 declares `count` parameters. The arrays are
 * copied. Without a layout a function has no parameters for
 * cuFuncGetParamInfo and launches record no kernelParams bytes. */
int fakecuda_set_param_layout(void *f, const char *kernel_name, int count,
                              const size_t *offsets, const size_t *sizes);

/* Last launch of a kernel (by name; cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel). Copies min(cap, n) bytes of the packed
 * parameters (each kernelParams[i] at its declared offset, gaps zero, total
 * n = max(offset + size); or the CU_LAUNCH_PARAM_BUFFER_POINTER buffer of
 * `extra`) into buf and returns n; -1 if never launched. */
long long fakecuda_last_launch_params(const char *kernel_name, void *buf, size_t cap);
/* Launches of the kernel since reset; 0 if none. */
long long fakecuda_launch_count(const char *kernel_name);
/* out9 = grid x,y,z, block x,y,z, sharedMemBytes, 1 if hStream was NULL (0)
 * else 0, and 0. Returns 0, or -1 if never launched. */
int fakecuda_last_launch_dims(const char *kernel_name, unsigned *out9);
/* 1: parameters came from kernelParams, 2: from extra, 0: neither; -1 never. */
int fakecuda_last_launch_mode(const char *kernel_name);
/* The CUstream of the last launch, as passed. NULL if never launched. */
void *fakecuda_last_launch_stream(const char *kernel_name);

/* The last cuLaunchCooperativeKernelMultiDevice (each entry is also
 * launched as by cuLaunchKernel, in the current context): writes 9 values
 * per entry for the first min(n, cap, 8) entries (function, grid x,y,z,
 * block x,y,z, sharedMemBytes, hStream) and returns n = numDevices; -1 if
 * never called since reset. Its flags: fakecuda_last_multi_launch_flags
 * (-1 if never). */
long long fakecuda_last_multi_launch(unsigned long long *out, size_t cap);
int fakecuda_last_multi_launch_flags(void);

/* The launch attributes of the last cuLaunchKernelEx: writes 2 values per
 * attribute for the first min(n, cap, 8) (its id and the first 8 bytes of
 * its value) and returns n = numAttrs; -1 if never called since reset. */
long long fakecuda_last_launch_attrs(unsigned long long *out, size_t cap);

/* The external semaphores of the last cuGraphAddExternalSemaphoresSignalNode
 * or cuGraphAddNode of a CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL node (both
 * answer CUDA_ERROR_NOT_SUPPORTED on a live graph: no semaphore nodes):
 * writes the first min(n, cap, 8) handle values of extSemArray and
 * returns n = numExtSems; -1 if never called since reset. */
long long fakecuda_last_ext_sems(unsigned long long *out, size_t cap);

/* The last cuMemcpy2D[Unaligned] or cuMemcpy3D (host and device memory
 * only; arrays answer CUDA_ERROR_NOT_SUPPORTED), copied row by row: writes
 * its WidthInBytes, Height, Depth (1 for 2D) and the byte offsets of the
 * first row copied from the source's and the destination's base, and
 * returns 0; -1 if none since reset. */
long long fakecuda_last_copy_box(long long *out5);

/* cuOccupancyMaxPotentialBlockSize[WithFlags] (the model is in fakecuda.c:
 * block sizes 32, 64, ... up to the limit; blocks per SM min(2048 / size,
 * 32, 65536 / smem); the size of most resident threads, larger on a tie;
 * minGridSize = blocks * 4). The values the callback returned during the
 * calling thread's last call, in order (up to cap of them); returns how
 * many it returned (up to 64). */
int fakecuda_last_occupancy_calls(long long *out, size_t cap);
/* on = 1: before its own calls, each occupancy call calls the callback once
 * from a fake-driver thread with block size 32, whose result
 * fakecuda_last_foreign_b2d returns (-1: none since it was turned on or since
 * reset). Reset turns it off. */
int fakecuda_set_occupancy_foreign(int on);
long long fakecuda_last_foreign_b2d(void);

/* Live user-owned objects: contexts (created, and primary ones retained),
 * streams, events, device and host allocations, modules, libraries, graphs,
 * user objects. NULL streams and functions/kernels are not counted. */
long long fakecuda_live_handles(void);

/* Host functions and stream callbacks queued or running, plus user-object
 * destructors queued or running. */
long long fakecuda_pending_callbacks(void);
/* Only the user-object destructors queued or running. */
long long fakecuda_pending_destructors(void);

/* 0: the calling thread is not the fake's; 1: a stream worker thread;
 * 2: the deferred-destructor thread. */
int fakecuda_thread_kind(void);

/* First bytes of the last image given to cuModuleLoadData(Ex) or
 * cuLibraryLoadData (up to 16 bytes, stopping after the first NUL).
 * Returns the number of bytes recorded, -1 if none. */
long long fakecuda_last_module_image(void *buf, size_t cap);

/* Makes cuStreamGetCaptureInfo report `stream` (as passed; NULL: none) as
 * capturing: status ACTIVE, this id, graph NULL, and n <= 4 dependencies
 * from a fake-owned array: node i is (CUgraphNode)(0x1000 * (i + 1)), its
 * edge data from_port i, to_port 0, type i % 2. Other streams report
 * CU_STREAM_CAPTURE_STATUS_NONE. Reset clears it. -1 if n > 4. */
int fakecuda_set_capture(void *stream, unsigned long long id, size_t n);

/* Version cuDriverGetVersion reports (default 13000). cuGetProcAddress then
 * hides entry points newer than it, and a cudaVersion above it gives
 * CUDA_ERROR_INVALID_VALUE (as documented for the real driver). */
int fakecuda_set_driver_version(int version);

#ifdef __cplusplus
}
#endif
#endif
