/* The attention suite's KV append and refusals (attention_cases.h). */
#include "attention_cases.h"
#include "parity/lib/gpu.h"

#include "kernels/attention_decode.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_flash.h"
#include "kernels/kv_append.h"

#include "core/half.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- KV append ---------------------------------------------------------------- */

static void kv_case(q35_suite *s, q35_rng *r, const char *what, int64_t kv_dim, int64_t cache_stride,
                    int64_t src_stride, int64_t max_seq, int64_t pos, int64_t T)
{
    q35_error err = {{0}};
    const int64_t nc = max_seq * cache_stride, ns = (T > 0 ? T : 1) * src_stride;
    float *kc = q35_host_normal(nc, 0.0, 1.0, r), *vc = q35_host_normal(nc, 0.0, 1.0, r);
    float *k = q35_host_normal(ns, 0.0, 1.0, r), *v = q35_host_normal(ns, 0.0, 1.0, r);
    float *dk = q35_gpu_from_host(k, ns), *dv = q35_gpu_from_host(v, ns);
    float *rows_k = q35_gpu_from_host(kc, nc), *rows_v = q35_gpu_from_host(vc, nc);
    float *tok_k = q35_gpu_from_host(kc, nc), *tok_v = q35_gpu_from_host(vc, nc);
    q35_gpu_ok(q35_kv_append_rows(rows_k, rows_v, cache_stride, max_seq, dk, dv, src_stride, kv_dim, pos, T, NULL,
                                  &err),
               &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_kv_append_rows(tok_k, tok_v, cache_stride, max_seq, dk + t * src_stride, dv + t * src_stride,
                                      src_stride, kv_dim, pos + t, 1, NULL, &err),
                   &err);
    float *at_k = q35_gpu_from_host(kc, nc), *at_v = q35_gpu_from_host(vc, nc); /* the _at form */
    int64_t *dpos = q35_gpu_pos(pos);
    q35_gpu_ok(q35_kv_append_rows_at(at_k, at_v, cache_stride, max_seq, dk, dv, src_stride, kv_dim, dpos, T, NULL, &err),
               &err);
    for (int64_t t = 0; t < T; t++) { /* the expected caches, in place */
        memcpy(kc + (pos + t) * cache_stride, k + t * src_stride, (size_t)kv_dim * sizeof *kc);
        memcpy(vc + (pos + t) * cache_stride, v + t * src_stride, (size_t)kv_dim * sizeof *vc);
    }
    float *hk = q35_gpu_to_host(rows_k, nc), *hv = q35_gpu_to_host(rows_v, nc);
    float *tk = q35_gpu_to_host(tok_k, nc), *tv = q35_gpu_to_host(tok_v, nc);
    const q35_bitcmp bk = q35_bitwise_f32(hk, kc, nc), bv = q35_bitwise_f32(hv, vc, nc);
    float *ak = q35_gpu_to_host(at_k, nc), *av = q35_gpu_to_host(at_v, nc);
    const q35_bitcmp tkc = q35_bitwise_f32(tk, hk, nc), tvc = q35_bitwise_f32(tv, hv, nc);
    const q35_bitcmp akc = q35_bitwise_f32(ak, hk, nc), avc = q35_bitwise_f32(av, hv, nc);
    char a[200], b[200], c[200], d[200];
    q35_case(s, bk.equal && bv.equal && tkc.equal && tvc.equal && akc.equal && avc.equal,
             "kv_append_rows %-12s kv_dim %4" PRId64 " stride %4" PRId64 " max_seq %3" PRId64 " pos %3" PRId64
             " T %3" PRId64 ": K %s, V %s (whole caches vs expected); per-token vs rows: %s; _at vs rows: %s",
             what, kv_dim, cache_stride, max_seq, pos, T, q35_bitcmp_str(&bk, a, sizeof a),
             q35_bitcmp_str(&bv, b, sizeof b), q35_bitcmp_str(tkc.equal ? &tvc : &tkc, c, sizeof c),
             q35_bitcmp_str(akc.equal ? &avc : &akc, d, sizeof d));
    free(kc), free(vc), free(k), free(v), free(hk), free(hv), free(tk), free(tv), free(ak), free(av);
    q35_gpu_free(at_k), q35_gpu_free(at_v), q35_gpu_free(dpos);
    q35_gpu_free(dk), q35_gpu_free(dv), q35_gpu_free(rows_k), q35_gpu_free(rows_v), q35_gpu_free(tok_k),
        q35_gpu_free(tok_v);
}

