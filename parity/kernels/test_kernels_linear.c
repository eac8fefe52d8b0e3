/* GPU parity of the projection (kernels/gemm.h, kernels/gemv.h) against the
 * float64 reference q35_ref_linear on the dequantized weight (kernels/linear.h):
 *   gemm_f32   dequant + SGEMM (pedantic f32)              rel Linf <= 1e-5
 *   gemm_f16   f16 weight and rows, f32 accumulation       <= 2e-3; and <= 1e-4
 *              against the reference on the f16-rounded weight and rows (that
 *              the accumulation is f32), on the first 32 checked outputs
 *   gemv_rows  the batch-invariant rows form               <= 1e-5, and bitwise
 *              (memcmp) q35_gemv of each row, all outputs
 *   gemm~gemv  gemm_f32 row t against q35_gemv of row t    <= 1e-5, all outputs
 *   gemv:<variant>  each per-token variant (gemv.h) on the first 2 rows:
 *              <= 1e-5, and bitwise (memcmp) the rows form, all outputs
 * at every projection of 0.8B, 9B and 27B (SPEC §1; alpha/beta, k/v, gate/up share
 * a shape) at 1 and 512 rows, the largest (27B lm_head) at 2048 through the GEMMs,
 * some at 7 and 64; over the types Q8_0 (0.8B), F16 (0.8B attention), Q4_K and
 * Q6_K (9B, 27B), and Q4_0, Q5_0, Q5_K, BF16, F32 at one shape each; odd sizes, a
 * weight only 2-byte aligned and rows off 16-byte alignment. Past 256 outputs
 * the reference covers a random subset of the output columns (every row of
 * them), the case line says how many. Outputs are poisoned first; written into
 * rows of ldy > n, the other columns stay poisoned. Each refusal shows its
 * message. Q35_QUICK (the sanitizer runs) keeps the 0.8B shapes below lm_head at
 * 1 and 7 rows, the odd sizes and the refusals. */
#include "parity/lib/gpu.h"
#include "linear_inputs.h"

#include "kernels/blas.h"
#include "kernels/dequant.h"
#include "kernels/gemm.h"
#include "kernels/gemv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_F32 1e-5
#define LIMIT_F16 2e-3
#define LIMIT_F16_ACC 1e-4
#define CHECKED_COLUMNS 256
#define F16_REF_COLUMNS 32
#define VARIANT_ROWS 2 /* rows each per-token variant runs */

static q35_rng g_rng;
static q35_blas g_blas;

enum { GEMM_F32 = 1, GEMM_F16 = 2, GEMV = 4, ALL = 7 };

/* A weight on the host and the device, with what the paths keep of it. */
typedef struct weight {
    const char *model, *name;
    q35_type type;
    int64_t n, k;
    uint8_t *host;
    uint8_t *dev;      /* the buffer; the weight starts `offset` bytes in */
    size_t offset;
    uint16_t *dev16;   /* the f16 path's cached weight (q35_dequant_f16), or NULL */
    float *scratch;    /* the f32 path's dequant scratch, or NULL */
} weight;

static void weight_make(weight *w, const char *model, const char *name, q35_type type, int64_t n, int64_t k,
                        size_t offset, int paths)
{
    q35_error err = {{0}};
    *w = (weight){.model = model, .name = name, .type = type, .n = n, .k = k, .offset = offset};
    w->host = q35_test_weight(type, n, k, &g_rng);
    const size_t bytes = q35_row_bytes(type, k) * (size_t)n;
    w->dev = q35_gpu_bytes(bytes + offset);
    q35_gpu_upload(w->dev + offset, w->host, bytes);
    if (paths & GEMM_F16) {
        w->dev16 = q35_gpu_bytes((size_t)(n * k) * 2);
        q35_gpu_ok(q35_dequant_f16(w->dev16, w->dev + offset, type, n, k, NULL, &err), &err);
    }
    if (paths & GEMM_F32)
        w->scratch = q35_gpu_floats(q35_gemm_f32_scratch_floats(n, k));
}

