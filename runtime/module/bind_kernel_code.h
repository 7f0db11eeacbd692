/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_kernel_code.h — the parameter types of kernels whose code came as
 * PTX, kept per loaded module, library and link (the `kernel-code` rules
 * call the hooks below; bind_packer.c asks cbs_code_types).
 *
 * Where the tables live: the shared registry of cubind._runtime (so both
 * faces, cubind.driver and cubind.cu, see one load's types), one entry per
 * handle, its meta an immutable cbs_kt_table (bind_kernel_types.h):
 *   CUBIND_REG_CODE_MODULE   CUmodule   -> the PTX entries it was loaded from
 *   CUBIND_REG_CODE_LIBRARY  CUlibrary  -> same
 *   CUBIND_REG_CODE_MODULE   a library's CUmodule (cuLibraryGetModule, or
 *                            the module of a cuKernelGetFunction result) ->
 *                            a copy of its library's table, unmapped when
 *                            the library's entry goes (cuLibraryUnload)
 *   CUBIND_REG_CODE_LINK     CUlinkState-> the PTX added so far, and the
 *                                         image cuLinkComplete gave
 *   CUBIND_REG_CODE_IMAGE    that image's address -> its PTX entries, for the
 *                                         cuModuleLoadData that loads it
 * Lifetime: an unload (before the driver call, so a handle value the
 * driver hands out again never finds its predecessor's types) and
 * cuLinkDestroy remove their entries; a load that finds its handle's entry
 * still mapped (code unloaded behind cubind's back) replaces it.
 * Thread safety: the registry's; entries are immutable once registered. A
 * link state used from two threads at once (which CUDA does not allow) may
 * lose one thread's types: the kernel then packs by size.
 * Nothing here raises but cbs_code_image_check: a table that cannot be made (no PTX, no memory)
 * only leaves the kernel's types unknown.
 */
#ifndef CUBIND_BIND_KERNEL_CODE_H
#define CUBIND_BIND_KERNEL_CODE_H

#include "bind_support.h" /* Python.h first: cbs_code_image_check's PyObject */

#include "bind_kernel_types.h"
#include "cubind_rt.h"

#include <cuda.h>

/* Hooks, with the driver function's own parameters. */
void cbs_code_after_cuModuleLoad(const cubind_rt_api *rt, CUmodule *module, const char *fname);
/* The loaders of a code image (its parameter `image`, `fatCubin`, `code`)
 * get its length last: a Python buffer's, so that its PTX is never read
 * past it; 0 for an int address (read as the driver reads it, as in C). */
void cbs_code_after_cuModuleLoadData(const cubind_rt_api *rt, CUmodule *module,
                                     const void *image, size_t len);
void cbs_code_after_cuModuleLoadDataEx(const cubind_rt_api *rt, CUmodule *module,
                                       const void *image, unsigned int numOptions,
                                       CUjit_option *options, void **optionValues, size_t len);
void cbs_code_after_cuModuleLoadFatBinary(const cubind_rt_api *rt, CUmodule *module,
                                          const void *fatCubin, size_t len);
void cbs_code_before_cuModuleUnload(const cubind_rt_api *rt, CUmodule hmod);
void cbs_code_after_cuLinkAddData(const cubind_rt_api *rt, CUlinkState state,
                                  CUjitInputType type, void *data, size_t size,
                                  const char *name, unsigned int numOptions,
                                  CUjit_option *options, void **optionValues);
void cbs_code_after_cuLinkAddFile(const cubind_rt_api *rt, CUlinkState state,
                                  CUjitInputType type, const char *path,
                                  unsigned int numOptions, CUjit_option *options,
                                  void **optionValues);
void cbs_code_after_cuLinkComplete(const cubind_rt_api *rt, CUlinkState state, void **cubinOut,
                                   size_t *sizeOut);
void cbs_code_before_cuLinkDestroy(const cubind_rt_api *rt, CUlinkState state);
#if CUDA_VERSION >= 12000
void cbs_code_after_cuLibraryLoadData(const cubind_rt_api *rt, CUlibrary *library,
                                      const void *code, CUjit_option *jitOptions,
                                      void **jitOptionsValues, unsigned int numJitOptions,
                                      CUlibraryOption *libraryOptions,
                                      void **libraryOptionValues,
                                      unsigned int numLibraryOptions, size_t len);
void cbs_code_after_cuLibraryLoadFromFile(const cubind_rt_api *rt, CUlibrary *library,
                                          const char *fileName, CUjit_option *jitOptions,
                                          void **jitOptionsValues, unsigned int numJitOptions,
                                          CUlibraryOption *libraryOptions,
                                          void **libraryOptionValues,
                                          unsigned int numLibraryOptions);
void cbs_code_before_cuLibraryUnload(const cubind_rt_api *rt, CUlibrary library);
void cbs_code_after_cuLibraryGetModule(const cubind_rt_api *rt, CUmodule *pMod,
                                       CUlibrary library);
void cbs_code_after_cuKernelGetFunction(const cubind_rt_api *rt, CUfunction *pFunc,
                                        CUkernel kernel);
#endif

/* Before a code image loader calls the driver, for an image given as a
 * Python buffer `obj` (len bytes at image): 0 when it holds what the driver
 * will read of it (cbs_kt_image_fits: a PTX text's NUL, a fat binary's or
 * cubin's declared size), else -1 with a ValueError naming fname's
 * parameter `param`. The driver is not called then: it would read past
 * the buffer. */
int cbs_code_image_check(const char *fname, const char *param, PyObject *obj, const void *image,
                         size_t len);

/* The PTX types of entry `name` with n parameters of the module
 * (CUBIND_REG_CODE_MODULE) or library (_LIBRARY) `owner`: 1 and out[0..n),
 * or 0 when none are known. */
int cbs_code_types(const cubind_rt_api *rt, int kind, uintptr_t owner, const char *name, size_t n,
                   cbs_ktype *out);

#endif
