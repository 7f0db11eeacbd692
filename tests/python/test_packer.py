# SPDX-License-Identifier: Apache-2.0
"""The kernel parameter packer (issue 5) against the test-only fake driver.

The fake records the exact bytes a launch received (each kernelParams[i] at
its declared offset, gaps zero, or the CU_LAUNCH_PARAM_BUFFER_POINTER buffer
of `extra`); every expected byte string here is computed independently with
struct.pack or ctypes.

Each kernel gets a fresh name and its module is never unloaded, so no
CUfunction value is reused within this file (see the layout-cache hazard in
runtime/module/bind_packer.c).
"""
import ctypes
import itertools
import struct
import threading

import pytest

from conftest import ROUNDS, assert_race_clean, run_python

_names = itertools.count()
_keep = []          # modules and functions of this file: never unloaded


@pytest.fixture(scope="module")
def lib(fake):
    fake.fakecuda_last_launch_mode.argtypes = [ctypes.c_char_p]
    fake.fakecuda_last_launch_dims.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    fake.fakecuda_last_launch_stream.restype = ctypes.c_void_p
    fake.fakecuda_last_launch_stream.argtypes = [ctypes.c_char_p]
    return fake


def natural(sizes):
    """Offsets of parameters of these sizes, each aligned to min(size, 8)
    (16 for sizes over 8 that are multiples of 16)."""
    offs, at = [], 0
    for s in sizes:
        a = 16 if s > 8 and s % 16 == 0 else min(s, 8) if s in (1, 2, 4, 8) else 8 if s > 8 else 4
        at = (at + a - 1) // a * a
        offs.append(at)
        at += s
    return offs


# argtypes= of three parameters by size: how the raising face packs ints
# into an untyped kernel's 4-byte parameters (docs/kernel-arguments.md)
BY_SIZE3 = [None] * 3


class Kernel:
    def __init__(self, drv, lib, sizes, offsets=None):
        self.drv, self.lib = drv, lib
        self.name = f"pk{next(_names)}".encode()
        self.sizes = list(sizes)
        self.offsets = list(offsets) if offsets is not None else natural(self.sizes)
        n = len(self.sizes)
        o = (ctypes.c_size_t * max(n, 1))(*self.offsets)
        s = (ctypes.c_size_t * max(n, 1))(*self.sizes)
        assert lib.fakecuda_set_param_layout(None, self.name, n, o, s) == 0
        err, self.mod = drv.cuModuleLoadData(b"fake image for " + self.name + b"\0")
        assert err == 0
        err, self.f = drv.cuModuleGetFunction(self.mod, self.name)
        assert err == 0
        # recorded()'s buffer, made once: creating ctypes instances from
        # several threads at once races inside CPython 3.13's _ctypes
        # (generic_pycdata_new, python/cpython#128567), which ThreadSanitizer
        # reports (tests/run); a Kernel is used by one thread at a time.
        self._record = ctypes.create_string_buffer(max(self.total, 1) + 64)
        _keep.append(self)

    @property
    def total(self):
        return max((o + s for o, s in zip(self.offsets, self.sizes)), default=0)

    def launch(self, params, extra=None, face=None, **kw):
        face = face or self.drv
        return face.cuLaunchKernel(self.f, 1, 1, 1, 1, 1, 1, 0, None, params, extra, **kw)

    def ok(self, params, extra=None):
        r = self.launch(params, extra)
        assert r[0] == 0, r
        return self.recorded()

    def recorded(self):
        buf = self._record
        n = self.lib.fakecuda_last_launch_params(self.name, buf, len(buf))
        assert n >= 0
        return buf.raw[:n]

    def count(self):
        return self.lib.fakecuda_launch_count(self.name)

    def expect(self, chunks):
        """The bytes the fake must record: chunk i at offset i, gaps zero."""
        out = bytearray(self.total)
        for o, s, c in zip(self.offsets, self.sizes, chunks):
            assert len(c) == s, (len(c), s)
            out[o:o + s] = c
        return bytes(out)


@pytest.fixture
def kernel(drv, lib, ctx):
    return lambda sizes, offsets=None: Kernel(drv, lib, sizes, offsets)


def raises_naming(k, params, exc, index, *fragments, extra=None):
    before = k.count()
    with pytest.raises(exc) as info:
        k.launch(params, extra)
    text = str(info.value)
    assert text.startswith("cuLaunchKernel(): ")
    if index is not None:
        assert f"kernel parameter {index}:" in text, text
    for frag in fragments:
        assert frag in text, text
    assert k.count() == before, "nothing may be launched"
    return info.value


# ---- forms 1-3: None, an address, a buffer of pointers ----------------------

def test_none_and_empty(kernel):
    k = kernel([])
    assert k.launch(None)[0] == 0
    assert k.count() == 1
    assert k.launch(((), ()))[0] == 0
    assert k.launch(())[0] == 0
    assert k.launch([])[0] == 0
    assert k.count() == 4
    assert k.recorded() == b""


def prepared(values):
    arr = (ctypes.c_void_p * len(values))()
    for i, v in enumerate(values):
        arr[i] = ctypes.addressof(v)
    return arr


def test_int_address_and_buffers(kernel, lib):
    k = kernel([4, 8, 4])
    vals = [ctypes.c_int(-7), ctypes.c_uint64(0x1122334455667788), ctypes.c_float(1.5)]
    arr = prepared(vals)
    want = k.expect([struct.pack("<i", -7), struct.pack("<Q", 0x1122334455667788),
                     struct.pack("<f", 1.5)])
    assert k.ok(ctypes.addressof(arr)) == want
    assert k.ok(arr) == want
    assert k.ok(memoryview(arr)) == want
    import array
    a = array.array("Q", [ctypes.addressof(v) for v in vals])
    assert a.itemsize == 8
    assert k.ok(a) == want
    assert k.ok(bytes(a)) == want
    assert lib.fakecuda_last_launch_mode(k.name) == 1


def test_numpy_buffer_of_pointers(kernel):
    np = pytest.importorskip("numpy")
    k = kernel([4, 8])
    vals = [ctypes.c_int(3), ctypes.c_double(2.25)]
    ptrs = np.array([ctypes.addressof(v) for v in vals], dtype=np.uint64)
    want = k.expect([struct.pack("<i", 3), struct.pack("<d", 2.25)])
    assert k.ok(ptrs) == want
    assert k.ok(ptrs.astype(np.int64)) == want
    assert k.ok(ptrs.astype(np.uintp)) == want


