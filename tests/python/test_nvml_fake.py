# SPDX-License-Identifier: Apache-2.0
"""cubind.nvml against a test double of libnvidia-ml (tests/fakecuda/
fake_nvml.c, compiled here): what the binding hands the library, checked
without an NVIDIA driver.

Arrays the caller sizes: nvmlDeviceGetMemoryAffinity(device, nodeSetSize,
nodeSet, scope) fills nodeSetSize unsigned longs (the `count-stem` rule
pairs <stem>Size with <stem>). cubind once bound nodeSet as one output
integer, so the library wrote nodeSetSize entries over an 8-byte local: the
process aborted on the GPU machine with cuda-python's own test (size
1024). Now the binding allocates the array and returns all of it, as
cuda.bindings does.

Arrays the library sizes inside an output struct (procArray of
nvmlProcessDetailList_v1_t, ...: the field-count-query rules): the call
with the array NULL and its count 0 first, then with an array of the
count it answered, the struct returned filled; the double logs what each
call was given."""
import json

import pytest

from conftest import run_python
from library_common import build_double


@pytest.fixture(scope="module")
def double(tmp_path_factory):
    return build_double(tmp_path_factory, "fake_nvml.c", "libnvidia-ml.so.1")


def run(double, code):
    r = run_python("import cubind.nvml as nvml\n" + code, CUBIND_LIBNVML=double)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r.stdout


@pytest.mark.parametrize("call, scope", [
    ("nvml.device_get_memory_affinity(0, %d, nvml.AffinityScope.SOCKET)", 1),
    ("nvml.device_get_cpu_affinity_within_scope(0, %d, nvml.AffinityScope.NODE)", 0),
    ("nvml.device_get_cpu_affinity(0, %d)", 0),
])
def test_caller_sized_arrays_come_back_whole(double, call, scope):
    for size in (1, 3, 1024):
        out = run(double, "print(list(%s))" % (call % size))
        assert eval(out) == [i * 3 + 1 + scope for i in range(size)], (size, out[:200])


def test_a_size_of_zero_is_the_library_error_and_a_huge_one_is_refused(double):
    out = run(double, """
try:
    nvml.device_get_memory_affinity(0, 0, 0)
except nvml.InvalidArgumentError as e:
    print("raised", type(e).__name__)
try:
    nvml.device_get_memory_affinity(0, 2**32, 0)
except (OverflowError, ValueError) as e:
    print("refused", type(e).__name__, "node_set_size" in str(e))
try:
    nvml.device_get_cpu_affinity(0, 2**31)
except MemoryError as e:
    print("memory", "cpu_set_size" in str(e))
""")
    lines = out.split("\n")
    assert lines[0] == "raised InvalidArgumentError", out
    assert lines[1].startswith("refused") and lines[1].endswith("True"), out
    assert lines[2] == "memory True", out


FIELD_VALUES = """
import ctypes
fake = ctypes.CDLL(%r)
"""


def test_field_values_take_an_array_or_field_ids_and_come_back_answered(double):
    # cuda-python's own test: FieldValue(1) with field_id set, or a list of ids
    out = run(double, FIELD_VALUES % double + """
fields = nvml.FieldValue(1)
fields[0].field_id = 4
got = nvml.device_get_field_values(0, fields)
print(got is fields, int(got[0].nvml_return), got[0].value.ui_val)
got = nvml.device_get_field_values(0, [6, 7, nvml.FieldValue(field_id=8)])
print(len(got), [int(v.nvml_return) for v in got], [v.value.ui_val for v in got], [int(t) for t in got.timestamp])
""")
    first, second = out.strip().split("\n")
    assert first == "True 0 40", out
    assert second == "3 [0, 3, 0] [60, 0, 80] [0, 1, 2]", out


def test_clear_field_values_reads_the_records_and_returns_nothing(double):
    out = run(double, FIELD_VALUES % double + """
print(nvml.device_clear_field_values(0, [11, 12, 13]))
ids = (ctypes.c_uint * 4)()
print(fake.fake_nvml_cleared(ids, 4), list(ids)[:3])
""")
    assert out.split("\n")[:2] == ["None", "3 [11, 12, 13]"], out


def test_field_values_refuse_what_is_no_record_naming_the_parameter(double):
    out = run(double, """
for bad in ([], "ab", [1.5], [nvml.PciInfo()], 5, [2**40]):
    try:
        nvml.device_get_field_values(0, bad)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, "'values'" in str(e))
""")
    assert out.split("\n")[:6] == ["ValueError True", "TypeError True", "TypeError True",
                                   "TypeError True", "TypeError True", "ValueError True"], out


def test_supported_performance_states_pass_their_array_and_its_bytes(double):
    """nvmlDeviceGetSupportedPerformanceStates(device, pstates, size): the
    binding passes its 16-entry array and its size in bytes (the fixed and
    struct-size rules), and takes the device alone, as cuda.bindings. It
    took (device, size) and passed one 4-byte output with that size."""
    out = run(double, FIELD_VALUES % double + """
import inspect
print(list(inspect.signature(nvml.device_get_supported_performance_states).parameters))
states = nvml.device_get_supported_performance_states(0)
print(len(states), [int(s) for s in states[:4]], fake.fake_nvml_pstates_size())
""")
    lines = out.strip().split("\n")
    assert lines[0] == "['device']", out
    assert lines[1] == "16 [0, 2, 8, 32] 64", out


