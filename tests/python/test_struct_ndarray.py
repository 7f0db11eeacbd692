# SPDX-License-Identifier: Apache-2.0
"""Numeric array fields of the snake_case library modules' records read as
numpy arrays over the record's own bytes, as cuda.bindings' nvml and cufile
classes read them (runtime/module/bind_ndarray.h): a record's fixed array
(`unsigned char nonce[32]`), and a field of an array of records, one value
per record. The array writes through, keeps the record alive and is
read-only where the record is. Without numpy (cubind does not depend on
it) the same fields read as lists. cuda-python's own NVML test reads
`ConfComputeGpuAttestationReport().nonce.dtype`. Needs no library."""
import ctypes
import gc
import threading

import pytest

import cubind.cufile as cufile
import cubind.nvml as nvml

from conftest import run_python
from test_struct_from import size_of

np = pytest.importorskip("numpy")

Report = nvml.ConfComputeGpuAttestationReport


def test_a_fixed_array_of_bytes_is_a_uint8_array_of_the_record():
    r = Report()
    nonce = r.nonce
    assert isinstance(nonce, np.ndarray)
    assert nonce.dtype == np.uint8 and nonce.shape == (32,)
    assert not nonce.any()
    nonce[3] = 200                  # numpy writes the record's bytes
    assert r.nonce[3] == 200
    r.nonce = bytes(range(32))      # and the record's setter numpy's view
    assert list(nonce) == list(range(32))


def test_the_array_is_the_records_own_bytes():
    size = size_of(Report)
    buf = bytearray(size)
    r = Report.from_buffer(buf)
    before = bytes(buf)
    r.nonce[:] = 7
    changed = [i for i in range(size) if buf[i] != before[i]]
    assert len(changed) == 32 and changed == list(range(changed[0], changed[0] + 32))
    assert r.nonce.ctypes.data == r.ptr + changed[0]


def test_the_array_keeps_its_record_alive():
    nonce = Report(nonce=b"\x05" * 32).nonce
    gc.collect()
    assert list(nonce) == [5] * 32
    nonce[0] = 6
    assert nonce[0] == 6


def test_a_read_only_record_gives_a_read_only_array():
    r = Report.from_buffer(bytes(size_of(Report)))
    nonce = r.nonce
    assert not nonce.flags.writeable
    with pytest.raises(ValueError):
        nonce[0] = 1


def test_a_counted_array_holds_its_count_of_values():
    r = Report()
    assert isinstance(r.attestation_report, np.ndarray) and len(r.attestation_report) == 0
    r.attestation_report = b"\x01\x02\x03"
    assert r.attestation_report.dtype == np.uint8
    assert list(r.attestation_report) == [1, 2, 3]


def test_a_field_of_an_array_of_records_is_one_strided_value_per_record():
    f = nvml.FieldValue(3)
    ids = f.field_id
    assert isinstance(ids, np.ndarray) and ids.shape == (3,)
    assert ids.strides == (size_of(nvml.FieldValue),)
    ids[1] = 42                     # writes record 1
    assert f[1].field_id == 42 and f[0].field_id == 0
    f[2].field_id = 9
    assert list(ids) == [0, 42, 9]
    f.field_id = [1, 2, 3]          # the array-wide setter still takes a sequence
    assert list(f.field_id) == [1, 2, 3]
    f.field_id = np.array([4, 5, 6])
    assert [r.field_id for r in f] == [4, 5, 6]
    assert nvml.FieldValue(0).field_id.shape == (0,)


def test_a_fixed_array_of_an_array_of_records_has_two_dimensions():
    r = Report(2)
    nonce = r.nonce
    assert nonce.shape == (2, 32) and nonce.dtype == np.uint8
    nonce[1, 31] = 77
    assert r[1].nonce[31] == 77 and r[0].nonce[31] == 0


