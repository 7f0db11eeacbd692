/* {{name}}: {{c_prototype}} */
PyDoc_STRVAR({{name}}_doc, {{doc}});

{{#has_inputs}}
static const char *const {{name}}_names[] = { {{#inputs}}"{{pyname}}", {{/inputs}}NULL };

{{/has_inputs}}
static PyObject *impl_{{name}}(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int raising)
{
    module_state *st = get_state(module);
    PyObject *result = NULL;
    if (atomic_load_explicit(st->rt->pending, memory_order_relaxed))
        st->rt->drain(); /* deferred callback work runs on Python threads */
{{#has_outputs}}
    PyObject *outs[{{nout}}] = {NULL};
{{/has_outputs}}
{{#params}}
{{>driver/param_decl.c}}
{{/params}}
{{#has_inputs}}
    PyObject *argv[{{nin}}];
    if (kwnames || nargs != {{nin}}) {
        if (cbs_parse_args("{{name}}", args, nargs, kwnames, {{name}}_names, {{nin}}, {{nrequired}}, argv) < 0)
            goto done;
        args = argv;
    }
{{/has_inputs}}
{{^has_inputs}}
    if (nargs || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "{{name}}() takes no arguments");
        goto done;
    }
    (void)args;
{{/has_inputs}}
{{#params}}
{{>driver/param_in.c}}
{{/params}}
{{#params}}
{{>driver/param_alloc.c}}
{{/params}}
    PFN_{{proc_name}}_v{{proc_version}} fn = proc(st, PROC_{{name}});
    if (!fn)
        goto done;
    CUresult rc;
{{#keep_gil}}
    rc = fn({{#params}}{{>driver/param_call.c}}{{^@last}}, {{/@last}}{{/params}});
{{/keep_gil}}
{{^keep_gil}}
    Py_BEGIN_ALLOW_THREADS
    rc = fn({{#params}}{{>driver/param_call.c}}{{^@last}}, {{/@last}}{{/params}});
    Py_END_ALLOW_THREADS
{{/keep_gil}}
{{#unloads_kernels}}
    if (rc == CUDA_SUCCESS)
        cbs_pack_forget_layouts(); /* CUfunction values may be reused now */
{{/unloads_kernels}}
{{#params}}
{{>driver/param_after.c}}
{{/params}}
{{#has_outputs}}
    if (rc == CUDA_SUCCESS) {
{{#params}}
{{>driver/param_out.c}}
{{/params}}
    }
    result = make_result(st, rc, raising, outs, {{nout}});
{{/has_outputs}}
{{^has_outputs}}
    result = make_result(st, rc, raising, NULL, 0);
{{/has_outputs}}
done:
{{#params}}
{{>driver/param_cleanup.c}}
{{/params}}
    return result;
}

static PyObject *driver_{{name}}(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return impl_{{name}}(module, args, nargs, kwnames, 0);
}

static PyObject *cu_{{name}}(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return impl_{{name}}(module, args, nargs, kwnames, 1);
}
