/* q35 run's arguments, and its GPU path (cmd_run_cuda.c) that the command
 * (cmd_run.c) calls; what both print: run_report.h. */
#ifndef Q35_CLI_RUN_H
#define Q35_CLI_RUN_H

#include "cli.h"
#include "kernels/linear.h"
#include "model/cuda_model.h"
#include "model/op_times.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct run_args {
    cli_model model;
    const char *path;               /* --model */
    int64_t *prompt, n_prompt, random_n, prompt_seed, chunk_rows, top_k;
    int64_t decode;                 /* --decode: decode steps after the prefill (GPU), 0 none */
    int64_t *at, n_at;              /* --logits-at */
    const char *logits_out;         /* --logits-out */
    q35_gen_options gen;            /* the built-in model the model options make (without --model) */
    bool cpu;                       /* --cpu (or --act-quant): the float64 reference even where a GPU is */
    q35_act_quant act;              /* --act-quant: the reference's activations (kernels/linear.h) */
    q35_cuda_options cuda;          /* --attention, --gemm, --deterministic, --device, --chunk-rows, ... */
    const char *eval;               /* --eval: a token file to score (run_eval.c), or NULL */
    int64_t ctx, chunks;            /* --ctx (window), --chunks (windows at most; 0 all) */
    const char *save_logits, *ref_logits, *eval_json; /* --save-logits, --ref-logits, --eval-json */
    bool eval_steps;                /* --eval-steps: the scored positions through decode steps (GPU) */
} run_args;

/* One window through a path, from an empty state: the logits of positions
 * at[0..n_at) into logits [n_at][vocab]. 0, or -1 with err. */
typedef int (*run_window_fn)(void *ctx, const int32_t *tokens, int64_t n, const int64_t *at, int64_t n_at,
                             float *logits, q35_error *err);

/* --eval: the token file through fn, window by window (model/eval.h), the report
 * printed (and --save-logits, --eval-json written). path_line names the path. 0
 * done, 1 failed (said on stderr). */
int run_eval(const run_args *a, int vocab, const char *path_line, run_window_fn fn, void *ctx);

/* --eval on the GPU: 0 done, 1 failed, 2 no usable device (why filled). */
int run_cuda_eval(const run_args *a, const q35_model *m, char *why, size_t cap);

/* Runs the prompt on the GPU. 0 done, 1 failed (said on stderr), 2 no usable
 * device (why filled): the caller falls back to the CPU reference. */
int run_cuda(const run_args *a, const q35_model *m, const int32_t *tokens, int64_t n, char *why, size_t cap);

#endif /* Q35_CLI_RUN_H */
