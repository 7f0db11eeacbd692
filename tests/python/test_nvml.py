# SPDX-License-Identifier: Apache-2.0
"""cubind.nvml (cuda.bindings.nvml's face: snake_case functions keeping
their _v2 / _v3, handles as ints, enums, struct classes named after their
typedefs, NvmlError and its subclass per status) on the NVIDIA driver's
real libnvidia-ml.so.1 without the NVIDIA kernel driver: init_v2 raising
DriverNotLoadedError, every other function raising NvmlError or a
TypeError / ValueError naming its parameter (never crashing), the error
classes, enums and versioned structs, the library search.

The library is the 550 driver's libnvidia-ml.so.1 (CUDA 12.4's driver
branch) from scripts/fetch-cuda-libs.sh 12.4-driver (configure's
cuda_driver_libs; conftest.py points CUBIND_LIBNVML at it); skipped, with
the reason, where none is found. On a machine with an NVIDIA driver the
no-driver tests are skipped: tests/gpu/test_nvml_gpu.py covers that."""
import inspect
import json
import pickle
import re

import pytest

from conftest import ROOT, run_python
from library_common import CallRecorder, bound_functions, library_or_skip
from nvrtc_common import check_missing_library, same_from_threads

call = CallRecorder()  # the functions these tests call (test_every_function_called)

REFERENCE = json.loads((ROOT / "tests" / "data" / "cuda_bindings_nvml_13.3.1.json").read_text())

# nvml.h's nvmlReturn_t values (NVML_ERROR_<X> = value), the facts the
# error classes are checked against: the subclass cuda.bindings.nvml names
# for each.
STATUSES = {1: "UninitializedError", 2: "InvalidArgumentError", 3: "NotSupportedError",
            4: "NoPermissionError", 5: "AlreadyInitializedError", 6: "NotFoundError",
            7: "InsufficientSizeError", 8: "InsufficientPowerError", 9: "DriverNotLoadedError",
            10: "TimeoutError", 11: "IrqIssueError", 12: "LibraryNotFoundError",
            13: "FunctionNotFoundError", 14: "CorruptedInforomError", 15: "GpuIsLostError",
            16: "ResetRequiredError", 17: "OperatingSystemError",
            18: "LibRmVersionMismatchError", 19: "InUseError", 20: "MemoryError",
            21: "NoDataError", 22: "VgpuEccNotSupportedError",
            23: "InsufficientResourcesError", 24: "FreqNotSupportedError",
            25: "ArgumentVersionMismatchError", 26: "DeprecatedError", 27: "NotReadyError",
            28: "GpuNotFoundError", 29: "InvalidStateError", 999: "UnknownError"}


@pytest.fixture(scope="module")
def nvml():
    return library_or_skip("nvml", "libnvidia-ml.so.1")


@pytest.fixture(scope="module")
def no_driver(nvml):
    """nvml, on a machine where nvmlInit_v2 fails for want of the NVIDIA
    kernel driver (CI): its DriverNotLoadedError is what the tests check."""
    try:
        call(nvml, "init_v2")
    except nvml.DriverNotLoadedError:
        return nvml
    call(nvml, "shutdown")
    pytest.skip("an NVIDIA driver is loaded here: tests/gpu/test_nvml_gpu.py")


