/* Part 2 of test_quant (quant_cases.h): hand-built blocks of every legacy,
 * k-quant and IQ4 format, dequantized and compared bitwise with ggml's arithmetic. */
#include "quant_cases.h"

#include "core/quant.h"
#include "core/quant_blocks.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 2. hand-built blocks ------------------------------------------------------ */

const q35_test_f16_scale q35_test_scales[Q35_TEST_N_SCALES] = {
    {0x3c00, 1.0f, "1"},
    {0x3555, 0x1.554p-2f, "0.333252 (exp 13, mantissa 0x155)"},
    {0x2e66, 0x1.998p-4f, "0.0999756 (exp 11, mantissa 0x266)"},
    {0xb800, -0.5f, "-0.5, negative"},
    {0x7bff, 65504.0f, "65504, the largest f16"},
    {0xfbff, -65504.0f, "-65504"},
    {0x0400, 0x1p-14f, "2^-14, the smallest normal"},
    {0x03ff, 0x1.ff8p-15f, "1023*2^-24, the largest subnormal"},
    {0x0001, 0x1p-24f, "2^-24, the smallest subnormal"},
    {0x8001, -0x1p-24f, "-2^-24"},
    {0x0000, 0.0f, "+0"},
    {0x8000, -0.0f, "-0"},
    {0x7c00, INFINITY, "+inf (inf*0 is NaN)"},
    {0xfc00, -INFINITY, "-inf"},
    {0x7e00, NAN, "NaN"},
};
#define N_SCALES Q35_TEST_N_SCALES

/* The table's values must be what its bits mean (a typo here would test nothing). */
static void check_scale_table(q35_suite *s)
{
    int bad = 0;
    for (int i = 0; i < N_SCALES; i++) {
        const double v = q35_test_f16_value(q35_test_scales[i].bits);
        bad += isnan(v) ? !isnan(q35_test_scales[i].value) : q35_test_bits_of(q35_test_scales[i].value) != q35_test_bits_of((float)v);
    }
    q35_case(s, bad == 0, "the %d hand-written f16 scales match their bits: %d wrong", N_SCALES, bad);
}

void q35_test_check_blocks(q35_suite *s, q35_type type, const void *blocks, int64_t n, const float *want,
                         const char *what)
{
    float *got = malloc((size_t)(n + Q35_TEST_SENTINEL_FLOATS) * sizeof *got);
    float tail[Q35_TEST_SENTINEL_FLOATS];
    if (!got) {
        q35_case(s, false, "%s %s: out of memory", q35_type_name(type), what);
        return;
    }
    q35_poison_f32(got, n + Q35_TEST_SENTINEL_FLOATS);
    q35_poison_f32(tail, Q35_TEST_SENTINEL_FLOATS);
    q35_dequantize(type, blocks, got, n);
    const q35_bitcmp c = q35_bitwise_f32(got, want, n);
    const bool tail_ok = memcmp(got + n, tail, sizeof tail) == 0;
    char buf[256];
    q35_case(s, c.equal && tail_ok, "%-4s %s: %" PRId64 " values %s%s", q35_type_name(type), what, n,
             q35_bitcmp_str(&c, buf, sizeof buf), tail_ok ? "" : ", WROTE PAST n");
    free(got);
}

/* nb blocks of `type` and their nb * block_elems expected values, or false (one
 * failed case, nothing kept) when memory runs out. */
static bool alloc_blocks(q35_suite *s, q35_type type, int64_t nb, void **blocks, float **want)
{
    const q35_type_info *ti = q35_type_get(type);
    *blocks = malloc((size_t)nb * (size_t)ti->block_bytes);
    *want = malloc((size_t)nb * (size_t)ti->block_elems * sizeof **want);
    if (*blocks && *want)
        return true;
    q35_case(s, false, "%s blocks: out of memory", ti->name);
    free(*blocks);
    free(*want);
    return false;
}

typedef q35_test_spot spot;

void q35_test_check_spots(q35_suite *s, q35_type type, const void *blocks, int64_t n, const spot *spots, int n_spots,
                        const char *what)
{
    float got[Q35_QK_K];
    q35_poison_f32(got, n);
    q35_dequantize(type, blocks, got, n);
    int bad = 0, first = -1;
    for (int i = 0; i < n_spots; i++) {
        if (q35_test_bits_of(got[spots[i].index]) != q35_test_bits_of(spots[i].want) && bad++ == 0)
            first = i;
    }
    char detail[96] = "";
    if (first >= 0)
        snprintf(detail, sizeof detail, " (first [%d]: got %.9g, want %.9g)", spots[first].index,
                 (double)got[spots[first].index], (double)spots[first].want);
    q35_case(s, bad == 0, "%-4s worked example, %s: %d literals, %d wrong%s", q35_type_name(type), what, n_spots, bad,
             detail);
}

/* The element's nibble in Q4_0/Q5_0 qs: element j < 16 in the low nibble of qs[j],
 * element j + 16 in the high one. */
static int legacy_nibble(const uint8_t qs[16], int e)
{
    return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
}

