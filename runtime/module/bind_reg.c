/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_reg.c — see bind_reg.h.
 */
#include "bind_reg.h"
#include "bind_record.h"
#include "bind_struct.h"

#include <errno.h>

/* ---- the shared registry -------------------------------------------------- */

static int reg_fail(int rc)
{
    if (rc == -ENOMEM)
        PyErr_NoMemory();
    else
        PyErr_Format(PyExc_SystemError, "cubind: handle registry error %d", rc);
    return -1;
}

struct rt_registry_entry *cbs_reg_hold(const cubind_rt_api *rt, int kind, uintptr_t h)
{
    struct rt_registry_entry *e;
    return rt->reg_lookup(kind, h, &e) == 0 ? e : NULL;
}

void cbs_reg_destroyed(const cubind_rt_api *rt, struct rt_registry_entry *e)
{
    if (e)
        rt->reg_unregister_entry(e); /* never a successor reusing the value */
}

/* Registers a fresh handle: a mapping found at its value is stale (the
 * driver just handed the value out), so it is replaced. *out: a counted
 * reference, or NULL when out is NULL. */
static int reg_fresh(const cubind_rt_api *rt, int kind, uintptr_t h,
                     struct rt_registry_entry *dep, struct rt_registry_entry **out)
{
    int rc = -EEXIST;
    for (int tries = 0; tries < 8 && rc == -EEXIST; tries++) {
        rc = rt->reg_register(kind, h, NULL, NULL, dep, out);
        if (rc == -EEXIST)
            rt->reg_unregister(kind, h);
    }
    return rc;
}

/* A counted reference to (kind, h)'s entry, registered now when absent;
 * NULL with MemoryError. */
static struct rt_registry_entry *reg_target(const cubind_rt_api *rt, int kind, uintptr_t h)
{
    for (int tries = 0; tries < 8; tries++) {
        struct rt_registry_entry *e;
        if (rt->reg_lookup(kind, h, &e) == 0)
            return e;
        int rc = rt->reg_register(kind, h, NULL, NULL, NULL, &e);
        if (rc == 0)
            return e;
        if (rc != -EEXIST) {
            reg_fail(rc);
            return NULL;
        }
    }
    reg_fail(-EEXIST);
    return NULL;
}

int cbs_reg_created(const cubind_rt_api *rt, int kind, uintptr_t h, int dep_kind, uintptr_t dep)
{
    struct rt_registry_entry *d = NULL;
    if (dep_kind && !(d = reg_target(rt, dep_kind, dep)))
        return -1;
    int rc = reg_fresh(rt, kind, h, d, NULL);
    rt->reg_release(d);
    return rc == 0 ? 0 : reg_fail(rc);
}

/* Keep-alive release of an owned entry: unmaps it (only if it is still the
 * one mapped) and drops the owner's reference to it. No Python. */
static void reg_unmap_owned(void *item, void *ctx)
{
    const cubind_rt_api *rt = ctx;
    rt->reg_unregister_entry(item);
    rt->reg_release(item);
}

int cbs_reg_owned(const cubind_rt_api *rt, int kind, uintptr_t h, int owner_kind, uintptr_t owner)
{
    struct rt_registry_entry *o = reg_target(rt, owner_kind, owner), *e = NULL;
    if (!o)
        return -1;
    int rc = reg_fresh(rt, kind, h, NULL, &e);
    if (rc == 0)
        rc = rt->reg_add_dependency(o, e);
    if (rc == 0) {
        rc = rt->reg_keep_alive(o, e, reg_unmap_owned, (void *)rt);
        if (rc == 0)
            e = NULL; /* the keep-alive holds our reference now */
    }
    rt->reg_release(e);
    rt->reg_release(o);
    return rc == 0 ? 0 : reg_fail(rc);
}

int cbs_reg_keep(const cubind_rt_api *rt, int kind, uintptr_t h, PyObject *obj)
{
    const unsigned char *bytes;
    size_t size;
    /* a struct: what it keeps; another object: itself (a ctypes function,
     * a buffer), but for an int address or None, which hold nothing */
    PyObject *kept = cbs_struct_bytes(obj, &bytes, &size) ? cbs_struct_kept(obj)
                     : obj == Py_None || PyLong_Check(obj) ? Py_NewRef(Py_None)
                                                            : Py_NewRef(obj);
    if (!kept)
        return -1;
    int rc = 0;
    if (kept != Py_None) {
        struct rt_registry_entry *e = reg_target(rt, kind, h);
        rc = e ? rt->reg_keep_object(e, kept) : -1;
        rt->reg_release(e);
        if (rc > 0 || rc < -1)
            rc = reg_fail(rc);
    }
    Py_DECREF(kept);
    return rc;
}

int cbs_reg_retain(const cubind_rt_api *rt, uintptr_t graph, PyObject *obj)
{
    const unsigned char *bytes;
    size_t size;
    if (!cbs_struct_bytes(obj, &bytes, &size))
        return 0;
    PyObject *kept = cbs_struct_kept(obj); /* (offset, object) pairs, or None */
    if (!kept)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && kept != Py_None && i < PyList_GET_SIZE(kept); i++) {
        PyObject *o = PyTuple_GET_ITEM(PyList_GET_ITEM(kept, i), 1);
        if (PyCapsule_IsValid(o, CUBIND_NODE_CB_CAPSULE))
            rc = rt->cb_node_retain(o, graph);
    }
    Py_DECREF(kept);
    return rc;
}

int cbs_reg_depend(const cubind_rt_api *rt, int kind, uintptr_t h, int dep_kind, uintptr_t dep)
{
    struct rt_registry_entry *e = reg_target(rt, kind, h);
    struct rt_registry_entry *d = e ? reg_target(rt, dep_kind, dep) : NULL;
    int rc = e && d ? rt->reg_add_dependency(e, d) : -1;
    rt->reg_release(d);
    rt->reg_release(e);
    if (rc == -EINVAL)
        return 0; /* the same entry: nothing to add */
    return rc == 0 ? 0 : rc == -1 ? -1 : reg_fail(rc);
}
