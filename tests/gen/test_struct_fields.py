# SPDX-License-Identifier: Apache-2.0
"""Struct parameters whose fields cross as Python parameters and values
(gen/rules/rules_directives.def: input-fields, whole-output, struct-version)
on a header written here, as cuda.bindings.nvml takes NVML's versioned
structs: an input struct as its fields (nvmlDeviceSetPowerManagementLimit_v2:
power_scope, power_value_mw), an output struct's input fields before the
call (nvmlDeviceGetConfComputeGpuAttestationReport's nonce), a versioned
output of one field as that field (nvmlDeviceGetCapabilities: capMask).
The generated signatures (stubs, docstrings), the classification and
what a rule that does not fit leaves unbound."""
import json
import os

from conftest import generate_written

VERS_H = """
#ifndef VERS_H
#define VERS_H
typedef enum { VS_SUCCESS = 0, VS_ERROR = 1 } vsReturn_t;
typedef struct { unsigned int version; unsigned int capMask; } vsCaps_v1_t;
typedef struct { unsigned int version; unsigned int value; } vsMode_v1_t;
typedef struct { unsigned int version; unsigned char powerScope; unsigned int powerValueMw; } vsPower_v2_t;
typedef struct { unsigned int version; unsigned int fan; unsigned int speed; } vsFan_v1_t;
typedef struct { unsigned int version; unsigned int total; unsigned int used; } vsMemory_v2_t;
typedef struct { unsigned int present; unsigned char nonce[32]; unsigned char report[64]; } vsReport_t;
typedef union { char str[41]; unsigned char bytes[16]; } vsUUIDValue_t;
typedef struct { unsigned int version; unsigned int type; vsUUIDValue_t value; } vsUUID_v1_t;
vsReturn_t vsGetCaps(int dev, vsCaps_v1_t *caps);
vsReturn_t vsGetMode(int dev, vsMode_v1_t *mode);
vsReturn_t vsGetMemory(int dev, vsMemory_v2_t *memory);
vsReturn_t vsSetPower(int dev, vsPower_v2_t *powerValue);
vsReturn_t vsGetFanSpeed(int dev, vsFan_v1_t *fanSpeed);
vsReturn_t vsGetReport(int dev, vsReport_t *report);
vsReturn_t vsGetByUUID(const vsUUID_v1_t *uuid, int *dev);
vsReturn_t vsGetFanAgain(int dev, vsFan_v1_t *fanSpeed);
vsReturn_t vsSetCount(int dev, unsigned int count);
vsReturn_t vsClear(int dev, int valuesCount, const vsCaps_v1_t *values);
typedef struct { unsigned long long eventType; unsigned int gpuId; } vsEvent_v1_t;
typedef struct { unsigned int version; unsigned int timeoutms; unsigned int set;
                 vsEvent_v1_t *data; unsigned int dataSize; unsigned int numEvent; } vsWaitRequest_v1_t;
vsReturn_t vsWait(vsWaitRequest_v1_t *request);
#endif
"""

RULES = """header vers.h
module - vers
result vsReturn_t VS_SUCCESS
capi-sentinel VS_ERROR
error-class VersError
python-names vs snake
library libvers.so
struct-version version 24
input-fields vsSetPower powerValue
input-fields vsGetFanSpeed fanSpeed fan
input-fields vsGetReport report nonce
input-fields vsGetByUUID uuid type value.str=uuid
input-fields vsGetFanAgain fanSpeed fan gone?
whole-output vsGetMode mode
"""


def generate(run_cubind, cuda_include, tmp_path, rules):
    return generate_written(run_cubind, cuda_include, tmp_path, "vers", VERS_H, rules)


def stubs(out):
    return {line.split("(")[0][4:]: line for line in (out / "vers.pyi").read_text().splitlines()
            if line.startswith("def ")}


