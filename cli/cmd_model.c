/* q35 model make: write a synthetic qwen35 GGUF; q35 model quantize: a GGUF
 * quantized again into a mix (model/requant.h). */
#include "cli.h"

#include "core/escape.h"
#include "core/parallel.h"
#include "model/mix.h"
#include "model/requant.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const k_help =
    "usage: q35 model make [--shape NAME] [--quant MIX] [--layers N] [--vocab V] [--seed S]\n"
    "                      [--mtp N] [--threads N] -o FILE\n"
    "\n"
    "Writes a valid qwen35 GGUF with random weights of realistic scale (linear N(0, 0.02),\n"
    "embeddings N(0, 1), norms near 1, ssm_a negative, ssm_dt near 1). A mix named as\n"
    "llama-quantize names an ftype (case-insensitive) is that ftype tensor for tensor: e.g.\n"
    "q4_k_m is Q4_K, with Q6_K for the output (a tied token_embd too) and for attn_v, attn_qkv\n"
    "and ffn_down in the layers it gives more bits; q2_k is llama-quantize's Q2_K mix. A\n"
    "pure-<type> mix is that type throughout (llama-quantize --pure). Rows that are not whole\n"
    "blocks fall back as llama-quantize's do (Q4_K to Q5_0, Q6_K to Q8_0, ...).\n"
    "FILE is written through a temporary file beside it, renamed into place when complete:\n"
    "a failure leaves a file already there as it was. FILE must be a new path or a regular file.\n"
    "\n";

enum { O_OUT = CLI_MODEL_OPTS, O_THREADS, O_COUNT };
static const cli_option k_opts[O_COUNT] = {
    CLI_MODEL_OPTIONS, [O_OUT] = {"-o", "FILE"}, [O_THREADS] = {"--threads", "N"},
};

static int help(FILE *f, int rc)
{
    fprintf(f, "%s%s%s", k_help, cli_model_options_help, cli_exit_help);
    return rc;
}

static const char *const k_quant_help =
    "usage: q35 model quantize --model IN --quant MIX -o OUT [--threads N]\n"
    "\n"
    "Writes IN quantized into MIX as llama-quantize writes it (without an importance matrix):\n"
    "each 2-D weight but ssm_conv1d gets the mix's type for its name, layer and row length\n"
    "(q35 model make --help says what the names mean), dequantized to f32 and quantized with\n"
    "the project's quantizer; every other tensor and every metadata key is copied as it is,\n"
    "but general.file_type (the mix's) and general.quantization_version (2). A quantized IN\n"
    "is quantized again from its dequantized values (llama-quantize's --allow-requantize).\n"
    "OUT is written through a temporary file beside it, renamed into place when complete; it\n"
    "may not be IN itself.\n"
    "\n"
    "  --model IN        a qwen35 GGUF (any type this build dequantizes)\n"
    "  --quant MIX       a mix (q4_k_m, q8_0, pure-q4_k, iq4_xs, ...; an unknown one lists them)\n"
    "  -o OUT            the file to write\n"
    "  --threads N       CPU threads (default: all)\n";

enum { Q_MODEL, Q_QUANT, Q_OUT, Q_THREADS, Q_COUNT };
static const cli_option k_quant_opts[Q_COUNT] = {
    [Q_MODEL] = {"--model", "IN"}, [Q_QUANT] = {"--quant", "MIX"}, [Q_OUT] = {"-o", "OUT"},
    [Q_THREADS] = {"--threads", "N"},
};

