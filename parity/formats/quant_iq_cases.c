/* Part 2b of test_quant (quant_cases.h): the grid i-quants' tables and hand-built
 * blocks. The expected values are computed here element by element from the
 * layouts of core/quant_blocks_iq.h (which byte and bits hold element e's index,
 * signs, scale and shift) by the float operations of ggml's formula in its order,
 * with the 8th sign bit as a popcount parity rather than the codec's helper, and
 * compared bitwise. The grids are the codec's (core/quant_grids.h); their entries
 * are checked against ggml's, written out here, first. */
#include "quant_cases.h"

#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_grids.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tables ----------------------------------------------------------------- */

/* Entries of ggml's tables (ggml-common.h at 0c1e570): first, one inside, last. */
static void check_tables(q35_suite *s)
{
    static const struct {
        const char *what;
        uint64_t got, want;
    } k[] = {
        {"iq2xxs_grid[0]", 0, 0x0808080808080808ull},   {"iq2xxs_grid[1]", 0, 0x080808080808082bull},
        {"iq2xxs_grid[255]", 0, 0x2b2b2b1908081908ull}, {"iq2xs_grid[0]", 0, 0x0808080808080808ull},
        {"iq2xs_grid[511]", 0, 0x2b2b2b2b2b2b2b2bull},  {"iq2s_grid[1]", 0, 0x080808080808082bull},
        {"iq2s_grid[1023]", 0, 0x2b2b2b2b2b2b2b2bull},  {"iq3xxs_grid[0]", 0, 0x04040404},
        {"iq3xxs_grid[255]", 0, 0x3e341c04},            {"iq3s_grid[0]", 0, 0x01010101},
        {"iq3s_grid[511]", 0, 0x0f0f0101},              {"iq1s_grid[0]", 0, 0xffffffffffffffffull},
        {"iq1s_grid[1]", 0, 0xffffffffffffff01ull},     {"iq1s_grid[2047]", 0, 0x0101010101010101ull},
    };
    const uint64_t got[] = {q35_iq2xxs_grid[0], q35_iq2xxs_grid[1], q35_iq2xxs_grid[255], q35_iq2xs_grid[0],
                            q35_iq2xs_grid[511], q35_iq2s_grid[1],  q35_iq2s_grid[1023],  q35_iq3xxs_grid[0],
                            q35_iq3xxs_grid[255], q35_iq3s_grid[0], q35_iq3s_grid[511],   q35_iq1s_grid[0],
                            q35_iq1s_grid[1],    q35_iq1s_grid[2047]};
    int bad = 0, first = -1;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (got[i] != k[i].want && bad++ == 0)
            first = (int)i;
    q35_case(s, bad == 0, "grid entries against ggml's (first, inside, last of each): %d of %zu wrong%s%s", bad,
             sizeof k / sizeof k[0], first >= 0 ? ", first " : "", first >= 0 ? k[first].what : "");

    /* ggml's ksigns_iq2xs, its first 16 and last 8 entries; every entry: the field
     * itself and, as bit 7, the parity (an even count of set bits). */
    static const uint8_t ksigns_head[16] = {0, 129, 130, 3, 132, 5, 6, 135, 136, 9, 10, 139, 12, 141, 142, 15};
    static const uint8_t ksigns_tail[8] = {120, 249, 250, 123, 252, 125, 126, 255};
    int bad_signs = 0;
    for (uint32_t f = 0; f < 128; f++) {
        const uint32_t v = q35_iq_signs7(f);
        bad_signs += (v & 127u) != f || __builtin_popcount(v) % 2 != 0 || (f < 16 && v != ksigns_head[f]) ||
                     (f >= 120 && v != ksigns_tail[f - 120]) || q35_iq_signs7(f | 0x80u) != v;
    }
    q35_case(s, bad_signs == 0,
             "q35_iq_signs7: the 128 fields keep their bits, gain the parity bit (ggml's ksigns_iq2xs, 24 "
             "entries written out), ignore bits past 7: %d wrong", bad_signs);

    /* IQ1_M's f16 super-scale from the top nibbles of its 4 scale words. */
    const uint8_t sc[8] = {0xff, 0x1f, 0xff, 0xcf, 0x00, 0x3f, 0x12, 0x4f};
    q35_case(s, q35_iq1_m_d(sc) == 0x43c1, "q35_iq1_m_d: nibbles 1, c, 3, 4 -> 0x43c1: 0x%04x", q35_iq1_m_d(sc));
}

