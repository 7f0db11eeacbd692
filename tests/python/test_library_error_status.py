# SPDX-License-Identifier: Apache-2.0
"""The library modules' exception classes made as cuda.bindings makes
them: nvJitLinkError(status), cuFileError(status, cu_err), NvmlError(status)
(each library's one class, and the runtime's CUDARuntimeError): the
library's enum member and name filled in, `status` the int, func None,
args the arguments given so that pickling rebuilds the same exception, and
bad arguments refused naming 'status'. CUDAError's own form (result, name,
message, func=None), which cubind raises with, keeps working."""
import importlib
import pickle

import pytest

# (module, error class, result enum, a status of that enum that is an error)
CLASSES = [
    ("nvjitlink", "nvJitLinkError", "Result", 1),
    ("nvvm", "nvvmError", "Result", 1),
    ("nvfatbin", "nvFatbinError", "Result", 1),
    ("nvml", "NvmlError", "Return", 1),
    ("cufile", "cuFileError", "OpError", None),
    ("runtime", "CUDARuntimeError", "cudaError_t", 1),
]


# The classes whose str() in cuda.bindings 13.3.1 is the library's
# description of the status alone (the message-str rule).
MESSAGE_ALONE = ("nvml",)


def error_status(enum, status):
    """`status`, or the first error member's value of `enum` when None."""
    if status is not None:
        return status
    return min(int(m) for m in enum if int(m) != 0)


@pytest.mark.parametrize("module, cls_name, enum_name, status", CLASSES,
                         ids=[c[0] for c in CLASSES])
def test_status_form_fills_member_name_and_pickles(module, cls_name, enum_name, status):
    m = importlib.import_module("cubind." + module)
    cls, enum = getattr(m, cls_name), getattr(m, enum_name)
    status = error_status(enum, status)
    e = cls(status)
    member = enum(status)
    assert e.status == status and type(e.status) is int
    assert e.result is member and e.name == member.name and e.func is None
    assert e.args == (status,)
    if module in MESSAGE_ALONE:
        assert str(e) == e.message, str(e)
    else:
        assert str(e).startswith("%s (%d)" % (member.name, status)), str(e)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cls and again.result is member and str(again) == str(e)
    # a numpy-like integer (anything with __index__) is a status too
    assert cls(member).status == status
    # the form cubind raises with keeps working beside it
    raised = cls(member, member.name, "the message", "someFunction")
    assert raised.func == "someFunction" and raised.message == "the message"
    assert raised.status == status


# The classes whose str() in cuda.bindings 13.3.1 is 'NAME (value)' and
# nothing more (the message, function and log stay attributes).
NAME_VALUE = [c for c in CLASSES if c[0] in ("nvjitlink", "nvvm", "nvfatbin")]


@pytest.mark.parametrize("module, cls_name, enum_name, status", NAME_VALUE,
                         ids=[c[0] for c in NAME_VALUE])
def test_str_is_the_name_and_value(module, cls_name, enum_name, status):
    m = importlib.import_module("cubind." + module)
    cls, member = getattr(m, cls_name), getattr(m, enum_name)(status)
    expected = "%s (%d)" % (member.name, status)
    assert str(cls(status)) == expected
    assert str(cls(member, member.name, "the message", "someFunction")) == expected


@pytest.mark.parametrize("module, cls_name, enum_name, status", CLASSES,
                         ids=[c[0] for c in CLASSES])
def test_status_form_refuses_what_is_not_a_status(module, cls_name, enum_name, status):
    cls = getattr(importlib.import_module("cubind." + module), cls_name)
    with pytest.raises(TypeError, match="'status' must be an int, not float"):
        cls(1.5)
    with pytest.raises(TypeError, match="'status' must be an int, not NoneType"):
        cls(None)
    with pytest.raises(OverflowError, match="'status'"):
        cls(2**40)
    with pytest.raises(TypeError):
        cls()


