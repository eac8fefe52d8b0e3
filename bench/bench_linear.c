/* Benchmarks of the projection units at the 9B projections (SPEC §1; `proj`
 * indexes the table below), each beside its ceiling:
 *   gemm_f32        q35_gemm_f32: dequant to the f32 scratch + SGEMM (pedantic),
 *                   a Q4_K weight                       ceiling: sgemm
 *   gemm_f16        q35_gemm_f16: rows rounded to f16 + GemmEx (f16 inputs, f32
 *                   accumulation and output)            ceiling: hgemm
 *   ceiling/sgemm   the pure cuBLAS call of gemm_f32 on an already-f32 weight
 *                   (cublasGemmEx, CUBLAS_COMPUTE_32F_PEDANTIC)
 *   ceiling/hgemm   the pure cuBLAS call of gemm_f16 on already-f16 weight and rows
 *   ceiling/hgemm_f16out  classic HGEMM: f16 output, CUBLAS_COMPUTE_16F
 *   ceiling/hgemm_lt  gemm_f16's product through the tuned cuBLASLt context
 *                   the model's f16 path runs (kernels/gemm_lt.h,
 *                   q35_hgemm_rounded): the fastest of up to 8 algorithms its
 *                   heuristic offers, timed at the shape's first call, in the
 *                   point's setup (1 warm-up and 3 timed calls; counters:
 *                   candidates, chosen = the winner's rank in the heuristic's
 *                   order, first_ms and best_ms = the first's and the winner's
 *                   time there): what the tuned GEMM gains over cublasGemmEx's
 *                   default choice (ceiling/hgemm)
 *   ceiling/hgemm_lt_f16  the same context's f16-out form (q35_hgemm_rounded_f16:
 *                   the f32 sum rounded once to f16 in the epilogue, half y's
 *                   bytes), what the model's f16 path runs for [gate | up]
 *                   (proj 12); counters as hgemm_lt's, of its own shape
 *   gemm_sm90       q35_gemm_sm90_f32 (kernels/gemm_sm90.h, add 0): the same
 *                   product (f16 weight and rows, f32 out) on our sm_90a
 *                   wgmma kernels, per variant (axis `kernel`), beside its
 *                   ceiling ceiling/hgemm_lt; skipped where the projection's
 *                   n is odd or k is not a multiple of 64 (none of 9B's), and
 *                   where the kernels do not run
 *   gemm_fp8        the rows quantized to e4m3 with a scale a row (q35_fp8_quantize_rows)
 *                   + q35_gemm_fp8 (cuBLASLt, e4m3 weight with a scale an output
 *                   row, f32 accumulation and output); sm_89+, else skipped
 *   ceiling/fp8     q35_gemm_fp8 alone, on already-quantized rows
 *   dequant_f32, dequant_f16   a weight of `type` to f32 / f16
 *   gemv            one token, straight from the blocks of `type`, through
 *                   `variant` (gemv.h: 0 registers, 1 staged)
 *   gemv_rows       the batch-invariant rows form, Q4_K, rows >= 64
 *   gemv_q8         one token, 8-bit activations (kernels/gemv_q8.h; x quantized
 *                   once, untimed), q4_K, q6_K, q8_0 (f16 skipped), through
 *                   `q8_variant` (gemv_q8.h: registers, persist, rows2, unroll2, persist_narrow, persist_u2, persist_prefetch, persist_r0, persist_y)
 *   gemv_q8_early   gemv_q8 launched as the decode step launches it
 *                   (q35_gemv_q8_group_early: programmatic dependent launch on
 *                   sm_90, each launch's blocks starting as the one before it
 *                   ends; elsewhere plain)
 *   ceiling/read    the weight's bytes of `type` read once and n words written
 *                   (bench/gpu_read.h: the least a plain kernel does with a
 *                   GEMV's traffic), rotated and launched as gemv_q8: what a
 *                   launch of that size can reach, its ramp and tail included
 *   gemv_q8_q6a     where the experiments are built: q6_K through the experiment
 *                   q6a (kernels/experiments/gemv_q8_q6a.h: the same bytes in an
 *                   order of 16-byte aligned blocks, read as persist reads
 *                   q4_K), plain; k a multiple of 2048 (others skipped)
 *   gemv_q8_q6a_early  the same launched early, as gemv_q8_early
 * and at the FFN [gate | up] of each model (axis `model`: K = n_embd, F = n_ff;
 * x16 [T][K], the merged f16 weight [2F][K], gate rows then up rows):
 *   gemm_swiglu_sm90  q35_gemm_swiglu_sm90_f16 (kernels/gemm_sm90.h): the
 *                   product on sm_90a's wgmma with SwiGLU in the epilogue, y16
 *                   [T][F] f16 out
 *   gemm_swiglu_chain what it replaces on the f16 path: the tuned cuBLASLt GEMM
 *                   with f32 out (q35_hgemm_rounded, n = 2F) into gu [T][2F],
 *                   then q35_swiglu_rows_f16 (counters of the GEMM's choice as
 *                   ceiling/hgemm_lt's)
 *   gemm_gu_sm90    q35_gemm_gu_sm90_f32: the same product, f32 [gate | up] out
 *   gemm_gu_lt      the chain's GEMM alone (q35_hgemm_rounded into gu)
 * the sm_90a families (and gemm_sm90) skipped, with q35_gemm_sm90_supported's
 * reason (also the context's gemm_sm90), where the kernels do not run.
 * The bandwidth ceiling is bench_kernels' ceiling/d2d_copy (read + write). The
 * bandwidth points (dequant, gemv) rotate through copies of their buffers that
 * together pass 512 MB (the L2 is 60 MB) and time at least 256 MB of them per
 * iteration (back-to-back launches, `launches` of them), so small weights show
 * their launch cost and large ones the memory.
 * FLOP = 2 T n k; bytes = the weight as stored + x + y (gemm_f32: the quantized
 * weight; its scratch traffic is what the sgemm ceiling shows as the difference;
 * x at 4 bytes a value but for the fp8 ceilings, gemm_sm90 as ceiling/hgemm_lt;
 * gemm_sm90 also pct_of_hgemm);
 * dequant: the weight as stored + its output; the FFN families: FLOP = 2 T 2F K,
 * bytes = w16 + x16 + what each writes (y16 at 2 bytes a value, gu at 4) and
 * reads between launches (the chain's SwiGLU reads gu again). Device buffers
 * hold a fixed pattern of finite floats (quantized blocks then carry arbitrary
 * scales: the timing does not depend on the values). */
