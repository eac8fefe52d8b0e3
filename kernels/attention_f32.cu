/* The f32 prefill attention (kernels/attention_f32.h): per KV group g, per pass of
 * query rows r0 .. r0+P-1 of the chunk,
 *
 *     S = scale * Q_h K_g^T      cuBLASLt, batched over the group's hpk heads,
 *                                S[h][r][p] for every p < n_ctx_max = pos0 + T
 *     causal softmax             row r keeps p <= pos0 + r0 + r, writes exact 0
 *                                beyond (up to n_ctx_max)
 *     O_h = S V_g                cuBLASLt, batched the same way, straight into o
 *
 * all in f32 with f32 accumulation: compute type CUBLAS_COMPUTE_32F_PEDANTIC and
 * a numerical-implementation mask without tensor ops (no TF32, no emulation).
 *
 * Why the result does not depend on the pass size, bit for bit:
 *  - Every GEMM shape except the pass's row count is the same in every pass and
 *    for every pass size: QK^T has m = n_ctx_max (all positions, the masked
 *    ones included) and k = head_dim; PV has m = head_dim and k = n_ctx_max (the
 *    masked probabilities are exact zeros, so a row's sum runs over the same k
 *    whatever pass it sits in). Only n (the pass's rows) and the B/D offsets
 *    change, and every offset keeps the alignment of the one-pass call.
 *  - cuBLAS picks kernels by shape, so n alone could change the kernel, its tile
 *    and its split-K. The algorithm is therefore chosen once per call, from the
 *    heuristic for the whole chunk (n = T, independent of the pass size), with
 *    split-K excluded (reduction scheme NONE, split count forced to 1), checked
 *    valid for n = 1 and n = T, and that one algorithm runs every pass.
 *  - Without split-K a kernel computes each output element inside one CTA, its
 *    k loop in a fixed order set by the kernel's configuration (k tile, warp
 *    layout) alone; tiles at the matrix edge take the same loop with predicated
 *    loads. So element (i, j) is the same sequence of FMAs for any m, n and for
 *    any position of its row in the pass.
 *  - The softmax reduces each row in an order set by the row's length alone.
 * What this does not cover: a "stream-K" kernel that splits k across CTAs by
 * the grid's size would break it; cuBLASLt's FP32 FMA kernels are data-parallel
 * tiles, and the GPU suite checks the claim (>= 10 passes, memcmp). */
#include "kernels/attention_f32.h"

#include "kernels/lt_call.cuh"
#include "kernels/reduce.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SOFTMAX_THREADS 256
#define SCORES_LD_ALIGN 32 /* floats: each scores row starts on 128 bytes */
#define HEURISTIC_RESULTS 8

/* Floats between consecutive scores rows. */
static int64_t scores_ld(int64_t n_ctx_max)
{
    return (n_ctx_max + SCORES_LD_ALIGN - 1) / SCORES_LD_ALIGN * SCORES_LD_ALIGN;
}

int64_t q35_attention_f32_pass_rows(q35_attn_shape s, int64_t T, int64_t n_ctx_max, size_t budget_bytes)
{
    if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0 || T < 1 || n_ctx_max < 1)
        return 1;
    const int64_t per_row = (int64_t)sizeof(float) * (s.heads / s.kv_heads) * scores_ld(n_ctx_max);
    const int64_t rows = (int64_t)(budget_bytes / (size_t)per_row);
    return rows < 1 ? 1 : rows > T ? T : rows;
}

size_t q35_attention_f32_scores_bytes(q35_attn_shape s, int64_t pass_rows, int64_t n_ctx_max)
{
    if (s.heads < 1 || s.kv_heads < 1 || pass_rows < 1 || n_ctx_max < 1)
        return 0;
    return sizeof(float) * (size_t)(s.heads / s.kv_heads) * (size_t)pass_rows * (size_t)scores_ld(n_ctx_max);
}

/* The causal softmax of one scores row: block (i, h) takes row i of head h of the
 * pass, which sees n = n_first + i positions; writes exp(s - max) / sum over
 * them and exact zeros over n..width-1. Thread x visits x, x + THREADS, ... in
 * every loop: the order depends on n alone. */
