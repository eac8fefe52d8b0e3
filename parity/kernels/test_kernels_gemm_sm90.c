/* GPU parity of the sm_90 [gate | up] GEMM with SwiGLU in its epilogue
 * (kernels/gemm_sm90.h), both forms, on random f16 operands made on the host
 * (gemm_sm90_inputs.h, shared with test_kernels_gemm_sm90_plain.c, the suite
 * of the plain product q35_gemm_sm90_f32 on the same kernels; x ~ U(-1, 1),
 * w ~ U(-1, 1) * 2 / sqrt(K): |g|, |u| up to ~4):
 *   gu_sm90      q35_gemm_gu_sm90_f32 (g and u in f32, [gate | up]) against
 *                the float64 product of the same f16 operands (q35_ref_linear):
 *                rel L-inf <= 1e-4, the f16 path's bound on f16-rounded
 *                operands (kernels/gemm.h; test_kernels_linear's LIMIT_F16_ACC:
 *                f32 accumulation of exact f16 products); every one of the
 *                T * 2F values finite; a second call bitwise (memcmp, the whole
 *                buffer, padding included);
 *   swiglu_sm90  q35_gemm_swiglu_sm90_f16: bitwise (memcmp, every row's F
 *                halves) q35_swiglu_rows_f16 of gu_sm90's f32 output (the
 *                unit's claim: the same f32 g and u, the same expression, one
 *                rounding), none non-finite; against float64 silu(g) u
 *                (q35_ref_swiglu of the float64 g, u) value by value within
 *                the bound below; a second call bitwise (memcmp);
 * at the FFN of 0.8B (K 1024, F 3584) at T 64 and 300, 9B (4096, 12288) at T 1,
 * 7, 128, 129, 2048 (one row, part of a 128-row tile, a tile, a tile and one
 * row, 16 tiles), 27B (5120, 17408) at T 256, widths from the shapes table;
 * and odd shapes: K 64, F 128 (one K step, one column block) at T 1 and 3;
 * K 320, F 384 at T 37 (5 K steps through the ring, 3 column blocks); K 128,
 * F 256 at T 130 (two row tiles, the second of 2 rows); operand rows wider
 * than K (ldx, ldw; their padding f16 NaN, so a read of it shows); output
 * rows wider than F and 2F (ldy, ldg), y16 and gu 4 and 8 bytes into their
 * buffers (the alignment the header asks, no more). Past 256 columns f
 * the reference covers a random 256 of them (g and u of each, every row); the
 * case line says how many. Outputs start poisoned (gu: every bit set, the
 * harness's NaN; y16: 0x7e5a, a NaN no rounding makes) and the padding of
 * each row, and the buffer before an offset output, must stay so. On a
 * failure: the first value that differs from the chain, the worst against
 * float64 (row, f).
 *
 * The bound against float64 (swiglu_sm90). g, u: float64 of the f16 operands,
 * y = silu(g) u; E = 1e-4 max |g, u| over the checked values (gu_sm90's
 * criterion, the same max: it checks |g~ - g|, |u~ - u| <= E for the
 * kernel's f32 g~, u~). silu' = s (1 + x (1 - s)) (s = sigmoid(x)) lies in
 * [-0.0999, 1.0999], so |silu(g~) u~ - y| <= 1.1 E (|u| + E) + |silu(g)| E = A.
 * The f32 epilogue (reduce.cuh's q35_swiglu, __fdividef(g~, 1 + __expf(-g~))
 * u~, to which the bitwise check holds it) adds a relative
 * r(g) = (5 + 1.173 (|g| + E)) 2^-23 of |silu(g~) u~| <= |y| + A (reduce.cuh
 * derives it: __expf's 2 + floor(1.173 |g~|) ulp, __fdividef's 2, the add's
 * and the product's half), and the one rounding to f16 2^-11 of the f32
 * value (2^-25 absolute below f16's normals). With B = A + r(g) (|y| + A):
 *     |y16 - y| <= 2^-11 |y| + 2^-25 + (1 + 2^-11) B.
 * A is the product's bound carried through silu * u and no looser: at |g|,
 * |u| ~ 4 it is about half of the rounding's 2^-11 |y|.
 *
 * Every variant (kernels/gemm_sm90.h: simple, mcast, persist, mcast_persist,
 * pingpong, persist_tail: its halves run at 9B T 129, 27B T 256 and the odd shapes)
 * takes every case, and
 * each variant's f32 output is bitwise the first's (memcmp, the whole buffer:
 * the same products in the same order).
 *
 * Then every refusal, by its message (the value named), an unknown variant
 * among them; the refusals and
 * T = 0 write nothing. Q35_QUICK (the sanitizer runs: memcheck and racecheck,
 * which found no hazard in these kernels' TMA / mbarrier / wgmma handoffs at
 * their first run, H200) keeps the odd shapes and the refusals. Skipped
 * (77) without an sm_90 device or in a build without the sm_90a code. */
