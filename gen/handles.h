/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handles.h — the handle classes of a generated module, in their one order:
 * the header's opaque handles (CUstream), its callback typedefs (CUhostFn,
 * holding a C function pointer), then the integer typedefs named by
 * `value-handle` and `value-class` rules (CUdevice, cuuint64_t). A class's
 * index in this order is its index in the module's handle table, for every
 * render stage.
 */
#ifndef CUBIND_HANDLES_H
#define CUBIND_HANDLES_H

#include <stddef.h>

#include "model.h"
#include "rules_bind.h"

typedef struct {
    const char *name;
    const char *kind; /* cbs_handle_kind enumerator (runtime/bind_support.h) */
    int names_kernel; /* the KERNEL of a kernel-params rule: carries a layout cache */
    int stream_protocol; /* named by a stream-protocol rule: __cuda_stream__ */
} handle_class;

/* The classes, malloc'ed (caller frees); their count in *n. */
handle_class *handles_collect(const cb_model *m, const cb_facts *facts, size_t *n);
/* Index of class `name`, -1 when none. */
int handles_index(const handle_class *h, size_t n, const char *name);
/* Whether class `name` holds a pointer (CBS_HANDLE_POINTER). */
int handles_is_pointer(const handle_class *h, size_t n, const char *name);

#endif
