/* Benchmarks of the attention units at the heads of 0.8B (8 / 2), 9B (16 / 4)
 * and 27B (24 / 4), head_dim 256 (bench/models.h: the shapes table's), causal,
 * over contexts of 512 .. 128k:
 *   flash_chunk    a chunk of 512 query rows at the end of the context over
 *                  f16 caches (q35_attention_prefill_flash_f16: the model's
 *                  flash path; the caches made by q35_kv_append_rows_f16 from
 *                  the f32 fill), per KV
 *                  split (0 = the launcher's choice) and kernel variant
 *                  (kernels/attention_flash.h; named in the benchmark's name,
 *                  variant:base, and the context's flash_variant); FLOP counts
 *                  only visible pairs:
 *                  4 * head_dim * heads * sum_t (pos0 + t + 1);
 *   flash_prompt   a whole prompt as chunks of 512 (contexts up to 32k), over
 *                  f16 caches too;
 *   f32            the f32 path on the same chunk, whole or one part: 1 the
 *                  Q K^T GEMMs, 2 the causal softmax, 3 the P V GEMMs (FLOP of
 *                  a part: the rectangle it computes, masked pairs included);
 *   sgemm          the ceiling for those products: cuBLAS's own choice
 *                  (cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F_PEDANTIC,
 *                  split-K allowed) on the same shapes, as many calls as the
 *                  f32 path makes; shape 1 Q K^T, 3 P V (the f32 parts' ids);
 *   decode         one token over the cache (bytes/s: the K and V rows read
 *                  once; caches rotated so each launch reads past the L2);
 *   decode_rows    64 rows of the deterministic mode (contexts up to 16k);
 *   decode_f16     one token over f16 caches, the fast path's decode step:
 *                  kernel 0 the exact kernel (q35_attention_decode_f16), 1 the
 *                  split one (kernels/attention_decode_split.h, the splits the
 *                  device takes for that cache; counter `splits`); bytes/s as
 *                  decode's, the caches rotated the same way.
 * Points that do not fit the device (or the f32 scores budget's passes) are
 * skipped with the reason. */
#include "bench/gpu_bench.h"
#include "bench/models.h"
#include "kernels/attention_decode.h"
#include "kernels/attention_decode_split.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_flash.h"
#include "kernels/blas.h"
#include "kernels/kv_append.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 512
#define PROMPT_MAX 32768
#define ROWS_MAX 16384
#define DECODE_ROWS 64
#define ROTATE_BYTES ((size_t)256 << 20) /* decode: caches rotated until this much is touched */
#define MAX_COPIES 128
#define MAX_VARIANTS 16

static q35_blas g_blas;
static const int k_chunk = 0, k_prompt = 1, k_path = 0, k_sgemm = 1, k_token = 0, k_rows = 1; /* the ctx flags */

static q35_attn_shape shape_of(const q35_shape *m)
{
    const q35_attn_shape s = {m->n_head, m->n_head_kv, m->head_dim, (int64_t)m->n_head * m->head_dim,
                              (int64_t)m->n_head * m->head_dim, (int64_t)m->n_head_kv * m->head_dim,
                              (float)(1.0 / sqrt((double)m->head_dim))};
    return s;
}

/* q and o of T rows, the caches of n_ctx rows (`copies` of each). */
typedef struct att_bufs {
    q35_attn_shape s;
    float *q, *o;
    float *k[MAX_COPIES], *v[MAX_COPIES];
    int copies;
} att_bufs;

static void bufs_free(att_bufs *b)
{
    q35_bench_free(b->q), q35_bench_free(b->o);
    for (int i = 0; i < b->copies; i++)
        q35_bench_free(b->k[i]), q35_bench_free(b->v[i]);
}

static int bufs_alloc(att_bufs *b, const q35_shape *m, int64_t n_ctx, int64_t T, int copies, q35_bench_state *st)
{
    b->s = shape_of(m);
    b->copies = 0;
    const size_t cache = (size_t)n_ctx * (size_t)b->s.kv_stride * sizeof(float);
    if (!(b->q = q35_bench_try_alloc((size_t)T * b->s.q_stride * sizeof(float), st)))
        return -1;
    if (!(b->o = q35_bench_try_alloc((size_t)T * b->s.o_stride * sizeof(float), st))) {
        q35_bench_free(b->q);
        return -1;
    }
    for (int i = 0; i < copies; i++) {
        if (!(b->k[i] = q35_bench_try_alloc(cache, st)))
            break;
        if (!(b->v[i] = q35_bench_try_alloc(cache, st))) {
            q35_bench_free(b->k[i]);
            break;
        }
        b->copies++;
    }
    if (b->copies < copies) {
        bufs_free(b);
        return -1;
    }
    return 0;
}

