/* GPU parity of the dequantizer (kernels/dequant.h): q35_dequant_f32 bit for bit
 * the CPU dequantizer (core/quant_*.c, ggml's arithmetic), q35_dequant_f16 bit
 * for bit that value narrowed by q35_f32_to_f16 (two NaNs count as equal: CPU and
 * GPU NaN payloads differ), for every computable type:
 *   1. random bytes (every level and bit pattern; f16 scales of every exponent,
 *      subnormal, infinite and NaN ones included) with extreme scales planted in
 *      the first blocks (0, -0, the smallest subnormal, 65504, -65504, inf, NaN,
 *      ...), at small and 9B sizes, odd plain widths, a weight only 2-byte aligned
 *      and outputs off their 16-byte alignment; nothing written past the output;
 *   2. every tensor of the quantized golden files (data/golden/tiny-r2/quant),
 *      hashed against ggml's own dequantizer (quant_golden.c), and its f16 form
 *      against the narrowing of its f32 form;
 *   3. the refusals: a type not computed, a row not whole blocks, rows < 0, and
 *      rows = 0 writing nothing. */
#include "parity/formats/quant_golden.h"
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "kernels/dequant.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLACK 64 /* poisoned bytes after every output, checked untouched */

static q35_rng g_rng;

static const q35_type k_types[] = {Q35_TYPE_F32,  Q35_TYPE_F16,  Q35_TYPE_BF16,  Q35_TYPE_Q8_0, Q35_TYPE_Q4_0,
                                   Q35_TYPE_Q5_0, Q35_TYPE_Q4_K,  Q35_TYPE_Q5_K,  Q35_TYPE_Q6_K, Q35_TYPE_Q4_1,
                                   Q35_TYPE_Q5_1, Q35_TYPE_IQ4_NL, Q35_TYPE_Q2_K, Q35_TYPE_Q3_K, Q35_TYPE_IQ4_XS,
                                   Q35_TYPE_IQ2_XXS, Q35_TYPE_IQ2_XS, Q35_TYPE_IQ2_S, Q35_TYPE_IQ3_XXS,
                                   Q35_TYPE_IQ3_S, Q35_TYPE_IQ1_S, Q35_TYPE_IQ1_M};
#define N_TYPES ((int)(sizeof k_types / sizeof k_types[0]))

/* f16 scales planted in the first blocks: zeros, subnormal, normal extremes, inf, NaN. */
static const uint16_t k_f16_scales[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff,
                                        0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x3555, 0xb800};
#define N_SCALES ((int)(sizeof k_f16_scales / sizeof k_f16_scales[0]))

/* The same extremes as plain elements: f32 and bf16 bit patterns. */
static const uint32_t k_f32_values[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, 0x00800000u,
                                        0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                        0x477ff000u, 0x477fefffu, 0x33800000u};
static const uint16_t k_bf16_values[] = {0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x7f7f, 0xff7f,
                                         0x7f80, 0xff80, 0x7fc1, 0x4780, 0x477f, 0x3380};

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

/* Random bytes, then the extremes in the scale fields of the first blocks (or as
 * the first elements of a plain type). */
static void fill_weight(uint8_t *w, q35_type type, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 8) {
        const uint64_t r = q35_rng_next(&g_rng);
        memcpy(w + i, &r, bytes - i < 8 ? bytes - i : 8);
    }
    const q35_type_info *ti = q35_type_get(type);
    const size_t blocks = bytes / (size_t)ti->block_bytes;
    for (size_t b = 0; b < blocks && b < 4 * N_SCALES; b++) {
        uint8_t *p = w + b * (size_t)ti->block_bytes;
        const uint16_t d = k_f16_scales[b % N_SCALES], dmin = k_f16_scales[(b / N_SCALES + 5 * b) % N_SCALES];
        switch (type) {
        case Q35_TYPE_F32:
            memcpy(p, &k_f32_values[b % N_SCALES], 4);
            break;
        case Q35_TYPE_F16:
            put_u16(p, d);
            break;
        case Q35_TYPE_BF16:
            put_u16(p, k_bf16_values[b % N_SCALES]);
            break;
        case Q35_TYPE_Q4_K:
        case Q35_TYPE_Q5_K:
            put_u16(p + 2, dmin);
            put_u16(p, d);
            break;
        case Q35_TYPE_Q6_K:
            put_u16(p + 208, d);
            break;
        case Q35_TYPE_Q4_1:
        case Q35_TYPE_Q5_1: /* d, then the offset m */
            put_u16(p + 2, dmin);
            put_u16(p, d);
            break;
        case Q35_TYPE_Q2_K:
            put_u16(p + 82, dmin);
            put_u16(p + 80, d);
            break;
        case Q35_TYPE_Q3_K:
            put_u16(p + 108, d);
            break;
        case Q35_TYPE_IQ1_M: /* d in the top nibbles of the scale words */
            q35_iq1_m_set_d(p + 48, d);
            break;
        default: /* Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS, the other grid i-quants: d leads the block */
            put_u16(p, d);
            break;
        }
    }
}

