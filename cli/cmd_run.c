/* q35 run: prefill a prompt and print where the time went and the top logits,
 * on the GPU when one is usable (cmd_run_cuda.c), else (or with --cpu) on the
 * float64 CPU reference; the output says which path ran. */
#include "run.h"
#include "run_report.h"

#include "core/escape.h"
#include "core/outfile.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "model/paths.h"
#include "model/ref_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const k_help =
    "usage: q35 run [--model FILE | model options] [--prompt IDS | --random N] [options]\n"
    "\n"
    "Prefills a prompt and prints the time per op, the prefill tokens/s, and the last\n"
    "position's top-k logits: on the GPU (the CUDA model) when a device is usable, else on\n"
    "the float64 CPU reference (the \"path\" line says which). Without --model it runs the\n"
    "built-in default: the tiny shape generated in memory (seed 1, q4_k_m). Each option at\n"
    "most once; --prompt excludes --random and --prompt-seed, --model the model options.\n"
    "\n"
    "  --model FILE      a qwen35 GGUF\n"
    "  --prompt IDS      token ids, comma-separated\n"
    "  --random N        a random prompt of N tokens (default 64)\n"
    "  --prompt-seed S   seed of the random prompt (default 7)\n"
    "  --chunk-rows R    rows per prefill chunk (default 512 on the CPU, 2048 on the GPU,\n"
    "                    8192 there on the f16 and fp8 GEMM paths)\n"
    "  --top-k K         logits to print (default 10)\n"
    "  --decode N        then N decode steps (GPU): their time per op and their tokens/s\n"
    "  --logits-at P,..  positions whose logits to write (ascending)\n"
    "  --logits-out F    file for them: float32 [positions][vocab] (required with --logits-at;\n"
    "                    written through a temporary file, renamed into place when complete)\n"
    "  --threads N       CPU threads (default: all)\n"
    "  --cpu             the float64 CPU reference even where a GPU is (no GPU option with it)\n"
    "  --act-quant M     exact | ggml | decode-q8: runs the CPU reference; ggml rounds each product's\n"
    "                    activations as llama.cpp's CPU backend does (docs/SPEC.md), decode-q8 as the\n"
    "                    decode step's 8-bit GEMV does (--switch decode-q8), in every product; default exact\n";
static const char *const k_help_gpu =
    "GPU options (each over its environment variable, over the default; model/README.md has the table).\n"
    "The default is the fast path: the f16 GEMM, flash attention, the chunked delta rule, the sm_90a\n"
    "kernels on sm_90; the first lines say which path ran and its accuracy tier.\n"
    "  --exact           the exact path the parity suites compare against: f32 GEMM, f32 attention,\n"
    "                    the scan (no --attention, --gemm, --delta with it)\n"
    "  --device N        CUDA device (Q35_DEVICE, default 0)\n"
    "  --attention A     f32 | flash (Q35_PREFILL_ATTENTION; default flash where it runs, else f32)\n"
    "  --gemm G          f32 | f16 | fp8 (Q35_PREFILL_GEMM; default f16; fp8: opt-in, sm_89+, e4m3;\n"
    "                    its tier printed: the logits against one more prefill through the f32 GEMM)\n"
    "  --delta D         scan | chunked (Q35_PREFILL_DELTA; default chunked on GEMM f16 and fp8, scan on f32)\n"
    "  --deterministic   batch-invariant projections and attention (Q35_DETERMINISTIC=1)\n"
    "  --flash-kernel K  sm90 | mma: flash over the f16 cache (Q35_FLASH_KERNEL; default sm90 where it runs)\n"
    "  --gemm-kernel K   cublaslt | cublas | sm90: the f16 GEMM's projections (Q35_GEMM_KERNEL; default\n"
    "                    cublaslt, its candidates timed per shape)\n"
    "  --switch LIST     name=on|off,...: the switches (Q35_SWITCHES; each name given overrides it):\n"
    "                    merge, swiglu, prep, qk16, prune (on), gate, graphs, f16-gu, fp8-gu-bf16 (on),\n"
    "                    tune-steady, decode-graph (on), decode-q8 (on), decode-split (on), -pdl (on), -fuse,\n"
    "                    decode-act-q8 (on), decode-overlap\n"
    "  --scores-budget B bytes of f32 attention scores per pass (Q35_ATTN_SCORES_BUDGET; 1 GiB)\n"
    "  --flash-variant V a variant of the chosen flash kernel (Q35_FLASH_VARIANT; its default: overlap on\n"
    "                    sm90, kv64 on mma where it fits); an unknown name is refused, listing the names\n"
    "  --delta-rule-variant V\n"
    "                    the scan's variant (Q35_DELTA_RULE_VARIANT; default r2pni, l16r2pn where dv needs it)\n"
    "  --delta-chunk-variant V\n"
    "                    the chunked delta rule's variant (Q35_DELTA_CHUNK_VARIANT; tb4wm2kh on sm_90, else tb4)\n"
    "  --gemm-sm90-variant V\n"
    "                    the sm_90a GEMM's variant, where the model runs it (Q35_GEMM_SM90_VARIANT; default persist_tail)\n"
    "  --gemv-q8-variant V\n"
    "                    the 8-bit-activation GEMV's variant, where decode-q8 runs it (Q35_GEMV_Q8_VARIANT; persist)\n"
    "                    (a variant this build lacks, or one the device cannot run: a warning, the default)\n"
    "  --free-cap MIB    plan as if the device had at most this much free memory\n";

