# SPDX-License-Identifier: Apache-2.0
"""Issue 25 on the real driver: the behaviour cuda-python's own driver tests
exercise (enum classes, struct repr, char arrays, phGraph_out filled by
cuGraphAddNode, cuPointerGetAttributes), run against cubind.driver and
against cuda.bindings.driver (CUBIND_GPU_IMPL=cuda.bindings: the same
assertions hold there); and mixed code bases: cuda.bindings' own handles and
enum members given to cubind (cubind only, with cuda.bindings installed).
Never run in CI: tests/gpu/ needs the real driver."""
import importlib

import pytest

from gpu_common import IMPL, drv, ok


def test_enum_classes_iterate(ctx):
    members = list(drv.CUresult)
    assert len(drv.CUresult) == len(members) and members[0] is drv.CUresult.CUDA_SUCCESS
    assert int(max(drv.CUresult)) >= 999 and drv.CUresult.CUDA_ERROR_UNKNOWN in drv.CUresult
    assert repr(drv.CUresult) == "<enum 'CUresult'>"
    good = 0
    for code in range(int(max(drv.CUresult)) + 2):
        try:
            err = drv.CUresult(code)
        except ValueError:
            continue
        status, name = drv.cuGetErrorName(err)
        good += status == drv.CUresult.CUDA_SUCCESS and bool(name)
    assert good >= 76
    for name, m in drv.CUctx_flags.__members__.items():
        assert m.name == name


def test_struct_repr():
    r = repr(drv.CUDA_KERNEL_NODE_PARAMS_st()).split("\n")
    assert r[0] == "func : <CUfunction 0x0>" and "kernelParams : 0" in r and r[-1] == "extra : 0"
    r = repr(drv.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()).split("\n")
    assert r[:3] == ["params :", "    fence :", "        value : 0"] and "        fence : 0x0" in r


def test_char_range():
    val = drv.CUipcMemHandle_st()
    for x in range(-128, 256):
        val.reserved = [x] * 64
        assert val.reserved[0] == x % 256


def test_conditional_phgraph_out(ctx):
    graph = ok(drv.cuGraphCreate(0))
    handle = ok(drv.cuGraphConditionalHandleCreate(graph, ctx, 0, 0))
    params = drv.CUgraphNodeParams()
    params.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
    params.conditional.handle = handle
    params.conditional.type = drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF
    params.conditional.size = 1
    params.conditional.ctx = ctx
    # NULL until the driver fills it: `size` long, each item the NULL
    # handle (as upstream's test_conditional asserts)
    assert len(params.conditional.phGraph_out) == 1
    assert int(params.conditional.phGraph_out[0]) == 0
    ok(drv.cuGraphAddNode(graph, None, None, 0, params))
    body = params.conditional.phGraph_out
    assert len(body) == 1 and isinstance(body[0], drv.CUgraph) and int(body[0]) != 0
    ok(drv.cuGraphAddEmptyNode(body[0], None, 0))  # the body is a graph of the driver's
    ok(drv.cuGraphDestroy(graph))


def test_pointer_get_attributes(ctx):
    ptr = ok(drv.cuMemAllocManaged(0x1000, drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL.value))
    names = ["CONTEXT", "MEMORY_TYPE", "DEVICE_POINTER", "HOST_POINTER", "SYNC_MEMOPS", "BUFFER_ID",
             "IS_MANAGED", "DEVICE_ORDINAL", "IS_LEGACY_CUDA_IPC_CAPABLE", "RANGE_START_ADDR",
             "RANGE_SIZE", "MAPPED", "ALLOWED_HANDLE_TYPES", "IS_GPU_DIRECT_RDMA_CAPABLE",
             "ACCESS_FLAGS", "MEMPOOL_HANDLE"]
    attrs = [getattr(drv.CUpointer_attribute, "CU_POINTER_ATTRIBUTE_" + n) for n in names]
    single = [ok(drv.cuPointerGetAttribute(a, ptr)) for a in attrs]
    values = ok(drv.cuPointerGetAttributes(len(attrs), attrs, ptr))
    assert [str(v) for v in values] == [str(v) for v in single]
    ordinal = drv.cuPointerGetAttributes(1, [drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL], 0)
    assert abs(ordinal[1][0]) < 256
    ok(drv.cuMemFree(ptr))


def test_enum_member_as_a_stream(ctx):
    """A widely used client passes CUstream_flags.CU_STREAM_DEFAULT as the
    stream of cuMemcpyHtoDAsync."""
    dptr = ok(drv.cuMemAlloc(16))
    ok(drv.cuMemcpyHtoDAsync(dptr, bytes(range(16)), 16, drv.CUstream_flags.CU_STREAM_DEFAULT))
    ok(drv.cuStreamSynchronize(drv.CUstream_flags.CU_STREAM_DEFAULT))
    back = bytearray(16)
    ok(drv.cuMemcpyDtoH(back, dptr, 16))
    assert back == bytes(range(16))
    ok(drv.cuMemFree(dptr))


def cuda_bindings():
    if IMPL == "cuda.bindings":
        pytest.skip("mixes cuda.bindings into cubind")
    try:
        return importlib.import_module("cuda.bindings.driver")
    except ImportError:
        pytest.skip("cuda.bindings is not installed")


def test_cuda_bindings_objects_in_cubind(ctx):
    cb = cuda_bindings()
    ok(cb.cuInit(0))
    err, theirs = cb.cuMemAlloc(64)  # cuda.bindings' CUdeviceptr
    assert err == cb.CUresult.CUDA_SUCCESS
    stream = ok(drv.cuStreamCreate(0))
    their_stream = cb.CUstream(int(stream))
    ok(drv.cuMemcpyHtoDAsync(theirs, bytes(range(64)), 64, their_stream))
    ok(drv.cuStreamSynchronize(their_stream))
    back = bytearray(64)
    ok(drv.cuMemcpyDtoH(back, theirs, 64))
    assert back == bytes(range(64))
    warp = ok(drv.cuDeviceGetAttribute(cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, cb.CUdevice(0)))
    assert warp == 32
    p = drv.CUDA_MEMCPY2D()
    p.srcDevice, p.srcMemoryType = theirs, cb.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert int(p.srcDevice) == int(theirs) and p.srcMemoryType is drv.CUmemorytype.CU_MEMORYTYPE_DEVICE
    with pytest.raises(TypeError, match="hStream"):
        drv.cuStreamSynchronize(cb.CUcontext(int(ctx)))
    ok(drv.cuStreamDestroy(stream))
    assert cb.cuMemFree(theirs)[0] == cb.CUresult.CUDA_SUCCESS
