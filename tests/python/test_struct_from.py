# SPDX-License-Identifier: Apache-2.0
"""The static constructors of the snake_case library modules' struct classes,
from_ptr, from_buffer and from_data (runtime/module/bind_struct_from.h), as
cuda.bindings' nvml and cufile classes have them: a copy or a view of
memory at an address, a view of a buffer, what keeps the memory alive, and
read-only objects. Needs no library: the classes work without it."""
import array
import ctypes
import gc
import importlib
import re
import weakref

import pytest

import cubind.cufile as cufile
import cubind.driver as driver
import cubind.nvml as nvml

from test_library_surface import reference

PciInfo = nvml.PciInfo
Descr = cufile.Descr  # a nested record field: handle


def size_of(cls):
    """sizeof the class's C struct, read from from_buffer's refusal of an
    empty buffer (which names the size), then checked by a buffer of it."""
    with pytest.raises(ValueError) as e:
        cls.from_buffer(bytearray())
    size = int(re.search(r"must be (\d+) bytes long", str(e.value)).group(1))
    cls.from_buffer(bytearray(size))
    return size


def bytes_of(obj, size):
    return ctypes.string_at(obj.ptr, size)


class Holder:
    """An owner that can be watched with a weak reference."""

    def __init__(self, size):
        self.mem = (ctypes.c_ubyte * size)()


def test_from_ptr_with_owner_views_the_memory_both_ways():
    size = size_of(PciInfo)
    mem = (ctypes.c_ubyte * size)()
    view = PciInfo.from_ptr(ctypes.addressof(mem), owner=mem)
    assert view.ptr == ctypes.addressof(mem)
    view.bus = 0x1234
    view.domain = 7
    want = PciInfo()
    want.bus = 0x1234
    want.domain = 7
    assert bytes(mem) == bytes_of(want, size)  # written through the view
    other = PciInfo()
    other.bus = 42
    other.pci_device_id = 0xBEEF
    ctypes.memmove(mem, other.ptr, size)  # written through ctypes
    assert (view.bus, view.pci_device_id, view.domain) == (42, 0xBEEF, 0)


def test_from_ptr_without_owner_copies_as_cuda_bindings():
    size = size_of(PciInfo)
    src = PciInfo()
    src.bus = 5
    copy = PciInfo.from_ptr(src.ptr)
    assert copy.ptr != src.ptr and copy.bus == 5
    src.bus = 6
    copy.domain = 9
    assert copy.bus == 5 and src.domain == 0
    assert bytes_of(copy, size) != bytes_of(src, size)


def test_readonly_refuses_writes_with_value_error():
    size = size_of(PciInfo)
    mem = (ctypes.c_ubyte * size)()
    ro = PciInfo.from_ptr(ctypes.addressof(mem), readonly=True, owner=mem)
    with pytest.raises(ValueError, match="read-only"):
        ro.bus = 1
    assert bytes(mem) == bytes(size)
    copy = PciInfo.from_ptr(ctypes.addressof(mem), True)  # a read-only copy
    with pytest.raises(ValueError, match="read-only"):
        copy.domain = 1
    mem[0] = 0x41
    assert ro.bus_id_legacy.startswith("A")  # reading still works
    rw = PciInfo.from_ptr(ctypes.addressof(mem), False, mem)
    rw.bus = 3
    assert ro.bus == 3


def test_readonly_reaches_nested_views():
    size = size_of(Descr)
    mem = (ctypes.c_ubyte * size)()
    ro = Descr.from_ptr(ctypes.addressof(mem), readonly=True, owner=mem)
    handle = ro.handle
    with pytest.raises(ValueError, match="read-only"):
        handle.fd = 3
    with pytest.raises(ValueError, match="read-only"):
        ro.handle = cufile.Descr().handle
    assert bytes(mem) == bytes(size)


def test_owner_lives_as_long_as_the_object_and_its_views():
    size = size_of(Descr)
    holder = Holder(size)
    obj = Descr.from_ptr(ctypes.addressof(holder.mem), owner=holder)
    watch = weakref.ref(holder)
    del holder
    gc.collect()
    assert watch() is not None
    nested = obj.handle  # a view holds the root, the root the owner
    del obj
    gc.collect()
    assert watch() is not None
    nested.fd = 11
    want = Descr()
    want.handle.fd = 11
    assert bytes(watch().mem) == bytes_of(want, size)
    del nested
    gc.collect()
    assert watch() is None


def test_null_and_non_int_pointers_are_refused():
    with pytest.raises(ValueError, match="ptr must not be null"):
        PciInfo.from_ptr(0)
    with pytest.raises(TypeError, match="ptr must be an int"):
        PciInfo.from_ptr(1.5)
    with pytest.raises(TypeError, match="ptr must be an int"):
        PciInfo.from_ptr(None, owner=1)


def test_from_buffer_views_a_writable_buffer():
    size = size_of(PciInfo)
    buf = bytearray(size)
    view = PciInfo.from_buffer(buf)
    view.bus = 77
    want = PciInfo()
    want.bus = 77
    assert bytes(buf) == bytes_of(want, size)
    buf[:] = bytes_of(PciInfo.from_ptr(want.ptr), size)
    with pytest.raises(BufferError):  # its export is held: no resize
        buf.extend(b"x")
    del view
    gc.collect()
    buf.extend(b"x")  # released with the object
    assert PciInfo.from_buffer(buf[:size]).bus == 77
    assert PciInfo.from_buffer(buffer=bytearray(size)).bus == 0  # by keyword


