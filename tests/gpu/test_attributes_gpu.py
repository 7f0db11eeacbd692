# SPDX-License-Identifier: Apache-2.0
"""Values typed by an attribute, on a real GPU: memory range attributes of
managed memory (cuMemRangeGetAttribute, and cuMemRangeGetAttributes, where
each value is typed by its own attribute and sized by its own dataSizes
entry) after cuMemAdvise / cuMemPrefetchAsync, and coredump settings of the
current context (cuCoredumpGetAttribute / cuCoredumpSetAttribute: a bool, a
string, an int), each restored afterwards.

Runs against cubind.driver, or against cuda.bindings.driver when
CUBIND_GPU_IMPL=cuda.bindings (the same expectations, the documented
differences aside). Never run in CI: tests/gpu/ needs the real driver.
"""
import os

import pytest

from gpu_common import IMPL, drv, ok
A = drv.CUmem_range_attribute
S = drv.CUcoredumpSettings
T = drv.CUmemLocationType
CU_DEVICE_INVALID = -2
SIZE = 1 << 20

# dev (device 0) and ctx (its primary context, current for this file) are in
# conftest.py.


def device_location(dev):
    loc = drv.CUmemLocation()
    loc.type = T.CU_MEM_LOCATION_TYPE_DEVICE
    loc.id = int(dev)
    return loc


@pytest.fixture
def managed(ctx, dev):
    """1 MiB of managed memory: read-mostly, preferring and accessed by
    device 0, not prefetched yet."""
    ptr = ok(drv.cuMemAllocManaged(SIZE, drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL.value))
    loc = device_location(dev)
    Adv = drv.CUmem_advise
    ok(drv.cuMemAdvise(ptr, SIZE, Adv.CU_MEM_ADVISE_SET_READ_MOSTLY, loc))
    ok(drv.cuMemAdvise(ptr, SIZE, Adv.CU_MEM_ADVISE_SET_PREFERRED_LOCATION, loc))
    ok(drv.cuMemAdvise(ptr, SIZE, Adv.CU_MEM_ADVISE_SET_ACCESSED_BY, loc))
    yield ptr
    ok(drv.cuMemFree(ptr))


# cuda.bindings 13.3.1 refuses the location-typed range attributes of CUDA
# 12.2+ (TypeError "Unsupported attribute"); cubind types them by rules.txt.
TYPED_LOCATIONS = IMPL != "cuda.bindings"


def test_range_attribute_one_at_a_time(dev, managed):
    dev = int(dev)
    get = lambda size, attr: ok(drv.cuMemRangeGetAttribute(size, attr, managed, SIZE))
    assert get(4, A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) == 1
    assert get(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION) == dev
    if TYPED_LOCATIONS:
        assert get(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE) == T.CU_MEM_LOCATION_TYPE_DEVICE
        assert get(4, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID) == dev
    # 3 slots, one device has the advice: the rest CU_DEVICE_INVALID
    assert get(12, A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) == [dev, CU_DEVICE_INVALID, CU_DEVICE_INVALID]
    assert get(4, A.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION) == CU_DEVICE_INVALID
    # a size that does not fit the attribute is the driver's error
    err, value = drv.cuMemRangeGetAttribute(8, A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed, SIZE)
    assert err == drv.CUresult.CUDA_ERROR_INVALID_VALUE


