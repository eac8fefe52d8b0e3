/* q35 run --eval: a token file through one path in windows, perplexity and,
 * against a saved reference, the KL divergence report (model/eval.h). */
#include "run.h"

#include "core/escape.h"
#include "core/outfile.h"
#include "core/parallel.h"
#include "model/eval.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The token file: int32 little-endian ids, each inside the vocabulary. */
static int32_t *read_tokens(const char *path, int vocab, int64_t *n)
{
    char shown[4 * 256 + 4];
    q35_escape_str(shown, sizeof shown, path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error("--eval %s: cannot open it", shown);
        return NULL;
    }
    int32_t *t = NULL;
    int64_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            int32_t *g = realloc(t, (size_t)cap * sizeof *g);
            if (!g) {
                cli_error("--eval %s: out of memory", shown);
                free(t);
                fclose(f);
                return NULL;
            }
            t = g;
        }
        const size_t got = fread(t + len, 1, (size_t)(cap - len) * 4, f);
        if (got % 4) {
            cli_error("--eval %s: %" PRId64 " bytes is not a whole number of int32 token ids", shown,
                      4 * len + (int64_t)got);
            free(t);
            fclose(f);
            return NULL;
        }
        len += (int64_t)(got / 4);
        if (got == 0 || len < cap)
            break;
    }
    const bool bad = ferror(f);
    fclose(f);
    if (bad) {
        cli_error("--eval %s: a read failed", shown);
        free(t);
        return NULL;
    }
    for (int64_t i = 0; i < len; i++)
        if (t[i] < 0 || t[i] >= vocab) {
            cli_error("--eval %s: token %" PRId32 " at index %" PRId64 " is outside the vocabulary (0..%d)", shown,
                      t[i], i, vocab - 1);
            free(t);
            return NULL;
        }
    *n = len;
    return t;
}

static void print_report(const q35_eval_report *r, bool ref)
{
    printf("eval    %" PRId64 " scored positions: perplexity %.6f", r->n, r->ppl);
    if (!ref) {
        printf("\n");
        return;
    }
    printf(" (reference %.6f, diff %+.6f, ln(ppl/ref) %+.3e)\n", r->ppl_ref, r->dppl, r->ln_ratio);
    printf("kld     mean %.6e +- %.2e, median %.6e, p90 %.3e, p95 %.3e, p99 %.3e, p99.9 %.3e, min %.3e, max %.3e\n",
           r->kld_mean, r->kld_err, r->kld_median, r->kld_p90, r->kld_p95, r->kld_p99, r->kld_p999, r->kld_min,
           r->kld_max);
    printf("top     same top token %.3f %%; dp mean %+.3e, rms %.3e\n", 100.0 * r->same_top, r->dp_mean, r->dp_rms);
}

static int write_json(const char *path, const run_args *a, const q35_eval_report *r, const char *path_line,
                      int64_t windows, double seconds)
{
    q35_outfile f;
    q35_error err = {{0}};
    if (q35_outfile_open(&f, path, &err)) {
        cli_error("--eval-json: %s", err.msg);
        return 1;
    }
    char buf[4096];
#define NUM(x) (isfinite(x) ? (x) : 0.0)
    const bool ref = a->ref_logits != NULL;
    int n = snprintf(buf, sizeof buf,
                     "{\"path\": \"%s\", \"ctx\": %" PRId64 ", \"windows\": %" PRId64 ", \"positions\": %" PRId64
                     ", \"seconds\": %.3f, \"ppl\": %.9g",
                     path_line, a->ctx, windows, r->n, seconds, NUM(r->ppl));
    if (ref)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      ", \"ppl_ref\": %.9g, \"dppl\": %.9g, \"ln_ppl_ratio\": %.9g, \"kld_mean\": %.9g, "
                      "\"kld_err\": %.9g, \"kld_median\": %.9g, \"kld_p90\": %.9g, \"kld_p95\": %.9g, "
                      "\"kld_p99\": %.9g, \"kld_p999\": %.9g, \"kld_min\": %.9g, \"kld_max\": %.9g, "
                      "\"same_top\": %.9g, \"dp_mean\": %.9g, \"dp_rms\": %.9g",
                      r->ppl_ref, r->dppl, r->ln_ratio, r->kld_mean, r->kld_err, r->kld_median, r->kld_p90, r->kld_p95,
                      r->kld_p99, r->kld_p999, r->kld_min, r->kld_max, r->same_top, r->dp_mean, r->dp_rms);
#undef NUM
    n += snprintf(buf + n, sizeof buf - (size_t)n, "}\n");
    if (q35_outfile_write(&f, buf, (size_t)n, &err) || q35_outfile_commit(&f, &err)) {
        q35_outfile_discard(&f);
        cli_error("--eval-json: %s", err.msg);
        return 1;
    }
    q35_outfile_discard(&f);
    return 0;
}

