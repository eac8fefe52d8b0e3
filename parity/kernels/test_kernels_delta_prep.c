/* GPU parity of the fused DeltaNet prologue (kernels/delta_prep.h): two consecutive calls, the window carried, on
 * fresh random inputs laid out as the model's merged projection rows
 * [qkv | z | alpha | b], outputs poisoned before each launch. Each call's out (q/k heads and v apart), g, beta and window
 * (1) bitwise (memcmp) against the unfused chain q35_conv1d_silu_rows ->
 * q35_l2norm_rows -> q35_gates_rows on the same inputs, (2) against the float64
 * reference within the conv/l2norm/gates suites' bound (rel L-inf <= 1e-5; the
 * window, which holds inputs, exactly), (3) the window after the second call
 * (the first call's carried), and out's columns past conv_dim left alone; at
 * the 0.8B, 9B and 27B layouts and odd ones; (4) what it refuses. The qk16
 * form (q35_delta_prep_rows_qk16, the q/k heads as f16 in the chunked rule's
 * chunk layout) beside each call, its own window carried: its f16 q and k
 * bitwise the CPU's rounding to nearest even (core/half.h) of the f32 form's,
 * the rows past T of the last chunk and out's q/k columns left alone, its v
 * columns, g, beta and window bitwise the f32 form's. Where the experiments
 * are built, the experiment q35_delta_prep_rows_run (kernels/experiments/
 * delta_prep.h) with a tile a warp and with runs of tiles, from the same
 * window, bitwise the f32 form's call (out whole, g, beta, window); and its
 * fast-SiLU form, out against float64 within LIMIT, g, beta and the window
 * bitwise the f32 form's. */
#include "parity/lib/gpu.h"

#include "kernels/conv1d.h"
#include "kernels/delta_prep.h"
#if Q35_KERNEL_EXPERIMENTS
#include "kernels/experiments/delta_prep.h"
#endif
#include "kernels/gates.h"
#include "kernels/l2norm.h"

#include "core/half.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 1e-5
#define EPS 1e-6f

static q35_rng g_rng;

typedef struct prep_case {
    const char *what;
    q35_delta_prep_dims d;
    int64_t dv;      /* value head width: the z columns between qkv and alpha */
    int64_t out_pad; /* out_stride - conv_dim: columns the kernel must leave alone */
    int64_t T;
} prep_case;

/* Where the merged row keeps each part (the model's layout, the stride rounded up to whole quads). */
typedef struct prep_layout {
    int64_t alpha_col, b_col, in_stride, out_stride;
} prep_layout;

static prep_layout layout_of(const prep_case *c)
{
    prep_layout l;
    l.alpha_col = c->d.conv_dim + c->d.hv * c->dv;
    l.b_col = l.alpha_col + c->d.hv;
    l.in_stride = (l.b_col + c->d.hv + 3) / 4 * 4;
    l.out_stride = c->d.conv_dim + c->out_pad;
    return l;
}

/* Columns [c0, c1) of T rows at stride, elements of elem bytes, packed (malloc'd). */
static void *columns(const void *x, size_t elem, int64_t stride, int64_t T, int64_t c0, int64_t c1)
{
    char *y = malloc((size_t)(T * (c1 - c0)) * elem + 1);
    for (int64_t t = 0; t < T; t++)
        memcpy(y + (size_t)(t * (c1 - c0)) * elem, (const char *)x + (size_t)(t * stride + c0) * elem,
               (size_t)(c1 - c0) * elem);
    return y;
}

/* Every bit set again (q35_gpu_floats' poison), before a launch that must write all of d. */
static void poison(float *d, int64_t n)
{
    void *h = malloc((size_t)n * sizeof(float));
    memset(h, 0xff, (size_t)n * sizeof(float));
    q35_gpu_upload(d, h, (size_t)n * sizeof(float));
    free(h);
}

