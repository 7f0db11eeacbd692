# SPDX-License-Identifier: Apache-2.0
"""Struct and union classes of cubind.driver (runtime/module/bind_struct.c,
templates/driver/structs.c.tmpl): names, field offsets checked byte by byte
against `cubind dump` (libclang's layout, itself checked against the C
compiler by tests/gen), views writing through to their parent, arrays,
pointer fields keeping their objects alive, and conversion errors.
No driver call is made."""
import ctypes
import gc
import pathlib
import struct
import weakref

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def d():
    import cubind.driver
    return cubind.driver


@pytest.fixture(scope="session")
def records(model):
    by_name = {}
    for r in model["records"]:
        by_name[r["name"]] = r
        for a in r["aliases"] + ([r["tag"]] if r["tag"] else []):
            by_name.setdefault(a, r)
    return by_name


@pytest.fixture(scope="session")
def value_handles():
    names = set()
    for line in (ROOT / "gen" / "rules.txt").read_text().splitlines():
        parts = line.split("#", 1)[0].split()
        # Struct fields of value-class types return the class, as
        # cuda.bindings does (cuuint64_t), like value handles.
        if parts[:1] in (["value-handle"], ["value-class"]):
            names.add(parts[1])
    return names


def top_level(model):
    return [r for r in model["records"] if not r["nested"]]


def anonymous_members(model):
    return {f["record"] for r in model["records"] for f in r["fields"]
            if f["name"] == "" and "record" in f}


def field_names(rec, records):
    """Attribute names of a record: anonymous members flattened."""
    out = []
    for f in rec["fields"]:
        if f["name"] == "":
            out += field_names(records[f["record"]], records)
        else:
            out.append(f["name"])
    return out


def leaves(rec, records, path=(), base=0):
    """(attribute path, absolute offset, type) of every non-record field,
    through nested records and anonymous members."""
    for f in rec["fields"]:
        off = base + f["offset"]
        if f["name"] == "":
            yield from leaves(records[f["record"]], records, path, off)
            continue
        t = f["type"]
        if t["kind"] == "record":
            sub = records[f["record"]] if "record" in f else records[t["name"]]
            yield from leaves(sub, records, path + (f["name"],), off)
        else:
            yield path + (f["name"],), off, t


def navigate(obj, path):
    for p in path[:-1]:
        obj = getattr(obj, p)
    return obj


def int_value(size, signed):
    raw = bytes(range(0x21, 0x21 + size))  # top byte < 0x80: fits signed too
    return int.from_bytes(raw, "little", signed=signed), raw


def sample(t, d, model, value_handles, salt=0):
    """(value to assign, expected bytes, check(read value) -> bool) for a
    non-array field type."""
    k = t["kind"]
    if k == "int":
        v, raw = int_value(t["size"], t["signed"])
        v += salt
        raw = v.to_bytes(t["size"], "little", signed=t["signed"])
        if t.get("name") in value_handles:
            cls = getattr(d, t["name"])
            return v, raw, lambda x: type(x) is cls and int(x) == v
        return v, raw, lambda x: type(x) is int and x == v
    if k == "float":
        v = 1.5 + salt
        raw = struct.pack("<f" if t["size"] == 4 else "<d", v)
        return v, raw, lambda x: x == v
    if k == "enum":
        enum = next(e for e in model["enums"] if e["name"] == t["name"])
        values = sorted({i["value"] for i in enum["values"]})
        v = values[-1 - (salt % len(values))] or values[-1]
        cls = getattr(d, t["name"])
        return v, v.to_bytes(t["size"], "little", signed=v < 0), \
            lambda x: type(x) is cls and int(x) == v
    if k == "handle":
        cls = getattr(d, t["name"])
        v = 0x0102030405060708 + salt
        return cls(v), v.to_bytes(8, "little"), lambda x: type(x) is cls and int(x) == v
    if k in ("pointer", "funcptr"):
        v = 0x123456789AB0 + salt
        return v, v.to_bytes(8, "little"), lambda x: x == v
    raise AssertionError("no sample for %r" % (t,))