static void weight_free(weight *w)
{
    free(w->host);
    q35_gpu_free(w->dev);
    if (w->dev16)
        q35_gpu_free(w->dev16);
    if (w->scratch)
        q35_gpu_free(w->scratch);
}

/* y [T][ldy] downloaded; the columns n..ldy-1 checked still poisoned (count of
 * those written in *written); columns cols[0..m) gathered into sub [T][m]. */
static float *fetch(const float *dy, int64_t T, int64_t n, int64_t ldy, const int64_t *cols, int64_t m, float *sub,
                    int64_t *written)
{
    float *y = q35_gpu_to_host(dy, T * ldy);
    *written = 0;
    for (int64_t t = 0; t < T; t++) {
        for (int64_t o = n; o < ldy; o++) {
            uint32_t u;
            memcpy(&u, &y[t * ldy + o], 4);
            *written += u != 0xffffffffu;
        }
        for (int64_t j = 0; j < m; j++)
            sub[t * m + j] = y[t * ldy + cols[j]];
    }
    return y;
}

/* The case name: path, model, projection, type, shape, rows, the checked outputs. */
static void name_case(char *buf, size_t cap, const char *path, const weight *w, int64_t T, int64_t ldy, int64_t m)
{
    char sub[64] = "";
    if (m < w->n)
        snprintf(sub, sizeof sub, " (%" PRId64 " of %" PRId64 " outputs)", m, w->n);
    if (ldy > w->n)
        snprintf(sub + strlen(sub), sizeof sub - strlen(sub), " ldy %" PRId64, ldy);
    snprintf(buf, cap, "%-9s %-4s %-14s %-4s n %6" PRId64 " k %5" PRId64 " T %4" PRId64 "%s%s", path, w->model,
             w->name, q35_type_name(w->type), w->n, w->k, T, w->offset ? " w+2" : "", sub);
}