static bool is_nan16(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

/* Elements whose bits differ (two NaNs are equal); the first such index in *first. */
static int64_t diff_f32(const float *a, const float *b, int64_t n, int64_t *first)
{
    int64_t bad = 0;
    *first = -1;
    for (int64_t i = 0; i < n; i++) {
        if ((isnan(a[i]) && isnan(b[i])) || memcmp(&a[i], &b[i], sizeof a[i]) == 0)
            continue;
        if (bad++ == 0)
            *first = i;
    }
    return bad;
}

/* h against the narrowing of y (two NaNs are equal). */
static int64_t diff_f16(const uint16_t *h, const float *y, int64_t n, int64_t *first)
{
    int64_t bad = 0;
    *first = -1;
    for (int64_t i = 0; i < n; i++) {
        const uint16_t want = q35_f32_to_f16(y[i]);
        if (h[i] == want || (is_nan16(h[i]) && is_nan16(want)))
            continue;
        if (bad++ == 0)
            *first = i;
    }
    return bad;
}

static bool untouched(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xff)
            return false;
    return true;
}

/* The GPU's f32 and f16 outputs of a weight in host memory: w placed w_off bytes
 * into its device buffer, the outputs y_off elements into theirs. Returns
 * whether the SLACK bytes after each output stayed poisoned; -1 on a refusal. */
typedef struct gpu_out {
    float *y;     /* rows * cols, malloc'd */
    uint16_t *h;  /* rows * cols, malloc'd */
    bool slack_ok;
} gpu_out;

static int run_gpu(gpu_out *o, const uint8_t *w, size_t bytes, q35_type type, int64_t rows, int64_t cols,
                   size_t w_off, size_t y_off, q35_error *err)
{
    const int64_t n = rows * cols;
    const size_t yb = (size_t)n * 4 + y_off * 4 + SLACK, hb = (size_t)n * 2 + y_off * 2 + SLACK;
    uint8_t *dw = q35_gpu_bytes(bytes + w_off), *dy = q35_gpu_bytes(yb), *dh = q35_gpu_bytes(hb);
    q35_gpu_upload(dw + w_off, w, bytes);
    const int rc = q35_dequant_f32((float *)(dy + 4 * y_off), dw + w_off, type, rows, cols, NULL, err) ||
                           q35_dequant_f16((uint16_t *)(dh + 2 * y_off), dw + w_off, type, rows, cols, NULL, err)
                       ? -1
                       : 0;
    uint8_t *hy = malloc(yb), *hh = malloc(hb);
    q35_gpu_download(hy, dy, yb);
    q35_gpu_download(hh, dh, hb);
    o->y = malloc((size_t)(n > 0 ? n : 1) * 4);
    o->h = malloc((size_t)(n > 0 ? n : 1) * 2);
    memcpy(o->y, hy + 4 * y_off, (size_t)n * 4);
    memcpy(o->h, hh + 2 * y_off, (size_t)n * 2);
    o->slack_ok = untouched(hy, 4 * y_off) && untouched(hy + 4 * y_off + (size_t)n * 4, SLACK) &&
                  untouched(hh, 2 * y_off) && untouched(hh + 2 * y_off + (size_t)n * 2, SLACK);
    free(hy), free(hh);
    q35_gpu_free(dw), q35_gpu_free(dy), q35_gpu_free(dh);
    return rc;
}

/* ---- 1. random blocks -------------------------------------------------------------- */

static void check_random(q35_suite *s, q35_type type, int64_t rows, int64_t cols, size_t w_off, size_t y_off)
{
    q35_error err = {{0}};
    const size_t bytes = q35_row_bytes(type, cols) * (size_t)rows;
    const int64_t n = rows * cols;
    uint8_t *w = malloc(bytes);
    fill_weight(w, type, bytes);
    float *cpu = malloc((size_t)n * sizeof *cpu);
    q35_dequantize(type, w, cpu, n);
    gpu_out o;
    q35_gpu_ok(run_gpu(&o, w, bytes, type, rows, cols, w_off, y_off, &err), &err);
    int64_t f32_first, f16_first, nan = 0, inf = 0;
    const int64_t f32_bad = diff_f32(o.y, cpu, n, &f32_first), f16_bad = diff_f16(o.h, cpu, n, &f16_first);
    for (int64_t i = 0; i < n; i++)
        nan += isnan(cpu[i]) != 0, inf += isinf(cpu[i]) != 0;
    char where[96] = "";
    if (f32_bad)
        snprintf(where, sizeof where, " (first [%" PRId64 "]: %a, CPU %a)", f32_first, (double)o.y[f32_first],
                 (double)cpu[f32_first]);
    else if (f16_bad)
        snprintf(where, sizeof where, " (first [%" PRId64 "]: 0x%04x, want 0x%04x)", f16_first, o.h[f16_first],
                 q35_f32_to_f16(cpu[f16_first]));
    q35_case(s, f32_bad == 0 && f16_bad == 0 && o.slack_ok,
             "dequant %-5s %5" PRId64 " x %5" PRId64 " w +%zu y +%zu: f32 %" PRId64 " differ, f16 %" PRId64
             " differ%s; %" PRId64 " NaN, %" PRId64 " inf from extreme scales; past the outputs %s",
             q35_type_name(type), rows, cols, w_off, y_off, f32_bad, f16_bad, where, nan, inf,
             o.slack_ok ? "untouched" : "WRITTEN");
    free(w), free(cpu), free(o.y), free(o.h);
}