static const char *const k_help_eval =
    "Scoring a text (in place of a prompt; as llama-perplexity --kl-divergence scores a quant):\n"
    "  --eval FILE       int32 token ids: cut into windows of --ctx tokens, each from an empty state;\n"
    "                    positions ctx/2..ctx-2 of each scored against the next token: perplexity\n"
    "  --ctx N           tokens a window (default 512)\n"
    "  --chunks K        at most K windows (default: every whole window of the file)\n"
    "  --save-logits F   the scored positions' log-probabilities, a reference for a later --ref-logits\n"
    "  --ref-logits F    a reference saved so (same tokens, --ctx, vocabulary; checked): KL divergence\n"
    "                    (mean +- its standard error, median, p90..p99.9, max), same top token %,\n"
    "                    perplexity against the reference's, dp (model/eval.h)\n"
    "  --eval-json F     the report as JSON too\n"
    "  --eval-steps      the scored positions through decode steps (GPU): each window's first ctx/2\n"
    "                    tokens prefilled, then one step a position: the decode path's logits (its\n"
    "                    graph, grouped GEMVs, 8-bit activations unless --switch decode-q8=off)\n"
    "model options (without --model):\n";

enum {
    O_MODEL = CLI_MODEL_OPTS, O_PROMPT, O_RANDOM, O_PROMPT_SEED, O_CHUNK_ROWS, O_TOP_K, O_LOGITS_AT, O_LOGITS_OUT,
    O_THREADS, O_CPU, O_DEVICE, O_ATTENTION, O_GEMM, O_DELTA, O_DETERMINISTIC, O_SCORES_BUDGET, O_FREE_CAP,
    O_FLASH_VARIANT, O_DELTA_RULE_VARIANT, O_DELTA_CHUNK_VARIANT, O_GEMM_SM90_VARIANT, O_GEMV_Q8_VARIANT, O_DECODE, O_EXACT,
    O_FLASH_KERNEL, O_GEMM_KERNEL, O_SWITCH, O_ACT_QUANT, O_EVAL, O_CTX, O_CHUNKS, O_SAVE_LOGITS, O_REF_LOGITS,
    O_EVAL_JSON, O_EVAL_STEPS, O_COUNT
};
static const cli_option k_opts[O_COUNT] = {
    CLI_MODEL_OPTIONS,
    [O_MODEL] = {"--model", "FILE"}, [O_PROMPT] = {"--prompt", "IDS"}, [O_RANDOM] = {"--random", "N"},
    [O_PROMPT_SEED] = {"--prompt-seed", "S"}, [O_CHUNK_ROWS] = {"--chunk-rows", "R"}, [O_TOP_K] = {"--top-k", "K"},
    [O_LOGITS_AT] = {"--logits-at", "P,.."}, [O_LOGITS_OUT] = {"--logits-out", "F"},
    [O_THREADS] = {"--threads", "N"}, [O_CPU] = {"--cpu", NULL}, [O_DEVICE] = {"--device", "N"},
    [O_ATTENTION] = {"--attention", "A"}, [O_GEMM] = {"--gemm", "G"}, [O_DELTA] = {"--delta", "D"},
    [O_DETERMINISTIC] = {"--deterministic", NULL},
    [O_SCORES_BUDGET] = {"--scores-budget", "B"}, [O_FREE_CAP] = {"--free-cap", "MIB"},
    [O_FLASH_VARIANT] = {"--flash-variant", "V"}, [O_DELTA_RULE_VARIANT] = {"--delta-rule-variant", "V"},
    [O_DELTA_CHUNK_VARIANT] = {"--delta-chunk-variant", "V"}, [O_GEMM_SM90_VARIANT] = {"--gemm-sm90-variant", "V"},
    [O_GEMV_Q8_VARIANT] = {"--gemv-q8-variant", "V"},
    [O_DECODE] = {"--decode", "N"}, [O_EXACT] = {"--exact", NULL}, [O_FLASH_KERNEL] = {"--flash-kernel", "K"},
    [O_GEMM_KERNEL] = {"--gemm-kernel", "K"}, [O_SWITCH] = {"--switch", "LIST"}, [O_ACT_QUANT] = {"--act-quant", "M"},
    [O_EVAL] = {"--eval", "FILE"}, [O_CTX] = {"--ctx", "N"}, [O_CHUNKS] = {"--chunks", "K"},
    [O_SAVE_LOGITS] = {"--save-logits", "F"}, [O_REF_LOGITS] = {"--ref-logits", "F"}, [O_EVAL_JSON] = {"--eval-json", "F"},
    [O_EVAL_STEPS] = {"--eval-steps", NULL},
};
#define BIT(o) (UINT64_C(1) << (o))
#define GPU_OPTIONS                                                                                                   \
    (BIT(O_DEVICE) | BIT(O_ATTENTION) | BIT(O_GEMM) | BIT(O_DELTA) | BIT(O_DETERMINISTIC) | BIT(O_SCORES_BUDGET) |    \
     BIT(O_FREE_CAP) | BIT(O_FLASH_VARIANT) | BIT(O_DELTA_RULE_VARIANT) | BIT(O_DELTA_CHUNK_VARIANT) |                \
     BIT(O_GEMM_SM90_VARIANT) | BIT(O_GEMV_Q8_VARIANT) | BIT(O_DECODE) | BIT(O_EXACT) | BIT(O_FLASH_KERNEL) | BIT(O_GEMM_KERNEL) | BIT(O_SWITCH) |   \
     BIT(O_EVAL_STEPS))