/* ---- blocks --------------------------------------------------------------------- */

static uint32_t next_u32(uint64_t *st)
{
    *st ^= *st << 13, *st ^= *st >> 7, *st ^= *st << 17;
    return (uint32_t)(*st >> 16);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int grid_byte(uint64_t entry, int j, int is_signed)
{
    const uint8_t b = (uint8_t)(entry >> (8 * j));
    return is_signed ? (int)(int8_t)b : (int)b;
}

/* Element j of a group negative by a 7-bit field: bit j, bit 7 the parity. */
static bool neg7(uint32_t field, int j)
{
    field &= 127u;
    return (j < 7 ? field >> j & 1u : (uint32_t)__builtin_popcount(field) & 1u) != 0;
}

q35_test_iq_elem q35_test_iq_element(q35_type t, const uint8_t *b, int e, float d)
{
    const int s = e / 32, l = e % 32 / 8, j = e % 8;
    q35_test_iq_elem r = {0.0f, 0.0f, 0, false};
    switch (t) {
    case Q35_TYPE_IQ2_XXS: {
        const uint8_t *q = b + 2 + 8 * s;
        const uint32_t w = le32(q + 4);
        r.step = d * (0.5f + (float)(w >> 28)) * 0.25f;
        r.level = grid_byte(q35_iq2xxs_grid[q[l]], j, 0);
        r.neg = neg7(w >> (7 * l), j);
        break;
    }
    case Q35_TYPE_IQ2_XS: {
        const int qs = b[2 + 2 * (4 * s + l)] | b[3 + 2 * (4 * s + l)] << 8;
        r.step = d * (0.5f + (float)((b[66 + s] >> (l < 2 ? 0 : 4)) & 15)) * 0.25f;
        r.level = grid_byte(q35_iq2xs_grid[qs & 511], j, 0);
        r.neg = neg7((uint32_t)qs >> 9, j);
        break;
    }
    case Q35_TYPE_IQ2_S: {
        const int index = b[2 + 4 * s + l] | ((b[66 + s] >> (2 * l)) & 3) << 8;
        r.step = d * (0.5f + (float)((b[74 + s] >> (l < 2 ? 0 : 4)) & 15)) * 0.25f;
        r.level = grid_byte(q35_iq2s_grid[index], j, 0);
        r.neg = (b[34 + 4 * s + l] >> j & 1) != 0;
        break;
    }
    case Q35_TYPE_IQ3_XXS: {
        const uint32_t w = le32(b + 2 + 64 + 4 * s);
        r.step = d * (0.5f + (float)(w >> 28)) * 0.5f;
        r.level = grid_byte(q35_iq3xxs_grid[b[2 + 8 * s + 2 * l + j / 4]], j % 4, 0);
        r.neg = neg7(w >> (7 * l), j);
        break;
    }
    case Q35_TYPE_IQ3_S: {
        const int k = 2 * l + j / 4; /* the point in the sub-block */
        const int index = b[2 + 8 * s + k] | ((b[66 + s] >> k) & 1) << 8;
        r.step = d * (float)(1 + 2 * ((b[106 + s / 2] >> (4 * (s % 2))) & 15));
        r.level = grid_byte(q35_iq3s_grid[index], j % 4, 0);
        r.neg = (b[74 + 4 * s + l] >> j & 1) != 0;
        break;
    }
    case Q35_TYPE_IQ1_S: {
        const int qh = b[34 + 2 * s] | b[35 + 2 * s] << 8;
        r.step = d * (float)(2 * ((qh >> 12) & 7) + 1);
        r.shift = (qh & 0x8000) ? -0.125f : 0.125f;
        r.level = grid_byte(q35_iq1s_grid[b[2 + 4 * s + l] | ((qh >> (3 * l)) & 7) << 8], j, 1);
        break;
    }
    default: { /* IQ1_M */
        const int nib = (b[32 + 2 * s + l / 2] >> (4 * (l % 2))) & 15;
        const int word = b[48 + 2 * (s / 2)] | b[49 + 2 * (s / 2)] << 8;
        r.step = d * (float)(2 * ((word >> (6 * (s % 2) + 3 * (l / 2))) & 7) + 1);
        r.shift = (nib & 8) ? -0.125f : 0.125f;
        r.level = grid_byte(q35_iq1s_grid[b[4 * s + l] | (nib & 7) << 8], j, 1);
        break;
    }
    }
    return r;
}

/* Element e by ggml's formula in its order and form: step * level * (neg ? -1 :
 * 1) (IQ2, IQ3; the form matters for a NaN step, whose sign the compiler may
 * flip or keep as it does for ggml's), step * (level + shift) (IQ1). */
static float want_iq(q35_type t, const uint8_t *b, int e, float d)
{
    const q35_test_iq_elem r = q35_test_iq_element(t, b, e, d);
    if (t == Q35_TYPE_IQ1_S || t == Q35_TYPE_IQ1_M)
        return r.step * ((float)r.level + r.shift);
    return r.step * (float)r.level * (r.neg ? -1.0f : 1.0f);
}

/* Writes the f16 bits h as block b's super-scale (IQ1_M: the 4 top nibbles). */
static void put_d(q35_type t, uint8_t *b, uint16_t h)
{
    if (t == Q35_TYPE_IQ1_M) {
        q35_iq1_m_set_d(b + 48, h);
    } else {
        b[0] = (uint8_t)h, b[1] = (uint8_t)(h >> 8);
    }
}

/* For each f16 scale: blocks of random bytes whose low index bytes run through
 * all 256 values (the high bits random: with 8 blocks or more every point of the
 * smaller grids), compared bitwise with want_iq. */
static int index_pos(q35_type t, int g);

static void check_iq_blocks(q35_suite *s, q35_type t, int points, int groups)
{
    const q35_type_info *ti = q35_type_get(t);
    const int nb = points / groups > 8 ? points / groups : 8;
    uint8_t *blocks = malloc((size_t)nb * (size_t)ti->block_bytes);
    float *want = malloc((size_t)nb * Q35_QK_K * sizeof *want);
    if (!blocks || !want) {
        q35_case(s, false, "%s blocks: out of memory", ti->name);
        free(blocks), free(want);
        return;
    }
    uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)t;
    for (int i = 0; i < Q35_TEST_N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < nb; k++) {
            uint8_t *b = blocks + (size_t)k * (size_t)ti->block_bytes;
            for (int c = 0; c < ti->block_bytes; c++)
                b[c] = (uint8_t)next_u32(&st);
            /* the low index bytes: group g of block k takes point (32k + g) mod points (the high bits random) */
            for (int g = 0; g < groups; g++)
                b[index_pos(t, g)] = (uint8_t)(groups * k + g);
            put_d(t, b, q35_test_scales[i].bits);
            for (int e = 0; e < Q35_QK_K; e++)
                want[k * Q35_QK_K + e] = want_iq(t, b, e, d);
        }
        char what[128];
        snprintf(what, sizeof what, "%d random blocks, every low index byte, d = %s", nb, q35_test_scales[i].what);
        if (isnan(d)) { /* a NaN's sign after * -1 is the compiler's (IEEE 754 leaves it open): every value NaN */
            float *got = malloc((size_t)nb * Q35_QK_K * sizeof *got);
            int64_t not_nan = got ? 0 : -1;
            if (got) {
                q35_dequantize(t, blocks, got, (int64_t)nb * Q35_QK_K);
                for (int64_t e = 0; e < (int64_t)nb * Q35_QK_K; e++)
                    not_nan += !isnan(got[e]);
            }
            q35_case(s, not_nan == 0, "%s %s: every value NaN (%lld not)", ti->name, what, (long long)not_nan);
            free(got);
            continue;
        }
        q35_test_check_blocks(s, t, blocks, (int64_t)nb * Q35_QK_K, want, what);
    }
    free(blocks), free(want);
}

