# SPDX-License-Identifier: Apache-2.0
"""The CUDA runtime API on a real GPU: cubind.runtime (CUBIND_GPU_IMPL=cubind,
the default) or cuda.bindings.runtime (CUBIND_GPU_IMPL=cuda.bindings, the
drop-in evidence: the same tests pass on both). Devices, memory and a
round trip through it, streams and events, device properties compared
with cuda.bindings.runtime's answers, cubind.cudart raising, and which
library cubind.runtime loaded (its own static copy). Never run in CI:
`scripts/gpu-run tests` runs every file of tests/gpu on both."""
import importlib

import pytest

from gpu_common import IMPL

CUBIND = IMPL in ("cubind", "cubind.cu")
rt = importlib.import_module("cubind.runtime" if CUBIND else "cuda.bindings.runtime")
E = rt.cudaError_t
K = rt.cudaMemcpyKind


def ok(result):
    assert result[0] == E.cudaSuccess, result
    outs = result[1:]
    return outs[0] if len(outs) == 1 else (outs or None)


def reference():
    """cuda.bindings.runtime, when installed beside cubind (the GPU machine
    has it), else None."""
    try:
        return importlib.import_module("cuda.bindings.runtime")
    except ImportError:
        return None


def test_versions_and_devices():
    assert ok(rt.cudaRuntimeGetVersion()) >= 13000
    assert ok(rt.cudaDriverGetVersion()) >= 13000
    count = ok(rt.cudaGetDeviceCount())
    assert count >= 1
    ok(rt.cudaSetDevice(0))
    assert ok(rt.cudaGetDevice()) == 0
    ref = reference()
    if ref is not None:
        assert ref.cudaGetDeviceCount()[1] == count


def test_malloc_memcpy_round_trip():
    ok(rt.cudaSetDevice(0))
    n = 1 << 16
    src = bytes(range(256)) * (n // 256)
    dptr = ok(rt.cudaMalloc(n))
    assert int(dptr) != 0
    try:
        ok(rt.cudaMemset(dptr, 0, n))
        ok(rt.cudaMemcpy(dptr, src, n, K.cudaMemcpyHostToDevice))
        back = bytearray(n)
        ok(rt.cudaMemcpy(back, dptr, n, K.cudaMemcpyDeviceToHost))
        assert bytes(back) == src
        # device to device, then the default kind (unified addressing)
        dptr2 = ok(rt.cudaMalloc(n))
        ok(rt.cudaMemcpy(dptr2, dptr, n, K.cudaMemcpyDeviceToDevice))
        again = bytearray(n)
        ok(rt.cudaMemcpy(again, dptr2, n, K.cudaMemcpyDefault))
        assert bytes(again) == src
        ok(rt.cudaFree(dptr2))
        free, total = ok(rt.cudaMemGetInfo())
        assert 0 < free <= total
        attrs = ok(rt.cudaPointerGetAttributes(dptr))
        assert attrs.type == rt.cudaMemoryType.cudaMemoryTypeDevice and attrs.device == 0
    finally:
        ok(rt.cudaFree(dptr))


def test_pinned_host_memory():
    n = 4096
    hptr = ok(rt.cudaMallocHost(n))
    assert int(hptr) != 0
    dptr = ok(rt.cudaMalloc(n))
    try:
        ok(rt.cudaMemset(dptr, 0x5A, n))
        ok(rt.cudaMemcpy(hptr, dptr, n, K.cudaMemcpyDeviceToHost))
        import ctypes
        assert ctypes.string_at(int(hptr), n) == b"\x5a" * n
    finally:
        ok(rt.cudaFree(dptr))
        ok(rt.cudaFreeHost(hptr))


def test_streams_and_events():
    ok(rt.cudaSetDevice(0))
    stream = ok(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking))
    start = ok(rt.cudaEventCreate())
    stop = ok(rt.cudaEventCreate())
    n = 1 << 20
    dptr = ok(rt.cudaMalloc(n))
    host = bytearray(n)
    try:
        ok(rt.cudaEventRecord(start, stream))
        ok(rt.cudaMemsetAsync(dptr, 7, n, stream))
        ok(rt.cudaMemcpyAsync(host, dptr, n, K.cudaMemcpyDeviceToHost, stream))
        ok(rt.cudaEventRecord(stop, stream))
        ok(rt.cudaStreamSynchronize(stream))
        assert rt.cudaStreamQuery(stream)[0] == E.cudaSuccess
        assert rt.cudaEventQuery(stop)[0] == E.cudaSuccess
        ms = ok(rt.cudaEventElapsedTime(start, stop))
        assert ms >= 0.0
        assert bytes(host) == b"\x07" * n
        assert ok(rt.cudaStreamGetFlags(stream)) == rt.cudaStreamNonBlocking
    finally:
        ok(rt.cudaFree(dptr))
        ok(rt.cudaEventDestroy(start))
        ok(rt.cudaEventDestroy(stop))
        ok(rt.cudaStreamDestroy(stream))


