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
cuda.bindings does."""
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
