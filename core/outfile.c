/* Writing a file through a temporary file and a rename (outfile.h). */
#define _DEFAULT_SOURCE  /* flock */
#define _XOPEN_SOURCE 700 /* realpath */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The temporary files in flight, for q35_outfile_remove_pending. A slot is 0
 * (free), 1 (claimed) or 2 (armed: its path, or mkstemp's template becoming it).
 * More outputs than slots at once still work; the extra ones are not removed by
 * a signal. */
#define PENDING_SLOTS 8
static char g_pending[PENDING_SLOTS][Q35_OUTFILE_PATH + 32];
static atomic_int g_pending_state[PENDING_SLOTS];

/* A free slot, claimed (state 1), or -1. */
static int pending_claim(void)
{
    for (int i = 0; i < PENDING_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&g_pending_state[i], &expected, 1))
            return i;
    }
    return -1;
}

static void pending_drop(int slot)
{
    if (slot >= 0)
        atomic_store(&g_pending_state[slot], 0);
}

void q35_outfile_remove_pending(void)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (atomic_load(&g_pending_state[i]) == 2)
            unlink(g_pending[i]);
}

/* What the last q35_outfile_open removed of earlier runs' temporary files. */
static char g_note[512];

const char *q35_outfile_note(void)
{
    return g_note;
}

/* A stale temporary file: no writer holds its lock (a writer holds it from
 * mkstemp to the rename). A file of 0 bytes younger than a minute is left
 * alone: its writer may be between mkstemp and flock. Removes it; its bytes,
 * or -1 when it is not stale (or is gone, or is not a regular file). */
static int64_t remove_if_stale(int dirfd, const char *name)
{
    const int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st, now_st;
    int64_t bytes = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        !(st.st_size == 0 && st.st_mtime > time(NULL) - 60) &&
        fstatat(dirfd, name, &now_st, AT_SYMLINK_NOFOLLOW) == 0 && now_st.st_ino == st.st_ino &&
        now_st.st_dev == st.st_dev && unlinkat(dirfd, name, 0) == 0)
        bytes = (int64_t)st.st_size;
    close(fd); /* releases the lock */
    return bytes;
}

/* Removes the temporary files that earlier runs writing the same target left
 * behind (killed by SIGKILL, or a crash): ".BASE.q35-XXXXXX" beside it, whose
 * writer is gone. Says what it removed in g_note. */
static void clean_stale(const char *dir, const char *base)
{
    g_note[0] = '\0';
    char prefix[256];
    const int plen = snprintf(prefix, sizeof prefix, ".%.200s.q35-", base);
    DIR *d = opendir(dir);
    if (!d || plen <= 0)
        return;
    int n = 0;
    int64_t bytes = 0;
    char first[64] = "";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || strlen(e->d_name) != (size_t)plen + 6)
            continue;
        const int64_t b = remove_if_stale(dirfd(d), e->d_name);
        if (b < 0)
            continue;
        if (n++ == 0)
            snprintf(first, sizeof first, "%.40s%s", e->d_name, strlen(e->d_name) > 40 ? "..." : "");
        bytes += b;
    }
    closedir(d);
    if (n > 0)
        snprintf(g_note, sizeof g_note,
                 "removed %d temporary file%s (%.1f MiB; %s%s) that an earlier run, killed before it finished, "
                 "left in %.200s",
                 n, n == 1 ? "" : "s", (double)bytes / 1048576.0, first, n > 1 ? ", ..." : "", dir);
}

const char *q35_file_kind(unsigned mode)
{
    return S_ISREG(mode) ? "a regular file" : S_ISDIR(mode) ? "a folder" : S_ISCHR(mode) ? "a character device"
           : S_ISBLK(mode) ? "a block device" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode) ? "a symbolic link" : "a special file";
}

