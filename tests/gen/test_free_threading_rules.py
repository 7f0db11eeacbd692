# SPDX-License-Identifier: Apache-2.0
"""Free-threading rule 2 of docs/design.md, checked on the source: no borrowed
reference is kept beyond the call that produced it, so the runtime
(every .c and .h under runtime/) and every template the generated modules are
made from (templates/) call no borrowed-reference API, but for the uses
listed in ALLOWED, each with the reason it cannot outlive its owner.

Flagged: the APIs that return a reference borrowed from a container or an
interpreter-wide object that another thread can change under free
threading (a dict, a list, a weak reference's referent, sys, a module's
namespace, the frame's builtins and globals). Not flagged: PyTuple_GetItem
/ PyTuple_GET_ITEM (a tuple never changes: its items live as long as the
tuple the caller holds), and APIs that return no object (PyErr_Occurred,
PyModule_GetState, PyCapsule_GetPointer).

Rule 3 (no state duplicated across extension modules) is checked on the
built extensions in tests/python/test_free_threading_symbols.py."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BORROWED = [
    "PyDict_GetItem", "PyDict_GetItemString", "PyDict_GetItemWithError",
    "_PyDict_GetItemWithError", "_PyDict_GetItemStringWithError", "_PyDict_GetItem_KnownHash",
    "_PyDict_GetItemIdWithError", "PyDict_SetDefault", "PyDict_Next",
    "PyList_GetItem", "PyList_GET_ITEM", "PySequence_Fast_GET_ITEM", "PySequence_Fast_ITEMS",
    "PyWeakref_GetObject", "PyWeakref_GET_OBJECT",
    "PyImport_AddModule", "PyImport_AddModuleObject", "PyImport_GetModuleDict",
    "PySys_GetObject", "PyEval_GetBuiltins", "PyEval_GetGlobals", "PyEval_GetLocals",
    "PyEval_GetFrame", "PyModule_GetDict", "PyThreadState_GetDict", "PyFunction_GetGlobals",
    "PyFunction_GetCode", "PyCell_GET", "PyObject_GenericGetDict",
]

# (file, API) -> (number of uses, why each cannot outlive what owns it).
ALLOWED = {
    ("runtime/include/cubind_compat.h", "PyDict_GetItemWithError"): (
        1, "cbs_dict_get_ref's shim, compiled only before 3.13 (no free-threaded build "
           "exists there): the reference is made strong at once"),
    ("runtime/module/bind_struct.c", "PyList_GET_ITEM"): (
        3, "lists the function made itself (PyDict_Keys / PyDict_Items snapshots, the "
           "entries list keep_collect built) that no other thread sees"),
    ("runtime/module/bind_reg.c", "PyList_GET_ITEM"): (
        1, "cbs_reg_retain's list of kept objects, made by cbs_struct_kept for this "
           "call: no other thread sees it"),
    ("runtime/module/bind_struct.c", "PyDict_GetItemString"): (
        1, "struct_new's own kwds: CPython makes a fresh dict for each call's keywords"),
    ("runtime/module/bind_struct.c", "PyDict_Next"): (
        1, "struct_init's own kwds: a fresh dict per call"),
    ("runtime/module/bind_struct_array.c", "PyDict_GetItemString"): (
        2, "array_new's own kwds (size, _ptr): a fresh dict per call"),
    ("runtime/module/bind_struct_array.c", "PyDict_Next"): (
        1, "array_init's own kwds: a fresh dict per call"),
    ("runtime/module/bind_support.c", "PyModule_GetDict"): (
        1, "cbs_share_module_objects at module exec, before the import returns (other "
           "importers wait on the module's import lock); the dict lives with the module"),
    ("runtime/module/bind_support.c", "PyDict_Next"): (
        1, "the same walk of the module's namespace at exec"),
    ("templates/driver/init.c.tmpl", "PyModule_GetDict"): (
        1, "the raising face is filled from the driver module's namespace at exec, "
           "before the import returns"),
    ("templates/driver/init.c.tmpl", "PyDict_Next"): (
        1, "the same walk at exec; each value is stored with PyObject_SetAttr (strong)"),
}

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def sources():
    for root, _dirs, files in sorted(os.walk(os.path.join(REPO, "runtime"))):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(root, name), REPO)
    for root, _dirs, files in sorted(os.walk(os.path.join(REPO, "templates"))):
        for name in sorted(files):
            yield os.path.relpath(os.path.join(root, name), REPO)


def code_of(text):
    """C text without comments and string literals (a mention is no use)."""
    return _STRING.sub('""', _COMMENT.sub(" ", text))


def uses(text):
    code = code_of(text)
    found = {}
    for api in BORROWED:
        n = len(re.findall(r"\b%s\s*\(" % re.escape(api), code))
        if n:
            found[api] = n
    return found


def test_the_scanner_finds_a_use_and_skips_mentions():
    assert uses("x = PyDict_GetItem(d, k);\n") == {"PyDict_GetItem": 1}
    assert uses("/* PyDict_GetItem(d, k) */ s = \"PyList_GetItem(l, 0)\";\n"
                "// PyWeakref_GetObject(w)\n") == {}
    assert uses("PyDict_GetItemRef(d, k, &v); PyTuple_GET_ITEM(t, 0);") == {}
    assert uses("PyList_GET_ITEM (l, i) + PyList_GET_ITEM(l, j)") == {"PyList_GET_ITEM": 2}


def test_no_borrowed_reference_api_but_the_allowed_uses():
    found = {}
    for path in sources():
        with open(os.path.join(REPO, path), encoding="utf-8") as f:
            for api, n in uses(f.read()).items():
                found[(path, api)] = n
    unexpected = {k: n for k, n in found.items() if k not in ALLOWED or ALLOWED[k][0] != n}
    assert not unexpected, (
        "borrowed-reference APIs (free-threading rule 2: use the strong-reference ones, "
        "or add an ALLOWED entry saying why the reference cannot outlive its owner): %r"
        % unexpected)
    stale = sorted(k for k in ALLOWED if k not in found)
    assert not stale, "ALLOWED entries with no use left: %r" % stale