__global__ void __launch_bounds__(SOFTMAX_THREADS)
    q35_causal_softmax_kernel(float *scores, int64_t ld, int64_t pass_rows, int64_t n_first, int64_t width)
{
    const int64_t i = blockIdx.x;
    float *row = scores + ((int64_t)blockIdx.y * pass_rows + i) * ld;
    const int64_t n = n_first + i;
    float m = -INFINITY;
    for (int64_t p = threadIdx.x; p < n; p += SOFTMAX_THREADS)
        m = fmaxf(m, row[p]);
    m = q35_block_max<SOFTMAX_THREADS>(m);
    float sum = 0.0f;
    for (int64_t p = threadIdx.x; p < n; p += SOFTMAX_THREADS)
        sum += expf(row[p] - m);
    const float inv = 1.0f / q35_block_sum<SOFTMAX_THREADS>(sum);
    for (int64_t p = threadIdx.x; p < n; p += SOFTMAX_THREADS)
        row[p] = expf(row[p] - m) * inv;
    for (int64_t p = n + threadIdx.x; p < width; p += SOFTMAX_THREADS)
        row[p] = 0.0f;
}

/* The descriptors of one GEMM and its chosen algorithm. */
typedef struct f32_gemm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a;      /* the cache: the same in every pass */
    cublasLtMatmulAlgo_t algo;
    int compute;                   /* the cublasComputeType_t it runs in */
} f32_gemm;

/* The B and D layouts of one GEMM for n = rows. */
typedef struct f32_bd {
    cublasLtMatrixLayout_t b, d;
} f32_bd;

static void bd_destroy(f32_bd *l)
{
    if (l->b)
        cublasLtMatrixLayoutDestroy(l->b);
    if (l->d)
        cublasLtMatrixLayoutDestroy(l->d);
    l->b = l->d = nullptr;
}

/* A column-major rows x cols layout with leading dimension ld, `batch` matrices
 * `stride` floats apart. */
static int layout(cublasLtMatrixLayout_t *out, int64_t rows, int64_t cols, int64_t ld, int batch, int64_t stride,
                  q35_error *err)
{
    *out = nullptr;
    if (Q35_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(out, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld), err))
        return -1;
    if (Q35_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                          sizeof batch),
                         err) ||
        Q35_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                          sizeof stride),
                         err)) {
        cublasLtMatrixLayoutDestroy(*out);
        *out = nullptr;
        return -1;
    }
    return 0;
}

/* The shapes of the two GEMMs of one KV group, for a pass of `rows` query rows. */
typedef struct f32_plan {
    int hd, hpk;
    int64_t n_ctx, ld;             /* n_ctx_max, scores row stride */
    int64_t q_stride, o_stride, kv_stride;
    uint32_t align;                /* bytes every pointer, stride and offset keeps */
} f32_plan;

/* QK^T: D (n_ctx x rows, ld) = A^T B, A the cache (hd x n_ctx, kv_stride), B
 * the queries (hd x rows, q_stride, heads hd apart). */
static int qk_bd(f32_bd *l, const f32_plan *p, int64_t rows, q35_error *err)
{
    l->b = l->d = nullptr;
    if (layout(&l->b, p->hd, rows, p->q_stride, p->hpk, p->hd, err) ||
        layout(&l->d, p->n_ctx, rows, p->ld, p->hpk, rows * p->ld, err)) {
        bd_destroy(l);
        return -1;
    }
    return 0;
}

/* PV: D (hd x rows, o_stride, heads hd apart) = A B, A the cache (hd x n_ctx,
 * kv_stride), B the probabilities (n_ctx x rows, ld). */
static int pv_bd(f32_bd *l, const f32_plan *p, int64_t rows, q35_error *err)
{
    l->b = l->d = nullptr;
    if (layout(&l->b, p->n_ctx, rows, p->ld, p->hpk, rows * p->ld, err) ||
        layout(&l->d, p->hd, rows, p->o_stride, p->hpk, p->hd, err)) {
        bd_destroy(l);
        return -1;
    }
    return 0;
}

static void gemm_destroy(f32_gemm *g)
{
    if (g->a)
        cublasLtMatrixLayoutDestroy(g->a);
    if (g->desc)
        cublasLtMatmulDescDestroy(g->desc);
    g->a = nullptr;
    g->desc = nullptr;
}

