{{! Locals of one parameter, declared before any jump to done. }}
{{#sh_value}}
{{#ek_struct}}
    {{ctype}} {{cname}}_v;
    memset(&{{cname}}_v, 0, sizeof {{cname}}_v);
{{/ek_struct}}
{{^ek_struct}}
    {{ctype}} {{cname}}_v = 0;
{{/ek_struct}}
{{/sh_value}}
{{#sh_in_ptr}}
    void *{{cname}}_p = NULL;
{{/sh_in_ptr}}
{{#sh_in_array}}
    {{ctype}} *{{cname}}_a = NULL;
    PyObject *{{cname}}_seq = NULL;
{{/sh_in_array}}
{{#sh_in_fixed}}
    {{ctype}} {{cname}}_a[{{fixed_len}}];
    PyObject *{{cname}}_seq = NULL;
{{/sh_in_fixed}}
{{#sh_in_string}}
    const char *{{cname}}_s = NULL;
    PyObject *{{cname}}_o = NULL;
{{/sh_in_string}}
{{#sh_in_buffer}}
    void *{{cname}}_p = NULL;
    Py_buffer {{cname}}_b = {0};
{{/sh_in_buffer}}
{{#sh_in_funcptr}}
    {{ptype}} {{cname}}_f = NULL;
{{/sh_in_funcptr}}
{{#sh_out}}
    {{ctype}} {{cname}}_out = 0;
{{/sh_out}}
{{#sh_inout}}
    {{ctype}} {{cname}}_out = 0;
{{/sh_inout}}
{{#sh_count_inout}}
    {{ctype}} {{cname}}_out = 0;
    {{ctype}} {{cname}}_in = 0;
{{/sh_count_inout}}
{{#sh_out_array}}
    {{ctype}} *{{cname}}_a = NULL;
{{/sh_out_array}}
{{#sh_out_fixed}}
    {{ctype}} {{cname}}_a[{{fixed_len}}] = {0};
{{/sh_out_fixed}}
{{#sh_out_string}}
    const char *{{cname}}_out = NULL;
{{/sh_out_string}}
{{#sh_out_chars}}
    char *{{cname}}_a = NULL;
{{/sh_out_chars}}
{{#sh_kernel_params}}
    cbs_packed {{cname}}_k;
    cbs_pack_init(&{{cname}}_k);
{{/sh_kernel_params}}
{{#sh_kernel_extra}}
    cbs_packed {{cname}}_k;
    cbs_pack_init(&{{cname}}_k);
{{/sh_kernel_extra}}
{{#sh_callback}}
    {{ptype}} {{cname}}_f = NULL;
    void *{{cname}}_payload = NULL;
    int {{cname}}_given = 0; /* the driver or a graph owns the payload */
{{/sh_callback}}
{{#sh_callback_data}}
    void *{{cname}}_p = NULL;
    Py_buffer {{cname}}_b = {0};
{{/sh_callback_data}}
{{#sh_attr_out}}
    union { unsigned char bytes[64]; unsigned long long u64; void *ptr; } {{cname}}_buf = {0};
{{/sh_attr_out}}
{{#sh_attr_in}}
    union { unsigned char bytes[64]; unsigned long long u64; void *ptr; } {{cname}}_buf = {0};
{{/sh_attr_in}}
{{#sh_out_struct}}
    PyObject *{{cname}}_obj = NULL;
    void *{{cname}}_p = NULL;
{{/sh_out_struct}}
