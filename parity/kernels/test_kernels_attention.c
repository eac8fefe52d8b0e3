/* GPU parity of the attention units (kernels/attention_{decode,f32,flash}.h, kernels/kv_append.h),
 * at the head layouts of 0.8B (8 / 2), 9B (16 / 4) and 27B (24 / 4), over
 * contexts of 1, 17, 64, 600, 4097 and 20000 positions, whole prompts and
 * chunks continuing a cache (pos0 > 0; at the long contexts a few rows at the
 * end, where the float64 reference stays cheap):
 *   decode   against the reference (rel L-inf <= 1e-5); its rows form against
 *            per-token launches and the _at form (the position on the device),
 *            bitwise; on sm_90 the cluster launch shape
 *            against the one-block shape, bitwise (the same arithmetic);
 *            over the f16 caches (attention_inputs.h): against the reference
 *            over the halves' values (1e-5) and the f32 caches' (2e-3: the
 *            rounding of K and V), bitwise the f32 form over the halves
 *            widened to f32, its rows form bitwise its per-token launches;
 *   f32      against the reference (<= 1e-5); the budget forced down to >= 10
 *            query passes against one pass, bitwise (memcmp); against decode;
 *   flash    against the reference (<= 2e-3), every kernel variant at every KV
 *            split the device runs; the default against decode; each also
 *            over the f16 caches, bitwise (memcmp) its output over the f32
 *            caches (the kernel rounds those to the same halves per tile);
 * then the KV append and every refusal (attention_edges.c). Outputs start as
 * NaN; the padding of each output row must stay untouched; the cache rows past
 * n_ctx and the padding of each q row are NaN, so a read out of bounds shows. */
#include "attention_cases.h"
#include "attention_inputs.h"
#include "parity/lib/gpu.h"

#include "kernels/attention_decode.h"
#include "kernels/attention_decode_split.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_flash.h"
#include "kernels/blas.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_F32 1e-5
#define LIMIT_FLASH 2e-3

static q35_rng g_rng;
static q35_blas g_blas;
static int g_device, g_major, g_sms;

/* A device output against the reference ref, and (when partner is given)
 * bitwise against another output of the same rows, named partner_name. */
static void check_output_ref(q35_suite *s, const att_inputs *in, const double *ref, const char *what, float *d_out,
                             double limit, const float *partner, const char *partner_name, float **keep)
{
    int64_t stray = 0;
    float *h = att_download(in, d_out, &stray);
    const int64_t n = in->T * att_width(in);
    const q35_cmp c = q35_compare_f32_f64(h, ref, n);
    q35_case_unit(s, what, &c, limit, NULL);
    if (partner) {
        const q35_bitcmp b = q35_bitwise_f32(h, partner, n);
        char buf[200];
        q35_case(s, b.equal, "%s: vs %s: %s", what, partner_name, q35_bitcmp_str(&b, buf, sizeof buf));
    }
    if (stray)
        q35_case(s, false, "%s: %" PRId64 " floats written past the rows' heads (into the row padding)", what, stray);
    if (keep)
        *keep = h;
    else
        free(h);
}

/* The same against the reference over the f32 caches. */
static void check_output(q35_suite *s, const att_inputs *in, const char *what, float *d_out, double limit,
                         const float *partner, const char *partner_name, float **keep)
{
    check_output_ref(s, in, in->ref, what, d_out, limit, partner, partner_name, keep);
}

/* Two device results of the same rows (a path against decode) within limit. */
static void check_against(q35_suite *s, const char *what, const float *a, const float *b, int64_t n, double limit)
{
    double *bd = att_widen(b, n);
    const q35_cmp c = q35_compare_f32_f64(a, bd, n);
    q35_case_unit(s, what, &c, limit, NULL);
    free(bd);
}

/* Decode: the rows form against the reference and per-token launches; returns
 * the rows form's output (host, packed). */
