/* Inputs of the gemm_sm90 suites (test_kernels_gemm_sm90: the [gate | up]
 * forms; test_kernels_gemm_sm90_plain: the plain product): f16 operand rows
 * made on the host, ~ U(-scale, scale) with every row's padding (columns k ..
 * ld-1) an f16 NaN so a read of it shows; their device copies; the float64
 * product of a subset of the weight's rows; the harness's f32 poison. Out of
 * host memory: FAIL printed, exit 1. */
#ifndef Q35_PARITY_GEMM_SM90_INPUTS_H
#define Q35_PARITY_GEMM_SM90_INPUTS_H

#include "parity/lib/harness.h"

#include "core/error.h"

#include <stdbool.h>
#include <stdint.h>

#define Q35_F16_NAN_IN 0x7e01         /* the operands' padding */
#define Q35_LIMIT_F16_ACC 1e-4        /* the f16 product against float64 of its f16 operands (kernels/gemm.h) */
#define Q35_SM90_CHECKED_COLUMNS 256  /* output columns the float64 reference covers past this many */

/* Starts a gemm_sm90 suite (q35_gpu_suite: the device, the seed into *rng,
 * the header `name`): 0, or Q35_TEST_SKIP (printed why) without a device, in
 * a build without the sm_90a code, and where the kernels do not run (not
 * compute capability 9.0); 1 when cudaGetDevice fails. */
int q35_sm90_suite(q35_suite *s, const char *name, q35_rng *rng);

/* n halves of host memory, malloc'd. */
uint16_t *q35_sm90_halves(int64_t n);

/* rows [n][ld] of f16 bits ~ U(-scale, scale), columns k..ld-1 Q35_F16_NAN_IN. */
uint16_t *q35_sm90_random_rows(int64_t n, int64_t k, int64_t ld, double scale, q35_rng *r);

/* n halves of device memory holding h. */
uint16_t *q35_sm90_device_halves(const uint16_t *h, int64_t n);

/* An f16 weight [rows][ldw] (K used), on the host and the device, kept
 * across the cases of one (rows, K, ldw). */
typedef struct q35_sm90_weight {
    int64_t rows, K, ldw;
    uint16_t *host, *dev; /* [rows][ldw] f16 bits ~ U(-1, 1) * 2 / sqrt(K); padding NaN */
} q35_sm90_weight;

/* w made anew when (rows, K, ldw) is not the one it holds. */
void q35_sm90_weight_for(q35_sm90_weight *w, int64_t rows, int64_t K, int64_t ldw, q35_rng *r);
void q35_sm90_weight_free(q35_sm90_weight *w);

/* ref [T][m] = float64 x w^T at the weight rows which[0..m) (x [T][ldx],
 * K used): the product of the f16 operands, exactly widened (q35_ref_linear),
 * malloc'd. */
double *q35_sm90_reference(const uint16_t *x, int64_t T, int64_t ldx, const q35_sm90_weight *w, const int64_t *which,
                           int64_t m);

/* Every variant's f32 output (h, n floats, malloc'd: taken) against the
 * first variant's (*first: h when NULL, else freed here): bitwise (memcmp,
 * the whole buffer: the same products in the same order), a case line
 * `name`. The caller frees *first at the end. */
void q35_sm90_against_first(q35_suite *s, const char *name, float *h, float **first, int64_t n);

/* The refusals' and T = 0's case line (`what` write nothing): T = 0's
 * status rc 0 (err: its message) and every one of the n floats at d
 * (q35_gpu_floats) still poisoned. */
void q35_sm90_case_unwritten(q35_suite *s, const char *what, int rc, const q35_error *err, const float *d, int64_t n);

#endif /* Q35_PARITY_GEMM_SM90_INPUTS_H */
