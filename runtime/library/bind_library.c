/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_library.c — a library API's shared library: search, publication,
 * symbols, and its exception class (bind_library.h states the order and
 * the invariants).
 */
#define _GNU_SOURCE 1 /* RTLD_NOLOAD (1: as pyconfig.h of 3.10 defines it) */
#include "bind_library.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glibc_pins.h"

/* What was loaded: immutable once published. */
struct cbs_library_loaded {
    void *handle;
    char path[]; /* the file dlopen took */
};

/* A growable string; `oom` set when an allocation failed (it then stays
 * as it was). */
typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} lib_text;

static void text_add(lib_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || t->oom)
        return;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->len + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* The directories to try, in order (places 3 to 5 of bind_library.h), as
 * one string of NUL-terminated entries; read with the thread state
 * attached. NULL with an exception when out of memory. */
static int search_dirs(const cbs_library *lib, const cubind_rt_api *rt, lib_text *dirs)
{
    const char *driver = rt->driver_path();
    const char *slash = driver ? strrchr(driver, '/') : NULL;
    if (slash)
        text_add(dirs, "%.*s%c", (int)(slash - driver), driver, '\0');
    static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
    for (size_t i = 0; i < sizeof homes / sizeof *homes; i++) {
        const char *home = getenv(homes[i]);
        if (!home || !*home)
            continue;
        text_add(dirs, "%s/lib64%c%s/lib%c", home, '\0', home, '\0');
        for (const char *const *d = lib->toolkit_dirs; *d; d++)
            text_add(dirs, "%s/%s%c", home, *d, '\0');
    }
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *path = sys ? PyObject_GetAttrString(sys, "path") : NULL;
    PyObject *entries = path ? PySequence_Tuple(path) : NULL;
    Py_XDECREF(path);
    Py_XDECREF(sys);
    if (!entries) {
        PyErr_Clear(); /* no sys.path: no wheels to look in */
        return dirs->oom ? -1 : 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(entries); i++) {
        PyObject *e = PyTuple_GET_ITEM(entries, i);
        const char *dir = PyUnicode_Check(e) ? PyUnicode_AsUTF8(e) : NULL;
        if (!dir) {
            PyErr_Clear();
            continue;
        }
        for (const char *const *w = lib->wheels; *w; w++)
            text_add(dirs, "%s/nvidia/%s%c", *dir ? dir : ".", *w, '\0');
    }
    Py_DECREF(entries);
    return dirs->oom ? -1 : 0;
}

/* The directory of the binary this file is linked into (the module:
 * cubind/), as "dir/" in `out`; 0, or -1 when dladdr cannot say. */
static int module_dir(lib_text *out)
{
    Dl_info info;
    if (!dladdr((void *)module_dir, &info) || !info.dli_fname)
        return -1;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash)
        text_add(out, "%.*s", (int)(slash - info.dli_fname + 1), info.dli_fname);
    return 0;
}

/* What a search tried: `failed` lists, one "\n  file: reason" line each,
 * the files that were there but did not load (a missing dependency, a
 * wrong architecture): those a user must read. Files that were simply not
 * there, the common case, are only counted in `absent`. */
typedef struct {
    lib_text failed;
    size_t failed_count, absent;
    int oom;
    const char *env; /* the environment variable's file, the only one tried; NULL */
} lib_tried;

/* dlerror's text for `file` without the file's name it starts with. */
static const char *reason_of(const char *file, const char *why)
{
    size_t n = strlen(file);
    if (strncmp(why, file, n) == 0 && strncmp(why + n, ": ", 2) == 0)
        return why + n + 2;
    return why;
}

/* 1 when `reason` (dlerror's, file name removed) says the file itself was
 * not found. A missing dependency reads "libdep.so: cannot open ..." and
 * a translated message matches nothing: both are listed in full. */
static int reason_is_absence(const char *reason)
{
    return strncmp(reason, "cannot open shared object file", 30) == 0;
}

/* dlopen of `file`, noting a failure in `tried`; the handle or NULL. */
static void *try_open(const char *file, int flags, lib_tried *tried, char **opened)
{
    void *h = dlopen(file, flags);
    if (h) {
        *opened = strdup(file);
        if (!*opened) {
            tried->oom = 1; /* reported as out of memory; the handle stays */
            return NULL;
        }
        return h;
    }
    const char *why = dlerror();
    const char *reason = reason_of(file, why ? why : "not found");
    if (flags & RTLD_NOLOAD || reason_is_absence(reason))
        tried->absent++; /* not loaded yet, or not there */
    else {
        tried->failed_count++;
        text_add(&tried->failed, "\n  %s: %s", file, reason);
    }
    return NULL;
}

