/* The q35 command line under hostile input (issue 16): one case per way a run
 * could destroy a file, hang, leave a half-written result, leak, or print what
 * a terminal would act on. Each case runs the q35 binary in a fresh folder of
 * its own and asserts the exit status, the message, and the filesystem
 * afterwards: an old file intact byte for byte, nothing left behind (no
 * temporary file). A case that needs what this machine does not allow (mknod,
 * a tmpfs mount, /proc) exits 77, ctest's skip, saying why.
 * The driver: cli_case.h. */
#define _GNU_SOURCE /* unshare, CLONE_NEWNS, memmem */
#include "cli_case.h"

#include "core/gguf.h"
#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the cases -------------------------------------------------------------- */

/* Every usage error: exit 2, a message naming the problem, no leak (the asan
 * preset runs q35 under LeakSanitizer, whose report would change the exit
 * status), nothing written. Issue 16, reproductions 4 and 5. */
static int case_refusals(ctx *c)
{
    const q35_proc_opts *o = &k_plain;
    expect(c, o, 2, "--prompt is given twice", "run", "--prompt", "1", "--prompt", "2", NULL);
    expect(c, o, 2, "--logits-at needs --logits-out FILE", "run", "--logits-at", "1", NULL);
    expect(c, o, 2, "unknown option '--bogus'", "run", "--prompt", "1,2", "--bogus", NULL);
    expect(c, o, 2, "unknown option '--bogus'", "run", "--bogus", NULL);
    expect(c, o, 2, "--random needs a value (N)", "run", "--random", NULL);
    expect(c, o, 2, "--shape needs a value (NAME), got the option '-o'", "model", "make", "--shape", "-o", "x.gguf",
           NULL);
    expect(c, o, 2, "--shape needs a value (NAME)", "model", "make", "--shape", NULL);
    expect(c, o, 2, "unknown quant mix 'q4_km'", "model", "make", "--quant", "q4_km", "-o", "x.gguf", NULL);
    expect(c, o, 2, "unknown shape '3b'", "model", "make", "--shape", "3b", "-o", "x.gguf", NULL);
    expect(c, o, 2, "unknown quant mix 'q4_km'", "run", "--quant", "q4_km", NULL);
    expect(c, o, 2, "got '1,,2' (item 2 is empty)", "run", "--prompt", "1,,2", NULL);
    expect(c, o, 2, "(item 1 is empty)", "run", "--prompt", ",1", NULL);
    expect(c, o, 2, "(item 2 is empty)", "run", "--prompt", "1,", NULL);
    expect(c, o, 2, "(item 2 is empty)", "run", "--logits-at", "1,,2", "--logits-out", "l.f32", NULL);
    expect(c, o, 2, "--chunk-rows wants an integer in 1..1048576, got ' 5'", "run", "--chunk-rows", " 5", NULL);
    expect(c, o, 2, "--random cannot be given with --prompt", "run", "--prompt", "1", "--random", "5", NULL);
    expect(c, o, 2, "--prompt-seed cannot be given with --prompt", "run", "--prompt-seed", "3", "--prompt", "1", NULL);
    expect(c, o, 2, "--shape cannot be given with --model", "run", "--model", c->golden, "--shape", "9b", NULL);
    expect(c, o, 2, "--attention cannot be given with --cpu", "run", "--cpu", "--attention", "flash", NULL);
    expect(c, o, 2, "--logits-out needs --logits-at", "run", "--logits-out", "l.f32", NULL);
    expect(c, o, 2, "unexpected argument 'stray'", "run", "stray", NULL);
    expect(c, o, 2, "-o is given twice", "model", "make", "-o", "a.gguf", "-o", "b.gguf", NULL);
    expect(c, o, 2, "over the limit of 256", "model", "make", "--layers", "256", "--mtp", "1", "-o", "x.gguf", NULL);
    expect(c, o, 2, "unknown subcommand 'frob'", "model", "frob", NULL);
    expect(c, o, 2, "wants one FILE, got 2 arguments", "info", "a.gguf", "b.gguf", NULL);
    expect(c, o, 2, "unknown option '--bogus'", "info", "--bogus", NULL);
    expect(c, o, 2, "usage: q35 info FILE", "info", NULL);
    expect(c, o, 2, "unknown command 'frob'", "frob", NULL);
    const char *exit_help = "2 usage error";
    expect(c, o, 0, exit_help, "--help", NULL);
    expect(c, o, 0, exit_help, "info", "--help", NULL);
    expect(c, o, 0, exit_help, "model", "make", "--help", NULL);
    expect(c, o, 0, exit_help, "run", "--help", NULL);
    static const char *const nothing[] = {NULL};
    holds(c, nothing);
    return 0;
}