static const cli_conflict k_conflicts[] = {
    {O_MODEL, CLI_MODEL_MASK, "the model options describe the built-in model, which --model replaces"},
    {O_PROMPT, BIT(O_RANDOM) | BIT(O_PROMPT_SEED),
     "--random and --prompt-seed make a random prompt, --prompt gives one"},
    {O_CPU, GPU_OPTIONS, "it is a GPU option and --cpu runs the CPU reference"},
    {O_ACT_QUANT, GPU_OPTIONS, "it is a GPU option and --act-quant runs the CPU reference"},
    {O_EXACT, BIT(O_ATTENTION) | BIT(O_GEMM) | BIT(O_DELTA),
     "--exact names the f32 GEMM, f32 attention and the scan itself"},
    {O_EVAL, BIT(O_PROMPT) | BIT(O_RANDOM) | BIT(O_PROMPT_SEED) | BIT(O_LOGITS_AT) | BIT(O_LOGITS_OUT) | BIT(O_DECODE) |
                 BIT(O_TOP_K),
     "--eval scores a token file, in place of a prompt and its report"},
};
#define EVAL_ONLY                                                                                                     \
    (BIT(O_CTX) | BIT(O_CHUNKS) | BIT(O_SAVE_LOGITS) | BIT(O_REF_LOGITS) | BIT(O_EVAL_JSON) | BIT(O_EVAL_STEPS))

