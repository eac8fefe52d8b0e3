/* GPU parity of the fused attention prologue on the f16 cache path
 * (kernels/attn_prep.h), on fresh random inputs with q and gate poisoned (NaN),
 * the cache rows it writes poisoned (NaN halves) and every other cache half
 * random, at the attention layout of every shape of the shapes table
 * (model/shapes.c) at T 1, 7, 64 and 2048 (1 and 7 take the grid of a block
 * per row and four heads, 64 and 2048 a block per row), at pos 0 and at a later chunk, and
 * at odd layouts (padded rows, a strided cache, head widths not a multiple of 4,
 * partners across quads, no and full rotation, inputs and outputs one float
 * off 16-byte alignment). Each case checks:
 *   - q, gate and both whole caches bitwise (memcmp) the unfused chain on the
 *     GPU, as the model runs it: q35_split_qgate_rows, q35_rmsnorm_rows (q,
 *     then k), q35_rope_neox_rows (q, then k), q35_kv_append_rows_f16;
 *   - every cache half outside the rows pos .. pos + T - 1 and past kv_dim in
 *     them as it was;
 *   - q within rel L-inf 1e-5 of float64 (the norm and RoPE suites' bound), the
 *     gate exactly, the f16 cache rows widened within 1e-3 (the rounding);
 *   - the rows form bitwise T per-token launches (T <= 64);
 * then the refusals, by their messages. */
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "kernels/attn_prep.h"
#include "kernels/kv_append.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "model/shapes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 1e-5
#define LIMIT_F16 1e-3
#define BASE 1e7
#define EPS 1e-6f
#define NAN16 0xffffu

static q35_rng g_rng;

/* One case: the layout of the heads, of full's rows and of the caches. */
typedef struct prep_case {
    const char *what;
    int heads, kv_heads, hd, n_rot;
    int64_t ld_pad;    /* floats past the row's 2 (heads + kv_heads) hd */
    int64_t cache_pad; /* halves past kv_heads * hd in a cache row */
    int64_t pos, T;
    int off;           /* floats (halves for the caches) every buffer starts past its allocation */
} prep_case;

/* The buffers of a case on the device: full, q and gate as the fused op takes
 * them; the chain's Q_FULL, K, V (the model's buffers) and its outputs. */
typedef struct prep_bufs {
    int64_t qd, kvd, width, ld, stride, max_seq;
    float *full, *qn, *kn;        /* host: full [T][ld], the norm weights [hd] */
    uint16_t *init;               /* host: the caches' contents before (both alike) */
    float *d_full, *d_qn, *d_kn;  /* device, d_full at +off */
    float *d_q, *d_g;             /* fused, at +off */
    uint16_t *d_kc, *d_vc;        /* fused caches, at +off */
    float *c_qf, *c_k, *c_v, *c_q, *c_g; /* the chain's */
    uint16_t *c_kc, *c_vc;
} prep_bufs;

/* f16 values the rounding has edges at, put in row 0's v (every one finite in f16). */
static const float k_edges[] = {65504.0f, 65519.0f, -65519.0f, 5.96046448e-8f, 2.98023224e-8f, -0.0f, 1e-5f,
                                0.000061035156f, 2049.0f, -2051.0f};

static void *dev_copy(const void *host, size_t bytes, size_t off_bytes)
{
    char *d = q35_gpu_bytes(bytes + off_bytes);
    q35_gpu_upload(d + off_bytes, host, bytes);
    return d;
}