/* Reproduction 1: a failed `model make` keeps what -o named. */
static int case_failed_make_keeps_file(ctx *c)
{
    q35_test_write_bytes(in_dir(c, "e.gguf"), c->model, c->model_len);
    expect(c, &k_plain, 2, "unknown quant mix 'q4_km'", "model", "make", "--quant", "q4_km", "-o", "e.gguf", NULL);
    expect(c, &k_plain, 2, "--vocab wants an integer", "model", "make", "--vocab", "0", "-o", "e.gguf", NULL);
    intact(c, "e.gguf", c->model, c->model_len);
    static const char *const left[] = {"e.gguf", NULL};
    holds(c, left);
    return 0;
}

/* Reproduction 1: -o naming a device node is refused and the node kept. */
static int case_output_node(ctx *c)
{
    if (mknod(in_dir(c, "n"), S_IFCHR | 0666, makedev(1, 7)) != 0) {
        printf("SKIP  mknod of a character device (1, 7, as /dev/full) is not permitted here: %s\n", strerror(errno));
        return Q35_TEST_SKIP;
    }
    expect(c, &k_plain, 1, "output n: is a character device, not a regular file", "model", "make", "-o", "n", NULL);
    expect(c, &k_plain, 1, "is a character device", "run", "--random", "3", "--logits-at", "1", "--logits-out", "n",
           NULL);
    struct stat st;
    q35_case(c->s, strcmp(kind_of(in_dir(c, "n"), &st), "a character device") == 0 && st.st_rdev == makedev(1, 7),
             "n is still the character device 1, 7");
    static const char *const left[] = {"n", NULL};
    holds(c, left);
    return 0;
}

/* Reproduction 1: no other kind of path is written through or replaced. */
static int case_output_special(ctx *c)
{
    if (mkfifo(in_dir(c, "fifo"), 0644) != 0 || mkdir(in_dir(c, "folder"), 0755) != 0 ||
        symlink("/dev/null", in_dir(c, "to-null")) != 0 || symlink("nowhere", in_dir(c, "dangling")) != 0) {
        printf("SKIP  cannot make a FIFO, a folder and links here: %s\n", strerror(errno));
        return Q35_TEST_SKIP;
    }
    expect(c, &k_plain, 1, "output fifo: is a FIFO, not a regular file", "model", "make", "-o", "fifo", NULL);
    expect(c, &k_plain, 1, "output folder: is a folder", "model", "make", "-o", "folder", NULL);
    expect(c, &k_plain, 1, "names a folder, not a file", "model", "make", "-o", "new/", NULL);
    expect(c, &k_plain, 1, "output to-null: is a character device", "model", "make", "-o", "to-null", NULL);
    expect(c, &k_plain, 1, "a symbolic link to nothing usable", "model", "make", "-o", "dangling", NULL);
    expect(c, &k_plain, 1, "its folder missing: No such file or directory", "model", "make", "-o", "missing/x.gguf",
           NULL);
    expect(c, &k_plain, 2, "-o wants a file name, got an empty one", "model", "make", "-o", "", NULL);
    expect(c, &k_plain, 2, "--logits-out wants a file name, got an empty one", "run", "--random", "2", "--logits-at",
           "1", "--logits-out", "", NULL);
    expect(c, &k_plain, 1, "output fifo: is a FIFO", "run", "--random", "2", "--logits-at", "1", "--logits-out", "fifo",
           NULL);
    still(c, "fifo", "a FIFO");
    still(c, "folder", "a folder");
    still(c, "to-null", "a symbolic link");
    still(c, "dangling", "a symbolic link");
    char target[64] = "";
    const ssize_t n = readlink(in_dir(c, "to-null"), target, sizeof target - 1);
    q35_case(c->s, n == 9 && strcmp(target, "/dev/null") == 0, "to-null still points at /dev/null (%s)", target);
    static const char *const left[] = {"fifo", "folder", "to-null", "dangling", NULL};
    holds(c, left);
    return 0;
}

/* A successful write replaces the file in place: its permissions kept, a link
 * to it kept a link, nothing left beside it. */