def test_bad_buffer_and_type(kernel):
    k = kernel([4])
    raises_naming(k, b"abc", TypeError, None, "not an array of pointers")
    raises_naming(k, 1.5, TypeError, None, "kernelParams")
    raises_naming(k, -1, OverflowError, None)


# ---- form 4: (values, types) -------------------------------------------------

SCALARS = [
    (ctypes.c_bool, True), (ctypes.c_char, b"Z"), (ctypes.c_wchar, "\u0100"),
    (ctypes.c_byte, -127), (ctypes.c_ubyte, 255), (ctypes.c_short, -2), (ctypes.c_ushort, 65535),
    (ctypes.c_int, -5), (ctypes.c_uint, 0xFFFFFFFF), (ctypes.c_long, -3),
    (ctypes.c_ulong, 2**64 - 1), (ctypes.c_longlong, -4), (ctypes.c_ulonglong, 4),
    (ctypes.c_size_t, 5), (ctypes.c_float, 123.456), (ctypes.c_double, 123.456),
    (ctypes.c_void_p, 0xDEADBEEF), (ctypes.c_int8, -8), (ctypes.c_uint8, 200),
    (ctypes.c_int16, -16), (ctypes.c_uint16, 16), (ctypes.c_int32, -32), (ctypes.c_uint32, 32),
    (ctypes.c_int64, -64), (ctypes.c_uint64, 64), (ctypes.c_ssize_t, -1),
]


@pytest.mark.parametrize("as_ctypes", [False, True], ids=["python", "ctypes"])
def test_every_ctypes_scalar_type(kernel, as_ctypes):
    types = tuple(t for t, _ in SCALARS)
    values = tuple(t(v) if as_ctypes else v for t, v in SCALARS)
    k = kernel([ctypes.sizeof(t) for t in types])
    want = k.expect([bytes(t(v)) for t, v in SCALARS])
    assert k.ok((values, types)) == want
    # lists are accepted as well
    assert k.ok((list(values), list(types))) == want


@pytest.mark.parametrize("ctype,value", SCALARS, ids=[t.__name__ for t, _ in SCALARS])
def test_each_ctypes_scalar_alone(kernel, ctype, value):
    k = kernel([ctypes.sizeof(ctype)])
    assert k.ok(((value,), (ctype,))) == bytes(ctype(value))


def test_typed_conversions_like_cuda_bindings(kernel, drv):
    # c_double takes a c_float; ints convert to float; unsigned takes -1
    k = kernel([8, 4, 4, 1, 8])
    vals = (ctypes.c_float(1.25), 3, -1, 2, ctypes.c_void_p(None))
    types = (ctypes.c_double, ctypes.c_float, ctypes.c_uint, ctypes.c_bool, ctypes.c_void_p)
    assert k.ok((vals, types)) == k.expect([
        struct.pack("<d", 1.25), struct.pack("<f", 3.0), struct.pack("<I", 0xFFFFFFFF),
        b"\x01", struct.pack("<Q", 0)])
    # c_char from an int, c_int from a cubind enum member, c_ulonglong from a handle
    k2 = kernel([1, 4, 8])
    vals = (90, drv.CUresult.CUDA_ERROR_INVALID_VALUE, drv.CUdeviceptr(0x5000))
    types = (ctypes.c_char, ctypes.c_int, ctypes.c_ulonglong)
    assert k2.ok((vals, types)) == k2.expect([b"Z", struct.pack("<i", 1),
                                              struct.pack("<Q", 0x5000)])


class Holder:
    """A cuda.bindings-style object: getPtr() is the address of its C value."""

    def __init__(self, ctype, value):
        self.c = ctype(value)

    def getPtr(self):
        return ctypes.addressof(self.c)

    def __int__(self):
        return self.c.value


def test_typed_none_getptr_structs_enums(kernel, drv):
    class S(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    s = S(7, 2.5)
    dptr, dev = drv.CUdeviceptr(0xABCDEF00), drv.CUdevice(3)
    k = kernel([8, 4, 4, ctypes.sizeof(S), 8, 4])
    vals = (dptr, dev, drv.CUresult.CUDA_ERROR_INVALID_VALUE, s, Holder(ctypes.c_uint64, 99),
            drv.CUstream_flags.CU_STREAM_NON_BLOCKING)
    assert k.ok((vals, (None,) * 6)) == k.expect([
        struct.pack("<Q", 0xABCDEF00), struct.pack("<i", 3), struct.pack("<i", 1), bytes(s),
        struct.pack("<Q", 99), struct.pack("<i", 1)])


def test_typed_void_p_with_getptr_stores_the_storage_address(kernel, drv):
    # cuda.bindings' semantics: c_void_p + an object with getPtr() passes getPtr()
    h = drv.CUdeviceptr(0x1234)
    holder = Holder(ctypes.c_int, 5)
    k = kernel([8, 8])
    assert k.ok(((h, holder), (ctypes.c_void_p, ctypes.c_void_p))) == k.expect([
        struct.pack("<Q", h.getPtr()), struct.pack("<Q", holder.getPtr())])


def test_view_handle_packs_its_value_and_its_address(kernel, drv):
    """A handle made with _ptr= (cuda.bindings' view, the upstream
    test_kernelParams_types_cuda's cudaSurfaceObject_t(_ptr=mapped)): as a
    value it packs what the memory holds now; with c_void_p it packs that
    memory's address, where a kernel writes. Before: the value read once
    and the handle's own address, which a kernel cannot reach."""
    box = ctypes.c_uint64(0x1111)
    h = drv.CUdeviceptr(_ptr=ctypes.addressof(box))
    box.value = 0x2222
    k = kernel([8, 8])
    assert k.ok(((h, h), (None, ctypes.c_void_p))) == k.expect([
        struct.pack("<Q", 0x2222), struct.pack("<Q", ctypes.addressof(box))])


def test_typed_aggregates(kernel):
    class S(ctypes.Structure):
        _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]

    class U(ctypes.Union):
        _fields_ = [("i", ctypes.c_int), ("f", ctypes.c_float)]

    A = ctypes.c_short * 5
    k = kernel([12, 4, 10, 4])
    s, u, a = S(1, 2, 3), U(f=1.0), A(1, -2, 3, -4, 5)
    want = k.expect([bytes(s), bytes(u), bytes(a), struct.pack("<i", 9)])
    assert k.ok(((s, u, a, 9), (S, U, A, ctypes.c_int))) == want
    raises_naming(k, ((u, u, a, 9), (S, U, A, ctypes.c_int)), TypeError, 0, "S instance")


