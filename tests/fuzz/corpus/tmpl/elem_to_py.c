{{! Converts the C value elem into a new reference item (NULL on failure). }}
{{#ek_signed}}
item = PyLong_FromLongLong((long long)elem);
{{/ek_signed}}
{{#ek_unsigned}}
item = PyLong_FromUnsignedLongLong((unsigned long long)elem);
{{/ek_unsigned}}
{{#ek_float}}
item = PyFloat_FromDouble((double)elem);
{{/ek_float}}
{{#ek_enum}}
item = cbs_enum_member(&st->enums[ENUM_{{enum_name}}], (long long)elem);
{{/ek_enum}}
{{#ek_handle_pointer}}
item = cbs_handle_new(st->handles[HANDLE_{{handle_name}}], (unsigned long long)(uintptr_t)elem);
{{/ek_handle_pointer}}
{{#ek_value_handle}}
item = cbs_handle_new(st->handles[HANDLE_{{handle_name}}], (unsigned long long)elem);
{{/ek_value_handle}}
{{#ek_pointer}}
item = PyLong_FromVoidPtr((void *)elem);
{{/ek_pointer}}
{{#ek_struct}}
item = cbs_struct_from(st->structs[{{record_index}}], &elem);
{{/ek_struct}}
