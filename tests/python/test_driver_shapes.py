# SPDX-License-Identifier: Apache-2.0
"""Parameter shapes that need more than one C parameter each, checked on the
test-only fake driver (tests/fakecuda) in both faces: driver-owned arrays
(cuStreamGetCaptureInfo), a caller's buffer filled up to an in/out size
(cuLogsDumpToMemory), values typed by an attribute and sized by a count
(cuMemRangeGetAttribute, cuCoredump*), an array of such values each typed
and sized by its own entry (cuMemRangeGetAttributes), output arrays counted by an
in/out count (cuDevSmResourceSplitByCount). Signatures and result shapes are
those of cuda.bindings 13.3.1."""
import ctypes
import inspect

import pytest


@pytest.fixture
def capture(fake):
    fake.fakecuda_set_capture.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    yield fake.fakecuda_set_capture
    fake.fakecuda_set_capture(None, 0, 0)


def test_signatures_are_those_of_cuda_bindings(drv):
    sig = lambda f: str(inspect.signature(getattr(drv, f)))
    assert sig("cuStreamGetCaptureInfo") == "(hStream)"
    assert sig("cuLogsDumpToMemory") == "(iterator, buffer, size, flags)"
    assert sig("cuMemRangeGetAttribute") == "(dataSize, attribute, devPtr, count)"
    assert sig("cuCoredumpGetAttribute") == "(attrib)"
    assert sig("cuCoredumpGetAttributeGlobal") == "(attrib)"
    assert sig("cuCoredumpSetAttribute") == "(attrib, value)"
    assert sig("cuCoredumpSetAttributeGlobal") == "(attrib, value)"
    assert sig("cuMemRangeGetAttributes") == "(dataSizes, attributes, numAttributes, devPtr, count)"
    # cuda.bindings 13.3.1 names 13.0's useFlags `flags` (a rename-param-in rule);
    # the docstring keeps the header's prototype
    assert sig("cuDevSmResourceSplitByCount") == "(nbGroups, input_, flags, minCount)"
    assert "unsigned int useFlags, unsigned int minCount)" in drv.cuDevSmResourceSplitByCount.__doc__


def test_capture_info_copies_the_driver_owned_arrays(drv, ctx, capture):
    err, stream = drv.cuStreamCreate(0)
    assert err == 0
    assert capture(int(stream), 77, 3) == 0
    err, status, cid, graph, deps, edges, n = drv.cuStreamGetCaptureInfo(stream)
    assert err == 0
    assert status is drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE
    assert cid == 77 and int(graph) == 0 and n == 3
    assert [type(d) for d in deps] == [drv.CUgraphNode] * 3
    assert [int(d) for d in deps] == [0x1000, 0x2000, 0x3000]
    assert [type(e) for e in edges] == [drv.CUgraphEdgeData] * 3
    assert [(e.from_port, e.to_port, e.type) for e in edges] == [(0, 0, 0), (1, 0, 1), (2, 0, 0)]
    # copies: the fake's array changing later does not change them
    assert capture(int(stream), 78, 1) == 0
    assert [int(d) for d in deps] == [0x1000, 0x2000, 0x3000] and edges[1].from_port == 1
    import cubind.cu as cu
    status, cid, graph, deps, edges, n = cu.cuStreamGetCaptureInfo(stream)
    assert (cid, n, [int(d) for d in deps], len(edges)) == (78, 1, [0x1000], 1)
    assert drv.cuStreamDestroy(stream)[0] == 0


def test_capture_info_of_a_stream_not_capturing_has_empty_lists(drv, ctx, capture):
    err, stream = drv.cuStreamCreate(0)
    assert capture(None, 0, 0) == 0
    err, status, cid, graph, deps, edges, n = drv.cuStreamGetCaptureInfo(stream)
    assert err == 0 and status == drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
    assert (cid, int(graph), deps, edges, n) == (0, 0, [], [], 0)
    assert drv.cuStreamDestroy(stream)[0] == 0
    err, *rest = drv.cuStreamGetCaptureInfo(0xdead)
    assert err == drv.CUresult.CUDA_ERROR_INVALID_HANDLE and rest == [None] * 6


def test_logs_dump_to_memory_fills_the_callers_buffer(drv):
    log = b"[fake] first entry\n[fake] second entry\n"
    buf = bytearray(100)
    err, it, size = drv.cuLogsDumpToMemory(None, buf, 100, 0)
    assert (err, int(it), size) == (0, len(log), len(log))
    assert bytes(buf[:size + 1]) == log + b"\0"
    # from an iterator (a byte offset in the fake), up to size - 1 bytes
    buf = bytearray(10)
    err, it, size = drv.cuLogsDumpToMemory(7, buf, 10, 0)
    assert (err, int(it), size) == (0, 16, 9) and bytes(buf) == log[7:16] + b"\0"
    import cubind.cu as cu
    view = memoryview(bytearray(8))
    it, size = cu.cuLogsDumpToMemory(0, view, 8, 0)
    assert (int(it), size, bytes(view)) == (7, 7, log[:7] + b"\0")


