/* GPU parity of the projection (kernels/gemm.h, kernels/gemv.h) against the
 * float64 reference q35_ref_linear on the dequantized weight (kernels/linear.h):
 *   gemm_f32   dequant + SGEMM (pedantic f32)              rel Linf <= 1e-5
 *   gemm_f16   f16 weight and rows, f32 accumulation       <= 2e-3; and <= 1e-4
 *              against the reference on the f16-rounded weight and rows (that
 *              the accumulation is f32), on the first 32 checked outputs
 *   lt_tuned, lt_steady, lt_first  the same product through gemm_lt.h's
 *              cuBLASLt context, tuning burst, steady and off: gemm_f16's bounds; and each call bitwise
 *              (memcmp, all T * ldy values) a second call of its shape, with
 *              how its algorithm was chosen (tuned, or the heuristic's first)
 *   lt16_tuned, lt16_steady, lt16_first  its f16-out form
 *              (q35_hgemm_rounded_f16), the three contexts: <= 2e-3 + 2^-11 against float64; against the
 *              reference on the f16-rounded inputs, each value within 2^-11
 *              of itself + 2^-25 + (1 + 2^-11) 1e-4 of the largest (its one
 *              rounding on top of the f32 accumulation's bound); bitwise a
 *              second call (memcmp); how many values are the f32 form's
 *              rounded (reported); at the 9B's f16-path GEMMs and odd shapes
 *   gemv_rows  the batch-invariant rows form               <= 1e-5, and bitwise
 *              (memcmp) q35_gemv of each row, all outputs
 *   gemm~gemv  gemm_f32 row t against q35_gemv of row t    <= 1e-5, all outputs
 *   gemv:<variant>  each per-token variant (gemv.h) on the first 2 rows:
 *              <= 1e-5, and bitwise (memcmp) the rows form, all outputs
 *   gemv_group:<variant>  the grouped GEMV (the 9B's decode groups, odd
 *              parts, a weight 2-byte aligned): bitwise (memcmp) each part's
 *              q35_gemv alone, nothing written past a part; its refusals
 * at every projection of 0.8B, 9B and 27B (SPEC §1; alpha/beta, k/v, gate/up share
 * a shape) at 1 and 512 rows, the largest (27B lm_head) at 2048 through the GEMMs,
 * some at 7 and 64; over the types Q8_0 (0.8B), F16 (0.8B attention), Q4_K and
 * Q6_K (9B, 27B), and Q4_0, Q5_0, Q5_K, BF16, F32 at one shape each; the 9B
 * f16 path's merged and residual-adding GEMMs at 1, 7, 64 and 2048 rows (the
 * f16-out form there too, [gate | up] at 2048; and at odd shapes: ldy > n,
 * odd T and ldy, operands off 16 bytes, where a refusal naming the shape
 * passes); odd
 * sizes, a weight only 2-byte aligned (its f16 copy too) and rows off 16-byte
 * alignment (the f16 rows and the output too). The f16 forms add into y too
 * (gemm_f16+, lt_tuned+, lt_steady+, lt_first+: y = r + X W^T). Past 256 outputs
 * the reference covers a random subset of the output columns (every row of
 * them), the case line says how many. Outputs are poisoned first; written into
 * rows of ldy > n, the other columns stay poisoned. Each refusal (linear_refusals.c) shows its
 * message. Q35_QUICK (the sanitizer runs) keeps the 0.8B shapes below lm_head at
 * 1 and 7 rows, the first f16-path GEMM at 1 and 7, the odd sizes and the
 * refusals (hgemm_create's tune outside 0..2 among them). The 8-bit-activation
 * GEMV: test_kernels_gemv_q8.c. */
#include "parity/lib/gpu.h"
#include "linear_inputs.h"
#include "linear_refusals.h"

#include "core/half.h"
#include "kernels/blas.h"
#include "kernels/dequant.h"
#include "kernels/gemm.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemv.h"
#include "kernels/linear.h"
#include "model/capacity.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_F32 1e-5
#define LIMIT_F16 2e-3
#define LIMIT_F16_ACC 1e-4
/* The f16-out form (q35_hgemm_rounded_f16): one rounding to f16 of the f32
 * sum, |y16 - y| <= 2^-11 |y| (2^-25 absolute below f16's normals), on top of
 * the f16 path's bounds (gemm_lt.h derives it) */
#define F16_ROUND 0x1p-11
#define F16_SUBNORMAL_STEP 0x1p-25
#define LIMIT_F16_OUT (LIMIT_F16 + F16_ROUND)
#define CHECKED_COLUMNS 256
#define F16_REF_COLUMNS 32
#define VARIANT_ROWS 2 /* rows each per-token variant runs */

