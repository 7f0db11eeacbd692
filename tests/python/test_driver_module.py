# SPDX-License-Identifier: Apache-2.0
"""cubind.driver against the test-only fake driver: module shape, enums,
handles, argument conversion, the raising face, driver loading."""
import pickle

import sys

import pytest

from conftest import run_python, symbols_file


def test_every_bound_function_is_exported_and_no_other(drv, model, unsupported):
    names = {f["name"] for f in model["functions"]}
    exported = {n for n in dir(drv) if n.startswith("cu") and callable(getattr(drv, n))
                and not isinstance(getattr(drv, n), type)}
    assert exported == names - unsupported
    assert len(exported) >= 200
    # Unsupported functions are absent, never stubs that raise.
    for name in unsupported:
        assert not hasattr(drv, name), name


def test_every_enum_with_every_value(drv, model):
    for enum in model["enums"]:
        cls = getattr(drv, enum["name"])
        assert issubclass(cls, int)
        for item in enum["values"]:
            member = getattr(cls, item["name"])
            assert int(member) == item["value"]
            assert member.value == item["value"]
            assert cls(item["value"]) is cls(item["value"])  # singletons


def test_enum_typedef_aliases_are_the_same_class_in_both_faces(drv, model):
    # `typedef CUlaunchAttributeID CUstreamAttrID;`: one class under each
    # name, in cubind.driver and cubind.cu; members keep the first name.
    import cubind.cu as cu
    aliases = [(a, e) for e in model["enums"] for a in e["aliases"]]
    assert aliases, "cuda.h has typedefs of enum typedefs; the model lists none"
    for alias, enum in aliases:
        cls = getattr(drv, enum["name"])
        assert getattr(drv, alias) is cls, alias
        assert getattr(cu, alias) is cls, alias
        values = {v["name"]: v["value"] for v in enum["values"]}
        assert {k: int(m) for k, m in getattr(drv, alias).__members__.items()} == values
        for name, value in values.items():
            member = getattr(getattr(cu, alias), name)
            assert member is cls(value) and type(member).__name__ == enum["name"]


def test_enum_names_and_aliases(drv):
    r = drv.CUresult.CUDA_ERROR_INVALID_VALUE
    assert r.name == "CUDA_ERROR_INVALID_VALUE" and r == 1
    assert drv.CUresult(0) is drv.CUresult.CUDA_SUCCESS
    assert "CUDA_SUCCESS" in drv.CUresult.__members__
    with pytest.raises(ValueError):
        drv.CUresult(123456)
    assert pickle.loads(pickle.dumps(r)) is r


def test_unknown_status_from_a_newer_driver_does_not_crash(drv, fake):
    fake.fakecuda_fail_next(b"cuDriverGetVersion", 4242, 1)
    err, version = drv.cuDriverGetVersion()
    assert int(err) == 4242 and err.name is None and version is None
    assert "4242" in repr(err)


def test_every_handle_type(drv, model):
    for h in model["handles"]:
        cls = getattr(drv, h["name"])
        obj = cls(0x1234)
        assert int(obj) == 0x1234
        assert obj == cls(0x1234) and hash(obj) == hash(cls(0x1234))
        assert obj != cls(0x1235)
        assert repr(obj) == "<%s 0x1234>" % h["name"]
        assert isinstance(obj.getPtr(), int) and obj.getPtr() != 0
        assert cls() == cls(0) and not cls()


def test_value_handles(drv):
    dev = drv.CUdevice(3)
    assert int(dev) == 3 and repr(dev) == "<CUdevice 3>"
    ptr = drv.CUdeviceptr(2**64 - 1)
    assert int(ptr) == 2**64 - 1
    with pytest.raises(OverflowError):
        drv.CUdeviceptr(2**64)
    with pytest.raises(TypeError):
        drv.CUdevice(drv.CUstream(1))