def test_cufile_status_form_carries_the_cuda_error():
    c = importlib.import_module("cubind.cufile")
    status = error_status(c.OpError, None)
    assert c.cuFileError(status).cuda_error is None
    e = c.cuFileError(status, 700)
    assert e.cuda_error == 700 and e.status == status and e.args == (status, 700)
    again = pickle.loads(pickle.dumps(e))
    assert again.cuda_error == 700 and again.status == status
    with pytest.raises(TypeError, match="takes a status and an optional cuda_error"):
        c.cuFileError(status, 700, 1)


def cufile_h_description(enumerator):
    """What the CUFILE_OP entry of `enumerator` in the fetched cufile.h
    (configure's cuda_libs, which out/cufile.c is generated from) says of
    it, as its status-string function gives it; None without that header."""
    import os
    import re
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        from api_headers import fetched_include
    finally:
        sys.path.pop(0)
    include = fetched_include()
    path = os.path.join(include, "cufile.h") if include else ""
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        m = re.search(r"CUFILE_OP\([^,]*,\s*%s,\s*(.*)\)\s*\\?\s*$" % enumerator, f.read(), re.M)
    return " ".join(m.group(1).split()) if m else None


def test_cufile_str_is_cuda_bindings():
    """cuda.bindings 13.3.1's cuFileError prints 'NAME (value): ' and the
    description cufile.h gives the status, then, when it has the CUDA
    driver's status, '; CUDA status: NAME (value)' of that CUresult
    (before: 'NAME (value)' alone)."""
    c = importlib.import_module("cubind.cufile")
    d = importlib.import_module("cubind.driver")
    status = int(c.OpError.CUDA_DRIVER_ERROR)
    e = c.cuFileError(status, 2)
    assert e.message and e.message != e.name  # the header's description, not the name
    described = cufile_h_description("CU_FILE_CUDA_DRIVER_ERROR")
    assert described is None or e.message == described
    assert str(e) == "CUDA_DRIVER_ERROR (%d): %s; CUDA status: %s (2)" % (
        status, e.message, d.CUresult(2).name)
    assert str(pickle.loads(pickle.dumps(e))) == str(e)
    # no CUDA status given: none printed; one the enum lacks: named so
    assert str(c.cuFileError(status)) == "CUDA_DRIVER_ERROR (%d): %s" % (status, e.message)
    assert str(c.cuFileError(status, 123456)).endswith("; CUDA status: CUresult_UNKNOWN (123456)")
    # the form cubind raises with prints the same way
    raised = c.cuFileError(c.OpError.CUDA_DRIVER_ERROR, "CUDA_DRIVER_ERROR", e.message, "f")
    raised.cuda_error = 2
    assert str(raised) == str(e)


def test_nvml_str_is_the_message_alone():
    """cuda.bindings 13.3.1's NvmlError (and each subclass) prints what
    nvmlErrorString says of the status, nothing more (before: 'NAME
    (value)'); name, value and func stay attributes. Without the library
    the message is the status's name."""
    m = importlib.import_module("cubind.nvml")
    for cls, status in ((m.NvmlError, 1), (m.DriverNotLoadedError, 9),
                        (m.UninitializedError, 1)):
        member = m.Return(status)
        e = cls(status)
        assert e.message and str(e) == e.message
        assert "(%d)" % status not in str(e)
        assert str(pickle.loads(pickle.dumps(e))) == str(e)
        # the form cubind raises with prints its message the same way
        raised = cls(member, member.name, "the description", "nvmlSomething")
        assert str(raised) == "the description"
        assert raised.name == member.name and raised.status == status
        assert raised.func == "nvmlSomething"
    # the library's own text when it is loaded
    if m._library_status()[0]:
        assert str(m.NvmlError(9)) == m.error_string(9) != m.Return(9).name


def test_one_argument_libraries_refuse_a_second_status():
    n = importlib.import_module("cubind.nvjitlink")
    with pytest.raises(TypeError, match=r"nvJitLinkError\(\) takes a status \(2 arguments given\)"):
        n.nvJitLinkError(1, 2)


def test_nvml_subclass_made_from_its_status():
    m = importlib.import_module("cubind.nvml")
    e = m.UninitializedError(1)
    assert type(e) is m.UninitializedError and isinstance(e, m.NvmlError)
    assert e.status == 1 and e.name == m.Return(1).name
    assert type(pickle.loads(pickle.dumps(e))) is m.UninitializedError
