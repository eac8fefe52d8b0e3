/* What the decode attention kernels share (kernels/attention_decode.cu, the
 * exact kernel, and attention_decode_split.cu): a lane's four cache values
 * widened to f32, and its part of a score and of p v, each in one fixed order
 * of explicit multiply-adds (so a kernel that calls them keeps its bits). */
#ifndef Q35_KERNELS_ATTENTION_DECODE_CUH
#define Q35_KERNELS_ATTENTION_DECODE_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

/* Four consecutive cache values as f32 (an f16 one widened exactly). */
__device__ __forceinline__ float4 q35_decode_load4(const float *p)
{
    return *(const float4 *)p;
}

__device__ __forceinline__ float4 q35_decode_load4(const __half *p)
{
    const uint2 u = *(const uint2 *)p;
    const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

/* d + q . x, x then y, z, w. */
__device__ __forceinline__ float q35_decode_dot4(float d, float4 q, float4 x)
{
    d = fmaf(q.x, x.x, d);
    d = fmaf(q.y, x.y, d);
    d = fmaf(q.z, x.z, d);
    return fmaf(q.w, x.w, d);
}

/* acc *= c, each lane of the four. */
__device__ __forceinline__ void q35_decode_scale4(float4 &acc, float c)
{
    acc.x *= c;
    acc.y *= c;
    acc.z *= c;
    acc.w *= c;
}

/* acc += p x, each of the four one multiply-add. */
__device__ __forceinline__ void q35_decode_add4(float4 &acc, float p, float4 x)
{
    acc.x = fmaf(p, x.x, acc.x);
    acc.y = fmaf(p, x.y, acc.y);
    acc.z = fmaf(p, x.z, acc.z);
    acc.w = fmaf(p, x.w, acc.w);
}

#endif /* Q35_KERNELS_ATTENTION_DECODE_CUH */
