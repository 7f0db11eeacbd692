# SPDX-License-Identifier: Apache-2.0
"""The snake_case library modules against the recorded public surface of
their cuda.bindings counterparts (tests/data/cuda_bindings_<api>_13.3.1.json):
every reference function is bound with the same signature, or named in
docs/compatibility.md as `<api>.<function>` with the reason; every enum
has the same members and values; every class exists (the exception
classes as exceptions). Needs no library: importing never loads it."""
import importlib
import inspect
import json
import re

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "compatibility.md"

# module of cubind -> its reference
LIBRARIES = {"nvvm": "cuda_bindings_nvvm_13.3.1.json",
             "nvfatbin": "cuda_bindings_nvfatbin_13.3.1.json",
             "cufile": "cuda_bindings_cufile_13.3.1.json",
             "nvml": "cuda_bindings_nvml_13.3.1.json"}


def reference(api):
    return json.loads((ROOT / "tests" / "data" / LIBRARIES[api]).read_text())


def listed(doc, api, name):
    """docs/compatibility.md names `api.name` (as `nvvm.llvm_version`)."""
    return re.search(r"(?<![\w.])%s\.%s(?!\w)" % (re.escape(api), re.escape(name)), doc) is not None


@pytest.mark.parametrize("api", sorted(LIBRARIES))
def test_every_reference_function_is_bound_or_listed(api):
    module = importlib.import_module("cubind." + api)
    doc = DOC.read_text()
    bound, documented, missing, differ = [], [], [], []
    for name, entry in sorted(reference(api)["functions"].items()):
        fn = getattr(module, name, None)
        if fn is None:
            (documented if listed(doc, api, name) else missing).append(name)
            continue
        bound.append(name)
        ours = str(inspect.signature(fn))
        if ours != entry["signature"] and not listed(doc, api, name):
            differ.append("%s%s, cuda.bindings %s%s" % (name, ours, name, entry["signature"]))
    print("cubind.%s: %d reference functions bound, %d listed, %d missing"
          % (api, len(bound), len(documented), len(missing)))
    assert not missing, "neither bound nor in docs/compatibility.md: %s" % missing
    assert not differ, "signatures differing, not in docs/compatibility.md: %s" % differ
    assert len(bound) >= len(reference(api)["functions"]) // 2


@pytest.mark.parametrize("api", sorted(LIBRARIES))
def test_enums_and_classes_match(api):
    module = importlib.import_module("cubind." + api)
    ref = reference(api)
    doc = DOC.read_text()
    for name, members in ref["enums"].items():
        # an enum the header cubind generates from lacks is named in
        # docs/compatibility.md as api.Enum
        if not hasattr(module, name) and listed(doc, api, name):
            continue
        enum = getattr(module, name)
        # a member the header cubind generates from lacks, or gives another
        # value (a later release's), is named in docs/compatibility.md as
        # api.Enum.MEMBER
        # (`api.Enum.*`: every such member of Enum, a later header's own)
        def later(member):
            return listed(doc, api, "%s.%s" % (name, member)) or "`%s.%s.*`" % (api, name) in doc

        ours = {m.name: members[m.name] if m.name in members and later(m.name)
                else int(m) for m in enum}
        absent = {k: v for k, v in members.items() if k not in ours and later(k)}
        assert dict(ours, **absent) == members, name
    for name, kinds in ref["classes"].items():
        if not hasattr(module, name) and listed(doc, api, name):
            continue  # a class of a later header, named in the doc likewise
        cls = getattr(module, name)
        assert isinstance(cls, type), name
        if "<exception>" in kinds:
            assert issubclass(cls, Exception), name
    # a constant is the module's (the reference records str(value)), or
    # named in docs/compatibility.md
    for name, value in ref["constants"].items():
        assert str(getattr(module, name, None)) == value or listed(doc, api, name), name


@pytest.mark.parametrize("api", ["cufile", "nvml"])
def test_struct_classes_have_ptr_as_cuda_bindings(api):
    """Every struct class whose cuda.bindings twin has `ptr` has it too: the
    address of the C struct the object holds (getPtr()'s), read-only."""
    module = importlib.import_module("cubind." + api)
    checked = 0
    for name, kinds in reference(api)["classes"].items():
        cls = getattr(module, name, None)
        if "ptr" not in kinds or not isinstance(cls, type) or not hasattr(cls, "getPtr"):
            continue
        obj = cls()
        assert isinstance(obj.ptr, int) and obj.ptr == obj.getPtr() != 0, name
        with pytest.raises(AttributeError):
            obj.ptr = 1
        checked += 1
    assert checked >= (3 if api == "cufile" else 60), checked  # 12.4 headers