static float *check_decode(q35_suite *s, const att_inputs *in, const char *name)
{
    q35_error err = {{0}};
    char what[200];
    float *rows = att_output(in), *tok = att_output(in);
    const bool per_token = q35_per_token_launches(in->T);
    q35_gpu_ok(q35_attention_decode_rows(rows, in->dq, in->dk, in->dv, in->pos0, in->T, in->s, Q35_VARIANT_DEFAULT,
                                         NULL, &err),
               &err);
    for (int64_t t = 0; t < (per_token ? in->T : 0); t++)
        q35_gpu_ok(q35_attention_decode(tok + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk, in->dv,
                                        in->pos0 + t + 1, in->s, NULL, &err),
                   &err);
    float *h_tok = NULL, *h_rows = NULL;
    if (per_token) {
        snprintf(what, sizeof what, "decode per-token   %s", name);
        check_output(s, in, what, tok, LIMIT_F32, NULL, NULL, &h_tok);
    }
    snprintf(what, sizeof what, "decode rows        %s", name);
    check_output(s, in, what, rows, LIMIT_F32, h_tok, h_tok ? "per-token launches" : NULL, &h_rows);
    if (per_token) { /* the _at form (the position on the device), row by row: bitwise the rows form */
        float *at = att_output(in);
        for (int64_t t = 0; t < in->T; t++) {
            int64_t *dpos = q35_gpu_pos(in->pos0 + t);
            q35_gpu_ok(q35_attention_decode_at(at + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk, in->dv,
                                               dpos, in->s, NULL, &err),
                       &err);
            q35_gpu_free(dpos);
        }
        snprintf(what, sizeof what, "decode _at         %s", name);
        check_output(s, in, what, at, LIMIT_F32, h_rows, "the rows form", NULL);
        q35_gpu_free(at);
    }
    if (g_major >= 9) { /* the default is the cluster shape: the one-block shape must give the same bits */
        float *blk = att_output(in);
        q35_gpu_ok(q35_attention_decode_rows(blk, in->dq, in->dk, in->dv, in->pos0, in->T, in->s,
                                             q35_attention_decode_variant_find("block"), NULL, &err),
                   &err);
        snprintf(what, sizeof what, "decode one-block   %s", name);
        check_output(s, in, what, blk, LIMIT_F32, h_rows, "the cluster shape", NULL);
        q35_gpu_free(blk);
    }
    free(h_tok);
    q35_gpu_free(rows), q35_gpu_free(tok);
    return h_rows;
}

/* Decode over the f16 caches: the f32 form over the halves widened (against
 * the reference over the halves), the f16 rows form bitwise that, its
 * per-token launches bitwise the rows form; the rows form against the f32
 * caches' reference at the rounding's bound. */
