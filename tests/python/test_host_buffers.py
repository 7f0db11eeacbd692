# SPDX-License-Identifier: Apache-2.0
"""Host memory given as a Python buffer is checked against what the call
touches, before the driver is called (the host-bytes rules of gen/rules.txt):
a ValueError names the argument (or the struct field), the buffer's length
and the bytes needed; a buffer the driver writes must be writable; an int
address stays unchecked, as in C. The fake driver counts the calls it got
and records the box of the last 2D/3D copy, so a refused call is seen not
to reach it, and the next valid call is seen to work. On 05a670f the short
buffers reach the driver (cuMemcpyDtoH writes past the bytearray) and the
struct fields are not checked at all; on 56ed141 a struct set as a host
pointer field is not checked (its size is that of its class), nor are the
buffers of a launch's `extra`."""
import ctypes
import struct

import pytest

from conftest import assert_no_growth


def ok(r):
    assert r[0] == 0, r
    return r[1] if len(r) == 2 else r[1:]


@pytest.fixture
def dptr(drv, ctx):
    p = ok(drv.cuMemAlloc(4096))
    yield p
    assert drv.cuMemFree(p)[0] == 0


def calls(fake, name):
    return fake.fakecuda_call_count(name.encode())


def test_a_short_destination_is_refused_before_the_driver(drv, fake, dptr):
    assert drv.cuMemcpyHtoD(dptr, bytes(range(32)), 32)[0] == 0
    dst = bytearray(16)
    before = calls(fake, "cuMemcpyDtoH")
    with pytest.raises(ValueError, match=r"cuMemcpyDtoH\(\): argument 'dstHost' has 16 bytes, "
                                         r"fewer than the 17 the call writes \('ByteCount'\)"):
        drv.cuMemcpyDtoH(dst, dptr, 17)
    assert calls(fake, "cuMemcpyDtoH") == before and dst == bytearray(16)
    # the next valid call goes through
    assert drv.cuMemcpyDtoH(dst, dptr, 16)[0] == 0
    assert dst == bytes(range(16))
    # the async form and a memoryview slice (its own length counts)
    err, stream = drv.cuStreamCreate(0)
    view = memoryview(bytearray(64))[8:12]
    with pytest.raises(ValueError, match="argument 'dstHost' has 4 bytes, fewer than the 5"):
        drv.cuMemcpyDtoHAsync(view, dptr, 5, stream)
    assert drv.cuMemcpyDtoHAsync(view, dptr, 4, stream)[0] == 0
    assert drv.cuStreamSynchronize(stream)[0] == 0 and bytes(view) == bytes(range(4))
    assert drv.cuStreamDestroy(stream)[0] == 0


def test_a_short_source_is_refused_and_a_destination_must_be_writable(drv, fake, dptr):
    import cubind.cu as cu
    before = calls(fake, "cuMemcpyHtoD")
    with pytest.raises(ValueError, match="argument 'srcHost' has 4 bytes, fewer than the 5 the "
                                         "call reads"):
        drv.cuMemcpyHtoD(dptr, b"abcd", 5)
    with pytest.raises(ValueError, match="argument 'srcHost' has 4 bytes"):
        cu.cuMemcpyHtoD(dptr, b"abcd", 1 << 40)
    assert calls(fake, "cuMemcpyHtoD") == before
    with pytest.raises(TypeError, match="argument 'dstHost' must be a writable buffer"):
        drv.cuMemcpyDtoH(b"immutable", dptr, 4)
    assert drv.cuMemcpyHtoD(dptr, b"abcd", 4)[0] == 0
    out = bytearray(4)
    cu.cuMemcpyDtoH(out, dptr, 4)
    assert out == b"abcd"


def test_an_int_address_stays_unchecked(drv, dptr):
    # as in C: the caller sizes what an address points at
    buf = ctypes.create_string_buffer(b"0123456789abcdef", 16)
    assert drv.cuMemcpyHtoD(dptr, ctypes.addressof(buf), 16)[0] == 0
    out = ctypes.create_string_buffer(16)
    assert drv.cuMemcpyDtoH(ctypes.addressof(out), dptr, 16)[0] == 0
    assert out.raw == b"0123456789abcdef"