def test_typed_errors(kernel):
    k = kernel([4, 4])
    raises_naming(k, ((1, 2), (ctypes.c_int,)), TypeError, None, "different lengths")
    raises_naming(k, ((1, "x"), (ctypes.c_int, ctypes.c_int)), TypeError, 1, "needs an int")
    raises_naming(k, ((1, 2**31), (ctypes.c_int, ctypes.c_int)), OverflowError, 1)
    raises_naming(k, ((1, -2**31 - 1), (ctypes.c_int, ctypes.c_uint)), OverflowError, 1)
    raises_naming(k, ((1, 2), (ctypes.c_int, ctypes.c_char_p)), TypeError, 1, "unsupported")
    raises_naming(k, ((1, 2), (ctypes.c_int, None)), TypeError, 1, "getPtr")
    raises_naming(k, ((1, 1e300), (ctypes.c_int, ctypes.c_float)), OverflowError, 1, "float32")
    raises_naming(k, ((1, b"ab"), (ctypes.c_int, ctypes.c_char)), TypeError, 1)
    raises_naming(k, ((1, -1), (ctypes.c_int, ctypes.c_void_p)), OverflowError, 1)


# ---- form 5: plain values typed by the kernel --------------------------------

class CAI:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4",
                                         "version": 3}


def test_plain_pointer_int_float(kernel):
    k = kernel([8, 4, 4])
    assert k.ok((0x7F0000001000, 1024, 2.0)) == k.expect([
        struct.pack("<Q", 0x7F0000001000), struct.pack("<i", 1024), struct.pack("<f", 2.0)])
    assert k.ok([0x10, -1, -0.5]) == k.expect([
        struct.pack("<Q", 0x10), struct.pack("<i", -1), struct.pack("<f", -0.5)])


def test_plain_every_size_and_range(kernel):
    k = kernel([1, 2, 4, 8, 1, 2, 4, 8, 8, 4])
    vals = (-128, -32768, -2**31, -2**63, 255, 65535, 2**32 - 1, 2**64 - 1, 1.0 / 3, True)
    assert k.ok(vals) == k.expect([
        struct.pack("<b", -128), struct.pack("<h", -32768), struct.pack("<i", -2**31),
        struct.pack("<q", -2**63), struct.pack("<B", 255), struct.pack("<H", 65535),
        struct.pack("<I", 2**32 - 1), struct.pack("<Q", 2**64 - 1), struct.pack("<d", 1.0 / 3),
        struct.pack("<i", 1)])
    good = list(vals)
    for i, bad in [(0, 256), (1, -32769), (2, 2**32), (3, 2**64), (4, -129), (7, -2**63 - 1)]:
        v = list(good)
        v[i] = bad
        raises_naming(k, tuple(v), OverflowError, i, "out of range")


class _Small(int):
    pass


# Ints of one digit and of two on either side of CPython's digit
# boundaries (30 and 15 bits): cbs_compact_int reads the one-digit ones
# inline (3.12's compact ints; on 3.10 and 3.11 the digit itself), the
# others take the general path; both must give the same bytes.
DIGIT_EDGES = [0, 1, -1, 2**15 - 1, 2**15, -(2**15), 2**30 - 1, 2**30, -(2**30 - 1), -(2**30),
               2**31 - 1, -(2**31), 2**60, -(2**60)]


@pytest.mark.parametrize("value", DIGIT_EDGES)
def test_plain_ints_at_digit_boundaries(kernel, value):
    k = kernel([8, 8, 8])
    vals = (int(str(value)), _Small(value), bool(value))
    assert k.ok(vals) == k.expect([struct.pack("<q", value), struct.pack("<q", value),
                                    struct.pack("<q", bool(value))])
    k4 = kernel([4, 4])
    if -2**31 <= value < 2**32:  # a 4-byte parameter of unknown type: int32 or uint32
        four = struct.pack("<I", value & 0xFFFFFFFF)
        assert k4.ok((value, _Small(value))) == k4.expect([four, four])
    else:
        raises_naming(k4, (value, 0), OverflowError, 0, "out of range")


def test_plain_handles_objects_and_structs(kernel, drv):
    class S(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float), ("c", ctypes.c_double)]

    s = S(-3, 0.5, 7.0)
    k = kernel([8, 4, 8, 8, 16, 16, 4, 8, 4, 4, 2])
    vals = (drv.CUdeviceptr(0xFEED0000), drv.CUdevice(2), CAI(0xC0FFEE00),
            Holder(ctypes.c_uint64, 0x42), s, bytes(range(16)), ctypes.c_float(3.5),
            ctypes.c_int64(-9), drv.CUresult.CUDA_ERROR_INVALID_VALUE, bytearray(b"\1\2\3\4"),
            memoryview(struct.pack("<h", -300)))
    assert k.ok(vals) == k.expect([
        struct.pack("<Q", 0xFEED0000), struct.pack("<i", 2), struct.pack("<Q", 0xC0FFEE00),
        struct.pack("<Q", 0x42), bytes(s), bytes(range(16)), struct.pack("<f", 3.5),
        struct.pack("<q", -9), struct.pack("<i", 1), b"\1\2\3\4", struct.pack("<h", -300)])


def test_a_device_array_is_a_pointer_even_if_it_is_also_a_buffer(kernel):
    # CuPy's arrays export the buffer protocol too (for host-accessible
    # memory only; it raises for device memory): __cuda_array_interface__
    # decides first, so such an array is passed by its device address.
    class DeviceBuffer(bytearray):
        @property
        def __cuda_array_interface__(self):
            return {"data": (0xDE71CE00, False), "shape": (len(self),), "typestr": "|u1",
                    "version": 3}

    k = kernel([8, 8])
    assert k.ok((DeviceBuffer(8), bytearray(range(8)))) == k.expect(
        [struct.pack("<Q", 0xDE71CE00), bytes(range(8))])
    with pytest.raises(TypeError, match="kernel parameter 0: a device array .* must have 8 bytes"):
        kernel([4]).launch((DeviceBuffer(4),))