def array_sample(t, d, model, value_handles):
    e = t["pointee"]
    n = t["length"]
    if e["kind"] == "int" and e["canonical"] == "char":
        v = bytes(range(0x41, 0x41 + min(n, 20)))
        raw = v + bytes(n - len(v))
        return v, raw, lambda x: x == raw
    items = [sample(e, d, model, value_handles, salt=i) for i in range(n)]
    if e["kind"] == "enum":  # few members: any sequence of valid values
        pass
    vals = [i[0] for i in items]
    raw = b"".join(i[1] for i in items)
    return vals, raw, lambda xs: len(xs) == n and all(c(x) for (_, _, c), x in zip(items, xs))


# ---- names ---------------------------------------------------------------------


def test_every_record_has_a_class_under_every_name(d, model, records):
    hidden = anonymous_members(model)
    for r in top_level(model):
        cls = getattr(d, r["name"])
        assert isinstance(cls, type)
        for name in r["aliases"] + ([r["tag"]] if r["tag"] else []):
            assert getattr(d, name) is cls, name
        assert cls.__name__ == (r["tag"] or r["name"])
        assert "getPtr" in dir(cls)
        for f in field_names(r, records):
            assert hasattr(cls, f), (r["name"], f)
    # One anon_structN / anon_unionN per untagged nested record reached
    # through a named field; anonymous members are flattened, not exported.
    named = [r for r in model["records"]
             if r["nested"] and not r["tag"] and r["name"] not in hidden]
    for kind in ("struct", "union"):
        exported = {n for n in dir(d) if n.startswith("anon_" + kind)}
        want = sum(1 for r in named if r["union"] == (kind == "union"))
        assert len(exported) == want and want > 0, kind


def test_nested_classes_use_cuda_bindings_names(d):
    desc = d.CUDA_RESOURCE_DESC()
    assert type(desc.res) is d.anon_union4
    assert type(desc.res.array) is d.anon_struct7
    assert type(desc.res.pitch2D) is d.anon_struct10
    assert type(d.CUasyncNotificationInfo().info.overBudget) is d.anon_struct0
    assert d.CUDA_MEMCPY2D is d.CUDA_MEMCPY2D_st is d.CUDA_MEMCPY2D_v2


# ---- layout --------------------------------------------------------------------


# Fields of the field-count-out rules (gen/rules.txt): pointers to arrays the
# driver fills, read back as a list of as many handles as their count says.
DRIVER_FILLED = {"phGraph_out"}


def test_every_field_writes_its_bytes_at_the_model_offset(d, model, records, value_handles):
    checked = 0
    for r in top_level(model):
        cls = getattr(d, r["name"])
        size = r["size"]
        for path, off, t in leaves(r, records):
            if "bit_width" in t:
                continue
            inst = cls()
            target = navigate(inst, path)
            if t["kind"] == "array":
                value, raw, check = array_sample(t, d, model, value_handles)
            else:
                value, raw, check = sample(t, d, model, value_handles)
            setattr(target, path[-1], value)
            got = ctypes.string_at(inst.getPtr(), size)
            expected = bytes(off) + raw + bytes(size - off - len(raw))
            assert got == expected, (r["name"], path, off)
            if path[-1] in DRIVER_FILLED:
                # its count field is 0: no handle is read from the address
                assert getattr(target, path[-1]) == [], (r["name"], path)
                continue
            assert check(getattr(target, path[-1])), (r["name"], path)
            # The same field read afresh from the top.
            assert check(getattr(navigate(inst, path), path[-1])), (r["name"], path)
            checked += 1
    assert checked > 400


def test_union_members_share_storage(d):
    v = d.CUlaunchAttributeValue()
    v.clusterDim.x = 7
    assert v.priority == 7 and v.cooperative == 7
    v.accessPolicyWindow.base_ptr = 0x1000
    assert v.clusterDim.x == 0x1000


def test_anonymous_members_are_flattened(d):
    p = d.CUstreamMemOpWaitValueParams_st()
    p.value64 = 0x1122334455667788
    assert int(p.value) == 0x55667788  # the union's two members overlap
    raw = ctypes.string_at(p.getPtr(), ctypes.sizeof(ctypes.c_uint64) * 3)
    assert int.from_bytes(raw[16:24], "little") == 0x1122334455667788


def test_struct_layout_matches_the_size(d, model):
    for r in top_level(model):
        inst = getattr(d, r["name"])()
        assert inst.getPtr() % r["align"] == 0, r["name"]
        assert ctypes.string_at(inst.getPtr(), r["size"]) == bytes(r["size"])


