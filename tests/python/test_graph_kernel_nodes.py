# SPDX-License-Identifier: Apache-2.0
"""Graph kernel nodes (issues 4 and 5) against the test-only fake driver.

The kernelParams / extra fields of the kernel-node structs take every form
cuLaunchKernel takes (gen/rules.txt: kernel-params-field); the fake copies a
node's argument bytes when it is added or set, like the driver, and records
them when the executable graph is launched (fakecuda_last_launch_params), so
every expected byte string is computed independently with struct.pack.

Lifetime: the Python objects a node's arguments came from are keep-alives of
the graph's entry in the shared registry (registry-* rules); an executable
graph depends on its graph, a clone on its original.
"""
import ctypes
import gc
import struct
import weakref

import pytest

import cubind._runtime as rt
from test_packer import Kernel, kernel, lib  # noqa: F401 (fixtures)

SIZES = [8, 4, 4]                       # (void *p, int n, float a)
VALUES = (0x1122334455667788, -7, 2.5)


def want(k):
    return k.expect([struct.pack("<Q", VALUES[0]), struct.pack("<i", VALUES[1]),
                     struct.pack("<f", VALUES[2])])


class DeviceArray:
    """Stands for a device array: only __cuda_array_interface__."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (1,),
                                         "typestr": "<f4", "version": 3}


def forms(drv, k):
    """(name, kernelParams, extra, objects that must stay alive) per form."""
    cvals = [ctypes.c_uint64(VALUES[0]), ctypes.c_int(VALUES[1]), ctypes.c_float(VALUES[2])]
    ptrs = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in cvals])
    args = struct.pack("<Qif", *VALUES)
    size = ctypes.c_size_t(len(args))
    extra = (drv.CU_LAUNCH_PARAM_BUFFER_POINTER, bytearray(args),
             drv.CU_LAUNCH_PARAM_BUFFER_SIZE, size, drv.CU_LAUNCH_PARAM_END)
    return [
        ("plain", VALUES, None),
        ("plain-cai", (DeviceArray(VALUES[0]), VALUES[1], VALUES[2]), None),
        ("typed", (VALUES, (ctypes.c_void_p, ctypes.c_int, ctypes.c_float)), None),
        ("buffer", ptrs, None),
        ("address", ctypes.addressof(ptrs), None),
        ("extra", None, extra),
    ], (cvals, ptrs, size)


def kernel_params(cls, k, params, extra, use_kern=False):
    p = cls()
    if use_kern:
        p.kern = k.kern
    else:
        p.func = k.f
    p.gridDimX = p.gridDimY = p.gridDimZ = 1
    p.blockDimX, p.blockDimY, p.blockDimZ = 32, 1, 1
    p.sharedMemBytes = 0
    if params is not None:
        p.kernelParams = params
    if extra is not None:
        p.extra = extra
    return p


def launch_graph(face, graph, k):
    before = k.count()
    ex = face.cuGraphInstantiate(graph, 0)
    if isinstance(ex, tuple):
        assert ex[0] == 0, ex
        ex = ex[1]
    r = face.cuGraphLaunch(ex, None)
    assert r is None or r[0] == 0, r
    assert k.count() == before + 1
    return ex


def ok(r):
    if isinstance(r, tuple):
        assert r[0] == 0, r
        return r[1] if len(r) == 2 else r[1:]
    return r


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_every_form_reaches_the_kernel_through_add_kernel_node(drv, kernel, face_name):
    import cubind.cu as cu
    face = drv if face_name == "driver" else cu
    k = kernel(SIZES)
    cases, _alive = forms(drv, k)
    for name, params, extra in cases:
        p = kernel_params(face.CUDA_KERNEL_NODE_PARAMS, k, params, extra)
        g = ok(face.cuGraphCreate(0))
        ok(face.cuGraphAddKernelNode(g, None, 0, p))
        ex = launch_graph(face, g, k)
        assert k.recorded() == want(k), name
        ok(face.cuGraphExecDestroy(ex))
        ok(face.cuGraphDestroy(g))


def test_every_struct_version_packs_the_same_pointers(drv, kernel):
    k = kernel(SIZES)
    cases, _alive = forms(drv, k)
    for cls in (drv.CUDA_KERNEL_NODE_PARAMS_v1, drv.CUDA_KERNEL_NODE_PARAMS_v2,
                drv.CUDA_KERNEL_NODE_PARAMS_v3):
        for name, params, extra in cases:
            if params is None:
                continue
            p = kernel_params(cls, k, params, None)
            arr = (ctypes.c_void_p * 3).from_address(p.kernelParams)
            got = b"".join(ctypes.string_at(arr[i], s) for i, s in enumerate(SIZES))
            assert got == struct.pack("<Qif", *VALUES), (cls, name)


def test_graph_node_params_kernel_member_through_add_node(drv, kernel):
    k = kernel(SIZES)
    cases, _alive = forms(drv, k)
    for name, params, extra in cases:
        gp = drv.CUgraphNodeParams()
        gp.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
        gp.kernel.func = k.f
        for attr in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
            setattr(gp.kernel, attr, 1)
        if params is not None:
            gp.kernel.kernelParams = params
        else:
            gp.kernel.extra = extra
        g = ok(drv.cuGraphCreate(0))
        ok(drv.cuGraphAddNode(g, None, None, 0, gp))
        ex = launch_graph(drv, g, k)
        assert k.recorded() == want(k), name
        ok(drv.cuGraphExecDestroy(ex))
        ok(drv.cuGraphDestroy(g))


def test_plain_values_need_the_kernel_first(drv, kernel):
    p = drv.CUDA_KERNEL_NODE_PARAMS()
    with pytest.raises(TypeError, match=r"CUDA_KERNEL_NODE_PARAMS_v2_st\.kernelParams: plain "
                                        r"values are typed by the kernel: set "
                                        r"CUDA_KERNEL_NODE_PARAMS_v2_st\.func or kern first"):
        p.kernelParams = (1, 2, 3)
    assert p.kernelParams == 0
    p1 = drv.CUDA_KERNEL_NODE_PARAMS_v1()
    with pytest.raises(TypeError, match=r"set CUDA_KERNEL_NODE_PARAMS_st\.func first"):
        p1.kernelParams = [1]
    # forms that need no kernel are fine without one
    p.kernelParams = None
    p.kernelParams = ((1,), (ctypes.c_int,))
    k = kernel(SIZES)
    p.func = k.f
    with pytest.raises(TypeError, match=r"kernelParams: kernel parameter 3: unexpected"):
        p.kernelParams = (1, 2, 3.0, 4)
    with pytest.raises(OverflowError, match=r"CUDA_KERNEL_NODE_PARAMS_v2_st\.kernelParams: "
                                            r"kernel parameter 1"):
        p.kernelParams = (1, 2**40, 3.0)


def test_plain_values_typed_by_kern_when_func_is_null(drv, kernel, lib):
    name = b"graph_kern_typed"
    o, s = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(*SIZES)
    assert lib.fakecuda_set_param_layout(None, name, 3, o, s) == 0
    err, library = drv.cuLibraryLoadData(b"lib image\0", None, None, 0, None, None, 0)
    assert err == 0
    err, kern = drv.cuLibraryGetKernel(library, name)
    assert err == 0
    k = kernel(SIZES)
    k.kern, k.name = kern, name
    p = kernel_params(drv.CUDA_KERNEL_NODE_PARAMS, k, VALUES, None, use_kern=True)
    g = ok(drv.cuGraphCreate(0))
    ok(drv.cuGraphAddKernelNode(g, None, 0, p))
    ex = launch_graph(drv, g, k)
    assert k.recorded() == want(k)
    ok(drv.cuGraphExecDestroy(ex))
    ok(drv.cuGraphDestroy(g))


def node_with(drv, k, arr):
    p = kernel_params(drv.CUDA_KERNEL_NODE_PARAMS, k, (arr, 1, 2.0), None)
    g = ok(drv.cuGraphCreate(0))
    node = ok(drv.cuGraphAddKernelNode(g, None, 0, p))
    return g, node


@pytest.mark.parametrize("order", ["graph-first", "exec-first"])
def test_arguments_live_until_graph_and_exec_are_destroyed(drv, kernel, order):
    k = kernel(SIZES)
    arr = DeviceArray(0x1000)
    ref = weakref.ref(arr)
    g, _ = node_with(drv, k, arr)
    del arr
    gc.collect()
    assert ref() is not None, "the graph keeps the node's arguments"
    ex = launch_graph(drv, g, k)
    first, second = (drv.cuGraphDestroy, g), (drv.cuGraphExecDestroy, ex)
    if order == "exec-first":
        first, second = second, first
    ok(first[0](first[1]))
    gc.collect()
    assert ref() is not None, "alive while the other one lives"
    if order == "graph-first":
        ok(drv.cuGraphLaunch(ex, None))     # the exec still runs with live arguments
    ok(second[0](second[1]))
    gc.collect()
    assert ref() is None, "released once both are destroyed"


def test_clone_keeps_the_arguments_of_its_original(drv, kernel):
    k = kernel(SIZES)
    arr = DeviceArray(0x2000)
    ref = weakref.ref(arr)
    g, _ = node_with(drv, k, arr)
    del arr
    clone = ok(drv.cuGraphClone(g))
    ok(drv.cuGraphDestroy(g))
    gc.collect()
    assert ref() is not None
    ex = launch_graph(drv, clone, k)
    assert k.recorded()[:8] == struct.pack("<Q", 0x2000)
    ok(drv.cuGraphDestroy(clone))
    gc.collect()
    assert ref() is not None
    ok(drv.cuGraphExecDestroy(ex))
    gc.collect()
    assert ref() is None


def test_set_params_keep_alive_on_node_and_exec(drv, kernel):
    k = kernel(SIZES)
    a0, a1, a2 = DeviceArray(0x10), DeviceArray(0x20), DeviceArray(0x30)
    refs = [weakref.ref(a) for a in (a0, a1, a2)]
    g, node = node_with(drv, k, a0)
    ok(drv.cuGraphKernelNodeSetParams(
        node, kernel_params(drv.CUDA_KERNEL_NODE_PARAMS, k, (a1, 1, 2.0), None)))
    ex = ok(drv.cuGraphInstantiate(g, 0))
    ok(drv.cuGraphExecKernelNodeSetParams(
        ex, node, kernel_params(drv.CUDA_KERNEL_NODE_PARAMS, k, (a2, 1, 2.0), None)))
    ok(drv.cuGraphLaunch(ex, None))
    assert k.recorded()[:8] == struct.pack("<Q", 0x30)
    del a0, a1, a2
    gc.collect()
    assert all(r() is not None for r in refs)
    ok(drv.cuGraphDestroy(g))
    gc.collect()
    assert all(r() is not None for r in refs), "the exec depends on the graph"
    ok(drv.cuGraphExecDestroy(ex))
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_struct_owns_the_packed_buffer_and_values(drv, kernel):
    k = kernel(SIZES)
    arr = DeviceArray(0x3000)
    ref = weakref.ref(arr)
    p = kernel_params(drv.CUDA_KERNEL_NODE_PARAMS, k, (arr, 5, 1.0), None)
    del arr
    gc.collect()
    assert ref() is not None
    addr = p.kernelParams
    first = ctypes.c_void_p.from_address(addr).value
    assert ctypes.c_uint64.from_address(first).value == 0x3000
    p.kernelParams = None                # replacing the field drops them
    gc.collect()
    assert ref() is None


def test_registry_entries_are_released(drv, kernel):
    k = kernel(SIZES)
    base = rt._registry_count()
    g, _ = node_with(drv, k, DeviceArray(1))
    ex = ok(drv.cuGraphInstantiate(g, 0))
    # k.f's layout, the graph, its node, the exec
    assert rt._registry_count() == base + 4
    ok(drv.cuGraphDestroy(g))
    # the graph is unmapped; its entry (held by the exec) still owns the node
    assert rt._registry_count() == base + 3
    ok(drv.cuGraphExecDestroy(ex))
    assert rt._registry_count() == base + 1          # the layout only


def test_layouts_are_registered_and_forgotten_on_unload(drv, kernel, lib):
    def unload_another():
        err, other = drv.cuModuleLoadData(b"unloaded image\0")
        assert err == 0 and drv.cuModuleUnload(other)[0] == 0

    k = kernel([4, 4])
    unload_another()                                 # no layout left mapped
    base = rt._registry_count()
    assert k.ok((1, 2)) == struct.pack("<ii", 1, 2)
    assert rt._registry_count() == base + 1          # the layout of k.f
    unload_another()
    assert rt._registry_count() == base              # every layout unmapped
    # reload: a new function (its value possibly reused), another layout of
    # the same count: the bytes follow the new layout
    name = k.name
    assert drv.cuModuleUnload(k.mod)[0] == 0
    o, s = (ctypes.c_size_t * 2)(0, 8), (ctypes.c_size_t * 2)(8, 8)
    assert lib.fakecuda_set_param_layout(None, name, 2, o, s) == 0
    err, k.mod = drv.cuModuleLoadData(b"reloaded image\0")
    assert err == 0
    err, k.f = drv.cuModuleGetFunction(k.mod, name)
    assert err == 0
    k.offsets, k.sizes = [0, 8], [8, 8]
    assert k.ok((1, 2**40)) == struct.pack("<QQ", 1, 2**40)
