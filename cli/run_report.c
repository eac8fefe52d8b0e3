/* What q35 run prints and writes, for its CPU path (cmd_run.c) and its GPU
 * path (cmd_run_cuda.c) alike (run_report.h). */
#include "run_report.h"

#include "core/escape.h"
#include "core/outfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether token a ranks below token b: a lower logit, or the same and a higher id. */
static bool ranks_below(const float *logits, int a, int b)
{
    return logits[a] < logits[b] || (logits[a] == logits[b] && a > b);
}

/* Restores the min-heap (by rank) of n ids below position i. */
static void sift_down(int *heap, int64_t n, int64_t i, const float *logits)
{
    for (;;) {
        int64_t low = i;
        const int64_t l = 2 * i + 1, r = l + 1;
        if (l < n && ranks_below(logits, heap[l], heap[low]))
            low = l;
        if (r < n && ranks_below(logits, heap[r], heap[low]))
            low = r;
        if (low == i)
            return;
        const int t = heap[i];
        heap[i] = heap[low];
        heap[low] = t;
        i = low;
    }
}

void run_print_top_k(const float *logits, int vocab, int64_t k)
{
    if (k > vocab)
        k = vocab;
    int *heap = malloc((size_t)(k > 0 ? k : 1) * sizeof *heap);
    if (!heap)
        return;
    /* the k best in a min-heap whose root is the worst of them: vocab * log k */
    for (int64_t j = 0; j < k; j++)
        heap[j] = (int)j;
    for (int64_t j = k / 2 - 1; j >= 0; j--)
        sift_down(heap, k, j, logits);
    for (int v = (int)k; v < vocab && k > 0; v++)
        if (ranks_below(logits, heap[0], v)) {
            heap[0] = v;
            sift_down(heap, k, 0, logits);
        }
    for (int64_t n = k; n > 1; n--) { /* heap sort: the worst goes last, leaving the best first */
        const int t = heap[0];
        heap[0] = heap[n - 1];
        heap[n - 1] = t;
        sift_down(heap, n - 1, 0, logits);
    }
    for (int64_t j = 0; j < k; j++)
        printf("  %2" PRId64 ". token %7d  logit %+.6f\n", j + 1, heap[j], (double)logits[heap[j]]);
    free(heap);
}

/* An op's achieved rate, FLOP over seconds, as the table's last column with an
 * SI prefix (" 641.2 T"); empty where it counts none. */
static const char *flop_rate(char *buf, size_t cap, double flop, double seconds)
{
    static const struct { double scale; const char *prefix; } k[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1.0, " "}};
    buf[0] = '\0';
    if (flop <= 0.0 || seconds <= 0.0)
        return buf;
    const double rate = flop / seconds;
    size_t i = 0;
    while (i + 1 < sizeof k / sizeof k[0] && rate < k[i].scale)
        i++;
    snprintf(buf, cap, " %8.1f %s", rate / k[i].scale, k[i].prefix);
    return buf;
}

void run_print_times(const q35_op_times *t, double total, int64_t tokens)
{
    printf("\n%-14s %10s %7s %8s %10s\n", "op", "ms", "%", "calls", "FLOP/s");
    double sum = 0.0;
    for (int op = 0; op < Q35_OP_COUNT; op++) {
        sum += t->seconds[op];
        char rate[32];
        if (t->calls[op])
            printf("%-14s %10.3f %6.1f%% %8" PRId64 "%s\n", q35_op_name((q35_op)op), 1e3 * t->seconds[op],
                   total > 0 ? 100.0 * t->seconds[op] / total : 0.0, t->calls[op],
                   flop_rate(rate, sizeof rate, t->flop[op], t->seconds[op]));
    }
    printf("%-14s %10.3f %6.1f%%\n", "(other)", 1e3 * (total - sum), total > 0 ? 100.0 * (total - sum) / total : 0.0);
    printf("%-14s %10.3f          %.1f tokens/s\n", "total", 1e3 * total, total > 0 ? (double)tokens / total : 0.0);
}

int run_write_logits(const char *path, const float *logits, int64_t rows, int vocab, q35_error *err)
{
    q35_outfile f;
    if (q35_outfile_open(&f, path, err))
        return -1;
    int rc = q35_outfile_write(&f, logits, (size_t)rows * (size_t)vocab * sizeof *logits, err);
    if (rc == 0)
        rc = q35_outfile_commit(&f, err);
    q35_outfile_discard(&f);
    return rc;
}

int run_report_logits(const run_args *a, const float *logits, int vocab, int64_t n)
{
    if (a->n_at) {
        q35_error err = {{0}};
        const int failed = run_write_logits(a->logits_out, logits, a->n_at, vocab, &err);
        cli_outfile_note();
        if (failed) {
            cli_error("%s", err.msg);
            return CLI_FAILED;
        }
        char shown[4 * 256 + 4];
        printf("\nwrote logits at %" PRId64 " positions to %s (float32 [%" PRId64 "][%d])\n", a->n_at,
               q35_escape_str(shown, sizeof shown, a->logits_out), a->n_at, vocab);
        printf("top-%" PRId64 " logits at position %" PRId64 ":\n", a->top_k, a->at[a->n_at - 1]);
        run_print_top_k(logits + (a->n_at - 1) * (int64_t)vocab, vocab, a->top_k);
    } else {
        printf("\ntop-%" PRId64 " logits at the last position (%" PRId64 "):\n", a->top_k, n - 1);
        run_print_top_k(logits, vocab, a->top_k);
    }
    return 0;
}
