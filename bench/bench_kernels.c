/* Benchmarks of the DeltaNet and pointwise units at the real shapes: the delta
 * rule, by the scan and by the chunked form beside it, conv1d, the DeltaNet
 * prologue (fused, and the unfused chain beside it), the norms (the residual
 * add + RMSNorm as two launches and fused; the gated RMSNorm of the DeltaNet
 * heads, f32 or f16 out), the attention prologue on the f16 cache path (fused,
 * and the six-launch chain it replaces), the ops that write a GEMM's input by
 * their output (f32, f16, f32 + the FP8 quantization, the fused FP8 form); and
 * the device-to-device copy as the bandwidth ceiling (gpu_ceilings.h's). Each
 * reports time, FLOP/s and bytes/s counted from the shape. The fused DeltaNet
 * prologue and the gated norm's FP8 form are experiments (kernels/experiments/):
 * their names are the same in every build, their points skipped, saying so,
 * where the experiments are not built. */
#include "bench/gpu_bench.h"
#include "bench/models.h"
#include "kernels/attn_prep.h"
#include "kernels/conv1d.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_rule.h"
#include "kernels/delta_prep.h"
#include "kernels/experiments/delta_prep.h"
#include "kernels/experiments/gated_rmsnorm_fast.h"
#include "kernels/experiments/gated_rmsnorm_fp8.h"
#include "kernels/fp8.h"
#include "kernels/gated_rmsnorm.h"
#include "kernels/gates.h"
#include "kernels/kv_append.h"
#include "kernels/l2norm.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The fused-or-chain benchmarks' argument: the fused op, or the launches it replaces. */
static const int k_fused = 0, k_chain = 1, k_run = 2, k_fast = 3;

struct delta_ctx {
    float *o, *S, *rows, *g, *beta;
    int64_t stride, T;
    q35_delta_dims d;
    int variant;    /* the scan's or the chunked form's */
    int chunked;    /* 1: the chunked form; 2: it with q and k as f16 in its workspace (q35_delta_chunk_qk16) */
    void *ws;       /* the chunked form's workspace */
    size_t ws_bytes;
};

static int scan_launch(void *p, q35_error *err)
{
    struct delta_ctx *c = p;
    const int64_t kd = (int64_t)c->d.hk * c->d.dk;
    return q35_delta_rule_scan(c->o, (int64_t)c->d.hv * c->d.dv, c->S, c->rows, c->rows + kd, c->rows + 2 * kd,
                               c->stride, c->g, c->beta, c->T, c->d, c->variant, NULL, err);
}

/* The chunked form with q and k already f16 in the workspace, as the model's
 * fused prologue leaves them (q35_delta_prep_rows_qk16): v, g, beta in f32. */
static int chunk_qk16_launch(void *p, q35_error *err)
{
    struct delta_ctx *c = p;
    const int64_t kd = (int64_t)c->d.hk * c->d.dk;
    return q35_delta_chunk_qk16(c->o, (int64_t)c->d.hv * c->d.dv, c->S, c->rows + 2 * kd, c->stride, c->g, c->beta,
                                c->T, c->d, c->ws, c->ws_bytes, c->variant, NULL, err);
}

static int chunk_launch(void *p, q35_error *err)
{
    struct delta_ctx *c = p;
    const int64_t kd = (int64_t)c->d.hk * c->d.dk;
    return q35_delta_chunk(c->o, (int64_t)c->d.hv * c->d.dv, c->S, c->rows, c->rows + kd, c->rows + 2 * kd, c->stride,
                           c->g, c->beta, c->T, c->d, c->ws, c->ws_bytes, c->variant, NULL, err);
}

/* The delta rule over T rows of a model's DeltaNet heads, by a variant of the
 * scan or of the chunked form: q and k heads of unit norm, a decay and a gain
 * in range (the state stays finite). FLOP: the scan's 7 per token and state
 * element (decay 1, S.k 2, update 2, S.q 2); the chunked form's per chunk of C =
 * 64 and value head, 2 x (2 C^2 dk [k.k, q.k] + C^3 / 3 [T] + C^2 (dk + dv) [W, U]
 * + 3 C dk dv [D, Q S^T, the state] + C^2 dv [P D]). Bytes: what either must
 * move (q, k, v, g, beta in, o out, the state in and out), not the chunked
 * form's workspace. chunked 2 (delta_chunk_qk16): q and k f16 in the
 * workspace, written there once before the timing by an untimed call of the
 * f32 form (whose parallel pass writes them in the layout the qk16 form reads;
 * the model's prologue writes the same), so counted at 2 bytes a value:
 * variants of tb4's formulation only, the others skipped saying so. */
