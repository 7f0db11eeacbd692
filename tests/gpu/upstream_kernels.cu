/* SPDX-License-Identifier: Apache-2.0 */
// upstream_kernels.cu — kernels for tests/gpu/test_kernel_params_upstream_gpu.py,
// the kernelParams scenarios of cuda.bindings' own tests: each kernel writes
// the arguments it received through the pointers it was given, so the test
// can compare them with what the launch passed. Built by the test with
// `nvcc -ptx -arch=sm_90` (tests/gpu/conftest.py: load_module).
#include <stddef.h>

// Set by no_params; read back with cuModuleGetGlobal (unmangled name).
extern "C" {
__device__ unsigned int no_params_ran;
}

extern "C" __global__ void no_params()
{
    no_params_ran = 0xC0DEu;
}

// One parameter of every ctypes scalar type, then one pointer per value:
// each value is stored through its pointer.
extern "C" __global__ void every_type(bool b, char c, wchar_t wc, signed char sc, unsigned char uc,
                                      short s, unsigned short us, int i, unsigned int ui, long l,
                                      unsigned long ul, long long ll, unsigned long long ull,
                                      size_t sz, float f, double d, void *p, bool *pb, char *pc,
                                      wchar_t *pwc, signed char *psc, unsigned char *puc,
                                      short *ps, unsigned short *pus, int *pi, unsigned int *pui,
                                      long *pl, unsigned long *pul, long long *pll,
                                      unsigned long long *pull, size_t *psz, float *pf,
                                      double *pd, void **pp)
{
    *pb = b;
    *pc = c;
    *pwc = wc;
    *psc = sc;
    *puc = uc;
    *ps = s;
    *pus = us;
    *pi = i;
    *pui = ui;
    *pl = l;
    *pul = ul;
    *pll = ll;
    *pull = ull;
    *psz = sz;
    *pf = f;
    *pd = d;
    *pp = p;
}

// Mirrors of the driver's records (same layout as cuda.h's).
struct Extent3 {        // CUextent3D
    size_t width, height, depth;
};

struct ArrayDesc {      // CUDA_ARRAY_DESCRIPTOR
    size_t width, height;
    int format;         // CUarray_format
    unsigned int channels;
};

// An enum (CUresult), a primitive typedef (CUsurfObject) and a record
// (CUextent3D) by value, each stored through the pointer that follows it.
extern "C" __global__ void binding_types(int err, int *perr, unsigned long long surf,
                                         unsigned long long *psurf, Extent3 ext, Extent3 *pext)
{
    *perr = err;
    *psurf = surf;
    *pext = ext;
}

struct IntBox {
    int value;
};

extern "C" __global__ void box_copy(IntBox src, IntBox *dst)
{
    *dst = src;
}

extern "C" __global__ void int_float_box(int i, int *pi, float f, float *pf, IntBox s, IntBox *ps)
{
    *pi = i;
    *pf = f;
    *ps = s;
}

// Records by value and an 8-byte value, their bytes written in order:
// 24 + 24 + 24 + 8 bytes.
extern "C" __global__ void echo_records(ArrayDesc d, Extent3 e, Extent3 v, unsigned long long h,
                                        unsigned char *out)
{
    memcpy(out, &d, sizeof d);
    memcpy(out + 24, &e, sizeof e);
    memcpy(out + 48, &v, sizeof v);
    memcpy(out + 72, &h, sizeof h);
}
