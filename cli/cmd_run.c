/* q35 run: prefill a prompt and print where the time went and the top logits,
 * on the GPU when one is usable (cmd_run_cuda.c), else (or with --cpu) on the
 * float64 CPU reference; the output says which path ran. */
#include "run.h"

#include "model/parallel.h"
#include "model/ref_model.h"
#include "model/rng.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_help =
    "usage: q35 run [--model FILE | model options] [--prompt IDS | --random N] [options]\n"
    "\n"
    "Prefills a prompt and prints the time per op, the prefill tokens/s, and the last\n"
    "position's top-k logits: on the GPU (the CUDA model) when a device is usable, else on\n"
    "the float64 CPU reference (the \"path\" line says which). Without --model it runs the\n"
    "built-in default: the tiny shape generated in memory (seed 1, q4_k_m).\n"
    "\n"
    "  --model FILE      a qwen35 GGUF\n"
    "  --prompt IDS      token ids, comma-separated\n"
    "  --random N        a random prompt of N tokens (default 64)\n"
    "  --prompt-seed S   seed of the random prompt (default 7)\n"
    "  --chunk-rows R    rows per prefill chunk (default 512 on the CPU, 2048 on the GPU)\n"
    "  --top-k K         logits to print (default 10)\n"
    "  --logits-at P,..  positions whose logits to write (ascending)\n"
    "  --logits-out F    file for them: float32 [positions][vocab] (required with --logits-at)\n"
    "  --threads N       CPU threads (default: all)\n"
    "  --cpu             the float64 CPU reference even where a GPU is\n"
    "GPU options (each over its environment variable; see README \"The CUDA model\"):\n"
    "  --device N        CUDA device (Q35_DEVICE, default 0)\n"
    "  --attention A     f32 | flash (Q35_PREFILL_ATTENTION; default f32 while it fits, flash past it)\n"
    "  --gemm G          f32 | f16 (Q35_PREFILL_GEMM; default f32)\n"
    "  --delta D         scan | chunked (Q35_PREFILL_DELTA; default chunked on GEMM f16, scan on f32)\n"
    "  --deterministic   batch-invariant projections and attention (Q35_DETERMINISTIC=1)\n"
    "  --scores-budget B bytes of f32 attention scores per pass (Q35_ATTN_SCORES_BUDGET; 1 GiB)\n"
    "  --free-cap MIB    plan as if the device had at most this much free memory\n"
    "model options (without --model):\n";