def test_status_tuples(drv):
    err, dev = drv.cuDeviceGet(1)
    assert err == drv.CUresult.CUDA_SUCCESS and isinstance(dev, drv.CUdevice) and int(dev) == 1
    err, dev = drv.cuDeviceGet(7)
    assert err == drv.CUresult.CUDA_ERROR_INVALID_DEVICE and dev is None
    err, value = drv.cuDeviceGetAttribute(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev=drv.CUdevice(1))
    assert err == 0 and value == 1 * 1000 + 1  # the fake answers attrib*1000+dev
    (err,) = drv.cuInit(0)
    assert err == 0


def test_keywords_and_positional_errors(drv):
    assert drv.cuDeviceGet(ordinal=0)[0] == 0
    with pytest.raises(TypeError, match="ordinal"):
        drv.cuDeviceGet()
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        drv.cuDeviceGet(nope=1)
    with pytest.raises(TypeError, match="multiple values for argument 'ordinal'"):
        drv.cuDeviceGet(0, ordinal=0)
    with pytest.raises(TypeError, match="takes 1 argument"):
        drv.cuDeviceGet(0, 1)
    with pytest.raises(TypeError, match="takes no arguments"):
        drv.cuCtxGetCurrent(1)


@pytest.mark.parametrize("value, exc, text", [
    ("0", TypeError, "argument 'Flags' must be an int"),
    (b"0", TypeError, "argument 'Flags' must be an int"),
    (float("nan"), ValueError, "argument 'Flags': cannot convert float NaN"),
    (float("inf"), OverflowError, "argument 'Flags': cannot convert float infinity"),
    (-0.5, None, None),  # truncated to 0 and taken, as cuda.bindings (test_conversions.py)
    (None, TypeError, "argument 'Flags' must be an int"),
    (-1, OverflowError, "argument 'Flags' = -1 does not fit in unsigned int"),
    (2**32, OverflowError, "argument 'Flags' = 4294967296 does not fit in unsigned int"),
    (2**100, OverflowError, "does not fit in unsigned int"),
])
def test_unsigned_conversion_errors_name_the_parameter(drv, value, exc, text):
    if text is None:
        assert drv.cuInit(value) == (drv.CUresult.CUDA_SUCCESS,)
        return
    with pytest.raises(exc, match=text):
        drv.cuInit(value)


def test_signed_and_enum_and_handle_errors(drv):
    with pytest.raises(OverflowError, match="'ordinal'"):
        drv.cuDeviceGet(2**31)
    with pytest.raises(TypeError, match="'attrib' must be CUdevice_attribute or int, not cubind.driver.CUresult"):
        drv.cuDeviceGetAttribute(drv.CUresult.CUDA_SUCCESS, 0)
    with pytest.raises(OverflowError, match="'attrib'"):
        drv.cuDeviceGetAttribute(-1, 0)
    with pytest.raises(TypeError, match="'hStream' must be CUstream, int, an object with __cuda_stream__ or None, not cubind.driver.CUevent"):
        drv.cuStreamQuery(drv.CUevent(1))
    with pytest.raises(TypeError, match="'dev' must be CUdevice, int or None"):
        drv.cuDeviceGetAttribute(1, drv.CUcontext(0))


def test_handles_accept_int_and_none(drv):
    ctx = drv.cuDevicePrimaryCtxRetain(0)[1]
    assert drv.cuCtxSetCurrent(int(ctx))[0] == 0
    assert drv.cuCtxGetCurrent()[1] == ctx
    assert drv.cuCtxSetCurrent(None)[0] == 0
    assert int(drv.cuCtxGetCurrent()[1]) == 0


def test_raising_face(drv):
    import cubind
    import cubind.cu as cu
    assert cu.cuDeviceGet(1) == drv.CUdevice(1)
    assert cu.cuInit(0) is None
    assert cu.CUresult is drv.CUresult and cu.CUstream is drv.CUstream
    with pytest.raises(cubind.CUDAError) as info:
        cu.cuDeviceGet(9)
    e = info.value
    assert e.result is drv.CUresult.CUDA_ERROR_INVALID_DEVICE
    assert e.name == "CUDA_ERROR_INVALID_DEVICE"
    assert "invalid device" in e.message
    assert "CUDA_ERROR_INVALID_DEVICE" in str(e)


