/* The CUDA model suites' shared pieces (cuda_model_cases.h). */
#include "cuda_model_cases.h"

#include "core/parallel.h"
#include "kernels/attention_f32.h"
#include "kernels/fp8.h"
#include "model/accuracy.h"
#include "model/generate.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fatal(const char *what, const q35_error *err)
{
    printf("FAIL  %s: %s\n", what, err->msg);
    fflush(stdout);
    exit(1);
}

q35_model *cm_model(const char *shape, int layers, int vocab, const char *mix, uint64_t seed)
{
    q35_gen_options o = q35_gen_defaults(q35_shape_find(shape));
    if (layers > 0)
        o.shape.n_layer = layers;
    if (vocab > 0)
        o.shape.n_vocab = vocab;
    snprintf(o.mix, sizeof o.mix, "%s", mix);
    o.seed = seed;
    q35_model *m = NULL;
    q35_error err = {{0}};
    if (q35_generate_model(&o, &m, &err))
        fatal("generating the model", &err);
    printf("model   shape %s, %d layers (%d DeltaNet, %d attention), H %d, vocab %d, mix %s, seed %" PRIu64 "\n",
           shape, m->hp.n_layer, m->hp.n_delta, m->hp.n_attn, m->hp.n_embd, m->hp.n_vocab, mix, seed);
    return m;
}

q35_cuda_model *cm_load(const q35_model *m, int64_t max_seq)
{
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    o.max_seq = max_seq;
    o.attention = Q35_ATTN_F32;
    o.gemm = Q35_GEMM_F32;
    o.deterministic = 0;
    o.chunk_rows = 512;
    q35_cuda_model *cm = NULL;
    q35_error err = {{0}};
    if (q35_cuda_model_load(&cm, m, &o, &err))
        fatal("loading the model on the GPU", &err);
    return cm;
}

/* The delta rule the model picks by default on GEMM gemm (model/paths.h). */
static q35_delta_path default_delta(q35_gemm_path gemm, bool deterministic)
{
    return q35_gemm_is_fast(gemm) && !deterministic ? Q35_DELTA_CHUNKED : Q35_DELTA_SCAN;
}

void cm_set_delta(q35_cuda_model *cm, q35_attn_path attention, q35_gemm_path gemm, q35_delta_path delta,
                  int64_t chunk_rows, bool deterministic, size_t scores_budget)
{
    /* the mma flash kernel's variant 0 (base), the other kernels' variants as loaded (their defaults);
       what the device runs as loaded (the sm_90a flash kernel, the sm_90a GEMM's capability); SwiGLU in
       that GEMM, q, k in f16 to the chunked rule and the last layer pruned as loaded (all on by default;
       Q35_SWITCHES=swiglu=off runs the sweep without the first, qk16=off without the second, prune=off
       without the third); the decode graph as loaded (on by default: every suite's decode steps replay it;
       decode-graph=off runs them plain); the decode step's 8-bit activations off (on by default on the f16
       and fp8 paths: test_cuda_model_graphs holds them to their own bound, the sweeps the exact GEMVs to
       theirs); every other opt-in off */
    const q35_cuda_paths *now = q35_cuda_model_paths(cm);
    const q35_cuda_paths p = {.attention = attention, .gemm = gemm, .delta = delta, .chunk_rows = chunk_rows,
                              .deterministic = deterministic,
                              .scores_budget = scores_budget ? scores_budget : Q35_ATTN_SCORES_BUDGET,
                              .delta_rule_variant = now->delta_rule_variant,
                              .delta_chunk_variant = now->delta_chunk_variant,
                              .flash_sm90 = now->flash_sm90,
                              .flash_sm90_variant = now->flash_sm90_variant,
                              .gemm_sm90 = q35_cuda_model_info(cm)->gemm_sm90,
                              .gemm_swiglu = now->gemm_swiglu,
                              .delta_qk16 = now->delta_qk16,
                              .prune_off = now->prune_off,
                              .decode_graph = now->decode_graph,
                              .decode_q8 = false,
                              .gemv_q8_variant = now->gemv_q8_variant};
    q35_error err = {{0}};
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
}

void cm_set(q35_cuda_model *cm, q35_attn_path attention, q35_gemm_path gemm, int64_t chunk_rows, bool deterministic,
            size_t scores_budget)
{
    cm_set_delta(cm, attention, gemm, default_delta(gemm, deterministic), chunk_rows, deterministic, scores_budget);
}