static void check_decode_f16(q35_suite *s, const att_inputs *in, const char *name)
{
    q35_error err = {{0}};
    char what[200];
    float *rows = att_output(in), *tok = att_output(in), *wide = att_output(in);
    const bool per_token = q35_per_token_launches(in->T);
    q35_gpu_ok(q35_attention_decode_rows_f16(rows, in->dq, in->dk16, in->dv16, in->pos0, in->T, in->s,
                                             Q35_VARIANT_DEFAULT, NULL, &err),
               &err);
    q35_gpu_ok(q35_attention_decode_rows(wide, in->dq, in->dkw, in->dvw, in->pos0, in->T, in->s, Q35_VARIANT_DEFAULT,
                                         NULL, &err),
               &err);
    for (int64_t t = 0; t < (per_token ? in->T : 0); t++)
        q35_gpu_ok(q35_attention_decode_f16(tok + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk16,
                                            in->dv16, in->pos0 + t + 1, in->s, NULL, &err),
                   &err);
    float *h_wide = NULL, *h_rows = NULL;
    snprintf(what, sizeof what, "decode f32 widened %s", name);
    check_output_ref(s, in, in->ref16, what, wide, LIMIT_F32, NULL, NULL, &h_wide);
    snprintf(what, sizeof what, "decode f16 rows    %s", name);
    check_output_ref(s, in, in->ref16, what, rows, LIMIT_F32, h_wide, "decode over the widened f32 caches", &h_rows);
    if (per_token) {
        snprintf(what, sizeof what, "decode f16 tokens  %s", name);
        check_output_ref(s, in, in->ref16, what, tok, LIMIT_F32, h_rows, "the f16 rows form", NULL);
        float *at = att_output(in); /* the _at form (the position on the device), row by row */
        for (int64_t t = 0; t < in->T; t++) {
            int64_t *dpos = q35_gpu_pos(in->pos0 + t);
            q35_gpu_ok(q35_attention_decode_f16_at(at + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk16,
                                                   in->dv16, dpos, in->s, NULL, &err),
                       &err);
            q35_gpu_free(dpos);
        }
        snprintf(what, sizeof what, "decode f16 _at     %s", name);
        check_output_ref(s, in, in->ref16, what, at, LIMIT_F32, h_rows, "the f16 rows form", NULL);
        q35_gpu_free(at);
    }
    snprintf(what, sizeof what, "decode f16 vs f32 caches' reference %s", name);
    const q35_cmp c = q35_compare_f32_f64(h_rows, in->ref, in->T * att_width(in));
    q35_case_unit(s, what, &c, LIMIT_FLASH, NULL);
    free(h_wide), free(h_rows);
    q35_gpu_free(rows), q35_gpu_free(tok), q35_gpu_free(wide);
}

/* The split decode over the f16 caches (attention_decode_split.h), row by row
 * at n_ctx = pos0 + t + 1: against the reference over the halves (LIMIT_F32,
 * the exact decode's bound) at the splits the device would take for these
 * caches, one, an odd count and the most (most of them empty); the partials'
 * buffer poisoned (NaN) first; the _at form bitwise the plain one. */
static void check_decode_split(q35_suite *s, const att_inputs *in, const char *name, int sms)
{
    q35_error err = {{0}};
    char what[200];
    const int counts[4] = {q35_attention_decode_split_count(in->s, in->n_ctx, sms), 1, 7, Q35_DECODE_SPLITS_MAX};
    const int64_t rows = q35_per_token_launches(in->T) ? in->T : 1;
    const size_t wb = q35_attention_decode_split_work_bytes(in->s, Q35_DECODE_SPLITS_MAX);
    void *work = q35_gpu_bytes(wb);
    /* the rows not run (racecheck: the last only) are left NaN: the rows run are compared */
    att_inputs last = *in;
    last.T = rows, last.pos0 = in->pos0 + in->T - rows;
    last.ref16 = in->ref16 + (in->T - rows) * att_width(in);
    float *h_first = NULL;
    for (int c = 0; c < 4; c++) {
        float *o = att_output(in);
        for (int64_t t = in->T - rows; t < in->T; t++)
            q35_gpu_ok(q35_attention_decode_split_f16(o + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk16,
                                                      in->dv16, in->pos0 + t + 1, in->s, counts[c], work, NULL, &err),
                       &err);
        snprintf(what, sizeof what, "decode split %3d   %s", counts[c], name);
        check_output_ref(s, &last, last.ref16, what, o + (in->T - rows) * in->s.o_stride, LIMIT_F32, NULL, NULL,
                         c == 0 ? &h_first : NULL);
        q35_gpu_free(o);
    }
    float *at = att_output(in);
    for (int64_t t = in->T - rows; t < in->T; t++) {
        int64_t *dpos = q35_gpu_pos(in->pos0 + t);
        q35_gpu_ok(q35_attention_decode_split_f16_at(at + t * in->s.o_stride, in->dq + t * in->s.q_stride, in->dk16,
                                                     in->dv16, dpos, in->s, counts[0], work, NULL, &err),
                   &err);
        q35_gpu_free(dpos);
    }
    snprintf(what, sizeof what, "decode split _at   %s", name);
    check_output_ref(s, &last, last.ref16, what, at + (in->T - rows) * in->s.o_stride, LIMIT_F32, h_first,
                     "the plain form", NULL);
    free(h_first);
    q35_gpu_free(at), q35_gpu_free(work);
}