static void bufs_make(prep_bufs *b, const prep_case *c)
{
    memset(b, 0, sizeof *b);
    b->qd = (int64_t)c->heads * c->hd, b->kvd = (int64_t)c->kv_heads * c->hd;
    b->width = 2 * b->qd + 2 * b->kvd, b->ld = b->width + c->ld_pad, b->stride = b->kvd + c->cache_pad;
    b->max_seq = c->pos + c->T + 3; /* rows past the chunk stay as they were */
    const int64_t T = c->T, nc = b->max_seq * b->stride;
    b->full = q35_host_normal(T * b->ld, 0.0, 3.0, &g_rng);
    for (int i = 0; i < (int)(sizeof k_edges / sizeof k_edges[0]) && i < b->kvd; i++)
        b->full[2 * b->qd + b->kvd + i] = k_edges[i];
    b->qn = q35_host_normal(c->hd, 1.0, 0.1, &g_rng), b->kn = q35_host_normal(c->hd, 1.0, 0.1, &g_rng);
    b->init = malloc((size_t)nc * 2);
    for (int64_t r = 0; r < b->max_seq; r++)
        for (int64_t i = 0; i < b->stride; i++) /* the rows written NaN, the rest random finite halves */
            b->init[r * b->stride + i] = r >= c->pos && r < c->pos + T && i < b->kvd
                                             ? NAN16
                                             : (uint16_t)(q35_rng_next(&g_rng) & 0xfbffu);
    const size_t of = (size_t)c->off * 4, oh = (size_t)c->off * 2;
    b->d_full = dev_copy(b->full, (size_t)(T * b->ld) * 4, of);
    b->d_qn = q35_gpu_from_host(b->qn, c->hd), b->d_kn = q35_gpu_from_host(b->kn, c->hd);
    b->d_q = q35_gpu_bytes((size_t)(T * b->qd) * 4 + of), b->d_g = q35_gpu_bytes((size_t)(T * b->qd) * 4 + of);
    b->d_kc = dev_copy(b->init, (size_t)nc * 2, oh), b->d_vc = dev_copy(b->init, (size_t)nc * 2, oh);
    /* the chain's inputs: the columns of full in the model's three buffers */
    float *qf = malloc((size_t)(T * 2 * b->qd) * 4), *k = malloc((size_t)(T * b->kvd) * 4),
          *v = malloc((size_t)(T * b->kvd) * 4);
    for (int64_t t = 0; t < T; t++) {
        memcpy(qf + t * 2 * b->qd, b->full + t * b->ld, (size_t)(2 * b->qd) * 4);
        memcpy(k + t * b->kvd, b->full + t * b->ld + 2 * b->qd, (size_t)b->kvd * 4);
        memcpy(v + t * b->kvd, b->full + t * b->ld + 2 * b->qd + b->kvd, (size_t)b->kvd * 4);
    }
    b->c_qf = q35_gpu_from_host(qf, T * 2 * b->qd);
    b->c_k = q35_gpu_from_host(k, T * b->kvd), b->c_v = q35_gpu_from_host(v, T * b->kvd);
    b->c_q = q35_gpu_floats(T * b->qd), b->c_g = q35_gpu_floats(T * b->qd);
    b->c_kc = dev_copy(b->init, (size_t)nc * 2, 0), b->c_vc = dev_copy(b->init, (size_t)nc * 2, 0);
    free(qf), free(k), free(v);
}

static void bufs_free(prep_bufs *b)
{
    free(b->full), free(b->qn), free(b->kn), free(b->init);
    void *const dev[] = {b->d_full, b->d_qn, b->d_kn, b->d_q, b->d_g, b->d_kc, b->d_vc,
                         b->c_qf,   b->c_k,  b->c_v,  b->c_q, b->c_g, b->c_kc, b->c_vc};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        q35_gpu_free(dev[i]);
}

