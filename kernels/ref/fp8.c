/* The reference of the FP8 row quantization (kernels/fp8.h): f32 arithmetic
 * exactly as the header defines it, the bits the GPU must give. */
#include "core/fp8.h"
#include "core/quant.h"
#include "kernels/fp8.h"

#include <math.h>
#include <stdlib.h>

void q35_ref_fp8_quantize_rows(uint8_t *q, float *scale, const float *x, int64_t rows, int64_t cols,
                               int64_t x_stride)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_stride;
        float amax = 0.0f;
        for (int64_t i = 0; i < cols; i++)
            amax = fmaxf(amax, fabsf(xr[i]));
        const float inv = amax > 0.0f ? Q35_E4M3_MAX / amax : 1.0f;
        scale[r] = amax > 0.0f ? amax / Q35_E4M3_MAX : 1.0f;
        for (int64_t i = 0; i < cols; i++) {
            q[r * cols + i] = q35_f32_to_e4m3(xr[i] * inv); /* one rounded f32 product */
        }
    }
}

/* One value through e4m3 at a block's scale: code = e4m3(v * (448 / amax)),
 * back as code * (amax / 448), in f32 as the row quantization rounds it. */
static double fake_e4m3(float v, float inv, float scale)
{
    return (double)q35_e4m3_to_f32(q35_f32_to_e4m3(v * inv)) * (double)scale;
}

static void block_scale(float amax, float *inv, float *scale)
{
    *inv = amax > 0.0f ? Q35_E4M3_MAX / amax : 1.0f;
    *scale = amax > 0.0f ? amax / Q35_E4M3_MAX : 1.0f;
}

int q35_ref_linear_fp8(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                       int64_t rows, int block)
{
    const int64_t bk = block > 0 ? block : n_in, bo = block > 0 ? block : 1;
    float *wf = malloc((size_t)n_out * (size_t)n_in * sizeof *wf);
    double *wq = malloc((size_t)n_out * (size_t)n_in * sizeof *wq), *xq = malloc((size_t)n_in * sizeof *xq);
    float *xf = malloc((size_t)n_in * sizeof *xf);
    if (!wf || !wq || !xq || !xf) {
        free(wf), free(wq), free(xq), free(xf);
        return -1;
    }
    const size_t row_bytes = q35_row_bytes(type, n_in);
    for (int64_t o = 0; o < n_out; o++)
        q35_dequantize(type, (const uint8_t *)w + (size_t)o * row_bytes, wf + o * n_in, n_in);
    /* the weight: tiles of bo rows x bk columns, one scale a tile */
    for (int64_t o0 = 0; o0 < n_out; o0 += bo)
        for (int64_t k0 = 0; k0 < n_in; k0 += bk) {
            const int64_t o1 = o0 + bo < n_out ? o0 + bo : n_out, k1 = k0 + bk < n_in ? k0 + bk : n_in;
            float amax = 0.0f, inv, scale;
            for (int64_t o = o0; o < o1; o++)
                for (int64_t k = k0; k < k1; k++)
                    amax = fmaxf(amax, fabsf(wf[o * n_in + k]));
            block_scale(amax, &inv, &scale);
            for (int64_t o = o0; o < o1; o++)
                for (int64_t k = k0; k < k1; k++)
                    wq[o * n_in + k] = fake_e4m3(wf[o * n_in + k], inv, scale);
        }
    for (int64_t t = 0; t < rows; t++) {
        for (int64_t k = 0; k < n_in; k++)
            xf[k] = (float)x[t * n_in + k];
        for (int64_t k0 = 0; k0 < n_in; k0 += bk) { /* the activation: 1 x bk blocks */
            const int64_t k1 = k0 + bk < n_in ? k0 + bk : n_in;
            float amax = 0.0f, inv, scale;
            for (int64_t k = k0; k < k1; k++)
                amax = fmaxf(amax, fabsf(xf[k]));
            block_scale(amax, &inv, &scale);
            for (int64_t k = k0; k < k1; k++)
                xq[k] = fake_e4m3(xf[k], inv, scale);
        }
        for (int64_t o = 0; o < n_out; o++) {
            double s = 0.0;
            for (int64_t k = 0; k < n_in; k++)
                s += xq[k] * wq[o * n_in + k];
            y[t * n_out + o] = s;
        }
    }
    free(wf), free(wq), free(xq), free(xf);
    return 0;
}
