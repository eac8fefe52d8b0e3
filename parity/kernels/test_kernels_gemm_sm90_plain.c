/* GPU parity of the plain product on the sm_90 GEMM kernels (kernels/gemm_sm90.h,
 * q35_gemm_sm90_f32; 256 output columns a block):
 *
 *     y[t][o] = sum_k x16[t][k] * w16[o][k]      (o < n; add: y[t][o] + the sum)
 *
 * on random f16 operands made on the host (gemm_sm90_inputs.h, as the
 * [gate | up] suite test_kernels_gemm_sm90.c: x ~ U(-1, 1), w ~ U(-1, 1) *
 * 2 / sqrt(K)); with add, y starts as r ~ U(-1, 1) (a residual's scale). For
 * every variant (simple, mcast, persist, mcast_persist, pingpong, persist_tail:
 * its halves run at attention's T 7 and the odd shapes):
 *   against the float64 product of the same f16 operands (q35_ref_linear; with
 *   add, r + it): rel L-inf <= 1e-4, the f16 path's bound (kernels/gemm.h:
 *   f32 accumulation of exact f16 products; add is one rounding more); past
 *   256 columns o the reference covers a random 256 of them (0 and n - 1
 *   among them, every row; the case line says how many);
 *   every one of the T * n values finite; the padding of each row (columns n
 *   .. ldy-1) and the floats before an offset y untouched (the buffer starts
 *   poisoned, every bit set);
 *   a second call bitwise (memcmp, the whole buffer; with add, y set to the
 *   same r again first: each call starts from it);
 *   each variant's buffer bitwise the first variant's (memcmp, the whole
 *   buffer: the same products in the same order).
 * At the f16 path's 9B projections (widths from the shapes table through
 * q35_model_projections): ssm_out 4096 x 4096 and ffn_down 4096 x 12288 (n x
 * K) at T 2048 with add (y = r + x w^T, the residual's add); the merged
 * DeltaNet projection [qkv | z | alpha | beta], n 8192 + 4096 + 32 + 32 =
 * 12352 (48 blocks of 256 and a tail block of 64) x 4096 at T 129 (a 128-row
 * tile and one row); attention's merged [q | k | v] 10240 x 4096 at T 7. Odd
 * shapes: n 200, K 64, T 3 (one K step, the tail inside the first box); n 2,
 * K 128, T 1 (the narrowest); n 200, K 64, T 3 with rows wider than K (ldx,
 * ldw; their padding f16 NaN, so a read of it shows) and than n (ldy), y 8
 * bytes (2 floats) into its buffer, add; n 328, K 320, T 130 (the tail in
 * the second column block, 5 K steps through the ring, two row tiles the
 * second of 2 rows), ldy 330, y 2 floats in, add.
 *
 * Then every refusal, by its message (the value named), an unknown variant
 * among them; the refusals and T = 0 write nothing. Q35_QUICK (the sanitizer
 * runs: memcheck and racecheck) keeps the odd shapes and the
 * refusals. Skipped (77) without an sm_90 device or in a build without the
 * sm_90a code. */
#include "gemm_sm90_inputs.h"
#include "linear_inputs.h"
#include "parity/lib/gpu.h"

#include "kernels/gemm_sm90.h"
#include "model/shapes.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static q35_rng g_rng;

/* A case: the shape, whether y is added to, the strides (0: dense). */
typedef struct plain_case {
    const char *model;      /* the case line's: "9B ssm_out", "odd" */
    int64_t n, K, T;        /* x [T][K], w [n][K], y [T][n] */
    int add;                /* y = r + x w^T */
    int64_t ldx, ldw, ldy;  /* row strides, 0 for K, K, n */
    int64_t off;            /* y `off` floats into its buffer */
} plain_case;

/* The case name: model, shape, rows, add, the checked columns, the strides
 * and offset that are not the dense ones. */
static void name_case(char *buf, size_t cap, const char *variant, const plain_case *c, int64_t m)
{
    int n = snprintf(buf, cap, "plain_sm90 %-13s %-16s n %5" PRId64 " K %5" PRId64 " T %4" PRId64 "%s", variant,
                     c->model, c->n, c->K, c->T, c->add ? " add" : "");
    if (m < c->n)
        n += snprintf(buf + n, cap - (size_t)n, " (%" PRId64 " of %" PRId64 " o)", m, c->n);
    if (c->ldx != c->K || c->ldw != c->K)
        n += snprintf(buf + n, cap - (size_t)n, " ldx %" PRId64 " ldw %" PRId64, c->ldx, c->ldw);
    if (c->ldy != c->n)
        n += snprintf(buf + n, cap - (size_t)n, " ldy %" PRId64, c->ldy);
    if (c->off)
        snprintf(buf + n, cap - (size_t)n, " y +%" PRId64, c->off);
}

