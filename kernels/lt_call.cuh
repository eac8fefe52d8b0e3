/* The cuBLASLt pieces the GEMM contexts share (kernels/fp8.cu, kernels/gemm_lt.cu;
 * the preference also kernels/attention_f32.cu): a shape's descriptors,
 * destroyed together (q35_lt_call), made for the projection's product
 * (q35_lt_call_make, q35_lt_desc_set), a heuristic preference
 * (q35_lt_preference), and the heuristic's candidate algorithms
 * (q35_lt_candidates). */
#ifndef Q35_KERNELS_LT_CALL_CUH
#define Q35_KERNELS_LT_CALL_CUH

#include "kernels/blas.h"

#include <cublasLt.h>
#include <stdint.h>
#include <utility>

/* The cuBLASLt descriptors of one GEMM shape: the matmul (desc), A, B, and C =
 * D (the contexts compute in place: C and D one layout). */
struct q35_lt_call {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    q35_lt_call() = default;
    q35_lt_call(const q35_lt_call &) = delete;
    q35_lt_call &operator=(const q35_lt_call &) = delete;
    ~q35_lt_call() { reset(); }
    void reset()
    {
        if (d)
            cublasLtMatrixLayoutDestroy(d);
        if (b)
            cublasLtMatrixLayoutDestroy(b);
        if (a)
            cublasLtMatrixLayoutDestroy(a);
        if (desc)
            cublasLtMatmulDescDestroy(desc);
        desc = nullptr, a = b = d = nullptr;
    }
    void swap(q35_lt_call &o)
    {
        std::swap(desc, o.desc);
        std::swap(a, o.a);
        std::swap(b, o.b);
        std::swap(d, o.d);
    }
};

/* Attribute attr of c's matmul descriptor set to v. 0, or -1 with cuBLAS's
 * status and the attribute's number in err. */
template <typename V>
inline int q35_lt_desc_set(q35_lt_call *c, cublasLtMatmulDescAttributes_t attr, const V &v, q35_error *err)
{
    if (Q35_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(c->desc, attr, &v, sizeof v), err))
        return q35_fail_context(err, "cuBLASLt matmul descriptor attribute %d", (int)attr);
    return 0;
}

/* c = the descriptors of the projection's product, row-major Y [T][ldy] = X
 * W^T with W [n][k] and X [T][k] row-major: column-major, D (n x T, ldd = ldy)
 * = op_T(A: W as k x n, lda = k) * B (X as k x T, ldb = k), compute and scale
 * type f32; A of type ab, B of ab, D (= C) of type d. 0, or -1 with the failing
 * call in err (what c holds is destroyed with it). */
inline int q35_lt_call_make(q35_lt_call *c, cudaDataType_t ab, cudaDataType_t d, int n, int k, int T, int ldy,
                            q35_error *err)
{
    return Q35_CUBLAS_CHECK(cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, err) ||
                   Q35_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c->a, ab, k, n, k), err) ||
                   Q35_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c->b, ab, k, T, k), err) ||
                   Q35_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c->d, d, n, T, ldy), err)
               ? -1
               : 0;
}

/* A heuristic preference: at most `workspace` bytes of workspace, split K
 * (if at all) only by the reduction schemes in `reductions`
 * (cublasLtReductionScheme_t bits), implementations in `impl`
 * (cublasLtNumericalImplFlags_t bits; ~0: any) and, where align is given,
 * pointers to A, B, C and D aligned to only align[0..3] bytes (else cuBLASLt
 * assumes 256). 0 with *pref made (the caller destroys it), or -1 with the
 * failing call in err (nothing left made). */
inline int q35_lt_preference(cublasLtMatmulPreference_t *pref, size_t workspace, uint32_t reductions, uint64_t impl,
                             const uint32_t *align, q35_error *err)
{
    static const cublasLtMatmulPreferenceAttributes_t k_align[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    *pref = nullptr;
    if (Q35_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(pref), err))
        return -1;
    int rc = Q35_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                   &workspace, sizeof workspace),
                              err) ||
             Q35_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                                   &reductions, sizeof reductions),
                              err);
    if (rc == 0 && impl != ~(uint64_t)0)
        rc = Q35_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_IMPL_MASK, &impl,
                                                                   sizeof impl),
                              err);
    for (int i = 0; align && i < 4 && rc == 0; i++)
        rc = Q35_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(*pref, k_align[i], &align[i], sizeof align[i]), err);
    if (rc) {
        cublasLtMatmulPreferenceDestroy(*pref);
        *pref = nullptr;
        return -1;
    }
    return 0;
}

/* Up to `want` algorithms for c's product, the heuristic's best first, each
 * needing at most Q35_LT_WORKSPACE_BYTES of workspace and, where align is
 * given, pointers to A, B and C = D aligned to only align[0], align[1],
 * align[2] bytes (else cuBLASLt assumes 256), and splitting K (if at all)
 * only by the reduction schemes in `reductions` (cublasLtReductionScheme_t
 * bits; CUBLASLT_REDUCTION_SCHEME_MASK: any): *found of them into res. 0, or
 * -1 with the failing call in err (found 0 is not a failure here). */
inline int q35_lt_candidates(cublasLtHandle_t lt, const q35_lt_call &c, const uint32_t *align, uint32_t reductions,
                             int want, cublasLtMatmulHeuristicResult_t *res, int *found, q35_error *err)
{
    *found = 0;
    const uint32_t align4[4] = {align ? align[0] : 0, align ? align[1] : 0, align ? align[2] : 0,
                                align ? align[2] : 0}; /* C and D: one buffer */
    cublasLtMatmulPreference_t pref = nullptr;
    if (q35_lt_preference(&pref, Q35_LT_WORKSPACE_BYTES, reductions, ~(uint64_t)0, align ? align4 : nullptr, err))
        return -1;
    const int rc =
        Q35_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, c.desc, c.a, c.b, c.d, c.d, pref, want, res, found), err);
    cublasLtMatmulPreferenceDestroy(pref);
    return rc ? -1 : 0;
}

#endif /* Q35_KERNELS_LT_CALL_CUH */
