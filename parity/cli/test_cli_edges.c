/* The q35 command line at its edges (issue 46): each case failed before its fix.
 * A top-k over the whole vocabulary, an error message longer than the error
 * buffer, the temporary files a killed writer leaves, a bad value caught before
 * the work, names from a path and the file printed escaped (the environment's:
 * test_cuda_paths). The
 * driver: cli_case.h. */
#define _GNU_SOURCE /* strsignal */
#include "cli_case.h"

#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --top-k over a whole vocabulary of 16,384: every id once, highest first (the
 * selection was k^2 * vocab: this run took minutes). */
static int case_top_k(ctx *c)
{
    char *argv[] = {(char *)c->q35, "run", "--cpu", "--vocab", "16384", "--layers", "1", "--random", "2",
                    "--top-k", "16384", NULL};
    q35_proc_opts o = {.cwd = c->dir};
    q35_proc p;
    if (!q35_case(c->s, q35_proc_start(&p, argv, &o) == 0, "run --top-k 16384 started"))
        return 1;
    q35_proc_wait(&p, TIMEOUT_S);
    char status[96];
    q35_case(c->s, q35_proc_exit_code(&p) == 0, "run --top-k 16384: %s", q35_proc_status_str(&p, status, sizeof status));
    char *seen = calloc(16384, 1);
    int n = 0, dup = 0, order = 0;
    double prev = 1e300;
    const char *q = p.out ? strstr(p.out, "top-16384 logits") : NULL;
    for (q = q ? strchr(q, '\n') : NULL; q && *q; q = strchr(q + 1, '\n')) {
        int rank, token;
        double logit;
        if (sscanf(q + 1, " %d. token %d logit %lf", &rank, &token, &logit) != 3)
            continue;
        n++;
        dup += token < 0 || token >= 16384 || seen[token]++;
        order += logit > prev;
        prev = logit;
    }
    q35_case(c->s, n == 16384 && dup == 0 && order == 0,
             "16384 lines (%d), each token once (%d repeated), logits non-increasing (%d rises)", n, dup, order);
    free(seen);
    q35_proc_free(&p);
    return 0;
}

/* An error longer than the error buffer (1,024 bytes) keeps its reason: the
 * middle of the path is cut and marked. */
static int case_long_error(ctx *c)
{
    char a[251], path[1024];
    memset(a, 'a', 250);
    a[250] = '\0';
    snprintf(path, sizeof path, "nope/%s/%s/%s/x.gguf", a, a, a);
    expect(c, &k_plain, 1, "No such file or directory", "model", "make", "-o", path, NULL);
    expect(c, &k_plain, 1, "bytes cut...]", "model", "make", "-o", path, NULL);
    static const char *const nothing[] = {NULL};
    holds(c, nothing);
    return 0;
}

/* A temporary file named as model make names them, .e.gguf.q35-XXXXXX, of n bytes. */
static int make_temp(const ctx *c, const char *name, size_t n)
{
    const int fd = open(in_dir(c, name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0 && ftruncate(fd, (off_t)n) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* SIGKILL, which no handler sees, leaves the temporary file: the next write of
 * the same target removes it and says so. One whose writer lives (its lock held)
 * stays. */
static int case_stale_temps(ctx *c)
{
    put_old(c, "e.gguf");
    q35_proc p;
    const bool seen = start_make_until_temp(c, &p, true);
    static const char *const only_old[] = {"e.gguf", NULL};
    if (seen)
        kill(p.pid, SIGKILL);
    q35_proc_wait(&p, TIMEOUT_S);
    q35_case(c->s, seen && WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL,
             "its temporary file appeared, then SIGKILL");
    q35_proc_free(&p);
    q35_case(c->s, !q35_folder_holds(c->dir, only_old), "the killed run's temporary file is left beside e.gguf");
    /* one more, held by a live writer (this process's lock): it must stay */
    const int live = make_temp(c, ".e.gguf.q35-Live01", 4096);
    const bool locked = live >= 0 && flock(live, LOCK_EX | LOCK_NB) == 0;
    q35_case(c->s, locked, "a live writer's temporary file .e.gguf.q35-Live01, locked");
    expect(c, &k_plain, 0, "note: removed 1 temporary file", "model", "make", "--layers", "1", "--vocab", "64",
           "--quant", "f16", "-o", "e.gguf", NULL);
    static const char *const kept[] = {"e.gguf", ".e.gguf.q35-Live01", NULL};
    holds(c, kept);
    /* another target's temporary file is never touched */
    const int other = make_temp(c, ".other.gguf.q35-Dead01", 4096);
    if (other >= 0)
        close(other);
    if (live >= 0)
        close(live); /* its writer is gone now */
    expect(c, &k_plain, 0, "note: removed 1 temporary file (0.0 MiB; .e.gguf.q35-Live01)", "model", "make", "--layers",
           "1", "--vocab", "64", "--quant", "f16", "-o", "e.gguf", NULL);
    static const char *const left[] = {"e.gguf", ".other.gguf.q35-Dead01", NULL};
    holds(c, left);
    return 0;
}

/* Bad values refused before any work, as usage errors. */
static int case_early_refusals(ctx *c)
{
    expect(c, &k_plain, 2, "--logits-at position 9 is past the prompt's last position (7: 8 tokens)", "run",
           "--random", "8", "--logits-at", "1,9", "--logits-out", "l.f32", NULL);
    expect(c, &k_plain, 2, "--logits-at position 3 is past the prompt's last position (2: 3 tokens)", "run",
           "--prompt", "1,2,3", "--logits-at", "3", "--logits-out", "l.f32", NULL);
    expect(c, &k_plain, 2, "-o wants a file name, got an empty one", "model", "make", "-o", "", NULL);
    static const char *const nothing[] = {NULL};
    holds(c, nothing);
    return 0;
}

/* What reaches the terminal from a path, the file and the environment is escaped. */
static int case_escaped(ctx *c)
{
    expect(c, &k_plain, 0, "to l\\e[2J.f32 (float32", "run", "--model", c->golden, "--random", "3", "--logits-at",
           "1", "--logits-out", "l\x1b[2J.f32", NULL);
    /* "qwen35" as the architecture's first 6 bytes of "general.architecture"'s value, made "qwen3\0" */
    patched(c, "nul.gguf", "general.architecture", 20, 20 + 4 + 8, "qwen3\0", 6);
    expect(c, &k_plain, 1, "architecture 'qwen3' holds a NUL byte at byte 5 of its 6: it is not 'qwen35'", "info",
           "nul.gguf", NULL);
    return 0;
}

static const test_case k_cases[] = {
    {"top_k", case_top_k},
    {"long_error", case_long_error},
    {"stale_temps", case_stale_temps},
    {"early_refusals", case_early_refusals},
    {"escaped", case_escaped},
};

int main(int argc, char **argv)
{
    return cli_cases_main(argc, argv, k_cases, sizeof k_cases / sizeof k_cases[0], "q35 command line at its edges");
}
