/* Errors: every library call that can fail returns 0 or -1 and, on -1, leaves a
 * message in a caller-owned q35_error naming what failed, where, and the limit.
 * Only the harness mains print and exit. */
#ifndef Q35_ERROR_H
#define Q35_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_error {
    char msg[1024]; /* NUL-terminated message of the first failure, "" when none */
} q35_error;

/* Formats a message into err (if non-NULL; a message already there is kept and
 * the new one appended after ": ") and returns -1, so a caller can write
 * `return q35_fail(err, "...", ...);`. */
int q35_fail(q35_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prefixes the message already in err with a context ("loading X: ") and returns -1. */
int q35_fail_context(q35_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* Q35_ERROR_H */
