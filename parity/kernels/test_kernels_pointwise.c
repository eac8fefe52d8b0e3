/* GPU parity of the pointwise units: SwiGLU, the sigmoid output gate, the
 * residual add, the q/gate split, partial NeoX RoPE and the embedding gather.
 * Each against its float64 reference (rel L-inf <= 1e-5; the split and the
 * gather exactly) on fresh random inputs, outputs poisoned first, and its rows
 * form against per-token launches, bitwise. The gather of every quant type is
 * bitwise equal to the CPU dequantizer, on random bytes. The f16-out forms of
 * SwiGLU (ffn_down's input) and of the sigmoid gate (attn_output's input)
 * bitwise the CPU's rounding of the f32 form's output (memcmp), within 1e-3 of
 * float64, aligned and one float off; the gate's refuses an f16 output over
 * its input; SwiGLU over g and u read in place from merged rows with NaN gaps,
 * bitwise the contiguous inputs' result.
 * Its FP8-out
 * form (codes and a scale a row) bitwise q35_fp8_quantize_rows of the f32
 * form's output on the GPU and q35_ref_fp8_quantize_rows of it on the CPU
 * (memcmp, codes and scales), within one e4m3 step of the float64 reference
 * quantized, aligned and one float off, to 24576 a row and at 2048 rows; the
 * widths it refuses. Its f16-in f16-out form (the f16 path's f16 GU) bitwise
 * the f16-out form of the widened rows (memcmp), nothing written past the
 * output, at the 9B's GU rows (1, 7, 2048), with gaps, off alignment, odd
 * widths, zeros, subnormals and overflowing products; its refusals, which
 * write nothing. The 8-bit-out forms of SwiGLU and the gate (a decode step's,
 * before the 8-bit GEMV) bitwise the f32 form then q35_gemv_q8_quantize
 * (memcmp, y and x'), at the models' widths; their refusals. */
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "core/quant.h"
#include "kernels/embedding.h"
#include "kernels/fp8.h"
#include "kernels/gemv_q8.h"
#include "kernels/pointwise.h"
#include "kernels/rope.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 1e-5

static q35_rng g_rng;

enum { SWIGLU, GATE, RESIDUAL };

static void check_elementwise(q35_suite *s, int op, const char *what, int64_t width, int64_t rows)
{
    static const char *const names[] = {"swiglu_rows", "sigmoid_gate_rows", "residual_add_rows"};
    q35_error err = {{0}};
    const int64_t n = width * rows;
    float *a = q35_host_normal(n, 0.0, 3.0, &g_rng), *b = q35_host_normal(n, 0.0, 1.0, &g_rng);
    float *da = q35_gpu_from_host(a, n), *db = q35_gpu_from_host(b, n);
    float *y1 = op == SWIGLU ? q35_gpu_floats(n) : q35_gpu_from_host(b, n);
    float *y2 = op == SWIGLU ? q35_gpu_floats(n) : q35_gpu_from_host(b, n);
    for (int pass = 0; pass < 2; pass++) {
        float *y = pass ? y2 : y1;
        const int64_t launches = pass ? rows : 1, per = pass ? 1 : rows;
        for (int64_t r = 0; r < launches; r++) {
            const int64_t o = r * width;
            const int rc = op == SWIGLU ? q35_swiglu_rows(y + o, da + o, db + o, width, width, per, NULL, &err)
                           : op == GATE ? q35_sigmoid_gate_rows(y + o, da + o, width, per, NULL, &err)
                                        : q35_residual_add_rows(y + o, da + o, width, per, NULL, &err);
            q35_gpu_ok(rc, &err);
        }
    }
    /* the same values one float off 16-byte alignment: the scalar kernel, which
     * must give the bits of the 16-byte one */
    float *ma = q35_gpu_floats(n + 1), *mb = q35_gpu_floats(n + 1), *my = q35_gpu_floats(n + 1);
    q35_gpu_upload(ma + 1, a, (size_t)n * sizeof *a);
    q35_gpu_upload(mb + 1, b, (size_t)n * sizeof *b);
    if (op != SWIGLU)
        q35_gpu_upload(my + 1, b, (size_t)n * sizeof *b);
    q35_gpu_ok(op == SWIGLU ? q35_swiglu_rows(my + 1, ma + 1, mb + 1, width, width, rows, NULL, &err)
               : op == GATE ? q35_sigmoid_gate_rows(my + 1, ma + 1, width, rows, NULL, &err)
                            : q35_residual_add_rows(my + 1, ma + 1, width, rows, NULL, &err),
               &err);
    float *h1 = q35_gpu_to_host(y1, n), *h2 = q35_gpu_to_host(y2, n), *h3 = q35_gpu_to_host(my + 1, n);
    const q35_bitcmp bm = q35_bitwise_f32(h1, h3, n);
    double *ad = q35_host_f64(a, n), *ref = q35_host_f64(b, n);
    if (op == SWIGLU)
        q35_ref_swiglu(ref, ad, ref, n);
    else if (op == GATE)
        q35_ref_sigmoid_gate(ref, ad, n);
    else
        q35_ref_residual_add(ref, ad, n);
    const q35_cmp c = q35_compare_f32_f64(h1, ref, n);
    const q35_bitcmp bc = q35_bitwise_f32(h1, h2, n);
    char name[160];
    snprintf(name, sizeof name, "%-17s %-10s width %5" PRId64 " rows %4" PRId64, names[op], what, width, rows);
    q35_case_unit(s, name, &c, LIMIT, &bc);
    if (op != RESIDUAL) { /* the f16-out form: 16-byte aligned (quads), and one float off (scalar) */
        static const char *const names16[] = {"swiglu_rows_f16", "sigmoid_gate_f16"};
        uint16_t *d16 = q35_gpu_bytes((size_t)(n + 1) * 2);
        q35_gpu_ok(op == SWIGLU ? q35_swiglu_rows_f16(d16, da, db, width, width, rows, NULL, &err)
                                : q35_sigmoid_gate_rows_f16(d16, db, da, width, rows, NULL, &err),
                   &err);
        snprintf(name, sizeof name, "%-17s %-10s width %5" PRId64 " rows %4" PRId64, names16[op], what, width, rows);
        q35_check_f16_out(s, name, d16, h1, ref, n, 1e-3);
        q35_gpu_ok(op == SWIGLU ? q35_swiglu_rows_f16(d16 + 1, ma + 1, mb + 1, width, width, rows, NULL, &err)
                                : q35_sigmoid_gate_rows_f16(d16 + 1, mb + 1, ma + 1, width, rows, NULL, &err),
                   &err);
        snprintf(name, sizeof name, "%-17s %-10s width %5" PRId64 " rows %4" PRId64 " unaligned", names16[op], what,
                 width, rows);
        q35_check_f16_out(s, name, d16 + 1, h1, ref, n, 1e-3);
        q35_gpu_free(d16);
    }
    if (op == SWIGLU) { /* FP8 out: aligned (quads, 4-code stores), and one float / one code off */
        uint8_t *d8 = q35_gpu_bytes((size_t)n + 1);
        float *dscale = q35_gpu_floats(rows);
        q35_gpu_ok(q35_swiglu_rows_fp8(d8, dscale, da, db, width, width, rows, NULL, &err), &err);
        snprintf(name, sizeof name, "swiglu_rows_fp8   %-10s width %5" PRId64 " rows %4" PRId64, what, width, rows);
        q35_check_fp8_out(s, name, d8, dscale, y1, ref, rows, width, LIMIT);
        q35_gpu_ok(q35_swiglu_rows_fp8(d8 + 1, dscale, ma + 1, mb + 1, width, width, rows, NULL, &err), &err);
        snprintf(name, sizeof name, "swiglu_rows_fp8   %-10s width %5" PRId64 " rows %4" PRId64 " unaligned", what,
                 width, rows);
        q35_check_fp8_out(s, name, d8 + 1, dscale, y1, ref, rows, width, LIMIT);
        q35_gpu_free(d8), q35_gpu_free(dscale);
    }
    char diff[160];
    q35_case(s, bm.equal, "%-17s %-10s width %5" PRId64 " rows %4" PRId64 " off 16-byte alignment: %s", names[op],
             what, width, rows, q35_bitcmp_str(&bm, diff, sizeof diff));
    free(a), free(b), free(h1), free(h2), free(h3), free(ad), free(ref);
    q35_gpu_free(da), q35_gpu_free(db), q35_gpu_free(y1), q35_gpu_free(y2);
    q35_gpu_free(ma), q35_gpu_free(mb), q35_gpu_free(my);
}

