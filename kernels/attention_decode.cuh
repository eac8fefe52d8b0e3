/* What the decode attention kernels share (kernels/attention_decode.cu, the
 * exact kernel, and attention_decode_split.cu): a lane's four cache values
 * widened to f32, its part of a score and of p v, and the online softmax's
 * step over a tile, each in one fixed order of explicit multiply-adds (so a
 * kernel that calls them keeps its bits). */
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

/* The online softmax over a tile of N scores s, the first nv live: the running
 * maximum m moved to the tile's, l and acc rescaled by e^(m - m_new) (0 on the
 * first tile, m = -inf), then position by position p = e^(s - m_new) added to
 * l and p v to acc; v(i, j) is position i's j-th four values (f32). */
template <int N, int J, class V>
__device__ __forceinline__ void q35_decode_online(const float (&s)[N], int nv, float &m, float &l, float4 (&acc)[J],
                                                  V v)
{
    float tile_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < N; i++)
        if (i < nv)
            tile_max = fmaxf(tile_max, s[i]);
    const float m_new = fmaxf(m, tile_max), c = expf(m - m_new);
    l *= c;
#pragma unroll
    for (int j = 0; j < J; j++)
        q35_decode_scale4(acc[j], c);
#pragma unroll
    for (int i = 0; i < N; i++) {
        if (i < nv) {
            const float p = expf(s[i] - m_new);
            l += p;
#pragma unroll
            for (int j = 0; j < J; j++)
                q35_decode_add4(acc[j], p, v(i, j));
        }
    }
    m = m_new;
}

#endif /* Q35_KERNELS_ATTENTION_DECODE_CUH */
