/* Test helper: the parts of test_quant (parity/test_quant.c says what each
 * checks): the definitions they share and the entry point of each part that lives
 * in a file of its own. Part 1 is quant_half_cases.c, part 2 quant_blocks_cases.c,
 * part 3 quant_roundtrip_cases.c; parts 4 and 5 and main are test_quant.c. */
#ifndef Q35_QUANT_CASES_H
#define Q35_QUANT_CASES_H

#include "parity/lib/harness.h"

#include "core/rng.h"

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
 * Q4_K, Q5_K, Q6_K and IQ4_XS dequantized and compared bitwise with ggml's
 * arithmetic, and a few literals. */
void q35_test_check_hand_blocks(q35_suite *s);

/* Part 3: quantize -> dequantize round trips of the 15 computable types on random
 * and adversarial data, each element within the bounds of its grid, the RMS error
 * under a measured limit; and zero-length calls. Draws from rng. */
void q35_test_check_roundtrips(q35_suite *s, q35_rng *rng);

#endif /* Q35_QUANT_CASES_H */