/* The device buffers of a case: the fused call's, the chain's, the inputs both share. */
typedef struct prep_bufs {
    float *mix, *alpha, *b, *w, *dt, *a; /* inputs (alpha, b also packed [T][hv] for gates_rows) */
    float *out, *g, *beta, *win;         /* the fused call */
    float *co, *cg, *cbeta, *cwin;       /* the chain */
    float *o16, *g16, *beta16, *win16;   /* the qk16 form */
    uint16_t *q16, *k16;                 /* its f16 q and k [chunks][hk][64][dk] */
    float *orun, *grun, *betarun, *winrun; /* the experiment with its run chosen (each run from the call's window) */
} prep_bufs;

/* Elements of each of q16 and k16 for T rows: whole chunks. */
static int64_t qk16_elems(const q35_delta_prep_dims *d, int64_t T)
{
    const int64_t R = Q35_DELTA_PREP_QK16_ROWS;
    return (T + R - 1) / R * R * d->hk * d->dk;
}

/* out [T][out_stride] by parts against the float64 reference ro [T][conv_dim]
 * (and, where co [T][conv_dim] is given, bitwise against it): the q/k heads
 * (values ~ 1/sqrt(dk)) apart from v's, so neither hides the other's error;
 * one case a part, named "<what> <part> <head><tail>". */
static void out_cases(q35_suite *s, const prep_case *c, const prep_layout *l, const float *out, const double *ro,
                      const float *co, const char *what, const char *head, const char *tail)
{
    const int64_t T = c->T, C = c->d.conv_dim, parts[3] = {0, 2 * c->d.hk * c->d.dk, C};
    for (int p = 0; p < 2; p++) {
        const int64_t w = parts[p + 1] - parts[p];
        if (w == 0)
            continue;
        float *op = columns(out, sizeof *out, l->out_stride, T, parts[p], parts[p + 1]);
        double *rp = columns(ro, sizeof *ro, C, T, parts[p], parts[p + 1]);
        float *cp = co ? columns(co, sizeof *co, C, T, parts[p], parts[p + 1]) : NULL;
        const q35_cmp cmp = q35_compare_f32_f64(op, rp, T * w);
        const q35_bitcmp bit = cp ? q35_bitwise_f32(op, cp, T * w) : (q35_bitcmp){0};
        char name[240];
        snprintf(name, sizeof name, "%s %s %s%s", what, p ? "v  " : "q/k", head, tail);
        q35_case_unit(s, name, &cmp, LIMIT, cp ? &bit : NULL);
        free(op), free(rp), free(cp);
    }
}

/* How many of out's columns past conv_dim lost their poison (must be 0). */
static int64_t written_past(const prep_case *c, const prep_layout *l, const float *out)
{
    int64_t touched = 0;
    for (int64_t t = 0; t < c->T; t++)
        touched += q35_gpu_written(out + t * l->out_stride + c->d.conv_dim, l->out_stride - c->d.conv_dim);
    return touched;
}

/* The qk16 form on the inputs the f32 form's call just took (mix on the
 * device), against its outputs out, g, beta, win (host), as the file's header
 * says. */
