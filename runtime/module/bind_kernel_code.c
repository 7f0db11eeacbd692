/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_kernel_code.c — PTX kernel types per loaded module, library and
 * link (see bind_kernel_code.h).
 */
#include "bind_support.h" /* Python.h first */

#include "bind_kernel_code.h"
#include "rt_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Maps (kind, key) to table t (adopted; NULL: only unmaps). An entry left
 * mapped (code unloaded behind cubind's back, whose handle value the
 * driver handed out again) is replaced. */
static void code_map(const cubind_rt_api *rt, int kind, uintptr_t key, cbs_kt_table *t)
{
    rt->reg_unregister(kind, key);
    if (t && rt->reg_register(kind, key, t, cbs_kt_table_free, NULL, NULL) != 0)
        cbs_kt_table_free(t); /* -ENOMEM, or a racing load of the same key */
}

/* A new copy of the table mapped at (kind, key), or NULL. */
static cbs_kt_table *code_copy(const cubind_rt_api *rt, int kind, uintptr_t key)
{
    struct rt_registry_entry *e;
    if (rt->reg_lookup(kind, key, &e) != 0)
        return NULL;
    cbs_kt_table *t = cbs_kt_table_merge(rt->reg_meta(e), NULL);
    rt->reg_release(e);
    return t;
}

/* cbs_kt_read_fn over a file descriptor (src points at it). */
static int read_fd_at(void *src, uint64_t at, void *buf, size_t n)
{
    int fd = *(const int *)src;
    for (size_t got = 0; got < n;) {
        if (at + got > (uint64_t)INT64_MAX)
            return 0;
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0; /* an error, or the file got shorter */
        got += (size_t)r;
    }
    return 1;
}

/* The PTX types of a code file, read as cbs_kt_table_from_reader reads it
 * (no whole copy of a fat binary or a cubin), or NULL. */
static cbs_kt_table *code_file_types(const char *path)
{
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return NULL;
    /* The size from lseek, not fstat: fstat's default version is GLIBC_2.33,
     * past the wheels' manylinux2014 bound (glibc_pins.h). A pipe or other
     * unseekable file fails here; a directory fails at its first pread. */
    off_t size = lseek(fd, 0, SEEK_END);
    cbs_kt_table *t = NULL;
    if (size > 0)
        t = cbs_kt_table_from_reader(read_fd_at, &fd, (uint64_t)size);
    close(fd);
    return t;
}

/* After a load of `image` (len bytes, 0: unknown) into handle `key`: the
 * image's own PTX, or the PTX a link gave it. */
static void code_loaded(const cubind_rt_api *rt, int kind, uintptr_t key, const void *image,
                        size_t len)
{
    cbs_kt_table *t = code_copy(rt, CUBIND_REG_CODE_IMAGE, (uintptr_t)image);
    if (!t)
        t = cbs_kt_table_from_image(image, len);
    code_map(rt, kind, key, t);
}

static void code_loaded_file(const cubind_rt_api *rt, int kind, uintptr_t key, const char *path)
{
    code_map(rt, kind, key, code_file_types(path));
}

int cbs_code_image_check(const char *fname, const char *param, PyObject *obj, const void *image,
                         size_t len)
{
    unsigned long long need;
    /* a bytes object's buffer is followed by its NUL (the C API's promise) */
    switch (cbs_kt_image_fits(image, len, obj && PyBytes_Check(obj), &need)) {
    case CBS_IMAGE_NO_NUL:
        PyErr_Format(PyExc_ValueError,
                     "%s(): argument '%s' has no NUL within its %zu bytes: PTX text must end "
                     "with one (the driver reads up to it)",
                     fname, param, len);
        return -1;
    case CBS_IMAGE_SHORT:
        PyErr_Format(PyExc_ValueError,
                     "%s(): argument '%s' has %zu bytes, fewer than the %llu its headers "
                     "declare (a truncated fat binary or cubin)",
                     fname, param, len, need);
        return -1;
    default:
        return 0;
    }
}

void cbs_code_after_cuModuleLoad(const cubind_rt_api *rt, CUmodule *module, const char *fname)
{
    code_loaded_file(rt, CUBIND_REG_CODE_MODULE, (uintptr_t)*module, fname);
}

void cbs_code_after_cuModuleLoadData(const cubind_rt_api *rt, CUmodule *module,
                                     const void *image, size_t len)
{
    code_loaded(rt, CUBIND_REG_CODE_MODULE, (uintptr_t)*module, image, len);
}

void cbs_code_after_cuModuleLoadDataEx(const cubind_rt_api *rt, CUmodule *module,
                                       const void *image, unsigned int numOptions,
                                       CUjit_option *options, void **optionValues, size_t len)
{
    (void)numOptions, (void)options, (void)optionValues;
    code_loaded(rt, CUBIND_REG_CODE_MODULE, (uintptr_t)*module, image, len);
}