static int parse(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    cli_model_init(&a->model);
    q35_cuda_options_init(&a->cuda);
    a->random_n = 64;
    a->prompt_seed = 7;
    a->chunk_rows = 512;
    a->top_k = 10;
    for (int i = 1; i < argc; i++) {
        const int r = cli_model_option(argc, argv, &i, &a->model);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *o = argv[i], *v = NULL;
        int64_t n;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            printf("%s%s", k_help, cli_model_options_help);
            return 0;
        }
        if (strcmp(o, "--cpu") == 0 || strcmp(o, "--deterministic") == 0) {
            a->cpu = a->cpu || strcmp(o, "--cpu") == 0;
            a->cuda.deterministic = strcmp(o, "--deterministic") == 0 ? 1 : a->cuda.deterministic;
            continue;
        }
        if (!(v = cli_value(argc, argv, &i)))
            return 2;
        if (strcmp(o, "--model") == 0)
            a->path = v;
        else if (strcmp(o, "--prompt") == 0) {
            if (cli_int_list(o, v, INT32_MIN, INT32_MAX, &a->prompt, &a->n_prompt))
                return 2;
        } else if (strcmp(o, "--random") == 0) {
            if (cli_int(o, v, 1, 1 << 24, &a->random_n))
                return 2;
        } else if (strcmp(o, "--prompt-seed") == 0) {
            if (cli_int(o, v, 0, INT64_MAX, &a->prompt_seed))
                return 2;
        } else if (strcmp(o, "--chunk-rows") == 0) {
            if (cli_int(o, v, 1, 1 << 20, &a->chunk_rows))
                return 2;
            a->cuda.chunk_rows = a->chunk_rows;
        } else if (strcmp(o, "--device") == 0) {
            if (cli_int(o, v, 0, 1024, &n))
                return 2;
            a->cuda.device = (int)n;
        } else if (strcmp(o, "--attention") == 0 || strcmp(o, "--gemm") == 0 || strcmp(o, "--delta") == 0) {
            const bool attn = strcmp(o, "--attention") == 0, delta = strcmp(o, "--delta") == 0;
            const char *first = delta ? "scan" : "f32", *second = attn ? "flash" : delta ? "chunked" : "f16";
            if (strcmp(v, first) != 0 && strcmp(v, second) != 0) {
                fprintf(stderr, "q35 run: %s wants %s or %s, got '%s'\n", o, first, second, v);
                return 2;
            }
            const bool is_first = strcmp(v, first) == 0;
            if (attn)
                a->cuda.attention = is_first ? Q35_ATTN_F32 : Q35_ATTN_FLASH;
            else if (delta)
                a->cuda.delta = is_first ? Q35_DELTA_SCAN : Q35_DELTA_CHUNKED;
            else
                a->cuda.gemm = is_first ? Q35_GEMM_F32 : Q35_GEMM_F16;
        } else if (strcmp(o, "--scores-budget") == 0) {
            if (cli_int(o, v, 1, INT64_MAX, &n))
                return 2;
            a->cuda.scores_budget = (size_t)n;
        } else if (strcmp(o, "--free-cap") == 0) {
            if (cli_int(o, v, 1, INT64_MAX / (1 << 20), &n))
                return 2;
            a->cuda.free_cap = (uint64_t)n << 20;
        } else if (strcmp(o, "--top-k") == 0) {
            if (cli_int(o, v, 0, 1 << 20, &a->top_k))
                return 2;
        } else if (strcmp(o, "--logits-at") == 0) {
            if (cli_int_list(o, v, 0, INT64_MAX, &a->at, &a->n_at))
                return 2;
        } else if (strcmp(o, "--logits-out") == 0)
            a->logits_out = v;
        else if (strcmp(o, "--threads") == 0) {
            if (cli_int(o, v, 1, 256, &n))
                return 2;
            q35_set_threads((int)n);
        } else {
            fprintf(stderr, "q35 run: unknown option '%s'\n", o);
            return 2;
        }
    }
    if (a->n_at && !a->logits_out) {
        fprintf(stderr, "q35 run: --logits-at needs --logits-out FILE\n");
        return 2;
    }
    return -1; /* go on */
}

void run_print_top_k(const float *logits, int vocab, int64_t k)
{
    if (k > vocab)
        k = vocab;
    int *idx = malloc((size_t)(k > 0 ? k : 1) * sizeof *idx);
    if (!idx)
        return;
    for (int64_t j = 0; j < k; j++) { /* selection: k is small */
        int best = -1;
        for (int v = 0; v < vocab; v++) {
            bool taken = false;
            for (int64_t p = 0; p < j && !taken; p++)
                taken = idx[p] == v;
            if (!taken && (best < 0 || logits[v] > logits[best]))
                best = v;
        }
        idx[j] = best;
    }
    for (int64_t j = 0; j < k; j++)
        printf("  %2" PRId64 ". token %7d  logit %+.6f\n", j + 1, idx[j], (double)logits[idx[j]]);
    free(idx);
}

void run_print_times(const q35_op_times *t, double total, int64_t tokens)
{
    printf("\n%-14s %10s %7s %8s\n", "op", "ms", "%", "calls");
    double sum = 0.0;
    for (int op = 0; op < Q35_OP_COUNT; op++) {
        sum += t->seconds[op];
        if (t->calls[op])
            printf("%-14s %10.3f %6.1f%% %8" PRId64 "\n", q35_op_name((q35_op)op), 1e3 * t->seconds[op],
                   total > 0 ? 100.0 * t->seconds[op] / total : 0.0, t->calls[op]);
    }
    printf("%-14s %10.3f %6.1f%%\n", "(other)", 1e3 * (total - sum), total > 0 ? 100.0 * (total - sum) / total : 0.0);
    printf("%-14s %10.3f          %.1f tokens/s\n", "total", 1e3 * total, total > 0 ? (double)tokens / total : 0.0);
}

int run_write_logits(const char *path, const float *logits, int64_t rows, int vocab)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const size_t count = (size_t)rows * (size_t)vocab;
    const int rc = fwrite(logits, sizeof *logits, count, f) == count ? 0 : -1;
    return fclose(f) != 0 ? -1 : rc;
}