/* Creates the GEMM's descriptor in `compute` and asks the heuristic for the
 * problem at n = T (big) with split-K excluded; keeps the first algorithm that
 * is valid at n = T and at n = 1 (small) with its split count forced to 1.
 * 1 when one was found, 0 when none, -1 on a cuBLAS failure. */
static int choose(cublasLtHandle_t lt, f32_gemm *g, cublasComputeType_t compute, cublasOperation_t ta,
                  const f32_bd *big, const f32_bd *small, uint32_t align, q35_error *err)
{
    const cublasOperation_t tb = CUBLAS_OP_N;
    if (g->desc)
        cublasLtMatmulDescDestroy(g->desc);
    g->desc = nullptr;
    if (cublasLtMatmulDescCreate(&g->desc, compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) {
        g->desc = nullptr;
        return 0; /* this compute type: none; the caller may try another */
    }
    if (Q35_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), err) ||
        Q35_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), err))
        return -1;
    /* no split K, no tensor ops, no workspace; every pointer at `align` */
    const uint32_t aligns[4] = {align, align, align, align};
    cublasLtMatmulPreference_t pref = nullptr;
    if (q35_lt_preference(&pref, 0, CUBLASLT_REDUCTION_SCHEME_NONE,
                          ~(uint64_t)CUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK, aligns, err))
        return -1;
    cublasLtMatmulHeuristicResult_t res[HEURISTIC_RESULTS];
    int found = 0, chosen = 0, rc = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, g->desc, g->a, big->b, big->d, big->d, pref,
                                                             HEURISTIC_RESULTS, res, &found);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED)
        found = 0; /* this compute type: none; the caller may try another */
    else if (Q35_CUBLAS_CHECK(st, err))
        rc = -1;
    cublasLtMatmulPreferenceDestroy(pref);
    if (rc)
        return -1;
    for (int i = 0; i < found && !chosen; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        cublasLtMatmulAlgo_t algo = res[i].algo;
        const int32_t one = 1;
        const uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
        cublasLtMatmulHeuristicResult_t chk;
        if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof one) !=
                CUBLAS_STATUS_SUCCESS ||
            cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &none, sizeof none) !=
                CUBLAS_STATUS_SUCCESS)
            continue;
        if (cublasLtMatmulAlgoCheck(lt, g->desc, g->a, big->b, big->d, big->d, &algo, &chk) != CUBLAS_STATUS_SUCCESS ||
            chk.workspaceSize != 0 ||
            cublasLtMatmulAlgoCheck(lt, g->desc, g->a, small->b, small->d, small->d, &algo, &chk) !=
                CUBLAS_STATUS_SUCCESS ||
            chk.workspaceSize != 0)
            continue;
        g->algo = algo;
        g->compute = (int)compute;
        chosen = 1;
    }
    return chosen;
}

/* Chooses the GEMM's algorithm: in CUBLAS_COMPUTE_32F_PEDANTIC, else (where
 * cuBLASLt offers none there) in CUBLAS_COMPUTE_32F, both without tensor ops.
 * The choice depends on the chunk (T, n_ctx_max, strides, alignment), never on
 * the pass size. */
static int choose_algo(cublasLtHandle_t lt, f32_gemm *g, cublasOperation_t ta, const f32_plan *p, int64_t T,
                       int (*bd)(f32_bd *, const f32_plan *, int64_t, q35_error *), const char *what, q35_error *err)
{
    f32_bd big = {nullptr, nullptr}, small = {nullptr, nullptr};
    int rc = bd(&big, p, T, err) || bd(&small, p, 1, err) ? -1 : 0;
    if (rc == 0) {
        rc = choose(lt, g, CUBLAS_COMPUTE_32F_PEDANTIC, ta, &big, &small, p->align, err);
        if (rc == 0)
            rc = choose(lt, g, CUBLAS_COMPUTE_32F, ta, &big, &small, p->align, err);
        if (rc == 0)
            rc = q35_fail(err, "attention_prefill_f32: cuBLASLt offers no FP32 (FMA, no split-K) algorithm for %s "
                               "(head_dim %d, %d heads per group, n_ctx %lld, T %lld, alignment %u bytes)",
                          what, p->hd, p->hpk, (long long)p->n_ctx, (long long)T, p->align);
        else if (rc == 1)
            rc = 0;
    }
    bd_destroy(&big);
    bd_destroy(&small);
    return rc;
}

