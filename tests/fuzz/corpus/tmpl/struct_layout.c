{{! Compiled by the tests against the real cuda.h: every size, alignment and
    field offset the model recorded must be what the C compiler computes. }}
#include <stddef.h>
#include <cuda.h>

{{#records}}
_Static_assert(sizeof({{ctype}}) == {{size}}, "sizeof({{ctype}})");
_Static_assert(_Alignof({{ctype}}) == {{align}}, "_Alignof({{ctype}})");
{{#fields}}
_Static_assert(offsetof({{ctype}}, {{path}}) == {{offset}}, "offsetof({{ctype}}, {{path}})");
{{/fields}}
{{/records}}

int cubind_struct_layout_records = {{nrecords}};
int cubind_struct_layout_fields = {{nfields}};