/* The rounding's edges, put into the rows of kv_case_f16's sources: ties to
 * even both ways, the largest half and past it (65519.996 rounds down,
 * 65520 to infinity), subnormals and their rounding, signed zeros, infinities,
 * a NaN. */
static const float k_edges[] = {1.0f + 0x1p-11f,       1.0f + 3 * 0x1p-11f, -(1.0f + 0x1p-11f), 65504.0f,
                                65519.99f,             65520.0f,            -65520.0f,          0x1p-24f,
                                0x1p-25f,              0x1.8p-25f,          0x1p-26f,           3 * 0x1p-25f,
                                -0.0f,                 0.0f,                INFINITY,           -INFINITY,
                                NAN,                   1e-30f,              0x1.ffep-15f,       0x1.fffp-15f};

/* Halves equal, or both NaN (a NaN's payload is the hardware's, core/half.h keeps the top bits). */
static int64_t f16_first_diff(const uint16_t *a, const uint16_t *b, int64_t n, int64_t *n_diff)
{
    int64_t first = -1;
    *n_diff = 0;
    for (int64_t i = 0; i < n; i++) {
        const bool nan_a = (a[i] & 0x7c00u) == 0x7c00u && (a[i] & 0x3ffu), nan_b = (b[i] & 0x7c00u) == 0x7c00u && (b[i] & 0x3ffu);
        if (a[i] != b[i] && !(nan_a && nan_b)) {
            ++*n_diff;
            if (first < 0)
                first = i;
        }
    }
    return first;
}

/* The f16 append: the rows form and per-token appends into caches of random
 * halves, against the CPU's rounding (q35_f32_to_f16) of every appended value,
 * every other half untouched; the rounding's edges in the first rows. */
