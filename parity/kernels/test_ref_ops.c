/* The float64 references' own tests: each op against a second formulation or
 * an identity it must satisfy — the chunked WY / UT-transform delta rule against
 * the recurrence, the full-matrix softmax against the online softmax (both to
 * 1e-10), the windowed conv against a direct convolution, RoPE's algebra, the
 * projection's row independence. Fresh random inputs from the printed seed, in
 * realistic ranges (q/k of unit norm, beta in (0, 1), g in [-20, 0)). */
#include "parity/lib/harness.h"

#include "core/parallel.h"
#include "core/rng.h"
#include "kernels/attention.h"
#include "kernels/conv1d.h"
#include "kernels/delta_rule.h"
#include "kernels/gates.h"
#include "kernels/l2norm.h"
#include "core/half.h"
#include "kernels/gemv_q8.h"
#include "kernels/linear.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static q35_rng g_rng;

static double normal(void)
{
    return q35_test_normal(&g_rng);
}

static double *randn(int64_t n, double scale)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; x && i < n; i++)
        x[i] = scale * normal();
    return x;
}

/* max|a - b| / max|b| (b the reference). */
static double rel_err(const double *a, const double *b, int64_t n)
{
    const q35_cmp c = q35_compare_f64(a, b, n);
    return c.rel_linf;
}

/* ---- the delta rule: recurrence vs the chunked WY form ----------------------- */

typedef struct delta_case {
    const char *what;
    q35_delta_dims d;
    int64_t T;
    int chunk;
} delta_case;

static void check_delta(q35_suite *s, const delta_case *c)
{
    const q35_delta_dims d = c->d;
    const int64_t kd = (int64_t)d.hk * d.dk, vd = (int64_t)d.hv * d.dv, stride = 2 * kd + vd;
    const int64_t ns = (int64_t)d.hv * d.dv * d.dk;
    double *rows = randn(c->T * stride, 1.0), *S0 = randn(ns, 0.1);
    double *g = malloc((size_t)(c->T * d.hv) * sizeof *g), *beta = malloc((size_t)(c->T * d.hv) * sizeof *beta);
    double *o_rec = malloc((size_t)(c->T * vd) * sizeof(double)), *o_wy = malloc((size_t)(c->T * vd) * sizeof(double));
    double *S_rec = malloc((size_t)ns * sizeof(double)), *S_wy = malloc((size_t)ns * sizeof(double));
    for (int64_t t = 0; t < c->T; t++) {
        for (int64_t h = 0; h < 2 * d.hk; h++) /* unit-norm q and k heads */
            q35_ref_l2norm(rows + t * stride + h * d.dk, rows + t * stride + h * d.dk, d.dk, 0.0);
        for (int j = 0; j < d.hv; j++) {
            g[t * d.hv + j] = -20.0 * q35_rng_uniform(&g_rng) - 1e-4; /* [-20, 0) */
            beta[t * d.hv + j] = q35_rng_range(&g_rng, 0.01, 0.99);
        }
    }
    /* a few heads barely decay, so the state carries across the whole sequence */
    for (int64_t t = 0; t < c->T; t++)
        g[t * d.hv] = -1e-3;
    memcpy(S_rec, S0, (size_t)ns * sizeof(double));
    memcpy(S_wy, S0, (size_t)ns * sizeof(double));
    q35_poison_f64(o_rec, c->T * vd);
    q35_poison_f64(o_wy, c->T * vd);
    for (int64_t t = 0; t < c->T; t++) {
        const double *r = rows + t * stride;
        q35_ref_delta_rule_step(o_rec + t * vd, S_rec, r, r + kd, r + 2 * kd, g + t * d.hv, beta + t * d.hv, d);
    }
    const int rc = q35_ref_delta_rule_chunked(o_wy, S_wy, rows, rows + kd, rows + 2 * kd, stride, g, beta, c->T,
                                              c->chunk, d);
    const double eo = rel_err(o_wy, o_rec, c->T * vd), es = rel_err(S_wy, S_rec, ns);
    q35_case(s, rc == 0 && eo <= 1e-10 && es <= 1e-10,
             "delta rule WY vs recurrence  %-10s Hk %2d Hv %2d dk %3d dv %3d T %3" PRId64 " chunk %2d: o %.2e, S %.2e",
             c->what, d.hk, d.hv, d.dk, d.dv, c->T, c->chunk, eo, es);
    free(rows), free(S0), free(g), free(beta), free(o_rec), free(o_wy), free(S_rec), free(S_wy);
}

