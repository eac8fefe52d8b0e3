/* Shared pieces of the q35 command line: argument parsing helpers and the
 * subcommands' entry points. Each subcommand returns its exit status: 0 ok,
 * 1 a failure it reported on stderr, 2 a usage error. */
#ifndef Q35_CLI_H
#define Q35_CLI_H

#include "data/generate.h"

#include <stdbool.h>
#include <stdint.h>

int q35_cmd_info(int argc, char **argv);
int q35_cmd_model(int argc, char **argv);
int q35_cmd_run(int argc, char **argv);

/* Parses a whole decimal integer in [lo, hi]; prints a usage error naming the
 * option and returns -1 otherwise. */
int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Parses "a,b,c" into a malloc'd array (each in [lo, hi]). */
int cli_int_list(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t **out, int64_t *n);

/* The value of option argv[*i] (advancing *i), or NULL with a usage error. */
const char *cli_value(int argc, char **argv, int *i);

/* A generated model as the options describe it: --shape, --quant, --seed,
 * --layers, --vocab, --mtp (overrides apply to the shape whatever their order). */
typedef struct cli_model {
    q35_gen_options o;   /* shape and mix as given */
    int64_t layers;      /* --layers, or 0 */
    int64_t vocab;       /* --vocab, or 0 */
} cli_model;

/* The defaults: the tiny shape, q4_k_m, seed 1. */
void cli_model_init(cli_model *m);

/* Returns 1 when argv[*i] was a model option (consumed), 0 when not, -1 on a bad value. */
int cli_model_option(int argc, char **argv, int *i, cli_model *m);

/* The options with the overrides applied to the shape. */
q35_gen_options cli_model_resolve(const cli_model *m);

/* The help text of those options. */
extern const char *const cli_model_options_help;

#endif /* Q35_CLI_H */
