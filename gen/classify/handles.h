/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handles.h — the handle classes of a generated module, in their one order:
 * the header's opaque handles (CUstream), its callback typedefs (CUhostFn,
 * holding a C function pointer), then the integer typedefs named by
 * `value-handle` and `value-class` rules (CUdevice, cuuint64_t). A class's
 * index in this order is its index in the module's handle table, for every
 * render stage. Part of the classify stage: classify_model collects them
 * once (cb_classes.handles) from the model and the rules' facts.
 */
#ifndef CUBIND_HANDLES_H
#define CUBIND_HANDLES_H

#include <stddef.h>

#include "model/model.h"
#include "rules/rules_bind.h"

/* What a handle class holds (runtime/module/bind_support.h's cbs_handle_kind,
 * spelled by render_names.h). */
typedef enum {
    CB_HANDLE_POINTER,        /* an opaque pointer: CUstream */
    CB_HANDLE_I32,            /* int: CUdevice */
    CB_HANDLE_U32,            /* unsigned int */
    CB_HANDLE_U64,            /* 8 bytes: CUdeviceptr */
    CB_NHANDLE_KINDS
} cb_handle_kind;

typedef struct {
    const char *name;
    cb_handle_kind kind;
    int names_kernel; /* the KERNEL of a kernel-params rule: carries a layout cache */
    int stream_protocol; /* named by a stream-protocol rule: __cuda_stream__ */
    int interned;        /* named by an intern rule: one shared object per value */
    const char *base_module; /* a handle-base rule's MODULE and CLASS, or NULL */
    const char *base_name;
} handle_class;

/* The classes, malloc'ed (caller frees); their count in *n. */
handle_class *handles_collect(const cb_model *m, const cb_facts *facts, size_t *n);
/* Index of class `name`, -1 when none. */
int handles_index(const handle_class *h, size_t n, const char *name);

#endif
