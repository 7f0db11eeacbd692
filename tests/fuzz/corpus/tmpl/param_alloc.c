{{! Storage for outputs sized by an input: runs after every input was
    converted, since a count may come after the array it sizes. }}
{{#sh_out_array}}
    {
        unsigned long long n = (unsigned long long){{#count_is_inout}}{{count_cname}}_in{{/count_is_inout}}{{^count_is_inout}}{{count_cname}}_v{{/count_is_inout}};
        if (n) {
            {{cname}}_a = n <= PY_SSIZE_T_MAX / sizeof *{{cname}}_a ? PyMem_Calloc((size_t)n, sizeof *{{cname}}_a) : NULL;
            if (!{{cname}}_a) {
                PyErr_NoMemory();
                goto done;
            }
        }
    }
{{/sh_out_array}}
{{#sh_out_chars}}
    if ({{count_cname}}_v <= 0) {
        PyErr_SetString(PyExc_ValueError, "{{fname}}(): argument '{{count_pyname}}' must be positive");
        goto done;
    }
    {{cname}}_a = PyMem_Calloc((size_t){{count_cname}}_v + 1, 1);
    if (!{{cname}}_a) {
        PyErr_NoMemory();
        goto done;
    }
{{/sh_out_chars}}
{{#sh_attr_in}}
    {
        PyObject *obj = args[{{in_index}}];
        switch ((long long){{attr_cname}}_v) {
{{#attr_cases}}
        case {{enumerator}}: {
            {{ctype}} elem;
            {{>driver/elem_from_py.c}}
            memcpy({{cname}}_buf.bytes, &elem, sizeof elem);
            break;
        }
{{/attr_cases}}
        default:
            if (cbs_arg_unsigned(obj, 18446744073709551615ULL, "{{fname}}", "{{pyname}}", "unsigned long long", &{{cname}}_buf.u64) < 0)
                goto done;
        }
    }
{{/sh_attr_in}}
