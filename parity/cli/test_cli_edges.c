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

/* q35 model quantize and q35 run --eval (issue 50): the golden model quantized
 * into q8_0; the f16 model's scored log-probabilities saved; the q8_0 model
 * scored against them (a KL divergence, its JSON); the reference against itself
 * (KLD within the float32 rounding of the saved log-probabilities: each off by
 * at most half an ulp of |log p| < 16, 2^-24 * 16 < 1e-6, and the KLD's first
 * order term is a p-weighted mean of those; top 100 %); a
 * reference of another --ctx refused; quantizing over the input refused. */
static int case_eval(ctx *c)
{
    char tok[1024 + 16];
    const char *model = c->golden; /* .../tiny-r2/model.gguf; its prompt beside it */
    snprintf(tok, sizeof tok, "%.*stokens.i32", (int)(strrchr(model, '/') + 1 - model), model);
    expect(c, &k_plain, 0, "wrote q8.gguf: mix q8_0, ", "model", "quantize", "--model", model, "--quant", "q8_0", "-o",
           "q8.gguf", NULL);
    expect(c, &k_plain, 0, "saved   the scored positions' log-probabilities: ref.lp", "run", "--cpu", "--model",
           model, "--eval", tok, "--ctx", "32", "--save-logits", "ref.lp", NULL);
    expect(c, &k_plain, 0, "eval    3 windows of 32 tokens (of 100 in the file), 15 positions scored a window (16..30)",
           "run", "--cpu", "--model", "q8.gguf", "--eval", tok, "--ctx", "32", "--ref-logits", "ref.lp", "--eval-json",
           "q8.json", NULL);
    size_t n = 0;
    char *json = q35_read_file(in_dir(c, "q8.json"), &n);
    double kld = -1, top = -1;
    const char *k = json ? strstr(json, "\"kld_mean\": ") : NULL, *t = json ? strstr(json, "\"same_top\": ") : NULL;
    if (k && t) {
        kld = strtod(k + 12, NULL);
        top = strtod(t + 12, NULL);
    }
    q35_case(c->s, kld > 0 && kld < 1e-2 && top > 0.5 && top <= 1.0,
             "q8_0 against f16: JSON mean KLD %.3e (in (0, 1e-2)), same top %.3f", kld, top);
    free(json);
    q35_proc p;
    char *argv[] = {(char *)c->q35, "run", "--cpu", "--model", (char *)model, "--eval", tok, "--ctx", "32", "--ref-logits",
                    "ref.lp", NULL};
    q35_proc_opts o = {.cwd = c->dir};
    if (q35_case(c->s, q35_proc_start(&p, argv, &o) == 0, "the reference against itself")) {
        q35_proc_wait(&p, TIMEOUT_S);
        const char *m = p.out ? strstr(p.out, "kld     mean ") : NULL;
        const char *s = p.out ? strstr(p.out, "same top token ") : NULL;
        const double self = m ? strtod(m + 13, NULL) : -1, same = s ? strtod(s + 15, NULL) : -1;
        q35_case(c->s, q35_proc_exit_code(&p) == 0 && self >= 0 && self < 1e-6 && same == 100.0,
                 "itself: mean KLD %.3e (< 1e-6: the saved float32 rounding), same top %.3f %%", self, same);
        q35_proc_free(&p);
    }
    expect(c, &k_plain, 1, "ref.lp: saved with --ctx 32, this run has 16", "run", "--cpu", "--model", model, "--eval",
           tok, "--ctx", "16", "--ref-logits", "ref.lp", NULL);
    expect(c, &k_plain, 1, "is the input itself", "model", "quantize", "--model", "q8.gguf", "--quant", "q4_k_m", "-o",
           "q8.gguf", NULL);
    static const char *const files[] = {"q8.gguf", "ref.lp", "q8.json", NULL};
    holds(c, files);
    return 0;
}

static const test_case k_cases[] = {
    {"top_k", case_top_k},
    {"long_error", case_long_error},
    {"stale_temps", case_stale_temps},
    {"early_refusals", case_early_refusals},
    {"escaped", case_escaped},
    {"eval", case_eval},
};

int main(int argc, char **argv)
{
    return cli_cases_main(argc, argv, k_cases, sizeof k_cases / sizeof k_cases[0], "q35 command line at its edges");
}
