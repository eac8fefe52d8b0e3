/* GPU parity of the sm_90 flash attention over an f16 cache
 * (kernels/attention_flash_sm90.h) against the float64 reference, rel L-inf
 * <= 2e-3 (the flash kernel's bound, test_kernels_attention.c: the same
 * roundings, q and the caches to f16, f32 accumulation and softmax; the
 * reference takes the f32 values the f16 caches were rounded from):
 *   - the head layouts of 0.8B (8 / 2), 9B (16 / 4), 27B (24 / 4) at T in {1,
 *     63, 64, 65, 200} and pos0 in {0, 777, 4096} (a query tile, its edges,
 *     several tiles; chunks continuing a cache at tile and non-tile offsets),
 *     a whole prompt of 2048 rows, and a few rows at the end of 20000;
 *   - groups of 1, 2, 3, 4, 6 and 8 query heads a KV head (each GQA packing:
 *     128, 64, 42, 32, 21, 16 query rows a block, the last partial);
 *   - every kernel variant at every case, pingpong, overlap and persist bitwise serial
 *     (memcmp: the same arithmetic in the same order), and its gated f16 form
 *     (q35_attention_prefill_flash_sm90_gated_f16) bitwise the f32 o gated by
 *     q35_sigmoid_gate_rows_f16, each row's padding untouched;
 *   - every refusal, with its message; T = 0 writes nothing.
 * Outputs start as NaN and the padding of each output row must stay so; cache
 * rows past n_ctx and each q row's padding are NaN (a read out of bounds
 * shows). On a failure: the first bad (row, head, dim) and the worst one.
 * Q35_QUICK (the sanitizer runs) keeps the small cases. Skipped (77) without an
 * sm_90 device or a build with sm_90a code. */
#include "attention_inputs.h"
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/pointwise.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_FLASH 2e-3

static q35_rng g_rng;

/* A cache [max_seq][kv_stride] of f32 as f16 on the device. */
static uint16_t *f16_cache(const float *x, int64_t n)
{
    uint16_t *h = malloc((size_t)n * sizeof *h);
    if (!h) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++)
        h[i] = q35_f32_to_f16(x[i]);
    uint16_t *d = q35_gpu_bytes((size_t)n * sizeof *d);
    q35_gpu_upload(d, h, (size_t)n * sizeof *d);
    free(h);
    return d;
}

/* Where the output is farthest from the reference, and where it first leaves
 * the bound. */
static void diagnose(const att_inputs *in, const float *h, const char *what)
{
    const int64_t w = att_width(in), n = in->T * w;
    double peak = 0.0, worst = -1.0;
    int64_t first = -1, at = 0;
    for (int64_t i = 0; i < n; i++)
        peak = fmax(peak, fabs(in->ref[i]));
    for (int64_t i = 0; i < n; i++) {
        const double e = isfinite(h[i]) ? fabs(h[i] - in->ref[i]) : INFINITY;
        if (e > worst)
            worst = e, at = i;
        if (first < 0 && !(e <= LIMIT_FLASH * peak))
            first = i;
    }
    const int hd = in->s.head_dim;
    if (first >= 0)
        printf("      %s: first bad at row %" PRId64 " (position %" PRId64 ") head %" PRId64 " dim %" PRId64
               ": %.6g, want %.6g\n",
               what, first / w, in->pos0 + first / w, first % w / hd, first % hd, h[first], in->ref[first]);
    printf("      %s: worst at row %" PRId64 " head %" PRId64 " dim %" PRId64 ": |error| %.3g (max |ref| %.3g)\n", what,
           at / w, at % w / hd, at % hd, worst, peak);
}

/* The gated f16 form (q35_attention_prefill_flash_sm90_gated_f16) of variant v
 * against the kernel's own f32 o (d_o, just made) gated by
 * q35_sigmoid_gate_rows_f16: bitwise (memcmp) on every row's heads * 256
 * values, and each row's padding left as poisoned. The gate: random f32 at o's
 * layout, |gate| up to 8 (sigmoid from ~3e-4 to ~1). */
