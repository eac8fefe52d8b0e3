/* q35 model make: write a synthetic qwen35 GGUF. */
#include "cli.h"

#include "model/parallel.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const k_help =
    "usage: q35 model make [--shape NAME] [--quant MIX] [--layers N] [--vocab V] [--seed S]\n"
    "                      [--mtp N] [--threads N] -o FILE\n"
    "\n"
    "Writes a valid qwen35 GGUF with random weights of realistic scale (linear N(0, 0.02),\n"
    "embeddings N(0, 1), norms near 1, ssm_a negative, ssm_dt near 1). q4_k_m is a\n"
    "Q4_K_M-like mix: Q4_K, with Q6_K for output and for attn_v/ffn_down in the layers\n"
    "llama.cpp gives more bits; rows that are not whole k-quant blocks fall back to Q5_0/Q8_0.\n"
    "\n";

int q35_cmd_model(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "make") != 0) {
        if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            printf("%s%s", k_help, cli_model_options_help);
            return 0;
        }
        fprintf(stderr, "%s%s", k_help, cli_model_options_help);
        return 2;
    }
    cli_model cm;
    cli_model_init(&cm);
    const char *out = NULL;
    for (int i = 2; i < argc; i++) {
        const int r = cli_model_option(argc, argv, &i, &cm);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        int64_t n;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s%s", k_help, cli_model_options_help);
            return 0;
        } else if (strcmp(argv[i], "-o") == 0) {
            if (!(out = cli_value(argc, argv, &i)))
                return 2;
        } else if (strcmp(argv[i], "--threads") == 0) {
            const char *v = cli_value(argc, argv, &i);
            if (!v || cli_int("--threads", v, 1, 256, &n))
                return 2;
            q35_set_threads((int)n);
        } else {
            fprintf(stderr, "q35 model make: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "q35 model make: -o FILE is required\n");
        return 2;
    }
    const q35_gen_options o = cli_model_resolve(&cm);
    q35_error err = {{0}};
    const double t0 = q35_now();
    if (q35_generate_file(&o, out, &err)) {
        fprintf(stderr, "q35 model make: %s\n", err.msg);
        return 1;
    }
    struct stat st;
    const double mib = stat(out, &st) == 0 ? (double)st.st_size / 1048576.0 : 0.0;
    printf("wrote %s: shape %s, %d layers, vocab %d, mix %s, seed %llu, %.1f MiB in %.2f s (%d threads)\n", out,
           o.shape.name, o.shape.n_layer, o.shape.n_vocab, o.mix, (unsigned long long)o.seed, mib, q35_now() - t0,
           q35_threads());
    return 0;
}