/* SwiGLU reading g and u in place from merged rows [g | pad1 NaN | u | pad2 NaN]
 * of 2*width + pad1 + pad2 floats (GU of one [gate | up] GEMM): f32 and f16
 * outputs bitwise the contiguous inputs' (the gaps never read: NaN there would
 * show), the f32 one within LIMIT of float64. pad1 % 4 != 0: u off 16 bytes,
 * the scalar loads. */
static void check_swiglu_strided(q35_suite *s, const char *what, int64_t width, int64_t pad1, int64_t pad2,
                                 int64_t rows)
{
    q35_error err = {{0}};
    const int64_t n = width * rows, stride = 2 * width + pad1 + pad2;
    float *g = q35_host_normal(n, 0.0, 3.0, &g_rng), *u = q35_host_normal(n, 0.0, 1.0, &g_rng);
    float *dg = q35_gpu_from_host(g, n), *du = q35_gpu_from_host(u, n), *gu = q35_gpu_floats(rows * stride);
    q35_gpu_upload_cols(gu, stride, 0, g, width, rows);
    q35_gpu_upload_cols(gu, stride, width + pad1, u, width, rows);
    float *y1 = q35_gpu_floats(n), *y2 = q35_gpu_floats(n);
    uint16_t *h1 = q35_gpu_bytes((size_t)n * 2), *h2 = q35_gpu_bytes((size_t)n * 2);
    q35_gpu_ok(q35_swiglu_rows(y1, dg, du, width, width, rows, NULL, &err), &err);
    q35_gpu_ok(q35_swiglu_rows(y2, gu, gu + width + pad1, stride, width, rows, NULL, &err), &err);
    q35_gpu_ok(q35_swiglu_rows_f16(h1, dg, du, width, width, rows, NULL, &err), &err);
    q35_gpu_ok(q35_swiglu_rows_f16(h2, gu, gu + width + pad1, stride, width, rows, NULL, &err), &err);
    float *a = q35_gpu_to_host(y1, n), *b = q35_gpu_to_host(y2, n);
    uint16_t *ha = malloc((size_t)n * 2), *hb = malloc((size_t)n * 2);
    q35_gpu_download(ha, h1, (size_t)n * 2);
    q35_gpu_download(hb, h2, (size_t)n * 2);
    double *ref = q35_host_f64(u, n), *gd = q35_host_f64(g, n);
    q35_ref_swiglu(ref, gd, ref, n);
    const q35_cmp c = q35_compare_f32_f64(b, ref, n);
    const q35_bitcmp bc = q35_bitwise_f32(b, a, n);
    char name[160];
    snprintf(name, sizeof name, "swiglu_rows       %-10s width %5" PRId64 " rows %4" PRId64 " in stride %5" PRId64,
             what, width, rows, stride);
    q35_case_unit(s, name, &c, LIMIT, &bc);
    q35_case(s, memcmp(ha, hb, (size_t)n * 2) == 0, "swiglu_rows_f16   %-10s width %5" PRId64 " in stride %5" PRId64
             " vs contiguous inputs: %s", what, width, stride, memcmp(ha, hb, (size_t)n * 2) == 0 ? "bitwise equal"
             : "differ");
    free(g), free(u), free(a), free(b), free(ha), free(hb), free(ref), free(gd);
    q35_gpu_free(dg), q35_gpu_free(du), q35_gpu_free(gu), q35_gpu_free(y1), q35_gpu_free(y2), q35_gpu_free(h1),
        q35_gpu_free(h2);
}