static void check_qk16(q35_suite *s, const prep_case *c, const prep_layout *l, prep_bufs *b, const float *out,
                       const float *g, const float *beta, const float *win, const char *head)
{
    q35_error err = {{0}};
    const q35_delta_prep_dims d = c->d;
    const int64_t T = c->T, C = d.conv_dim, qk = 2 * d.hk * d.dk, nh = T * d.hv, nw = C * (d.K - 1);
    const int64_t R = Q35_DELTA_PREP_QK16_ROWS, n16 = qk16_elems(&d, T);
    poison(b->o16, T * l->out_stride), poison(b->g16, nh), poison(b->beta16, nh);
    uint16_t *p16 = malloc((size_t)n16 * 2);
    memset(p16, 0xff, (size_t)n16 * 2);
    q35_gpu_upload(b->q16, p16, (size_t)n16 * 2), q35_gpu_upload(b->k16, p16, (size_t)n16 * 2);
    q35_gpu_ok(q35_delta_prep_rows_qk16(b->o16, l->out_stride, b->q16, b->k16, b->g16, b->beta16, b->win16, b->mix,
                                        l->in_stride, l->alpha_col, l->b_col, b->w, b->dt, b->a, d, T, EPS, NULL,
                                        &err),
               &err);
    uint16_t *q16 = malloc((size_t)n16 * 2), *k16 = malloc((size_t)n16 * 2);
    q35_gpu_download(q16, b->q16, (size_t)n16 * 2), q35_gpu_download(k16, b->k16, (size_t)n16 * 2);
    /* the expected halves: out's q/k heads rounded, rows past T still poison */
    int64_t wrong = 0, first = -1;
    for (int64_t t = 0; t < (T + R - 1) / R * R; t++)
        for (int64_t h = 0; h < 2 * d.hk; h++)
            for (int64_t i = 0; i < d.dk; i++) {
                const int64_t at = ((t / R * d.hk + h % d.hk) * R + t % R) * d.dk + i;
                const uint16_t want = t < T ? q35_f32_to_f16(out[t * l->out_stride + h * d.dk + i]) : 0xffffu;
                const uint16_t got = h < d.hk ? q16[at] : k16[at];
                if (got != want && wrong++ == 0)
                    first = t;
            }
    q35_case(s, wrong == 0, "delta_prep qk16  %s: f16 q/k the f32 form's rounded, rows past T untouched: %" PRId64
             " halves differ%s%" PRId64, head, wrong, wrong ? ", the first at token " : "", wrong ? first : 0);
    float *o16 = q35_gpu_to_host(b->o16, T * l->out_stride), *g16 = q35_gpu_to_host(b->g16, nh);
    float *beta16 = q35_gpu_to_host(b->beta16, nh), *win16 = q35_gpu_to_host(b->win16, nw);
    int64_t touched = 0; /* out's q/k columns and those past conv_dim keep their poison */
    for (int64_t t = 0; t < T; t++)
        touched += q35_gpu_written(o16 + t * l->out_stride, qk) +
                   q35_gpu_written(o16 + t * l->out_stride + C, l->out_stride - C);
    float *v16 = columns(o16, sizeof *o16, l->out_stride, T, qk, C);
    float *v = columns(out, sizeof *out, l->out_stride, T, qk, C);
    const q35_bitcmp bv = q35_bitwise_f32(v16, v, T * (C - qk)), bg = q35_bitwise_f32(g16, g, nh);
    const q35_bitcmp bb = q35_bitwise_f32(beta16, beta, nh), bw = q35_bitwise_f32(win16, win, nw);
    char sv[160], sg[160], sb[160], sw[160];
    q35_case(s, touched == 0 && bv.equal && bg.equal && bb.equal && bw.equal,
             "delta_prep qk16  %s: q/k columns untouched (%" PRId64 " written); v %s, g %s, beta %s, window %s "
             "bitwise the f32 form's",
             head, touched, q35_bitcmp_str(&bv, sv, sizeof sv), q35_bitcmp_str(&bg, sg, sizeof sg),
             q35_bitcmp_str(&bb, sb, sizeof sb), q35_bitcmp_str(&bw, sw, sizeof sw));
    free(p16), free(q16), free(k16), free(o16), free(g16), free(beta16), free(win16), free(v16), free(v);
}

/* The experiment (kernels/experiments/delta_prep.h) with each run, a tile a
 * warp and runs of tiles, from the window the production call started from
 * (win0, host): out, g, beta and the window bitwise the production call's
 * (host out, g, beta, win). */
