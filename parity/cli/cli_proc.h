/* Test helper: runs a command as a child process the way a hostile user would
 * (stdout on /dev/full or closed, a file-size limit), captures what it prints,
 * never waits for it past a deadline; and the filesystem checks of the CLI
 * suite (a file byte for byte, a folder holding exactly the expected names). */
#ifndef Q35_CLI_PROC_H
#define Q35_CLI_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How the child is started. */
typedef struct q35_proc_opts {
    const char *cwd;          /* its working folder, or NULL */
    const char *stdout_path;  /* its stdout opened for writing on this path (e.g. /dev/full), or NULL: captured */
    bool close_stdout;        /* its stdout closed */
    int64_t fsize_limit;      /* RLIMIT_FSIZE in bytes (ulimit -f), or 0: unchanged */
} q35_proc_opts;

/* A child and, after q35_proc_wait, what it did. */
typedef struct q35_proc {
    pid_t pid;
    int out_fd, err_fd;       /* pipes from its stdout (-1 when not captured) and stderr */
    char *out, *err;          /* what it printed (malloc'd, NUL-terminated) */
    size_t out_len, err_len;  /* bytes of each */
    int status;               /* as waitpid gives it */
    bool exited;              /* reaped: status is final */
    bool timed_out;           /* killed at the deadline */
    double cpu_s;             /* its user + system CPU seconds, once it exited by itself */
} q35_proc;

/* Starts argv (argv[0] a path, NULL-terminated); 0 or -1 (errno). */
int q35_proc_start(q35_proc *p, char *const argv[], const q35_proc_opts *o);

/* Whether it is still running (reaping it when not), without waiting. */
bool q35_proc_running(q35_proc *p);

/* Reads its output until it exits, killing it (SIGKILL) after timeout_s. */
void q35_proc_wait(q35_proc *p, double timeout_s);

void q35_proc_free(q35_proc *p);

/* "exit 2", "killed by signal 15 (Terminated)", "timed out", into buf. */
const char *q35_proc_status_str(const q35_proc *p, char *buf, size_t cap);

/* The exit code, or -1 when it did not exit by itself. */
int q35_proc_exit_code(const q35_proc *p);

/* The first byte of s (n bytes) a terminal would act on: a control byte
 * other than '\n', or DEL; -1 when none. */
int64_t q35_first_control_byte(const char *s, size_t n);

/* Whether the text of path (read to its end: /proc files have no size) holds needle. */
bool q35_text_file_contains(const char *path, const char *needle);

/* Whether path holds exactly these n bytes. */
bool q35_file_equals(const char *path, const void *p, size_t n);

/* Whether folder dir holds exactly the names listed (NULL-terminated), no
 * other entry; the others (a temporary file left behind) are printed. */
bool q35_folder_holds(const char *dir, const char *const *names);

/* Removes dir and everything below it (no link followed); 0 or -1. */
int q35_remove_tree(const char *dir);

#endif /* Q35_CLI_PROC_H */
