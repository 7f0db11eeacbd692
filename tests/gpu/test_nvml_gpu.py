# SPDX-License-Identifier: Apache-2.0
"""cubind.nvml on a machine with the NVIDIA driver (issue 46): NVML's
device queries (count, handle, name, UUID, serial, memory, utilization,
temperature, clocks, PCI info, power, running processes) answer sanely,
and agree with cuda.bindings.nvml's answers on the same GPU where
cuda.bindings is importable (skipped, with the reason, where it is not).
The count-query and chars-length rules are exercised for real here: the
arrays NVML sizes and the text outputs without a length. Never run in CI:
scripts/gpu-run nvrtc runs it."""
import importlib
import inspect
import re
import subprocess
import sys
import threading

import pytest

# built where the toolkit has nvml.h (docs/building.md): skipped, saying so, where not
nvml = pytest.importorskip("cubind.nvml")

try:
    ref = importlib.import_module("cuda.bindings.nvml")
except ImportError:  # an older cuda.bindings, or none
    ref = None


@pytest.fixture(scope="module")
def handle():
    nvml.init_v2()
    assert nvml.device_get_count_v2() >= 1
    yield nvml.device_get_handle_by_index_v2(0)
    nvml.shutdown()


@pytest.fixture(scope="module")
def theirs():
    """cuda.bindings.nvml's handle of device 0, initialized."""
    if ref is None:
        pytest.skip("cuda.bindings.nvml is not importable")
    ref.init_v2()
    yield ref.device_get_handle_by_index_v2(0)
    ref.shutdown()


def test_count_handles_and_text(handle):
    count = nvml.device_get_count_v2()
    handles = [nvml.device_get_handle_by_index_v2(i) for i in range(count)]
    assert handles[0] == handle and len(set(handles)) == count
    assert [nvml.device_get_index(h) for h in handles] == list(range(count))
    name = nvml.device_get_name(handle)
    assert isinstance(name, str) and name and "\0" not in name
    uuid = nvml.device_get_uuid(handle)
    assert re.fullmatch(r"GPU-[0-9a-f-]{36}", uuid), uuid
    assert nvml.device_get_handle_by_uuid(uuid) == handle
    assert re.fullmatch(r"\d+\.\d+(\.\d+)*", nvml.system_get_driver_version())
    assert nvml.system_get_cuda_driver_version() >= 12000
    major, minor = nvml.device_get_cuda_compute_capability(handle)
    assert major >= 7 and minor >= 0
    with pytest.raises(nvml.InvalidArgumentError) as e:
        nvml.device_get_handle_by_index_v2(count + 1000)
    assert e.value.status == 2


def test_memory(handle):
    mem = nvml.device_get_memory_info_v2(handle)
    assert mem.version == 40 | 2 << 24  # set before the call: NVML accepted it
    assert mem.total > 0 and mem.used + mem.free <= mem.total
    old = nvml.device_get_memory_info(handle)
    assert old.total == mem.total
    bar1 = nvml.device_get_bar1_memory_info(handle)
    assert bar1.bar1Total > 0


def test_utilization_temperature_power(handle):
    util = nvml.device_get_utilization_rates(handle)
    assert 0 <= util.gpu <= 100 and 0 <= util.memory <= 100
    temp = nvml.device_get_temperature(handle, nvml.TemperatureSensors.TEMPERATURE_GPU)
    assert 0 < temp < 120
    slowdown = nvml.device_get_temperature_threshold(
        handle, nvml.TemperatureThresholds.TEMPERATURE_THRESHOLD_SLOWDOWN)
    assert temp < slowdown < 150
    assert nvml.device_get_power_usage(handle) > 0  # milliwatts
    assert nvml.device_get_performance_state(handle) in set(nvml.Pstates)


def test_clocks(handle):
    for clock in (nvml.ClockType.CLOCK_SM, nvml.ClockType.CLOCK_MEM):
        now = nvml.device_get_clock_info(handle, clock)
        top = nvml.device_get_max_clock_info(handle, clock)
        assert 0 < now <= top, (clock, now, top)
    memory_clocks = nvml.device_get_supported_memory_clocks(handle)  # count-query: the list
    assert isinstance(memory_clocks, list) and len(memory_clocks) >= 1
    assert all(c > 0 for c in memory_clocks)
    graphics = nvml.device_get_supported_graphics_clocks(handle, memory_clocks[0])
    assert isinstance(graphics, list) and len(graphics) >= 1
    # a count given is the array's length: too small is NVML's own answer
    if len(graphics) > 1:
        with pytest.raises(nvml.InsufficientSizeError):
            nvml.device_get_supported_graphics_clocks(handle, memory_clocks[0], 1)


