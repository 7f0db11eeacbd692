# SPDX-License-Identifier: Apache-2.0
"""The runtime's profiler and GL / EGL / VDPAU interop headers in
cubind.runtime (bind-header rules of gen/runtime.rules, read with
runtime/interop's stand-ins for the GL/EGL/VDPAU types): their functions
and types are bound as cuda.bindings.runtime binds them. Only what needs
no driver runs here; tests/gpu/test_runtime_surface_gpu.py starts and stops
the profiler."""
import inspect

import pytest

import cubind.runtime as rt


def params(fn):
    return list(inspect.signature(fn).parameters)


def test_profiler_functions():
    for name in ("cudaProfilerStart", "cudaProfilerStop"):
        assert params(getattr(rt, name)) == []


@pytest.mark.parametrize("name, expected", [
    ("cudaGLGetDevices", ["cudaDeviceCount", "deviceList"]),
    ("cudaEGLStreamConsumerConnect", ["eglStream"]),
    ("cudaEGLStreamConsumerAcquireFrame", ["conn", "pCudaResource", "pStream", "timeout"]),
    ("cudaEGLStreamProducerPresentFrame", ["conn", "eglframe", "pStream"]),
    ("cudaGraphicsResourceGetMappedEglFrame", ["resource", "index", "mipLevel"]),
    ("cudaVDPAUGetDevice", ["vdpDevice", "vdpGetProcAddress"]),
    ("cudaVDPAUSetVDPAUDevice", ["device", "vdpDevice", "vdpGetProcAddress"]),
])
def test_interop_functions_take_cuda_bindings_parameters(name, expected):
    assert params(getattr(rt, name)) == expected


def test_interop_types_are_classes_of_the_runtime():
    assert int(rt.GLenum(5)) == 5 and int(rt.VdpDevice(7)) == 7
    assert rt.sizeof(rt.GLenum) == rt.sizeof(rt.GLuint) == rt.sizeof(rt.EGLint) == 4
    assert rt.sizeof(rt.EGLImageKHR) == rt.sizeof(rt.cudaEglStreamConnection) == 8
    assert rt.CUDA_EGL_MAX_PLANES == 3
    assert rt.cudaEglFrame is rt.cudaEglFrame_st
    assert rt.cudaEglPlaneDesc is rt.cudaEglPlaneDesc_st
    assert isinstance(rt.cudaEglColorFormat.cudaEglColorFormatYUV420Planar, int)


def test_egl_frame_handle_array_takes_ints_and_handles():
    frame = rt.cudaEglFrame()
    assert [int(a) for a in frame.frame.pArray] == [0, 0, 0]
    frame.frame.pArray = [5, 6, rt.cudaArray_t(7)]
    assert [int(a) for a in frame.frame.pArray] == [5, 6, 7]
    assert all(type(a) is rt.cudaArray_t for a in frame.frame.pArray)


def test_an_array_of_records_reads_as_copies():
    """frame.pPitch (cudaPitchedPtr[3] in a union): its elements read as
    copies, as cuda.bindings reads them; assigning a list copies each in."""
    frame = rt.cudaEglFrame()
    first = frame.frame.pPitch[0]
    first.pitch = 40
    assert [p.pitch for p in frame.frame.pPitch] == [0, 0, 0]
    frame.frame.pPitch = [first, rt.make_cudaPitchedPtr(1, 2, 3, 4), first]
    assert [p.pitch for p in frame.frame.pPitch] == [40, 2, 40]
    first.pitch = 41
    assert [p.pitch for p in frame.frame.pPitch] == [40, 2, 40]
    # the union's other member sees the same bytes: pPitch[0]'s ptr, pitch
    assert [int(a) for a in frame.frame.pArray[:2]] == [0, 40]
    with pytest.raises(TypeError, match="pPitch"):
        frame.frame.pPitch = [1, 2, 3]


@pytest.mark.parametrize("name", ["cudaGraphicsGLRegisterBuffer", "cudaGraphicsGLRegisterImage",
                                  "cudaGraphicsEGLRegisterImage",
                                  "cudaGraphicsVDPAURegisterVideoSurface",
                                  "cudaGraphicsVDPAURegisterOutputSurface"])
def test_a_bare_struct_pointer_is_its_handle_class(name):
    """The interop headers spell the output `struct cudaGraphicsResource **`:
    a pointer to the struct of the one handle typedef cudaGraphicsResource_t
    is that handle, so these functions return a cudaGraphicsResource_t."""
    fn = getattr(rt, name)
    assert "-> tuple[cudaError_t, cudaGraphicsResource_t | None]" in STUB[name]
    assert params(fn)[-1] == "flags"


def _stub_lines():
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    return {line.split("(")[0][4:]: line for line in
            (root / "out" / "runtime.pyi").read_text().splitlines() if line.startswith("def ")}


STUB = _stub_lines()