/* Where group g's low index byte lies in a block (IQ3: point g). */
static int index_pos(q35_type t, int g)
{
    switch (t) {
    case Q35_TYPE_IQ2_XXS: return 2 + 8 * (g / 4) + g % 4;
    case Q35_TYPE_IQ2_XS: return 2 + 2 * g;
    case Q35_TYPE_IQ1_M: return g;
    default: return 2 + g;
    }
}

/* ---- worked literals ------------------------------------------------------------- */

static void check_literals(q35_suite *s)
{
    uint8_t b[110];
    /* IQ2_XXS, d = 1: sub-block 0 ls 3 (db = 3.5 * 0.25 = 0.875), group 0 point 1
     * (43, 8 x 7), signs field 1: element 0 negative and, by parity, element 7:
     * -37.625, 7, ..., -7; group 1 point 0 (all 8), no signs: 7; sub-block 1 all zero
     * bytes: ls 0, db 0.125, point 0: 1. */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ2_XXS, b, 0x3c00);
    b[2] = 1, b[6] = 1, b[9] = 3 << 4;
    const q35_test_spot s_xxs[] = {{0, -37.625f}, {1, 7.0f}, {7, -7.0f}, {8, 7.0f}, {32, 1.0f}};
    q35_test_check_spots(s, Q35_TYPE_IQ2_XXS, b, Q35_QK_K, s_xxs, 5, "d = 1, ls 3, point 1, signs 1 (+ parity)");

    /* IQ2_XS, d = 1: qs[0] = point 1 | signs 1 << 9, scales[0] = 0x21: groups 0, 1 ls 1
     * (db 0.375), groups 2, 3 ls 2 (0.625): element 0 = -16.125, 7 = -3 (parity),
     * 16 (point 0) = 5. */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ2_XS, b, 0x3c00);
    b[2] = 1, b[3] = 1 << 1, b[66] = 0x21;
    const q35_test_spot s_xs[] = {{0, -16.125f}, {7, -3.0f}, {1, 3.0f}, {16, 5.0f}};
    q35_test_check_spots(s, Q35_TYPE_IQ2_XS, b, Q35_QK_K, s_xs, 4, "d = 1, scales 0x21, point 1, signs 1");

    /* IQ2_S, d = 1, ls 0 (db 0.125): group 0 point 1, sign byte 0x01 (no parity):
     * element 0 = -5.375, 7 = +1; group 1: qs[1] = 1 with qh[0] bits 2, 3 set: point
     * 769 = 0x192b080819190819: element 8 = 25 * 0.125 = 3.125, 14 = 5.375. */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ2_S, b, 0x3c00);
    b[2] = 1, b[3] = 1, b[34] = 0x01, b[66] = 0x0c;
    const q35_test_spot s_s[] = {{0, -5.375f}, {7, 1.0f}, {8, 3.125f}, {14, 5.375f}, {9, 1.0f}};
    q35_test_check_spots(s, Q35_TYPE_IQ2_S, b, Q35_QK_K, s_s, 5, "d = 1, points 1 and 769, sign byte 1");

    /* IQ3_XXS, d = 1, ls 1 (db = 1.5 * 0.5 = 0.75), points 0 (4 x 4) and 255
     * (0x3e341c04: 4, 28, 52, 62), signs field 1: element 0 = -3, 4 = 3, 5 = 21, 7 =
     * -46.5 (parity). */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ3_XXS, b, 0x3c00);
    b[3] = 255, b[66] = 1, b[69] = 1 << 4;
    const q35_test_spot s_3xxs[] = {{0, -3.0f}, {1, 3.0f}, {4, 3.0f}, {5, 21.0f}, {7, -46.5f}};
    q35_test_check_spots(s, Q35_TYPE_IQ3_XXS, b, Q35_QK_K, s_3xxs, 5, "d = 1, ls 1, points 0 and 255, signs 1");

    /* IQ3_S, d = 0.5, ls 2 (db = 0.5 * 5 = 2.5): point 0 (1 x 4), point 1 = qs 0xff
     * with qh bit 1: 511 (0x0f0f0101: 1, 1, 15, 15), sign byte 0x80: element 0 = 2.5,
     * 4 = 2.5, 6 = 37.5, 7 = -37.5. */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ3_S, b, 0x3800);
    b[3] = 0xff, b[66] = 0x02, b[74] = 0x80, b[106] = 0x02;
    const q35_test_spot s_3s[] = {{0, 2.5f}, {4, 2.5f}, {6, 37.5f}, {7, -37.5f}, {32, 0.5f}};
    q35_test_check_spots(s, Q35_TYPE_IQ3_S, b, Q35_QK_K, s_3s, 5, "d = 0.5, ls 2, points 0 and 511, sign byte 0x80");

    /* IQ1_S, d = 1, qh[0] = ls 2 (dl 5) | shift negative | point 1's high bits 7:
     * group 0 point 0 (all -1): 5 * -1.125 = -5.625; group 1 point 0x7ff (all +1):
     * 5 * 0.875 = 4.375; sub-block 1 all zero bytes: dl 1, shift +, point 0: -0.875. */
    memset(b, 0, sizeof b);
    put_d(Q35_TYPE_IQ1_S, b, 0x3c00);
    b[3] = 0xff, b[34] = 7 << 3, b[35] = 0x80 | 2 << 4;
    const q35_test_spot s_1s[] = {{0, -5.625f}, {8, 4.375f}, {31, -5.625f}, {32, -0.875f}};
    q35_test_check_spots(s, Q35_TYPE_IQ1_S, b, Q35_QK_K, s_1s, 4, "d = 1, ls 2, shift -1/8, points 0 and 2047");

    /* IQ1_M, d = 1 (0x3c00: nibbles 0, 0, c, 3), scales word 0 = 1 | 3 << 3 (dl1 3,
     * dl2 7): group 0 point 0, shift negative: 3 * -1.125 = -3.375; group 1 point 0,
     * shift +: -2.625; group 2 point 2047 (qh[1] low nibble 7), shift +: 7.875; group 3
     * point 0: -6.125; sub-block 1: ls 0, dl 1: -0.875. */
    memset(b, 0, sizeof b);
    b[48] = 25;
    put_d(Q35_TYPE_IQ1_M, b, 0x3c00);
    b[2] = 0xff, b[32] = 0x08, b[33] = 0x07;
    const q35_test_spot s_1m[] = {{0, -3.375f}, {8, -2.625f}, {16, 7.875f}, {24, -6.125f}, {32, -0.875f}};
    q35_test_check_spots(s, Q35_TYPE_IQ1_M, b, Q35_QK_K, s_1m, 5, "d = 1, dl 3 and 7, points 0 and 2047");
}

void q35_test_check_iq_blocks(q35_suite *s)
{
    check_tables(s);
    static const struct {
        q35_type t;
        int points, groups;
    } k[] = {{Q35_TYPE_IQ2_XXS, 256, 32}, {Q35_TYPE_IQ2_XS, 512, 32}, {Q35_TYPE_IQ2_S, 1024, 32},
             {Q35_TYPE_IQ3_XXS, 256, 64}, {Q35_TYPE_IQ3_S, 512, 64},  {Q35_TYPE_IQ1_S, 2048, 32},
             {Q35_TYPE_IQ1_M, 2048, 32}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        check_iq_blocks(s, k[i].t, k[i].points, k[i].groups);
    check_literals(s);
}