void cbs_code_after_cuModuleLoadFatBinary(const cubind_rt_api *rt, CUmodule *module,
                                          const void *fatCubin, size_t len)
{
    code_loaded(rt, CUBIND_REG_CODE_MODULE, (uintptr_t)*module, fatCubin, len);
}

void cbs_code_before_cuModuleUnload(const cubind_rt_api *rt, CUmodule hmod)
{
    code_map(rt, CUBIND_REG_CODE_MODULE, (uintptr_t)hmod, NULL);
}

#if CUDA_VERSION >= 12000
void cbs_code_after_cuLibraryLoadData(const cubind_rt_api *rt, CUlibrary *library,
                                      const void *code, CUjit_option *jitOptions,
                                      void **jitOptionsValues, unsigned int numJitOptions,
                                      CUlibraryOption *libraryOptions,
                                      void **libraryOptionValues,
                                      unsigned int numLibraryOptions, size_t len)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    code_loaded(rt, CUBIND_REG_CODE_LIBRARY, (uintptr_t)*library, code, len);
}

void cbs_code_after_cuLibraryLoadFromFile(const cubind_rt_api *rt, CUlibrary *library,
                                          const char *fileName, CUjit_option *jitOptions,
                                          void **jitOptionsValues, unsigned int numJitOptions,
                                          CUlibraryOption *libraryOptions,
                                          void **libraryOptionValues,
                                          unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    code_loaded_file(rt, CUBIND_REG_CODE_LIBRARY, (uintptr_t)*library, fileName);
}

void cbs_code_before_cuLibraryUnload(const cubind_rt_api *rt, CUlibrary library)
{
    code_map(rt, CUBIND_REG_CODE_LIBRARY, (uintptr_t)library, NULL);
}

/* ---- a library's modules ---------------------------------------------------- */

/* A keep-alive of a library's entry: unmaps the module entry `item` (held
 * by this keep-alive) derived from it, when the library's entry goes. */
static void derived_unmap(void *item, void *ctx)
{
    const cubind_rt_api *rt = ctx;
    rt->reg_unregister_entry(item); /* -ENOENT: replaced by a later load */
    rt->reg_release(item);
}

/* `module` is library's module (cuLibraryGetModule, or cuFuncGetModule of a
 * function of its kernel): a CUfunction of it finds its types through
 * CUBIND_REG_CODE_MODULE, as any module's do. Maps a copy of the library's
 * table there, marked with the library's entry (derived once per entry:
 * asking again, as a launch loop calling cuKernelGetFunction does, finds
 * the mark and adds nothing), and unmapped when the library's entry is
 * destroyed (cuLibraryUnload, a later load of the same value). A library
 * without PTX types unmaps whatever the module value still had. */
static void code_library_module(const cubind_rt_api *rt, uintptr_t module, uintptr_t library)
{
    struct rt_registry_entry *lib, *d;
    if (!module)
        return;
    if (rt->reg_lookup(CUBIND_REG_CODE_LIBRARY, library, &lib) != 0) {
        code_map(rt, CUBIND_REG_CODE_MODULE, module, NULL);
        return;
    }
    if (rt->reg_lookup(CUBIND_REG_CODE_MODULE, module, &d) == 0) {
        int same = cbs_kt_table_origin(rt->reg_meta(d)) == (uintptr_t)lib;
        rt->reg_release(d);
        if (same) {
            rt->reg_release(lib);
            return;
        }
    }
    cbs_kt_table *t = cbs_kt_table_derive(rt->reg_meta(lib), (uintptr_t)lib);
    rt->reg_unregister(CUBIND_REG_CODE_MODULE, module);
    if (t && rt->reg_register(CUBIND_REG_CODE_MODULE, module, t, cbs_kt_table_free, NULL,
                              &d) == 0) {
        if (rt->reg_keep_alive(lib, d, derived_unmap, (void *)rt) != 0) {
            /* cannot tie it to the library: no types rather than stale ones */
            rt->reg_unregister_entry(d);
            rt->reg_release(d);
        }
    } else {
        cbs_kt_table_free(t);
    }
    rt->reg_release(lib);
}

/* The driver function `name` (ABI version `version`), or NULL. */
static void *driver_fn(const cubind_rt_api *rt, const char *name, int version)
{
    return rt->lookup(name, version, NULL);
}

void cbs_code_after_cuLibraryGetModule(const cubind_rt_api *rt, CUmodule *pMod,
                                       CUlibrary library)
{
    code_library_module(rt, (uintptr_t)*pMod, (uintptr_t)library);
}

void cbs_code_after_cuKernelGetFunction(const cubind_rt_api *rt, CUfunction *pFunc,
                                        CUkernel kernel)
{
    typedef CUresult (*func_module_fn)(CUmodule *, CUfunction);
    typedef CUresult (*kernel_library_fn)(CUlibrary *, CUkernel);
    func_module_fn fm = (func_module_fn)driver_fn(rt, "cuFuncGetModule", 11000);
    kernel_library_fn kl = (kernel_library_fn)driver_fn(rt, "cuKernelGetLibrary", 12050);
    CUmodule module = NULL;
    CUlibrary library = NULL;
    if (fm && kl && fm(&module, *pFunc) == CUDA_SUCCESS && kl(&library, kernel) == CUDA_SUCCESS)
        code_library_module(rt, (uintptr_t)module, (uintptr_t)library);
}
#endif