/* The largest of 16, 8, 4 bytes that divides every pointer, stride and offset. */
static uint32_t common_alignment(const void *const *ptrs, int n_ptrs, const int64_t *strides, int n_strides)
{
    uintptr_t bits = 16;
    for (int i = 0; i < n_ptrs; i++)
        bits |= (uintptr_t)ptrs[i];
    for (int i = 0; i < n_strides; i++)
        bits |= (uintptr_t)(strides[i] * (int64_t)sizeof(float));
    return bits % 16 == 0 ? 16 : bits % 8 == 0 ? 8 : 4;
}

/* Sets up both GEMMs of a call (descriptors, the cache layouts, the algorithms). */
static int plan_gemms(cublasLtHandle_t lt, f32_gemm *qk, f32_gemm *pv, const f32_plan *p, int64_t T, q35_error *err)
{
    if (layout(&qk->a, p->hd, p->n_ctx, p->kv_stride, p->hpk, 0, err) ||
        layout(&pv->a, p->hd, p->n_ctx, p->kv_stride, p->hpk, 0, err))
        return -1;
    return choose_algo(lt, qk, CUBLAS_OP_T, p, T, qk_bd, "Q K^T", err) ||
                   choose_algo(lt, pv, CUBLAS_OP_N, p, T, pv_bd, "P V", err)
               ? -1
               : 0;
}

static int check_args(const char *who, const float *o, const float *q, const float *k, const float *v, int64_t pos0,
                      int64_t T, const float *scores, int64_t pass_rows, q35_attn_shape s, q35_error *err)
{
    if (q35_attention_check_shape(who, s, err))
        return -1;
    if (pos0 < 0 || T < 0 || pos0 > (int64_t)INT32_MAX - T || pass_rows < 1 || pass_rows > (int64_t)INT32_MAX)
        return q35_fail(err, "%s: pos0 %lld, T %lld (pos0 + T <= %d), pass_rows %lld (>= 1)", who, (long long)pos0,
                        (long long)T, INT32_MAX, (long long)pass_rows);
    if (T > 0 && (!o || !q || !k || !v || !scores))
        return q35_fail(err, "%s: a NULL buffer", who);
    if (s.heads / s.kv_heads > 65535)
        return q35_fail(err, "%s: %d heads per KV group (<= 65535)", who, s.heads / s.kv_heads);
    return 0;
}

/* The call's GEMM shapes; align from the buffers (NULL: from the strides alone). */
static void plan_of(f32_plan *p, const void *const *buffers, int64_t pos0, int64_t T, q35_attn_shape s)
{
    p->hd = s.head_dim;
    p->hpk = s.heads / s.kv_heads;
    p->n_ctx = pos0 + T;
    p->ld = scores_ld(p->n_ctx);
    p->q_stride = s.q_stride;
    p->o_stride = s.o_stride;
    p->kv_stride = s.kv_stride;
    const int64_t strides[] = {s.q_stride, s.o_stride, s.kv_stride, p->ld, s.head_dim};
    p->align = common_alignment(buffers, buffers ? 5 : 0, strides, 5);
}

