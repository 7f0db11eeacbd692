/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_library.h — a library API's shared library (nvrtc, nvJitLink),
 * found and resolved by dlsym for the modules generated from a rules file
 * with `library` rules (gen/rules/rules.h). Linked into each such module; the
 * driver's own loader is the runtime's (rt_loader.c, cuGetProcAddress).
 *
 * Search order, at a module's first call that needs the library (each
 * file name of the rules in turn, at each place):
 *   1. the environment variable of the rules (CUBIND_LIBNVRTC=/path/...):
 *      when set and not empty, the only file tried;
 *   1b. the copy the package ships beside the module (`library-bundled`:
 *      cubind/_cudart.so, built from the toolkit's static library), when
 *      the rules name one and it is there;
 *   2. a copy already loaded in the process (dlopen RTLD_NOLOAD);
 *   3. the directory of the loaded CUDA driver (when cubind loaded one);
 *   4. $CUDA_HOME and then $CUDA_PATH: lib64/, lib/, then the rules'
 *      library-toolkit-dir directories (nvvm/lib64);
 *   5. NVIDIA's pip wheels: <each sys.path entry>/nvidia/<wheel dir>/;
 *   6. the system's library path (dlopen of the bare file name).
 * Failing all, DriverNotFoundError says in one sentence which files were
 * looked for, how many paths were tried and what to do, then lists, with
 * dlerror()'s reason, each file that was there but did not load (a file
 * merely absent is counted, not listed). A symbol the library lacks is
 * FunctionNotFoundError naming the library's path.
 *
 * Invariants: what was loaded is published once per process (one
 * compare-and-swap of an immutable block holding the handle and its path;
 * a racing loser frees its block, keeps its dlopen reference, never
 * dlclose'd); a failure is not remembered (the next call searches again).
 * The search reads sys.path with the thread state attached, then dlopens
 * with it detached.
 */
#ifndef CUBIND_BIND_LIBRARY_H
#define CUBIND_BIND_LIBRARY_H

#include <Python.h>
#include <stdatomic.h>

#include "bind_support.h"

typedef struct cbs_library_loaded cbs_library_loaded;

typedef struct {
    const char *name;                /* the API, for messages: "nvrtc" */
    const char *env;                 /* "" when none */
    const char *bundled;             /* beside the module; "" when none */
    const char *const *files;        /* file names, NULL-terminated */
    const char *const *wheels;       /* under site-packages/nvidia, NULL-terminated */
    const char *const *toolkit_dirs; /* under $CUDA_HOME / $CUDA_PATH besides lib64/
                                        and lib/ (nvvm/lib64), NULL-terminated */
    _Atomic(cbs_library_loaded *) loaded; /* NULL until published */
} cbs_library;

/* The entry point of `proc` (its proc_name is the symbol), published into
 * *slot (release); NULL with DriverNotFoundError / FunctionNotFoundError
 * set. rt: the runtime (for the loaded driver's path). */
void *cbs_library_resolve(cbs_library *lib, const cubind_rt_api *rt, _Atomic(void *) *slot,
                          const cbs_proc *proc, PyObject *not_found,
                          PyObject *function_not_found);

/* (True, path) once the library is loaded (loading it if needed), else
 * (False, why): the module's _library_status(). */
PyObject *cbs_library_status(cbs_library *lib, const cubind_rt_api *rt);

/* The exception class cubind.<name> of a library API: a RuntimeError with
 * cubind.CUDAError's constructor (result, name, message) and str(), and a
 * `log` attribute (None unless an error-log rule filled it); a subclass of
 * the runtime's class `base` (CUDAError) instead when base is not "". */
PyObject *cbs_library_error_class(PyObject *runtime, const char *name, const char *base,
                                  const char *result_type);

/* What str() of a status-str class prints, in this order (`parts` of
 * cbs_library_error_class_status, or'ed): */
enum {
    CBS_STR_NAME_VALUE = 1, /* 'NAME (value)' */
    CBS_STR_MESSAGE = 2     /* the message (after ': ' when NAME (value) precedes) */
};

/* The same class with str(e) of the `parts` above (a status-str rule):
 * 'NAME (value)', as cuda.bindings' snake_case modules' errors print;
 * 'NAME (value): message' (status-str-message); the message alone
 * (message-str, cuda.bindings.nvml's NvmlError). The rest stay
 * attributes. With cuda_status_attr (not NULL: the attribute of a
 * result-detail that is a CUDA driver status, CUresult) '; CUDA status:
 * NAME (value)' of it follows when it is not None, NAME from
 * cubind.driver.CUresult (cuda.bindings' cuFileError). */
PyObject *cbs_library_error_class_status(PyObject *runtime, const char *name, const char *base,
                                         const char *result_type, int parts,
                                         const char *cuda_status_attr);

/* A subclass of the error class `base` named qualname
 * ("cubind.nvml.DriverNotLoadedError"), for an error-subclasses rule:
 * the base's constructor, attributes and str(); one status raises it. */
PyObject *cbs_library_error_subclass(PyObject *base, const char *qualname);

#endif
