/* The command line's signal handlers (cli.h): what a run does when a write
 * meets a size limit, when it is interrupted, and when its model file shrinks
 * under the mapping. Handlers use only async-signal-safe calls. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include "core/escape.h"
#include "core/outfile.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* The guarded mapping and its escaped path, set before any read of it; or a
 * file being opened (g_opening), whose mapping is not known yet. */
static const uint8_t *volatile g_map_base;
static volatile uint64_t g_map_size;
static volatile sig_atomic_t g_opening;
static char g_map_path[4 * 512 + 4];

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        const ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Decimal digits of v into buf (24 bytes). */
static const char *decimal(uint64_t v, char *buf)
{
    char *p = buf + 23;
    *p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    return p;
}

static void die_of(int sig)
{
    q35_outfile_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns */
}

/* Set by the first thread that reports a shrunk file: the others wait for its _exit. */
static atomic_flag g_reporting = ATOMIC_FLAG_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    const uint8_t *base = g_map_base, *at = si->si_addr;
    const bool inside = base && at >= base && (uint64_t)(at - base) < g_map_size;
    if (inside || g_opening) {
        if (atomic_flag_test_and_set(&g_reporting)) /* another thread is saying it: one message */
            for (;;)
                pause();
        char num[24];
        q35_outfile_remove_pending();
        say(cli_command());
        say(": ");
        say(g_map_path);
        say(": the file shrank while it was in use (truncated or rewritten by another program?): ");
        if (inside) {
            say("reading byte ");
            say(decimal((uint64_t)(at - base), num));
            say(" of it failed (SIGBUS); stopping\n");
        } else {
            say("reading it while opening it failed (SIGBUS); stopping\n");
        }
        _exit(CLI_FAILED);
    }
    die_of(sig);
}

static void on_fatal(int sig)
{
    die_of(sig);
}

void cli_signals_init(void)
{
    signal(SIGXFSZ, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_fatal;
    /* the signals whose default ends the process and a handler can catch (not the
     * profilers' SIGPROF and SIGVTALRM) */
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old;
        /* kept as found where not the default: ignored (nohup), or another tool's handler */
        if (sigaction(fatal[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            sigaction(fatal[i], &sa, NULL);
    }
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
}

void cli_guard_opening(const char *path)
{
    g_map_base = NULL;
    q35_escape_str(g_map_path, sizeof g_map_path, path);
    g_opening = 1;
}

void cli_guard_mapping(const q35_gguf *g)
{
    g_opening = 0;
    g_map_base = NULL;
    if (!g || !g->map)
        return;
    q35_escape_str(g_map_path, sizeof g_map_path, g->source);
    g_map_size = g->size;
    g_map_base = g->base;
}
