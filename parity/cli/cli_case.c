/* The cases of the command-line suites (cli_case.h): the q35 binary run in a
 * case's own folder, its exit status and output checked, the folder afterwards. */
#define _GNU_SOURCE /* memmem */
#include "cli_case.h"

#include "core/outfile.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GOLDEN "data/golden/tiny-r2/model.gguf"
#define MAX_ARGS 32


const q35_proc_opts k_plain = {0};

/* A path in the case's folder (one of four rotating buffers). */
const char *in_dir(const ctx *c, const char *name)
{
    static char buf[4][2048];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", c->dir, name);
    return p;
}

/* Runs q35 with the NULL-terminated args in the case's folder. */
void run_va(const ctx *c, q35_proc *p, const q35_proc_opts *o, va_list ap)
{
    char *argv[MAX_ARGS + 2] = {(char *)c->q35};
    int n = 1;
    for (const char *a; n <= MAX_ARGS && (a = va_arg(ap, const char *)) != NULL;)
        argv[n++] = (char *)a;
    q35_proc_opts opts = *o;
    opts.cwd = c->dir;
    if (q35_proc_start(p, argv, &opts) != 0) {
        memset(p, 0, sizeof *p);
        p->timed_out = true;
        return;
    }
    q35_proc_wait(p, TIMEOUT_S);
}

/* One case line: q35 ARGS exits with rc, its output (stdout and stderr) holds
 * want (when not NULL) and no byte a terminal would act on. */
bool expect(const ctx *c, const q35_proc_opts *o, int rc, const char *want, ...)
{
    va_list ap;
    va_start(ap, want);
    q35_proc p;
    run_va(c, &p, o, ap);
    va_end(ap);
    char status[96];
    const char *line = p.err && p.err[0] ? p.err : p.out ? p.out : "";
    const bool said = !want || (p.err && strstr(p.err, want)) || (p.out && strstr(p.out, want));
    const int64_t ctl_out = p.out ? q35_first_control_byte(p.out, p.out_len) : -1;
    const int64_t ctl_err = p.err ? q35_first_control_byte(p.err, p.err_len) : -1;
    const bool ok = q35_proc_exit_code(&p) == rc && said && ctl_out < 0 && ctl_err < 0;
    q35_case(c->s, ok, "%s, want exit %d%s%s%s: %.*s", q35_proc_status_str(&p, status, sizeof status), rc,
             want ? " and '" : "", want ? want : "", want ? "'" : "", (int)strcspn(line, "\n"), line);
    if (!ok && p.err)
        printf("       stderr: %s\n", p.err);
    if (ctl_out >= 0 || ctl_err >= 0)
        printf("       a control byte reached the terminal (stdout at %lld, stderr at %lld)\n", (long long)ctl_out,
               (long long)ctl_err);
    q35_proc_free(&p);
    return ok;
}

bool intact(const ctx *c, const char *name, const void *bytes, size_t n)
{
    return q35_case(c->s, q35_file_equals(in_dir(c, name), bytes, n), "%s intact, byte for byte (%zu bytes)", name, n);
}