/* One row count through the chosen paths; x placed x_off floats into its buffer. */
static void check_rows(q35_suite *s, const weight *w, int64_t T, int64_t ldy, int paths, int64_t x_off)
{
    if (q35_racecheck()) /* cuBLAS's kernels are outside racecheck's model (harness.h) */
        paths &= ~(GEMM_F32 | GEMM_F16);
    q35_error err = {{0}};
    const int64_t n = w->n, k = w->k;
    const void *wd = w->dev + w->offset;
    float *x = malloc((size_t)(T * k) * sizeof *x);
    for (int64_t i = 0; i < T * k; i++)
        x[i] = q35_rng_normal_fast(&g_rng);
    float *xbuf = q35_gpu_floats(T * k + x_off), *dx = xbuf + x_off;
    q35_gpu_upload(dx, x, (size_t)(T * k) * sizeof *x);
    int64_t m;
    int64_t *cols = q35_test_columns(n, CHECKED_COLUMNS, &m, &g_rng);
    double *ref = malloc((size_t)(T * m) * sizeof *ref);
    q35_test_ref_columns(ref, x, T, w->host, w->type, k, cols, m, false);
    float *sub = malloc((size_t)(T * m) * sizeof *sub);
    float *dy = q35_gpu_floats(T * ldy);
    char name[200];
    float *gemm32 = NULL;

    if (paths & GEMM_F32) {
        int64_t written;
        q35_gpu_ok(q35_gemm_f32(g_blas, dy, ldy, dx, T, wd, w->type, n, k, w->scratch, &err), &err);
        gemm32 = fetch(dy, T, n, ldy, cols, m, sub, &written);
        const q35_cmp c = q35_compare_f32_f64(sub, ref, T * m);
        name_case(name, sizeof name, "gemm_f32", w, T, ldy, m);
        if (written)
            q35_case(s, false, "%s: %" PRId64 " values written past column n", name, written);
        else
            q35_case_unit(s, name, &c, LIMIT_F32, NULL);
    }
    if (paths & GEMM_F16) {
        int64_t written;
        uint16_t *xs = q35_gpu_bytes((size_t)q35_gemm_f16_scratch_halves(T, k) * 2);
        float *dy16 = q35_gpu_floats(T * ldy);
        q35_gpu_ok(q35_gemm_f16(g_blas, dy16, ldy, dx, T, w->dev16, n, k, xs, &err), &err);
        float *y16 = fetch(dy16, T, n, ldy, cols, m, sub, &written);
        const q35_cmp c = q35_compare_f32_f64(sub, ref, T * m);
        const int64_t m16 = m < F16_REF_COLUMNS ? m : F16_REF_COLUMNS;
        double *ref16 = malloc((size_t)(T * m16) * sizeof *ref16);
        float *sub16 = malloc((size_t)(T * m16) * sizeof *sub16);
        q35_test_ref_columns(ref16, x, T, w->host, w->type, k, cols, m16, true);
        for (int64_t t = 0; t < T; t++)
            for (int64_t j = 0; j < m16; j++)
                sub16[t * m16 + j] = sub[t * m + j];
        const q35_cmp c16 = q35_compare_f32_f64(sub16, ref16, T * m16);
        name_case(name, sizeof name, "gemm_f16", w, T, ldy, m);
        const bool ok = written == 0 && c.nonfinite == 0 && c.rel_linf <= LIMIT_F16 && c16.rel_linf <= LIMIT_F16_ACC;
        q35_case(s, ok,
                 "%s: rel Linf %.2e (<= %.0e), rel L2 %.2e; against f16-rounded inputs (%" PRId64
                 " outputs) %.2e (<= %.0e); %" PRId64 " non-finite, %" PRId64 " written past column n",
                 name, c.rel_linf, LIMIT_F16, c.rel_l2, m16, c16.rel_linf, LIMIT_F16_ACC, c.nonfinite, written);
        /* the same product added into y (the residual folded into the GEMM): y = r + X W^T against r + the
         * float64 reference, every column past n still r's */
        float *r = malloc((size_t)(T * ldy) * sizeof *r);
        for (int64_t i = 0; i < T * ldy; i++)
            r[i] = q35_rng_normal_fast(&g_rng);
        q35_gpu_upload(dy16, r, (size_t)(T * ldy) * sizeof *r);
        q35_gpu_ok(q35_gemm_f16_rounded_add(g_blas, dy16, ldy, xs, T, w->dev16, n, k, &err), &err);
        float *ya = q35_gpu_to_host(dy16, T * ldy);
        double *refa = malloc((size_t)(T * m) * sizeof *refa);
        int64_t kept = 0;
        for (int64_t t = 0; t < T; t++) {
            for (int64_t j = 0; j < m; j++) {
                sub[t * m + j] = ya[t * ldy + cols[j]];
                refa[t * m + j] = ref[t * m + j] + (double)r[t * ldy + cols[j]];
            }
            for (int64_t o = n; o < ldy; o++)
                kept += memcmp(&ya[t * ldy + o], &r[t * ldy + o], 4) == 0;
        }
        const q35_cmp ca = q35_compare_f32_f64(sub, refa, T * m);
        name_case(name, sizeof name, "gemm_f16+", w, T, ldy, m);
        q35_case(s, ca.nonfinite == 0 && ca.rel_linf <= LIMIT_F16 && kept == T * (ldy - n),
                 "%s: y + X W^T rel Linf %.2e (<= %.0e), rel L2 %.2e; %" PRId64 " non-finite; columns past n kept "
                 "%" PRId64 " of %" PRId64, name, ca.rel_linf, LIMIT_F16, ca.rel_l2, ca.nonfinite, kept, T * (ldy - n));
        free(r), free(ya), free(refa);
        free(y16), free(ref16), free(sub16);
        q35_gpu_free(xs), q35_gpu_free(dy16);
    }
    if (paths & GEMV) {
        int64_t written;
        float *dyr = q35_gpu_floats(T * ldy), *dyt = q35_gpu_floats(T * n);
        q35_gpu_ok(q35_gemv_rows(dyr, ldy, wd, w->type, n, k, dx, T, NULL, &err), &err);
        for (int64_t t = 0; t < T; t++)
            q35_gpu_ok(q35_gemv(dyt + t * n, wd, w->type, n, k, dx + t * k, Q35_VARIANT_DEFAULT, NULL, &err), &err);
        float *yr = fetch(dyr, T, n, ldy, cols, m, sub, &written), *yt = q35_gpu_to_host(dyt, T * n);
        const q35_cmp c = q35_compare_f32_f64(sub, ref, T * m);
        float *yrc = malloc((size_t)(T * n) * sizeof *yrc); /* the rows form's rows, at n */
        for (int64_t t = 0; t < T; t++)
            memcpy(yrc + t * n, yr + t * ldy, (size_t)n * sizeof *yrc);
        const q35_bitcmp b = q35_bitwise_f32(yrc, yt, T * n);
        name_case(name, sizeof name, "gemv_rows", w, T, ldy, m);
        if (written)
            q35_case(s, false, "%s: %" PRId64 " values written past column n", name, written);
        else
            q35_case_unit(s, name, &c, LIMIT_F32, &b);
        /* each per-token variant on the first rows: bitwise the rows form, and against the reference */
        const int64_t tv = T < VARIANT_ROWS ? T : VARIANT_ROWS;
        for (int v = 0; v < q35_gemv_variant_count(); v++) {
            float *dyv = q35_gpu_floats(tv * n);
            for (int64_t t = 0; t < tv; t++)
                q35_gpu_ok(q35_gemv(dyv + t * n, wd, w->type, n, k, dx + t * k, v, NULL, &err), &err);
            float *yv = q35_gpu_to_host(dyv, tv * n);
            float *subv = malloc((size_t)(tv * m) * sizeof *subv);
            for (int64_t t = 0; t < tv; t++)
                for (int64_t j = 0; j < m; j++)
                    subv[t * m + j] = yv[t * n + cols[j]];
            const q35_cmp cv = q35_compare_f32_f64(subv, ref, tv * m);
            const q35_bitcmp bv = q35_bitwise_f32(yv, yrc, tv * n);
            char path[32];
            snprintf(path, sizeof path, "gemv:%s", q35_gemv_variant_name(v));
            name_case(name, sizeof name, path, w, tv, ldy, m);
            q35_case_unit(s, name, &cv, LIMIT_F32, &bv);
            free(yv), free(subv);
            q35_gpu_free(dyv);
        }
        free(yrc);
        if (gemm32) { /* the GEMM's rows against the per-token GEMVs, every output */
            double *ytd = q35_host_f64(yt, T * n);
            float *g = malloc((size_t)(T * n) * sizeof *g);
            for (int64_t t = 0; t < T; t++)
                memcpy(g + t * n, gemm32 + t * ldy, (size_t)n * sizeof *g);
            const q35_cmp cg = q35_compare_f32_f64(g, ytd, T * n);
            name_case(name, sizeof name, "gemm~gemv", w, T, ldy, n);
            q35_case_unit(s, name, &cg, LIMIT_F32, NULL);
            free(ytd), free(g);
        }
        free(yr), free(yt);
        q35_gpu_free(dyr), q35_gpu_free(dyt);
    }
    free(x), free(cols), free(ref), free(sub), free(gemm32);
    q35_gpu_free(xbuf), q35_gpu_free(dy);
}

