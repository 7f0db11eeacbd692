# SPDX-License-Identifier: Apache-2.0
"""Enum member names under the enum-prefix rule (gen/render/render.c,
enum_lost_words): a member loses PREFIX and its class's name where that
name stands as whole words, at the start (ValueType's DOUBLE) or in the
middle (CoolerTarget's THERMAL_NONE of NVML_THERMAL_COOLER_TARGET_NONE);
where that would leave some member starting with a digit, every member
keeps the class's last word (NvlinkVersion's VERSION_1_0 and
VERSION_INVALID), as cuda.bindings.nvml names them; a member without the
class's name keeps the rest (BrandType's BRAND_TESLA)."""
import re

from conftest import generate_written


HEADER = """#ifndef ENAMES_H
#define ENAMES_H
typedef enum { NV_SUCCESS = 0, NV_ERROR_UNKNOWN = 999 } nvReturn_t;
typedef enum nvValueType_enum { NV_VALUE_TYPE_DOUBLE = 0, NV_VALUE_TYPE_UNSIGNED_INT = 1 } nvValueType_t;
typedef enum nvCoolerTarget_enum {
    NV_THERMAL_COOLER_TARGET_NONE = 1, NV_THERMAL_COOLER_TARGET_GPU = 2,
    NV_THERMAL_COOLER_TARGET_GPU_RELATED = 6 } nvCoolerTarget_t;
typedef enum nvLinkVersion_enum {
    NV_LINK_VERSION_INVALID = 0, NV_LINK_VERSION_1_0 = 1, NV_LINK_VERSION_2_2 = 3 } nvLinkVersion_t;
typedef enum nvBrandType_enum { NV_BRAND_UNKNOWN = 0, NV_BRAND_TESLA = 2 } nvBrandType_t;
typedef enum nvDigit_enum { NV_DIGIT_1 = 1, NV_DIGIT_2 = 2 } nvDigit_t;
nvReturn_t nvUse(nvValueType_t a, nvCoolerTarget_t b, nvLinkVersion_t c, nvBrandType_t d, nvDigit_t e);
#endif
"""

RULES = """header enames.h
module - enames
result nvReturn_t NV_SUCCESS
capi-sentinel NV_ERROR_UNKNOWN
error-class NvError
python-names nv snake
library libenames.so.1
library-env CUBIND_LIBENAMES
enum-prefix NV_
"""


def members(stub, cls):
    body = re.search(r"^class %s\(_Enum\):\n((?:    .*\n)+)" % cls, stub, re.M)
    assert body, "no class %s in the stub" % cls
    return re.findall(r"^    (\w+): %s$" % cls, body.group(1), re.M)


def test_enum_prefix_names_members_as_cuda_bindings_nvml(run_cubind, cuda_include, tmp_path):
    out = generate_written(run_cubind, cuda_include, tmp_path, "enames", HEADER, RULES)
    stub = (out / "enames.pyi").read_text()
    assert members(stub, "ValueType") == ["DOUBLE", "UNSIGNED_INT"]
    assert members(stub, "CoolerTarget") == ["THERMAL_NONE", "THERMAL_GPU", "THERMAL_GPU_RELATED"]
    assert members(stub, "LinkVersion") == ["VERSION_INVALID", "VERSION_1_0", "VERSION_2_2"]
    assert members(stub, "BrandType") == ["BRAND_UNKNOWN", "BRAND_TESLA"]
    # a one-word class whose removal leaves digits keeps its word
    assert members(stub, "Digit") == ["DIGIT_1", "DIGIT_2"]
