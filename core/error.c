#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stores text (n bytes) as err's message. Text longer than the message holds
 * keeps its head and its tail, where the reason stands ("...: No such file or
 * directory"), and says how many bytes were cut between them; the cut never
 * splits a UTF-8 character. */
static void store(q35_error *err, const char *text, size_t n)
{
    const size_t cap = sizeof err->msg - 1;
    if (n <= cap) {
        memcpy(err->msg, text, n);
        err->msg[n] = '\0';
        return;
    }
    enum { MARK_MAX = 40 }; /* " [... 18446744073709551615 bytes cut ...] " is one more than needed here */
    size_t head = cap / 4, from = n - (cap - head - MARK_MAX);
    while (head > 0 && ((unsigned char)text[head] & 0xC0) == 0x80) /* the head ends before a character */
        head--;
    while (from < n && ((unsigned char)text[from] & 0xC0) == 0x80) /* the tail starts at one */
        from++;
    char mark[MARK_MAX + 8];
    const int m = snprintf(mark, sizeof mark, " [...%zu bytes cut...] ", from - head);
    memcpy(err->msg, text, head);
    memcpy(err->msg + head, mark, (size_t)m);
    memcpy(err->msg + head + (size_t)m, text + from, n - from);
    err->msg[head + (size_t)m + (n - from)] = '\0';
}

/* vsnprintf into a buffer of the size it needs: malloc'd, or NULL. */
static char *format(size_t *n, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    const int len = vsnprintf(NULL, 0, fmt, ap);
    char *p = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (p)
        vsnprintf(p, (size_t)len + 1, fmt, again);
    va_end(again);
    *n = p ? (size_t)len : 0;
    return p;
}

/* Stores a + b (b's length nb) as err's message. */
static void store_joined(q35_error *err, const char *a, const char *b, size_t nb)
{
    const size_t na = strlen(a);
    char *whole = malloc(na + nb + 1);
    if (!whole) { /* out of memory: the new message alone, cut as it must be */
        store(err, b, nb);
        return;
    }
    memcpy(whole, a, na);
    memcpy(whole + na, b, nb);
    store(err, whole, na + nb);
    free(whole);
}

int q35_fail(q35_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    size_t n;
    char *text = format(&n, fmt, ap);
    va_end(ap);
    char before[sizeof err->msg + 2];
    snprintf(before, sizeof before, "%s%s", err->msg, err->msg[0] ? ": " : "");
    store_joined(err, before, text ? text : "(the message could not be formatted: out of memory)",
                 text ? n : strlen("(the message could not be formatted: out of memory)"));
    free(text);
    return -1;
}

int q35_fail_context(q35_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    size_t n;
    char *prefix = format(&n, fmt, ap);
    va_end(ap);
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    char *whole = prefix ? malloc(n + 2 + strlen(msg) + 1) : NULL;
    if (whole) {
        memcpy(whole, prefix, n);
        memcpy(whole + n, ": ", 2);
        strcpy(whole + n + 2, msg);
        store(err, whole, strlen(whole));
    }
    free(whole);
    free(prefix);
    return -1;
}