# ---- views ---------------------------------------------------------------------


def test_views_write_through_and_keep_the_parent_alive(d):
    desc = d.CUDA_RESOURCE_DESC()
    arr = desc.res.array
    arr.hArray = d.CUarray(0xABCDEF)
    assert int(desc.res.array.hArray) == 0xABCDEF
    assert desc.res.array.getPtr() == desc.getPtr() + 8
    raw = ctypes.string_at(desc.getPtr() + 8, 8)
    assert int.from_bytes(raw, "little") == 0xABCDEF
    linear = d.CUDA_RESOURCE_DESC().res.linear  # the parent only lives through the view
    gc.collect()
    linear.sizeInBytes = 99
    assert linear.sizeInBytes == 99


def test_assigning_a_record_copies_its_bytes(d):
    a = d.CUDA_RESOURCE_DESC()
    a.res.pitch2D.width = 640
    b = d.CUDA_RESOURCE_DESC()
    b.res = a.res
    assert b.res.pitch2D.width == 640
    a.res.pitch2D.width = 1
    assert b.res.pitch2D.width == 640  # a copy, not a reference
    with pytest.raises(TypeError, match="res"):
        b.res = a
    attr = d.CUlaunchAttribute()
    val = d.CUlaunchAttributeValue()
    val.priority = 3
    attr.value = val
    assert attr.value.priority == 3


def test_ptr_wraps_foreign_memory(d):
    buf = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_char) * 128)
    m = d.CUDA_MEMCPY2D(_ptr=ctypes.addressof(buf))
    assert m.getPtr() == ctypes.addressof(buf)
    m.Height = 0x01020304
    assert buf.raw[120:124] == bytes([4, 3, 2, 1])
    assert d.CUDA_MEMCPY2D(ctypes.addressof(buf)).Height == 0x01020304


def test_keyword_initialisers_repr_eq_and_hash(d):
    m = d.CUDA_MEMCPY2D(Height=3, WidthInBytes=4)
    assert (m.Height, m.WidthInBytes) == (3, 4)
    assert "Height : 3" in repr(m).split("\n") and repr(m).startswith("srcXInBytes : 0\n")
    assert m == d.CUDA_MEMCPY2D(WidthInBytes=4, Height=3)
    assert m != d.CUDA_MEMCPY2D(Height=4)
    with pytest.raises(TypeError):
        hash(m)
    with pytest.raises(TypeError, match="nope"):
        d.CUDA_MEMCPY2D(nope=1)
    with pytest.raises(TypeError):
        del m.Height


# ---- arrays --------------------------------------------------------------------


def test_arrays_are_lists_and_round_trip(d):
    t = d.CUDA_TEXTURE_DESC()
    t.borderColor = (0.5, 1.0, 2.0, -1.0)
    assert t.borderColor == [0.5, 1.0, 2.0, -1.0]
    modes = [d.CUaddress_mode.CU_TR_ADDRESS_MODE_MIRROR, 3, 0]
    t.addressMode = modes
    assert t.addressMode == [2, 3, 0]
    assert type(t.addressMode[0]) is d.CUaddress_mode
    with pytest.raises(IndexError, match="addressMode"):
        t.addressMode = [1, 2]
    with pytest.raises(TypeError, match="borderColor"):
        t.borderColor = 1.0
    before = t.borderColor
    with pytest.raises(TypeError, match="borderColor"):
        t.borderColor = [1.0, 2.0, "x", 4.0]
    assert t.borderColor == before  # a failed assignment changes nothing
    p = d.CUdevprop()
    p.maxThreadsDim = range(3)
    assert p.maxThreadsDim == [0, 1, 2]


def test_char_arrays_are_bytes(d):
    u = d.CUuuid()
    u.bytes = b"\x01\x02"
    assert u.bytes == b"\x01\x02" + bytes(14)
    u.bytes = bytearray(range(16))
    assert u.bytes == bytes(range(16))
    with pytest.raises(ValueError, match="bytes"):
        u.bytes = bytes(17)
    with pytest.raises(TypeError, match="bytes"):
        u.bytes = "text"


# ---- pointers ------------------------------------------------------------------