/* Finite f16 inputs past the normal draws, at the start of each row of g and
 * u: zeros, subnormals (down to the least), the least normal, the largest
 * finite (silu(65504) * 65504 overflows f16: inf, and silu(-65504) is -0). No
 * infinity or NaN: silu(-inf) is NaN, whose bits the two roundings of a
 * store (__float2half_rn, __floats2half2_rn) need not agree on. */
static const uint16_t k_f16_edges[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
#define N_F16_EDGES ((int64_t)(sizeof k_f16_edges / sizeof k_f16_edges[0]))

/* GU of a 16-bit [gate | up] GEMM on the device: rows [g | pad1 | u | pad2]
 * of bf16 or f16 bits (bf16 true / false), the gaps NaN. g and u [rows][width]
 * (drawn) are narrowed into them, then set to the narrowed values widened
 * (exact): their f32 copies. f16 rows start with the edge values above, g's
 * in order and u's turned by the row (each against each of the others). */
static uint16_t *gu16_rows(float *g, float *u, int64_t width, int64_t pad1, int64_t pad2, int64_t rows, bool bf16)
{
    const int64_t stride = 2 * width + pad1 + pad2, edges = bf16 ? 0 : N_F16_EDGES;
    uint16_t *gu = malloc((size_t)(rows * stride) * 2);
    for (int64_t i = 0; i < rows * stride; i++)
        gu[i] = bf16 ? 0x7fc0 : 0x7e00; /* NaN */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < width; i++) {
            uint16_t *row = gu + r * stride, *gi = &row[i], *ui = &row[width + pad1 + i];
            float *gv = &g[r * width + i], *uv = &u[r * width + i];
            *gi = i < edges ? k_f16_edges[i] : bf16 ? q35_f32_to_bf16(*gv) : q35_f32_to_f16(*gv);
            *ui = i < edges ? k_f16_edges[(i + r) % edges] : bf16 ? q35_f32_to_bf16(*uv) : q35_f32_to_f16(*uv);
            *gv = bf16 ? q35_bf16_to_f32(*gi) : q35_f16_to_f32(*gi);
            *uv = bf16 ? q35_bf16_to_f32(*ui) : q35_f16_to_f32(*ui);
        }
    uint16_t *d = q35_gpu_bytes((size_t)(rows * stride) * 2);
    q35_gpu_upload(d, gu, (size_t)(rows * stride) * 2);
    free(gu);
    return d;
}

/* SwiGLU FP8 out from bf16 [g | pad1 | u | pad2] rows (GU of the FP8 path's
 * bf16-out [gate | up] GEMM; the gaps NaN, never read): codes and scales
 * bitwise q35_swiglu_rows_fp8 of the rows widened to f32 (which the suite
 * checks against float64 above). pad1 odd: u off 8 bytes, the scalar loads. */
static void check_swiglu_bf16_fp8(q35_suite *s, const char *what, int64_t width, int64_t pad1, int64_t pad2,
                                  int64_t rows)
{
    q35_error err = {{0}};
    const int64_t n = width * rows, stride = 2 * width + pad1 + pad2;
    float *g = q35_host_normal(n, 0.0, 3.0, &g_rng), *u = q35_host_normal(n, 0.0, 1.0, &g_rng);
    uint16_t *dgu = gu16_rows(g, u, width, pad1, pad2, rows, true);
    float *dg = q35_gpu_from_host(g, n), *du = q35_gpu_from_host(u, n);
    uint8_t *q1 = q35_gpu_bytes((size_t)n), *q2 = q35_gpu_bytes((size_t)n);
    float *s1 = q35_gpu_floats(rows), *s2 = q35_gpu_floats(rows);
    q35_gpu_ok(q35_swiglu_rows_fp8(q1, s1, dg, du, width, width, rows, NULL, &err), &err);
    q35_gpu_ok(q35_swiglu_rows_bf16_fp8(q2, s2, dgu, dgu + width + pad1, stride, width, rows, NULL, &err), &err);
    uint8_t *c1 = malloc((size_t)n), *c2 = malloc((size_t)n);
    q35_gpu_download(c1, q1, (size_t)n);
    q35_gpu_download(c2, q2, (size_t)n);
    float *h1 = q35_gpu_to_host(s1, rows), *h2 = q35_gpu_to_host(s2, rows);
    const bool codes = memcmp(c1, c2, (size_t)n) == 0, scales = memcmp(h1, h2, (size_t)rows * sizeof *h1) == 0;
    q35_case(s, codes && scales,
             "swiglu_rows_bf16_fp8 %-10s width %5" PRId64 " rows %4" PRId64 " in stride %5" PRId64
             " vs swiglu_rows_fp8 of the widened rows: codes %s, scales %s",
             what, width, rows, stride, codes ? "bitwise equal" : "differ", scales ? "bitwise equal" : "differ");
    free(g), free(u), free(c1), free(c2), free(h1), free(h2);
    q35_gpu_free(dg), q35_gpu_free(du), q35_gpu_free(dgu), q35_gpu_free(q1), q35_gpu_free(q2), q35_gpu_free(s1),
        q35_gpu_free(s2);
}

