# SPDX-License-Identifier: Apache-2.0
"""cubind.nvml's enum classes against cuda.bindings.nvml 13.3.1's
(tests/data/cuda_bindings_nvml_13.3.1.json), in particular those that
gen/nvml.rules' define-enum rules make of nvml.h's groups of #define
constants (FieldId of NVML_FI_*, EventType of nvmlEventType*, ...):
every member agrees in value with the reference (but for a member
docs/compatibility.md names as a later header's), and every constant of
CUDA 12.4's header a rule selects is a member. The header's constants
are the module's own attributes (NVML_FI_DEV_ECC_CURRENT, kept beside
the classes). Needs no library: importing never loads it."""
import importlib
import json
import re

import pytest

from conftest import ROOT

REFERENCE = json.loads((ROOT / "tests" / "data" / "cuda_bindings_nvml_13.3.1.json").read_text())
DOC = (ROOT / "docs" / "compatibility.md").read_text()
RULES = (ROOT / "gen" / "nvml.rules").read_text()


@pytest.fixture(scope="module")
def nvml():
    return importlib.import_module("cubind.nvml")


def define_enum_rules():
    """{CLASS: [(PREFIX, STRIP, {excluded name: None, or the member a
    -NAME=MEMBER word renames it to})]} of gen/nvml.rules."""
    rules = {}
    for line in RULES.splitlines():
        words = line.split("#")[0].split()
        if not words or words[0] != "define-enum":
            continue
        cls, prefix, rest = words[1], words[2], words[3:]
        strip = rest[0] if rest and not rest[0].startswith("-") else prefix
        excluded = dict((w[1:].split("=") + [None])[:2] for w in rest if w.startswith("-"))
        rules.setdefault(cls, []).append((prefix, strip, excluded))
    return rules


def member_name(name, strip):
    """The member a constant becomes: its name without STRIP, upper snake
    case when that is camelCase (written here apart from the generator's
    C, as a second reading of the rule's documentation)."""
    rest = name[len(strip):]
    if rest == rest.upper():
        return rest
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", rest).upper()


def header_constants(module):
    """12.4's integer constants as the module has them: its int attributes
    (the #define constants), then the header's enumerators (NVML_ and the
    member name, as the enum-prefix rule names them)."""
    consts = {name: value for name, value in vars(module).items()
              if type(value) is int and not name.startswith("_")}
    for cls in vars(module).values():
        if isinstance(cls, type) and issubclass(cls, int) and "The enumeration ``" in (cls.__doc__ or ""):
            for m in cls:
                consts.setdefault("NVML_" + m.name, int(m))
    return consts


def later(enum, member):
    """docs/compatibility.md names the member as a later header's."""
    return (re.search(r"`nvml\.%s\.%s`" % (enum, member), DOC) is not None
            or "`nvml.%s.*`" % enum in DOC)


def test_define_enum_classes_hold_every_selected_constant(nvml):
    """Each define-enum class has exactly the constants of 12.4's header
    its lines select, named as the rule says, with their values."""
    rules = define_enum_rules()
    assert "FieldId" in rules and "EventType" in rules
    consts = header_constants(nvml)
    for cls, lines in sorted(rules.items()):
        expected = {}
        for name, value in consts.items():
            for prefix, strip, excluded in lines:
                if name.startswith(prefix) and excluded.get(name):  # renamed
                    expected.setdefault(excluded[name], value)
                    break
                if name.startswith(prefix) and name not in excluded:
                    expected.setdefault(member_name(name, strip), value)
                    break
        if not expected:  # lines for a later header's constants make no class
            assert not hasattr(nvml, cls), cls
            continue
        enum = getattr(nvml, cls)
        assert {m.name: int(m) for m in enum} == expected, cls
        assert "The constants %s*" % lines[0][0] in enum.__doc__, cls


def test_enum_members_agree_with_cuda_bindings(nvml):
    """For every reference enum cubind.nvml has, each member cubind has
    holds the reference's value, but for one docs/compatibility.md names
    (a count member a later header moves); the define-enum classes hold
    every reference member whose constant 12.4's header has."""
    rules = define_enum_rules()
    consts = header_constants(nvml)
    classes = present = members = 0
    for name, ref in sorted(REFERENCE["enums"].items()):
        enum = getattr(nvml, name, None)
        if enum is None:
            continue
        classes += 1
        members += len(ref)
        ours = {m.name: int(m) for m in enum}
        for member, value in ours.items():
            if member in ref:
                present += 1
                assert value == ref[member] or later(name, member), (name, member, value)
        for prefix, strip, excluded in rules.get(name, ()):
            # a reference member under the rule's name whose constant
            # 12.4 has is there
            for member in ref:
                c_name = strip + member
                if c_name.startswith(prefix) and c_name in consts and c_name not in excluded:
                    assert member in ours, (name, member)
    print("cubind.nvml: %d of %d reference enums, %d of their %d members"
          % (classes, len(REFERENCE["enums"]), present, members))
    assert set(rules) <= set(REFERENCE["enums"])  # each rule makes a reference class
    assert present > 0


def test_define_enum_classes_behave_as_the_headers_enums(nvml):
    """Singleton int members, lookup by value, iteration, the stub."""
    m = nvml
    assert m.FieldId.DEV_ECC_CURRENT == m.NVML_FI_DEV_ECC_CURRENT
    assert m.EventType.XID_CRITICAL_ERROR == m.nvmlEventTypeXidCriticalError
    assert m.EventType.PSTATE == m.nvmlEventTypePState
    assert m.ClocksEventReasons.THROTTLE_REASON_HW_SLOWDOWN == m.nvmlClocksThrottleReasonHwSlowdown
    assert m.InitFlag(m.NVML_INIT_FLAG_NO_GPUS) is m.InitFlag.NO_GPUS
    # -NAME=MEMBER: the header's misspelt constant under cuda.bindings'
    # member name (cuda.core reads it), the constant kept as spelt
    assert m.FanControlPolicy.TEMPERATURE_CONTINUOUS_SW == m.NVML_FAN_POLICY_TEMPERATURE_CONTINOUS_SW == 0
    assert not hasattr(m.FanControlPolicy, "TEMPERATURE_CONTINOUS_SW")
    assert isinstance(m.InitFlag.NO_ATTACH, int) and type(m.InitFlag.NO_ATTACH) is m.InitFlag
    assert [int(x) for x in m.InitFlag] == [m.NVML_INIT_FLAG_NO_GPUS, m.NVML_INIT_FLAG_NO_ATTACH]
    with pytest.raises(ValueError):
        m.InitFlag(12345)
    stub = (ROOT / "out" / "nvml.pyi").read_text()
    made = [cls for cls in define_enum_rules() if hasattr(m, cls)]
    assert "FieldId" in made and "ComputeInstanceProfileCaps" not in made  # a later header's
    for cls in made:
        assert "\nclass %s(_Enum):\n" % cls in stub, cls