/* --attention / --gemm / --delta: one of two names. */
static int set_path(const char *opt, const char *v, const char *first, const char *second, bool *is_second)
{
    if (strcmp(v, first) != 0 && strcmp(v, second) != 0) {
        cli_error("%s wants %s or %s, got '%s'", opt, first, second, v);
        return -1;
    }
    *is_second = strcmp(v, second) == 0;
    return 0;
}

/* --act-quant's values, by q35_act_quant, and what each does (the tier line). */
static const char *const k_act_names[] = {"exact", "ggml", "decode-q8"};
static const char *const k_act_tiers[] = {
    NULL, "each product's activations rounded as llama.cpp's CPU backend rounds them",
    "each product's activations rounded to 8 bits in blocks of 32, as the decode step's GEMV rounds them "
    "(--switch decode-q8), where the weight's type is one it takes"};

/* "--act-quant NAME" of a run's rounding, or `otherwise` for the exact one. */
static const char *act_flag(q35_act_quant act, const char *otherwise, char *buf, size_t cap)
{
    if (act == Q35_ACT_EXACT)
        return otherwise;
    snprintf(buf, cap, "--act-quant %s", k_act_names[act]);
    return buf;
}

/* Applies option k with value v; -1 after a usage error. */
static int set_option(run_args *a, int k, const char *v)
{
    const char *o = k_opts[k].name;
    int64_t n;
    bool second;
    switch (k) {
    case O_MODEL: a->path = v; return 0;
    case O_PROMPT: return cli_int_list(o, v, INT32_MIN, INT32_MAX, &a->prompt, &a->n_prompt);
    case O_RANDOM: return cli_int(o, v, 1, 1 << 24, &a->random_n);
    case O_PROMPT_SEED: return cli_int(o, v, 0, INT64_MAX, &a->prompt_seed);
    case O_CHUNK_ROWS:
        if (cli_int(o, v, 1, 1 << 20, &a->chunk_rows))
            return -1;
        a->cuda.chunk_rows = a->chunk_rows;
        return 0;
    case O_TOP_K: return cli_int(o, v, 0, 1 << 20, &a->top_k);
    case O_DECODE: return cli_int(o, v, 1, 1 << 20, &a->decode);
    case O_EXACT:
        a->cuda.attention = Q35_ATTN_F32;
        a->cuda.gemm = Q35_GEMM_F32;
        a->cuda.delta = Q35_DELTA_SCAN;
        return 0;
    case O_FLASH_KERNEL:
        if ((a->cuda.flash_kernel = q35_flash_kernel_parse(v)) != Q35_FLASH_KERNEL_DEFAULT)
            return 0;
        cli_error("%s wants sm90 or mma, got '%s'", o, v);
        return -1;
    case O_GEMM_KERNEL:
        if ((a->cuda.gemm_kernel = q35_gemm_kernel_parse(v)) != Q35_GEMM_KERNEL_DEFAULT)
            return 0;
        cli_error("%s wants cublaslt, cublas or sm90, got '%s'", o, v);
        return -1;
    case O_SWITCH: {
        bool on[Q35_SW_COUNT] = {false};
        q35_error err = {{0}};
        if (q35_switches_parse(v, on, &err)) {
            cli_error("--switch: %s", err.msg);
            return -1;
        }
        a->cuda.switches = v;
        return 0;
    }
    case O_LOGITS_AT: return cli_int_list(o, v, 0, INT64_MAX, &a->at, &a->n_at);
    case O_LOGITS_OUT: a->logits_out = v; return 0;
    case O_EVAL: a->eval = v; return 0;
    case O_CTX: return cli_int(o, v, 4, 1 << 22, &a->ctx);
    case O_CHUNKS: return cli_int(o, v, 1, INT32_MAX, &a->chunks);
    case O_SAVE_LOGITS: a->save_logits = v; return 0;
    case O_REF_LOGITS: a->ref_logits = v; return 0;
    case O_EVAL_JSON: a->eval_json = v; return 0;
    case O_EVAL_STEPS: a->eval_steps = true; return 0;
    case O_THREADS:
        if (cli_int(o, v, 1, 256, &n))
            return -1;
        q35_set_threads((int)n);
        return 0;
    case O_CPU: a->cpu = true; return 0;
    case O_ACT_QUANT:
        for (int m = Q35_ACT_EXACT; m <= Q35_ACT_Q8; m++)
            if (strcmp(v, k_act_names[m]) == 0) {
                a->act = (q35_act_quant)m;
                a->cpu = true;
                return 0;
            }
        cli_error("%s wants exact, ggml or decode-q8, got '%s'", o, v);
        return -1;
    case O_DEVICE:
        if (cli_int(o, v, 0, 1024, &n))
            return -1;
        a->cuda.device = (int)n;
        return 0;
    case O_ATTENTION:
        if (set_path(o, v, "f32", "flash", &second))
            return -1;
        a->cuda.attention = second ? Q35_ATTN_FLASH : Q35_ATTN_F32;
        return 0;
    case O_GEMM:
        if (strcmp(v, "fp8") == 0) {
            a->cuda.gemm = Q35_GEMM_FP8;
            return 0;
        }
        if (strcmp(v, "f32") != 0 && strcmp(v, "f16") != 0) {
            cli_error("%s wants f32, f16 or fp8, got '%s'", o, v);
            return -1;
        }
        a->cuda.gemm = strcmp(v, "f16") == 0 ? Q35_GEMM_F16 : Q35_GEMM_F32;
        return 0;
    case O_DELTA:
        if (set_path(o, v, "scan", "chunked", &second))
            return -1;
        a->cuda.delta = second ? Q35_DELTA_CHUNKED : Q35_DELTA_SCAN;
        return 0;
    case O_DETERMINISTIC: a->cuda.deterministic = 1; return 0;
    case O_SCORES_BUDGET:
        if (cli_int(o, v, 1, INT64_MAX, &n))
            return -1;
        a->cuda.scores_budget = (size_t)n;
        return 0;
    case O_FREE_CAP:
        if (cli_int(o, v, 1, INT64_MAX / (1 << 20), &n))
            return -1;
        a->cuda.free_cap = (uint64_t)n << 20;
        return 0;
    case O_FLASH_VARIANT: a->cuda.flash_variant = v; return 0;
    case O_DELTA_RULE_VARIANT: a->cuda.delta_rule_variant = v; return 0;
    case O_DELTA_CHUNK_VARIANT: a->cuda.delta_chunk_variant = v; return 0;
    case O_GEMM_SM90_VARIANT: a->cuda.gemm_sm90_variant = v; return 0;
    case O_GEMV_Q8_VARIANT: a->cuda.gemv_q8_variant = v; return 0;
    default: return cli_model_set(&a->model, k, v);
    }
}

