/* The cases of the command-line suites (test_cli_safety, test_cli_edges): each
 * case runs the q35 binary in a fresh folder of its own and asserts the exit
 * status, the message, and the filesystem afterwards. A driver is a table of
 * cases and cli_cases_main:
 *
 *   DRIVER Q35 CASE WORKDIR      one case, in WORKDIR/CASE
 *   DRIVER --registered NAME...  fails unless NAME... are exactly its cases */
#ifndef Q35_CLI_CASE_H
#define Q35_CLI_CASE_H

#include "cli_proc.h"
#include "parity/lib/harness.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define TIMEOUT_S 120.0 /* no q35 run here takes a second; ASan and a busy machine, a few */

typedef struct ctx {
    q35_suite *s;
    const char *q35;      /* the binary under test */
    char dir[1024];       /* this case's folder */
    char golden[1024];    /* the golden model */
    uint8_t *model;       /* its bytes */
    size_t model_len;
} ctx;

typedef struct test_case {
    const char *name;
    int (*run)(ctx *c);
} test_case;

/* Runs the case argv names (or checks the registered names). */
int cli_cases_main(int argc, char **argv, const test_case *cases, size_t n_cases, const char *title);

extern const q35_proc_opts k_plain; /* no redirection, no limit */

/* A file of recognisable bytes standing for "the previous result". */
static const char k_old[] = "the previous result, which no failed run may touch\n";

/* A path in the case's folder (one of four rotating buffers). */
const char *in_dir(const ctx *c, const char *name);

/* Runs q35 with the NULL-terminated args (va_list) in the case's folder, waiting at most TIMEOUT_S. */
void run_va(const ctx *c, q35_proc *p, const q35_proc_opts *o, va_list ap);

/* One case line: q35 ARGS (NULL-terminated) exits with rc, its output (stdout
 * and stderr) holds want (when not NULL) and no byte a terminal would act on. */
bool expect(const ctx *c, const q35_proc_opts *o, int rc, const char *want, ...);

/* name in the case's folder holds exactly these bytes. */
bool intact(const ctx *c, const char *name, const void *bytes, size_t n);

/* The case's folder holds exactly the NULL-terminated names. */
bool holds(const ctx *c, const char *const *names);

/* Writes k_old to name in the case's folder. */
void put_old(const ctx *c, const char *name);

/* What is at path, not following a link: q35_file_kind's words, or "gone". */
const char *kind_of(const char *path, struct stat *st);

/* name in the case's folder is still a file of this kind. */
void still(const ctx *c, const char *name, const char *kind);

/* Writes name: the golden model with len bytes at the first occurrence of
 * `at` (at_len bytes) plus skip replaced by `with`. */
void patched(const ctx *c, const char *name, const void *at, size_t at_len, size_t skip, const void *with, size_t len);

/* Starts `q35 model make` of a 0.8b-shaped model (2 layers, q8_0) onto e.gguf in
 * the case's folder and waits until its temporary file appears there (sized: and
 * is sized, its writer past the lock it takes); whether it did (false: it did not
 * start, or ended first). */
bool start_make_until_temp(const ctx *c, q35_proc *p, bool sized);

#endif /* Q35_CLI_CASE_H */
