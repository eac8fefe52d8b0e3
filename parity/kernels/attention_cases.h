/* The parts of the attention suite (test_kernels_attention.c) kept in their own
 * files: the KV append and the refusals (attention_edges.c). */
#ifndef Q35_PARITY_ATTENTION_CASES_H
#define Q35_PARITY_ATTENTION_CASES_H

#include "kernels/blas.h"
#include "parity/lib/harness.h"

/* The KV append, f32 and f16: rows form and per-token appends into a cache,
 * bitwise the expected cache (the copy; the CPU's rounding to f16, the
 * rounding's edges included; every row outside pos..pos+T-1 untouched); a
 * strided cache; T = 0; the refusals. */
void att_check_kv_append(q35_suite *s, q35_rng *r);

/* Every refusal of the attention launchers, each with its message. major is
 * the device's compute capability major. */
void att_check_refusals(q35_suite *s, q35_blas blas, int major);

#endif /* Q35_PARITY_ATTENTION_CASES_H */
