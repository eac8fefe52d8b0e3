/* Test helper: the parts of test_quant (parity/test_quant.c says what each
 * checks): the definitions they share and the entry point of each part that lives
 * in a file of its own. Part 1 is quant_half_cases.c, part 2 quant_blocks_cases.c,
 * part 3 quant_roundtrip_cases.c; parts 4 and 5 and main are test_quant.c. */
#ifndef Q35_QUANT_CASES_H
#define Q35_QUANT_CASES_H

#include "parity/lib/harness.h"

#include "core/quant.h"
#include "core/rng.h"

#include <stdbool.h>
#include <stdint.h>

#define Q35_TEST_SENTINEL_BYTES 64   /* checked after every quantized buffer */
#define Q35_TEST_SENTINEL_FLOATS 16  /* checked after every dequantized buffer */

/* The bits of f. */
uint32_t q35_test_bits_of(float f);

/* x read back through a volatile, so an expected value is computed at run time by
 * the same instructions as the code under test (a NaN folded at compile time may
 * carry another sign than the one the FPU produces for 0 * inf). */
float q35_test_at_run_time(float x);

/* The value of f16 bits by the definition, in double: (-1)^s 2^(e-15) 1.m, or
 * 2^-14 0.m when e == 0; e == 31 is infinity (m == 0) or NaN. */
double q35_test_f16_value(uint32_t h);

/* Part 1, half.h: f16 and bf16 widening of every pattern, narrowing back, ties,
 * hand-worked points and random floats against the definition. Draws from rng. */
void q35_test_check_half(q35_suite *s, q35_rng *rng);

/* Part 2: hand-built blocks of Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, Q2_K, Q3_K,
 * Q4_K, Q5_K, Q6_K and IQ4_XS (and part 2b's grid i-quants) dequantized and
 * compared bitwise with ggml's arithmetic, and a few literals. */
void q35_test_check_hand_blocks(q35_suite *s);

/* f16 scales by hand for part 2: the bits and the value they stand for (zero,
 * subnormals, 65504, infinities, NaN among them). */
typedef struct q35_test_f16_scale {
    uint16_t bits;
    float value;
    const char *what;
} q35_test_f16_scale;
#define Q35_TEST_N_SCALES 15
extern const q35_test_f16_scale q35_test_scales[Q35_TEST_N_SCALES];

/* Dequantizes n elements of `blocks` into a poisoned buffer and compares them
 * bitwise with want; the floats after the n must keep their poison. One case. */
void q35_test_check_blocks(q35_suite *s, q35_type type, const void *blocks, int64_t n, const float *want,
                           const char *what);

/* A few elements (of at most one 256-block) against literals worked out by hand. One case. */
typedef struct q35_test_spot {
    int index;
    float want;
} q35_test_spot;
void q35_test_check_spots(q35_suite *s, q35_type type, const void *blocks, int64_t n, const q35_test_spot *spots,
                          int n_spots, const char *what);

/* Part 2b (quant_iq_cases.c): the grid i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
 * IQ3_S, IQ1_S, IQ1_M: their tables against ggml's entries written out, blocks of
 * every byte pattern under every scale compared bitwise with the format's
 * definition, worked literals. Called by q35_test_check_hand_blocks. */
void q35_test_check_iq_blocks(q35_suite *s);

/* What the layout says of element e (0..255) of a grid i-quant block b whose
 * super-scale is d: its step (db, dl), shift (IQ1's delta, else 0), grid level and
 * sign (neg: IQ2, IQ3), read bit by bit as core/quant_blocks_iq.h describes. */
typedef struct q35_test_iq_elem {
    float step, shift;
    int level;
    bool neg;
} q35_test_iq_elem;
q35_test_iq_elem q35_test_iq_element(q35_type t, const uint8_t *b, int e, float d);

/* Part 3: quantize -> dequantize round trips of the 22 computable types on random
 * and adversarial data, each element within the bounds of its grid, the RMS error
 * under a measured limit; and zero-length calls. Draws from rng. */
void q35_test_check_roundtrips(q35_suite *s, q35_rng *rng);

/* Quantizes n values x twice, into qa and qb (q35_row_bytes + the sentinel each,
 * filled first with different bytes), and dequantizes qa into y (n + the
 * sentinel floats, poisoned first): *written when both came out equal, *tail_ok
 * when neither was written past its bytes, *ytail_ok when y was not past n. */
void q35_test_quant_pass(q35_type t, const float *x, int64_t n, uint8_t *qa, uint8_t *qb, float *y, bool *written,
                         bool *tail_ok, bool *ytail_ok);

/* Part 3b (quant_iq_roundtrip.c): round trips of the grid i-quants, each group of
 * 8 checked to be the grid's nearest point under its stored scale and signs (by
 * exhaustive search), its signs and scales the quantizer's rule, the RMS error
 * under a measured limit. Called by q35_test_check_roundtrips on its data. */
void q35_test_check_iq_roundtrips(q35_suite *s, const float *const *sets, const int64_t *lens, const char *const *names,
                                  int n_sets);

#endif /* Q35_QUANT_CASES_H */
