# SPDX-License-Identifier: Apache-2.0
"""The generator on a library's header with its rules file (gen/nvrtc.rules,
gen/runtime.rules,
gen/nvjitlink.rules): what the API rules decide in the output, and the
errors of a rules file that does not fit its header (file:line, nothing
written)."""
import json
import os
import pathlib
import re

import pytest
from conftest import header_path, module_source

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO_OUT = pathlib.Path(REPO) / "out"


def generate(run_cubind, cuda_include, rules, header, out):
    os.makedirs(out, exist_ok=True)
    return run_cubind("generate", "--header", header_path(cuda_include, header), "--rules",
                      rules, "--include", cuda_include, "--out", str(out))


def test_every_library_function_is_bound(run_cubind, cuda_include, library_rules, tmp_path):
    apis = dict((os.path.basename(r)[:-len(".rules")], (r, h)) for r, h in library_rules)
    assert set(apis) == {"nvrtc", "nvjitlink", "nvvm", "nvfatbin", "cufile", "nvml", "runtime"}
    # the functions of the runtime that its rules leave unbound, by name
    # (out/runtime_unsupported.txt gives the reasons; docs/compatibility.md)
    left = {"nvrtc": 0, "nvjitlink": 0, "nvvm": 0, "nvfatbin": 0, "cufile": 0, "nvml": 0,
            "runtime": 1}
    for api, (rules, header) in apis.items():
        p = generate(run_cubind, cuda_include, rules, header, tmp_path / api)
        assert p.returncode == 0, p.stderr
        assert "matches nothing" not in p.stderr, p.stderr
        with open(tmp_path / api / ("%s_unsupported.txt" % api)) as f:
            report = f.read()
        bound, total = re.search(r"# supported: (\d+) of (\d+)", report).groups()
        assert int(total) - int(bound) == left[api] and int(total) >= 9, report
        # and a typing stub per face: nvrtc.pyi and rtc.pyi, nvjitlink.pyi
        stubs = {"nvrtc": ["nvrtc.pyi", "rtc.pyi"], "nvjitlink": ["nvjitlink.pyi"],
                 "nvvm": ["nvvm.pyi"], "nvfatbin": ["nvfatbin.pyi"], "cufile": ["cufile.pyi"],
                 "nvml": ["nvml.pyi"],
                 "runtime": ["runtime.pyi", "cudart.pyi"]}[api]
        # and its translation units (a parts rule's count) with their header
        with open(rules) as f:
            parts = re.search(r"^parts (\d+)", f.read(), re.M)
        units = ["%s.c" % api] + ["%s_part%d.c" % (api, k) for k in range(1, int(parts[1]) if parts else 1)]
        assert sorted(os.listdir(tmp_path / api)) == sorted(
            units + ["%s_internal.h" % api, "%s_unsupported.txt" % api, "cubind_%s_api.h" % api] + stubs)
    with open(tmp_path / "nvjitlink" / "nvjitlink.c") as f:
        jit = f.read()
    # snake names without the prefix, the enums' members without theirs,
    # the versioned symbol dlsym finds
    assert '{"add_data", ' in jit and '{"get_linked_cubin_size", ' in jit
    assert '"cubind.nvjitlink.InputType"' in jit and '{"PTX", ' in jit
    assert '"__nvJitLinkCreate_13_0"' in jit or '"__nvJitLinkCreate_12_' in jit
    with open(tmp_path / "nvrtc" / "nvrtc.c") as f:
        rtc = f.read()
    assert '"cubind.rtc"' in rtc and 'cbs_library_error_class(st->runtime, "NVRTCError"' in rtc
    with open(tmp_path / "cufile" / "cufile.c") as f:
        cuf = f.read()
    # result-field: the status is the struct's err field, result-detail
    # its cu_err beside it; a function without a status (void, an
    # integer) presets success; cufile.h's `#define cuFileDriverClose
    # cuFileDriverClose_v2` leaves one driver_close, bound to the renamed
    # symbol
    assert re.search(r"CUfileError_t r_ = fn\([^;]*\);\s*rc = r_\.err;\s*"
                     r"rc_detail = \(long long\)r_\.cu_err;", cuf)
    assert "if (rc != CU_FILE_SUCCESS || rc_detail != 0)" in cuf
    assert "CUfileOpError rc = CU_FILE_SUCCESS;" in cuf and "ret_v = fn(" in cuf
    assert cuf.count('{"driver_close", ') == 1 and '"cuFileDriverClose_v2"' in cuf
    assert "PyErr_SetFromErrno(PyExc_OSError)" in cuf  # negative-errors
    nvml = module_source(tmp_path / "nvml", "nvml")  # every translation unit's text
    # python-word (p2p, nvlink), enum-prefix (BRAND_TESLA, ValueType's
    # DOUBLE), error-subclasses, struct-version (nvmlMemory_v2_t: 40 bytes,
    # version 2), chars-length and count-query
    assert '{"device_get_p2p_status", ' in nvml and '{"device_get_nvlink_state", ' in nvml
    assert '{"BRAND_TESLA", ' in nvml and '{"DOUBLE", ' in nvml
    assert '{ NVML_ERROR_DRIVER_NOT_LOADED, "DriverNotLoadedError", ' in nvml
    # (the row ends with cbs_struct_def.constructors: 1 in a snake_case module)
    assert ", 0, %du, NULL, 0, 1}," % (40 | 2 << 24) in nvml
    assert "= 256; /* chars-length" in nvml and "probe_rc == NVML_ERROR_INSUFFICIENT_SIZE" in nvml
    # count-stem: nvmlDeviceGetComputeRunningProcesses_v3's infoCount counts infos
    assert "infoCount_query" in nvml
    assert "error_subclass_defs" not in cuf and "= 256;" not in cuf


