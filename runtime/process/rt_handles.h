/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rt_handles.h — the process-wide instance of the handle registry
 * (rt_registry.h) as the capsule exports it (cubind_rt.h: reg_*), and the
 * kernel-layout epoch. Python keep-alives on its entries are
 * rt_callbacks.c's (rt_cb_keep_object: they drop on their interpreter).
 *
 * The registry is created by the first registration that can create it,
 * and never freed: entries may be referenced until the process ends. While
 * it does not exist, a registration fails with -ENOMEM (and the next one
 * tries again to create it) and every other call answers as an empty
 * registry (lookups -ENOENT), so the callers degrade to "nothing
 * registered", never crash, and recover once memory is there.
 */
#ifndef CUBIND_RT_HANDLES_H
#define CUBIND_RT_HANDLES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rt_registry.h"

int rt_h_register(int kind, uintptr_t handle, void *meta, void (*meta_free)(void *),
                  rt_registry_entry *dep, rt_registry_entry **out);
int rt_h_lookup(int kind, uintptr_t handle, rt_registry_entry **out);
int rt_h_unregister(int kind, uintptr_t handle);
int rt_h_unregister_entry(rt_registry_entry *e);
size_t rt_h_unregister_kind(int kind);
void rt_h_kernels_unloaded(void);
extern _Atomic unsigned long rt_h_kernel_epoch;
/* fork(): the process registry's locks (rt_registry_fork_prepare). */
void rt_h_fork_prepare(void);
void rt_h_fork_release(void);
/* Mapped entries of every kind (tests: cubind._runtime._registry_count()). */
size_t rt_h_count(void);
/* Mapped entries of one kind (tests: cubind._runtime._registry_counts()). */
size_t rt_h_count_kind(int kind);

#endif