/* The search itself, pure C (thread state detached): every place in
 * order; the handle and the file it took, or NULL with `tried` filled. */
static void *search(const cbs_library *lib, const lib_text *dirs, lib_tried *tried, char **opened)
{
    const char *env = *lib->env ? getenv(lib->env) : NULL;
    if (env && *env) {
        tried->env = env;
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (h && !(*opened = strdup(env)))
            tried->oom = 1;
        if (!h) {
            const char *why = dlerror();
            text_add(&tried->failed, "%s", reason_of(env, why ? why : "not found"));
        }
        return h;
    }
    void *h = NULL;
    lib_text bundled = {0};
    if (*lib->bundled && module_dir(&bundled) == 0) {
        text_add(&bundled, "%s", lib->bundled);
        if (bundled.oom)
            tried->oom = 1;
        else
            h = try_open(bundled.s, RTLD_NOW | RTLD_LOCAL, tried, opened);
    }
    free(bundled.s);
    for (const char *const *f = lib->files; *f && !h && !tried->oom; f++)
        h = try_open(*f, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, tried, opened);
    for (size_t at = 0; dirs->s && at < dirs->len && !h && !tried->oom;
         at += strlen(dirs->s + at) + 1) {
        for (const char *const *f = lib->files; *f && !h && !tried->oom; f++) {
            lib_text file = {0};
            text_add(&file, "%s/%s", dirs->s + at, *f);
            if (file.oom) {
                tried->oom = 1;
                break;
            }
            h = try_open(file.s, RTLD_NOW | RTLD_LOCAL, tried, opened);
            free(file.s);
        }
    }
    for (const char *const *f = lib->files; *f && !h && !tried->oom; f++)
        h = try_open(*f, RTLD_NOW | RTLD_LOCAL, tried, opened);
    return h;
}

/* " a, b or c" of a NULL-terminated list, each item as fmt gives it. */
static void text_alternatives(lib_text *t, const char *fmt, const char *const *items)
{
    for (const char *const *i = items; *i; i++) {
        text_add(t, "%s", i == items ? " " : i[1] ? ", " : " or ");
        text_add(t, fmt, *i);
    }
}

/* DriverNotFoundError for a failed search, in two parts: one sentence
 * saying which files were looked for, how many places held none of them,
 * and what to do; then one line per file that was there but did not load
 * (`tried->failed`), which is where a user's problem usually is. With the
 * environment variable set, that file's reason alone. */
static void raise_not_found(const cbs_library *lib, const lib_tried *tried, PyObject *not_found)
{
    if (tried->env) {
        PyErr_Format(not_found,
                     "cubind could not load the %s library: %s is set, and %s did not load "
                     "(%s); it must name the library, or be empty to search for it",
                     lib->name, lib->env, tried->env, tried->failed.s ? tried->failed.s : "unknown");
        return;
    }
    lib_text m = {0};
    text_add(&m, "cubind could not load the %s library: none of the %zu paths tried held a "
                 "loadable",
             lib->name, tried->absent + tried->failed_count);
    text_alternatives(&m, "%s", lib->files);
    text_add(&m, " (%sa copy already loaded, the CUDA driver's folder, $CUDA_HOME or "
                 "$CUDA_PATH, ",
             *lib->bundled ? "cubind's own copy, " : "");
    if (*lib->wheels) {
        text_add(&m, "NVIDIA's wheels");
        text_alternatives(&m, "nvidia/%s", lib->wheels);
        text_add(&m, " on sys.path, ");
    }
    text_add(&m, "the system's library path); install it, or set %s to its path",
             *lib->env ? lib->env : "LD_LIBRARY_PATH");
    if (tried->failed.s)
        text_add(&m, "; there but not loadable:%s", tried->failed.s);
    if (m.oom)
        PyErr_NoMemory();
    else
        PyErr_SetString(not_found, m.s);
    free(m.s);
}

/* The published load, loading now if nothing is; NULL with
 * DriverNotFoundError (or MemoryError) set. */
