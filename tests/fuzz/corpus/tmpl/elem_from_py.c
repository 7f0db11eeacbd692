{{! Converts PyObject *obj into the C value elem; on failure: goto done. }}
{{#ek_signed}}
{
    long long t;
    if (cbs_arg_signed(obj, {{smin}}, {{smax}}, "{{fname}}", "{{pyname}}", "{{ctype}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_signed}}
{{#ek_unsigned}}
{
    unsigned long long t;
    if (cbs_arg_unsigned(obj, {{umax}}ULL, "{{fname}}", "{{pyname}}", "{{ctype}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_unsigned}}
{{#ek_float}}
{
    double t;
    if (cbs_arg_double(obj, "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_float}}
{{#ek_enum}}
{
    long long t;
    if (cbs_arg_enum(obj, &st->enums[ENUM_{{enum_name}}], {{smin}}, {{smax}}, "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_enum}}
{{#ek_handle_pointer}}
{
    unsigned long long t;
    if (cbs_arg_handle(obj, st->handles[HANDLE_{{handle_name}}], "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    elem = ({{ctype}})(uintptr_t)t;
}
{{/ek_handle_pointer}}
{{#ek_value_handle}}
{
    unsigned long long t;
    if (cbs_arg_handle(obj, st->handles[HANDLE_{{handle_name}}], "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_value_handle}}
{{#ek_pointer}}
{
    void *t;
    if (cbs_arg_address(obj, "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    elem = ({{ctype}})t;
}
{{/ek_pointer}}
{{#ek_struct}}
{
    void *t;
    if (cbs_arg_struct(obj, st->structs[{{record_index}}], 0, "{{fname}}", "{{pyname}}", &t) < 0)
        goto done;
    memcpy(&elem, t, sizeof elem);
}
{{/ek_struct}}