def test_struct_fields_are_parameters_and_one_field_outputs_values(run_cubind, cuda_include,
                                                                   tmp_path):
    s = stubs(generate(run_cubind, cuda_include, tmp_path, RULES))
    # an input struct: its fields but the version, in order, snake_case
    assert s["set_power"] == "def set_power(dev: int, power_scope: int, power_value_mw: int) -> None: ...", s
    # an output's input field before the call; its one other field returned
    assert s["get_fan_speed"] == "def get_fan_speed(dev: int, fan: int) -> int: ...", s
    # no version field: the struct itself, after its input field
    assert s["get_report"] == "def get_report(dev: int, nonce: bytes) -> vsReport_t: ...", s
    # a path into a union, renamed
    assert s["get_by_uuid"] == "def get_by_uuid(type: int, uuid: Any) -> int: ...", s
    # FIELD?: a field the struct lacks is left out, not an error
    assert s["get_fan_again"] == "def get_fan_again(dev: int, fan: int) -> int: ...", s
    # one field besides the version: that field; whole-output keeps it whole
    assert s["get_caps"] == "def get_caps(dev: int) -> int: ...", s
    assert s["get_mode"] == "def get_mode(dev: int) -> vsMode_v1_t: ...", s
    # two fields: the struct
    assert s["get_memory"] == "def get_memory(dev: int) -> vsMemory_v2_t: ...", s


def test_the_generated_code_sets_each_field_and_reads_the_one(run_cubind, cuda_include,
                                                              tmp_path):
    out = generate(run_cubind, cuda_include, tmp_path, RULES)
    source = "".join(p.read_text() for p in sorted(out.glob("vers*.c")))
    assert ('cbs_arg_field(powerValue_obj, "powerScope", args[1], "vsSetPower", "power_scope")'
            in source), source
    assert 'cbs_arg_field(uuid_obj, "value.str", args[1], "vsGetByUUID", "uuid")' in source
    assert 'cbs_struct_field_head(caps_obj, "capMask", NULL)' in source
    assert 'PyObject_GetAttrString(mode_obj, "value")' not in source
    # the docstring's signature line, which inspect.signature reads
    assert '"set_power(dev, power_scope, power_value_mw)\\n--\\n\\n"' in source


def classified(run_cubind, cuda_include, tmp_path, rules):
    """`cubind classify` of the header with these rules: each function's
    classification by its C name."""
    (tmp_path / "vers.h").write_text(VERS_H)
    (tmp_path / "vers.rules").write_text(rules)
    p = run_cubind("classify", "--header", str(tmp_path / "vers.h"), "--rules",
                   str(tmp_path / "vers.rules"), "--include", cuda_include)
    assert p.returncode == 0, p.stderr
    return {f["name"]: f for f in json.loads(p.stdout)["functions"]}


def test_classify_lists_the_fields(run_cubind, cuda_include, tmp_path):
    fns = classified(run_cubind, cuda_include, tmp_path, RULES)
    power = fns["vsSetPower"]["params"][1]
    assert power["shape"] == "in_fields" and power["direction"] == "none", power
    assert power["input_fields"] == ["powerScope=power_scope", "powerValueMw=power_value_mw"]
    fan = fns["vsGetFanSpeed"]["params"][1]
    assert fan["shape"] == "out_struct" and fan["output_field"] == "speed", fan
    assert fan["input_fields"] == ["fan=fan"]


def test_without_struct_version_a_one_field_output_is_the_struct(run_cubind, cuda_include,
                                                                 tmp_path):
    rules = RULES.replace("struct-version version 24\n", "")
    s = stubs(generate(run_cubind, cuda_include, tmp_path, rules))
    assert s["get_caps"] == "def get_caps(dev: int) -> vsCaps_v1_t: ...", s


# vsClear's values: an input array of valuesCount structs
CLEAR = "count vsClear values valuesCount\n"


