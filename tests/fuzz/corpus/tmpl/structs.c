{{! Struct and union classes (runtime/module/bind_struct.h). Class i describes
    model.records[i]; the getset closures point at the field tables. }}
/* ---- struct and union classes --------------------------------------------- */

#include "bind_struct.h"

{{#structs}}
{{#records}}
/* {{name}} */
static const cbs_field_def struct_fields_{{index}}[] = {
{{#fields}}
    {"{{name}}", {{offset}}, {{size}}, {{kind}}, {{ref}}, {{count}}, {{bit_width}}, {{bit_offset}}},
{{/fields}}
    {NULL, 0, 0, CBS_F_BYTES, -1, 0, -1, 0},
};

static PyGetSetDef struct_getset_{{index}}[] = {
{{#fields}}
    {"{{name}}", cbs_struct_get, cbs_struct_set, NULL, (void *)&struct_fields_{{index}}[{{@index}}]},
{{/fields}}
    {NULL, NULL, NULL, NULL, NULL},
};

{{/records}}
enum { N_STRUCTS = {{count}} };

static const cbs_struct_def struct_defs[N_STRUCTS] = {
{{#records}}
    {"cubind.driver.{{name}}", {{doc}}, {{size}}, {{align}}, struct_fields_{{index}}, {{nfields}}, struct_getset_{{index}}},
{{/records}}
};

/* Every module attribute naming a struct class: its tag, typedefs, or
 * cuda.bindings' anon_structN / anon_unionN for nested records. */
static const struct {
    const char *name;
    int index;
} struct_names[] = {
{{#aliases}}
    {"{{name}}", {{index}}},
{{/aliases}}
    {NULL, -1},
};
{{/structs}}

/* Creates every struct class into types[] and adds it under its names. */
static int structs_create(PyObject *module, PyTypeObject **types)
{
    for (int i = 0; i < N_STRUCTS; i++) {
        types[i] = cbs_struct_type_create(module, &struct_defs[i]);
        if (!types[i])
            return -1;
    }
    for (size_t i = 0; struct_names[i].name; i++)
        if (PyModule_AddObjectRef(module, struct_names[i].name,
                                  (PyObject *)types[struct_names[i].index]) < 0)
            return -1;
    return 0;
}