static q35_rng g_rng;
static q35_blas g_blas;
static q35_hgemm *g_lt_tuned, *g_lt_steady, *g_lt_first; /* gemm_lt.h's context: tuning burst, steady, off */

enum { GEMM_F32 = 1, GEMM_F16 = 2, GEMV = 4, GEMM_LT = 8, ALL = 15, GEMM_LT16 = 16 }; /* LT16: the f16-out form */

/* A weight on the host and the device, with what the paths keep of it. */
typedef struct weight {
    const char *model, *name;
    q35_type type;
    int64_t n, k;
    uint8_t *host;
    uint8_t *dev;      /* the buffer; the weight starts `offset` bytes in */
    size_t offset;
    uint8_t *dev16_buf; /* the f16 path's cached weight (q35_dequant_f16), `offset` bytes in, or NULL */
    uint16_t *dev16;
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
    if (paths & (GEMM_F16 | GEMM_LT | GEMM_LT16)) {
        w->dev16_buf = q35_gpu_bytes((size_t)(n * k) * 2 + offset);
        w->dev16 = (uint16_t *)(void *)(w->dev16_buf + offset);
        q35_gpu_ok(q35_dequant_f16(w->dev16, w->dev + offset, type, n, k, NULL, &err), &err);
    }
    if (paths & GEMM_F32)
        w->scratch = q35_gpu_floats(q35_gemm_f32_scratch_floats(n, k));
}