def test_array_lengths_make_an_input_arrays_count_its_length(run_cubind, cuda_include,
                                                             tmp_path):
    s = stubs(generate(run_cubind, cuda_include, tmp_path, RULES + CLEAR + "array-lengths\n"))
    assert s["clear"] == ("def clear(dev: int, values: Sequence[vsCaps_v1_t] | None) -> None: ..."), s
    out = tmp_path / "out"
    source = "".join(p.read_text() for p in sorted(out.glob("vers*.c")))
    assert "valuesCount_v = (int)n;" in source and "(long long)n > 2147483647LL" in source


def test_without_array_lengths_the_count_is_an_input(run_cubind, cuda_include, tmp_path):
    s = stubs(generate(run_cubind, cuda_include, tmp_path, RULES + CLEAR))
    assert s["clear"].startswith("def clear(dev: int, values_count: int, values: "), s


def test_rules_that_do_not_fit_leave_the_function_unbound(run_cubind, cuda_include, tmp_path):
    rules = RULES + "input-fields vsGetCaps caps nothing\ninput-fields vsSetCount count\n"
    out = generate(run_cubind, cuda_include, tmp_path, rules)
    report = (out / "vers_unsupported.txt").read_text()
    assert "vsGetCaps: " in report and "names no field of its struct" in report, report
    assert "vsSetCount: " in report and "needs a pointer to a struct" in report, report
    assert "get_caps" not in stubs(out) and "set_count" not in stubs(out)


# vsGetMemory's memory (a whole output) and vsClear's values (an input),
# with struct-addresses and without struct-version: no one-field output
ADDRESSES = RULES.replace("struct-version version 24\n", "") + "struct-addresses\n"


def test_struct_addresses_take_ints_and_the_callers_output(run_cubind, cuda_include, tmp_path):
    """struct-addresses (cuda.bindings.cufile's intptr_t struct pointers):
    an input struct's stub takes an int too; a whole output struct is an
    optional parameter defaulting to None, its output the struct or None;
    an output with input fields (vsGetFanSpeed) or kept by whole-output
    and the same outputs without the rule stay as they were."""
    s = stubs(generate(run_cubind, cuda_include, tmp_path, ADDRESSES))
    assert s["get_memory"] == ("def get_memory(dev: int, memory: vsMemory_v2_t | int | None = None)"
                               " -> vsMemory_v2_t | None: ..."), s
    assert s["get_by_uuid"].startswith("def get_by_uuid(type: int, uuid: "), s
    assert s["get_fan_speed"].startswith("def get_fan_speed(dev: int, fan: int) -> "), s
    source = "".join(p.read_text() for p in sorted((tmp_path / "out").glob("vers*.c")))
    assert "CBS_ACCEPT_NONE | CBS_ACCEPT_ADDRESS | CBS_ACCEPT_WRITTEN" in source
    assert '"get_memory(dev, memory=None)\\n--\\n\\n"' in source
    fns = classified(run_cubind, cuda_include, tmp_path, ADDRESSES)
    memory = fns["vsGetMemory"]["params"][1]
    assert memory["shape"] == "into_struct" and memory["direction"] == "inout", memory
    assert fns["vsGetFanSpeed"]["params"][1]["shape"] == "out_struct"
    (tmp_path / "plain").mkdir()
    plain = stubs(generate(run_cubind, cuda_include, tmp_path / "plain",
                           ADDRESSES.replace("struct-addresses\n", "")))
    assert plain["get_memory"] == "def get_memory(dev: int) -> vsMemory_v2_t: ...", plain


# vsWait as nvmlSystemEventSetWait: the request's data array sized by a
# Python parameter (a room), numEvent of its records returned
WAIT = ("out vsWait request\nfield-count vsWaitRequest_v1_t data dataSize\n"
        "input-fields vsWait request set=event_set timeoutms=timeout_ms data=buffer_size\n"
        "output-field vsWait request data numEvent\n")