static void check_runs(q35_suite *s, const prep_case *c, const prep_layout *l, prep_bufs *b, const float *win0,
                       const float *out, const float *g, const float *beta, const float *win, const double *ro,
                       const char *head)
{
#if Q35_KERNEL_EXPERIMENTS
    const q35_delta_prep_dims d = c->d;
    const int64_t T = c->T, nh = T * d.hv, nw = d.conv_dim * (d.K - 1), no = T * l->out_stride;
    for (int run = 0; run <= 1; run++) {
        q35_error err = {{0}};
        q35_gpu_upload(b->winrun, win0, (size_t)nw * sizeof *win0);
        poison(b->orun, no), poison(b->grun, nh), poison(b->betarun, nh);
        q35_gpu_ok(q35_delta_prep_rows_run(run, b->orun, l->out_stride, b->grun, b->betarun, b->winrun, b->mix,
                                           l->in_stride, l->alpha_col, l->b_col, b->w, b->dt, b->a, d, T, EPS, NULL,
                                           &err),
                   &err);
        float *o = q35_gpu_to_host(b->orun, no), *gg = q35_gpu_to_host(b->grun, nh);
        float *bb = q35_gpu_to_host(b->betarun, nh), *ww = q35_gpu_to_host(b->winrun, nw);
        const q35_bitcmp bo = q35_bitwise_f32(o, out, no), bg = q35_bitwise_f32(gg, g, nh);
        const q35_bitcmp bb2 = q35_bitwise_f32(bb, beta, nh), bw = q35_bitwise_f32(ww, win, nw);
        char so[160], sg[160], sb[160], sw[160];
        q35_case(s, bo.equal && bg.equal && bb2.equal && bw.equal,
                 "delta_prep run %d %s: out (columns past conv_dim too) %s, g %s, beta %s, window %s bitwise "
                 "q35_delta_prep_rows's",
                 run, head, q35_bitcmp_str(&bo, so, sizeof so), q35_bitcmp_str(&bg, sg, sizeof sg),
                 q35_bitcmp_str(&bb2, sb, sizeof sb), q35_bitcmp_str(&bw, sw, sizeof sw));
        free(o), free(gg), free(bb), free(ww);
    }
    /* the fast SiLU form: out against float64 (q/k heads and v apart, as check_call), the rest bitwise */
    q35_error err = {{0}};
    q35_gpu_upload(b->winrun, win0, (size_t)nw * sizeof *win0);
    poison(b->orun, no), poison(b->grun, nh), poison(b->betarun, nh);
    q35_gpu_ok(q35_delta_prep_rows_fast_silu(b->orun, l->out_stride, b->grun, b->betarun, b->winrun, b->mix,
                                             l->in_stride, l->alpha_col, l->b_col, b->w, b->dt, b->a, d, T, EPS, NULL,
                                             &err),
               &err);
    float *o = q35_gpu_to_host(b->orun, no), *gg = q35_gpu_to_host(b->grun, nh);
    float *bb = q35_gpu_to_host(b->betarun, nh), *ww = q35_gpu_to_host(b->winrun, nw);
    out_cases(s, c, l, o, ro, NULL, "delta_prep fast silu out", head, "");
    const int64_t touched = written_past(c, l, o);
    const q35_bitcmp bg = q35_bitwise_f32(gg, g, nh), bb2 = q35_bitwise_f32(bb, beta, nh);
    const q35_bitcmp bw = q35_bitwise_f32(ww, win, nw);
    char sg[160], sb[160], sw[160];
    q35_case(s, touched == 0 && bg.equal && bb2.equal && bw.equal,
             "delta_prep fast silu %s: %" PRId64 " columns past conv_dim written; g %s, beta %s, window %s bitwise "
             "q35_delta_prep_rows's",
             head, touched, q35_bitcmp_str(&bg, sg, sizeof sg), q35_bitcmp_str(&bb2, sb, sizeof sb),
             q35_bitcmp_str(&bw, sw, sizeof sw));
    free(o), free(gg), free(bb), free(ww);
#else
    (void)s, (void)c, (void)l, (void)b, (void)win0, (void)out, (void)g, (void)beta, (void)win, (void)ro, (void)head;
#endif
}