def test_functions_resolve_the_header_abi_version(drv, fake, model):
    versions = {f["name"]: f["proc_version"] for f in model["functions"]}
    drv.cuMemGetInfo()
    assert fake.fakecuda_last_proc_version(b"cuMemGetInfo") == versions["cuMemGetInfo"] == 3020
    drv.cuCtxGetDevice()
    assert fake.fakecuda_last_proc_version(b"cuCtxGetDevice") == 2000


def test_docstrings_and_signatures(drv):
    import inspect
    assert str(inspect.signature(drv.cuDeviceGetAttribute)) == "(attrib, dev)"
    doc = drv.cuDeviceGetAttribute.__doc__
    assert "CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)" in doc
    assert "cuda.bindings.driver.cuDeviceGetAttribute" in doc   # NVIDIA's docs, linked


def test_import_without_driver_then_calls_raise():
    proc = run_python(
        "import cubind, cubind.driver as d\n"
        "try:\n    d.cuInit(0)\nexcept cubind.DriverNotFoundError as e:\n    print('RAISED', e)\n",
        CUBIND_LIBCUDA="/nonexistent/libcuda.so.1")
    assert proc.returncode == 0, proc.stderr
    assert "RAISED" in proc.stdout and "/nonexistent/libcuda.so.1" in proc.stdout


def test_missing_entry_point_raises_function_not_found():
    # A driver too old for a function: the fake refuses versions above its own.
    proc = run_python(
        "import ctypes, os, cubind, cubind.driver as d\n"
        "lib = ctypes.CDLL(os.environ['CUBIND_LIBCUDA'])\n"
        "lib.fakecuda_set_driver_version(11000)\n"
        "try:\n    d.cuCtxGetDevice_v2(None)\nexcept cubind.FunctionNotFoundError as e:\n    print('RAISED', e)\n")
    assert proc.returncode == 0, proc.stderr
    assert "RAISED" in proc.stdout and "cuCtxGetDevice" in proc.stdout


def test_output_buffer_sized_by_a_later_parameter(drv):
    # cuDeviceGetName(char *name, int len, CUdevice dev): the count comes
    # after the buffer it sizes; cuda.bindings returns the whole buffer.
    err, name = drv.cuDeviceGetName(64, 0)
    assert err == 0 and len(name) == 64 and name.startswith(b"Fake")
    with pytest.raises(ValueError, match="'length' must be positive"):
        drv.cuDeviceGetName(0, 0)


def test_value_classes_and_callback_classes_exist(drv):
    assert int(drv.cuuint64_t(2**64 - 1)) == 2**64 - 1
    assert int(drv.cuuint32_t(7)) == 7
    with pytest.raises(OverflowError):
        drv.cuuint32_t(2**32)
    # parameters of those types still take plain ints, and the classes too
    assert drv.cuDriverGetVersion()[0] == 0
    assert repr(drv.CUhostFn(0x20)) == "<CUhostFn 0x20>"


def test_result_tuples_held_by_the_caller_never_change(drv):
    # The drop-in face reuses a result tuple only when nobody holds it.
    r0 = drv.cuDeviceGet(0)
    r1 = drv.cuDeviceGet(1)
    assert r0 is not r1
    assert int(r0[1]) == 0 and int(r1[1]) == 1
    dev0 = drv.cuDeviceGet(0)[1]          # the tuple is dropped at once
    dev1 = drv.cuDeviceGet(1)[1]          # and may be reused here
    assert int(dev0) == 0 and int(dev1) == 1
    bad = drv.cuDeviceGet(9)               # an error in the same slot
    assert bad[0] == drv.CUresult.CUDA_ERROR_INVALID_DEVICE and bad[1] is None
    assert int(r0[1]) == 0 and int(r1[1]) == 1
    values = [int(drv.cuDeviceGet(i % 2)[1]) for i in range(100)]
    assert values == [i % 2 for i in range(100)]