/* ---- 2. the golden files ---------------------------------------------------------------- */

typedef struct golden_f16 {
    int64_t elems, bad, tensors;
    char first[160]; /* the first mismatch */
} golden_f16;

static int gpu_dequant(void *ctx, q35_type type, const void *data, int64_t rows, int64_t cols, float *y,
                       q35_error *err)
{
    golden_f16 *g = ctx;
    gpu_out o;
    const int rc = run_gpu(&o, data, q35_row_bytes(type, cols) * (size_t)rows, type, rows, cols, 0, 0, err);
    const int64_t n = rows * cols;
    memcpy(y, o.y, (size_t)n * sizeof *y);
    int64_t first;
    const int64_t bad = rc == 0 ? diff_f16(o.h, o.y, n, &first) : 0;
    if (bad && g->bad == 0)
        snprintf(g->first, sizeof g->first, "%s [%" PRId64 "]: 0x%04x, want 0x%04x", q35_type_name(type), first,
                 o.h[first], q35_f32_to_f16(o.y[first]));
    g->bad += bad;
    g->elems += n;
    g->tensors++;
    free(o.y), free(o.h);
    if (rc == 0 && !o.slack_ok)
        return q35_fail(err, "wrote past its output");
    return rc;
}

static void check_golden(q35_suite *s)
{
    for (int i = 0; i < Q35_GOLDEN_VARIANTS; i++) {
        golden_f16 g = {0};
        q35_check_golden_quant_file(s, "GPU dequant_f32", q35_golden_variants[i], gpu_dequant, &g);
        q35_case(s, g.bad == 0 && g.tensors > 0,
                 "GPU dequant_f16 model-%-7s %" PRId64 " elements of %" PRId64
                 " tensors: %" PRId64 " differ from the f32 form's narrowing%s%s",
                 q35_golden_variants[i], g.elems, g.tensors, g.bad, g.bad ? ", first " : "", g.first);
    }
}

/* ---- 3. refusals -------------------------------------------------------------------------- */

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1024);
    int rc = q35_dequant_f32(d, d, Q35_TYPE_TQ1_0, 1, 256, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "type tq1_0 is not one this project computes"),
             "dequant_f32 refuses tq1_0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_dequant_f16((uint16_t *)d, d, Q35_TYPE_Q4_K, 1, 100, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "k = 100 is not a whole number of q4_K blocks of 256"),
             "dequant_f16 refuses a q4_K row of 100: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_dequant_f32(d, d, Q35_TYPE_Q8_0, -1, 32, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "n = -1 rows (want 0.."), "dequant_f32 refuses rows = -1: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_dequant_f32(d, d, Q35_TYPE_Q8_0, 0, 32, NULL, &err);
    float *h = q35_gpu_to_host(d, 1024);
    q35_case(s, rc == 0 && untouched((const uint8_t *)h, 1024 * sizeof *h), "dequant_f32 of 0 rows writes nothing");
    free(h);
    q35_gpu_free(d);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU dequantizer: every type to f32 and f16, bitwise the CPU's", &g_rng);
    if (skip)
        return skip;
    printf("-- 1. random bytes, extreme scales planted\n");
    const bool quick = q35_quick();
    for (int i = 0; i < N_TYPES; i++) {
        const q35_type t = k_types[i];
        const int64_t be = q35_type_get(t)->block_elems;
        check_random(&s, t, 3, be == 1 ? 37 : 7 * be, 0, 0);       /* odd: a plain width ends mid-unit */
        check_random(&s, t, 5, be == 1 ? 1000 : 4 * be, 2, 1);     /* 2-byte aligned weight, outputs off 16 */
        check_random(&s, t, 1, be, 0, 3);                          /* one block */
        check_random(&s, t, quick ? 64 : 4096, quick ? 1024 : 4096, 0, 0); /* the 9B attn_gate / ssm_out */
    }
    check_random(&s, Q35_TYPE_F32, 7, 1, 2, 0);
    check_random(&s, Q35_TYPE_F16, 3, 5, 0, 1);
    printf("-- 2. the quantized golden files\n");
    check_golden(&s);
    printf("-- 3. refusals\n");
    check_refusals(&s);
    return q35_suite_end(&s);
}