#include "gemm_sm90_inputs.h"
#include "linear_inputs.h"
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "kernels/gemm_sm90.h"
#include "kernels/pointwise.h"
#include "model/shapes.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SILU_SLOPE 1.1      /* max |silu'| = 1.0998, at x ~ 2.40 */
#define F16_ROUND 0x1p-11   /* the f16 store: half an ulp, relative */
#define F16_SUBNORMAL_STEP 0x1p-25 /* its absolute half step below f16's normals */
#define F16_POISON 0x7e5a   /* a NaN no rounding makes */

static q35_rng g_rng;

/* A case: the shape and its strides (0: dense). */
typedef struct gemm_case {
    const char *model;              /* the case line's: 0.8B, 9B, 27B, odd */
    int64_t K, F, T;                /* x [T][K], w [2F][K], y16 [T][F], gu [T][2F] */
    int64_t ldx, ldw, ldy, ldg;     /* row strides, 0 for K, K, F, 2F */
    int64_t off;                    /* y16 `off` halves, gu `off` floats into their buffers */
} gemm_case;

/* ref [T][2m] = float64 x w^T at the gate rows cols[0..m) of w, then their up
 * rows F + cols[j]. */
static double *reference(const gemm_case *c, const uint16_t *x, const q35_sm90_weight *w, const int64_t *cols,
                         int64_t m)
{
    int64_t *rows = q35_host_alloc((size_t)(2 * m) * sizeof *rows);
    for (int64_t j = 0; j < m; j++)
        rows[j] = cols[j], rows[m + j] = c->F + cols[j];
    double *ref = q35_sm90_reference(x, c->T, c->ldx, w, rows, 2 * m);
    free(rows);
    return ref;
}

/* The case name: form, model, shape, rows, the checked columns, the strides
 * and offset that are not the dense ones. */
static void name_case(char *buf, size_t cap, const char *form, const char *variant, const gemm_case *c, int64_t m)
{
    int n = snprintf(buf, cap, "%-11s %-13s %-4s K %4" PRId64 " F %5" PRId64 " T %4" PRId64, form, variant, c->model,
                     c->K, c->F, c->T);
    if (m < c->F)
        n += snprintf(buf + n, cap - (size_t)n, " (%" PRId64 " of %" PRId64 " f)", m, c->F);
    if (c->ldx != c->K || c->ldw != c->K)
        n += snprintf(buf + n, cap - (size_t)n, " ldx %" PRId64 " ldw %" PRId64, c->ldx, c->ldw);
    if (c->ldy != c->F || c->ldg != 2 * c->F)
        n += snprintf(buf + n, cap - (size_t)n, " ldy %" PRId64 " ldg %" PRId64, c->ldy, c->ldg);
    if (c->off)
        snprintf(buf + n, cap - (size_t)n, " y16, gu +%" PRId64, c->off);
}

static bool f16_finite(uint16_t h)
{
    return (h & 0x7c00u) != 0x7c00u;
}