def test_a_room_field_and_an_output_count(run_cubind, cuda_include, tmp_path):
    """input-fields `data=buffer_size` on a counted pointer to records is
    their number (cbs_arg_field_room makes the array and sets dataSize);
    output-field's COUNT returns only numEvent of them
    (cbs_struct_field_head): cuda.bindings.nvml's
    system_event_set_wait(event_set, timeout_ms, buffer_size). Without
    the field-count rule the field is no room; an output-field COUNT that
    is no integer field leaves the function unbound."""
    s = stubs(generate(run_cubind, cuda_include, tmp_path, RULES + WAIT))
    assert s["wait"] == ("def wait(event_set: int, timeout_ms: int, buffer_size: int)"
                         " -> vsEvent_v1_t: ..."), s
    source = "".join(p.read_text() for p in sorted((tmp_path / "out").glob("vers*.c")))
    assert 'cbs_arg_field_room(request_obj, "data", args[2], "vsWait", "buffer_size")' in source
    assert 'cbs_struct_field_head(request_obj, "data", "numEvent")' in source
    assert 'cbs_arg_field(request_obj, "timeoutms", args[1], "vsWait", "timeout_ms")' in source
    (tmp_path / "uncounted").mkdir()
    generate(run_cubind, cuda_include, tmp_path / "uncounted",
             RULES + WAIT.replace("field-count vsWaitRequest_v1_t data dataSize\n", ""))
    uncounted = "".join(p.read_text() for p in sorted((tmp_path / "uncounted" / "out").glob("vers*.c")))
    assert "cbs_arg_field_room" not in uncounted  # a room only where a field-count counts it
    (tmp_path / "bad").mkdir()
    bad = stubs(generate(run_cubind, cuda_include, tmp_path / "bad",
                         RULES + WAIT.replace("data numEvent", "data data")))
    assert "wait" not in bad, bad


# An output-tuple: nvmlDeviceReadWritePRM_v1's shape (a TLV buffer whose
# input and output share an anonymous union, counted by dataSize), and a
# plain pair of fields in the order the rule gives them.
TLV_H = """
#ifndef TLV_H
#define TLV_H
typedef enum { TL_SUCCESS = 0, TL_ERROR = 1 } tlReturn_t;
typedef struct {
    unsigned dataSize;
    unsigned status;
    union { unsigned char inData[16]; unsigned char outData[16]; };
} tlBuffer_v1_t;
typedef struct { unsigned int a; unsigned int b; } tlPair_t;
tlReturn_t tlReadWrite(int dev, tlBuffer_v1_t *buffer);
tlReturn_t tlGetPair(int dev, tlPair_t *pair);
#endif
"""

TLV_RULES = """header tlv.h
module - tlv
result tlReturn_t TL_SUCCESS
capi-sentinel TL_ERROR
error-class TlvError
python-names tl snake
library libtlv.so.1
library-env CUBIND_LIBTLV
out tlReadWrite buffer
field-count tlBuffer_v1_t inData dataSize
input-fields tlReadWrite buffer inData=in_data
output-tuple tlReadWrite buffer status outData/dataSize
output-tuple tlGetPair pair b a
"""

# The library's double: the input reversed, status 0x5A, and the output's
# size tl_out_size when set (which may claim more than the array holds).
TLV_DOUBLE = """
typedef struct {
    unsigned dataSize, status;
    union { unsigned char inData[16]; unsigned char outData[16]; };
} tl_buffer;
typedef struct { unsigned a, b; } tl_pair;
unsigned tl_out_size;
int tlReadWrite(int dev, tl_buffer *b)
{
    unsigned n = b->dataSize < 16 ? b->dataSize : 16;
    for (unsigned i = 0; i < n / 2; i++) {
        unsigned char c = b->inData[i];
        b->outData[i] = b->inData[n - 1 - i];
        b->outData[n - 1 - i] = c;
    }
    b->status = 0x5A;
    if (tl_out_size)
        b->dataSize = tl_out_size;
    return dev;
}
int tlGetPair(int dev, tl_pair *p)
{
    p->a = 1;
    p->b = 2;
    return dev;
}
"""


