/* Shared pieces of the q35 command line: the option parser, messages, the
 * model options, and the subcommands' entry points.
 *
 * Exit status, every command: 0 done; 1 failed (the reason on stderr: a file
 * that cannot be read or written, a model that does not load, a run that
 * fails); 2 usage error (an unknown option or stray argument, a missing or
 * malformed value, an option given twice, options that conflict). */
#ifndef Q35_CLI_H
#define Q35_CLI_H

#include "model/generate.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stdint.h>

#define CLI_FAILED 1 /* exit status of a failure */
#define CLI_USAGE 2  /* exit status of a usage error */

int q35_cmd_info(int argc, char **argv);
int q35_cmd_model(int argc, char **argv);
int q35_cmd_run(int argc, char **argv);

/* The exit-status lines every --help ends with. */
extern const char *const cli_exit_help;

/* The prefix of every message ("q35 run"); a string that outlives the run. */
void cli_set_command(const char *name);
const char *cli_command(void);

/* Prints "<command>: <message>\n" on stderr with every byte a terminal would
 * act on escaped (core/escape.h): messages carry names from files and from
 * the command line. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Says on stderr what the last output's open removed of the temporary files
 * earlier runs left (core/outfile.h), if anything. */
void cli_outfile_note(void);

/* An option of a command: its name and the name of its value (NULL: a flag). */
typedef struct cli_option {
    const char *name;     /* "--shape", "-o" */
    const char *value;    /* "NAME", or NULL when no value follows */
} cli_option;

/* A walk over a command's arguments against its options (at most 64). */
typedef struct cli_args {
    const cli_option *opts;  /* the command's options */
    int n_opts;              /* how many */
    int argc;                /* the arguments */
    char **argv;
    int next;                /* index of the next argument */
    uint64_t given;          /* bit k: opts[k] was given */
    const char *value;       /* the value of the option cli_next returned last, NULL for a flag */
} cli_args;

#define CLI_END (-1)   /* cli_next: no arguments left */
#define CLI_ERROR (-2) /* cli_next: a usage error, printed */
#define CLI_HELP (-3)  /* cli_next: --help or -h */

/* Starts the walk at argv[first]. */
void cli_args_init(cli_args *a, const cli_option *opts, int n_opts, int argc, char **argv, int first);

/* The index in opts of the next option (its value in a->value), or CLI_END,
 * CLI_HELP, or CLI_ERROR after a usage error: an unknown option, an argument
 * that is not an option, an option given twice, a value missing (the end, or
 * an option where the value should be: a value that starts with '-' and a
 * letter is taken for one; a file named so can be given as ./-name). */
int cli_next(cli_args *a);

/* Whether opts[opt] was given. */
bool cli_given(const cli_args *a, int opt);

/* A pair of options that cannot be given together: opt and any option of
 * the mask `with` (bit k: opts[k]), with the reason. */
typedef struct cli_conflict {
    int opt;
    uint64_t with;
    const char *why;
} cli_conflict;

/* 0, or -1 after a usage error naming the first conflicting pair given. */
int cli_check_conflicts(const cli_args *a, const cli_conflict *c, int n);

/* Parses a whole decimal integer in [lo, hi]; prints a usage error naming the
 * option and returns -1 otherwise. */
int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Parses "a,b,c" (every item an integer in [lo, hi]; no empty item) into a
 * malloc'd array; prints a usage error and returns -1 otherwise. */
int cli_int_list(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t **out, int64_t *n);

/* A generated model as the options describe it: --shape, --quant, --seed,
 * --layers, --vocab, --mtp (overrides apply to the shape whatever their order). */
typedef struct cli_model {
    q35_gen_options o;   /* shape and mix as given */
    int64_t layers;      /* --layers, or 0 */
    int64_t vocab;       /* --vocab, or 0 */
} cli_model;

/* The model options, the first entries of every table that takes them. */
enum { CLI_SHAPE, CLI_QUANT, CLI_SEED, CLI_LAYERS, CLI_VOCAB, CLI_MTP, CLI_MODEL_OPTS };
#define CLI_MODEL_OPTIONS                                                                                      \
    [CLI_SHAPE] = {"--shape", "NAME"}, [CLI_QUANT] = {"--quant", "MIX"}, [CLI_SEED] = {"--seed", "S"},      \
    [CLI_LAYERS] = {"--layers", "N"}, [CLI_VOCAB] = {"--vocab", "V"}, [CLI_MTP] = {"--mtp", "N"}
#define CLI_MODEL_MASK ((UINT64_C(1) << CLI_MODEL_OPTS) - 1)

/* The defaults: the tiny shape, q4_k_m, seed 1. */
void cli_model_init(cli_model *m);

/* Applies model option opt (< CLI_MODEL_OPTS) with value v; -1 after a usage error. */
int cli_model_set(cli_model *m, int opt, const char *v);

/* The options with the overrides applied to the shape; -1 after a usage
 * error when they do not make a model. */
int cli_model_resolve(const cli_model *m, q35_gen_options *o);

/* The help text of those options. */
extern const char *const cli_model_options_help;

/* The process's signal dispositions (cli/signals.c): SIGXFSZ ignored, so a
 * file-size limit is a write error naming the file ("File too large"); SIGINT,
 * SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGXCPU (where
 * at their default) remove the temporary file of an output in flight, then end the
 * process as the signal would (one that cannot be caught, SIGKILL, leaves it: the
 * next write of that target removes it, outfile.h); SIGBUS inside the mapping cli_guard_mapping
 * registered, or while the file cli_guard_opening names is opened, says which file shrank under it (once,
 * whichever threads take it) and
 * exits 1. */
void cli_signals_init(void);

/* A SIGBUS inside g's mapping (the file truncated while in use) names g's file.
 * One mapping at a time; NULL (or a memory image) stops it. */
void cli_guard_mapping(const q35_gguf *g);

/* Before q35_gguf_open(path): a SIGBUS while the file is opened (its mapping
 * not known yet; its header and tables read) names path, until
 * cli_guard_mapping. */
void cli_guard_opening(const char *path);

/* Says on stderr, as a warning, which tensors of m the loader does not know
 * (and that the output is tied, when it is: a renamed output.weight). */
void cli_warn_unknown_tensors(const q35_model *m);

#endif /* Q35_CLI_H */
