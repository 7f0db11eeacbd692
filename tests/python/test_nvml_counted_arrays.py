# SPDX-License-Identifier: Apache-2.0
"""Counted arrays of cubind.nvml's struct classes (the field-count rules of
gen/nvml.rules; runtime/module/bind_struct.h "Counted arrays"), as
cuda.bindings.nvml gives them: a fixed array `T FIELD[N]` whose valid
length a count field says reads as its first COUNT elements, setting it
writes the elements and the count, a count in memory larger than N (junk
from from_buffer) never reads past the array; the snake_case count field
is hidden. Pointer arrays counted by a field keep their count the same way
(NULL reads as an empty list, as cuda.bindings reads it).
And the snake_case field names cuda.bindings gives a trailing underscore
(field-underscore rules). Needs no library: the classes work without it."""
import ctypes
import gc
import re

import pytest

import cubind.driver as driver
import cubind.nvml as nvml

# class, array field, its count field (C name), its capacity (nvml.h)
FIXED = [
    ("ClkMonStatus", "clk_mon_list", "clkMonListSize", 32),
    ("GridLicensableFeatures", "grid_licensable_features", "licensableFeaturesCount", 3),
    ("BridgeChipHierarchy", "bridge_chip_info", "bridgeCount", 128),
    ("ConfComputeGpuCertificate", "cert_chain", "certChainSize", 0x1000),
    ("ConfComputeGpuCertificate", "attestation_cert_chain", "attestationCertChainSize", 0x1400),
    ("ConfComputeGpuAttestationReport", "attestation_report", "attestationReportSize", 0x2000),
    ("ConfComputeGpuAttestationReport", "cec_attestation_report", "cecAttestationReportSize",
     0x1000),
]

# class, pointer field, its count field (C name), the element class
POINTERS = [
    ("ProcessDetailList_v1", "proc_array", "numProcArrayEntries", "ProcessDetail_v1"),
    ("ProcessesUtilizationInfo_v1", "proc_util_array", "processSamplesCount",
     "ProcessUtilizationInfo_v1"),
    ("VgpuInstancesUtilizationInfo_v1", "vgpu_util_array", "vgpuInstanceCount",
     "VgpuInstanceUtilizationInfo_v1"),
    ("VgpuProcessesUtilizationInfo_v1", "vgpu_proc_util_array", "vgpuProcessCount",
     "VgpuProcessUtilizationInfo_v1"),
]


