/* Writing a file so that a failure never destroys what was there: the bytes go
 * to a temporary file beside the target (the same folder, so the final rename
 * is atomic), which is flushed to disk and renamed over the target only when
 * every write succeeded. A failure at any point removes the temporary file and
 * leaves the target exactly as it was.
 *
 * The target must be a new path or a regular file: a device, FIFO, socket,
 * folder or dangling link is refused before anything is created, so -o never
 * writes into (or replaces) /dev/full, a FIFO or a node. A symbolic link to a
 * regular file is followed: the file it names is replaced, the link stays. The
 * new file takes the old one's permission bits (a new one 0666 less the umask).
 *
 * The temporary file is locked (flock) while its writer lives. A writer killed
 * where no handler runs (SIGKILL, a crash) leaves it behind; the next open of the
 * same target removes every such file whose lock it can take (but one of 0 bytes
 * younger than a minute, whose writer may not have locked it yet), and says so
 * (q35_outfile_note).
 *
 * Messages name the target and say why (strerror): "File too large" under a
 * file-size limit when SIGXFSZ is ignored, "No space left on device", ... */
#ifndef Q35_OUTFILE_H
#define Q35_OUTFILE_H

#include "core/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_OUTFILE_PATH 4096 /* longest target path accepted, bytes */

typedef struct q35_outfile {
    char path[Q35_OUTFILE_PATH];     /* the target, a link resolved */
    char tmp[Q35_OUTFILE_PATH + 32]; /* the temporary file beside it, "" when none */
    const char *shown;               /* the target as the caller named it, for messages */
    int fd;                          /* open on tmp, or -1 */
    int slot;                        /* its entry in the list q35_outfile_remove_pending reads, or -1 */
} q35_outfile;

/* Whether path can be a target (a new path in an existing folder, or a
 * writable regular file), without creating anything. */
int q35_outfile_check(const char *path, q35_error *err);

/* Checks the target and creates the temporary file beside it (f->fd open on
 * it). On error nothing was created. */
int q35_outfile_open(q35_outfile *f, const char *path, q35_error *err);

/* What the last q35_outfile_open removed of earlier runs' temporary files, in
 * words for a note ("removed 2 temporary files (812.0 MiB; ...) ..."); "" when nothing. */
const char *q35_outfile_note(void);

/* Writes all n bytes at the file's position (retrying short writes). */
int q35_outfile_write(q35_outfile *f, const void *p, size_t n, q35_error *err);

/* Flushes the temporary file to disk, closes it and renames it over the
 * target. On error the temporary file is removed and the target untouched. */
int q35_outfile_commit(q35_outfile *f, q35_error *err);

/* Closes and removes the temporary file (a failed write). Safe to call twice,
 * and after a commit (then it does nothing). */
void q35_outfile_discard(q35_outfile *f);

/* What a file of this st_mode is, in words ("a FIFO", "a character device", ...). */
const char *q35_file_kind(unsigned mode);

/* Removes every temporary file of an output still in flight: for a handler of
 * a fatal signal (async-signal-safe: only unlink). */
void q35_outfile_remove_pending(void);

#ifdef __cplusplus
}
#endif

#endif /* Q35_OUTFILE_H */