def test_pci_info(handle):
    pci = nvml.device_get_pci_info_v3(handle)
    bus_id = pci.bus_id  # text: the characters up to the NUL
    assert re.fullmatch(r"[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d", bus_id), bus_id
    assert nvml.device_get_handle_by_pci_bus_id_v2(bus_id) == handle
    assert pci.pciDeviceId >> 16 and (pci.pciDeviceId & 0xFFFF) == 0x10DE  # NVIDIA's vendor id


def test_processes(handle):
    procs = nvml.device_get_compute_running_processes_v3(handle)  # count-query: the list
    assert isinstance(procs, list)
    for p in procs:
        assert p.pid > 0


def test_threads_agree(handle):
    """8 threads query at once: the same answers (and no crash)."""
    expected = (nvml.device_get_name(handle), nvml.device_get_memory_info_v2(handle).total)
    results, barrier = [], threading.Barrier(8)

    def worker():
        barrier.wait()
        for _ in range(50):
            results.append((nvml.device_get_name(handle),
                            nvml.device_get_memory_info_v2(handle).total))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 400


def test_agrees_with_cuda_bindings(handle, theirs):
    """The same questions to cuda.bindings.nvml on the same GPU."""
    assert nvml.device_get_count_v2() == ref.device_get_count_v2()
    assert nvml.device_get_name(handle) == ref.device_get_name(theirs)
    assert nvml.device_get_uuid(handle) == ref.device_get_uuid(theirs)
    if _answers(ref.device_get_serial, theirs):
        assert nvml.device_get_serial(handle) == ref.device_get_serial(theirs)
    assert nvml.system_get_driver_version() == ref.system_get_driver_version()
    assert nvml.system_get_nvml_version() == ref.system_get_nvml_version()
    assert nvml.device_get_memory_info_v2(handle).total == ref.device_get_memory_info_v2(theirs).total
    assert nvml.device_get_pci_info_v3(handle).bus_id == \
        ref.device_get_pci_info_v3(theirs).bus_id
    assert nvml.device_get_max_clock_info(handle, nvml.ClockType.CLOCK_SM) == \
        ref.device_get_max_clock_info(theirs, int(nvml.ClockType.CLOCK_SM))
    assert nvml.device_get_supported_memory_clocks(handle) == \
        list(ref.device_get_supported_memory_clocks(theirs))
    assert nvml.device_get_cuda_compute_capability(handle) == \
        tuple(ref.device_get_cuda_compute_capability(theirs))
    ours = {p.pid for p in nvml.device_get_compute_running_processes_v3(handle)}
    assert ours == {int(p.pid) for p in _processes(ref.device_get_compute_running_processes_v3(theirs))}
    # one status, each library's class of the same name
    with pytest.raises(nvml.InvalidArgumentError):
        nvml.device_get_handle_by_index_v2(10**6)
    with pytest.raises(ref.InvalidArgumentError):
        ref.device_get_handle_by_index_v2(10**6)


# cuda.bindings.nvml's answer, in a child process: its
# device_get_gsp_firmware_version (13.3.1) ended the test process with a
# segmentation fault on an H100 with the 13.0 driver
# (results/gpu/nvrtc-gpu-h100-3cf7412-lib13.log.gz).
GSP_THEIRS = """
import cuda.bindings.nvml as ref
ref.init_v2()
try:
    print(repr(ref.device_get_gsp_firmware_version(ref.device_get_handle_by_index_v2(0))))
except Exception as e:
    print(type(e).__name__)
"""