static void kv_case_f16(q35_suite *s, q35_rng *r, const char *what, int64_t kv_dim, int64_t cache_stride,
                        int64_t src_stride, int64_t max_seq, int64_t pos, int64_t T)
{
    q35_error err = {{0}};
    const int64_t nc = max_seq * cache_stride, ns = (T > 0 ? T : 1) * src_stride;
    float *k = q35_host_normal(ns, 0.0, 1.0, r), *v = q35_host_normal(ns, 0.0, 1.0, r);
    const int n_edges = (int)(sizeof k_edges / sizeof k_edges[0]);
    for (int64_t i = 0; i < n_edges && i < kv_dim && T > 0; i++)
        k[i] = k_edges[i], v[(T - 1) * src_stride + i] = -k_edges[i];
    uint16_t *want_k = malloc((size_t)nc * 2), *want_v = malloc((size_t)nc * 2);
    for (int64_t i = 0; i < nc; i++) /* the caches' old contents: random halves */
        want_k[i] = (uint16_t)(q35_rng_next(r) & 0x7bffu), want_v[i] = (uint16_t)(q35_rng_next(r) & 0xfbffu);
    float *dk = q35_gpu_from_host(k, ns), *dv = q35_gpu_from_host(v, ns);
    uint16_t *rows_k = q35_gpu_bytes((size_t)nc * 2), *rows_v = q35_gpu_bytes((size_t)nc * 2);
    uint16_t *tok_k = q35_gpu_bytes((size_t)nc * 2), *tok_v = q35_gpu_bytes((size_t)nc * 2);
    q35_gpu_upload(rows_k, want_k, (size_t)nc * 2), q35_gpu_upload(rows_v, want_v, (size_t)nc * 2);
    q35_gpu_upload(tok_k, want_k, (size_t)nc * 2), q35_gpu_upload(tok_v, want_v, (size_t)nc * 2);
    q35_gpu_ok(q35_kv_append_rows_f16(rows_k, rows_v, cache_stride, max_seq, dk, dv, src_stride, kv_dim, pos, T,
                                      NULL, &err),
               &err);
    for (int64_t t = 0; t < T; t++)
        q35_gpu_ok(q35_kv_append_rows_f16(tok_k, tok_v, cache_stride, max_seq, dk + t * src_stride,
                                          dv + t * src_stride, src_stride, kv_dim, pos + t, 1, NULL, &err),
                   &err);
    uint16_t *at_k = q35_gpu_bytes((size_t)nc * 2), *at_v = q35_gpu_bytes((size_t)nc * 2); /* the _at form */
    q35_gpu_upload(at_k, want_k, (size_t)nc * 2), q35_gpu_upload(at_v, want_v, (size_t)nc * 2);
    int64_t *dpos = q35_gpu_pos(pos);
    q35_gpu_ok(q35_kv_append_rows_f16_at(at_k, at_v, cache_stride, max_seq, dk, dv, src_stride, kv_dim, dpos, T, NULL,
                                         &err),
               &err);
    for (int64_t t = 0; t < T; t++) /* the expected caches, in place */
        for (int64_t i = 0; i < kv_dim; i++)
            want_k[(pos + t) * cache_stride + i] = q35_f32_to_f16(k[t * src_stride + i]),
                                             want_v[(pos + t) * cache_stride + i] = q35_f32_to_f16(v[t * src_stride + i]);
    uint16_t *hk = malloc((size_t)nc * 2), *hv = malloc((size_t)nc * 2), *tk = malloc((size_t)nc * 2),
             *tv = malloc((size_t)nc * 2);
    q35_gpu_download(hk, rows_k, (size_t)nc * 2), q35_gpu_download(hv, rows_v, (size_t)nc * 2);
    q35_gpu_download(tk, tok_k, (size_t)nc * 2), q35_gpu_download(tv, tok_v, (size_t)nc * 2);
    int64_t dk_n, dv_n;
    const int64_t fk = f16_first_diff(hk, want_k, nc, &dk_n), fv = f16_first_diff(hv, want_v, nc, &dv_n);
    const bool tok_same = memcmp(tk, hk, (size_t)nc * 2) == 0 && memcmp(tv, hv, (size_t)nc * 2) == 0;
    q35_gpu_download(tk, at_k, (size_t)nc * 2), q35_gpu_download(tv, at_v, (size_t)nc * 2);
    const bool at_same = memcmp(tk, hk, (size_t)nc * 2) == 0 && memcmp(tv, hv, (size_t)nc * 2) == 0;
    q35_case(s, fk < 0 && fv < 0 && tok_same && at_same,
             "kv_append_rows_f16 %-8s kv_dim %4" PRId64 " stride %4" PRId64 " max_seq %3" PRId64 " pos %3" PRId64
             " T %3" PRId64 ": K %" PRId64 " halves differ (first %" PRId64 ": 0x%04x, CPU 0x%04x), V %" PRId64
             " (first %" PRId64 "); per-token vs rows %s; _at vs rows %s",
             what, kv_dim, cache_stride, max_seq, pos, T, dk_n, fk, fk >= 0 ? hk[fk] : 0, fk >= 0 ? want_k[fk] : 0,
             dv_n, fv, tok_same ? "bitwise equal" : "differ", at_same ? "bitwise equal" : "differ");
    free(k), free(v), free(want_k), free(want_v), free(hk), free(hv), free(tk), free(tv);
    q35_gpu_free(at_k), q35_gpu_free(at_v), q35_gpu_free(dpos);
    q35_gpu_free(dk), q35_gpu_free(dv), q35_gpu_free(rows_k), q35_gpu_free(rows_v), q35_gpu_free(tok_k),
        q35_gpu_free(tok_v);
}

void att_check_kv_append(q35_suite *s, q35_rng *r)
{
    kv_case(s, r, "9B", 1024, 1024, 1024, 64, 17, 23);
    kv_case(s, r, "27B strided", 1024, 1032, 1536, 50, 0, 50); /* fills the cache to max_seq */
    kv_case(s, r, "0.8B token", 512, 512, 512, 9, 8, 1);
    kv_case(s, r, "odd", 37, 40, 37, 11, 3, 7);
    kv_case(s, r, "T = 0", 512, 512, 512, 4, 4, 0);
    kv_case_f16(s, r, "9B", 1024, 1024, 1024, 64, 17, 23);
    kv_case_f16(s, r, "27B strided", 1024, 1032, 1536, 50, 0, 50);
    kv_case_f16(s, r, "0.8B token", 512, 512, 512, 9, 8, 1);
    kv_case_f16(s, r, "odd", 37, 40, 37, 11, 3, 7);
    kv_case_f16(s, r, "T = 0", 512, 512, 512, 4, 4, 0);

    q35_error err = {{0}};
    float *d = q35_gpu_floats(64 * 64);
    int rc = q35_kv_append_rows(d, d, 64, 50, d, d, 64, 64, 40, 11, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "rows 40..50 past the cache's max_seq 50"),
             "kv_append_rows refuses rows past max_seq: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_kv_append_rows(d, d, 32, 50, d, d, 64, 64, 0, 1, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "cache stride 32"), "kv_append_rows refuses a cache stride below kv_dim: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    uint16_t *h = (uint16_t *)d;
    rc = q35_kv_append_rows_f16(h, h, 64, 50, d, d, 64, 64, 40, 11, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "kv_append_rows_f16: rows 40..50 past the cache's max_seq 50"),
             "kv_append_rows_f16 refuses rows past max_seq: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_kv_append_rows_f16(h, h, 64, 50, d, d, 64, 64, -1, 1, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "pos -1"), "kv_append_rows_f16 refuses pos -1: %s", err.msg);
    q35_gpu_free(d);
}

