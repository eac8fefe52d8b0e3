/* Perplexity and KL divergence (eval.h). */
#include "model/eval.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t q35_eval_scored(int64_t ctx)
{
    return ctx - 1 - ctx / 2;
}

void q35_eval_log_softmax(const float *logits, int vocab, double *out, int *top)
{
    int best = 0;
    for (int i = 1; i < vocab; i++)
        if (logits[i] > logits[best])
            best = i;
    const double mx = logits[best];
    double s = 0.0;
    for (int i = 0; i < vocab; i++)
        s += exp((double)logits[i] - mx);
    const double lse = mx + log(s);
    for (int i = 0; i < vocab; i++)
        out[i] = (double)logits[i] - lse;
    if (top)
        *top = best;
}

int q35_eval_acc_init(q35_eval_acc *a, int vocab, bool has_ref, q35_error *err)
{
    memset(a, 0, sizeof *a);
    if (vocab < 2)
        return q35_fail(err, "eval: a vocabulary of %d tokens (want at least 2)", vocab);
    a->vocab = vocab;
    a->has_ref = has_ref;
    return 0;
}

void q35_eval_acc_free(q35_eval_acc *a)
{
    free(a->klds);
    a->klds = NULL;
}

static int argmax(const double *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

int q35_eval_add(q35_eval_acc *a, const double *logp, const double *ref_logp, int32_t next, q35_error *err)
{
    if (next < 0 || next >= a->vocab)
        return q35_fail(err, "eval: token %" PRId32 " is outside the vocabulary (0..%d)", next, a->vocab - 1);
    if (a->has_ref != (ref_logp != NULL))
        return q35_fail(err, "eval: a position %s a reference, the run %s one", ref_logp ? "with" : "without",
                        a->has_ref ? "has" : "has no");
    a->nll -= logp[next];
    if (ref_logp) {
        if (a->n == a->cap) {
            const int64_t cap = a->cap ? 2 * a->cap : 1024;
            double *k = realloc(a->klds, (size_t)cap * sizeof *k);
            if (!k)
                return q35_fail(err, "eval: out of memory for %" PRId64 " positions", cap);
            a->klds = k;
            a->cap = cap;
        }
        double kld = 0.0;
        for (int i = 0; i < a->vocab; i++) {
            const double pr = exp(ref_logp[i]);
            if (pr > 0.0)
                kld += pr * (ref_logp[i] - logp[i]);
        }
        kld = kld > 0.0 ? kld : 0.0; /* rounding can leave -1e-17 where the two are equal */
        a->klds[a->n] = kld;
        a->kld += kld;
        a->kld_sq += kld * kld;
        a->nll_ref -= ref_logp[next];
        a->same_top += argmax(logp, a->vocab) == argmax(ref_logp, a->vocab);
        const double dp = exp(logp[next]) - exp(ref_logp[next]);
        a->dp += dp;
        a->dp_sq += dp * dp;
    }
    a->n++;
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

q35_eval_report q35_eval_report_of(q35_eval_acc *a)
{
    q35_eval_report r;
    const double n = (double)a->n;
    r.n = a->n;
    r.ppl = a->n ? exp(a->nll / n) : NAN;
    r.ppl_ref = r.dppl = r.ln_ratio = NAN;
    r.kld_mean = r.kld_err = r.kld_median = r.kld_p90 = r.kld_p95 = r.kld_p99 = r.kld_p999 = r.kld_min = r.kld_max =
        r.same_top = r.dp_mean = r.dp_rms = NAN;
    if (!a->has_ref || a->n == 0)
        return r;
    r.ppl_ref = exp(a->nll_ref / n);
    r.dppl = r.ppl - r.ppl_ref;
    r.ln_ratio = (a->nll - a->nll_ref) / n;
    r.kld_mean = a->kld / n;
    const double var = a->n > 1 ? fmax(0.0, (a->kld_sq / n - r.kld_mean * r.kld_mean) * n / (n - 1)) : 0.0;
    r.kld_err = sqrt(var / n);
    qsort(a->klds, (size_t)a->n, sizeof *a->klds, cmp_double);
#define AT(q) a->klds[(int64_t)floor((q) * (double)(a->n - 1))]
    r.kld_median = AT(0.5);
    r.kld_p90 = AT(0.9);
    r.kld_p95 = AT(0.95);
    r.kld_p99 = AT(0.99);
    r.kld_p999 = AT(0.999);
#undef AT
    r.kld_min = a->klds[0];
    r.kld_max = a->klds[a->n - 1];
    r.same_top = (double)a->same_top / n;
    r.dp_mean = a->dp / n;
    r.dp_rms = sqrt(a->dp_sq / n);
    return r;
}

uint64_t q35_eval_tokens_hash(const int32_t *tokens, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < n; i++)
        for (int b = 0; b < 4; b++)
            h = (h ^ (uint8_t)((uint32_t)tokens[i] >> (8 * b))) * 0x100000001b3ull;
    return h;
}

static const char k_magic[8] = {'Q', '3', '5', 'L', 'O', 'G', 'P', '1'};

void q35_eval_header_pack(const q35_eval_file *h, uint8_t b[Q35_EVAL_HEADER])
{
    memset(b, 0, Q35_EVAL_HEADER);
    memcpy(b, k_magic, 8);
    memcpy(b + 8, &h->vocab, 4);
    memcpy(b + 12, &h->ctx, 4);
    memcpy(b + 16, &h->positions, 8);
    memcpy(b + 24, &h->tokens, 8);
    memcpy(b + 32, &h->hash, 8);
}

int q35_eval_header_check(const uint8_t b[Q35_EVAL_HEADER], const char *name, const q35_eval_file *want,
                          q35_error *err)
{
    if (memcmp(b, k_magic, 8) != 0)
        return q35_fail(err, "%s: not a logits file of q35 run --eval --save-logits (magic %.8s)", name, k_magic);
    q35_eval_file h;
    memcpy(&h.vocab, b + 8, 4);
    memcpy(&h.ctx, b + 12, 4);
    memcpy(&h.positions, b + 16, 8);
    memcpy(&h.tokens, b + 24, 8);
    memcpy(&h.hash, b + 32, 8);
    if (h.vocab != want->vocab)
        return q35_fail(err, "%s: saved with a vocabulary of %u, this model has %u", name, h.vocab, want->vocab);
    if (h.ctx != want->ctx)
        return q35_fail(err, "%s: saved with --ctx %u, this run has %u", name, h.ctx, want->ctx);
    if (h.tokens != want->tokens || h.hash != want->hash)
        return q35_fail(err, "%s: saved from other tokens (%" PRIu64 " tokens, hash %016" PRIx64 "; this run: %" PRIu64
                        ", %016" PRIx64 ")", name, h.tokens, h.hash, want->tokens, want->hash);
    if (h.positions != want->positions)
        return q35_fail(err, "%s: holds %" PRIu64 " scored positions, this run scores %" PRIu64, name, h.positions,
                        want->positions);
    return 0;
}
