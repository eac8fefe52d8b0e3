/* The CPU quant codecs (core/half.h, core/quant*.c), in five parts:
 *
 *   1. half.h: f16 and bf16 widening of all 65536 bit patterns against an ldexp
 *      reference; narrowing of every value back to its bits; round to nearest even
 *      at every half-way point between adjacent values (and one f32 ulp either
 *      side); overflow, the subnormal range and NaN; random floats against a
 *      nearest-value search.
 *   2. Hand-built blocks of Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K,
 *      Q5_K, Q6_K, IQ4_XS (and the grid i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
 *      IQ3_S, IQ1_S, IQ1_M: every low index byte, random signs and scales, their
 *      tables against ggml's entries): every level, every scale position (and offset, fifth
 *      and high bit, table entry), f16 scales from zero and subnormal to 65504, infinity and
 *      NaN. Expected values are computed here from the format's definition by the
 *      float operations of ggml's formula in its order (quant_kquants.c states it),
 *      and compared bitwise; a few are also written out as literals.
 *   3. Quantize -> dequantize round trips of all 22 computable types on random and
 *      adversarial data: the bytes written (exactly q35_row_bytes, every one of
 *      them), the floats written (exactly n), per element the bounds derived from
 *      the format and this project's quantizer (see `grid`: the nearest level, a
 *      grid that covers the data, no coarser a step than the scale choice allows;
 *      the grid i-quants per group of 8: the grid's nearest point under the stored
 *      scale and signs by exhaustive search, quant_iq_roundtrip.c), and the RMS
 *      error on N(0,1) data under a measured per-format limit.
 *   4. The quantized golden files (data/golden/tiny-r2/quant): every tensor
 *      dequantized and hashed (FNV-1a 64 of its float32 bytes) against the hash of
 *      ggml's own dequantizer.
 *   5. The type table: ids, names, block sizes, row bytes, parsing.
 *
 * Parts 1, 2 and 3 are quant_half_cases.c, quant_blocks_cases.c and
 * quant_roundtrip_cases.c (entry points and shared definitions in quant_cases.h);
 * part 4 is quant_golden.c (test_kernels_dequant runs it on the GPU's dequantizer
 * too); part 5 and main are here. */
#include "parity/lib/harness.h"

#include "quant_cases.h"
#include "quant_golden.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/rng.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 4. the quantized golden files (quant_golden.c) ----------------------------- */

static int cpu_dequant(void *ctx, q35_type type, const void *data, int64_t rows, int64_t cols, float *y,
                       q35_error *err)
{
    (void)ctx, (void)err;
    q35_dequantize(type, data, y, rows * cols);
    return 0;
}

static void check_golden(q35_suite *s)
{
    printf("-- 4. the quantized golden files against ggml's dequantized hashes\n");
    for (int i = 0; i < Q35_GOLDEN_VARIANTS; i++)
        q35_check_golden_quant_file(s, "CPU", q35_golden_variants[i], cpu_dequant, NULL);
}

/* ---- 5. the type table ----------------------------------------------------------- */

/* The 22 computable types: ggml's id, name and block (ggml_type_traits), and the
 * size of this project's block struct. */
static const struct {
    uint32_t id;
    const char *name;
    int block_elems, block_bytes;
    size_t struct_bytes;
} k_computable[] = {
    {0, "f32", 1, 4, sizeof(float)},
    {1, "f16", 1, 2, sizeof(uint16_t)},
    {30, "bf16", 1, 2, sizeof(uint16_t)},
    {8, "q8_0", 32, 34, sizeof(q35_block_q8_0)},
    {2, "q4_0", 32, 18, sizeof(q35_block_q4_0)},
    {6, "q5_0", 32, 22, sizeof(q35_block_q5_0)},
    {12, "q4_K", 256, 144, sizeof(q35_block_q4_K)},
    {13, "q5_K", 256, 176, sizeof(q35_block_q5_K)},
    {14, "q6_K", 256, 210, sizeof(q35_block_q6_K)},
    {3, "q4_1", 32, 20, sizeof(q35_block_q4_1)},
    {7, "q5_1", 32, 24, sizeof(q35_block_q5_1)},
    {10, "q2_K", 256, 84, sizeof(q35_block_q2_K)},
    {11, "q3_K", 256, 110, sizeof(q35_block_q3_K)},
    {20, "iq4_nl", 32, 18, sizeof(q35_block_iq4_nl)},
    {23, "iq4_xs", 256, 136, sizeof(q35_block_iq4_xs)},
    {16, "iq2_xxs", 256, 66, sizeof(q35_block_iq2_xxs)},
    {17, "iq2_xs", 256, 74, sizeof(q35_block_iq2_xs)},
    {22, "iq2_s", 256, 82, sizeof(q35_block_iq2_s)},
    {18, "iq3_xxs", 256, 98, sizeof(q35_block_iq3_xxs)},
    {21, "iq3_s", 256, 110, sizeof(q35_block_iq3_s)},
    {19, "iq1_s", 256, 50, sizeof(q35_block_iq1_s)},
    {29, "iq1_m", 256, 56, sizeof(q35_block_iq1_m)},
};