def test_gsp_firmware_version(handle):
    """A text rule's output without a size parameter (the GSP firmware
    version, which NVML writes in at most 64 bytes): a str, or the
    library's NotSupportedError; cuda.bindings' answer where its call
    does not crash."""
    try:
        ours = nvml.device_get_gsp_firmware_version(handle)
    except nvml.NotSupportedError:
        ours = "NotSupportedError"
    else:
        assert isinstance(ours, str) and 0 < len(ours) < 64 and "\0" not in ours, ours
    if ref is None:
        return
    r = subprocess.run([sys.executable, "-c", GSP_THEIRS], capture_output=True, text=True,
                       timeout=120)
    if r.returncode < 0:  # cuda.bindings' crash, recorded in the log
        print("cuda.bindings.nvml.device_get_gsp_firmware_version: signal %d" % -r.returncode)
        return
    assert r.returncode == 0, r.stderr
    theirs_answer = r.stdout.strip()
    assert theirs_answer in (repr(ours), ours), (theirs_answer, ours)


def _answers(fn, *args):
    """Whether fn(*args) answers (a GPU may have no serial: NotSupported)."""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - cuda.bindings' NotSupportedError and kin
        return False
    return True


def _processes(arr):
    """cuda.bindings' ProcessInfo array as a list of records."""
    return [arr[i] for i in range(len(arr))]


def _or_unsupported(fn, *args):
    """fn(*args), or "NotSupported" where this GPU or driver has no answer."""
    try:
        return fn(*args)
    except (nvml.NotSupportedError, nvml.FunctionNotFoundError, nvml.NoPermissionError):
        return "NotSupported"


def test_versioned_struct_fields_and_returns(handle):
    """Struct parameters taken as their fields, one-field versioned
    outputs returned as the field (gen/nvml.rules: input-fields,
    struct-version), on the real library; cuda.bindings.nvml's answers
    where importable. The functions a 12.4-generated module lacks are
    skipped one by one."""
    checks = 0
    if hasattr(nvml, "device_get_capabilities"):
        caps = _or_unsupported(nvml.device_get_capabilities, handle)
        assert caps == "NotSupported" or isinstance(caps, int), caps
        checks += 1
    if hasattr(nvml, "device_get_pdi"):
        pdi = _or_unsupported(nvml.device_get_pdi, handle)
        assert pdi == "NotSupported" or isinstance(pdi, int), pdi
        checks += 1
    for name in ("device_get_performance_modes", "device_get_current_clock_freqs"):
        if hasattr(nvml, name):
            text = _or_unsupported(getattr(nvml, name), handle)
            assert isinstance(text, str) and "\0" not in text, (name, text)
            checks += 1
    if hasattr(nvml, "device_get_handle_by_uuidv"):
        uuid = nvml.device_get_uuid(handle)
        found = nvml.device_get_handle_by_uuidv(nvml.UUIDType.ASCII, uuid.encode("ascii"))
        assert found == handle
        checks += 1
    # the power limit: setting needs root; either way the struct reached NVML
    # with its version (no ArgumentVersionMismatchError)
    limit = _or_unsupported(nvml.device_get_power_management_limit, handle)
    if limit != "NotSupported":
        try:
            nvml.device_set_power_management_limit_v2(handle, nvml.PowerScope.GPU, limit)
        except (nvml.NoPermissionError, nvml.NotSupportedError, nvml.InvalidArgumentError):
            pass
        checks += 1
    # a made-up nonce: NVML answers UnknownError on a GPU that attests (as
    # cuda-python's own test expects), NotSupported on one that does not;
    # either way the call reached it with the nonce (the argument checked)
    try:
        report = _or_unsupported(nvml.device_get_conf_compute_gpu_attestation_report, handle,
                                 b"12345678")
    except nvml.UnknownError:
        report = "UnknownError"
    assert report in ("NotSupported", "UnknownError") or \
        list(report.nonce[:8]) == list(b"12345678"), report
    assert checks >= 1
    if ref is not None and hasattr(nvml, "device_get_performance_modes") \
            and hasattr(ref, "device_get_performance_modes"):
        ref.init_v2()
        try:
            theirs_handle = ref.device_get_handle_by_index_v2(0)
            ours = _or_unsupported(nvml.device_get_performance_modes, handle)
            if ours != "NotSupported":
                assert ours == ref.device_get_performance_modes(theirs_handle)
        finally:
            ref.shutdown()


# A process with a CUDA context on device 0 and memory there (cubind.driver),
# which NVML lists among the GPU's running processes.
HOLDER = """
import sys, time
import cubind.driver as d
assert d.cuInit(0)[0] == 0
err, ctx = d.cuDevicePrimaryCtxRetain(0)
assert err == 0 and d.cuCtxSetCurrent(ctx)[0] == 0
err, p = d.cuMemAlloc(64 << 20)
assert err == 0
print("ready", flush=True)
sys.stdin.read()
"""


