# SPDX-License-Identifier: Apache-2.0
"""cubind.nvfatbin (cuda.bindings.nvfatbin's face: snake_case functions
that raise, handles as ints, Result, nvFatbinError printing 'NAME (value)')
on a real libnvfatbin: a fat binary built on the CPU from hand-written PTX
and a cubin NVRTC compiled, its header and contents checked; the library's
errors; bad input naming the parameter; the library search; 8 threads at
once; every function called.

The library is CUDA 12.4's from scripts/fetch-cuda-libs.sh (configure's
cuda_libs; conftest.py points CUBIND_LIBNVFATBIN at it), or the toolkit's
where it has one; skipped, with the reason, where neither is."""
import struct

import pytest

from library_common import CallRecorder, library_or_skip
from nvrtc_common import ARCH, check_cubin, check_missing_library, same_from_threads

call = CallRecorder()  # the functions these tests call (test_every_function_called)

FATBIN_MAGIC = 0xBA55ED50  # the first 4 bytes of a fat binary

# A kernel in PTX written by hand: PTX 8.0 (CUDA 12.0) for sm_75, which
# libnvfatbin of CUDA 12.4 and later accept.
PTX = b""".version 8.0
.target sm_75
.address_size 64

.visible .entry scale%d(.param .u64 p)
{
    ret;
}
"""


@pytest.fixture(scope="module")
def nvfatbin():
    return library_or_skip("nvfatbin", "libnvfatbin")


def nvrtc_output(options, size_fn, get_fn):
    """A kernel compiled by NVRTC (the toolkit's libnvrtc) with `options`:
    the bytes nvrtc<get_fn> gives."""
    import cubind.nvrtc as r

    ok, where = r._library_status()
    assert ok, where
    err, prog = r.nvrtcCreateProgram(
        b'extern "C" __global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }', b"k.cu", 0, [], [])
    assert err == 0
    try:
        assert r.nvrtcCompileProgram(prog, len(options), options)[0] == 0
        err, size = getattr(r, size_fn)(prog)
        image = bytearray(size)
        assert getattr(r, get_fn)(prog, image)[0] == 0
    finally:
        r.nvrtcDestroyProgram(prog)
    return bytes(image)


@pytest.fixture(scope="module")
def cubin():
    """A cubin for sm_<ARCH>."""
    image = nvrtc_output([b"-arch=sm_%d" % ARCH], "nvrtcGetCUBINSize", "nvrtcGetCUBIN")
    check_cubin(image)
    return image


@pytest.fixture(scope="module")
def ltoir():
    """LTO-IR for sm_<ARCH> (-dlto)."""
    return nvrtc_output([b"-arch=sm_%d" % ARCH, b"-dlto"], "nvrtcGetLTOIRSize", "nvrtcGetLTOIR")


def fatbin_of(n, parts, options=()):
    """create, add each ("ptx"|"cubin"|"ltoir", code, arch, identifier), size, get,
    destroy: the fat binary's bytes."""
    handle = call(n, "create", list(options), len(options))
    assert isinstance(handle, int) and handle != 0
    try:
        for kind, code, arch, ident in parts:
            if kind == "ptx":
                call(n, "add_ptx", handle, code, len(code), arch, ident, "")
            elif kind == "ltoir":
                call(n, "add_ltoir", handle, code, len(code), arch, ident, "")
            else:
                call(n, "add_cubin", handle, code, len(code), arch, ident)
        size = call(n, "size", handle)
        buffer = bytearray(size)
        assert call(n, "get", handle, buffer) is None
    finally:
        call(n, "destroy", handle)
    magic, version, header_size, body_size = struct.unpack_from("<IHHQ", buffer)
    assert (magic, version, header_size) == (FATBIN_MAGIC, 1, 16)
    assert header_size + body_size == size
    return bytes(buffer)


def test_version(nvfatbin):
    major, minor = call(nvfatbin, "version")
    assert (major, minor) >= (12, 4)