/* gu_sm90 into a poisoned buffer (gu `off` floats in): against ref [T][2m]
 * (rel L-inf <= Q35_LIMIT_F16_ACC), every value of every row's 2F finite, the
 * buffer outside them untouched; a second call bitwise. Returns the buffer,
 * gu at off floats, for the f16 form's check. */
static float *check_gu(q35_suite *s, const gemm_case *c, const uint16_t *dx, const q35_sm90_weight *w,
                       const int64_t *cols, int64_t m, const double *ref, int v)
{
    const int64_t n = c->T * c->ldg + c->off, F = c->F;
    float *buf = q35_gpu_floats(n), *buf2 = q35_gpu_floats(n);
    q35_error err = {{0}};
    q35_gpu_ok(q35_gemm_gu_sm90_f32(buf + c->off, c->ldg, dx, c->ldx, w->dev, c->ldw, F, c->K, c->T, v, NULL, &err),
               &err);
    q35_gpu_ok(q35_gemm_gu_sm90_f32(buf2 + c->off, c->ldg, dx, c->ldx, w->dev, c->ldw, F, c->K, c->T, v, NULL, &err),
               &err);
    float *h = q35_gpu_to_host(buf, n), *h2 = q35_gpu_to_host(buf2, n);
    float *sub = malloc((size_t)(c->T * 2 * m) * sizeof *sub);
    int64_t written = q35_gpu_written(h, c->off), nonfinite = 0;
    for (int64_t t = 0; t < c->T; t++) {
        const float *row = h + c->off + t * c->ldg;
        for (int64_t o = 0; o < 2 * F; o++)
            nonfinite += !isfinite(row[o]);
        written += q35_gpu_written(row + 2 * F, c->ldg - 2 * F);
        for (int64_t j = 0; j < m; j++)
            sub[t * 2 * m + j] = row[cols[j]], sub[t * 2 * m + m + j] = row[F + cols[j]];
    }
    const q35_cmp cmp = q35_compare_f32_f64(sub, ref, c->T * 2 * m);
    char name[200], bits[160];
    name_case(name, sizeof name, "gu_sm90", q35_gemm_sm90_variant_name(v), c, m);
    q35_case(s, nonfinite == 0 && cmp.nonfinite == 0 && cmp.rel_linf <= Q35_LIMIT_F16_ACC && written == 0,
             "%s: rel Linf %.2e (<= %.0e), rel L2 %.2e against float64 of the f16 operands; %" PRId64 " of %" PRId64
             " non-finite, %" PRId64 " written outside [gate | up]",
             name, cmp.rel_linf, Q35_LIMIT_F16_ACC, cmp.rel_l2, nonfinite, c->T * 2 * F, written);
    const q35_bitcmp b = q35_bitwise_f32(h2, h, n);
    q35_case(s, b.equal, "%s: called again, %s", name, q35_bitcmp_str(&b, bits, sizeof bits));
    free(h), free(h2), free(sub);
    q35_gpu_free(buf2);
    return buf;
}

/* y16 [T][ldy] of the fused form, `off` halves into a buffer poisoned with
 * F16_POISON, downloaded whole (the offset included). */
static uint16_t *swiglu_f16(const gemm_case *c, const uint16_t *dx, const q35_sm90_weight *w, int v)
{
    const int64_t n = c->T * c->ldy + c->off;
    uint16_t *h = q35_sm90_halves(n);
    for (int64_t i = 0; i < n; i++)
        h[i] = F16_POISON;
    uint16_t *d = q35_sm90_device_halves(h, n);
    q35_error err = {{0}};
    q35_gpu_ok(q35_gemm_swiglu_sm90_f16(d + c->off, c->ldy, dx, c->ldx, w->dev, c->ldw, c->F, c->K, c->T, v, NULL,
                                        &err),
               &err);
    q35_gpu_download(h, d, (size_t)n * sizeof *h);
    q35_gpu_free(d);
    return h;
}

/* The largest |y16 - y| as a share of its bound (the file's comment), over
 * the checked values, and where. */
