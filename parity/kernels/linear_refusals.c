/* test_kernels_linear's refusals (linear_refusals.h). */
#include "linear_refusals.h"

#include "parity/lib/gpu.h"

#include "kernels/gemm.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One call of a gemm_lt.h form into d: 0 plain, 1 add, 2 f16 out. */
static int lt_call(q35_hgemm *h, int form, float *d, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16,
                   int64_t n, int64_t k, q35_error *err)
{
    if (form == 2)
        return q35_hgemm_rounded_f16(h, (uint16_t *)(void *)d, ldy, x16, T, w16, n, k, err);
    return q35_hgemm_rounded(h, d, ldy, x16, T, w16, n, k, form, err);
}

/* gemm_lt.h's refusals (gemm.h's checks, named "hgemm", "hgemm_add" and
 * "hgemm_f16"), each writing nothing; T = 0 writes nothing; no choice before
 * a call. d: 1 << 16 poisoned floats. */
static void check_lt_refusals(q35_suite *s, float *d)
{
    static const struct {
        int64_t ldy, T, n, k;
        int form; /* lt_call's */
        const char *want;
    } k_bad[] = {
        {60, 2, 64, 32, 0, "hgemm: ldy = 60 is less than n = 64"},
        {60, 2, 64, 32, 1, "hgemm_add: ldy = 60 is less than n = 64"},
        {(int64_t)INT32_MAX + 1, 2, 64, 32, 0, "hgemm: ldy = 2147483648 (want <= 2147483647)"},
        {64, -1, 64, 32, 0, "hgemm: T = -1 (want 0..2147483647)"},
        {64, (int64_t)INT32_MAX + 1, 64, 32, 1, "hgemm_add: T = 2147483648 (want 0..2147483647)"},
        {64, 2, 0, 32, 0, "hgemm: n = 0 rows (want 1..2147483647)"},
        {(int64_t)INT32_MAX + 2, 2, (int64_t)INT32_MAX + 1, 32, 0, "hgemm: n = 2147483648 rows (want 1..2147483647)"},
        {64, 2, 64, 0, 1, "hgemm_add: k = 0 (want 1..2147483647)"},
        {64, 2, 64, (int64_t)INT32_MAX + 1, 0, "hgemm: k = 2147483648 (want 1..2147483647)"},
        {60, 2, 64, 32, 2, "hgemm_f16: ldy = 60 is less than n = 64"},
        {(int64_t)INT32_MAX + 1, 2, 64, 32, 2, "hgemm_f16: ldy = 2147483648 (want <= 2147483647)"},
        {64, -1, 64, 32, 2, "hgemm_f16: T = -1 (want 0..2147483647)"},
        {64, 2, 0, 32, 2, "hgemm_f16: n = 0 rows (want 1..2147483647)"},
        {64, 2, 64, 0, 2, "hgemm_f16: k = 0 (want 1..2147483647)"},
    };
    q35_hgemm *h = NULL;
    q35_error err = {{0}};
    const int bad_tune = q35_hgemm_create(&h, NULL, 3, &err);
    q35_case(s, bad_tune == -1 && h == NULL && strstr(err.msg, "hgemm_create: tune = 3 (want 0, 1 burst or 2 steady)"),
             "hgemm_create refuses tune 3: %s", err.msg);
    memset(&err, 0, sizeof err);
    q35_gpu_ok(q35_hgemm_create(&h, NULL, 1, &err), &err);
    q35_hgemm_choice c;
    q35_case(s, q35_hgemm_last_choice(h, &c) == -1, "hgemm: no choice before a call");
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
        memset(&err, 0, sizeof err);
        const int rc = lt_call(h, k_bad[i].form, d, k_bad[i].ldy, (const uint16_t *)d, k_bad[i].T, (const uint16_t *)d,
                               k_bad[i].n, k_bad[i].k, &err);
        q35_case(s, rc == -1 && strstr(err.msg, k_bad[i].want), "hgemm refuses \"%s\": %s", k_bad[i].want, err.msg);
    }
    memset(&err, 0, sizeof err);
    int rc = 0;
    for (int form = 0; form < 3 && rc == 0; form++)
        rc = lt_call(h, form, d, 64, (const uint16_t *)(d + 4096), 0, (const uint16_t *)(d + 8192), 64, 32, &err);
    float *y = q35_gpu_to_host(d, 1 << 16);
    const int64_t written = q35_gpu_written(y, 1 << 16);
    q35_case(s, rc == 0 && written == 0 && q35_hgemm_last_choice(h, &c) == -1,
             "hgemm: the refusals and T = 0 (plain, add, f16) write nothing (%" PRId64 " written), make no choice",
             written);
    free(y);
    q35_hgemm_destroy(h);
}

void q35_linear_check_refusals(q35_suite *s, q35_blas blas)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1 << 16);
    int rc = q35_gemm_f32(blas, d, 64, d, 2, d, Q35_TYPE_TQ1_0, 64, 256, d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f32: type tq1_0 is not one this project computes"),
             "gemm_f32 refuses tq1_0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv(d, d, Q35_TYPE_TQ1_0, 64, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv: type tq1_0 is not one"), "gemv refuses tq1_0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_rows(d, 64, d, Q35_TYPE_Q4_K, 64, 100, d, 3, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_rows: k = 100 is not a whole number of q4_K blocks of 256"),
             "gemv_rows refuses a q4_K row of 100: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f32(blas, d, 64, d, 2, d, Q35_TYPE_Q8_0, 64, 40, d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f32: k = 40 is not a whole number of q8_0 blocks of 32"),
             "gemm_f32 refuses a q8_0 row of 40: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_rows(d, 60, d, Q35_TYPE_Q8_0, 64, 32, d, 3, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_rows: ldy = 60 is less than n = 64"), "gemv_rows refuses ldy < n: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f16(blas, d, 60, d, 2, (const uint16_t *)d, 64, 32, (uint16_t *)d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f16: ldy = 60 is less than n = 64"), "gemm_f16 refuses ldy < n: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f16(blas, d, 64, d, -1, (const uint16_t *)d, 64, 32, (uint16_t *)d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f16: T = -1"), "gemm_f16 refuses T = -1: %s", err.msg);
    check_lt_refusals(s, d);
    memset(&err, 0, sizeof err);
    rc = q35_gemv(d, d, Q35_TYPE_Q4_K, 600000, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv: n = 600000 rows (want 1..524280)"), "gemv refuses n = 600000: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    /* T = 0 writes nothing */
    rc = q35_gemm_f32(blas, d, 64, d, 0, d, Q35_TYPE_Q8_0, 64, 32, d + 4096, &err) ||
         q35_gemv_rows(d, 64, d + 4096, Q35_TYPE_Q8_0, 64, 32, d + 8192, 0, NULL, &err);
    float *h = q35_gpu_to_host(d, 64);
    const int64_t written = q35_gpu_written(h, 64);
    q35_case(s, rc == 0 && written == 0, "gemm_f32 and gemv_rows of T = 0 write nothing (%" PRId64 " written)",
             written);
    free(h);
    q35_gpu_free(d);
}