/* Q8_0: all 256 int8 levels (8 blocks) under every scale: x = (float)q * d. */
static void check_q8_0_blocks(q35_suite *s)
{
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q8_0 b[8];
        float want[256];
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < 8; k++) {
            b[k].d = q35_test_scales[i].bits;
            for (int j = 0; j < 32; j++) {
                b[k].qs[j] = (int8_t)(32 * k + j - 128);
                want[32 * k + j] = (float)b[k].qs[j] * d;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every int8 level, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_Q8_0, b, 256, want, what);
    }
    /* d = 0x3555 = 1365/4096: -128 -> -42.65625, 127 -> 173355/4096, 1 -> d. */
    q35_block_q8_0 b = {.d = 0x3555};
    b.qs[0] = -128;
    b.qs[1] = 127;
    b.qs[2] = 1;
    b.qs[3] = -1;
    const spot spots[] = {{0, -42.65625f}, {1, 42.322998046875f}, {2, 0.333251953125f}, {3, -0.333251953125f}, {4, 0.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q8_0, &b, 32, spots, 5, "d = 0x3555");
}

/* Q4_0: every nibble in both halves (two orders) under every scale: x = (q - 8) * d. */
static void check_q4_0_blocks(q35_suite *s)
{
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q4_0 b[2];
        float want[64];
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < 2; k++) {
            b[k].d = q35_test_scales[i].bits;
            for (int j = 0; j < 16; j++) /* low nibbles 0..15, high 15..0; then the reverse */
                b[k].qs[j] = (uint8_t)(k == 0 ? j | (15 - j) << 4 : (15 - j) | j << 4);
            for (int e = 0; e < 32; e++)
                want[32 * k + e] = (float)(legacy_nibble(b[k].qs, e) - 8) * d;
        }
        char what[128];
        snprintf(what, sizeof what, "every nibble in both halves, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_Q4_0, b, 64, want, what);
    }
    /* d = -0.5: nibble 0 -> -8 * -0.5 = 4, nibble 15 -> 7 * -0.5 = -3.5, nibble 9 -> -0.5. */
    q35_block_q4_0 b = {.d = 0xb800};
    for (int j = 0; j < 16; j++)
        b.qs[j] = (uint8_t)(j | (15 - j) << 4);
    const spot spots[] = {{0, 4.0f}, {15, -3.5f}, {16, -3.5f}, {31, 4.0f}, {9, -0.5f}, {8, -0.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q4_0, &b, 32, spots, 6, "d = -0.5");
}

/* Q5_0: qh all clear, all set, and each of its 32 bits alone (bit e is element e's
 * fifth bit, qh little-endian), under every scale: x = ((q | h << 4) - 16) * d. */
static void check_q5_0_blocks(q35_suite *s)
{
    enum { NB = 34 };
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q5_0 b[NB];
        float want[NB * 32];
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            const uint32_t qh = k == 0 ? 0u : k == 1 ? 0xffffffffu : 1u << (k - 2);
            b[k].d = q35_test_scales[i].bits;
            for (int byte = 0; byte < 4; byte++)
                b[k].qh[byte] = (uint8_t)(qh >> (8 * byte));
            for (int j = 0; j < 16; j++)
                b[k].qs[j] = (uint8_t)((k & 1) ? (15 - j) | j << 4 : j | (15 - j) << 4);
            for (int e = 0; e < 32; e++) {
                const int high = b[k].qh[e / 8] >> (e % 8) & 1;
                want[32 * k + e] = (float)((legacy_nibble(b[k].qs, e) | high << 4) - 16) * d;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every level, each qh bit alone, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_Q5_0, b, NB * 32, want, what);
    }
    /* d = 1, qh bit 20 only: element 20 = high nibble of qs[4] (11) + 16 -> 11; element 4
     * = low nibble 4, no fifth bit -> -12; element 0 -> -16; element 31 -> 0 - 16. */
    q35_block_q5_0 b = {.d = 0x3c00, .qh = {0, 0, 0x10, 0}};
    for (int j = 0; j < 16; j++)
        b.qs[j] = (uint8_t)(j | (15 - j) << 4);
    const spot spots[] = {{20, 11.0f}, {4, -12.0f}, {0, -16.0f}, {31, -16.0f}, {16, -1.0f}, {21, -6.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q5_0, &b, 32, spots, 6, "d = 1, qh bit 20");
}

/* Q4_K/Q5_K's 12 scale bytes from 8 scales and 8 mins of 6 bits, by the format's
 * definition: j < 4 in the low 6 bits of bytes j (scale) and j + 4 (min); j >= 4 with
 * its low nibbles in byte j + 4 (scale low, min high) and its top two bits in the
 * top bits of bytes j - 4 (scale) and j (min). */
static void pack_q35_test_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t out[Q35_K_SCALE_BYTES])
{
    memset(out, 0, Q35_K_SCALE_BYTES);
    for (int j = 0; j < 4; j++) {
        out[j] |= sc[j];
        out[j + 4] |= m[j];
    }
    for (int j = 4; j < 8; j++) {
        out[j + 4] = (uint8_t)((sc[j] & 15) | (m[j] & 15) << 4);
        out[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
        out[j] |= (uint8_t)((m[j] >> 4) << 6);
    }
}

/* Q4_K/Q5_K levels: element 32 s + l (sub-block s) lives in byte 32 (s / 2) + l of
 * qs, the low nibble for even s and the high one for odd s; Q5_K's fifth bit is
 * bit s of qh[l]. qh is NULL for Q4_K (levels < 16). */
static void pack_k_levels(const uint8_t L[Q35_QK_K], uint8_t qs[Q35_QK_K / 2], uint8_t *qh)
{
    memset(qs, 0, Q35_QK_K / 2);
    if (qh)
        memset(qh, 0, Q35_QK_K / 8);
    for (int e = 0; e < Q35_QK_K; e++) {
        const int sb = e / 32, l = e % 32;
        qs[32 * (sb / 2) + l] |= (uint8_t)((L[e] & 15) << (sb % 2 ? 4 : 0));
        if (qh)
            qh[l] |= (uint8_t)((L[e] >> 4) << sb);
    }
}

/* Q6_K levels (6 bits): element 128 h + 32 k + l (half h, quarter k, l < 32) has
 * its low nibble in ql[64 h + 32 (k % 2) + l] (the low half for k < 2, the high for
 * k >= 2) and its top two bits at bits 2k, 2k + 1 of qh[32 h + l]. */
static void pack_q6_k_levels(const uint8_t L[Q35_QK_K], uint8_t ql[Q35_QK_K / 2], uint8_t qh[Q35_QK_K / 4])
{
    memset(ql, 0, Q35_QK_K / 2);
    memset(qh, 0, Q35_QK_K / 4);
    for (int e = 0; e < Q35_QK_K; e++) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        ql[64 * h + 32 * (k % 2) + l] |= (uint8_t)((L[e] & 15) << (k < 2 ? 0 : 4));
        qh[32 * h + l] |= (uint8_t)((L[e] >> 4) << (2 * k));
    }
}

