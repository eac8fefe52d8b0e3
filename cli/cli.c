#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include "core/escape.h"
#include "core/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_exit_help =
    "\n"
    "Exit status: 0 done; 1 failed (the reason on stderr: a file that cannot be read or\n"
    "written, a model that does not load, a run that fails); 2 usage error (an unknown\n"
    "option, a missing or malformed value, an option given twice, options that conflict).\n";

static const char *g_command = "q35";

void cli_set_command(const char *name)
{
    g_command = name;
}

const char *cli_command(void)
{
    return g_command;
}

void cli_error(const char *fmt, ...)
{
    char msg[2048], shown[4 * sizeof msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", g_command, q35_escape_str(shown, sizeof shown, msg));
}

void cli_outfile_note(void)
{
    const char *note = q35_outfile_note();
    if (note[0])
        cli_error("note: %s", note);
}

/* ---- the option parser ----------------------------------------------------- */

void cli_args_init(cli_args *a, const cli_option *opts, int n_opts, int argc, char **argv, int first)
{
    *a = (cli_args){.opts = opts, .n_opts = n_opts, .argc = argc, .argv = argv, .next = first};
}

bool cli_given(const cli_args *a, int opt)
{
    return (a->given >> opt) & 1u;
}

/* Whether an argument is taken for an option: '-' then a letter, or "--x". */
static bool looks_like_option(const char *s)
{
    return s[0] == '-' && (isalpha((unsigned char)s[1]) || (s[1] == '-' && s[2] != '\0'));
}

int cli_next(cli_args *a)
{
    a->value = NULL;
    if (a->next >= a->argc)
        return CLI_END;
    const char *arg = a->argv[a->next++];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return CLI_HELP;
    int k = 0;
    while (k < a->n_opts && strcmp(arg, a->opts[k].name) != 0)
        k++;
    if (k == a->n_opts) {
        if (arg[0] == '-' && arg[1] != '\0')
            cli_error("unknown option '%s'", arg);
        else
            cli_error("unexpected argument '%s' (every argument is an option or its value)", arg);
        return CLI_ERROR;
    }
    if (cli_given(a, k)) {
        cli_error("%s is given twice", arg);
        return CLI_ERROR;
    }
    a->given |= UINT64_C(1) << k;
    if (!a->opts[k].value)
        return k;
    if (a->next >= a->argc) {
        cli_error("%s needs a value (%s)", arg, a->opts[k].value);
        return CLI_ERROR;
    }
    if (looks_like_option(a->argv[a->next])) {
        cli_error("%s needs a value (%s), got the option '%s'", arg, a->opts[k].value, a->argv[a->next]);
        return CLI_ERROR;
    }
    a->value = a->argv[a->next++];
    return k;
}

int cli_check_conflicts(const cli_args *a, const cli_conflict *c, int n)
{
    for (int i = 0; i < n; i++) {
        if (!cli_given(a, c[i].opt))
            continue;
        for (int k = 0; k < a->n_opts; k++)
            if (((c[i].with >> k) & 1u) && cli_given(a, k)) {
                cli_error("%s cannot be given with %s: %s", a->opts[k].name, a->opts[c[i].opt].name, c[i].why);
                return -1;
            }
    }
    return 0;
}

/* ---- values ----------------------------------------------------------------- */

int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    long long v = 0;
    bool ok = s[0] != '\0' && !isspace((unsigned char)s[0]); /* strtoll would skip the space */
    if (ok) {
        char *end;
        errno = 0;
        v = strtoll(s, &end, 10);
        ok = errno == 0 && end != s && *end == '\0' && v >= lo && v <= hi;
    }
    if (!ok) {
        cli_error("%s wants an integer in %" PRId64 "..%" PRId64 ", got '%s'", opt, lo, hi, s);
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
    if (!v) {
        cli_error("out of memory for the %" PRId64 " items of %s", cap, opt);
        return -1;
    }
    int64_t k = 0;
    for (const char *p = s;; k++) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item) {
            cli_error("%s wants a comma-separated list of integers in %" PRId64 "..%" PRId64
                      ", got '%s' (item %" PRId64 " is %s)", opt, lo, hi, s, k + 1, len ? "too long" : "empty");
            free(v);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (cli_int(opt, item, lo, hi, &v[k])) {
            free(v);
            return -1;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = v;
    *n = k + 1;
    return 0;
}

/* ---- the model options ------------------------------------------------------ */

const char *const cli_model_options_help =
    "  --shape NAME      tiny (default), 0.8b, 2b, 4b, 9b, 27b\n"
    "  --quant MIX       llama-quantize's ftype of that name, tensor for tensor: f32, f16, bf16,\n"
    "                    q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q2_k_s, q3_k_s, q3_k_m, q3_k_l, q4_k_s,\n"
    "                    q4_k_m (default), q5_k_s, q5_k_m, q6_k, iq4_nl, iq4_xs, iq3_s, iq3_m; or one\n"
    "                    type throughout, as llama-quantize --pure: pure-q4_0, pure-q4_1, pure-q5_0,\n"
    "                    pure-q5_1, pure-q8_0, pure-q2_k, pure-q3_k, pure-q4_k, pure-q5_k, pure-q6_k,\n"
    "                    pure-iq4_nl, pure-iq4_xs, pure-iq2_xxs, pure-iq2_xs, pure-iq2_s, pure-iq3_xxs,\n"
    "                    pure-iq3_s, pure-iq1_s, pure-iq1_m; q3_k, q4_k, q5_k are pure-q3_k, pure-q4_k,\n"
    "                    pure-q5_k\n"
    "  --seed S          weights seed (default 1)\n"
    "  --layers N        override the layer count\n"
    "  --vocab V         override the vocabulary size\n"
    "  --mtp N           append N MTP blocks counted in block_count (the loader skips them)\n";

void cli_model_init(cli_model *m)
{
    m->o = q35_gen_defaults(q35_shape_default());
    m->layers = m->vocab = 0;
}

int cli_model_resolve(const cli_model *m, q35_gen_options *o)
{
    *o = m->o;
    if (m->layers)
        o->shape.n_layer = (int)m->layers;
    if (m->vocab)
        o->shape.n_vocab = (int)m->vocab;
    q35_error err = {{0}};
    if (q35_gen_check(o, &err)) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

int cli_model_set(cli_model *m, int opt, const char *v)
{
    q35_error err = {{0}};
    int64_t n;
    switch (opt) {
    case CLI_SHAPE: {
        const q35_shape *s = q35_shape_find(v);
        if (!s) {
            cli_error("unknown shape '%s' (tiny, 0.8b, 2b, 4b, 9b, 27b)", v);
            return -1;
        }
        m->o.shape = *s;
        return 0;
    }
    case CLI_QUANT:
        if (q35_mix_check(v, &err)) {
            cli_error("%s", err.msg);
            return -1;
        }
        snprintf(m->o.mix, sizeof m->o.mix, "%s", v);
        return 0;
    case CLI_SEED:
        if (cli_int("--seed", v, 0, INT64_MAX, &n))
            return -1;
        m->o.seed = (uint64_t)n;
        return 0;
    case CLI_LAYERS:
        return cli_int("--layers", v, 1, Q35_MAX_LAYERS, &m->layers);
    case CLI_VOCAB:
        return cli_int("--vocab", v, 1, 1 << 24, &m->vocab);
    case CLI_MTP:
        if (cli_int("--mtp", v, 0, 4, &n))
            return -1;
        m->o.mtp_layers = (int)n;
        return 0;
    default:
        return -1;
    }
}

void cli_warn_unknown_tensors(const q35_model *m)
{
    if (m->n_unknown == 0)
        return;
    char list[1024];
    size_t used = 0;
    uint64_t shown = 0;
    for (; shown < m->n_unknown && used + Q35_GGUF_MAX_NAME + 8 < sizeof list; shown++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'", shown ? ", " : "",
                                 m->gguf->tensors[m->unknown[shown]].name);
    cli_error("warning: %s: %" PRIu64 " tensor%s the qwen35 loader does not know, not used: %s%s%s", m->gguf->source,
              m->n_unknown, m->n_unknown == 1 ? "" : "s", list, shown < m->n_unknown ? ", ..." : "",
              m->tied ? "; the output is tied to token_embd (the file has no 'output.weight')" : "");
}