def test_plain_handles_fit_the_parameter_or_name_it(kernel, drv):
    # A handle's C value goes in directly when it fits (a CUdevice is a
    # signed int: -1 sign-extends), else the same OverflowError as its int().
    k = kernel([8, 2, 4, 8])
    vals = (drv.CUdevice(-1), drv.CUdevice(-2), drv.CUdeviceptr(0xFFFFFFFF),
            drv.CUstream(0x7000))
    assert k.ok(vals) == k.expect([struct.pack("<q", -1), struct.pack("<h", -2),
                                   struct.pack("<I", 0xFFFFFFFF), struct.pack("<Q", 0x7000)])
    raises_naming(k, (0, drv.CUdevice(70000), 0, 0), OverflowError, 1, "out of range")
    raises_naming(k, (0, drv.CUdevice(-40000), 0, 0), OverflowError, 1, "out of range")
    raises_naming(k, (0, 0, drv.CUdeviceptr(1 << 32), 0), OverflowError, 2, "out of range")
    k3 = kernel([3])
    raises_naming(k3, (drv.CUdeviceptr(1),), TypeError, 0, "does not fit a 3-byte")


def test_plain_numpy_scalars_and_arrays(kernel):
    np = pytest.importorskip("numpy")
    k = kernel([4, 8, 2, 8])
    vals = (np.float32(1.5), np.int64(-2), np.uint16(7), np.array([3], dtype=np.uint64))
    assert k.ok(vals) == k.expect([struct.pack("<f", 1.5), struct.pack("<q", -2),
                                   struct.pack("<H", 7), struct.pack("<Q", 3)])
    raises_naming(k, (np.float64(1.5), 1, 1, 1), TypeError, 0, "8 bytes given for a 4-byte")


def test_plain_errors_name_the_parameter_and_launch_nothing(kernel):
    k = kernel([8, 4, 4])
    raises_naming(k, (1, 2), TypeError, 2, "missing", "takes 3 parameters, 2 given")
    raises_naming(k, (1, 2, 3.0, 4), TypeError, 3, "unexpected", "4 given")
    raises_naming(k, (1, 2, "x"), TypeError, 2, "cannot pass str")
    raises_naming(k, (1, 2, 1e39), OverflowError, 2, "float32")
    raises_naming(k, (1, b"abc", 1.0), TypeError, 1, "3 bytes given for a 4-byte parameter")
    raises_naming(k, (1, CAI(5), 1.0), TypeError, 1, "8 bytes")
    k2 = kernel([2, 3])
    raises_naming(k2, (1.0, 1), TypeError, 0, "float does not fit a 2-byte")
    raises_naming(k2, (1, 1), TypeError, 1, "int does not fit a 3-byte")

    class Boom:
        @property
        def __cuda_array_interface__(self):
            raise ValueError("boom")

    err = raises_naming(k, (Boom(), 1, 1.0), TypeError, 0, "boom")
    assert isinstance(err.__cause__, ValueError)


def test_many_parameters_and_a_large_struct(kernel):
    n = 512
    k = kernel([4] * n)
    vals = tuple(range(-256, 256))
    want = b"".join(struct.pack("<i", v) for v in vals)
    assert k.ok(vals) == want
    assert k.ok((vals, (ctypes.c_int,) * n)) == want
    assert k.ok(prepared([ctypes.c_int(v) for v in vals])) == want
    raises_naming(k, vals[:-1], TypeError, 511, "missing")

    big = bytes((i * 7) & 0xFF for i in range(2048))
    k2 = kernel([8, 2048, 4], [0, 16, 2064])
    assert k2.ok((5, big, 6)) == k2.expect([struct.pack("<Q", 5), big, struct.pack("<i", 6)])
    Big = ctypes.c_ubyte * 2048
    b = Big.from_buffer_copy(big)
    assert k2.ok(((5, b, 6), (ctypes.c_uint64, Big, ctypes.c_int))) == k2.expect(
        [struct.pack("<Q", 5), big, struct.pack("<i", 6)])
    assert k2.ok(((5, b, 6), (ctypes.c_uint64, None, ctypes.c_int))) == k2.expect(
        [struct.pack("<Q", 5), big, struct.pack("<i", 6)])
    raises_naming(k2, (5, big[:-1], 6), TypeError, 1, "2047 bytes given for a 2048-byte")

    # 512 scalars and a 2048-byte struct together: heap past every inline bound
    sizes = [8] * 512 + [2048]
    k3 = kernel(sizes)
    vals3 = tuple(range(512)) + (big,)
    assert k3.ok(vals3) == k3.expect([struct.pack("<Q", v) for v in range(512)] + [big])


def test_layout_change_of_the_same_function_is_noticed(kernel, lib):
    k = kernel([4, 4])
    assert k.ok((1, 2)) == struct.pack("<ii", 1, 2)
    # the same CUfunction now reports three parameters: a count mismatch re-queries
    o, s = (ctypes.c_size_t * 3)(0, 8, 16), (ctypes.c_size_t * 3)(8, 8, 4)
    assert lib.fakecuda_set_param_layout(None, k.name, 3, o, s) == 0
    k.offsets, k.sizes = [0, 8, 16], [8, 8, 4]
    assert k.ok((1, 2, 3)) == k.expect([struct.pack("<Q", 1), struct.pack("<Q", 2),
                                        struct.pack("<i", 3)])
    # Same count, another layout: launches do not re-query the driver, but
    # any module unload through cubind forgets every cached layout (the
    # driver may then reuse CUfunction values).
    o, s = (ctypes.c_size_t * 3)(0, 8, 16), (ctypes.c_size_t * 3)(8, 8, 8)
    assert lib.fakecuda_set_param_layout(None, k.name, 3, o, s) == 0
    with pytest.raises(OverflowError, match="kernel parameter 2"):
        k.launch((1, 2, 2**40))          # still the cached 4-byte last parameter
    err, other = k.drv.cuModuleLoadData(b"another image")
    assert err == 0 and k.drv.cuModuleUnload(other)[0] == 0
    k.sizes = [8, 8, 8]
    assert k.ok((1, 2, 2**40)) == k.expect([struct.pack("<Q", v) for v in (1, 2, 2**40)])