static void weight_free(weight *w)
{
    free(w->host);
    q35_gpu_free(w->dev);
    if (w->dev16_buf)
        q35_gpu_free(w->dev16_buf);
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
        *written += q35_gpu_written(y + t * ldy + n, ldy - n);
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

/* Whether context lt's last choice (q35_hgemm_last_choice: have its return, c
 * what it gave) is what it should be: a candidate of at most
 * Q35_HGEMM_CANDIDATES; a tuned context (burst or steady) the fastest it timed,
 * no slower than the first; the untuned one the heuristic's first, untimed. */
static bool lt_choice_ok(const q35_hgemm *lt, int have, const q35_hgemm_choice *c)
{
    const bool tuned = lt != g_lt_first;
    return have == 0 && c->candidates >= 1 && c->candidates <= Q35_HGEMM_CANDIDATES && c->chosen >= 0 &&
           c->chosen < c->candidates && c->tuned == tuned &&
           (tuned ? c->best_ms >= 0.0f && (c->first_ms < 0.0f || c->best_ms <= c->first_ms)
                  : c->chosen == 0 && c->best_ms < 0.0f);
}

/* The f16 product's forms: gemm.h's (cublasGemmEx's default algorithm) and
 * gemm_lt.h's cuBLASLt context, tuned (burst and steady) and not (the
 * heuristic's first). */
typedef struct f16_form {
    const char *path, *path_add; /* the case names' paths */
    q35_hgemm **lt;              /* NULL: gemm.h's */
    int paths;                   /* the check_rows bit that runs it */
} f16_form;

static const f16_form g_f16_forms[] = {
    {"gemm_f16", "gemm_f16+", NULL, GEMM_F16},
    {"lt_tuned", "lt_tuned+", &g_lt_tuned, GEMM_LT},
    {"lt_steady", "lt_steady+", &g_lt_steady, GEMM_LT},
    {"lt_first", "lt_first+", &g_lt_first, GEMM_LT},
};
#define N_F16_FORMS ((int)(sizeof g_f16_forms / sizeof g_f16_forms[0]))

/* y = x16 W^T (gemm.h's form: q35_gemm_f16 from x, rounding it into xs again), or y += it */
static void f16_gemm(const f16_form *f, float *dy, int64_t ldy, const float *dx, uint16_t *xs, int64_t T,
                     const weight *w, bool add)
{
    q35_error err = {{0}};
    if (f->lt)
        q35_gpu_ok(q35_hgemm_rounded(*f->lt, dy, ldy, xs, T, w->dev16, w->n, w->k, add, &err), &err);
    else if (add)
        q35_gpu_ok(q35_gemm_f16_rounded_add(g_blas, dy, ldy, xs, T, w->dev16, w->n, w->k, &err), &err);
    else
        q35_gpu_ok(q35_gemm_f16(g_blas, dy, ldy, dx, T, w->dev16, w->n, w->k, xs, &err), &err);
}

/* An Lt form's shape called again into y2 (set to what y held before the
 * first call): bitwise the first call's y, all T * ldy values (the shape's
 * algorithm is kept); and how it was chosen. */
static void check_lt_repeat(q35_suite *s, const f16_form *f, const char *name, const float *y, float *dy2,
                            int64_t ldy, const float *dx, uint16_t *xs, int64_t T, const weight *w, bool add)
{
    f16_gemm(f, dy2, ldy, dx, xs, T, w, add);
    float *y2 = q35_gpu_to_host(dy2, T * ldy);
    const q35_bitcmp b = q35_bitwise_f32(y2, y, T * ldy);
    q35_hgemm_choice c = {0};
    const int have = q35_hgemm_last_choice(*f->lt, &c);
    const bool choice_ok = lt_choice_ok(*f->lt, have, &c);
    char bits[160];
    q35_case(s, b.equal && choice_ok,
             "%s: called again, %s; candidates %d, chosen %d, tuned %d, first %.4f ms, best %.4f ms", name,
             q35_bitcmp_str(&b, bits, sizeof bits), c.candidates, c.chosen, c.tuned, (double)c.first_ms,
             (double)c.best_ms);
    free(y2);
}

/* One f16 form at T rows: y = X W^T into poisoned rows of ldy (columns past n
 * untouched; y placed y_off floats into its buffer), against the float64
 * reference (rel Linf <= LIMIT_F16) and, on the first m16 checked outputs,
 * against the reference on the f16-rounded inputs (<= LIMIT_F16_ACC: the
 * accumulation is f32); then y = r + X W^T (add) against r + the reference,
 * every column past n still r's. The Lt forms: each called twice, bitwise. */
static void check_f16(q35_suite *s, const f16_form *f, const weight *w, int64_t T, int64_t ldy, int64_t y_off,
                      const float *dx, uint16_t *xs, const int64_t *cols, int64_t m, const double *ref, int64_t m16,
                      const double *ref16)
{
    const int64_t n = w->n;
    char name[200];
    int64_t written;
    float *sub = malloc((size_t)(T * m) * sizeof *sub), *sub16 = malloc((size_t)(T * m16) * sizeof *sub16);
    float *ybuf = q35_gpu_floats(T * ldy + y_off), *y2buf = q35_gpu_floats(T * ldy + y_off);
    float *dy16 = ybuf + y_off, *dy2 = y2buf + y_off;
    f16_gemm(f, dy16, ldy, dx, xs, T, w, false);
    float *y16 = fetch(dy16, T, n, ldy, cols, m, sub, &written);
    const q35_cmp c = q35_compare_f32_f64(sub, ref, T * m);
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < m16; j++)
            sub16[t * m16 + j] = sub[t * m + j];
    const q35_cmp c16 = q35_compare_f32_f64(sub16, ref16, T * m16);
    name_case(name, sizeof name, f->path, w, T, ldy, m);
    const bool ok = written == 0 && c.nonfinite == 0 && c.rel_linf <= LIMIT_F16 && c16.rel_linf <= LIMIT_F16_ACC;
    q35_case(s, ok,
             "%s: rel Linf %.2e (<= %.0e), rel L2 %.2e; against f16-rounded inputs (%" PRId64
             " outputs) %.2e (<= %.0e); %" PRId64 " non-finite, %" PRId64 " written past column n",
             name, c.rel_linf, LIMIT_F16, c.rel_l2, m16, c16.rel_linf, LIMIT_F16_ACC, c.nonfinite, written);
    if (f->lt)
        check_lt_repeat(s, f, name, y16, dy2, ldy, dx, xs, T, w, false);
    free(y16);
    /* the same product added into y (the residual folded into the GEMM): y = r + X W^T against r + the
     * float64 reference, every column past n still r's */
    float *r = malloc((size_t)(T * ldy) * sizeof *r);
    for (int64_t i = 0; i < T * ldy; i++)
        r[i] = q35_rng_normal_fast(&g_rng);
    q35_gpu_upload(dy16, r, (size_t)(T * ldy) * sizeof *r);
    f16_gemm(f, dy16, ldy, dx, xs, T, w, true);
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
    name_case(name, sizeof name, f->path_add, w, T, ldy, m);
    q35_case(s, ca.nonfinite == 0 && ca.rel_linf <= LIMIT_F16 && kept == T * (ldy - n),
             "%s: y + X W^T rel Linf %.2e (<= %.0e), rel L2 %.2e; %" PRId64 " non-finite; columns past n kept "
             "%" PRId64 " of %" PRId64, name, ca.rel_linf, LIMIT_F16, ca.rel_l2, ca.nonfinite, kept, T * (ldy - n));
    if (f->lt) {
        q35_gpu_upload(dy2, r, (size_t)(T * ldy) * sizeof *r);
        check_lt_repeat(s, f, name, ya, dy2, ldy, dx, xs, T, w, true);
    }
    free(r), free(ya), free(refa), free(sub), free(sub16);
    q35_gpu_free(ybuf), q35_gpu_free(y2buf);
}