/* ---- refusals ------------------------------------------------------------------ */

static q35_attn_shape shape(int heads, int kv, int hd)
{
    const q35_attn_shape s = {heads, kv, hd, (int64_t)heads * hd, (int64_t)heads * hd, (int64_t)kv * hd,
                              1.0f / 16.0f};
    return s;
}

/* A launcher's refusal: rc -1 and the message holding `want`. */
static void refused(q35_suite *s, int rc, const q35_error *err, const char *want, const char *what)
{
    q35_case(s, rc == -1 && strstr(err->msg, want) != NULL, "%s: %s", what, err->msg[0] ? err->msg : "(accepted)");
}

void att_check_refusals(q35_suite *s, q35_blas blas, int major)
{
    q35_error err = {{0}}, why = {{0}};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        q35_case(s, false, "cudaGetDevice failed");
        return;
    }
    float *d = q35_gpu_floats(1 << 16), *scores = q35_gpu_floats(1 << 16);

    /* flash: head_dim 128, heads not a multiple of kv_heads, a group of 5 */
    int ok = q35_attention_flash_supported(dev, shape(16, 4, 128), Q35_VARIANT_DEFAULT, &why);
    refused(s, ok ? 0 : -1, &why, "head_dim 256 only, not 128", "flash_supported refuses head_dim 128");
    int rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(16, 4, 128), NULL, NULL, &err);
    refused(s, rc, &err, "head_dim 256 only, not 128", "prefill_flash refuses head_dim 128");
    memset(&why, 0, sizeof why);
    ok = q35_attention_flash_supported(dev, shape(6, 4, 256), Q35_VARIANT_DEFAULT, &why);
    refused(s, ok ? 0 : -1, &why, "heads 6 is not a multiple of kv_heads 4",
            "flash_supported refuses heads not a multiple of kv_heads");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(6, 4, 256), NULL, NULL, &err);
    refused(s, rc, &err, "heads a multiple of kv_heads", "prefill_flash refuses heads not a multiple of kv_heads");
    memset(&why, 0, sizeof why);
    ok = q35_attention_flash_supported(dev, shape(10, 2, 256), Q35_VARIANT_DEFAULT, &why);
    refused(s, ok ? 0 : -1, &why, "5 query heads per KV head", "flash_supported refuses a group of 5 heads");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(16, 4, 256), &(q35_flash_options){Q35_VARIANT_DEFAULT, 3},
                                     NULL, &err);
    refused(s, rc, &err, major >= 8 ? "split 3" : "compute capability 8.0", "prefill_flash refuses a split of 3");
    memset(&err, 0, sizeof err);
    const int n_variants = q35_attention_flash_variant_count();
    rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(16, 4, 256), &(q35_flash_options){n_variants, 0}, NULL,
                                     &err);
    refused(s, rc, &err, "has variants 0..", "prefill_flash_variant refuses a variant past the last");
    memset(&err, 0, sizeof err);
    /* -1 is Q35_VARIANT_DEFAULT: the first index below the registry is -2 */
    rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(16, 4, 256), &(q35_flash_options){-2, 0}, NULL, &err);
    refused(s, rc, &err, "has variants 0..", "prefill_flash_variant refuses variant -2");
    q35_case(s, n_variants >= 1 && q35_attention_flash_variant_name(n_variants - 1) != NULL &&
                    q35_attention_flash_variant_name(n_variants) == NULL && q35_attention_flash_variant_name(-1) == NULL,
             "flash: %d variants, named up to the last (default here %s)", n_variants,
             q35_attention_flash_variant_name(q35_attention_flash_variant_default(dev, shape(16, 4, 256))));
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash(d, d + 1, d, d, 0, 4, shape(16, 4, 256), NULL, NULL, &err);
    refused(s, rc, &err, major >= 8 ? "16-byte aligned" : "compute capability 8.0",
            "prefill_flash refuses a misaligned q");
    /* f16 caches: rows of whole 16 bytes are 8 halves (4 floats would not do) */
    uint16_t *d16 = (uint16_t *)d;
    memset(&err, 0, sizeof err);
    q35_attn_shape half_rows = shape(16, 4, 256);
    half_rows.kv_stride = 4 * 256 + 4;
    rc = q35_attention_prefill_flash_f16(d, d, d16, d16, 0, 4, half_rows, NULL, NULL, &err);
    refused(s, rc, &err, major >= 8 ? "kv 1028 halves" : "compute capability 8.0",
            "prefill_flash_f16 refuses a cache stride of 4 halves past 16 bytes");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_f16(d, d, d16 + 4, d16, 0, 4, shape(16, 4, 256), NULL, NULL, &err);
    refused(s, rc, &err, major >= 8 ? "16-byte aligned" : "compute capability 8.0",
            "prefill_flash_f16 refuses a misaligned cache");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_flash_f16(d, d, d16, d16, 0, 4, shape(16, 4, 128), NULL, NULL, &err);
    refused(s, rc, &err, "head_dim 256 only, not 128", "prefill_flash_f16 refuses head_dim 128");
    if (major < 9) {
        memset(&err, 0, sizeof err);
        rc = q35_attention_prefill_flash(d, d, d, d, 0, 4, shape(16, 4, 256),
                                         &(q35_flash_options){Q35_VARIANT_DEFAULT, 2}, NULL, &err);
        refused(s, rc, &err, major >= 8 ? "thread-block clusters" : "compute capability 8.0",
                "prefill_flash refuses a KV split without clusters");
        memset(&err, 0, sizeof err);
        rc = q35_attention_decode_rows(d, d, d, d, 0, 1, shape(16, 4, 256),
                                       q35_attention_decode_variant_find("cluster"), NULL, &err);
        refused(s, rc, &err, "compute capability 9.0", "decode refuses the cluster shape below sm_90");
    }

    /* decode */
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode(d, d, d, d, 4, shape(16, 4, 64), NULL, &err);
    refused(s, rc, &err, "head_dim 64 (the decode kernel takes 128 or 256)", "decode refuses head_dim 64");
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode(d, d, d, d, 0, shape(16, 4, 256), NULL, &err);
    refused(s, rc, &err, "n_ctx 0 (>= 1)", "decode refuses n_ctx 0");
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode_f16(d, d, d16, d16, 0, shape(16, 4, 256), NULL, &err);
    refused(s, rc, &err, "attention_decode_f16: n_ctx 0 (>= 1)", "decode_f16 refuses n_ctx 0");
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode_rows_f16(d, d, d16 + 2, d16, 0, 2, shape(16, 4, 256), Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "attention_decode_rows_f16: q and the caches must be 16-byte aligned",
            "decode_rows_f16 refuses a misaligned cache");
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode_rows(d, d, d, d, 0, 2, shape(16, 3, 256), Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "heads a multiple of kv_heads", "decode refuses heads not a multiple of kv_heads");
    memset(&err, 0, sizeof err);
    q35_attn_shape narrow = shape(16, 4, 256);
    narrow.kv_stride = 4 * 256 - 4;
    rc = q35_attention_decode_rows(d, d, d, d, 0, 2, narrow, Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "kv stride 1020", "decode refuses a kv stride narrower than its heads");
    memset(&err, 0, sizeof err);
    rc = q35_attention_decode_rows(d, d, d + 2, d, 0, 2, shape(16, 4, 256), Q35_VARIANT_DEFAULT, NULL, &err);
    refused(s, rc, &err, "16-byte aligned", "decode refuses a misaligned cache");

    /* f32 */
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_f32(blas, d, d, d, d, 0, 4, scores, 0, shape(16, 4, 256), &err);
    refused(s, rc, &err, "pass_rows 0 (>= 1)", "prefill_f32 refuses pass_rows 0");
    memset(&err, 0, sizeof err);
    rc = q35_attention_prefill_f32(blas, d, d, d, d, -1, 4, scores, 4, shape(16, 4, 256), &err);
    refused(s, rc, &err, "pos0 -1", "prefill_f32 refuses pos0 -1");
    memset(&err, 0, sizeof err);
    q35_attn_shape bad_scale = shape(16, 4, 256);
    bad_scale.scale = 0.0f;
    rc = q35_attention_prefill_f32(blas, d, d, d, d, 0, 4, scores, 4, bad_scale, &err);
    refused(s, rc, &err, "scale 0 (> 0)", "prefill_f32 refuses scale 0");
    q35_gpu_free(d), q35_gpu_free(scores);
}