# Arrays the library fills and sizes (the field-count-query rules of
# gen/nvml.rules): the output struct's array NULL and its count 0 first,
# which answers the count, then an array of that many, as cuda.bindings.nvml
# fills them. Until the rules, cubind made the first call only: the test
# double's answer, insufficient size, raised InsufficientSizeError.
FILLED = """
import ctypes, gc, json
fake = ctypes.CDLL(%r)


def entries(n, grow=0, times=0, fail_at=0, status=0):
    fake.fake_nvml_entries(n, grow, times, fail_at, status)


def calls():
    '''What each call since entries() was given: (count, array NULL).'''
    counts, nulls = (ctypes.c_uint * 16)(), (ctypes.c_int * 16)()
    n = fake.fake_nvml_fill_log(counts, nulls, 16)
    return [[counts[i], bool(nulls[i])] for i in range(min(n, 16))]
"""

# The function (its call), the array field, what is read of each entry e
# (placement_ids: a numpy array's uint32 where numpy imports) and what
# entry i holds (tests/fakecuda/fake_nvml.c says why).
FILLERS = [
    ("nvml.device_get_running_process_detail_list(0, 5)", "proc_array",
     "[e.pid, e.used_gpu_memory, e.gpu_instance_id]", lambda i: [1000 + i, (i + 1) << 20, 5]),
    ("nvml.device_get_processes_utilization_info(0, 100)", "proc_util_array",
     "[e.pid, e.time_stamp, e.sm_util]", lambda i: [2000 + i, 101 + i, 10 * i]),
    ("nvml.device_get_vgpu_instances_utilization_info(0)", "vgpu_util_array",
     "[e.vgpu_instance, e.sm_util.d_val]", lambda i: [3000 + i, i + 0.5]),
    ("nvml.device_get_vgpu_processes_utilization_info(0, 10)", "vgpu_proc_util_array",
     "[e.process_name, e.pid, e.time_stamp]", lambda i: ["vm-proc-%d" % i, 4000 + i, 11 + i]),
    ("nvml.device_get_vgpu_type_supported_placements(0, 7)", "placement_ids", "int(e)",
     lambda i: 700 + 2 * i),
    ("nvml.device_get_vgpu_type_creatable_placements(0, 7)", "placement_ids", "int(e)",
     lambda i: 701 + 2 * i),
]


def values(call, field, entry):
    """Code printing what the call's array reads as, and the call log."""
    return """
got = %s
print(json.dumps([[%s for e in got.%s], calls()]))
""" % (call, entry, field)


@pytest.mark.parametrize("call, field, entry, expect", FILLERS)
def test_filled_arrays_come_back_filled(double, call, field, entry, expect):
    """The count asked with the array NULL, then the array of that many
    filled; the values read back through the struct (its input fields
    reached the library: the mode, the timestamp, the vGPU type)."""
    out = run(double, FILLED % double + "entries(3)\n" + values(call, field, entry))
    got, log = json.loads(out)
    assert got == [expect(i) for i in range(3)], out
    assert log == [[0, True], [3, False]], out


@pytest.mark.parametrize("call, field, entry, expect", FILLERS)
def test_none_to_fill_is_one_call_and_an_empty_array(double, call, field, entry, expect):
    """A count of 0 after the first call (which succeeds): the struct with
    its array empty, no second call, as cuda.bindings returns it."""
    out = run(double, FILLED % double + "entries(0)\n" + values(call, field, entry))
    assert json.loads(out) == [[], [[0, True]]], out


def test_a_count_that_grows_between_the_calls_is_asked_again(double):
    """The library answers the second call with a larger count (a process
    started meanwhile): a larger array, a third call, all of them back."""
    call, field, entry, expect = FILLERS[0]
    out = run(double, FILLED % double + "entries(2, grow=3, times=1)\n" + values(call, field, entry))
    got, log = json.loads(out)
    assert got == [expect(i) for i in range(5)], out
    assert log == [[0, True], [2, False], [5, False]], out


def test_a_count_that_keeps_growing_raises_insufficient_size(double):
    """A count larger at every call: CBS_FILL_TRIES (4) calls with an array
    after the first, then the library's status is the call's."""
    out = run(double, FILLED % double + """
entries(1, grow=1, times=100)
try:
    nvml.device_get_processes_utilization_info(0, 0)
except nvml.InsufficientSizeError as e:
    print(json.dumps([type(e).__name__, int(e.status), calls()]))
""")
    name, status, log = json.loads(out)
    assert (name, status) == ("InsufficientSizeError", 7), out
    assert log == [[0, True], [1, False], [2, False], [3, False], [4, False]], out


@pytest.mark.parametrize("fail_at, expect", [(1, "NotSupportedError"), (2, "UnknownError")])
def test_a_failed_call_raises_the_library_error(double, fail_at, expect):
    """Another status than success or insufficient size, at the first call
    (nothing allocated) or the second, raises its class at once."""
    status = {"NotSupportedError": 3, "UnknownError": 999}[expect]
    out = run(double, FILLED % double + """
entries(3, fail_at=%d, status=%d)
try:
    nvml.device_get_running_process_detail_list(0, 1)
except nvml.NvmlError as e:
    print(json.dumps([type(e).__name__, calls()]))
""" % (fail_at, status))
    name, log = json.loads(out)
    assert name == expect, out
    assert log == [[0, True], [3, False]][:fail_at], out


def test_a_filled_array_lives_as_long_as_what_reads_it(double):
    """The array belongs to the struct object; a record read from it keeps
    it alive after the struct is gone."""
    out = run(double, FILLED % double + """
entries(2)
records = nvml.device_get_running_process_detail_list(0, 9).proc_array
gc.collect()
reuse = [bytearray(64) for _ in range(1000)]  # what would take freed memory
print(json.dumps([[r.pid, r.gpu_instance_id] for r in records]))
""")
    assert json.loads(out) == [[1000, 9], [1001, 9]], out