const char *cm_paths_name(const q35_cuda_paths *p, char *buf, size_t cap)
{
    if (p->deterministic)
        snprintf(buf, cap, "deterministic");
    else
        snprintf(buf, cap, "%s/%s%s%s", q35_attn_path_name(p->attention), q35_gemm_path_name(p->gemm),
                 p->delta == default_delta(p->gemm, false) ? "" : "/", 
                 p->delta == default_delta(p->gemm, false) ? "" : q35_delta_path_name(p->delta));
    return buf;
}

bool cm_f16_path(const q35_cuda_paths *p)
{
    return !p->deterministic &&
           (p->attention == Q35_ATTN_FLASH || q35_gemm_is_fast(p->gemm) || p->delta == Q35_DELTA_CHUNKED);
}

cm_tol cm_tolerance(const q35_cuda_paths *p)
{
    if (!cm_f16_path(p))
        return (cm_tol){CM_LIMIT_F32, INFINITY};
    /* each part's bound, summed (cuda_model_cases.h); flash alone: CM_LIMIT_F16 */
    const double l2 = (q35_gemm_is_fast(p->gemm) ? CM_LIMIT_F16_GEMM : 0.0) +
                      (p->delta == Q35_DELTA_CHUNKED ? CM_LIMIT_F16 : 0.0);
    return (cm_tol){CM_GUARD_F16, l2 > 0.0 ? l2 : CM_LIMIT_F16};
}

bool cm_within(cm_tol t, double linf, double l2)
{
    return linf <= t.linf && l2 <= t.l2;
}

const char *cm_tol_str(cm_tol t, char *buf, size_t cap)
{
    if (isinf(t.l2))
        snprintf(buf, cap, "rel Linf %.0e", t.linf);
    else
        snprintf(buf, cap, "rel L2 %.0e, rel Linf %.0e", t.l2, t.linf);
    return buf;
}

int32_t *cm_tokens(int64_t n, int vocab, q35_rng *r)
{
    int32_t *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    for (int64_t i = 0; t && i < n; i++)
        t[i] = (int32_t)(q35_rng_next(r) % (uint64_t)vocab);
    return t;
}

void cm_download(const q35_cuda_state *st, q35_cuda_state_host *h)
{
    q35_error err = {{0}};
    if (q35_cuda_state_download(st, h, &err))
        fatal("downloading the state", &err);
}

void cm_token_ref_run(cm_token_ref *ref, q35_cuda_model *cm, const int32_t *tokens, int64_t n,
                      const int64_t *snap_at, int n_snap)
{
    memset(ref, 0, sizeof *ref);
    ref->n = n;
    ref->vocab = q35_cuda_model_hparams(cm)->n_vocab;
    ref->logits = malloc((size_t)n * (size_t)ref->vocab * sizeof *ref->logits);
    if (!ref->logits) {
        printf("FAIL  out of memory for %" PRId64 " rows of logits\n", n);
        exit(1);
    }
    q35_poison_f32(ref->logits, n * ref->vocab);
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    if (q35_cuda_state_create(&st, cm, n, &err))
        fatal("the per-token state", &err);
    const double t0 = q35_now();
    int s = 0;
    for (int64_t i = 0; i < n; i++) {
        if (q35_cuda_forward_token(cm, st, tokens[i], i, ref->logits + i * ref->vocab, NULL, &err))
            fatal("a per-token step", &err);
        for (; s < n_snap && s < 8 && snap_at[s] == i + 1; s++) {
            ref->snap_at[s] = i + 1;
            cm_download(st, &ref->snap[s]);
            ref->n_snap = s + 1;
        }
    }
    ref->seconds = q35_now() - t0;
    q35_cuda_state_free(st);
    printf("per-token reference: %" PRId64 " tokens in %.2f s (%.3f ms per token), %d state snapshots\n", n,
           ref->seconds, 1e3 * ref->seconds / (double)n, ref->n_snap);
}

void cm_token_ref_free(cm_token_ref *ref)
{
    free(ref->logits);
    for (int i = 0; i < ref->n_snap; i++)
        q35_cuda_state_host_free(&ref->snap[i]);
    memset(ref, 0, sizeof *ref);
}

const q35_cuda_state_host *cm_token_ref_state(const cm_token_ref *ref, int64_t len)
{
    for (int i = 0; i < ref->n_snap; i++)
        if (ref->snap_at[i] == len)
            return &ref->snap[i];
    return NULL;
}

q35_cmp cm_compare(const float *a, const float *b, int64_t n)
{
    double *bd = q35_host_f64(b, n);
    const q35_cmp c = q35_compare_f32_f64(a, bd, n);
    free(bd);
    return c;
}