/* One call of each on fresh inputs, checked as the file's header says; rwin the reference's window, carried. */
static void check_call(q35_suite *s, const prep_case *c, const prep_layout *l, prep_bufs *b, double *rwin,
                       const double *wd, const double *dtd, const double *ad, int call)
{
    q35_error err = {{0}};
    const q35_delta_prep_dims d = c->d;
    const int64_t T = c->T, C = d.conv_dim, nh = T * d.hv, nw = C * (d.K - 1);
    float *mix = q35_host_normal(T * l->in_stride, 0.0, 1.0, &g_rng);
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < d.hv; j++) {
            float *m = mix + t * l->in_stride;
            m[l->alpha_col + j] = (float)(3.0 * q35_test_normal(&g_rng));
            if ((t * d.hv + j) % 7 == 0) /* around the softplus threshold: alpha + dt in [19, 22] */
                m[l->alpha_col + j] = (float)q35_rng_range(&g_rng, 19.0, 22.0) - (float)dtd[j];
            m[l->b_col + j] = (float)(3.0 * q35_test_normal(&g_rng));
        }
    float *alpha = columns(mix, sizeof *mix, l->in_stride, T, l->alpha_col, l->alpha_col + d.hv);
    float *bb = columns(mix, sizeof *mix, l->in_stride, T, l->b_col, l->b_col + d.hv);
    q35_gpu_upload(b->mix, mix, (size_t)(T * l->in_stride) * sizeof *mix);
    q35_gpu_upload(b->alpha, alpha, (size_t)nh * sizeof *alpha);
    q35_gpu_upload(b->b, bb, (size_t)nh * sizeof *bb);
    poison(b->out, T * l->out_stride), poison(b->g, nh), poison(b->beta, nh);
    poison(b->co, T * C), poison(b->cg, nh), poison(b->cbeta, nh);
    float *win0 = q35_gpu_to_host(b->win, nw); /* the window this call starts from, for check_runs */

    q35_gpu_ok(q35_delta_prep_rows(b->out, l->out_stride, b->g, b->beta, b->win, b->mix, l->in_stride, l->alpha_col,
                                   l->b_col, b->w, b->dt, b->a, d, T, EPS, NULL, &err),
               &err);
    q35_gpu_ok(q35_conv1d_silu_rows(b->co, C, b->cwin, b->mix, l->in_stride, b->w, C, d.K, T, NULL, &err), &err);
    q35_gpu_ok(q35_l2norm_rows(b->co, d.dk, 2 * d.hk, T, C, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_gates_rows(b->cg, b->cbeta, b->alpha, b->b, d.hv, b->dt, b->a, d.hv, T, NULL, &err), &err);

    double *mixd = q35_host_f64(mix, T * l->in_stride), *ro = malloc((size_t)(T * C) * sizeof *ro);
    double *rg = malloc((size_t)nh * sizeof *rg), *rb = malloc((size_t)nh * sizeof *rb);
    for (int64_t t = 0; t < T; t++)
        q35_ref_delta_prep(ro + t * C, rg + t * d.hv, rb + t * d.hv, rwin, mixd + t * l->in_stride, l->alpha_col,
                           l->b_col, wd, dtd, ad, d, EPS);

    float *out = q35_gpu_to_host(b->out, T * l->out_stride), *co = q35_gpu_to_host(b->co, T * C);
    float *g = q35_gpu_to_host(b->g, nh), *beta = q35_gpu_to_host(b->beta, nh);
    float *cg = q35_gpu_to_host(b->cg, nh), *cbeta = q35_gpu_to_host(b->cbeta, nh);
    float *win = q35_gpu_to_host(b->win, nw), *cwin = q35_gpu_to_host(b->cwin, nw);
    char name[200], head[120];
    snprintf(head, sizeof head, "%-5s K %d hk %2" PRId64 " dk %3" PRId64 " hv %2" PRId64 " T %4" PRId64 " call %d",
             c->what, d.K, d.hk, d.dk, d.hv, T, call);
    out_cases(s, c, l, out, ro, co, "delta_prep out", head, " vs chain");
    const int64_t touched = written_past(c, l, out);
    if (c->out_pad)
        q35_case(s, touched == 0, "delta_prep out %s: %" PRId64 " of %" PRId64 " columns past conv_dim written", head,
                 touched, T * c->out_pad);
    q35_cmp cmp = q35_compare_f32_f64(g, rg, nh);
    q35_bitcmp bit = q35_bitwise_f32(g, cg, nh);
    snprintf(name, sizeof name, "delta_prep g       %s vs chain", head);
    q35_case_unit(s, name, &cmp, LIMIT, &bit);
    cmp = q35_compare_f32_f64(beta, rb, nh);
    bit = q35_bitwise_f32(beta, cbeta, nh);
    snprintf(name, sizeof name, "delta_prep beta    %s vs chain", head);
    q35_case_unit(s, name, &cmp, LIMIT, &bit);
    cmp = q35_compare_f32_f64(win, rwin, nw);
    bit = q35_bitwise_f32(win, cwin, nw);
    snprintf(name, sizeof name, "delta_prep window  %s vs chain", head);
    q35_case_unit(s, name, &cmp, 0.0, &bit); /* the window holds inputs: exact */
    check_qk16(s, c, l, b, out, g, beta, win, head);
    check_runs(s, c, l, b, win0, out, g, beta, win, ro, head);
    free(win0), free(mix), free(alpha), free(bb), free(mixd), free(ro), free(rg), free(rb), free(out), free(co), free(g),
        free(beta), free(cg), free(cbeta), free(win), free(cwin);
}

