{{! Converts one output into outs[out_index] (NULL on failure). }}
{{#sh_out}}
        {
            {{ctype}} elem = {{cname}}_out;
            PyObject *item;
            {{>driver/elem_to_py.c}}
            outs[{{out_index}}] = item;
        }
{{/sh_out}}
{{#sh_inout}}
        {
            {{ctype}} elem = {{cname}}_out;
            PyObject *item;
            {{>driver/elem_to_py.c}}
            outs[{{out_index}}] = item;
        }
{{/sh_inout}}
{{#sh_count_inout}}
        outs[{{out_index}}] = PyLong_FromUnsignedLongLong((unsigned long long){{cname}}_out);
{{/sh_count_inout}}
{{#sh_out_array}}
        {
            /* As many entries as asked for (unused ones zero), as cuda.bindings. */
            unsigned long long n = (unsigned long long){{#count_is_inout}}{{count_cname}}_in{{/count_is_inout}}{{^count_is_inout}}{{count_cname}}_v{{/count_is_inout}};
            PyObject *list = PyList_New((Py_ssize_t)n);
            for (unsigned long long i = 0; list && i < n; i++) {
                {{ctype}} elem = {{cname}}_a[i];
                PyObject *item;
                {{>driver/elem_to_py.c}}
                if (!item)
                    Py_CLEAR(list);
                else
                    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
            }
            outs[{{out_index}}] = list;
        }
{{/sh_out_array}}
{{#sh_out_fixed}}
        {
            PyObject *list = PyList_New({{fixed_len}});
            for (Py_ssize_t i = 0; list && i < {{fixed_len}}; i++) {
                {{ctype}} elem = {{cname}}_a[i];
                PyObject *item;
                {{>driver/elem_to_py.c}}
                if (!item)
                    Py_CLEAR(list);
                else
                    PyList_SET_ITEM(list, i, item);
            }
            outs[{{out_index}}] = list;
        }
{{/sh_out_fixed}}
{{#sh_out_string}}
        outs[{{out_index}}] = {{cname}}_out ? PyBytes_FromString({{cname}}_out) : Py_NewRef(Py_None);
{{/sh_out_string}}
{{#sh_out_chars}}
        outs[{{out_index}}] = PyBytes_FromStringAndSize({{cname}}_a, (Py_ssize_t){{count_cname}}_v);
{{/sh_out_chars}}
{{#sh_attr_out}}
        switch ((long long){{attr_cname}}_v) {
{{#attr_cases}}
        case {{enumerator}}: {
            {{ctype}} elem;
            memcpy(&elem, {{cname}}_buf.bytes, sizeof elem);
            PyObject *item;
            {{>driver/elem_to_py.c}}
            outs[{{out_index}}] = item;
            break;
        }
{{/attr_cases}}
        default:
            outs[{{out_index}}] = PyLong_FromUnsignedLongLong({{cname}}_buf.u64);
        }
{{/sh_attr_out}}
{{#sh_out_struct}}
        outs[{{out_index}}] = {{cname}}_obj;
        {{cname}}_obj = NULL;
{{/sh_out_struct}}