/* ---- flash --------------------------------------------------------------------- */

struct flash_ctx {
    att_bufs b;
    uint16_t *k16, *v16; /* the f16 caches of n_ctx rows (b's f32 ones rounded) */
    int64_t n_ctx, T; /* the chunk is rows n_ctx - T .. n_ctx - 1; prompt: chunks of T up to n_ctx */
    int split, variant, prompt;
};

static int flash_launch(void *p, q35_error *err)
{
    struct flash_ctx *c = p;
    const q35_flash_options opt = {.variant = c->variant, .split = c->split};
    if (!c->prompt)
        return q35_attention_prefill_flash_f16(c->b.o, c->b.q, c->k16, c->v16, c->n_ctx - c->T, c->T, c->b.s, &opt,
                                               NULL, err);
    for (int64_t r0 = 0; r0 < c->n_ctx; r0 += c->T) {
        const int64_t rows = c->n_ctx - r0 < c->T ? c->n_ctx - r0 : c->T;
        if (q35_attention_prefill_flash_f16(c->b.o, c->b.q, c->k16, c->v16, r0, rows, c->b.s, &opt, NULL, err))
            return -1;
    }
    return 0;
}

static void bench_flash(q35_bench_state *st, void *which)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct flash_ctx c = {.n_ctx = q35_bench_arg(st, 1), .prompt = *(const int *)which == k_prompt};
    c.T = c.n_ctx < CHUNK ? c.n_ctx : CHUNK;
    c.split = c.prompt ? 0 : (int)q35_bench_arg(st, 2);
    c.variant = c.prompt ? Q35_VARIANT_DEFAULT : (int)q35_bench_arg(st, 3); /* a prompt runs the default */
    if (c.prompt && c.n_ctx > PROMPT_MAX) {
        q35_bench_skip(st, "a whole prompt past 32k takes too long per iteration: see flash_chunk");
        while (q35_bench_keep_running(st))
            ;
        return;
    }
    q35_error why = {{0}};
    int dev = 0;
    if (!c.prompt && (cudaGetDevice(&dev) != cudaSuccess ||
                      !q35_attention_flash_supported(dev, shape_of(m), c.variant, &why))) {
        q35_bench_skip(st, why.msg[0] ? why.msg : "cudaGetDevice failed");
        while (q35_bench_keep_running(st))
            ;
        return;
    }
    if (bufs_alloc(&c.b, m, c.n_ctx, c.T, 1, st))
        return;
    const size_t half_cache = (size_t)c.n_ctx * (size_t)c.b.s.kv_stride * 2;
    if (!(c.k16 = q35_bench_try_alloc(half_cache, st))) {
        bufs_free(&c.b);
        return;
    }
    if (!(c.v16 = q35_bench_try_alloc(half_cache, st))) {
        q35_bench_free(c.k16), bufs_free(&c.b);
        return;
    }
    q35_error err = {{0}};
    if (q35_kv_append_rows_f16(c.k16, c.v16, c.b.s.kv_stride, c.n_ctx, c.b.k[0], c.b.v[0], c.b.s.kv_stride,
                               c.b.s.kv_stride, 0, c.n_ctx, NULL, &err)) {
        q35_bench_skip(st, err.msg);
        while (q35_bench_keep_running(st))
            ;
    } else
        q35_bench_time(st, flash_launch, &c);
    q35_bench_rate(st, "FLOP",
                   c.prompt ? q35_bench_attn_flop(m, 0, c.n_ctx) : q35_bench_attn_flop(m, c.n_ctx - c.T, c.T));
    q35_bench_rate(st, "rows", (double)(c.prompt ? c.n_ctx : c.T));
    q35_bench_free(c.k16), q35_bench_free(c.v16);
    bufs_free(&c.b);
}

/* ---- f32 path and its SGEMM ceiling -------------------------------------------- */

struct f32_ctx {
    att_bufs b;
    float *scores;
    int64_t n_ctx, T, pass_rows;
    unsigned parts;
    int sgemm; /* 0: the f32 path; 1 or 3: cuBLAS's own GEMM of that part's shape */
};

