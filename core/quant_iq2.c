/* IQ2_XXS, IQ2_XS and IQ2_S (core/quant_blocks_iq.h): groups of 8 on grids of the
 * levels 8, 25, 43, with signs.
 *
 * Dequantization is ggml's, operation for operation (dequantize_row_iq2_xxs,
 * _iq2_xs, _iq2_s; no fused multiply-add):
 *   db = d * (0.5 + ls) * 0.25;  x = db * grid[j] * (sign ? -1 : 1)   (left to right)
 * Quantization is this project's: per sub-block (32 elements, IQ2_XS/IQ2_S 16) the
 * least step that puts its largest |x| within the top level 43 (q35_iq_scales),
 * signs from the values (IQ2_XXS/IQ2_XS: 7 stored, the parity rule flipping the
 * cheapest element, q35_iq_group_signs), and per group of 8 the grid's nearest
 * point to the unsigned values under the stored step, found exactly
 * (q35_grid_nearest). */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_grids.h"
#include "core/quant_internal.h"

#include <string.h>

#define IQ2_TOP 43.0f /* the grids' largest level */

static float step_iq2(float d, int ls)
{
    return d * (0.5f + (float)ls) * 0.25f;
}

/* One group of 8 of an IQ2 grid: x[j] = db * grid byte j * (sign j ? -1 : 1). */
static void iq2_group(float db, uint64_t point, uint32_t signs, float *y)
{
    for (int j = 0; j < 8; j++)
        y[j] = db * (float)(uint8_t)(point >> (8 * j)) * (signs >> j & 1u ? -1.0f : 1.0f);
}

/* IQ2_XS's and IQ2_S's scales: one per 16 elements, two nibbles a sub-block of 32. */
static float iq2_scales16(const float *x, uint16_t *d_out, uint8_t scales[8], uint8_t ls[16])
{
    float want[16];
    q35_iq_wants(x, 16, IQ2_TOP, want);
    const float d = q35_iq_scales(want, 16, step_iq2, 15, d_out, ls);
    for (int s = 0; s < 8; s++)
        scales[s] = (uint8_t)(ls[2 * s] | ls[2 * s + 1] << 4);
    return d;
}

void q35_dequantize_iq2_xxs(const void *src, float *dst, int64_t n)
{
    const q35_block_iq2_xxs *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        const uint8_t *q = (const uint8_t *)b[i].qs;
        for (int s = 0; s < Q35_QK_K / 32; s++, q += 8) {
            uint32_t w;
            memcpy(&w, q + 4, 4);
            const float db = step_iq2(d, (int)(w >> 28));
            for (int l = 0; l < 4; l++, y += 8)
                iq2_group(db, q35_iq2xxs_grid[q[l]], q35_iq_signs7(w >> (7 * l)), y);
        }
    }
}

void q35_quantize_iq2_xxs(const float *src, void *dst, int64_t n)
{
    q35_block_iq2_xxs *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        float want[8];
        uint8_t ls[8], q[64];
        q35_iq_wants(x, 32, IQ2_TOP, want);
        const float d = q35_iq_scales(want, 8, step_iq2, 15, &b[i].d, ls);
        for (int s = 0; s < 8; s++) {
            const float db = step_iq2(d, ls[s]);
            uint32_t w = (uint32_t)ls[s] << 28;
            for (int l = 0; l < 4; l++) {
                const float *g = x + 32 * s + 8 * l;
                const uint32_t signs = q35_iq_group_signs(g, 8, true);
                int p;
                q35_iq_group_points(Q35_GRID_IQ2XXS, g, signs, db, &p);
                q[8 * s + l] = (uint8_t)p;
                w |= (signs & 127u) << (7 * l);
            }
            memcpy(q + 8 * s + 4, &w, 4);
        }
        memcpy(b[i].qs, q, sizeof q);
    }
}

/* IQ2_XS and IQ2_S (a scale per 16 elements, nibbles of `scales`): the group's
 * point and signs by each one's layout. */
static void dequantize_iq2_16(const void *src, float *dst, int64_t n, bool iq2_s)
{
    const size_t bytes = iq2_s ? sizeof(q35_block_iq2_s) : sizeof(q35_block_iq2_xs);
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const uint8_t *p = (const uint8_t *)src + (size_t)i * bytes;
        const q35_block_iq2_xs *xs = (const q35_block_iq2_xs *)p;
        const q35_block_iq2_s *bs = (const q35_block_iq2_s *)p;
        const float d = q35_f16_to_f32(xs->d); /* both lead with it */
        const uint8_t *scales = iq2_s ? bs->scales : xs->scales;
        for (int s = 0; s < Q35_QK_K / 32; s++) {
            const float db[2] = {step_iq2(d, scales[s] & 0xF), step_iq2(d, scales[s] >> 4)};
            for (int l = 0; l < 4; l++, y += 8) {
                if (iq2_s) {
                    const int index = bs->qs[4 * s + l] | ((bs->qh[s] >> (2 * l)) & 3) << 8;
                    iq2_group(db[l / 2], q35_iq2s_grid[index], bs->qs[32 + 4 * s + l], y);
                } else {
                    const uint16_t qs = xs->qs[4 * s + l];
                    iq2_group(db[l / 2], q35_iq2xs_grid[qs & 511], q35_iq_signs7(qs >> 9), y);
                }
            }
        }
    }
}

void q35_dequantize_iq2_xs(const void *src, float *dst, int64_t n)
{
    dequantize_iq2_16(src, dst, n, false);
}

void q35_dequantize_iq2_s(const void *src, float *dst, int64_t n)
{
    dequantize_iq2_16(src, dst, n, true);
}

void q35_quantize_iq2_xs(const float *src, void *dst, int64_t n)
{
    q35_block_iq2_xs *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        uint8_t ls[16];
        const float d = iq2_scales16(x, &b[i].d, b[i].scales, ls);
        for (int s = 0; s < 8; s++) {
            for (int l = 0; l < 4; l++) {
                const float *g = x + 32 * s + 8 * l;
                const uint32_t signs = q35_iq_group_signs(g, 8, true);
                int p;
                q35_iq_group_points(Q35_GRID_IQ2XS, g, signs, step_iq2(d, ls[2 * s + l / 2]), &p);
                b[i].qs[4 * s + l] = (uint16_t)(p | (int)(signs & 127u) << 9);
            }
        }
    }
}

void q35_quantize_iq2_s(const float *src, void *dst, int64_t n)
{
    q35_block_iq2_s *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        uint8_t ls[16];
        const float d = iq2_scales16(x, &b[i].d, b[i].scales, ls);
        for (int s = 0; s < 8; s++) {
            b[i].qh[s] = 0;
            for (int l = 0; l < 4; l++) {
                const float *g = x + 32 * s + 8 * l;
                const uint32_t signs = q35_iq_group_signs(g, 8, false);
                int p;
                q35_iq_group_points(Q35_GRID_IQ2S, g, signs, step_iq2(d, ls[2 * s + l / 2]), &p);
                b[i].qs[4 * s + l] = (uint8_t)p;
                b[i].qs[32 + 4 * s + l] = (uint8_t)signs;
                b[i].qh[s] = (uint8_t)(b[i].qh[s] | (p >> 8) << (2 * l));
            }
        }
    }
}