typedef struct f16_excess {
    double worst; /* |y16 - y| / bound: <= 1 passes */
    int64_t t, f;
    double got, want;
} f16_excess;

static f16_excess against_float64(const gemm_case *c, const uint16_t *y, const int64_t *cols, int64_t m,
                                  const double *ref)
{
    const int64_t n = c->T * m;
    double *g = malloc((size_t)n * sizeof *g), *u = malloc((size_t)n * sizeof *u), *yd = malloc((size_t)n * sizeof *yd);
    if (!g || !u || !yd) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    double peak = 0.0;
    for (int64_t i = 0; i < c->T * 2 * m; i++)
        peak = fmax(peak, fabs(ref[i]));
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t j = 0; j < m; j++)
            g[t * m + j] = ref[t * 2 * m + j], u[t * m + j] = ref[t * 2 * m + m + j];
    q35_ref_swiglu(yd, g, u, n);
    const double E = Q35_LIMIT_F16_ACC * peak;
    f16_excess x = {.worst = -1.0};
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t j = 0; j < m; j++) {
            const int64_t i = t * m + j;
            const double A = SILU_SLOPE * E * (fabs(u[i]) + E) + fabs(q35_ref_silu(g[i])) * E;
            const double r32 = (5.0 + 1.173 * (fabs(g[i]) + E)) * 0x1p-23; /* the f32 epilogue's, at g */
            const double B = A + r32 * (fabs(yd[i]) + A);
            const double bound = F16_ROUND * fabs(yd[i]) + F16_SUBNORMAL_STEP + (1.0 + F16_ROUND) * B;
            const double got = q35_f16_to_f32(y[c->off + t * c->ldy + cols[j]]);
            const double r = isfinite(got) ? fabs(got - yd[i]) / bound : INFINITY;
            if (r > x.worst)
                x = (f16_excess){r, t, cols[j], got, yd[i]};
        }
    free(g), free(u), free(yd);
    return x;
}

/* swiglu_sm90: bitwise q35_swiglu_rows_f16 of gu_sm90's output (d_gu: its
 * buffer, gu `off` floats in), every row's F halves, none non-finite, the
 * rest of the buffer still poisoned; against float64 within the bound; a
 * second call bitwise. */
static void check_swiglu(q35_suite *s, const gemm_case *c, const uint16_t *dx, const q35_sm90_weight *w,
                         const float *d_gu, const int64_t *cols, int64_t m, const double *ref, int v)
{
    const int64_t F = c->F, n = c->T * c->ldy + c->off;
    q35_error err = {{0}};
    uint16_t *d_chain = q35_gpu_bytes((size_t)(c->T * F) * 2), *chain = q35_sm90_halves(c->T * F);
    q35_gpu_ok(q35_swiglu_rows_f16(d_chain, d_gu + c->off, d_gu + c->off + F, c->ldg, F, c->T, NULL, &err), &err);
    q35_gpu_download(chain, d_chain, (size_t)(c->T * F) * 2);
    uint16_t *y = swiglu_f16(c, dx, w, v), *y2 = swiglu_f16(c, dx, w, v);
    int64_t differ = 0, first = -1, nonfinite = 0, written = 0;
    for (int64_t i = 0; i < c->off; i++)
        written += y[i] != F16_POISON;
    for (int64_t t = 0; t < c->T; t++) {
        const uint16_t *row = y + c->off + t * c->ldy;
        if (memcmp(row, chain + t * F, (size_t)F * 2) != 0)
            for (int64_t f = 0; f < F; f++)
                if (row[f] != chain[t * F + f] && differ++ == 0)
                    first = t * F + f;
        for (int64_t f = 0; f < F; f++)
            nonfinite += !f16_finite(row[f]);
        for (int64_t o = F; o < c->ldy; o++)
            written += row[o] != F16_POISON;
    }
    char name[200], at[120] = "";
    name_case(name, sizeof name, "swiglu_sm90", q35_gemm_sm90_variant_name(v), c, m);
    if (first >= 0)
        snprintf(at, sizeof at, "; first at row %" PRId64 " f %" PRId64 ": 0x%04x, want 0x%04x", first / F, first % F,
                 y[c->off + first / F * c->ldy + first % F], chain[first]);
    q35_case(s, differ == 0 && nonfinite == 0 && written == 0,
             "%s: %" PRId64 " of %" PRId64 " values differ from swiglu_rows_f16 of gu_sm90's f32, %" PRId64
             " non-finite, %" PRId64 " written outside its columns%s",
             name, differ, c->T * F, nonfinite, written, at);
    const f16_excess x = against_float64(c, y, cols, m, ref);
    q35_case(s, x.worst <= 1.0,
             "%s: against float64 silu(g) u, the worst |y16 - y| is %.3f of its bound (<= 1), at row %" PRId64
             " f %" PRId64 ": %.6g, want %.6g",
             name, x.worst, x.t, x.f, x.got, x.want);
    const bool same = memcmp(y, y2, (size_t)n * 2) == 0;
    q35_case(s, same, "%s: called again, %s", name, same ? "bitwise equal" : "differ");
    free(chain), free(y), free(y2);
    q35_gpu_free(d_chain);
}

