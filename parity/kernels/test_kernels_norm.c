/* GPU parity of the norm units: RMSNorm (rows, one row, per head), gated RMSNorm,
 * per-head L2 norm with a row stride. Each against its float64 reference (rel
 * L-inf <= 1e-5) on fresh random inputs, outputs poisoned first, and its rows
 * form against per-token launches, bitwise; at the widths of 0.8B, 9B and 27B
 * and at odd sizes; and the shapes each refuses. The f16-out forms (RMSNorm,
 * the fused add + RMSNorm, gated RMSNorm: the next f16 GEMM's input) bitwise
 * the CPU's rounding of the f32 form's output (memcmp) and within 1e-3 of
 * float64 (the rounding: 2^-11 of a value at most). Gated RMSNorm with z read
 * in place from merged rows with NaN gaps, bitwise the contiguous z's. RMSNorm
 * and L2 norm bitwise a CPU emulation of the kernels' f32 order of summing.
 * The FP8-out forms (the same three: the next FP8 GEMM's input, codes and a
 * scale a row; the gated norm's a token, an experiment,
 * kernels/experiments/gated_rmsnorm_fp8.h: its cases where
 * Q35_KERNEL_EXPERIMENTS is on, else a SKIP line) bitwise q35_fp8_quantize_rows
 * of the f32 form's output on the GPU and q35_ref_fp8_quantize_rows of it on
 * the CPU (memcmp, codes and scales), within one e4m3 step of the float64
 * reference quantized, the fused form's sum bitwise the f32 form's; at
 * 1..24576 values a row (the shared memory opt-in past 47 KiB) and 2048 rows;
 * and the shapes they refuse. The gated norm's f16 form with the fast SiLU (an
 * experiment, kernels/experiments/gated_rmsnorm_fast.h) within 1e-3 of
 * float64, every value written, where the experiments are built. The 8-bit
 * forms (a decode step's norms with their quantization, kernels/gemv_q8.h)
 * bitwise the f32 form then q35_gemv_q8_quantize (memcmp), and their
 * refusals. */
#include "parity/lib/gpu.h"

#include "kernels/experiments/gated_rmsnorm_fast.h"
#include "kernels/experiments/gated_rmsnorm_fp8.h"
#include "kernels/fp8.h"
#include "kernels/gated_rmsnorm.h"
#include "kernels/gemv_q8.h"
#include "kernels/l2norm.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"

#include "core/half.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-6f
#define LIMIT 1e-5
#define LIMIT_F16 1e-3

static q35_rng g_rng;

/* rows vectors of n sharing w: `per_token` vectors per launch in the per-token form */
static void check_rmsnorm(q35_suite *s, const char *what, int64_t n, int64_t rows, int64_t per_token)
{
    q35_error err = {{0}};
    const int64_t total = n * rows;
    float *x = q35_host_normal(total, 0.0, 3.0, &g_rng), *w = q35_host_normal(n, 1.0, 0.1, &g_rng);
    float *dx = q35_gpu_from_host(x, total), *dw = q35_gpu_from_host(w, n);
    float *dy = q35_gpu_floats(total), *dt = q35_gpu_floats(total);
    q35_gpu_ok(q35_rmsnorm_rows(dy, dx, dw, n, rows, EPS, NULL, &err), &err);
    for (int64_t r = 0; r < rows; r += per_token)
        q35_gpu_ok(per_token == 1 ? q35_rmsnorm(dt + r * n, dx + r * n, dw, n, EPS, NULL, &err)
                                  : q35_rmsnorm_rows(dt + r * n, dx + r * n, dw, n, per_token, EPS, NULL, &err),
                   &err);
    float *y = malloc((size_t)total * sizeof *y), *yt = malloc((size_t)total * sizeof *yt);
    q35_gpu_download(y, dy, (size_t)total * sizeof *y);
    q35_gpu_download(yt, dt, (size_t)total * sizeof *yt);
    double *xd = q35_host_f64(x, total), *wd = q35_host_f64(w, n), *ref = malloc((size_t)total * sizeof *ref);
    for (int64_t r = 0; r < rows; r++)
        q35_ref_rmsnorm(ref + r * n, xd + r * n, wd, n, EPS);
    const q35_cmp c = q35_compare_f32_f64(y, ref, total);
    const q35_bitcmp b = q35_bitwise_f32(y, yt, total);
    char name[160];
    snprintf(name, sizeof name, "rmsnorm_rows  %-18s n %5" PRId64 " rows %5" PRId64, what, n, rows);
    q35_case_unit(s, name, &c, LIMIT, &b);
    uint16_t *d16 = q35_gpu_bytes((size_t)total * 2);
    q35_gpu_ok(q35_rmsnorm_rows_f16(d16, dx, dw, n, rows, EPS, NULL, &err), &err);
    snprintf(name, sizeof name, "rmsnorm_rows_f16 %-15s n %5" PRId64 " rows %5" PRId64, what, n, rows);
    q35_check_f16_out(s, name, d16, y, ref, total, LIMIT_F16);
    q35_gpu_free(d16);
    uint8_t *d8 = q35_gpu_bytes((size_t)total);
    float *dscale = q35_gpu_floats(rows);
    q35_gpu_ok(q35_rmsnorm_rows_fp8(d8, dscale, dx, dw, n, rows, EPS, NULL, &err), &err);
    snprintf(name, sizeof name, "rmsnorm_rows_fp8 %-15s n %5" PRId64 " rows %5" PRId64, what, n, rows);
    q35_check_fp8_out(s, name, d8, dscale, dy, ref, rows, n, LIMIT);
    q35_gpu_free(d8), q35_gpu_free(dscale);
    /* in place: y may be x */
    q35_gpu_ok(q35_rmsnorm_rows(dx, dx, dw, n, rows, EPS, NULL, &err), &err);
    q35_gpu_download(yt, dx, (size_t)total * sizeof *yt);
    q35_case(s, memcmp(y, yt, (size_t)total * sizeof *y) == 0, "rmsnorm_rows  %-18s in place (y = x): bitwise equal",
             what);
    free(x), free(w), free(y), free(yt), free(xd), free(wd), free(ref);
    q35_gpu_free(dx), q35_gpu_free(dw), q35_gpu_free(dy), q35_gpu_free(dt);
}