static void check_prep(q35_suite *s, const prep_case *c)
{
    const q35_delta_prep_dims d = c->d;
    const prep_layout l = layout_of(c);
    const int64_t T = c->T, C = d.conv_dim, nh = T * d.hv, nw = C * (d.K - 1);
    float *w = q35_host_normal(C * d.K, 0.0, 0.3, &g_rng), *win = q35_host_normal(nw, 0.0, 1.0, &g_rng);
    float *dt = q35_host_normal(d.hv, 1.0, 0.1, &g_rng), *a = malloc((size_t)d.hv * sizeof *a);
    for (int64_t j = 0; j < d.hv; j++)
        a[j] = (float)-exp(q35_rng_range(&g_rng, log(0.01), log(16.0)));
    prep_bufs b = {
        .mix = q35_gpu_floats(T * l.in_stride), .alpha = q35_gpu_floats(nh), .b = q35_gpu_floats(nh),
        .w = q35_gpu_from_host(w, C * d.K), .dt = q35_gpu_from_host(dt, d.hv), .a = q35_gpu_from_host(a, d.hv),
        .out = q35_gpu_floats(T * l.out_stride), .g = q35_gpu_floats(nh), .beta = q35_gpu_floats(nh),
        .win = q35_gpu_from_host(win, nw), .co = q35_gpu_floats(T * C), .cg = q35_gpu_floats(nh),
        .cbeta = q35_gpu_floats(nh), .cwin = q35_gpu_from_host(win, nw),
        .o16 = q35_gpu_floats(T * l.out_stride), .g16 = q35_gpu_floats(nh), .beta16 = q35_gpu_floats(nh),
        .win16 = q35_gpu_from_host(win, nw), .q16 = q35_gpu_bytes((size_t)qk16_elems(&d, T) * 2),
        .k16 = q35_gpu_bytes((size_t)qk16_elems(&d, T) * 2), .orun = q35_gpu_floats(T * l.out_stride),
        .grun = q35_gpu_floats(nh), .betarun = q35_gpu_floats(nh), .winrun = q35_gpu_floats(nw),
    };
    double *rwin = q35_host_f64(win, nw), *wd = q35_host_f64(w, C * d.K), *dtd = q35_host_f64(dt, d.hv),
           *ad = q35_host_f64(a, d.hv);
    for (int call = 1; call <= 2; call++) /* the second starts from the window the first left */
        check_call(s, c, &l, &b, rwin, wd, dtd, ad, call);
    free(w), free(win), free(dt), free(a), free(rwin), free(wd), free(dtd), free(ad);
    void *all[] = {b.mix, b.alpha, b.b,  b.w,    b.dt, b.a,   b.out,    b.g,     b.beta, b.win,
                   b.co,  b.cg,    b.cbeta, b.cwin, b.o16, b.g16, b.beta16, b.win16, b.q16,  b.k16,
                   b.orun, b.grun, b.betarun, b.winrun};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        q35_gpu_free(all[i]);
}