static void check_case(q35_suite *s, gemm_case c, q35_sm90_weight *w)
{
    c.ldx = c.ldx ? c.ldx : c.K, c.ldw = c.ldw ? c.ldw : c.K;
    c.ldy = c.ldy ? c.ldy : c.F, c.ldg = c.ldg ? c.ldg : 2 * c.F;
    q35_sm90_weight_for(w, 2 * c.F, c.K, c.ldw, &g_rng);
    uint16_t *x = q35_sm90_random_rows(c.T, c.K, c.ldx, 1.0, &g_rng), *dx = q35_sm90_device_halves(x, c.T * c.ldx);
    int64_t m;
    int64_t *cols = q35_test_columns(c.F, Q35_SM90_CHECKED_COLUMNS, &m, &g_rng);
    double *ref = reference(&c, x, w, cols, m);
    const int64_t n = c.T * c.ldg + c.off;
    float *first = NULL; /* the first variant's f32 output (host): the others bitwise it */
    for (int v = 0; v < q35_gemm_sm90_variant_count(); v++) {
        float *d_gu = check_gu(s, &c, dx, w, cols, m, ref, v);
        check_swiglu(s, &c, dx, w, d_gu, cols, m, ref, v);
        char name[200];
        name_case(name, sizeof name, "gu_sm90", q35_gemm_sm90_variant_name(v), &c, m);
        q35_sm90_against_first(s, name, q35_gpu_to_host(d_gu, n), &first, n);
        q35_gpu_free(d_gu);
    }
    free(first), free(x), free(cols), free(ref);
    q35_gpu_free(dx);
}

/* ---- refusals ---------------------------------------------------------------------- */

enum { FORM_F16 = 1, FORM_F32 = 2, FORM_BOTH = 3 };

/* A call of the f16 (y: halves) or the f32 form (y: floats), ld its row stride. */
static int gemm_call(int form, void *y, int64_t ld, const uint16_t *x, int64_t ldx, const uint16_t *w, int64_t ldw,
                     int64_t F, int64_t K, int64_t T, q35_error *err)
{
    if (form == FORM_F16)
        return q35_gemm_swiglu_sm90_f16(y, ld, x, ldx, w, ldw, F, K, T, Q35_VARIANT_DEFAULT, NULL, err);
    return q35_gemm_gu_sm90_f32(y, ld, x, ldx, w, ldw, F, K, T, Q35_VARIANT_DEFAULT, NULL, err);
}

/* Each refusal (the header's "Runs where"; and K, F of 0, operand rows
 * shorter than K, y16 rows shorter than F, which the launcher refuses too), by
 * its message, through the forms it applies to; then that they and T = 0
 * wrote nothing. ld: ldy for the f16 form, ldg for the f32 one; the offsets
 * in halves (x, w, y16) and floats (gu). Where the header gives no wording,
 * the needle is the value named ("T -1", "ldg 257") or the header's words
 * ("gu must be 8-byte aligned"). */