def rules_with(tmp_path, api, old, new):
    with open(os.path.join(REPO, "gen", "%s.rules" % api)) as f:
        text = f.read()
    assert old in text
    path = tmp_path / ("%s.rules" % api)
    path.write_text(text.replace(old, new, 1))
    return str(path)


def old_output(tmp_path):
    """An output directory holding a marked file the generator would
    replace, and its contents: a refused header must leave it as it was."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "nvrtc.c").write_text("/* the old output */\n")
    return out, {"nvrtc.c": "/* the old output */\n"}


def contents(d):
    return dict((n, (d / n).read_text()) for n in os.listdir(d))


def test_a_result_enum_the_header_lacks_is_refused(run_cubind, cuda_include, tmp_path):
    """The rules name an enum the header does not declare: refused as a
    header without what the module needs (exit status 2, issue 27 item 4)."""
    rules = rules_with(tmp_path, "nvrtc", "result nvrtcResult NVRTC_SUCCESS",
                       "result nvrtcStatus NVRTC_SUCCESS")
    out, before = old_output(tmp_path)
    p = generate(run_cubind, cuda_include, rules, "nvrtc.h", out)
    assert p.returncode == 2, p.stderr
    assert "nvrtc.h:0: no enum nvrtcStatus" in p.stderr and rules in p.stderr
    assert contents(out) == before


RESULT_ENUM = re.compile(r"^\} nvrtcResult;$", re.M)

# A copy of nvrtc.h without the enum its rules file names (result
# nvrtcResult): the type declared as a plain int (its first use is named),
# or the enum under another name (the file as a whole is named). Refused
# with exit status 2 as a cuda.h without CUresult is (6ec5ef8 exits 1).
NO_RESULT_ENUM = {
    "not an enum": (lambda t: RESULT_ENUM.sub("} nvrtcResultCodes;\ntypedef int nvrtcResult;",
                                              t, count=1), True),
    "renamed": (lambda t: t.replace("nvrtcResult", "nvrtcStatus"), False),
}


@pytest.mark.parametrize("case", sorted(NO_RESULT_ENUM))
def test_a_library_header_without_its_result_enum_is_refused(run_cubind, cuda_include,
                                                              tmp_path, case):
    edit, names_a_use = NO_RESULT_ENUM[case]
    with open(os.path.join(cuda_include, "nvrtc.h")) as f:
        text = f.read()
    assert RESULT_ENUM.search(text), "nvrtc.h declares no `} nvrtcResult;`"
    new = edit(text)
    assert new != text and not RESULT_ENUM.search(new)
    hdr = tmp_path / "hdr"
    hdr.mkdir()
    (hdr / "nvrtc.h").write_text(new)
    rules = os.path.join(REPO, "gen", "nvrtc.rules")
    out, before = old_output(tmp_path)
    p = generate(run_cubind, str(hdr), rules, "nvrtc.h", out)
    assert p.returncode == 2, "exit status %d, expected 2:\n%s" % (p.returncode, p.stderr)
    if names_a_use:
        use = re.search(r"^nvrtcResult nvrtcVersion\(", new, re.M)
        line = new.count("\n", 0, use.start()) + 1
        where = "nvrtc.h:%d: " % line
        assert "the return type of nvrtcVersion" in p.stderr, p.stderr
    else:
        where = "nvrtc.h:0: "
    assert str(hdr / "nvrtc.h") in p.stderr and where in p.stderr, p.stderr
    assert "no enum nvrtcResult" in p.stderr and rules in p.stderr, p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert contents(out) == before


def test_a_bad_api_rule_names_its_line(run_cubind, cuda_include, tmp_path):
    rules = rules_with(tmp_path, "nvrtc", "in-place nvrtcDestroyProgram prog",
                       "in-place nvrtcDestroyProgram")
    p = generate(run_cubind, cuda_include, rules, "nvrtc.h", tmp_path / "out")
    assert p.returncode == 1
    assert "nvrtc.rules:" in p.stderr and "'in-place' takes 2 argument(s), got 1" in p.stderr


def test_a_rule_that_does_not_fit_leaves_the_function_unbound(run_cubind, cuda_include, tmp_path):
    """A buffer-size rule naming a size function of another shape: the
    function is listed as unsupported with the reason, not bound wrongly."""
    rules = rules_with(tmp_path, "nvrtc", "buffer-size nvrtcGetPTX ptx nvrtcGetPTXSize",
                       "buffer-size nvrtcGetPTX ptx nvrtcVersion")
    out = tmp_path / "out"
    p = generate(run_cubind, cuda_include, rules, "nvrtc.h", out)
    assert p.returncode == 0, p.stderr
    with open(out / "nvrtc_unsupported.txt") as f:
        report = f.read()
    assert "nvrtcGetPTX: parameter 'ptx' (char *): a buffer-size rule needs" in report


def test_kernel_code_rules_are_the_drivers_only(run_cubind, cuda_include, tmp_path):
    """A kernel-code rule in a library's rules emits no hook: the hooks
    (runtime/module/bind_kernel_code.h) type the driver's modules and kernels,
    which a library API has none of; the driver's own rules do emit them."""
    rules = rules_with(tmp_path, "nvrtc", "result nvrtcResult NVRTC_SUCCESS",
                       "result nvrtcResult NVRTC_SUCCESS\nkernel-code nvrtcCompileProgram after")
    out = tmp_path / "out"
    p = generate(run_cubind, cuda_include, rules, "nvrtc.h", out)
    assert p.returncode == 0, p.stderr
    with open(out / "nvrtc.c") as f:
        assert "cbs_code_" not in f.read()
    assert "cbs_code_after_cuModuleLoadData(" in module_source(os.path.join(REPO, "out"), "driver")