def test_a_result_handed_out_while_converting_is_not_refilled(drv, fake):
    # Between taking its reusable tuple and refilling it, a call may run
    # Python code: an unknown status becomes a new enum instance, a tracked
    # allocation, and on CPython 3.10 and 3.11 that allocation may run the
    # collector and finalizers there and then. A finalizer calling the same
    # function gets the tuple handed out while the outer call still means to
    # refill it; the outer call must leave the tuple that is now held alone.
    import gc
    attr = drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    dev = drv.CUdevice(0)
    kept = []

    class CallsInFinalizer:
        def __del__(self):
            kept.append(drv.cuDeviceGetAttribute(attr, dev))

    thresholds = gc.get_threshold()
    gc.collect()
    gc.disable()
    try:
        drv.cuDeviceGetAttribute(attr, dev)          # its tuple, dropped: reusable
        garbage = CallsInFinalizer()
        garbage.cycle = garbage
        del garbage
        fake.fakecuda_fail_next(b"cuDeviceGetAttribute", 4242, 1)
        gc.set_threshold(1)                          # the next tracked allocation collects
        gc.enable()
        outer = drv.cuDeviceGetAttribute(attr, dev)
    finally:
        gc.set_threshold(*thresholds)
        gc.enable()
    gc.collect()
    assert len(kept) == 1
    inner = kept[0]
    assert inner[0] == drv.CUresult.CUDA_SUCCESS and inner[1] == int(attr) * 1000
    assert int(outer[0]) == 4242 and outer[1] is None
    assert inner is not outer


class StreamLike:
    """A stream known only through the CUDA stream protocol (as cuda.core's
    Stream): __cuda_stream__() returns `answer`, or raises it."""

    def __init__(self, answer):
        self.answer = answer

    def __cuda_stream__(self):
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_streams_speak_the_cuda_stream_protocol(drv, fake):
    # CUstream has __cuda_stream__() -> (0, handle), as cuda.bindings' does;
    # the stream-protocol rule makes every CUstream parameter, the class's
    # constructor and struct fields of the class take any object that
    # implements the protocol (cuda.bindings refuses those).
    import cubind.cu as cu
    ctx = cu.cuCtxGetCurrent() or cu.cuDevicePrimaryCtxRetain(0)
    cu.cuCtxSetCurrent(ctx)
    stream = cu.cuStreamCreate(0)
    try:
        assert stream.__cuda_stream__() == (0, int(stream)) and int(stream) != 0
        assert drv.CUstream(0).__cuda_stream__() == (0, 0)
        assert not hasattr(drv.CUcontext(0), "__cuda_stream__")
        like = StreamLike((0, int(stream)))
        assert drv.cuStreamQuery(like) == (drv.CUresult.CUDA_SUCCESS,)
        assert cu.cuStreamQuery(like) is None
        assert drv.cuStreamQuery(StreamLike((0, 0)))[0] == 0        # the default stream
        assert drv.CUstream(like) == stream
        config = drv.CUlaunchConfig()
        config.hStream = like
        assert int(config.hStream) == int(stream)
        # a stream that does not exist reaches the driver as that handle
        assert drv.cuStreamQuery(StreamLike((0, 0xDEAD0)))[0] != 0
        bad = [
            ((1, int(stream)), ValueError, "version 1 of the CUDA stream protocol"),
            ([0, int(stream)], TypeError, "returned list, not a (version, handle) tuple"),
            ((0,), TypeError, "returned tuple, not a (version, handle) tuple"),
            (None, TypeError, "returned NoneType"),
            ((0, -1), OverflowError, "argument 'hStream' = -1 does not fit"),
            ((0, 2**64), OverflowError, "does not fit"),
            (("0", 1), TypeError, "argument 'hStream' must be an int"),
        ]
        for answer, exc, text in bad:
            with pytest.raises(exc) as info:
                drv.cuStreamQuery(StreamLike(answer))
            assert str(info.value).startswith("cuStreamQuery(): argument 'hStream'"), info.value
            assert text in str(info.value), (answer, str(info.value))
        # the protocol's own exception is not replaced by a vaguer one
        with pytest.raises(KeyError, match="inner"):
            drv.cuStreamQuery(StreamLike(KeyError("inner")))
        with pytest.raises(ValueError, match="CUstream\\(\\): argument 'init_value': version 2"):
            drv.CUstream(StreamLike((2, 0)))
        # only stream classes take it; other handle classes stay as they were
        with pytest.raises(TypeError, match="argument 'ctx' must be an int"):
            drv.cuCtxSetCurrent(StreamLike((0, int(ctx))))
        with pytest.raises(TypeError, match="must be CUstream, int, an object with __cuda_stream__ or None"):
            drv.cuStreamQuery(ctx)
    finally:
        cu.cuStreamDestroy(stream)


