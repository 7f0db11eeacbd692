/* Raises cubind.CUDAError for rc, with the driver's name and message. */
static PyObject *raise_cuda_error(module_state *st, CUresult rc)
{
    const char *name = NULL, *message = NULL;
    PFN_cuGetErrorName_v{{error_name_version}} get_name = atomic_load_explicit(&proc_slots[PROC_cuGetErrorName], memory_order_acquire);
    PFN_cuGetErrorString_v{{error_string_version}} get_string = atomic_load_explicit(&proc_slots[PROC_cuGetErrorString], memory_order_acquire);
    if (!get_name)
        get_name = proc(st, PROC_cuGetErrorName);
    if (get_name && !get_string)
        get_string = proc(st, PROC_cuGetErrorString);
    if (!get_name || !get_string)
        PyErr_Clear(); /* the status is the error to report, not the lookup */
    if (get_name && get_name(rc, &name) != CUDA_SUCCESS)
        name = NULL;
    if (get_string && get_string(rc, &message) != CUDA_SUCCESS)
        message = NULL;
    PyObject *member = cbs_enum_member(&st->enums[ENUM_CUresult], (long long)rc);
    if (!member)
        return NULL;
    PyObject *exc = PyObject_CallFunction(st->CUDAError, "Oss", member,
                                          name ? name : "CUDA_ERROR_UNKNOWN",
                                          message ? message : "unknown error");
    Py_DECREF(member);
    if (exc) {
        PyErr_SetObject(st->CUDAError, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* Builds what a face returns from a call's status and its n outputs (new
 * references, stolen; NULL where the call failed or conversion failed).
 * Drop-in face: (CUresult, out...) with None for outputs of a failed call.
 * Raising face: CUDAError on failure, else None, the output, or a tuple. */
static PyObject *make_result(module_state *st, CUresult rc, int raising, PyObject **outs, int n)
{
    if (rc == CUDA_SUCCESS) {
        for (int i = 0; i < n; i++) {
            if (!outs[i]) {
                for (int k = 0; k < n; k++)
                    Py_XDECREF(outs[k]);
                return NULL;
            }
        }
    }
    if (raising) {
        if (rc != CUDA_SUCCESS)
            return raise_cuda_error(st, rc);
        if (n == 0)
            Py_RETURN_NONE;
        if (n == 1)
            return outs[0];
    }
    PyObject *status = rc == CUDA_SUCCESS ? Py_NewRef(st->success)
                                          : cbs_enum_member(&st->enums[ENUM_CUresult], (long long)rc);
    int first = raising ? 0 : 1;
    PyObject *t = status ? PyTuple_New(n + first) : NULL;
    if (!t) {
        Py_XDECREF(status);
        for (int k = 0; k < n; k++)
            Py_XDECREF(outs[k]);
        return NULL;
    }
    if (raising)
        Py_DECREF(status);
    else
        PyTuple_SET_ITEM(t, 0, status);
    for (int i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i + first, outs[i] ? outs[i] : Py_NewRef(Py_None));
    return t;
}