/* SwiGLU f16 out from f16 [g | pad1 | u | pad2] rows (GU of the f16 path's
 * f16-out [gate | up] GEMM; the gaps NaN, never read), into y16 y_off halves
 * into a poisoned buffer: bitwise (memcmp) q35_swiglu_rows_f16 of the rows
 * widened to f32, contiguous (which the suite checks against the CPU's
 * rounding of the f32 form and float64 above), and the 8 halves after the
 * output still poisoned. Eights through 16-byte accesses where width and the
 * stride are multiples of 8 and g, u, y16 16-byte aligned; pad1 % 8 != 0 (u
 * off 16 bytes), an odd width or y_off % 8 != 0: the scalar loads. */
static void check_swiglu_f16_f16(q35_suite *s, const char *what, int64_t width, int64_t pad1, int64_t pad2,
                                 int64_t rows, int64_t y_off)
{
    q35_error err = {{0}};
    const int64_t n = width * rows, stride = 2 * width + pad1 + pad2;
    float *g = q35_host_normal(n, 0.0, 3.0, &g_rng), *u = q35_host_normal(n, 0.0, 1.0, &g_rng);
    uint16_t *dgu = gu16_rows(g, u, width, pad1, pad2, rows, false);
    float *dg = q35_gpu_from_host(g, n), *du = q35_gpu_from_host(u, n);
    uint16_t *want = q35_gpu_bytes((size_t)n * 2), *ybuf = q35_gpu_bytes((size_t)(n + y_off + 8) * 2);
    q35_gpu_ok(q35_swiglu_rows_f16(want, dg, du, width, width, rows, NULL, &err), &err);
    q35_gpu_ok(q35_swiglu_rows_f16_f16(ybuf + y_off, dgu, dgu + width + pad1, stride, width, rows, NULL, &err), &err);
    uint16_t *h1 = malloc((size_t)n * 2), *h2 = malloc((size_t)(n + y_off + 8) * 2);
    q35_gpu_download(h1, want, (size_t)n * 2);
    q35_gpu_download(h2, ybuf, (size_t)(n + y_off + 8) * 2);
    int64_t n_diff = 0, first = -1, past = 0;
    for (int64_t i = 0; i < n; i++)
        if (h2[y_off + i] != h1[i] && n_diff++ == 0)
            first = i;
    for (int64_t i = 0; i < y_off; i++)
        past += h2[i] != 0xffff;
    for (int64_t i = y_off + n; i < y_off + n + 8; i++)
        past += h2[i] != 0xffff;
    const bool same = memcmp(h2 + y_off, h1, (size_t)n * 2) == 0;
    char diff[96] = "bitwise equal";
    if (!same)
        snprintf(diff, sizeof diff, "%" PRId64 " of %" PRId64 " differ (first [%" PRId64 "]: 0x%04x, want 0x%04x)",
                 n_diff, n, first, h2[y_off + first], h1[first]);
    q35_case(s, same && past == 0,
             "swiglu_rows_f16_f16 %-11s width %5" PRId64 " rows %4" PRId64 " in stride %5" PRId64 " y16 +%" PRId64
             " vs swiglu_rows_f16 of the widened rows: %s; %" PRId64 " halves written outside y16",
             what, width, rows, stride, y_off, diff, past);
    free(g), free(u), free(h1), free(h2);
    q35_gpu_free(dg), q35_gpu_free(du), q35_gpu_free(dgu), q35_gpu_free(want), q35_gpu_free(ybuf);
}

