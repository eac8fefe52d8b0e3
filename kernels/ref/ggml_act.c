/* ggml's CPU rounding of a matrix product's activations (kernels/linear.h,
 * q35_ggml_act_row): the arithmetic of the x86-64 AVX2 build's quantize_row_q8_0 /
 * q8_1 and of quantize_row_q8_K_ref, in float32 as ggml does it, written here. */
#include "core/half.h"
#include "kernels/linear.h"

#include <math.h>

q35_type q35_ggml_act_type(q35_type weight)
{
    switch (weight) {
    case Q35_TYPE_F32: return Q35_TYPE_F32;
    case Q35_TYPE_F16: return Q35_TYPE_F16;
    case Q35_TYPE_BF16: return Q35_TYPE_BF16;
    case Q35_TYPE_Q4_0:
    case Q35_TYPE_Q5_0:
    case Q35_TYPE_Q8_0:
    case Q35_TYPE_IQ4_NL: return Q35_TYPE_Q8_0;
    case Q35_TYPE_Q4_1:
    case Q35_TYPE_Q5_1: return Q35_TYPE_Q8_1;
    default: return Q35_TYPE_Q8_K; /* the K-quants and the i-quants */
    }
}

/* Q8_0 / Q8_1 blocks of 32: d = max|x| / 127 stored as f16, q = round-to-even(x *
 * (127 / max|x|)) (the AVX2 quantizer's reciprocal, not 1 / d), x' = f16(d) * q;
 * for Q8_1 also s = f16(d * sum q), the block's sum ggml multiplies the weight's
 * offset by. */
static void q8_0_or_1(const float *x, double *y, double *s, int64_t n)
{
    for (int64_t b = 0; b < n; b += 32) {
        float amax = 0.0f;
        for (int i = 0; i < 32; i++)
            amax = fmaxf(amax, fabsf(x[b + i]));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        const double dh = (double)q35_f16_to_f32(q35_f32_to_f16(d));
        int sum = 0;
        for (int i = 0; i < 32; i++) {
            const float q = rintf(x[b + i] * id); /* |q| <= 127 by construction */
            sum += (int)q;
            y[b + i] = dh * (double)q;
        }
        if (s)
            s[b / 32] = (double)q35_f16_to_f32(q35_f32_to_f16(d * (float)sum));
    }
}

/* Q8_K blocks of 256: the value of largest magnitude (the first such) sets iscale =
 * -127 / max, q = min(127, round-to-even(iscale * x)), d = 1 / iscale in float32,
 * x' = d * q; an all-zero block stays zero. */
static void q8_k(const float *x, double *y, int64_t n)
{
    for (int64_t b = 0; b < n; b += 256) {
        float amax = 0.0f, max = 0.0f;
        for (int i = 0; i < 256; i++)
            if (fabsf(x[b + i]) > amax) {
                amax = fabsf(x[b + i]);
                max = x[b + i];
            }
        if (amax == 0.0f) {
            for (int i = 0; i < 256; i++)
                y[b + i] = 0.0;
            continue;
        }
        const float iscale = -127.f / max;
        const double d = (double)(1 / iscale);
        for (int i = 0; i < 256; i++) {
            const float q = fminf(127.f, rintf(iscale * x[b + i]));
            y[b + i] = d * (double)q;
        }
    }
}

void q35_ggml_act_row(q35_type weight, const double *x, double *y, double *s, float *tmp, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        tmp[i] = (float)x[i]; /* ggml's activations are float32 tensors */
    switch (q35_ggml_act_type(weight)) {
    case Q35_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            y[i] = (double)q35_f16_to_f32(q35_f32_to_f16(tmp[i]));
        break;
    case Q35_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            y[i] = (double)q35_bf16_to_f32(q35_f32_to_bf16(tmp[i]));
        break;
    case Q35_TYPE_Q8_0: q8_0_or_1(tmp, y, NULL, n); break;
    case Q35_TYPE_Q8_1: q8_0_or_1(tmp, y, s, n); break;
    case Q35_TYPE_Q8_K: q8_k(tmp, y, n); break;
    default:
        for (int64_t i = 0; i < n; i++)
            y[i] = (double)tmp[i];
    }
}
