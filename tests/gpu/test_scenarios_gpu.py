# SPDX-License-Identifier: Apache-2.0
"""Issue-3 scenarios on a real GPU: context, device attributes, memory (copies,
memsets, pinned async copies, memory pools), streams, events with timing,
modules built from PTX, kernels, pointer attributes, occupancy, graphs
(stream capture and explicit nodes) and host functions.

One file, three faces, selected by CUBIND_GPU_IMPL:
  cuda.bindings  NVIDIA's cuda.bindings.driver (status tuples)
  cubind         cubind.driver, the drop-in (status tuples)     [default]
  cubind.cu      cubind.cu, the raising face (outputs, CUDAError)
The scenarios are written once against `call(name, *args)`, which checks the
status of a tuple face and returns the outputs (None, one value, or a tuple),
or calls the raising face directly. Passing with cuda.bindings and with both
cubind faces is the evidence for the drop-in claim. A few checks are
cubind-only (plain kernel values, Python callables as host functions, host
functions replayed by a graph: cuda-python #790) and are skipped elsewhere.

Needs nvcc (PATH or /usr/local/cuda/bin) to build tests/gpu/scenario_kernels.cu
to PTX; the whole file is skipped without it. Never run in CI.

CUBIND_SCENARIO_RECORD=path.json writes the type and repr of interesting
outputs, to compare what each face returns.
"""
import ast
import ctypes
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from gpu_common import IMPL, nvcc

if not nvcc():
    pytest.skip("nvcc not found: the scenarios need PTX built from scenario_kernels.cu",
                allow_module_level=True)

if IMPL == "cuda.bindings":
    api = importlib.import_module("cuda.bindings.driver")
    CUDAError = None
elif IMPL == "cubind":
    api = importlib.import_module("cubind.driver")
    CUDAError = importlib.import_module("cubind").CUDAError
elif IMPL == "cubind.cu":
    api = importlib.import_module("cubind.cu")
    CUDAError = importlib.import_module("cubind").CUDAError
else:
    raise RuntimeError(f"CUBIND_GPU_IMPL={IMPL!r}: expected cuda.bindings, cubind or cubind.cu")

RAISING = IMPL == "cubind.cu"
CUBIND = IMPL in ("cubind", "cubind.cu")
SUCCESS = api.CUresult.CUDA_SUCCESS

cubind_only = pytest.mark.skipif(not CUBIND, reason="cubind-only feature")

HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
STREAMCB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)


# ---- the adapter: one scenario, three faces -------------------------------------

def call(name, *args):
    """Calls api.<name>; returns its outputs: None, one value, or a tuple."""
    fn = getattr(api, name)
    if RAISING:
        return fn(*args)
    result = fn(*args)
    if not isinstance(result, tuple):
        result = (result,)
    assert result[0] == SUCCESS, f"{name}{args!r} -> {result!r}"
    outs = result[1:]
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


def expect_error(member, name, *args):
    """The call fails with CUresult `member`: a status on the tuple faces, a
    CUDAError carrying the member, its name and the driver's message on cu."""
    if RAISING:
        with pytest.raises(CUDAError) as info:
            getattr(api, name)(*args)
        err = info.value
        assert err.result == member and err.result is member, (err.result, member)
        assert isinstance(err.result, api.CUresult)
        assert err.name == member.name
        assert isinstance(err.message, str) and err.message
        return err
    result = getattr(api, name)(*args)
    if not isinstance(result, tuple):
        result = (result,)
    assert result[0] == member, (name, result)
    assert result[0].name == member.name
    return result


RECORD = {}


def record(key, value):
    RECORD[key] = {"type": f"{type(value).__module__}.{type(value).__qualname__}",
                   "repr": repr(value)[:200]}


@pytest.fixture(scope="session", autouse=True)
def _dump_record():
    yield
    path = os.environ.get("CUBIND_SCENARIO_RECORD")
    if path:
        with open(path, "w") as f:
            json.dump({"impl": IMPL, "values": RECORD}, f, indent=1, sort_keys=True)


def typename(value):
    return type(value).__name__


# ---- fixtures -----------------------------------------------------------------------
# dev and ctx replace conftest.py's: session-scoped, through call() on the face
# under test (cubind.cu raises). ptx_of (the nvcc build) is conftest.py's.

@pytest.fixture(scope="session")
def dev():
    assert call("cuInit", 0) is None
    return call("cuDeviceGet", 0)


@pytest.fixture(scope="session")
def ctx(dev):
    pctx = call("cuDevicePrimaryCtxRetain", dev)
    assert call("cuCtxSetCurrent", pctx) is None
    yield pctx
    call("cuCtxSetCurrent", pctx)
    call("cuDevicePrimaryCtxRelease", dev)


@pytest.fixture(scope="session")
def mod(ctx, ptx_of):
    m = call("cuModuleLoadData", ptx_of("scenario_kernels"))
    yield m
    call("cuModuleUnload", m)


@pytest.fixture
def stream(ctx):
    s = call("cuStreamCreate", 0)
    yield s
    call("cuStreamSynchronize", s)
    call("cuStreamDestroy", s)