static void check_gated(q35_suite *s, const att_inputs *in, const uint16_t *k16, const uint16_t *v16, int v,
                        const float *d_o, const char *what)
{
    const int64_t ld = in->s.o_stride, n = in->T * ld, w = att_width(in);
    float *gate = malloc((size_t)n * sizeof *gate);
    uint16_t *poison = malloc((size_t)n * sizeof *poison);
    if (!gate || !poison) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        gate[i] = 16.0f * ((float)(q35_rng_next(&g_rng) >> 40) / (float)(1 << 24)) - 8.0f;
        poison[i] = 0x7e5a; /* a NaN no rounding makes */
    }
    float *d_gate = q35_gpu_floats(n);
    uint16_t *d_y = q35_gpu_bytes((size_t)n * 2), *d_ref = q35_gpu_bytes((size_t)n * 2);
    q35_gpu_upload(d_gate, gate, (size_t)n * sizeof *gate);
    q35_gpu_upload(d_y, poison, (size_t)n * 2);
    q35_error err = {{0}};
    q35_gpu_ok(q35_sigmoid_gate_rows_f16(d_ref, d_o, d_gate, ld, in->T, NULL, &err), &err);
    q35_gpu_ok(q35_attention_prefill_flash_sm90_gated_f16(d_y, d_gate, in->dq, k16, v16, in->pos0, in->T, in->s, v,
                                                          NULL, &err),
               &err);
    uint16_t *y = malloc((size_t)n * 2), *ref = malloc((size_t)n * 2);
    if (!y || !ref) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    q35_gpu_download(y, d_y, (size_t)n * 2);
    q35_gpu_download(ref, d_ref, (size_t)n * 2);
    int64_t differ = 0, stray = 0, first = -1;
    for (int64_t t = 0; t < in->T; t++) {
        for (int64_t i = 0; i < w; i++)
            if (y[t * ld + i] != ref[t * ld + i] && differ++ == 0)
                first = t * ld + i;
        for (int64_t i = w; i < ld; i++)
            stray += y[t * ld + i] != poison[t * ld + i];
    }
    char at[96] = "";
    if (first >= 0)
        snprintf(at, sizeof at, "; first at row %" PRId64 " value %" PRId64 ": 0x%04x, want 0x%04x", first / ld,
                 first % ld, y[first], ref[first]);
    q35_case(s, differ == 0 && stray == 0, "%s gated f16: %" PRId64 " of %" PRId64 " values differ from o gated by "
             "sigmoid_gate_rows_f16, %" PRId64 " padding values written%s",
             what, differ, in->T * w, stray, at);
    free(y), free(ref), free(gate), free(poison);
    q35_gpu_free(d_gate), q35_gpu_free(d_y), q35_gpu_free(d_ref);
}

/* The variants whose arithmetic is serial's, in serial's order (each group's
 * own code, or the overlap's turns, persist's on a persistent grid): their o
 * is serial's, bit for bit.
 * fa3turn's P V reads P from shared memory (an SS product): held to the bound
 * only. */
static bool bitwise_serial(const char *name)
{
    return strcmp(name, "pingpong") == 0 || strcmp(name, "overlap") == 0 || strcmp(name, "persist") == 0;
}

