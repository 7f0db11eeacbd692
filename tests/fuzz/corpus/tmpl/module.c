{{! The cubind.driver extension: the drop-in face (status tuples) and the
    raising face cubind.cu, from one set of function bodies. }}
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "bind_packer.h"
#include "bind_support.h"

/* ---- enums ------------------------------------------------------------ */

{{#enums}}
static const cbs_enum_item enum_items_{{index}}[] = {
{{#items}}
    {"{{name}}", {{value}}},
{{/items}}
};
{{/enums}}

enum { {{#enums}}ENUM_{{name}} = {{index}}, {{/enums}}N_ENUMS = {{nenums}} };

static const cbs_enum_def enum_defs[N_ENUMS] = {
{{#enums}}
    {"cubind.driver.{{name}}", {{doc}}, enum_items_{{index}}, {{nitems}}},
{{/enums}}
};

/* ---- handle classes ----------------------------------------------------- */

enum { {{#handles}}HANDLE_{{name}} = {{index}}, {{/handles}}N_HANDLES = {{nhandles}} };

static const struct {
    const char *qualname;
    cbs_handle_kind kind;
} handle_defs[N_HANDLES] = {
{{#handles}}
    {"cubind.driver.{{name}}", {{kind}}},
{{/handles}}
};

{{>driver/structs.c}}

/* ---- driver entry points ------------------------------------------------ */

/* Invariant: proc_slots[i] is NULL or the pointer cuGetProcAddress gave for
 * procs[i]; it is published once with release order and read with acquire
 * (bind_support.h: cbs_proc_get). Pointers are process-wide, so the table is
 * shared by every interpreter. */
enum { {{#procs}}PROC_{{name}} = {{index}}, {{/procs}}N_PROCS = {{nprocs}} };

static const cbs_proc procs[N_PROCS] = {
{{#procs}}
    {"{{name}}", "{{proc_name}}", {{version}}},
{{/procs}}
};

static _Atomic(void *) proc_slots[N_PROCS];
{{^has_func_get_param_info}}

/* This header has no cuFuncGetParamInfo: kernel parameters are packed
 * without it (proc_if_present gives NULL). */
enum { PROC_cuFuncGetParamInfo = -1 };
{{/has_func_get_param_info}}

/* ---- module state ------------------------------------------------------- */

/* Invariant: `tables` is the first member (bind_struct.h: struct classes
 * find their conversions with PyType_GetModuleState). */
typedef struct {
    cbs_tables tables;
    const cubind_rt_api *rt;
    PyObject *runtime;         /* the cubind._runtime module */
    PyObject *CUDAError, *DriverNotFoundError, *FunctionNotFoundError;
    PyObject *success;         /* CUresult.CUDA_SUCCESS */
    PyObject *cu;              /* the raising face, cubind.cu */
    cbs_enum enums[N_ENUMS];
    PyTypeObject *handles[N_HANDLES];
    PyTypeObject *structs[N_STRUCTS];
} module_state;

static inline module_state *get_state(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

static inline void *proc(module_state *st, int index)
{
    return cbs_proc_get(st->rt, &proc_slots[index], &procs[index], st->DriverNotFoundError,
                        st->FunctionNotFoundError);
}

/* The entry point, or NULL without an exception when this driver lacks it
 * (for optional helpers such as cuFuncGetParamInfo). */
static inline void *proc_if_present(module_state *st, int index)
{
    if (index < 0)
        return NULL; /* not in this header (PROC_... = -1 above) */
    void *fn = proc(st, index);
    if (!fn)
        PyErr_Clear();
    return fn;
}

{{>driver/results.c}}

/* ---- functions ---------------------------------------------------------- */

{{#functions}}
{{>driver/function.c}}

{{/functions}}
{{>driver/capi.c}}
{{>driver/init.c}}