def test_an_output_tuple_returns_the_fields_and_counted_bytes(run_cubind, cuda_include, tmp_path):
    """output-tuple: a tuple of the struct's fields instead of the struct,
    FIELD/COUNT as the first COUNT bytes of the array (clamped to it); the
    field-count rule reaches a field of the anonymous union, so in_data's
    length is dataSize. Built and called against a double of the library."""
    import subprocess
    import sys

    from conftest import build_written, _config_value

    out = generate_written(run_cubind, cuda_include, tmp_path, "tlv", TLV_H, TLV_RULES)
    s = {line.split("(")[0][4:]: line for line in (out / "tlv.pyi").read_text().splitlines()
         if line.startswith("def ")}
    assert s["read_write"] == "def read_write(dev: int, in_data: bytes) -> tuple[int, bytes]: ...", s
    assert s["get_pair"] == "def get_pair(dev: int) -> tuple[int, int]: ...", s
    pkg = build_written(tmp_path, "tlv", out, cuda_include)
    (tmp_path / "double.c").write_text(TLV_DOUBLE)
    lib = tmp_path / "libtlv.so.1"
    subprocess.run([_config_value("cc"), "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-o", str(lib), str(tmp_path / "double.c")], check=True)
    code = """
import ctypes, os
import cubind.tlv as t
size = ctypes.c_uint.in_dll(ctypes.CDLL(os.environ["CUBIND_LIBTLV"]), "tl_out_size")
assert t.read_write(0, b"0123") == (0x5A, b"3210"), t.read_write(0, b"0123")
assert t.read_write(0, b"") == (0x5A, b"")
assert t.read_write(dev=0, in_data=bytearray(range(16))) == (0x5A, bytes(range(15, -1, -1)))
size.value = 1000  # more than the array: its 16 bytes
assert t.read_write(0, b"ab") == (0x5A, b"ba" + bytes(14)), t.read_write(0, b"ab")
size.value = 1
assert t.read_write(0, b"ab") == (0x5A, b"b")
for bad, kind in ((b"x" * 17, ValueError), ("text", TypeError), (None, TypeError)):
    try:
        t.read_write(0, bad)
        raise AssertionError(bad)
    except kind as e:
        assert "argument 'in_data'" in str(e), e
try:
    t.read_write(1, b"a")
    raise AssertionError("status 1 raised nothing")
except t.TlvError:
    pass
assert t.get_pair(0) == (2, 1)
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(pkg), CUBIND_LIBTLV=str(lib)))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_output_tuple_rules_that_do_not_fit_leave_the_function_unbound(run_cubind, cuda_include,
                                                                       tmp_path):
    for k, bad in enumerate(["output-tuple tlGetPair pair a/b b",      # a is no array
                             "output-tuple tlGetPair pair a c",        # no field c
                             "output-field tlGetPair pair a\noutput-tuple tlGetPair pair a b"]):
        (tmp_path / str(k)).mkdir()
        rules = TLV_RULES.replace("output-tuple tlGetPair pair b a", bad)
        out = generate_written(run_cubind, cuda_include, tmp_path / str(k), "tlv", TLV_H, rules)
        assert "def get_pair(" not in (out / "tlv.pyi").read_text(), bad
        assert "tlGetPair" in (out / "tlv_unsupported.txt").read_text(), bad
    # an input struct (no `out` rule): no output to make a tuple of
    (tmp_path / "in").mkdir()
    out = generate_written(run_cubind, cuda_include, tmp_path / "in", "tlv", TLV_H,
                           TLV_RULES.replace("out tlReadWrite buffer\n", ""))
    assert "output-tuple rule needs a struct output" in (out / "tlv_unsupported.txt").read_text()
