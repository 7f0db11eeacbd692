/* SPDX-License-Identifier: Apache-2.0 */
// kernel_types_kernels.cu — kernels for tests/gpu/test_kernel_types_gpu.py:
// each writes the bit patterns of the arguments it received to out[], so
// the test sees how plain Python values were converted. Built twice by the
// test, `nvcc -ptx` and `nvcc -cubin` (-arch=sm_90): the PTX declares the
// parameter types, the cubin does not (only C++ names do).
#include <stddef.h>

typedef unsigned long long u64;

template <typename T> __device__ u64 bits(T v)
{
    u64 r = 0;
    memcpy(&r, &v, sizeof v);   // zero-extended raw bytes
    return r;
}

// extern "C": typed by the PTX only
extern "C" __global__ void kt_axpy(u64 *out, int n, float a)
{
    out[0] = bits(n);
    out[1] = bits(a);
}

// C++: typed by its mangled name, from PTX or cubin alike
__global__ void kt_cpp(u64 *out, int n, float a, double d, unsigned short s)
{
    out[0] = bits(n);
    out[1] = bits(a);
    out[2] = bits(d);
    out[3] = bits(s);
}

template <typename T> __global__ void kt_tmpl(u64 *out, T v, unsigned n)
{
    out[0] = bits(v);
    out[1] = bits(n);
}
template __global__ void kt_tmpl<float>(u64 *, float, unsigned);
template __global__ void kt_tmpl<double>(u64 *, double, unsigned);

struct S3 {
    int a;
    float b;
    double c;
};

// a struct by value between small parameters (its padding, its alignment)
__global__ void kt_struct(u64 *out, char c, S3 s, float f)
{
    out[0] = bits(c);
    out[1] = bits(s.a);
    out[2] = bits(s.b);
    out[3] = bits(s.c);
    out[4] = bits(f);
}

// a device array's address, as the kernel received it
extern "C" __global__ void kt_ptr(u64 *out, const float *p)
{
    out[0] = bits(p);
}

// cv-qualified pointees: `const volatile unsigned *` twice is
// _Z5kt_cvPyPVKjS1_j, where S1_ is the pointer (several qualifiers make
// one substitution candidate; the demangler once read it as unsigned)
__global__ void kt_cv(u64 *out, const volatile unsigned *a, const volatile unsigned *b, unsigned c)
{
    out[0] = bits(a);
    out[1] = bits(b);
    out[2] = bits(c);
}

// C++: bool and unsigned char, told apart only by the mangled name
__global__ void kt_flags(u64 *out, bool b, unsigned char c, bool d)
{
    out[0] = bits(b);
    out[1] = bits(c);
    out[2] = bits(d);
}