def test_logs_dump_to_memory_checks_the_buffer(drv):
    with pytest.raises(ValueError, match=r"argument 'buffer' has 4 bytes, fewer than the 5 the call writes \('size'\)"):
        drv.cuLogsDumpToMemory(None, bytearray(4), 5, 0)
    with pytest.raises(TypeError, match="buffer"):
        drv.cuLogsDumpToMemory(None, b"immutable", 4, 0)
    err, it, size = drv.cuLogsDumpToMemory(None, bytearray(4), 0, 0)
    assert err == drv.CUresult.CUDA_ERROR_INVALID_VALUE and it is None and size is None


def test_mem_range_attributes_typed_and_sized(drv, ctx):
    A = drv.CUmem_range_attribute
    err, ptr = drv.cuMemAlloc(256)
    assert err == 0
    assert drv.cuMemRangeGetAttribute(4, A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, 256) == (0, 1)
    assert drv.cuMemRangeGetAttribute(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, 256)[1] == -1
    # ACCESSED_BY: as many device ordinals as dataSize holds (more than the 64-byte buffer)
    err, ids = drv.cuMemRangeGetAttribute(4 * 40, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 256)
    assert err == 0 and ids == [0] + [-2] * 39
    err, kind = drv.cuMemRangeGetAttribute(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, 256)
    assert err == 0 and kind is drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    import cubind
    import cubind.cu as cu
    assert cu.cuMemRangeGetAttribute(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ptr, 256) == 1
    with pytest.raises(cubind.CUDAError):
        cu.cuMemRangeGetAttribute(8, A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, 256)
    assert drv.cuMemFree(ptr)[0] == 0


def test_mem_range_attributes_each_typed_and_sized_by_its_entry(drv, ctx, fake):
    A = drv.CUmem_range_attribute
    err, ptr = drv.cuMemAlloc(256)
    assert err == 0
    attrs = [A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
             A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
             A.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
             A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY]
    # the second ACCESSED_BY holds more than a 64-byte slot
    sizes = [4, 12, 4, 4, 4, 4 * 20]
    T = drv.CUmemLocationType
    want = [1, [0, -2, -2], T.CU_MEM_LOCATION_TYPE_DEVICE, T.CU_MEM_LOCATION_TYPE_HOST, -1,
            [0] + [-2] * 19]
    err, values = drv.cuMemRangeGetAttributes(sizes, attrs, len(attrs), ptr, 256)
    assert err == 0 and values == want
    assert values[2] is T.CU_MEM_LOCATION_TYPE_DEVICE
    # numAttributes counts the values; longer lists are not read further
    assert drv.cuMemRangeGetAttributes(sizes, attrs, 2, ptr, 256) == (0, want[:2])
    assert drv.cuMemRangeGetAttributes(tuple(sizes), tuple(attrs), 1, devPtr=ptr, count=256) == (0, [1])
    import cubind
    import cubind.cu as cu
    assert cu.cuMemRangeGetAttributes(sizes[1:3], attrs[1:3], 2, ptr, 256) == want[1:3]
    # a wrong size for its attribute: the driver's error, no values
    err, values = drv.cuMemRangeGetAttributes([4, 8], attrs[:2][::-1], 2, ptr, 256)
    assert (err, values) == (drv.CUresult.CUDA_ERROR_INVALID_VALUE, None)
    with pytest.raises(cubind.CUDAError):
        cu.cuMemRangeGetAttributes([8], [A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY], 1, ptr, 256)
    # lists shorter than numAttributes never reach the driver
    calls = fake.fakecuda_call_count(b"cuMemRangeGetAttributes")
    with pytest.raises(ValueError, match="'dataSizes' has 1 elements, fewer than the 2"):
        drv.cuMemRangeGetAttributes([4], attrs[:2], 2, ptr, 256)
    with pytest.raises(ValueError, match="'attributes' has 1 elements, fewer than the 2"):
        drv.cuMemRangeGetAttributes([4, 4], attrs[:1], 2, ptr, 256)
    with pytest.raises(ValueError, match="'attributes' is None but its count is not 0"):
        drv.cuMemRangeGetAttributes([4], None, 1, ptr, 256)
    with pytest.raises(TypeError):
        drv.cuMemRangeGetAttributes(["4"], attrs[:1], 1, ptr, 256)
    assert fake.fakecuda_call_count(b"cuMemRangeGetAttributes") == calls
    assert drv.cuMemFree(ptr)[0] == 0