static void check_refusals(q35_suite *s)
{
    static const struct {
        int forms;
        int64_t K, F, T, ldx, ldw, ld;
        int64_t x_off, w_off, y_off;
        const char *want;
    } k_bad[] = {
        {FORM_BOTH, 100, 128, 4, 104, 104, 256, 0, 0, 0, "K 100 is not a multiple of 64"},
        {FORM_BOTH, 0, 128, 4, 64, 64, 256, 0, 0, 0, "K 0"},
        {FORM_BOTH, 64, 200, 4, 64, 64, 400, 0, 0, 0, "F 200 is not a multiple of 128"},
        {FORM_BOTH, 64, 0, 4, 64, 64, 256, 0, 0, 0, "F 0"},
        {FORM_BOTH, 64, 128, 4, 100, 64, 256, 0, 0, 0, "ldx 100 is not a multiple of 8"},
        {FORM_BOTH, 64, 128, 4, 64, 100, 256, 0, 0, 0, "ldw 100 is not a multiple of 8"},
        {FORM_BOTH, 64, 128, 4, 56, 64, 256, 0, 0, 0, "ldx 56"}, /* rows shorter than K */
        {FORM_BOTH, 64, 128, 4, 64, 56, 256, 0, 0, 0, "ldw 56"},
        {FORM_BOTH, 64, 128, 4, 64, 64, 256, 1, 0, 0, "x16 and w16 must be 16-byte aligned"}, /* x 2 bytes off */
        {FORM_BOTH, 64, 128, 4, 64, 64, 256, 0, 4, 0, "x16 and w16 must be 16-byte aligned"}, /* w 8 bytes off */
        {FORM_BOTH, 64, 128, -1, 64, 64, 256, 0, 0, 0, "T -1"},
        {FORM_BOTH, 64, 128, (int64_t)INT32_MAX + 1, 64, 64, 256, 0, 0, 0, "T 2147483648"},
        {FORM_F16, 64, 128, 4, 64, 64, 129, 0, 0, 0, "ldy 129 is odd"},
        {FORM_F16, 64, 128, 4, 64, 64, 128, 0, 0, 1, "y16 must be 4-byte aligned"}, /* 2 bytes off */
        {FORM_F16, 64, 128, 4, 64, 64, 126, 0, 0, 0, "ldy 126"}, /* rows shorter than F */
        {FORM_F16, 64, 128, 4, 64, 64, (int64_t)INT32_MAX + 1, 0, 0, 0, "ldy 2147483648"},
        {FORM_F32, 64, 128, 4, 64, 64, 10, 0, 0, 0, "ldg 10 < 2F = 256"},
        {FORM_F32, 64, 128, 4, 64, 64, 257, 0, 0, 0, "ldg 257"}, /* odd */
        {FORM_F32, 64, 128, 4, 64, 64, 256, 0, 0, 1, "gu must be 8-byte aligned"}, /* 4 bytes off */
        {FORM_F32, 64, 128, 4, 64, 64, (int64_t)INT32_MAX + 1, 0, 0, 0, "ldg 2147483648"},
    };
    const int64_t floats = 1 << 18; /* each buffer: room for every shape above (4 rows, 2F rows of w) */
    float *d_y = q35_gpu_floats(floats);
    uint16_t *d_x = q35_gpu_bytes((size_t)floats * 4), *d_w = q35_gpu_bytes((size_t)floats * 4);
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++)
        for (int form = FORM_F16; form <= FORM_F32; form++) {
            if (!(k_bad[i].forms & form))
                continue;
            q35_error err = {{0}};
            void *y = form == FORM_F16 ? (void *)((uint16_t *)(void *)d_y + k_bad[i].y_off)
                                       : (void *)(d_y + k_bad[i].y_off);
            const int rc = gemm_call(form, y, k_bad[i].ld, d_x + k_bad[i].x_off, k_bad[i].ldx, d_w + k_bad[i].w_off,
                                     k_bad[i].ldw, k_bad[i].F, k_bad[i].K, k_bad[i].T, &err);
            q35_case(s, rc == -1 && strstr(err.msg, k_bad[i].want) != NULL, "%s refuses \"%s\": %s",
                     form == FORM_F16 ? "gemm_swiglu_sm90_f16" : "gemm_gu_sm90_f32", k_bad[i].want, err.msg);
        }
    { /* an unknown variant, each form */
        const int nv = q35_gemm_sm90_variant_count();
        q35_error err = {{0}};
        int rc = q35_gemm_swiglu_sm90_f16((uint16_t *)(void *)d_y, 128, d_x, 64, d_w, 64, 128, 64, 4, nv, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, "gemm_sm90 has variants 0..") != NULL,
                 "gemm_swiglu_sm90_f16 refuses variant %d: %s", nv, err.msg);
        memset(&err, 0, sizeof err);
        rc = q35_gemm_gu_sm90_f32(d_y, 256, d_x, 64, d_w, 64, 128, 64, 4, nv, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, "gemm_sm90 has variants 0..") != NULL,
                 "gemm_gu_sm90_f32 refuses variant %d: %s", nv, err.msg);
    }
    /* T = 0: nothing written, status 0 */
    int rc = 0;
    q35_error err = {{0}};
    for (int form = FORM_F16; form <= FORM_F32 && rc == 0; form++)
        rc = gemm_call(form, d_y, form == FORM_F16 ? 128 : 256, d_x, 64, d_w, 64, 128, 64, 0, &err);
    q35_sm90_case_unwritten(s, "the refusals and T = 0 (f16 and f32 forms)", rc, &err, d_y, floats);
    q35_gpu_free(d_y), q35_gpu_free(d_x), q35_gpu_free(d_w);
}

