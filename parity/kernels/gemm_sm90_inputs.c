/* Inputs of the gemm_sm90 suites (gemm_sm90_inputs.h). */
#include "gemm_sm90_inputs.h"
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "kernels/gemm_sm90.h"
#include "kernels/linear.h"

#include <cuda_runtime_api.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int q35_sm90_suite(q35_suite *s, const char *name, q35_rng *rng)
{
    const int skip = q35_gpu_suite(s, name, rng);
    if (skip)
        return skip;
    int dev = 0;
    q35_error why = {{0}};
    if (cudaGetDevice(&dev) != cudaSuccess) {
        printf("FAIL  cudaGetDevice\n");
        return 1;
    }
    if (!q35_gemm_sm90_built()) {
        printf("SKIP  built without the sm_90a code (Q35_SM90 off: CMAKE_CUDA_ARCHITECTURES has no 90)\n");
        return Q35_TEST_SKIP;
    }
    if (!q35_gemm_sm90_supported(dev, &why)) {
        printf("SKIP  gemm_sm90 does not run here: %s\n", why.msg);
        return Q35_TEST_SKIP;
    }
    return 0;
}

uint16_t *q35_sm90_halves(int64_t n)
{
    return q35_host_alloc((size_t)n * sizeof(uint16_t));
}

uint16_t *q35_sm90_random_rows(int64_t n, int64_t k, int64_t ld, double scale, q35_rng *r)
{
    uint16_t *h = q35_sm90_halves(n * ld);
    for (int64_t row = 0; row < n; row++)
        for (int64_t i = 0; i < ld; i++)
            h[row * ld + i] = i < k ? q35_f32_to_f16((float)q35_rng_range(r, -scale, scale)) : Q35_F16_NAN_IN;
    return h;
}

uint16_t *q35_sm90_device_halves(const uint16_t *h, int64_t n)
{
    uint16_t *d = q35_gpu_bytes((size_t)n * sizeof *d);
    q35_gpu_upload(d, h, (size_t)n * sizeof *d);
    return d;
}

void q35_sm90_weight_free(q35_sm90_weight *w)
{
    free(w->host);
    if (w->dev)
        q35_gpu_free(w->dev);
    *w = (q35_sm90_weight){0};
}

void q35_sm90_weight_for(q35_sm90_weight *w, int64_t rows, int64_t K, int64_t ldw, q35_rng *r)
{
    if (w->host && w->rows == rows && w->K == K && w->ldw == ldw)
        return;
    q35_sm90_weight_free(w);
    *w = (q35_sm90_weight){.rows = rows, .K = K, .ldw = ldw};
    w->host = q35_sm90_random_rows(rows, K, ldw, 2.0 / sqrt((double)K), r);
    w->dev = q35_sm90_device_halves(w->host, rows * ldw);
}

double *q35_sm90_reference(const uint16_t *x, int64_t T, int64_t ldx, const q35_sm90_weight *w, const int64_t *which,
                           int64_t m)
{
    const int64_t K = w->K;
    uint16_t *sub = q35_sm90_halves(m * K);
    double *xd = q35_host_alloc((size_t)(T * K) * sizeof *xd), *ref = q35_host_alloc((size_t)(T * m) * sizeof *ref);
    for (int64_t j = 0; j < m; j++)
        memcpy(sub + j * K, w->host + which[j] * w->ldw, (size_t)K * sizeof *sub);
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < K; i++)
            xd[t * K + i] = q35_f16_to_f32(x[t * ldx + i]);
    if (q35_ref_linear(ref, xd, Q35_TYPE_F16, sub, m, K, T)) {
        printf("FAIL  out of memory in q35_ref_linear (%" PRId64 " x %" PRId64 ", T %" PRId64 ")\n", m, K, T);
        exit(1);
    }
    free(sub), free(xd);
    return ref;
}

void q35_sm90_case_unwritten(q35_suite *s, const char *what, int rc, const q35_error *err, const float *d, int64_t n)
{
    float *h = q35_gpu_to_host(d, n);
    const int64_t written = q35_gpu_written(h, n);
    q35_case(s, rc == 0 && written == 0, "%s write nothing: status %d (%s), %" PRId64 " floats written", what, rc,
             err->msg, written);
    free(h);
}

void q35_sm90_against_first(q35_suite *s, const char *name, float *h, float **first, int64_t n)
{
    if (!*first) {
        *first = h;
        return;
    }
    char bits[160];
    const q35_bitcmp b = q35_bitwise_f32(h, *first, n);
    q35_case(s, b.equal, "%s: against %s (the same products in the same order), %s", name,
             q35_gemm_sm90_variant_name(0), q35_bitcmp_str(&b, bits, sizeof bits));
    free(h);
}