def numeric_fields(module):
    """(class, field) of every numeric field of the module's classes whose
    value on two records is a numpy array."""
    found = []
    for name in dir(module):
        cls = getattr(module, name)
        if not (isinstance(cls, type) and hasattr(cls, "from_buffer")):
            continue
        two = cls(2)
        for field in dir(cls):
            if field.startswith("_") or not isinstance(getattr(cls, field, None),
                                                       type(Report.nonce)):
                continue
            try:
                v = getattr(two, field)
            except (TypeError, ValueError):
                continue
            if isinstance(v, np.ndarray):
                found.append((cls, field, v))
    return found


@pytest.mark.parametrize("module", [nvml, cufile], ids=lambda m: m.__name__)
def test_every_numeric_field_of_two_records_matches_one_records_value(module):
    found = numeric_fields(module)
    assert len(found) > 20
    for cls, field, v in found:
        assert v.shape[0] == 2, (cls, field)
        assert v.dtype.kind in "iuf", (cls, field, v.dtype)
        one = getattr(cls(2)[0], field)
        # a scalar field of one record is a number, a fixed array an array
        if v.ndim == 1:
            assert isinstance(one, (int, float)), (cls, field, one)
        else:
            assert isinstance(one, np.ndarray) and one.shape == v.shape[1:], (cls, field)
            assert one.dtype == v.dtype


