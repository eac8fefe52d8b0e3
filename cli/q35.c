/* q35: the command line of q35prefill. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const k_usage =
    "usage: q35 COMMAND [options]     (q35 COMMAND --help for each)\n"
    "\n"
    "  info FILE         a GGUF's architecture, hyperparameters, layer pattern, tensors, quant mix\n"
    "  model make ...    write a synthetic qwen35 GGUF with random weights\n"
    "  model quantize .. a qwen35 GGUF quantized into a mix, as llama-quantize writes it\n"
    "  run ...           prefill a prompt on a model (on the GPU, else the CPU float64 reference),\n"
    "                    print per-op timings, tokens/s and the last row's top logits\n";

/* Flushes and closes stdout: output that could not be written (a full disk,
 * /dev/full, a closed pipe) is a failure with its reason, never a silent 0. */
static int finish_stdout(int rc)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        e = errno;
    }
    if (!failed)
        return rc;
    cli_error("writing to standard output failed: %s", e ? strerror(e) : "a write failed earlier");
    return rc ? rc : CLI_FAILED;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(k_usage, argc < 2 ? stderr : stdout);
        fputs(cli_exit_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : 0;
    }
    if (strcmp(argv[1], "info") == 0)
        return cli_set_command("q35 info"), q35_cmd_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "model") == 0)
        return cli_set_command("q35 model"), q35_cmd_model(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return cli_set_command("q35 run"), q35_cmd_run(argc - 1, argv + 1);
    cli_error("unknown command '%s' (q35 --help lists them)", argv[1]);
    fputs(k_usage, stderr);
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    cli_signals_init();
    return finish_stdout(dispatch(argc, argv));
}
