{{! SPDX-License-Identifier: Apache-2.0 }}
/* {{name}}: {{>driver/c_prototype.c}} */
{{>driver/docstring.c}}

{{#has_inputs}}
static const char *const {{name}}_names[] = { {{#inputs}}"{{pyname}}", {{/inputs}}NULL };

{{/has_inputs}}
{{! keep-gil functions are the trivial getters a loop calls millions of
    times: their body is inlined into both faces' wrappers (the raising flag
    folds to a constant, no second call). The rest stay one shared copy. }}
{{#keep_gil}}static CBS_ALWAYS_INLINE {{/keep_gil}}{{!
  }}{{^keep_gil}}static {{/keep_gil}}PyObject *impl_{{name}}(PyObject *module, PyObject *const *args, {{!
  }}Py_ssize_t nargs, PyObject *kwnames, int raising)
{
    module_state *st = get_state(module);
    PyObject *result = NULL;
    if (atomic_load_explicit(st->cb_pending, memory_order_relaxed))
        st->rt->drain(); /* deferred callback work runs on Python threads */
{{#has_outputs}}
    PyObject *outs[{{nout}}] = {NULL};
{{/has_outputs}}
{{! Each phase (gen/classify/shapes.def's SHAPE_PHASE list) renders every
    parameter's shape template, templates/shapes/<shape>.tmpl, with that
    phase's flag set: the section phase.P turns phase_P on. }}
{{#phase.decl}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.decl}}
{{#registry}}
{{#reg_destroy}}
    struct rt_registry_entry *{{cname}}_reg = NULL; /* held across the destroy */
{{/reg_destroy}}
{{/registry}}
{{#returns_string}}
    const char *ret_s = NULL; /* what the function returns */
{{/returns_string}}
{{#undo}}
    int undo_pending = 0; /* the driver created what {{undo_name}} releases */
    PFN_{{undo_proc_name}}_v{{undo_proc_version}} undo_fn = NULL;
{{/undo}}
{{#phase.kw}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.kw}}
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
{{#phase.in}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.in}}
{{#phase.check}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.check}}
{{#phase.probe}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.probe}}
{{#phase.size}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.size}}
{{#phase.alloc}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.alloc}}
{{#registry}}
{{#reg_destroy}}
    {{cname}}_reg = cbs_reg_hold(st->rt, {{kind}}, {{>driver/handle_value.c}});
{{/reg_destroy}}
{{/registry}}
{{#undo}}
    /* Resolved before the create: resolving may allocate, and the undo
     * runs when allocations fail. Unresolved: no undo. */
    undo_fn = proc_if_present(st, PROC_{{undo_name}});
{{/undo}}
    PFN_{{proc_name}}_v{{proc_version}} fn = proc(st, PROC_{{name}});
    if (!fn)
        goto done;
    {{result_type}} rc{{#returns_string}} = {{success}}{{/returns_string}};
{{#code_before}}
    /* the code's kernel types go before the code can (bind_kernel_code.h) */
    cbs_code_before_{{name}}(st->rt, {{>driver/call_args.c}});
{{/code_before}}
{{#phase.enter}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.enter}}
{{#keep_gil}}
    {{>driver/driver_call.c}}
{{/keep_gil}}
{{^keep_gil}}
{{#has_attached}}
    if ({{#phase.attach}}{{#attached}}{{>*shape_template}}{{^@last}} || {{/@last}}{{/attached}}{{/phase.attach}}) {
        /* A callable runs inside the driver call, on this thread: the
         * thread state stays attached (bind_sync_callback.h says why). */
        {{>driver/driver_call.c}}
    } else {
        Py_BEGIN_ALLOW_THREADS
        {{>driver/driver_call.c}}
        Py_END_ALLOW_THREADS
    }
{{/has_attached}}
{{^has_attached}}
    Py_BEGIN_ALLOW_THREADS
    {{>driver/driver_call.c}}
    Py_END_ALLOW_THREADS
{{/has_attached}}
{{/keep_gil}}
{{#phase.leave}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.leave}}
{{#code_after}}
    if (rc == {{success}}) /* the PTX's kernel types (bind_kernel_code.h) */
        cbs_code_after_{{name}}(st->rt, {{>driver/call_args.c}});
{{/code_after}}
{{#unloads_kernels}}
    if (rc == {{success}})
        st->rt->kernels_unloaded(); /* CUfunction values may be reused now */
{{/unloads_kernels}}
{{#undo}}
    undo_pending = rc == {{success}};
{{/undo}}
{{#registry}}
{{>driver/registry.c}}
{{/registry}}
{{#phase.after}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.after}}
{{#error_log}}
{{>driver/error_log.c}}
{{/error_log}}
{{#has_outputs}}
    /* The previous result, if it can be reused: a handle of the same value
     * in it is returned again instead of a new object. */
    PyObject **cache = result_cache(st, RESULT_{{name}}, raising, {{!
      }}{{#cache_result}}1{{/cache_result}}{{^cache_result}}0{{/cache_result}}, {{!
      }}{{#cache_raising_result}}1{{/cache_raising_result}}{{!
      }}{{^cache_raising_result}}0{{/cache_raising_result}});
    PyObject *prev = reusable_result(cache, raising, {{nout}});
    if (rc == {{success}}) {
{{#phase.out}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.out}}
{{#returns_string}}
        outs[0] = ret_s ? PyBytes_FromString(ret_s) : Py_NewRef(Py_None);
{{/returns_string}}
    }
{{#one_output}}
    result = make_result1(st, "{{name}}", rc, raising, outs, cache, prev);
{{/one_output}}
{{#many_outputs}}
    result = make_result(st, "{{name}}", rc, raising, outs, {{nout}}, cache, prev);
{{/many_outputs}}
{{/has_outputs}}
{{^has_outputs}}
    result = make_result0(st, "{{name}}", rc, raising);
{{/has_outputs}}
done:
{{#undo}}
{{>driver/undo.c}}
{{/undo}}
{{#phase.cleanup}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.cleanup}}
{{#registry}}
{{#reg_destroy}}
    st->rt->reg_release({{cname}}_reg);
{{/reg_destroy}}
{{/registry}}
{{#phase.kwfree}}
{{#params}}
{{>*shape_template}}
{{/params}}
{{/phase.kwfree}}
    return result;
}

{{#has_dropin}}
static PyObject *driver_{{name}}(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return impl_{{name}}(module, args, nargs, kwnames, 0);
}
{{/has_dropin}}

static PyObject *cu_{{name}}(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return impl_{{name}}(module, args, nargs, kwnames, 1);
}