static cbs_library_loaded *library_open(cbs_library *lib, const cubind_rt_api *rt,
                                        PyObject *not_found)
{
    cbs_library_loaded *done = atomic_load_explicit(&lib->loaded, memory_order_acquire);
    if (done)
        return done;
    lib_text dirs = {0};
    lib_tried tried = {0};
    char *opened = NULL;
    void *h = NULL;
    if (search_dirs(lib, rt, &dirs) == 0) {
        Py_BEGIN_ALLOW_THREADS
        h = search(lib, &dirs, &tried, &opened);
        Py_END_ALLOW_THREADS
    }
    free(dirs.s);
    cbs_library_loaded *mine = NULL;
    if (h && opened) {
        size_t n = strlen(opened) + 1;
        mine = malloc(sizeof *mine + n);
        if (mine) {
            mine->handle = h;
            memcpy(mine->path, opened, n);
        }
    }
    free(opened);
    if (!mine) {
        if (dirs.oom || tried.oom || tried.failed.oom || h)
            PyErr_NoMemory();
        else
            raise_not_found(lib, &tried, not_found);
        free(tried.failed.s);
        return NULL;
    }
    free(tried.failed.s);
    cbs_library_loaded *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&lib->loaded, &expected, mine,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        free(mine); /* another thread published first: its block is the one */
        return expected;
    }
    return mine;
}

void *cbs_library_resolve(cbs_library *lib, const cubind_rt_api *rt, _Atomic(void *) *slot,
                          const cbs_proc *proc, PyObject *not_found,
                          PyObject *function_not_found)
{
    cbs_library_loaded *l = library_open(lib, rt, not_found);
    if (!l)
        return NULL;
    void *fn = dlsym(l->handle, proc->proc_name);
    if (!fn) {
        PyErr_Format(function_not_found, "%s: the %s library at %s has no symbol %s", proc->name,
                     lib->name, l->path, proc->proc_name);
        return NULL;
    }
    /* Every racer stores the same pointer: publishing twice is harmless. */
    atomic_store_explicit(slot, fn, memory_order_release);
    return fn;
}

PyObject *cbs_library_status(cbs_library *lib, const cubind_rt_api *rt)
{
    PyObject *not_found = PyExc_RuntimeError;
    cbs_library_loaded *l = library_open(lib, rt, not_found);
    if (l)
        return Py_BuildValue("(Os)", Py_True, l->path);
    if (!PyErr_ExceptionMatches(not_found))
        return NULL;
    PyObject *exc = cbs_take_exception();
    PyObject *why = exc ? PyObject_Str(exc) : NULL;
    Py_XDECREF(exc);
    PyObject *r = why ? Py_BuildValue("(OO)", Py_False, why) : NULL;
    Py_XDECREF(why);
    return r;
}

/* The `status` property of a library's error class: int(self.result), the
 * attribute cuda.bindings' nvJitLinkError carries (derived, so a pickled
 * and restored exception has it too). */
static PyObject *error_status(PyObject *unused, PyObject *self)
{
    (void)unused;
    PyObject *result = cbs_attr(self, "result");
    if (!result)
        return NULL;
    PyObject *n = PyNumber_Long(result);
    Py_DECREF(result);
    return n;
}

static PyMethodDef error_status_def = {"status", error_status, METH_O,
                                       PyDoc_STR("int(result): the library's status code.")};

/* ': NAME (value)' of the CUDA driver status `value` (an int), its name
 * from cubind.driver.CUresult ("CUresult_UNKNOWN" for a value that enum
 * lacks), appended to *s; 0, or -1 with an exception set. */
static int append_cuda_status(PyObject **s, PyObject *value)
{
    PyObject *driver = PyImport_ImportModule("cubind.driver");
    PyObject *cls = driver ? PyObject_GetAttrString(driver, "CUresult") : NULL;
    PyObject *member = cls ? PyObject_CallOneArg(cls, value) : NULL;
    PyObject *name = member ? PyObject_GetAttrString(member, "name") : NULL;
    if (!member && cls && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        name = PyUnicode_FromString("CUresult_UNKNOWN");
    }
    PyObject *tail = name ? PyUnicode_FromFormat("; CUDA status: %S (%S)", name, value) : NULL;
    if (tail)
        PyUnicode_AppendAndDel(s, tail);
    else
        Py_CLEAR(*s);
    Py_XDECREF(name);
    Py_XDECREF(member);
    Py_XDECREF(cls);
    Py_XDECREF(driver);
    return *s ? 0 : -1;
}