/* The split decode's refusals, each naming its limit. */
static void check_split_refusals(q35_suite *s)
{
    const q35_attn_shape ok = {16, 4, 256, 16 * 256, 16 * 256, 4 * 256, 0.0625f};
    float *d = q35_gpu_floats(1 << 20);
    const uint16_t *kv = (const uint16_t *)d;
    static const struct {
        const char *what, *want;
        int heads, kv_heads, head_dim, splits;
        int64_t kv_stride, n_ctx;
    } bad[] = {
        {"head_dim 64", "head_dim 64 (the split decode kernel takes 128 or 256)", 16, 4, 64, 8, 256, 10},
        {"17 heads a KV head", "17 query heads a KV head (at most 16)", 34, 2, 128, 8, 256, 10},
        {"0 splits", "0 splits (want 1..256)", 16, 4, 256, 0, 1024, 10},
        {"257 splits", "257 splits (want 1..256)", 16, 4, 256, 257, 1024, 10},
        {"kv stride 1028", "a multiple of 8 halves", 16, 4, 256, 8, 1028, 10},
        {"n_ctx 0", "n_ctx 0 (>= 1)", 16, 4, 256, 8, 1024, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q35_attn_shape sh = ok;
        sh.heads = bad[i].heads, sh.kv_heads = bad[i].kv_heads, sh.head_dim = bad[i].head_dim;
        sh.q_stride = sh.o_stride = (int64_t)sh.heads * sh.head_dim, sh.kv_stride = bad[i].kv_stride;
        q35_error err = {{0}};
        const int rc = q35_attention_decode_split_f16(d, d, kv, kv, bad[i].n_ctx, sh, bad[i].splits, d, NULL, &err);
        q35_case(s, rc == -1 && strstr(err.msg, bad[i].want), "decode split refuses %s: %s", bad[i].what, err.msg);
    }
    q35_error err = {{0}};
    const int rc = q35_attention_decode_split_f16_at(d, d, kv, kv, NULL, ok, 8, d, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "no position pointer"), "decode split _at refuses no position: %s",
             err.msg);
    q35_gpu_free(d);
}

/* The f32 path: one pass against the reference; the budget forced down to >= 10
 * passes, bitwise; against decode. */
static void check_f32(q35_suite *s, const att_inputs *in, const char *name, const float *decode)
{
    if (q35_racecheck()) /* its GEMMs are cuBLAS's, outside racecheck's model (harness.h) */
        return;
    q35_error err = {{0}};
    char what[200];
    const int64_t n = in->n_ctx, T = in->T;
    const int64_t one = q35_attention_f32_pass_rows(in->s, T, n, Q35_ATTN_SCORES_BUDGET);
    const int64_t few = q35_attention_f32_pass_rows(in->s, T, n,
                                                    q35_attention_f32_scores_bytes(in->s, T >= 10 ? T / 10 : 1, n));
    const int64_t passes = (T + few - 1) / few;
    float *scores = q35_gpu_bytes(q35_attention_f32_scores_bytes(in->s, one, n));
    float *o1 = att_output(in), *om = att_output(in);
    q35_gpu_ok(q35_attention_prefill_f32(g_blas, o1, in->dq, in->dk, in->dv, in->pos0, T, scores, one, in->s, &err),
               &err);
    q35_gpu_ok(q35_attention_prefill_f32(g_blas, om, in->dq, in->dk, in->dv, in->pos0, T, scores, few, in->s, &err),
               &err);
    float *h1 = NULL;
    snprintf(what, sizeof what, "f32 %3" PRId64 " pass(es)   %s", (T + one - 1) / one, name);
    check_output(s, in, what, o1, LIMIT_F32, NULL, NULL, &h1);
    snprintf(what, sizeof what, "f32 %3" PRId64 " passes     %s (%" PRId64 " rows each)", passes, name, few);
    check_output(s, in, what, om, LIMIT_F32, h1, "one pass", NULL);
    if (T >= 10)
        q35_case(s, passes >= 10, "f32 forced budget  %s: %" PRId64 " passes (>= 10)", name, passes);
    snprintf(what, sizeof what, "f32 vs decode      %s", name);
    check_against(s, what, h1, decode, T * att_width(in), LIMIT_F32);
    free(h1);
    q35_gpu_free(scores), q35_gpu_free(o1), q35_gpu_free(om);
}

