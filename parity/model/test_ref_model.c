/* The float64 CPU reference model against itself: a prefill at any chunk rows
 * leaves logits and the whole state bitwise where per-token steps leave them; a
 * prefill split in two calls, then a decode step, equals one call; the refusals
 * of SPEC §3 leave the state untouched; tied output and MTP blocks load as they
 * should; a timed prefill counts its projections' and attention's FLOP as the
 * shapes say. */
#include "parity/lib/harness.h"
#include "parity/model/flop_count.h"

#include "core/rng.h"
#include "model/generate.h"
#include "model/ref_model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static q35_model *make(const char *shape, const char *mix, int layers, int vocab, int mtp, uint64_t seed)
{
    q35_gen_options o = q35_gen_defaults(q35_shape_find(shape));
    snprintf(o.mix, sizeof o.mix, "%s", mix);
    o.shape.n_layer = layers;
    o.shape.n_vocab = vocab;
    o.mtp_layers = mtp;
    o.seed = seed;
    q35_error err = {{0}};
    q35_model *m;
    if (q35_generate_model(&o, &m, &err)) {
        printf("generating %s/%s: %s\n", shape, mix, err.msg);
        return NULL;
    }
    return m;
}

/* The state, bitwise, with the first difference named. */
static bool same_state(const q35_ref_state *a, const q35_ref_state *b, char *why, size_t cap)
{
    struct { const char *name; const double *x, *y; int64_t n; } parts[] = {
        {"conv", a->conv, b->conv, a->n_delta * a->conv_len},
        {"ssm", a->ssm, b->ssm, a->n_delta * a->ssm_len},
        {"k_cache", a->k_cache, b->k_cache, a->n_attn * a->max_seq * a->kv_dim},
        {"v_cache", a->v_cache, b->v_cache, a->n_attn * a->max_seq * a->kv_dim},
    };
    if (a->kv_len != b->kv_len) {
        snprintf(why, cap, "kv_len %" PRId64 " vs %" PRId64, a->kv_len, b->kv_len);
        return false;
    }
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const q35_bitcmp c = q35_bitwise_f64(parts[i].x, parts[i].y, parts[i].n);
        if (!c.equal) {
            char b2[160];
            snprintf(why, cap, "%s %s", parts[i].name, q35_bitcmp_str(&c, b2, sizeof b2));
            return false;
        }
    }
    snprintf(why, cap, "state bitwise equal");
    return true;
}

static void copy_state(q35_ref_state *dst, const q35_ref_state *src)
{
    memcpy(dst->conv, src->conv, (size_t)(src->n_delta * src->conv_len) * sizeof(double));
    memcpy(dst->ssm, src->ssm, (size_t)(src->n_delta * src->ssm_len) * sizeof(double));
    const size_t kv = (size_t)(src->n_attn * src->max_seq * src->kv_dim) * sizeof(double);
    memcpy(dst->k_cache, src->k_cache, kv);
    memcpy(dst->v_cache, src->v_cache, kv);
    dst->kv_len = src->kv_len;
}

