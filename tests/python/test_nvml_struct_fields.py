# SPDX-License-Identifier: Apache-2.0
"""cubind.nvml's struct parameters taken as their fields and versioned
outputs returned as their one field (gen/nvml.rules: input-fields,
struct-version), as cuda.bindings.nvml has them: the signatures, bad input
naming the parameter before any call, and the values that reach the
library. The library is a test double (tests/fakecuda/fake_nvml.c),
compiled here, that records the struct it was given (its version, its
fields); no driver is needed."""
import inspect

import pytest

from conftest import run_python
from library_common import build_double

# Reads what the double recorded (the library cubind.nvml loaded: the same
# path gives the same handle).
SEEN = """
import ctypes, os
import cubind.nvml as m
lib = ctypes.CDLL(os.environ["CUBIND_LIBNVML"])
seen = (ctypes.c_ulonglong * 4).in_dll(lib, "fake_nvml_seen")
"""


@pytest.fixture(scope="module")
def double(tmp_path_factory):
    return build_double(tmp_path_factory, "fake_nvml.c", "libnvidia-ml.so.1")


def run(double, code):
    r = run_python(SEEN + code, CUBIND_LIBNVML=double)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_signatures_take_the_fields():
    import cubind.nvml as m

    def names(fn):
        return list(inspect.signature(fn).parameters)

    assert names(m.device_set_power_management_limit_v2) == ["device", "power_scope",
                                                              "power_value_mw"]
    assert names(m.device_set_vgpu_heterogeneous_mode) == ["device", "mode"]
    assert names(m.system_set_conf_compute_key_rotation_threshold_info) == [
        "max_attacker_advantage"]
    assert names(m.device_get_conf_compute_gpu_attestation_report) == ["device", "nonce"]
    assert names(m.device_get_vgpu_heterogeneous_mode) == ["device"]
    assert names(m.device_clear_field_values) == ["device", "values"]


def test_bad_input_names_the_parameter_before_the_call():
    """Raised while the arguments are converted, before the library is
    resolved or called."""
    import cubind.nvml as m
    with pytest.raises(TypeError, match=r"argument 'power_scope'"):
        m.device_set_power_management_limit_v2(0, "gpu", 1)
    with pytest.raises(OverflowError, match=r"argument 'power_value_mw'"):
        m.device_set_power_management_limit_v2(0, 0, -1)
    with pytest.raises(TypeError, match=r"missing required argument 'power_value_mw'"):
        m.device_set_power_management_limit_v2(0, 0)
    with pytest.raises(TypeError, match=r"argument 'nonce'"):
        m.device_get_conf_compute_gpu_attestation_report(0, 5)
    with pytest.raises(ValueError, match=r"argument 'nonce'.*32"):
        m.device_get_conf_compute_gpu_attestation_report(0, b"x" * 33)
    with pytest.raises(OverflowError, match=r"argument 'max_attacker_advantage'"):
        m.system_set_conf_compute_key_rotation_threshold_info(-1)


def test_the_fields_reach_the_library_in_a_versioned_struct(double):
    out = run(double, "m.device_set_power_management_limit_v2(0, m.PowerScope.MODULE, 250000)\n"
                      "print(*seen[:3])\n"
                      "m.system_set_conf_compute_key_rotation_threshold_info("
                      "max_attacker_advantage=2**40 + 3)\n"
                      "print(*seen[:2])\n")
    # nvmlPowerValue_v2_t: 12 bytes, version 2; the key rotation threshold's
    # struct: 16 bytes, version 1
    assert out == [str(12 | 2 << 24), "1", "250000", str(16 | 1 << 24), str(2**40 + 3)], out


def test_a_versioned_output_of_one_field_returns_it(double):
    out = run(double, "print(m.device_get_vgpu_heterogeneous_mode(0))\n"
                      "m.device_set_vgpu_heterogeneous_mode(0, 1)\n"
                      "print(*seen[:2])\n"
                      "r = m.device_get_vgpu_heterogeneous_mode(0)\n"
                      "print(r, type(r).__name__)\n")
    assert out == ["7", str(8 | 1 << 24), "1", "1", "int"], out


def test_an_input_arrays_count_is_its_length(double):
    """device_clear_field_values(device, values) passes len(values) as
    valuesCount (the records rule; tests/gen/test_struct_fields.py checks
    the array-lengths rule's count on a header of its own)."""
    out = run(double, "v = [m.nvmlFieldValue_t(), m.nvmlFieldValue_t(), m.nvmlFieldValue_t()]\n"
                      "v[0].fieldId = 42\n"
                      "m.device_clear_field_values(0, v)\n"
                      "ids = (ctypes.c_uint * 3)()\n"
                      "print(lib.fake_nvml_cleared(ids, 3), ids[0])\n")
    assert out == ["3", "42"], out


def test_an_output_struct_takes_its_input_field(double):
    """The nonce is set before the call (bytes shorter than the field fill
    its start) and the report is the struct the library filled."""
    out = run(double, "r = m.device_get_conf_compute_gpu_attestation_report(0, nonce=b'12345678')\n"
                      "print(type(r).__name__, r.attestationReportSize,"
                      " bytes(r.attestationReport[:10]), bytes(r.nonce[:9]))\n")
    assert out == ["nvmlConfComputeGpuAttestationReport_st", "32",
                   repr(b"12345678\0\0"), repr(b"12345678\0")], out


def test_handle_fields_are_plain_ints_as_the_functions_give():
    """int-handles: a struct field of a handle type (nvmlDevice_t,
    nvmlGpuInstance_t) reads and is set as a plain int, as the module's
    functions give and take handles and as cuda.bindings.nvml's fields
    read (they read as handle objects before; found by the GPU field
    sweep of tests/gpu/test_nvml_gpu.py)."""
    import cubind.nvml as nvml
    for cls, field in ((nvml.ComputeInstanceInfo, "device_"), (nvml.ComputeInstanceInfo, "gpu_instance"),
                       (nvml.EventData, "device_")):
        record = cls()
        assert type(getattr(record, field)) is int and getattr(record, field) == 0
        setattr(record, field, 0x1234)
        assert getattr(record, field) == 0x1234
        with pytest.raises(TypeError):
            setattr(record, field, "device")


def test_the_low_power_threshold_reaches_the_library(double):
    """cuda.bindings.nvml's device_set_nvlink_device_low_power_threshold
    (cuda-python's nvml.pyx at 002ce1a)
    never assigns `threshold` to the struct it passes (the library reads
    uninitialised stack); cubind's sets the struct's one field from it."""
    out = run(double, "for t in (1, 0xFFFF, 2**32 - 1):\n"
                      "    m.device_set_nvlink_device_low_power_threshold(0, t)\n"
                      "    print(seen[0])\n")
    assert out == ["1", "65535", str(2**32 - 1)], out
