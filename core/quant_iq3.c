/* IQ3_XXS and IQ3_S (core/quant_blocks_iq.h): grid points of 4 (levels 4 .. 62 and
 * 1 .. 15), signs per group of 8.
 *
 * Dequantization is ggml's, operation for operation (dequantize_row_iq3_xxs,
 * _iq3_s; no fused multiply-add):
 *   IQ3_XXS  db = d * (0.5 + ls) * 0.5;  x = db * grid[j] * (sign ? -1 : 1)
 *   IQ3_S    db = d * (1 + 2 ls);        x = db * grid[j] * (sign ? -1 : 1)
 * Quantization is this project's: per sub-block of 32 the least step that puts its
 * largest |x| within the top level (q35_iq_scales), signs from the values (IQ3_XXS:
 * 7 stored, the parity rule), per point the grid's nearest under the stored step
 * (q35_grid_nearest). */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_grids.h"
#include "core/quant_internal.h"

#include <string.h>

static float step_iq3_xxs(float d, int ls)
{
    return d * (0.5f + (float)ls) * 0.5f;
}

static float step_iq3_s(float d, int ls)
{
    return d * (float)(1 + 2 * ls);
}

/* Two points of 4 under one sign byte: x = db * grid byte * (sign ? -1 : 1). */
static void iq3_group(float db, uint32_t p0, uint32_t p1, uint32_t signs, float *y)
{
    for (int j = 0; j < 4; j++) {
        y[j + 0] = db * (float)(uint8_t)(p0 >> (8 * j)) * (signs >> j & 1u ? -1.0f : 1.0f);
        y[j + 4] = db * (float)(uint8_t)(p1 >> (8 * j)) * (signs >> (j + 4) & 1u ? -1.0f : 1.0f);
    }
}

/* ls of each sub-block of 32 for the top level `top`; returns d. */
static float iq3_scales(const float *x, float top, q35_iq_step_fn step, uint16_t *d_out, uint8_t ls[8])
{
    float want[8];
    q35_iq_wants(x, 32, top, want);
    return q35_iq_scales(want, 8, step, 15, d_out, ls);
}

void q35_dequantize_iq3_xxs(const void *src, float *dst, int64_t n)
{
    const q35_block_iq3_xxs *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        const uint8_t *qs = b[i].qs;
        for (int s = 0; s < Q35_QK_K / 32; s++, qs += 8) {
            uint32_t w;
            memcpy(&w, b[i].qs + 64 + 4 * s, 4);
            const float db = step_iq3_xxs(d, (int)(w >> 28));
            for (int l = 0; l < 4; l++, y += 8)
                iq3_group(db, q35_iq3xxs_grid[qs[2 * l]], q35_iq3xxs_grid[qs[2 * l + 1]], q35_iq_signs7(w >> (7 * l)), y);
        }
    }
}

void q35_quantize_iq3_xxs(const float *src, void *dst, int64_t n)
{
    q35_block_iq3_xxs *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        uint8_t ls[8];
        const float d = iq3_scales(x, 62.0f, step_iq3_xxs, &b[i].d, ls);
        for (int s = 0; s < 8; s++) {
            const float db = step_iq3_xxs(d, ls[s]);
            uint32_t w = (uint32_t)ls[s] << 28;
            for (int l = 0; l < 4; l++) {
                const float *g = x + 32 * s + 8 * l;
                const uint32_t signs = q35_iq_group_signs(g, 8, true);
                int p[2];
                q35_iq_group_points(Q35_GRID_IQ3XXS, g, signs, db, p);
                b[i].qs[8 * s + 2 * l] = (uint8_t)p[0];
                b[i].qs[8 * s + 2 * l + 1] = (uint8_t)p[1];
                w |= (signs & 127u) << (7 * l);
            }
            memcpy(b[i].qs + 64 + 4 * s, &w, 4);
        }
    }
}

void q35_dequantize_iq3_s(const void *src, float *dst, int64_t n)
{
    const q35_block_iq3_s *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        for (int s = 0; s < Q35_QK_K / 32; s++) {
            const float db = step_iq3_s(d, (b[i].scales[s / 2] >> (4 * (s % 2))) & 0xF);
            const uint8_t *qs = b[i].qs + 8 * s;
            const int qh = b[i].qh[s];
            for (int l = 0; l < 4; l++, y += 8)
                iq3_group(db, q35_iq3s_grid[qs[2 * l] | ((qh >> (2 * l)) & 1) << 8],
                          q35_iq3s_grid[qs[2 * l + 1] | ((qh >> (2 * l + 1)) & 1) << 8], b[i].signs[4 * s + l], y);
        }
    }
}

void q35_quantize_iq3_s(const float *src, void *dst, int64_t n)
{
    q35_block_iq3_s *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        uint8_t ls[8];
        const float d = iq3_scales(x, 15.0f, step_iq3_s, &b[i].d, ls);
        memset(b[i].qh, 0, sizeof b[i].qh);
        for (int s = 0; s < 8; s++) {
            if (s % 2 == 0)
                b[i].scales[s / 2] = ls[s];
            else
                b[i].scales[s / 2] = (uint8_t)(b[i].scales[s / 2] | ls[s] << 4);
            const float db = step_iq3_s(d, ls[s]);
            for (int l = 0; l < 4; l++) {
                const float *g = x + 32 * s + 8 * l;
                const uint32_t signs = q35_iq_group_signs(g, 8, false);
                int p[2];
                q35_iq_group_points(Q35_GRID_IQ3S, g, signs, db, p);
                for (int k = 0; k < 2; k++) {
                    b[i].qs[8 * s + 2 * l + k] = (uint8_t)p[k];
                    b[i].qh[s] = (uint8_t)(b[i].qh[s] | (p[k] >> 8) << (2 * l + k));
                }
                b[i].signs[4 * s + l] = (uint8_t)signs;
            }
        }
    }
}