/* ---- attention: full-matrix vs online softmax ------------------------------- */

static void check_attention(q35_suite *s, const char *what, int heads, int kv, int hd, int64_t n_ctx, int block,
                            double q_scale)
{
    const q35_attn_dims d = {.heads = heads, .kv_heads = kv, .head_dim = hd, .kv_stride = (int64_t)kv * hd,
                             .scale = 1.0 / sqrt((double)hd)};
    double *q = randn((int64_t)heads * hd, q_scale), *k = randn(n_ctx * kv * hd, 1.0), *v = randn(n_ctx * kv * hd, 1.0);
    double *o_full = malloc((size_t)heads * (size_t)hd * sizeof(double)), *o_on = malloc((size_t)heads * (size_t)hd * sizeof(double));
    q35_poison_f64(o_full, (int64_t)heads * hd);
    q35_poison_f64(o_on, (int64_t)heads * hd);
    const int rc = q35_ref_attention(o_full, q, k, v, n_ctx, d);
    q35_ref_attention_online(o_on, q, k, v, n_ctx, block, d);
    const double e = rel_err(o_on, o_full, (int64_t)heads * hd);
    q35_case(s, rc == 0 && e <= 1e-10, "attention online vs full  %-5s heads %2d/%d hd %3d ctx %5" PRId64
             " block %3d q x%-4g: %.2e", what, heads, kv, hd, n_ctx, block, q_scale, e);
    /* n_ctx = 1: the output is v_0 of the group's KV head, exactly */
    if (n_ctx == 1) {
        bool exact = true;
        for (int h = 0; h < heads; h++)
            exact = exact && memcmp(o_full + (int64_t)h * hd, v + (int64_t)(h / (heads / kv)) * hd,
                                    (size_t)hd * sizeof(double)) == 0;
        q35_case(s, exact, "attention over one position returns that position's V (GQA group h / %d)", heads / kv);
    }
    free(q), free(k), free(v), free(o_full), free(o_on);
}

/* ---- conv1d: the advancing window against a direct convolution --------------- */

static void check_conv(q35_suite *s, int64_t C, int K, int64_t T)
{
    double *w = randn(C * K, 0.3), *x = randn((T + K - 1) * C, 1.0); /* x rows -(K-1)..T-1 */
    double *win = malloc((size_t)(C * (K - 1)) * sizeof(double)), *y = malloc((size_t)(T * C) * sizeof(double));
    for (int64_t c = 0; c < C; c++)
        for (int j = 0; j < K - 1; j++)
            win[c * (K - 1) + j] = x[j * C + c];
    q35_poison_f64(y, T * C);
    for (int64_t t = 0; t < T; t++)
        q35_ref_conv1d_silu(y + t * C, win, x + (t + K - 1) * C, w, C, K);
    double worst = 0.0;
    bool window_ok = true;
    for (int64_t t = 0; t < T; t++) {
        for (int64_t c = 0; c < C; c++) {
            double acc = 0.0; /* y_t = silu(sum_j w[j] x[t - K + 1 + j]) */
            for (int j = 0; j < K; j++)
                acc += w[c * K + j] * x[(t + j) * C + c];
            const double want = q35_ref_silu(acc), got = y[t * C + c];
            worst = fmax(worst, fabs(got - want) / fmax(1.0, fabs(want)));
        }
    }
    for (int64_t c = 0; c < C; c++) /* the window holds the last K-1 inputs, oldest first */
        for (int j = 0; j < K - 1; j++)
            window_ok = window_ok && win[c * (K - 1) + j] == x[(T + j) * C + c];
    q35_case(s, worst <= 1e-13 && window_ok,
             "conv1d window vs direct convolution  C %5" PRId64 " K %d T %3" PRId64 ": %.2e, window %s", C, K, T, worst,
             window_ok ? "holds the last K-1 inputs" : "WRONG");
    free(w), free(x), free(win), free(y);
}

