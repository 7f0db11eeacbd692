/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_reg.h — the registry rules' helpers: what the generated bindings of
 * the registry-* rules (gen/rules/rules.h) call on the shared handle
 * registry of cubind._runtime (through the capsule, cubind_rt.h). Above
 * bind_struct.c: a struct argument's kept objects become keep-alives.
 */
#ifndef CUBIND_BIND_REG_H
#define CUBIND_BIND_REG_H

#include "bind_support.h"

/* ---- the shared registry, for the registry-* rules ----------------------
 * Called after a successful driver call, thread state attached. Handles are
 * raw values; kinds CUBIND_REG_*, 0 for "no other handle". -1 with
 * MemoryError when the registry could not record it. A handle a rule
 * needs but cubind never registered (created by another library) is
 * registered on first use: what is kept for it then lives until the
 * process ends unless it is destroyed through cubind. */

/* A counted reference to the entry of (kind, h), or NULL (destroy: held
 * across the driver call). */
struct rt_registry_entry *cbs_reg_hold(const cubind_rt_api *rt, int kind, uintptr_t h);
/* The handle of held entry e was destroyed: unmaps e (if still mapped). */
void cbs_reg_destroyed(const cubind_rt_api *rt, struct rt_registry_entry *e);
/* h was created: registers it (replacing a stale entry of that value),
 * depending on dep's entry when dep_kind != 0. */
int cbs_reg_created(const cubind_rt_api *rt, int kind, uintptr_t h, int dep_kind, uintptr_t dep);
/* h was created as part of owner (a node of a graph): registered; the
 * owner's entry depends on it and unmaps it when destroyed. */
int cbs_reg_owned(const cubind_rt_api *rt, int kind, uintptr_t h, int owner_kind, uintptr_t owner);
/* The objects struct argument `obj` keeps (bind_struct.h: cbs_struct_kept),
 * or obj itself when it is no struct, None or int (a ctypes function
 * pointer, a buffer: what C keeps using after the call), become
 * keep-alives of (kind, h)'s entry. */
int cbs_reg_keep(const cubind_rt_api *rt, int kind, uintptr_t h, PyObject *obj);
/* Each host node callable that struct argument `obj` keeps (a node
 * capsule, cubind_rt.h) is also held by graph `graph` through a CUDA user
 * object (cb_node_retain); nothing for another object. */
int cbs_reg_retain(const cubind_rt_api *rt, uintptr_t graph, PyObject *obj);
/* (kind, h)'s entry depends on (dep_kind, dep)'s. */
int cbs_reg_depend(const cubind_rt_api *rt, int kind, uintptr_t h, int dep_kind, uintptr_t dep);

#endif
