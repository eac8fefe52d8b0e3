/* The perplexity and KL divergence of q35 run --eval (model/eval.h) on values
 * worked by hand: log softmax, KLD of two known distributions, perplexity of a
 * uniform guess, the percentiles' indexing, the logits file's header checks, and
 * the refusals (a token outside the vocabulary, a reference half given). */
#include "parity/lib/harness.h"

#include "model/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static void check_math(q35_suite *s)
{
    const float two[2] = {0.0f, (float)log(3.0)};
    double lp[2], ref[2];
    int top = -1;
    q35_eval_log_softmax(two, 2, lp, &top);
    q35_case(s, near(lp[0], log(0.25), 1e-7) && near(lp[1], log(0.75), 1e-7) && top == 1,
             "log softmax of {0, ln 3} = {ln 1/4, ln 3/4} (%.9f %.9f), argmax 1", lp[0], lp[1]);
    /* KL((1/4, 3/4) || (1/2, 1/2)) = 1/4 ln(1/2) + 3/4 ln(3/2), with 3 as the float32 ln 3 gives it */
    const double three = exp((double)(float)log(3.0)), p0 = 1 / (1 + three), p1 = three / (1 + three);
    const double want = p0 * log(2 * p0) + p1 * log(2 * p1);
    const float half[2] = {1.0f, 1.0f};
    q35_eval_log_softmax(two, 2, ref, NULL);
    q35_eval_log_softmax(half, 2, lp, NULL);
    q35_eval_acc a;
    q35_error err = {{0}};
    q35_eval_acc_init(&a, 2, true, &err);
    q35_eval_add(&a, lp, ref, 1, &err);
    q35_eval_add(&a, ref, ref, 0, &err);
    q35_eval_report r = q35_eval_report_of(&a);
    /* position 1: next 1, p 1/2 vs ref 3/4, tops differ (0 on a tie? both 1/2: argmax 0) ; position 2: itself */
    const double ppl = exp((-log(0.5) - log(p0)) / 2), ppl_ref = exp((-log(p1) - log(p0)) / 2);
    q35_case(s, r.n == 2 && near(r.kld_max, want, 1e-12) && near(r.kld_min, 0.0, 1e-15) &&
                    near(r.kld_mean, want / 2, 1e-12) && near(r.ppl, ppl, 1e-12) && near(r.ppl_ref, ppl_ref, 1e-12) &&
                    near(r.ln_ratio, log(ppl / ppl_ref), 1e-12) && near(r.same_top, 0.5, 0) &&
                    near(r.dp_mean, (0.5 - p1) / 2, 1e-12) && near(r.dp_rms, sqrt((0.5 - p1) * (0.5 - p1) / 2), 1e-12),
             "KLD %.9f (want %.9f) and 0; ppl %.6f / %.6f; same top %.2f; dp mean %.4f rms %.4f", r.kld_max, want,
             r.ppl, r.ppl_ref, r.same_top, r.dp_mean, r.dp_rms);
    q35_eval_acc_free(&a);

    /* a uniform guess over V tokens: perplexity V exactly; no reference: KLD NaN */
    float flat[64];
    double l64[64];
    for (int i = 0; i < 64; i++)
        flat[i] = 0.5f;
    q35_eval_log_softmax(flat, 64, l64, NULL);
    q35_eval_acc_init(&a, 64, false, &err);
    for (int i = 0; i < 10; i++)
        q35_eval_add(&a, l64, NULL, i, &err);
    r = q35_eval_report_of(&a);
    q35_case(s, near(r.ppl, 64.0, 1e-9) && isnan(r.kld_mean) && isnan(r.ppl_ref),
             "uniform over 64: perplexity %.12f, no reference: KLD and reference NaN", r.ppl);
    q35_eval_acc_free(&a);
}

