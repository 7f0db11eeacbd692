# SPDX-License-Identifier: Apache-2.0
"""Argument conversions of the drop-in face (issue 40): what cubind.driver
takes where cuda.bindings' Cython conversion takes it, and the same value
arriving. The rule (docs/user-guide.md, "Arguments"): a C integer takes an
int as it is, else the object's __int__ (a float truncates), else its
__index__; a C float takes what float() takes from a number. cubind.cu
converts the same way. The recorded differential is
tests/python/test_conversions_replay.py."""
import ctypes

import pytest


class OnlyInt:
    def __int__(self):
        return 1


class OnlyIndex:
    def __index__(self):
        return 1


class OnlyFloat:
    def __float__(self):
        return 1.5


class IntSub(int):
    pass


def faces():
    import cubind
    return [cubind.driver, cubind.cu]


def device_of(face, result):
    """The CUdevice of a cuDeviceGet result in either face."""
    return result if face.__name__ == "cubind.cu" else result[1]


# ---- the 12 differences measured on the H200 (issue 40) -------------------

@pytest.mark.parametrize("value", [0.0, 0.7, "np.float64(0)"])
def test_device_get_truncates_a_float_ordinal(drv, value):
    if value == "np.float64(0)":
        value = pytest.importorskip("numpy").float64(0)
    import cubind
    assert drv.cuDeviceGet(value) == (drv.CUresult.CUDA_SUCCESS, drv.CUdevice(0))
    assert int(cubind.cu.cuDeviceGet(value)) == 0


@pytest.mark.parametrize("value, size", [(1024.0, 1024), (1024.9, 1024), ("np.float32(64)", 64)])
def test_mem_alloc_truncates_a_float_size(drv, ctx, value, size):
    if value == "np.float32(64)":
        value = pytest.importorskip("numpy").float32(64)
    err, dptr = drv.cuMemAlloc(value)
    assert err == drv.CUresult.CUDA_SUCCESS
    try:
        attr = drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_RANGE_SIZE
        assert drv.cuPointerGetAttribute(attr, dptr) == (drv.CUresult.CUDA_SUCCESS, size)
    finally:
        assert drv.cuMemFree(dptr) == (drv.CUresult.CUDA_SUCCESS,)


def test_stream_create_and_query_take_floats(drv, ctx):
    err, stream = drv.cuStreamCreate(0.0)
    assert err == drv.CUresult.CUDA_SUCCESS
    try:
        assert drv.cuStreamGetFlags(stream) == (drv.CUresult.CUDA_SUCCESS, 0)
    finally:
        drv.cuStreamDestroy(stream)
    # a float as a handle: the NULL stream
    assert drv.cuStreamQuery(0.0) == (drv.CUresult.CUDA_SUCCESS,)


def test_struct_integer_fields_truncate_floats(drv):
    m = drv.CUDA_MEMCPY2D()
    m.WidthInBytes = 3.7
    assert m.WidthInBytes == 3
    c = drv.CUlaunchConfig()
    c.gridDimX = 2.5
    assert c.gridDimX == 2


def test_handle_constructors_truncate_floats(drv):
    assert int(drv.CUdevice(1.5)) == 1
    assert int(drv.CUdeviceptr(2.0)) == 2


# ---- what the rule takes and refuses, by kind ------------------------------

def test_kernel_dims_from_a_float_division_arrive_truncated(drv, ctx, fake):
    """The sample programs' `n / threads`: the driver receives the int part."""
    from conftest import fake_function
    f = fake_function(drv, b"conv_dims")
    fake.fakecuda_last_launch_dims.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    n, threads = 1000, 128
    assert drv.cuLaunchKernel(f, n / threads, 1, 1.0, threads * 1.0, 1, 1, 0.0, 0, None, 0)[0] == 0
    dims = (ctypes.c_uint * 9)()
    assert fake.fakecuda_last_launch_dims(b"conv_dims", dims) == 0
    assert list(dims)[:6] == [7, 1, 1, 128, 1, 1]


@pytest.mark.parametrize("value, want", [
    (True, 1), (IntSub(1), 1), (OnlyInt(), 1), (OnlyIndex(), 1), (-0.9, 0), (1.99, 1),
])
def test_integers_take_what_cython_takes(drv, value, want):
    for face in faces():
        assert int(device_of(face, face.cuDeviceGet(value))) == want
    c = drv.CUlaunchConfig()
    c.blockDimX = value
    assert c.blockDimX == want
    assert int(drv.CUdeviceptr(value)) == want


@pytest.mark.parametrize("value", [None, "1", b"1", OnlyFloat(), 1j, [1], object()])
def test_integers_refuse_what_has_no_integer_conversion(drv, value):
    for face in faces():
        with pytest.raises(TypeError, match="argument 'ordinal' must be an int"):
            face.cuDeviceGet(value)
    with pytest.raises(TypeError, match="blockDimX"):
        drv.CUlaunchConfig().blockDimX = value


@pytest.mark.parametrize("value, exc, text", [
    (float("nan"), ValueError, "cannot convert float NaN to integer"),
    (float("inf"), OverflowError, "cannot convert float infinity to integer"),
    (-1.0, OverflowError, "does not fit"),
    (2.0**70, OverflowError, "does not fit"),
])
def test_float_conversion_errors_name_the_parameter(drv, value, exc, text):
    with pytest.raises(exc, match="cuMemAlloc\\(\\): argument 'bytesize'.*" + text) as info:
        drv.cuMemAlloc(value)
    with pytest.raises(exc, match="gridDimX"):
        drv.CUlaunchConfig().gridDimX = value
    if exc is ValueError:  # the interpreter's own error is kept as the cause
        assert isinstance(info.value.__cause__, ValueError)