def test_memcpy_batch_async():
    """cudaMemcpyBatchAsync (dsts, srcs: arrays of addresses): two device
    buffers copied into two pinned host buffers in one call, on a stream
    that is not the legacy default one."""
    import ctypes
    ok(rt.cudaSetDevice(0))
    stream = ok(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking))
    sizes = [4096, 8192]
    dev = [ok(rt.cudaMalloc(n)) for n in sizes]
    host = [ok(rt.cudaMallocHost(n)) for n in sizes]
    try:
        for i, (d, n) in enumerate(zip(dev, sizes)):
            ok(rt.cudaMemset(d, 0x30 + i, n))
        attrs = rt.cudaMemcpyAttributes()
        attrs.srcAccessOrder = rt.cudaMemcpySrcAccessOrder.cudaMemcpySrcAccessOrderStream
        ok(rt.cudaMemcpyBatchAsync([int(h) for h in host], [int(d) for d in dev], sizes,
                                   len(sizes), [attrs], [0], 1, stream))
        ok(rt.cudaStreamSynchronize(stream))
        for i, (h, n) in enumerate(zip(host, sizes)):
            assert ctypes.string_at(int(h), n) == bytes([0x30 + i]) * n
    finally:
        for d in dev:
            ok(rt.cudaFree(d))
        for h in host:
            ok(rt.cudaFreeHost(h))
        ok(rt.cudaStreamDestroy(stream))


PROPS = ("name", "totalGlobalMem", "sharedMemPerBlock", "regsPerBlock", "warpSize",
         "maxThreadsPerBlock", "maxThreadsDim", "maxGridSize", "major", "minor",
         "multiProcessorCount", "l2CacheSize", "pciBusID", "pciDeviceID", "uuid")


def test_device_properties_match_cuda_bindings():
    prop = ok(rt.cudaGetDeviceProperties(0))
    assert prop.major >= 9 and prop.multiProcessorCount > 0 and prop.totalGlobalMem > 0
    assert prop.name.rstrip(b"\0")
    sm = ok(rt.cudaDeviceGetAttribute(rt.cudaDeviceAttr.cudaDevAttrMultiProcessorCount, 0))
    assert sm == prop.multiProcessorCount
    ref = reference()
    if ref is None or not CUBIND:
        return
    theirs = ref.cudaGetDeviceProperties(0)
    assert theirs[0] == 0, theirs
    for field in PROPS:
        ours, want = getattr(prop, field), getattr(theirs[1], field)
        if field == "uuid":
            ours, want = bytes(ours.bytes), bytes(want.bytes)
        elif isinstance(want, (list, tuple)):
            ours, want = list(ours), list(want)
        elif isinstance(want, (bytes, str)):
            ours = bytes(ours).rstrip(b"\0") if isinstance(ours, (bytes, bytearray)) else ours
            want = want.encode() if isinstance(want, str) else bytes(want).rstrip(b"\0")
        assert ours == want, field


def test_errors_in_both_faces():
    err, _ = rt.cudaMalloc(1 << 62)
    assert err == E.cudaErrorMemoryAllocation
    assert rt.cudaGetLastError()[0] in (E.cudaErrorMemoryAllocation, E.cudaSuccess)
    assert rt.cudaGetLastError()[0] == E.cudaSuccess
    assert rt.cudaSetDevice(1 << 20)[0] == E.cudaErrorInvalidDevice
    if not CUBIND:
        return
    import cubind
    import cubind.cudart as cudart

    with pytest.raises(cubind.CUDARuntimeError) as info:
        cudart.cudaSetDevice(1 << 20)
    assert info.value.result is E.cudaErrorInvalidDevice
    assert isinstance(info.value, cubind.CUDAError)
    rt.cudaGetLastError()
    assert cudart.cudaGetDeviceCount() >= 1


@pytest.mark.skipif(not CUBIND, reason="cubind's loader")
def test_cubind_loads_its_own_runtime():
    loaded, path = rt._library_status()
    assert loaded and path.endswith("cubind/_cudart.so"), path