static void check_case(q35_suite *s, const att_layout *l, int64_t pos0, int64_t T)
{
    att_inputs in;
    att_make(&in, l, 256, pos0, T, &g_rng);
    const int64_t nkv = in.max_seq * in.s.kv_stride;
    uint16_t *k16 = f16_cache(in.k, nkv), *v16 = f16_cache(in.v, nkv);
    const int serial = q35_attention_flash_sm90_variant_find("serial");
    float *h_serial = NULL;
    for (int v = 0; v < q35_attention_flash_sm90_variant_count(); v++) {
        float *o = att_output(&in);
        q35_error err = {{0}};
        q35_gpu_ok(q35_attention_prefill_flash_sm90(o, in.dq, k16, v16, pos0, T, in.s, v, NULL, &err), &err);
        int64_t stray = 0;
        float *h = att_download(&in, o, &stray);
        const q35_cmp c = q35_compare_f32_f64(h, in.ref, T * att_width(&in));
        char what[160];
        snprintf(what, sizeof what, "flash_sm90 %-7s %-4s %2d/%d pos0 %5" PRId64 " T %4" PRId64 " (n_ctx %5" PRId64 ")",
                 q35_attention_flash_sm90_variant_name(v), l->name, l->heads, l->kv_heads, pos0, T, in.n_ctx);
        if (!q35_case_unit(s, what, &c, LIMIT_FLASH, NULL))
            diagnose(&in, h, what);
        if (stray)
            q35_case(s, false, "%s: %" PRId64 " floats written into the output rows' padding", what, stray);
        check_gated(s, &in, k16, v16, v, o, what);
        if (v == serial)
            h_serial = h;
        else {
            if (h_serial && bitwise_serial(q35_attention_flash_sm90_variant_name(v))) {
                const size_t n = (size_t)(T * att_width(&in));
                size_t differ = 0;
                for (size_t i = 0; i < n; i++)
                    differ += memcmp(&h[i], &h_serial[i], sizeof *h) != 0;
                q35_case(s, differ == 0, "%s: %zu of %zu floats differ from serial's (bitwise by construction)", what,
                         differ, n);
            }
            free(h);
        }
        q35_gpu_free(o);
    }
    free(h_serial);
    q35_gpu_free(k16), q35_gpu_free(v16);
    att_free(&in);
}

/* A refusal: rc -1 and `needle` in the message. */
static void refused(q35_suite *s, int rc, const q35_error *err, const char *needle, const char *what)
{
    q35_case(s, rc == -1 && strstr(err->msg, needle) != NULL, "%s: %s", what, err->msg);
}