#include "bench/gpu_bench.h"
#include "bench/gpu_read.h"
#include "bench/models.h"
#include "core/quant.h"
#include "kernels/blas.h"
#include "kernels/dequant.h"
#include "kernels/fp8.h"
#include "kernels/gemm.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv.h"
#include "kernels/gemv_q8.h"
#if Q35_KERNEL_EXPERIMENTS
#include "kernels/experiments/gemv_q8_q6a.h"
#endif
#include "kernels/pointwise.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ROTATE_BYTES ((size_t)512 << 20)
#define ITER_BYTES ((size_t)256 << 20)
#define ALIGN 256

typedef struct proj {
    const char *name;
    int64_t n, k;
} proj;

/* 9B: H 4096, DeltaNet 16 / 32 heads of 128, attention 16 / 4 heads of 256, ffn 12288 */
static const proj k_proj[] = {
    {"attn_qkv", 8192, 4096}, {"attn_gate", 4096, 4096},    {"ssm_alpha/beta", 32, 4096}, {"ssm_out", 4096, 4096},
    {"attn_q", 8192, 4096},   {"attn_k/v", 1024, 4096},     {"attn_output", 4096, 4096},  {"ffn_gate/up", 12288, 4096},
    {"ffn_down", 4096, 12288}, {"lm_head", 248320, 4096},
    /* the fast paths' merged groups (model/cuda_weight_sets.c, q35_weight_set_build): one GEMM for the projections of one input */
    {"attn_qkv+gate+alpha+beta", 12352, 4096}, {"attn_q+k+v", 10240, 4096}, {"ffn_gate+up", 24576, 4096},
};
#define N_PROJ ((int)(sizeof k_proj / sizeof k_proj[0]))
_Static_assert(N_PROJ == 13, "the proj axis lists every k_proj entry");

static q35_blas g_blas;

static q35_fp8_gemm *g_fp8; /* NULL where the device has no FP8: those points skip */
static char g_fp8_why[sizeof(q35_error)];
static q35_hgemm *g_hgemm; /* ceiling/hgemm_lt's context, tuning on; NULL where it could not be made: those skip */
static char g_hgemm_why[sizeof(q35_error)];

static int g_sm90; /* q35_gemm_sm90_supported on the device: else the sm_90a points skip */
static char g_sm90_why[sizeof(q35_error)];

enum { GEMM_F32, GEMM_F16, SGEMM, HGEMM, HGEMM_F16OUT, GEMM_FP8, FP8, HGEMM_LT, FP8_BF16, HGEMM_LT_F16, GEMM_SM90 };
static const int k_which[] = {GEMM_F32, GEMM_F16, SGEMM,    HGEMM,        HGEMM_F16OUT, GEMM_FP8,
                              FP8,      HGEMM_LT, FP8_BF16, HGEMM_LT_F16, GEMM_SM90};

/* ---- the GEMMs and their ceilings ------------------------------------------------- */

struct gemm_ctx {
    int which, variant; /* variant: gemm_sm90's (kernels/gemm_sm90.h) */
    int64_t n, k, T;
    float *y, *x;
    void *wq;           /* the Q4_K weight (gemm_f32) */
    float *w32;         /* gemm_f32's scratch; sgemm's f32 weight */
    uint16_t *w16, *x16; /* the f16 weight; gemm_f16's scratch, hgemm's f16 rows */
    uint8_t *w8, *x8;    /* the e4m3 weight and rows (gemm_fp8, fp8) */
    float *sw, *sx;      /* their scales */
};

