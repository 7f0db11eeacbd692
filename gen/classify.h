/*
 * classify.h — how each parameter of each function crosses the Python
 * boundary, decided from the model by general rules plus the special cases
 * of rules.txt (rules.h).
 *
 * A function is supported only when every parameter has a kind below; the
 * others are listed by `cubind generate` with the first reason and are not
 * exported at all.
 */
#ifndef CUBIND_CLASSIFY_H
#define CUBIND_CLASSIFY_H

#include "model.h"
#include "rules.h"

typedef enum {
    PK_IN_INT,          /* integer by value */
    PK_IN_FLOAT,        /* float/double by value */
    PK_IN_ENUM,         /* enum by value: a member of its enum type or an int */
    PK_IN_HANDLE,       /* opaque handle (CUstream): its class, an int or None */
    PK_IN_VALUE_HANDLE, /* integer handle (CUdevice, CUdeviceptr): its class or an int */
    PK_OUT_INT,         /* T * written by the driver, returned */
    PK_OUT_FLOAT,
    PK_OUT_ENUM,
    PK_OUT_HANDLE,
    PK_OUT_VALUE_HANDLE,
    PK_UNSUPPORTED
} cb_pkind;

typedef struct {
    cb_pkind kind;
    const cb_param *param;
    const cb_type *value;     /* the value's type: the param, or its pointee for outs */
    int enum_index;           /* index into model.enums for *_ENUM, else -1 */
    const char *handle;       /* class name for *_HANDLE / *_VALUE_HANDLE */
    /* integer range of the value (PK_*_INT, PK_*_VALUE_HANDLE, PK_*_ENUM) */
    int is_signed;
    unsigned long long umax;  /* unsigned: largest value */
    long long smin, smax;     /* signed: range */
} cb_pclass;

typedef struct {
    const cb_function *fn;
    cb_pclass *params;        /* fn->nparams entries */
    size_t nin, nout;
    int supported;
    const char *why;          /* first reason it is not, "" when supported */
    int keep_gil;             /* a trivial getter: the call does not detach */
} cb_fclass;

typedef struct {
    cb_fclass *functions;     /* parallel to model.functions */
    size_t nfunctions, nsupported;
} cb_classes;

/* Classifies every function; strings live in the model's arena. */
cb_classes *classify_model(cb_model *m, const cb_rules *rules);
void classes_free(cb_classes *c);

/* Index of the enum named `name` (typedef or tag), -1 when none. */
int classify_enum_index(const cb_model *m, const char *name);

#endif