/* ggml's Q4_K/Q5_K element: d1 = d*sc; m1 = dmin*m; x = d1*q - m1, each a float op. */
static float want_k(float d, float dmin, uint8_t sc, uint8_t m, int q)
{
    const float d1 = d * (float)sc;
    const float m1 = dmin * (float)m;
    return d1 * (float)q - m1;
}

/* Sub-block scales and mins: distinct per position (a swapped position shows), all
 * 6 bits set, zero, and single bits with every top-two-bit pattern at j >= 4. */
static const struct {
    uint8_t sc[8], m[8];
} k_scale_sets[] = {
    {{63, 58, 53, 48, 43, 38, 33, 28}, {3, 10, 17, 24, 31, 38, 45, 52}},
    {{63, 63, 63, 63, 63, 63, 63, 63}, {63, 63, 63, 63, 63, 63, 63, 63}},
    {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}},
    {{1, 2, 4, 8, 16, 32, 48, 17}, {32, 16, 8, 4, 2, 1, 33, 63}},
};
#define N_SCALE_SETS ((int)(sizeof k_scale_sets / sizeof k_scale_sets[0]))

/* q35_k_scale_min against a hand-unpacked example, and against the packing of 64
 * rotations that put every 6-bit value at every scale and min position j = 0..7. */
static void check_k_scale_min(q35_suite *s)
{
    /* bytes 0-3: top bits 3,1,2,0 (scale j+4 high), low 1,2,3,4 (scale j);
     * bytes 4-7: top bits 1,2,3,0 (min j+4 high), low 5,6,7,8 (min j);
     * bytes 8-11: min j+4 low | scale j+4 low = 9|A, B|C, D|E, F|0. */
    static const uint8_t bytes[12] = {0xc1, 0x42, 0x83, 0x04, 0x45, 0x86, 0xc7, 0x08, 0x9a, 0xbc, 0xde, 0xf0};
    static const uint8_t sc_want[8] = {1, 2, 3, 4, 0x3a, 0x1c, 0x2e, 0x00};
    static const uint8_t m_want[8] = {5, 6, 7, 8, 0x19, 0x2b, 0x3d, 0x0f};
    int bad = 0;
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        q35_k_scale_min(j, bytes, &sc, &m);
        bad += sc != sc_want[j] || m != m_want[j];
    }
    uint8_t packed[12];
    pack_q35_test_scales(sc_want, m_want, packed);
    const bool pack_ok = memcmp(packed, bytes, sizeof bytes) == 0;
    q35_case(s, bad == 0 && pack_ok,
             "q35_k_scale_min of a hand-unpacked example: %d of 8 positions wrong; the test's packer %s it", bad,
             pack_ok ? "reproduces" : "DOES NOT reproduce");

    int bad_at[8] = {0};
    for (int v = 0; v < 64; v++) {
        uint8_t sc[8], m[8], q[12];
        for (int j = 0; j < 8; j++) {
            sc[j] = (uint8_t)((v + 9 * j) & 63);
            m[j] = (uint8_t)((v + 23 * j + 5) & 63);
        }
        pack_q35_test_scales(sc, m, q);
        for (int j = 0; j < 8; j++) {
            uint8_t gs, gm;
            q35_k_scale_min(j, q, &gs, &gm);
            bad_at[j] += gs != sc[j] || gm != m[j];
        }
    }
    int total = 0;
    for (int j = 0; j < 8; j++)
        total += bad_at[j];
    q35_case(s, total == 0,
             "q35_k_scale_min: every 6-bit value at every position j = 0..7 (scale and min): wrong per j "
             "%d %d %d %d %d %d %d %d",
             bad_at[0], bad_at[1], bad_at[2], bad_at[3], bad_at[4], bad_at[5], bad_at[6], bad_at[7]);
}

/* Q4_K/Q5_K: for each d of the table, blocks with every dmin of the table (negative
 * dmin turns the subtracted min into an added one; infinite ones give ggml's NaN
 * and inf) and every scale set; levels cycle so every sub-block holds every level.
 * Q5_K adds fifth-bit patterns: none, all, each sub-block's bit alone, scattered. */