/* ---- RoPE: identity at 0, norms kept, angles add, pass-through dims ---------- */

static void check_rope(q35_suite *s, int heads, int hd, int n_rot, double base)
{
    const int64_t n = (int64_t)heads * hd;
    double *x = randn(n, 1.0), *y = malloc((size_t)n * sizeof(double)), *z = malloc((size_t)n * sizeof(double));
    memcpy(y, x, (size_t)n * sizeof(double));
    q35_ref_rope_neox(y, heads, hd, n_rot, 0, base);
    q35_case(s, memcmp(x, y, (size_t)n * sizeof(double)) == 0, "rope at position 0 is the identity (bitwise)");
    const int64_t a = 1234, b = 98765;
    memcpy(y, x, (size_t)n * sizeof(double));
    q35_ref_rope_neox(y, heads, hd, n_rot, a, base);
    q35_ref_rope_neox(y, heads, hd, n_rot, b, base);
    memcpy(z, x, (size_t)n * sizeof(double));
    q35_ref_rope_neox(z, heads, hd, n_rot, a + b, base);
    double pair_err = 0.0;
    bool pass_ok = true;
    for (int h = 0; h < heads; h++) {
        const double *xh = x + (int64_t)h * hd, *zh = z + (int64_t)h * hd;
        for (int i = 0; i < n_rot / 2; i++) {
            const double n0 = hypot(xh[i], xh[i + n_rot / 2]), n1 = hypot(zh[i], zh[i + n_rot / 2]);
            pair_err = fmax(pair_err, fabs(n0 - n1));
        }
        pass_ok = pass_ok && memcmp(xh + n_rot, zh + n_rot, (size_t)(hd - n_rot) * sizeof(double)) == 0;
    }
    const double add_err = rel_err(y, z, n);
    q35_case(s, add_err <= 1e-9 && pair_err <= 1e-12 && pass_ok,
             "rope heads %d hd %d n_rot %d: rot(a) rot(b) = rot(a+b) %.2e, pair norms %.2e, dims %d.. untouched %s",
             heads, hd, n_rot, add_err, pair_err, n_rot, pass_ok ? "yes" : "NO");
    /* one known angle: position 1, pair 1 turns by base^(-2/n_rot) */
    double u[4] = {0};
    double *one = calloc((size_t)hd, sizeof(double));
    one[1] = 1.0;
    q35_ref_rope_neox(one, 1, hd, n_rot, 1, base);
    const double th = pow(base, -2.0 / n_rot);
    u[0] = one[1], u[1] = one[1 + n_rot / 2];
    q35_case(s, fabs(u[0] - cos(th)) <= 1e-15 && fabs(u[1] - sin(th)) <= 1e-15,
             "rope pair 1 at position 1 turns by base^(-2/n_rot) = %.6g rad", th);
    free(one), free(x), free(y), free(z);
}

/* ---- gates, norms -------------------------------------------------------------- */