def test_other_host_bytes_rules_refuse_before_looking_the_driver_up(drv, ctx):
    # cuMemHostRegister, cuLinkAddData, cuParamSetv and the array copies
    # are not in the fake: the check comes first all the same
    with pytest.raises(ValueError, match="argument 'p' has 16 bytes, fewer than the 4096 the "
                                         "call writes"):
        drv.cuMemHostRegister(bytearray(16), 4096, 0)
    with pytest.raises(ValueError, match="argument 'data' has 3 bytes, fewer than the 10 the call "
                                         "reads"):
        drv.cuLinkAddData(None, drv.CUjitInputType.CU_JIT_INPUT_PTX, b"abc", 10, b"x", 0, None, None)
    with pytest.raises(ValueError, match="argument 'srcHost' has 2 bytes, fewer than the 3"):
        drv.cuMemcpyHtoA(None, 0, b"ab", 3)
    with pytest.raises(ValueError, match="argument 'dstHost' has 2 bytes, fewer than the 3"):
        drv.cuMemcpyAtoH(bytearray(2), None, 0, 3)


def copy2d(drv, src, dst, width, height, src_pitch, dst_pitch, x=0, y=0):
    p = drv.CUDA_MEMCPY2D()
    host, device = drv.CUmemorytype.CU_MEMORYTYPE_HOST, drv.CUmemorytype.CU_MEMORYTYPE_DEVICE
    p.srcMemoryType = host if not isinstance(src, drv.CUdeviceptr) else device
    p.dstMemoryType = host if not isinstance(dst, drv.CUdeviceptr) else device
    if p.srcMemoryType == host:
        p.srcHost = src
    else:
        p.srcDevice = src
    if p.dstMemoryType == host:
        p.dstHost = dst
    else:
        p.dstDevice = dst
    p.srcXInBytes, p.srcY, p.srcPitch, p.dstPitch = x, y, src_pitch, dst_pitch
    p.WidthInBytes, p.Height = width, height
    return p


def box(fake):
    out = (ctypes.c_longlong * 5)()
    assert fake.fakecuda_last_copy_box(out) == 0
    return list(out)


def test_copy_struct_fields_are_checked_by_the_box_they_describe(drv, fake, dptr):
    src = bytearray(range(64))
    # 4 rows of 16 bytes, 20 apart, from byte 2 of row 1:
    # ((1 + 4 - 1) * 20) + 2 + 16 = 98 bytes needed
    p = copy2d(drv, src, dptr, 16, 4, 20, 16, x=2, y=1)
    before = calls(fake, "cuMemcpy2D")
    with pytest.raises(ValueError, match=r"cuMemcpy2D\(\): argument 'pCopy': CUDA_MEMCPY2D_st"
                                         r"\.srcHost has 64 bytes, fewer than the 98 the call reads"):
        drv.cuMemcpy2D(p)
    assert calls(fake, "cuMemcpy2D") == before
    # fitting: 4 rows of 16, 16 apart, from the start: 64 bytes exactly
    p.srcPitch, p.srcXInBytes, p.srcY = 16, 0, 0
    assert drv.cuMemcpy2D(p)[0] == 0
    assert box(fake) == [16, 4, 1, 0, 0]
    # back into a host buffer one byte short, then read-only, then right
    out = bytearray(63)
    q = copy2d(drv, dptr, out, 16, 4, 16, 16)
    with pytest.raises(ValueError, match="CUDA_MEMCPY2D_st.dstHost has 63 bytes, fewer than the 64 "
                                         "the call writes"):
        drv.cuMemcpy2DUnaligned(q)
    q.dstHost = bytes(64)
    with pytest.raises(TypeError, match="CUDA_MEMCPY2D_st.dstHost is a read-only buffer"):
        drv.cuMemcpy2D(q)
    out = bytearray(64)
    q.dstHost = out
    assert drv.cuMemcpy2D(q)[0] == 0 and out == src
    # while the memory type is not host, the host field is not what is read
    q.dstMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_DEVICE
    q.dstDevice = dptr
    q.dstHost = bytearray(1)
    assert drv.cuMemcpy2D(q)[0] == 0
    # nothing to copy needs nothing
    p.srcHost, p.Height = bytearray(0), 0
    assert drv.cuMemcpy2D(p)[0] == 0