static void check_k_blocks(q35_suite *s, q35_type type)
{
    const bool q5 = type == Q35_TYPE_Q5_K;
    const int n_high = q5 ? 11 : 1;
    const int nb = N_SCALES * N_SCALE_SETS * n_high;
    const size_t bb = q5 ? sizeof(q35_block_q5_K) : sizeof(q35_block_q4_K);
    uint8_t *blocks;
    float *want;
    if (!alloc_blocks(s, type, nb, (void **)&blocks, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        int k = 0;
        for (int im = 0; im < N_SCALES; im++) {
            const float dmin = q35_test_at_run_time(q35_test_scales[im].value);
            for (int set = 0; set < N_SCALE_SETS; set++) {
                for (int hp = 0; hp < n_high; hp++, k++) {
                    const uint8_t *sc = k_scale_sets[set].sc, *m = k_scale_sets[set].m;
                    uint8_t L[Q35_QK_K];
                    for (int e = 0; e < Q35_QK_K; e++) {
                        const int sb = e / 32, l = e % 32;
                        const int high = hp == 0 ? 0 : hp == 1 ? 1 : hp < 10 ? sb == hp - 2 : (l * 37 + sb * 11 + 5) >> 2 & 1;
                        L[e] = (uint8_t)((e + 5 * sb + k) % 16 + 16 * high);
                    }
                    uint16_t *hdr = (uint16_t *)(blocks + (size_t)k * bb); /* d, dmin lead both layouts */
                    if (q5) {
                        q35_block_q5_K *b = (q35_block_q5_K *)hdr;
                        b->d = q35_test_scales[i].bits;
                        b->dmin = q35_test_scales[im].bits;
                        pack_q35_test_scales(sc, m, b->scales);
                        pack_k_levels(L, b->qs, b->qh);
                    } else {
                        q35_block_q4_K *b = (q35_block_q4_K *)hdr;
                        b->d = q35_test_scales[i].bits;
                        b->dmin = q35_test_scales[im].bits;
                        pack_q35_test_scales(sc, m, b->scales);
                        pack_k_levels(L, b->qs, NULL);
                    }
                    for (int e = 0; e < Q35_QK_K; e++)
                        want[(size_t)k * Q35_QK_K + e] = want_k(d, dmin, sc[e / 32], m[e / 32], L[e]);
                }
            }
        }
        char what[160];
        snprintf(what, sizeof what, "d = %s: %d blocks (every dmin, %d scale sets%s)", q35_test_scales[i].what, nb,
                 N_SCALE_SETS, q5 ? ", 11 fifth-bit patterns" : "");
        q35_test_check_blocks(s, type, blocks, (int64_t)nb * Q35_QK_K, want, what);
    }
    free(blocks);
    free(want);

    /* Worked example: d = 1, dmin = 0.5, the scales of check_k_scale_min
     * (sc 1,2,3,4,58,28,46,0; m 5,6,7,8,25,43,61,15), qs all 0xf0: even sub-blocks
     * at level 0, odd at 15. Element 0: 0 - 0.5*5 = -2.5; 32: 2*15 - 3 = 27;
     * 128: -12.5; 160: 28*15 - 21.5 = 398.5; 192: -30.5; 224: 0*15 - 7.5 = -7.5.
     * Q5_K adds qh[0] bit 0 (element 0: 1*16 - 2.5 = 13.5) and qh[3] bit 5
     * (element 163: 28*31 - 21.5 = 846.5). */
    static const uint8_t scales[12] = {0xc1, 0x42, 0x83, 0x04, 0x45, 0x86, 0xc7, 0x08, 0x9a, 0xbc, 0xde, 0xf0};
    if (q5) {
        q35_block_q5_K b = {.d = 0x3c00, .dmin = 0x3800};
        memcpy(b.scales, scales, sizeof scales);
        memset(b.qs, 0xf0, sizeof b.qs);
        b.qh[0] = 0x01;
        b.qh[3] = 0x20;
        const spot spots[] = {{0, 13.5f}, {1, -2.5f}, {32, 27.0f}, {128, -12.5f}, {160, 398.5f},
                              {163, 846.5f}, {192, -30.5f}, {224, -7.5f}};
        q35_test_check_spots(s, type, &b, Q35_QK_K, spots, 8, "d = 1, dmin = 0.5");
    } else {
        q35_block_q4_K b = {.d = 0x3c00, .dmin = 0x3800};
        memcpy(b.scales, scales, sizeof scales);
        memset(b.qs, 0xf0, sizeof b.qs);
        const spot spots[] = {{0, -2.5f}, {32, 27.0f}, {128, -12.5f}, {160, 398.5f}, {192, -30.5f}, {224, -7.5f}};
        q35_test_check_spots(s, type, &b, Q35_QK_K, spots, 6, "d = 1, dmin = 0.5");
    }
}

/* Q6_K: for each d, 16 blocks whose scales run through all 256 int8 values and 16
 * more with another level order; levels shift per block so every 6-bit level sits at
 * every ql nibble / qh bit-pair position: x = d * sc * (q - 32), left to right. */
static void check_q6_k_blocks(q35_suite *s)
{
    enum { NB = 32 };
    q35_block_q6_K *b;
    float *want;
    if (!alloc_blocks(s, Q35_TYPE_Q6_K, NB, (void **)&b, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            uint8_t L[Q35_QK_K];
            for (int e = 0; e < Q35_QK_K; e++)
                L[e] = (uint8_t)(k < 16 ? (e + 3 * k) % 64 : 63 - (7 * e + k) % 64);
            for (int sb = 0; sb < 16; sb++)
                b[k].scales[sb] = (int8_t)(16 * (k % 16) + sb - 128);
            b[k].d = q35_test_scales[i].bits;
            pack_q6_k_levels(L, b[k].ql, b[k].qh);
            for (int e = 0; e < Q35_QK_K; e++)
                want[k * Q35_QK_K + e] = d * (float)b[k].scales[e / 16] * (float)(L[e] - 32);
        }
        char what[128];
        snprintf(what, sizeof what, "every level at every position, all int8 scales, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_Q6_K, b, NB * Q35_QK_K, want, what);
    }
    free(b);
    free(want);

    /* d = 0.5, scales[s] = s - 8, all levels 32 (value 0) but: element 0 level 0
     * (0.5*-8*-32 = 128), element 100 (scale 6: -2) level 63 (0.5*-2*31 = -31),
     * element 200 (scale 12: 4) level 33 (0.5*4*1 = 2), element 170 (scale 10: 2)
     * level 17 (0.5*2*-15 = -15). A zero level under a negative scale is -0. */
    q35_block_q6_K bw = {.d = 0x3800};
    uint8_t L[Q35_QK_K];
    memset(L, 32, sizeof L);
    L[0] = 0;
    L[100] = 63;
    L[200] = 33;
    L[170] = 17;
    for (int sb = 0; sb < 16; sb++)
        bw.scales[sb] = (int8_t)(sb - 8);
    pack_q6_k_levels(L, bw.ql, bw.qh);
    const spot spots[] = {{0, 128.0f}, {100, -31.0f}, {200, 2.0f}, {170, -15.0f}, {1, -0.0f}, {255, 0.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q6_K, &bw, Q35_QK_K, spots, 6, "d = 0.5");
}

/* ---- the offset, table and 2/3-bit formats -------------------------------------- */

/* Q4_1/Q5_1: for each d of the table, one block per offset m of the table, levels
 * in both nibble orders and (Q5_1) qh clear, set, a single bit and a scattered
 * pattern: x = (float)q * d + m, the product rounded before the sum. */
static void check_offset_blocks(q35_suite *s, q35_type type)
{
    const bool q5 = type == Q35_TYPE_Q5_1;
    const size_t bb = q5 ? sizeof(q35_block_q5_1) : sizeof(q35_block_q4_1);
    enum { NB = 4 * N_SCALES };
    uint8_t *blocks;
    float *want;
    if (!alloc_blocks(s, type, NB, (void **)&blocks, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            const float m = q35_test_at_run_time(q35_test_scales[k % N_SCALES].value);
            const int pat = k / N_SCALES; /* qh pattern */
            const uint32_t qh = !q5 ? 0u : pat == 0 ? 0u : pat == 1 ? 0xffffffffu : pat == 2 ? 1u << (k % 32) : 0x9c3a5e71u;
            uint8_t qs[16], qhb[4];
            for (int j = 0; j < 16; j++)
                qs[j] = (uint8_t)((k & 1) ? (15 - j) | j << 4 : j | (15 - j) << 4);
            for (int byte = 0; byte < 4; byte++)
                qhb[byte] = (uint8_t)(qh >> (8 * byte));
            uint8_t *p = blocks + (size_t)k * bb;
            const uint16_t dm[2] = {q35_test_scales[i].bits, q35_test_scales[k % N_SCALES].bits}; /* d, then m lead both */
            memcpy(p, dm, sizeof dm);
            if (q5) {
                memcpy(((q35_block_q5_1 *)p)->qh, qhb, 4);
                memcpy(((q35_block_q5_1 *)p)->qs, qs, 16);
            } else {
                memcpy(((q35_block_q4_1 *)p)->qs, qs, 16);
            }
            for (int e = 0; e < 32; e++) {
                const int high = (int)(qh >> e & 1u);
                const float dq = (float)(legacy_nibble(qs, e) | high << 4) * d;
                want[32 * k + e] = dq + m;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every level, every m, %sd = %s", q5 ? "4 qh patterns, " : "", q35_test_scales[i].what);
        q35_test_check_blocks(s, type, blocks, NB * 32, want, what);
    }
    free(blocks);
    free(want);
    if (q5) {
        /* d = 0.25, m = 1, qh bit 20: element 20 = high nibble of qs[4] (11) + 16 = 27
         * -> 6.75 + 1 = 7.75; element 4: level 4 -> 2; element 0 -> 1; element 31 -> 1. */
        q35_block_q5_1 b = {.d = 0x3400, .m = 0x3c00, .qh = {0, 0, 0x10, 0}};
        for (int j = 0; j < 16; j++)
            b.qs[j] = (uint8_t)(j | (15 - j) << 4);
        const spot spots[] = {{20, 7.75f}, {4, 2.0f}, {0, 1.0f}, {31, 1.0f}, {16, 4.75f}};
        q35_test_check_spots(s, type, &b, 32, spots, 5, "d = 0.25, m = 1, qh bit 20");
    } else {
        /* d = 0.5, m = -1.5: level 0 -> -1.5, 15 -> 6, 3 -> 0 (+0: 1.5 - 1.5). */
        q35_block_q4_1 b = {.d = 0x3800, .m = 0xbe00};
        for (int j = 0; j < 16; j++)
            b.qs[j] = (uint8_t)(j | (15 - j) << 4);
        const spot spots[] = {{0, -1.5f}, {15, 6.0f}, {16, 6.0f}, {31, -1.5f}, {3, 0.0f}, {28, 0.0f}};
        q35_test_check_spots(s, type, &b, 32, spots, 6, "d = 0.5, m = -1.5");
    }
}

/* IQ4_NL's and IQ4_XS's table, written out here from the format's definition. */
static const int k_iq4nl_table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* IQ4_NL: every index in both nibble positions under every scale: x = d * table[q]. */
static void check_iq4_nl_blocks(q35_suite *s)
{
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_iq4_nl b[2];
        float want[64];
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < 2; k++) {
            b[k].d = q35_test_scales[i].bits;
            for (int j = 0; j < 16; j++)
                b[k].qs[j] = (uint8_t)(k == 0 ? j | (15 - j) << 4 : (15 - j) | j << 4);
            for (int e = 0; e < 32; e++)
                want[32 * k + e] = d * (float)k_iq4nl_table[legacy_nibble(b[k].qs, e)];
        }
        char what[128];
        snprintf(what, sizeof what, "every index in both halves, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_IQ4_NL, b, 64, want, what);
    }
    /* d = 0.5: index 0 -> -63.5, 15 -> 56.5, 8 -> 0.5, 7 -> -5; d = -1: index 0 -> 127. */
    q35_block_iq4_nl b[2] = {{.d = 0x3800}, {.d = 0xbc00}};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 16; j++)
            b[k].qs[j] = (uint8_t)(j | (15 - j) << 4);
    const spot spots[] = {{0, -63.5f}, {15, 56.5f}, {16, 56.5f}, {8, 0.5f}, {7, -5.0f}, {32, 127.0f}, {47, -113.0f}};
    q35_test_check_spots(s, Q35_TYPE_IQ4_NL, b, 64, spots, 7, "d = 0.5 and d = -1");
}

/* Q2_K/Q3_K 2-bit levels: element 128h + 32j + l at bits 2j, 2j + 1 of qs[32h + l]. */
static void pack_2bit_levels(const uint8_t L[Q35_QK_K], uint8_t qs[Q35_QK_K / 4])
{
    memset(qs, 0, Q35_QK_K / 4);
    for (int e = 0; e < Q35_QK_K; e++)
        qs[32 * (e / 128) + e % 32] |= (uint8_t)((L[e] & 3) << (2 * (e % 128 / 32)));
}

/* Q2_K: for each d, blocks with every dmin of the table and four sets of the 16
 * scale/min bytes (distinct nibbles per position, all 15, all 0, single bits);
 * levels cycle so each sub-block holds every level:
 * dl = d * (sc & 15); ml = dmin * (sc >> 4); x = dl * q - ml. */
static void check_q2_k_blocks(q35_suite *s)
{
    enum { NSETS = 4, NB = N_SCALES * NSETS };
    q35_block_q2_K *b;
    float *want;
    if (!alloc_blocks(s, Q35_TYPE_Q2_K, NB, (void **)&b, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            const float dmin = q35_test_at_run_time(q35_test_scales[k % N_SCALES].value);
            const int set = k / N_SCALES;
            uint8_t L[Q35_QK_K];
            for (int sb = 0; sb < 16; sb++) {
                const int sc = set == 0 ? sb : set == 1 ? 15 : set == 2 ? 0 : 1 << (sb % 4);
                const int m = set == 0 ? (7 * sb + 3) % 16 : set == 1 ? 15 : set == 2 ? 0 : 8 >> (sb % 4);
                b[k].scales[sb] = (uint8_t)(sc | m << 4);
            }
            for (int e = 0; e < Q35_QK_K; e++)
                L[e] = (uint8_t)((e + e / 16 + k) % 4);
            b[k].d = q35_test_scales[i].bits;
            b[k].dmin = q35_test_scales[k % N_SCALES].bits;
            pack_2bit_levels(L, b[k].qs);
            for (int e = 0; e < Q35_QK_K; e++) {
                const uint8_t sc = b[k].scales[e / 16];
                want[k * Q35_QK_K + e] = want_k(d, dmin, sc & 15, sc >> 4, L[e]);
            }
        }
        char what[128];
        snprintf(what, sizeof what, "d = %s: %d blocks (every dmin, %d scale sets)", q35_test_scales[i].what, NB, NSETS);
        q35_test_check_blocks(s, Q35_TYPE_Q2_K, b, NB * Q35_QK_K, want, what);
    }
    free(b);
    free(want);

    /* d = 1, dmin = 0.5, scales[s] = s | (15 - s) << 4, qs all 0xE4 (level j in quarter
     * j of each half). Element 0: sub-block 0, 0*0 - 0.5*15 = -7.5; 40: sub-block 2,
     * level 1: 2 - 6.5 = -4.5; 100: sub-block 6, level 3: 18 - 4.5 = 13.5; 130:
     * sub-block 8, level 0: -3.5; 255: sub-block 15, level 3: 45 - 0 = 45. */
    q35_block_q2_K bw = {.d = 0x3c00, .dmin = 0x3800};
    for (int sb = 0; sb < 16; sb++)
        bw.scales[sb] = (uint8_t)(sb | (15 - sb) << 4);
    memset(bw.qs, 0xe4, sizeof bw.qs);
    const spot spots[] = {{0, -7.5f}, {40, -4.5f}, {100, 13.5f}, {130, -3.5f}, {255, 45.0f}, {16, -7.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q2_K, &bw, Q35_QK_K, spots, 6, "d = 1, dmin = 0.5");
}

/* Q3_K's 12 scale bytes from 16 scales of 6 bits, by the format's definition: the
 * low nibble of scale s in byte s % 8 (low nibble for s < 8, high for s >= 8), its
 * top two bits at bits 2 (s / 4) of byte 8 + s % 4. */
static void pack_q3_scales(const uint8_t sc[16], uint8_t out[Q35_K_SCALE_BYTES])
{
    memset(out, 0, Q35_K_SCALE_BYTES);
    for (int j = 0; j < 16; j++) {
        out[j % 8] |= (uint8_t)((sc[j] & 15) << (j < 8 ? 0 : 4));
        out[8 + j % 4] |= (uint8_t)((sc[j] >> 4) << (2 * (j / 4)));
    }
}

/* q35_q3_k_scale and q35_iq4_xs_scale against hand-unpacked examples, and every
 * 6-bit value at every position through the test's packers. */
static void check_q3_iq4_scales(q35_suite *s)
{
    /* low nibbles 1,3,5,7,9,B,D,F (s < 8) and 2,4,6,8,A,C,E,0 (s >= 8); bytes 8..11
     * = 0xE4 (top bits 0,1,2,3 for s = 0,4,8,12), 0x1B (3,2,1,0 for s = 1,5,9,13),
     * 0x00, 0xFF. */
    static const uint8_t q3[12] = {0x21, 0x43, 0x65, 0x87, 0xa9, 0xcb, 0xed, 0x0f, 0xe4, 0x1b, 0x00, 0xff};
    static const uint8_t q3_want[16] = {1, 51, 5, 55, 25, 43, 13, 63, 34, 20, 6, 56, 58, 12, 14, 48};
    int bad = 0;
    for (int j = 0; j < 16; j++)
        bad += q35_q3_k_scale(j, q3) != q3_want[j];
    uint8_t packed[12];
    pack_q3_scales(q3_want, packed);
    const bool pack_ok = memcmp(packed, q3, sizeof q3) == 0;
    /* IQ4_XS: scales_l nibbles 1..8, scales_h = 0x1BE4 (top bits 0,1,2,3,3,2,1,0). */
    static const uint8_t xl[4] = {0x21, 0x43, 0x65, 0x87};
    static const uint8_t xs_want[8] = {1, 18, 35, 52, 53, 38, 23, 8};
    int bad_xs = 0;
    for (int j = 0; j < 8; j++)
        bad_xs += q35_iq4_xs_scale(j, xl, 0x1be4) != xs_want[j];
    q35_case(s, bad == 0 && pack_ok && bad_xs == 0,
             "q35_q3_k_scale of a hand-unpacked example: %d of 16 wrong, the test's packer %s it; "
             "q35_iq4_xs_scale: %d of 8 wrong",
             bad, pack_ok ? "reproduces" : "DOES NOT reproduce", bad_xs);

    int bad_q3 = 0, bad_x = 0;
    for (int v = 0; v < 64; v++) {
        uint8_t sc[16], q[12], l[4] = {0};
        uint16_t h = 0;
        for (int j = 0; j < 16; j++)
            sc[j] = (uint8_t)((v + 13 * j) & 63);
        pack_q3_scales(sc, q);
        for (int j = 0; j < 16; j++)
            bad_q3 += q35_q3_k_scale(j, q) != sc[j];
        for (int j = 0; j < 8; j++) {
            l[j / 2] |= (uint8_t)((sc[j] & 15) << (4 * (j % 2)));
            h = (uint16_t)(h | (sc[j] >> 4) << (2 * j));
        }
        for (int j = 0; j < 8; j++)
            bad_x += q35_iq4_xs_scale(j, l, h) != sc[j];
    }
    q35_case(s, bad_q3 == 0 && bad_x == 0,
             "every 6-bit scale at every position: q35_q3_k_scale %d wrong, q35_iq4_xs_scale %d wrong", bad_q3, bad_x);
}

/* Q3_K: for each d, 64 blocks whose scales run through all 64 values at every
 * position, with the high-bit patterns none, all, each hmask bit (8 rows of 32
 * elements) alone and a scattered one; levels cycle: dl = d * (sc - 32);
 * x = dl * (low - (high ? 0 : 4)). */
static void check_q3_k_blocks(q35_suite *s)
{
    enum { NB = 64 };
    q35_block_q3_K *b;
    float *want;
    if (!alloc_blocks(s, Q35_TYPE_Q3_K, NB, (void **)&b, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            uint8_t sc[16], L[Q35_QK_K];
            for (int sb = 0; sb < 16; sb++)
                sc[sb] = (uint8_t)((k + 5 * sb) % 64);
            const int pat = k % 11; /* 0 none, 1 all, 2..9 row pat - 2, 10 scattered */
            memset(b[k].hmask, 0, sizeof b[k].hmask);
            for (int e = 0; e < Q35_QK_K; e++) {
                const int row = e / 32;
                const int high = pat == 0 ? 0 : pat == 1 ? 1 : pat < 10 ? row == pat - 2 : (e * 29 + 7) >> 3 & 1;
                b[k].hmask[e % 32] |= (uint8_t)(high << row);
                L[e] = (uint8_t)((e + e / 16 + k) % 4);
            }
            b[k].d = q35_test_scales[i].bits;
            pack_q3_scales(sc, b[k].scales);
            pack_2bit_levels(L, b[k].qs);
            for (int e = 0; e < Q35_QK_K; e++) {
                const int high = b[k].hmask[e % 32] >> (e / 32) & 1;
                const float dl = d * (float)(sc[e / 16] - 32);
                want[k * Q35_QK_K + e] = dl * (float)(L[e] - (high ? 0 : 4));
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every scale at every position, 11 hmask patterns, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_Q3_K, b, NB * Q35_QK_K, want, what);
    }
    free(b);
    free(want);

    /* d = 0.5, scale s = 32 + s - 8 (dl = 0.5 (s - 8)), qs all 0xE4 (level j in quarter
     * j), hmask clear but hmask[3] bit 2 (element 67). Element 0: dl -4, level 0 - 4
     * -> 16; 67: dl -2 (sub-block 4), level 2 -> -4; 68: level 2 - 4 -> 4; 255: dl
     * 3.5, level 3 - 4 -> -3.5; 136: dl +0 (sub-block 8), level -4 -> -0. */
    q35_block_q3_K bw = {.d = 0x3800};
    uint8_t sc[16];
    for (int sb = 0; sb < 16; sb++)
        sc[sb] = (uint8_t)(24 + sb);
    pack_q3_scales(sc, bw.scales);
    memset(bw.qs, 0xe4, sizeof bw.qs);
    bw.hmask[3] = 0x04;
    const spot spots[] = {{0, 16.0f}, {67, -4.0f}, {68, 4.0f}, {255, -3.5f}, {136, -0.0f}, {35, 9.0f}};
    q35_test_check_spots(s, Q35_TYPE_Q3_K, &bw, Q35_QK_K, spots, 6, "d = 0.5");
}

/* IQ4_XS: for each d, 64 blocks whose scales run through all 64 values at every
 * position, indices cycling through the table at every nibble (two orders):
 * dl = d * (ls - 32); x = dl * table[q]. */
static void check_iq4_xs_blocks(q35_suite *s)
{
    enum { NB = 64 };
    q35_block_iq4_xs *b;
    float *want;
    if (!alloc_blocks(s, Q35_TYPE_IQ4_XS, NB, (void **)&b, &want))
        return;
    for (int i = 0; i < N_SCALES; i++) {
        const float d = q35_test_at_run_time(q35_test_scales[i].value);
        for (int k = 0; k < NB; k++) {
            uint8_t ls[8];
            memset(b[k].scales_l, 0, sizeof b[k].scales_l);
            b[k].scales_h = 0;
            for (int sb = 0; sb < 8; sb++) {
                ls[sb] = (uint8_t)((k + 9 * sb) % 64);
                b[k].scales_l[sb / 2] |= (uint8_t)((ls[sb] & 15) << (4 * (sb % 2)));
                b[k].scales_h = (uint16_t)(b[k].scales_h | (ls[sb] >> 4) << (2 * sb));
            }
            b[k].d = q35_test_scales[i].bits;
            uint8_t q[Q35_QK_K];
            for (int e = 0; e < Q35_QK_K; e++)
                q[e] = (uint8_t)(k < NB / 2 ? (e + k) % 16 : (7 * e + k) % 16);
            /* sub-block s: element j < 16 in the low nibble of qs[16s + j], j + 16 the high */
            for (int sb = 0; sb < 8; sb++)
                for (int j = 0; j < 16; j++)
                    b[k].qs[16 * sb + j] = (uint8_t)(q[32 * sb + j] | q[32 * sb + 16 + j] << 4);
            for (int e = 0; e < Q35_QK_K; e++) {
                const float dl = d * (float)(ls[e / 32] - 32);
                want[k * Q35_QK_K + e] = dl * (float)k_iq4nl_table[q[e]];
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every scale at every position, every index, d = %s", q35_test_scales[i].what);
        q35_test_check_blocks(s, Q35_TYPE_IQ4_XS, b, NB * Q35_QK_K, want, what);
    }
    free(b);
    free(want);

    /* d = 0.25, the scales of check_q3_iq4_scales (ls - 32 = -31, -14, 3, 20, 21, 6,
     * -9, -24), qs all 0xF0 (first 16 of each sub-block index 0, last 16 index 15).
     * Element 0: -7.75 * -127 = 984.25; 16: -7.75 * 113 = -875.75; 64: 0.75 * -127 =
     * -95.25; 100: 5 * -127 = -635; 240: -6 * 113 = -678. */
    q35_block_iq4_xs bw = {.d = 0x3400, .scales_h = 0x1be4, .scales_l = {0x21, 0x43, 0x65, 0x87}};
    memset(bw.qs, 0xf0, sizeof bw.qs);
    const spot spots[] = {{0, 984.25f}, {16, -875.75f}, {64, -95.25f}, {100, -635.0f}, {240, -678.0f}, {47, 444.5f}};
    q35_test_check_spots(s, Q35_TYPE_IQ4_XS, &bw, Q35_QK_K, spots, 6, "d = 0.25");
}

void q35_test_check_hand_blocks(q35_suite *s)
{
    printf("-- 2. hand-built blocks, compared bitwise with ggml's arithmetic\n");
    check_scale_table(s);
    check_q8_0_blocks(s);
    check_q4_0_blocks(s);
    check_q5_0_blocks(s);
    check_k_scale_min(s);
    check_k_blocks(s, Q35_TYPE_Q4_K);
    check_k_blocks(s, Q35_TYPE_Q5_K);
    check_q6_k_blocks(s);
    check_offset_blocks(s, Q35_TYPE_Q4_1);
    check_offset_blocks(s, Q35_TYPE_Q5_1);
    check_iq4_nl_blocks(s);
    check_q2_k_blocks(s);
    check_q3_iq4_scales(s);
    check_q3_k_blocks(s);
    check_iq4_xs_blocks(s);
    q35_test_check_iq_blocks(s);
}
