/* What q35 run prints and writes, shared by its CPU path (cmd_run.c) and its
 * GPU path (cmd_run_cuda.c): run_report.c. */
#ifndef Q35_CLI_RUN_REPORT_H
#define Q35_CLI_RUN_REPORT_H

#include "run.h"

#include "core/error.h"
#include "model/op_times.h"

#include <stdint.h>

/* The top-k of vocab logits, one line each, highest first (ties: the lower id
 * first); k past the vocabulary prints it all. O(vocab log k). */
void run_print_top_k(const float *logits, int vocab, int64_t k);

/* The per-op table (ms, share, calls, and the achieved FLOP/s of the ops that
 * count FLOP: the projections, attention), the rest of `total` as "(other)",
 * and tokens/s. */
void run_print_times(const q35_op_times *t, double total, int64_t tokens);

/* float32 [rows][vocab] to a file, through a temporary file renamed into
 * place (core/outfile.h); 0, or -1 with a message. */
int run_write_logits(const char *path, const float *logits, int64_t rows, int vocab, q35_error *err);

/* The logits the run asked for (--logits-at, else the last position) printed
 * and written; 0, or 1 when the file cannot be written (said on stderr). */
int run_report_logits(const run_args *a, const float *logits, int vocab, int64_t n);

#endif /* Q35_CLI_RUN_REPORT_H */