/* The buffer as each call finds it (host, T * ldy + off floats): every bit
 * set, with add each row's first n columns r [T][n]. */
static float *start_buffer(const plain_case *c, const float *r)
{
    const int64_t len = c->T * c->ldy + c->off;
    float *h = q35_host_alloc((size_t)len * sizeof *h);
    memset(h, 0xff, (size_t)len * sizeof *h);
    for (int64_t t = 0; r && t < c->T; t++)
        memcpy(h + c->off + t * c->ldy, r + t * c->n, (size_t)c->n * sizeof *h);
    return h;
}

/* One call of variant v into d, the start buffer uploaded first; the whole
 * buffer downloaded. */
static float *run_plain(const plain_case *c, float *d, const float *start, const uint16_t *dx,
                        const q35_sm90_weight *w, int v)
{
    const int64_t len = c->T * c->ldy + c->off;
    q35_error err = {{0}};
    q35_gpu_upload(d, start, (size_t)len * sizeof *start);
    q35_gpu_ok(q35_gemm_sm90_f32(d + c->off, c->ldy, dx, c->ldx, w->dev, c->ldw, c->n, c->K, c->T, c->add, v, NULL,
                                 &err),
               &err);
    return q35_gpu_to_host(d, len);
}

/* Variant v: against ref [T][m] at columns cols (rel L-inf <= the f16 bound),
 * every value of every row's n finite, the buffer outside them untouched; a
 * second call bitwise. Returns the first call's buffer (host). */
static float *check_variant(q35_suite *s, const plain_case *c, const uint16_t *dx, const q35_sm90_weight *w,
                            const float *start, const int64_t *cols, int64_t m, const double *ref, int v)
{
    const int64_t len = c->T * c->ldy + c->off;
    float *d = q35_gpu_floats(len);
    float *h = run_plain(c, d, start, dx, w, v), *h2 = run_plain(c, d, start, dx, w, v);
    float *sub = q35_host_alloc((size_t)(c->T * m) * sizeof *sub);
    int64_t written = q35_gpu_written(h, c->off), nonfinite = 0;
    for (int64_t t = 0; t < c->T; t++) {
        const float *row = h + c->off + t * c->ldy;
        for (int64_t o = 0; o < c->n; o++)
            nonfinite += !isfinite(row[o]);
        written += q35_gpu_written(row + c->n, c->ldy - c->n);
        for (int64_t j = 0; j < m; j++)
            sub[t * m + j] = row[cols[j]];
    }
    const q35_cmp cmp = q35_compare_f32_f64(sub, ref, c->T * m);
    char name[200], bits[160];
    name_case(name, sizeof name, q35_gemm_sm90_variant_name(v), c, m);
    q35_case(s, nonfinite == 0 && cmp.nonfinite == 0 && cmp.rel_linf <= Q35_LIMIT_F16_ACC && written == 0,
             "%s: rel Linf %.2e (<= %.0e), rel L2 %.2e against float64 %sx w^T of the f16 operands; %" PRId64
             " of %" PRId64 " non-finite, %" PRId64 " written outside the n columns",
             name, cmp.rel_linf, Q35_LIMIT_F16_ACC, cmp.rel_l2, c->add ? "r + " : "", nonfinite, c->T * c->n,
             written);
    const q35_bitcmp b = q35_bitwise_f32(h2, h, len);
    q35_case(s, b.equal, "%s: called again%s, %s", name, c->add ? " (y set to r again)" : "",
             q35_bitcmp_str(&b, bits, sizeof bits));
    free(h2), free(sub);
    q35_gpu_free(d);
    return h;
}