bool holds(const ctx *c, const char *const *names)
{
    char list[512] = "";
    for (size_t i = 0, used = 0; names[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    return q35_case(c->s, q35_folder_holds(c->dir, names), "the folder holds {%s} and nothing else", list);
}


void put_old(const ctx *c, const char *name)
{
    q35_test_write_bytes(in_dir(c, name), k_old, sizeof k_old);
}

/* What is at path, not following a link: q35_file_kind's words, or "gone". */
const char *kind_of(const char *path, struct stat *st)
{
    return lstat(path, st) != 0 ? "gone" : q35_file_kind(st->st_mode);
}

void still(const ctx *c, const char *name, const char *kind)
{
    struct stat st;
    const char *got = kind_of(in_dir(c, name), &st);
    q35_case(c->s, strcmp(got, kind) == 0, "%s is still %s (%s)", name, kind, got);
}

/* The golden model with len bytes at the first occurrence of `at` (plus skip) replaced. */
/* The size of the temporary file of e.gguf in the case's folder, or -1 when there is none. */
static int64_t temp_size(const ctx *c)
{
    int64_t size = -1;
    DIR *d = opendir(c->dir);
    for (struct dirent *e; d && size < 0 && (e = readdir(d)) != NULL;) {
        struct stat st;
        if (strncmp(e->d_name, ".e.gguf.q35-", 12) == 0 && stat(in_dir(c, e->d_name), &st) == 0)
            size = (int64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return size;
}

bool start_make_until_temp(const ctx *c, q35_proc *p, bool sized)
{
    char *argv[] = {(char *)c->q35, "model", "make", "--shape", "0.8b", "--layers", "2", "--quant", "q8_0", "-o",
                    "e.gguf", NULL};
    q35_proc_opts o = {.cwd = c->dir};
    if (!q35_case(c->s, q35_proc_start(p, argv, &o) == 0, "model make of a 0.8b-shaped model started")) {
        memset(p, 0, sizeof *p); /* a finished child with nothing to read, for q35_proc_wait */
        p->out_fd = p->err_fd = -1;
        p->exited = p->timed_out = true;
        return false;
    }
    for (int i = 0; i < 60000 && q35_proc_running(p); i++) {
        if (temp_size(c) >= (sized ? 1 : 0))
            return true;
        usleep(1000);
    }
    return false;
}

void patched(const ctx *c, const char *name, const void *at, size_t at_len, size_t skip, const void *with,
                    size_t len)
{
    uint8_t *copy = malloc(c->model_len);
    memcpy(copy, c->model, c->model_len);
    uint8_t *p = memmem(copy, c->model_len, at, at_len);
    if (p && (size_t)(p - copy) + skip + len <= c->model_len)
        memcpy(p + skip, with, len);
    q35_case(c->s, p != NULL && q35_test_write_bytes(in_dir(c, name), copy, c->model_len) == 0,
             "%s: the golden model, edited", name);
    free(copy);
}

int cli_cases_main(int argc, char **argv, const test_case *k_cases, size_t n_cases, const char *title_of)
{
    if (argc >= 2 && strcmp(argv[1], "--registered") == 0) {
        int missing = 0;
        for (size_t i = 0; i < n_cases; i++) {
            bool found = false;
            for (int a = 2; a < argc && !found; a++)
                found = strcmp(argv[a], k_cases[i].name) == 0;
            printf("%s  %s\n", found ? "registered    " : "NOT REGISTERED", k_cases[i].name);
            missing += !found;
        }
        const bool same = missing == 0 && (size_t)(argc - 2) == n_cases;
        printf("%zu cases, %d registered names: %s\n", n_cases, argc - 2, same ? "the same" : "they differ");
        return same ? 0 : 1;
    }
    const test_case *tc = NULL;
    for (size_t i = 0; argc == 4 && i < n_cases && !tc; i++)
        tc = strcmp(argv[2], k_cases[i].name) == 0 ? &k_cases[i] : NULL;
    if (!tc) {
        fprintf(stderr, "usage: %s Q35 CASE WORKDIR | --registered NAME...   (an unknown CASE fails)\n", argv[0]);
        return 1;
    }
    q35_suite s;
    char title[128];
    snprintf(title, sizeof title, "%s: %s", title_of, tc->name);
    q35_suite_begin(&s, title, 0);
    char q35[4096];
    ctx c = {.s = &s, .q35 = realpath(argv[1], q35) ? q35 : argv[1]}; /* the cases run in their own folder */
    snprintf(c.dir, sizeof c.dir, "%s/%s", argv[3], tc->name);
    q35_repo_path(GOLDEN, c.golden, sizeof c.golden);
    c.model = q35_read_file(c.golden, &c.model_len);
    mkdir(argv[3], 0755);
    if (!q35_case(&s, c.model && q35_remove_tree(c.dir) == 0 && mkdir(c.dir, 0755) == 0, "a fresh folder %s", c.dir))
        return q35_suite_end(&s);
    const int rc = tc->run(&c);
    free(c.model);
    if (rc == Q35_TEST_SKIP)
        return rc;
    const int end = q35_suite_end(&s);
    return rc ? rc : end;
}
