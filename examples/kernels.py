# SPDX-License-Identifier: Apache-2.0
"""The kernel the examples launch, as PTX (so they need no compiler):

    extern "C" __global__ void vectorAdd(const float *A, const float *B, float *C, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n)
            C[i] = A[i] + B[i];
    }

Written by hand for sm_50 and later (the driver JIT-compiles it for the GPU
it runs on). The test-only fake driver CI uses runs a kernel of this name on
the host, so the examples check their results there too.
"""
from __future__ import annotations

import array


def host_vectors(n: int) -> tuple[array.array[float], array.array[float], array.array[float]]:
    """A, B (0, 1, 2, ... and twice that) and a zeroed C of n floats each."""
    a = array.array("f", (float(i) for i in range(n)))
    b = array.array("f", (2.0 * i for i in range(n)))
    return a, b, array.array("f", bytes(4 * n))


VECTOR_ADD_PTX = b"""
.version 6.0
.target sm_50
.address_size 64

.visible .entry vectorAdd(
    .param .u64 vectorAdd_A,
    .param .u64 vectorAdd_B,
    .param .u64 vectorAdd_C,
    .param .u32 vectorAdd_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [vectorAdd_A];
    ld.param.u64 %rd2, [vectorAdd_B];
    ld.param.u64 %rd3, [vectorAdd_C];
    ld.param.u32 %r1, [vectorAdd_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.s32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}
\0"""