def set_layout(k, sizes):
    """The fake driver reports `sizes` (natural offsets) for k's kernel from now on."""
    k.sizes, k.offsets = list(sizes), natural(sizes)
    n = len(sizes)
    o = (ctypes.c_size_t * n)(*k.offsets)
    s = (ctypes.c_size_t * n)(*k.sizes)
    assert k.lib.fakecuda_set_param_layout(None, k.name, n, o, s) == 0


def test_kernel_handle_copy_follows_the_handle_value(kernel, drv):
    # CUfunction objects keep their own copy of the layout; it belongs to the
    # value it was made for, not to the object
    assert drv.CUfunction().__sizeof__() > drv.CUstream().__sizeof__()
    a, b = kernel([4, 4]), kernel([8, 8])
    f = drv.CUfunction(int(a.f))
    launch = lambda params: drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, params, None)
    assert launch((1, 2))[0] == 0
    assert a.recorded() == struct.pack("<ii", 1, 2)
    f.__init__(int(b.f))               # the same object now names kernel b
    assert launch((1, 2))[0] == 0
    assert b.recorded() == struct.pack("<qq", 1, 2)
    f.__init__(int(a.f))
    assert launch((3, 4))[0] == 0
    assert a.recorded() == struct.pack("<ii", 3, 4)


def test_function_value_reused_behind_cubinds_back_starts_a_new_epoch(kernel):
    # Another library unloads a module (cubind sees no unload) and the driver
    # gives the same CUfunction value to a kernel with another count: that
    # forgets every cached layout, the handle's own copy included.
    k = kernel([4, 4])
    assert k.ok((1, 2)) == struct.pack("<ii", 1, 2)
    set_layout(k, [8, 8, 8])
    assert k.ok((1, 2, 3)) == k.expect([struct.pack("<q", v) for v in (1, 2, 3)])
    set_layout(k, [8, 8])              # two again, but not the copy's 4 + 4 bytes
    assert k.ok((1, 2)) == k.expect([struct.pack("<q", v) for v in (1, 2)])
    assert k.ok((5, 6)) == k.expect([struct.pack("<q", v) for v in (5, 6)])


# ---- extra ---------------------------------------------------------------------

def test_extra_buffer_pointer(kernel, drv, lib):
    k = kernel([8, 4, 4])
    args = struct.pack("<Qif", 0x1000, 77, 0.25)
    size = ctypes.c_size_t(len(args))
    P, S, END = (drv.CU_LAUNCH_PARAM_BUFFER_POINTER, drv.CU_LAUNCH_PARAM_BUFFER_SIZE,
                 drv.CU_LAUNCH_PARAM_END)
    assert k.ok(None, [P, args, S, size, END]) == args
    assert lib.fakecuda_last_launch_mode(k.name) == 2
    argbuf = ctypes.create_string_buffer(args, len(args))
    assert k.ok(None, (P, ctypes.addressof(argbuf), S, ctypes.addressof(size), None)) == args
    assert k.ok(None, (P, bytearray(args), S, Holder(ctypes.c_size_t, len(args)))) == args
    arr = (ctypes.c_void_p * 5)(1, ctypes.addressof(argbuf), 2, ctypes.addressof(size), 0)
    assert k.ok(None, ctypes.addressof(arr)) == args
    before = k.count()
    with pytest.raises(TypeError, match=r"cuLaunchKernel\(\): extra item 1:"):
        k.launch(None, [P, 1.5, S, size, END])
    with pytest.raises(TypeError, match=r"cuLaunchKernel\(\): extra:"):
        k.launch(None, 1.5)
    assert k.count() == before


MODE_KERNEL_PARAMS, MODE_EXTRA = 1, 2    # fakecuda_last_launch_mode


def launch_config(drv):
    config = drv.CUlaunchConfig()
    for dim in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
        setattr(config, dim, 1)
    return config


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_plain_values_reach_the_driver_as_one_buffer(kernel, lib, drv, face_name):
    # Plain values are already laid out at the kernel's offsets: with no
    # extra of the caller's, cuLaunchKernel and cuLaunchKernelEx hand the
    # driver that buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, its size the
    # layout's end) instead of a pointer per parameter.
    import cubind.cu as cu
    face = cu if face_name == "cu" else drv
    ok = (lambda r: r is None) if face is cu else (lambda r: r[0] == 0)
    k = kernel([8, 4, 1])                      # ends at 13: no tail padding
    want = k.expect([struct.pack("<Q", 0xAB00), struct.pack("<i", -5), b"\x7f"])
    assert len(want) == 13
    for extra in (None, 0):
        assert ok(k.launch((0xAB00, -5, 127), extra, face=face, argtypes=BY_SIZE3))
        assert k.recorded() == want
        assert lib.fakecuda_last_launch_mode(k.name) == MODE_EXTRA
    assert ok(face.cuLaunchKernelEx(launch_config(drv), k.f, (0xAB00, -5, 127), None,
                                    argtypes=BY_SIZE3))
    assert k.recorded() == want
    assert lib.fakecuda_last_launch_mode(k.name) == MODE_EXTRA
    # the other forms still pass kernelParams
    assert ok(k.launch(((0xAB00, -5, 127), (ctypes.c_uint64, ctypes.c_int, ctypes.c_byte)),
                       face=face))
    assert k.recorded() == want
    assert lib.fakecuda_last_launch_mode(k.name) == MODE_KERNEL_PARAMS
    # cuLaunchCooperativeKernel has no extra: plain values go as kernelParams
    assert ok(face.cuLaunchCooperativeKernel(k.f, 1, 1, 1, 1, 1, 1, 0, None, (0xAB00, -5, 127),
                                             argtypes=BY_SIZE3))
    assert k.recorded() == want
    assert lib.fakecuda_last_launch_mode(k.name) == MODE_KERNEL_PARAMS


def test_plain_values_with_an_extra_of_the_callers_keep_kernel_params(kernel, lib, drv):
    # Both given: the driver receives both, as the caller wrote them, and
    # refuses the pair (CUDA_ERROR_INVALID_VALUE) as it does for C callers.
    k = kernel([8, 4])
    size = ctypes.c_size_t(12)
    buf = ctypes.create_string_buffer(12)
    extra = (drv.CU_LAUNCH_PARAM_BUFFER_POINTER, buf, drv.CU_LAUNCH_PARAM_BUFFER_SIZE, size,
             drv.CU_LAUNCH_PARAM_END)
    before = k.count()
    assert k.launch((1, 2), extra)[0] == drv.CUresult.CUDA_ERROR_INVALID_VALUE
    assert k.count() == before