def test_successful_calls_without_outputs_share_one_result_tuple(drv):
    # A drop-in call without outputs returns the module's one (CUDA_SUCCESS,)
    # tuple when it succeeds (it cannot change, so callers may all hold it)
    # and a tuple of its own when it fails.
    ok = drv.cuInit(0)
    assert ok == (drv.CUresult.CUDA_SUCCESS,) and type(ok) is tuple
    held = [drv.cuInit(0) for _ in range(3)]
    assert all(r is ok for r in held)
    err, ctx = drv.cuCtxGetCurrent()
    assert err == 0 and drv.cuCtxSetCurrent(ctx) is ok
    bad = drv.cuCtxSetCurrent(drv.CUcontext(0xBAD))
    assert bad == (drv.CUresult.CUDA_ERROR_INVALID_CONTEXT,) and bad is not ok
    assert ok == (drv.CUresult.CUDA_SUCCESS,) and drv.cuInit(0) is ok


def test_int_outputs_at_the_edges_of_the_small_int_table(drv, fake):
    # Int outputs -5..256 come from the module's table of the interpreter's
    # cached small ints (bind_support.h: cbs_int_result), the rest from
    # PyLong_FromLongLong. cuDriverGetVersion's int is set through the fake
    # on both sides of the upper edge; the priority range's -5 is the lower.
    import cubind.cu as cu
    original = cu.cuDriverGetVersion()
    try:
        for v in (1, 5, 255, 256, 257, 258, 1000, 12040, 2**31 - 1):
            assert fake.fakecuda_set_driver_version(v) == 0
            err, got = drv.cuDriverGetVersion()
            assert err == 0 and type(got) is int and got == v
            raised = cu.cuDriverGetVersion()
            assert type(raised) is int and raised == v
            # the cached objects are the interpreter's own, as CPython's
            # conversion would give; past the edge, new ints
            small = int(str(v)) is int(str(v))
            assert (got is int(str(v))) == small and (raised is int(str(v))) == small
    finally:
        assert fake.fakecuda_set_driver_version(original) == 0
    least, greatest = cu.cuCtxGetStreamPriorityRange()
    assert (least, greatest) == (0, -5) and greatest is int("-5")
    assert drv.cuCtxGetStreamPriorityRange() == (drv.CUresult.CUDA_SUCCESS, 0, -5)