/* A projection of a model at the row counts rows[0..nr), paths[i] for each. */
static void check_projection(q35_suite *s, const char *model, const q35_proj *p, q35_type type, const int64_t *rows,
                             const int *paths, int nr)
{
    int all = 0;
    for (int i = 0; i < nr; i++)
        all |= paths[i];
    weight w;
    weight_make(&w, model, p->name, type, p->n, p->k, 0, all);
    for (int i = 0; i < nr; i++)
        check_rows(s, &w, rows[i], p->n, paths[i], 0);
    weight_free(&w);
}

/* Every projection of a model: its type per projection, the rows each takes. */
static void check_model(q35_suite *s, const char *model, const char *shape, const q35_type types[Q35_N_PROJ])
{
    q35_proj p[Q35_N_PROJ];
    q35_model_projections(p, q35_shape_find(shape));
    const bool quick = q35_quick();
    for (int i = 0; i < Q35_N_PROJ; i++) {
        const bool lm = i == Q35_N_PROJ - 1, largest = lm && strcmp(shape, "27b") == 0;
        if (quick && (lm || strcmp(shape, "0.8b") != 0))
            continue;
        int64_t rows[4] = {1, quick ? 7 : 512};
        int paths[4] = {ALL, ALL};
        int nr = 2;
        if (!quick && i % 3 == 1) /* attn_gate, attn_q, ffn_gate/up: a few odd and small row counts too */
            rows[nr] = i == 1 ? 7 : 64, paths[nr++] = ALL;
        if (largest)
            rows[nr] = 2048, paths[nr++] = GEMM_F32 | GEMM_F16;
        check_projection(s, model, &p[i], types[i], rows, paths, nr);
    }
}