def test_padding_between_plain_values_is_zero_in_the_buffer(kernel):
    # The buffer the driver receives whole holds no stale bytes: a launch
    # that fills the same storage with ones first, then one whose layout
    # has holes (1 + 7 padding + 8, 4 + 4 padding + 8).
    full = kernel([8] * 16)
    holes = kernel([1, 8, 4, 8])
    assert len(holes.expect([b"\0", bytes(8), bytes(4), bytes(8)])) == 32
    for _ in range(3):
        assert full.ok((-1,) * 16) == b"\xff" * 128
        assert holes.ok((1, 2, 3, 4)) == holes.expect(
            [b"\x01", struct.pack("<q", 2), struct.pack("<i", 3), struct.pack("<q", 4)])


# ---- cubind.launch -------------------------------------------------------------

def launch_dims(lib, k):
    """(grid, block, shared_mem, default stream) of k's last launch."""
    out = (ctypes.c_uint * 9)()
    assert lib.fakecuda_last_launch_dims(k.name, out) == 0
    return tuple(out[0:3]), tuple(out[3:6]), out[6], bool(out[7])


def test_launch_packs_what_cuLaunchKernel_packs(kernel, lib, drv):
    # launch(f, grid, block, *args, stream=, shared_mem=) takes the kernel's
    # arguments as a call's own arguments: the same bytes reach the driver
    # as cuLaunchKernel's plain values give, as one buffer.
    import cubind
    k = kernel([8, 4, 4, 8, 2, 1, 16])
    err, stream = drv.cuStreamCreate(0)
    assert err == 0
    vals = (drv.CUdeviceptr(0xD000), -7, 2.5, 1.25, 65535, -1, bytes(range(16)))
    want = k.expect([struct.pack("<Q", 0xD000), struct.pack("<i", -7), struct.pack("<f", 2.5),
                     struct.pack("<d", 1.25), struct.pack("<H", 65535), b"\xff",
                     bytes(range(16))])
    before = k.count()
    by_size = [None] * len(vals)  # an untyped kernel, by size as the drop-in face packs it
    assert cubind.launch(k.f, (2, 3), 64, *vals, stream=stream, shared_mem=48,
                         argtypes=by_size) is None
    assert k.count() == before + 1
    assert k.recorded() == want
    assert lib.fakecuda_last_launch_mode(k.name) == MODE_EXTRA
    assert launch_dims(lib, k) == ((2, 3, 1), (64, 1, 1), 48, False)
    assert lib.fakecuda_last_launch_stream(k.name) == int(stream)
    assert k.launch(vals)[0] == 0 and k.recorded() == want
    # the defaults: the default stream, no dynamic shared memory
    assert cubind.launch(k.f, 1, (4, 2, 2), *vals, argtypes=by_size) is None
    assert launch_dims(lib, k) == ((1, 1, 1), (4, 2, 2), 0, True)

    class StreamLike:               # a stream known only by the CUDA stream protocol
        def __cuda_stream__(self):
            return (0, int(stream))

    assert cubind.launch(k.f, 1, 1, *vals, stream=StreamLike(), argtypes=by_size) is None
    assert lib.fakecuda_last_launch_stream(k.name) == int(stream)
    assert k.recorded() == want
    assert cubind.launch is cubind.cu.launch


def test_launch_grid_and_block_forms(kernel, lib):
    import cubind
    k = kernel([4])
    for grid, want in ((5, (5, 1, 1)), ((5,), (5, 1, 1)), ([5, 6], (5, 6, 1)),
                       ((5, 6, 7), (5, 6, 7)), (2**31 - 1, (2**31 - 1, 1, 1))):
        assert cubind.launch(k.f, grid, 1, 1.0) is None
        assert launch_dims(lib, k)[:2] == (want, (1, 1, 1))
    for block, want in ((4, (4, 1, 1)), ((4,), (4, 1, 1)), ([4, 2], (4, 2, 1)),
                        ((4, 2, 2), (4, 2, 2))):
        assert cubind.launch(k.f, 1, block, 1.0) is None
        assert launch_dims(lib, k)[:2] == ((1, 1, 1), want)
    assert cubind.launch(k.f, 1, 1, 1.0, stream=None, shared_mem=0) is None
    assert cubind.launch(k.f, 1, 1, 1.0, stream=0) is None
    assert launch_dims(lib, k)[3] is True


def test_launch_errors_name_the_argument_and_launch_nothing(kernel, drv):
    import cubind
    k = kernel([8, 4])
    err, stream = drv.cuStreamCreate(0)
    cases = [
        ((k.f, 1), {}, TypeError, "launch() missing required argument 'block' (pos 3)"),
        ((), {}, TypeError, "missing required argument 'f' (pos 1)"),
        ((k.f, (1, 2, 3, 4), 1, 0, 0), {}, TypeError, "'grid' must have 1 to 3 dimensions, not 4"),
        ((k.f, 1, (), 0, 0), {}, TypeError, "'block' must have 1 to 3 dimensions, not 0"),
        ((k.f, "1", 1, 0, 0), {}, TypeError, "'grid' must be an int or a tuple of 1 to 3 ints"),
        ((k.f, 1, [1, 2**32], 0, 0), {}, OverflowError, "'block[1]' = 4294967296 does not fit"),
        ((k.f, (1, -1), 1, 0, 0), {}, OverflowError, "'grid[1]' = -1 does not fit"),
        ((k.f, 1, (1, "2"), 0, 0), {}, TypeError, "'block[1]' must be an int"),
        ((k.f, 1, 1, 0, 0), {"shared_mem": -1}, OverflowError, "'shared_mem' = -1 does not fit"),
        ((k.f, 1, 1, 0, 0), {"strem": stream}, TypeError, "unexpected keyword argument 'strem'"),
        ((stream, 1, 1, 0, 0), {}, TypeError, "argument 'f' must be CUfunction"),
        ((k.f, 1, 1, 0, 0), {"stream": k.f}, TypeError, "argument 'stream' must be CUstream"),
        ((k.f, 1, 1, 0), {}, TypeError, "launch(): kernel parameter 1: missing"),
        ((k.f, 1, 1, 0, 0, 0), {}, TypeError, "launch(): kernel parameter 2: unexpected"),
        ((k.f, 1, 1, 0, 2**32), {}, OverflowError, "launch(): kernel parameter 1: "),
        ((k.f, 1, 1, 2**64, 0), {}, OverflowError, "launch(): kernel parameter 0: "),
        ((k.f, 1, 1, 0, "x"), {}, TypeError, "launch(): kernel parameter 1: "),
    ]
    before = k.count()
    for args, kwargs, exc, text in cases:
        if len(args) == 5 and args[0] is k.f:  # two values: by size, as argtypes says
            kwargs = dict(kwargs, argtypes=[None, None])
        with pytest.raises(exc) as info:
            cubind.launch(*args, **kwargs)
        assert text in str(info.value), (args, kwargs, str(info.value))
    assert k.count() == before, "nothing may be launched"