static int gemm_launch(void *p, q35_error *err)
{
    struct gemm_ctx *c = p;
    const int n = (int)c->n, k = (int)c->k, T = (int)c->T;
    const float one = 1.0f, zero = 0.0f;
    const uint16_t one_h = 0x3c00, zero_h = 0x0000; /* f16 1 and 0: CUBLAS_COMPUTE_16F's alpha, beta */
    switch (c->which) {
    case GEMM_F32:
        return q35_gemm_f32(g_blas, c->y, c->n, c->x, c->T, c->wq, Q35_TYPE_Q4_K, c->n, c->k, c->w32, err);
    case GEMM_F16:
        return q35_gemm_f16(g_blas, c->y, c->n, c->x, c->T, c->w16, c->n, c->k, c->x16, err);
    case SGEMM:
        return Q35_CUBLAS_CHECK(cublasGemmEx(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, n, T, k, &one, c->w32, CUDA_R_32F, k,
                                             c->x, CUDA_R_32F, k, &zero, c->y, CUDA_R_32F, n,
                                             CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
                                err);
    case GEMM_FP8:
        if (q35_fp8_quantize_rows(c->x8, c->sx, c->x, c->T, c->k, c->k, NULL, err))
            return -1;
        return q35_gemm_fp8(g_fp8, c->y, c->n, c->x8, c->sx, c->T, c->w8, c->sw, c->n, c->k, err);
    case FP8:
        return q35_gemm_fp8(g_fp8, c->y, c->n, c->x8, c->sx, c->T, c->w8, c->sw, c->n, c->k, err);
    case FP8_BF16:
        return q35_gemm_fp8_bf16(g_fp8, (uint16_t *)(void *)c->y, c->n, c->x8, c->sx, c->T, c->w8, c->sw, c->n, c->k,
                                 err);
    case HGEMM_LT:
        return q35_hgemm_rounded(g_hgemm, c->y, c->n, c->x16, c->T, c->w16, c->n, c->k, 0, err);
    case HGEMM_LT_F16:
        return q35_hgemm_rounded_f16(g_hgemm, (uint16_t *)(void *)c->y, c->n, c->x16, c->T, c->w16, c->n, c->k, err);
    case GEMM_SM90:
        return q35_gemm_sm90_f32(c->y, c->n, c->x16, c->k, c->w16, c->k, c->n, c->k, c->T, 0, c->variant, NULL, err);
    case HGEMM:
        return Q35_CUBLAS_CHECK(cublasGemmEx(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, n, T, k, &one, c->w16, CUDA_R_16F, k,
                                             c->x16, CUDA_R_16F, k, &zero, c->y, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                             CUBLAS_GEMM_DEFAULT),
                                err);
    default:
        return Q35_CUBLAS_CHECK(cublasGemmEx(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, n, T, k, &one_h, c->w16, CUDA_R_16F,
                                             k, c->x16, CUDA_R_16F, k, &zero_h, c->y, CUDA_R_16F, n,
                                             CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT),
                                err);
    }
}

/* rows [n][k] of valid halves: `pattern` (chunk rows of k floats, the
 * allocation's finite pattern) narrowed into each chunk of dst. */
static void narrow_rows(uint16_t *dst, const float *pattern, int64_t chunk, int64_t n, int64_t k)
{
    q35_error err = {{0}};
    for (int64_t r = 0; r < n; r += chunk)
        q35_dequant_f16(dst + r * k, pattern, Q35_TYPE_F32, n - r < chunk ? n - r : chunk, k, NULL, &err);
}

/* The tuned context's choice for the shape it last ran, as counters; -1 when none. */
static int lt_choice_counters(q35_bench_state *st)
{
    q35_hgemm_choice lt;
    if (q35_hgemm_last_choice(g_hgemm, &lt))
        return -1;
    q35_bench_value(st, "candidates", lt.candidates);
    q35_bench_value(st, "chosen", lt.chosen);
    q35_bench_value(st, "first_ms", lt.first_ms);
    q35_bench_value(st, "best_ms", lt.best_ms);
    return 0;
}

static void bench_gemm(q35_bench_state *st, void *which)
{
    const proj *p = &k_proj[q35_bench_arg(st, 0)];
    struct gemm_ctx c = {.which = *(const int *)which, .n = p->n, .k = p->k, .T = q35_bench_arg(st, 1)};
    const bool f32 = c.which == GEMM_F32 || c.which == SGEMM, fp8 = c.which == GEMM_FP8 || c.which == FP8 || c.which == FP8_BF16;
    const size_t wq_bytes = q35_row_bytes(Q35_TYPE_Q4_K, c.k) * (size_t)c.n;
    float *pattern = NULL;
    if (fp8 && !g_fp8) {
        q35_bench_skip(st, g_fp8_why);
        return;
    }
    const bool tuned_lt = c.which == HGEMM_LT || c.which == HGEMM_LT_F16;
    if (tuned_lt && !g_hgemm) {
        q35_bench_skip(st, g_hgemm_why);
        return;
    }
    if (c.which == GEMM_SM90) { /* the plain form: float pairs stored, whole 64-wide K steps */
        char why[160] = "";
        c.variant = (int)q35_bench_arg(st, 2);
        if (c.n % 2)
            snprintf(why, sizeof why, "%s: n %lld is odd (gemm_sm90_f32 stores float pairs)", p->name, (long long)c.n);
        else if (c.k % 64)
            snprintf(why, sizeof why, "%s: k %lld is not a multiple of 64 (gemm_sm90_f32's K step)", p->name,
                     (long long)c.k);
        if (!g_sm90 || why[0]) {
            q35_bench_skip(st, g_sm90 ? why : g_sm90_why);
            return;
        }
    }
    if (!(c.y = q35_bench_try_alloc((size_t)(c.T * c.n) * 4, st)) ||
        !(c.x = q35_bench_try_alloc((size_t)(c.T * c.k) * 4, st)))
        goto out;
    if (f32 && !(c.w32 = q35_bench_try_alloc((size_t)(c.n * c.k) * 4, st)))
        goto out;
    if (c.which == GEMM_F32 && !(c.wq = q35_bench_try_alloc(wq_bytes, st)))
        goto out;
    if (fp8) { /* valid codes and scales: the pattern's rows quantized */
        q35_error err = {{0}};
        const int64_t chunk = c.n < 1024 ? c.n : 1024;
        if (!(c.w8 = q35_bench_try_alloc((size_t)(c.n * c.k), st)) ||
            !(c.x8 = q35_bench_try_alloc((size_t)(c.T * c.k), st)) ||
            !(c.sw = q35_bench_try_alloc((size_t)c.n * 4, st)) || !(c.sx = q35_bench_try_alloc((size_t)c.T * 4, st)) ||
            !(pattern = q35_bench_try_alloc((size_t)(chunk * c.k) * 4, st)))
            goto out;
        for (int64_t r = 0; r < c.n; r += chunk)
            q35_fp8_quantize_rows(c.w8 + r * c.k, c.sw + r, pattern, c.n - r < chunk ? c.n - r : chunk, c.k, c.k,
                                  NULL, &err);
        q35_fp8_quantize_rows(c.x8, c.sx, c.x, c.T, c.k, c.k, NULL, &err);
    } else if (!f32) { /* valid halves: the pattern's floats narrowed */
        const int64_t chunk = c.n < 1024 ? c.n : 1024;
        if (!(c.w16 = q35_bench_try_alloc((size_t)(c.n * c.k) * 2, st)) ||
            !(c.x16 = q35_bench_try_alloc((size_t)(c.T * c.k) * 2, st)) ||
            !(pattern = q35_bench_try_alloc((size_t)(chunk * c.k) * 4, st)))
            goto out;
        narrow_rows(c.w16, pattern, chunk, c.n, c.k);
        narrow_rows(c.x16, c.x, c.T, c.T, c.k);
    }
    if (tuned_lt) { /* the shape's first call tunes it (or it was tuned at an earlier point) */
        q35_error err = {{0}};
        if (gemm_launch(&c, &err) || lt_choice_counters(st)) {
            q35_bench_skip(st, err.msg);
            goto out;
        }
    }
    q35_bench_time(st, gemm_launch, &c);
    q35_bench_rate(st, "FLOP", 2.0 * (double)c.T * (double)c.n * (double)c.k);
    if (c.which == GEMM_SM90)
        q35_bench_pct_of(st, Q35_CEILING_HGEMM, 2.0 * (double)c.T * (double)c.n * (double)c.k);
    const double weight = c.which == GEMM_F32 ? (double)wq_bytes : (double)(c.n * c.k) * (f32 ? 4.0 : fp8 ? 1.0 : 2.0);
    const bool y16 = c.which == HGEMM_F16OUT || c.which == FP8_BF16 || c.which == HGEMM_LT_F16;
    const double y_bytes = (double)(c.T * c.n) * (y16 ? 2.0 : 4.0);
    q35_bench_rate(st, "bytes", weight + (double)(c.T * c.k) * (c.which == FP8 || c.which == FP8_BF16 ? 1.0 : 4.0) + y_bytes);
out: /* cudaFree(NULL) does nothing */
    q35_bench_free(c.w8), q35_bench_free(c.x8), q35_bench_free(c.sw), q35_bench_free(c.sx);
    q35_bench_free(pattern), q35_bench_free(c.x16), q35_bench_free(c.w16), q35_bench_free(c.wq);
    q35_bench_free(c.w32), q35_bench_free(c.x), q35_bench_free(c.y);
}

/* ---- the FFN [gate | up] GEMM with SwiGLU on sm_90a, and the chain it replaces ---- */

enum { SWIGLU_SM90, SWIGLU_CHAIN, GU_SM90, GU_LT };
static const int k_ffn[] = {SWIGLU_SM90, SWIGLU_CHAIN, GU_SM90, GU_LT};

struct ffn_ctx {
    int which, variant; /* the sm_90a kernel's variant (kernels/gemm_sm90.h) */
    int64_t K, F, T;
    uint16_t *x16, *w16; /* [T][K]; [2F][K], gate rows then up rows */
    uint16_t *y16;       /* [T][F] f16: the SwiGLU forms */
    float *gu;           /* [T][2F] f32: the [gate | up] forms, the chain's intermediate */
};

static int ffn_launch(void *p, q35_error *err)
{
    struct ffn_ctx *c = p;
    const int64_t F = c->F, K = c->K;
    switch (c->which) {
    case SWIGLU_SM90:
        return q35_gemm_swiglu_sm90_f16(c->y16, F, c->x16, K, c->w16, K, F, K, c->T, c->variant, NULL, err);
    case GU_SM90:
        return q35_gemm_gu_sm90_f32(c->gu, 2 * F, c->x16, K, c->w16, K, F, K, c->T, c->variant, NULL, err);
    case GU_LT:
        return q35_hgemm_rounded(g_hgemm, c->gu, 2 * F, c->x16, c->T, c->w16, 2 * F, K, 0, err);
    default: /* the chain: the tuned GEMM into gu, then SwiGLU from its f32 rows */
        if (q35_hgemm_rounded(g_hgemm, c->gu, 2 * F, c->x16, c->T, c->w16, 2 * F, K, 0, err))
            return -1;
        return q35_swiglu_rows_f16(c->y16, c->gu, c->gu + F, 2 * F, F, c->T, NULL, err);
    }
}

static void bench_ffn(q35_bench_state *st, void *which)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct ffn_ctx c = {.which = *(const int *)which, .K = m->n_embd, .F = m->n_ff, .T = q35_bench_arg(st, 1)};
    const bool sm90 = c.which == SWIGLU_SM90 || c.which == GU_SM90;
    c.variant = sm90 ? (int)q35_bench_arg(st, 2) : Q35_VARIANT_DEFAULT;
    const bool y16 = c.which == SWIGLU_SM90 || c.which == SWIGLU_CHAIN, gu = c.which != SWIGLU_SM90;
    const int64_t n = 2 * c.F, chunk = n < 1024 ? n : 1024;
    float *pattern = NULL;
    if (sm90 ? !g_sm90 : !g_hgemm) {
        q35_bench_skip(st, sm90 ? g_sm90_why : g_hgemm_why);
        return;
    }
    if (!(c.w16 = q35_bench_try_alloc((size_t)(n * c.K) * 2, st)) ||
        !(c.x16 = q35_bench_try_alloc((size_t)(c.T * c.K) * 2, st)) ||
        !(pattern = q35_bench_try_alloc((size_t)(chunk * c.K) * 4, st)) ||
        (y16 && !(c.y16 = q35_bench_try_alloc((size_t)(c.T * c.F) * 2, st))) ||
        (gu && !(c.gu = q35_bench_try_alloc((size_t)(c.T * n) * 4, st))))
        goto out;
    narrow_rows(c.w16, pattern, chunk, n, c.K); /* valid halves: the pattern's floats narrowed */
    narrow_rows(c.x16, pattern, chunk, c.T, c.K);
    if (!sm90) { /* the shape's first call tunes it (or it was tuned at an earlier point) */
        q35_error err = {{0}};
        if (ffn_launch(&c, &err) || lt_choice_counters(st)) {
            q35_bench_skip(st, err.msg);
            goto out;
        }
    }
    q35_bench_time(st, ffn_launch, &c);
    const double flop = 2.0 * (double)c.T * (double)n * (double)c.K;
    q35_bench_rate(st, "FLOP", flop);
    q35_bench_pct_of(st, Q35_CEILING_HGEMM, flop);
    const double gu_bytes = (double)(c.T * n) * 4.0 * (c.which == SWIGLU_CHAIN ? 2.0 : gu ? 1.0 : 0.0);
    q35_bench_rate(st, "bytes", (double)(n * c.K) * 2.0 + (double)(c.T * c.K) * 2.0 + gu_bytes +
                                    (y16 ? (double)(c.T * c.F) * 2.0 : 0.0));
out: /* cudaFree(NULL) does nothing */
    q35_bench_free(pattern), q35_bench_free(c.w16), q35_bench_free(c.x16);
    q35_bench_free(c.y16), q35_bench_free(c.gu);
}

