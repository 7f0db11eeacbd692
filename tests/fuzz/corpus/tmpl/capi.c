{{! The C entry points exported in the capsule cubind.driver._C_API. }}
/* ---- C API (capsule) ----------------------------------------------------- */

{{>driver/capi_types.c}}

static struct PyModuleDef module_def;

/* The resolved entry point of procs[index], or NULL with DriverNotFoundError
 * or FunctionNotFoundError set. The slow path finds this interpreter's
 * cubind.driver for the exception types; it needs an attached thread state
 * (the GIL), like every C entry point below. */
static void *capi_proc(int index)
{
    void *fn = atomic_load_explicit(&proc_slots[index], memory_order_acquire);
    if (fn)
        return fn;
    PyObject *module = PyImport_ImportModule("cubind.driver");
    if (!module)
        return NULL;
    if (PyModule_GetDef(module) != &module_def) {
        PyErr_SetString(PyExc_ImportError, "cubind.driver in sys.modules is not the module that exported this C API");
        Py_DECREF(module);
        return NULL;
    }
    fn = proc(get_state(module), index);
    Py_DECREF(module);
    return fn;
}

{{#capi}}
/* {{name}}: returns CUBIND_DRIVER_CAPI_SENTINEL with an exception set when the
 * driver or the function cannot be resolved. Call with the GIL held; it is
 * released around the driver call. */
static CUresult capi_{{name}}({{decl}})
{
    PFN_{{proc_name}}_v{{version}} capi_fn_ = capi_proc(PROC_{{name}});
    if (!capi_fn_)
        return CUBIND_DRIVER_CAPI_SENTINEL;
    CUresult capi_rc_;
{{#keep_gil}}
    capi_rc_ = capi_fn_({{args}});
{{/keep_gil}}
{{^keep_gil}}
    Py_BEGIN_ALLOW_THREADS
    capi_rc_ = capi_fn_({{args}});
    Py_END_ALLOW_THREADS
{{/keep_gil}}
    return capi_rc_;
}

{{/capi}}
static const cubind_driver_capi_entry capi_entries[] = {
{{#capi}}
    {"{{name}}", {{signature}}, (void (*)(void))capi_{{name}}},
{{/capi}}
};

static const cubind_driver_capi capi_table = {
    CUBIND_DRIVER_CAPI_VERSION,
    sizeof(cubind_driver_capi_entry),
    {{cuda_version}}ULL,
    sizeof capi_entries / sizeof *capi_entries,
    capi_entries,
};

/* Adds the capsule as module._C_API. */
static int capi_add(PyObject *module)
{
    PyObject *capsule = PyCapsule_New((void *)&capi_table, CUBIND_DRIVER_CAPI_NAME, NULL);
    if (!capsule)
        return -1;
    return cbs_module_add(module, "_C_API", capsule);
}

/* _abi_signatures(): {name: signature} read from the capsule's table (what
 * `cubind abi-check` compares with a header). */
static PyObject *capi_signatures(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    for (size_t i = 0; i < capi_table.nentries; i++) {
        PyObject *s = PyUnicode_FromString(capi_table.entries[i].signature);
        if (!s || PyDict_SetItemString(d, capi_table.entries[i].name, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(s);
    }
    return d;
}

