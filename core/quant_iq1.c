/* IQ1_S and IQ1_M (core/quant_blocks_iq.h): groups of 8 on a grid of the levels -1,
 * 0, 1, shifted by +-1/8.
 *
 * Dequantization is ggml's, operation for operation (dequantize_row_iq1_s, _iq1_m;
 * no fused multiply-add):
 *   dl = d * (2 ls + 1);  x = dl * (grid[j] + delta)
 * Quantization is this project's: per sub-block (IQ1_S 32 elements, IQ1_M 16) the
 * least step that puts its largest |x| within the top level 1 + 1/8
 * (q35_iq_scales); per group of 8 the grid's nearest point under the stored step
 * (q35_grid_nearest) for each sign of the shift, the shift of the smaller distance
 * kept (+ on a tie) per sub-block of 32 (IQ1_S) or per group (IQ1_M). */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_grids.h"
#include "core/quant_internal.h"

#include <string.h>

#define IQ1_TOP (1.0f + Q35_IQ1_DELTA) /* the largest level */

static float step_iq1(float d, int ls)
{
    return d * (float)(2 * ls + 1);
}

/* One group of 8: x = dl * (grid byte + delta). */
static void iq1_group(float dl, float delta, uint64_t point, float *y)
{
    for (int j = 0; j < 8; j++)
        y[j] = dl * ((float)(int8_t)(uint8_t)(point >> (8 * j)) + delta);
}

/* The nearest points of n_groups groups of 8 at x under the step dl, for the shift
 * +delta (neg 0) and -delta (neg 1): the one of the smaller summed distance. */
static int iq1_groups(const float *x, int n_groups, float dl, int *points)
{
    int p[2][4];
    float dist[2] = {0.0f, 0.0f};
    for (int neg = 0; neg < 2; neg++) {
        for (int l = 0; l < n_groups; l++) {
            float d2;
            p[neg][l] = q35_grid_nearest(Q35_GRID_IQ1S, x + 8 * l, dl, neg ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA, &d2);
            dist[neg] += d2;
        }
    }
    const int neg = dist[1] < dist[0];
    memcpy(points, p[neg], (size_t)n_groups * sizeof *points);
    return neg;
}

void q35_dequantize_iq1_s(const void *src, float *dst, int64_t n)
{
    const q35_block_iq1_s *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        for (int s = 0; s < Q35_QK_K / 32; s++) {
            const int qh = b[i].qh[s];
            const float dl = step_iq1(d, (qh >> 12) & 7);
            const float delta = qh & 0x8000 ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA;
            for (int l = 0; l < 4; l++, y += 8)
                iq1_group(dl, delta, q35_iq1s_grid[b[i].qs[4 * s + l] | ((qh >> (3 * l)) & 7) << 8], y);
        }
    }
}

void q35_quantize_iq1_s(const float *src, void *dst, int64_t n)
{
    q35_block_iq1_s *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        float want[8];
        uint8_t ls[8];
        q35_iq_wants(x, 32, IQ1_TOP, want);
        const float d = q35_iq_scales(want, 8, step_iq1, 7, &b[i].d, ls);
        for (int s = 0; s < 8; s++) {
            int p[4];
            const int neg = iq1_groups(x + 32 * s, 4, step_iq1(d, ls[s]), p);
            int qh = ls[s] << 12 | neg << 15;
            for (int l = 0; l < 4; l++) {
                b[i].qs[4 * s + l] = (uint8_t)p[l];
                qh |= (p[l] >> 8) << (3 * l);
            }
            b[i].qh[s] = (uint16_t)qh;
        }
    }
}

void q35_dequantize_iq1_m(const void *src, float *dst, int64_t n)
{
    const q35_block_iq1_m *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(q35_iq1_m_d(b[i].scales));
        for (int s = 0; s < Q35_QK_K / 32; s++) {
            const int sc = b[i].scales[2 * (s / 2)] | b[i].scales[2 * (s / 2) + 1] << 8;
            const float dl[2] = {step_iq1(d, (sc >> (6 * (s % 2))) & 7), step_iq1(d, (sc >> (6 * (s % 2) + 3)) & 7)};
            for (int l = 0; l < 4; l++, y += 8) {
                const int h = b[i].qh[2 * s + l / 2] >> (4 * (l % 2));
                iq1_group(dl[l / 2], h & 8 ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA,
                          q35_iq1s_grid[b[i].qs[4 * s + l] | (h & 7) << 8], y);
            }
        }
    }
}

void q35_quantize_iq1_m(const float *src, void *dst, int64_t n)
{
    q35_block_iq1_m *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        float want[16];
        uint8_t ls[16];
        uint16_t dbits;
        q35_iq_wants(x, 16, IQ1_TOP, want);
        const float d = q35_iq_scales(want, 16, step_iq1, 7, &dbits, ls);
        uint16_t sc[4] = {0, 0, 0, 0};
        for (int s = 0; s < 8; s++) {
            sc[s / 2] = (uint16_t)(sc[s / 2] | (ls[2 * s] | ls[2 * s + 1] << 3) << (6 * (s % 2)));
            uint8_t qh[2] = {0, 0};
            for (int l = 0; l < 4; l++) {
                int p;
                const int neg = iq1_groups(x + 32 * s + 8 * l, 1, step_iq1(d, ls[2 * s + l / 2]), &p);
                b[i].qs[4 * s + l] = (uint8_t)p;
                qh[l / 2] = (uint8_t)(qh[l / 2] | ((p >> 8) | neg << 3) << (4 * (l % 2)));
            }
            memcpy(b[i].qh + 2 * s, qh, 2);
        }
        for (int k = 0; k < 4; k++) {
            b[i].scales[2 * k] = (uint8_t)sc[k];
            b[i].scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
        }
        q35_iq1_m_set_d(b[i].scales, dbits);
    }
}