cm_logits_cmp cm_compare_logits(const float *a, const float *full, const int64_t *at, int64_t n_at, int vocab)
{
    cm_logits_cmp c = {.bitwise = true, .n = n_at, .first_diff_at = -1};
    for (int64_t i = 0; i < n_at; i++) {
        const float *x = a + i * vocab, *y = full + at[i] * vocab;
        const q35_cmp m = cm_compare(x, y, vocab);
        c.nonfinite += m.nonfinite;
        c.argmax_same += m.argmax_a == m.argmax_b;
        const q35_logit_tier t = q35_logit_tier_of(x, NULL, y, 1, vocab);
        if (!(t.kl_worst <= c.kl))
            c.kl = t.kl_worst;
        if (!(m.rel_linf <= c.worst)) {
            c.worst = m.rel_linf;
            c.worst_at = at[i];
        }
        if (!(m.rel_l2 <= c.worst_l2))
            c.worst_l2 = m.rel_l2;
        const q35_bitcmp b = q35_bitwise_f32(x, y, vocab);
        if (!b.equal && c.bitwise) {
            c.bitwise = false;
            c.first_diff = b;
            c.first_diff_at = at[i];
        }
    }
    return c;
}

/* One part of a state: bitwise, and rel L-inf (f32 against f32 or f64). */
static void compare_part(cm_state_cmp *c, const char *part, const float *a, const float *bf, const double *bd,
                         int64_t n)
{
    if (n == 0)
        return;
    const q35_cmp m = bd ? q35_compare_f32_f64(a, bd, n) : cm_compare(a, bf, n);
    c->nonfinite += m.nonfinite;
    if (!(m.rel_l2 <= c->worst_l2))
        c->worst_l2 = m.rel_l2;
    if (!(m.rel_linf <= c->worst)) {
        c->worst = m.rel_linf;
        const size_t used = strlen(c->msg);
        snprintf(c->msg + used, sizeof c->msg - used, "%sworst %s rel Linf %.2e", used ? "; " : "", part, m.rel_linf);
    }
    if (bf) {
        const q35_bitcmp b = q35_bitwise_f32(a, bf, n);
        if (!b.equal && c->bitwise) {
            c->bitwise = false;
            char diff[200];
            const size_t used = strlen(c->msg);
            snprintf(c->msg + used, sizeof c->msg - used, "%s%s %s", used ? "; " : "", part,
                     q35_bitcmp_str(&b, diff, sizeof diff));
        }
    }
}

static bool same_layout(const q35_cuda_state_host *a, int64_t kv_len, int n_delta, int n_attn, int64_t conv_len,
                        int64_t ssm_len, int64_t kv_dim, cm_state_cmp *c)
{
    if (a->kv_len == kv_len && a->n_delta == n_delta && a->n_attn == n_attn && a->conv_len == conv_len &&
        a->ssm_len == ssm_len && a->kv_dim == kv_dim)
        return true;
    c->bitwise = false;
    c->worst = INFINITY;
    snprintf(c->msg, sizeof c->msg, "layouts differ: kv_len %" PRId64 " vs %" PRId64, a->kv_len, kv_len);
    return false;
}

cm_state_cmp cm_compare_states(const q35_cuda_state_host *a, const q35_cuda_state_host *b)
{
    cm_state_cmp c = {.bitwise = true};
    if (!same_layout(a, b->kv_len, b->n_delta, b->n_attn, b->conv_len, b->ssm_len, b->kv_dim, &c))
        return c;
    const int64_t kv = (int64_t)a->n_attn * a->kv_len * a->kv_dim;
    compare_part(&c, "conv", a->conv, b->conv, NULL, a->n_delta * a->conv_len);
    compare_part(&c, "ssm", a->ssm, b->ssm, NULL, a->n_delta * a->ssm_len);
    compare_part(&c, "k_cache", a->k_cache, b->k_cache, NULL, kv);
    compare_part(&c, "v_cache", a->v_cache, b->v_cache, NULL, kv);
    return c;
}