int run_eval(const run_args *a, int vocab, const char *path_line, run_window_fn fn, void *ctx)
{
    int64_t n = 0;
    int32_t *tokens = read_tokens(a->eval, vocab, &n);
    if (!tokens)
        return 1;
    int rc = 1;
    q35_error err = {{0}};
    FILE *ref = NULL;
    q35_outfile save;
    bool saving = false;
    q35_eval_acc acc;
    memset(&acc, 0, sizeof acc);
    const int64_t first = a->ctx / 2, scored = q35_eval_scored(a->ctx);
    int64_t windows = n / a->ctx;
    if (a->chunks > 0 && a->chunks < windows)
        windows = a->chunks;
    float *logits = malloc((size_t)scored * (size_t)vocab * sizeof *logits);
    float *row = malloc((size_t)vocab * sizeof *row);
    double *lp = malloc((size_t)vocab * sizeof *lp), *rlp = malloc((size_t)vocab * sizeof *rlp);
    int64_t *at = malloc((size_t)scored * sizeof *at);
    if (windows < 1) {
        cli_error("--eval: %" PRId64 " tokens, fewer than one window of --ctx %" PRId64, n, a->ctx);
        goto out;
    }
    if (!logits || !row || !lp || !rlp || !at) {
        cli_error("out of memory for %" PRId64 " positions of logits", scored);
        goto out;
    }
    for (int64_t i = 0; i < scored; i++)
        at[i] = first + i;
    const q35_eval_file hdr = {.vocab = (uint32_t)vocab, .ctx = (uint32_t)a->ctx,
                               .positions = (uint64_t)(windows * scored), .tokens = (uint64_t)(windows * a->ctx),
                               .hash = q35_eval_tokens_hash(tokens, windows * a->ctx)};
    if (a->ref_logits) {
        char shown[4 * 256 + 4];
        q35_escape_str(shown, sizeof shown, a->ref_logits);
        ref = fopen(a->ref_logits, "rb");
        if (!ref) {
            cli_error("--ref-logits %s: cannot open it", shown);
            goto out;
        }
        uint8_t h[Q35_EVAL_HEADER];
        if (fread(h, 1, sizeof h, ref) != sizeof h) {
            cli_error("--ref-logits %s: shorter than the %d-byte header of a logits file", shown, Q35_EVAL_HEADER);
            goto out;
        }
        if (q35_eval_header_check(h, shown, &hdr, &err)) {
            cli_error("--ref-logits %s", err.msg);
            goto out;
        }
    }
    if (a->save_logits) {
        if (q35_outfile_open(&save, a->save_logits, &err)) {
            cli_error("--save-logits: %s", err.msg);
            goto out;
        }
        saving = true;
        uint8_t h[Q35_EVAL_HEADER];
        q35_eval_header_pack(&hdr, h);
        if (q35_outfile_write(&save, h, sizeof h, &err)) {
            cli_error("--save-logits: %s", err.msg);
            goto out;
        }
    }
    if (q35_eval_acc_init(&acc, vocab, ref != NULL, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    printf("eval    %" PRId64 " windows of %" PRId64 " tokens (of %" PRId64 " in the file), %" PRId64
           " positions scored a window (%" PRId64 "..%" PRId64 ")\n", windows, a->ctx, n, scored, first, a->ctx - 2);
    const double t0 = q35_now();
    for (int64_t w = 0; w < windows; w++) {
        const int32_t *win = tokens + w * a->ctx;
        if (fn(ctx, win, a->ctx, at, scored, logits, &err)) {
            cli_error("window %" PRId64 ": %s", w, err.msg);
            goto out;
        }
        for (int64_t i = 0; i < scored; i++) {
            q35_eval_log_softmax(logits + (size_t)i * (size_t)vocab, vocab, lp, NULL);
            if (ref) {
                if (fread(row, sizeof *row, (size_t)vocab, ref) != (size_t)vocab) {
                    cli_error("--ref-logits: ends inside window %" PRId64 "'s position %" PRId64, w, at[i]);
                    goto out;
                }
                for (int k = 0; k < vocab; k++)
                    rlp[k] = row[k];
            }
            if (saving) {
                for (int k = 0; k < vocab; k++)
                    row[k] = (float)lp[k];
                if (q35_outfile_write(&save, row, (size_t)vocab * sizeof *row, &err)) {
                    cli_error("--save-logits: %s", err.msg);
                    goto out;
                }
            }
            if (q35_eval_add(&acc, lp, ref ? rlp : NULL, win[at[i] + 1], &err)) {
                cli_error("%s", err.msg);
                goto out;
            }
        }
    }
    const double seconds = q35_now() - t0;
    if (saving && q35_outfile_commit(&save, &err)) {
        cli_error("--save-logits: %s", err.msg);
        goto out;
    }
    const q35_eval_report r = q35_eval_report_of(&acc);
    printf("        %.2f s, %.1f tokens/s\n", seconds, seconds > 0 ? (double)(windows * a->ctx) / seconds : 0.0);
    print_report(&r, ref != NULL);
    if (a->save_logits)
        printf("saved   the scored positions' log-probabilities: %s\n", a->save_logits);
    rc = a->eval_json ? write_json(a->eval_json, a, &r, path_line, windows, seconds) : 0;
out:
    if (saving)
        q35_outfile_discard(&save);
    if (ref)
        fclose(ref);
    q35_eval_acc_free(&acc);
    free(tokens);
    free(logits);
    free(row);
    free(lp);
    free(rlp);
    free(at);
    return rc;
}
