/* The 8-bit activations' block of 32 (kernels/gemv_q8.h's quantization), for
 * every kernel that writes them: q35_gemv_q8_quantize and the norms' _q8 forms
 * (kernels/rmsnorm.h, gated_rmsnorm.h), so each writes the very bits of the
 * other. A warp a block, lane l holding the block's value l: the largest
 * magnitude by a butterfly of fmaxf (exact), d = amax / 127, q =
 * round-to-even(x / d), s = d x the sum of q (a butterfly of integer adds, exact). */
#ifndef Q35_KERNELS_Q8_BLOCK_CUH
#define Q35_KERNELS_Q8_BLOCK_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Block b's q [32b + lane], and lane 0 its d [b], s [b]. Every lane of the warp calls it. */
__device__ __forceinline__ void q35_q8_block(int8_t *q, float *d, float *s, int64_t b, float v, int lane)
{
    float amax = fabsf(v);
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float db = __fdiv_rn(amax, 127.0f);
    const int qi = amax > 0.0f ? __float2int_rn(__fdiv_rn(v, db)) : 0;
    int sum = qi;
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    q[32 * b + lane] = (int8_t)qi;
    if (lane == 0) {
        d[b] = db;
        s[b] = __fmul_rn(db, (float)sum);
    }
}

#endif /* Q35_KERNELS_Q8_BLOCK_CUH */
