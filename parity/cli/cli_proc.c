/* Child processes and filesystem checks for the CLI suite (cli_proc.h). */
#define _GNU_SOURCE /* strsignal */
#include "cli_proc.h"

#include "parity/lib/harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* In the child: stdout as o says, stderr to its pipe, the limit; never returns. */
static void child(char *const argv[], const q35_proc_opts *o, const int out[2], const int err[2])
{
    if (o->close_stdout) {
        close(STDOUT_FILENO);
    } else if (o->stdout_path) {
        const int fd = open(o->stdout_path, O_WRONLY);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
            _exit(126);
    } else if (dup2(out[1], STDOUT_FILENO) < 0) {
        _exit(126);
    }
    if (dup2(err[1], STDERR_FILENO) < 0)
        _exit(126);
    if (o->fsize_limit > 0) {
        const struct rlimit lim = {.rlim_cur = (rlim_t)o->fsize_limit, .rlim_max = (rlim_t)o->fsize_limit};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(126);
    }
    if (o->cwd && chdir(o->cwd) != 0)
        _exit(126);
    /* As a shell starts a foreground command: a background test runner's
     * ignored SIGINT would otherwise be inherited (and kept, as nohup's is). */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    execv(argv[0], argv);
    _exit(127);
}

int q35_proc_start(q35_proc *p, char *const argv[], const q35_proc_opts *o)
{
    memset(p, 0, sizeof *p);
    p->out_fd = p->err_fd = -1;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    const bool capture = !o->close_stdout && !o->stdout_path;
    if ((capture && pipe(out) != 0) || pipe(err) != 0)
        return -1;
    fflush(NULL);
    p->pid = fork();
    if (p->pid < 0)
        return -1;
    if (p->pid == 0)
        child(argv, o, out, err);
    if (capture)
        close(out[1]);
    close(err[1]);
    p->out_fd = capture ? out[0] : -1;
    p->err_fd = err[0];
    return 0;
}

/* Appends what fd has to *buf; closes it at EOF. */
static void drain(int *fd, char **buf, size_t *len)
{
    char chunk[4096];
    const ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    char *grown = realloc(*buf, *len + (size_t)n + 1);
    if (!grown)
        return;
    memcpy(grown + *len, chunk, (size_t)n);
    *len += (size_t)n;
    grown[*len] = '\0';
    *buf = grown;
}

bool q35_proc_running(q35_proc *p)
{
    struct rusage ru;
    if (!p->exited && wait4(p->pid, &p->status, WNOHANG, &ru) == p->pid) {
        p->exited = true;
        p->cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                   1e-6 * (double)ru.ru_stime.tv_usec;
    }
    return !p->exited;
}

void q35_proc_wait(q35_proc *p, double timeout_s)
{
    const double deadline = now_s() + timeout_s;
    while (!p->exited || p->out_fd >= 0 || p->err_fd >= 0) {
        struct pollfd fds[2] = {{.fd = p->out_fd, .events = POLLIN}, {.fd = p->err_fd, .events = POLLIN}};
        if ((p->out_fd >= 0 || p->err_fd >= 0) && poll(fds, 2, 20) > 0) {
            if (p->out_fd >= 0 && fds[0].revents)
                drain(&p->out_fd, &p->out, &p->out_len);
            if (p->err_fd >= 0 && fds[1].revents)
                drain(&p->err_fd, &p->err, &p->err_len);
        } else if (p->out_fd < 0 && p->err_fd < 0) {
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        }
        if (q35_proc_running(p) && now_s() > deadline) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->exited = p->timed_out = true;
        }
        if (p->exited && (p->timed_out || now_s() > deadline + 1.0)) /* a grandchild may hold the pipes */
            break;
    }
    for (int *fd = &p->out_fd; fd <= &p->err_fd; fd++)
        if (*fd >= 0)
            close(*fd), *fd = -1;
    if (!p->out)
        p->out = calloc(1, 1);
    if (!p->err)
        p->err = calloc(1, 1);
}

void q35_proc_free(q35_proc *p)
{
    free(p->out);
    free(p->err);
    p->out = p->err = NULL;
}

int q35_proc_exit_code(const q35_proc *p)
{
    return !p->timed_out && WIFEXITED(p->status) ? WEXITSTATUS(p->status) : -1;
}

const char *q35_proc_status_str(const q35_proc *p, char *buf, size_t cap)
{
    if (p->timed_out)
        snprintf(buf, cap, "timed out (killed)");
    else if (WIFEXITED(p->status))
        snprintf(buf, cap, "exit %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(p->status), strsignal(WTERMSIG(p->status)));
    else
        snprintf(buf, cap, "status 0x%x", p->status);
    return buf;
}

int64_t q35_first_control_byte(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] < 0x20 && s[i] != '\n') || s[i] == 0x7f)
            return (int64_t)i;
    return -1;
}

bool q35_text_file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char *text = NULL;
    size_t len = 0, cap = 0;
    bool ok = true;
    for (size_t n = 1; n > 0 && ok;) {
        if (len + 4097 > cap) {
            char *grown = realloc(text, cap = 2 * cap + 8192);
            ok = grown != NULL;
            text = ok ? grown : text;
            if (!ok)
                break;
        }
        n = fread(text + len, 1, 4096, f);
        len += n;
    }
    fclose(f);
    const bool found = ok && text && (text[len] = '\0', strstr(text, needle) != NULL);
    free(text);
    return found;
}

bool q35_file_equals(const char *path, const void *p, size_t n)
{
    size_t len = 0;
    void *got = q35_read_file(path, &len);
    const bool same = got && len == n && memcmp(got, p, n) == 0;
    free(got);
    return same;
}

bool q35_folder_holds(const char *dir, const char *const *names)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    int listed = 0, found = 0;
    bool ok = true;
    for (const char *const *n = names; *n; n++)
        listed++;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool expected = false;
        for (const char *const *n = names; *n && !expected; n++)
            expected = strcmp(*n, e->d_name) == 0;
        if (expected) {
            found++;
        } else {
            printf("       %s/%s is left behind\n", dir, e->d_name);
            ok = false;
        }
    }
    closedir(d);
    return ok && found == listed;
}

int q35_remove_tree(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(dir);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc |= q35_remove_tree(path);
    }
    closedir(d);
    return rmdir(dir) == 0 ? rc : -1;
}
