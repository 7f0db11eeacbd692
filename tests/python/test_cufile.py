# SPDX-License-Identifier: Apache-2.0
"""cubind.cufile (cuda.bindings.cufile's face: snake_case functions that
raise cubind.cuFileError printing 'NAME (value): description; CUDA
status: NAME (value)' as cuda.bindings does, handles as ints, the
enums OpError, FileHandleType..., the structs Descr, IOParams, IOEvents)
on a real libcufile without GPUDirect Storage: the library's version, the
driver failing to open raising cuFileError (never crashing), every other
function's error path, the structs, bad input naming the parameter, the
library search.

The library is CUDA 12.4's libcufile.so.0 from scripts/fetch-cuda-libs.sh
(configure's cuda_libs; conftest.py points CUBIND_LIBCUFILE at it);
skipped, with the reason, where none is found. The library prints its own
diagnostics on stderr (no libcuda on its path, no nvidia-fs)."""
import os

import pytest

from conftest import cuda_driver_loadable
from library_common import CallRecorder, library_or_skip
from nvrtc_common import check_missing_library

call = CallRecorder()  # the functions these tests call (test_every_function_called)


@pytest.fixture(scope="module")
def cufile():
    return library_or_skip("cufile", "libcufile")


def fails_or_returns(c, name, *args):
    """The call's result, or its cuFileError: without GPUDirect Storage most
    calls fail, but as the library's exception, never a crash."""
    try:
        return call(c, name, *args)
    except c.cuFileError as e:
        # a newer library's status may lie outside 12.4's OpError; str()
        # as cuda.bindings': the status, its description, the CUDA status
        cuda = e.cuda_error
        assert e.status == int(e.result) != 0 and cuda is not None
        assert str(e).endswith("; CUDA status: %s (%d)" % (cuda_status_name(cuda), cuda))
        if isinstance(e.result, c.OpError):
            assert str(e).startswith("%s (%d): %s;" % (e.result.name, e.status, e.message))
            assert e.message == c.op_status_error(e.status)
        return e


def cuda_status_name(value):
    import cubind.driver as d
    try:
        return d.CUresult(value).name
    except ValueError:
        return "CUresult_UNKNOWN"


def test_version_and_use_count(cufile):
    version = call(cufile, "get_version")
    assert isinstance(version, int) and version >= 1000  # 1.9 is 1090
    assert call(cufile, "use_count") == 0


def test_driver_open_without_gds_raises(cufile):
    c = cufile
    if cuda_driver_loadable():
        # with a driver cuFile may open in its compatibility mode: either
        # way the call returns or raises cuFileError, never crashes
        if not isinstance(fails_or_returns(c, "driver_open"), c.cuFileError):
            assert call(c, "use_count") >= 0
            fails_or_returns(c, "driver_close")
        pytest.skip("a CUDA driver is loadable: driver_open may succeed without GDS")
    with pytest.raises(c.cuFileError) as e:
        call(c, "driver_open")
    assert e.value.status >= int(c.OpError.DRIVER_NOT_INITIALIZED)  # a cuFile status, not 0
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(c.cuFileError) as e:
        call(c, "driver_close")  # never opened
    assert e.value.result == c.OpError.DRIVER_NOT_INITIALIZED
    assert e.value.message == c.op_status_error(e.value.status)


def test_op_status_error_is_what_a_raised_error_says():
    """op_status_error(status), as cuda.bindings.cufile has it: cufile.h's
    own description of the status (its static cufileop_status_error,
    compiled into the module by the error-string-inline rule: no library
    needed), the message of a cuFileError raised for that status (before:
    not bound)."""
    import importlib
    c = importlib.import_module("cubind.cufile")
    statuses = [c.OpError.DRIVER_NOT_INITIALIZED, c.OpError.CUDA_DRIVER_ERROR,
                c.OpError.INVALID_VALUE, c.OpError.INTERNAL_ERROR]
    texts = set()
    for member in statuses:
        text = call(c, "op_status_error", int(member))
        assert isinstance(text, str) and text and text != member.name
        assert c.cuFileError(int(member)).message == text
        assert c.cuFileError(int(member), 2).message == text
        # a member, or by keyword, as cuda.bindings' (status) takes it
        assert c.op_status_error(member) == c.op_status_error(status=int(member)) == text
        texts.add(text)
    assert len(texts) == len(statuses)  # one description per status
    # a status the header does not list: its fallback text, still a str
    assert isinstance(c.op_status_error(123456), str)
    with pytest.raises(TypeError, match="'status'"):
        c.op_status_error("5001")
    with pytest.raises(TypeError, match="'status'"):
        c.op_status_error()