/* The f16-out form through context *lt at T rows: y16 = X W^T rounded to f16,
 * into poisoned rows of ldy halves placed y_off halves into their buffer
 * (columns past n, and the buffer's first y_off halves, still poisoned),
 * widened: against the float64 reference (rel Linf <= LIMIT_F16_OUT) and, on
 * the first m16 checked outputs, against the reference r on the f16-rounded
 * inputs value by value, |y16 - r| <= 2^-11 |r| + 2^-25 + (1 + 2^-11) 1e-4
 * max |r|: the output's one rounding of the f32 sum a (|y16 - a| <= 2^-11 |a|
 * + 2^-25, |a| <= |r| + |a - r|) on top of the f32 accumulation's bound
 * (|a - r| <= LIMIT_F16_ACC max |r|, as the f32 form's); a split of K that
 * rounded partial sums to f16 would show here, not in the rel Linf. Then the
 * shape called again, bitwise (memcmp, all T * ldy halves), how its algorithm
 * was chosen, and how many values are the f32 form's (same context, same
 * inputs) rounded: reported, not bounded (each shape has its own algorithm).
 * Where rows or pointers are off 16 bytes (ldy, y_off or k not a multiple of
 * 8, the weight off) a refusal naming the shape ("hgemm_f16 ... ldy ...")
 * passes too (gemm_lt.h: any ldy cuBLASLt has an algorithm for), writing
 * nothing. */
static void check_lt_f16(q35_suite *s, q35_hgemm *lt, const char *path, const weight *w, int64_t T, int64_t ldy,
                         int64_t y_off, const uint16_t *xs, const int64_t *cols, int64_t m, const double *ref,
                         int64_t m16, const double *ref16)
{
    q35_error err = {{0}};
    const int64_t n = w->n, halves = T * ldy + y_off;
    const bool aligned = ldy % 8 == 0 && y_off % 8 == 0 && w->offset % 16 == 0 && w->k % 8 == 0;
    char name[200];
    name_case(name, sizeof name, path, w, T, ldy, m);
    uint16_t *ybuf = q35_gpu_bytes((size_t)halves * 2), *y2buf = q35_gpu_bytes((size_t)halves * 2);
    float *dy32 = q35_gpu_floats(T * ldy);
    if (q35_hgemm_rounded_f16(lt, ybuf + y_off, ldy, xs, T, w->dev16, n, w->k, &err)) {
        uint16_t *y = malloc((size_t)halves * 2);
        q35_gpu_download(y, ybuf, (size_t)halves * 2);
        int64_t written = 0;
        for (int64_t i = 0; i < halves; i++)
            written += y[i] != 0xffff;
        q35_case(s, !aligned && strstr(err.msg, "hgemm_f16") && strstr(err.msg, "ldy") && written == 0,
                 "%s: refused (%s; %" PRId64 " halves written): %s", name,
                 aligned ? "rows and pointers 16-byte aligned: a failure" : "off 16 bytes: allowed", written, err.msg);
        free(y);
        q35_gpu_free(ybuf), q35_gpu_free(y2buf), q35_gpu_free(dy32);
        return;
    }
    q35_hgemm_choice c1 = {0};
    const int have1 = q35_hgemm_last_choice(lt, &c1);
    q35_gpu_ok(q35_hgemm_rounded_f16(lt, y2buf + y_off, ldy, xs, T, w->dev16, n, w->k, &err), &err);
    q35_gpu_ok(q35_hgemm_rounded(lt, dy32, ldy, xs, T, w->dev16, n, w->k, 0, &err), &err);
    uint16_t *y = malloc((size_t)halves * 2), *y2 = malloc((size_t)halves * 2);
    q35_gpu_download(y, ybuf, (size_t)halves * 2);
    q35_gpu_download(y2, y2buf, (size_t)halves * 2);
    float *y32 = q35_gpu_to_host(dy32, T * ldy);
    int64_t written = 0, rounded = 0;
    for (int64_t i = 0; i < y_off; i++)
        written += y[i] != 0xffff;
    float *sub = malloc((size_t)(T * m) * sizeof *sub);
    for (int64_t t = 0; t < T; t++) {
        const uint16_t *row = y + y_off + t * ldy;
        for (int64_t o = n; o < ldy; o++)
            written += row[o] != 0xffff;
        for (int64_t o = 0; o < n; o++)
            rounded += row[o] == q35_f32_to_f16(y32[t * ldy + o]);
        for (int64_t j = 0; j < m; j++)
            sub[t * m + j] = q35_f16_to_f32(row[cols[j]]);
    }
    const q35_cmp cr = q35_compare_f32_f64(sub, ref, T * m);
    double max_r = 0.0, excess = 0.0; /* the largest |y16 - r| - 2^-11 |r| - 2^-25, as a share of max |r| */
    for (int64_t i = 0; i < T * m16; i++)
        max_r = fmax(max_r, fabs(ref16[i]));
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < m16; j++) {
            const double r = ref16[t * m16 + j], e = fabs((double)sub[t * m + j] - r);
            excess = fmax(excess, (e - F16_ROUND * fabs(r) - F16_SUBNORMAL_STEP) / (max_r > 0.0 ? max_r : 1.0));
        }
    const double limit_acc = LIMIT_F16_ACC * (1.0 + F16_ROUND);
    q35_case(s, written == 0 && cr.nonfinite == 0 && cr.rel_linf <= LIMIT_F16_OUT && excess <= limit_acc,
             "%s: rel Linf %.2e (<= %.1e), rel L2 %.2e; against f16-rounded inputs (%" PRId64 " outputs) past the "
             "output's rounding %.2e of max (<= %.2e); %" PRId64 " non-finite, %" PRId64 " written outside its "
             "columns; %" PRId64 " of %" PRId64 " the f32 form's rounded",
             name, cr.rel_linf, LIMIT_F16_OUT, cr.rel_l2, m16, excess, limit_acc, cr.nonfinite, written, rounded,
             T * n);
    const bool same = memcmp(y, y2, (size_t)halves * 2) == 0;
    const bool choice_ok = lt_choice_ok(lt, have1, &c1);
    q35_case(s, same && choice_ok,
             "%s: called again, %s; candidates %d, chosen %d, tuned %d, first %.4f ms, best %.4f ms", name,
             same ? "bitwise equal" : "differ", c1.candidates, c1.chosen, c1.tuned, (double)c1.first_ms,
             (double)c1.best_ms);
    free(y), free(y2), free(y32), free(sub);
    q35_gpu_free(ybuf), q35_gpu_free(y2buf), q35_gpu_free(dy32);
}

