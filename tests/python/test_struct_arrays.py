# SPDX-License-Identifier: Apache-2.0
"""Arrays of structs counted by another parameter (`count` rules):
cuLaunchCooperativeKernelMultiDevice's launchParamsList and the others
that the general pairing by name cannot see. Each is a sequence of struct
instances copied into one contiguous C array; the fake driver records what
every entry of a multi-device launch held (and launches it, recording its
kernel parameters' bytes).
"""
import ctypes
import itertools
import pathlib
import struct

import pytest

from conftest import fake_function

import cubind.cu as cu

_names = itertools.count()


@pytest.fixture(scope="module")
def lib(fake):
    fake.fakecuda_last_multi_launch.restype = ctypes.c_longlong
    fake.fakecuda_last_multi_launch.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return fake


def kernel(drv, lib):
    """A kernel of one int and one double parameter."""
    name = f"sa{next(_names)}".encode()
    off = (ctypes.c_size_t * 2)(0, 8)
    size = (ctypes.c_size_t * 2)(4, 8)
    assert lib.fakecuda_set_param_layout(None, name, 2, off, size) == 0
    f = fake_function(drv, name)
    return name, f


def entries(drv, lib, n):
    """n launch parameter structs, every field different, and what the fake
    must record for each: (name, f, stream, expected row, expected bytes)."""
    out = []
    for i in range(n):
        name, f = kernel(drv, lib)
        err, s = drv.cuStreamCreate(0)
        assert err == 0
        p = drv.CUDA_LAUNCH_PARAMS()
        p.function = f
        p.gridDimX, p.gridDimY, p.gridDimZ = 2 + i, 3 + i, 4 + i
        p.blockDimX, p.blockDimY, p.blockDimZ = 8 * (i + 1), 2, 1
        p.sharedMemBytes = 128 * i
        p.hStream = s
        # packed and kept by the struct: its pointer must hold for the call
        p.kernelParams = ((10 + i, -1.5 * i), (ctypes.c_int, ctypes.c_double))
        row = [int(f), 2 + i, 3 + i, 4 + i, 8 * (i + 1), 2, 1, 128 * i, int(s)]
        want = struct.pack("<i4xd", 10 + i, -1.5 * i)
        out.append((p, name, row, want, s))
    return out


def recorded(lib, n):
    buf = (ctypes.c_ulonglong * (9 * max(n, 1)))()
    k = lib.fakecuda_last_multi_launch(buf, n)
    return k, [list(buf[9 * i:9 * i + 9]) for i in range(min(k, n))]


def params_of(lib, name):
    buf = ctypes.create_string_buffer(64)
    n = lib.fakecuda_last_launch_params(name, buf, len(buf))
    return buf.raw[:n]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("face", ["driver", "cu"])
@pytest.mark.parametrize("container", [list, tuple])
def test_multi_device_launch_sends_every_entry(drv, lib, ctx, n, face, container):
    es = entries(drv, lib, n)
    seq = container(e[0] for e in es)
    if face == "driver":
        assert drv.cuLaunchCooperativeKernelMultiDevice(seq, n, 1) == (drv.CUresult.CUDA_SUCCESS,)
    else:
        assert cu.cuLaunchCooperativeKernelMultiDevice(seq, n, 1) is None
    k, rows = recorded(lib, n)
    assert k == n
    assert rows == [e[2] for e in es]
    assert lib.fakecuda_last_multi_launch_flags() == 1
    for p, name, row, want, s in es:
        assert params_of(lib, name) == want
        assert drv.cuStreamDestroy(s)[0] == 0


def test_more_entries_than_counted_are_ignored(drv, lib, ctx):
    """Only numDevices entries are passed."""
    es = entries(drv, lib, 3)
    assert drv.cuLaunchCooperativeKernelMultiDevice([e[0] for e in es], 2, 0)[0] == 0
    k, rows = recorded(lib, 3)
    assert k == 2 and rows == [es[0][2], es[1][2]]


