# SPDX-License-Identifier: Apache-2.0
"""Issue-5 graph kernel nodes on a real GPU: a graph with one kernel node
running echo_i32_f32_ptr (tests/gpu/packer_kernels.cu: writes back the bits of
the arguments it received) is built for every kernelParams form, through
cuGraphAddKernelNode and cuGraphAddNode (CUgraphNodeParams.kernel), launched,
and the device memory compared; then the node's arguments are checked to
outlive the Python objects they came from until graph and exec are destroyed.

Runs against cubind.driver (and cubind.cu) or, with CUBIND_GPU_IMPL=cuda.bindings,
cuda.bindings.driver (cubind-only forms skipped). Needs nvcc. Never run in CI.
"""
import ctypes
import gc
import importlib
import struct
import weakref

import pytest

from gpu_common import IMPL, drv, ok, ok_any_face

CUBIND = IMPL in ("cubind", "cubind.cu")
FACES = [drv]
if CUBIND:
    FACES.append(importlib.import_module("cubind.cu"))
cubind_only = pytest.mark.skipif(not CUBIND, reason="cubind-only form")


@pytest.fixture(scope="module")
def func(load_module):
    """echo_i32_f32_ptr of packer_kernels.cu, loaded in device 0's primary
    context (conftest.py)."""
    return ok(drv.cuModuleGetFunction(load_module("packer_kernels"), b"echo_i32_f32_ptr"))


@pytest.fixture
def out():
    ptr = ok(drv.cuMemAlloc(64))
    ok(drv.cuMemsetD8(ptr, 0, 64))
    yield ptr
    ok(drv.cuMemFree(ptr))


def read3(ptr):
    ok(drv.cuCtxSynchronize())
    host = (ctypes.c_ubyte * 24)()
    ok(drv.cuMemcpyDtoH(ctypes.addressof(host), ptr, 24))
    return list(struct.unpack("<3Q", bytes(host)))


def expected(ptr):
    return [7, struct.unpack("<I", struct.pack("<f", 2.5))[0], int(ptr)]


class DeviceArray:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (int(ptr), False), "shape": (1,),
                                         "typestr": "<u8", "version": 3}


def forms(ptr):
    """name -> (kernelParams, extra, cubind only); plus ctypes objects to keep."""
    cvals = [ctypes.c_int(7), ctypes.c_float(2.5), ctypes.c_uint64(int(ptr))]
    arr = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in cvals])
    size = ctypes.c_size_t(16)
    packed = struct.pack("<ifQ", 7, 2.5, int(ptr))
    extra = (drv.CU_LAUNCH_PARAM_BUFFER_POINTER, packed, drv.CU_LAUNCH_PARAM_BUFFER_SIZE, size,
             drv.CU_LAUNCH_PARAM_END)
    return {
        "plain": ((7, 2.5, ptr), None, True),
        "plain-cai": ((7, 2.5, DeviceArray(ptr)), None, True),
        "typed": (((7, 2.5, int(ptr)), (ctypes.c_int, ctypes.c_float, ctypes.c_void_p)), None,
                  False),
        "buffer": (arr, None, False),
        "address": (ctypes.addressof(arr), None, False),
        "extra": (None, extra, True),
    }, (cvals, arr, size)


def fill(p, f, params, extra):
    p.func = f
    p.gridDimX = p.gridDimY = p.gridDimZ = 1
    p.blockDimX = p.blockDimY = p.blockDimZ = 1
    p.sharedMemBytes = 0
    if params is not None:
        p.kernelParams = params
    if extra is not None:
        p.extra = extra
    return p


def run_graph(face, g, stream=None):
    ex = ok_any_face(face.cuGraphInstantiate(g, 0))
    ok_any_face(face.cuGraphLaunch(ex, stream or 0))
    ok_any_face(face.cuCtxSynchronize())
    ok_any_face(face.cuGraphExecDestroy(ex))
    ok_any_face(face.cuGraphDestroy(g))


FORM_NAMES = ["plain", "plain-cai", "typed", "buffer", "address", "extra"]


@pytest.mark.parametrize("face", FACES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("form", FORM_NAMES)
def test_add_kernel_node_every_form(func, out, face, form):
    table, _keep = forms(out)
    params, extra, only = table[form]
    if only and not CUBIND:
        pytest.skip("cubind-only form")
    p = fill(face.CUDA_KERNEL_NODE_PARAMS(), func, params, extra)
    g = ok_any_face(face.cuGraphCreate(0))
    ok_any_face(face.cuGraphAddKernelNode(g, None, 0, p))
    run_graph(face, g)
    assert read3(out) == expected(out)


@cubind_only
@pytest.mark.parametrize("form", FORM_NAMES)
def test_add_node_kernel_member_every_form(func, out, form):
    table, _keep = forms(out)
    params, extra, _ = table[form]
    gp = drv.CUgraphNodeParams()
    gp.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
    fill(gp.kernel, func, params, extra)
    g = ok(drv.cuGraphCreate(0))
    ok(drv.cuGraphAddNode(g, None, None, 0, gp))
    run_graph(drv, g)
    assert read3(out) == expected(out)


@cubind_only
def test_exec_set_params_and_keep_alive(func, out):
    other = ok(drv.cuMemAlloc(64))
    arr = DeviceArray(other)
    ref = weakref.ref(arr)
    g = ok(drv.cuGraphCreate(0))
    node = ok(drv.cuGraphAddKernelNode(g, None, 0, fill(drv.CUDA_KERNEL_NODE_PARAMS(), func,
                                                         (7, 2.5, out), None)))
    ex = ok(drv.cuGraphInstantiate(g, 0))
    ok(drv.cuGraphExecKernelNodeSetParams(ex, node, fill(drv.CUDA_KERNEL_NODE_PARAMS(), func,
                                                         (7, 2.5, arr), None)))
    del arr
    ok(drv.cuGraphDestroy(g))
    gc.collect()
    assert ref() is not None, "the exec keeps the node's arguments"
    ok(drv.cuGraphLaunch(ex, 0))
    assert read3(other) == expected(other)
    ok(drv.cuGraphExecDestroy(ex))
    gc.collect()
    assert ref() is None
    ok(drv.cuMemFree(other))
