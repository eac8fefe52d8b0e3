/* FP8 projections (kernels/fp8.h): the e4m3 conversion, the per-row
 * quantization, and the GEMM through cuBLASLt. Row-major Y [T][ldy] = X W^T is,
 * column-major, D (n x T, ldd = ldy) = op_T(A: W as k x n, lda = k) * B (X as
 * k x T, ldb = k): the "TN" form cuBLASLt's FP8 matmul wants, A's scale vector
 * of n (sw) and B's of T (sx). */
#include "kernels/blas.h"
#include "kernels/fp8.h"
#include "kernels/fp8_row.cuh"
#include "kernels/lt_call.cuh"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <new>

namespace {

constexpr int kThreads = 256;
constexpr size_t kWorkspace = Q35_LT_WORKSPACE_BYTES;
constexpr int kCache = 32; /* shapes whose algorithm is kept */

__global__ void __launch_bounds__(kThreads) round_kernel(uint8_t *y, const float *x, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    if (i < n)
        y[i] = q35_to_e4m3(x[i]);
}

/* One block a row: the row's amax, then the scale and the codes (kernels/fp8_row.cuh). */
__global__ void __launch_bounds__(kThreads) quantize_rows_kernel(uint8_t *q, float *scale, const float *x,
                                                                 int64_t cols, int64_t x_stride)
{
    const float *xr = x + (int64_t)blockIdx.x * x_stride;
    float amax = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += kThreads)
        amax = fmaxf(amax, fabsf(xr[i]));
    q35_fp8_row_out<kThreads>(q + (int64_t)blockIdx.x * cols, scale + blockIdx.x, xr, cols, amax);
}

/* A shape's descriptors and the algorithm cuBLASLt chose for it; each call
 * sets only the scale pointers. */
enum out_kind { OUT_F32, OUT_F32_ADD, OUT_BF16 }; /* y f32 (beta 0), f32 += (beta 1), bf16 (beta 0) */

struct algo_entry {
    int n = 0, k = 0, T = 0, ldy = 0; /* T == 0: empty */
    out_kind out = OUT_F32;
    q35_lt_call call;
    cublasLtMatmulAlgo_t algo = {};
};

} // namespace

struct q35_fp8_gemm {
    cublasLtHandle_t lt;
    cudaStream_t stream;
    void *workspace;
    algo_entry cache[kCache];
    int next; /* the entry the next new shape replaces */
};

int q35_fp8_supported(int device, q35_error *why)
{
    int major = 0, minor = 0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), why))
        return 0;
    if (major * 10 + minor < 89) {
        q35_fail(why, "fp8: device %d has compute capability %d.%d; FP8 tensor cores need 8.9 or newer", device, major,
                 minor);
        return 0;
    }
    return 1;
}

int q35_fp8_round(uint8_t *y, const float *x, int64_t n, q35_stream stream, q35_error *err)
{
    if (n < 0)
        return q35_fail(err, "fp8_round: n = %lld (want >= 0)", (long long)n);
    if (n == 0)
        return 0;
    round_kernel<<<(unsigned)((n + kThreads - 1) / kThreads), kThreads, 0, (cudaStream_t)stream>>>(y, x, n);
    return Q35_LAUNCH_CHECK("fp8 round_kernel", err);
}

int q35_fp8_quantize_rows(uint8_t *q, float *scale, const float *x, int64_t rows, int64_t cols, int64_t x_stride,
                          q35_stream stream, q35_error *err)
{
    if (rows < 0 || rows > INT32_MAX)
        return q35_fail(err, "fp8_quantize_rows: rows = %lld (want 0..%d)", (long long)rows, INT32_MAX);
    if (cols < 1 || x_stride < cols)
        return q35_fail(err, "fp8_quantize_rows: cols = %lld, x_stride = %lld (want cols >= 1, x_stride >= cols)",
                        (long long)cols, (long long)x_stride);
    if (rows == 0)
        return 0;
    quantize_rows_kernel<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(q, scale, x, cols, x_stride);
    return Q35_LAUNCH_CHECK("fp8 quantize_rows_kernel", err);
}

int q35_fp8_gemm_create(q35_fp8_gemm **out, q35_stream stream, q35_error *err)
{
    *out = nullptr;
    int device = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&device), err) || !q35_fp8_supported(device, err))
        return q35_fail_context(err, "fp8_gemm_create");
    q35_fp8_gemm *g = new (std::nothrow) q35_fp8_gemm();
    if (!g)
        return q35_fail(err, "fp8_gemm_create: out of host memory");
    g->stream = (cudaStream_t)stream;
    if (Q35_CUBLAS_CHECK(cublasLtCreate(&g->lt), err)) {
        delete g;
        return -1;
    }
    if (Q35_CUDA_CHECK(cudaMalloc(&g->workspace, kWorkspace), err)) {
        cublasLtDestroy(g->lt);
        delete g;
        return q35_fail_context(err, "fp8_gemm_create: the %zu MiB cuBLASLt workspace", kWorkspace >> 20);
    }
    *out = g;
    return 0;
}

void q35_fp8_gemm_destroy(q35_fp8_gemm *g)
{
    if (!g)
        return;
    cudaFree(g->workspace);
    cublasLtDestroy(g->lt);
    delete g;
}

namespace {

int make_call(q35_lt_call *c, int n, int k, int T, int ldy, out_kind out, q35_error *err)
{
    const int32_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    return q35_lt_call_make(c, CUDA_R_8F_E4M3, out == OUT_BF16 ? CUDA_R_16BF : CUDA_R_32F, n, k, T, ldy, err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_FAST_ACCUM, (int8_t)0, err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, outer, err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, outer, err)
               ? -1
               : 0;
}

/* The scale vectors of this call: sw of W's rows (A), sx of X's (B). */
int set_scales(q35_lt_call *c, const float *sx, const float *sw, q35_error *err)
{
    return q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sw, err) ||
                   q35_lt_desc_set(c, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sx, err)
               ? -1
               : 0;
}