/* The flash path: every variant at every KV split the device runs, against the
 * reference; the default against decode. Under Q35_QUICK (the sanitizer runs)
 * the variants other than the default run at split 1 (the most tiles a block:
 * the staging's buffers and the P and max exchanges reused across tiles) and
 * the largest split (the cluster combine, and blocks with no tile at these
 * small contexts) only. A variant may be refused only below sm_90 (its shared
 * memory). */
static void check_flash(q35_suite *s, const att_inputs *in, const char *name, const float *decode)
{
    q35_error err = {{0}}, why = {{0}};
    char what[200];
    if (!q35_attention_flash_supported(g_device, in->s, Q35_VARIANT_DEFAULT, &why)) {
        q35_case(s, g_major < 8, "flash              %s: refused (%s)%s", name, why.msg,
                 g_major < 8 ? "" : " on a device that should run it");
        return;
    }
    static const int splits[] = {0, 1, 2, 4};
    const int n_splits = g_major >= 9 ? 4 : 1;
    const int def = q35_attention_flash_variant_default(g_device, in->s);
    for (int v = 0; v < q35_attention_flash_variant_count(); v++) {
        const char *vname = q35_attention_flash_variant_name(v);
        memset(&why, 0, sizeof why);
        if (!q35_attention_flash_supported(g_device, in->s, v, &why)) {
            q35_case(s, g_major < 9, "flash %-14s %s: refused (%s)%s", vname, name, why.msg,
                     g_major < 9 ? "" : " on sm_90, which should run every variant");
            continue;
        }
        const bool all = v == def || !q35_quick();
        for (int i = 0; i < n_splits; i++) {
            if (!all && i != 1 && i != n_splits - 1)
                continue;
            float *o = att_output(in), *h = NULL;
            const q35_flash_options opt = {.variant = v, .split = splits[i]};
            q35_gpu_ok(q35_attention_prefill_flash(o, in->dq, in->dk, in->dv, in->pos0, in->T, in->s, &opt, NULL, &err),
                       &err);
            snprintf(what, sizeof what, "flash %-14s split %s  %s", vname,
                     i == 0 ? "auto" : i == 1 ? "1   " : i == 2 ? "2   " : "4   ", name);
            check_output(s, in, what, o, LIMIT_FLASH, NULL, NULL, &h);
            float *o16 = att_output(in);
            q35_gpu_ok(q35_attention_prefill_flash_f16(o16, in->dq, in->dk16, in->dv16, in->pos0, in->T, in->s, &opt,
                                                       NULL, &err),
                       &err);
            snprintf(what, sizeof what, "flash %-14s split %s  f16 caches %s", vname,
                     i == 0 ? "auto" : i == 1 ? "1   " : i == 2 ? "2   " : "4   ", name);
            check_output(s, in, what, o16, LIMIT_FLASH, h, "the f32 caches", NULL);
            q35_gpu_free(o16);
            if (i == 0 && v == def) {
                snprintf(what, sizeof what, "flash vs decode    %s", name);
                check_against(s, what, h, decode, in->T * att_width(in), LIMIT_FLASH);
            }
            free(h);
            q35_gpu_free(o);
        }
    }
}