static void bench_delta(q35_bench_state *st, int chunked, int variant)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    q35_error err = {{0}};
    struct delta_ctx c = {.T = q35_bench_arg(st, 1), .d = {m->ssm_hk, m->ssm_hv, m->ssm_dk, m->ssm_dv},
                          .variant = variant, .chunked = chunked};
    const int64_t vd = (int64_t)m->ssm_hv * m->ssm_dv, ns = vd * m->ssm_dk;
    c.stride = 2 * (int64_t)m->ssm_hk * m->ssm_dk + vd;
    c.rows = q35_bench_alloc((size_t)(c.T * c.stride) * 4);
    c.o = q35_bench_alloc((size_t)(c.T * vd) * 4);
    c.S = q35_bench_alloc((size_t)ns * 4);
    c.g = q35_bench_alloc((size_t)(c.T * m->ssm_hv) * 4);
    c.beta = q35_bench_alloc((size_t)(c.T * m->ssm_hv) * 4);
    q35_bench_fill(c.g, (size_t)(c.T * m->ssm_hv), -0.1f);
    q35_bench_fill(c.beta, (size_t)(c.T * m->ssm_hv), 0.5f);
    if (chunked) {
        c.ws_bytes = q35_delta_chunk_workspace_bytes(c.T, c.d);
        c.ws = q35_bench_alloc(c.ws_bytes);
    }
    if (chunked == 2 && !q35_delta_chunk_variant_takes_qk16(variant))
        q35_bench_skip(st, "this variant takes q and k in f32 only (q35_delta_chunk_variant_takes_qk16)");
    else if (q35_l2norm_rows(c.rows, m->ssm_dk, 2 * m->ssm_hk, c.T, c.stride, 1e-6f, NULL, &err) ||
             (chunked == 2 && chunk_launch(&c, &err)))
        q35_bench_skip(st, err.msg);
    else
        q35_bench_time(st, chunked == 2 ? chunk_qk16_launch : chunked ? chunk_launch : scan_launch, &c);
    const double C = Q35_DELTA_CHUNK, dk = m->ssm_dk, dv = m->ssm_dv, chunks = (double)((c.T + 63) / 64) * m->ssm_hv;
    q35_bench_rate(st, "FLOP",
                   chunked ? 2.0 * chunks * (2 * C * C * dk + C * C * C / 3 + C * C * (dk + dv) + 3 * C * dk * dv +
                                                 C * C * dv)
                               : 7.0 * (double)ns * (double)c.T);
    const double qk_bytes = chunked == 2 ? 2.0 : 4.0;
    const double bytes = (double)c.T * 2.0 * m->ssm_hk * dk * qk_bytes +
                         4.0 * ((double)c.T * (2.0 * vd + 2.0 * m->ssm_hv) + 2.0 * ns);
    q35_bench_rate(st, "bytes", bytes);
    q35_bench_pct_of(st, Q35_CEILING_COPY, bytes);
    q35_bench_rate(st, "tokens", (double)c.T);
    q35_bench_free(c.rows), q35_bench_free(c.o), q35_bench_free(c.S), q35_bench_free(c.g), q35_bench_free(c.beta);
    if (c.ws)
        q35_bench_free(c.ws);
}

static void bench_scan(q35_bench_state *st, void *unused)
{
    (void)unused;
    bench_delta(st, 0, (int)q35_bench_arg(st, 2));
}

static void bench_chunk(q35_bench_state *st, void *unused)
{
    (void)unused;
    bench_delta(st, 1, (int)q35_bench_arg(st, 2));
}

static void bench_chunk_qk16(q35_bench_state *st, void *unused)
{
    (void)unused;
    bench_delta(st, 2, (int)q35_bench_arg(st, 2));
}

struct conv_ctx {
    float *y, *win, *u, *w;
    int64_t C, T;
};

static int conv_launch(void *p, q35_error *err)
{
    struct conv_ctx *c = p;
    return q35_conv1d_silu_rows(c->y, c->C, c->win, c->u, c->C, c->w, c->C, 4, c->T, NULL, err);
}

static void bench_conv(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct conv_ctx c = {.C = 2 * (int64_t)m->ssm_hk * m->ssm_dk + (int64_t)m->ssm_hv * m->ssm_dv,
                         .T = q35_bench_arg(st, 1)};
    c.u = q35_bench_alloc((size_t)(c.T * c.C) * 4);
    c.y = q35_bench_alloc((size_t)(c.T * c.C) * 4);
    c.win = q35_bench_alloc((size_t)(3 * c.C) * 4);
    c.w = q35_bench_alloc((size_t)(4 * c.C) * 4);
    q35_bench_time(st, conv_launch, &c);
    q35_bench_rate(st, "FLOP", 8.0 * (double)c.C * (double)c.T);
    q35_bench_rate(st, "bytes", 4.0 * (2.0 * (double)c.C * (double)c.T + 10.0 * (double)c.C));
    q35_bench_free(c.u), q35_bench_free(c.y), q35_bench_free(c.win), q35_bench_free(c.w);
}

struct dprep_ctx {
    float *mix, *out, *g, *beta, *win, *w, *dt, *a; /* the fused call's */
    float *alpha, *b;                               /* the chain's gates read them packed, [T][hv] */
    int64_t T, in_stride, alpha_col, b_col;
    q35_delta_prep_dims d;
    int run;  /* -1: q35_delta_prep_rows; 0, 1: the experiment's run (kernels/experiments/delta_prep.h) */
    int fast;  /* the experiment's fast SiLU (q35_delta_prep_rows_fast_silu) */
};

/* The fused unit (kernels/delta_prep.h), or the experiment with its run chosen. */
static int dprep_launch(void *p, q35_error *err)
{
    struct dprep_ctx *c = p;
    if (c->run >= 0 || c->fast) {
#if Q35_KERNEL_EXPERIMENTS
        if (c->fast)
            return q35_delta_prep_rows_fast_silu(c->out, c->d.conv_dim, c->g, c->beta, c->win, c->mix, c->in_stride,
                                                 c->alpha_col, c->b_col, c->w, c->dt, c->a, c->d, c->T, 1e-6f, NULL,
                                                 err);
        return q35_delta_prep_rows_run(c->run, c->out, c->d.conv_dim, c->g, c->beta, c->win, c->mix, c->in_stride,
                                       c->alpha_col, c->b_col, c->w, c->dt, c->a, c->d, c->T, 1e-6f, NULL, err);
#else
        return q35_fail(err, "delta_prep_rows_run / _fast_silu: an experiment, not built (Q35_KERNEL_EXPERIMENTS off)");
#endif
    }
    return q35_delta_prep_rows(c->out, c->d.conv_dim, c->g, c->beta, c->win, c->mix, c->in_stride, c->alpha_col,
                               c->b_col, c->w, c->dt, c->a, c->d, c->T, 1e-6f, NULL, err);
}

/* The chain it replaces (model/cuda_layers.c with the switch prep=off: conv1d, l2norm_qk, gates). */
static int dprep_chain_launch(void *p, q35_error *err)
{
    struct dprep_ctx *c = p;
    const q35_delta_prep_dims d = c->d;
    return q35_conv1d_silu_rows(c->out, d.conv_dim, c->win, c->mix, c->in_stride, c->w, d.conv_dim, d.K, c->T, NULL,
                                err) ||
                   q35_l2norm_rows(c->out, d.dk, 2 * d.hk, c->T, d.conv_dim, 1e-6f, NULL, err) ||
                   q35_gates_rows(c->g, c->beta, c->alpha, c->b, d.hv, c->dt, c->a, d.hv, c->T, NULL, err)
               ? -1
               : 0;
}