/* Per-token steps against prefills at several chunk rows. */
static void check_batched_vs_token(q35_suite *s, const char *what, const q35_model *m, int64_t n, q35_rng *r)
{
    const int V = m->hp.n_vocab;
    int32_t *tok = malloc((size_t)n * sizeof *tok);
    int64_t *at = malloc((size_t)n * sizeof *at);
    double *want = malloc((size_t)(n * V) * sizeof(double)), *got = malloc((size_t)(n * V) * sizeof(double));
    q35_ref_state ref, st;
    q35_error err = {{0}};
    if (q35_ref_state_init(&ref, m, n + 1, &err) || q35_ref_state_init(&st, m, n + 1, &err)) {
        q35_case(s, false, "%s: state: %s", what, err.msg);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        tok[i] = (int32_t)(q35_rng_next(r) % (uint64_t)V);
        at[i] = i;
    }
    q35_poison_f64(want, n * V);
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++)
        rc = q35_ref_forward_token(m, &ref, tok[i], i, want + i * V, NULL, &err);
    q35_case(s, rc == 0, "%s: %" PRId64 " per-token steps%s%s", what, n, rc ? ": " : "", rc ? err.msg : "");
    const int64_t chunks[] = {1, 7, 64, n, 512};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0] && rc == 0; c++) {
        q35_ref_state_reset(&st);
        q35_poison_f64(got, n * V);
        const int prc = q35_ref_prefill(m, &st, tok, n, 0, chunks[c], at, n, got, NULL, &err);
        const q35_bitcmp lc = q35_bitwise_f64(got, want, n * V);
        char why[256], lb[160];
        const bool st_ok = same_state(&st, &ref, why, sizeof why);
        q35_case(s, prc == 0 && lc.equal && st_ok, "%s: prefill chunk rows %4" PRId64 " vs per-token: logits %s, %s",
                 what, chunks[c], prc ? err.msg : q35_bitcmp_str(&lc, lb, sizeof lb), why);
    }
    /* a prefill split at n/3, then one decode step, against one prefill and a step */
    if (rc == 0 && n >= 3) {
        const int64_t cut = n / 3;
        q35_ref_state_reset(&st);
        double *last = malloc((size_t)V * sizeof(double));
        int prc = q35_ref_prefill(m, &st, tok, cut, 0, 7, NULL, 0, NULL, NULL, &err);
        if (prc == 0)
            prc = q35_ref_prefill(m, &st, tok + cut, n - cut, cut, 5, NULL, 0, last, NULL, &err);
        const q35_bitcmp lc = q35_bitwise_f64(last, want + (n - 1) * V, V);
        const int32_t next = (int32_t)(q35_rng_next(r) % (uint64_t)V);
        double *d1 = malloc((size_t)V * sizeof(double)), *d2 = malloc((size_t)V * sizeof(double));
        if (prc == 0)
            prc = q35_ref_forward_token(m, &st, next, n, d1, NULL, &err);
        if (prc == 0)
            prc = q35_ref_forward_token(m, &ref, next, n, d2, NULL, &err);
        char why[256], lb[160];
        const bool st_ok = prc == 0 && same_state(&st, &ref, why, sizeof why);
        q35_case(s, prc == 0 && lc.equal && st_ok && memcmp(d1, d2, (size_t)V * sizeof(double)) == 0,
                 "%s: prefill split at %" PRId64 " + %" PRId64 ", then a decode step: last logits %s, %s", what, cut,
                 n - cut, prc ? err.msg : q35_bitcmp_str(&lc, lb, sizeof lb), prc ? "" : why);
        free(last), free(d1), free(d2);
    }
    q35_ref_state_free(&ref);
    q35_ref_state_free(&st);
    free(tok), free(at), free(want), free(got);
}

/* A timed prefill of n tokens in chunks of `rows`: the FLOP it counts
 * (q35_op_times) exactly the shapes' (q35_expected_flop; the reference prunes
 * nothing), and none for any other op. */
static void check_flop(q35_suite *s, const char *what, const q35_model *m, int64_t n, int64_t rows)
{
    int32_t *tok = malloc((size_t)n * sizeof *tok);
    for (int64_t i = 0; i < n; i++)
        tok[i] = (int32_t)(i % m->hp.n_vocab);
    q35_ref_state st;
    q35_op_times t;
    memset(&t, 0, sizeof t);
    q35_error err = {{0}};
    if (q35_ref_state_init(&st, m, n, &err)) {
        q35_case(s, false, "%s: state: %s", what, err.msg);
        free(tok);
        return;
    }
    const int rc = q35_ref_prefill(m, &st, tok, n, 0, rows, NULL, 0, NULL, &t, &err);
    double proj = 0.0, attn = 0.0, others = 0.0;
    const int64_t last = n - 1;
    q35_expected_flop(&m->hp, n, rows, &last, 1, false, &proj, &attn);
    for (int op = 0; op < Q35_OP_COUNT; op++)
        others += op == Q35_OP_PROJ || op == Q35_OP_ATTN ? 0.0 : t.flop[op];
    q35_case(s, rc == 0 && t.flop[Q35_OP_PROJ] == proj && t.flop[Q35_OP_ATTN] == attn && others == 0.0 && proj > 0.0 &&
                    attn > 0.0,
             "%s: FLOP of a timed prefill of %" PRId64 " tokens in chunks of %" PRId64 ": projections %.0f (want %.0f), "
             "attention %.0f (want %.0f), other ops %.0f (want 0)%s%s",
             what, n, rows, t.flop[Q35_OP_PROJ], proj, t.flop[Q35_OP_ATTN], attn, others, rc ? ": " : "",
             rc ? err.msg : "");
    q35_ref_state_free(&st);
    free(tok);
}