static void check_split(q35_suite *s, const char *what, int heads, int hd, int64_t rows)
{
    q35_error err = {{0}};
    const int64_t n = (int64_t)heads * hd * rows;
    float *full = q35_host_normal(2 * n, 0.0, 1.0, &g_rng);
    float *df = q35_gpu_from_host(full, 2 * n), *q1 = q35_gpu_floats(n), *g1 = q35_gpu_floats(n);
    float *q2 = q35_gpu_floats(n), *g2 = q35_gpu_floats(n);
    q35_gpu_ok(q35_split_qgate_rows(q1, g1, df, heads, hd, rows, NULL, &err), &err);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * heads * hd;
        q35_gpu_ok(q35_split_qgate_rows(q2 + o, g2 + o, df + 2 * o, heads, hd, 1, NULL, &err), &err);
    }
    float *hq = q35_gpu_to_host(q1, n), *hg = q35_gpu_to_host(g1, n), *hq2 = q35_gpu_to_host(q2, n), *hg2 = q35_gpu_to_host(g2, n);
    double *fd = q35_host_f64(full, 2 * n), *rq = malloc((size_t)n * sizeof *rq), *rg = malloc((size_t)n * sizeof *rg);
    for (int64_t r = 0; r < rows; r++)
        q35_ref_split_qgate(rq + r * heads * hd, rg + r * heads * hd, fd + 2 * r * heads * hd, heads, hd);
    const q35_cmp cq = q35_compare_f32_f64(hq, rq, n), cg = q35_compare_f32_f64(hg, rg, n);
    const q35_bitcmp bq = q35_bitwise_f32(hq, hq2, n), bg = q35_bitwise_f32(hg, hg2, n);
    const q35_cmp worst = cq.rel_linf >= cg.rel_linf ? cq : cg;
    const q35_bitcmp both = bq.equal ? bg : bq;
    char name[160];
    snprintf(name, sizeof name, "split_qgate_rows  %-10s heads %2d hd %d rows %4" PRId64, what, heads, hd, rows);
    q35_case_unit(s, name, &worst, 0.0, &both);
    free(full), free(hq), free(hg), free(hq2), free(hg2), free(fd), free(rq), free(rg);
    q35_gpu_free(df), q35_gpu_free(q1), q35_gpu_free(g1), q35_gpu_free(q2), q35_gpu_free(g2);
}

static void check_rope(q35_suite *s, const char *what, int heads, int hd, int n_rot, int64_t pos0, int64_t T)
{
    q35_error err = {{0}};
    const int64_t width = (int64_t)heads * hd, n = width * T;
    const double base = 1e7;
    float *x = q35_host_normal(n, 0.0, 1.0, &g_rng);
    float *d1 = q35_gpu_from_host(x, n), *d2 = q35_gpu_from_host(x, n), *d3 = q35_gpu_from_host(x, n);
    int64_t *dpos = q35_gpu_pos(pos0);
    q35_gpu_ok(q35_rope_neox_rows(d1, width, heads, hd, n_rot, pos0, T, base, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_rope_neox(d2 + t * width, heads, hd, n_rot, pos0 + t, base, NULL, &err), &err);
    q35_gpu_ok(q35_rope_neox_rows_at(d3, width, heads, hd, n_rot, dpos, T, base, NULL, &err), &err);
    float *h1 = q35_gpu_to_host(d1, n), *h2 = q35_gpu_to_host(d2, n), *h3 = q35_gpu_to_host(d3, n);
    double *ref = q35_host_f64(x, n);
    for (int64_t t = 0; t < T; t++)
        q35_ref_rope_neox(ref + t * width, heads, hd, n_rot, pos0 + t, base);
    const q35_cmp c = q35_compare_f32_f64(h1, ref, n);
    const q35_bitcmp b_tok = q35_bitwise_f32(h1, h2, n), b_at = q35_bitwise_f32(h1, h3, n);
    const q35_bitcmp bc = b_tok.equal ? b_at : b_tok; /* per-token launches and the _at form: both the rows' bits */
    char name[160];
    snprintf(name, sizeof name, "rope_neox_rows    %-10s heads %2d hd %d n_rot %d pos0 %6" PRId64 " T %3" PRId64, what,
             heads, hd, n_rot, pos0, T);
    q35_case_unit(s, name, &c, LIMIT, &bc);
    free(x), free(h1), free(h2), free(h3), free(ref);
    q35_gpu_free(d1), q35_gpu_free(d2), q35_gpu_free(d3), q35_gpu_free(dpos);
}

/* Bitwise, except that two NaNs count as equal (CPU and GPU NaNs differ in payload). */
static int64_t mismatches(const float *a, const float *b, int64_t n, int64_t *first)
{
    int64_t bad = 0;
    *first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i]))
            continue;
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
            if (*first < 0)
                *first = i;
            bad++;
        }
    }
    return bad;
}

