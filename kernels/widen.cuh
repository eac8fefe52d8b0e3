/* Inputs read as f32 whatever they are stored as: f32 as it is, IEEE f16
 * widened exactly (every f16 value is an f32 value). The units that take an
 * f16 form of an f32 input (the f16 KV cache, the f16 path's merged
 * projection rows) read through these, so their f16 form is bitwise the f32
 * form of the widened values. */
#ifndef Q35_KERNELS_WIDEN_CUH
#define Q35_KERNELS_WIDEN_CUH

#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ float q35_widen(float x)
{
    return x;
}

__device__ __forceinline__ float q35_widen(__half x)
{
    return __half2float(x);
}

/* Four consecutive values: one 16-byte load of f32, or one 8-byte load of f16 (p aligned to either). */
__device__ __forceinline__ float4 q35_load4(const float *p)
{
    return *(const float4 *)p;
}

__device__ __forceinline__ float4 q35_load4(const __half *p)
{
    const uint2 u = *(const uint2 *)p;
    const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

#endif /* Q35_KERNELS_WIDEN_CUH */