/* ---- links ---------------------------------------------------------------- */

/* A link's meta: the PTX added so far and the image cuLinkComplete gave
 * (0 before), immutable: each step maps a new one. */
typedef struct {
    cbs_kt_table *table;
    uintptr_t image;
} link_meta;

static void link_meta_free(void *p)
{
    link_meta *m = p;
    if (m)
        cbs_kt_table_free(m->table);
    rt_free(m);
}

/* The link's meta fields (copied: table NULL when none), 0 when unmapped. */
static int link_get(const cubind_rt_api *rt, CUlinkState state, cbs_kt_table **table,
                    uintptr_t *image)
{
    struct rt_registry_entry *e;
    *table = NULL;
    *image = 0;
    if (rt->reg_lookup(CUBIND_REG_CODE_LINK, (uintptr_t)state, &e) != 0)
        return 0;
    const link_meta *m = rt->reg_meta(e);
    if (m) {
        *table = m->table ? cbs_kt_table_merge(m->table, NULL) : NULL;
        *image = m->image;
    }
    rt->reg_release(e);
    return 1;
}

/* Maps the link's new meta (table adopted). */
static void link_set(const cubind_rt_api *rt, CUlinkState state, cbs_kt_table *table,
                     uintptr_t image)
{
    rt->reg_unregister(CUBIND_REG_CODE_LINK, (uintptr_t)state);
    link_meta *m = rt_malloc(sizeof *m);
    if (!m) {
        cbs_kt_table_free(table);
        return;
    }
    m->table = table;
    m->image = image;
    if (rt->reg_register(CUBIND_REG_CODE_LINK, (uintptr_t)state, m, link_meta_free, NULL,
                         NULL) != 0)
        link_meta_free(m);
}

/* The entries of PTX or a fat binary added to a link (`added`, taken; NULL:
 * none) join the link's. */
static void link_add(const cubind_rt_api *rt, CUlinkState state, cbs_kt_table *added)
{
    if (!added)
        return;
    cbs_kt_table *old;
    uintptr_t image;
    link_get(rt, state, &old, &image);
    cbs_kt_table *both = cbs_kt_table_merge(old, added);
    cbs_kt_table_free(old);
    cbs_kt_table_free(added);
    if (both)
        link_set(rt, state, both, image);
}

void cbs_code_after_cuLinkAddData(const cubind_rt_api *rt, CUlinkState state,
                                  CUjitInputType type, void *data, size_t size,
                                  const char *name, unsigned int numOptions,
                                  CUjit_option *options, void **optionValues)
{
    (void)name, (void)numOptions, (void)options, (void)optionValues;
    if (type == CU_JIT_INPUT_PTX || type == CU_JIT_INPUT_FATBINARY)
        link_add(rt, state, cbs_kt_table_from_image(data, size));
}

void cbs_code_after_cuLinkAddFile(const cubind_rt_api *rt, CUlinkState state,
                                  CUjitInputType type, const char *path,
                                  unsigned int numOptions, CUjit_option *options,
                                  void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues;
    if (type == CU_JIT_INPUT_PTX || type == CU_JIT_INPUT_FATBINARY)
        link_add(rt, state, code_file_types(path));
}

void cbs_code_after_cuLinkComplete(const cubind_rt_api *rt, CUlinkState state, void **cubinOut,
                                   size_t *sizeOut)
{
    (void)sizeOut;
    cbs_kt_table *table;
    uintptr_t image;
    if (!link_get(rt, state, &table, &image) || !table)
        return;
    if (image)
        rt->reg_unregister(CUBIND_REG_CODE_IMAGE, image);
    uintptr_t now = (uintptr_t)*cubinOut;
    /* the image's entry gets its own copy: the link keeps its table */
    code_map(rt, CUBIND_REG_CODE_IMAGE, now, cbs_kt_table_merge(table, NULL));
    link_set(rt, state, table, now);
}

void cbs_code_before_cuLinkDestroy(const cubind_rt_api *rt, CUlinkState state)
{
    cbs_kt_table *table;
    uintptr_t image;
    if (!link_get(rt, state, &table, &image))
        return;
    cbs_kt_table_free(table);
    if (image)
        rt->reg_unregister(CUBIND_REG_CODE_IMAGE, image); /* the driver frees the image */
    rt->reg_unregister(CUBIND_REG_CODE_LINK, (uintptr_t)state);
}

int cbs_code_types(const cubind_rt_api *rt, int kind, uintptr_t owner, const char *name, size_t n,
                   cbs_ktype *out)
{
    struct rt_registry_entry *e;
    if (rt->reg_lookup(kind, owner, &e) != 0)
        return 0;
    int found = cbs_kt_table_find(rt->reg_meta(e), name, n, out);
    rt->reg_release(e);
    return found;
}