cm_state_cmp cm_compare_state_ref(const q35_cuda_state_host *a, const q35_ref_state *ref)
{
    cm_state_cmp c = {.bitwise = false};
    if (!same_layout(a, ref->kv_len, ref->n_delta, ref->n_attn, ref->conv_len, ref->ssm_len, ref->kv_dim, &c))
        return c;
    compare_part(&c, "conv", a->conv, NULL, ref->conv, a->n_delta * a->conv_len);
    compare_part(&c, "ssm", a->ssm, NULL, ref->ssm, a->n_delta * a->ssm_len);
    /* the reference's caches hold max_seq rows per layer: compare the first kv_len */
    const int64_t rows = a->kv_len * a->kv_dim;
    for (int l = 0; l < a->n_attn; l++) {
        compare_part(&c, "k_cache", a->k_cache + l * rows, NULL, ref->k_cache + (int64_t)l * ref->max_seq * ref->kv_dim,
                     rows);
        compare_part(&c, "v_cache", a->v_cache + l * rows, NULL, ref->v_cache + (int64_t)l * ref->max_seq * ref->kv_dim,
                     rows);
    }
    return c;
}

static void sort_unique(int64_t *x, int *n)
{
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0 && x[j] < x[j - 1]; j--) {
            const int64_t t = x[j];
            x[j] = x[j - 1];
            x[j - 1] = t;
        }
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (k == 0 || x[i] != x[k - 1])
            x[k++] = x[i];
    *n = k;
}

int cm_positions(int64_t len, int64_t chunk_rows, int64_t *at)
{
    const int64_t cand[] = {0, chunk_rows - 1, chunk_rows, len / 3, len / 2, len - 2, len - 1};
    int n = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
        if (cand[i] >= 0 && cand[i] < len)
            at[n++] = cand[i];
    sort_unique(at, &n);
    return n;
}

static void reset(q35_cuda_state *st)
{
    q35_error err = {{0}};
    if (q35_cuda_state_reset(st, &err))
        fatal("resetting the state", &err);
}

/* The verdict of logits and a state against the per-token path, on one line. */
static bool verdict(q35_suite *s, const char *what, const q35_cuda_paths *p, const cm_logits_cmp *lc,
                    const cm_state_cmp *sc)
{
    const cm_tol tol = cm_tolerance(p);
    const bool ok = lc->nonfinite == 0 && sc->nonfinite == 0 &&
                    (p->deterministic ? lc->bitwise && sc->bitwise
                                      : cm_within(tol, lc->worst, lc->worst_l2) && cm_within(tol, sc->worst, sc->worst_l2));
    char diff[200] = "";
    if (!lc->bitwise)
        snprintf(diff, sizeof diff, " (first differing row %" PRId64 ": ", lc->first_diff_at);
    char bits[200] = "", lim[64] = "bitwise";
    if (!lc->bitwise)
        q35_bitcmp_str(&lc->first_diff, bits, sizeof bits);
    if (!p->deterministic)
        cm_tol_str(tol, lim, sizeof lim);
    return q35_case(s, ok,
                    "%s: logits at %" PRId64 " positions %s%s%s%s, max rel Linf %.2e at %" PRId64
                    ", rel L2 %.2e, argmax %" PRId64 "/%" PRId64 ", KL %.1e nats; state %s, max rel Linf %.2e, "
                    "rel L2 %.2e%s%s (limit %s)",
                    what, lc->n, lc->bitwise ? "bitwise" : "differ", diff, bits, lc->bitwise ? "" : ")", lc->worst,
                    lc->worst_at, lc->worst_l2, lc->argmax_same, lc->n, lc->kl, sc->bitwise ? "bitwise" : "differs",
                    sc->worst, sc->worst_l2, sc->msg[0] ? ": " : "", sc->msg, lim);
}

bool cm_check_prefill(q35_suite *s, const char *what, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens,
                      int64_t len, const cm_token_ref *ref)
{
    const q35_cuda_paths *p = q35_cuda_model_paths(cm);
    int64_t at[8];
    const int n_at = cm_positions(len, p->chunk_rows, at);
    const int vocab = ref->vocab;
    float *logits = malloc((size_t)n_at * (size_t)vocab * sizeof *logits);
    q35_poison_f32(logits, n_at * vocab);
    reset(st);
    q35_error err = {{0}};
    if (q35_cuda_prefill_logits_at(cm, st, tokens, len, 0, at, n_at, logits, NULL, &err))
        fatal(what, &err);
    const cm_logits_cmp lc = cm_compare_logits(logits, ref->logits, at, n_at, vocab);
    q35_cuda_state_host h;
    cm_download(st, &h);
    const q35_cuda_state_host *want = cm_token_ref_state(ref, len);
    cm_state_cmp sc = {.worst = INFINITY};
    if (want)
        sc = cm_compare_states(&h, want);
    else
        snprintf(sc.msg, sizeof sc.msg, "no per-token state after %" PRId64 " tokens", len);
    const bool ok = verdict(s, what, p, &lc, &sc);
    q35_cuda_state_host_free(&h);
    free(logits);
    return ok;
}