/* The prologue's buffers over T rows of model m's layout (bench_delta_prep's and bench_prep_chunk's). */
static void dprep_setup(struct dprep_ctx *c, const q35_shape *m, int64_t T)
{
    *c = (struct dprep_ctx){.T = T,
                            .run = -1,
                            .d = {2 * (int64_t)m->ssm_hk * m->ssm_dk + (int64_t)m->ssm_hv * m->ssm_dv, m->conv_kernel,
                                  m->ssm_hk, m->ssm_dk, m->ssm_hv}};
    const int64_t C = c->d.conv_dim, K = c->d.K, nh = c->T * c->d.hv;
    c->alpha_col = C + (int64_t)m->ssm_hv * m->ssm_dv;
    c->b_col = c->alpha_col + c->d.hv;
    c->in_stride = (c->b_col + c->d.hv + 3) / 4 * 4;
    c->mix = q35_bench_alloc((size_t)(c->T * c->in_stride) * 4);
    c->out = q35_bench_alloc((size_t)(c->T * C) * 4);
    c->g = q35_bench_alloc((size_t)nh * 4), c->beta = q35_bench_alloc((size_t)nh * 4);
    c->alpha = q35_bench_alloc((size_t)nh * 4), c->b = q35_bench_alloc((size_t)nh * 4);
    c->win = q35_bench_alloc((size_t)(C * (K - 1)) * 4);
    c->w = q35_bench_alloc((size_t)(C * K) * 4);
    c->dt = q35_bench_alloc((size_t)c->d.hv * 4), c->a = q35_bench_alloc((size_t)c->d.hv * 4);
    q35_bench_fill(c->a, (size_t)c->d.hv, -1.0f);
}

static void dprep_free(struct dprep_ctx *c)
{
    float *bufs[] = {c->mix, c->out, c->g, c->beta, c->alpha, c->b, c->win, c->w, c->dt, c->a};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        q35_bench_free(bufs[i]);
}

/* The DeltaNet prologue over T merged projection rows [qkv | z | alpha | b] of a
 * model's layout, fused or as the chain. Bytes as each moves them (C = conv_dim):
 * both 4 (2 T C) through the conv, 16 T hv through the gates and 4 (2K - 1) C of
 * taps and window; the chain 16 T hk dk more (the norm reads and writes the q/k
 * heads again). The fused kernel's halo rows, read again from L2, are not counted.
 * arg: &k_fused or &k_chain, or &k_run (delta_prep_run: the experiment, its
 * run the third axis), or &k_fast (delta_prep_fast_silu: the experiment's fast
 * SiLU form). */
static void bench_delta_prep(q35_bench_state *st, void *arg)
{
    const int fused = *(const int *)arg != k_chain;
    struct dprep_ctx c;
    dprep_setup(&c, q35_bench_model((int)q35_bench_arg(st, 0)), q35_bench_arg(st, 1));
    if (*(const int *)arg == k_run)
        c.run = (int)q35_bench_arg(st, 2);
    c.fast = *(const int *)arg == k_fast;
    const int64_t C = c.d.conv_dim, K = c.d.K;
    q35_bench_time(st, fused ? dprep_launch : dprep_chain_launch, &c);
    const double T = (double)c.T, hv = (double)c.d.hv;
    const double moved = 4.0 * (2.0 * T * (double)C + 4.0 * T * hv + (2.0 * (double)K - 1.0) * (double)C) +
                         (fused ? 0.0 : 16.0 * T * (double)c.d.hk * (double)c.d.dk);
    q35_bench_rate(st, "bytes", moved);
    q35_bench_pct_of(st, Q35_CEILING_COPY, moved);
    q35_bench_rate(st, "tokens", T);
    dprep_free(&c);
}

struct pchunk_ctx {
    struct dprep_ctx p; /* the prologue's; its out [T][conv_dim] the rule's q, k, v */
    float *o, *S;
    void *ws;
    size_t ws_bytes;
    q35_delta_dims d;
    int variant, qk16;
};

/* The fused prologue then the chunked rule, as the model's chunk runs them:
 * q and k through out in f32, or (qk16) in f16 straight into the rule's workspace. */
static int pchunk_launch(void *arg, q35_error *err)
{
    struct pchunk_ctx *c = arg;
    const struct dprep_ctx *p = &c->p;
    const int64_t C = p->d.conv_dim, kd = (int64_t)c->d.hk * c->d.dk, ldo = (int64_t)c->d.hv * c->d.dv;
    if (c->qk16) {
        const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(p->T, c->d);
        char *ws = c->ws;
        return q35_delta_prep_rows_qk16(p->out, C, (uint16_t *)(ws + L.q), (uint16_t *)(ws + L.k), p->g, p->beta,
                                        p->win, p->mix, p->in_stride, p->alpha_col, p->b_col, p->w, p->dt, p->a, p->d,
                                        p->T, 1e-6f, NULL, err) ||
                       q35_delta_chunk_qk16(c->o, ldo, c->S, p->out + 2 * kd, C, p->g, p->beta, p->T, c->d, c->ws,
                                            c->ws_bytes, c->variant, NULL, err)
                   ? -1
                   : 0;
    }
    return dprep_launch(&c->p, err) || q35_delta_chunk(c->o, ldo, c->S, p->out, p->out + kd, p->out + 2 * kd, C,
                                                       p->g, p->beta, p->T, c->d, c->ws, c->ws_bytes, c->variant, NULL,
                                                       err)
               ? -1
               : 0;
}