def test_array_counted_by_a_later_parameter_is_checked(drv, ctx, fake):
    # count comes after dptrs and sizes: a count beyond the lists is refused
    # before the driver could read past them
    calls = fake.fakecuda_call_count(b"cuMemDiscardBatchAsync")
    with pytest.raises(ValueError, match="'dptrs' has 1 elements, fewer than the 3"):
        drv.cuMemDiscardBatchAsync([0], [0, 0, 0], 3, 0, None)
    with pytest.raises(ValueError, match="'sizes' has 2 elements, fewer than the 3"):
        drv.cuMemDiscardBatchAsync([0, 0, 0], [0, 0], 3, 0, None)
    assert fake.fakecuda_call_count(b"cuMemDiscardBatchAsync") == calls


def test_coredump_settings_round_trip(drv, ctx):
    S = drv.CUcoredumpSettings
    for get, set_ in ((drv.cuCoredumpGetAttribute, drv.cuCoredumpSetAttribute),
                      (drv.cuCoredumpGetAttributeGlobal, drv.cuCoredumpSetAttributeGlobal)):
        assert get(S.CU_COREDUMP_ENABLE_ON_EXCEPTION) == (0, False)
        assert set_(S.CU_COREDUMP_ENABLE_ON_EXCEPTION, True) == (0,)
        err, on = get(S.CU_COREDUMP_ENABLE_ON_EXCEPTION)
        assert err == 0 and on is True
        assert get(S.CU_COREDUMP_FILE) == (0, b"")
        assert set_(S.CU_COREDUMP_FILE, b"/tmp/core.%p") == (0,)
        assert get(S.CU_COREDUMP_FILE) == (0, b"/tmp/core.%p")
        assert set_(S.CU_COREDUMP_PIPE, "pipe-name") == (0,)
        assert get(S.CU_COREDUMP_PIPE) == (0, b"pipe-name")
        assert set_(S.CU_COREDUMP_GENERATION_FLAGS, 6) == (0,)
        assert get(S.CU_COREDUMP_GENERATION_FLAGS) == (0, 6)
    # the scopes are apart in the fake; 1023 chars fit, 1024 do not
    assert drv.cuCoredumpSetAttribute(S.CU_COREDUMP_FILE, b"x" * 1023) == (0,)
    assert drv.cuCoredumpGetAttribute(S.CU_COREDUMP_FILE) == (0, b"x" * 1023)
    assert drv.cuCoredumpGetAttributeGlobal(S.CU_COREDUMP_FILE) == (0, b"/tmp/core.%p")
    with pytest.raises(ValueError, match="'value' has 1024 bytes"):
        drv.cuCoredumpSetAttribute(S.CU_COREDUMP_FILE, b"x" * 1024)
    import cubind.cu as cu
    assert cu.cuCoredumpSetAttribute(S.CU_COREDUMP_LIGHTWEIGHT, 1) is None
    assert cu.cuCoredumpGetAttribute(S.CU_COREDUMP_LIGHTWEIGHT) is True


def test_sm_split_returns_groups_count_and_remainder(drv, ctx):
    R = drv.CUdevResourceType
    sm = drv.CUdevResource()
    sm.type = R.CU_DEV_RESOURCE_TYPE_SM
    sm.sm.smCount = 10
    # nbGroups 0: only count the groups
    err, result, n, rest = drv.cuDevSmResourceSplitByCount(0, sm, 0, 4)
    assert (err, result, n) == (0, [], 2)
    err, result, n, rest = drv.cuDevSmResourceSplitByCount(2, sm, 0, 4)
    assert err == 0 and n == 2
    assert [(int(r.type), r.sm.smCount) for r in result] == [(int(R.CU_DEV_RESOURCE_TYPE_SM), 4)] * 2
    assert rest.sm.smCount == 2
    import cubind.cu as cu
    result, n, rest = cu.cuDevSmResourceSplitByCount(1, sm, 0, 3)
    assert (len(result), n, result[0].sm.smCount, rest.sm.smCount) == (1, 1, 3, 7)
    # the flags by cuda.bindings' name
    result, n, rest = cu.cuDevSmResourceSplitByCount(1, sm, flags=0, minCount=3)
    assert (len(result), n) == (1, 1)
    err = drv.cuDevSmResourceSplitByCount(1, sm, flags=4, minCount=3)[0]
    assert err == drv.CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(TypeError):
        drv.cuDevSmResourceSplitByCount(1, sm, useFlags=0, minCount=3)
