# SPDX-License-Identifier: Apache-2.0
"""The conversion differential's runtime, nvvm and nvfatbin targets
(tools/compare_conversions.py with tools/conversions_runtime.py and
tools/conversions_libraries.py), run on cubind with the fake driver:

- the record covers every field of every struct and union class of
  cubind.runtime, every handle and enum constructor, the makers and dim3;
- the runtime's functions, which need a device, are left out and the
  record says why (the GPU run, `scripts/gpu-run conversions`, makes them);
- the values that arrive are those cuda.bindings.runtime's Cython
  conversions give (its setters and makers are typed `size_t`,
  `unsigned int`, an enum field converts with `int()` and refuses None, a
  nested struct field takes that struct class only);
- every function the allowlist and its setup call exists in cuda-bindings
  13.3.1 (tests/data/cuda_bindings_*_13.3.1.json) with the parameter the
  target names, so the GPU run measures what the record says."""
import ctypes
import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(TOOLS))
import compare_conversions as cc  # noqa: E402
import conversions_explain as ce  # noqa: E402


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    out = tmp_path_factory.mktemp("conv") / "cubind.json"
    # a fresh interpreter: the tool forks
    proc = subprocess.run([sys.executable, str(TOOLS / "compare_conversions.py"), "--impl", "cubind",
                           "--only", "runtime:", "--only", "nvvm:", "--only", "nvfatbin:",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return cc.load(out)


def results(record, target):
    for t in record["targets"]:
        if t["target"] == target:
            return t["results"]
    raise AssertionError("no target %s in the record" % target)


def reference(name):
    return json.loads((DATA / ("cuda_bindings_%s_13.3.1.json" % name)).read_text())


# ---- what the record covers --------------------------------------------------

def test_every_runtime_field_and_constructor_is_probed(record):
    import cubind.runtime as rt
    want = {"runtime:%s.%s" % (s, f) for s in cc.struct_classes(rt)
            for f in cc.field_names(getattr(rt, s))}
    want |= {"runtime:%s()" % h for h in cc.handle_classes(rt)}
    want |= {"runtime:%s()" % e for e in cc.enum_classes(rt)}
    got = {t["target"] for t in record["targets"] if t["target"].startswith("runtime:")}
    assert want - got == set()
    assert len(want) > 700  # 169 struct classes, 39 handles, 89 enums in 13.0
    # the makers, one target per parameter, and dim3's constructor
    makers = {t for t in got if t.startswith("runtime:make_")}
    assert makers == {"runtime:make_cudaExtent.%s" % p for p in "whd"} | \
        {"runtime:make_cudaPos.%s" % p for p in "xyz"} | \
        {"runtime:make_cudaPitchedPtr.%s" % p for p in ("d", "p", "xsz", "ysz")}
    assert "runtime:dim3()" in got


def test_runtime_functions_without_a_device_show_what_they_take(record):
    """On the fake driver the runtime cannot start: the record says why,
    and its functions are probed without a device. Each call converts its
    arguments first, so the outcome shows what a parameter takes (the call
    then fails with the runtime's status) or refuses."""
    assert "cudaErrorInsufficientDriver" in record["skipped"]["runtime device"]
    calls = {t["target"] for t in record["targets"] if cc.is_call(t)}
    assert {"runtime:cudaMalloc.size", "runtime:cudaStreamQuery.stream",
            "runtime:cudaMemset.devPtr", "runtime:cudaLaunchHostFunc.fn"} <= calls
    failed = ["ok", ["s:cudaErrorInsufficientDriver", None]]
    assert results(record, "runtime:cudaMalloc.size")["float 2.5"] == failed
    assert results(record, "runtime:cudaMalloc.size")["str '1'"] == ["TypeError", None]
    stream = results(record, "runtime:cudaStreamQuery.stream")
    assert stream["handle cubind.CUstream 1"] == ["ok", ["s:cudaErrorInsufficientDriver"]]
    assert stream["handle cubind.runtime.cudaEvent_t 1"] == ["TypeError", None]
    # a `void *` takes a number by its value (void-ptr-numbers)
    assert results(record, "runtime:cudaPointerGetAttributes.ptr")["float 2.5"] == failed


def test_handles_of_both_modules_are_probe_values(record):
    """Runtime functions take the driver's handles as well as the
    runtime's: both are probed, labelled by their module."""
    labels = set(results(record, "runtime:cudaStream_t()"))
    assert {"handle cubind.CUstream 1", "handle cubind.runtime.cudaStream_t 1",
            "handle cubind.runtime.cudaEvent_t 1"} <= labels
    assert results(record, "runtime:cudaStream_t()")["handle cubind.CUstream 1"] == ["ok", 1]


# ---- what arrives: cuda.bindings.runtime's Cython conversions ---------------

@pytest.mark.parametrize("target, label, want", [
    # size_t parameters of the makers: a float truncates, bool is 1, -1 and
    # a str refused
    ("runtime:make_cudaExtent.w", "float 2.5", ["ok", 2]),
    ("runtime:make_cudaExtent.h", "bool True", ["ok", 1]),
    ("runtime:make_cudaExtent.d", "int 2**64-1", ["ok", 2**64 - 1]),
    ("runtime:make_cudaPos.x", "int -1", ["OverflowError", None]),
    ("runtime:make_cudaPos.y", "str '1'", ["TypeError", None]),
    ("runtime:make_cudaPos.z", "object __int__ 1", ["ok", 1]),
    ("runtime:make_cudaPitchedPtr.p", "float 3.7", ["ok", 3]),
    # unsigned int fields
    ("runtime:dim3.x", "float 3.7", ["ok", 3]),
    ("runtime:dim3.y", "int 2**32", ["OverflowError", None]),
    ("runtime:cudaAccessPolicyWindow.num_bytes", "float 2.5", ["ok", 2]),
    # an enum field: int() of the value; None refused
    ("runtime:cudaAccessPolicyWindow.hitProp", "float 2.5", ["ok", 2]),
    ("runtime:cudaAccessPolicyWindow.hitProp", "None", ["TypeError", None]),
    # a float field: what float() takes from a number, not a str
    ("runtime:cudaAccessPolicyWindow.hitRatio", "str '1'", ["TypeError", None]),
    ("runtime:cudaAccessPolicyWindow.hitRatio", "int 7", ["ok", 7.0]),
    # a nested struct field: that struct class only (a dim3, not a tuple)
    ("runtime:cudaLaunchConfig_t.gridDim", "struct cubind.runtime.dim3 (1, 1, 1)", ["ok", [1, 1, 1]]),
    ("runtime:cudaLaunchConfig_t.gridDim", "tuple (1, 1, 1)", ["TypeError", None]),
    ("runtime:cudaLaunchConfig_t.gridDim", "None", ["TypeError", None]),
    # a handle field: None is NULL, a float truncates
    ("runtime:cudaMemcpy3DParms.srcArray", "None", ["ok", 0]),
    ("runtime:cudaMemcpy3DParms.srcArray", "float 2.5", ["ok", 2]),
])
def test_values_arrive_as_cython_converts_them(record, target, label, want):
    assert results(record, target)[label] == want


def test_nvvm_enum_and_buffers(record):
    """get_error_string(int result): a float truncates, str refused; the IR
    arrives from any buffer (it compiles)."""
    if "nvvm" in record["skipped"]:
        pytest.skip("libnvvm: %s" % record["skipped"]["nvvm"])
    r = results(record, "nvvm:get_error_string.result")
    assert r["float 2.5"] == r["int 2"] == ["ok", "s:NVVM_ERROR_PROGRAM_CREATION_FAILURE"]
    assert r["str '1'"] == ["TypeError", None]
    b = results(record, "nvvm:add_module_to_program.buffer")
    for label in ("bytes IR", "bytearray IR", "memoryview IR"):
        assert b[label] == ["ok", ["s:compiled", True]], label
    assert b["None"] == ["ValueError", None]  # buffers-not-none


# ---- `void *` parameters take numbers by value (the void-ptr-numbers rule) ----

class Address:
    """An object with __int__ only, giving an address."""

    def __init__(self, addr):
        self.addr = addr

    def __int__(self):
        return self.addr


def copied(drv, dptr, value):
    """What cuMemcpyHtoD(dptr, value, 8) copied: 8 bytes read back."""
    assert drv.cuMemsetD8(dptr, 0, 8) == (drv.CUresult.CUDA_SUCCESS,)
    assert drv.cuMemcpyHtoD(dptr, value, 8) == (drv.CUresult.CUDA_SUCCESS,)
    out = bytearray(8)
    assert drv.cuMemcpyDtoH(out, dptr, 8) == (drv.CUresult.CUDA_SUCCESS,)
    return bytes(out)


def test_void_ptr_takes_a_number_by_its_value(drv, ctx):
    """cuda.bindings' void * helper converts to an integer first: a numpy
    scalar holding an address is that address (not the scalar's own 8
    bytes), a float truncates, an object with __int__ gives its int."""
    np = pytest.importorskip("numpy")
    src = ctypes.create_string_buffer(b"*" * 8, 8)
    addr = ctypes.addressof(src)
    err, dptr = drv.cuMemAlloc(8)
    assert err == drv.CUresult.CUDA_SUCCESS
    try:
        for value in (np.uint64(addr), np.int64(addr), float(addr) + 0.5, Address(addr)):
            assert copied(drv, dptr, value) == b"*" * 8, type(value)
        # an object with a length stays its memory, an array of one item too
        for value in (b"+" * 8, bytearray(b"+" * 8), memoryview(b"+" * 8),
                      np.frombuffer(b"+" * 8, dtype=np.uint8),
                      np.frombuffer(b"+" * 8, dtype=np.uint64)):
            assert copied(drv, dptr, value) == b"+" * 8, type(value)
    finally:
        drv.cuMemFree(dptr)


@pytest.mark.parametrize("value, exc, text", [
    (float("nan"), ValueError, "cannot convert float NaN"),
    (-1.0, OverflowError, "does not fit in void"),
    (2.0**70, OverflowError, "does not fit in void"),
    ("1", TypeError, "must be an int address, None or a buffer, not str"),
    # a negative int is no address (it was taken as its two's complement)
    (-1, OverflowError, "= -1 is not an address"),
    (-2**31 - 1, OverflowError, "is not an address"),
])
def test_void_ptr_refuses_what_is_no_address_naming_it(value, exc, text):
    """The runtime converts before it calls (on the fake driver the call
    then fails with cudaErrorInsufficientDriver)."""
    import cubind.runtime as rt
    with pytest.raises(exc, match="cudaPointerGetAttributes\\(\\): argument 'ptr'.*" + text):
        rt.cudaPointerGetAttributes(value)
    assert rt.cudaPointerGetAttributes(2.5)[0] == rt.cudaError_t.cudaErrorInsufficientDriver


def test_modules_without_the_rule_keep_buffers_strict():
    """cuda.bindings.nvvm takes an int or a buffer for its IR (no integer
    conversion of other numbers): cubind.nvvm, without void-ptr-numbers,
    refuses a float rather than read at its value."""
    import cubind.nvvm as nv
    import conversions_libraries as cl
    if not cl.usable(nv):
        pytest.skip("libnvvm does not load here")
    prog = nv.create_program()
    try:
        with pytest.raises(TypeError, match="argument 'buffer'"):
            nv.add_module_to_program(prog, 2.5, 1, "x")
    finally:
        nv.destroy_program(prog)


# ---- the allowlist calls what cuda.bindings 13.3.1 has -----------------------

def called(source, module_var):
    """Names called as `module_var.NAME(` in a tool's source."""
    return set(re.findall(r"\b%s\.([A-Za-z_]\w*)\(" % module_var, source))


@pytest.mark.parametrize("source, module_var, ref", [
    ("conversions_runtime.py", "rt", "runtime"),
    ("conversions_runtime.py", "drv", "driver"),
    ("conversions_libraries.py", "nv", "nvvm"),
    ("conversions_libraries.py", "fb", "nvfatbin"),
])
def test_every_call_exists_in_cuda_bindings(source, module_var, ref):
    names = called((TOOLS / source).read_text(), module_var)
    assert names  # the pattern still finds the calls
    functions = reference(ref)["functions"]
    classes = reference(ref)["classes"]
    assert sorted(n for n in names if n not in functions and n not in classes) == []


def test_every_function_target_names_a_parameter_of_cuda_bindings():
    """runtime:cudaMalloc.size: cuda.bindings.runtime.cudaMalloc has a
    parameter `size` (its recorded signature)."""
    import cubind.driver
    import cubind.nvfatbin
    import cubind.nvvm
    import cubind.runtime
    import conversions_libraries as cl
    import conversions_runtime as cr
    targets = [t[0] for t in cr.function_targets(cubind.runtime, cubind.driver, [], [])]
    targets += [t[0] for t in cl.nvfatbin_targets(cubind.nvfatbin, [])]
    if cl.usable(cubind.nvvm):  # nvvm_targets asks libnvvm its IR version
        targets += [t[0] for t in cl.nvvm_targets(cubind.nvvm, [])]
    assert len(targets) > 20
    for target in targets:
        key, rest = target.split(":", 1)
        fn, param = rest.split(".", 1)
        sig = reference(key)["functions"][fn]["signature"]
        assert re.search(r"[(, ]%s[,:)= ]" % re.escape(param), sig), (target, sig)


# ---- the record's format -----------------------------------------------------

def test_call_flags_survive_the_compact_form():
    rec = {"impl": "x", "targets": [
        {"target": "runtime:cudaMalloc.size", "kind": "integer", "call": True,
         "results": {"int 1": ["ok", 1]}},
        {"target": "runtime:make_cudaPos.x", "kind": "integer", "results": {"int 1": ["ok", 1]}}]}
    back = cc.expand(json.loads(json.dumps(cc.compact(rec))))
    assert back == rec
    assert [cc.is_call(t) for t in back["targets"]] == [True, False]
    # the first record carries no flags: its rule
    assert cc.is_call({"target": "driver:cuMemAlloc.bytesize"})
    assert not cc.is_call({"target": "driver:CUDA_MEMCPY2D.WidthInBytes"})
    assert cc.is_call({"target": "nvrtc:nvrtcCreateProgram.src"})


def test_judging_counts_by_module_and_kind():
    """The GPU run's table: a difference a row explains is counted so, any
    other is listed."""
    def rec(value):
        return {"targets": [
            {"target": "runtime:dim3.x", "kind": "integer",
             "results": {"float 2.5": ["ok", 2], "None": value}},
            {"target": "nvvm:get_error_string.result", "kind": "enum", "call": True,
             "results": {"str '1'": ["TypeError", None]}}]}
    rows = ce.explanations("<!-- conversions-explained -->\n| kind | targets | values | a | b | why |\n"
                           "|---|---|---|---|---|---|\n"
                           "| `integer` | `runtime:*` | `None` | `TypeError` | `ok*` | test |\n"
                           "<!-- /conversions-explained -->")
    counts, unexplained = ce.judge(rec(["TypeError", None]), rec(["ok", 0]), rows)
    assert counts[("runtime", "integer")] == {"probes": 2, "same": 1, "explained": 1}
    assert counts[("nvvm", "enum")] == {"probes": 1, "same": 1, "explained": 0}
    assert unexplained == []
    counts, unexplained = ce.judge(rec(["TypeError", None]), rec(["ValueError", None]), rows)
    assert counts[("runtime", "integer")]["explained"] == 0
    assert [u[0] for u in unexplained] == ["runtime:dim3.x=None"]


def test_rows_can_tell_fields_from_calls():
    """The runtime's struct classes and functions both start "cuda": a
    row's target pattern qualified `field ` or `call ` matches one kind of
    target only."""
    def rec(outcome):
        return {"targets": [
            {"target": "runtime:cudaExtent.width", "kind": "integer",
             "results": {"None": [outcome, None]}},
            {"target": "runtime:cudaMalloc.size", "kind": "integer", "call": True,
             "results": {"None": [outcome, None]}}]}
    table = ("<!-- conversions-explained -->\n| kind | targets | values | a | b | why |\n"
             "|---|---|---|---|---|---|\n"
             "| `integer` | `%s` | `None` | `TypeError` | `ValueError` | test |\n"
             "<!-- /conversions-explained -->")
    for pattern, left in (("field runtime:cuda*.*", ["runtime:cudaMalloc.size=None"]),
                          ("call runtime:cuda*.*", ["runtime:cudaExtent.width=None"]),
                          ("runtime:cuda*.*", []),
                          ("call runtime:cudaExtent.*", ["runtime:cudaExtent.width=None",
                                                         "runtime:cudaMalloc.size=None"])):
        _, unexplained = ce.judge(rec("TypeError"), rec("ValueError"),
                                  ce.explanations(table % pattern))
        assert sorted(u[0] for u in unexplained) == left, pattern