/* A refusal: the valid call below with one thing changed, and what the message must name. */
typedef struct prep_refusal {
    const char *what;
    q35_delta_prep_dims d;
    int64_t in_stride, out_stride, alpha_col, b_col, T;
    int mix_off, out_off; /* floats past an aligned pointer */
    const char *want;
} prep_refusal;

static void check_refusals(q35_suite *s)
{
    /* valid: conv_dim 512 = 2 * 2 * 128 q/k + 4 x 32 v, rows [qkv | alpha | b] of 520 */
    const q35_delta_prep_dims ok = {512, 4, 2, 128, 4};
    const prep_refusal cases[] = {
        {"K = 9", {512, 9, 2, 128, 4}, 520, 512, 512, 516, 1, 0, 0, "K = 9 (want 2..8)"},
        {"K = 1", {512, 1, 2, 128, 4}, 520, 512, 512, 516, 1, 0, 0, "K = 1 (want 2..8)"},
        {"dk = 132", {512, 4, 2, 132, 4}, 520, 512, 512, 516, 1, 0, 0, "dk = 132 (want a multiple of 4 in 4..128)"},
        {"dk = 6", {512, 4, 2, 6, 4}, 520, 512, 512, 516, 1, 0, 0, "dk = 6 (want a multiple of 4 in 4..128)"},
        {"hk = 0", {512, 4, 0, 128, 4}, 520, 512, 512, 516, 1, 0, 0, "hk = 0, hv = 4 (want each in 1..1048576)"},
        {"hv = 0", {512, 4, 2, 128, 0}, 520, 512, 512, 516, 1, 0, 0, "hk = 2, hv = 0 (want each in 1..1048576)"},
        {"conv_dim = 510", {510, 4, 2, 128, 4}, 520, 512, 512, 516, 1, 0, 0, "conv_dim = 510 (want a multiple of 4"},
        {"conv_dim below the q/k heads", {256, 4, 2, 128, 4}, 520, 512, 512, 516, 1, 0, 0,
         "conv_dim = 256 (want a multiple of 4 in 2*hk*dk = 512.."},
        {"in_stride 514", ok, 514, 512, 508, 510, 1, 0, 0,
         "strides in 514, out 512 (want multiples of 4, >= conv_dim = 512)"},
        {"in_stride below conv_dim", ok, 508, 512, 500, 504, 1, 0, 0, "strides in 508, out 512"},
        {"out_stride 510", ok, 520, 510, 512, 516, 1, 0, 0, "strides in 520, out 510"},
        {"a misaligned mix", ok, 520, 512, 512, 516, 1, 1, 0, "must be 16-byte aligned"},
        {"a misaligned out", ok, 520, 512, 512, 516, 1, 0, 2, "must be 16-byte aligned"},
        {"alpha past the row", ok, 520, 512, 517, 512, 1, 0, 0,
         "alpha_col = 517, b_col = 512 (want each in 0..in_stride - hv = 516)"},
        {"b_col = -1", ok, 520, 512, 512, -1, 1, 0, 0, "alpha_col = 512, b_col = -1"},
        {"T = -1", ok, 520, 512, 512, 516, -1, 0, 0, "T = -1 (want >= 0)"},
    };
    float *d = q35_gpu_floats(1 << 16);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const prep_refusal *r = &cases[i];
        q35_error err = {{0}};
        const int rc = q35_delta_prep_rows(d + r->out_off, r->out_stride, d, d, d, d + r->mix_off, r->in_stride,
                                           r->alpha_col, r->b_col, d, d, d, r->d, r->T, EPS, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, r->want), "delta_prep_rows refuses %s: %s", r->what, err.msg);
    }
    /* the qk16 form: its f16 outputs set and 8-byte aligned, and the f32 form's checks before its launch */
    uint16_t *h16 = q35_gpu_bytes(4096);
    const struct {
        const char *what;
        uint16_t *q16, *k16;
        int64_t T;
        const char *want;
    } q16cases[] = {
        {"no q16", NULL, h16, 1, "must be set and 8-byte aligned"},
        {"a misaligned k16", h16, h16 + 1, 1, "must be set and 8-byte aligned"},
        {"T = -1", h16, h16 + 1024, -1, "T = -1 (want >= 0)"},
    };
    for (size_t i = 0; i < sizeof q16cases / sizeof q16cases[0]; i++) {
        q35_error err = {{0}};
        const int rc = q35_delta_prep_rows_qk16(d, 512, q16cases[i].q16, q16cases[i].k16, d, d, d, d + 4096, 520, 512,
                                                516, d, d, d, ok, q16cases[i].T, EPS, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, q16cases[i].want), "delta_prep_rows_qk16 refuses %s: %s",
                 q16cases[i].what, err.msg);
    }
    q35_gpu_free(h16);
    /* T = 0: nothing to do, nothing written (the poisoned window stays) */
    q35_error err = {{0}};
    float *win = q35_gpu_floats(512 * 3);
    const int rc = q35_delta_prep_rows(d, 512, d, d, win, d + 4096, 520, 512, 516, d, d, d, ok, 0, EPS, NULL, &err);
    float *h = q35_gpu_to_host(win, 512 * 3);
    const int64_t written = q35_gpu_written(h, 512 * 3);
    q35_case(s, rc == 0 && written == 0, "delta_prep_rows of T = 0: rc %d, %" PRId64 " window values written", rc,
             written);
    free(h);
    q35_gpu_free(win), q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU fused DeltaNet prologue: conv1d + SiLU, L2 of q/k, gates", &g_rng);
    if (skip)
        return skip;

    /* the model layouts (model/shapes.c: hk 16, dk = dv = 128, K 4; hv 16, 32, 48) at
     * 1 row (the window: two old slots and the row), 3 (= K-1: the window all new), 7, 17 (a
     * warp's 16-row tile and one row of the next warp), 64 (a block's four tiles), 1000 and 2048
     * (many blocks, each tile's halo from the tile before) */
    const q35_delta_prep_dims d08 = {6144, 4, 16, 128, 16}, d9 = {8192, 4, 16, 128, 32}, d27 = {10240, 4, 16, 128, 48};
    const int64_t Ts[] = {1, 3, 7, 17, 64, q35_quick() ? 65 : 1000, q35_quick() ? 130 : 2048};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
        const prep_case model[] = {
            {"0.8B", d08, 128, 0, Ts[i]}, {"9B", d9, 128, 0, Ts[i]}, {"27B", d27, 128, 0, Ts[i]}};
        for (int m = 0; m < 3; m++)
            check_prep(&s, &model[m]);
    }
    const prep_case odd[] = {
        /* a strided out (columns past conv_dim untouched), a partial last tile */
        {"9B", d9, 128, 4, 37},
        /* past 2048 rows, a partial last run of the experiment's run 1 and a partial tile, out strided */
        {"9B", d9, 128, 4, q35_quick() ? 2048 + 37 : 4096 + 45},
        /* dk 36 (9 lanes of a warp hold a head), a last v group of 24, K 8 with T < K-1 */
        {"odd", {3 * 2 * 36 + 5 * 12, 8, 3, 36, 5}, 12, 8, 5},
        /* the smallest head (one lane), K 2, hv 3 (the row's stride rounded up) */
        {"odd", {2 * 4 + 3 * 4, 2, 1, 4, 3}, 4, 0, 33},
        /* dk 64, K 3, a tile and a row */
        {"dk 64", {2 * 2 * 64 + 4 * 64, 3, 2, 64, 4}, 64, 0, 33},
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        check_prep(&s, &odd[i]);
    check_refusals(&s);
    return q35_suite_end(&s);
}