def test_without_numpy_the_fields_are_lists():
    r = run_python("import sys\n"
                   "sys.modules['numpy'] = None  # import numpy fails\n"
                   "import cubind.nvml as n\n"
                   "r = n.ConfComputeGpuAttestationReport(nonce=b'\\x03' * 32)\n"
                   "f = n.FieldValue(2)\n"
                   "f[1].field_id = 4\n"
                   "p = n.VgpuPlacementList_v1()\n"
                   "p.placement_ids = (7, 8)\n"
                   "print(type(r.nonce).__name__, r.nonce[:2], f.field_id, p.placement_ids,\n"
                   "      [int(t) for t in f.value_type])\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(maxsplit=1) == ["list", "[3, 3] [0, 4] [7, 8] [0, 0]\n"], r.stdout


def test_an_enum_field_of_an_array_of_records_is_an_int32_array():
    """As cuda.bindings' dtypes hold every enum (int32); one record's field
    stays its enum's member, which compares equal to cuda.bindings' int."""
    f = nvml.FieldValue(3)
    f[1].value_type = nvml.ValueType.DOUBLE
    types = f.value_type
    assert isinstance(types, np.ndarray) and types.dtype == np.int32 and types.shape == (3,)
    assert types.tolist() == [0, int(nvml.ValueType.DOUBLE), 0]
    types[2] = int(nvml.ValueType.UNSIGNED_LONG_LONG)   # writes the records
    assert f[2].value_type is nvml.ValueType.UNSIGNED_LONG_LONG
    one = nvml.FieldValue(1).value_type
    assert isinstance(one, nvml.ValueType) and one == 0


def test_a_pointer_array_of_records_reads_its_fields_as_arrays():
    """ProcessDetailList_v1().proc_array is ProcessDetail_v1's array (as
    cuda.bindings'), so `.pid` of it is one value per process."""
    plist = nvml.ProcessDetailList_v1()
    plist.proc_array = [nvml.ProcessDetail_v1(pid=5), nvml.ProcessDetail_v1(pid=6)]
    pids = plist.proc_array.pid
    assert isinstance(pids, np.ndarray) and pids.dtype == np.uint32
    assert pids.tolist() == [5, 6]


# ---- a pointer field's counted array of ints (placementIds) -----------------
# cuda.bindings.nvml reads VgpuPlacementList's placement_ids as a uint32
# numpy array over the array the field points at, of its hidden count's
# length ([] while the pointer is NULL), and sets it from any sequence of
# integers, copying the values and setting the count.

Placements = nvml.VgpuPlacementList_v1
COUNT_AT = 8  # version, placementSize, then count (nvml.h)


def test_a_pointed_array_of_ids_is_a_uint32_array_of_its_count():
    p = Placements()
    assert p.placement_ids == []                # NULL: a list, as cuda.bindings'
    p.placement_ids = [4, 5, 6]
    ids = p.placement_ids
    assert isinstance(ids, np.ndarray) and ids.dtype == np.uint32 and ids.shape == (3,)
    assert ids.tolist() == [4, 5, 6]
    count = ctypes.c_uint.from_address(p.ptr + COUNT_AT)
    count.value = 2                             # what the library writes back
    assert p.placement_ids.tolist() == [4, 5]
    address = ctypes.c_void_p.from_address(p.ptr + COUNT_AT + 8).value
    assert p.placement_ids.ctypes.data == address  # the array the field points at


def test_the_pointed_array_writes_through_and_outlives_the_field():
    p = Placements()
    p.placement_ids = [1, 2]
    ids = p.placement_ids
    ids[1] = 9                                  # numpy writes the pointed array
    assert p.placement_ids.tolist() == [1, 9]
    p.placement_ids = [3]                       # the field lets the old array go
    gc.collect()
    assert ids.tolist() == [1, 9]               # numpy's array still holds it
    del p
    gc.collect()
    ids[0] = 5
    assert ids.tolist() == [5, 9]


def test_a_view_of_foreign_memory_reads_the_address():
    """Deliberate (docs/compatibility.md): only the array the field owns is
    read; a record over other memory (from_ptr) whose pointer the field
    did not set reads the address, never count values from it."""
    p = Placements()
    p.placement_ids = [1, 2]
    view = Placements.from_ptr(p.ptr, readonly=True)
    assert view.placement_ids == p.placement_ids.ctypes.data


@pytest.mark.parametrize("value", [np.array([7, 8, 9], dtype=np.uint32),
                                   np.array([7, 8, 9], dtype=np.int64), range(7, 10),
                                   [np.uint8(7), np.int32(8), 9]],
                         ids=["uint32 array", "int64 array", "range", "numpy scalars"])
def test_a_sequence_of_integers_sets_the_values_and_the_count(value):
    """As cuda.bindings takes it: the values copied (no pointer at a numpy
    array's own memory), the count the sequence's length."""
    p = Placements()
    p.placement_ids = value
    assert p.placement_ids.tolist() == [7, 8, 9]
    assert ctypes.c_uint.from_address(p.ptr + COUNT_AT).value == 3
    if isinstance(value, np.ndarray):
        assert p.placement_ids.ctypes.data != value.ctypes.data
        value[0] = 1
        assert p.placement_ids[0] == 7


@pytest.mark.parametrize("value, error, message", [
    (np.array([1.5, 2.0]), TypeError, r"placementIds\[0\] must be int, not numpy.float64"),
    (np.array([-1], dtype=np.int64), OverflowError, "placementIds"),
    (np.array([[1, 2]]), TypeError, r"placementIds\[0\] must be int, not numpy.ndarray"),
])
def test_a_sequence_of_other_values_is_refused_naming_the_field(value, error, message):
    p = Placements()
    p.placement_ids = [4]
    with pytest.raises(error, match=message):
        p.placement_ids = value
    assert p.placement_ids.tolist() == [4]      # unchanged


def test_threads_reading_first_share_one_numpy():
    """The first reads of a fresh module race to import numpy and publish
    numpy.asarray: every thread gets an array."""
    r = run_python("import threading\n"
                   "import cubind.nvml as n\n"
                   "r = n.ConfComputeGpuAttestationReport()\n"
                   "got = []\n"
                   "go = threading.Barrier(8)\n"
                   "def read():\n"
                   "    go.wait()\n"
                   "    got.append(type(r.nonce).__name__)\n"
                   "ts = [threading.Thread(target=read) for _ in range(8)]\n"
                   "[t.start() for t in ts]\n"
                   "[t.join() for t in ts]\n"
                   "print(sorted(set(got)), len(got))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["['ndarray']", "8"], r.stdout


def test_threads_share_one_array():
    f = nvml.FieldValue(64)
    ids = f.field_id
    def write(k):
        for _ in range(200):
            ids[k::8] = k
    ts = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert [r.field_id for r in f] == [i % 8 for i in range(64)]