/* The __str__ of a status-str error class, what cuda.bindings'
 * snake_case modules' errors print. how is (name_value, message,
 * cuda_status_attr) (cbs_library_error_class_status's parts): "NAME
 * (value)" (value is int(result)), then the message (": message" after
 * NAME (value)), then "; CUDA status: NAME (value)" of that attribute when
 * it is not None. An instance whose __init__ never ran falls back to
 * RuntimeError's. */
static PyObject *error_status_str(PyObject *how, PyObject *self)
{
    int name_value = PyTuple_GET_ITEM(how, 0) == Py_True;
    int with_message = PyTuple_GET_ITEM(how, 1) == Py_True;
    PyObject *result = cbs_attr(self, "result");
    PyObject *name = result ? cbs_attr(self, "name") : NULL;
    PyObject *value = name ? PyNumber_Long(result) : NULL;
    PyObject *s = NULL;
    if (value)
        s = name_value ? PyUnicode_FromFormat("%S (%S)", name, value) : PyUnicode_FromString("");
    else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        s = ((PyTypeObject *)PyExc_RuntimeError)->tp_str(self); /* and nothing more */
    }
    if (s && value && with_message) {
        PyObject *message = cbs_attr(self, "message");
        PyObject *tail = message ? PyUnicode_FromFormat("%s%S", name_value ? ": " : "", message) : NULL;
        if (tail)
            PyUnicode_AppendAndDel(&s, tail);
        else
            Py_CLEAR(s);
        Py_XDECREF(message);
    }
    PyObject *attr = PyTuple_GET_ITEM(how, 2);
    if (s && value && attr != Py_None) {
        PyObject *status = PyObject_GetAttr(self, attr);
        if (!status || (status != Py_None && append_cuda_status(&s, status) < 0))
            Py_CLEAR(s);
        Py_XDECREF(status);
    }
    Py_XDECREF(value);
    Py_XDECREF(name);
    Py_XDECREF(result);
    return s;
}

static PyMethodDef error_status_str_def = {"__str__", error_status_str, METH_O,
                                           PyDoc_STR("Return 'NAME (value)', the message, or both (and what follows).")};

/* A library error class's __init__, bound with the runtime's CUDAError
 * __init__ as `base_init`: CUDAError's form (result, name, message,
 * func=None), or cuda.bindings' form E(status) / E(status, detail) (a
 * second positional argument that is not a str), which the class's
 * `_from_status` (set by the generated module once its enums exist) fills
 * in from the library's own enum and message. args[0] is self. */
static PyObject *library_error_init(PyObject *base_init, PyObject *args, PyObject *kwds)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int status_form = (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) &&
                      (n == 2 || (n > 2 && !PyUnicode_Check(PyTuple_GET_ITEM(args, 2))));
    if (!status_form)
        return PyObject_Call(base_init, args, kwds);
    PyObject *self = PyTuple_GET_ITEM(args, 0);
    PyObject *from = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "_from_status");
    if (!from)
        return NULL;
    PyObject *r = PyObject_Call(from, args, NULL);
    Py_DECREF(from);
    return r;
}

static PyMethodDef library_error_init_def = {
    "__init__", (PyCFunction)(void (*)(void))library_error_init, METH_VARARGS | METH_KEYWORDS,
    PyDoc_STR("E(status) or E(status, detail), as cuda.bindings makes it, or\n"
              "E(result, name, message, func=None)")};

/* How a class prints: CUDAError's str(), or status_str's. */
typedef struct {
    int status_str;               /* error_status_str's, of these parts: */
    int parts;                    /* CBS_STR_NAME_VALUE, CBS_STR_MESSAGE */
    const char *cuda_status_attr; /* then '; CUDA status: ...' of it; NULL: no */
} error_str_kind;

/* CUDAError's __str__, or with status_str the one above (an instance
 * method either way); a new reference, NULL with an exception set. */
static PyObject *error_str_method(PyObject *members, const error_str_kind *kind)
{
    if (!kind->status_str)
        return PyMapping_GetItemString(members, "__str__");
    PyObject *how = Py_BuildValue("(OOz)", kind->parts & CBS_STR_NAME_VALUE ? Py_True : Py_False,
                                  kind->parts & CBS_STR_MESSAGE ? Py_True : Py_False,
                                  kind->cuda_status_attr);
    PyObject *f = how ? PyCFunction_New(&error_status_str_def, how) : NULL;
    PyObject *m = f ? PyInstanceMethod_New(f) : NULL;
    Py_XDECREF(f);
    Py_XDECREF(how);
    return m;
}