/* Reads the arguments into a (which owns its lists from then on: run_args_free).
 * Returns -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    cli_model_init(&a->model);
    q35_cuda_options_init(&a->cuda);
    a->random_n = 64;
    a->prompt_seed = 7;
    a->chunk_rows = 512;
    a->top_k = 10;
    a->ctx = 512;
    cli_args args;
    cli_args_init(&args, k_opts, O_COUNT, argc, argv, 1);
    for (int k; (k = cli_next(&args)) != CLI_END;) {
        if (k == CLI_HELP) {
            printf("%s%s%s%s%s", k_help, k_help_gpu, k_help_eval, cli_model_options_help, cli_exit_help);
            return 0;
        }
        if (k == CLI_ERROR || set_option(a, k, args.value))
            return CLI_USAGE;
    }
    if (cli_check_conflicts(&args, k_conflicts, (int)(sizeof k_conflicts / sizeof k_conflicts[0])))
        return CLI_USAGE;
    for (int k = 0; k < O_COUNT && !a->eval; k++)
        if ((EVAL_ONLY >> k & 1) && cli_given(&args, k)) {
            cli_error("%s scores with --eval FILE, which is not given", k_opts[k].name);
            return CLI_USAGE;
        }
    const char *files[] = {a->eval, a->save_logits, a->ref_logits, a->eval_json};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (files[i] && !files[i][0]) {
            cli_error("an --eval file option wants a file name, got an empty one");
            return CLI_USAGE;
        }
    if (a->n_at && !a->logits_out) {
        cli_error("--logits-at needs --logits-out FILE");
        return CLI_USAGE;
    }
    if (a->logits_out && !a->n_at) {
        cli_error("--logits-out needs --logits-at P,.. (the positions whose logits to write)");
        return CLI_USAGE;
    }
    if (a->logits_out && !a->logits_out[0]) {
        cli_error("--logits-out wants a file name, got an empty one");
        return CLI_USAGE;
    }
    const int64_t n = a->prompt ? a->n_prompt : a->random_n;
    for (int64_t i = 0; i < a->n_at; i++)
        if (a->at[i] >= n) {
            cli_error("--logits-at position %" PRId64 " is past the prompt's last position (%" PRId64 ": %" PRId64
                      " tokens)", a->at[i], n - 1, n);
            return CLI_USAGE;
        }
    if (!a->path && cli_model_resolve(&a->model, &a->gen))
        return CLI_USAGE;
    return -1;
}

/* The logits file can be written, and is not the model. Before any work. */
static int check_logits_out(const run_args *a)
{
    q35_error err = {{0}};
    if (q35_outfile_check(a->logits_out, &err)) {
        cli_error("--logits-out: %s", err.msg);
        return CLI_FAILED;
    }
    struct stat m, o;
    if (a->path && stat(a->path, &m) == 0 && stat(a->logits_out, &o) == 0 && m.st_dev == o.st_dev &&
        m.st_ino == o.st_ino) {
        cli_error("--logits-out %s is the model file: refusing to write logits over it", a->logits_out);
        return CLI_USAGE;
    }
    return 0;
}