/* A DeltaNet layer's prologue and chunked rule over T rows (args: model, rows,
 * qk16 0/1, the rule's variant), the pair model/cuda_layers.c runs with and
 * with the switch qk16=off and without. Bytes: what the pair's design moves through
 * memory at the least, each tensor written once and read once by each pass
 * that takes it (C = conv_dim, tb4's formulation): the merged rows' qkv, alpha and b in (4 T (C + 2 hv)); v out
 * of the prologue and into the rule (2 x 4 T hv dv); q and k: f32 out of the
 * prologue and into the parallel pass, then f16 out of it and into the state
 * pass (2 x 4 x 2 T hk dk + 2 x 2 x 2 T hk dk), or (qk16) f16 out of the
 * prologue and into both passes (3 x 2 x 2 T hk dk); P and T beta
 * out and in (2 x 2 x 2 T hv 64); g, beta out and in (2 x 2 x 4 T hv); o out (4
 * T hv dv); the state in and out (2 x 4 hv dv dk). Against the copy ceiling:
 * how near the pair is to memory-bound. */
static void bench_prep_chunk(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct pchunk_ctx c = {.d = {m->ssm_hk, m->ssm_hv, m->ssm_dk, m->ssm_dv},
                           .qk16 = (int)q35_bench_arg(st, 2),
                           .variant = (int)q35_bench_arg(st, 3)};
    dprep_setup(&c.p, m, q35_bench_arg(st, 1));
    const int64_t ns = (int64_t)m->ssm_hv * m->ssm_dv * m->ssm_dk;
    c.o = q35_bench_alloc((size_t)(c.p.T * m->ssm_hv * m->ssm_dv) * 4);
    c.S = q35_bench_alloc((size_t)ns * 4);
    c.ws_bytes = q35_delta_chunk_workspace_bytes(c.p.T, c.d);
    c.ws = q35_bench_alloc(c.ws_bytes);
    q35_bench_time(st, pchunk_launch, &c);
    const double T = (double)c.p.T, C = (double)c.p.d.conv_dim, hk = m->ssm_hk, hv = m->ssm_hv;
    const double dk = m->ssm_dk, dv = m->ssm_dv, qk = 2.0 * T * hk * dk;
    const double bytes = 4.0 * T * (C + 2.0 * hv) + 2.0 * 4.0 * T * hv * dv +
                         (c.qk16 ? 3.0 * 2.0 * qk : 2.0 * 4.0 * qk + 2.0 * 2.0 * qk) + 2.0 * 2.0 * 2.0 * T * hv * 64.0 +
                         2.0 * 2.0 * 4.0 * T * hv + 4.0 * T * hv * dv + 2.0 * 4.0 * (double)ns;
    q35_bench_rate(st, "bytes", bytes);
    q35_bench_pct_of(st, Q35_CEILING_COPY, bytes);
    q35_bench_rate(st, "tokens", T);
    dprep_free(&c.p);
    q35_bench_free(c.o), q35_bench_free(c.S), q35_bench_free(c.ws);
}

struct norm_ctx {
    float *y, *x, *w, *r;
    int64_t n, rows;
    int fused; /* add_rmsnorm: 0 the two ops, 1 the fused one */
};

static int norm_launch(void *p, q35_error *err)
{
    struct norm_ctx *c = p;
    return q35_rmsnorm_rows(c->y, c->x, c->w, c->n, c->rows, 1e-6f, NULL, err);
}

static int add_norm_launch(void *p, q35_error *err)
{
    struct norm_ctx *c = p;
    if (c->fused)
        return q35_add_rmsnorm_rows(c->y, c->x, c->r, c->w, c->n, c->rows, 1e-6f, NULL, err);
    return q35_residual_add_rows(c->x, c->r, c->n, c->rows, NULL, err) ||
                   q35_rmsnorm_rows(c->y, c->x, c->w, c->n, c->rows, 1e-6f, NULL, err)
               ? -1
               : 0;
}

static void bench_rmsnorm(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct norm_ctx c = {.n = m->n_embd, .rows = q35_bench_arg(st, 1)};
    c.x = q35_bench_alloc((size_t)(c.n * c.rows) * 4);
    c.y = q35_bench_alloc((size_t)(c.n * c.rows) * 4);
    c.w = q35_bench_alloc((size_t)c.n * 4);
    q35_bench_time(st, norm_launch, &c);
    q35_bench_rate(st, "FLOP", 4.0 * (double)c.n * (double)c.rows);
    q35_bench_rate(st, "bytes", 4.0 * (2.0 * (double)c.n * (double)c.rows + (double)c.n));
    q35_bench_free(c.x), q35_bench_free(c.y), q35_bench_free(c.w);
}

/* The residual add and the RMSNorm after it, as two launches or fused; bytes as
 * each moves them: 5 (3 + 2) or 4 passes over the rows, plus w. */
static void bench_add_rmsnorm(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct norm_ctx c = {.n = m->n_embd, .rows = q35_bench_arg(st, 1), .fused = (int)q35_bench_arg(st, 2)};
    const size_t bytes = (size_t)(c.n * c.rows) * 4;
    c.x = q35_bench_alloc(bytes), c.r = q35_bench_alloc(bytes), c.y = q35_bench_alloc(bytes);
    c.w = q35_bench_alloc((size_t)c.n * 4);
    q35_bench_time(st, add_norm_launch, &c);
    const double moved = 4.0 * ((c.fused ? 4.0 : 5.0) * (double)c.n * (double)c.rows + (double)c.n);
    q35_bench_rate(st, "bytes", moved);
    q35_bench_pct_of(st, Q35_CEILING_COPY, moved);
    q35_bench_free(c.x), q35_bench_free(c.r), q35_bench_free(c.y), q35_bench_free(c.w);
}

struct gated_ctx {
    float *y, *o, *z, *w;
    uint16_t *y16;
    int64_t n, heads, T;
    int fast; /* the experiment's fast-SiLU f16 form (q35_gated_rmsnorm_rows_f16_fast) */
};