/* Each refusal fails with its message and leaves the state as it was. */
static void check_refusals(q35_suite *s, const q35_model *m)
{
    q35_ref_state st, snap;
    q35_error err = {{0}};
    if (q35_ref_state_init(&st, m, 16, &err) || q35_ref_state_init(&snap, m, 16, &err)) {
        q35_case(s, false, "refusals: state: %s", err.msg);
        return;
    }
    const int32_t ok[4] = {1, 2, 3, 4};
    q35_ref_prefill(m, &st, ok, 4, 0, 2, NULL, 0, NULL, NULL, &err); /* a state with something in it */
    copy_state(&snap, &st);
    const int V = m->hp.n_vocab;
    const int32_t bad_hi[2] = {1, V}, bad_lo[2] = {-1, 3};
    const int64_t at_desc[2] = {6, 5}, at_out[1] = {3}, at_dup[2] = {5, 5};
    double *logits = malloc(4 * (size_t)V * sizeof(double));
    struct {
        const char *what, *expect;
        const int32_t *tok;
        int64_t n, pos0, chunk;
        const int64_t *at;
        int64_t n_at;
    } cases[] = {
        {"an empty prompt", "the prompt is empty", ok, 0, 4, 4, NULL, 0},
        {"pos0 ahead of the state", "is not where the state stands", ok, 2, 5, 4, NULL, 0},
        {"pos0 rewinding the state", "is not where the state stands", ok, 2, 3, 4, NULL, 0},
        {"positions past the cache", "past the KV cache (16 rows)", ok, 13, 4, 4, NULL, 0},
        {"a token = vocab", "outside the vocabulary", bad_hi, 2, 4, 4, NULL, 0},
        {"a negative token", "outside the vocabulary", bad_lo, 2, 4, 4, NULL, 0},
        {"logit positions descending", "must ascend", ok, 4, 4, 4, at_desc, 2},
        {"logit positions repeated", "must ascend", ok, 4, 4, 4, at_dup, 2},
        {"a logit position before the prompt", "outside the prompt", ok, 4, 4, 4, at_out, 1},
        {"chunk rows 0", "chunk rows 0 must be at least 1", ok, 4, 4, 0, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&err, 0, sizeof err);
        const int rc = q35_ref_prefill(m, &st, cases[i].tok, cases[i].n, cases[i].pos0, cases[i].chunk, cases[i].at,
                                       cases[i].n_at, logits, NULL, &err);
        char why[256];
        const bool untouched = same_state(&st, &snap, why, sizeof why);
        q35_case(s, rc == -1 && strstr(err.msg, cases[i].expect) && untouched, "refuses %-36s \"%s\"; %s",
                 cases[i].what, err.msg, untouched ? "state untouched" : why);
    }
    free(logits);
    q35_ref_state_free(&st);
    q35_ref_state_free(&snap);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_rng r;
    q35_rng_seed(&r, seed);
    q35_suite s;
    q35_suite_begin(&s, "float64 CPU reference model: batched vs per-token, refusals", seed);

    q35_model *tiny = make("tiny", "q4_k_m", 8, 1024, 0, seed);
    if (q35_case(&s, tiny != NULL, "tiny q4_k_m model generated (seed %" PRIu64 ")", seed)) {
        check_batched_vs_token(&s, "tiny q4_k_m", tiny, 65, &r);
        check_refusals(&s, tiny);
        check_flop(&s, "tiny q4_k_m", tiny, 21, 8);
    }
    q35_model_free(tiny);

    /* the 0.8B widths (tied output, Hv = Hk) in 4 layers, a small vocabulary */
    q35_model *small = make("0.8b", "q8_0", 4, 512, 0, seed + 1);
    if (q35_case(&s, small && small->tied && small->output.data == small->token_embd.data,
                 "0.8b-shape model (4 layers): output tied to token_embd"))
        check_batched_vs_token(&s, "0.8b-shape q8_0", small, 20, &r), check_flop(&s, "0.8b-shape q8_0", small, 9, 4);
    q35_model_free(small);

    /* an MTP block counted in block_count is skipped: logits equal the model without it */
    q35_model *plain = make("tiny", "f16", 4, 256, 0, seed + 2), *mtp = make("tiny", "f16", 4, 256, 1, seed + 2);
    if (q35_case(&s, plain && mtp && mtp->hp.n_layer == 4 && mtp->hp.n_layer_file == 5 && strstr(mtp->note, "MTP"),
                 "MTP block loaded as skipped: \"%s\"", mtp ? mtp->note : "")) {
        const int32_t tok[5] = {3, 1, 4, 1, 5};
        double *a = malloc(256 * sizeof(double)), *b = malloc(256 * sizeof(double));
        q35_ref_state sa, sb;
        q35_error err = {{0}};
        int rc = q35_ref_state_init(&sa, plain, 5, &err) || q35_ref_state_init(&sb, mtp, 5, &err) ||
                 q35_ref_prefill(plain, &sa, tok, 5, 0, 5, NULL, 0, a, NULL, &err) ||
                 q35_ref_prefill(mtp, &sb, tok, 5, 0, 5, NULL, 0, b, NULL, &err);
        q35_case(&s, rc == 0 && memcmp(a, b, 256 * sizeof(double)) == 0,
                 "the MTP model's logits are bitwise those of the same model without the block");
        q35_ref_state_free(&sa);
        q35_ref_state_free(&sb);
        free(a), free(b);
    }
    q35_model_free(plain);
    q35_model_free(mtp);
    return q35_suite_end(&s);
}