static void check_type_table(q35_suite *s)
{
    printf("-- 5. the type table\n");
    for (size_t i = 0; i < sizeof k_computable / sizeof k_computable[0]; i++) {
        const uint32_t id = k_computable[i].id;
        const int be = k_computable[i].block_elems, bb = k_computable[i].block_bytes;
        const q35_type_info *t = q35_type_get(id);
        char upper[16] = "";
        for (size_t c = 0; k_computable[i].name[c] && c + 1 < sizeof upper; c++)
            upper[c] = (char)(k_computable[i].name[c] >= 'a' && k_computable[i].name[c] <= 'z'
                                  ? k_computable[i].name[c] - 32 : k_computable[i].name[c]);
        q35_type parsed = Q35_TYPE_COUNT, parsed_upper = Q35_TYPE_COUNT;
        const bool parse_ok = q35_type_parse(k_computable[i].name, &parsed) == 0 && (uint32_t)parsed == id &&
                              q35_type_parse(upper, &parsed_upper) == 0 && (uint32_t)parsed_upper == id;
        const bool ok = t && strcmp(t->name, k_computable[i].name) == 0 && t->block_elems == be &&
                        t->block_bytes == bb && t->computable && q35_type_computable(id) &&
                        (size_t)bb == k_computable[i].struct_bytes &&
                        strcmp(q35_type_name(id), k_computable[i].name) == 0 && parse_ok &&
                        q35_row_bytes(id, 0) == 0 && q35_row_bytes(id, 7 * be) == (size_t)(7 * bb) &&
                        q35_row_bytes(id, 4096) == (size_t)(4096 / be * bb) &&
                        q35_row_bytes(id, -be) == 0 && (be == 1 || q35_row_bytes(id, 7 * be + 1) == 0) &&
                        (be == 1 || q35_row_bytes(id, be - 1) == 0);
        q35_case(s, ok,
                 "type %2" PRIu32 " %-7s: %3d elements / %3d bytes a block (struct %zu), computable, parses "
                 "(\"%s\", \"%s\"), row bytes of 0, 7 blocks, 4096, -1 block%s",
                 id, k_computable[i].name, be, bb, k_computable[i].struct_bytes, k_computable[i].name, upper,
                 be == 1 ? "" : ", non-multiples (0)");
    }

    /* Known to ggml but not computed here: sized, named, not computable. */
    static const struct {
        uint32_t id;
        const char *name;
        int block_elems, block_bytes;
    } known[] = {{9, "q8_1", 32, 36}, {34, "tq1_0", 256, 54}, {15, "q8_K", 256, 292}, {35, "tq2_0", 256, 66},
                 {24, "i8", 1, 1},    {28, "f64", 1, 8},        {39, "mxfp4", 32, 17}};
    int bad_known = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const q35_type_info *t = q35_type_get(known[i].id);
        bad_known += !t || strcmp(t->name, known[i].name) != 0 || t->block_elems != known[i].block_elems ||
                     t->block_bytes != known[i].block_bytes || t->computable || q35_type_computable(known[i].id) ||
                     q35_row_bytes(known[i].id, 2 * known[i].block_elems) != (size_t)(2 * known[i].block_bytes);
    }
    q35_case(s, bad_known == 0, "7 known non-computable types (q8_1 .. mxfp4): sized and named, not computable: %d wrong",
             bad_known);

    int n_computable = 0;
    for (uint32_t id = 0; id < Q35_TYPE_COUNT; id++)
        n_computable += q35_type_computable(id);
    q35_case(s, n_computable == 22, "exactly 22 computable ids below Q35_TYPE_COUNT: %d", n_computable);

    /* Ids ggml leaves unused (4, 5: removed q4_2/q4_3; 31-33, 36-38) and ids past the table. */
    static const uint32_t unknown[] = {4, 5, 31, 32, 33, 36, 37, 38, 40, 41, 255, 0x80000000u, UINT32_MAX};
    int bad_unknown = 0;
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        bad_unknown += q35_type_get(unknown[i]) != NULL || strcmp(q35_type_name(unknown[i]), "unknown") != 0 ||
                       q35_type_computable(unknown[i]) || q35_row_bytes(unknown[i], 256) != 0;
    q35_case(s, bad_unknown == 0,
             "13 unknown ids (4, 5, 31-33, 36-38, 40, 41, 255, 2^31, 2^32-1): NULL, \"unknown\", not computable, 0 "
             "row bytes: %d wrong",
             bad_unknown);

    static const char *const bad_names[] = {"q9_9", "", "q4_k_m", "f32 ", "q4", "Q4_K_M", "float"};
    int bad_parse = 0;
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        q35_type out = Q35_TYPE_COUNT;
        bad_parse += q35_type_parse(bad_names[i], &out) != -1 || out != Q35_TYPE_COUNT;
    }
    q35_case(s, bad_parse == 0, "7 names that are no type (\"q9_9\", \"\", \"q4_k_m\", ...) fail to parse, output untouched: %d wrong",
             bad_parse);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "quant: CPU codecs (core/half.h, core/quant*.c)", seed);
    q35_rng rng;
    q35_rng_seed(&rng, seed);
    q35_test_check_half(&s, &rng);
    q35_test_check_hand_blocks(&s);
    q35_test_check_roundtrips(&s, &rng);
    check_golden(&s);
    check_type_table(&s);
    return q35_suite_end(&s);
}
