/* q35: the command line of q35prefill. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *const k_usage =
    "usage: q35 COMMAND [options]     (q35 COMMAND --help for each)\n"
    "\n"
    "  info FILE         a GGUF's architecture, hyperparameters, layer pattern, tensors, quant mix\n"
    "  model make ...    write a synthetic qwen35 GGUF with random weights\n"
    "  run ...           prefill a prompt on a model (on the GPU, else the CPU float64 reference),\n"
    "                    print per-op timings, tokens/s and the last row's top logits\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(k_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "info") == 0)
        return q35_cmd_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "model") == 0)
        return q35_cmd_model(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return q35_cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "q35: unknown command '%s'\n%s", argv[1], k_usage);
    return 2;
}