static void run_args_free(run_args *a)
{
    free(a->prompt);
    free(a->at);
    a->prompt = a->at = NULL;
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
    if (a->act != Q35_ACT_EXACT)
        printf("tier    --act-quant %s: %s\n", k_act_names[a->act], k_act_tiers[a->act]);
    if (!logits || !out) {
        cli_error("out of memory for the logits");
        goto out;
    }
    if (q35_ref_state_init(&st, m, n, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    st.act = a->act;
    q35_op_times times;
    memset(&times, 0, sizeof times);
    const double t0 = q35_now();
    if (q35_ref_prefill(m, &st, tokens, n, 0, a->chunk_rows, a->at, a->n_at, logits, &times, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    run_print_times(&times, q35_now() - t0, n);
    for (size_t i = 0; i < count; i++)
        out[i] = (float)logits[i];
    rc = run_report_logits(a, out, hp->n_vocab, n);
    if (rc == 0 && a->decode > 0)
        printf("decode  not run: --decode times the GPU's decode step, and this run is on the CPU\n");
out:
    q35_ref_state_free(&st);
    free(logits);
    free(out);
    return rc;
}

/* The CPU reference for --eval: what cpu_window reads. */
typedef struct cpu_eval {
    const run_args *a;
    const q35_model *m;
} cpu_eval;

/* One window through the CPU reference (run_window_fn). */
static int cpu_window(void *ctx, const int32_t *tokens, int64_t n, const int64_t *at, int64_t n_at, float *logits,
                      q35_error *err)
{
    const cpu_eval *e = ctx;
    const size_t count = (size_t)n_at * (size_t)e->m->hp.n_vocab;
    double *d = malloc(count * sizeof *d);
    q35_ref_state st = {0};
    if (!d)
        return q35_fail(err, "out of memory for %" PRId64 " rows of logits", n_at);
    int rc = q35_ref_state_init(&st, e->m, n, err);
    if (rc == 0) {
        st.act = e->a->act;
        rc = q35_ref_prefill(e->m, &st, tokens, n, 0, e->a->chunk_rows, at, n_at, d, NULL, err);
    }
    for (size_t i = 0; rc == 0 && i < count; i++)
        logits[i] = (float)d[i];
    q35_ref_state_free(&st);
    free(d);
    return rc;
}

/* --eval on the float64 CPU reference. */
static int run_cpu_eval(const run_args *a, const q35_model *m, const char *why)
{
    char line[512];
    if (a->eval_steps) {
        cli_error("--eval-steps scores the GPU's decode steps, and this run is on the CPU reference (%s)", why);
        return 1;
    }
    char flag[64];
    snprintf(line, sizeof line, "CPU float64 reference%s%s", a->act != Q35_ACT_EXACT ? ", " : "",
             act_flag(a->act, "", flag, sizeof flag));
    printf("path    %s (%s), %d threads\n", line, why, q35_threads());
    cpu_eval e = {a, m};
    return run_eval(a, m->hp.n_vocab, line, cpu_window, &e);
}

int q35_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse(argc, argv, &a);
    if (rc < 0 && a.logits_out) {
        const int refused = check_logits_out(&a);
        rc = refused ? refused : -1;
    }
    if (rc >= 0) {
        run_args_free(&a);
        return rc;
    }
    rc = CLI_FAILED;
    q35_error err = {{0}};
    q35_model *m = NULL;
    int32_t *tokens = NULL;
    const double t_load = q35_now();
    /* a SIGBUS names the file from its opening on (as in q35 info): the
     * reader and the loader read the mapping before the run does */
    q35_gguf *g = NULL;
    if (a.path)
        cli_guard_opening(a.path);
    if (a.path && q35_gguf_open(&g, a.path, &err) == 0)
        cli_guard_mapping(g);
    if (a.path ? !g || q35_model_load(&m, g, &err) /* closes g on failure */
               : q35_generate_model(&a.gen, &m, &err)) {
        cli_guard_mapping(NULL);
        cli_error("%s", err.msg);
        goto out;
    }
    cli_guard_mapping(m->gguf);
    cli_warn_unknown_tensors(m);
    const double load_s = q35_now() - t_load;
    const q35_hparams *hp = &m->hp;
    /* on the GPU where the options and the device allow, else on the CPU reference (why says why) */
    char why[256];
    char flag[64];
    snprintf(why, sizeof why, "%s", act_flag(a.act, "--cpu", flag, sizeof flag));
    if (a.eval) {
        rc = a.cpu ? 2 : run_cuda_eval(&a, m, why, sizeof why);
        if (rc == 2)
            rc = run_cpu_eval(&a, m, why);
        goto out;
    }
    const int64_t n = a.prompt ? a.n_prompt : a.random_n;
    tokens = malloc((size_t)n * sizeof *tokens);
    if (!tokens) {
        cli_error("out of memory for a %" PRId64 "-token prompt", n);
        goto out;
    }
    q35_rng r;
    q35_rng_seed(&r, (uint64_t)a.prompt_seed);
    for (int64_t i = 0; i < n; i++)
        tokens[i] = a.prompt ? (int32_t)a.prompt[i] : (int32_t)(q35_rng_next(&r) % (uint64_t)hp->n_vocab);
    char shown[4 * 256 + 4];
    if (a.path)
        printf("model   %s\n", q35_escape_str(shown, sizeof shown, a.path));
    else
        printf("model   built-in: shape %s, %d layers, vocab %d, mix %s, seed %llu (generated in %.2f s)\n",
               a.gen.shape.name, a.gen.shape.n_layer, a.gen.shape.n_vocab, a.gen.mix, (unsigned long long)a.gen.seed,
               load_s);
    printf("        H %d, %d DeltaNet + %d attention layers\n", hp->n_embd, hp->n_delta, hp->n_attn);
    if (m->note[0])
        printf("note    %s\n", m->note);
    rc = a.cpu ? 2 : run_cuda(&a, m, tokens, n, why, sizeof why);
    if (rc == 2)
        rc = run_cpu(&a, m, tokens, n, why);
out:
    cli_guard_mapping(NULL);
    q35_model_free(m);
    free(tokens);
    run_args_free(&a);
    return rc;
}