/* ---- the bandwidth points: copies rotated ------------------------------------------ */

/* `copies` slots of `stride` bytes in one buffer; `launches` of them a timed iteration. */
typedef struct rotation {
    uint8_t *in, *out;
    size_t in_stride, out_stride;
    int copies, launches, next;
} rotation;

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* in_bytes and out_bytes per launch; out_rotates: the output rotates too. 0, or -1 (skipped). */
static int rotation_alloc(rotation *r, size_t in_bytes, size_t out_bytes, bool out_rotates, q35_bench_state *st)
{
    const size_t per = in_bytes + (out_rotates ? out_bytes : 0);
    *r = (rotation){.in_stride = round_up(in_bytes), .out_stride = out_rotates ? round_up(out_bytes) : 0};
    r->copies = (int)(ROTATE_BYTES / per) + 1;
    const size_t iter = (ITER_BYTES + in_bytes + out_bytes - 1) / (in_bytes + out_bytes);
    r->launches = iter > (size_t)r->copies ? r->copies : (int)iter;
    if (!(r->in = q35_bench_try_alloc(r->in_stride * (size_t)r->copies, st)))
        return -1;
    if (!(r->out = q35_bench_try_alloc(out_rotates ? r->out_stride * (size_t)r->copies : out_bytes, st))) {
        q35_bench_free(r->in);
        return -1;
    }
    return 0;
}