static void check_gates_norms(q35_suite *s)
{
    const double alpha[4] = {20.5, 0.0, -3.0, 19.0}, b[4] = {0.0, 2.0, -2.0, 40.0};
    const double dt[4] = {0.0, 0.0, 1.0, 0.5}, a[4] = {-2.0, -1.0, -16.0, -0.01};
    double g[4], beta[4];
    q35_ref_gates(g, beta, alpha, b, dt, a, 4);
    q35_case(s, g[0] == 20.5 * -2.0 && fabs(g[1] + log(2.0)) <= 1e-16 && fabs(g[2] - log1p(exp(-2.0)) * -16.0) <= 1e-15 &&
                    fabs(g[3] - log1p(exp(19.5)) * -0.01) <= 1e-16 && g[3] != 19.5 * -0.01 && beta[0] == 0.5 &&
                    fabs(beta[1] - 1.0 / (1.0 + exp(-2.0))) <= 1e-16,
             "gates: softplus(x) = x past 20 (not at 19.5), log 2 at 0; g = softplus(alpha + dt) * a; beta = sigmoid(b)");
    const int64_t n = 256;
    double *x = randn(n, 3.0), *y = malloc((size_t)n * sizeof(double)), *w = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        w[i] = 1.0;
    double ss = 0.0, yy = 0.0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    q35_ref_rmsnorm(y, x, w, n, 1e-6);
    for (int64_t i = 0; i < n; i++)
        yy += y[i] * y[i];
    const double want = (ss / n) / (ss / n + 1e-6);
    q35_case(s, fabs(yy / n - want) <= 1e-14, "rmsnorm with w = 1: mean(y^2) = ms / (ms + eps) (%.15f)", yy / n);
    q35_ref_l2norm(y, x, n, 1e-6);
    yy = 0.0;
    for (int64_t i = 0; i < n; i++)
        yy += y[i] * y[i];
    q35_case(s, fabs(yy - ss / (ss + 1e-6)) <= 1e-14, "l2norm: |y|^2 = ss / (ss + eps) (%.15f)", yy);
    /* the fused form: x + r into x, then the norm of that sum (r = x: the sum is 2x, the norm unchanged but for eps) */
    double *x2 = malloc((size_t)n * sizeof(double)), *y2 = malloc((size_t)n * sizeof(double));
    memcpy(x2, x, (size_t)n * sizeof(double));
    q35_ref_add_rmsnorm(y2, x2, x, w, n, 0.0);
    q35_ref_rmsnorm(y, x, w, n, 0.0);
    bool same = true;
    for (int64_t i = 0; i < n; i++)
        same = same && x2[i] == 2.0 * x[i] && fabs(y2[i] - y[i]) <= 1e-15 * fabs(y[i]) + 1e-300;
    q35_case(s, same, "add_rmsnorm: x + x into x (2x exactly), its norm that of x (eps 0)");
    free(x), free(y), free(w), free(x2), free(y2);
}

/* ---- the projection: rows independent of the batch, threads irrelevant ------- */

static void check_linear(q35_suite *s, q35_type type, int64_t n_out, int64_t n_in, int64_t rows)
{
    float *wf = malloc((size_t)(n_out * n_in) * sizeof(float));
    for (int64_t i = 0; i < n_out * n_in; i++)
        wf[i] = (float)(0.02 * normal());
    const size_t rb = q35_row_bytes(type, n_in);
    unsigned char *wq = malloc(rb * (size_t)n_out);
    q35_quantize(type, wf, wq, n_out * n_in);
    q35_dequantize(type, wq, wf, n_out * n_in); /* wf: the weight as the reference sees it */
    double *x = randn(rows * n_in, 1.0), *y = malloc((size_t)(rows * n_out) * sizeof(double));
    double *y1 = malloc((size_t)n_out * sizeof(double)), *y_t1 = malloc((size_t)(rows * n_out) * sizeof(double));
    q35_poison_f64(y, rows * n_out);
    int rc = q35_ref_linear(y, x, type, wq, n_out, n_in, rows);
    double worst = 0.0;
    for (int64_t t = 0; t < rows; t++)
        for (int64_t o = 0; o < n_out; o++) {
            double acc = 0.0; /* the plainest loop, ascending i */
            for (int64_t i = 0; i < n_in; i++)
                acc += x[t * n_in + i] * (double)wf[o * n_in + i];
            worst = fmax(worst, fabs(y[t * n_out + o] - acc));
        }
    bool rows_bitwise = true;
    for (int64_t t = 0; t < rows && rc == 0; t++) {
        rc |= q35_ref_linear(y1, x + t * n_in, type, wq, n_out, n_in, 1);
        rows_bitwise = rows_bitwise && memcmp(y1, y + t * n_out, (size_t)n_out * sizeof(double)) == 0;
    }
    const int threads = q35_threads();
    q35_set_threads(1);
    rc |= q35_ref_linear(y_t1, x, type, wq, n_out, n_in, rows);
    q35_set_threads(threads);
    const bool threads_bitwise = memcmp(y_t1, y, (size_t)(rows * n_out) * sizeof(double)) == 0;
    q35_case(s, rc == 0 && worst <= 1e-12 && rows_bitwise && threads_bitwise,
             "linear %-5s %5" PRId64 " x %5" PRId64 " rows %3" PRId64 ": vs plain loop %.1e; row t of the batch = "
             "1-row call %s; 1 thread = %d threads %s",
             q35_type_name(type), n_out, n_in, rows, worst, rows_bitwise ? "bitwise" : "DIFFERS", threads,
             threads_bitwise ? "bitwise" : "DIFFERS");
    free(wf), free(wq), free(x), free(y), free(y1), free(y_t1);
}