static int gated_launch(void *p, q35_error *err)
{
    struct gated_ctx *c = p;
    const int64_t zs = c->heads * c->n;
    if (c->fast) {
#if Q35_KERNEL_EXPERIMENTS
        return q35_gated_rmsnorm_rows_f16_fast(c->y16, c->o, c->z, zs, c->w, c->n, c->heads, c->T, 1e-6f, NULL, err);
#else
        return q35_fail(err, "gated_rmsnorm_rows_f16_fast: an experiment, not built (Q35_KERNEL_EXPERIMENTS off)");
#endif
    }
    return c->y16 ? q35_gated_rmsnorm_rows_f16(c->y16, c->o, c->z, zs, c->w, c->n, c->heads, c->T, 1e-6f, NULL, err)
                  : q35_gated_rmsnorm_rows(c->y, c->o, c->z, zs, c->w, c->n, c->heads, c->T, 1e-6f, NULL, err);
}

/* The gated RMSNorm of T rows of a model's DeltaNet value heads (ssm_dv each),
 * f32 out (in place, as the model's f32 path) or f16 (ssm_out's input); bytes:
 * o and z read, y written (4 or 2 a value), w once. arg: NULL (the axis f16
 * says which), or &k_fast (gated_rmsnorm_fast_silu: the experiment's f16 form
 * with the fast SiLU, no third axis). */
static void bench_gated_rmsnorm(q35_bench_state *st, void *arg)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct gated_ctx c = {.n = m->ssm_dv, .heads = m->ssm_hv, .T = q35_bench_arg(st, 1)};
    c.fast = arg != NULL;
    const int f16 = c.fast ? 1 : (int)q35_bench_arg(st, 2);
    const size_t values = (size_t)(c.n * c.heads * c.T);
    c.o = q35_bench_alloc(values * 4), c.z = q35_bench_alloc(values * 4), c.w = q35_bench_alloc((size_t)c.n * 4);
    q35_bench_fill(c.o, values, 0.5f);
    q35_bench_fill(c.z, values, 1.0f);
    q35_bench_fill(c.w, (size_t)c.n, 1.0f);
    if (f16)
        c.y16 = q35_bench_alloc(values * 2);
    else
        c.y = c.o;
    q35_bench_time(st, gated_launch, &c);
    const double moved = (double)values * (8.0 + (f16 ? 2.0 : 4.0)) + 4.0 * (double)c.n;
    q35_bench_rate(st, "FLOP", 8.0 * (double)values);
    q35_bench_rate(st, "bytes", moved);
    q35_bench_pct_of(st, Q35_CEILING_COPY, moved);
    q35_bench_free(c.o), q35_bench_free(c.z), q35_bench_free(c.w);
    if (c.y16)
        q35_bench_free(c.y16);
}

struct prep_ctx {
    const q35_shape *m;
    int64_t T, qd, kvd;
    float *full;            /* fused: [T][2 qd + 2 kvd] */
    float *q_full, *k, *v;  /* the chain's: the model's Q_FULL [T][2 qd], K, V [T][kvd] */
    float *q, *gate, *q_norm, *k_norm;
    uint16_t *k_cache, *v_cache; /* [T][kvd] halves, rows 0 .. T - 1 written */
};

static int prep_launch(void *p, q35_error *err)
{
    struct prep_ctx *c = p;
    const q35_shape *m = c->m;
    return q35_attn_prep_rows_f16(c->q, c->gate, c->k_cache, c->v_cache, c->kvd, c->T, c->full,
                                  2 * c->qd + 2 * c->kvd, c->q_norm, c->k_norm, m->n_head, m->n_head_kv, m->head_dim,
                                  m->n_rot, 0, c->T, m->rope_base, m->eps, NULL, err);
}

/* The chain as model/cuda_layers.c's qk_norm_rope runs it on the f16 cache path. */
static int prep_chain_launch(void *p, q35_error *err)
{
    struct prep_ctx *c = p;
    const q35_shape *m = c->m;
    const int hd = m->head_dim;
    return q35_split_qgate_rows(c->q, c->gate, c->q_full, m->n_head, hd, c->T, NULL, err) ||
                   q35_rmsnorm_rows(c->q, c->q, c->q_norm, hd, c->T * m->n_head, m->eps, NULL, err) ||
                   q35_rmsnorm_rows(c->k, c->k, c->k_norm, hd, c->T * m->n_head_kv, m->eps, NULL, err) ||
                   q35_rope_neox_rows(c->q, c->qd, m->n_head, hd, m->n_rot, 0, c->T, m->rope_base, NULL, err) ||
                   q35_rope_neox_rows(c->k, c->kvd, m->n_head_kv, hd, m->n_rot, 0, c->T, m->rope_base, NULL, err) ||
                   q35_kv_append_rows_f16(c->k_cache, c->v_cache, c->kvd, c->T, c->k, c->v, c->kvd, c->kvd, 0, c->T,
                                          NULL, err)
               ? -1
               : 0;
}

/* The attention prologue over T rows at pos 0: fused (chain 0) or the chain
 * (1). Bytes as each moves them, the norm weights aside: fused, the rows of
 * [q | gate | k | v] read (4 bytes a value), q and gate written (4), the k and
 * v cache rows (2); the chain, the split (read and write 2 qd), the norms
 * (q and k, read and write), RoPE (the rotated n_rot of each head, read and
 * written), the append (k and v read, 4, written, 2). arg: &k_fused or &k_chain. */
