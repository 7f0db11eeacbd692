/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.cu — the kernels the launch cases of the benchmark suite launch.
 *
 * Compiled on the GPU machine by scripts/gpu-run bench with
 *   nvcc -ptx   -arch=sm_90 bench/kernels.cu -o build/bench/kernels.ptx
 *   nvcc -cubin -arch=sm_90 bench/kernels.cu -o build/bench/kernels.cubin
 * The harnesses load the PTX (the cubin is the fallback when the driver is
 * older than the PTX ISA nvcc writes).
 *
 * All kernels are extern "C" so their names are unmangled. They are launched
 * with one block of one thread: the cases measure the host-side cost of a
 * launch, so the bodies only touch their parameters enough that nvcc keeps
 * them. Parameter sizes: small 16 bytes, k16 88 bytes, k512 2048 bytes,
 * big_struct 2048 bytes, all within the classic 4 KB limit.
 */

/* Written only when a parameter has an impossible value, so never in
 * practice; it keeps the parameters live. */
__device__ int bench_sink;

extern "C" __global__ void empty(void) {}

extern "C" __global__ void small(float *p, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * a;
}

/* 16 parameters: 4 pointers, 6 ints, 6 floats, interleaved so the packer
 * has to align a pointer after a 4-byte value. */
extern "C" __global__ void k16(float *p0, int i0, float f0, float *p1, int i1, float f1,
                               float *p2, int i2, float f2, float *p3, int i3, float f3,
                               int i4, float f4, int i5, float f5)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int si = i0 + i1 + i2 + i3 + i4 + i5;
        float sf = f0 + f1 + f2 + f3 + f4 + f5;
        p0[0] = (float)si + sf;
        if (p1 == p2 && p2 == p3 && p3 == 0)
            bench_sink = si;
    }
}

/* 512 int parameters, spelled with macros: I8(a0) is "int a00, ..., int a07", so the names run a000 to a777. */
#define I8(p) int p##0, int p##1, int p##2, int p##3, int p##4, int p##5, int p##6, int p##7
#define I64(p) I8(p##0), I8(p##1), I8(p##2), I8(p##3), I8(p##4), I8(p##5), I8(p##6), I8(p##7)
#define I512 I64(a0), I64(a1), I64(a2), I64(a3), I64(a4), I64(a5), I64(a6), I64(a7)

extern "C" __global__ void k512(I512)
{
    if (a000 + a333 + a777 == -123456789)
        bench_sink = a000;
}

/* One 2048-byte struct passed by value. */
struct S2048 {
    int v[512];
};

extern "C" __global__ void big_struct(S2048 s)
{
    if (s.v[0] + s.v[511] == -123456789)
        bench_sink = s.v[0];
}