/* cbs_library_error_class's class, a subclass of the runtime's class
 * base_name (RuntimeError when ""), printing as `kind` says. */
static PyObject *library_error_class(PyObject *runtime, const char *name, const char *base_name,
                                     const char *result_type, const error_str_kind *kind)
{
    PyObject *base = PyObject_GetAttrString(runtime, "CUDAError");
    PyObject *parent = NULL;
    if (base)
        parent = *base_name ? PyObject_GetAttrString(runtime, base_name)
                            : Py_NewRef(PyExc_RuntimeError);
    PyObject *members = base ? PyObject_GetAttrString(base, "__dict__") : NULL;
    PyObject *base_init = members ? PyMapping_GetItemString(members, "__init__") : NULL;
    PyObject *init_fn = base_init ? PyCFunction_New(&library_error_init_def, base_init) : NULL;
    PyObject *init = init_fn ? PyInstanceMethod_New(init_fn) : NULL;
    PyObject *str = init ? error_str_method(members, kind) : NULL;
    PyObject *dict = str ? PyDict_New() : NULL;
    PyObject *type = NULL;
    char qualname[128], doc[640], printed[160];
    snprintf(printed, sizeof printed, "'%s%s%s'%s%s%s, as cuda.bindings prints it",
             kind->parts & CBS_STR_NAME_VALUE ? "NAME (value)" : "",
             kind->parts == (CBS_STR_NAME_VALUE | CBS_STR_MESSAGE) ? ": " : "",
             kind->parts & CBS_STR_MESSAGE ? "message" : "",
             kind->cuda_status_attr ? ", then '; CUDA status: NAME (value)' of `" : "",
             kind->cuda_status_attr ? kind->cuda_status_attr : "",
             kind->cuda_status_attr ? "` when set" : "");
    snprintf(qualname, sizeof qualname, "cubind.%s", name);
    snprintf(doc, sizeof doc,
             "%s(status), or %s(result, name, message, func=None)\n\n"
             "A call returned an error %s. `result` is its member, `name` its name,\n"
             "`message` the library's description; `log` the log the library kept\n"
             "for the failed call (bytes), or None; `func` the function's name;\n"
             "`status` int(result), as cuda.bindings' nvJitLinkError has it.\n"
             "str(e) is %s.",
             name, name, result_type,
             kind->status_str ? printed : "'func: NAME (value): message'");
    PyObject *getter = dict ? PyCFunction_New(&error_status_def, NULL) : NULL;
    PyObject *status = getter ? PyObject_CallOneArg((PyObject *)&PyProperty_Type, getter) : NULL;
    if (status && parent && PyDict_SetItemString(dict, "__init__", init) == 0 &&
        PyDict_SetItemString(dict, "__str__", str) == 0 &&
        PyDict_SetItemString(dict, "log", Py_None) == 0 &&
        PyDict_SetItemString(dict, "status", status) == 0)
        type = PyErr_NewExceptionWithDoc(qualname, doc, parent, dict);
    Py_XDECREF(parent);
    Py_XDECREF(status);
    Py_XDECREF(getter);
    Py_XDECREF(dict);
    Py_XDECREF(str);
    Py_XDECREF(init);
    Py_XDECREF(init_fn);
    Py_XDECREF(base_init);
    Py_XDECREF(members);
    Py_XDECREF(base);
    return type;
}

PyObject *cbs_library_error_class(PyObject *runtime, const char *name, const char *base,
                                  const char *result_type)
{
    const error_str_kind kind = {0, 0, NULL};
    return library_error_class(runtime, name, base, result_type, &kind);
}

PyObject *cbs_library_error_class_status(PyObject *runtime, const char *name, const char *base,
                                         const char *result_type, int parts,
                                         const char *cuda_status_attr)
{
    const error_str_kind kind = {1, parts, cuda_status_attr};
    return library_error_class(runtime, name, base, result_type, &kind);
}

PyObject *cbs_library_error_subclass(PyObject *base, const char *qualname)
{
    char doc[256];
    snprintf(doc, sizeof doc, "A call returned the status this class is named after; a subclass of %s.",
             ((PyTypeObject *)base)->tp_name);
    return PyErr_NewExceptionWithDoc(qualname, doc, base, NULL);
}