def test_a_handle_the_caller_holds_is_never_returned_again(drv):
    # Results are reused only when nothing but the cache holds them: a
    # handle the caller kept from an earlier result is never handed out
    # again, since handles are mutable (__init__, writes through getPtr()).
    # On a free-threaded build a CUdevice output is instead the one shared
    # object of its value (an intern rule), which __init__ refuses:
    # test_interned_handles.py.
    import ctypes
    import sysconfig
    import cubind.cu as cu
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip("free-threaded build: CUdevice outputs are interned")
    a = drv.cuDeviceGet(0)[1]
    b = drv.cuDeviceGet(0)[1]
    assert a is not b and int(a) == int(b) == 0
    a.__init__(1)
    assert int(a) == 1 and int(b) == 0
    ctypes.c_int.from_address(b.getPtr()).value = 1
    c = drv.cuDeviceGet(0)[1]
    assert int(b) == 1 and int(c) == 0 and c is not b
    d = cu.cuDeviceGet(0)
    e = cu.cuDeviceGet(0)
    assert d is not e
    d.__init__(1)
    assert int(e) == 0 and int(cu.cuDeviceGet(0)) == 0


def test_raising_face_outputs_held_by_the_caller_never_change(drv):
    # The raising face keeps its last output (one) or outputs tuple (several)
    # for reuse; what the caller still holds is never refilled.
    import cubind.cu as cu
    d0 = cu.cuDeviceGet(0)
    d1 = cu.cuDeviceGet(1)
    assert d0 is not d1 and int(d0) == 0 and int(d1) == 1
    assert [int(cu.cuDeviceGet(i % 2)) for i in range(100)] == [i % 2 for i in range(100)]
    assert int(d0) == 0 and int(d1) == 1
    same = [cu.cuDeviceGet(1) for _ in range(3)]  # all held: equal, distinct or not
    assert all(int(x) == 1 for x in same) and int(d0) == 0
    with pytest.raises(cu.CUDAError):
        cu.cuDeviceGet(9)                     # an error leaves the slot alone
    assert int(cu.cuDeviceGet(0)) == 0 and int(d1) == 1
    # Several outputs: a tuple, refilled only when dropped. (free, total)
    # changes with an allocation, so a refilled held tuple would show it.
    saved = cu.cuCtxGetCurrent()
    ctx = cu.cuDevicePrimaryCtxRetain(d0)
    cu.cuCtxSetCurrent(ctx)
    try:
        before = cu.cuMemGetInfo()
        assert isinstance(before, tuple) and len(before) == 2
        ptr = cu.cuMemAlloc(1 << 20)
        after = cu.cuMemGetInfo()
        assert before[0] - after[0] == 1 << 20 and before[1] == after[1]
        cu.cuMemFree(ptr)
        assert [cu.cuMemGetInfo()[0] for _ in range(3)] == [before[0]] * 3
        assert before[0] - after[0] == 1 << 20
    finally:
        cu.cuCtxSetCurrent(saved)
        cu.cuDevicePrimaryCtxRelease(d0)


def test_struct_outputs_are_not_kept_after_the_caller_drops_them(drv):
    # Only results made of plain values are kept for reuse: a struct output
    # is referenced by the caller alone (the local and getrefcount's argument).
    import cubind.cu as cu
    uuid = cu.cuDeviceGetUuid(0)
    assert sys.getrefcount(uuid) == 2
    res = drv.cuDeviceGetUuid(0)
    assert sys.getrefcount(res) == 2 and sys.getrefcount(res[1]) == 3  # + the tuple
    if not hasattr(sys, "_is_gil_enabled") or sys._is_gil_enabled():
        dev = cu.cuDeviceGet(0)               # plain values: kept (GIL builds)
        assert sys.getrefcount(dev) == 3
    # A lone int output of the raising face is not kept: no later call could
    # reuse an int. (The fake driver's attribute values are past CPython's
    # cached small ints: a new object each call.)
    sms = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0)
    assert sms > 256 and sys.getrefcount(sms) == 2