/* --act-quant ggml's rounding (kernels/ref/ggml_act.c) on literals whose answer is
 * known by hand, and the Q4_1 product with the stored block sums written out. */
static void check_ggml_act(q35_suite *s)
{
    double x[256], y[256], sums[8];
    float tmp[256];
    /* Q8_0 (a Q4_0 weight's): max|x| 127 gives d = 1, q = x rounded half to even */
    for (int i = 0; i < 32; i++)
        x[i] = 0.5;
    x[0] = 127.0, x[1] = 2.5, x[2] = 3.5, x[3] = -2.5;
    q35_ggml_act_row(Q35_TYPE_Q4_0, x, y, NULL, tmp, 32);
    q35_case(s, y[0] == 127.0 && y[1] == 2.0 && y[2] == 4.0 && y[3] == -2.0 && y[4] == 0.0,
             "ggml act Q8_0: 127, 2.5, 3.5, -2.5, 0.5 -> %g, %g, %g, %g, %g (half to even)", y[0], y[1], y[2], y[3], y[4]);
    /* Q8_1 (a Q4_1 weight's): the same values, and the block's stored sum f16(d * sum q) */
    q35_ggml_act_row(Q35_TYPE_Q4_1, x, y, sums, tmp, 32);
    q35_case(s, y[1] == 2.0 && sums[0] == 127.0 + 2.0 + 4.0 - 2.0, "ggml act Q8_1: stored sum %g (want 131)", sums[0]);
    /* Q8_K (a Q4_K weight's): the value of largest magnitude negative, -127: iscale 1 */
    for (int i = 0; i < 256; i++)
        x[i] = 0.5;
    x[5] = -127.0, x[0] = 2.5, x[1] = -3.5;
    q35_ggml_act_row(Q35_TYPE_Q4_K, x, y, NULL, tmp, 256);
    q35_case(s, y[5] == -127.0 && y[0] == 2.0 && y[1] == -4.0 && y[2] == 0.0,
             "ggml act Q8_K: -127, 2.5, -3.5, 0.5 -> %g, %g, %g, %g", y[5], y[0], y[1], y[2]);
    q35_case(s, q35_ggml_act_type(Q35_TYPE_F16) == Q35_TYPE_F16 && q35_ggml_act_type(Q35_TYPE_IQ4_NL) == Q35_TYPE_Q8_0 &&
                    q35_ggml_act_type(Q35_TYPE_Q5_1) == Q35_TYPE_Q8_1 &&
                    q35_ggml_act_type(Q35_TYPE_IQ4_XS) == Q35_TYPE_Q8_K &&
                    q35_ggml_act_type(Q35_TYPE_IQ2_XXS) == Q35_TYPE_Q8_K,
             "ggml act types: f16 f16, iq4_nl q8_0, q5_1 q8_1, iq4_xs and iq2_xxs q8_K");

    /* Q4_1 under --act-quant ggml: sum over blocks of d_w * sum(q * x') + m_w * s */
    enum { N_IN = 256, N_OUT = 3 };
    float wf[N_OUT * N_IN];
    for (int i = 0; i < N_OUT * N_IN; i++)
        wf[i] = (float)(0.02 * normal() + 0.01);
    unsigned char wq[N_OUT * (N_IN / 32) * 20];
    q35_quantize(Q35_TYPE_Q4_1, wf, wq, N_OUT * N_IN);
    double *xr = randn(N_IN, 1.0), out[N_OUT], worst = 0.0;
    q35_ggml_act_row(Q35_TYPE_Q4_1, xr, y, sums, tmp, N_IN);
    const int rc = q35_ref_linear_act(out, xr, Q35_TYPE_Q4_1, wq, N_OUT, N_IN, 1, Q35_ACT_GGML);
    for (int o = 0; o < N_OUT; o++) {
        double want = 0.0;
        for (int b = 0; b < N_IN / 32; b++) {
            const unsigned char *blk = wq + ((size_t)o * (N_IN / 32) + (size_t)b) * 20;
            uint16_t dh, mh;
            memcpy(&dh, blk, 2), memcpy(&mh, blk + 2, 2);
            double qx = 0.0;
            for (int i = 0; i < 16; i++)
                qx += (blk[4 + i] & 15) * y[b * 32 + i] + (blk[4 + i] >> 4) * y[b * 32 + 16 + i];
            want += (double)q35_f16_to_f32(dh) * qx + (double)q35_f16_to_f32(mh) * sums[b];
        }
        worst = fmax(worst, fabs(out[o] - want) / fmax(fabs(want), 1e-30));
    }
    q35_case(s, rc == 0 && worst <= 1e-6 && out[0] != 0.0, "ggml act Q4_1 product: the offsets times the stored sums, rel %.1e (y[0] %.6g)", worst, out[0]);
    free(xr);
}