def test_filled_arrays(handle):
    """The arrays NVML sizes inside an output struct (the field-count-query
    rules): the count asked first, then the array filled. A process
    holding a context is listed by device_get_running_process_detail_list
    as by device_get_compute_running_processes_v3, and as by
    cuda.bindings.nvml where importable; the utilization and vGPU
    placement lists answer their ids or the library's status."""
    if not hasattr(nvml, "device_get_running_process_detail_list"):
        pytest.skip("this cubind.nvml has no device_get_running_process_detail_list")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        plist = _or_unsupported(nvml.device_get_running_process_detail_list, handle, 0)
        if plist == "NotSupported":
            pytest.skip("NVML has no process detail list here")
        detail = {(p.pid, p.used_gpu_memory) for p in plist.proc_array}
        assert len(detail) == len(plist.proc_array) >= 1, detail
        listed = {(p.pid, p.usedGpuMemory)
                  for p in nvml.device_get_compute_running_processes_v3(handle)}
        assert {pid for pid, _ in detail} == {pid for pid, _ in listed}, (detail, listed)
        if ref is not None:
            ref.init_v2()
            try:
                theirs = ref.device_get_running_process_detail_list(
                    ref.device_get_handle_by_index_v2(0), 0)
                assert {int(p.pid) for p in _processes(theirs.proc_array)} == \
                    {pid for pid, _ in detail}
            finally:
                ref.shutdown()
        try:  # no samples yet: NotFound
            util = _or_unsupported(nvml.device_get_processes_utilization_info, handle, 0)
        except nvml.NotFoundError:
            util = "NotSupported"
        assert util == "NotSupported" or util.proc_util_array == [] or \
            type(util.proc_util_array) is nvml.ProcessUtilizationInfo_v1, util
        for name in ("device_get_vgpu_type_supported_placements",
                     "device_get_vgpu_type_creatable_placements"):
            fn = getattr(nvml, name)
            # a 13.0 header's placement list has a mode (VgpuPlacementList_v2),
            # an input as in cuda.bindings: (device, vgpu_type_id, mode)
            args = (handle, 1, 0)[:len(inspect.signature(fn).parameters)]
            try:
                got = fn(*args)
            except (nvml.NotSupportedError, nvml.InvalidArgumentError, nvml.NotFoundError):
                continue
            ids = got.placement_ids  # NULL: []; else a numpy array (numpy is here)
            assert ids == [] if isinstance(ids, list) else type(ids).__name__ == "ndarray", \
                (name, ids)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_numeric_arrays_are_numpy_arrays_as_cuda_bindings():
    """A record's fixed numeric array and a numeric field of an array of
    records read as numpy arrays of the same dtype and shape as
    cuda.bindings.nvml's (runtime/module/bind_ndarray.h); cuda-python's
    own test_conf_compute_attestation_report_t reads nonce.dtype."""
    np = pytest.importorskip("numpy")
    if ref is None:
        pytest.skip("cuda.bindings.nvml is not importable")
    for mine, theirs in ((nvml.ConfComputeGpuAttestationReport().nonce,
                          ref.ConfComputeGpuAttestationReport().nonce),
                         (nvml.FieldValue(3).field_id, ref.FieldValue(3).field_id)):
        assert isinstance(mine, np.ndarray) and isinstance(theirs, np.ndarray)
        assert (mine.dtype, mine.shape) == (theirs.dtype, theirs.shape)
    assert nvml.ConfComputeGpuAttestationReport().nonce.dtype == np.uint8


def _shape_of(value, np):
    """What a field read gives, as the two modules are compared: a numpy
    array's dtype and shape, else the value's kind."""
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape)
    if isinstance(value, (list, tuple)):
        return ("list", len(value))
    return (type(value).__mro__[-2].__name__ if isinstance(value, int) else "other",)


def _read_shape(obj, field, np):
    """_shape_of the field's value, or the name of what reading it raised."""
    try:
        return _shape_of(getattr(obj, field), np)
    except Exception as e:  # noqa: BLE001 - a kind to compare like the others
        return ("raised", type(e).__name__)


