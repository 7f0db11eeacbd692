/* ---- method tables -------------------------------------------------------- */

static PyMethodDef driver_methods[] = {
{{#functions}}
    {"{{name}}", (PyCFunction)(void (*)(void))driver_{{name}}, METH_FASTCALL | METH_KEYWORDS, {{name}}_doc},
{{/functions}}
    {"_abi_signatures", capi_signatures, METH_NOARGS, "_abi_signatures()\n--\n\n{name: ABI signature} of the C entry points in the capsule _C_API."},
    {NULL, NULL, 0, NULL},
};

/* The raising face: the same bodies, bound to this module's state. */
static PyMethodDef cu_methods[] = {
{{#functions}}
    {"{{name}}", (PyCFunction)(void (*)(void))cu_{{name}}, METH_FASTCALL | METH_KEYWORDS, {{name}}_doc},
{{/functions}}
    {NULL, NULL, 0, NULL},
};

static const struct {
    const char *name;
    long long value;
    int is_unsigned;
} int_constants[] = {
{{#macros}}
    {"{{name}}", {{value}}, {{is_unsigned}}},
{{/macros}}
};

static int add_constants(PyObject *module)
{
    for (size_t i = 0; i < sizeof int_constants / sizeof *int_constants; i++) {
        PyObject *v = int_constants[i].is_unsigned
                          ? PyLong_FromUnsignedLongLong((unsigned long long)int_constants[i].value)
                          : PyLong_FromLongLong(int_constants[i].value);
        if (!v || cbs_module_add(module, int_constants[i].name, v) < 0)
            return -1;
    }
    return 0;
}

/* Fills cubind.cu: the raising functions (whose self is the driver module,
 * so both faces share one state) and the same types and constants. */
static PyObject *make_cu_face(PyObject *module)
{
    PyObject *cu = PyModule_New("cubind.cu");
    if (!cu)
        return NULL;
    PyObject *name = PyUnicode_FromString("cubind.cu");
    if (!name || PyModule_AddStringConstant(cu, "__doc__",
            "The raising face of cubind: cuda.bindings.driver's functions returning their outputs and raising cubind.CUDAError.") < 0)
        goto fail;
    for (PyMethodDef *def = cu_methods; def->ml_name; def++) {
        PyObject *f = PyCMethod_New(def, module, name, NULL);
        if (!f || cbs_module_add(cu, def->ml_name, f) < 0)
            goto fail;
    }
    PyObject *dict = PyModule_GetDict(module);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (PyType_Check(value) || PyLong_CheckExact(value)) {
            if (PyObject_SetAttr(cu, key, value) < 0)
                goto fail;
        }
    }
    Py_DECREF(name);
    return cu;
fail:
    Py_XDECREF(name);
    Py_DECREF(cu);
    return NULL;
}

static int exec_module(PyObject *module)
{
    module_state *st = get_state(module);
    st->rt = cbs_import_runtime(&st->runtime);
    if (!st->rt)
        return -1;
    st->CUDAError = PyObject_GetAttrString(st->runtime, "CUDAError");
    st->DriverNotFoundError = PyObject_GetAttrString(st->runtime, "DriverNotFoundError");
    st->FunctionNotFoundError = PyObject_GetAttrString(st->runtime, "FunctionNotFoundError");
    if (!st->CUDAError || !st->DriverNotFoundError || !st->FunctionNotFoundError)
        return -1;
    for (int i = 0; i < N_ENUMS; i++)
        if (cbs_enum_create(module, &enum_defs[i], &st->enums[i]) < 0)
            return -1;
    for (int i = 0; i < N_HANDLES; i++) {
        st->handles[i] = cbs_handle_type_create(module, handle_defs[i].qualname, handle_defs[i].kind);
        if (!st->handles[i])
            return -1;
    }
    st->tables = (cbs_tables){st->enums, st->handles, st->structs, struct_defs, N_STRUCTS,
                               N_ENUMS, N_HANDLES};
    if (structs_create(module, st->structs) < 0)
        return -1;
    st->success = cbs_enum_member(&st->enums[ENUM_CUresult], CUDA_SUCCESS);
    if (!st->success || add_constants(module) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "CUDAError", st->CUDAError) < 0 ||
        PyModule_AddStringConstant(module, "CUBIND_HEADER_CUDA_VERSION", "{{cuda_version}}") < 0)
        return -1;
    if (capi_add(module) < 0)
        return -1;
    st->cu = make_cu_face(module);
    if (!st->cu || PyModule_AddObjectRef(module, "_cu", st->cu) < 0)
        return -1;
    return 0;
}

static int traverse_module(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = get_state(module);
    Py_VISIT(st->runtime);
    Py_VISIT(st->CUDAError);
    Py_VISIT(st->DriverNotFoundError);
    Py_VISIT(st->FunctionNotFoundError);
    Py_VISIT(st->success);
    Py_VISIT(st->cu);
    for (int i = 0; i < N_ENUMS; i++) {
        Py_VISIT(st->enums[i].type);
        for (size_t k = 0; k < st->enums[i].n; k++)
            Py_VISIT(st->enums[i].members[k]);
    }
    for (int i = 0; i < N_HANDLES; i++)
        Py_VISIT(st->handles[i]);
    for (int i = 0; i < N_STRUCTS; i++)
        Py_VISIT(st->structs[i]);
    return 0;
}

static int clear_module(PyObject *module)
{
    module_state *st = get_state(module);
    Py_CLEAR(st->runtime);
    Py_CLEAR(st->CUDAError);
    Py_CLEAR(st->DriverNotFoundError);
    Py_CLEAR(st->FunctionNotFoundError);
    Py_CLEAR(st->success);
    Py_CLEAR(st->cu);
    for (int i = 0; i < N_ENUMS; i++)
        cbs_enum_clear(&st->enums[i]);
    for (int i = 0; i < N_HANDLES; i++)
        Py_CLEAR(st->handles[i]);
    for (int i = 0; i < N_STRUCTS; i++)
        Py_CLEAR(st->structs[i]);
    return 0;
}

static void free_module(void *module)
{
    clear_module((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)exec_module},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "cubind.driver",
    "Drop-in replacement for cuda.bindings.driver, generated by cubind from {{header}}.",
    sizeof(module_state),
    driver_methods,
    module_slots,
    traverse_module,
    clear_module,
    free_module,
};

PyMODINIT_FUNC PyInit_driver(void)
{
    return PyModuleDef_Init(&module_def);
}