/* One row count through the chosen paths; x placed x_off floats into its buffer. */
static void check_rows(q35_suite *s, const weight *w, int64_t T, int64_t ldy, int paths, int64_t x_off)
{
    if (q35_racecheck()) /* cuBLAS's kernels are outside racecheck's model (harness.h) */
        paths &= ~(GEMM_F32 | GEMM_F16 | GEMM_LT | GEMM_LT16);
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
    if (paths & (GEMM_F16 | GEMM_LT | GEMM_LT16)) {
        uint16_t *xbuf16 = q35_gpu_bytes((size_t)(q35_gemm_f16_scratch_halves(T, k) + x_off) * 2);
        uint16_t *xs = xbuf16 + x_off; /* x16, y: x_off halves and floats into their buffers, as x */
        q35_gpu_ok(q35_gemm_f16_round(g_blas, xs, dx, T, k, &err), &err); /* the Lt forms' x16 */
        const int64_t m16 = m < F16_REF_COLUMNS ? m : F16_REF_COLUMNS;
        double *ref16 = malloc((size_t)(T * m16) * sizeof *ref16);
        q35_test_ref_columns(ref16, x, T, w->host, w->type, k, cols, m16, true);
        for (int f = 0; f < N_F16_FORMS; f++)
            if (paths & g_f16_forms[f].paths)
                check_f16(s, &g_f16_forms[f], w, T, ldy, x_off, dx, xs, cols, m, ref, m16, ref16);
        if (paths & GEMM_LT16) { /* y16 x_off halves into its buffer, as x */
            check_lt_f16(s, g_lt_tuned, "lt16_tuned", w, T, ldy, x_off, xs, cols, m, ref, m16, ref16);
            check_lt_f16(s, g_lt_steady, "lt16_steady", w, T, ldy, x_off, xs, cols, m, ref, m16, ref16);
            check_lt_f16(s, g_lt_first, "lt16_first", w, T, ldy, x_off, xs, cols, m, ref, m16, ref16);
        }
        free(ref16);
        q35_gpu_free(xbuf16);
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
            rows[nr] = 2048, paths[nr++] = GEMM_F32 | GEMM_F16 | GEMM_LT;
        check_projection(s, model, &p[i], types[i], rows, paths, nr);
    }
}