def test_bind_headers_give_the_runtime_its_types(run_cubind, cuda_include, tmp_path):
    """cuda_runtime_api.h takes cudaError_t and its structs from
    driver_types.h (bind-header): without that rule the result enum is not
    the header's own, and the module is refused; with it the types are
    bound and the generated C includes their headers."""
    rules = rules_with(tmp_path, "runtime", "bind-header driver_types.h\n", "")
    p = generate(run_cubind, cuda_include, rules, "cuda_runtime_api.h", tmp_path / "without")
    assert p.returncode == 2 and "no enum cudaError_t" in p.stderr, p.stderr
    out = tmp_path / "with"
    p = generate(run_cubind, cuda_include, os.path.join(REPO, "gen", "runtime.rules"),
                 "cuda_runtime_api.h", out)
    assert p.returncode == 0, p.stderr
    c = module_source(out, "runtime")
    for h in ("driver_types.h", "device_types.h", "vector_types.h", "library_types.h"):
        assert "#include <%s>\n" % h in c
    assert '{"cudaDeviceProp", ' in c and '"cubind.runtime.cudaDataType",' in c


def test_a_bind_header_that_is_not_there_is_refused(run_cubind, cuda_include, tmp_path):
    rules = rules_with(tmp_path, "runtime", "bind-header vector_types.h",
                       "bind-header no_such_types.h")
    out = tmp_path / "out"
    p = generate(run_cubind, cuda_include, rules, "cuda_runtime_api.h", out)
    assert p.returncode == 1
    assert "cuda_runtime_api.h:0: no_such_types.h is not a header beside it" in p.stderr
    assert not os.listdir(out)