def snake(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def size_of(cls):
    """sizeof the class's C struct, named by from_buffer's refusal."""
    with pytest.raises(ValueError) as e:
        cls.from_buffer(bytearray())
    return int(re.search(r"must be (\d+) bytes long", str(e.value)).group(1))


def element(cls_name, field, k):
    """An element for field's array: a struct whose first int field is k,
    or the int k."""
    obj = getattr(nvml, cls_name)()
    sample = getattr(obj, field)
    if cls_name == "ClkMonStatus":
        e = nvml.ClkMonFaultInfo()
        e.clk_api_domain = k
        return e
    if cls_name == "GridLicensableFeatures":
        e = nvml.GridLicensableFeature()
        e.feature_state = k
        return e
    if cls_name == "BridgeChipHierarchy":
        e = nvml.BridgeChipInfo()
        e.fw_version = k
        return e
    assert list(sample) == []
    return k


def first_int(e):
    for attr in ("clk_api_domain", "feature_state", "fw_version"):
        if hasattr(e, attr):
            return getattr(e, attr)
    return e


@pytest.mark.parametrize("cls_name, field, count, cap", FIXED)
def test_a_new_struct_has_an_empty_array_and_no_snake_count(cls_name, field, count, cap):
    obj = getattr(nvml, cls_name)()
    # a list, or for records their class's (empty) array (bind_struct_array.h)
    assert len(getattr(obj, field)) == 0 and list(getattr(obj, field)) == []
    assert not hasattr(obj, snake(count))  # cuda.bindings hides it
    assert getattr(obj, count) == 0  # the C name still answers


@pytest.mark.parametrize("cls_name, field, count, cap", FIXED)
def test_setting_the_array_sets_its_elements_and_count(cls_name, field, count, cap):
    obj = getattr(nvml, cls_name)()
    setattr(obj, field, [element(cls_name, field, k) for k in (7, 8, 9)])
    assert getattr(obj, count) == 3
    assert [first_int(e) for e in getattr(obj, field)] == [7, 8, 9]
    # a shorter list: the count follows, the elements past it are zeroed
    setattr(obj, field, [element(cls_name, field, 5)])
    assert getattr(obj, count) == 1
    setattr(obj, count, 3)
    assert [first_int(e) for e in getattr(obj, field)] == [5, 0, 0]


@pytest.mark.parametrize("cls_name, field, count, cap", FIXED)
def test_a_list_longer_than_the_array_is_refused_naming_the_field(cls_name, field, count, cap):
    obj = getattr(nvml, cls_name)()
    setattr(obj, field, [element(cls_name, field, 4)])
    with pytest.raises(ValueError, match=r"\.%s takes at most %d items, not %d"
                       % (re.sub(r"_(\w)", lambda m: m.group(1).upper(), field), cap, cap + 1)):
        setattr(obj, field, [element(cls_name, field, 1)] * (cap + 1))
    assert getattr(obj, count) == 1 and first_int(getattr(obj, field)[0]) == 4  # unchanged


@pytest.mark.parametrize("cls_name, field, count, cap", FIXED)
def test_a_junk_count_from_a_buffer_is_clamped_to_the_array(cls_name, field, count, cap):
    """A count in memory larger than the array (all bytes 0xff) reads as
    the whole array, never past it."""
    cls = getattr(nvml, cls_name)
    buf = bytearray(b"\xff" * size_of(cls))
    obj = cls.from_buffer(buf)
    assert getattr(obj, count) > cap
    assert len(getattr(obj, field)) == cap
    copy = cls.from_ptr(obj.ptr)  # a copy reads the same
    assert len(getattr(copy, field)) == cap


def test_attestation_report_bytes_round_trip():
    r = nvml.ConfComputeGpuAttestationReport()
    assert len(r.nonce) == 32  # an uncounted array: all of it
    r.attestation_report = b"\x01\x02\x03"
    assert list(r.attestation_report) == [1, 2, 3] and r.attestationReportSize == 3
    assert list(r.cec_attestation_report) == []


@pytest.mark.parametrize("cls_name, field, count, elem", POINTERS)
def test_pointer_arrays_keep_their_hidden_count(cls_name, field, count, elem):
    obj = getattr(nvml, cls_name)()
    assert not hasattr(obj, snake(count))
    assert getattr(obj, field) == []  # NULL: empty, as cuda.bindings reads it
    e = [getattr(nvml, elem)() for _ in range(3)]
    setattr(obj, field, e)
    assert getattr(obj, count) == 3 and len(getattr(obj, field)) == 3
    # the library writes back how many it filled: the field reads that many
    setattr(obj, count, 2)
    assert len(getattr(obj, field)) == 2
    # junk larger than the array the object owns: clamped to it
    setattr(obj, count, 0xFFFFFFFF)
    assert len(getattr(obj, field)) == 3
    setattr(obj, field, None)
    assert getattr(obj, count) == 0 and getattr(obj, field) == []
    setattr(obj, field, e[:1])
    assert getattr(obj, count) == 1
    setattr(obj, field, [])
    assert getattr(obj, count) == 0 and getattr(obj, field) == []
    # an address other than NULL reads as itself (the caller's memory)
    setattr(obj, field, 4096)
    assert getattr(obj, field) == 4096


@pytest.mark.parametrize("cls_name, field, count, elem", POINTERS)
def test_a_pointer_array_of_records_reads_as_its_class_array(cls_name, field, count, elem):
    """As cuda.bindings.nvml reads it: the element class's array object
    (`from_ptr(ptr, count)`), viewing the records the field points at, of
    the count the library wrote back; one record reads as one record."""
    obj, E = getattr(nvml, cls_name)(), getattr(nvml, elem)
    setattr(obj, field, [E() for _ in range(3)])
    arr = getattr(obj, field)
    assert type(arr) is E and len(arr) == 3
    assert [r.ptr for r in arr] == [arr.ptr + i * (arr[1].ptr - arr.ptr) for i in range(3)]
    setattr(obj, count, 1)
    one = getattr(obj, field)
    assert type(one) is E and len(one) == 1 and one.ptr == arr.ptr


@pytest.mark.parametrize("cls_name, field, count, elem", POINTERS)
def test_a_pointer_array_of_records_is_set_from_its_class_array(cls_name, field, count, elem):
    """cuda.bindings' setter takes the element class's array: its records
    in place, its length the count; the array lives as long as the field
    points at it."""
    obj, E = getattr(nvml, cls_name)(), getattr(nvml, elem)
    a = E(4)
    setattr(obj, field, a)
    assert getattr(obj, count) == 4
    got = getattr(obj, field)
    assert type(got) is E and len(got) == 4 and got.ptr == a.ptr
    del a, got
    gc.collect()
    assert len(getattr(obj, field)) == 4  # kept by the field
    setattr(obj, field, E(2))
    assert getattr(obj, count) == 2 and len(getattr(obj, field)) == 2


def test_a_pointer_array_of_records_writes_through():
    plist = nvml.ProcessDetailList_v1()
    plist.proc_array = [nvml.ProcessDetail_v1(pid=5), nvml.ProcessDetail_v1(pid=6)]
    arr = plist.proc_array
    arr[1].pid = 9
    assert [r.pid for r in plist.proc_array] == [5, 9]
    other = nvml.ProcessesUtilizationInfo_v1()
    with pytest.raises(TypeError, match="procArray"):
        plist.proc_array = [other]


def test_the_driver_face_keeps_its_counts_the_callers():
    """The driver's field-count pointers (camelCase face) leave the count
    to the caller, as cuda.bindings.driver does."""
    cfg = driver.CUlaunchConfig()
    cfg.attrs = [driver.CUlaunchAttribute(), driver.CUlaunchAttribute()]
    assert cfg.numAttrs == 0 and len(cfg.attrs) == 2


# class, cuda.bindings' name, the C name
UNDERSCORED = [
    ("PciInfo", "device_", "device"),
    ("PciInfoExt_v1", "device_", "device"),
    ("ComputeInstanceInfo", "device_", "device"),
    ("GpuInstanceInfo", "device_", "device"),
    ("EventData", "device_", "device"),
    ("GpuDynamicPstatesInfo", "flags_", "flags"),
    ("RowRemapperHistogramValues", "max_", "max"),
    ("GridLicenseExpiry", "min_", "min"),
    ("VgpuLicenseExpiry", "min_", "min"),
    ("ComputeInstancePlacement", "size_", "size"),
    ("GpuInstancePlacement", "size_", "size"),
]


@pytest.mark.parametrize("cls_name, name, c_name", UNDERSCORED)
def test_fields_cuda_bindings_names_with_an_underscore(cls_name, name, c_name):
    obj = getattr(nvml, cls_name)()
    value = getattr(obj, name)
    if isinstance(value, int):
        setattr(obj, name, 3)
        assert getattr(obj, c_name) == 3  # one field, both names
    else:
        assert getattr(obj, c_name) == value


def test_pointer_arrays_of_ids_take_lists_of_ints():
    """A field-count pointer at unsigned integers (placementIds) takes a
    list of ints and gives its values (a numpy array where numpy imports:
    test_struct_ndarray.py), its count kept; a count whose C name is its
    snake_case name (`count`) is hidden whole, as cuda.bindings hides it.
    A value that is no int or does not fit is refused naming the field."""
    p = nvml.VgpuPlacementList_v1()
    assert not hasattr(p, "count")
    count = ctypes.c_uint.from_address(p.ptr + 8)  # version, placementSize, count
    p.placement_ids = [4, 5, 6]
    assert list(p.placement_ids) == [4, 5, 6] and count.value == 3
    count.value = 1  # what the library writes back
    assert list(p.placement_ids) == [4]
    with pytest.raises(TypeError, match=r"placementIds\[1\] must be int, not str"):
        p.placement_ids = [1, "2"]
    with pytest.raises(OverflowError, match="placementIds"):
        p.placement_ids = [1 << 32]
    with pytest.raises(TypeError, match="placementIds must be a list of ints, an int address"):
        p.placement_ids = 1.5
    assert list(p.placement_ids) == [4]  # unchanged
    p.placement_ids = None
    assert count.value == 0 and p.placement_ids == []