@pytest.mark.skipif(not CUBIND, reason="cubind.driver with cubind.runtime")
def test_driver_and_runtime_share_streams_and_memory():
    """A stream made by cubind.driver used by cubind.runtime and the
    reverse, in the device's primary context both APIs share."""
    import cubind.driver as d

    assert d.cuInit(0)[0] == 0
    ok(rt.cudaSetDevice(0))
    ok(rt.cudaFree(0))  # the primary context, current on this thread
    err, dstream = d.cuStreamCreate(0)
    assert err == 0
    rstream = ok(rt.cudaStreamCreate())
    n = 4096
    dptr = ok(rt.cudaMalloc(n))
    host = bytearray(n)
    try:
        ok(rt.cudaMemsetAsync(dptr, 9, n, dstream))
        ok(rt.cudaStreamSynchronize(dstream))
        assert d.cuMemcpyDtoHAsync(host, int(dptr), n, rstream)[0] == 0
        assert d.cuStreamSynchronize(rstream)[0] == 0
        assert bytes(host) == b"\x09" * n
    finally:
        ok(rt.cudaFree(dptr))
        ok(rt.cudaStreamDestroy(rstream))
        assert d.cuStreamDestroy(dstream)[0] == 0


@pytest.mark.skipif(not CUBIND, reason="cubind.driver with cubind.runtime")
def test_one_set_of_handles_with_the_driver():
    """Issue 45 item 4: each module's handles given to the other's
    functions, results of the calling module's class, equal across."""
    import cubind.driver as d

    assert d.cuInit(0)[0] == 0
    ok(rt.cudaSetDevice(0))
    ok(rt.cudaFree(0))
    err, graph = d.cuGraphCreate(0)
    assert err == 0
    node = ok(rt.cudaGraphAddEmptyNode(graph, [], 0))
    assert type(node) is rt.cudaGraphNode_t and isinstance(node, d.CUgraphNode)
    err, node2 = d.cuGraphAddEmptyNode(graph, [node], 1)
    assert err == 0 and type(node2) is d.CUgraphNode
    err, nodes, n = d.cuGraphGetNodes(graph, 2)
    assert err == 0 and n == 2 and set(map(int, nodes)) == {int(node), int(node2)}
    assert node2 in [rt.cudaGraphNode_t(int(node2))]
    gexec = ok(rt.cudaGraphInstantiate(graph, 0))
    assert d.cuGraphExecDestroy(gexec)[0] == 0
    ok(rt.cudaGraphDestroy(graph))
    event = ok(rt.cudaEventCreate())
    assert d.cuEventDestroy(event)[0] == 0


def _wait(done, what):
    """Waits up to 10 s for done() (callbacks run on the driver's thread)."""
    import time

    deadline = time.monotonic() + 10
    while not done() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert done(), what


@pytest.mark.skipif(not CUBIND, reason="cubind's Python callables")
def test_callbacks_take_python_callables():
    """Issue 45 item 5: cudaLaunchHostFunc, cudaStreamAddCallback and
    cudaUserObjectCreate run Python callables, as cubind.driver's do."""
    ok(rt.cudaSetDevice(0))
    stream = ok(rt.cudaStreamCreate())
    seen = []
    try:
        ok(rt.cudaLaunchHostFunc(stream, lambda data: seen.append(("host", data)), "h"))
        ok(rt.cudaStreamAddCallback(stream, lambda s, status, data: seen.append(
            ("stream", type(s).__name__, int(s) == int(stream), status, data)), "s", 0))
        ok(rt.cudaStreamSynchronize(stream))
        _wait(lambda: len(seen) == 2, seen)
        assert seen[0] == ("host", "h")
        assert seen[1] == ("stream", "cudaStream_t", True, E.cudaSuccess, "s")
        destroyed = []
        obj = ok(rt.cudaUserObjectCreate(destroyed, lambda data: data.append(1), 1,
                                         rt.cudaUserObjectFlags.cudaUserObjectNoDestructorSync))
        ok(rt.cudaUserObjectRelease(obj, 1))
        _wait(lambda: destroyed, "the user object's destructor")
    finally:
        ok(rt.cudaStreamDestroy(stream))