def test_arrays_counted_by_another_parameter_minus_n(drv):
    import cubind
    # globalStrides holds tensorRank - 1 elements (rule `count ... tensorRank-1`).
    with pytest.raises(ValueError, match="'globalStrides' has 1 elements, fewer than the 2"):
        drv.cuTensorMapEncodeTiled(0, 3, 0, [1, 2, 3], [3], [1, 1, 1], [1, 1, 1], 0, 0, 0, 0)
    with pytest.raises(ValueError, match="'elementStrides' has 1 elements, fewer than the 2"):
        drv.cuTensorMapEncodeTiled(0, 2, 0, [1, 2], [3], [1, 1], [1], 0, 0, 0, 0)
    # Right lengths pass conversion and reach the driver (the fake lacks it).
    with pytest.raises(cubind.FunctionNotFoundError, match="cuTensorMapEncodeTiled"):
        drv.cuTensorMapEncodeTiled(0, 2, 0, [1, 2], [8], [1, 1], [1, 1], 0, 0, 0, 0)


# The fast path of every call: helpers that must not be called out of line.
# Each translation unit of the driver module is large (a `parts` rule cuts
# out/driver.c into units of about 10,000 lines), and GCC stops inlining
# "static inline" functions in a unit once it has grown past its limit;
# that once cost every launch two calls (runtime/include/cubind_compat.h:
# CBS_ALWAYS_INLINE).
FAST_PATH_HELPERS = {
    "get_state", "proc", "result_cache", "reusable_result", "prev_output",
    "remember_result", "make_result0", "make_result1", "cbs_arg_unsigned", "cbs_arg_signed",
    "cbs_arg_enum", "cbs_arg_handle", "cbs_compact_int", "cbs_proc_get", "cbs_is_handle",
    "cbs_handle_bits", "cbs_handle_reuse", "cbs_int_result", "cbs_uint_result",
    "cbs_kernel_layout_slot", "cbs_pack_init", "cbs_pack_extra", "cbs_pack_release",
}


def test_fast_path_helpers_have_no_out_of_line_copy(drv):
    import shutil
    import subprocess
    if not shutil.which("nm"):
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(["nm", symbols_file(drv.__file__)], capture_output=True, text=True,
                         check=True).stdout
    # local symbols of the unstripped build; GCC's clones carry a suffix
    # (proc.constprop.0, cbs_arg_unsigned.part.0)
    defined = {line.split()[-1].split(".")[0] for line in out.splitlines() if line.split()}
    assert "impl_cuLaunchKernel" in defined, "the build is stripped: nothing to check"
    assert not FAST_PATH_HELPERS & defined


def test_attribute_typed_results_keep_their_values_across_reuse(drv):
    # cuPointerGetAttribute's output is typed by the attribute asked for (an
    # int, a CUdeviceptr, a CUcontext): every type is a plain value, so the
    # drop-in face reuses its result tuple when the caller dropped it. A
    # reused tuple must get the new attribute's value and type, and a held
    # one must keep its own.
    import cubind.cu as cu
    ctx = cu.cuCtxGetCurrent() or cu.cuDevicePrimaryCtxRetain(0)
    cu.cuCtxSetCurrent(ctx)
    ptr = cu.cuMemAlloc(256)
    try:
        A = drv.CUpointer_attribute
        want = {
            A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: (int, int(drv.CUmemorytype.CU_MEMORYTYPE_DEVICE)),
            A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER: (drv.CUdeviceptr, int(ptr)),
            A.CU_POINTER_ATTRIBUTE_CONTEXT: (drv.CUcontext, int(ctx)),
            A.CU_POINTER_ATTRIBUTE_RANGE_SIZE: (int, 256),
        }
        held = {attr: drv.cuPointerGetAttribute(attr, ptr) for attr in want}
        order = list(want) * 25
        for attr in order:                      # each result dropped at once
            err, value = drv.cuPointerGetAttribute(attr, ptr)
            kind, number = want[attr]
            assert err == 0 and type(value) is kind and int(value) == number, (attr, value)
        for attr, (kind, number) in want.items():
            err, value = held[attr]
            assert err == 0 and type(value) is kind and int(value) == number, (attr, value)
        assert drv.cuPointerGetAttribute(A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 8)[1] is None
    finally:
        cu.cuMemFree(ptr)