/* A type at one shape, or an odd shape: a weight at `offset` bytes, rows at x_off floats. */
static void check_one(q35_suite *s, const char *model, const char *name, q35_type type, int64_t n, int64_t k,
                      int64_t T, int64_t ldy, size_t offset, int64_t x_off)
{
    weight w;
    weight_make(&w, model, name, type, n, k, offset, ALL);
    check_rows(s, &w, T, ldy, ALL, x_off);
    weight_free(&w);
}

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1 << 16);
    int rc = q35_gemm_f32(g_blas, d, 64, d, 2, d, Q35_TYPE_Q2_K, 64, 256, d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f32: type q2_K is not one this project computes"),
             "gemm_f32 refuses q2_K: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv(d, d, Q35_TYPE_Q2_K, 64, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv: type q2_K is not one"), "gemv refuses q2_K: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_rows(d, 64, d, Q35_TYPE_Q4_K, 64, 100, d, 3, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_rows: k = 100 is not a whole number of q4_K blocks of 256"),
             "gemv_rows refuses a q4_K row of 100: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f32(g_blas, d, 64, d, 2, d, Q35_TYPE_Q8_0, 64, 40, d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f32: k = 40 is not a whole number of q8_0 blocks of 32"),
             "gemm_f32 refuses a q8_0 row of 40: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_rows(d, 60, d, Q35_TYPE_Q8_0, 64, 32, d, 3, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_rows: ldy = 60 is less than n = 64"), "gemv_rows refuses ldy < n: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f16(g_blas, d, 60, d, 2, (const uint16_t *)d, 64, 32, (uint16_t *)d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f16: ldy = 60 is less than n = 64"), "gemm_f16 refuses ldy < n: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemm_f16(g_blas, d, 64, d, -1, (const uint16_t *)d, 64, 32, (uint16_t *)d, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemm_f16: T = -1"), "gemm_f16 refuses T = -1: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv(d, d, Q35_TYPE_Q4_K, 600000, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv: n = 600000 rows (want 1..524280)"), "gemv refuses n = 600000: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    /* T = 0 writes nothing */
    rc = q35_gemm_f32(g_blas, d, 64, d, 0, d, Q35_TYPE_Q8_0, 64, 32, d + 4096, &err) ||
         q35_gemv_rows(d, 64, d + 4096, Q35_TYPE_Q8_0, 64, 32, d + 8192, 0, NULL, &err);
    float *h = q35_gpu_to_host(d, 64);
    int64_t written = 0;
    for (int i = 0; i < 64; i++) {
        uint32_t u;
        memcpy(&u, &h[i], 4);
        written += u != 0xffffffffu;
    }
    q35_case(s, rc == 0 && written == 0, "gemm_f32 and gemv_rows of T = 0 write nothing (%" PRId64 " written)",
             written);
    free(h);
    q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU projection: GEMM (f32, f16) and GEMV (per token, rows) vs float64", &g_rng);
    if (skip)
        return skip;
    q35_error err = {{0}};
    q35_gpu_ok(q35_blas_create(&g_blas, NULL, &err), &err);

    const q35_type K4 = Q35_TYPE_Q4_K, K6 = Q35_TYPE_Q6_K, Q8 = Q35_TYPE_Q8_0, F16 = Q35_TYPE_F16;
    /* qkv, gate, alpha/beta, ssm_out, attn_q, attn_k/v, attn_output, ffn_gate/up, ffn_down, lm_head */
    const q35_type t08[Q35_N_PROJ] = {Q8, Q8, Q8, Q8, F16, F16, F16, Q8, Q8, Q8};
    const q35_type t9[Q35_N_PROJ] = {K4, K4, K4, K4, K4, K6, K4, K4, K6, K6};
    const q35_type t27[Q35_N_PROJ] = {K6, K6, K6, K4, K4, K6, K4, K4, K4, K4};
    printf("-- the projections of 0.8B, 9B, 27B\n");
    check_model(&s, "0.8B", "0.8b", t08);
    check_model(&s, "9B", "9b", t9);
    check_model(&s, "27B", "27b", t27);

    printf("-- the other types, at the 9B attn_gate shape (a small one under Q35_QUICK)\n");
    const bool quick = q35_quick();
    const int64_t tn = quick ? 256 : 4096, tk = quick ? 512 : 4096, tT = quick ? 3 : 64;
    const char *tm = quick ? "-" : "9B", *tp = quick ? "-" : "attn_gate";
    check_one(&s, tm, tp, Q35_TYPE_Q4_0, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q5_0, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q5_K, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_BF16, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_F32, tn, tk, tT, tn, 0, 0);

    printf("-- odd sizes, alignments, wider output rows\n");
    check_one(&s, "odd", "-", Q35_TYPE_Q8_0, 37, 96, 3, 37, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 1, 256, 5, 1, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_F32, 5, 37, 7, 5, 0, 1);     /* plain row ending mid-unit, rows off 16 */
    check_one(&s, "odd", "-", Q35_TYPE_F16, 33, 1000, 9, 33, 2, 0); /* a weight 2-byte aligned */
    check_one(&s, "odd", "-", Q35_TYPE_BF16, 3, 24, 2, 3, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 64, 512, 9, 64, 2, 3); /* the 2-byte loads of a wide type */
    check_one(&s, "odd", "-", Q35_TYPE_Q6_K, 100, 256, 5, 128, 0, 0); /* ldy > n */
    check_one(&s, "odd", "-", Q35_TYPE_Q5_0, 19, 64, 17, 24, 0, 0);   /* ldy > n, a tile of rows and a part */
    /* the staged variant: a last stage part full, rows not a whole number of a warp's groups */
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 37, 768, 3, 37, 0, 0);  /* 24 units: one stage of 432 bytes */
    check_one(&s, "odd", "-", Q35_TYPE_Q5_K, 6, 1280, 2, 6, 0, 0);    /* 40 units: a second stage of 176 bytes */
    check_one(&s, "odd", "-", Q35_TYPE_Q8_0, 9, 1024, 2, 9, 0, 0);    /* 2 rows a group, the last alone */
    check_one(&s, "odd", "-", Q35_TYPE_Q6_K, 5, 2048, 2, 5, 0, 0);    /* 2 units a lane a stage */
    check_one(&s, "odd", "-", Q35_TYPE_Q4_0, 3, 512, 2, 3, 0, 2);     /* x off 16-byte alignment */

    printf("-- refusals\n");
    check_refusals(&s);
    q35_blas_destroy(g_blas);
    return q35_suite_end(&s);
}