def test_copy3d_counts_slices_and_an_address_is_not_checked(drv, fake, dptr):
    p = drv.CUDA_MEMCPY3D()
    p.srcMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_HOST
    p.dstMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_DEVICE
    p.dstDevice, p.dstPitch, p.dstHeight = dptr, 8, 3
    p.WidthInBytes, p.Height, p.Depth = 8, 3, 2
    p.srcPitch, p.srcHeight, p.srcZ = 8, 4, 1
    # ((1 + 2 - 1) * 4 + 0 + 3 - 1) * 8 + 0 + 8 = 88
    p.srcHost = bytearray(80)
    with pytest.raises(ValueError, match="CUDA_MEMCPY3D_st.srcHost has 80 bytes, fewer than the 88"):
        drv.cuMemcpy3D(p)
    p.srcHost = bytearray(88)
    assert drv.cuMemcpy3D(p)[0] == 0
    assert box(fake) == [8, 3, 2, 32, 0]
    raw = ctypes.create_string_buffer(88)
    p.srcHost = ctypes.addressof(raw)
    assert drv.cuMemcpy3D(p)[0] == 0
    # the peer form carries the same rule
    q = drv.CUDA_MEMCPY3D_PEER()
    q.dstMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_HOST
    q.dstHost, q.WidthInBytes, q.Height, q.Depth, q.dstPitch = bytearray(3), 4, 1, 1, 4
    with pytest.raises(ValueError, match="CUDA_MEMCPY3D_PEER_st.dstHost has 3 bytes, fewer than "
                                         "the 4 the call writes"):
        drv.cuMemcpy3DPeer(q)


def test_the_copy_struct_is_checked_where_it_is_nested(drv, ctx):
    p = drv.CUDA_MEMCPY3D()
    p.srcMemoryType = drv.CUmemorytype.CU_MEMORYTYPE_HOST
    p.srcHost, p.srcPitch = bytearray(8), 16
    p.WidthInBytes, p.Height, p.Depth = 16, 1, 1
    err, graph = drv.cuGraphCreate(0)
    with pytest.raises(ValueError, match=r"cuGraphAddMemcpyNode\(\): argument 'copyParams': "
                                         r"CUDA_MEMCPY3D_st.srcHost has 8 bytes, fewer than the 16"):
        drv.cuGraphAddMemcpyNode(graph, None, 0, p, ctx)
    gp = drv.CUgraphNodeParams()
    gp.type = drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY
    gp.memcpy.copyParams = p
    with pytest.raises(ValueError, match=r"cuGraphAddNode\(\): argument 'nodeParams': "
                                         r"CUgraphNodeParams_st.memcpy.copyParams.srcHost has 8 "
                                         r"bytes, fewer than the 16"):
        drv.cuGraphAddNode(graph, None, None, 0, gp)
    assert drv.cuGraphDestroy(graph)[0] == 0


def test_every_element_of_an_array_of_structs_is_checked(drv, ctx):
    """cuMemBatchDecompressAsync takes a list of CUmemDecompressParams: each
    element is checked as a struct passed alone (the fake has no such
    function: the check comes before the driver is looked up)."""
    def params(src_len, n):
        p = drv.CUmemDecompressParams()
        p.src, p.srcNumBytes = bytearray(src_len), n
        p.dst, p.dstNumBytes = bytearray(64), 64
        return p
    good, short = params(32, 32), params(16, 32)
    with pytest.raises(ValueError, match=r"cuMemBatchDecompressAsync\(\): argument 'paramsArray': "
                                         r"CUmemDecompressParams_st.src has 16 bytes, fewer than "
                                         r"the 32 the call reads"):
        drv.cuMemBatchDecompressAsync([good, short], 2, 0, None)
    ro = params(32, 32)
    ro.dst = bytes(64)
    with pytest.raises(TypeError, match="CUmemDecompressParams_st.dst is a read-only buffer"):
        drv.cuMemBatchDecompressAsync([good, ro], 2, 0, None)
    import cubind
    with pytest.raises(cubind.FunctionNotFoundError):
        drv.cuMemBatchDecompressAsync([good, good], 2, 0, None)