static int case_replace(ctx *c)
{
    q35_test_write_bytes(in_dir(c, "e.gguf"), c->model, c->model_len);
    chmod(in_dir(c, "e.gguf"), 0640);
    if (symlink("e.gguf", in_dir(c, "link.gguf")) != 0)
        return Q35_TEST_SKIP;
    expect(c, &k_plain, 0, "wrote link.gguf: shape tiny, 1 layers, vocab 64, mix f16", "model", "make", "--layers", "1",
           "--vocab", "64", "--quant", "f16", "-o", "link.gguf", NULL);
    struct stat st;
    still(c, "link.gguf", "a symbolic link");
    q35_case(c->s, stat(in_dir(c, "e.gguf"), &st) == 0 && (st.st_mode & 07777) == 0640,
             "e.gguf keeps its mode 0640 (%o)", st.st_mode & 07777);
    expect(c, &k_plain, 0, "layers            1 run", "info", "e.gguf", NULL);
    put_old(c, "l.f32");
    expect(c, &k_plain, 0, "wrote logits at 2 positions", "run", "--model", c->golden, "--random", "4", "--logits-at",
           "1,3", "--logits-out", "l.f32", NULL);
    q35_case(c->s, stat(in_dir(c, "l.f32"), &st) == 0 && st.st_size == 2 * 512 * 4, "l.f32 replaced: %lld bytes",
             (long long)st.st_size);
    expect(c, &k_plain, 2, "is the model file", "run", "--model", "e.gguf", "--random", "2", "--logits-at", "1",
           "--logits-out", "e.gguf", NULL);
    static const char *const left[] = {"e.gguf", "link.gguf", "l.f32", NULL};
    holds(c, left);
    return 0;
}

/* Reproduction 2: a FIFO (or any non-regular file) as input is refused at once. */
static int case_input_special(ctx *c)
{
    if (mkfifo(in_dir(c, "f"), 0644) != 0) {
        printf("SKIP  mkfifo: %s\n", strerror(errno));
        return Q35_TEST_SKIP;
    }
    expect(c, &k_plain, 1, "GGUF f: is a FIFO, not a regular file", "info", "f", NULL);
    expect(c, &k_plain, 1, "GGUF f: is a FIFO, not a regular file", "run", "--model", "f", NULL);
    expect(c, &k_plain, 1, "GGUF .: is a folder, not a regular file", "info", ".", NULL);
    expect(c, &k_plain, 1, "is a character device, not a regular file", "run", "--model", "/dev/zero", NULL);
    expect(c, &k_plain, 1, "cannot open: No such file or directory", "info", "none.gguf", NULL);
    still(c, "f", "a FIFO");
    return 0;
}

/* Reproduction 3: under a file-size limit a write fails with its reason, exit
 * 1 (not SIGXFSZ), and the old file stays. */
static int case_size_limit(ctx *c)
{
    const q35_proc_opts lim = {.fsize_limit = 64 << 10};
    put_old(c, "e.gguf");
    put_old(c, "l.f32");
    expect(c, &lim, 1, "MiB) failed: File too large", "model", "make", "-o", "e.gguf", NULL);
    expect(c, &lim, 1, "writing l.f32 failed: File too large", "run", "--model", c->golden, "--random", "40",
           "--logits-at", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33",
           "--logits-out", "l.f32", NULL);
    intact(c, "e.gguf", k_old, sizeof k_old);
    intact(c, "l.f32", k_old, sizeof k_old);
    static const char *const left[] = {"e.gguf", "l.f32", NULL};
    holds(c, left);
    return 0;
}

/* Reproductions 1 and 3 on a full disk: a 1 MiB tmpfs in a mount namespace of
 * this process's own, filled up. */