static void check_case(q35_suite *s, const att_layout *l, int head_dim, int64_t n_ctx, int64_t T)
{
    att_inputs in;
    att_make(&in, l, head_dim, n_ctx - T, T, &g_rng);
    char name[120];
    snprintf(name, sizeof name, "%-4s hd %d n_ctx %5" PRId64 " pos0 %5" PRId64 " T %3" PRId64, l->name, head_dim,
             n_ctx, n_ctx - T, T);
    float *decode = check_decode(s, &in, name);
    check_decode_f16(s, &in, name);
    check_decode_split(s, &in, name, g_sms);
    check_f32(s, &in, name, decode);
    if (head_dim == 256)
        check_flash(s, &in, name, decode);
    free(decode);
    att_free(&in);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU attention: decode, f32 prefill, flash prefill, KV append", &g_rng);
    if (skip)
        return skip;
    q35_error err = {{0}};
    if (cudaGetDevice(&g_device) != cudaSuccess ||
        cudaDeviceGetAttribute(&g_major, cudaDevAttrComputeCapabilityMajor, g_device) != cudaSuccess ||
        cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, g_device) != cudaSuccess) {
        printf("FAIL  cannot read the device's compute capability\n");
        return 1;
    }
    q35_gpu_ok(q35_blas_create(&g_blas, NULL, &err), &err);
    char algos[400] = "";
    const q35_attn_shape s9 = {16, 4, 256, 16 * 256, 16 * 256, 4 * 256, 0.0625f};
    const int described = q35_attention_f32_describe(g_blas, s9, 3997, 100, algos, sizeof algos, &err);
    q35_case(&s, described == 0, "f32 path's cuBLASLt algorithms, 9B at pos0 3997 T 100: %s",
             described == 0 ? algos : err.msg);

    /* (n_ctx, T): whole prompts, then chunks continuing a cache */
    static const int64_t full[][2] = {{1, 1},   {17, 17},     {64, 64},    {600, 600}, {64, 24},
                                      {600, 77}, {4097, 100}, {20000, 33}};
    static const int64_t quick[][2] = {{1, 1}, {17, 17}, {64, 64}, {64, 24}, {200, 37}};
    const int n_full = sizeof full / sizeof full[0], n_quick = sizeof quick / sizeof quick[0];
    const int64_t(*cases)[2] = q35_quick() ? quick : full;
    const int n_cases = q35_quick() ? n_quick : n_full;
    for (int l = 0; l < Q35_ATT_MODELS; l++) {
        const att_layout model = att_model_layout(l);
        for (int i = 0; i < n_cases; i++)
            check_case(&s, &model, 256, cases[i][0], cases[i][1]);
    }
    const att_layout nine_b = att_model_layout(1);
    check_case(&s, &nine_b, 128, 200, 37); /* decode and f32 at head_dim 128 */
    /* the flash kernel's other head groupings (rows a block R = 128, 64, 32, 16
     * for 1, 2, 3, 8 heads a KV head): two query tiles or more, the last partial,
     * a context no multiple of any KV tile */
    static const att_layout groupings[] = {{"g1", 2, 2}, {"g2", 4, 2}, {"g3", 6, 2}, {"g8", 16, 2}};
    for (int l = 0; l < 4; l++)
        check_case(&s, &groupings[l], 256, q35_quick() ? 200 : 400, q35_quick() ? 150 : 140);

    check_split_refusals(&s);
    /* three heads on one KV head: an odd count of (m, l) pairs at an odd split count (the split decode's
       partials padded to whole float4s) */
    static const att_layout odd_heads = {"g3o", 3, 1};
    check_case(&s, &odd_heads, 128, 77, 5);
    att_check_kv_append(&s, &g_rng);
    att_check_refusals(&s, g_blas, g_major);
    q35_blas_destroy(g_blas);
    return q35_suite_end(&s);
}