def test_a_typed_pointer_field_is_checked_by_its_constant_size(drv, ctx):
    """CUmemDecompressParams.dstActBytes: the engine writes a cuuint32_t
    there (`host-bytes ... dstActBytes writes 4`). A buffer shorter than 4
    bytes or read-only is refused naming the field; 4 writable bytes pass
    the check (the fake has no cuMemBatchDecompressAsync, so the call then
    fails on the lookup). On e304124 any buffer was taken, even bytes(0)."""
    import cubind

    def params(act):
        p = drv.CUmemDecompressParams()
        p.src, p.srcNumBytes = bytearray(32), 32
        p.dst, p.dstNumBytes = bytearray(64), 64
        p.dstActBytes = act
        return p
    for short in (bytearray(0), bytearray(3)):
        with pytest.raises(ValueError, match=r"CUmemDecompressParams_st.dstActBytes has %d bytes, "
                                             r"fewer than the 4 the call writes" % len(short)):
            drv.cuMemBatchDecompressAsync([params(short)], 1, 0, None)
    with pytest.raises(TypeError, match="CUmemDecompressParams_st.dstActBytes is a read-only buffer"):
        drv.cuMemBatchDecompressAsync([params(bytes(4))], 1, 0, None)
    with pytest.raises(cubind.FunctionNotFoundError):
        drv.cuMemBatchDecompressAsync([params(bytearray(4))], 1, 0, None)
    with pytest.raises(cubind.FunctionNotFoundError):  # an int address: unchecked, as in C
        drv.cuMemBatchDecompressAsync([params(0x1000)], 1, 0, None)


def test_a_refused_call_leaves_nothing_behind(drv, fake, dptr):
    short, p = bytearray(8), copy2d(drv, bytearray(8), dptr, 16, 1, 16, 16)

    def refused():
        with pytest.raises(ValueError):
            drv.cuMemcpyDtoH(short, dptr, 9)
        with pytest.raises(ValueError):
            drv.cuMemcpy2D(p)

    assert_no_growth(refused)
    assert drv.cuMemcpyDtoH(short, dptr, 8)[0] == 0


def test_a_struct_as_a_host_pointer_is_checked_by_its_size(drv, fake, dptr):
    """A struct object set as a host-bytes field (CUDA_MEMCPY2D.srcHost =
    CUuuid()) is an address of its own bytes: 56ed141 never checked them
    against the box (only memoryviews were), so the copy read past it."""
    u = drv.CUuuid()
    u.bytes = bytes(range(16))
    p = copy2d(drv, u, dptr, 17, 1, 17, 17)
    before = calls(fake, "cuMemcpy2D")
    with pytest.raises(ValueError, match=r"cuMemcpy2D\(\): argument 'pCopy': CUDA_MEMCPY2D_st"
                                         r"\.srcHost is a CUuuid(_st)? of 16 bytes, fewer than the "
                                         r"17 the call reads"):
        drv.cuMemcpy2D(p)
    assert calls(fake, "cuMemcpy2D") == before
    p.WidthInBytes = p.srcPitch = p.dstPitch = 16
    assert drv.cuMemcpy2D(p)[0] == 0
    # the driver writes into a struct the same way, checked the same way
    back = drv.CUuuid()
    q = copy2d(drv, dptr, back, 16, 2, 16, 16)
    with pytest.raises(ValueError, match=r"CUDA_MEMCPY2D_st\.dstHost is a CUuuid(_st)? of 16 "
                                         r"bytes, fewer than the 32 the call writes"):
        drv.cuMemcpy2D(q)
    q.Height = 1
    assert drv.cuMemcpy2D(q)[0] == 0
    assert back.bytes == bytes(range(16))
    # an element of an array of structs holds the bytes to the array's end
    cfg = drv.CUlaunchConfig()
    cfg.attrs = [drv.CUlaunchAttribute(), drv.CUlaunchAttribute()]
    first, second = cfg.attrs
    size = second.getPtr() - first.getPtr()
    for elem, have in ((first, 2 * size), (second, size)):
        r = copy2d(drv, elem, dptr, have, 1, have, have)
        assert drv.cuMemcpy2D(r)[0] == 0
        r.WidthInBytes = r.srcPitch = have + 1
        with pytest.raises(ValueError, match=rf"srcHost is a CUlaunchAttribute(_st)? of {have} "
                                             rf"bytes, fewer than the {have + 1}"):
            drv.cuMemcpy2D(r)


