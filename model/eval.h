/* Perplexity and KL divergence of a path's logits, measured as llama.cpp's
 * `llama-perplexity --kl-divergence` measures a quant (q35 run --eval).
 *
 * Windows: a token file of n tokens is cut into floor(n / ctx) windows of ctx
 * tokens, each run from an empty state; in each, the logits at positions
 * ctx/2 .. ctx-2 are scored against the next token (the first half is context
 * only), ctx - 1 - ctx/2 positions a window, as llama-perplexity scores them.
 *
 * Per scored position, with p = softmax of the path's logits and p_ref the
 * reference path's: NLL = -log p(next); KLD = sum p_ref (log p_ref - log p)
 * (>= 0, in nats); "same top" when both argmaxes are the same token;
 * Δp = p(next) - p_ref(next). All in float64 from float32 logits.
 *
 * The report: perplexity exp(mean NLL) of the path and of the reference, their
 * difference and ln(ppl / ppl_ref); mean KLD with its standard error, median,
 * 90/95/99/99.9th percentiles (the sorted value at floor(q * (n - 1))), min and max;
 * same top %; mean Δp and RMS Δp.
 *
 * A reference is saved as a logits file: a 64-byte header ("Q35LOGP1", u32
 * vocab, u32 ctx, u64 scored positions, u64 tokens, u64 FNV-1a hash of the
 * token ids, zeros) then the scored positions' log-probabilities, float32
 * [positions][vocab]. Reading one checks each header field against the run. */
#ifndef Q35_EVAL_H
#define Q35_EVAL_H

#include "core/error.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Scored positions in a window of ctx tokens (ctx >= 4). */
int64_t q35_eval_scored(int64_t ctx);

/* log softmax of vocab float32 logits, in float64; the argmax into *top (or NULL). */
void q35_eval_log_softmax(const float *logits, int vocab, double *out, int *top);

typedef struct q35_eval_acc {
    int vocab;
    bool has_ref;
    int64_t n;                    /* positions added */
    double nll, nll_ref;          /* sums */
    double kld, kld_sq;           /* sums */
    double dp, dp_sq;             /* sums of Δp and Δp^2 */
    int64_t same_top;
    double *klds;                 /* every position's KLD, for the percentiles */
    int64_t cap;
} q35_eval_acc;

int q35_eval_acc_init(q35_eval_acc *a, int vocab, bool has_ref, q35_error *err);
void q35_eval_acc_free(q35_eval_acc *a);

/* Adds a scored position: the path's log-probabilities, the reference's (NULL
 * when has_ref is false), the next token (in [0, vocab)). */
int q35_eval_add(q35_eval_acc *a, const double *logp, const double *ref_logp, int32_t next, q35_error *err);

typedef struct q35_eval_report {
    int64_t n;
    double ppl, ppl_ref, dppl, ln_ratio;         /* ppl_ref, dppl, ln_ratio: NAN without a reference */
    double kld_mean, kld_err, kld_median, kld_p90, kld_p95, kld_p99, kld_p999, kld_min, kld_max;
    double same_top;                             /* fraction */
    double dp_mean, dp_rms;
} q35_eval_report;

/* The report of what was added (sorts a->klds). */
q35_eval_report q35_eval_report_of(q35_eval_acc *a);

/* FNV-1a of the token ids' bytes (little-endian int32). */
uint64_t q35_eval_tokens_hash(const int32_t *tokens, int64_t n);

/* The logits file's header. */
typedef struct q35_eval_file {
    uint32_t vocab, ctx;
    uint64_t positions, tokens, hash;
} q35_eval_file;

#define Q35_EVAL_HEADER 64 /* bytes of the header */

/* The header's bytes. */
void q35_eval_header_pack(const q35_eval_file *h, uint8_t out[Q35_EVAL_HEADER]);

/* Checks a header's bytes against want (every field); err names the field,
 * both values and the file `name`. */
int q35_eval_header_check(const uint8_t in[Q35_EVAL_HEADER], const char *name, const q35_eval_file *want,
                          q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_EVAL_H */
