{{! Converts one input from args[in_index]; on failure: goto done. }}
{{#sh_value}}
    {
        PyObject *obj = args[{{in_index}}];
        {{ctype}} elem;
        {{>driver/elem_from_py.c}}
        {{cname}}_v = elem;
    }
{{/sh_value}}
{{#sh_inout}}
    {
        PyObject *obj = args[{{in_index}}];
        {{ctype}} elem;
        {{>driver/elem_from_py.c}}
        {{cname}}_out = elem;
    }
{{/sh_inout}}
{{#sh_count_inout}}
    if (args[{{in_index}}]) {
        PyObject *obj = args[{{in_index}}];
        {{ctype}} elem;
        {{>driver/elem_from_py.c}}
        {{cname}}_out = {{cname}}_in = elem;
    }
{{/sh_count_inout}}
{{#sh_in_array}}
    if (args[{{in_index}}] != Py_None) {
        {{cname}}_seq = PySequence_Fast(args[{{in_index}}], "{{fname}}(): argument '{{pyname}}' must be a sequence or None");
        if (!{{cname}}_seq)
            goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE({{cname}}_seq);
        if ((unsigned long long)n < (unsigned long long){{count_cname}}_v) {
            PyErr_Format(PyExc_ValueError, "{{fname}}(): argument '{{pyname}}' has %zd elements, fewer than the count %llu", n, (unsigned long long){{count_cname}}_v);
            goto done;
        }
        {{cname}}_a = PyMem_Calloc(n ? (size_t)n : 1, sizeof *{{cname}}_a);
        if (!{{cname}}_a) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *obj = PySequence_Fast_GET_ITEM({{cname}}_seq, i);
            {{ctype}} elem;
            {{>driver/elem_from_py.c}}
            {{cname}}_a[i] = elem;
        }
    } else if ({{count_cname}}_v != 0) {
        PyErr_SetString(PyExc_ValueError, "{{fname}}(): argument '{{pyname}}' is None but its count is not 0");
        goto done;
    }
{{/sh_in_array}}
{{#sh_in_fixed}}
    {
        {{cname}}_seq = PySequence_Fast(args[{{in_index}}], "{{fname}}(): argument '{{pyname}}' must be a sequence of {{fixed_len}} elements");
        if (!{{cname}}_seq)
            goto done;
        if (PySequence_Fast_GET_SIZE({{cname}}_seq) != {{fixed_len}}) {
            PyErr_Format(PyExc_ValueError, "{{fname}}(): argument '{{pyname}}' must have {{fixed_len}} elements, not %zd", PySequence_Fast_GET_SIZE({{cname}}_seq));
            goto done;
        }
        for (Py_ssize_t i = 0; i < {{fixed_len}}; i++) {
            PyObject *obj = PySequence_Fast_GET_ITEM({{cname}}_seq, i);
            {{ctype}} elem;
            {{>driver/elem_from_py.c}}
            {{cname}}_a[i] = elem;
        }
    }
{{/sh_in_fixed}}
{{#sh_in_string}}
    if (cbs_arg_string(args[{{in_index}}], "{{fname}}", "{{pyname}}", &{{cname}}_o, &{{cname}}_s) < 0)
        goto done;
{{/sh_in_string}}
{{#sh_in_buffer}}
    if (cbs_arg_buffer(args[{{in_index}}], {{#writable}}1{{/writable}}{{^writable}}0{{/writable}}, "{{fname}}", "{{pyname}}", &{{cname}}_b, &{{cname}}_p) < 0)
        goto done;
{{/sh_in_buffer}}
{{#sh_in_funcptr}}
    {
        void *address;
        if (cbs_arg_address(args[{{in_index}}], "{{fname}}", "{{pyname}}", &address) < 0)
            goto done;
        {{cname}}_f = ({{ptype}})(uintptr_t)address;
    }
{{/sh_in_funcptr}}
{{#sh_kernel_params}}
    if (cbs_pack_kernel_params(args[{{in_index}}], (void *){{kernel_cname}}_v, proc_if_present(st, PROC_cuFuncGetParamInfo), "{{fname}}", &{{cname}}_k) < 0)
        goto done;
{{/sh_kernel_params}}
{{#sh_kernel_extra}}
    if (cbs_pack_extra(args[{{in_index}}], "{{fname}}", &{{cname}}_k) < 0)
        goto done;
{{/sh_kernel_extra}}
{{#sh_callback}}
    if (PyCallable_Check(args[{{in_index}}])) {
        {{cname}}_payload = st->rt->cb_new({{callback_kind}}, args[{{in_index}}], args[{{data_in_index}}],
{{#callback_stream}}
                                           (PyObject *)st->handles[HANDLE_CUstream], (PyObject *)st->enums[ENUM_CUresult].type);
{{/callback_stream}}
{{^callback_stream}}
                                           NULL, NULL);
{{/callback_stream}}
        if (!{{cname}}_payload)
            goto done;
        {{cname}}_f = ({{ptype}})st->rt->cb_trampoline({{callback_kind}});
        {{data_cname}}_p = {{cname}}_payload;
{{#callback_host}}
        int attached = st->rt->cb_host_attach((void *){{stream_cname}}_v, {{cname}}_payload);
        if (attached < 0)
            goto done;
        {{cname}}_given = attached;
{{/callback_host}}
    } else {
        void *address;
        if (cbs_arg_address(args[{{in_index}}], "{{fname}}", "{{pyname}}", &address) < 0)
            goto done;
        {{cname}}_f = ({{ptype}})(uintptr_t)address;
        if (cbs_arg_buffer(args[{{data_in_index}}], 0, "{{fname}}", "{{data_cname}}", &{{data_cname}}_b, &{{data_cname}}_p) < 0)
            goto done;
    }
{{/sh_callback}}
{{#sh_in_ptr}}
    if (cbs_arg_struct(args[{{in_index}}], st->structs[{{record_index}}], 1, "{{fname}}", "{{pyname}}", &{{cname}}_p) < 0)
        goto done;
{{/sh_in_ptr}}
{{#sh_out_struct}}
    {{cname}}_obj = cbs_struct_alloc(st->structs[{{record_index}}], &{{cname}}_p);
    if (!{{cname}}_obj)
        goto done;
{{/sh_out_struct}}
