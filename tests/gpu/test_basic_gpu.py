# SPDX-License-Identifier: Apache-2.0
"""Issue-2 scenarios on a real GPU: initialization, device queries, the
primary context, streams and events, device memory.

Runs against cubind.driver, or against cuda.bindings.driver when
CUBIND_GPU_IMPL=cuda.bindings (the same file is the evidence for the drop-in
claim). Never run in CI: tests/gpu/ needs the real driver.
"""

from gpu_common import SUCCESS, drv, ok

# ctx (device 0's primary context, current for this file) is in conftest.py.


def test_versions_and_devices(ctx):
    version = ok(drv.cuDriverGetVersion())
    assert version >= 13000
    assert ok(drv.cuDeviceGetCount()) >= 1
    dev = ok(drv.cuDeviceGet(0))
    assert int(dev) == 0
    cc_major = ok(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    assert cc_major == 9  # H200 is Hopper
    sms = ok(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
    assert sms >= 100


def test_invalid_device_is_a_status(ctx):
    count = ok(drv.cuDeviceGetCount())
    err, dev = drv.cuDeviceGet(count + 5)
    assert err == drv.CUresult.CUDA_ERROR_INVALID_DEVICE
    assert err.name == "CUDA_ERROR_INVALID_DEVICE"


def test_primary_context_is_current(ctx):
    cur = ok(drv.cuCtxGetCurrent())
    assert int(cur) == int(ctx) and int(cur) != 0
    assert cur == ctx
    flags, active = ok(drv.cuDevicePrimaryCtxGetState(ok(drv.cuDeviceGet(0))))
    assert active == 1


def test_stream_and_event_lifecycle(ctx):
    stream = ok(drv.cuStreamCreate(0))
    assert int(stream) != 0
    start = ok(drv.cuEventCreate(0))
    end = ok(drv.cuEventCreate(0))
    ok(drv.cuEventRecord(start, stream))
    ok(drv.cuEventRecord(end, stream))
    ok(drv.cuStreamSynchronize(stream))
    assert drv.cuStreamQuery(stream)[0] == SUCCESS
    assert drv.cuEventQuery(end)[0] == SUCCESS
    ok(drv.cuEventSynchronize(end))
    ok(drv.cuEventDestroy(start))
    ok(drv.cuEventDestroy(end))
    ok(drv.cuStreamDestroy(stream))


def test_mem_alloc_free(ctx):
    ptr = ok(drv.cuMemAlloc(1 << 20))
    assert int(ptr) != 0
    free, total = ok(drv.cuMemGetInfo())
    assert 0 < free <= total
    ok(drv.cuMemFree(ptr))


def test_handle_semantics(ctx):
    stream = ok(drv.cuStreamCreate(0))
    same = drv.CUstream(int(stream))
    assert same == stream and hash(same) == hash(stream)
    assert repr(stream).startswith("<CUstream 0x")
    assert isinstance(stream.getPtr(), int)
    ok(drv.cuStreamDestroy(stream))