static void rotation_free(rotation *r)
{
    q35_bench_free(r->in), q35_bench_free(r->out);
}

struct bw_ctx {
    rotation r;
    q35_type type;
    int64_t n, k, T;
    int half;   /* dequant: to f16 */
    int gemv;   /* 0 dequant, 1 gemv (one token), 2 gemv_rows, 3 gemv_q8, 4 the read ceiling, 5 gemv_q8 early,
                   6 gemv_q8_q6a, 7 gemv_q8_q6a early */
    int variant; /* gemv: an index of q35_gemv's variants; gemv_q8: of q35_gemv_q8's */
    size_t w_bytes; /* the weight as stored */
    float *x;
    void *xq;   /* gemv_q8: x quantized (once, untimed) */
};

static int bw_launch(void *p, q35_error *err)
{
    struct bw_ctx *c = p;
    for (int i = 0; i < c->r.launches; i++) {
        const int at = c->r.next;
        c->r.next = (c->r.next + 1) % c->r.copies;
        const uint8_t *in = c->r.in + (size_t)at * c->r.in_stride;
        void *out = c->r.out + (size_t)at * c->r.out_stride;
        int rc;
        if (c->gemv == 1)
            rc = q35_gemv(out, in, c->type, c->n, c->k, c->x, c->variant, NULL, err);
        else if (c->gemv == 3)
            rc = q35_gemv_q8(out, in, c->type, c->n, c->k, c->xq, c->variant, NULL, err);
        else if (c->gemv == 5)
            rc = q35_gemv_q8_group_early(&(q35_gemv_part){.y = out, .w = in, .type = c->type, .n = c->n}, 1, c->type,
                                         c->k, c->xq, c->variant, NULL, err);
        else if (c->gemv == 4)
            rc = q35_bench_read(out, c->n, in, c->w_bytes, err);
#if Q35_KERNEL_EXPERIMENTS
        else if (c->gemv == 6 || c->gemv == 7)
            rc = q35_gemv_q8_q6a(out, in, c->n, c->k, c->xq, c->gemv == 7, NULL, err);
#endif
        else if (c->gemv == 2)
            rc = q35_gemv_rows(out, c->n, in, c->type, c->n, c->k, c->x, c->T, NULL, err);
        else if (c->half)
            rc = q35_dequant_f16(out, in, c->type, c->n, c->k, NULL, err);
        else
            rc = q35_dequant_f32(out, in, c->type, c->n, c->k, NULL, err);
        if (rc)
            return -1;
    }
    return 0;
}