static int case_full_disk(ctx *c)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", c->dir, "tmpfs", 0, "size=1m") != 0) {
        printf("SKIP  cannot mount a tmpfs here (root in a mount namespace of its own is needed): %s\n",
               strerror(errno));
        return Q35_TEST_SKIP;
    }
    put_old(c, "e.gguf");
    put_old(c, "l.f32");
    const int fd = open(in_dir(c, "filler"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    static const char block[4096];
    while (fd >= 0 && write(fd, block, sizeof block) > 0)
        ;
    const bool full = fd >= 0 && errno == ENOSPC;
    if (fd >= 0)
        close(fd);
    if (!q35_case(c->s, full, "the tmpfs is full (ENOSPC)"))
        return 1;
    expect(c, &k_plain, 1, "failed: No space left on device", "model", "make", "-o", "e.gguf", NULL);
    expect(c, &k_plain, 1, "writing l.f32 failed: No space left on device", "run", "--model", c->golden, "--random",
           "3", "--logits-at", "0,1,2", "--logits-out", "l.f32", NULL);
    intact(c, "e.gguf", k_old, sizeof k_old);
    intact(c, "l.f32", k_old, sizeof k_old);
    static const char *const left[] = {"e.gguf", "l.f32", "filler", NULL};
    holds(c, left);
    /* Room for the header, not for the data: the workers stop at the first failed
     * write. Writing the whole 9B takes ~70 CPU seconds (two cores, 36.5 s); the
     * bound leaves the failure path 7x that margin of its own. */
    unlink(in_dir(c, "filler"));
    q35_proc p;
    char *argv[] = {(char *)c->q35, "model", "make", "--shape", "9b", "--quant", "q4_k", "-o", "big.gguf", NULL};
    const q35_proc_opts o = {.cwd = c->dir};
    if (q35_proc_start(&p, argv, &o) == 0)
        q35_proc_wait(&p, TIMEOUT_S);
    char status[96];
    q35_case(c->s, q35_proc_exit_code(&p) == 1 && p.err && strstr(p.err, "No space left on device") && p.cpu_s < 10.0,
             "model make of the 9B on 1 MiB: %s after %.2f CPU seconds (want exit 1, 'No space left', < 10 s): %s",
             q35_proc_status_str(&p, status, sizeof status), p.cpu_s, p.err ? p.err : "");
    q35_proc_free(&p);
    static const char *const after[] = {"e.gguf", "l.f32", NULL};
    holds(c, after);
    return 0;
}

/* Interrupted while writing (Ctrl-C, and every other signal whose default ends
 * the process and a handler can catch): the temporary file goes, the old file
 * stays. No core file: SIGQUIT's default dumps one. */
static int case_interrupted(ctx *c)
{
    put_old(c, "e.gguf");
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* inherited by the child */
    static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGHUP};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        q35_proc p;
        const bool seen = start_make_until_temp(c, &p, false);
        if (seen)
            kill(p.pid, sigs[k]);
        q35_proc_wait(&p, TIMEOUT_S);
        char status[96];
        q35_case(c->s, seen && !p.timed_out && WIFSIGNALED(p.status) && WTERMSIG(p.status) == sigs[k],
                 "its temporary file appeared (%s), then %s: %s", seen ? "yes" : "no", strsignal(sigs[k]),
                 q35_proc_status_str(&p, status, sizeof status));
        q35_proc_free(&p);
        intact(c, "e.gguf", k_old, sizeof k_old);
        static const char *const left[] = {"e.gguf", NULL};
        holds(c, left);
    }
    return 0;
}

/* Reproduction 6: output that cannot be written is a failure with its reason. */
static int case_stdout_errors(ctx *c)
{
    const q35_proc_opts closed = {.close_stdout = true}, full = {.stdout_path = "/dev/full"};
    expect(c, &closed, 1, "writing to standard output failed: Bad file descriptor", "info", c->golden, NULL);
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
        printf("SKIP  no /dev/full here: only the closed stdout is checked\n");
        return 0;
    }
    expect(c, &full, 1, "writing to standard output failed: No space left on device", "info", c->golden, NULL);
    expect(c, &full, 1, "writing to standard output failed: No space left on device", "run", "--cpu", "--random", "3",
           NULL);
    expect(c, &full, 1, "writing to standard output failed: No space left on device", "--help", NULL);
    return 0;
}

/* The value of a scalar key: its name, its type (4 bytes), then the value. */
static void patched_f32(const ctx *c, const char *name, const char *key, float v)
{
    patched(c, name, key, strlen(key), strlen(key) + 4, &v, sizeof v);
}

/* "output.weight" with its length prefix, renamed to the 13 bytes of `to`. */
static void renamed_output(const ctx *c, const char *name, const char *to)
{
    static const char prefixed[] = "\x0d\0\0\0\0\0\0\0output.weight";
    patched(c, name, prefixed, sizeof prefixed - 1, 8, to, 13);
}