static void check_refusals(q35_suite *s, int dev)
{
    const q35_attn_shape ok_shape = {16, 4, 256, 16 * 256, 16 * 256, 4 * 256, 1.0f / 16.0f};
    float *d = q35_gpu_floats(16 * 256 * 8);
    uint16_t *c16 = q35_gpu_bytes(8 * 4 * 256 * 2);
    q35_error err = {{0}}, why = {{0}};
    q35_attn_shape sh = ok_shape;
    sh.head_dim = 128, sh.q_stride = sh.o_stride = 16 * 128, sh.kv_stride = 4 * 128;
    int ok = q35_attention_flash_sm90_supported(dev, sh, &why);
    refused(s, ok ? 0 : -1, &why, "head_dim 256 only, not 128", "flash_sm90_supported refuses head_dim 128");
    int rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, sh, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "head_dim 256 only, not 128", "prefill_flash_sm90 refuses head_dim 128");
    sh = ok_shape, sh.heads = 20, sh.q_stride = sh.o_stride = 20 * 256; /* 5 a KV head */
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, sh, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "5 query heads per KV head", "prefill_flash_sm90 refuses a group of 5");
    sh = ok_shape, sh.heads = 6; /* not a multiple of 4 */
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, sh, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "multiple of kv_heads", "prefill_flash_sm90 refuses heads not a multiple of kv_heads");
    sh = ok_shape, sh.kv_stride = 4 * 256 + 4; /* 8 bytes: not a TMA stride */
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, sh, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "kv_stride 1028 f16 is not a multiple of 8", "prefill_flash_sm90 refuses a 1028-f16 stride");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16 + 1, c16, 0, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL,
                                          &err);
    refused(s, rc, &err, "16-byte aligned caches", "prefill_flash_sm90 refuses a misaligned K cache");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16 + 4, 0, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL,
                                          &err);
    refused(s, rc, &err, "16-byte aligned caches", "prefill_flash_sm90 refuses a misaligned V cache");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d + 1, c16, c16, 0, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL,
                                          &err);
    refused(s, rc, &err, "q must be 16-byte aligned", "prefill_flash_sm90 refuses a misaligned q");
    sh = ok_shape, sh.o_stride = 16 * 256 + 1;
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, sh, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "even stride (4097)", "prefill_flash_sm90 refuses an odd o stride");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, -1, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "pos0 -1", "prefill_flash_sm90 refuses pos0 -1");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, INT32_MAX, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL,
                                          &err);
    refused(s, rc, &err, "pos0 + T <= 2147483647", "prefill_flash_sm90 refuses pos0 + T past INT32_MAX");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(d, d, c16, c16, 0, 4, ok_shape, q35_attention_flash_sm90_variant_count(),
                                          NULL, &err);
    refused(s, rc, &err, "flash_sm90 has variants 0..", "prefill_flash_sm90 refuses an unknown variant");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90_gated_f16(NULL, d, d, c16, c16, 0, 4, ok_shape, Q35_VARIANT_DEFAULT, NULL,
                                                    &err);
    refused(s, rc, &err, "both wanted", "prefill_flash_sm90_gated_f16 refuses a NULL y16");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90_gated_f16((uint16_t *)d + 1, d, d, c16, c16, 0, 4, ok_shape,
                                                    Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "y16 must be 4-byte aligned", "prefill_flash_sm90_gated_f16 refuses a misaligned y16");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90_gated_f16((uint16_t *)d, d + 1, d, c16, c16, 0, 4, ok_shape,
                                                    Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "gate 8-byte aligned", "prefill_flash_sm90_gated_f16 refuses a misaligned gate");
    /* T = 0: nothing written */
    float *o = q35_gpu_floats(16 * 256);
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_sm90(o, d, c16, c16, 5, 0, ok_shape, Q35_VARIANT_DEFAULT, NULL, &err);
    float *h = q35_gpu_to_host(o, 16 * 256);
    int64_t touched = 0;
    for (int i = 0; i < 16 * 256; i++)
        touched += !isnan(h[i]);
    q35_case(s, rc == 0 && touched == 0, "prefill_flash_sm90 at T = 0: status %d, %" PRId64 " floats written", rc,
             touched);
    free(h);
    q35_gpu_free(o), q35_gpu_free(d), q35_gpu_free(c16);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU flash attention on sm_90 (wgmma, TMA) over an f16 cache", &g_rng);
    if (skip)
        return skip;
    int dev = 0;
    q35_error why = {{0}};
    const q35_attn_shape nine_b = {16, 4, 256, 16 * 256, 16 * 256, 4 * 256, 1.0f / 16.0f};
    if (cudaGetDevice(&dev) != cudaSuccess) {
        printf("FAIL  cudaGetDevice\n");
        return 1;
    }
    if (!q35_attention_flash_sm90_supported(dev, nine_b, &why)) {
        printf("SKIP  flash_sm90 does not run here: %s\n", why.msg);
        return Q35_TEST_SKIP;
    }
    const bool quick = q35_quick();
    static const int64_t pos0s[] = {0, 777, 4096}, Ts[] = {1, 63, 64, 65, 200};
    for (int m = 0; m < Q35_ATT_MODELS; m++) {
        const att_layout l = att_model_layout(m);
        for (int i = 0; i < (quick ? 2 : 3); i++)
            for (int j = 0; j < 5; j++)
                check_case(&s, &l, pos0s[i], Ts[j]);
        if (!quick) {
            check_case(&s, &l, 0, 2048);        /* a whole prompt: 16 .. 128 query tiles */
            check_case(&s, &l, 20000 - 33, 33); /* the end of a long context */
        }
    }
    /* every GQA packing: two query tiles or more, the last partial */
    static const att_layout groups[] = {{"g1", 2, 2}, {"g2", 4, 2}, {"g3", 6, 2},
                                        {"g4", 8, 2}, {"g6", 12, 2}, {"g8", 16, 2}};
    for (int g = 0; g < 6; g++) {
        check_case(&s, &groups[g], 0, 65);
        check_case(&s, &groups[g], 777, quick ? 150 : 300);
    }
    check_refusals(&s, dev);
    return q35_suite_end(&s);
}