def test_launch_failure_raises_cuda_error(kernel, lib, drv):
    import cubind
    k = kernel([4])
    assert lib.fakecuda_fail_next(b"cuLaunchKernel", 700, 1) == 0   # CUDA_ERROR_ILLEGAL_ADDRESS
    with pytest.raises(cubind.CUDAError) as info:
        cubind.launch(k.f, 1, 1, 3, argtypes=["i4"])
    assert info.value.args[0] == drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
    assert cubind.launch(k.f, 1, 1, 3, argtypes=["i4"]) is None
    assert k.recorded() == struct.pack("<i", 3)


def test_launch_of_a_kernel_without_parameters(kernel, lib):
    import cubind
    k = kernel([])
    before = k.count()
    assert cubind.launch(k.f, 1, 1) is None
    assert k.count() == before + 1
    assert lib.fakecuda_last_launch_mode(k.name) == 0    # neither kernelParams nor extra
    with pytest.raises(TypeError, match="kernel parameter 0: unexpected"):
        cubind.launch(k.f, 1, 1, 5)


def test_a_cukernel_is_launched_where_the_header_allows_the_cast(drv, lib, ctx):
    # cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and the
    # occupancy functions take a CUkernel "by casting to CUfunction" (the
    # handle-cast rules); its plain values are typed by cuKernelGetParamInfo.
    import cubind
    import cubind.cu as cu
    name = b"cast%d" % next(_names)
    o, s = (ctypes.c_size_t * 3)(0, 8, 12), (ctypes.c_size_t * 3)(8, 4, 4)
    assert lib.fakecuda_set_param_layout(None, name, 3, o, s) == 0
    library = cu.cuLibraryLoadData(b"library with " + name + b"\0", None, None, 0, None, None, 0)
    kern = cu.cuLibraryGetKernel(library, name)
    _keep.append((library, kern))
    got = ctypes.create_string_buffer(64)

    def recorded():
        n = lib.fakecuda_last_launch_params(name, got, len(got))
        return got.raw[:n]

    want = struct.pack("<Qif", 0xAB00, -5, 2.5)
    typed_by_kernel = lib.fakecuda_call_count(b"cuKernelGetParamInfo")
    assert drv.cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, None, (0xAB00, -5, 2.5), None)[0] == 0
    assert recorded() == want
    assert lib.fakecuda_call_count(b"cuKernelGetParamInfo") > typed_by_kernel
    assert cubind.launch(kern, 1, 1, 0xAB00, -5, 2.5, argtypes=BY_SIZE3) is None
    assert recorded() == want
    assert cu.cuLaunchKernelEx(launch_config(drv), kern, (0xAB00, -5, 2.5), None,
                               argtypes=BY_SIZE3) is None
    assert recorded() == want
    assert cu.cuLaunchCooperativeKernel(kern, 1, 1, 1, 1, 1, 1, 0, None,
                                        ((0xAB00, -5, 2.5),
                                         (ctypes.c_void_p, ctypes.c_int, ctypes.c_float))) is None
    assert recorded() == want
    # an occupancy function converts it too (the fake driver lacks those)
    with pytest.raises((cubind.CUDAError, cubind.FunctionNotFoundError)):
        cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(kern, 32, 0)
    # other classes are still refused, and functions without the rule refuse a CUkernel
    err, stream = drv.cuStreamCreate(0)
    with pytest.raises(TypeError, match="argument 'f' must be CUfunction, CUkernel, int or None"):
        drv.cuLaunchKernel(stream, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    with pytest.raises(TypeError, match="argument 'f' must be CUfunction, CUkernel, int or None"):
        cubind.launch(stream, 1, 1)
    with pytest.raises(TypeError, match="argument 'hfunc' must be CUfunction, int or None"):
        drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, kern)


# ---- the raising face, threads, old drivers ---------------------------------------

def test_raising_face(kernel, drv):
    import cubind.cu as cu
    k = kernel([8, 4])
    assert k.launch((0x99, 3), face=cu, argtypes=[None, None]) is None
    assert k.recorded() == struct.pack("<Qi", 0x99, 3)
    assert k.launch(((0x99, 4), (ctypes.c_void_p, ctypes.c_int)), face=cu) is None
    assert k.recorded() == struct.pack("<Qi", 0x99, 4)
    with pytest.raises(TypeError, match="kernel parameter 1: missing"):
        k.launch((1,), face=cu)


@pytest.mark.tsan
@pytest.mark.parametrize("via", ["cuLaunchKernel", "launch"])
def test_threads_launching_plain_values(kernel, drv, ctx, via):
    # 8 threads, 8 layouts, each thread its own kernel: every launch must
    # deliver exactly its values. Several rounds, each with new kernels (a
    # first launch of each again, racing the others' first launches).
    for _ in range(ROUNDS):
        plain_values_round(kernel, drv, ctx, via, iters=100)


