/* q35 info FILE: what a GGUF holds, and whether it loads as a qwen35 model. */
#include "cli.h"

#include "core/escape.h"
#include "core/gguf.h"
#include "model/qwen35.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const k_help =
    "usage: q35 info FILE\n"
    "\n"
    "Prints the GGUF's version and metadata, the qwen35 hyperparameters and layer pattern\n"
    "(D = Gated DeltaNet, A = full attention), every tensor with its type, shape and bytes,\n"
    "and the quant mix, and the tensors the loader does not know (also said on stderr).\n"
    "Exits 1 when the file cannot be read, is malformed, or is not a loadable qwen35 model.\n"
    "Names and strings from the file are printed with control bytes escaped (\\xNN).\n";

static void print_metadata(const q35_gguf *g)
{
    printf("GGUF v%u, %" PRIu64 " metadata keys, %" PRIu64 " tensors, alignment %u, data at offset %" PRIu64 "\n",
           g->version, g->n_kv, g->n_tensors, g->alignment, g->data_offset);
    char buf[512], key[4 * 64 + 4];
    for (uint64_t i = 0; i < g->n_kv; i++)
        printf("  %-48s %-7s %s\n", q35_escape_str(key, sizeof key, g->kv[i].key),
               g->kv[i].type == Q35_GGUF_ARRAY ? "array" : q35_gguf_vtype_name(g->kv[i].type),
               q35_gguf_format_value(&g->kv[i], buf, sizeof buf));
}

static void print_tensors(const q35_gguf *g)
{
    uint64_t count[Q35_TYPE_COUNT] = {0}, bytes[Q35_TYPE_COUNT] = {0}, total = 0;
    printf("\ntensors:\n  %-40s %-8s %-22s %14s\n", "name", "type", "shape", "bytes");
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        char shape[64];
        int n = snprintf(shape, sizeof shape, "{%" PRId64, t->ne[0]);
        for (uint32_t d = 1; d < t->n_dims; d++)
            n += snprintf(shape + n, sizeof shape - (size_t)n, ", %" PRId64, t->ne[d]);
        snprintf(shape + n, sizeof shape - (size_t)n, "}");
        char name[4 * Q35_GGUF_MAX_NAME + 4];
        printf("  %-40s %-8s %-22s %14" PRIu64 "\n", q35_escape_str(name, sizeof name, t->name),
               q35_type_name(t->type), shape, t->nbytes);
        if (t->type < Q35_TYPE_COUNT) {
            count[t->type]++;
            bytes[t->type] += t->nbytes;
        }
        total += t->nbytes;
    }
    printf("\nquant mix (%.2f MiB of tensor data):\n", (double)total / 1048576.0);
    for (int t = 0; t < Q35_TYPE_COUNT; t++)
        if (count[t])
            printf("  %-8s %5" PRIu64 " tensors %12.2f MiB %6.2f %%\n", q35_type_name((uint32_t)t), count[t],
                   (double)bytes[t] / 1048576.0, total ? 100.0 * (double)bytes[t] / (double)total : 0.0);
}

static void print_model(const q35_model *m)
{
    const q35_hparams *hp = &m->hp;
    printf("\nqwen35 model:\n");
    printf("  layers            %d run (block_count %d, MTP blocks %d)\n", hp->n_layer, hp->n_layer_file, hp->n_nextn);
    printf("  hidden            %d\n  ffn               %d\n  vocab             %d%s\n", hp->n_embd, hp->n_ff,
           hp->n_vocab, m->tied ? " (output tied to token_embd)" : "");
    printf("  attention         %d heads / %d kv (%d per group), head_dim %d, n_rot %d, rope base %g, eps %g\n",
           hp->n_head, hp->n_head_kv, hp->n_head / hp->n_head_kv, hp->head_dim, hp->n_rot, (double)hp->rope_base,
           (double)hp->eps);
    printf("  deltanet          Hk %d x dk %d, Hv %d x dv %d (r = %d), conv kernel %d, conv channels %d\n", hp->ssm_hk,
           hp->ssm_dk, hp->ssm_hv, hp->ssm_dv, hp->ssm_r, hp->conv_kernel, hp->conv_dim);
    printf("  context_length    %d\n", hp->n_ctx_train);
    printf("  layer pattern     ");
    for (int i = 0; i < hp->n_layer; i++)
        printf("%s%c", i && i % 4 == 0 ? " " : "", hp->is_attn[i] ? 'A' : 'D');
    printf("  (%d DeltaNet, %d attention)\n", hp->n_delta, hp->n_attn);
    if (m->note[0])
        printf("  note              %s\n", m->note);
    if (m->n_unknown)
        printf("  unknown tensors   %" PRIu64 ", not used by the loader:\n", m->n_unknown);
    for (uint64_t i = 0; i < m->n_unknown; i++) {
        char name[4 * Q35_GGUF_MAX_NAME + 4];
        printf("    %s\n", q35_escape_str(name, sizeof name, m->gguf->tensors[m->unknown[i]].name));
    }
}

int q35_cmd_info(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("%s%s", k_help, cli_exit_help);
        return 0;
    }
    if (argc != 2 || (argv[1][0] == '-' && argv[1][1] != '\0')) {
        if (argc == 2)
            cli_error("unknown option '%s' (a file named so can be given as ./%s)", argv[1], argv[1]);
        else
            cli_error("wants one FILE, got %d arguments", argc - 1);
        fputs(k_help, stderr);
        return CLI_USAGE;
    }
    q35_error err = {{0}};
    q35_gguf *g;
    cli_guard_opening(argv[1]);
    if (q35_gguf_open(&g, argv[1], &err)) {
        cli_guard_mapping(NULL);
        cli_error("%s", err.msg);
        return CLI_FAILED;
    }
    cli_guard_mapping(g);
    print_metadata(g);
    print_tensors(g);
    q35_model *m;
    const int rc = q35_model_load(&m, g, &err); /* closes g on failure */
    if (rc == 0) {
        print_model(m);
        cli_warn_unknown_tensors(m);
    } else {
        cli_error("not a loadable qwen35 model: %s", err.msg);
    }
    q35_model_free(m);
    cli_guard_mapping(NULL);
    return rc == 0 ? 0 : CLI_FAILED;
}