def test_import_needs_no_library():
    """Importing the module and reading its enums, structs and errors loads
    nothing: the library is resolved at the first call."""
    r = run_python("import cubind.nvml as m\n"
                   "print(m.Return.ERROR_DRIVER_NOT_LOADED == 9, m.Memory_v2().version >> 24,\n"
                   "      issubclass(m.DriverNotLoadedError, m.NvmlError))\n"
                   "print(m._library_status()[0])\n",
                   CUBIND_LIBNVML="/nonexistent/libnvidia-ml.so.1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "2", "True", "False"], r.stdout + r.stderr


def test_init_without_a_driver_raises_driver_not_loaded(no_driver):
    m = no_driver
    with pytest.raises(m.DriverNotLoadedError) as e:
        call(m, "init_v2")
    err = e.value
    assert isinstance(err, m.NvmlError) and isinstance(err, RuntimeError)
    assert err.status == 9 and err.result == m.Return.ERROR_DRIVER_NOT_LOADED
    # cuda.bindings' str(): the library's description alone
    assert str(err) == err.message == call(m, "error_string", 9)
    with pytest.raises(m.DriverNotLoadedError):
        call(m, "init_with_flags", 0)
    # before a successful init every query is UninitializedError
    with pytest.raises(m.UninitializedError) as e:
        call(m, "device_get_count_v2")
    assert e.value.status == 1 and type(e.value).__name__ == "UninitializedError"
    # the exception pickles as its own class with its status
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is m.UninitializedError and again.status == 1


def test_error_classes_per_status(nvml):
    m = nvml
    for status, name in STATUSES.items():
        cls = getattr(m, name)
        assert issubclass(cls, m.NvmlError) and cls is not m.NvmlError, name
        assert cls.__module__ == "cubind.nvml" and cls.__name__ == name
        assert int(getattr(m.Return, "ERROR_" + re.sub(r"(?<!^)([A-Z])", r"_\1",
                                                        name[:-len("Error")]).upper())) == status
    # every error class of cuda.bindings.nvml that 12.4's nvmlReturn_t has
    ref = {c for c, kinds in REFERENCE["classes"].items() if kinds == ["<exception>"]}
    assert ref - {c for c in ref if hasattr(m, c)} == {"ResetTypeNotSupportedError"}
    # the module's MemoryError / TimeoutError are NVML's, not the builtins
    assert m.MemoryError is not MemoryError and not issubclass(m.MemoryError, MemoryError)


def test_error_string(nvml):
    m = nvml
    assert call(m, "error_string", m.Return.ERROR_DRIVER_NOT_LOADED) == "Driver Not Loaded"
    assert isinstance(call(m, "error_string", 0), str)
    with pytest.raises(TypeError, match="'result'"):
        m.error_string("9")


def test_enums_follow_cuda_bindings_names(nvml):
    """Members lose NVML_ (BrandType.BRAND_TESLA), or NVML_ and their
    class's name (ValueType.DOUBLE), as cuda.bindings.nvml names them."""
    m = nvml
    assert int(m.BrandType.BRAND_TESLA) == 2 and int(m.EnableState.FEATURE_ENABLED) == 1
    assert int(m.ValueType.DOUBLE) == 0 and int(m.ClockId.CURRENT) == 0
    assert int(m.EccCounterType.VOLATILE_ECC) == 0 and int(m.EccCounterType.COUNT) == 2
    assert int(m.Pstates.PSTATE_15) == 15 and int(m.GpuP2PStatus.P2P_STATUS_OK) == 0
    same = 0
    for name, members in REFERENCE["enums"].items():
        enum = getattr(m, name, None)
        if enum is not None and {e.name: int(e) for e in enum} == members:
            same += 1
    assert same >= 40  # the rest differ where 12.4's header does (docs/compatibility.md)


def struct_size(cls):
    """sizeof of a struct class, as its docstring states it."""
    return int(re.search(r"(\d+) bytes", cls.__doc__).group(1))


def test_versioned_structs_carry_their_version(nvml):
    """nvmlXxx_vN_t's version is sizeof | N << 24 from the start, as
    cuda.bindings sets it before each call (NVML_STRUCT_VERSION)."""
    m = nvml
    versioned = [name for name in dir(m) if re.fullmatch(r"[A-Z]\w*_v(\d+)", name)
                 and isinstance(getattr(m, name), type) and hasattr(getattr(m, name), "version")]
    assert {"Memory_v2", "PciInfoExt_v1", "ProcessDetailList_v1", "GpuFabricInfo_v2"} <= set(versioned)
    # a _vN struct without a version field (nvmlC2cModeInfo_v1_t) is not versioned
    assert "C2cModeInfo_v1" not in versioned and m.C2cModeInfo_v1().isC2cEnabled == 0
    for name in versioned:
        cls = getattr(m, name)
        n = int(name.rsplit("_v", 1)[1])
        assert cls().version == struct_size(cls) | n << 24, name
    assert m.Memory_v2().version == 40 | 2 << 24
    # a struct without _vN keeps a zero start
    assert m.Memory().total == 0 and not hasattr(m.Memory(), "version")
    # the version is a field like any other: the caller may change it
    s = m.Memory_v2()
    s.version = 1
    assert s.version == 1


def test_struct_classes_are_named_after_their_typedefs(nvml):
    m = nvml
    assert m.Memory_v2 is m.nvmlMemory_v2_t and m.PciInfo is m.nvmlPciInfo_t
    assert m.BAR1Memory is m.nvmlBAR1Memory_t
    assert not hasattr(m, "Memory_st")  # a tag is no typedef


def test_struct_fields_have_cuda_bindings_snake_names(nvml):
    """A field is also its snake_case name, as cuda.bindings' classes name
    it (busId and bus_id are one field), the C name staying."""
    m = nvml
    s = m.C2cModeInfo_v1()
    s.is_c2c_enabled = 1
    assert s.isC2cEnabled == 1 and s.is_c2c_enabled == 1
    assert m.BAR1Memory().bar1_total == 0 and hasattr(m.PciInfo, "pci_device_id")
    have = total = 0
    for name, attrs in REFERENCE["classes"].items():
        cls = getattr(m, name, None)
        if cls is None or attrs == ["<exception>"]:
            continue
        for attr in set(attrs) - {"from_buffer", "from_data", "from_ptr", "ptr"}:
            total += 1
            have += hasattr(cls, attr)
    # every one 12.4's nvml.h has (device_, min_, ...: the field-underscore
    # rules) but Value.us_val, a later header's field
    assert have >= 340 and total - have <= 1, (have, total)


def zero_args(fn):
    return [0 for p in inspect.signature(fn).parameters.values() if p.default is p.empty]


def test_every_function_fails_cleanly_without_a_driver(no_driver):
    """Each function, called with zeros: NvmlError (before init, most say
    UninitializedError) or, for a struct or string parameter, a
    TypeError / ValueError naming it; never a crash."""
    m = no_driver
    raised = {}
    for name in sorted(bound_functions(m)):
        fn = getattr(m, name)
        try:
            call(m, name, *zero_args(fn))
            raised[name] = None
        except m.NvmlError as e:
            raised[name] = type(e).__name__
        except (TypeError, ValueError) as e:
            assert re.search(r"argument '\w+'", str(e)), (name, e)
            raised[name] = "bad input"
    kinds = {k: sum(1 for v in raised.values() if v == k) for k in set(raised.values())}
    assert kinds["UninitializedError"] >= 250, kinds
    # these succeed without init
    assert {n for n, v in raised.items() if v is None} <= {"error_string", "shutdown",
                                                           "system_get_nvml_version"}


def test_bad_input_names_the_parameter(nvml):
    m = nvml
    with pytest.raises(TypeError, match="'index'"):
        m.device_get_handle_by_index_v2("0")
    with pytest.raises(TypeError, match="'device'"):
        m.device_get_memory_info_v2("device")
    with pytest.raises(OverflowError, match="'index'"):
        m.device_get_handle_by_index_v2(-1)
    with pytest.raises(TypeError, match="'serial'"):
        m.device_get_handle_by_serial(1.5)
    with pytest.raises(TypeError, match="'pci_info'"):
        m.device_query_drain_state(m.Memory())
    with pytest.raises(OverflowError, match="'length'"):
        m.device_get_name(0, -1)
    with pytest.raises(OverflowError, match="'count'"):
        m.device_get_supported_memory_clocks(0, -1)
    with pytest.raises(TypeError, match="'type'"):
        m.device_get_clock_info(0, "graphics")


def test_text_and_query_sized_outputs(nvml):
    """chars-length: the length is optional (the binding's 256-byte
    buffer) and the text a str; count-query: a count of 0 asks the library
    first. Without a driver both reach the library, which answers
    UninitializedError, not a ValueError for the length or
    InsufficientSizeError for the count."""
    m = nvml
    assert inspect.signature(m.device_get_name).parameters["length"].default == 0
    # NVML answers its own version without init: the text up to its NUL
    version = call(m, "system_get_nvml_version")
    assert isinstance(version, str) and re.fullmatch(r"\d+\.\d+(\.\d+)*", version), version
    assert call(m, "system_get_nvml_version", 80) == version  # NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE
    with pytest.raises(m.InsufficientSizeError):
        call(m, "system_get_nvml_version", 2)  # a length the caller gives is passed as is
    for name, args in [("device_get_name", (0,)), ("system_get_driver_version", ()),
                       ("device_get_supported_memory_clocks", (0,)),
                       ("device_get_supported_memory_clocks", (0, 0))]:
        try:
            getattr(m, name)(*args)
        except m.DriverNotLoadedError:
            pass
        except m.UninitializedError:
            pass
        except m.NvmlError as e:
            # with a driver: a real answer, or a status other than the size
            assert not isinstance(e, m.InsufficientSizeError), (name, e)


@pytest.mark.tsan
def test_threads_raise_and_describe_the_same(nvml):
    """8 threads at once: each status's description, and on 3.13t the
    import of cubind.nvml kept the GIL off (same_from_threads)."""
    m = nvml

    def describe(i):
        status = sorted(STATUSES)[i]
        try:
            m.device_get_count_v2()  # before init, or with a driver: either way no crash
        except m.NvmlError:
            pass
        return call(m, "error_string", status)

    same_from_threads(describe)


def test_missing_library_is_a_clear_error_and_import_works(tmp_path):
    check_missing_library("nvml", "CUBIND_LIBNVML", "libnvidia-ml.so.99", "NvmlError",
                          "init_v2", tmp_path)


def test_every_function_called(nvml):
    """Runs last in this file: every function of the module was called
    above (the list comes from the module, not from this file)."""
    call.check_all_called(nvml, 325)


def test_char_array_fields_are_text(nvml):
    """A struct's char array reads as a str up to its first NUL and takes a
    str or bytes, as cuda.bindings.nvml's fields do (PciInfo.bus_id) and as
    the module's char * outputs are (the chars-length rule)."""
    p = nvml.nvmlPciInfo_t()
    assert p.bus_id == "" and p.busId == ""
    p.bus_id = "0000:01:00.0"
    assert p.busId == "0000:01:00.0"
    p.busId = b"ab"
    assert p.bus_id == "ab"
    with pytest.raises(ValueError, match="busId takes at most 32 bytes"):
        p.bus_id = "x" * 33
    assert p.bus_id == "ab"  # a refused value leaves the field as it was
    # bytes that are no UTF-8 read as replacement characters, never an error
    p.busId = b"\xff\xfe"
    assert p.bus_id == "\ufffd\ufffd"