/* The FFN [gate | up] of a shapes-table model (K = n_embd, F = n_ff) at rows. */
static void check_model(q35_suite *s, const char *label, const char *shape, const int64_t *rows, int nr,
                        q35_sm90_weight *w)
{
    const q35_shape *m = q35_shape_find(shape);
    if (!m) {
        printf("FAIL  no shape %s in the shapes table\n", shape);
        exit(1);
    }
    for (int i = 0; i < nr; i++)
        check_case(s, (gemm_case){.model = label, .K = m->n_embd, .F = m->n_ff, .T = rows[i]}, w);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_sm90_suite(&s, "GPU [gate | up] GEMM + SwiGLU on sm_90 (wgmma, TMA), f16 operands", &g_rng);
    if (skip)
        return skip;
    q35_sm90_weight w = {0};
    printf("-- odd shapes, wider rows, offset outputs\n");
    static const gemm_case odd[] = {
        {"odd", 64, 128, 1, 0, 0, 0, 0, 0},       /* one K step, one column block, one row */
        {"odd", 64, 128, 3, 0, 0, 0, 0, 0},
        {"odd", 64, 128, 3, 72, 80, 134, 260, 2}, /* every row padded; y16, gu 4 and 8 bytes in */
        {"odd", 320, 384, 37, 0, 0, 0, 0, 0},     /* 5 K steps through the ring, 3 column blocks */
        {"odd", 128, 256, 130, 136, 128, 258, 514, 0}, /* two row tiles, the second of 2 rows; y16 rows of 516 B */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        check_case(&s, odd[i], &w);
    if (!q35_quick()) {
        printf("-- the FFN [gate | up] of 0.8B, 9B, 27B\n");
        static const int64_t rows08[] = {64, 300}, rows9[] = {1, 7, 128, 129, 2048}, rows27[] = {256};
        check_model(&s, "0.8B", "0.8b", rows08, 2, &w);
        check_model(&s, "9B", "9b", rows9, 5, &w);
        check_model(&s, "27B", "27b", rows27, 1, &w);
    }
    q35_sm90_weight_free(&w);
    printf("-- refusals\n");
    check_refusals(&s);
    return q35_suite_end(&s);
}