static void bench_bw(q35_bench_state *st, void *kind)
{
    const proj *p = &k_proj[q35_bench_arg(st, 0)];
    /* 0 dequant_f32, 1 dequant_f16, 2 gemv, 3 gemv_rows, 4 gemv_q8, 5 ceiling/read, 6 gemv_q8_early,
       7 gemv_q8_q6a, 8 gemv_q8_q6a_early */
    const int k_kind = *(const int *)kind;
    struct bw_ctx c = {.n = p->n, .k = p->k, .T = 1, .half = k_kind == 1, .gemv = k_kind >= 2 ? k_kind - 1 : 0};
    c.type = k_kind == 3 ? Q35_TYPE_Q4_K : k_kind >= 7 ? Q35_TYPE_Q6_K : (q35_type)q35_bench_arg(st, 1);
    if (k_kind >= 7 && c.k % 2048 != 0) {
        q35_bench_skip(st, "gemv_q8_q6a takes k a multiple of 2048");
        return;
    }
    if ((k_kind == 4 || k_kind == 6) && !q35_gemv_q8_takes(c.type)) {
        q35_bench_skip(st, "gemv_q8 takes q4_K, q5_K, q6_K, q8_0");
        return;
    }
    if (k_kind == 3)
        c.T = q35_bench_arg(st, 1);
    if (k_kind == 2 || k_kind == 4 || k_kind == 6)
        c.variant = (int)q35_bench_arg(st, 2);
    const size_t w_bytes = q35_row_bytes(c.type, c.k) * (size_t)c.n;
    c.w_bytes = w_bytes;
    const size_t out_bytes = c.gemv ? (size_t)(c.T * c.n) * 4 : (size_t)(c.n * c.k) * (c.half ? 2 : 4);
    if (c.gemv == 2) { /* the rows form: compute-bound, one weight */
        c.r = (rotation){.copies = 1, .launches = 1};
        if (!(c.r.in = q35_bench_try_alloc(w_bytes, st)))
            return;
        if (!(c.r.out = q35_bench_try_alloc(out_bytes, st))) {
            q35_bench_free(c.r.in);
            return;
        }
    } else if (rotation_alloc(&c.r, w_bytes, out_bytes, !c.gemv, st)) {
        return;
    }
    if (c.gemv && c.gemv != 4 && !(c.x = q35_bench_try_alloc((size_t)(c.T * c.k) * 4, st))) {
        rotation_free(&c.r);
        return;
    }
    if (c.gemv == 3 || c.gemv >= 5) { /* x quantized once, untimed */
        q35_error qerr = {{0}};
        if (!(c.xq = q35_bench_try_alloc(q35_gemv_q8_x_bytes(c.k), st)) ||
            q35_gemv_q8_quantize(c.xq, c.x, c.k, NULL, &qerr)) {
            if (c.xq)
                q35_bench_skip(st, qerr.msg);
            q35_bench_free(c.x);
            if (c.xq)
                q35_bench_free(c.xq);
            rotation_free(&c.r);
            return;
        }
    }
    q35_bench_time(st, bw_launch, &c);
    const double L = c.r.launches;
    q35_bench_rate(st, "bytes", L * ((double)w_bytes + (double)out_bytes + (c.x ? (double)(c.T * c.k) * 4.0 : 0.0)));
    if (c.x)
        q35_bench_rate(st, "FLOP", L * 2.0 * (double)c.T * (double)c.n * (double)c.k);
    q35_bench_value(st, "launches", L);
    q35_bench_value(st, "weight_MB", (double)w_bytes / 1e6);
    if (c.x)
        q35_bench_free(c.x);
    if (c.xq)
        q35_bench_free(c.xq);
    rotation_free(&c.r);
}

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init_blas(&argc, argv, &g_blas))
        return 1;
    static const int64_t projs[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, rows[] = {1, 64, 512, 2048}, rows_big[] = {64, 512, 2048};
    static const int64_t types[] = {Q35_TYPE_Q4_K, Q35_TYPE_Q6_K, Q35_TYPE_Q8_0, Q35_TYPE_F16};
    static const int kinds[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    const q35_bench_axis proj_axis = {"proj", projs, N_PROJ}, rows_axis = {"rows", rows, 4};
    const q35_bench_axis type_axis = {"type", types, 4};
    static int64_t variants[2];
    static const char *variant_names[2];
    const int n_variants = q35_gemv_variant_count() < 2 ? q35_gemv_variant_count() : 2;
    for (int v = 0; v < n_variants; v++)
        variants[v] = v, variant_names[v] = q35_gemv_variant_name(v);
    const q35_bench_axis variant_axis = {"variant", variants, n_variants};
    static int64_t q8_variants[16];
    static const char *q8_names[16];
    const int n_q8 = q35_gemv_q8_variant_count() < 16 ? q35_gemv_q8_variant_count() : 16;
    for (int v = 0; v < n_q8; v++)
        q8_variants[v] = v, q8_names[v] = q35_gemv_q8_variant_name(v);
    const q35_bench_axis q8_axis = {"q8_variant", q8_variants, n_q8}; /* gemv_q8's variants */
    q35_bench_register("gemm_f32", bench_gemm, (void *)&k_which[GEMM_F32], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("gemm_f16", bench_gemm, (void *)&k_which[GEMM_F16], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("ceiling/sgemm", bench_gemm, (void *)&k_which[SGEMM], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("ceiling/hgemm", bench_gemm, (void *)&k_which[HGEMM], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("gemm_fp8", bench_gemm, (void *)&k_which[GEMM_FP8], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("ceiling/fp8", bench_gemm, (void *)&k_which[FP8], (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("gemm_fp8_bf16", bench_gemm, (void *)&k_which[FP8_BF16], (q35_bench_axis[]){proj_axis, rows_axis},
                       2);
    q35_bench_register("ceiling/hgemm_f16out", bench_gemm, (void *)&k_which[HGEMM_F16OUT],
                       (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("ceiling/hgemm_lt", bench_gemm, (void *)&k_which[HGEMM_LT],
                       (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    q35_bench_register("ceiling/hgemm_lt_f16", bench_gemm, (void *)&k_which[HGEMM_LT_F16],
                       (q35_bench_axis[]){proj_axis, rows_axis}, 2);
    static const int64_t ffn_rows[] = {512, 2048, 4096};
    const q35_bench_axis model_axis = q35_bench_model_axis(), ffn_rows_axis = {"rows", ffn_rows, 3};
    static const char *const ffn_families[] = {"gemm_swiglu_sm90", "gemm_swiglu_chain", "gemm_gu_sm90", "gemm_gu_lt"};
    static int64_t sm90_variants[8];
    static const char *sm90_names[8];
    const int n_sm90 = q35_gemm_sm90_variant_count() < 8 ? q35_gemm_sm90_variant_count() : 8;
    for (int v = 0; v < n_sm90; v++)
        sm90_variants[v] = v, sm90_names[v] = q35_gemm_sm90_variant_name(v);
    const q35_bench_axis sm90_axis = {"kernel", sm90_variants, n_sm90}; /* gemm_sm90's variants ("variant": gemv's) */
    q35_bench_axis_labels("kernel", sm90_names, n_sm90);
    q35_bench_register("gemm_sm90", bench_gemm, (void *)&k_which[GEMM_SM90],
                       (q35_bench_axis[]){proj_axis, rows_axis, sm90_axis}, 3);
    for (int f = 0; f < 4; f++) { /* the sm_90a families (0, 2) per variant */
        const bool sm90 = f == 0 || f == 2;
        q35_bench_register(ffn_families[f], bench_ffn, (void *)&k_ffn[f],
                           (q35_bench_axis[]){model_axis, ffn_rows_axis, sm90_axis}, sm90 ? 3 : 2);
    }
    q35_bench_register("dequant_f32", bench_bw, (void *)&kinds[0], (q35_bench_axis[]){proj_axis, type_axis}, 2);
    q35_bench_register("dequant_f16", bench_bw, (void *)&kinds[1], (q35_bench_axis[]){proj_axis, type_axis}, 2);
    q35_bench_register("gemv", bench_bw, (void *)&kinds[2], (q35_bench_axis[]){proj_axis, type_axis, variant_axis}, 3);
    q35_bench_register("gemv_q8", bench_bw, (void *)&kinds[4], (q35_bench_axis[]){proj_axis, type_axis, q8_axis}, 3);
    q35_bench_register("gemv_q8_early", bench_bw, (void *)&kinds[6], (q35_bench_axis[]){proj_axis, type_axis, q8_axis},
                       3);
#if Q35_KERNEL_EXPERIMENTS
    q35_bench_register("gemv_q8_q6a", bench_bw, (void *)&kinds[7], (q35_bench_axis[]){proj_axis}, 1);
    q35_bench_register("gemv_q8_q6a_early", bench_bw, (void *)&kinds[8], (q35_bench_axis[]){proj_axis}, 1);
#endif
    q35_bench_register("ceiling/read", bench_bw, (void *)&kinds[5], (q35_bench_axis[]){proj_axis, type_axis}, 2);
    q35_bench_register("gemv_rows", bench_bw, (void *)&kinds[3], (q35_bench_axis[]){proj_axis, {"rows", rows_big, 3}},
                       2);
    q35_bench_context("proj", "9B: 0 attn_qkv 8192x4096, 1 attn_gate 4096x4096, 2 ssm_alpha/beta 32x4096, 3 ssm_out "
                              "4096x4096, 4 attn_q 8192x4096, 5 attn_k/v 1024x4096, 6 attn_output 4096x4096, 7 "
                              "ffn_gate/up 12288x4096, 8 ffn_down 4096x12288, 9 lm_head 248320x4096 (n x k)");
    q35_bench_context("type", "ggml ids: 12 = q4_K, 14 = q6_K, 8 = q8_0, 1 = f16");
    q35_bench_axis_labels("variant", variant_names, n_variants);
    q35_bench_axis_labels("q8_variant", q8_names, n_q8);
    q35_bench_context("variant", "gemv: 0 registers, 1 staged (cp.async through shared memory; other types and "
                                 "unaligned weights run 0); q35_gemv runs 1 for q4_K, q5_K, q6_K, 0 for the rest");
    q35_bench_context("ceilings", "gemm_f32: ceiling/sgemm; gemm_f16: ceiling/hgemm (and hgemm_f16out, hgemm_lt: the fastest "
                                  "of cuBLASLt's candidates, hgemm_lt_f16: its f16-out form); gemm_fp8: ceiling/fp8 (gemm_fp8_bf16, the bf16-out form, like "
                                  "ceiling/fp8 from quantized rows); "
                                  "dequant, "
                                  "gemv: bench_kernels ceiling/d2d_copy (bytes/s); gemm_swiglu_sm90: "
                                  "gemm_swiglu_chain, gemm_gu_sm90: gemm_gu_lt (and ceiling/hgemm); "
                                  "gemm_sm90 (the plain form): ceiling/hgemm_lt");
    char legend[200];
    q35_bench_context("models", q35_bench_model_legend(legend, sizeof legend));
    q35_error why = {{0}};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        snprintf(g_sm90_why, sizeof g_sm90_why, "cudaGetDevice failed");
    else if ((g_sm90 = q35_gemm_sm90_supported(dev, &why)) == 0)
        snprintf(g_sm90_why, sizeof g_sm90_why, "%s", why.msg);
    q35_bench_context("gemm_sm90", g_sm90 ? "sm_90a [gate | up] GEMM: wgmma m64n256k16 + TMA, 128 rows x 128 f a "
                                            "block (128 gate + 128 up rows of w), f32 accumulation; the plain "
                                            "form (family gemm_sm90): 128 rows x 256 output columns a block"
                                          : g_sm90_why);
    memset(&why, 0, sizeof why);
    if (q35_fp8_gemm_create(&g_fp8, NULL, &why)) /* refuses a device without FP8, saying so */
        snprintf(g_fp8_why, sizeof g_fp8_why, "%s", why.msg);
    memset(&why, 0, sizeof why);
    if (q35_hgemm_create(&g_hgemm, NULL, 1, &why))
        snprintf(g_hgemm_why, sizeof g_hgemm_why, "%s", why.msg);
    const int rc = q35_bench_main(argc, argv);
    q35_hgemm_destroy(g_hgemm);
    q35_fp8_gemm_destroy(g_fp8);
    q35_blas_destroy(g_blas);
    return rc;
}
