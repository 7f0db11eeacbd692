# SPDX-License-Identifier: Apache-2.0
"""Typed launches across nvcc's output forms (issue 42 item 6), on the GPU
machine: run by `scripts/gpu-run nvcc-forms` (scripts/gpu/nvcc-forms.sh
says what it checks). Prints one block per form and a summary line
"forms N as expected M"; exits 1 when a form did something else."""
import ctypes
import ctypes.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings

import cubind
import cubind.cu as cu
import cubind.driver as drv

# out[0] = a, out[1] = n: a float and an int parameter, after a pointer.
SOURCE = r'''
extern "C" __global__ void put(float *out, float a, int n)
{
    out[0] = a;
    out[1] = (float)n;
}
'''

FORMS = [("ptx", ["-ptx"]), ("cubin", ["-cubin"]), ("fatbin", ["-fatbin"]),
         ("fatbin -no-compress", ["-fatbin", "-no-compress"])] + [
    ("fatbin -compress-mode=" + m, ["-fatbin", "-compress-mode=" + m])
    for m in ("default", "size", "speed", "balance", "none")]
# Only the cubin holds no PTX: its kernel stays untyped.
UNTYPED = {"cubin"}


def nvcc():
    home = os.environ.get("CUDA_HOME")
    path = os.path.join(home, "bin", "nvcc") if home else shutil.which("nvcc")
    if not path or not os.path.exists(path):
        sys.exit("nvcc not found (set CUDA_HOME)")
    return path


def entries(image):
    """(kind, flags, stored, decoded) of each entry of a fat binary, or []."""
    if image[:4] != struct.pack("<I", 0xBA55ED50):
        return []
    head = struct.unpack_from("<H", image, 6)[0]
    body = struct.unpack_from("<Q", image, 8)[0]
    at, end, out = head, head + body, []
    while at + 64 <= end <= len(image):
        kind, ehead, payload = struct.unpack_from("<HxxIQ", image, at)
        stored = struct.unpack_from("<I", image, at + 16)[0]
        flags, decoded = struct.unpack_from("<Q", image, at + 40)[0], \
            struct.unpack_from("<Q", image, at + 56)[0]
        out.append(({1: "ptx", 2: "elf"}.get(kind, kind), hex(flags), stored, decoded))
        at += ehead + payload
    return out


def read_back(ptr):
    host = (ctypes.c_float * 2)()
    cu.cuCtxSynchronize()
    cu.cuMemcpyDtoH(host, ptr, 8)
    return host[0], host[1]


def run_form(f, ptr):
    """What the two faces made of (ptr, 2, 3): whether cubind warned that
    the kernel is untyped, the drop-in face's values, the raising face's
    values or its refusal."""
    cu.cuMemsetD8(ptr, 0, 8)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rc = drv.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, (ptr, 2, 3), None)
    warned = any(issubclass(w.category, cubind.UntypedKernelWarning) for w in seen)
    assert rc[0] == 0, rc
    dropin = read_back(ptr)
    cu.cuMemsetD8(ptr, 0, 8)
    try:
        cubind.launch(f, 1, 1, ptr, 2, 3)
        raising = read_back(ptr)
    except TypeError as e:
        raising = "refused: %s" % str(e)[:160]
    return warned, dropin, raising


def main():
    tool = nvcc()
    print(subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip())
    cu.cuInit(0)
    dev = cu.cuDeviceGet(0)
    ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    A = cu.CUdevice_attribute
    major = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    minor = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    arch = "-arch=sm_%d%d" % (major, minor)
    zstd = ctypes.util.find_library("zstd")
    print("arch", arch, "libzstd", zstd)
    ptr = cu.cuMemAlloc(64)
    work = tempfile.mkdtemp()
    src = os.path.join(work, "k.cu")
    with open(src, "w") as fh:
        fh.write(SOURCE)
    good = total = 0
    for name, flags in FORMS:
        total += 1
        out = os.path.join(work, name.replace(" ", "_").replace("=", "_"))
        p = subprocess.run([tool, arch, *flags, src, "-o", out], capture_output=True, text=True)
        print("### %s: nvcc %s" % (name, " ".join(flags)))
        if p.returncode != 0:
            print("nvcc failed: %s" % p.stderr.strip()[:400])
            print("RESULT unexpected (nvcc failed)")
            continue
        with open(out, "rb") as fh:
            image = fh.read()
        print("bytes %d entries %s" % (len(image), entries(image)))
        ok = True
        for how in ("cuModuleLoadData", "cuModuleLoad"):
            if how == "cuModuleLoadData":
                mod = cu.cuModuleLoadData(image + b"\0" if name == "ptx" else image)
            else:
                mod = cu.cuModuleLoad(out.encode())
            f = cu.cuModuleGetFunction(mod, b"put")
            warned, dropin, raising = run_form(f, ptr)
            typed = not warned
            print("%s: typed %s drop-in %r raising %r" % (how, typed, dropin, raising))
            if name in UNTYPED:
                ok = ok and not typed and dropin[0] != 2.0 and str(raising).startswith("refused")
            else:
                ok = ok and typed and dropin == (2.0, 3.0) and raising == (2.0, 3.0)
            cu.cuModuleUnload(mod)
        good += ok
        print("RESULT %s" % ("as expected" if ok else "unexpected"))
    print("forms %d as expected %d" % (total, good))
    cu.cuMemFree(ptr)
    shutil.rmtree(work)
    return 0 if good == total else 1


if __name__ == "__main__":
    sys.exit(main())