def plain_values_round(kernel, drv, ctx, via, iters):
    import cubind
    layouts = [[8, 4, 4], [4, 8], [1, 2, 4, 8], [8] * 70, [2, 2, 2], [4] * 300, [8, 8],
               [16, 4]]
    ks = [kernel(sizes) for sizes in layouts]
    errors = []
    start = threading.Barrier(len(ks))

    def work(t, k):
        try:
            assert drv.cuCtxSetCurrent(ctx)[0] == 0
            start.wait()
            for it in range(iters):
                vals, chunks = [], []
                for j, s in enumerate(k.sizes):
                    if s == 16:
                        b = bytes([(t + it + j) & 0xFF]) * 16
                        vals.append(b)
                        chunks.append(b)
                    else:
                        v = (t * 1000003 + it * 31 + j) % (1 << (8 * s - 1))
                        vals.append(v)
                        chunks.append(v.to_bytes(s, "little"))
                if via == "launch":
                    by_size = [None] * len(vals)
                    assert cubind.launch(k.f, 1, 1, *vals, argtypes=by_size) is None
                else:
                    r = k.launch(tuple(vals))
                    assert r[0] == 0, r
                got = k.recorded()
                assert got == k.expect(chunks), (t, it)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t, k)) for t, k in enumerate(ks)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    assert [k.count() for k in ks] == [iters] * len(ks)


@pytest.mark.tsan
def test_threads_launching_through_one_function_object(kernel, drv, ctx):
    # Eight threads race the first launch through one CUfunction object (who
    # publishes its layout copy) while a ninth unloads modules (new epochs:
    # the copy goes stale and is re-stamped under the launching threads).
    # Several rounds, each with a new kernel (a first launch again).
    for _ in range(ROUNDS):
        one_function_object_round(kernel, drv, ctx)


def one_function_object_round(kernel, drv, ctx):
    k = kernel([8, 4, 4])
    vals = (0x1122334455667788, 77, -5)
    want = k.expect([struct.pack("<Q", vals[0]), struct.pack("<i", 77), struct.pack("<i", -5)])
    n_threads, iters = 8, 200
    start = threading.Barrier(n_threads + 1)
    errors = []

    def launcher():
        try:
            assert drv.cuCtxSetCurrent(ctx)[0] == 0
            start.wait()
            for _ in range(iters):
                r = k.launch(vals)
                assert r[0] == 0, r
        except BaseException as e:  # reported below
            errors.append(e)

    def unloader():
        try:
            assert drv.cuCtxSetCurrent(ctx)[0] == 0
            start.wait()
            for _ in range(20):
                err, m = drv.cuModuleLoadData(b"an image to unload\0")
                assert err == 0
                assert drv.cuModuleUnload(m)[0] == 0
        except BaseException as e:  # reported below
            errors.append(e)

    before = k.count()
    threads = [threading.Thread(target=launcher) for _ in range(n_threads)]
    threads.append(threading.Thread(target=unloader))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    assert k.count() - before == n_threads * iters
    assert k.recorded() == want


@pytest.mark.tsan
def test_threads_racing_to_the_first_typed_launch():
    # A fresh process: 8 threads make the interpreter's first (values, types)
    # launch at once, so they race to read ctypes and publish what the packer
    # keeps of it (cbs_ctypes_cache); each then launches 200 times and every
    # launch must deliver exactly its values. Repeated in 5 processes.
    code = r'''
import ctypes, os, struct, threading
import cubind.cu as cu
from fake_driver import open_fake
fake = open_fake()
cu.cuInit(0)
ctx = cu.cuDevicePrimaryCtxRetain(0)
cu.cuCtxSetCurrent(ctx)
mod = cu.cuModuleLoadData(b"typed race\0")
N = 8
offs, sizes = (ctypes.c_size_t * 4)(0, 8, 16, 24), (ctypes.c_size_t * 4)(4, 8, 8, 2)
funcs = []
for t in range(N):
    name = b"typed%d" % t
    assert fake.fakecuda_set_param_layout(None, name, 4, offs, sizes) == 0
    funcs.append((name, cu.cuModuleGetFunction(mod, name)))
types = (ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_ushort)
# made here, not in the threads: creating ctypes instances from several
# threads at once races inside CPython 3.13's _ctypes (python/cpython#128567)
bufs = [ctypes.create_string_buffer(64) for _ in range(N)]
barrier = threading.Barrier(N)
bad = []
def body(t):
    name, f = funcs[t]
    got = bufs[t]
    cu.cuCtxSetCurrent(ctx)
    barrier.wait()
    for rep in range(200):
        vals = (-t - rep, rep / 4, 0x1000 * (t + 1) + rep, 65535 - rep)
        cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (vals, types), None)
        n = fake.fakecuda_last_launch_params(name, got, 64)
        want = (struct.pack("<i", vals[0]) + bytes(4) + struct.pack("<dQH", *vals[1:]))
        if got.raw[:n] != want:
            bad.append((t, rep))
'''
    assert_race_clean(code)


def test_plain_values_need_the_kernels_param_info_getter():
    # A 12.3 driver has neither getter: the message names the one the
    # kernel's class needs (CUfunction: cuFuncGetParamInfo, CUkernel:
    # cuKernelGetParamInfo).
    code = r"""
import ctypes, os, struct
from fake_driver import open_fake
lib = open_fake()
assert lib.fakecuda_set_driver_version(12030) == 0
o, s = (ctypes.c_size_t * 1)(0), (ctypes.c_size_t * 1)(4)
assert lib.fakecuda_set_param_layout(None, b"old", 1, o, s) == 0
import cubind.driver as d
assert d.cuInit(0)[0] == 0
err, dev = d.cuDeviceGet(0)
err, pctx = d.cuDevicePrimaryCtxRetain(dev)
d.cuCtxSetCurrent(pctx)
err, mod = d.cuModuleLoadData(b"img\0")
err, f = d.cuModuleGetFunction(mod, b"old")
try:
    d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (5,), None)
except TypeError as e:
    assert "cuFuncGetParamInfo" in str(e), e
else:
    raise AssertionError("no TypeError")
assert d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, ((5,), (ctypes.c_int,)), None)[0] == 0
err, library = d.cuLibraryLoadData(b"library with old\0", None, None, 0, None, None, 0)
err, kern = d.cuLibraryGetKernel(library, b"old")
try:
    d.cuLaunchKernel(kern, 1, 1, 1, 1, 1, 1, 0, None, (5,), None)
except TypeError as e:
    assert "cuKernelGetParamInfo" in str(e) and "cuFuncGetParamInfo" not in str(e), e
else:
    raise AssertionError("no TypeError")
print("ok")
"""
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