@pytest.mark.parametrize("face_name", ["driver", "cu"])
def test_extra_buffers_are_checked_against_the_size_they_give(drv, fake, ctx, face_name):
    """cuLaunchKernel's extra, [CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
    CU_LAUNCH_PARAM_BUFFER_SIZE, size, CU_LAUNCH_PARAM_END]: the driver
    reads a size_t through `size` and that many bytes through `buf`. Given
    as Python buffers, both are checked before the call (56ed141 passed
    their addresses on: the driver read past them); ints stay unchecked."""
    import cubind.cu as cu
    face = cu if face_name == "cu" else drv
    done = (lambda r: r is None) if face is cu else (lambda r: r[0] == 0)
    err, mod = drv.cuModuleLoadData(b"fake image for extra\0")
    assert err == 0
    err, f = drv.cuModuleGetFunction(mod, b"xk")
    assert err == 0
    count = lambda: fake.fakecuda_launch_count(b"xk")
    P, S, END = (drv.CU_LAUNCH_PARAM_BUFFER_POINTER, drv.CU_LAUNCH_PARAM_BUFFER_SIZE,
                 drv.CU_LAUNCH_PARAM_END)

    def launch(extra):
        return face.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, extra)

    def cuex(extra):
        config = drv.CUlaunchConfig()
        for dim in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"):
            setattr(config, dim, 1)
        return face.cuLaunchKernelEx(config, f, None, extra)

    before = count()
    for call, name in ((launch, "cuLaunchKernel"), (cuex, "cuLaunchKernelEx")):
        with pytest.raises(ValueError, match=name + r"\(\): extra item 1: the "
                           r"CU_LAUNCH_PARAM_BUFFER_POINTER buffer has 8 bytes, fewer than the 16 "
                           r"its CU_LAUNCH_PARAM_BUFFER_SIZE \(item 3\) says"):
            call([P, bytearray(8), S, ctypes.c_size_t(16), END])
        with pytest.raises(ValueError, match=name + r"\(\): extra item 3: the "
                           r"CU_LAUNCH_PARAM_BUFFER_SIZE buffer has 4 bytes, fewer than the 8 of "
                           r"the size_t"):
            call([P, bytearray(8), S, ctypes.c_uint32(8), END])
        # the order of the pairs does not matter; bytes are buffers too
        with pytest.raises(ValueError, match=r"extra item 3: the CU_LAUNCH_PARAM_BUFFER_POINTER "
                                             r"buffer has 3 bytes, fewer than the 4"):
            call((S, struct.pack("N", 4), P, b"abc", END))
    assert count() == before
    args = bytes(range(16))
    size = ctypes.c_size_t(16)
    assert done(launch([P, bytearray(args), S, size, END]))
    assert done(cuex((S, struct.pack("N", 16), P, args, END)))
    # an int address is the caller's to size, as in C; past END nothing is read
    argbuf = ctypes.create_string_buffer(args, 16)
    assert done(launch([P, ctypes.addressof(argbuf), S, size, END]))
    assert done(launch([P, bytearray(16), S, ctypes.addressof(size), END]))
    assert done(launch([P, bytearray(16), S, size, END, P, bytearray(0)]))
    assert count() == before + 5
    out = ctypes.create_string_buffer(32)
    assert fake.fakecuda_last_launch_params(b"xk", out, 32) == 16
    assert drv.cuModuleUnload(mod)[0] == 0