int q35_attention_f32_describe(q35_blas blas, q35_attn_shape s, int64_t pos0, int64_t T, char *buf, size_t cap,
                               q35_error *err)
{
    if (q35_attention_check_shape("attention_f32_describe", s, err))
        return -1;
    if (T < 1 || pos0 < 0)
        return q35_fail(err, "attention_f32_describe: T %lld (>= 1), pos0 %lld", (long long)T, (long long)pos0);
    f32_plan p;
    plan_of(&p, nullptr, pos0, T, s);
    f32_gemm g[2] = {};
    const int rc = plan_gemms((cublasLtHandle_t)blas, &g[0], &g[1], &p, T, err);
    for (int i = 0; i < 2 && rc == 0; i++) {
        int32_t id = 0;
        uint32_t tile = 0, stages = 0;
        size_t w = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&g[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&g[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&g[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
        const size_t used = i ? strlen(buf) : 0;
        snprintf(buf + used, cap - used, "%s%s algo %d tile %u stages %u compute %s", i ? "; " : "",
                 i ? "P V" : "Q K^T", (int)id, tile, stages,
                 g[i].compute == CUBLAS_COMPUTE_32F_PEDANTIC ? "32F_PEDANTIC" : "32F");
    }
    gemm_destroy(&g[0]);
    gemm_destroy(&g[1]);
    return rc;
}

int q35_attention_prefill_f32_parts(unsigned parts, q35_blas blas, float *o, const float *q, const float *k_cache,
                                    const float *v_cache, int64_t pos0, int64_t T, float *scores, int64_t pass_rows,
                                    q35_attn_shape s, q35_error *err)
{
    static const char *who = "attention_prefill_f32";
    if (check_args(who, o, q, k_cache, v_cache, pos0, T, scores, pass_rows, s, err))
        return -1;
    if (T == 0)
        return 0;
    const cublasLtHandle_t lt = (cublasLtHandle_t)blas; /* a cuBLAS handle is a cuBLASLt handle */
    cudaStream_t stream = nullptr;
    if (Q35_CUBLAS_CHECK(cublasGetStream(blas, &stream), err))
        return -1;
    f32_plan p;
    const void *const buffers[] = {o, q, k_cache, v_cache, scores};
    plan_of(&p, buffers, pos0, T, s);
    const int64_t P = pass_rows < T ? pass_rows : T;
    f32_gemm qk = {}, pv = {};
    f32_bd qk_full = {nullptr, nullptr}, pv_full = {nullptr, nullptr}, qk_last = {nullptr, nullptr},
           pv_last = {nullptr, nullptr};
    const int64_t last = T % P; /* rows of a shorter last pass, 0 when none */
    int rc = plan_gemms(lt, &qk, &pv, &p, T, err) || qk_bd(&qk_full, &p, P, err) || pv_bd(&pv_full, &p, P, err) ||
                     (last && (qk_bd(&qk_last, &p, last, err) || pv_bd(&pv_last, &p, last, err)))
                 ? -1
                 : 0;
    const float one = 1.0f, zero = 0.0f, scale = s.scale;
    for (int g = 0; g < s.kv_heads && rc == 0; g++) {
        const float *kg = k_cache + (int64_t)g * p.hd, *vg = v_cache + (int64_t)g * p.hd;
        for (int64_t r0 = 0; r0 < T && rc == 0; r0 += P) {
            const int64_t rows = T - r0 < P ? T - r0 : P;
            const f32_bd *lq = rows == P ? &qk_full : &qk_last, *lp = rows == P ? &pv_full : &pv_last;
            const float *qg = q + r0 * p.q_stride + (int64_t)g * p.hpk * p.hd;
            float *og = o + r0 * p.o_stride + (int64_t)g * p.hpk * p.hd;
            if (parts & Q35_ATTN_F32_QK)
                rc = Q35_CUBLAS_CHECK(cublasLtMatmul(lt, qk.desc, &scale, kg, qk.a, qg, lq->b, &zero, scores, lq->d,
                                                     scores, lq->d, &qk.algo, nullptr, 0, stream),
                                      err);
            if (rc == 0 && (parts & Q35_ATTN_F32_SOFTMAX)) {
                q35_causal_softmax_kernel<<<dim3((unsigned)rows, (unsigned)p.hpk), SOFTMAX_THREADS, 0, stream>>>(
                    scores, p.ld, rows, pos0 + r0 + 1, p.n_ctx);
                rc = Q35_LAUNCH_CHECK("attention_prefill_f32 (causal softmax)", err);
            }
            if (rc == 0 && (parts & Q35_ATTN_F32_PV))
                rc = Q35_CUBLAS_CHECK(cublasLtMatmul(lt, pv.desc, &one, vg, pv.a, scores, lp->b, &zero, og, lp->d, og,
                                                     lp->d, &pv.algo, nullptr, 0, stream),
                                      err);
        }
    }
    bd_destroy(&qk_full);
    bd_destroy(&pv_full);
    bd_destroy(&qk_last);
    bd_destroy(&pv_last);
    gemm_destroy(&qk);
    gemm_destroy(&pv);
    return rc ? -1 : 0;
}

int q35_attention_prefill_f32(q35_blas blas, float *o, const float *q, const float *k_cache, const float *v_cache,
                              int64_t pos0, int64_t T, float *scores, int64_t pass_rows, q35_attn_shape s,
                              q35_error *err)
{
    return q35_attention_prefill_f32_parts(Q35_ATTN_F32_ALL, blas, o, q, k_cache, v_cache, pos0, T, scores, pass_rows,
                                           s, err);
}