/* The folder part of path ("." when none) into dir. */
static void folder_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, cap, ".");
    else if (slash == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* Checks path; *exists and *st say what is there (st of the file a link names). */
static int check(const char *path, int *exists, struct stat *st, q35_error *err)
{
    *exists = 0;
    const size_t len = strlen(path);
    if (len == 0)
        return q35_fail(err, "the output path is empty");
    if (len >= Q35_OUTFILE_PATH)
        return q35_fail(err, "output %.64s...: the path is %zu bytes long, over the limit of %d", path, len,
                        Q35_OUTFILE_PATH - 1);
    if (path[len - 1] == '/')
        return q35_fail(err, "output %s: names a folder, not a file", path);
    struct stat lst;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT)
            return q35_fail(err, "output %s: %s", path, strerror(errno));
        char dir[Q35_OUTFILE_PATH];
        folder_of(path, dir, sizeof dir);
        struct stat dst;
        if (stat(dir, &dst) != 0)
            return q35_fail(err, "output %s: its folder %s: %s", path, dir, strerror(errno));
        if (!S_ISDIR(dst.st_mode))
            return q35_fail(err, "output %s: %s is %s, not a folder", path, dir, q35_file_kind(dst.st_mode));
        if (access(dir, W_OK | X_OK) != 0)
            return q35_fail(err, "output %s: cannot create files in %s: %s", path, dir, strerror(errno));
        return 0;
    }
    if (S_ISLNK(lst.st_mode) && stat(path, st) != 0)
        return q35_fail(err, "output %s: a symbolic link to nothing usable (%s): refusing to replace it", path,
                        strerror(errno));
    if (!S_ISLNK(lst.st_mode))
        *st = lst;
    if (!S_ISREG(st->st_mode))
        return q35_fail(err, "output %s: is %s, not a regular file: refusing to write to it", path,
                        q35_file_kind(st->st_mode));
    if (access(path, W_OK) != 0)
        return q35_fail(err, "output %s: not writable: %s", path, strerror(errno));
    *exists = 1;
    return 0;
}

int q35_outfile_check(const char *path, q35_error *err)
{
    int exists;
    struct stat st;
    return check(path, &exists, &st, err);
}

int q35_outfile_open(q35_outfile *f, const char *path, q35_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->slot = -1;
    f->shown = path;
    int exists;
    struct stat st;
    if (check(path, &exists, &st, err))
        return -1;
    char resolved[PATH_MAX];
    if (exists && realpath(path, resolved) == NULL)
        return q35_fail(err, "output %s: cannot resolve the path: %s", path, strerror(errno));
    snprintf(f->path, sizeof f->path, "%s", exists ? resolved : path);
    char dir[Q35_OUTFILE_PATH];
    folder_of(f->path, dir, sizeof dir);
    const char *slash = strrchr(f->path, '/');
    const char *base = slash ? slash + 1 : f->path;
    clean_stale(dir, base);
    /* The name is made in the slot q35_outfile_remove_pending reads, armed
     * before the file exists: a signal at any point finds it. */
    f->slot = pending_claim();
    char *name = f->slot >= 0 ? g_pending[f->slot] : f->tmp;
    if (snprintf(name, sizeof f->tmp, "%s/.%.200s.q35-XXXXXX", dir, base) >= (int)sizeof f->tmp) {
        pending_drop(f->slot);
        f->slot = -1;
        return q35_fail(err, "output %s: the path of its temporary file is over %zu bytes", path, sizeof f->tmp);
    }
    if (f->slot >= 0)
        atomic_store(&g_pending_state[f->slot], 2);
    f->fd = mkstemp(name);
    if (f->fd < 0) {
        const int e = errno;
        pending_drop(f->slot);
        f->slot = -1;
        return q35_fail(err, "output %s: cannot create a temporary file in %s: %s", path, dir, strerror(e));
    }
    if (name != f->tmp)
        memcpy(f->tmp, name, sizeof f->tmp);
    mode_t mode = st.st_mode & 07777;
    if (!exists) {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    /* held until the rename or the process's end: a later run finds a temporary
     * file whose lock it can take stale (clean_stale) */
    if (flock(f->fd, LOCK_EX | LOCK_NB) != 0 || fcntl(f->fd, F_SETFD, FD_CLOEXEC) != 0 || fchmod(f->fd, mode) != 0) {
        const int e = errno;
        q35_outfile_discard(f);
        return q35_fail(err, "output %s: setting up its temporary file failed: %s", path, strerror(e));
    }
    return 0;
}

int q35_outfile_write(q35_outfile *f, const void *p, size_t n, q35_error *err)
{
    const char *b = p;
    while (n > 0) {
        const ssize_t w = write(f->fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return q35_fail(err, "writing %s failed: %s", f->shown, w < 0 ? strerror(errno) : "no progress");
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int q35_outfile_commit(q35_outfile *f, q35_error *err)
{
    const char *step = "flushing it to disk";
    int failed = fsync(f->fd) != 0;
    if (!failed) {
        step = "closing it";
        failed = close(f->fd) != 0;
        f->fd = -1;
    }
    if (!failed) {
        step = "renaming it into place";
        failed = rename(f->tmp, f->path) != 0;
    }
    if (failed) {
        const int e = errno;
        q35_outfile_discard(f);
        return q35_fail(err, "writing %s failed (%s): %s", f->shown, step, strerror(e));
    }
    f->tmp[0] = '\0';
    pending_drop(f->slot);
    f->slot = -1;
    return 0;
}

void q35_outfile_discard(q35_outfile *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->tmp[0])
        unlink(f->tmp);
    f->tmp[0] = '\0';
    pending_drop(f->slot);
    f->slot = -1;
}