/* The fast decode's activation quantization (kernels/gemv_q8.h) on literals:
 * max|x| 127 gives d = 1 and q = x rounded half to even, s = d * sum q; an
 * all-zero block stays zero. */
static void check_gemv_q8_quantize(q35_suite *s)
{
    float x[64];
    int8_t q[64];
    float d[2], sm[2];
    for (int i = 0; i < 64; i++)
        x[i] = i < 32 ? 0.5f : 0.0f;
    x[0] = -127.0f, x[1] = 2.5f, x[2] = 3.5f, x[3] = -2.5f;
    q35_ref_gemv_q8_quantize(q, d, sm, x, 64);
    bool zeros = d[1] == 0.0f && sm[1] == 0.0f;
    for (int i = 32; i < 64; i++)
        zeros = zeros && q[i] == 0;
    q35_case(s, d[0] == 1.0f && q[0] == -127 && q[1] == 2 && q[2] == 4 && q[3] == -2 && q[4] == 0 &&
                    sm[0] == -127.0f + 2 + 4 - 2 && zeros,
             "gemv_q8 quantize: -127, 2.5, 3.5, -2.5, 0.5 -> %d, %d, %d, %d, %d (d %g, s %g); a zero block: d %g, s %g%s",
             q[0], q[1], q[2], q[3], q[4], (double)d[0], (double)sm[0], (double)d[1], (double)sm[1],
             zeros ? "" : ", q not all zero");
}

/* --act-quant decode-q8 (Q35_ACT_Q8): a product on a weight gemv_q8 takes is
 * bitwise the exact product on x' = d q of q35_ref_gemv_q8_quantize (of x
 * rounded to float32), not the product on x; on a weight it does not take
 * (F16), bitwise the exact product. */