static void bench_attn_prep(q35_bench_state *st, void *arg)
{
    const int chain = *(const int *)arg;
    struct prep_ctx c = {.m = q35_bench_model((int)q35_bench_arg(st, 0)), .T = q35_bench_arg(st, 1)};
    const q35_shape *m = c.m;
    c.qd = (int64_t)m->n_head * m->head_dim, c.kvd = (int64_t)m->n_head_kv * m->head_dim;
    const double T = (double)c.T, qd = (double)c.qd, kvd = (double)c.kvd,
                 rot = (double)(m->n_head + m->n_head_kv) * m->n_rot;
    if (chain) {
        c.q_full = q35_bench_alloc((size_t)(c.T * 2 * c.qd) * 4);
        c.k = q35_bench_alloc((size_t)(c.T * c.kvd) * 4), c.v = q35_bench_alloc((size_t)(c.T * c.kvd) * 4);
        q35_bench_fill(c.q_full, (size_t)(c.T * 2 * c.qd), 0.5f);
        q35_bench_fill(c.k, (size_t)(c.T * c.kvd), 0.5f), q35_bench_fill(c.v, (size_t)(c.T * c.kvd), 0.5f);
    } else {
        c.full = q35_bench_alloc((size_t)(c.T * (2 * c.qd + 2 * c.kvd)) * 4);
        q35_bench_fill(c.full, (size_t)(c.T * (2 * c.qd + 2 * c.kvd)), 0.5f);
    }
    c.q = q35_bench_alloc((size_t)(c.T * c.qd) * 4), c.gate = q35_bench_alloc((size_t)(c.T * c.qd) * 4);
    c.q_norm = q35_bench_alloc((size_t)m->head_dim * 4), c.k_norm = q35_bench_alloc((size_t)m->head_dim * 4);
    q35_bench_fill(c.q_norm, (size_t)m->head_dim, 1.0f), q35_bench_fill(c.k_norm, (size_t)m->head_dim, 1.0f);
    c.k_cache = q35_bench_alloc((size_t)(c.T * c.kvd) * 2), c.v_cache = q35_bench_alloc((size_t)(c.T * c.kvd) * 2);
    q35_bench_time(st, chain ? prep_chain_launch : prep_launch, &c);
    const double bytes = chain ? T * (4.0 * (4.0 * qd + 2.0 * qd + 2.0 * kvd + 2.0 * rot) + 2.0 * kvd * (4.0 + 2.0))
                               : T * (4.0 * (2.0 * qd + 2.0 * kvd) + 4.0 * 2.0 * qd + 2.0 * 2.0 * kvd);
    q35_bench_rate(st, "bytes", bytes);
    q35_bench_pct_of(st, Q35_CEILING_COPY, bytes);
    q35_bench_rate(st, "tokens", T);
    void *const bufs[] = {c.full, c.q_full, c.k, c.v, c.q, c.gate, c.q_norm, c.k_norm, c.k_cache, c.v_cache};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            q35_bench_free(bufs[i]);
}

/* The model axis at the 9B alone (its index in bench/models.c's list). */
static q35_bench_axis model_9b_axis(void)
{
    const q35_bench_axis all = q35_bench_model_axis();
    for (int i = 0; i < all.count; i++)
        if (q35_bench_model(i) == q35_shape_find("9b"))
            return (q35_bench_axis){"model", all.values + i, 1};
    return all;
}

/* The ops that write a GEMM's input (the op axis) and what they write (out). */
/* the last two: g, u bf16 in, fp8 out only; g, u f16 in, f16 out only */
enum { ACT_RMS, ACT_ADD_RMS, ACT_SWIGLU, ACT_GATED, ACT_SWIGLU_BF16, ACT_SWIGLU_F16, ACT_OPS };
enum { OUT_F32, OUT_F16, OUT_F32_QUANT, OUT_FP8, OUTS };

struct act_ctx {
    float *x, *r, *w, *y, *scale; /* x: x, g or o; r: the addend, u or z */
    uint16_t *y16;
    uint8_t *q;
    int64_t n, heads, rows, cols; /* cols = heads * n values a row (a token) */
    int op, out;
};

/* The op's f32 or f16 form (y16 NULL: f32). */
static int act_float(struct act_ctx *c, q35_error *err)
{
    const float eps = 1e-6f;
    switch (c->op) {
    case ACT_RMS:
        return c->y16 ? q35_rmsnorm_rows_f16(c->y16, c->x, c->w, c->n, c->rows, eps, NULL, err)
                      : q35_rmsnorm_rows(c->y, c->x, c->w, c->n, c->rows, eps, NULL, err);
    case ACT_ADD_RMS:
        return c->y16 ? q35_add_rmsnorm_rows_f16(c->y16, c->x, c->r, c->w, c->n, c->rows, eps, NULL, err)
                      : q35_add_rmsnorm_rows(c->y, c->x, c->r, c->w, c->n, c->rows, eps, NULL, err);
    case ACT_SWIGLU:
        return c->y16 ? q35_swiglu_rows_f16(c->y16, c->x, c->r, c->n, c->n, c->rows, NULL, err)
                      : q35_swiglu_rows(c->y, c->x, c->r, c->n, c->n, c->rows, NULL, err);
    case ACT_SWIGLU_F16: /* the f16 rows in the f32 buffers' first halves; f16 out only */
        return q35_swiglu_rows_f16_f16(c->y16, (const uint16_t *)(void *)c->x, (const uint16_t *)(void *)c->r, c->n,
                                       c->n, c->rows, NULL, err);
    default:
        return c->y16 ? q35_gated_rmsnorm_rows_f16(c->y16, c->x, c->r, c->heads * c->n, c->w, c->n, c->heads, c->rows,
                                                   eps, NULL, err)
                      : q35_gated_rmsnorm_rows(c->y, c->x, c->r, c->heads * c->n, c->w, c->n, c->heads, c->rows, eps,
                                               NULL, err);
    }
}

static int act_fp8(struct act_ctx *c, q35_error *err)
{
    const float eps = 1e-6f;
    switch (c->op) {
    case ACT_RMS:
        return q35_rmsnorm_rows_fp8(c->q, c->scale, c->x, c->w, c->n, c->rows, eps, NULL, err);
    case ACT_ADD_RMS:
        return q35_add_rmsnorm_rows_fp8(c->q, c->scale, c->x, c->r, c->w, c->n, c->rows, eps, NULL, err);
    case ACT_SWIGLU:
        return q35_swiglu_rows_fp8(c->q, c->scale, c->x, c->r, c->n, c->n, c->rows, NULL, err);
    case ACT_SWIGLU_BF16: /* the bf16 rows in the f32 buffers' first halves */
        return q35_swiglu_rows_bf16_fp8(c->q, c->scale, (const uint16_t *)(void *)c->x, (const uint16_t *)(void *)c->r,
                                        c->n, c->n, c->rows, NULL, err);
    default: /* an experiment (kernels/experiments/gated_rmsnorm_fp8.h): skipped, saying so, where not built */
#if Q35_KERNEL_EXPERIMENTS
        return q35_gated_rmsnorm_rows_fp8(c->q, c->scale, c->x, c->r, c->heads * c->n, c->w, c->n, c->heads, c->rows,
                                          eps, NULL, err);
#else
        return q35_fail(err, "gated_rmsnorm_rows_fp8: an experiment, not built (Q35_KERNEL_EXPERIMENTS off)");
#endif
    }
}

