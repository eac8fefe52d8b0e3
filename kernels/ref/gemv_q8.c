/* The CPU form of kernels/gemv_q8.h's activation quantization: the GPU's
 * arithmetic in float32 (IEEE division and round-to-even, as __fdiv_rn and
 * __float2int_rn), so its q, d and s are bitwise the GPU's. */
#include "kernels/gemv_q8.h"

#include <math.h>

void q35_ref_gemv_q8_quantize(int8_t *q, float *d, float *s, const float *x, int64_t k)
{
    for (int64_t b = 0; b < k / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            amax = fmaxf(amax, fabsf(xb[j]));
        const float db = amax / 127.0f;
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            const int v = amax > 0.0f ? (int)rintf(xb[j] / db) : 0;
            q[32 * b + j] = (int8_t)v;
            sum += v;
        }
        d[b] = db;
        s[b] = db * (float)sum;
    }
}
