/* GPU parity of the DeltaNet units: causal conv1d + SiLU, the gates, and the
 * delta rule. Each against its float64 reference (rel L-inf <= 1e-5) on fresh
 * random inputs in realistic ranges (q/k heads of unit norm, beta in (0, 1),
 * g in [-20, 0)), outputs poisoned first; each rows form (every delta-rule
 * variant) against its own per-token launches carrying the same state, bitwise
 * (outputs AND final state), and the variants the kernel says compute the same
 * bits against each other; at the head layouts of 0.8B, 9B and 27B and odd
 * sizes; the gates reading alpha and b in place from merged rows with NaN gaps,
 * bitwise the contiguous inputs'; and what each refuses. */
#include "parity/lib/gpu.h"

#include "core/parallel.h"
#include "kernels/conv1d.h"
#include "kernels/delta_rule.h"
#include "kernels/gates.h"
#include "kernels/l2norm.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 1e-5

static q35_rng g_rng;

/* ---- conv1d ------------------------------------------------------------------ */

static void check_conv(q35_suite *s, const char *what, int64_t C, int K, int64_t T)
{
    q35_error err = {{0}};
    const int64_t stride = C + 4; /* rows wider than the channels, as a strided view */
    float *u = q35_host_normal(T * stride, 0.0, 1.0, &g_rng), *w = q35_host_normal(C * K, 0.0, 0.3, &g_rng);
    float *win = q35_host_normal(C * (K - 1), 0.0, 1.0, &g_rng);
    float *du = q35_gpu_from_host(u, T * stride), *dw = q35_gpu_from_host(w, C * K);
    float *dwin_a = q35_gpu_from_host(win, C * (K - 1)), *dwin_b = q35_gpu_from_host(win, C * (K - 1));
    float *dya = q35_gpu_floats(T * C), *dyb = q35_gpu_floats(T * C);
    q35_gpu_ok(q35_conv1d_silu_rows(dya, C, dwin_a, du, stride, dw, C, K, T, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_conv1d_silu(dyb + t * C, dwin_b, du + t * stride, dw, C, K, NULL, &err), &err);
    float *ya = q35_gpu_to_host(dya, T * C), *yb = q35_gpu_to_host(dyb, T * C);
    float *wa = q35_gpu_to_host(dwin_a, C * (K - 1)), *wb = q35_gpu_to_host(dwin_b, C * (K - 1));
    double *ref = malloc((size_t)(T * C) * sizeof *ref), *rwin = q35_host_f64(win, C * (K - 1));
    double *wd = q35_host_f64(w, C * K), *ud = q35_host_f64(u, T * stride);
    for (int64_t t = 0; t < T; t++)
        q35_ref_conv1d_silu(ref + t * C, rwin, ud + t * stride, wd, C, K);
    const q35_cmp c = q35_compare_f32_f64(ya, ref, T * C);
    q35_bitcmp b = q35_bitwise_f32(ya, yb, T * C);
    char name[160];
    snprintf(name, sizeof name, "conv1d_silu_rows %-14s C %5" PRId64 " K %d T %4" PRId64, what, C, K, T);
    q35_case_unit(s, name, &c, LIMIT, &b);
    const q35_cmp cw = q35_compare_f32_f64(wa, rwin, C * (K - 1));
    b = q35_bitwise_f32(wa, wb, C * (K - 1));
    snprintf(name, sizeof name, "conv1d window    %-14s C %5" PRId64 " K %d T %4" PRId64, what, C, K, T);
    q35_case_unit(s, name, &cw, 0.0, &b); /* the window holds inputs: exact */
    free(u), free(w), free(win), free(ya), free(yb), free(wa), free(wb), free(ref), free(rwin), free(wd), free(ud);
    q35_gpu_free(du), q35_gpu_free(dw), q35_gpu_free(dwin_a), q35_gpu_free(dwin_b), q35_gpu_free(dya),
        q35_gpu_free(dyb);
}

/* ---- gates --------------------------------------------------------------------- */

/* alpha and b read in place from merged rows [lead NaN | alpha | b | NaN] of
 * in_stride floats (the tail of one [qkv | z | alpha | b] GEMM's output, with
 * gaps): g and beta bitwise the contiguous inputs' (g1, b1 on the device). */
static void check_gates_strided(q35_suite *s, const char *what, const float *alpha, const float *b, const float *dDt,
                                const float *da, const float *g1, const float *b1, int64_t hv, int64_t T,
                                int64_t lead, int64_t in_stride)
{
    q35_error err = {{0}};
    const int64_t n = hv * T;
    float *mix = q35_gpu_floats(T * in_stride), *g2 = q35_gpu_floats(n), *b2 = q35_gpu_floats(n);
    q35_gpu_upload_cols(mix, in_stride, lead, alpha, hv, T);
    q35_gpu_upload_cols(mix, in_stride, lead + hv, b, hv, T);
    q35_gpu_ok(q35_gates_rows(g2, b2, mix + lead, mix + lead + hv, in_stride, dDt, da, hv, T, NULL, &err), &err);
    float *h[4] = {q35_gpu_to_host(g1, n), q35_gpu_to_host(b1, n), q35_gpu_to_host(g2, n), q35_gpu_to_host(b2, n)};
    const q35_bitcmp bg = q35_bitwise_f32(h[2], h[0], n), bb = q35_bitwise_f32(h[3], h[1], n);
    char dg_s[200], db_s[200];
    q35_case(s, bg.equal && bb.equal,
             "gates_rows      %-14s hv %2" PRId64 " T %4" PRId64 " in stride %5" PRId64
             " vs contiguous inputs: g %s, beta %s",
             what, hv, T, in_stride, q35_bitcmp_str(&bg, dg_s, sizeof dg_s), q35_bitcmp_str(&bb, db_s, sizeof db_s));
    for (int i = 0; i < 4; i++)
        free(h[i]);
    q35_gpu_free(mix), q35_gpu_free(g2), q35_gpu_free(b2);
}

/* in_stride > 0: also read in place from merged rows of in_stride (>= 2*hv + 1,
 * alpha after one NaN lead column) */
static void check_gates(q35_suite *s, const char *what, int64_t hv, int64_t T, int64_t in_stride)
{
    q35_error err = {{0}};
    const int64_t n = hv * T;
    float *alpha = q35_host_normal(n, 0.0, 3.0, &g_rng), *b = q35_host_normal(n, 0.0, 3.0, &g_rng);
    float *dt = q35_host_normal(hv, 1.0, 0.1, &g_rng), *a = malloc((size_t)hv * sizeof *a);
    for (int64_t j = 0; j < hv; j++)
        a[j] = (float)-exp(q35_rng_range(&g_rng, log(0.01), log(16.0)));
    for (int64_t i = 0; i < n; i += 7) /* around the softplus threshold: alpha + dt in [19, 22] */
        alpha[i] = (float)q35_rng_range(&g_rng, 19.0, 22.0) - dt[i % hv];
    float *dA = q35_gpu_from_host(alpha, n), *dB = q35_gpu_from_host(b, n), *dDt = q35_gpu_from_host(dt, hv),
          *da = q35_gpu_from_host(a, hv);
    float *g1 = q35_gpu_floats(n), *b1 = q35_gpu_floats(n), *g2 = q35_gpu_floats(n), *b2 = q35_gpu_floats(n);
    q35_gpu_ok(q35_gates_rows(g1, b1, dA, dB, hv, dDt, da, hv, T, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_gates(g2 + t * hv, b2 + t * hv, dA + t * hv, dB + t * hv, dDt, da, hv, NULL, &err), &err);
    float *hg1 = q35_gpu_to_host(g1, n), *hb1 = q35_gpu_to_host(b1, n), *hg2 = q35_gpu_to_host(g2, n), *hb2 = q35_gpu_to_host(b2, n);
    double *rg = malloc((size_t)n * sizeof *rg), *rb = malloc((size_t)n * sizeof *rb);
    double *ad = q35_host_f64(alpha, n), *bd = q35_host_f64(b, n), *dtd = q35_host_f64(dt, hv), *aad = q35_host_f64(a, hv);
    for (int64_t t = 0; t < T; t++)
        q35_ref_gates(rg + t * hv, rb + t * hv, ad + t * hv, bd + t * hv, dtd, aad, hv);
    char name[160];
    snprintf(name, sizeof name, "gates_rows g    %-14s hv %2" PRId64 " T %4" PRId64, what, hv, T);
    q35_cmp c = q35_compare_f32_f64(hg1, rg, n);
    q35_bitcmp bc = q35_bitwise_f32(hg1, hg2, n);
    q35_case_unit(s, name, &c, LIMIT, &bc);
    snprintf(name, sizeof name, "gates_rows beta %-14s hv %2" PRId64 " T %4" PRId64, what, hv, T);
    c = q35_compare_f32_f64(hb1, rb, n);
    bc = q35_bitwise_f32(hb1, hb2, n);
    q35_case_unit(s, name, &c, LIMIT, &bc);
    if (in_stride > 0)
        check_gates_strided(s, what, alpha, b, dDt, da, g1, b1, hv, T, 1, in_stride);
    free(alpha), free(b), free(dt), free(a), free(hg1), free(hb1), free(hg2), free(hb2), free(rg), free(rb), free(ad),
        free(bd), free(dtd), free(aad);
    q35_gpu_free(dA), q35_gpu_free(dB), q35_gpu_free(dDt), q35_gpu_free(da), q35_gpu_free(g1), q35_gpu_free(b1),
        q35_gpu_free(g2), q35_gpu_free(b2);
}

/* ---- the delta rule --------------------------------------------------------- */

/* Variants the kernel says compute the same bits (kernels/delta_rule.cu: only
 * scheduling, the reduction's distribution or the lane order differ). */
static const char *const k_same_bits[][2] = {
    {"rows2", "r2p"}, {"r2pn", "r2pni"}, {"r2pn", "r2w2pn"}, {"l16r2pn", "l16r2w8pn"}};

/* One case, every variant on the same inputs: its scan against the float64
 * recurrence and, bitwise, against its own per-token launches (outputs and
 * final state); a variant whose rows per block do not divide dv must refuse. */
static void check_delta(q35_suite *s, const char *what, q35_delta_dims d, int64_t T)
{
    q35_error err = {{0}};
    const int64_t kd = (int64_t)d.hk * d.dk, vd = (int64_t)d.hv * d.dv, stride = 2 * kd + vd;
    const int64_t ns = vd * d.dk;
    float *rows = q35_host_normal(T * stride, 0.0, 1.0, &g_rng), *S0 = q35_host_normal(ns, 0.0, 0.1, &g_rng);
    float *g = malloc((size_t)(T * d.hv) * sizeof *g), *beta = q35_host_uniform(T * d.hv, 0.01, 0.99, &g_rng);
    for (int64_t t = 0; t < T; t++)
        for (int j = 0; j < d.hv; j++) /* half the heads remember long (g near 0), half forget fast */
            g[t * d.hv + j] = (float)(j % 2 ? q35_rng_range(&g_rng, -20.0, -1e-4) : q35_rng_range(&g_rng, -0.1, -1e-4));
    float *drows = q35_gpu_from_host(rows, T * stride);
    q35_gpu_ok(q35_l2norm_rows(drows, d.dk, 2 * d.hk, T, stride, 1e-6f, NULL, &err), &err); /* unit q, k heads */
    q35_gpu_download(rows, drows, (size_t)(T * stride) * sizeof *rows);
    float *dg = q35_gpu_from_host(g, T * d.hv), *db = q35_gpu_from_host(beta, T * d.hv);
    double *rd = q35_host_f64(rows, T * stride), *Sr = q35_host_f64(S0, ns), *gd = q35_host_f64(g, T * d.hv);
    double *bd = q35_host_f64(beta, T * d.hv), *ro = malloc((size_t)(T * vd) * sizeof *ro);
    for (int64_t t = 0; t < T; t++) {
        const double *r = rd + t * stride;
        q35_ref_delta_rule_step(ro + t * vd, Sr, r, r + kd, r + 2 * kd, gd + t * d.hv, bd + t * d.hv, d);
    }
    const int n_variants = q35_delta_rule_variant_count();
    float **oa = calloc((size_t)n_variants, sizeof *oa), **Sa = calloc((size_t)n_variants, sizeof *Sa);
    const bool per_token = q35_per_token_launches(T);
    for (int v = 0; v < n_variants; v++) {
        const char *vn = q35_delta_rule_variant_name(v);
        const int rpb = q35_delta_rule_variant_rows(v);
        char name[200];
        if (d.dv % rpb != 0) {
            char want[40];
            snprintf(want, sizeof want, "multiple of %d", rpb);
            memset(&err, 0, sizeof err);
            const int rc = q35_delta_rule_scan(drows, vd, drows, drows, drows + kd, drows + 2 * kd, stride, dg, db, T,
                                               d, v, NULL, &err);
            q35_case(s, rc == -1 && strstr(err.msg, vn) && strstr(err.msg, want),
                     "delta_rule_scan %-9s refuses %-5s dv %3d (%d rows a block): %s", vn, what, d.dv, rpb, err.msg);
            continue;
        }
        float *dSa = q35_gpu_from_host(S0, ns), *dSb = q35_gpu_from_host(S0, ns);
        float *doa = q35_gpu_floats(T * vd), *dob = q35_gpu_floats(T * vd);
        const double t0 = q35_now();
        q35_gpu_ok(q35_delta_rule_scan(doa, vd, dSa, drows, drows + kd, drows + 2 * kd, stride, dg, db, T, d, v, NULL,
                                       &err),
                   &err);
        q35_gpu_sync();
        const double scan_s = q35_now() - t0;
        for (int64_t t = 0; t < (per_token ? T : 0); t++) {
            const float *r = drows + t * stride;
            q35_gpu_ok(q35_delta_rule_scan(dob + t * vd, vd, dSb, r, r + kd, r + 2 * kd, stride, dg + t * d.hv,
                                           db + t * d.hv, 1, d, v, NULL, &err),
                       &err);
        }
        oa[v] = q35_gpu_to_host(doa, T * vd), Sa[v] = q35_gpu_to_host(dSa, ns);
        float *ob = q35_gpu_to_host(dob, T * vd), *Sb = q35_gpu_to_host(dSb, ns);
        snprintf(name, sizeof name, "delta_rule_scan %-9s o %-5s Hk %2d Hv %2d dv %3d T %4" PRId64 " (%.2f ms)", vn,
                 what, d.hk, d.hv, d.dv, T, 1e3 * scan_s);
        q35_cmp c = q35_compare_f32_f64(oa[v], ro, T * vd);
        q35_bitcmp b = q35_bitwise_f32(oa[v], ob, T * vd);
        q35_case_unit(s, name, &c, LIMIT, per_token ? &b : NULL);
        snprintf(name, sizeof name, "delta_rule_scan %-9s S %-5s Hk %2d Hv %2d dv %3d T %4" PRId64, vn, what, d.hk,
                 d.hv, d.dv, T);
        c = q35_compare_f32_f64(Sa[v], Sr, ns);
        b = q35_bitwise_f32(Sa[v], Sb, ns);
        q35_case_unit(s, name, &c, LIMIT, per_token ? &b : NULL);
        free(ob), free(Sb);
        q35_gpu_free(dSa), q35_gpu_free(dSb), q35_gpu_free(doa), q35_gpu_free(dob);
    }
    for (size_t i = 0; i < sizeof k_same_bits / sizeof k_same_bits[0]; i++) {
        const int x = q35_delta_rule_variant_find(k_same_bits[i][0]),
                  y = q35_delta_rule_variant_find(k_same_bits[i][1]);
        if (x < 0 || y < 0) { /* a failure where the experiments are linked; else they are not here */
            if (Q35_KERNEL_EXPERIMENTS)
                q35_case(s, false, "delta_rule_scan: no variant %s or %s", k_same_bits[i][0], k_same_bits[i][1]);
            continue;
        }
        if (!oa[x] || !oa[y]) /* refused this shape */
            continue;
        char bo[160], bs[160];
        const q35_bitcmp b = q35_bitwise_f32(oa[x], oa[y], T * vd), c = q35_bitwise_f32(Sa[x], Sa[y], ns);
        q35_case(s, b.equal && c.equal, "delta_rule_scan %s and %s %-5s T %4" PRId64 ": o %s, S %s",
                 k_same_bits[i][0], k_same_bits[i][1], what, T, q35_bitcmp_str(&b, bo, sizeof bo),
                 q35_bitcmp_str(&c, bs, sizeof bs));
    }
    for (int v = 0; v < n_variants; v++)
        free(oa[v]), free(Sa[v]);
    free(oa), free(Sa);
    free(rows), free(S0), free(g), free(beta), free(rd), free(Sr), free(gd), free(bd), free(ro);
    q35_gpu_free(drows), q35_gpu_free(dg), q35_gpu_free(db);
}

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1 << 16);
    const q35_delta_dims dk64 = {2, 4, 64, 64}, dv24 = {2, 4, 128, 24}, hv3 = {2, 3, 128, 128}, ok = {2, 4, 128, 128};
    int rc = q35_delta_rule_step(d, d, d, d, d, d, d, dk64, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "needs dk = 128"), "delta_rule refuses dk = 64: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_delta_rule_step(d, d, d, d, d, d, d, dv24, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "dv 24"), "delta_rule refuses dv = 24: %s", err.msg);
    memset(&err, 0, sizeof err);
    /* a variant of 32 rows a block: rows2, where the experiments are linked, else the production r2pni */
    const char *v32 = q35_delta_rule_variant_find("rows2") >= 0 ? "rows2" : "r2pni";
    rc = q35_delta_rule_scan(d, 64, d, d, d, d, 64, d, d, 1, (q35_delta_dims){2, 2, 128, 16},
                             q35_delta_rule_variant_find(v32), NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, v32) && strstr(err.msg, "multiple of 32"),
             "delta_rule %s refuses dv = 16: %s", v32, err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_delta_rule_step(d, d, d, d, d, d, d, hv3, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "Hv 3"), "delta_rule refuses Hv = 3 over Hk = 2: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_delta_rule_step(d, d, d + 1, d, d, d, d, ok, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "16-byte aligned"), "delta_rule refuses a misaligned q: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gates_rows(d, d + 64, d + 128, d + 192, 31, d, d, 32, 2, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gates_rows: input row stride 31 shorter than its hv = 32"),
             "gates_rows refuses an input stride below hv: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_conv1d_silu(d, d, d, d, 64, 9, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "K = 9 (want 2..8)"), "conv1d refuses K = 9: %s", err.msg);
    q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU DeltaNet units: conv1d, gates, delta rule", &g_rng);
    if (skip)
        return skip;

    const int64_t *Ts;
    const int n_sizes = q35_test_rows(&Ts); /* the 600-row cases off under a sanitizer */
    const int64_t big = q35_test_big_rows();
    for (int i = 0; i < n_sizes; i++) {
        check_conv(&s, "0.8B", 6144, 4, Ts[i]);
        check_conv(&s, "27B", 10240, 4, Ts[i]);
    }
    check_conv(&s, "9B", 8192, 4, 64);
    check_conv(&s, "odd", 37, 2, 5);
    check_conv(&s, "odd", 37, 8, 3);

    /* the strided cases: MIX rows of the 9B ([qkv 8192 | z 4096 | alpha 32 | b 32]),
     * 0.8B's, and odd ones with NaN gaps */
    for (int i = 0; i < n_sizes; i++)
        check_gates(&s, "9B", 32, Ts[i], 8192 + 4096 + 64);
    check_gates(&s, "0.8B", 16, 37, 6144 + 2048 + 32 + 3);
    check_gates(&s, "27B", 48, big, 0);
    check_gates(&s, "odd", 3, 7, 11);

    const q35_delta_dims d08 = {16, 16, 128, 128}, d9 = {16, 32, 128, 128}, d27 = {16, 48, 128, 128};
    const q35_delta_dims odd = {1, 3, 128, 32}, tiny = {2, 4, 128, 128}, dv16 = {2, 2, 128, 16};
    for (int i = 0; i < n_sizes; i++)
        check_delta(&s, "9B", d9, Ts[i]);
    check_delta(&s, "0.8B", d08, 37);
    check_delta(&s, "27B", d27, 65); /* crosses two tile boundaries */
    check_delta(&s, "tiny", tiny, 33);
    check_delta(&s, "tiny", tiny, 64);
    check_delta(&s, "odd", odd, 37);
    check_delta(&s, "dv 16", dv16, 7);                       /* the variants of 16 rows a block; the others refuse */
    check_delta(&s, "9B", d9, q35_quick() ? 65 : 2049); /* a long scan through many tile boundaries */
    /* the per-token step is the default variant's scan of one token */
    {
        q35_error err = {{0}};
        const int64_t ns = 4 * 128 * 128, stride = 2 * 2 * 128 + 4 * 128;
        float *h = q35_host_normal(stride + 16 + ns, 0.0, 0.3, &g_rng);
        float *in = q35_gpu_from_host(h, stride + 16), *S1 = q35_gpu_from_host(h + 16, ns), *S2 = q35_gpu_from_host(h + 16, ns);
        float *o1 = q35_gpu_floats(512), *o2 = q35_gpu_floats(512);
        q35_gpu_ok(q35_delta_rule_step(o1, S1, in, in + 256, in + 512, in + stride, in + stride + 4, tiny, NULL, &err),
                   &err);
        q35_gpu_ok(q35_delta_rule_scan(o2, 512, S2, in, in + 256, in + 512, stride, in + stride, in + stride + 4, 1,
                                       tiny, q35_delta_rule_variant_default(tiny), NULL, &err),
                   &err);
        float *a = q35_gpu_to_host(o1, 512), *b = q35_gpu_to_host(o2, 512);
        q35_case(&s, memcmp(a, b, 512 * sizeof *a) == 0, "delta_rule_step is the default variant (%s) of one token",
                 q35_delta_rule_variant_name(q35_delta_rule_variant_default(tiny)));
        free(h), free(a), free(b);
        q35_gpu_free(in), q35_gpu_free(S1), q35_gpu_free(S2), q35_gpu_free(o1), q35_gpu_free(o2);
    }
    check_refusals(&s);
    return q35_suite_end(&s);
}