int check_gemm(const char *who, const uint8_t *xq, const uint8_t *wq, const void *y, int64_t T, int64_t n, int64_t k,
               int64_t ldy, int ld_multiple, q35_error *err)
{
    if (T < 0 || T > INT32_MAX || n < 1 || n > INT32_MAX)
        return q35_fail(err, "%s: T = %lld, n = %lld (want 0..%d and 1..%d)", who, (long long)T, (long long)n,
                        INT32_MAX, INT32_MAX);
    if (k < 16 || k > INT32_MAX || k % 16)
        return q35_fail(err, "%s: k = %lld (want a multiple of 16, 16..%d: FP8 rows of whole 16 bytes)", who,
                        (long long)k, INT32_MAX);
    if (ldy < n || ldy > INT32_MAX || ldy % ld_multiple)
        return q35_fail(err, "%s: ldy = %lld (want n = %lld..%d, a multiple of %d)", who, (long long)ldy,
                        (long long)n, INT32_MAX, ld_multiple);
    if (((uintptr_t)xq | (uintptr_t)wq | (uintptr_t)y) % 16)
        return q35_fail(err, "%s: xq %p, wq %p, y %p (want each 16-byte aligned)", who, (const void *)xq,
                        (const void *)wq, y);
    return 0;
}

} // namespace

namespace {

const char *const k_who[] = {"gemm_fp8", "gemm_fp8_add", "gemm_fp8_bf16"};

/* y = the product (OUT_F32; OUT_BF16: rounded to bf16) or y + the product (OUT_F32_ADD: beta 1, in place) */
int gemm_fp8(q35_fp8_gemm *g, void *y, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T, const uint8_t *wq,
             const float *sw, int64_t n, int64_t k, out_kind out, q35_error *err)
{
    const char *who = k_who[out];
    if (check_gemm(who, xq, wq, y, T, n, k, ldy, out == OUT_BF16 ? 8 : 4, err))
        return -1;
    if (T == 0)
        return 0;
    algo_entry *e = nullptr;
    for (int i = 0; i < kCache; i++)
        if (g->cache[i].T == T && g->cache[i].n == n && g->cache[i].k == k && g->cache[i].ldy == ldy &&
            g->cache[i].out == out) {
            e = &g->cache[i];
            break;
        }
    if (!e) { /* a new shape: its descriptors and algorithm, into the entry the oldest shape held */
        q35_lt_call c; /* the device was checked once, when g was made */
        if (make_call(&c, (int)n, (int)k, (int)T, (int)ldy, out, err) || set_scales(&c, sx, sw, err))
            return q35_fail_context(err, "%s: the cuBLASLt descriptors", who);
        cublasLtMatmulHeuristicResult_t res = {};
        int found = 0;
        /* bf16 out: a split K reduces in f32 only (kernels/fp8.h: one rounding to bf16) */
        const uint32_t reductions = out == OUT_BF16 ? (uint32_t)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                                                    : (uint32_t)CUBLASLT_REDUCTION_SCHEME_MASK;
        if (q35_lt_candidates(g->lt, c, nullptr, reductions, 1, &res, &found, err))
            return q35_fail_context(err, "%s: choosing an algorithm (n %lld, k %lld, T %lld)", who, (long long)n,
                                    (long long)k, (long long)T);
        if (found < 1)
            return q35_fail(err, "%s: cuBLASLt has no FP8 algorithm for n %lld, k %lld, T %lld, ldy %lld "
                            "(e4m3 x e4m3, outer-vector scales, %s out)", who, (long long)n, (long long)k,
                            (long long)T, (long long)ldy, out == OUT_BF16 ? "bf16" : "f32");
        e = &g->cache[g->next];
        g->next = (g->next + 1) % kCache;
        e->call.swap(c); /* c now holds the evicted shape's descriptors, destroyed with it */
        e->n = (int)n, e->k = (int)k, e->T = (int)T, e->ldy = (int)ldy, e->out = out, e->algo = res.algo;
    } else if (set_scales(&e->call, sx, sw, err)) {
        return q35_fail_context(err, "%s: the scale pointers", who);
    }
    const q35_lt_call &c = e->call;
    const float one = 1.0f, beta = out == OUT_F32_ADD ? 1.0f : 0.0f;
    if (Q35_CUBLAS_CHECK(cublasLtMatmul(g->lt, c.desc, &one, wq, c.a, xq, c.b, &beta, y, c.d, y, c.d, &e->algo,
                                        g->workspace, kWorkspace, g->stream),
                         err))
        return q35_fail_context(err, "%s (n %lld, k %lld, T %lld, ldy %lld)", who, (long long)n, (long long)k,
                                (long long)T, (long long)ldy);
    return 0;
}

} // namespace

int q35_gemm_fp8(q35_fp8_gemm *g, float *y, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                 const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err)
{
    return gemm_fp8(g, y, ldy, xq, sx, T, wq, sw, n, k, OUT_F32, err);
}

int q35_gemm_fp8_add(q35_fp8_gemm *g, float *y, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                     const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err)
{
    return gemm_fp8(g, y, ldy, xq, sx, T, wq, sw, n, k, OUT_F32_ADD, err);
}

int q35_gemm_fp8_bf16(q35_fp8_gemm *g, uint16_t *y16, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                      const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err)
{
    return gemm_fp8(g, y16, ldy, xq, sx, T, wq, sw, n, k, OUT_BF16, err);
}