/* The unfused chain, as model/cuda_layers.c's qk_norm_rope runs it on the f16 cache path. */
static void run_chain(const prep_bufs *b, const prep_case *c)
{
    q35_error err = {{0}};
    const int64_t T = c->T;
    q35_gpu_ok(q35_split_qgate_rows(b->c_q, b->c_g, b->c_qf, c->heads, c->hd, T, NULL, &err), &err);
    q35_gpu_ok(q35_rmsnorm_rows(b->c_q, b->c_q, b->d_qn, c->hd, T * c->heads, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_rmsnorm_rows(b->c_k, b->c_k, b->d_kn, c->hd, T * c->kv_heads, EPS, NULL, &err), &err);
    q35_gpu_ok(q35_rope_neox_rows(b->c_q, b->qd, c->heads, c->hd, c->n_rot, c->pos, T, BASE, NULL, &err), &err);
    q35_gpu_ok(q35_rope_neox_rows(b->c_k, b->kvd, c->kv_heads, c->hd, c->n_rot, c->pos, T, BASE, NULL, &err), &err);
    q35_gpu_ok(q35_kv_append_rows_f16(b->c_kc, b->c_vc, b->stride, b->max_seq, b->c_k, b->c_v, b->kvd, b->kvd, c->pos,
                                      T, NULL, &err),
               &err);
}

/* Rows t0 .. t0 + n - 1 of the fused op into the case's outputs (at +off); dpos:
 * through the _at form, the position (pos + t0) on the device there. */
static void run_fused_at(const prep_bufs *b, const prep_case *c, float *q, float *g, uint16_t *kc, uint16_t *vc,
                         int64_t t0, int64_t n, int64_t *dpos)
{
    q35_error err = {{0}};
    if (dpos)
        q35_gpu_ok(q35_attn_prep_rows_f16_at(q + c->off + t0 * b->qd, g + c->off + t0 * b->qd, kc + c->off,
                                             vc + c->off, b->stride, b->max_seq, b->d_full + c->off + t0 * b->ld, b->ld,
                                             b->d_qn, b->d_kn, c->heads, c->kv_heads, c->hd, c->n_rot, dpos, n, BASE,
                                             EPS, NULL, &err),
                   &err);
    else
        q35_gpu_ok(q35_attn_prep_rows_f16(q + c->off + t0 * b->qd, g + c->off + t0 * b->qd, kc + c->off, vc + c->off,
                                          b->stride, b->max_seq, b->d_full + c->off + t0 * b->ld, b->ld, b->d_qn,
                                          b->d_kn, c->heads, c->kv_heads, c->hd, c->n_rot, c->pos + t0, n, BASE, EPS,
                                          NULL, &err),
                   &err);
}

static void run_fused(const prep_bufs *b, const prep_case *c, float *q, float *g, uint16_t *kc, uint16_t *vc,
                      int64_t t0, int64_t n)
{
    run_fused_at(b, c, q, g, kc, vc, t0, n, NULL);
}

/* The halves of a cache that differ: in the chunk's rows (columns < kvd) from
 * the chain's, *n_bad of them, the first at *first; elsewhere from what was
 * there before, the return. */
static int64_t cache_diffs(const uint16_t *got, const uint16_t *chain, const uint16_t *init, const prep_bufs *b,
                           const prep_case *c, int64_t *n_bad, int64_t *first)
{
    int64_t outside = 0;
    *n_bad = 0, *first = -1;
    for (int64_t r = 0; r < b->max_seq; r++)
        for (int64_t i = 0; i < b->stride; i++) {
            const int64_t at = r * b->stride + i;
            if (r >= c->pos && r < c->pos + c->T && i < b->kvd) {
                if (got[at] != chain[at] && (*n_bad)++ == 0)
                    *first = at;
            } else {
                outside += got[at] != init[at];
            }
        }
    return outside;
}

/* The chunk's rows of a cache widened to f32, [T][kvd]. */
static float *cache_rows_f32(const uint16_t *cache, const prep_bufs *b, const prep_case *c)
{
    float *w = malloc((size_t)(c->T * b->kvd) * sizeof *w);
    for (int64_t t = 0; t < c->T; t++)
        for (int64_t i = 0; i < b->kvd; i++)
            w[t * b->kvd + i] = q35_f16_to_f32(cache[(c->pos + t) * b->stride + i]);
    return w;
}

static void check_prep(q35_suite *s, const prep_case *c)
{
    prep_bufs b;
    bufs_make(&b, c);
    const int64_t T = c->T, nq = T * b.qd, nc = b.max_seq * b.stride;
    run_fused(&b, c, b.d_q, b.d_g, b.d_kc, b.d_vc, 0, T);
    run_chain(&b, c);
    float *q = malloc((size_t)nq * 4), *g = malloc((size_t)nq * 4);
    uint16_t *kc = malloc((size_t)nc * 2), *vc = malloc((size_t)nc * 2);
    q35_gpu_download(q, b.d_q + c->off, (size_t)nq * 4), q35_gpu_download(g, b.d_g + c->off, (size_t)nq * 4);
    q35_gpu_download(kc, b.d_kc + c->off, (size_t)nc * 2), q35_gpu_download(vc, b.d_vc + c->off, (size_t)nc * 2);
    float *cq = q35_gpu_to_host(b.c_q, nq), *cg = q35_gpu_to_host(b.c_g, nq);
    uint16_t *ckc = malloc((size_t)nc * 2), *cvc = malloc((size_t)nc * 2);
    q35_gpu_download(ckc, b.c_kc, (size_t)nc * 2), q35_gpu_download(cvc, b.c_vc, (size_t)nc * 2);

    char name[200], d1[160], d2[160];
    snprintf(name, sizeof name, "attn_prep %-11s heads %2d/%d hd %3d n_rot %3d pos %6" PRId64 " T %4" PRId64, c->what,
             c->heads, c->kv_heads, c->hd, c->n_rot, c->pos, T);
    /* (1) bitwise the chain */
    const q35_bitcmp bq = q35_bitwise_f32(q, cq, nq), bg = q35_bitwise_f32(g, cg, nq);
    int64_t kbad, kfirst, vbad, vfirst;
    const int64_t kout = cache_diffs(kc, ckc, b.init, &b, c, &kbad, &kfirst);
    const int64_t vout = cache_diffs(vc, cvc, b.init, &b, c, &vbad, &vfirst);
    q35_case(s, bq.equal && bg.equal && kbad == 0 && vbad == 0,
             "%s vs the chain: q %s, gate %s; k rows %" PRId64 " halves differ (first %" PRId64 "), v rows %" PRId64
             " (first %" PRId64 ")",
             name, q35_bitcmp_str(&bq, d1, sizeof d1), q35_bitcmp_str(&bg, d2, sizeof d2), kbad, kfirst, vbad, vfirst);
    const bool whole = memcmp(kc, ckc, (size_t)nc * 2) == 0 && memcmp(vc, cvc, (size_t)nc * 2) == 0;
    /* (3) nothing else written */
    q35_case(s, kout == 0 && vout == 0 && whole,
             "%s cache halves outside the chunk's rows as they were: k %" PRId64 " differ, v %" PRId64
             "; whole caches memcmp the chain's: %s",
             name, kout, vout, whole ? "equal" : "differ");
    /* (2) float64 */
    double *rq = malloc((size_t)nq * 8), *rg = malloc((size_t)nq * 8), *rk = malloc((size_t)(T * b.kvd) * 8),
           *rv = malloc((size_t)(T * b.kvd) * 8), *qn = q35_host_f64(b.qn, c->hd), *kn = q35_host_f64(b.kn, c->hd);
    for (int64_t t = 0; t < T; t++) {
        double *row = q35_host_f64(b.full + t * b.ld, b.width);
        q35_ref_attn_prep(rq + t * b.qd, rg + t * b.qd, rk + t * b.kvd, rv + t * b.kvd, row, qn, kn, c->heads,
                          c->kv_heads, c->hd, c->n_rot, c->pos + t, BASE, EPS);
        free(row);
    }
    float *wk = cache_rows_f32(kc, &b, c), *wv = cache_rows_f32(vc, &b, c);
    const q35_cmp cmq = q35_compare_f32_f64(q, rq, nq), cmg = q35_compare_f32_f64(g, rg, nq);
    const q35_cmp cmk = q35_compare_f32_f64(wk, rk, T * b.kvd), cmv = q35_compare_f32_f64(wv, rv, T * b.kvd);
    char sub[240];
    snprintf(sub, sizeof sub, "%s q   ", name);
    q35_case_unit(s, sub, &cmq, LIMIT, NULL);
    snprintf(sub, sizeof sub, "%s gate", name);
    q35_case_unit(s, sub, &cmg, 0.0, NULL);
    snprintf(sub, sizeof sub, "%s k16 ", name);
    q35_case_unit(s, sub, &cmk, LIMIT_F16, NULL);
    snprintf(sub, sizeof sub, "%s v16 ", name);
    q35_case_unit(s, sub, &cmv, LIMIT_F16, NULL);
    /* (4) the rows form against per-token launches, into fresh outputs */
    if (T <= 64 && q35_per_token_launches(T)) {
        float *tq = q35_gpu_bytes((size_t)nq * 4 + (size_t)c->off * 4), *tg = q35_gpu_bytes((size_t)nq * 4 + (size_t)c->off * 4);
        uint16_t *tkc = dev_copy(b.init, (size_t)nc * 2, (size_t)c->off * 2),
                 *tvc = dev_copy(b.init, (size_t)nc * 2, (size_t)c->off * 2);
        for (int64_t t = 0; t < T; t++)
            run_fused(&b, c, tq, tg, tkc, tvc, t, 1);
        float *hq = q35_gpu_to_host(tq + c->off, nq), *hg = q35_gpu_to_host(tg + c->off, nq);
        uint16_t *hk = malloc((size_t)nc * 2), *hv = malloc((size_t)nc * 2);
        q35_gpu_download(hk, tkc + c->off, (size_t)nc * 2), q35_gpu_download(hv, tvc + c->off, (size_t)nc * 2);
        const bool same = memcmp(hq, q, (size_t)nq * 4) == 0 && memcmp(hg, g, (size_t)nq * 4) == 0 &&
                          memcmp(hk, kc, (size_t)nc * 2) == 0 && memcmp(hv, vc, (size_t)nc * 2) == 0;
        q35_case(s, same, "%s rows form vs per-token launches: %s", name, same ? "bitwise equal" : "differ");
        free(hq), free(hg), free(hk), free(hv);
        q35_gpu_free(tq), q35_gpu_free(tg), q35_gpu_free(tkc), q35_gpu_free(tvc);
    }
    /* (5) the _at form (the position on the device) over the whole chunk, into fresh outputs */
    if (T > 0) {
        float *aq = q35_gpu_bytes((size_t)nq * 4 + (size_t)c->off * 4), *ag = q35_gpu_bytes((size_t)nq * 4 + (size_t)c->off * 4);
        uint16_t *akc = dev_copy(b.init, (size_t)nc * 2, (size_t)c->off * 2),
                 *avc = dev_copy(b.init, (size_t)nc * 2, (size_t)c->off * 2);
        int64_t *dpos = q35_gpu_pos(c->pos);
        run_fused_at(&b, c, aq, ag, akc, avc, 0, T, dpos);
        float *hq = q35_gpu_to_host(aq + c->off, nq), *hg = q35_gpu_to_host(ag + c->off, nq);
        uint16_t *hk = malloc((size_t)nc * 2), *hv = malloc((size_t)nc * 2);
        q35_gpu_download(hk, akc + c->off, (size_t)nc * 2), q35_gpu_download(hv, avc + c->off, (size_t)nc * 2);
        const bool same = memcmp(hq, q, (size_t)nq * 4) == 0 && memcmp(hg, g, (size_t)nq * 4) == 0 &&
                          memcmp(hk, kc, (size_t)nc * 2) == 0 && memcmp(hv, vc, (size_t)nc * 2) == 0;
        q35_case(s, same, "%s the _at form (position on the device) vs the rows form: %s", name,
                 same ? "bitwise equal" : "differ");
        free(hq), free(hg), free(hk), free(hv);
        q35_gpu_free(aq), q35_gpu_free(ag), q35_gpu_free(akc), q35_gpu_free(avc), q35_gpu_free(dpos);
    }
    free(q), free(g), free(kc), free(vc), free(cq), free(cg), free(ckc), free(cvc);
    free(rq), free(rg), free(rk), free(rv), free(qn), free(kn), free(wk), free(wv);
    bufs_free(&b);
}

/* rc is -1 and err names what was refused (want in its message). */
static void expect_refusal(q35_suite *s, int rc, q35_error *err, const char *what, const char *want)
{
    q35_case(s, rc == -1 && strstr(err->msg, want) != NULL, "attn_prep refuses %s: %s", what, err->msg);
    memset(err, 0, sizeof *err);
}

static void check_refusals(q35_suite *s)
{
    q35_error err = {{0}};
    float *d = q35_gpu_floats(1 << 16), *q = q35_gpu_floats(1 << 16), *g = q35_gpu_floats(1 << 16),
          *w = q35_gpu_floats(512);
    uint16_t *kc = q35_gpu_bytes(1 << 16), *vc = q35_gpu_bytes(1 << 16);
    /* a valid call: 9B's heads, T 2 at pos 3 of 8, the cache rows 1024 halves */
    const int64_t ld = 10240;
#define PREP(q_, g_, kc_, vc_, stride, max_seq, full, ld_, heads, kv, hd, n_rot, pos, T, base)                       \
    q35_attn_prep_rows_f16(q_, g_, kc_, vc_, stride, max_seq, full, ld_, w, w, heads, kv, hd, n_rot, pos, T, base,  \
                           EPS, NULL, &err)
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 0, 4, 256, 64, 3, 2, BASE), &err, "0 heads", "heads 0");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 0, 256, 64, 3, 2, BASE), &err, "0 kv heads",
                   "kv_heads 0 (>= 1)");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 1, 1, 512, 64, 3, 2, BASE), &err, "hd 512",
                   "hd 512 (even, 2..510)");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 1, 1, 255, 64, 3, 2, BASE), &err, "an odd hd", "hd 255");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 63, 3, 2, BASE), &err, "an odd n_rot",
                   "n_rot 63 (even, 0..hd)");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 258, 3, 2, BASE), &err, "n_rot past hd",
                   "n_rot 258");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, 3, -1, BASE), &err, "T -1", "T -1 (0..");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, -1, 2, BASE), &err, "pos -1",
                   "pos -1 (>= 0)");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, 3, 2, 1.0), &err, "rope base 1",
                   "rope base 1 (> 1)");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld - 1, 16, 4, 256, 64, 3, 2, BASE), &err, "a short row",
                   "ld 10239 below the row's 2*heads*hd + 2*kv_heads*hd = 10240");
    expect_refusal(s, PREP(q, g, kc, vc, 1023, 8, d, ld, 16, 4, 256, 64, 3, 2, BASE), &err, "a short cache row",
                   "cache stride 1023 below kv_heads*hd = 1024");
    expect_refusal(s, PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, 7, 2, BASE), &err, "rows past max_seq",
                   "attn_prep_rows_f16: rows 7..8 past the cache's max_seq 8");
    expect_refusal(s, PREP((float *)((char *)q + 2), g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, 3, 2, BASE), &err,
                   "a misaligned q", "not aligned to its 4-byte element");
    expect_refusal(s, PREP(q, g, (uint16_t *)((char *)kc + 1), vc, 1024, 8, d, ld, 16, 4, 256, 64, 3, 2, BASE), &err,
                   "a misaligned k_cache", "not aligned to its 2-byte element");
    /* overlaps, at a small shape (1 head of 2, rows of 8 floats) */
    expect_refusal(s, PREP(d, g, kc, vc, 2, 4, d, 8, 1, 1, 2, 2, 0, 2, BASE), &err, "q over full",
                   "q and full overlap");
    expect_refusal(s, PREP(q, q + 3, kc, vc, 2, 4, d, 8, 1, 1, 2, 2, 0, 2, BASE), &err, "gate over q",
                   "q and gate overlap");
    expect_refusal(s, PREP(q, g, kc, kc + 1, 2, 4, d, 8, 1, 1, 2, 2, 0, 2, BASE), &err, "one cache for both",
                   "k_cache rows and v_cache rows overlap");
    /* T = 0: nothing refused, nothing written */
    uint16_t before[64], after[64];
    q35_gpu_download(before, kc, sizeof before);
    const int rc = PREP(q, g, kc, vc, 1024, 8, d, ld, 16, 4, 256, 64, 8, 0, BASE);
    q35_gpu_download(after, kc, sizeof after);
    q35_case(s, rc == 0 && memcmp(before, after, sizeof before) == 0, "attn_prep takes T = 0 at pos = max_seq: %s",
             rc == 0 ? "nothing written" : err.msg);
