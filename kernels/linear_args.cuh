/* The argument checks the projection launchers share (kernels/dequant.cu,
 * gemm.cu, gemm_lt.cu, gemv.cu): each refusal names the launcher, the value
 * and the limit. */
#ifndef Q35_KERNELS_LINEAR_ARGS_CUH
#define Q35_KERNELS_LINEAR_ARGS_CUH

#include "core/error.h"
#include "core/quant.h"

#include <stdint.h>

/* A weight of n rows (n_min <= n <= n_max) of k elements of `type`: a type this
 * project computes, k >= 1 a whole number of its blocks. */
static inline int q35_check_weight(const char *who, q35_type type, int64_t n, int64_t n_min, int64_t n_max, int64_t k,
                                   q35_error *err)
{
    if (!q35_type_computable(type)) {
        char names[256];
        return q35_fail(err, "%s: type %s is not one this project computes (%s)", who, q35_type_name(type),
                        q35_type_computable_names(names, sizeof names));
    }
    const q35_type_info *ti = q35_type_get(type);
    if (k < 1 || k > INT32_MAX)
        return q35_fail(err, "%s: k = %lld (want 1..%d)", who, (long long)k, INT32_MAX);
    if (q35_row_bytes(type, k) == 0)
        return q35_fail(err, "%s: k = %lld is not a whole number of %s blocks of %d elements", who, (long long)k,
                        ti->name, ti->block_elems);
    if (n < n_min || n > n_max)
        return q35_fail(err, "%s: n = %lld rows (want %lld..%lld)", who, (long long)n, (long long)n_min,
                        (long long)n_max);
    return 0;
}

/* T rows (0..t_max) of n outputs written at a stride of ldy >= n. */
static inline int q35_check_rows(const char *who, int64_t n, int64_t T, int64_t t_max, int64_t ldy, q35_error *err)
{
    if (T < 0 || T > t_max)
        return q35_fail(err, "%s: T = %lld (want 0..%lld)", who, (long long)T, (long long)t_max);
    if (ldy < n)
        return q35_fail(err, "%s: ldy = %lld is less than n = %lld", who, (long long)ldy, (long long)n);
    if (ldy > INT32_MAX)
        return q35_fail(err, "%s: ldy = %lld (want <= %d)", who, (long long)ldy, INT32_MAX);
    return 0;
}

/* The shapes the GEMMs take (kernels/gemm.cu's, kernels/gemm_lt.cu's): a
 * weight of n rows of k, T rows written at ldy, each within cuBLAS's int. */
static inline int q35_check_gemm(const char *who, q35_type type, int64_t n, int64_t k, int64_t T, int64_t ldy,
                                 q35_error *err)
{
    return q35_check_weight(who, type, n, 1, INT32_MAX, k, err) || q35_check_rows(who, n, T, INT32_MAX, ldy, err)
               ? -1
               : 0;
}

#endif /* Q35_KERNELS_LINEAR_ARGS_CUH */