class Buf(bytearray):
    pass


def test_pointer_fields_keep_buffers_alive(d):
    m = d.CUDA_MEMCPY2D()
    b = Buf(b"payload")
    w = weakref.ref(b)
    m.srcHost = b
    addr = m.srcHost
    assert addr == ctypes.addressof((ctypes.c_char * 7).from_buffer(b))
    del b
    gc.collect()
    assert w() is not None and bytes(w()) == b"payload"
    m.srcHost = 0
    gc.collect()
    assert w() is None


def test_pointer_fields_set_through_a_view_are_kept_by_the_root(d):
    desc = d.CUDA_EXTERNAL_MEMORY_HANDLE_DESC()
    b = Buf(b"name")
    w = weakref.ref(b)
    desc.handle.win32.name = b
    del b
    gc.collect()
    assert w() is not None
    other = d.CUDA_EXTERNAL_MEMORY_HANDLE_DESC()
    other.handle = desc.handle  # the copy keeps it too
    del desc
    gc.collect()
    assert w() is not None
    del other
    gc.collect()
    assert w() is None


def test_pointer_fields_accept_structs_getptr_and_read_only_buffers(d):
    cfg = d.CUlaunchConfig()
    attr = d.CUlaunchAttribute()
    cfg.attrs = attr
    assert cfg.attrs == attr.getPtr()
    h = d.CUstream(5)
    cfg.attrs = h
    assert cfg.attrs == h.getPtr()
    m = d.CUDA_MEMCPY2D()
    data = bytes(b"read only")
    m.srcHost = data
    assert ctypes.string_at(m.srcHost, 9) == b"read only"
    m.srcHost = None
    assert m.srcHost == 0
    m.srcHost = 1.5  # a number is an address, truncated as cuda.bindings does
    assert m.srcHost == 1
    with pytest.raises(TypeError, match="srcHost"):
        m.srcHost = "1"


def test_reference_cycles_through_kept_objects_are_collected(d):
    m = d.CUDA_MEMCPY2D()
    m.srcHost = m  # m keeps itself
    b = Buf(b"x")
    w = weakref.ref(b)
    m.dstHost = b
    del m, b
    gc.collect()
    assert w() is None


# ---- errors --------------------------------------------------------------------


def test_wrong_types_raise_type_error_naming_the_field(d):
    m = d.CUDA_MEMCPY2D()
    with pytest.raises(TypeError, match="Height"):
        m.Height = "3"
    with pytest.raises(TypeError, match="Height"):
        m.Height = None
    with pytest.raises(ValueError, match="Height: cannot convert float NaN"):
        m.Height = float("nan")
    with pytest.raises(TypeError, match="srcMemoryType"):
        m.srcMemoryType = d.CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(TypeError, match="srcArray"):
        m.srcArray = d.CUstream(1)
    with pytest.raises(TypeError, match="hitRatio"):
        d.CUaccessPolicyWindow().hitRatio = "0.5"


def test_out_of_range_raises_overflow_error_naming_the_field(d):
    m = d.CUDA_MEMCPY2D()
    with pytest.raises(OverflowError, match="srcXInBytes"):
        m.srcXInBytes = 2**64
    with pytest.raises(OverflowError, match="srcXInBytes"):
        m.srcXInBytes = -1
    a = d.CUDA_ARRAY_DESCRIPTOR()
    with pytest.raises(OverflowError, match="NumChannels"):
        a.NumChannels = 2**32
    a.NumChannels = 2**32 - 1
    assert a.NumChannels == 2**32 - 1
    prop = d.CUmemAllocationProp()
    with pytest.raises(OverflowError, match="compressionType"):
        prop.allocFlags.compressionType = 256
    prop.allocFlags.compressionType = 255
    assert prop.allocFlags.compressionType == 255
    dp = d.CUdevprop()
    with pytest.raises(OverflowError, match="maxThreadsPerBlock"):
        dp.maxThreadsPerBlock = 2**31
    dp.maxThreadsPerBlock = -(2**31)
    assert dp.maxThreadsPerBlock == -(2**31)
    with pytest.raises(OverflowError, match="hitRatio"):
        d.CUaccessPolicyWindow().hitRatio = 1e39
    assert m == d.CUDA_MEMCPY2D()  # nothing was written
