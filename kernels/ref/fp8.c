/* The reference of the FP8 row quantization (kernels/fp8.h): f32 arithmetic
 * exactly as the header defines it, the bits the GPU must give. */
#include "core/fp8.h"
#include "kernels/fp8.h"

#include <math.h>

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