def test_unbound_lists_the_function_with_its_reason(run_cubind, cuda_include, tmp_path):
    rules = rules_with(tmp_path, "runtime", "unbound cudaGetExportTable",
                       "unbound cudaGetDeviceCount not wanted here\nunbound cudaGetExportTable")
    out = tmp_path / "out"
    p = generate(run_cubind, cuda_include, rules, "cuda_runtime_api.h", out)
    assert p.returncode == 0, p.stderr
    report = (out / "runtime_unsupported.txt").read_text()
    assert "\ncudaGetDeviceCount: not wanted here\n" in report
    assert "impl_cudaGetDeviceCount(" not in module_source(out, "runtime")
    assert "impl_cudaGetDeviceCount(" in module_source(REPO_OUT, "runtime")


def test_runtime_api_rules_in_the_module(run_cubind, cuda_include):
    """library-bundled, error-base and the error-string kin (cudaGetErrorName
    returns its string) as out/runtime.c spells them."""
    c = module_source(REPO_OUT, "runtime")
    assert 'cbs_library library = { "runtime", "CUBIND_LIBCUDART", "_cudart.so", ' in c
    assert 'cbs_library_error_class(st->runtime, "CUDARuntimeError", "CUDAError", ' in c
    nv = module_source(REPO_OUT, "nvrtc")
    assert 'cbs_library library = { "nvrtc", "CUBIND_LIBNVRTC", "", ' in nv
    assert 'cbs_library_error_class(st->runtime, "NVRTCError", "", ' in nv
    stub = (REPO_OUT / "runtime.pyi").read_text()
    assert "def cudaGetErrorName(error: cudaError_t | int) -> tuple[cudaError_t, bytes | None]" in stub


# error-string-inline naming cufile.h's static description function, one
# the header declares but does not define (a library symbol), and one it
# lacks: only the first is called for the exception's message; the others
# are listed as matching nothing and give no call.
INLINE_DESCRIPTIONS = {"cufileop_status_error": True, "cuFileGetVersion": False,
                       "cufileNoSuchDescription": False}


@pytest.mark.parametrize("function", sorted(INLINE_DESCRIPTIONS))
def test_error_string_inline_calls_the_headers_own_function(run_cubind, cuda_include, tmp_path,
                                                            function):
    header = header_path(cuda_include, "cufile.h")
    if not os.path.isfile(header):
        pytest.skip("no cufile.h (scripts/fetch-cuda-libs.sh did not run)")
    rules = rules_with(tmp_path, "cufile", "error-string-inline cufileop_status_error",
                       "error-string-inline " + function)
    out = tmp_path / "out"
    out.mkdir()
    p = run_cubind("generate", "--list-unmatched", "--header", header, "--rules", rules,
                   "--include", cuda_include, "--out", str(out))
    assert p.returncode == 0, p.stderr
    source = module_source(str(out), "cufile")
    called = "message = %s(rc);" % function in source
    unmatched = "rule 'error-string-inline %s' matches nothing" % function in p.stderr
    assert (called, unmatched) == (INLINE_DESCRIPTIONS[function], not INLINE_DESCRIPTIONS[function])