def test_int_returning_non_int_is_refused(drv):
    class Bad:
        def __int__(self):
            return 1.5
    with pytest.raises(TypeError, match="argument 'ordinal'.*__int__ returned non-int"):
        drv.cuDeviceGet(Bad())


def test_float_fields_take_float_like_numbers(drv):
    d = drv.CUDA_TEXTURE_DESC()
    d.mipmapLevelBias = OnlyFloat()
    assert d.mipmapLevelBias == 1.5
    d.mipmapLevelBias = 2
    assert d.mipmapLevelBias == 2.0
    with pytest.raises(TypeError, match="mipmapLevelBias"):
        d.mipmapLevelBias = "1.5"


def test_numpy_scalars_of_every_kind(drv):
    np = pytest.importorskip("numpy")
    for t in (np.int8, np.uint16, np.int64, np.uint64, np.bool_, np.float16, np.float32,
              np.float64):
        assert int(drv.CUdeviceptr(t(1))) == 1, t
        c = drv.CUlaunchConfig()
        c.gridDimY = t(1)
        assert c.gridDimY == 1
    assert int(drv.CUdeviceptr(np.float32(2.5))) == 2
    with pytest.raises(TypeError):
        drv.CUdeviceptr(np.str_("1"))


def test_pointer_fields_take_numbers_by_value(drv):
    """A void * field takes a number as the address it is (cuda.bindings
    13.3.1 does: a float truncated, a numpy scalar by its value, not by the
    address of its buffer), a bytes object by its address."""
    m = drv.CUDA_MEMCPY2D()
    m.srcHost = 4096.5
    assert m.srcHost == 4096
    m.srcHost = OnlyInt()
    assert m.srcHost == 1
    np = pytest.importorskip("numpy")
    m.srcHost = np.uint64(2**64 - 1)
    assert m.srcHost == 2**64 - 1
    with pytest.raises(OverflowError, match="srcHost"):
        m.srcHost = -1.0


def test_enums_take_what_int_takes(drv):
    """cuda.bindings converts an enum argument with int(): a float
    truncates, a str is parsed; a member of another enum stays refused."""
    attr = drv.CUdevice_attribute
    for face in faces():
        for value in (1.9, "1", b"1", OnlyInt(), True):
            r = face.cuDeviceGetAttribute(value, 0)
            assert (r if face.__name__ == "cubind.cu" else r[1]) == \
                (face.cuDeviceGetAttribute(attr(1), 0) if face.__name__ == "cubind.cu"
                 else face.cuDeviceGetAttribute(attr(1), 0)[1])
        with pytest.raises(ValueError, match="argument 'attrib'"):
            face.cuDeviceGetAttribute("x", 0)
        with pytest.raises(TypeError, match="argument 'attrib'"):
            face.cuDeviceGetAttribute(drv.CUresult.CUDA_ERROR_INVALID_VALUE, 0)
    d = drv.CUDA_EXTERNAL_MEMORY_HANDLE_DESC()
    d.type = 2.5
    assert d.type == drv.CUexternalMemoryHandleType(2)


def test_fixed_arrays_of_the_wrong_length_raise_index_error(drv):
    """As cuda.bindings' (Cython's) array assignment."""
    with pytest.raises(IndexError, match="reserved"):
        drv.CUDA_ARRAY_SPARSE_PROPERTIES().reserved = [1]


def test_char_arrays_refuse_numbers(drv):
    """A numpy scalar has a buffer, but is no bytes (cuda.bindings refuses
    it too)."""
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match="reserved"):
        drv.CUipcMemHandle().reserved = np.int64(1)


def test_handles_of_another_class_stay_refused(drv):
    """A float converts, a handle of another class does not (cuda.bindings
    takes it through int(): docs/compatibility.md)."""
    with pytest.raises(TypeError, match="hStream"):
        drv.cuStreamQuery(drv.CUevent(0))


# ---- the library faces (the same runtime, real NVRTC and nvJitLink) -------

def test_nvrtc_counts_and_strings_convert_as_cuda_bindings():
    import cubind.nvrtc as n
    from nvrtc_common import require
    require(n)
    # a count from a float division, and a bytearray source (cuda.bindings
    # takes both)
    err, prog = n.nvrtcCreateProgram(bytearray(b'extern "C" __global__ void k() {}'), b"k.cu",
                                     0.0, [], [])
    assert err == n.nvrtcResult.NVRTC_SUCCESS
    try:
        opts = [b"-arch=compute_90"]
        assert n.nvrtcCompileProgram(prog, len(opts) / 1, opts) == (n.nvrtcResult.NVRTC_SUCCESS,)
    finally:
        n.nvrtcDestroyProgram(prog)


def test_nvjitlink_counts_convert_as_cuda_bindings():
    import cubind.nvjitlink as j
    from nvrtc_common import require
    require(j)
    h = j.create(1.0, ["-arch=sm_90"])
    j.destroy(h)
    with pytest.raises(ValueError, match="num_options"):
        j.create(float("nan"), ["-arch=sm_90"])