@pytest.mark.parametrize("face", ["driver", "cu"])
def test_fewer_entries_than_counted_raise_naming_the_parameter(drv, lib, ctx, face):
    es = entries(drv, lib, 2)
    mod = drv if face == "driver" else cu
    before = lib.fakecuda_call_count(b"cuLaunchCooperativeKernelMultiDevice")
    for seq, count in (([es[0][0]], 2), ([], 1), ((es[0][0], es[1][0]), 3)):
        with pytest.raises(ValueError) as info:
            mod.cuLaunchCooperativeKernelMultiDevice(seq, count, 0)
        assert str(info.value) == (
            "cuLaunchCooperativeKernelMultiDevice(): argument 'launchParamsList' has "
            f"{len(seq)} elements, fewer than the {count} its count asks for")
    with pytest.raises(ValueError, match="'launchParamsList' is None but its count is not 0"):
        mod.cuLaunchCooperativeKernelMultiDevice(None, 1, 0)
    with pytest.raises(TypeError, match="launchParamsList"):
        mod.cuLaunchCooperativeKernelMultiDevice([es[0][0], 5], 2, 0)
    with pytest.raises(TypeError, match="launchParamsList"):
        mod.cuLaunchCooperativeKernelMultiDevice(es[0][0], 1, 0)  # one struct, not a list
    assert lib.fakecuda_call_count(b"cuLaunchCooperativeKernelMultiDevice") == before


def test_zero_entries_reach_the_driver(drv, lib, ctx):
    assert drv.cuLaunchCooperativeKernelMultiDevice([], 0, 0) == (drv.CUresult.CUDA_ERROR_INVALID_VALUE,)
    assert drv.cuLaunchCooperativeKernelMultiDevice(None, 0, 0) == (drv.CUresult.CUDA_ERROR_INVALID_VALUE,)


# The other arrays of structs whose count the pairing by name misses: a
# short sequence is refused before the driver is asked for the function
# (the fake has none of these), so the array and its count are checked.
def _edge(drv):
    return drv.CUgraphEdgeData()


OTHERS = [
    ("cuLaunchCooperativeKernelMultiDevice", "launchParamsList",
     lambda d, a: d.cuLaunchCooperativeKernelMultiDevice(a(d.CUDA_LAUNCH_PARAMS), 2, 0)),
    ("cuSignalExternalSemaphoresAsync", "paramsArray",
     lambda d, a: d.cuSignalExternalSemaphoresAsync([None, None], a(d.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS), 2, None)),
    ("cuWaitExternalSemaphoresAsync", "paramsArray",
     lambda d, a: d.cuWaitExternalSemaphoresAsync([None, None], a(d.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS), 2, None)),
    ("cuDevResourceGenerateDesc", "resources",
     lambda d, a: d.cuDevResourceGenerateDesc(a(d.CUdevResource), 2)),
    ("cuStreamBeginCaptureToGraph", "dependencyData",
     lambda d, a: d.cuStreamBeginCaptureToGraph(None, None, [None, None], a(d.CUgraphEdgeData), 2, 0)),
    ("cuStreamUpdateCaptureDependencies", "dependencyData",
     lambda d, a: d.cuStreamUpdateCaptureDependencies(None, [None, None], a(d.CUgraphEdgeData), 2, 0)),
    ("cuGraphAddNode", "dependencyData",
     lambda d, a: d.cuGraphAddNode(None, [None, None], a(d.CUgraphEdgeData), 2, d.CUgraphNodeParams())),
]


@pytest.mark.parametrize("fname,param,call", OTHERS, ids=[o[0] for o in OTHERS])
def test_struct_arrays_are_counted(drv, fname, param, call):
    with pytest.raises(ValueError) as info:
        call(drv, lambda cls: [cls()])
    assert str(info.value) == (f"{fname}(): argument '{param}' has 1 elements, "
                               "fewer than the 2 its count asks for")
    with pytest.raises(TypeError, match=param):
        call(drv, lambda cls: cls())  # a lone struct is no longer taken


def test_stubs_name_the_struct_of_the_sequence():
    root = pathlib.Path(__file__).resolve().parents[2]
    pyi = (root / "out" / "driver.pyi").read_text()
    assert ("def cuLaunchCooperativeKernelMultiDevice(launchParamsList: "
            "Sequence[CUDA_LAUNCH_PARAMS_st] | None, numDevices: int, flags: int)") in pyi