static void check_case(q35_suite *s, plain_case c, q35_sm90_weight *w)
{
    c.ldx = c.ldx ? c.ldx : c.K, c.ldw = c.ldw ? c.ldw : c.K, c.ldy = c.ldy ? c.ldy : c.n;
    q35_sm90_weight_for(w, c.n, c.K, c.ldw, &g_rng);
    uint16_t *x = q35_sm90_random_rows(c.T, c.K, c.ldx, 1.0, &g_rng), *dx = q35_sm90_device_halves(x, c.T * c.ldx);
    float *r = c.add ? q35_host_uniform(c.T * c.n, -1.0, 1.0, &g_rng) : NULL;
    if (c.add && !r) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    int64_t m;
    int64_t *cols = q35_test_columns(c.n, Q35_SM90_CHECKED_COLUMNS, &m, &g_rng);
    double *ref = q35_sm90_reference(x, c.T, c.ldx, w, cols, m);
    for (int64_t t = 0; r && t < c.T; t++)
        for (int64_t j = 0; j < m; j++)
            ref[t * m + j] += r[t * c.n + cols[j]];
    float *start = start_buffer(&c, r);
    float *first = NULL; /* the first variant's buffer (host): the others bitwise it */
    for (int v = 0; v < q35_gemm_sm90_variant_count(); v++) {
        char name[200];
        name_case(name, sizeof name, q35_gemm_sm90_variant_name(v), &c, m);
        q35_sm90_against_first(s, name, check_variant(s, &c, dx, w, start, cols, m, ref, v), &first,
                               c.T * c.ldy + c.off);
    }
    free(first), free(start), free(ref), free(cols), free(r), free(x);
    q35_gpu_free(dx);
}

/* ---- refusals ---------------------------------------------------------------------- */

/* Each refusal (the header's; the operands' through the same checks as the
 * [gate | up] forms), by its message; then that they and T = 0 (with and
 * without add) wrote nothing. Offsets in halves (x, w) and floats (y). */
static void check_refusals(q35_suite *s)
{
    static const struct {
        int64_t n, K, T, ldx, ldw, ldy;
        int64_t x_off, w_off, y_off;
        const char *want;
    } k_bad[] = {
        {3, 64, 4, 64, 64, 256, 0, 0, 0, "n 3 is odd"},
        {0, 64, 4, 64, 64, 256, 0, 0, 0, "n 0"},
        {1, 64, 4, 64, 64, 256, 0, 0, 0, "n 1 is"}, /* odd and below 2: either named */
        {128, 64, 4, 64, 64, 100, 0, 0, 0, "ldy 100 < n 128"},
        {128, 64, 4, 64, 64, 129, 0, 0, 0, "ldy 129 is odd"},
        {128, 64, 4, 64, 64, 128, 0, 0, 1, "y must be 8-byte aligned"}, /* 4 bytes off */
        {128, 100, 4, 104, 104, 128, 0, 0, 0, "K 100 is not a multiple of 64"},
        {128, 0, 4, 64, 64, 128, 0, 0, 0, "K 0"},
        {128, 64, 4, 100, 64, 128, 0, 0, 0, "ldx 100 is not a multiple of 8"},
        {128, 64, 4, 64, 100, 128, 0, 0, 0, "ldw 100 is not a multiple of 8"},
        {128, 64, 4, 56, 64, 128, 0, 0, 0, "ldx 56"}, /* rows shorter than K */
        {128, 64, 4, 64, 56, 128, 0, 0, 0, "ldw 56"},
        {128, 64, 4, 64, 64, 128, 1, 0, 0, "x16 and w16 must be 16-byte aligned"}, /* x 2 bytes off */
        {128, 64, 4, 64, 64, 128, 0, 4, 0, "x16 and w16 must be 16-byte aligned"}, /* w 8 bytes off */
        {128, 64, -1, 64, 64, 128, 0, 0, 0, "T -1"},
        {128, 64, (int64_t)INT32_MAX + 1, 64, 64, 128, 0, 0, 0, "T 2147483648"},
    };
    const int64_t floats = 1 << 18; /* each buffer: room for every shape above */
    float *d_y = q35_gpu_floats(floats);
    uint16_t *d_x = q35_gpu_bytes((size_t)floats * 4), *d_w = q35_gpu_bytes((size_t)floats * 4);
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
        q35_error err = {{0}};
        const int rc = q35_gemm_sm90_f32(d_y + k_bad[i].y_off, k_bad[i].ldy, d_x + k_bad[i].x_off, k_bad[i].ldx,
                                         d_w + k_bad[i].w_off, k_bad[i].ldw, k_bad[i].n, k_bad[i].K, k_bad[i].T, 0,
                                         Q35_VARIANT_DEFAULT, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, k_bad[i].want) != NULL, "gemm_sm90_f32 refuses \"%s\": %s",
                 k_bad[i].want, err.msg);
    }
    { /* an unknown variant */
        const int nv = q35_gemm_sm90_variant_count();
        q35_error err = {{0}};
        const int rc = q35_gemm_sm90_f32(d_y, 128, d_x, 64, d_w, 64, 128, 64, 4, 0, nv, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, "gemm_sm90 has variants 0..") != NULL,
                 "gemm_sm90_f32 refuses variant %d: %s", nv, err.msg);
    }
    /* T = 0: nothing written, status 0 */
    int rc = 0;
    q35_error err = {{0}};
    for (int add = 0; add <= 1 && rc == 0; add++)
        rc = q35_gemm_sm90_f32(d_y, 128, d_x, 64, d_w, 64, 128, 64, 0, add, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_sm90_case_unwritten(s, "the refusals and T = 0 (add 0 and 1)", rc, &err, d_y, floats);
    q35_gpu_free(d_y), q35_gpu_free(d_x), q35_gpu_free(d_w);
}