bool cm_check_split_decode(q35_suite *s, const char *what, q35_cuda_model *cm, q35_cuda_state *st,
                           const int32_t *tokens, int64_t n, const cm_token_ref *ref)
{
    const q35_cuda_paths *p = q35_cuda_model_paths(cm);
    const int vocab = ref->vocab;
    const int64_t cut = n / 3;
    float *logits = malloc((size_t)vocab * sizeof *logits);
    q35_poison_f32(logits, vocab);
    reset(st);
    q35_error err = {{0}};
    if ((cut > 0 && q35_cuda_prefill(cm, st, tokens, cut, 0, NULL, NULL, &err)) ||
        q35_cuda_prefill(cm, st, tokens + cut, n - cut, cut, NULL, NULL, &err) ||
        q35_cuda_forward_token(cm, st, tokens[n], n, logits, NULL, &err))
        fatal(what, &err);
    const int64_t at = n;
    /* the decode step's logits against the per-token path's at n: the rows at[] of logits - 0 */
    cm_logits_cmp lc = cm_compare_logits(logits, ref->logits + n * vocab, &(int64_t){0}, 1, vocab);
    lc.worst_at = at;
    lc.first_diff_at = lc.bitwise ? -1 : at;
    q35_cuda_state_host h;
    cm_download(st, &h);
    const q35_cuda_state_host *want = cm_token_ref_state(ref, n + 1);
    cm_state_cmp sc = {.worst = INFINITY};
    if (want)
        sc = cm_compare_states(&h, want);
    else
        snprintf(sc.msg, sizeof sc.msg, "no per-token state after %" PRId64 " tokens", n + 1);
    const bool ok = verdict(s, what, p, &lc, &sc);
    q35_cuda_state_host_free(&h);
    free(logits);
    return ok;
}

void cm_prefill_keep(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, float *logits,
                     q35_cuda_state_host *h)
{
    q35_error err = {{0}};
    q35_poison_f32(logits, q35_cuda_model_hparams(cm)->n_vocab);
    reset(st);
    if (q35_cuda_prefill(cm, st, tokens, n, 0, logits, NULL, &err))
        fatal("prefill", &err);
    cm_download(st, h);
}

bool cm_case_same(q35_suite *s, const char *what, const float *a, const q35_cuda_state_host *ha, const float *b,
                  const q35_cuda_state_host *hb, int vocab)
{
    const q35_bitcmp lb = q35_bitwise_f32(b, a, vocab);
    const cm_state_cmp sc = cm_compare_states(hb, ha);
    char bits[200];
    return q35_case(s, lb.equal && sc.bitwise, "%s: logits %s, state %s%s", what,
                    q35_bitcmp_str(&lb, bits, sizeof bits), sc.bitwise ? "bitwise" : "differs: ",
                    sc.bitwise ? "" : sc.msg);
}

bool cm_fp8_here(const char *what)
{
    if (q35_racecheck()) { /* cuBLASLt's FP8 kernels (nvjet, TMA) are outside racecheck's model; memcheck runs them */
        printf("SKIP  %s: under racecheck (cuBLASLt's FP8 GEMM)\n", what);
        return false;
    }
    q35_error why = {{0}};
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess && q35_fp8_supported(device, &why))
        return true;
    printf("SKIP  %s: %s\n", what, why.msg[0] ? why.msg : "no current CUDA device");
    return false;
}

bool cm_fp8_case(q35_suite *s, const char *what, const float *ours, const double *ref_f64, const float *ref_f32,
                 int64_t n, int64_t vocab, int n_layer)
{
    const q35_logit_tier t = q35_logit_tier_of(ours, ref_f64, ref_f32, n, vocab);
    const double l2 = q35_fp8_tier_l2(n_layer), kl = q35_fp8_tier_kl(n_layer);
    char line[200];
    return q35_case(s, t.nonfinite == 0 && t.rel_l2_worst <= l2 && t.kl_worst <= kl &&
                           (double)t.top1_same >= CM_FP8_TOP1 * (double)t.n,
                    "%s: %s (bounds at %d layers: rel L2 %.2f, KL %.1e nats, top-1 %.0f %%)", what,
                    q35_logit_tier_line(&t, line, (int)sizeof line), n_layer, l2, kl, 100.0 * CM_FP8_TOP1);
}