def _both_empty(sa, sb):
    """A counted array whose count is 0 in both: cubind's is empty of the
    field's dtype, cuda.bindings' of numpy's default float64 (listed in
    docs/compatibility.md as a difference, not a wrong dtype)."""
    return sa[0] == sb[0] == "ndarray" and sa[2] == sb[2] == (0,)


@pytest.mark.parametrize("records", [1, 2])
def test_every_field_read_beside_cuda_bindings(records):
    """Every field of every class both modules have, read from T(records)
    in both: where cubind gives a numpy array, cuda.bindings gives one of
    the same dtype and shape (or both are empty). The fields whose kind differs (a list where
    cuda.bindings has an array: enums, handles, text of an array of
    records) are printed, for docs/compatibility.md, not asserted."""
    np = pytest.importorskip("numpy")
    if ref is None:
        pytest.skip("cuda.bindings.nvml is not importable")
    compared, differ, wrong = 0, [], []
    for name in sorted(set(dir(nvml)) & set(dir(ref))):
        mine_cls, their_cls = getattr(nvml, name), getattr(ref, name)
        if not (isinstance(mine_cls, type) and isinstance(their_cls, type)) or \
                issubclass(mine_cls, (BaseException, int)):
            continue
        try:
            mine, theirs = mine_cls(records), their_cls(records)
        except Exception:  # noqa: BLE001 - cuda.bindings' classes of one record take no size
            try:
                if records != 1:
                    continue
                mine, theirs = mine_cls(), their_cls()
            except Exception:  # noqa: BLE001 - no records at all (an enum, a handle)
                continue
        fields = [f for f in dir(mine) if not f.startswith("_") and f in dir(theirs)
                  and not callable(getattr(mine, f, None))]
        for f in fields:
            sa, sb = (_read_shape(obj, f, np) for obj in (mine, theirs))
            compared += 1
            if sa[0] == "ndarray" and sa != sb and not _both_empty(sa, sb):
                wrong.append((name, f, sa, sb))
            elif sa != sb:
                differ.append((name, f, sa, sb))
    print("compared %d fields of T(%d); kinds that differ: %d" % (compared, records, len(differ)))
    for row in differ:
        print("  differ: %s.%s cubind %s cuda.bindings %s" % row)
    assert compared > 100
    assert not wrong, wrong


# One process's system event wait (test_system_event_set_wait_...): NVML
# allows one registration of system events per process, so each module
# waits in a process of its own. Prints the outcome: the error's class
# name, or "records N".
EVENT_WAIT = """
import importlib, sys
m = importlib.import_module(sys.argv[1])
m.init_v2()
s = m.system_event_set_create()
try:
    m.system_register_events(3, s)
    got = m.system_event_set_wait(s, 1, 4)
    print("records", len(got))
except Exception as e:
    print(type(e).__name__)
finally:
    m.system_event_set_free(s)
if sys.argv[1] == "cubind.nvml":
    for size, error in ((0, ValueError), (-1, OverflowError)):
        try:
            m.system_event_set_wait(0, 1, size)
            print("accepted", size)
        except error as e:
            assert "'buffer_size'" in str(e), e
"""


def test_system_event_set_wait_as_cuda_bindings(handle):
    """system_event_set_wait(event_set, timeout_ms, buffer_size) of 13.0's
    nvml.h (cuda.core.system's RegisteredSystemEvents.wait calls it): the
    binding makes the request's array of buffer_size records and returns
    the numEvent the library wrote (input-fields' room, output-field's
    COUNT). Each module in a process of its own registers the driver's
    bind and unbind events (bits 1 and 2) on a new set and waits 1 ms for
    4: the same outcome (its error's class name, or the same count of
    records). buffer_size 0 is a ValueError and -1 an OverflowError naming
    it, before any call."""
    if not hasattr(nvml, "system_event_set_wait"):
        pytest.skip("built from an nvml.h without nvmlSystemEventSetWait (12.4's)")
    names = ["cubind.nvml"] + (["cuda.bindings.nvml"] if ref is not None else [])
    outcomes = []
    for name in names:
        p = subprocess.run([sys.executable, "-c", EVENT_WAIT, name], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, (name, p.stderr)
        outcomes.append(p.stdout.strip())
    print("system_event_set_wait outcomes:", dict(zip(names, outcomes)))
    assert "accepted" not in outcomes[0], outcomes
    assert len(set(outcomes)) == 1, outcomes