def test_structs(cufile):
    c = cufile
    d = c.Descr()
    assert c.Descr is c.CUfileDescr_t
    d.type = c.FileHandleType.OPAQUE_FD
    d.handle.fd = 7
    assert d.type == c.FileHandleType.OPAQUE_FD and d.handle.fd == 7
    p = c.IOParams()
    p.mode = c.BatchMode.BATCH
    p.u.batch.size = 4096
    assert p.u.batch.size == 4096 and p.opcode == c.Opcode.READ
    assert c.IOEvents().status == 0
    props = call(c, "driver_get_properties")  # the library's defaults
    assert isinstance(props, c.DrvProps) and props.max_batch_io_size > 0


def test_every_error_path_raises_or_returns(cufile, tmp_path):
    c = cufile
    fd = os.open(tmp_path / "data", os.O_CREAT | os.O_RDWR)
    try:
        d = c.Descr()
        d.type = c.FileHandleType.OPAQUE_FD
        d.handle.fd = fd
        assert isinstance(fails_or_returns(c, "handle_register", d), (int, c.cuFileError))
    finally:
        os.close(fd)
    buf = bytearray(4096)
    fails_or_returns(c, "buf_register", buf, len(buf), 0)
    fails_or_returns(c, "buf_deregister", buf)
    for name in ("driver_set_max_direct_io_size", "driver_set_max_cache_size",
                 "driver_set_max_pinned_mem_size"):
        fails_or_returns(c, name, 1024)
    fails_or_returns(c, "driver_set_poll_mode", True, 4)
    fails_or_returns(c, "batch_io_set_up", 4)
    fails_or_returns(c, "batch_io_submit", 0, 1, c.IOParams(), 0)
    # NULL handles: the library returns or reports, no crash
    fails_or_returns(c, "batch_io_cancel", 0)
    assert call(c, "batch_io_destroy", 0) is None
    assert call(c, "handle_deregister", 0) is None
    fails_or_returns(c, "stream_register", 0, 0)
    fails_or_returns(c, "stream_deregister", 0)


def test_async_and_status_take_addresses(cufile):
    """The address rule: read_async / write_async / batch_io_get_status
    take their pointers as int addresses of memory the caller keeps, as
    cuda.bindings' intptr_t parameters (0 and None are NULL); without
    GPUDirect Storage the library refuses, as its exception; anything
    but an address is a TypeError naming the parameter, before the call."""
    import ctypes
    c = cufile
    size, off, buf_off, done = (ctypes.c_size_t(16), ctypes.c_longlong(0), ctypes.c_longlong(0),
                                ctypes.c_ssize_t(0))
    addrs = [ctypes.addressof(x) for x in (size, off, buf_off, done)]
    for name in ("read_async", "write_async"):
        fails_or_returns(c, name, 0, 0, *addrs, 0)
    nr = ctypes.c_uint(1)
    events = ctypes.create_string_buffer(64)
    fails_or_returns(c, "batch_io_get_status", 0, 0, ctypes.addressof(nr), ctypes.addressof(events), None)
    for bad, name in ((("x", addrs[1], addrs[2], addrs[3]), "'size_p'"),
                      ((addrs[0], 1.5j, addrs[2], addrs[3]), "'file_offset_p'")):
        with pytest.raises(TypeError, match=name):
            c.read_async(0, 0, *bad, 0)
    with pytest.raises(TypeError, match="'timeout'"):
        c.batch_io_get_status(0, 0, 0, 0, b"1 second")


def test_read_and_write_failures_raise(cufile):
    """cuFileRead / cuFileWrite return -1 with errno, or -status: both
    raise (negative-errors), never return the negative count."""
    c = cufile
    buf = bytearray(16)
    for name in ("read", "write"):
        with pytest.raises((OSError, c.cuFileError)):
            call(c, name, 0, buf, 16, 0, 0)  # no handle registered


def test_bad_input_names_the_parameter(cufile):
    c = cufile
    with pytest.raises(TypeError, match="'descr'"):
        c.handle_register("descr")
    with pytest.raises(TypeError, match="'buf_ptr_base'"):
        c.buf_register("not a buffer", 16, 0)
    # a C bool takes any object's truth, as cuda.bindings' bint does: "yes"
    # reaches the library (its answer, or its error without GDS); a truth
    # that fails is that failure, before any call
    fails_or_returns(c, "driver_set_poll_mode", "yes", 4)

    class NoTruth:
        def __bool__(self):
            raise ZeroDivisionError("no truth")
    with pytest.raises(ZeroDivisionError, match="no truth"):
        c.driver_set_poll_mode(NoTruth(), 4)
    with pytest.raises((TypeError, OverflowError), match="'max_cache_size'"):
        c.driver_set_max_cache_size(-1)
    with pytest.raises(TypeError, match="'nr'"):
        c.batch_io_set_up(None)


