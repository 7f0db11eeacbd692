/* SPDX-License-Identifier: Apache-2.0 */
// Kernels for tests/gpu/test_scenarios_gpu.py, built with `nvcc -ptx -arch=sm_90`.
// extern "C" keeps the names unmangled for cuModuleGetFunction / cuModuleGetGlobal.

extern "C" __device__ int g_value = 42;

extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

extern "C" __global__ void set_global(int v)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        g_value = v;
}