FLAGS_H = """
#ifndef FLAGS_H
#define FLAGS_H
#include <stdbool.h>
typedef enum { FLG_SUCCESS = 0, FLG_ERROR_INVALID = 1 } flgStatus_t;
flgStatus_t flgGetFlag(int key, bool *value);
flgStatus_t flgSetFlag(int key, bool value);
#endif
"""


def generate_flags(run_cubind, cuda_include, tmp_path, sentinel):
    """cubind generate on FLAGS_H with a library's rules (a capi-sentinel
    rule when `sentinel` names one) into tmp_path/out: (process, out)."""
    (tmp_path / "flags.h").write_text(FLAGS_H)
    rules = tmp_path / "flags.rules"
    rules.write_text("header flags.h\nmodule - flags\nresult flgStatus_t FLG_SUCCESS\n"
                     + ("capi-sentinel %s\n" % sentinel if sentinel else "")
                     + "error-class FlagsError\npython-names flg snake\nlibrary libflags.so\n")
    out = tmp_path / "out"
    out.mkdir()
    return run_cubind("generate", "--header", str(tmp_path / "flags.h"), "--rules", str(rules),
                      "--include", cuda_include, "--out", str(out)), out


def test_c_bool_is_a_python_bool_both_ways(run_cubind, cuda_include, tmp_path):
    """C's bool (_Bool) crosses as a Python bool: an output is True or
    False, as cuda.bindings' cufile.get_parameter_bool gives it, and an
    input takes any object's truth, as its `bint` parameters do."""
    p, out = generate_flags(run_cubind, cuda_include, tmp_path, "FLG_ERROR_INVALID")
    assert p.returncode == 0, p.stderr
    stub = (out / "flags.pyi").read_text()
    assert "def get_flag(key: int) -> bool: ..." in stub, stub
    assert "def set_flag(key: int, value: bool) -> None: ..." in stub, stub
    source = (out / "flags.c").read_text()
    assert "PyBool_FromLong(" in source and "PyObject_IsTrue(" in source


def test_a_capi_error_result_outside_the_result_enum_is_refused(run_cubind, cuda_include,
                                                                tmp_path):
    """A library's rules without a capi-sentinel rule keep the driver's
    CUDA_ERROR_NOT_FOUND, which its result enum lacks: refused, naming the
    rules file and the rule to add, and nothing is written (the generated
    entry points would not compile)."""
    p, out = generate_flags(run_cubind, cuda_include, tmp_path, None)
    assert p.returncode == 1, p.stderr
    assert str(tmp_path / "flags.rules") in p.stderr
    assert "CUDA_ERROR_NOT_FOUND is no member of flgStatus_t" in p.stderr
    assert "capi-sentinel" in p.stderr
    assert os.listdir(out) == []


def test_a_text_rule_whose_size_the_function_lacks_leaves_it_unbound(run_cubind, cuda_include,
                                                                      tmp_path):
    """text FUNCTION PARAM SIZE with a SIZE the function does not have (a
    typo): the function is listed as unsupported with the reason, never
    bound as if it had no size (its real size would become an argument
    and the buffer be assumed large enough)."""
    rules = rules_with(tmp_path, "nvml", "text nvmlVgpuTypeGetName vgpuTypeName size",
                       "text nvmlVgpuTypeGetName vgpuTypeName sizes")
    out = tmp_path / "out"
    p = generate(run_cubind, cuda_include, rules, "nvml.h", out)
    assert p.returncode == 0, p.stderr
    report = (out / "nvml_unsupported.txt").read_text()
    assert re.search(r"^nvmlVgpuTypeGetName: .*a text rule needs .*SIZE of the function", report,
                     re.M), report
    assert '{"vgpu_type_get_name", ' not in module_source(out, "nvml")