def test_from_buffer_of_a_readonly_buffer_is_readonly():
    size = size_of(PciInfo)
    view = PciInfo.from_buffer(bytes(size))
    assert view.bus == 0
    with pytest.raises(ValueError, match="read-only"):
        view.bus = 1


def test_from_buffer_refuses_wrong_buffers_naming_the_argument():
    size = size_of(PciInfo)
    for n in (0, size - 1, size + 1):
        with pytest.raises(ValueError, match=r"from_buffer\(\): buffer must be %d bytes long, not %d"
                           % (size, n)):
            PciInfo.from_buffer(bytearray(n))
    with pytest.raises(TypeError, match="buffer must be an object with the buffer protocol"):
        PciInfo.from_buffer(5)
    words = array.array("B", bytes(2 * size))
    with pytest.raises(ValueError, match="buffer must be C-contiguous"):
        PciInfo.from_buffer(memoryview(words)[::2])
    if size % 4 == 0:
        with pytest.raises(ValueError, match="buffer must be of one-byte items"):
            PciInfo.from_buffer(array.array("I", bytes(size)))


def test_from_data_takes_an_instance_or_a_buffer():
    size = size_of(PciInfo)
    obj = PciInfo()
    assert PciInfo.from_data(obj) is obj
    words = array.array("I", bytes(size)) if size % 4 == 0 else bytearray(size)
    view = PciInfo.from_data(words)  # any item size
    view.domain = 3
    assert PciInfo.from_data(data=words).domain == 3
    with pytest.raises(ValueError, match=r"from_data\(\): data must be %d bytes long" % size):
        PciInfo.from_data(bytearray(size + 8))
    with pytest.raises(TypeError, match="data must be an object with the buffer protocol"):
        PciInfo.from_data(Descr())


def test_from_data_views_a_one_element_numpy_array():
    np = pytest.importorskip("numpy")
    size = size_of(PciInfo)
    arr = np.zeros(1, dtype=np.dtype((np.void, size)))
    view = PciInfo.from_data(arr)
    view.bus = 19
    assert view.ptr == arr.ctypes.data
    assert bytes(arr.tobytes()) == bytes_of(view, size)
    arr.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        PciInfo.from_data(arr).bus = 2
    with pytest.raises(ValueError, match="data must be"):
        PciInfo.from_data(np.zeros(3))


@pytest.mark.parametrize("api", ["nvml", "cufile", "nvfatbin"])
def test_every_reference_class_with_from_ptr_has_them(api):
    """Every class of the reference listing from_ptr (from_buffer,
    from_data) has it in cubind, where cubind has the class."""
    module = importlib.import_module("cubind." + api)
    checked = 0
    for name, kinds in reference(api)["classes"].items():
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            continue
        for member in ("from_ptr", "from_buffer", "from_data"):
            if member in kinds:
                assert callable(getattr(cls, member, None)), (name, member)
                checked += 1
    minimum = {"nvml": 180, "cufile": 9, "nvfatbin": 0}[api]  # 12.4 headers
    assert checked >= minimum, checked


def test_the_driver_module_keeps_its_constructor_only():
    """The camelCase modules have no from_* (cuda.bindings' driver classes
    take _ptr=), only the snake_case library modules do."""
    assert not hasattr(driver.CUDA_MEMCPY2D, "from_ptr")
    assert not hasattr(driver.CUDA_MEMCPY2D, "from_buffer")


@pytest.mark.tsan
def test_views_of_one_buffer_and_owner_from_many_threads():
    """Threads make views of one shared buffer and one shared owner, write
    their own field, read the others' and drop their views, while the
    creator drops its references: the memory lives while any view does,
    and every write lands (run truly parallel on a free-threaded build,
    and under ThreadSanitizer by tests/run)."""
    import threading
    size = size_of(PciInfo)
    threads = 8
    holder = Holder(size)
    # exporters that count no exports (3.13t's bytearray counts them
    # without a lock: concurrent exports of one bytearray race in CPython)
    shared = (ctypes.c_ubyte * size)()
    frozen = bytes(size)
    address = ctypes.addressof(holder.mem)
    watch = weakref.ref(holder)
    owner = holder
    barrier = threading.Barrier(threads + 1, timeout=60)  # workers and this thread
    errors = []

    def body(i):
        try:
            mine = PciInfo.from_ptr(address, owner=owner)
            barrier.wait()
            for k in range(200):
                view = PciInfo.from_buffer(shared)
                if i == 0:
                    view.bus = k  # one writer per field: no C-level race
                elif i == 1:
                    mine.domain = k
                else:
                    PciInfo.from_ptr(address, True, mine).bus  # noqa: B018
                    assert PciInfo.from_buffer(frozen).bus == 0
                del view
        except BaseException as e:  # reported below, never lost
            errors.append(e)

    workers = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    barrier.wait()  # every worker holds its view of holder's memory
    del holder, owner  # the views keep it from here
    for t in workers:
        t.join()
    assert not errors, errors
    gc.collect()
    assert watch() is None  # every view gone: the owner with them
    assert PciInfo.from_buffer(shared).bus == 199
