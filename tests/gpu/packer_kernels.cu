/* SPDX-License-Identifier: Apache-2.0 */
// packer_kernels.cu — kernels for tests/gpu/test_packer_gpu.py: each writes
// the bit patterns of the arguments it received to device memory, so the
// test can compare them with what every kernelParams form must deliver.
// Built by the test with `nvcc -ptx -arch=sm_90`.
#include <stddef.h>

typedef unsigned long long u64;

template <typename T> __device__ u64 bits(T v)
{
    u64 r = 0;
    memcpy(&r, &v, sizeof v);   // zero-extended raw bytes
    return r;
}

extern "C" __global__ void echo_i32_f32_ptr(int a, float b, u64 *out)
{
    out[0] = bits(a);
    out[1] = bits(b);
    out[2] = bits(out);
}

// One parameter of every ctypes scalar type (cuda.bindings' "basic" kernel).
extern "C" __global__ void echo_scalars(bool b, char c, wchar_t wc, signed char sc,
                                        unsigned char uc, short s, unsigned short us, int i,
                                        unsigned int ui, long l, unsigned long ul, long long ll,
                                        unsigned long long ull, size_t sz, float f, double d,
                                        void *p, u64 *out)
{
    out[0] = bits(b);
    out[1] = bits(c);
    out[2] = bits(wc);
    out[3] = bits(sc);
    out[4] = bits(uc);
    out[5] = bits(s);
    out[6] = bits(us);
    out[7] = bits(i);
    out[8] = bits(ui);
    out[9] = bits(l);
    out[10] = bits(ul);
    out[11] = bits(ll);
    out[12] = bits(ull);
    out[13] = bits(sz);
    out[14] = bits(f);
    out[15] = bits(d);
    out[16] = bits(p);
}

struct S3 {
    int a;
    float b;
    double c;
};

extern "C" __global__ void echo_struct(char tag, S3 s, short tail, u64 *out)
{
    out[0] = bits(tag);
    out[1] = bits(s.a);
    out[2] = bits(s.b);
    out[3] = bits(s.c);
    out[4] = bits(tail);
}

struct Big {
    unsigned char bytes[2048];
};

extern "C" __global__ void echo_big(u64 head, Big big, int tail, unsigned char *out)
{
    memcpy(out, &head, 8);
    for (int k = 0; k < 2048; k++)
        out[8 + k] = big.bytes[k];
    memcpy(out + 8 + 2048, &tail, 4);
}

// 512 int parameters a000000000 .. a111111111 (binary), written in order.
#define D2(p) int p##0, int p##1
#define D4(p) D2(p##0), D2(p##1)
#define D8(p) D4(p##0), D4(p##1)
#define D16(p) D8(p##0), D8(p##1)
#define D32(p) D16(p##0), D16(p##1)
#define D64(p) D32(p##0), D32(p##1)
#define D128(p) D64(p##0), D64(p##1)
#define D256(p) D128(p##0), D128(p##1)
#define D512(p) D256(p##0), D256(p##1)
#define W2(p) *o++ = p##0; *o++ = p##1;
#define W4(p) W2(p##0) W2(p##1)
#define W8(p) W4(p##0) W4(p##1)
#define W16(p) W8(p##0) W8(p##1)
#define W32(p) W16(p##0) W16(p##1)
#define W64(p) W32(p##0) W32(p##1)
#define W128(p) W64(p##0) W64(p##1)
#define W256(p) W128(p##0) W128(p##1)
#define W512(p) W256(p##0) W256(p##1)

extern "C" __global__ void echo_512(D512(a), int *out)
{
    int *o = out;
    W512(a)
}

// Parameters that end at byte 9 (no tail padding): the buffer a plain-values
// launch hands the driver is exactly that long.
extern "C" __global__ void echo_tail_byte(u64 *out, signed char c)
{
    out[0] = bits(out);
    out[1] = bits(c);
}

// cubind.launch's grid, block and shared_mem: every thread counts itself;
// thread 0 of block 0 writes the dimensions it sees and the dynamic shared
// memory size the launch gave it.
extern "C" __global__ void count_threads(u64 *out)
{
    atomicAdd(&out[0], 1ULL);
    if (blockIdx.x + blockIdx.y + blockIdx.z + threadIdx.x + threadIdx.y + threadIdx.z == 0) {
        unsigned int dynamic_smem;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_smem));
        out[1] = gridDim.x;
        out[2] = gridDim.y;
        out[3] = gridDim.z;
        out[4] = blockDim.x;
        out[5] = blockDim.y;
        out[6] = blockDim.z;
        out[7] = dynamic_smem;
    }
}