class Dev:
    """A device allocation freed at the end of the test."""

    def __init__(self, nbytes):
        self.n = nbytes
        self.ptr = call("cuMemAlloc", nbytes)

    def read(self, np, dtype):
        host = np.empty(self.n // np.dtype(dtype).itemsize, dtype=dtype)
        call("cuCtxSynchronize")
        call("cuMemcpyDtoH", host, self.ptr, self.n)
        return host


@pytest.fixture
def devmem(ctx):
    made = []

    def alloc(nbytes):
        d = Dev(nbytes)
        made.append(d)
        return d

    yield alloc
    call("cuCtxSynchronize")
    for d in made:
        assert call("cuMemFree", d.ptr) is None


@pytest.fixture(scope="session")
def np():
    return pytest.importorskip("numpy")


def add_one_args(buf, n):
    """The ((values), (types)) form, accepted by both implementations."""
    return ((buf, n), (None, ctypes.c_int))


def launch_add_one(f, buf, n, s=0):
    call("cuLaunchKernel", f, (n + 255) // 256, 1, 1, 256, 1, 1, 0, s, add_one_args(buf, n), 0)


def pointer_array(values):
    """void *[] pointing at ctypes values: the C form of kernelParams."""
    arr = (ctypes.c_void_p * len(values))()
    for i, v in enumerate(values):
        arr[i] = ctypes.addressof(v)
    return arr


# ---- context -----------------------------------------------------------------------

def test_context(dev, ctx):
    assert call("cuCtxGetCurrent") == ctx
    got = call("cuCtxGetDevice")
    record("cuCtxGetDevice", got)
    assert typename(got) == "CUdevice"
    assert int(got) == int(dev) == 0
    assert call("cuCtxSynchronize") is None
    flags, active = call("cuDevicePrimaryCtxGetState", dev)
    assert active == 1

    new = call("cuCtxCreate", None, 0, dev)
    record("cuCtxCreate", new)
    assert typename(new) == "CUcontext" and int(new) != 0 and new != ctx
    assert call("cuCtxGetCurrent") == new  # cuCtxCreate pushes the new context
    assert int(call("cuCtxGetDevice")) == 0
    popped = call("cuCtxPopCurrent")
    assert popped == new
    assert call("cuCtxGetCurrent") == ctx
    assert call("cuCtxPushCurrent", new) is None
    assert call("cuCtxGetCurrent") == new
    assert call("cuCtxSynchronize") is None
    assert call("cuCtxPopCurrent") == new
    assert call("cuCtxDestroy", new) is None
    assert call("cuCtxGetCurrent") == ctx


def test_errors(ctx, mod):
    count = call("cuDeviceGetCount")
    expect_error(api.CUresult.CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", count + 5)
    expect_error(api.CUresult.CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction", mod, b"no_such_kernel")
    if RAISING:
        err = expect_error(api.CUresult.CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", count + 5)
        record("CUDAError", err)
        record("CUDAError.message", err.message)


def test_error_name_and_string(ctx):
    bad = api.CUresult.CUDA_ERROR_INVALID_DEVICE
    name = call("cuGetErrorName", bad)
    text = call("cuGetErrorString", bad)
    record("cuGetErrorName", name)
    record("cuGetErrorString", text)
    assert name == b"CUDA_ERROR_INVALID_DEVICE"
    assert type(text) is bytes and b"device" in text.lower()
    assert call("cuGetErrorName", api.CUresult.CUDA_SUCCESS) == b"CUDA_SUCCESS"


COUNT_PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))


def test_get_proc_address(ctx):
    """The pfn is the driver's entry point: called through ctypes it answers
    as the binding's own cuDeviceGetCount."""
    pfn, status = call("cuGetProcAddress", b"cuDeviceGetCount", 12000, 0)
    record("cuGetProcAddress", (pfn, status))
    assert status == api.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS
    n = ctypes.c_int(-1)
    assert COUNT_PROTO(int(pfn))(ctypes.byref(n)) == 0
    assert n.value == call("cuDeviceGetCount")
    # a name the driver does not know: success, a NULL pfn and the reason
    pfn, status = call("cuGetProcAddress", b"cuNoSuchFunction", 12000, 0)
    assert int(pfn) == 0
    assert status == api.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND


def test_module_load_data_ex_with_jit_options(ctx, ptx_of):
    J = api.CUjit_option
    m = call("cuModuleLoadDataEx", ptx_of("scenario_kernels"), 2,
             [J.CU_JIT_OPTIMIZATION_LEVEL, J.CU_JIT_MAX_REGISTERS], [4, 32])
    try:
        f = call("cuModuleGetFunction", m, b"axpy")
        regs = call("cuFuncGetAttribute", api.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, f)
        assert 0 < regs <= 32
    finally:
        call("cuModuleUnload", m)


# ---- device attributes ---------------------------------------------------------------

def test_device_attributes(dev):
    A = api.CUdevice_attribute
    major = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    minor = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    sms = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
    warp = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev)
    tpb = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev)
    pools = call("cuDeviceGetAttribute", A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev)
    record("cuDeviceGetAttribute", major)
    assert (major, minor) == (9, 0)
    assert sms >= 100 and warp == 32 and tpb == 1024 and pools == 1
    assert all(type(v) is int for v in (major, minor, sms, warp, tpb, pools))


def smi_gpus():
    """nvidia-smi's view of the machine's GPUs, {uuid: (name, MiB)}: the
    driver's own tool, independent of either binding; {} without it."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=uuid,name,memory.total",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    rows = (line.split(", ") for line in out.splitlines() if line.count(", ") == 2)
    return {uuid.strip(): (name.strip(), int(mib)) for uuid, name, mib in rows}


def smi_row(dev):
    """nvidia-smi's row of `dev`, found by the UUID the binding reads."""
    raw = call("cuDeviceGetUuid", dev).bytes.hex()
    uuid = "GPU-%s-%s-%s-%s-%s" % (raw[:8], raw[8:12], raw[12:16], raw[16:20], raw[20:])
    gpus = smi_gpus()
    if not gpus:
        pytest.skip("no nvidia-smi to compare with")
    assert uuid in gpus, (uuid, gpus)
    return gpus[uuid]


def test_device_name(dev):
    # cuda.bindings returns the whole `length`-byte buffer, NUL-padded
    name = call("cuDeviceGetName", 256, dev)
    record("cuDeviceGetName", name)
    assert isinstance(name, bytes)
    assert name.split(b"\0")[0].decode() == smi_row(dev)[0]


def test_device_total_mem_and_uuid(dev):
    total = call("cuDeviceTotalMem", dev)
    record("cuDeviceTotalMem", total)
    assert type(total) is int and total > 2**30
    # nvidia-smi reports the whole memory in MiB, of which the driver keeps
    # a little for itself (H100 80GB: 81079 of 81559 MiB)
    smi_mib = smi_row(dev)[1]
    assert 0.9 * smi_mib <= total / 2**20 <= smi_mib, (total, smi_mib)

    uuid = call("cuDeviceGetUuid", dev)
    record("cuDeviceGetUuid", uuid)
    record("CUuuid.bytes", uuid.bytes)
    assert isinstance(uuid, api.CUuuid)
    assert isinstance(uuid.bytes, bytes) and len(uuid.bytes) == 16
    assert uuid.bytes != bytes(16)
    assert call("cuDeviceGetUuid", dev).bytes == uuid.bytes


# ---- memory --------------------------------------------------------------------------

def test_memcpy_host_forms(ctx, devmem, np):
    n = 4096
    a, b = devmem(n), devmem(n)
    pattern = bytes(i * 7 % 256 for i in range(n))

    assert call("cuMemcpyHtoD", a.ptr, pattern, n) is None           # bytes
    back = bytearray(n)
    assert call("cuMemcpyDtoH", back, a.ptr, n) is None               # bytearray
    assert bytes(back) == pattern

    rev = bytearray(pattern[::-1])
    call("cuMemcpyHtoD", a.ptr, rev, n)                               # bytearray in
    arr = np.zeros(n, dtype=np.uint8)
    call("cuMemcpyDtoH", arr, a.ptr, n)                               # numpy out
    assert arr.tobytes() == bytes(rev)

    src = np.arange(n // 4, dtype=np.int32) * 3
    call("cuMemcpyHtoD", a.ptr, src, n)                               # numpy in
    assert call("cuMemcpyDtoD", b.ptr, a.ptr, n) is None              # device to device
    assert (b.read(np, np.int32) == src).all()

    cbuf = (ctypes.c_ubyte * n)()
    call("cuMemcpyDtoH", ctypes.addressof(cbuf), b.ptr, n)            # int address
    assert bytes(cbuf) == src.tobytes()


def test_memset(ctx, devmem, np):
    n = 1 << 16
    d = devmem(n)
    assert call("cuMemsetD8", d.ptr, 0xAB, n) is None
    assert (d.read(np, np.uint8) == 0xAB).all()
    assert call("cuMemsetD32", d.ptr, 0xDEADBEEF, n // 4) is None
    assert (d.read(np, np.uint32) == 0xDEADBEEF).all()


def test_async_copies_pinned(ctx, devmem, stream):
    n = 1 << 20
    d = devmem(n)
    pin_in = call("cuMemAllocHost", n)
    pin_out = call("cuMemHostAlloc", n, api.CU_MEMHOSTALLOC_PORTABLE)
    record("cuMemAllocHost", pin_in)
    record("cuMemHostAlloc", pin_out)
    assert type(pin_in) is int and type(pin_out) is int and pin_in and pin_out
    try:
        host_in = (ctypes.c_ubyte * n).from_address(pin_in)
        host_out = (ctypes.c_ubyte * n).from_address(pin_out)
        for i in range(0, n, 4099):
            host_in[i] = (i // 4099) % 251 + 1
        assert call("cuMemcpyHtoDAsync", d.ptr, pin_in, n, stream) is None
        assert call("cuMemsetD8Async", d.ptr, 0x5A, 16, stream) is None
        assert call("cuMemcpyDtoHAsync", pin_out, d.ptr, n, stream) is None
        assert call("cuStreamSynchronize", stream) is None
        expected = bytearray(bytes(host_in))
        expected[:16] = b"\x5a" * 16
        assert bytes(host_out) == bytes(expected)
    finally:
        assert call("cuMemFreeHost", pin_in) is None
        assert call("cuMemFreeHost", pin_out) is None


# What cuda.bindings 13.3.1 returns for CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
# (observed on the H200); it also takes a cuuint64_t to set it.
MEMPOOL_THRESHOLD_TYPE = "cuuint64_t"


def test_memory_pool_attributes(dev, ctx):
    P = api.CUmemPool_attribute
    pool = call("cuDeviceGetDefaultMemPool", dev)
    record("cuDeviceGetDefaultMemPool", pool)
    assert typename(pool) == "CUmemoryPool" and int(pool) != 0
    before = call("cuMemPoolGetAttribute", pool, P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    record("cuMemPoolGetAttribute.RELEASE_THRESHOLD", before)
    follow = call("cuMemPoolGetAttribute", pool, P.CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)
    record("cuMemPoolGetAttribute.REUSE_FOLLOW_EVENT_DEPENDENCIES", follow)
    assert int(follow) in (0, 1)
    # cuda.bindings takes (and returns) the threshold as a cuuint64_t object
    assert call("cuMemPoolSetAttribute", pool, P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                api.cuuint64_t(64 << 20)) is None
    try:
        after = call("cuMemPoolGetAttribute", pool, P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        assert int(after) == 64 << 20
        assert typename(after) == typename(before) == MEMPOOL_THRESHOLD_TYPE
    finally:
        call("cuMemPoolSetAttribute", pool, P.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
             api.cuuint64_t(int(before)))



def test_memory_pool_alloc(dev, ctx, stream, np):
    pool = call("cuDeviceGetDefaultMemPool", dev)
    n = 1 << 20
    p = call("cuMemAllocFromPoolAsync", n, pool, stream)
    q = call("cuMemAllocAsync", n, stream)
    record("cuMemAllocAsync", q)
    assert typename(p) == typename(q) == "CUdeviceptr" and int(p) and int(q) and p != q
    call("cuMemsetD32Async", p, 17, n // 4, stream)
    assert call("cuMemcpyDtoDAsync", q, p, n, stream) is None
    host = np.zeros(n // 4, dtype=np.uint32)
    call("cuMemcpyDtoHAsync", host, q, n, stream)
    assert call("cuMemFreeAsync", p, stream) is None
    assert call("cuMemFreeAsync", q, stream) is None
    call("cuStreamSynchronize", stream)
    assert (host == 17).all()
    used = call("cuMemPoolGetAttribute", pool, api.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    assert int(used) == 0


# ---- streams and events -----------------------------------------------------------------

def test_streams_priority_and_wait(ctx, devmem, np):
    least, greatest = call("cuCtxGetStreamPriorityRange")
    assert greatest <= least
    flags = int(api.CUstream_flags.CU_STREAM_NON_BLOCKING)
    hi = call("cuStreamCreateWithPriority", flags, greatest)
    lo = call("cuStreamCreateWithPriority", flags, least)
    record("cuStreamCreateWithPriority", hi)
    assert typename(hi) == "CUstream"
    assert call("cuStreamGetPriority", hi) == greatest
    assert call("cuStreamGetPriority", lo) == least
    assert call("cuStreamGetFlags", hi) == flags
    ev = call("cuEventCreate", int(api.CUevent_flags.CU_EVENT_DISABLE_TIMING))
    n = 32 << 20
    d = devmem(n)
    host = np.zeros(n // 4, dtype=np.uint32)
    try:
        call("cuMemsetD32Async", d.ptr, 3, n // 4, lo)
        assert call("cuEventRecord", ev, lo) is None
        assert call("cuStreamWaitEvent", hi, ev, 0) is None
        call("cuMemcpyDtoHAsync", host, d.ptr, n, hi)
        assert call("cuStreamSynchronize", hi) is None
        assert call("cuStreamQuery", hi) is None
        assert call("cuEventQuery", ev) is None
        assert (host == 3).all()
    finally:
        call("cuEventDestroy", ev)
        call("cuStreamDestroy", hi)
        call("cuStreamDestroy", lo)


def test_event_timing(ctx, devmem, stream):
    start = call("cuEventCreate", 0)
    end = call("cuEventCreate", 0)
    n = 256 << 20
    d = devmem(n)
    call("cuEventRecord", start, stream)
    for v in range(4):
        call("cuMemsetD32Async", d.ptr, v, n // 4, stream)
    call("cuEventRecord", end, stream)
    assert call("cuEventSynchronize", end) is None
    ms = call("cuEventElapsedTime", start, end)
    record("cuEventElapsedTime", ms)
    assert type(ms) is float and ms > 0
    call("cuEventDestroy", start)
    call("cuEventDestroy", end)


# ---- modules, functions, kernels ------------------------------------------------------

def test_module_function_and_global(mod, devmem, np):
    f = call("cuModuleGetFunction", mod, b"axpy")
    record("cuModuleGetFunction", f)
    assert typename(f) == "CUfunction" and int(f) != 0
    F = api.CUfunction_attribute
    maxt = call("cuFuncGetAttribute", F.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)
    regs = call("cuFuncGetAttribute", F.CU_FUNC_ATTRIBUTE_NUM_REGS, f)
    ptxv = call("cuFuncGetAttribute", F.CU_FUNC_ATTRIBUTE_PTX_VERSION, f)
    record("cuFuncGetAttribute", maxt)
    assert type(maxt) is int and 0 < maxt <= 1024
    assert type(regs) is int and regs > 0
    assert ptxv >= 90

    dptr, size = call("cuModuleGetGlobal", mod, b"g_value")
    record("cuModuleGetGlobal.dptr", dptr)
    record("cuModuleGetGlobal.numbytes", size)
    assert typename(dptr) == "CUdeviceptr" and size == 4 and type(size) is int
    value = np.zeros(1, dtype=np.int32)
    call("cuMemcpyDtoH", value, dptr, 4)
    assert value[0] == 42
    g = call("cuModuleGetFunction", mod, b"set_global")
    call("cuLaunchKernel", g, 1, 1, 1, 1, 1, 1, 0, 0, ((-9,), (ctypes.c_int,)), 0)
    call("cuCtxSynchronize")
    call("cuMemcpyDtoH", value, dptr, 4)
    assert value[0] == -9
    call("cuMemsetD32", dptr, 42, 1)


def test_launch_axpy(mod, devmem, np):
    f = call("cuModuleGetFunction", mod, b"axpy")
    n = 10000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, dtype=np.float32)
    dx, dy = devmem(4 * n), devmem(4 * n)
    call("cuMemcpyHtoD", dx.ptr, x, 4 * n)
    call("cuMemcpyHtoD", dy.ptr, y, 4 * n)
    grid = (n + 127) // 128
    params = ((2.0, dx.ptr, dy.ptr, n), (ctypes.c_float, None, None, ctypes.c_int))
    assert call("cuLaunchKernel", f, grid, 1, 1, 128, 1, 1, 0, 0, params, 0) is None
    expected = 2.0 * x + y
    assert (dy.read(np, np.float32) == expected).all()

    # the C form: void *[] of addresses
    vals = [ctypes.c_float(-1.0), ctypes.c_void_p(int(dx.ptr)), ctypes.c_void_p(int(dy.ptr)),
            ctypes.c_int(n)]
    arr = pointer_array(vals)
    call("cuLaunchKernel", f, grid, 1, 1, 128, 1, 1, 0, 0, ctypes.addressof(arr), 0)
    expected = expected - x
    assert (dy.read(np, np.float32) == expected).all()

    if CUBIND:  # plain values, typed by the kernel's parameter layout
        call("cuLaunchKernel", f, grid, 1, 1, 128, 1, 1, 0, 0, (3.0, dx.ptr, dy.ptr, n), 0)
        expected = expected + 3.0 * x
        assert (dy.read(np, np.float32) == expected).all()


# ---- pointer attributes --------------------------------------------------------------------

# What cuda.bindings 13.3.1 returns for each attribute (observed on the H200,
# results/gpu/scenarios-h200.log); cubind must return the same types.
POINTER_ATTRIBUTE_TYPES = {
    "CU_POINTER_ATTRIBUTE_CONTEXT": "CUcontext",
    "CU_POINTER_ATTRIBUTE_MEMORY_TYPE": "int",
    "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL": "int",
    "CU_POINTER_ATTRIBUTE_RANGE_SIZE": "int",
    "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR": "CUdeviceptr",
}


def test_pointer_attributes(ctx, devmem):
    n = 2 << 20
    d = devmem(n)
    got = {}
    for attr in POINTER_ATTRIBUTE_TYPES:
        value = call("cuPointerGetAttribute", getattr(api.CUpointer_attribute, attr), d.ptr)
        record("cuPointerGetAttribute." + attr, value)
        got[attr] = value
    assert {k: typename(v) for k, v in got.items()} == POINTER_ATTRIBUTE_TYPES
    assert got["CU_POINTER_ATTRIBUTE_CONTEXT"] == ctx
    assert got["CU_POINTER_ATTRIBUTE_MEMORY_TYPE"] == api.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert got["CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL"] == 0
    assert got["CU_POINTER_ATTRIBUTE_RANGE_SIZE"] == n
    assert int(got["CU_POINTER_ATTRIBUTE_RANGE_START_ADDR"]) == int(d.ptr)


# ---- occupancy -----------------------------------------------------------------------------

def test_occupancy(mod):
    f = call("cuModuleGetFunction", mod, b"axpy")
    blocks = call("cuOccupancyMaxActiveBlocksPerMultiprocessor", f, 256, 0)
    record("cuOccupancyMaxActiveBlocksPerMultiprocessor", blocks)
    assert type(blocks) is int and 1 <= blocks <= 32
    min_grid, block = call("cuOccupancyMaxPotentialBlockSize", f, 0, 0, 0)
    assert type(min_grid) is int and type(block) is int
    assert min_grid >= 1 and 32 <= block <= 1024 and block % 32 == 0
    min_grid2, block2 = call("cuOccupancyMaxPotentialBlockSize", f, None, 0, 256)
    assert min_grid2 >= 1 and 32 <= block2 <= 256


B2D = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)


@cubind_only
def test_occupancy_python_callable(mod):
    """blockSizeToDynamicSMemSize as a Python callable: the driver calls it
    on this thread during the call; the answer is the one the same function
    gives as a C function pointer; its exceptions propagate."""
    f = call("cuModuleGetFunction", mod, b"axpy")
    caller = threading.get_ident()
    seen = []

    def smem(block):
        seen.append((block, threading.get_ident()))
        return 96 * block  # 96 bytes of dynamic shared memory per thread

    got = call("cuOccupancyMaxPotentialBlockSize", f, smem, 0, 0)
    record("cuOccupancyMaxPotentialBlockSize.callable", got)
    assert seen, "the driver never called the callable"
    assert {t for _, t in seen} == {caller}
    assert all(1 <= b <= 1024 for b, _ in seen), seen
    min_grid, block = got
    assert type(min_grid) is int and type(block) is int and 1 <= block <= 1024
    cfn = B2D(lambda b: 96 * b)
    address = ctypes.cast(cfn, ctypes.c_void_p).value
    assert call("cuOccupancyMaxPotentialBlockSize", f, address, 0, 0) == got
    assert call("cuOccupancyMaxPotentialBlockSize", f, cfn, 0, 0) == got
    # no dynamic shared memory: the same as a constant 0
    assert (call("cuOccupancyMaxPotentialBlockSize", f, lambda b: 0, 0, 256)
            == call("cuOccupancyMaxPotentialBlockSize", f, None, 0, 256))
    flags = api.CUoccupancy_flags.CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE
    got_flags = call("cuOccupancyMaxPotentialBlockSizeWithFlags", f, smem, 0, 0, flags)
    assert got_flags == call("cuOccupancyMaxPotentialBlockSizeWithFlags", f, address, 0, 0, flags)

    class Failed(Exception):
        pass

    def fails(block):
        raise Failed(block)

    with pytest.raises(Failed):
        call("cuOccupancyMaxPotentialBlockSize", f, fails, 0, 0)
    with pytest.raises(TypeError, match="blockSizeToDynamicSMemSize"):
        call("cuOccupancyMaxPotentialBlockSize", f, lambda b: "many", 0, 0)
    with pytest.raises(ValueError, match="blockSizeToDynamicSMemSize"):
        call("cuOccupancyMaxPotentialBlockSizeWithFlags", f, lambda b: -1, 0, 0, flags)
    assert call("cuOccupancyMaxPotentialBlockSize", f, smem, 0, 0) == got  # still works


@cubind_only
def test_occupancy_callables_on_threads(mod):
    """Eight threads at once, each with its own callable, each get the
    answer their function gives alone."""
    f = call("cuModuleGetFunction", mod, b"axpy")
    per_thread = [lambda b, i=i: 16 * (i + 1) * b for i in range(8)]
    want = [call("cuOccupancyMaxPotentialBlockSize", f, B2D(fn), 0, 0) for fn in per_thread]
    ctx = call("cuCtxGetCurrent")
    barrier = threading.Barrier(8)
    got, errors = [None] * 8, []

    def body(i):
        try:
            call("cuCtxSetCurrent", ctx)
            barrier.wait()
            got[i] = {call("cuOccupancyMaxPotentialBlockSize", f, per_thread[i], 0, 0)
                      for _ in range(20)}
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert errors == []
    assert got == [{w} for w in want]


# ---- cooperative multi-device launch (a list of launch parameters) ---------------------------

def status_of(name, *args):
    """The CUresult of a call, on every face (cubind.cu: from its CUDAError)."""
    if RAISING:
        try:
            assert getattr(api, name)(*args) is None
        except CUDAError as e:
            return e.result
        return SUCCESS
    result = getattr(api, name)(*args)
    return result[0] if isinstance(result, tuple) else result


def cuda_bindings_status(key):
    """What this file's own test recorded under `key` when run against
    cuda.bindings in a child process; None when cuda.bindings is absent."""
    try:
        if importlib.util.find_spec("cuda.bindings.driver") is None:
            return None
    except ModuleNotFoundError:
        return None
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"coop-{os.getpid()}.json")
    env = dict(os.environ, CUBIND_GPU_IMPL="cuda.bindings", CUBIND_SCENARIO_RECORD=path)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
                          "-k", "test_cooperative_multi_device_one_entry"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    with open(path) as fh:
        values = json.load(fh)["values"]
    os.unlink(path)
    return ast.literal_eval(values[key]["repr"])


def test_cooperative_multi_device_one_entry(dev, mod, devmem, stream, np):
    """cuLaunchCooperativeKernelMultiDevice takes a list of launch
    parameters (one per device; this machine has one GPU). Deprecated: where
    the driver refuses it, cubind must get the status cuda.bindings gets."""
    f = call("cuModuleGetFunction", mod, b"add_one")
    n = 1024
    a = devmem(4 * n)
    call("cuMemsetD32", a.ptr, 5, n)
    vals = [ctypes.c_void_p(int(a.ptr)), ctypes.c_int(n)]
    arr = pointer_array(vals)
    p = api.CUDA_LAUNCH_PARAMS()
    p.function = f
    p.gridDimX, p.gridDimY, p.gridDimZ = n // 256, 1, 1
    p.blockDimX, p.blockDimY, p.blockDimZ = 256, 1, 1
    p.sharedMemBytes = 0
    p.hStream = stream
    p.kernelParams = ctypes.addressof(arr)
    attr = api.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH
    supported = call("cuDeviceGetAttribute", attr, dev)
    status = status_of("cuLaunchCooperativeKernelMultiDevice", [p], 1, 0)
    record("cuLaunchCooperativeKernelMultiDevice.status", status.name)
    record("CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH", supported)
    if status == SUCCESS:
        call("cuStreamSynchronize", stream)
        assert (a.read(np, np.int32) == 6).all()
        return
    if CUBIND:  # cuda.bindings' status is the reference
        theirs = cuda_bindings_status("cuLaunchCooperativeKernelMultiDevice.status")
        if theirs is None:
            assert not supported, f"the device supports it, yet {status.name}"
        else:
            assert status.name == theirs
    call("cuStreamSynchronize", stream)
    assert (a.read(np, np.int32) == 5).all()  # nothing ran


# ---- graphs --------------------------------------------------------------------------------

def test_graph_stream_capture(ctx, mod, devmem, stream, np):
    f = call("cuModuleGetFunction", mod, b"add_one")
    n = 4096
    a, b = devmem(4 * n), devmem(4 * n)
    call("cuMemsetD32", a.ptr, 0, n)
    S = api.CUstreamCaptureStatus
    assert call("cuStreamIsCapturing", stream) == S.CU_STREAM_CAPTURE_STATUS_NONE
    assert call("cuStreamBeginCapture", stream,
                api.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL) is None
    assert call("cuStreamIsCapturing", stream) == S.CU_STREAM_CAPTURE_STATUS_ACTIVE
    call("cuMemsetD32Async", b.ptr, 7, n, stream)
    launch_add_one(f, a.ptr, n, stream)
    graph = call("cuStreamEndCapture", stream)
    record("cuStreamEndCapture", graph)
    assert typename(graph) == "CUgraph"
    exe = call("cuGraphInstantiate", graph, 0)
    record("cuGraphInstantiate", exe)
    for _ in range(3):
        assert call("cuGraphLaunch", exe, stream) is None
    call("cuStreamSynchronize", stream)
    assert (a.read(np, np.int32) == 3).all()
    assert (b.read(np, np.int32) == 7).all()
    assert call("cuGraphExecDestroy", exe) is None
    assert call("cuGraphDestroy", graph) is None


def test_graph_get_nodes(ctx, devmem, stream):
    """The in/out count pattern: numNodes in, (nodes, numNodes) out."""
    d = devmem(4096)
    call("cuStreamBeginCapture", stream, api.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    call("cuMemsetD32Async", d.ptr, 1, 1024, stream)
    call("cuMemsetD8Async", d.ptr, 2, 16, stream)
    graph = call("cuStreamEndCapture", stream)
    try:
        nodes, count = call("cuGraphGetNodes", graph, 0)   # count query
        assert count == 2
        nodes, count = call("cuGraphGetNodes", graph, 8)   # room for more than there are
        record("cuGraphGetNodes", (nodes, count))
        assert count == 2
        real = [x for x in nodes if int(x)]
        assert len(real) == 2 and all(typename(x) == "CUgraphNode" for x in real)
        assert real[0] != real[1]
    finally:
        call("cuGraphDestroy", graph)


def test_graph_explicit_nodes(ctx, mod, devmem, stream, np):
    f = call("cuModuleGetFunction", mod, b"add_one")
    n = 1000
    a, b = devmem(4 * n), devmem(4 * n)
    call("cuMemsetD32", b.ptr, 0, n)
    graph = call("cuGraphCreate", 0)

    ms = api.CUDA_MEMSET_NODE_PARAMS()
    ms.dst = a.ptr
    ms.pitch = 4 * n
    ms.value = 5
    ms.elementSize = 4
    ms.width = n
    ms.height = 1
    memset_node = call("cuGraphAddMemsetNode", graph, None, 0, ms, ctx)
    record("cuGraphAddMemsetNode", memset_node)
    assert typename(memset_node) == "CUgraphNode"

    vals = [ctypes.c_void_p(int(a.ptr)), ctypes.c_int(n)]
    arr = pointer_array(vals)
    kp = api.CUDA_KERNEL_NODE_PARAMS()
    kp.func = f
    kp.gridDimX, kp.gridDimY, kp.gridDimZ = (n + 127) // 128, 1, 1
    kp.blockDimX, kp.blockDimY, kp.blockDimZ = 128, 1, 1
    kp.sharedMemBytes = 0
    kp.kernelParams = ctypes.addressof(arr)
    assert kp.gridDimX == (n + 127) // 128 and kp.blockDimX == 128
    kernel_node = call("cuGraphAddKernelNode", graph, [memset_node], 1, kp)

    cp = api.CUDA_MEMCPY3D()
    cp.srcMemoryType = api.CUmemorytype.CU_MEMORYTYPE_DEVICE
    cp.srcDevice = a.ptr
    cp.dstMemoryType = api.CUmemorytype.CU_MEMORYTYPE_DEVICE
    cp.dstDevice = b.ptr
    cp.srcPitch = cp.dstPitch = 4 * n
    cp.srcHeight = cp.dstHeight = 1
    cp.WidthInBytes = 4 * n
    cp.Height = 1
    cp.Depth = 1
    copy_node = call("cuGraphAddMemcpyNode", graph, [kernel_node], 1, cp, ctx)
    assert typename(copy_node) == "CUgraphNode"
    del vals, arr  # the node holds its own copy of the parameters

    exe = call("cuGraphInstantiate", graph, 0)
    call("cuGraphLaunch", exe, stream)
    call("cuStreamSynchronize", stream)
    assert (a.read(np, np.int32) == 6).all()
    assert (b.read(np, np.int32) == 6).all()
    call("cuGraphLaunch", exe, stream)  # memset resets, so a replay gives the same
    call("cuStreamSynchronize", stream)
    assert (b.read(np, np.int32) == 6).all()
    call("cuGraphExecDestroy", exe)
    call("cuGraphDestroy", graph)


# ---- host functions and stream callbacks -----------------------------------------------------

def test_host_function_c_pointer(ctx, stream):
    seen = []
    cfn = HOSTFN(lambda data: seen.append((data, threading.get_ident())))
    addr = ctypes.cast(cfn, ctypes.c_void_p).value
    assert call("cuLaunchHostFunc", stream, addr, 1234) is None
    assert call("cuStreamSynchronize", stream) is None
    assert [d for d, _ in seen] == [1234]
    assert seen[0][1] != threading.get_ident()  # the driver's callback thread


@cubind_only
def test_host_function_ctypes_object_dropped(ctx, stream):
    """Issue 42: a ctypes function pointer given as the host function (not
    its int address) is kept alive by cubind until the driver has called
    it, with its data's buffer: the caller drops both while the stream is
    blocked, and the function still runs, with the data."""
    import gc
    import weakref

    go = threading.Event()
    assert call("cuLaunchHostFunc", stream, lambda d: go.wait(30), None) is None
    seen = []
    data = bytearray(b"kept")
    cfn = HOSTFN(lambda p: seen.append(ctypes.string_at(p, 4)))
    gone = weakref.ref(cfn)
    assert call("cuLaunchHostFunc", stream, cfn, data) is None
    del cfn, data
    gc.collect()
    others = [HOSTFN(lambda p: seen.append(b"other")) for _ in range(200)]
    del others
    gc.collect()
    go.set()
    assert call("cuStreamSynchronize", stream) is None
    assert seen == [b"kept"]
    gc.collect()
    assert gone() is None


def test_stream_callback_c_pointer(ctx, stream):
    seen = []
    cfn = STREAMCB(lambda s, status, data: seen.append((s, status, data)))
    addr = ctypes.cast(cfn, ctypes.c_void_p).value
    assert call("cuStreamAddCallback", stream, addr, 99, 0) is None
    call("cuStreamSynchronize", stream)
    assert len(seen) == 1
    s, status, data = seen[0]
    assert s == int(stream) and status == 0 and data == 99


@cubind_only
def test_host_function_python_callable(ctx, stream):
    seen = []
    payload = object()
    assert call("cuLaunchHostFunc", stream, seen.append, payload) is None
    call("cuStreamSynchronize", stream)
    assert seen == [payload] and seen[0] is payload


@cubind_only
def test_stream_callback_python_callable(ctx, stream):
    seen = []
    payload = ["user"]
    call("cuStreamAddCallback", stream, lambda s, status, data: seen.append((s, status, data)),
         payload, 0)
    call("cuStreamSynchronize", stream)
    assert len(seen) == 1
    s, status, data = seen[0]
    assert int(s) == int(stream) and status == SUCCESS and data is payload


# A Python callable as host function is cubind's; a C function pointer is
# what cuda.bindings takes too, but cuda.bindings 13.3.1 crashes on this
# test (SIGSEGV on a driver thread during the cuStreamSynchronize after the
# replays: its host-function wrapper does not outlive the first replay,
# cuda-python #790; results/gpu/cuda-bindings-graph-replay-h200.log),
# which would end the whole run, so it is skipped there.
@pytest.mark.parametrize("form", [
    pytest.param("python", marks=cubind_only),
    pytest.param("ctypes", marks=pytest.mark.skipif(
        not CUBIND, reason="cuda.bindings 13.3.1 segfaults here (cuda-python #790)")),
])
def test_host_function_graph_replays(ctx, mod, devmem, stream, np, form):
    """cuda-python #790: a captured host function must run on every replay."""
    f = call("cuModuleGetFunction", mod, b"add_one")
    n = 256
    a = devmem(4 * n)
    call("cuMemsetD32", a.ptr, 0, n)
    calls = []
    if form == "python":
        fn, data = calls.append, "tick"
    else:
        keep = HOSTFN(lambda d: calls.append(d))
        fn, data = ctypes.cast(keep, ctypes.c_void_p).value, 77
    # cubind: the captured callable's payload is a user object of the graph,
    # registered in the runtime's registry while the graph holds it.
    counts = importlib.import_module("cubind._runtime")._registry_counts if CUBIND else None
    before = counts() if counts else None
    call("cuStreamBeginCapture", stream, api.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    launch_add_one(f, a.ptr, n, stream)
    call("cuLaunchHostFunc", stream, fn, data)
    graph = call("cuStreamEndCapture", stream)
    if counts and form == "python":
        held = counts()
        assert held["user_object"] == before["user_object"] + 1, (before, held)
        assert held["callback"] == before["callback"], (before, held)
    exe = call("cuGraphInstantiate", graph, 0)
    for _ in range(5):
        call("cuGraphLaunch", exe, stream)
    call("cuStreamSynchronize", stream)
    assert calls == [data] * 5
    assert (a.read(np, np.int32) == 5).all()
    call("cuGraphExecDestroy", exe)
    call("cuGraphDestroy", graph)
    if counts and form == "python":
        # the driver runs the user object's destructor on its own thread,
        # some time after the last graph holding it is gone
        call("cuCtxSynchronize")
        deadline = time.monotonic() + 5
        while counts()["user_object"] != before["user_object"] and time.monotonic() < deadline:
            time.sleep(0.01)
        lifetimes = ("graph", "graph_exec", "user_object", "callback")
        after = counts()
        assert {k: after[k] for k in lifetimes} == {k: before[k] for k in lifetimes}, (before, after)
