/* q35 run's pieces shared by its CPU path (cmd_run.c) and its GPU path
 * (cmd_run_cuda.c). */
#ifndef Q35_CLI_RUN_H
#define Q35_CLI_RUN_H

#include "cli.h"
#include "model/cuda_model.h"
#include "model/op_times.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct run_args {
    cli_model model;
    const char *path;               /* --model */
    int64_t *prompt, n_prompt, random_n, prompt_seed, chunk_rows, top_k;
    int64_t *at, n_at;              /* --logits-at */
    const char *logits_out;         /* --logits-out */
    q35_gen_options gen;            /* the built-in model the model options make (without --model) */
    bool cpu;                       /* --cpu: the float64 reference even where a GPU is */
    q35_cuda_options cuda;          /* --attention, --gemm, --deterministic, --device, --chunk-rows, ... */
} run_args;

/* The top-k of vocab logits, one line each. */
void run_print_top_k(const float *logits, int vocab, int64_t k);

/* The per-op table, the rest of `total` as "(other)", and tokens/s. */
void run_print_times(const q35_op_times *t, double total, int64_t tokens);

/* float32 [rows][vocab] to a file, through a temporary file renamed into
 * place (core/outfile.h); 0, or -1 with a message. */
int run_write_logits(const char *path, const float *logits, int64_t rows, int vocab, q35_error *err);

/* The logits the run asked for (--logits-at, else the last position) printed
 * and written; 0, or 1 when the file cannot be written (said on stderr). */
int run_report_logits(const run_args *a, const float *logits, int vocab, int64_t n);

/* Runs the prompt on the GPU. 0 done, 1 failed (said on stderr), 2 no usable
 * device (why filled): the caller falls back to the CPU reference. */
int run_cuda(const run_args *a, const q35_model *m, const int32_t *tokens, int64_t n, char *why, size_t cap);

#endif /* Q35_CLI_RUN_H */