/* The f32 path's products with cuBLAS choosing freely: per KV group and pass,
 * Q K^T (m = n_ctx, n = rows, k = 256) or P V (m = 256, n = rows, k = n_ctx),
 * batched over the group's heads. */
static int sgemm_launch(struct f32_ctx *c, q35_error *err)
{
    const q35_attn_shape s = c->b.s;
    const int hpk = s.heads / s.kv_heads, hd = s.head_dim;
    const int64_t ld = (c->n_ctx + 31) / 32 * 32;
    const float one = 1.0f, zero = 0.0f;
    for (int g = 0; g < s.kv_heads; g++)
        for (int64_t r0 = 0; r0 < c->T; r0 += c->pass_rows) {
            const int rows = (int)(c->T - r0 < c->pass_rows ? c->T - r0 : c->pass_rows);
            const float *kv = (c->sgemm == 1 ? c->b.k[0] : c->b.v[0]) + (int64_t)g * hd;
            cublasStatus_t e;
            if (c->sgemm == 1)
                e = cublasGemmStridedBatchedEx(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)c->n_ctx, rows, hd, &one, kv,
                                               CUDA_R_32F, (int)s.kv_stride, 0, c->b.q + r0 * s.q_stride + g * hpk * hd,
                                               CUDA_R_32F, (int)s.q_stride, hd, &zero, c->scores, CUDA_R_32F, (int)ld,
                                               rows * ld, hpk, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
            else
                e = cublasGemmStridedBatchedEx(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, (int)c->n_ctx, &one, kv,
                                               CUDA_R_32F, (int)s.kv_stride, 0, c->scores, CUDA_R_32F, (int)ld,
                                               rows * ld, &zero, c->b.o + r0 * s.o_stride + g * hpk * hd, CUDA_R_32F,
                                               (int)s.o_stride, hd, hpk, CUBLAS_COMPUTE_32F_PEDANTIC,
                                               CUBLAS_GEMM_DEFAULT);
            if (Q35_CUBLAS_CHECK(e, err))
                return -1;
        }
    return 0;
}

static int f32_launch(void *p, q35_error *err)
{
    struct f32_ctx *c = p;
    if (c->sgemm)
        return sgemm_launch(c, err);
    return q35_attention_prefill_f32_parts(c->parts, g_blas, c->b.o, c->b.q, c->b.k[0], c->b.v[0], c->n_ctx - c->T,
                                           c->T, c->scores, c->pass_rows, c->b.s, err);
}

static void bench_f32(q35_bench_state *st, void *which)
{
    static const unsigned parts[] = {Q35_ATTN_F32_ALL, Q35_ATTN_F32_QK, Q35_ATTN_F32_SOFTMAX, Q35_ATTN_F32_PV};
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    const int part = (int)q35_bench_arg(st, 2);
    struct f32_ctx c = {.n_ctx = q35_bench_arg(st, 1), .parts = parts[part], .sgemm = *(const int *)which == k_sgemm ? part : 0};
    c.T = c.n_ctx < CHUNK ? c.n_ctx : CHUNK;
    const q35_attn_shape s = shape_of(m);
    c.pass_rows = q35_attention_f32_pass_rows(s, c.T, c.n_ctx, Q35_ATTN_SCORES_BUDGET);
    if (bufs_alloc(&c.b, m, c.n_ctx, c.T, 1, st))
        return;
    if (!(c.scores = q35_bench_try_alloc(q35_attention_f32_scores_bytes(s, c.pass_rows, c.n_ctx), st))) {
        bufs_free(&c.b);
        return;
    }
    q35_bench_time(st, f32_launch, &c);
    const double rect = 2.0 * m->head_dim * m->n_head * (double)c.T * (double)c.n_ctx; /* masked pairs too */
    const double elems = (double)m->n_head * (double)c.T * (double)c.n_ctx;
    if (part == 0)
        q35_bench_rate(st, "FLOP", q35_bench_attn_flop(m, c.n_ctx - c.T, c.T)); /* visible pairs, as flash counts */
    else if (part == 2)
        q35_bench_rate(st, "bytes", 16.0 * elems); /* three reads and one write of each score */
    else
        q35_bench_rate(st, "FLOP", rect);
    q35_bench_value(st, "passes", (double)((c.T + c.pass_rows - 1) / c.pass_rows));
    q35_bench_free(c.scores);
    bufs_free(&c.b);
}