def test_range_attributes_each_typed_and_sized(dev, managed):
    dev = int(dev)
    stream = ok(drv.cuStreamCreate(0))
    ok(drv.cuMemPrefetchAsync(managed, SIZE, device_location(dev), 0, stream))
    ok(drv.cuStreamSynchronize(stream))
    attrs = [A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
             A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
             A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
             A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
             A.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
             A.CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
             A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY]
    sizes = [4, 8, 4, 4, 4, 4, 4 * 20]   # the last one larger than 64 bytes
    expected = [1, [dev, CU_DEVICE_INVALID], T.CU_MEM_LOCATION_TYPE_DEVICE, dev, dev,
                T.CU_MEM_LOCATION_TYPE_DEVICE, [dev] + [CU_DEVICE_INVALID] * 19]
    if not TYPED_LOCATIONS:
        keep = [i for i, a in enumerate(attrs) if "LOCATION_" not in a.name]
        attrs, sizes, expected = ([x[i] for i in keep] for x in (attrs, sizes, expected))
    values = ok(drv.cuMemRangeGetAttributes(sizes, attrs, len(attrs), managed, SIZE))
    assert values == expected
    # the same values one at a time
    for size, attr, value in zip(sizes, attrs, values):
        assert ok(drv.cuMemRangeGetAttribute(size, attr, managed, SIZE)) == value
    ok(drv.cuStreamDestroy(stream))
    if IMPL == "cubind":
        import cubind
        import cubind.cu as cu
        assert cu.cuMemRangeGetAttributes(sizes[:2], attrs[:2], 2, managed, SIZE) == values[:2]
        with pytest.raises(cubind.CUDAError):
            cu.cuMemRangeGetAttributes([8], attrs[:1], 1, managed, SIZE)


@pytest.fixture
def restore_coredump(ctx):
    """Puts the three settings back as they were."""
    saved = {a: ok(drv.cuCoredumpGetAttribute(a)) for a in
             (S.CU_COREDUMP_ENABLE_ON_EXCEPTION, S.CU_COREDUMP_FILE)}
    if IMPL != "cuda.bindings":
        saved[S.CU_COREDUMP_GENERATION_FLAGS] = ok(drv.cuCoredumpGetAttribute(S.CU_COREDUMP_GENERATION_FLAGS))
    yield saved
    for a, v in saved.items():
        ok(drv.cuCoredumpSetAttribute(a, v))
        assert ok(drv.cuCoredumpGetAttribute(a)) == v


def test_coredump_bool_round_trip(restore_coredump):
    before = restore_coredump[S.CU_COREDUMP_ENABLE_ON_EXCEPTION]
    assert before in (True, False) and type(before) is bool
    for value in (not before, before):
        ok(drv.cuCoredumpSetAttribute(S.CU_COREDUMP_ENABLE_ON_EXCEPTION, value))
        assert ok(drv.cuCoredumpGetAttribute(S.CU_COREDUMP_ENABLE_ON_EXCEPTION)) is value


def test_coredump_file_round_trip(restore_coredump, tmp_path):
    before = restore_coredump[S.CU_COREDUMP_FILE]
    assert isinstance(before, bytes) and len(before) < 1024
    path = os.fsencode(str(tmp_path / "cubind-core.%p"))
    ok(drv.cuCoredumpSetAttribute(S.CU_COREDUMP_FILE, path))
    assert ok(drv.cuCoredumpGetAttribute(S.CU_COREDUMP_FILE)) == path


@pytest.mark.skipif(IMPL == "cuda.bindings",
                    reason="cuda.bindings raises TypeError for CU_COREDUMP_GENERATION_FLAGS")
def test_coredump_generation_flags_round_trip(restore_coredump):
    F = drv.CUCoredumpGenerationFlags
    before = restore_coredump[S.CU_COREDUMP_GENERATION_FLAGS]
    assert isinstance(before, int)
    want = int(F.CU_COREDUMP_SKIP_SHARED_MEMORY) | int(F.CU_COREDUMP_SKIP_LOCAL_MEMORY)
    ok(drv.cuCoredumpSetAttribute(S.CU_COREDUMP_GENERATION_FLAGS, want))
    assert ok(drv.cuCoredumpGetAttribute(S.CU_COREDUMP_GENERATION_FLAGS)) == want
    import cubind.cu as cu
    assert cu.cuCoredumpSetAttribute(S.CU_COREDUMP_GENERATION_FLAGS, before) is None
    assert cu.cuCoredumpGetAttribute(S.CU_COREDUMP_GENERATION_FLAGS) == before