int run_report_logits(const run_args *a, const float *logits, int vocab, int64_t n)
{
    if (a->n_at) {
        if (run_write_logits(a->logits_out, logits, a->n_at, vocab)) {
            fprintf(stderr, "q35 run: cannot write %s\n", a->logits_out);
            return 1;
        }
        printf("\nwrote logits at %" PRId64 " positions to %s (float32 [%" PRId64 "][%d])\n", a->n_at, a->logits_out,
               a->n_at, vocab);
        printf("top-%" PRId64 " logits at position %" PRId64 ":\n", a->top_k, a->at[a->n_at - 1]);
        run_print_top_k(logits + (a->n_at - 1) * (int64_t)vocab, vocab, a->top_k);
    } else {
        printf("\ntop-%" PRId64 " logits at the last position (%" PRId64 "):\n", a->top_k, n - 1);
        run_print_top_k(logits, vocab, a->top_k);
    }
    return 0;
}

/* The float64 CPU reference: the prefill timed per op on the host. */
static int run_cpu(const run_args *a, const q35_model *m, const int32_t *tokens, int64_t n, const char *why)
{
    const q35_hparams *hp = &m->hp;
    q35_error err = {{0}};
    q35_ref_state st = {0};
    const size_t count = (size_t)(a->n_at > 0 ? a->n_at : 1) * (size_t)hp->n_vocab;
    double *logits = malloc(count * sizeof *logits);
    float *out = malloc(count * sizeof *out);
    int rc = 1;
    printf("path    CPU float64 reference%s%s%s, %d threads\n", why ? " (" : "", why ? why : "", why ? ")" : "",
           q35_threads());
    printf("prompt  %" PRId64 " tokens, chunk rows %" PRId64 "\n", n, a->chunk_rows);
    if (!logits || !out) {
        fprintf(stderr, "q35 run: out of memory for the logits\n");
        goto out;
    }
    if (q35_ref_state_init(&st, m, n, &err)) {
        fprintf(stderr, "q35 run: %s\n", err.msg);
        goto out;
    }
    q35_op_times times;
    memset(&times, 0, sizeof times);
    const double t0 = q35_now();
    if (q35_ref_prefill(m, &st, tokens, n, 0, a->chunk_rows, a->at, a->n_at, logits, &times, &err)) {
        fprintf(stderr, "q35 run: %s\n", err.msg);
        goto out;
    }
    run_print_times(&times, q35_now() - t0, n);
    for (size_t i = 0; i < count; i++)
        out[i] = (float)logits[i];
    rc = run_report_logits(a, out, hp->n_vocab, n);
out:
    q35_ref_state_free(&st);
    free(logits);
    free(out);
    return rc;
}

int q35_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = 1;
    q35_error err = {{0}};
    q35_model *m = NULL;
    int32_t *tokens = NULL;
    const double t_load = q35_now();
    q35_gen_options o = cli_model_resolve(&a.model);
    if (a.path ? q35_model_open(&m, a.path, &err) : q35_generate_model(&o, &m, &err)) {
        fprintf(stderr, "q35 run: %s\n", err.msg);
        goto out;
    }
    const double load_s = q35_now() - t_load;
    const q35_hparams *hp = &m->hp;
    const int64_t n = a.prompt ? a.n_prompt : a.random_n;
    tokens = malloc((size_t)n * sizeof *tokens);
    if (!tokens) {
        fprintf(stderr, "q35 run: out of memory for a %" PRId64 "-token prompt\n", n);
        goto out;
    }
    q35_rng r;
    q35_rng_seed(&r, (uint64_t)a.prompt_seed);
    for (int64_t i = 0; i < n; i++)
        tokens[i] = a.prompt ? (int32_t)a.prompt[i] : (int32_t)(q35_rng_next(&r) % (uint64_t)hp->n_vocab);
    if (a.path)
        printf("model   %s\n", a.path);
    else
        printf("model   built-in: shape %s, %d layers, vocab %d, mix %s, seed %llu (generated in %.2f s)\n",
               o.shape.name, o.shape.n_layer, o.shape.n_vocab, o.mix, (unsigned long long)o.seed, load_s);
    printf("        H %d, %d DeltaNet + %d attention layers\n", hp->n_embd, hp->n_delta, hp->n_attn);
    if (m->note[0])
        printf("note    %s\n", m->note);
    char why[256] = "--cpu";
    rc = a.cpu ? 2 : run_cuda(&a, m, tokens, n, why, sizeof why);
    if (rc == 2)
        rc = run_cpu(&a, m, tokens, n, why);
out:
    q35_model_free(m);
    free(tokens);
    free(a.prompt);
    free(a.at);
    return rc;
}