/* ---- decode -------------------------------------------------------------------- */

struct decode_ctx {
    att_bufs b;
    int64_t n_ctx, T;
    int next; /* the cache copy of the next launch */
};

static int decode_launch(void *p, q35_error *err)
{
    struct decode_ctx *c = p;
    const int i = c->next;
    c->next = (c->next + 1) % c->b.copies;
    return q35_attention_decode_rows(c->b.o, c->b.q, c->b.k[i], c->b.v[i], c->n_ctx - c->T, c->T, c->b.s,
                                     Q35_VARIANT_DEFAULT, NULL, err);
}

static void bench_decode(q35_bench_state *st, void *which)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    const int rows = *(const int *)which == k_rows;
    struct decode_ctx c = {.n_ctx = q35_bench_arg(st, 1), .T = rows ? DECODE_ROWS : 1};
    if (rows && c.n_ctx > ROWS_MAX) {
        q35_bench_skip(st, "64 deterministic rows past 16k take too long per iteration");
        while (q35_bench_keep_running(st))
            ;
        return;
    }
    if (c.T > c.n_ctx)
        c.T = c.n_ctx;
    const size_t cache = 2 * (size_t)c.n_ctx * (size_t)m->n_head_kv * (size_t)m->head_dim * sizeof(float);
    int copies = (int)(ROTATE_BYTES / cache) + 1;
    copies = copies > MAX_COPIES ? MAX_COPIES : copies;
    if (bufs_alloc(&c.b, m, c.n_ctx, c.T, copies, st))
        return;
    q35_bench_time(st, decode_launch, &c);
    q35_bench_rate(st, "bytes", (double)cache);
    q35_bench_rate(st, "FLOP", q35_bench_attn_flop(m, c.n_ctx - c.T, c.T));
    q35_bench_rate(st, "rows", (double)c.T);
    bufs_free(&c.b);
}

struct decode16_ctx {
    q35_attn_shape s;
    float *q, *o;
    uint16_t *k[MAX_COPIES], *v[MAX_COPIES];
    void *work;
    int copies, next, splits; /* splits 0: the exact kernel */
    int64_t n_ctx;
};

static int decode16_launch(void *p, q35_error *err)
{
    struct decode16_ctx *c = p;
    const int i = c->next;
    c->next = (c->next + 1) % c->copies;
    return c->splits ? q35_attention_decode_split_f16(c->o, c->q, c->k[i], c->v[i], c->n_ctx, c->s, c->splits, c->work,
                                                      NULL, err)
                     : q35_attention_decode_f16(c->o, c->q, c->k[i], c->v[i], c->n_ctx, c->s, NULL, err);
}