static int act_launch(void *p, q35_error *err)
{
    struct act_ctx *c = p;
    if (c->out == OUT_FP8)
        return act_fp8(c, err);
    if (act_float(c, err))
        return -1;
    return c->out == OUT_F32_QUANT ? q35_fp8_quantize_rows(c->q, c->scale, c->y, c->rows, c->cols, c->cols, NULL, err)
                                   : 0;
}

/* An op by its output, at a model's width: the RMSNorm and the fused add +
 * RMSNorm at n_embd, SwiGLU at n_ff, the gated norm at ssm_hv heads of ssm_dv
 * (a row: a token). Bytes as each moves them, c values a row: in, 4c (the
 * norm's x), 12c (the fused form's x and r in, x out), 8c (SwiGLU's g, u; 4c its bf16 form's; the
 * gated norm's o, z; 4c SwiGLU's f16 form's); out, 4c (f32), 2c (f16), 4c + 4c
 * + c + 4 (f32, read back, codes and scale), c + 4 (fused FP8); plus the
 * norms' w, 4n. */
static void bench_act_out(q35_bench_state *st, void *unused)
{
    (void)unused;
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    struct act_ctx c = {.op = (int)q35_bench_arg(st, 1), .out = (int)q35_bench_arg(st, 2), .rows = q35_bench_arg(st, 3),
                        .heads = 1};
    if (c.op == ACT_SWIGLU_BF16 && c.out != OUT_FP8) {
        q35_bench_skip(st, "swiglu_bf16: only the fp8 form (q35_swiglu_rows_bf16_fp8)");
        return;
    }
    if (c.op == ACT_SWIGLU_F16 && c.out != OUT_F16) {
        q35_bench_skip(st, "swiglu_f16: only the f16 form (q35_swiglu_rows_f16_f16)");
        return;
    }
    const bool swiglu = c.op == ACT_SWIGLU || c.op == ACT_SWIGLU_BF16 || c.op == ACT_SWIGLU_F16;
    c.n = swiglu ? m->n_ff : c.op == ACT_GATED ? m->ssm_dv : m->n_embd;
    if (c.op == ACT_GATED)
        c.heads = m->ssm_hv;
    c.cols = c.heads * c.n;
    const size_t values = (size_t)(c.cols * c.rows);
    c.x = q35_bench_alloc(values * 4), c.r = q35_bench_alloc(values * 4), c.w = q35_bench_alloc((size_t)c.n * 4);
    if (c.op == ACT_SWIGLU_BF16 || c.op == ACT_SWIGLU_F16) { /* valid 16-bit g and u: floats of bits 0x3f803f80
                                                                * (0x3c003c00) are two bf16 (f16) 1.0s each */
        const float ones = c.op == ACT_SWIGLU_BF16 ? 0x1.007fp+0f : 0x1.0078p-7f;
        q35_bench_fill(c.x, values, ones);
        q35_bench_fill(c.r, values, ones);
    }
    if (c.out == OUT_F32 || c.out == OUT_F32_QUANT)
        c.y = q35_bench_alloc(values * 4);
    if (c.out == OUT_F16)
        c.y16 = q35_bench_alloc(values * 2);
    if (c.out == OUT_F32_QUANT || c.out == OUT_FP8) {
        c.q = q35_bench_alloc(values);
        c.scale = q35_bench_alloc((size_t)c.rows * 4);
    }
    q35_bench_time(st, act_launch, &c);
    const double v = (double)values, rows = (double)c.rows;
    const double in = c.op == ACT_RMS || c.op == ACT_SWIGLU_BF16 || c.op == ACT_SWIGLU_F16 ? 4.0 * v
                      : c.op == ACT_ADD_RMS                                             ? 12.0 * v
                                                                                        : 8.0 * v;
    const double out = c.out == OUT_F32 ? 4.0 * v : c.out == OUT_F16 ? 2.0 * v
                       : c.out == OUT_F32_QUANT ? 9.0 * v + 4.0 * rows : v + 4.0 * rows;
    const double moved = in + out + (swiglu ? 0.0 : 4.0 * (double)c.n);
    q35_bench_rate(st, "bytes", moved);
    q35_bench_pct_of(st, Q35_CEILING_COPY, moved);
    q35_bench_rate(st, "tokens", rows);
    q35_bench_free(c.x), q35_bench_free(c.r), q35_bench_free(c.w);
    if (c.y)
        q35_bench_free(c.y);
    if (c.y16)
        q35_bench_free(c.y16);
    if (c.q)
        q35_bench_free(c.q), q35_bench_free(c.scale);
}

#define MAX_VARIANTS 16

/* A variant axis of every variant an op has here (its indices, 0 ..), and the
 * context's legend of their names; the count. */
