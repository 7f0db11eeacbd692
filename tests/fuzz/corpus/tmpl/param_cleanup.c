{{! Releases what param_in.c acquired; runs on every path. }}
{{#sh_in_array}}
    PyMem_Free({{cname}}_a);
    Py_XDECREF({{cname}}_seq);
{{/sh_in_array}}
{{#sh_in_fixed}}
    Py_XDECREF({{cname}}_seq);
{{/sh_in_fixed}}
{{#sh_in_string}}
    Py_XDECREF({{cname}}_o);
{{/sh_in_string}}
{{#sh_in_buffer}}
    if ({{cname}}_b.obj)
        PyBuffer_Release(&{{cname}}_b);
{{/sh_in_buffer}}
{{#sh_out_array}}
    PyMem_Free({{cname}}_a);
{{/sh_out_array}}
{{#sh_out_chars}}
    PyMem_Free({{cname}}_a);
{{/sh_out_chars}}
{{#sh_kernel_params}}
    cbs_pack_release(&{{cname}}_k);
{{/sh_kernel_params}}
{{#sh_kernel_extra}}
    cbs_pack_release(&{{cname}}_k);
{{/sh_kernel_extra}}
{{#sh_callback}}
    if ({{cname}}_payload && !{{cname}}_given)
        st->rt->cb_discard({{cname}}_payload);
{{/sh_callback}}
{{#sh_callback_data}}
    if ({{cname}}_b.obj)
        PyBuffer_Release(&{{cname}}_b);
{{/sh_callback_data}}
{{#sh_out_struct}}
    Py_XDECREF({{cname}}_obj);
{{/sh_out_struct}}