/* ---- the 9B projections ------------------------------------------------------------ */

/* The projection `name` of the table p (linear_inputs.h). */
static const q35_proj *proj_named(const q35_proj p[Q35_N_PROJ], const char *name)
{
    for (int i = 0; i < Q35_N_PROJ; i++)
        if (strcmp(p[i].name, name) == 0)
            return &p[i];
    printf("FAIL  no projection %s\n", name);
    exit(1);
}

/* The f16 path's 9B projections: ssm_out and ffn_down (into the residual),
 * the merged DeltaNet and attention input projections (model/cuda_model.c's
 * groups). */
static void check_9b(q35_suite *s, q35_sm90_weight *w)
{
    const q35_shape *m = q35_shape_find("9b");
    if (!m) {
        printf("FAIL  no shape 9b in the shapes table\n");
        exit(1);
    }
    q35_proj p[Q35_N_PROJ];
    q35_model_projections(p, m);
    const q35_proj *ssm_out = proj_named(p, "ssm_out"), *down = proj_named(p, "ffn_down");
    const q35_proj *qkv = proj_named(p, "attn_qkv"), *z = proj_named(p, "attn_gate");
    const q35_proj *ab = proj_named(p, "ssm_alpha/beta"), *q = proj_named(p, "attn_q"), *kv = proj_named(p, "attn_k/v");
    const plain_case cases[] = {
        {"9B ssm_out", ssm_out->n, ssm_out->k, 2048, 1, 0, 0, 0, 0},
        {"9B ffn_down", down->n, down->k, 2048, 1, 0, 0, 0, 0},
        {"9B qkv|z|a|b", qkv->n + z->n + 2 * ab->n, qkv->k, 129, 0, 0, 0, 0, 0}, /* n 12352: a tail block of 64 */
        {"9B q|k|v", q->n + 2 * kv->n, q->k, 7, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(s, cases[i], w);
}

int main(void)
{
    q35_suite s;
    const int skip =
        q35_sm90_suite(&s, "GPU plain GEMM on the sm_90 kernels (wgmma, TMA), f16 operands, f32 out", &g_rng);
    if (skip)
        return skip;
    q35_sm90_weight w = {0};
    printf("-- odd shapes, wider rows, offset outputs\n");
    static const plain_case odd[] = {
        {"odd", 200, 64, 3, 0, 0, 0, 0, 0},        /* one K step, the tail inside the first box */
        {"odd", 2, 128, 1, 0, 0, 0, 0, 0},         /* the narrowest */
        {"odd", 200, 64, 3, 1, 72, 80, 206, 2},    /* every row padded, y 8 bytes in, add */
        {"odd", 328, 320, 130, 1, 0, 0, 330, 2},   /* the tail in the second box, 5 K steps, two row tiles */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        check_case(&s, odd[i], &w);
    if (!q35_quick()) {
        printf("-- the 9B projections of the f16 path\n");
        check_9b(&s, &w);
    }
    q35_sm90_weight_free(&w);
    printf("-- refusals\n");
    check_refusals(&s);
    return q35_suite_end(&s);
}