/* The GEMMs of the 9B's f16 path (model/cuda_model.c's weight set): the
 * merged [qkv | z | alpha | beta], [q | k | v] and [gate | up], and the output
 * projections that add into x (ssm_out and attn_output share a shape,
 * ffn_down), widths from the shapes table (model/capacity.h), Q4_K weights,
 * through gemm.h and the Lt context, and the Lt context's f16-out form, at 1,
 * 7 and 64 rows, and 2048 for the first and the fourth; [gate | up], which the
 * model runs f16-out, at 2048 through that form alone (not under Q35_QUICK,
 * which keeps 1 and 7 rows of the first). */
static void check_f16_path(q35_suite *s)
{
    q35_hparams hp;
    q35_shape_hparams(q35_shape_find("9b"), &hp);
    const int64_t H = hp.n_embd;
    const struct {
        const char *name;
        int64_t n, k;
    } k_gemm[] = {
        {"qkv+z+a+b", q35_mix_cols_of(&hp).width, H},
        {"q+k+v", q35_chunk_buf_floats(&hp, Q35_BUF_Q_FULL), H},
        {"gate+up", q35_chunk_buf_floats(&hp, Q35_BUF_GU), H},
        {"ssm_out", H, (int64_t)hp.ssm_hv * hp.ssm_dv},
        {"ffn_down", H, hp.n_ff},
    };
    const bool quick = q35_quick();
    for (int i = 0; i < (quick ? 1 : 5); i++) {
        const int64_t rows[] = {1, 7, 64, 2048};
        weight w;
        const int all = GEMM_F16 | GEMM_LT | GEMM_LT16;
        weight_make(&w, "9B", k_gemm[i].name, Q35_TYPE_Q4_K, k_gemm[i].n, k_gemm[i].k, 0, all);
        for (int r = 0; r < (quick ? 2 : 3); r++)
            check_rows(s, &w, rows[r], w.n, all, 0);
        if (!quick && (i == 0 || i == 2 || i == 3))
            check_rows(s, &w, rows[3], w.n, i == 2 ? GEMM_LT16 : all, 0);
        weight_free(&w);
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

/* The f16-out form (GEMM_LT16) at odd shapes: rows of ldy > n (the columns
 * past n untouched), odd T, rows and pointers off 16 bytes (where cuBLASLt may
 * refuse, naming the shape). */
static void check_lt16_odd(q35_suite *s)
{
    static const struct {
        q35_type type;
        int64_t n, k, T, ldy;
        size_t offset; /* the weight's bytes into its buffer */
        int64_t x_off; /* x16 and y16's halves into theirs */
    } k_odd[] = {
        {Q35_TYPE_Q6_K, 100, 256, 5, 128, 0, 0}, /* ldy > n, 16-byte rows */
        {Q35_TYPE_Q5_0, 19, 64, 17, 24, 0, 0},   /* ldy > n, odd T */
        {Q35_TYPE_Q8_0, 37, 96, 3, 41, 0, 0},    /* odd ldy: rows of 82 bytes */
        {Q35_TYPE_Q4_K, 64, 512, 9, 64, 2, 3},   /* the weight 2 bytes off, x16 and y16 6 bytes off */
        {Q35_TYPE_F16, 33, 1000, 9, 40, 0, 0},   /* ldy > n, n odd */
    };
    for (size_t i = 0; i < sizeof k_odd / sizeof k_odd[0]; i++) {
        weight w;
        weight_make(&w, "odd", "-", k_odd[i].type, k_odd[i].n, k_odd[i].k, k_odd[i].offset, GEMM_LT16);
        check_rows(s, &w, k_odd[i].T, k_odd[i].ldy, GEMM_LT16, k_odd[i].x_off);
        weight_free(&w);
    }
}

/* The grouped GEMV (q35_gemv_group): count parts of `type` (n[i] rows of k,
 * each its own weight, the last `off` bytes off 16-byte alignment) against
 * q35_gemv of each part alone, by every variant: bitwise (memcmp) every
 * output, and the 8 floats past each part's output still poisoned. */
static void check_group(q35_suite *s, const char *what, q35_type type, const int64_t *n, int count, int64_t k,
                        size_t off)
{
    q35_error err = {{0}};
    weight w[Q35_GEMV_GROUP_MAX];
    float *x = q35_host_normal(k, 0.0, 1.0, &g_rng), *dx = q35_gpu_from_host(x, k);
    for (int i = 0; i < count; i++)
        weight_make(&w[i], "-", "-", type, n[i], k, i == count - 1 ? off : 0, 0);
    for (int v = 0; v < q35_gemv_variant_count(); v++) {
        float *alone[Q35_GEMV_GROUP_MAX], *grouped[Q35_GEMV_GROUP_MAX];
        q35_gemv_part parts[Q35_GEMV_GROUP_MAX];
        for (int i = 0; i < count; i++) {
            alone[i] = q35_gpu_floats(n[i] + 8), grouped[i] = q35_gpu_floats(n[i] + 8);
            q35_gpu_ok(q35_gemv(alone[i], w[i].dev + w[i].offset, type, n[i], k, dx, v, NULL, &err), &err);
            parts[i] = (q35_gemv_part){.y = grouped[i], .w = w[i].dev + w[i].offset, .type = type, .n = n[i]};
        }
        q35_gpu_ok(q35_gemv_group(parts, count, type, k, dx, v, NULL, &err), &err);
        int64_t differ = 0, past = 0, rows = 0;
        for (int i = 0; i < count; i++) {
            float *a = q35_gpu_to_host(alone[i], n[i] + 8), *g = q35_gpu_to_host(grouped[i], n[i] + 8);
            for (int64_t o = 0; o < n[i]; o++)
                differ += memcmp(&a[o], &g[o], sizeof *a) != 0;
            past += q35_gpu_written(g + n[i], 8);
            rows += n[i];
            free(a), free(g);
            q35_gpu_free(alone[i]), q35_gpu_free(grouped[i]);
        }
        q35_case(s, differ == 0 && past == 0,
                 "gemv_group:%-9s %-4s %-14s %d parts, %6" PRId64 " rows of k %5" PRId64 ": %" PRId64
                 " outputs differ from each part's gemv alone (memcmp), %" PRId64 " written past a part",
                 q35_gemv_variant_name(v), q35_type_name(type), what, count, rows, k, differ, past);
    }
    for (int i = 0; i < count; i++)
        weight_free(&w[i]);
    free(x);
    q35_gpu_free(dx);
}

static void check_groups(q35_suite *s)
{
    const bool quick = q35_quick();
    const int64_t H = quick ? 512 : 4096;
    const int64_t mix[] = {quick ? 1024 : 8192, 32, 32, H}, qkv[] = {H * 2, H / 4, H / 4}, gu[] = {3 * H, 3 * H};
    check_group(s, "9B mix", Q35_TYPE_Q4_K, mix, 4, H, 0);
    check_group(s, "9B attn q|k|v", Q35_TYPE_Q6_K, qkv, 3, H, 0);
    check_group(s, "9B gate|up", Q35_TYPE_Q4_K, gu, 2, H, 0);
    check_group(s, "odd", Q35_TYPE_Q8_0, (const int64_t[]){9, 3, 1}, 3, 1024, 0);
    check_group(s, "odd", Q35_TYPE_Q5_K, (const int64_t[]){6, 5}, 2, 1280, 0);
    check_group(s, "odd", Q35_TYPE_F16, (const int64_t[]){33, 5, 2, 1}, 4, 1000, 0);
    check_group(s, "2-byte aligned", Q35_TYPE_Q4_K, (const int64_t[]){37, 64}, 2, 768, 2);
    check_group(s, "one part", Q35_TYPE_Q6_K, (const int64_t[]){100}, 1, 512, 0);
    q35_error err = {{0}};
    float *d = q35_gpu_floats(4096);
    q35_gemv_part p[5];
    for (int i = 0; i < 5; i++)
        p[i] = (q35_gemv_part){.y = d, .w = d, .type = Q35_TYPE_Q8_0, .n = 4};
    p[1].type = Q35_TYPE_Q4_K;
    int rc = q35_gemv_group(p, 2, Q35_TYPE_Q8_0, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_group: part 1 is q4_K, the group q8_0"),
             "gemv_group refuses parts of two types: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_group(p, 5, Q35_TYPE_Q8_0, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_group: 5 parts (want 1 .. 4)"), "gemv_group refuses 5 parts: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    p[0].n = 300000, p[1] = p[0], p[1].n = 300000;
    rc = q35_gemv_group(p, 2, Q35_TYPE_Q8_0, 256, d, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_group: n = 300000 rows (want 1..224280)"),
             "gemv_group refuses rows past the limit summed: %s", err.msg);
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
    q35_gpu_ok(q35_hgemm_create(&g_lt_tuned, NULL, Q35_HGEMM_TUNE_BURST, &err), &err);
    q35_gpu_ok(q35_hgemm_create(&g_lt_steady, NULL, Q35_HGEMM_TUNE_STEADY, &err), &err);
    q35_gpu_ok(q35_hgemm_create(&g_lt_first, NULL, 0, &err), &err);

    const q35_type K4 = Q35_TYPE_Q4_K, K6 = Q35_TYPE_Q6_K, Q8 = Q35_TYPE_Q8_0, F16 = Q35_TYPE_F16;
    /* qkv, gate, alpha/beta, ssm_out, attn_q, attn_k/v, attn_output, ffn_gate/up, ffn_down, lm_head */
    const q35_type t08[Q35_N_PROJ] = {Q8, Q8, Q8, Q8, F16, F16, F16, Q8, Q8, Q8};
    const q35_type t9[Q35_N_PROJ] = {K4, K4, K4, K4, K4, K6, K4, K4, K6, K6};
    const q35_type t27[Q35_N_PROJ] = {K6, K6, K6, K4, K4, K6, K4, K4, K4, K4};
    printf("-- the projections of 0.8B, 9B, 27B\n");
    check_model(&s, "0.8B", "0.8b", t08);
    check_model(&s, "9B", "9b", t9);
    check_model(&s, "27B", "27b", t27);

    printf("-- the 9B's f16-path GEMMs (merged groups, output projections)\n");
    check_f16_path(&s);

    printf("-- the other types, at the 9B attn_gate shape (a small one under Q35_QUICK)\n");
    const bool quick = q35_quick();
    const int64_t tn = quick ? 256 : 4096, tk = quick ? 512 : 4096, tT = quick ? 3 : 64;
    const char *tm = quick ? "-" : "9B", *tp = quick ? "-" : "attn_gate";
    check_one(&s, tm, tp, Q35_TYPE_Q4_0, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q5_0, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q5_K, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_BF16, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_F32, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q4_1, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q5_1, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ4_NL, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q2_K, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_Q3_K, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ4_XS, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ2_XXS, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ2_XS, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ2_S, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ3_XXS, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ3_S, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ1_S, tn, tk, tT, tn, 0, 0);
    check_one(&s, tm, tp, Q35_TYPE_IQ1_M, tn, tk, tT, tn, 0, 0);

    printf("-- odd sizes, alignments, wider output rows\n");
    check_one(&s, "odd", "-", Q35_TYPE_Q8_0, 37, 96, 3, 37, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 1, 256, 5, 1, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_F32, 5, 37, 7, 5, 0, 1);     /* plain row ending mid-unit, rows off 16 */
    check_one(&s, "odd", "-", Q35_TYPE_F16, 33, 1000, 9, 33, 2, 0); /* a weight 2-byte aligned */
    check_one(&s, "odd", "-", Q35_TYPE_BF16, 3, 24, 2, 3, 0, 0);
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 64, 512, 9, 64, 2, 3); /* the 2-byte loads of a wide type */
    check_one(&s, "odd", "-", Q35_TYPE_Q6_K, 100, 256, 5, 128, 0, 0); /* ldy > n */
    check_one(&s, "odd", "-", Q35_TYPE_Q5_0, 19, 64, 17, 24, 0, 0);   /* ldy > n, a tile of rows and a part */
    check_one(&s, "odd", "-", Q35_TYPE_Q3_K, 7, 768, 9, 7, 2, 0);     /* 2-byte aligned super-blocks of 110 */
    check_one(&s, "odd", "-", Q35_TYPE_Q5_1, 5, 96, 3, 5, 0, 1);      /* 3 blocks a row */
    check_one(&s, "odd", "-", Q35_TYPE_IQ1_M, 7, 768, 9, 7, 2, 0);    /* super-blocks of 56 */
    check_one(&s, "odd", "-", Q35_TYPE_IQ3_S, 5, 512, 3, 5, 0, 1);    /* 110-byte blocks, 2-byte aligned */
    /* the staged variant: a last stage part full, rows not a whole number of a warp's groups */
    check_one(&s, "odd", "-", Q35_TYPE_Q4_K, 37, 768, 3, 37, 0, 0);  /* 24 units: one stage of 432 bytes */
    check_one(&s, "odd", "-", Q35_TYPE_Q5_K, 6, 1280, 2, 6, 0, 0);    /* 40 units: a second stage of 176 bytes */
    check_one(&s, "odd", "-", Q35_TYPE_Q8_0, 9, 1024, 2, 9, 0, 0);    /* 2 rows a group, the last alone */
    check_one(&s, "odd", "-", Q35_TYPE_Q6_K, 5, 2048, 2, 5, 0, 0);    /* 2 units a lane a stage */
    check_one(&s, "odd", "-", Q35_TYPE_Q4_0, 3, 512, 2, 3, 0, 2);     /* x off 16-byte alignment */
    check_lt16_odd(&s);

    printf("-- grouped GEMV: the projections of one input in one launch\n");
    check_groups(&s);

    printf("-- refusals\n");
    q35_linear_check_refusals(&s, g_blas);
    q35_hgemm_destroy(g_lt_first);
    q35_hgemm_destroy(g_lt_steady);
    q35_hgemm_destroy(g_lt_tuned);
    q35_blas_destroy(g_blas);
    return q35_suite_end(&s);
}