static void check_embedding(q35_suite *s, q35_type type, int64_t n_embd, int64_t vocab, int64_t T)
{
    q35_error err = {{0}};
    const size_t row_bytes = q35_row_bytes(type, n_embd), bytes = row_bytes * (size_t)vocab;
    uint8_t *table = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) /* random bytes: every scale, nibble and bit pattern */
        table[i] = (uint8_t)q35_rng_next(&g_rng);
    int32_t *tok = malloc((size_t)T * sizeof *tok);
    for (int64_t t = 0; t < T; t++)
        tok[t] = (int32_t)(q35_rng_next(&g_rng) % (uint64_t)vocab);
    tok[T - 1] = (int32_t)(vocab - 1); /* the last row of the table */
    void *dtab = q35_gpu_bytes(bytes);
    q35_gpu_upload(dtab, table, bytes);
    int32_t *dtok = q35_gpu_bytes((size_t)T * sizeof *tok);
    q35_gpu_upload(dtok, tok, (size_t)T * sizeof *tok);
    float *d1 = q35_gpu_floats(T * n_embd), *d2 = q35_gpu_floats(T * n_embd);
    q35_gpu_ok(q35_embedding_rows(d1, dtab, type, n_embd, vocab, dtok, T, NULL, &err), &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_embedding_rows(d2 + t * n_embd, dtab, type, n_embd, vocab, dtok + t, 1, NULL, &err), &err);
    float *h1 = q35_gpu_to_host(d1, T * n_embd), *h2 = q35_gpu_to_host(d2, T * n_embd);
    float *cpu = malloc((size_t)(T * n_embd) * sizeof *cpu);
    for (int64_t t = 0; t < T; t++)
        q35_dequantize(type, table + (size_t)tok[t] * row_bytes, cpu + t * n_embd, n_embd);
    int64_t first, nan_cpu = 0;
    const int64_t bad = mismatches(h1, cpu, T * n_embd, &first);
    for (int64_t i = 0; i < T * n_embd; i++)
        nan_cpu += isnan(cpu[i]);
    const q35_bitcmp bc = q35_bitwise_f32(h1, h2, T * n_embd);
    char b[200];
    q35_case(s, bad == 0 && bc.equal,
             "embedding_rows    %-6s n_embd %4" PRId64 " vocab %3" PRId64 " T %3" PRId64
             " vs CPU dequant of random bytes: %" PRId64 " differ (first %" PRId64 ", %" PRId64
             " NaN from NaN/inf scales); rows vs per-token: %s",
             q35_type_name(type), n_embd, vocab, T, bad, first, nan_cpu, q35_bitcmp_str(&bc, b, sizeof b));
    free(table), free(tok), free(h1), free(h2), free(cpu);
    q35_gpu_free(dtab), q35_gpu_free(dtok), q35_gpu_free(d1), q35_gpu_free(d2);
}

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1024);
    int rc = q35_swiglu_rows(d, d + 256, d + 512, 99, 100, 2, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "swiglu_rows: input row stride 99 shorter than its width 100"),
             "swiglu_rows refuses an input stride below the width: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_swiglu_rows_f16((uint16_t *)d, d + 256, d + 512, 99, 100, 2, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "swiglu_rows_f16: input row stride 99 shorter than its width 100"),
             "swiglu_rows_f16 refuses an input stride below the width: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_rope_neox_rows(d, 256, 1, 256, 63, 0, 1, 1e7, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "n_rot 63"), "rope refuses an odd n_rot: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_sigmoid_gate_rows_f16((uint16_t *)d, d, d + 512, 256, 2, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "sigmoid_gate_rows_f16: y16 must not alias an input"),
             "sigmoid_gate_rows_f16 refuses y16 over o: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_embedding_rows(d, d, Q35_TYPE_TQ2_0, 256, 1, (const int32_t *)d, 1, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "type tq2_0 (computable: no)"), "embedding refuses tq2_0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_embedding_rows(d, d, Q35_TYPE_Q4_K, 100, 1, (const int32_t *)d, 1, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "not whole blocks"), "embedding refuses a q4_K row of 100: %s", err.msg);
    /* a token out of range: a NaN row, nothing read outside the table */
    const int32_t bad[2] = {-1, 7};
    int32_t *dt = q35_gpu_bytes(sizeof bad);
    q35_gpu_upload(dt, bad, sizeof bad);
    float *tab = q35_gpu_floats(256 * 7), *out = q35_gpu_floats(512);
    memset(&err, 0, sizeof err);
    q35_gpu_ok(q35_embedding_rows(out, tab, Q35_TYPE_F32, 256, 7, dt, 2, NULL, &err), &err);
    float *h = q35_gpu_to_host(out, 512);
    int nan = 0;
    for (int i = 0; i < 512; i++)
        nan += isnan(h[i]) != 0;
    q35_case(s, nan == 512, "embedding of tokens -1 and 7 (vocab 7): rows of NaN, no read outside the table");
    free(h);
    q35_gpu_free(dt), q35_gpu_free(tab), q35_gpu_free(out);
    static const struct {
        int64_t width, rows;
        const char *want;
    } fp8[] = {
        {Q35_FP8_ROW_MAX + 1, 1, "swiglu_rows_fp8: a row of 24577 values (want 1..24576"},
        {0, 1, "swiglu_rows_fp8: width 0, rows 1"},
        {64, -1, "swiglu_rows_fp8: width 64, rows -1"},
    };
    for (size_t i = 0; i < sizeof fp8 / sizeof *fp8; i++) {
        memset(&err, 0, sizeof err);
        rc = q35_swiglu_rows_fp8((uint8_t *)d, d + 4, d + 8, d + 16, fp8[i].width, fp8[i].width, fp8[i].rows, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, fp8[i].want) != NULL, "swiglu_rows_fp8 refuses (want \"%s\"): %s",
                 fp8[i].want, err.msg);
    }
    memset(&err, 0, sizeof err);
    rc = q35_swiglu_rows_bf16_fp8((uint8_t *)d, d + 4, (const uint16_t *)(d + 8), (const uint16_t *)(d + 16), 99, 100,
                                  2, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "swiglu_rows_bf16_fp8: input row stride 99 shorter than its width 100"),
             "swiglu_rows_bf16_fp8 refuses an input stride below the width: %s", err.msg);
    static const struct {
        int64_t y, g, u, stride, width, rows; /* y16, g16, u16: halves into d */
        const char *want;
    } f16[] = {
        {0, 512, 1024, 99, 100, 2, "swiglu_rows_f16_f16: input row stride 99 shorter than its width 100"},
        {512, 512, 612, 200, 100, 2, "swiglu_rows_f16_f16: y16 must not alias an input"},
        {612, 512, 612, 200, 100, 2, "swiglu_rows_f16_f16: y16 must not alias an input"},
        {0, 512, 1024, 0, 0, 1, "swiglu_rows_f16_f16: width 0, rows 1"},
        {0, 512, 1024, 200, 100, -1, "swiglu_rows_f16_f16: width 100, rows -1"},
    };
    uint16_t *d16 = q35_gpu_bytes(2048 * 2); /* poisoned */
    for (size_t i = 0; i < sizeof f16 / sizeof *f16; i++) {
        memset(&err, 0, sizeof err);
        rc = q35_swiglu_rows_f16_f16(d16 + f16[i].y, d16 + f16[i].g, d16 + f16[i].u, f16[i].stride, f16[i].width,
                                     f16[i].rows, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, f16[i].want) != NULL, "swiglu_rows_f16_f16 refuses (want \"%s\"): %s",
                 f16[i].want, err.msg);
    }
    uint16_t *left = malloc(2048 * sizeof *left); /* every half of d16 still poisoned */
    q35_gpu_download(left, d16, 2048 * sizeof *left);
    int64_t written = 0;
    for (int i = 0; i < 2048; i++)
        written += left[i] != 0xffff;
    q35_case(s, written == 0, "swiglu_rows_f16_f16: its refusals write nothing (%" PRId64 " halves written)", written);
    free(left);
    q35_gpu_free(d16);
    q35_gpu_free(d);
}