def test_struct_pointers_take_addresses_as_cuda_bindings(cufile):
    """The struct-addresses rule: a struct pointer takes an int address
    too, as cuda.bindings.cufile's intptr_t parameters
    (`handle_register(descr.ptr)`, cuda-python's own test_cufile.py),
    besides the struct's object; a bool, a float, a str or a struct of
    another class is a TypeError naming the parameter, a negative address
    an OverflowError, all before the call."""
    import ctypes
    c = cufile
    d = c.Descr()
    d.type = c.FileHandleType.OPAQUE_FD
    d.handle.fd = -1  # no file: the library refuses, as its exception
    by_object = fails_or_returns(c, "handle_register", d)
    by_address = fails_or_returns(c, "handle_register", d.ptr)
    assert type(by_object) is type(by_address)
    if isinstance(by_object, c.cuFileError):
        assert by_object.status == by_address.status
    fails_or_returns(c, "batch_io_submit", 0, 1, c.IOParams().ptr, 0)
    raw = ctypes.create_string_buffer(64)
    fails_or_returns(c, "handle_register", ctypes.addressof(raw))  # zeroed: no such type
    for bad, error in ((True, TypeError), (1.5, TypeError), ("d", TypeError),
                       (c.IOParams(), TypeError), (-1, OverflowError)):
        with pytest.raises(error, match="'descr'"):
            c.handle_register(bad)
    with pytest.raises(TypeError, match="'iocbp'.*an int address"):
        c.batch_io_submit(0, 1, 2.0, 0)


def test_batch_io_submit_reads_no_more_records_than_it_is_given(cufile):
    """The counted-records rule: batch_io_submit's nr stays an argument
    (cuda.bindings' order) and iocbp holds at least nr records: an IOParams
    array, a sequence of records, None for none, or an address (unchecked,
    as cuda.bindings' intptr_t); more records asked for than given is a
    ValueError naming 'iocbp' and the count, before the call (the library
    read past the one record of IOParams() when nr was 4)."""
    c = cufile
    for given in (c.IOParams(4), [c.IOParams() for _ in range(4)], c.IOParams(4).ptr):
        fails_or_returns(c, "batch_io_submit", 0, 4, given, 0)
    fails_or_returns(c, "batch_io_submit", 0, 0, None, 0)
    for given, held in ((c.IOParams(), 1), (c.IOParams(3), 3), ([c.IOParams()] * 2, 2), (None, 0)):
        with pytest.raises(ValueError, match=r"'iocbp' holds %d records, fewer than the 4 its count 'nr'"
                           % held):
            c.batch_io_submit(0, 4, given, 0)
    for bad in ("x", [c.Descr()], True, 1.0):
        with pytest.raises(TypeError, match="'iocbp'"):
            c.batch_io_submit(0, 1, bad, 0)


@pytest.mark.parametrize("name, cls, param", [("driver_get_properties", "DrvProps", "props"),
                                              ("get_stats_l1", "StatsLevel1", "stats"),
                                              ("get_stats_l2", "StatsLevel2", "stats"),
                                              ("get_stats_l3", "StatsLevel3", "stats")])
def test_outputs_fill_the_callers_struct(cufile, name, cls, param):
    """A struct the library writes is the caller's when given, as
    cuda.bindings.cufile takes its address (`get_stats_l1(stats.ptr)`):
    the object or its address, written in place, the call returning None;
    without one (or None) a new object is returned. A read-only object is
    refused before the call. (The get_stats_* functions are cuFile 1.15's,
    CUDA 13.0: a module from 12.4's header lacks them.)"""
    c = cufile
    if not hasattr(c, name):
        pytest.skip("%s: not in the cufile.h these bindings come from" % name)
    fn, T = getattr(c, name), getattr(c, cls)
    new = fails_or_returns(c, name)
    if isinstance(new, c.cuFileError):
        with pytest.raises(c.cuFileError):
            fn(T())  # the same refusal, with the caller's struct
        return
    assert type(new) is T
    mine, by_address, by_keyword = T(), T(), T()
    assert fn(mine) is None and fn(by_address.ptr) is None and fn(**{param: by_keyword}) is None
    assert repr(mine) == repr(new) == repr(by_address) == repr(by_keyword)  # their fields
    if name == "driver_get_properties":
        assert mine.max_batch_io_size > 0 and repr(mine) != repr(T())  # the library wrote it
    assert type(fn(None)) is T
    ro = T.from_ptr(mine.ptr, readonly=True, owner=mine)
    with pytest.raises(TypeError, match="read-only"):
        fn(ro)


def test_missing_library_is_a_clear_error_and_import_works(tmp_path):
    check_missing_library("cufile", "CUBIND_LIBCUFILE", "libcufile.so.99", "cuFileError",
                          "get_version", tmp_path)


def test_every_function_called(cufile):
    """Runs last in this file: every function of the module was called
    above (the list comes from the module, not from this file)."""
    call.check_all_called(cufile, 25)