/* Reproduction 7: float hyperparameters finite, unknown tensors said. */
static int case_loader_hostile(ctx *c)
{
    patched_f32(c, "inf.gguf", "qwen35.rope.freq_base", INFINITY);
    patched_f32(c, "nan.gguf", "qwen35.attention.layer_norm_rms_epsilon", NAN);
    renamed_output(c, "renamed.gguf", "output.weighu");
    expect(c, &k_plain, 1, "rope.freq_base inf is not a finite number above 1", "info", "inf.gguf", NULL);
    expect(c, &k_plain, 1, "rope.freq_base inf is not a finite number above 1", "run", "--model", "inf.gguf", NULL);
    expect(c, &k_plain, 1, "layer_norm_rms_epsilon nan is not in (0, 1)", "info", "nan.gguf", NULL);
    expect(c, &k_plain, 0, "unknown tensors   1, not used by the loader:\n    output.weighu", "info", "renamed.gguf",
           NULL);
    expect(c, &k_plain, 0,
           "warning: renamed.gguf: 1 tensor the qwen35 loader does not know, not used: 'output.weighu'; the output is "
           "tied to token_embd (the file has no 'output.weight')",
           "run", "--model", "renamed.gguf", "--cpu", "--random", "3", NULL);
    return 0;
}

/* Reproduction 9: names, strings and paths with control bytes are printed escaped. */
static int case_escapes(ctx *c)
{
    renamed_output(c, "esc.gguf", "out\x1b[2Jput.we");
    expect(c, &k_plain, 0, "out\\e[2Jput.we", "info", "esc.gguf", NULL);
    expect(c, &k_plain, 0, "'out\\e[2Jput.we'", "run", "--model", "esc.gguf", "--cpu", "--random", "2", NULL);
    patched(c, "name.gguf", "golden-tiny-r2", 14, 0, "\x1b]0;owned\x07\r\x9b" "2J", 14);
    expect(c, &k_plain, 0, "\"\\e]0;owned\\x07\\r\\x9b2J\"", "info", "name.gguf", NULL);
    expect(c, &k_plain, 1, "GGUF bad\\e[31mname: cannot open", "info", "bad\x1b[31mname", NULL);
    expect(c, &k_plain, 2, "unknown option '--\\e[2J'", "run", "--\x1b[2J", NULL);
    return 0;
}

/* Reproduction 8: the model file truncated while `run` has it mapped. */
static int case_sigbus(ctx *c)
{
    const char *model = in_dir(c, "m.gguf");
    q35_test_write_bytes(model, c->model, c->model_len);
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)getpid());
    if (access(maps, R_OK) != 0) {
        printf("SKIP  no /proc/PID/maps to see when the model is mapped\n");
        return Q35_TEST_SKIP;
    }
    char *argv[] = {(char *)c->q35, "run", "--model", "m.gguf", "--cpu", "--random", "20000", "--chunk-rows", "1",
                    NULL};
    q35_proc_opts o = {.cwd = c->dir};
    q35_proc p;
    if (!q35_case(c->s, q35_proc_start(&p, argv, &o) == 0, "run over a copy of the golden model started"))
        return 1;
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)p.pid);
    bool mapped = false;
    for (int i = 0; i < 60000 && !mapped && q35_proc_running(&p); i++)
        if (!(mapped = q35_text_file_contains(maps, "/m.gguf")))
            usleep(1000);
    const bool cut = mapped && truncate(model, 0) == 0;
    q35_proc_wait(&p, TIMEOUT_S);
    char status[96];
    q35_case(c->s, cut && q35_proc_exit_code(&p) == 1, "mapped, truncated to 0 bytes, then: %s (want exit 1)",
             q35_proc_status_str(&p, status, sizeof status));
    q35_case(c->s, p.err && strstr(p.err, "q35 run: m.gguf: the file shrank while it was in use") &&
                       strstr(p.err, "(SIGBUS); stopping"),
             "the message names the file: %s", p.err ? p.err : "");
    int lines = 0, said = 0;
    for (const char *q = p.err; q && *q; q++)
        lines += *q == '\n';
    for (const char *q = p.err; q && (q = strstr(q, "the file shrank")) != NULL; q++)
        said++;
    q35_case(c->s, lines == 1 && said == 1, "one message, however many threads took the SIGBUS (%d lines, said %d times)",
             lines, said);
    q35_proc_free(&p);
    return 0;
}

static const test_case k_cases[] = {
    {"refusals", case_refusals},           {"failed_make_keeps_file", case_failed_make_keeps_file},
    {"output_node", case_output_node},     {"output_special", case_output_special},
    {"replace", case_replace},             {"input_special", case_input_special},
    {"size_limit", case_size_limit},       {"full_disk", case_full_disk},
    {"interrupted", case_interrupted},     {"stdout_errors", case_stdout_errors},
    {"loader_hostile", case_loader_hostile}, {"escapes", case_escapes},
    {"sigbus", case_sigbus},
};

int main(int argc, char **argv)
{
    return cli_cases_main(argc, argv, k_cases, sizeof k_cases / sizeof k_cases[0], "q35 command line under hostile input");
}