static void bench_decode_f16(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct decode16_ctx c = {.s = shape_of(m), .n_ctx = q35_bench_arg(st, 1)};
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        q35_bench_skip(st, "cannot read the device's multiprocessor count");
        while (q35_bench_keep_running(st))
            ;
        return;
    }
    c.splits = q35_bench_arg(st, 2) ? q35_attention_decode_split_count(c.s, c.n_ctx, sms) : 0;
    const size_t half = (size_t)c.n_ctx * (size_t)c.s.kv_stride * 2, cache = 2 * half;
    int copies = (int)(ROTATE_BYTES / cache) + 1;
    copies = copies > MAX_COPIES ? MAX_COPIES : copies;
    const size_t work = c.splits ? q35_attention_decode_split_work_bytes(c.s, c.splits) : 16;
    bool ok = (c.q = q35_bench_try_alloc((size_t)c.s.q_stride * sizeof(float), st)) &&
              (c.o = q35_bench_try_alloc((size_t)c.s.o_stride * sizeof(float), st)) &&
              (c.work = q35_bench_try_alloc(work, st));
    for (; ok && c.copies < copies; c.copies++) { /* halves of 1.06 (0x3c3c): finite scores */
        if (!(c.k[c.copies] = q35_bench_try_alloc(half, st)) || !(c.v[c.copies] = q35_bench_try_alloc(half, st))) {
            q35_bench_free(c.k[c.copies]);
            ok = false;
            break;
        }
        q35_bench_check(cudaMemset(c.k[c.copies], 0x3c, half), "cudaMemset (K)");
        q35_bench_check(cudaMemset(c.v[c.copies], 0x3c, half), "cudaMemset (V)");
    }
    if (ok) { /* (a failed allocation skipped the point, naming the size) */
        q35_bench_time(st, decode16_launch, &c);
        q35_bench_rate(st, "bytes", (double)cache);
        q35_bench_rate(st, "FLOP", q35_bench_attn_flop(m, c.n_ctx - 1, 1));
        q35_bench_value(st, "splits", c.splits);
    }
    for (int i = 0; i < c.copies; i++)
        q35_bench_free(c.k[i]), q35_bench_free(c.v[i]);
    q35_bench_free(c.q), q35_bench_free(c.o), q35_bench_free(c.work);
}

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init_blas(&argc, argv, &g_blas))
        return 1;
    static const int64_t contexts[] = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    static const int64_t splits[] = {0, 1}, parts[] = {0, 1, 2, 3}, gemms[] = {1, 3};
    static int64_t variants[MAX_VARIANTS];
    static const char *variant_labels[MAX_VARIANTS];
    char variant_names[400];
    const int n_variants = q35_attention_flash_variant_count() < MAX_VARIANTS ? q35_attention_flash_variant_count()
                                                                               : MAX_VARIANTS;
    int dev = 0;
    const int default_variant = cudaGetDevice(&dev) == cudaSuccess
                                    ? q35_attention_flash_variant_default(dev, shape_of(q35_bench_model(1)))
                                    : -1;
    for (int v = 0; v < n_variants; v++) {
        variants[v] = v;
        variant_labels[v] = q35_attention_flash_variant_name(v);
    }
    q35_variant_list(q35_attention_flash_variant_count, q35_attention_flash_variant_name,
                     q35_attention_flash_variant_production, default_variant, variant_names, sizeof variant_names);
    const q35_bench_axis model = q35_bench_model_axis(), ctx = {"ctx", contexts, 9};
    q35_bench_register("flash_chunk", bench_flash, (void *)&k_chunk,
                       (q35_bench_axis[]){model, ctx, {"split", splits, 2}, {"variant", variants, n_variants}}, 4);
    q35_bench_register("flash_prompt", bench_flash, (void *)&k_prompt, (q35_bench_axis[]){model, ctx}, 2);
    q35_bench_register("f32", bench_f32, (void *)&k_path, (q35_bench_axis[]){model, ctx, {"part", parts, 4}}, 3);
    q35_bench_register("sgemm", bench_f32, (void *)&k_sgemm, (q35_bench_axis[]){model, ctx, {"shape", gemms, 2}}, 3);
    q35_bench_register("decode", bench_decode, (void *)&k_token, (q35_bench_axis[]){model, ctx}, 2);
    q35_bench_register("decode_rows", bench_decode, (void *)&k_rows, (q35_bench_axis[]){model, ctx}, 2);
    static const int64_t kernels[] = {0, 1};
    q35_bench_register("decode_f16", bench_decode_f16, NULL, (q35_bench_axis[]){model, ctx, {"kernel", kernels, 2}},
                       3);
    q35_bench_axis_labels("variant", variant_labels, n_variants); /* flash_chunk/.../variant:pair_async */
    char models[256] = "";
    for (int i = 0; i < q35_bench_model_count(); i++) { /* "0 = 0.8B (8 heads / 2 kv), 1 = 9B (16 / 4), ..." */
        const q35_shape *m = q35_bench_model(i);
        char label[16];
        const size_t at = strlen(models);
        snprintf(models + at, sizeof models - at, i ? ", %d = %s (%d / %d)" : "%d = %s (%d heads / %d kv)", i,
                 q35_bench_model_label(i, label, sizeof label), m->n_head, m->n_head_kv);
    }
    const size_t at = strlen(models);
    snprintf(models + at, sizeof models - at, "; head_dim %d", q35_bench_model(0)->head_dim);
    q35_bench_context("models", models);
    q35_bench_context("flash_split", "0 = the launcher's choice, 1 = no KV split");
    q35_bench_context("flash_variant", variant_names);
    q35_bench_context("f32_part", "0 = all, 1 = Q K^T GEMMs, 2 = causal softmax, 3 = P V GEMMs");
    q35_bench_context("decode_f16_kernel", "0 = the exact kernel (attention_decode.h), 1 = split over the cache "
                      "(attention_decode_split.h)");
    q35_bench_context("sgemm_shape", "1 = the Q K^T products, 3 = the P V products, cuBLAS choosing freely");
    const int rc = q35_bench_main(argc, argv);
    q35_blas_destroy(g_blas);
    return rc;
}
