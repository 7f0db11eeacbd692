# SPDX-License-Identifier: Apache-2.0
"""Shared by the tests of cubind.nvrtc, nvjitlink, nvvm, nvfatbin and cufile (real
libnvrtc / libnvJitLink of the toolkit, found by runtime/library/bind_library.c):
kernels, a compile helper, the ELF header check."""
import struct
import sys
import threading

import pytest

from conftest import run_python

AXPY = rb"""
extern "C" __global__ void axpy(float *p, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = a * p[i];
}
"""

# The architecture compiled for: any the library supports works on the CPU.
ARCH = 90

EM_CUDA = 190  # e_machine of a cubin


def require(module):
    """The module's library must load: CI has the toolkit in /usr/local/cuda
    (configure finds cuda.h there), so a failure is a failure, not a skip."""
    ok, where = module._library_status()
    assert ok, where
    return where


def check_cubin(image):
    """An ELF64 little-endian image for the CUDA machine."""
    image = bytes(image)
    assert image[:4] == b"\x7fELF", image[:16]
    assert image[4] == 2 and image[5] == 1  # ELFCLASS64, little endian
    (machine,) = struct.unpack_from("<H", image, 18)
    assert machine == EM_CUDA


def same_from_threads(produce, count=8):
    """produce(i) for i < count, once in this thread, then twice from each
    of `count` threads started together: the results must agree (and be
    `count` different ones). On 3.13t the import of the module under test
    must have kept the GIL off."""
    expected = [produce(i) for i in range(count)]
    assert len(set(expected)) == count
    results = [None] * count
    barrier = threading.Barrier(count)

    def worker(i):
        barrier.wait()
        for _ in range(2):
            results[i] = produce(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
    if hasattr(sys, "_is_gil_enabled"):
        assert not sys._is_gil_enabled()


def kernel_source(i):
    """A program of its own per i: a kernel scaling by i."""
    return b'extern "C" __global__ void k%d(float *p) { p[threadIdx.x] *= %d.0f; }\n' % (i, i)


@pytest.fixture
def nvrtc():
    import cubind.nvrtc as n

    require(n)
    return n


def check_missing_library(module, var, soname, error_class, probe, tmp_path):
    """With `var` naming a missing file, importing cubind.<module> works and
    its first call (`probe`, no arguments) raises DriverNotFoundError naming
    the file and the variable; cubind.<error_class> still imports."""
    missing = str(tmp_path / soname)
    load = ("import cubind.%s as m\n"
            "try:\n"
            "    print(m.%s())\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, e)\n"
            "print(m._library_status())\n" % (module, probe))
    r = run_python(load, **{var: missing})
    assert r.returncode == 0, r.stderr
    assert "DriverNotFoundError" in r.stdout and missing in r.stdout
    assert "%s is set" % var in r.stdout and "(False, " in r.stdout
    r = run_python("import cubind, cubind.%s; print(cubind.%s.__name__)" % (module, error_class),
                   **{var: missing})
    assert r.stdout.strip() == error_class, r.stderr
