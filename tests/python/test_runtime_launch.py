# SPDX-License-Identifier: Apache-2.0
"""cudaLaunchKernel, cudaLaunchCooperativeKernel and cudaLaunchKernelExC
(issue 45): bound, their `args` packed by the driver's typed
kernel-parameter packer (the kernel-params rules of gen/runtime.rules),
`func` a cudaKernel_t, the driver's CUfunction or CUkernel, or an int
address; plain values typed from the kernel's parameters through the
driver's getters (cuFuncGetParamInfo, from the loaded driver).

The runtime has no GPU here (cudaErrorInsufficientDriver), but its
arguments are converted first: what is packed, and each refusal, is
checked before the call. The fake driver (tests/fakecuda) gives the
kernel's parameter layout."""
import ctypes

import pytest

import cubind.driver as d
import cubind.runtime as r
from conftest import fake_function

NO_GPU = (r.cudaError_t.cudaErrorInsufficientDriver, r.cudaError_t.cudaErrorNoDevice)
_names = iter(range(1 << 30))


@pytest.fixture
def kernel(ctx, fake):
    """A fake kernel of an int and a double (offsets 0 and 8)."""
    name = b"rtk%d" % next(_names)
    offsets = (ctypes.c_size_t * 2)(0, 8)
    sizes = (ctypes.c_size_t * 2)(4, 8)
    assert fake.fakecuda_set_param_layout(None, name, 2, offsets, sizes) == 0
    return fake_function(d, name)


def launch(func, args, **kw):
    return r.cudaLaunchKernel(func, r.dim3(), r.dim3(), args, 0, kw.pop("stream", 0), **kw)


def test_every_kernel_params_form_converts(kernel):
    """Before: no cudaLaunchKernel (an `unbound` rule)."""
    for func in (kernel, int(kernel), r.cudaFunction_t(int(kernel))):
        for args in (None, [1, 2.5], (1, 2.5), ((1, 2.5), (ctypes.c_int, ctypes.c_double)),
                     0):
            out = launch(func, args)
            assert out[0] in NO_GPU, (func, args, out)
    # streams of either module
    for stream in (d.CUstream(0), r.cudaStream_t(0), None):
        assert launch(kernel, [1, 2.5], stream=stream)[0] in NO_GPU
    assert r.cudaLaunchCooperativeKernel(kernel, r.dim3(), r.dim3(), [1, 2.5], 0, 0)[0] in NO_GPU


def test_plain_values_are_typed_by_the_kernel(kernel):
    """The int parameter is 4 bytes: the driver's layout, found through the
    runtime module's getters, types it."""
    with pytest.raises(OverflowError, match="cudaLaunchKernel"):
        launch(kernel, [1 << 40, 2.5])
    with pytest.raises(TypeError, match="takes 2 parameters, 1 given"):
        launch(kernel, [1])
    # argtypes= types them without the layout, as in cuLaunchKernel
    assert launch(kernel, [1, 2], argtypes=[ctypes.c_int, ctypes.c_double])[0] in NO_GPU


def test_bad_func_and_args_name_the_parameter(kernel):
    with pytest.raises(TypeError, match="'func'"):
        launch(object(), None)
    with pytest.raises(TypeError, match="cudaLaunchKernel"):
        launch(kernel, ((1,), (ctypes.c_int, ctypes.c_int)))
    with pytest.raises(TypeError, match="'stream'"):
        launch(kernel, None, stream=d.CUevent(1))


def test_launch_kernel_ex_c(kernel):
    config = r.cudaLaunchConfig_t()
    assert r.cudaLaunchKernelExC(config, kernel, [1, 2.5])[0] in NO_GPU
    with pytest.raises(OverflowError, match="cudaLaunchKernelExC"):
        r.cudaLaunchKernelExC(config, kernel, [1 << 40, 2.5])


def test_driver_launches_take_runtime_kernels_and_streams(kernel, fake):
    """cuLaunchKernel and cubind.launch take the runtime's cudaFunction_t
    (a CUfunction) and cudaStream_t; the plain values are typed by the
    kernel through either object (a 4-byte int: 1 << 40 overflows).
    Before: taken through int(), an unrelated runtime handle too."""
    import cubind

    f = r.cudaFunction_t(int(kernel))
    # the fake's kernel is untyped: the raising face takes a typed int only
    # (docs/kernel-arguments.md), the drop-in face packs 3 by its size
    assert cubind.launch(f, 1, 1, ctypes.c_int32(3), 2.5, stream=r.cudaStream_t(0)) is None
    with pytest.raises(TypeError, match="kernel parameter 0"):
        cubind.launch(f, 1, 1, 3, 2.5, stream=r.cudaStream_t(0))
    assert d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, r.cudaStream_t(0), [3, 2.5], 0)[0] == 0
    with pytest.raises(OverflowError):
        d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, [1 << 40, 2.5], 0)
    with pytest.raises(TypeError, match="'f'"):
        cubind.launch(r.cudaEvent_t(1), 1, 1, 3, 2.5)
    with pytest.raises(TypeError, match="'f'"):
        d.cuLaunchKernel(r.cudaStream_t(1), 1, 1, 1, 1, 1, 1, 0, None, None, 0)