#undef PREP
    q35_gpu_free(d), q35_gpu_free(q), q35_gpu_free(g), q35_gpu_free(w), q35_gpu_free(kc), q35_gpu_free(vc);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU attention prologue: q/gate split, q/k norms, RoPE, f16 KV append", &g_rng);
    if (skip)
        return skip;
    const int64_t big = q35_quick() ? q35_test_big_rows() : 2048;
    /* every shape's attention layout, as the model runs it: rows of [q_full | k | v], a cache row kv_dim */
    for (int i = 0; q35_shape_at(i); i++) {
        const q35_shape *m = q35_shape_at(i);
        static const int64_t Ts[] = {1, 7, 64};
        for (int j = 0; j < 3; j++)
            for (int later = 0; later < 2; later++) {
                const prep_case c = {m->name, m->n_head, m->n_head_kv, m->head_dim, m->n_rot, 0, 0,
                                     later ? 64 + Ts[j] : 0, Ts[j], 0};
                check_prep(&s, &c);
            }
    }
    const q35_shape *m9 = q35_shape_find("9b");
    const prep_case cases[] = {
        /* a 9B prefill chunk, the first and the second */
        {"9b", m9->n_head, m9->n_head_kv, m9->head_dim, m9->n_rot, 0, 0, 0, big, 0},
        {"9b", m9->n_head, m9->n_head_kv, m9->head_dim, m9->n_rot, 0, 0, big, big, 0},
        /* every row at another alignment (ld odd), every buffer one float off */
        {"9b unalign", m9->n_head, m9->n_head_kv, m9->head_dim, m9->n_rot, 1, 3, 100, 7, 1},
        /* far positions: the float64 angles */
        {"0.8b far", 8, 2, 256, 64, 0, 0, 262000, 7, 0},
        /* padded rows and cache rows, small heads */
        {"odd", 3, 1, 64, 16, 5, 3, 5, 7, 1},
        /* hd not a multiple of 4 (a partial quad), half = 9 (partners across quads) */
        {"hd 50", 2, 2, 50, 18, 1, 1, 3, 3, 0},
        {"full rot", 2, 1, 128, 128, 0, 0, 123456, 3, 0},
        {"no rot", 4, 2, 256, 0, 0, 0, 9, 5, 0},
        /* the widest head: every lane's four quads */
        {"hd 510", 1, 1, 510, 64, 2, 2, 0, 3, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_prep(&s, &cases[i]);
    check_refusals(&s);
    return q35_suite_end(&s);
}