def test_fatbin_from_ptx_and_a_cubin(nvfatbin, cubin):
    ptx = PTX % 0
    image = fatbin_of(nvfatbin, [("ptx", ptx, "75", "scale.ptx"), ("cubin", cubin, str(ARCH), "k.cubin")],
                      ["-compress=false"])
    assert cubin in image  # uncompressed: the cubin as it was given
    assert b".entry scale0" in image
    # bytes-like inputs of other kinds: a bytearray, a memoryview, str names
    image2 = fatbin_of(nvfatbin, [("ptx", bytearray(ptx), "75", "scale.ptx"),
                                  ("cubin", memoryview(cubin), str(ARCH), "k.cubin")],
                       ["-compress=false"])
    assert image2 == image


def test_fatbin_with_ltoir(nvfatbin, ltoir):
    image = fatbin_of(nvfatbin, [("ltoir", ltoir, str(ARCH), "k.ltoir")], ["-compress=false"])
    assert ltoir in image


def test_library_errors_raise_nvFatbinError(nvfatbin, cubin):
    n = nvfatbin
    handle = call(n, "create", [], 0)
    try:
        with pytest.raises(n.nvFatbinError) as e:
            n.add_cubin(handle, cubin, len(cubin), "80", "k.cubin")  # not the cubin's arch
        assert e.value.result == n.Result.ERROR_ELF_ARCH_MISMATCH
        assert e.value.status == int(n.Result.ERROR_ELF_ARCH_MISMATCH)
        assert str(e.value) == "ERROR_ELF_ARCH_MISMATCH (2)"
        assert isinstance(e.value, RuntimeError)
    finally:
        n.destroy(handle)
    with pytest.raises(n.nvFatbinError) as e:
        n.create(["-no-such-option"], 1)
    assert e.value.result == n.Result.ERROR_UNRECOGNIZED_OPTION
    with pytest.raises(n.nvFatbinError) as e:
        n.size(0)  # a NULL handle: the library's error, no crash
    assert e.value.result == n.Result.ERROR_NULL_POINTER
    text = call(n, "get_error_string", n.Result.ERROR_INVALID_ARCH)
    assert isinstance(text, str) and text
    assert n.get_error_string(int(n.Result.ERROR_INVALID_ARCH)) == text
    # the library gives NULL for SUCCESS: "" as cuda.bindings gives (the
    # upstream test_get_error_string on the H200; before: None)
    assert n.get_error_string(n.Result.SUCCESS) == ""


def test_bad_input_names_the_parameter(nvfatbin, cubin):
    n = nvfatbin
    handle = n.create([], 0)
    try:
        with pytest.raises(ValueError, match="'code'.*'size'"):
            n.add_cubin(handle, cubin, len(cubin) + 1, str(ARCH), "k")  # reads past the end
        with pytest.raises(TypeError, match="'code'"):
            n.add_ptx(handle, "text, not bytes", 4, "75", "p", "")
        with pytest.raises(TypeError, match="'arch'"):
            n.add_ptx(handle, PTX, len(PTX), 75, "p", "")
        with pytest.raises(TypeError, match="'handle'"):
            n.size("handle")
        n.add_ptx(handle, PTX % 1, len(PTX % 1), "75", "p", "")
        with pytest.raises(ValueError, match="'buffer'"):
            n.get(handle, bytearray(n.size(handle) - 1))  # smaller than size() says
        with pytest.raises(ValueError, match="'buffer'"):
            n.get(handle, None)  # never None (buffers-not-none)
    finally:
        n.destroy(handle)
    with pytest.raises(ValueError, match="'options'"):
        n.create([], 2)  # fewer options than the count
    with pytest.raises(TypeError, match="'options'"):
        n.create([1], 1)


@pytest.mark.tsan
def test_threads_build_the_same_fatbins(nvfatbin):
    """8 threads building their own fat binaries at once give what one
    thread gives (every libnvfatbin call runs with the thread state
    detached)."""
    n = nvfatbin

    def image_of(i):
        ptx = PTX % i
        return fatbin_of(n, [("ptx", ptx, "75", "scale%d.ptx" % i)], ["-compress=false"])

    same_from_threads(image_of)  # importing cubind.nvfatbin kept the GIL off


def test_missing_library_is_a_clear_error_and_import_works(tmp_path):
    check_missing_library("nvfatbin", "CUBIND_LIBNVFATBIN", "libnvfatbin.so.99", "nvFatbinError",
                          "version", tmp_path)


def test_every_function_called(nvfatbin):
    """Runs last in this file: every function of the module was called
    above (the list comes from the module, not from this file)."""
    call.check_all_called(nvfatbin, 9)
