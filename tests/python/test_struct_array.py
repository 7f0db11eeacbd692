# SPDX-License-Identifier: Apache-2.0
"""A snake_case library module's struct class is also the array of its
records, as cuda.bindings' nvml classes are (runtime/module/
bind_struct_array.h): T(size) makes size records, len() and indexing give
views that write through, a field of an array reads as one value per
record. cuda-python's own NVML test builds `nvml.FieldValue(1)` and sets
`fields[0].field_id`; cubind used to read the 1 as an address to wrap, and
the next field read crashed the process. Needs no library."""
import gc
import sys

import pytest

import cubind.driver as driver
import cubind.nvml as nvml

from conftest import run_python
from test_struct_from import size_of

FieldValue = nvml.FieldValue


def test_a_positional_int_is_a_count_never_an_address():
    # in a child: the old reading of T(1) as address 1 crashed on access
    r = run_python("import cubind.nvml as n\n"
                   "f = n.FieldValue(1)\n"
                   "f[0].field_id = 7\n"
                   "print(len(f), f.field_id, f[0].field_id, repr(f).startswith('fieldId : 7'))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "7", "7", "True"], r.stdout


def test_an_array_of_records_indexes_iterates_and_writes_through():
    f = FieldValue(3)
    assert len(f) == 3
    f[0].field_id = 5
    f[-1].field_id = 9
    assert list(f.field_id) == [5, 0, 9]
    assert [r.field_id for r in f] == [5, 0, 9]
    with pytest.raises(IndexError):
        f[3]
    with pytest.raises(IndexError):
        f[-4]
    # the records are contiguous: record i at ptr + i * sizeof
    assert f[1].ptr - f[0].ptr == f[2].ptr - f[1].ptr == size_of(FieldValue)
    assert f.ptr == f[0].ptr
    assert "_Array_3 object at" in repr(f)


def test_a_view_keeps_its_array_alive():
    f = FieldValue(4)
    f[2].field_id = 11
    view = f[2]
    del f
    gc.collect()
    assert view.field_id == 11
    view.field_id = 12
    assert view.field_id == 12


def test_an_array_field_takes_one_value_per_record_or_changes_nothing():
    f = FieldValue(3, field_id=[1, 2, 3])
    assert list(f.field_id) == [1, 2, 3]
    f.field_id = (4, 5, 6)
    assert list(f.field_id) == [4, 5, 6]
    with pytest.raises(ValueError, match="fieldId of an array of 3 records"):
        f.field_id = [1, 2]
    with pytest.raises(ValueError, match="one per record"):
        f.field_id = 7
    with pytest.raises(TypeError):
        f.field_id = [1, 2, "x"]  # the third fails: the first two are undone
    assert list(f.field_id) == [4, 5, 6]


def test_every_record_of_a_versioned_array_carries_its_version():
    m = nvml.Memory_v2(3)
    assert len(set(m.version)) == 1 and m.version[0] == nvml.Memory_v2().version != 0


def test_an_empty_array_and_a_record_array_field_read_as_the_class():
    z = FieldValue(0)
    assert len(z) == 0 and list(z) == [] and list(z.field_id) == []
    with pytest.raises(IndexError):
        z[0]
    # cuda-python's own test: an empty hierarchy's bridge_chip_info is an
    # empty BridgeChipInfo array; set, it views the struct's records
    h = nvml.BridgeChipHierarchy()
    assert isinstance(h.bridge_chip_info, nvml.BridgeChipInfo) and len(h.bridge_chip_info) == 0
    h.bridge_chip_info = [nvml.BridgeChipInfo(fw_version=5), nvml.BridgeChipInfo(fw_version=6)]
    infos = h.bridge_chip_info
    assert len(infos) == 2 and list(infos.fw_version) == [5, 6]
    infos[0].fw_version = 9  # writes through to the hierarchy
    assert h.bridge_chip_info[0].fw_version == 9
    del h
    gc.collect()
    assert list(infos.fw_version) == [9, 6]  # the view keeps its struct alive


def test_bad_sizes_name_the_argument():
    with pytest.raises(ValueError, match="size must not be negative"):
        FieldValue(-1)
    with pytest.raises(TypeError, match="size must be an int"):
        FieldValue("2")
    with pytest.raises(TypeError, match="size must be an int"):
        FieldValue(True)
    with pytest.raises(MemoryError, match="too large"):
        FieldValue(sys.maxsize)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        FieldValue(2, size=2)


def test_from_ptr_still_views_and_the_driver_face_keeps_its_address():
    p = nvml.PciInfo()
    p.bus = 3
    q = nvml.PciInfo.from_ptr(p.ptr, owner=p)
    assert q.ptr == p.ptr and q.bus == 3
    # cuda.bindings.driver's classes take an address positionally: unchanged
    s = driver.CUDA_MEMCPY2D()
    t = driver.CUDA_MEMCPY2D(s.getPtr())
    assert t.getPtr() == s.getPtr()
    with pytest.raises(TypeError):
        len(s)


@pytest.mark.tsan
def test_one_array_from_many_threads():
    """Threads share one FieldValue array and one hierarchy: each takes
    views of its own record (indexing, iteration, the record array field)
    and writes and reads its record's field, while the creator drops its
    references; then each reads the whole array's field lists: every write
    lands, the memory lives while any view does (truly parallel on a
    free-threaded build, and under ThreadSanitizer by tests/run). Records
    are plain memory as in C (bind_struct.h): no thread reads a record
    while another writes it."""
    import threading
    threads = 8
    values = FieldValue(threads)
    hierarchy = nvml.BridgeChipHierarchy()
    hierarchy.bridge_chip_info = [nvml.BridgeChipInfo() for _ in range(threads)]
    infos = hierarchy.bridge_chip_info
    barrier = threading.Barrier(threads + 1, timeout=60)
    done = threading.Barrier(threads, timeout=60)
    errors = []

    def body(i, h):
        try:
            barrier.wait()
            for k in range(300):
                values[i].field_id = k
                infos[i].fw_version = k
                assert len(values) == threads
                assert [r for r in values][i].field_id == k
                assert h.bridge_chip_info[i].fw_version == k
            done.wait()  # every record written: the lists read them all
            assert list(values.field_id) == [299] * threads
            assert list(h.bridge_chip_info.fw_version) == [299] * threads
        except Exception as e:  # reported below, with the thread's index
            errors.append((i, e))

    ts = [threading.Thread(target=body, args=(i, hierarchy)) for i in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    del hierarchy  # the threads' references and the views keep its memory
    gc.collect()
    for t in ts:
        t.join()
    assert not errors, errors
    assert list(values.field_id) == [299] * threads
    assert list(infos.fw_version) == [299] * threads