static int quantize(int argc, char **argv)
{
    cli_set_command("q35 model quantize");
    const char *v[Q_COUNT] = {0};
    int64_t n;
    cli_args a;
    cli_args_init(&a, k_quant_opts, Q_COUNT, argc, argv, 2);
    for (int k; (k = cli_next(&a)) != CLI_END;) {
        if (k == CLI_HELP)
            return fprintf(stdout, "%s%s", k_quant_help, cli_exit_help), 0;
        if (k == CLI_ERROR)
            return CLI_USAGE;
        v[k] = a.value;
        if (k == Q_THREADS) {
            if (cli_int("--threads", a.value, 1, 256, &n))
                return CLI_USAGE;
            q35_set_threads((int)n);
        }
    }
    static const char *const need[] = {[Q_MODEL] = "--model IN", [Q_QUANT] = "--quant MIX", [Q_OUT] = "-o OUT"};
    for (int k = Q_MODEL; k <= Q_OUT; k++) {
        if (!v[k]) {
            cli_error("%s is required", need[k]);
            return CLI_USAGE;
        }
        if (!v[k][0]) {
            cli_error("%s wants a value, got an empty one", need[k]);
            return CLI_USAGE;
        }
    }
    q35_error err = {{0}};
    if (q35_mix_check(v[Q_QUANT], &err)) {
        cli_error("--quant: %s", err.msg);
        return CLI_USAGE;
    }
    const double t0 = q35_now();
    q35_requant_stats s;
    const int failed = q35_requant_file(v[Q_MODEL], v[Q_QUANT], v[Q_OUT], &s, &err);
    cli_outfile_note();
    if (failed) {
        cli_error("%s", err.msg);
        return CLI_FAILED;
    }
    char shown[4 * 256 + 4];
    printf("wrote %s: mix %s, %" PRId64 " tensors (%" PRId64 " quantized, %" PRId64 " of them from quantized data; %"
           PRId64 " copied), %.2f MiB -> %.2f MiB in %.2f s (%d threads)\n",
           q35_escape_str(shown, sizeof shown, v[Q_OUT]), v[Q_QUANT], s.tensors, s.quantized, s.requantized, s.copied,
           (double)s.in_bytes / 1048576.0, (double)s.out_bytes / 1048576.0, q35_now() - t0, q35_threads());
    return 0;
}

int q35_cmd_model(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return help(stdout, 0);
    if (argc < 2) {
        cli_error("wants a subcommand: make, quantize");
        return help(stderr, CLI_USAGE);
    }
    if (strcmp(argv[1], "quantize") == 0)
        return quantize(argc, argv);
    if (strcmp(argv[1], "make") != 0) {
        cli_error("unknown subcommand '%s' (make, quantize)", argv[1]);
        return CLI_USAGE;
    }
    cli_set_command("q35 model make");
    cli_model cm;
    cli_model_init(&cm);
    const char *out = NULL;
    int64_t n;
    cli_args a;
    cli_args_init(&a, k_opts, O_COUNT, argc, argv, 2);
    for (int k; (k = cli_next(&a)) != CLI_END;) {
        if (k == CLI_HELP)
            return help(stdout, 0);
        if (k == CLI_ERROR)
            return CLI_USAGE;
        if (k < CLI_MODEL_OPTS) {
            if (cli_model_set(&cm, k, a.value))
                return CLI_USAGE;
        } else if (k == O_OUT) {
            out = a.value;
        } else if (k == O_THREADS) {
            if (cli_int("--threads", a.value, 1, 256, &n))
                return CLI_USAGE;
            q35_set_threads((int)n);
        }
    }
    q35_gen_options o;
    if (!out) {
        cli_error("-o FILE is required");
        return CLI_USAGE;
    }
    if (!out[0]) {
        cli_error("-o wants a file name, got an empty one");
        return CLI_USAGE;
    }
    if (cli_model_resolve(&cm, &o))
        return CLI_USAGE;
    /* Every argument is valid: only now is the output path looked at. */
    q35_error err = {{0}};
    const double t0 = q35_now();
    const int failed = q35_generate_file(&o, out, &err);
    cli_outfile_note();
    if (failed) {
        cli_error("%s", err.msg);
        return CLI_FAILED;
    }
    struct stat st;
    const double mib = stat(out, &st) == 0 ? (double)st.st_size / 1048576.0 : 0.0;
    char shown[4 * 256 + 4];
    printf("wrote %s: shape %s, %d layers, vocab %d, mix %s, seed %llu, %.1f MiB in %.2f s (%d threads)\n",
           q35_escape_str(shown, sizeof shown, out),
           o.shape.name, o.shape.n_layer, o.shape.n_vocab, o.mix, (unsigned long long)o.seed, mib, q35_now() - t0,
           q35_threads());
    return 0;
}