static int variant_axis(int64_t *axis, int (*count)(void), const char *(*name)(int), int (*production)(int),
                        char *legend, size_t cap)
{
    const int n = count() < MAX_VARIANTS ? count() : MAX_VARIANTS;
    for (int v = 0; v < n; v++)
        axis[v] = v;
    q35_variant_list(count, name, production, -1, legend, cap);
    return n;
}

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init(&argc, argv))
        return 1;
    static const int64_t rows[] = {1, 64, 512, 2048, 4096}, mib[] = {2048};
    static int64_t variants[MAX_VARIANTS], chunk_variants[MAX_VARIANTS];
    char names[64 * MAX_VARIANTS], chunk_names[64 * MAX_VARIANTS];
    const int n_scan = variant_axis(variants, q35_delta_rule_variant_count, q35_delta_rule_variant_name,
                                    q35_delta_rule_variant_production, names, sizeof names);
    const int n_chunk = variant_axis(chunk_variants, q35_delta_chunk_variant_count, q35_delta_chunk_variant_name,
                                     q35_delta_chunk_variant_production, chunk_names, sizeof chunk_names);
    const q35_bench_axis scan_axes[] = {q35_bench_model_axis(), {"rows", rows, 5}, {"variant", variants, n_scan}};
    q35_bench_register("ceiling/d2d_copy", q35_bench_copy, NULL, (q35_bench_axis[]){{"MiB", mib, 1}}, 1);
    static const int64_t delta_rows[] = {64, 512, 1024, 2048, 4096, 8192, 16384};
    const q35_bench_axis delta_axes[] = {scan_axes[0], {"rows", delta_rows, 7}, scan_axes[2]};
    q35_bench_register("delta_rule_scan", bench_scan, NULL, delta_axes, 3);
    q35_bench_register("delta_chunk", bench_chunk, NULL,
                       (q35_bench_axis[]){delta_axes[0], delta_axes[1], {"variant", chunk_variants, n_chunk}}, 3);
    q35_bench_register("delta_chunk_qk16", bench_chunk_qk16, NULL,
                       (q35_bench_axis[]){delta_axes[0], delta_axes[1], {"variant", chunk_variants, n_chunk}}, 3);
    q35_bench_context("delta_chunk_variants", chunk_names);
    q35_bench_register("conv1d_silu_rows", bench_conv, NULL, scan_axes, 2);
    static const int64_t prep_rows[] = {512, 2048}, run_rows[] = {512, 2048, 4096}, runs[] = {0, 1};
    const q35_bench_axis prep_axes[] = {model_9b_axis(), {"rows", prep_rows, 2}};
    q35_bench_register("delta_prep", bench_delta_prep, (void *)&k_fused, prep_axes, 2);
    q35_bench_register("delta_prep_chain", bench_delta_prep, (void *)&k_chain, prep_axes, 2);
    q35_bench_register("delta_prep_run", bench_delta_prep, (void *)&k_run,
                       (q35_bench_axis[]){prep_axes[0], {"rows", run_rows, 3}, {"run", runs, 2}}, 3);
    q35_bench_register("delta_prep_fast_silu", bench_delta_prep, (void *)&k_fast,
                       (q35_bench_axis[]){prep_axes[0], {"rows", run_rows, 3}}, 2);
    static const int64_t pc_rows[] = {2048, 4096}, qk16[] = {0, 1};
    q35_bench_register("delta_prep_chunk", bench_prep_chunk, NULL,
                       (q35_bench_axis[]){prep_axes[0], {"rows", pc_rows, 2}, {"qk16", qk16, 2},
                                          {"variant", chunk_variants, n_chunk}},
                       4);
    q35_bench_register("rmsnorm_rows", bench_rmsnorm, NULL, scan_axes, 2);
    static const int64_t fused[] = {0, 1};
    q35_bench_register("add_rmsnorm_rows", bench_add_rmsnorm, NULL,
                       (q35_bench_axis[]){scan_axes[0], scan_axes[1], {"fused", fused, 2}}, 3);
    static const int64_t f16_out[] = {0, 1};
    q35_bench_register("gated_rmsnorm_rows", bench_gated_rmsnorm, NULL,
                       (q35_bench_axis[]){scan_axes[0], scan_axes[1], {"f16", f16_out, 2}}, 3);
    q35_bench_register("gated_rmsnorm_fast_silu", bench_gated_rmsnorm, (void *)&k_fast,
                       (q35_bench_axis[]){scan_axes[0], scan_axes[1]}, 2);
    q35_bench_register("attn_prep", bench_attn_prep, (void *)&k_fused, prep_axes, 2);
    q35_bench_register("attn_prep_chain", bench_attn_prep, (void *)&k_chain, prep_axes, 2);
    static const int64_t act_ops[] = {ACT_RMS, ACT_ADD_RMS, ACT_SWIGLU, ACT_GATED, ACT_SWIGLU_BF16, ACT_SWIGLU_F16},
                         outs[] = {0, 1, 2, 3}, act_rows[] = {2048};
    static const char *const act_names[] = {"rmsnorm", "add_rmsnorm", "swiglu", "gated_rmsnorm", "swiglu_bf16",
                                            "swiglu_f16"},
                             *const out_names[] = {"f32", "f16", "f32_quant", "fp8"};
    q35_bench_register("act_out", bench_act_out, NULL,
                       (q35_bench_axis[]){scan_axes[0], {"op", act_ops, ACT_OPS}, {"out", outs, OUTS},
                                          {"rows", act_rows, 1}},
                       4);
    q35_bench_axis_labels("op", act_names, ACT_OPS); /* act_out/model:1/op:swiglu/out:fp8/rows:2048 */
    q35_bench_axis_labels("out", out_names, OUTS);
    char legend[128];
    q35_bench_context("models", q35_bench_model_legend(legend, sizeof legend));
    q35_bench_context("add_rmsnorm_fused", "0 = residual_add_rows then rmsnorm_rows, 1 = add_rmsnorm_rows");
    q35_bench_context("act_out", "an op writing a GEMM's input, by output: f32, f16 (the _f16 form), f32_quant (the "
                                 "f32 form then fp8_quantize_rows), fp8 (the fused _fp8 form); op swiglu_bf16: SwiGLU "
                                 "from bf16 g and u (the fp8 path's bf16 [gate | up]), fp8 out only; op swiglu_f16: "
                                 "SwiGLU from f16 g and u (the f16 path's f16 [gate | up]), f16 out only");
    q35_bench_context("delta_rule_variants", names);
    q35_bench_context("gated_rmsnorm_f16", "0 = f32 out in place (gated_rmsnorm_rows), 1 = f16 out (_f16)");
    return q35_bench_main(argc, argv);
}