/* The fused residual add + RMSNorm on rows vectors of n: the sum and the norm
 * against float64, and both bitwise against q35_residual_add_rows then
 * q35_rmsnorm_rows, and against per-token launches of the fused form. */
static void check_add_rmsnorm(q35_suite *s, const char *what, int64_t n, int64_t rows)
{
    q35_error err = {{0}};
    const int64_t total = n * rows;
    const size_t bytes = (size_t)total * sizeof(float);
    float *x = q35_host_normal(total, 0.0, 3.0, &g_rng), *r = q35_host_normal(total, 0.0, 1.0, &g_rng);
    float *w = q35_host_normal(n, 1.0, 0.1, &g_rng);
    float *dx = q35_gpu_from_host(x, total), *dr = q35_gpu_from_host(r, total), *dw = q35_gpu_from_host(w, n);
    float *dx2 = q35_gpu_from_host(x, total), *dx3 = q35_gpu_from_host(x, total), *dx4 = q35_gpu_from_host(x, total);
    float *dx5 = q35_gpu_from_host(x, total), *dscale = q35_gpu_floats(rows);
    uint8_t *d8 = q35_gpu_bytes((size_t)total);
    float *dy = q35_gpu_floats(total), *dy2 = q35_gpu_floats(total), *dy3 = q35_gpu_floats(total);
    uint16_t *d16 = q35_gpu_bytes((size_t)total * 2);
    q35_gpu_ok(q35_add_rmsnorm_rows(dy, dx, dr, dw, n, rows, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_add_rmsnorm_rows_f16(d16, dx4, dr, dw, n, rows, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_add_rmsnorm_rows_fp8(d8, dscale, dx5, dr, dw, n, rows, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_residual_add_rows(dx2, dr, n, rows, NULL, &err), &err); /* the two ops it fuses */
    q35_gpu_ok(q35_rmsnorm_rows(dy2, dx2, dw, n, rows, EPS, NULL, &err), &err);
    for (int64_t t = 0; t < rows; t++) /* per token */
        q35_gpu_ok(q35_add_rmsnorm_rows(dy3 + t * n, dx3 + t * n, dr + t * n, dw, n, 1, EPS, NULL, &err), &err);
    float *h[6];
    float *const dev[6] = {dx, dy, dx2, dy2, dx3, dy3};
    for (int i = 0; i < 6; i++) {
        h[i] = malloc(bytes);
        q35_gpu_download(h[i], dev[i], bytes);
    }
    double *xd = q35_host_f64(x, total), *rd = q35_host_f64(r, total), *wd = q35_host_f64(w, n);
    double *yd = malloc((size_t)total * sizeof *yd);
    for (int64_t t = 0; t < rows; t++)
        q35_ref_add_rmsnorm(yd + t * n, xd + t * n, rd + t * n, wd, n, EPS);
    char name[160], dx_s[200], dy_s[200];
    const q35_cmp cx = q35_compare_f32_f64(h[0], xd, total), cy = q35_compare_f32_f64(h[1], yd, total);
    const q35_bitcmp bx = q35_bitwise_f32(h[0], h[2], total), by = q35_bitwise_f32(h[1], h[3], total);
    snprintf(name, sizeof name, "add_rmsnorm   %-18s n %5" PRId64 " rows %5" PRId64 " sum ", what, n, rows);
    q35_case_unit(s, name, &cx, LIMIT, NULL);
    snprintf(name, sizeof name, "add_rmsnorm   %-18s n %5" PRId64 " rows %5" PRId64 " norm", what, n, rows);
    q35_case_unit(s, name, &cy, LIMIT, NULL);
    q35_case(s, bx.equal && by.equal, "add_rmsnorm   %-18s vs residual_add_rows + rmsnorm_rows: sum %s, norm %s", what,
             q35_bitcmp_str(&bx, dx_s, sizeof dx_s), q35_bitcmp_str(&by, dy_s, sizeof dy_s));
    q35_case(s, memcmp(h[0], h[4], bytes) == 0 && memcmp(h[1], h[5], bytes) == 0,
             "add_rmsnorm   %-18s rows form vs per-token launches: bitwise equal", what);
    snprintf(name, sizeof name, "add_rmsnorm_f16 %-16s n %5" PRId64 " rows %5" PRId64, what, n, rows);
    q35_check_f16_out(s, name, d16, h[1], yd, total, LIMIT_F16);
    float *sum16 = q35_gpu_to_host(dx4, total);
    q35_case(s, memcmp(sum16, h[0], bytes) == 0, "add_rmsnorm_f16 %-16s its sum bitwise the f32 form's: %s", what,
             memcmp(sum16, h[0], bytes) == 0 ? "bitwise equal" : "differ");
    free(sum16);
    snprintf(name, sizeof name, "add_rmsnorm_fp8 %-16s n %5" PRId64 " rows %5" PRId64, what, n, rows);
    q35_check_fp8_out(s, name, d8, dscale, dy, yd, rows, n, LIMIT);
    float *sum8 = q35_gpu_to_host(dx5, total);
    q35_case(s, memcmp(sum8, h[0], bytes) == 0, "add_rmsnorm_fp8 %-16s its sum bitwise the f32 form's: %s", what,
             memcmp(sum8, h[0], bytes) == 0 ? "bitwise equal" : "differ");
    free(sum8);
    q35_gpu_free(dx4), q35_gpu_free(d16), q35_gpu_free(dx5), q35_gpu_free(d8), q35_gpu_free(dscale);
    for (int i = 0; i < 6; i++)
        free(h[i]);
    free(x), free(r), free(w), free(xd), free(rd), free(wd), free(yd);
    q35_gpu_free(dx), q35_gpu_free(dr), q35_gpu_free(dw), q35_gpu_free(dx2), q35_gpu_free(dx3);
    q35_gpu_free(dy), q35_gpu_free(dy2), q35_gpu_free(dy3);
}

/* z read in place from merged rows of z_stride (z at column zcol, NaN around:
 * the z slice of one [qkv | z | alpha | b] GEMM's output): y and y16 bitwise
 * the contiguous z's (dy, d16 on the device). */
static void check_gated_strided(q35_suite *s, const char *what, const float *z, const float *dO, const float *dw,
                                const float *dy, const uint16_t *d16, int64_t n, int64_t heads, int64_t T,
                                int64_t zcol, int64_t z_stride)
{
    q35_error err = {{0}};
    const int64_t total = n * heads * T;
    float *mix = q35_gpu_floats(T * z_stride), *dy2 = q35_gpu_floats(total);
    uint16_t *d16b = q35_gpu_bytes((size_t)total * 2);
    q35_gpu_upload_cols(mix, z_stride, zcol, z, heads * n, T);
    q35_gpu_ok(q35_gated_rmsnorm_rows(dy2, dO, mix + zcol, z_stride, dw, n, heads, T, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_gated_rmsnorm_rows_f16(d16b, dO, mix + zcol, z_stride, dw, n, heads, T, EPS, NULL, &err), &err);
    float *a = q35_gpu_to_host(dy, total), *b = q35_gpu_to_host(dy2, total);
    uint16_t *ha = malloc((size_t)total * 2), *hb = malloc((size_t)total * 2);
    q35_gpu_download(ha, d16, (size_t)total * 2);
    q35_gpu_download(hb, d16b, (size_t)total * 2);
    const q35_bitcmp bc = q35_bitwise_f32(b, a, total);
    char diff[200];
    q35_case(s, bc.equal && memcmp(ha, hb, (size_t)total * 2) == 0,
             "gated_rmsnorm %-18s n %4" PRId64 " heads %2" PRId64 " T %4" PRId64 " z at %5" PRId64 " stride %5" PRId64
             " vs contiguous z: f32 %s, f16 %s",
             what, n, heads, T, zcol, z_stride, q35_bitcmp_str(&bc, diff, sizeof diff),
             memcmp(ha, hb, (size_t)total * 2) == 0 ? "bitwise equal" : "differ");
    free(a), free(b), free(ha), free(hb);
    q35_gpu_free(mix), q35_gpu_free(dy2), q35_gpu_free(d16b);
}

/* T tokens of `heads` value heads of n; z_stride > 0: also z read in place from
 * merged rows of z_stride, at column zcol */
static void check_gated(q35_suite *s, const char *what, int64_t n, int64_t heads, int64_t T, int64_t zcol,
                        int64_t z_stride)
{
    q35_error err = {{0}};
    const int64_t total = n * heads * T;
    float *o = q35_host_normal(total, 0.0, 0.5, &g_rng), *z = q35_host_normal(total, 0.0, 2.0, &g_rng);
    float *w = q35_host_normal(n, 1.0, 0.1, &g_rng);
    float *dO = q35_gpu_from_host(o, total), *dz = q35_gpu_from_host(z, total), *dw = q35_gpu_from_host(w, n);
    float *dy = q35_gpu_floats(total), *dt = q35_gpu_floats(total);
    q35_gpu_ok(q35_gated_rmsnorm_rows(dy, dO, dz, heads * n, dw, n, heads, T, EPS, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_gated_rmsnorm(dt + t * heads * n, dO + t * heads * n, dz + t * heads * n, dw, n, heads, EPS,
                                     NULL, &err),
                   &err);
    float *y = malloc((size_t)total * sizeof *y), *yt = malloc((size_t)total * sizeof *yt);
    q35_gpu_download(y, dy, (size_t)total * sizeof *y);
    q35_gpu_download(yt, dt, (size_t)total * sizeof *yt);
    double *od = q35_host_f64(o, total), *zd = q35_host_f64(z, total), *wd = q35_host_f64(w, n);
    double *ref = malloc((size_t)total * sizeof *ref);
    for (int64_t h = 0; h < heads * T; h++)
        q35_ref_gated_rmsnorm(ref + h * n, od + h * n, zd + h * n, wd, n, EPS);
    const q35_cmp c = q35_compare_f32_f64(y, ref, total);
    const q35_bitcmp b = q35_bitwise_f32(y, yt, total);
    char name[160];
    snprintf(name, sizeof name, "gated_rmsnorm %-18s n %4" PRId64 " heads %2" PRId64 " T %4" PRId64, what, n, heads, T);
    q35_case_unit(s, name, &c, LIMIT, &b);
    uint16_t *d16 = q35_gpu_bytes((size_t)total * 2);
    q35_gpu_ok(q35_gated_rmsnorm_rows_f16(d16, dO, dz, heads * n, dw, n, heads, T, EPS, NULL, &err), &err);
    snprintf(name, sizeof name, "gated_rmsnorm_f16 %-14s n %4" PRId64 " heads %2" PRId64 " T %4" PRId64, what, n,
             heads, T);
    q35_check_f16_out(s, name, d16, y, ref, total, LIMIT_F16);
    if (z_stride > 0)
        check_gated_strided(s, what, z, dO, dw, dy, d16, n, heads, T, zcol, z_stride);
    q35_gpu_free(d16);
#if Q35_KERNEL_EXPERIMENTS
    uint8_t *d8 = q35_gpu_bytes((size_t)total);
    float *dscale = q35_gpu_floats(T);
    q35_gpu_ok(q35_gated_rmsnorm_rows_fp8(d8, dscale, dO, dz, heads * n, dw, n, heads, T, EPS, NULL, &err), &err);
    snprintf(name, sizeof name, "gated_rmsnorm_fp8 %-14s n %4" PRId64 " heads %2" PRId64 " T %4" PRId64, what, n,
             heads, T);
    q35_check_fp8_out(s, name, d8, dscale, dy, ref, T, heads * n, LIMIT); /* a scale a token */
    q35_gpu_free(d8), q35_gpu_free(dscale);
    /* the fast-SiLU f16 form: against float64 within the f16 form's bound, every value written */
    uint16_t *df = q35_gpu_bytes((size_t)total * 2), *hf = malloc((size_t)total * 2);
    float *yf = malloc((size_t)total * sizeof *yf);
    memset(hf, 0xff, (size_t)total * 2); /* NaN halves: a value not written shows */
    q35_gpu_upload(df, hf, (size_t)total * 2);
    q35_gpu_ok(q35_gated_rmsnorm_rows_f16_fast(df, dO, dz, heads * n, dw, n, heads, T, EPS, NULL, &err), &err);
    q35_gpu_download(hf, df, (size_t)total * 2);
    for (int64_t i = 0; i < total; i++)
        yf[i] = q35_f16_to_f32(hf[i]);
    const q35_cmp cf = q35_compare_f32_f64(yf, ref, total);
    snprintf(name, sizeof name, "gated_rmsnorm_f16_fast %-9s n %4" PRId64 " heads %2" PRId64 " T %4" PRId64, what, n,
             heads, T);
    q35_case_unit(s, name, &cf, LIMIT_F16, NULL);
    q35_gpu_free(df), free(hf), free(yf);
#endif
    free(o), free(z), free(w), free(y), free(yt), free(od), free(zd), free(wd), free(ref);
    q35_gpu_free(dO), q35_gpu_free(dz), q35_gpu_free(dw), q35_gpu_free(dy), q35_gpu_free(dt);
}

/* the 2*Hk q and k heads of T conv rows of `stride` (the v section must stay untouched) */
static void check_l2(q35_suite *s, const char *what, int64_t n, int64_t heads, int64_t stride, int64_t T)
{
    q35_error err = {{0}};
    const int64_t total = stride * T;
    float *x = q35_host_normal(total, 0.0, 1.0, &g_rng);
    float *da = q35_gpu_from_host(x, total), *db = q35_gpu_from_host(x, total);
    q35_gpu_ok(q35_l2norm_rows(da, n, heads, T, stride, EPS, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_l2norm(db + t * stride, n, heads, EPS, NULL, &err), &err);
    float *y = malloc((size_t)total * sizeof *y), *yt = malloc((size_t)total * sizeof *yt);
    q35_gpu_download(y, da, (size_t)total * sizeof *y);
    q35_gpu_download(yt, db, (size_t)total * sizeof *yt);
    double *ref = q35_host_f64(x, total);
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < heads; h++)
            q35_ref_l2norm(ref + t * stride + h * n, ref + t * stride + h * n, n, EPS);
    const q35_cmp c = q35_compare_f32_f64(y, ref, total); /* the untouched v section compares exactly */
    const q35_bitcmp b = q35_bitwise_f32(y, yt, total);
    char name[160];
    snprintf(name, sizeof name, "l2norm_rows   %-18s n %4" PRId64 " heads %2" PRId64 " stride %5" PRId64 " T %4" PRId64,
             what, n, heads, stride, T);
    q35_case_unit(s, name, &c, LIMIT, &b);
    free(x), free(y), free(yt), free(ref);
    q35_gpu_free(da), q35_gpu_free(db);
}

/* The f32 arithmetic of kernels/norm_kernels.cuh, emulated: THREADS lanes (32
 * below n 512, 64 below 1024, else 256), lane t summing the squares of quads t,
 * t + THREADS, ... (x, y, z, w each, fmaf, past n 0), each warp's butterfly
 * (xor 16 .. 1), then the warps' sums, the same butterfly; inv = 1 / sqrtf(ss /
 * n + eps) (L2: of ss + eps); y = x * inv * w (L2: x * inv). IEEE f32 both
 * sides (no fast math), so the kernel's bits are these: the order pinned. */
static void emulate_norm(float *y, const float *x, const float *w, int n, float eps, bool l2)
{
    const int threads = n < 512 ? 32 : n < 1024 ? 64 : 256, nq = (n + 3) / 4;
    float lane[256], part[32];
    for (int t = 0; t < threads; t++) {
        float ss = 0.0f;
        for (int q = t; q < nq; q += threads)
            for (int i = 4 * q; i < 4 * q + 4; i++)
                ss = fmaf(i < n ? x[i] : 0.0f, i < n ? x[i] : 0.0f, ss);
        lane[t] = ss;
    }
    for (int wp = 0; wp < threads / 32; wp++) {
        float *v = lane + 32 * wp, nv[32];
        for (int off = 16; off > 0; off /= 2) {
            for (int l = 0; l < 32; l++)
                nv[l] = v[l] + v[l ^ off];
            memcpy(v, nv, sizeof nv);
        }
        part[wp] = v[0];
    }
    float ss = part[0];
    if (threads > 32) {
        float v[32], nv[32];
        for (int l = 0; l < 32; l++)
            v[l] = l < threads / 32 ? part[l] : 0.0f;
        for (int off = 16; off > 0; off /= 2) {
            for (int l = 0; l < 32; l++)
                nv[l] = v[l] + v[l ^ off];
            memcpy(v, nv, sizeof nv);
        }
        ss = v[0];
    }
    const float inv = 1.0f / sqrtf((l2 ? ss : ss / (float)n) + eps);
    for (int i = 0; i < n; i++)
        y[i] = l2 ? x[i] * inv : x[i] * inv * w[i];
}

/* RMSNorm and the L2 norm (no expf: exactly emulable) of `rows` vectors of n
 * bitwise their emulation: the sum's order of both kernel shapes (a warp a
 * vector below 512, RPW vectors a warp; a block above), which the gated norm
 * shares. */
static void check_order(q35_suite *s, int n, int64_t rows)
{
    q35_error err = {{0}};
    const int64_t total = n * rows;
    float *x = q35_host_normal(total, 0.0, 3.0, &g_rng), *w = q35_host_normal(n, 1.0, 0.1, &g_rng);
    float *dx = q35_gpu_from_host(x, total), *dw = q35_gpu_from_host(w, n), *dy = q35_gpu_floats(total);
    float *want = malloc((size_t)total * sizeof *want), *want2 = malloc((size_t)total * sizeof *want2);
    for (int64_t r = 0; r < rows; r++) {
        emulate_norm(want + r * n, x + r * n, w, n, EPS, false);
        emulate_norm(want2 + r * n, x + r * n, w, n, EPS, true);
    }
    q35_gpu_ok(q35_rmsnorm_rows(dy, dx, dw, n, rows, EPS, NULL, &err), &err);
    float *y = q35_gpu_to_host(dy, total);
    q35_gpu_ok(q35_l2norm_rows(dx, n, 1, rows, n, EPS, NULL, &err), &err);
    float *y2 = q35_gpu_to_host(dx, total);
    const q35_bitcmp b = q35_bitwise_f32(y, want, total), b2 = q35_bitwise_f32(y2, want2, total);
    char d1[200], d2[200];
    q35_case(s, b.equal && b2.equal, "norm order    n %4d rows %4" PRId64 " vs the f32 emulation: rmsnorm %s, l2 %s", n,
             rows, q35_bitcmp_str(&b, d1, sizeof d1), q35_bitcmp_str(&b2, d2, sizeof d2));
    free(x), free(w), free(want), free(want2), free(y), free(y2);
    q35_gpu_free(dx), q35_gpu_free(dw), q35_gpu_free(dy);
}

/* The 8-bit forms (a decode step's norms with their quantization, kernels/
 * gemv_q8.h's x'): kind 0 RMSNorm, 1 the fused add + RMSNorm, 2 gated RMSNorm
 * (heads of n, in place as the model runs it), 3 RMSNorm in place; y, xq (and the fused form's x)
 * bitwise the f32 form's then q35_gemv_q8_quantize's (memcmp), over outputs
 * poisoned first. */
static void check_q8_form(q35_suite *s, const char *what, int kind, int64_t n, int64_t heads)
{
    q35_error err = {{0}};
    const int64_t cols = n * heads;
    const size_t xb = q35_gemv_q8_x_bytes(cols);
    float *x = q35_host_normal(cols, 0.0, 1.0, &g_rng), *w = q35_host_normal(n, 1.0, 0.1, &g_rng),
          *z = q35_host_normal(cols, 0.0, 1.0, &g_rng);
    float *dx1 = q35_gpu_from_host(x, cols), *dx2 = q35_gpu_from_host(x, cols), *dw = q35_gpu_from_host(w, n),
          *dz = q35_gpu_from_host(z, cols), *y1 = q35_gpu_floats(cols), *y2 = q35_gpu_floats(cols);
    void *q1 = q35_gpu_bytes(xb), *q2 = q35_gpu_bytes(xb);
    if (kind == 0) {
        q35_gpu_ok(q35_rmsnorm(y1, dx1, dw, n, EPS, NULL, &err), &err);
        q35_gpu_ok(q35_rmsnorm_q8(y2, q2, dx2, dw, n, EPS, NULL, &err), &err);
    } else if (kind == 1) {
        q35_gpu_ok(q35_add_rmsnorm_rows(y1, dx1, dz, dw, n, 1, EPS, NULL, &err), &err);
        q35_gpu_ok(q35_add_rmsnorm_q8(y2, q2, dx2, dz, dw, n, EPS, NULL, &err), &err);
    } else if (kind == 3) { /* the plain form in place: y is x (one block) */
        q35_gpu_ok(q35_rmsnorm(dx1, dx1, dw, n, EPS, NULL, &err), &err);
        q35_gpu_ok(q35_rmsnorm_q8(dx2, q2, dx2, dw, n, EPS, NULL, &err), &err);
        y1 = (q35_gpu_free(y1), dx1), y2 = (q35_gpu_free(y2), dx2);
    } else { /* in place: y is o */
        q35_gpu_ok(q35_gated_rmsnorm(dx1, dx1, dz, dw, n, heads, EPS, NULL, &err), &err);
        q35_gpu_ok(q35_gated_rmsnorm_q8(dx2, q2, dx2, dz, dw, n, heads, EPS, NULL, &err), &err);
        y1 = (q35_gpu_free(y1), dx1), y2 = (q35_gpu_free(y2), dx2);
    }
    q35_gpu_ok(q35_gemv_q8_quantize(q1, y1, cols, NULL, &err), &err);
    float *h1 = q35_gpu_to_host(y1, cols), *h2 = q35_gpu_to_host(y2, cols);
    float *s1 = q35_gpu_to_host(dx1, cols), *s2 = q35_gpu_to_host(dx2, cols);
    uint8_t *b1 = malloc(xb), *b2 = malloc(xb);
    q35_gpu_download(b1, q1, xb), q35_gpu_download(b2, q2, xb);
    const bool y_same = memcmp(h1, h2, (size_t)cols * 4) == 0, q_same = memcmp(b1, b2, xb) == 0,
               x_same = memcmp(s1, s2, (size_t)cols * 4) == 0;
    static const char *const names[] = {"rmsnorm_q8", "add_rmsnorm_q8", "gated_rmsnorm_q8", "rmsnorm_q8"};
    q35_case(s, y_same && q_same && x_same,
             "%-16s %-14s %5" PRId64 " x %2" PRId64 ": y %s, x' %s%s the f32 form then gemv_q8_quantize (memcmp)",
             names[kind], what, n, heads, y_same ? "bitwise" : "DIFFERS from", q_same ? "bitwise" : "DIFFERS from",
             kind == 1 ? (x_same ? ", the sum bitwise" : ", the sum DIFFERS") : "");
    free(x), free(w), free(z), free(h1), free(h2), free(s1), free(s2), free(b1), free(b2);
    if (kind < 2)
        q35_gpu_free(y1), q35_gpu_free(y2);
    q35_gpu_free(dx1), q35_gpu_free(dx2), q35_gpu_free(dw), q35_gpu_free(dz), q35_gpu_free(q1), q35_gpu_free(q2);
}

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(64);
    int rc = q35_rmsnorm_rows(d, d, d, 0, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "n = 0 (want 1..") != NULL, "rmsnorm_rows refuses n = 0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_add_rmsnorm_rows(d, d, d + 16, d + 32, 4, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "must not alias x or r") != NULL, "add_rmsnorm_rows refuses y = x: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_add_rmsnorm_rows(d, d + 8, d + 16, d + 32, 0, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "n = 0 (want 1..") != NULL, "add_rmsnorm_rows refuses n = 0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_rmsnorm_q8(d, d + 32, d, d, 40, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "a row of 40 values (want a multiple of 32") != NULL,
             "rmsnorm_q8 refuses n = 40: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_rmsnorm_q8(d, d + 1, d + 32, d, 32, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "(want 16-byte aligned)") != NULL,
             "rmsnorm_q8 refuses x' off 16 bytes: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_add_rmsnorm_q8(d, d + 32, d, d + 16, d + 8, 32, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "must not alias x or r") != NULL, "add_rmsnorm_q8 refuses y = x: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gated_rmsnorm_q8(d, d + 32, d, d, d, 128, 200, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "a row of 25600 values (want 1..24576") != NULL,
             "gated_rmsnorm_q8 refuses a row past the shared memory's: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_l2norm_rows(d, 128, 2, 3, 200, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "row stride 200") != NULL,
             "l2norm_rows refuses a row stride shorter than its heads: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gated_rmsnorm_rows(d, d, d, 256, d, 128, 2, -1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "T = -1") != NULL, "gated_rmsnorm_rows refuses T = -1: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gated_rmsnorm_rows(d, d, d, 255, d, 128, 2, 1, EPS, NULL, &err);
    q35_case(s,
             rc == -1 &&
                 strstr(err.msg, "gated_rmsnorm_rows: z row stride 255 shorter than its heads * n = 2 * 128") != NULL,
             "gated_rmsnorm_rows refuses a z stride below heads * n: %s", err.msg);
    uint16_t *h = (uint16_t *)d;
    memset(&err, 0, sizeof err);
    rc = q35_rmsnorm_rows_f16(h, d + 8, d + 16, 0, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "rmsnorm_rows_f16: n = 0 (want 1..") != NULL,
             "rmsnorm_rows_f16 refuses n = 0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_add_rmsnorm_rows_f16(h, d, d + 16, d + 32, 4, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "add_rmsnorm_rows_f16: y must not alias x or r") != NULL,
             "add_rmsnorm_rows_f16 refuses y16 = x: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gated_rmsnorm_rows_f16(h, d, d, 256, d, 128, 2, -1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gated_rmsnorm_rows_f16: n = 128 (want 1..") != NULL &&
                    strstr(err.msg, "T = -1") != NULL,
             "gated_rmsnorm_rows_f16 refuses T = -1: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gated_rmsnorm_rows_f16(h, d, d, 255, d, 128, 2, 1, EPS, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gated_rmsnorm_rows_f16: z row stride 255 shorter") != NULL,
             "gated_rmsnorm_rows_f16 refuses a z stride below heads * n: %s", err.msg);
    uint8_t *q = (uint8_t *)d;
    static const struct {
        int op; /* 0 rmsnorm_rows_fp8, 1 add_rmsnorm_rows_fp8, 2 gated_rmsnorm_rows_fp8 (an experiment) */
        int64_t n, heads, T;
        bool alias; /* add: q = x */
        const char *want;
    } fp8[] = {
        {0, 0, 1, 1, false, "rmsnorm_rows_fp8: n = 0 (want 1.."},
        {0, Q35_FP8_ROW_MAX + 1, 1, 1, false, "rmsnorm_rows_fp8: a row of 24577 values (want 1..24576"},
        {1, Q35_FP8_ROW_MAX + 1, 1, 1, false, "add_rmsnorm_rows_fp8: a row of 24577 values (want 1..24576"},
        {1, 4, 1, 1, true, "add_rmsnorm_rows_fp8: q must not alias x or r"},
        {1, 4, 1, -1, false, "add_rmsnorm_rows_fp8: n = 4 (want 1..1048576), rows = -1"},
#if Q35_KERNEL_EXPERIMENTS
        {2, 128, 193, 1, false, "gated_rmsnorm_rows_fp8: a row of 24704 values (want 1..24576"},
        {2, 128, 0, 1, false, "heads = 0 (want 1.."},
        {2, 128, 32, -1, false, "T = -1 (want 0.."},
#endif
    };
    for (size_t i = 0; i < sizeof fp8 / sizeof *fp8; i++) {
        memset(&err, 0, sizeof err);
        float *x = fp8[i].alias ? d : d + 8;
        if (fp8[i].op == 0)
            rc = q35_rmsnorm_rows_fp8(q, d + 4, x, d + 16, fp8[i].n, fp8[i].T, EPS, NULL, &err);
        else if (fp8[i].op == 1)
            rc = q35_add_rmsnorm_rows_fp8(q, d + 4, x, d + 16, d + 32, fp8[i].n, fp8[i].T, EPS, NULL, &err);
#if Q35_KERNEL_EXPERIMENTS
        else
            rc = q35_gated_rmsnorm_rows_fp8(q, d + 4, x, d + 16, fp8[i].heads * fp8[i].n, d + 32, fp8[i].n,
                                            fp8[i].heads, fp8[i].T, EPS, NULL, &err);
#endif
        q35_case(s, rc == -1 && strstr(err.msg, fp8[i].want) != NULL, "fp8 norms refuse (want \"%s\"): %s",
                 fp8[i].want, err.msg);
    }
    q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU norms: RMSNorm, gated RMSNorm, L2 norm", &g_rng);
    if (skip)
        return skip;
    if (!Q35_KERNEL_EXPERIMENTS)
        printf("SKIP  gated_rmsnorm_fp8 cases and refusals: q35_gated_rmsnorm_rows_fp8 is an experiment "
               "(kernels/experiments/gated_rmsnorm_fp8.h), not built (Q35_KERNEL_EXPERIMENTS off)\n");

    const int64_t *odd_rows;
    const int n_sizes = q35_test_rows(&odd_rows); /* the 600-row cases off under a sanitizer */
    const int64_t big = q35_test_big_rows();
    for (int i = 0; i < n_sizes; i++) {
        check_rmsnorm(&s, "residual 0.8B", 1024, odd_rows[i], 1);
        check_rmsnorm(&s, "residual 9B", 4096, odd_rows[i], 1);
        check_rmsnorm(&s, "residual 27B", 5120, odd_rows[i], 1);
    }
    for (int i = 0; i < n_sizes; i++) {
        check_add_rmsnorm(&s, "residual 0.8B", 1024, odd_rows[i]);
        check_add_rmsnorm(&s, "residual 9B", 4096, odd_rows[i]);
        check_add_rmsnorm(&s, "residual 27B", 5120, odd_rows[i]); /* 5 quads a thread: one read back */
    }
    const int64_t many = q35_quick() ? 64 : 2048; /* a prefill chunk's rows */
    check_rmsnorm(&s, "residual 9B", 4096, many, 1);
    check_add_rmsnorm(&s, "residual 9B", 4096, many);
    check_rmsnorm(&s, "past 47 KiB", 20480, 7, 1); /* the fp8 form's shared memory opt-in */
    check_rmsnorm(&s, "fp8 row max", Q35_FP8_ROW_MAX, 3, 1);
    check_add_rmsnorm(&s, "past 47 KiB", 12289, 7);
    check_add_rmsnorm(&s, "odd width", 37, 7);
    check_add_rmsnorm(&s, "odd width", 1001, 3); /* misaligned rows: the scalar loads */
    check_rmsnorm(&s, "odd width", 37, 7, 1);
    check_rmsnorm(&s, "odd width", 1000, 3, 1);
    check_rmsnorm(&s, "odd width", 1, 5, 1);
    /* per head: T rows of `heads` heads of 256, a launch per token of `heads` rows */
    check_rmsnorm(&s, "q heads 0.8B", 256, 8 * 37, 8);
    check_rmsnorm(&s, "q heads 9B", 256, 16 * 7, 16);
    check_rmsnorm(&s, "k heads 27B", 256, 4 * big, 4);
    check_rmsnorm(&s, "q heads 27B", 256, 24 * 3, 24);

    /* z in place: at the 9B's MIX ([qkv 8192 | z 4096 | alpha 32 | b 32]) and the
     * 0.8B's; off 16 bytes (the scalar loads); odd */
    check_gated(&s, "0.8B", 128, 16, 37, 6144, 6144 + 2048 + 32);
    check_gated(&s, "9B", 128, 32, 7, 8192, 8192 + 4096 + 64);
    check_gated(&s, "9B z off 16 B", 128, 32, 7, 8193, 8192 + 4096 + 67);
    check_gated(&s, "27B", 128, 48, big, 0, 0);
    check_gated(&s, "9B one token", 128, 32, 1, 5, 4096 + 9);
    check_gated(&s, "odd", 100, 3, 3, 1, 307);
    check_gated(&s, "9B", 128, 32, many, 0, 0);
    check_gated(&s, "27B one token", 128, 48, 1, 0, 0);
    check_gated(&s, "512 a head", 512, 2, 3, 0, 0); /* 64 threads a head, the heads one after another */

    /* conv rows: [q heads | k heads | v]; stride = 2*Hk*dk + Hv*dv */
    check_l2(&s, "0.8B q+k", 128, 32, 6144, 37);
    check_l2(&s, "9B q+k", 128, 32, 8192, big);
    check_l2(&s, "27B q+k", 128, 32, 10240, 7);
    check_l2(&s, "27B one token", 128, 32, 10240, 1);
    check_l2(&s, "odd", 37, 3, 200, 3);

    /* the order of the sum: one quad a lane (128), partial quads (37, 100), two,
     * three and four quads a lane (256, 300, 511), rows not a multiple of the
     * vectors a warp or a block; the block kernels (1000, 4096) */
    static const int order_n[] = {128, 37, 100, 256, 300, 511, 1000, 4096};
    for (size_t i = 0; i < sizeof order_n / sizeof order_n[0]; i++)
        check_order(&s, order_n[i], 67);

    /* the 8-bit forms at the models' decode rows: the residual norms (0.8B, 9B, 27B: 5 quads a thread, one
       read back), the gated norm's heads of 128 */
    static const int64_t widths[] = {1024, 4096, 5120};
    for (int i = 0; i < 3; i++) {
        check_q8_form(&s, "residual", 0, widths[i], 1);
        check_q8_form(&s, "residual", 1, widths[i], 1);
    }
    /* the plain form's spans (512 values a block; 5120: 10) against it in place (one block), and under 1024 */
    check_q8_form(&s, "in place", 3, 4096, 1);
    check_q8_form(&s, "one block", 0, 992, 1);
    check_q8_form(&s, "0.8B heads", 2, 128, 16);
    check_q8_form(&s, "9B heads", 2, 128, 32);
    check_q8_form(&s, "27B heads", 2, 128, 48);
    /* the gated form's blocks: 8 heads a block (a last one short), a head a block past 511 (64 and 256
       threads), one block where a head is no whole number of 8-bit blocks */
    check_q8_form(&s, "12 heads", 2, 128, 12);
    check_q8_form(&s, "heads of 96", 2, 96, 5);
    check_q8_form(&s, "heads of 512", 2, 512, 3);
    check_q8_form(&s, "heads of 1024", 2, 1024, 2);
    check_q8_form(&s, "heads of 40", 2, 40, 4);

    check_refusals(&s);
    return q35_suite_end(&s);
}