/* The 8-bit-out forms (a decode step's SwiGLU and output gate before the
 * 8-bit GEMV): y and xq bitwise the f32 form's (one row) then
 * q35_gemv_q8_quantize's (memcmp), outputs poisoned first; a block of zeros
 * (its scale 0) and one of large values among the random ones. */
static void check_q8_out(q35_suite *s, int op, const char *what, int64_t width)
{
    q35_error err = {{0}};
    const size_t xb = q35_gemv_q8_x_bytes(width);
    float *a = q35_host_normal(width, 0.0, 2.0, &g_rng), *b = q35_host_normal(width, 0.0, 1.0, &g_rng);
    for (int i = 0; i < 32 && i < width; i++)
        a[i] = b[i] = 0.0f;
    for (int64_t i = 64; i < 96 && i < width; i++)
        a[i] *= 1e4f, b[i] *= 1e4f;
    float *da = q35_gpu_from_host(a, width), *db = q35_gpu_from_host(b, width), *y1 = q35_gpu_floats(width),
          *y2 = q35_gpu_floats(width);
    void *q1 = q35_gpu_bytes(xb), *q2 = q35_gpu_bytes(xb);
    if (op == SWIGLU) {
        q35_gpu_ok(q35_swiglu_rows(y1, da, db, width, width, 1, NULL, &err), &err);
        q35_gpu_ok(q35_swiglu_q8(y2, q2, da, db, width, NULL, &err), &err);
    } else { /* in place, o = b gated by a */
        q35_gpu_upload(y1, b, (size_t)width * 4), q35_gpu_upload(y2, b, (size_t)width * 4);
        q35_gpu_ok(q35_sigmoid_gate_rows(y1, da, width, 1, NULL, &err), &err);
        q35_gpu_ok(q35_sigmoid_gate_q8(y2, q2, da, width, NULL, &err), &err);
    }
    q35_gpu_ok(q35_gemv_q8_quantize(q1, y1, width, NULL, &err), &err);
    float *h1 = q35_gpu_to_host(y1, width), *h2 = q35_gpu_to_host(y2, width);
    uint8_t *b1 = malloc(xb), *b2 = malloc(xb);
    q35_gpu_download(b1, q1, xb), q35_gpu_download(b2, q2, xb);
    const bool y_same = memcmp(h1, h2, (size_t)width * 4) == 0, q_same = memcmp(b1, b2, xb) == 0;
    q35_case(s, y_same && q_same, "%-17s %-10s width %5" PRId64 ": y %s, x' %s the f32 form then gemv_q8_quantize (memcmp)",
             op == SWIGLU ? "swiglu_q8" : "sigmoid_gate_q8", what, width, y_same ? "bitwise" : "DIFFERS from",
             q_same ? "bitwise" : "DIFFERS from");
    free(a), free(b), free(h1), free(h2), free(b1), free(b2);
    q35_gpu_free(da), q35_gpu_free(db), q35_gpu_free(y1), q35_gpu_free(y2), q35_gpu_free(q1), q35_gpu_free(q2);
}