def test_ctypes_function_pointer_in_a_handle():
    """cuda-python's test_cudart_func_callback's form: a ctypes function's
    address read through the class's _ptr."""
    import ctypes

    ok(rt.cudaSetDevice(0))
    seen = []
    proto = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
    c_fn = proto(lambda data: seen.append(data))
    fn = rt.cudaHostFn_t(_ptr=ctypes.addressof(c_fn))
    stream = ok(rt.cudaStreamCreate())
    try:
        ok(rt.cudaLaunchHostFunc(stream, fn, 1234))
        ok(rt.cudaStreamSynchronize(stream))
        _wait(lambda: seen, "the ctypes host function")
        assert seen == [1234]
    finally:
        ok(rt.cudaStreamDestroy(stream))


@pytest.mark.skipif(not CUBIND, reason="cubind's registry")
def test_host_node_function_lives_with_its_graph():
    """A host node's ctypes function, given in a cudaHostNodeParams that is
    dropped, runs on each launch: the registry keeps the struct (and the
    function it holds) with the graph (the runtime's registry rules)."""
    import ctypes

    ok(rt.cudaSetDevice(0))
    seen = []
    c_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: seen.append(data))
    graph = ok(rt.cudaGraphCreate(0))
    params = rt.cudaHostNodeParams()
    params.fn = c_fn
    params.userData = 77
    ok(rt.cudaGraphAddHostNode(graph, [], 0, params))
    del params, c_fn
    import gc

    gc.collect()
    gexec = ok(rt.cudaGraphInstantiate(graph, 0))
    stream = ok(rt.cudaStreamCreate())
    try:
        for _ in range(2):
            ok(rt.cudaGraphLaunch(gexec, stream))
        ok(rt.cudaStreamSynchronize(stream))
        _wait(lambda: len(seen) == 2, seen)
        assert seen == [77, 77]
    finally:
        ok(rt.cudaGraphExecDestroy(gexec))
        ok(rt.cudaGraphDestroy(graph))
        ok(rt.cudaStreamDestroy(stream))


@pytest.mark.skipif(not CUBIND, reason="cubind.runtime's typed packer")
def test_cuda_launch_kernel_packs_as_cu_launch_kernel(load_module):
    """cudaLaunchKernel's args in cuLaunchKernel's forms, the kernel a
    cubind.driver CUfunction or its address, plain values typed by the
    kernel's parameters; streams of either module."""
    import ctypes
    import struct

    import cubind.driver as d

    mod = load_module("packer_kernels")
    f = d.cuModuleGetFunction(mod, b"echo_i32_f32_ptr")[1]
    one = rt.dim3(x=1, y=1, z=1)
    o = ok(rt.cudaMalloc(24))
    want = [(-7) & 0xFFFFFFFF, struct.unpack("<I", struct.pack("<f", 1.5))[0], int(o)]
    try:
        for func in (f, int(f)):
            for args, stream in (([-7, 1.5, o], d.CUstream(0)),
                                 (((-7, 1.5, int(o)), (ctypes.c_int, ctypes.c_float, ctypes.c_void_p)),
                                  rt.cudaStream_t(0))):
                ok(rt.cudaMemset(o, 0, 24))
                ok(rt.cudaLaunchKernel(func, one, one, args, 0, stream))
                ok(rt.cudaDeviceSynchronize())
                back = bytearray(24)
                ok(rt.cudaMemcpy(back, o, 24, K.cudaMemcpyDeviceToHost))
                assert list(struct.unpack("<3Q", bytes(back))) == want, (func, args)
    finally:
        ok(rt.cudaFree(o))


@pytest.mark.skipif(not CUBIND, reason="cubind.driver beside cubind.runtime")
def test_driver_entry_points_are_the_drivers():
    """cudaGetDriverEntryPoint(ByVersion) answers an int address, as
    cubind.driver's cuGetProcAddress does: the same function, callable
    through ctypes."""
    import ctypes

    import cubind.driver as d

    assert d.cuInit(0)[0] == 0
    version = ok(rt.cudaDriverGetVersion())
    flags = rt.cudaGetDriverEntryPointFlags.cudaEnableDefault
    addr, status = ok(rt.cudaGetDriverEntryPointByVersion(b"cuDriverGetVersion", version, flags))
    assert status == rt.cudaDriverEntryPointQueryResult.cudaDriverEntryPointSuccess
    err, daddr, dstatus = d.cuGetProcAddress(b"cuDriverGetVersion", version, 0)
    assert err == 0 and type(addr) is type(daddr) and addr == daddr
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(addr)
    out = ctypes.c_int()
    assert fn(ctypes.byref(out)) == 0 and out.value == version
    addr2, _ = ok(rt.cudaGetDriverEntryPoint("cuDriverGetVersion", flags))
    assert addr2 == addr
