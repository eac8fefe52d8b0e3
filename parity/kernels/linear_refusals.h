/* test_kernels_linear's refusals (linear_refusals.c): the GEMM's and GEMV's
 * (gemm.h, gemv.h), cuBLASLt's (gemm_lt.h, hgemm_create's tune outside 0..2
 * among them), each by its message, writing nothing; T = 0 writing nothing. */
#ifndef Q35_LINEAR_REFUSALS_H
#define Q35_LINEAR_REFUSALS_H

#include "parity/lib/harness.h"

#include "kernels/blas.h"

void q35_linear_check_refusals(q35_suite *s, q35_blas blas);

#endif /* Q35_LINEAR_REFUSALS_H */