static void check_act_q8(q35_suite *s)
{
    enum { N_IN = 512, N_OUT = 5, ROWS = 2 };
    float wf[N_OUT * N_IN], xf[N_IN], d[2 * N_IN / 32];
    int8_t q[N_IN];
    for (int i = 0; i < N_OUT * N_IN; i++)
        wf[i] = (float)(0.05 * normal());
    static unsigned char wk[N_OUT * (N_IN / 256) * 144], wh[N_OUT * N_IN * 2];
    q35_quantize(Q35_TYPE_Q4_K, wf, wk, N_OUT * N_IN);
    q35_quantize(Q35_TYPE_F16, wf, wh, N_OUT * N_IN);
    double *x = randn(ROWS * N_IN, 1.0), xr[ROWS * N_IN];
    for (int t = 0; t < ROWS; t++) { /* x' = d q, a block at a time */
        double *xt = x + t * N_IN, *rt = xr + t * N_IN;
        for (int i = 0; i < N_IN; i++)
            xf[i] = (float)xt[i];
        q35_ref_gemv_q8_quantize(q, d, d + N_IN / 32, xf, N_IN);
        for (int b = 0; b < N_IN / 32; b++)
            for (int j = 0; j < 32; j++)
                rt[32 * b + j] = (double)d[b] * q[32 * b + j]; /* exact in float64 */
    }
    double got[ROWS * N_OUT], want[ROWS * N_OUT], plain[ROWS * N_OUT];
    int rc = q35_ref_linear_act(got, x, Q35_TYPE_Q4_K, wk, N_OUT, N_IN, ROWS, Q35_ACT_Q8) |
             q35_ref_linear(want, xr, Q35_TYPE_Q4_K, wk, N_OUT, N_IN, ROWS) |
             q35_ref_linear(plain, x, Q35_TYPE_Q4_K, wk, N_OUT, N_IN, ROWS);
    q35_case(s, rc == 0 && memcmp(got, want, sizeof got) == 0 && memcmp(got, plain, sizeof got) != 0,
             "act decode-q8, Q4_K: bitwise the product on x' (y[0] %.9g, on x %.9g)", got[0], plain[0]);
    rc = q35_ref_linear_act(got, x, Q35_TYPE_F16, wh, N_OUT, N_IN, ROWS, Q35_ACT_Q8) |
         q35_ref_linear(want, x, Q35_TYPE_F16, wh, N_OUT, N_IN, ROWS);
    q35_case(s, rc == 0 && memcmp(got, want, sizeof got) == 0, "act decode-q8, F16 (not a gemv_q8 type): exact");
    free(x);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_rng_seed(&g_rng, seed);
    q35_suite s;
    q35_suite_begin(&s, "float64 op references: second formulations and identities", seed);

    static const delta_case deltas[] = {
        /* small heads: many chunk sizes, including chunks longer than the sequence */
        {"small", {2, 4, 16, 16}, 1, 4},
        {"small", {2, 4, 16, 16}, 7, 1},
        {"small", {2, 4, 16, 16}, 37, 8},
        {"small", {2, 4, 16, 16}, 37, 64},
        {"odd", {1, 3, 5, 7}, 19, 4},
        /* the real head widths and tilings: 0.8B (16/16), 9B (16/32, r = 2), 27B (16/48, r = 3) */
        {"0.8B", {16, 16, 128, 128}, 9, 4},
        {"9B", {16, 32, 128, 128}, 9, 4},
        {"27B", {16, 48, 128, 128}, 5, 2},
    };
    for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++)
        check_delta(&s, &deltas[i]);

    /* head layouts of 0.8B (8/2, 4 per group), 9B (16/4), 27B (24/4, 6 per group) */
    const int64_t ctxs[] = {1, 17, 64, 600};
    for (size_t i = 0; i < sizeof ctxs / sizeof ctxs[0]; i++) {
        check_attention(&s, "0.8B", 8, 2, 256, ctxs[i], 64, 1.0);
        check_attention(&s, "27B", 24, 4, 256, ctxs[i], 7, 1.0);
    }
    check_attention(&s, "9B", 16, 4, 256, 600, 1, 1.0);
    check_attention(&s, "9B", 16, 4, 256, 600, 128, 8.0); /* peaked scores: the running max must rescale */

    check_conv(&s, 1, 4, 1);
    check_conv(&s, 37, 4, 7);
    check_conv(&s, 8192, 4, 65); /* the 9B conv channels */
    check_conv(&s, 3, 2, 5);

    check_rope(&s, 16, 256, 64, 1e7);
    check_rope(&s, 3, 64, 64, 1e4);
    check_gates_norms(&s);

    check_linear(&s, Q35_TYPE_F32, 37, 96, 7);
    check_linear(&s, Q35_TYPE_F16, 256, 256, 3);
    check_linear(&s, Q35_TYPE_Q4_K, 129, 512, 5);
    check_linear(&s, Q35_TYPE_Q8_0, 64, 1024, 1);
    check_ggml_act(&s);
    check_gemv_q8_quantize(&s);
    check_act_q8(&s);
    return q35_suite_end(&s);
}
