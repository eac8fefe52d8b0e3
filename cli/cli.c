#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "q35: %s wants an integer in %" PRId64 "..%" PRId64 ", got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_int_list(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t **out, int64_t *n)
{
    int64_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    int64_t *v = malloc((size_t)cap * sizeof *v);
    char *copy = strdup(s);
    if (!v || !copy) {
        free(v);
        free(copy);
        fprintf(stderr, "q35: out of memory\n");
        return -1;
    }
    int64_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (cli_int(opt, tok, lo, hi, &v[k])) {
            free(v);
            free(copy);
            return -1;
        }
        k++;
    }
    free(copy);
    if (k == 0) {
        free(v);
        fprintf(stderr, "q35: %s wants a comma-separated list, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    *n = k;
    return 0;
}

const char *cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "q35: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

const char *const cli_model_options_help =
    "  --shape NAME      tiny (default), 0.8b, 2b, 4b, 9b, 27b\n"
    "  --quant MIX       f32, f16, bf16, q8_0, q4_0, q5_0, q4_k, q5_k, q6_k, q4_k_m (default)\n"
    "  --seed S          weights seed (default 1)\n"
    "  --layers N        override the layer count\n"
    "  --vocab V         override the vocabulary size\n"
    "  --mtp N           append N MTP blocks counted in block_count (the loader skips them)\n";

void cli_model_init(cli_model *m)
{
    m->o = q35_gen_defaults(q35_shape_default());
    m->layers = m->vocab = 0;
}

q35_gen_options cli_model_resolve(const cli_model *m)
{
    q35_gen_options o = m->o;
    if (m->layers)
        o.shape.n_layer = (int)m->layers;
    if (m->vocab)
        o.shape.n_vocab = (int)m->vocab;
    return o;
}

int cli_model_option(int argc, char **argv, int *i, cli_model *m)
{
    const char *a = argv[*i], *v;
    int64_t n;
    if (strcmp(a, "--shape") == 0) {
        if (!(v = cli_value(argc, argv, i)))
            return -1;
        const q35_shape *s = q35_shape_find(v);
        if (!s) {
            fprintf(stderr, "q35: unknown shape '%s' (tiny, 0.8b, 2b, 4b, 9b, 27b)\n", v);
            return -1;
        }
        m->o.shape = *s;
        return 1;
    }
    if (strcmp(a, "--quant") == 0) {
        if (!(v = cli_value(argc, argv, i)))
            return -1;
        snprintf(m->o.mix, sizeof m->o.mix, "%s", v);
        return 1;
    }
    if (strcmp(a, "--seed") == 0) {
        if (!(v = cli_value(argc, argv, i)) || cli_int(a, v, 0, INT64_MAX, &n))
            return -1;
        m->o.seed = (uint64_t)n;
        return 1;
    }
    if (strcmp(a, "--layers") == 0)
        return !(v = cli_value(argc, argv, i)) || cli_int(a, v, 1, Q35_MAX_LAYERS, &m->layers) ? -1 : 1;
    if (strcmp(a, "--vocab") == 0)
        return !(v = cli_value(argc, argv, i)) || cli_int(a, v, 1, 1 << 24, &m->vocab) ? -1 : 1;
    if (strcmp(a, "--mtp") == 0) {
        if (!(v = cli_value(argc, argv, i)) || cli_int(a, v, 0, 4, &n))
            return -1;
        m->o.mtp_layers = (int)n;
        return 1;
    }
    return 0;
}