/* What the 8-bit-out forms refuse: a width no whole number of blocks, xq off 16 bytes. */
static void check_q8_out_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(256);
    int rc = q35_swiglu_q8(d, d + 128, d, d + 64, 40, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "swiglu_q8: width 40") != NULL, "swiglu_q8 refuses width 40: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_sigmoid_gate_q8(d, d + 129, d + 64, 32, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "16-byte") != NULL, "sigmoid_gate_q8 refuses x' off 16 bytes: %s",
             err.msg);
    q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU pointwise units: swiglu, gate, residual, split, rope, embedding", &g_rng);
    if (skip)
        return skip;

    const int64_t *Ts;
    const int n_sizes = q35_test_rows(&Ts); /* the 600-row cases off under a sanitizer */
    const int64_t big = q35_test_big_rows();
    for (int i = 0; i < n_sizes; i++) {
        check_elementwise(&s, SWIGLU, "9B ffn", 12288, Ts[i]);
        check_elementwise(&s, GATE, "9B heads", 16 * 256, Ts[i]);
        check_elementwise(&s, RESIDUAL, "9B H", 4096, Ts[i]);
    }
    check_elementwise(&s, SWIGLU, "0.8B ffn", 3584, 37);
    check_elementwise(&s, SWIGLU, "27B ffn", 17408, 7); /* the fp8 form's shared memory opt-in */
    check_elementwise(&s, SWIGLU, "9B ffn", 12288, q35_quick() ? 64 : 2048);
    check_elementwise(&s, SWIGLU, "fp8 max", Q35_FP8_ROW_MAX, 3);
    check_elementwise(&s, SWIGLU, "odd", 37, 3);
    check_elementwise(&s, GATE, "27B heads", 24 * 256, 37);
    check_elementwise(&s, RESIDUAL, "27B H", 5120, big);
    check_elementwise(&s, RESIDUAL, "odd", 37, 3);

    /* GU [T][2*ff] of one merged GEMM: u right after g (the model's layout), with
     * NaN gaps after each, and u one float off 16 bytes (the scalar loads) */
    check_swiglu_strided(&s, "9B GU", 12288, 0, 0, 37);
    check_swiglu_strided(&s, "9B GU gaps", 12288, 4, 8, big);
    check_swiglu_strided(&s, "27B GU off", 17408, 1, 3, 7);
    check_swiglu_bf16_fp8(&s, "9B GU", 12288, 0, 0, 37);
    check_swiglu_bf16_fp8(&s, "9B GU gaps", 12288, 8, 8, big);
    check_swiglu_bf16_fp8(&s, "27B GU off", 17408, 1, 3, 7);
    check_swiglu_bf16_fp8(&s, "odd width", 37, 3, 0, 5);
    check_swiglu_bf16_fp8(&s, "quad tail", 44, 4, 4, 9); /* 16-byte rows: five loads of eight, a quad after */
    check_swiglu_strided(&s, "odd", 37, 2, 5, 3);
    /* f16 GU (the f16 path's f16-out [gate | up] GEMM): u right after g, the 9B's rows at 1, 7, 2048 */
    const int64_t gu_rows[] = {1, 7, q35_quick() ? 64 : 2048};
    for (int i = 0; i < 3; i++)
        check_swiglu_f16_f16(&s, "9B GU", 12288, 0, 0, gu_rows[i], 0);
    check_swiglu_f16_f16(&s, "9B GU gaps", 12288, 8, 8, big, 0);
    check_swiglu_f16_f16(&s, "9B GU y off", 12288, 0, 0, 7, 1);       /* y16 2 bytes off: scalar */
    check_swiglu_f16_f16(&s, "9B GU y off8", 12288, 0, 0, 7, 4);      /* y16 8 bytes off: scalar */
    check_swiglu_f16_f16(&s, "27B GU off", 17408, 1, 3, 7, 0);        /* u off 16 bytes: scalar */
    check_swiglu_f16_f16(&s, "0.8B GU", 3584, 0, 0, 37, 0);
    check_swiglu_f16_f16(&s, "odd width", 37, 3, 0, 5, 0);
    check_swiglu_f16_f16(&s, "odd", 37, 0, 0, 3, 0);                  /* in stride 74: scalar */
    check_swiglu_f16_f16(&s, "width 44", 44, 4, 4, 9, 0);             /* stride 96, width not eights: scalar */
    check_swiglu_f16_f16(&s, "width 1", 1, 0, 0, 7, 0);

    /* the 8-bit-out forms at the models' decode widths (0.8B, 9B, 27B ffn; 9B, 27B heads), and one block */
    static const int64_t q8_ffn[] = {3584, 12288, 17408}, q8_heads[] = {16 * 256, 24 * 256};
    for (int i = 0; i < 3; i++)
        check_q8_out(&s, SWIGLU, "ffn", q8_ffn[i]);
    for (int i = 0; i < 2; i++)
        check_q8_out(&s, GATE, "heads", q8_heads[i]);
    check_q8_out(&s, SWIGLU, "one block", 32);
    check_q8_out(&s, GATE, "one block", 32);
    check_q8_out_refusals(&s);

    check_split(&s, "0.8B", 8, 256, 37);
    check_split(&s, "9B", 16, 256, big);
    check_split(&s, "27B", 24, 256, 1);

    check_rope(&s, "9B q", 16, 256, 64, 0, 37);
    check_rope(&s, "9B k", 4, 256, 64, 4096, 7);
    check_rope(&s, "27B q", 24, 256, 64, 17, big);
    check_rope(&s, "0.8B k", 2, 256, 64, 262000, 37); /* past 2^18: the float64 angles keep 1e-5 */
    check_rope(&s, "odd", 3, 64, 16, 5, 3);
    check_rope(&s, "full rot", 2, 128, 128, 123456, 3);

    static const q35_type types[] = {Q35_TYPE_F32,  Q35_TYPE_F16,    Q35_TYPE_BF16, Q35_TYPE_Q8_0, Q35_TYPE_Q4_0,
                                     Q35_TYPE_Q5_0, Q35_TYPE_Q4_K,   Q35_TYPE_Q5_K, Q35_TYPE_Q6_K, Q35_TYPE_Q4_1,
                                     Q35_TYPE_Q5_1, Q35_TYPE_IQ4_NL, Q35_TYPE_Q2_K, Q35_TYPE_Q3_K, Q35_TYPE_IQ4_XS,
                                     Q35_TYPE_IQ2_XXS, Q35_TYPE_IQ2_XS, Q35_TYPE_IQ2_S, Q35_TYPE_IQ3_XXS,
                                     Q35_TYPE_IQ3_S, Q35_TYPE_IQ1_S, Q35_TYPE_IQ1_M};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        check_embedding(&s, types[i], 1024, 37, 37);
        check_embedding(&s, types[i], 5120, 3, 7);
    }
    check_refusals(&s);
    return q35_suite_end(&s);
}