/* Percentiles: the sorted value at floor(q (n - 1)), whatever the order added. */
static void check_percentiles(q35_suite *s, uint64_t seed)
{
    q35_eval_acc a;
    q35_error err = {{0}};
    q35_eval_acc_init(&a, 2, true, &err);
    const int n = 1001;
    a.klds = malloc(n * sizeof *a.klds);
    a.cap = a.n = n;
    for (int i = 0; i < n; i++)
        a.klds[i] = i / 1000.0;
    q35_rng r;
    q35_rng_seed(&r, seed);
    for (int i = n - 1; i > 0; i--) { /* shuffled */
        const int j = (int)(q35_rng_next(&r) % (uint64_t)(i + 1));
        const double t = a.klds[i];
        a.klds[i] = a.klds[j];
        a.klds[j] = t;
    }
    const q35_eval_report rep = q35_eval_report_of(&a);
    q35_case(s, rep.kld_median == 0.5 && rep.kld_p90 == 0.9 && rep.kld_p99 == 0.99 && rep.kld_p999 == 0.999 &&
                    rep.kld_min == 0.0 && rep.kld_max == 1.0,
             "percentiles of 0, 0.001, ..., 1 shuffled: median %.3f p90 %.3f p99 %.3f p99.9 %.3f min %.3f max %.3f",
             rep.kld_median, rep.kld_p90, rep.kld_p99, rep.kld_p999, rep.kld_min, rep.kld_max);
    q35_eval_acc_free(&a);
}

static void check_refusals(q35_suite *s)
{
    q35_eval_acc a;
    q35_error err = {{0}};
    double lp[4] = {-1, -2, -3, -4};
    q35_eval_acc_init(&a, 4, true, &err);
    q35_case(s, q35_eval_add(&a, lp, lp, 4, &err) == -1 && strstr(err.msg, "token 4 is outside the vocabulary (0..3)"),
             "a next token past the vocabulary refused: %s", err.msg);
    err = (q35_error){{0}};
    q35_case(s, q35_eval_add(&a, lp, NULL, 1, &err) == -1 && strstr(err.msg, "without a reference"),
             "a position without the reference the run has refused: %s", err.msg);
    q35_eval_acc_free(&a);
    err = (q35_error){{0}};
    q35_case(s, q35_eval_acc_init(&a, 1, false, &err) == -1, "a vocabulary of 1 refused: %s", err.msg);
    q35_eval_acc_free(&a);
    q35_case(s, q35_eval_scored(512) == 255 && q35_eval_scored(32) == 15 && q35_eval_scored(5) == 2,
             "scored positions a window: 512 -> 255, 32 -> 15, 5 -> 2 (ctx/2 .. ctx-2)");
}

static void check_header(q35_suite *s)
{
    const int32_t tok[3] = {1, 2, 3}, other[3] = {1, 2, 4};
    const q35_eval_file h = {.vocab = 256, .ctx = 32, .positions = 45, .tokens = 96,
                             .hash = q35_eval_tokens_hash(tok, 3)};
    struct {
        q35_eval_file want;
        const char *msg;
    } cases[] = {
        {h, NULL},
        {{.vocab = 512, .ctx = 32, .positions = 45, .tokens = 96, .hash = h.hash}, "vocabulary of 256, this model has 512"},
        {{.vocab = 256, .ctx = 64, .positions = 45, .tokens = 96, .hash = h.hash}, "--ctx 32, this run has 64"},
        {{.vocab = 256, .ctx = 32, .positions = 45, .tokens = 96, .hash = q35_eval_tokens_hash(other, 3)},
         "saved from other tokens"},
        {{.vocab = 256, .ctx = 32, .positions = 30, .tokens = 96, .hash = h.hash}, "45 scored positions, this run scores 30"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[Q35_EVAL_HEADER];
        q35_error err = {{0}};
        q35_eval_header_pack(&h, buf);
        const int rc = q35_eval_header_check(buf, "ref.lp", &cases[i].want, &err);
        q35_case(s, cases[i].msg ? rc == -1 && strstr(err.msg, cases[i].msg) : rc == 0,
                 "header read back against %s: %s", cases[i].msg ? cases[i].msg : "itself", rc ? err.msg : "accepted");
    }
    uint8_t junk[Q35_EVAL_HEADER] = "GGUF";
    q35_error err = {{0}};
    q35_case(s, q35_eval_header_check(junk, "x.gguf", &h, &err) == -1 && strstr(err.msg, "not a logits file"),
             "another file's header refused: %s", err.msg);
}

int main(void)
{
    q35_suite s;
    const uint64_t seed = q35_test_seed();
    q35_suite_begin(&s, "eval", seed);
    check_math(&s);
    check_percentiles(&s, seed);
    check_refusals(&s);
    check_header(&s);
    return q35_suite_end(&s);
}