def test_field_underscore_rules_name_snake_fields(run_cubind, cuda_include, tmp_path):
    """field-underscore WORD: a snake_case module's field named WORD is
    also WORD_ (nvml's PciInfo.device_), its C name staying; a WORD no
    field has is reported."""
    rules = rules_with(tmp_path, "nvml", "field-underscore device",
                       "field-underscore device\nfield-underscore testsgenword")
    out = tmp_path / "out"
    os.makedirs(out)
    p = run_cubind("generate", "--list-unmatched", "--header", header_path(cuda_include, "nvml.h"),
                   "--rules", rules, "--include", cuda_include, "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "rule 'field-underscore testsgenword' matches nothing" in p.stderr
    assert "field-underscore device'" not in p.stderr
    source = module_source(out, "nvml")
    # (a snake_case module's getset: bind_struct_array.h's functions)
    assert '{"device_", cbs_struct_array_get' in source
    assert '{"device", cbs_struct_array_get' in source
    assert '{"min_", cbs_struct_array_get' in source


# The outputs of 12.4's nvml.h whose struct has a field-count-query field
# (gen/nvml.rules), and that field.
FILLED = {
    "nvmlDeviceGetRunningProcessDetailList": "procArray",
    "nvmlDeviceGetProcessesUtilizationInfo": "procUtilArray",
    "nvmlDeviceGetVgpuInstancesUtilizationInfo": "vgpuUtilArray",
    "nvmlDeviceGetVgpuProcessesUtilizationInfo": "vgpuProcUtilArray",
    "nvmlDeviceGetVgpuTypeSupportedPlacements": "placementIds",
    "nvmlDeviceGetVgpuTypeCreatablePlacements": "placementIds",
}


def test_field_count_query_fills_the_output_structs(run_cubind, cuda_include, tmp_path):
    """field-count-query RECORD FIELD: every output struct of RECORD gets
    FIELD filled (cubind classify's fill_field, the record field's
    `filled`), its binding calling cbs_struct_fill after the call that
    asks the count; nothing else does."""
    p = run_cubind("classify", "--header", header_path(cuda_include, "nvml.h"), "--rules",
                   os.path.join(REPO, "gen", "nvml.rules"))
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    fills = {f["name"]: q["fill_field"] for f in data["functions"] for q in f["params"]
             if "fill_field" in q}
    assert fills == FILLED
    records = {r["name"]: r for r in data["records"]}
    placement = {f["name"]: f for f in records["nvmlVgpuPlacementList_v1_t"]["fields"]}
    assert placement["placementIds"]["filled"] and "filled" not in placement["count"]
    nvml = module_source(REPO_OUT, "nvml")
    for function, field in FILLED.items():
        body = nvml[nvml.index("static PyObject *impl_%s(" % function):]
        body = body[:body.index("\ndone:")]
        assert 'cbs_struct_fill(' in body and '"%s", &' % field in body, function
    assert nvml.count("cbs_struct_fill(") == len(FILLED)


def test_a_field_count_query_rule_on_no_pointer_is_refused(run_cubind, cuda_include, tmp_path):
    """A field-count-query rule on a counted fixed array (nothing to fill):
    a path:line error, nothing written."""
    rules = rules_with(tmp_path, "nvml", "field-count-query nvmlProcessDetailList_v1_t procArray",
                       "field-count-query nvmlClkMonStatus_t clkMonList")
    p = generate(run_cubind, cuda_include, rules, "nvml.h", tmp_path / "out")
    assert p.returncode == 1, p.stderr
    assert re.search(re.escape(rules) + r":\d+: field-count-query: nvmlClkMonStatus_t.clkMonList "
                     r"is no pointer", p.stderr), p.stderr
