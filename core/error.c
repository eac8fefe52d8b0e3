#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int q35_fail(q35_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    size_t used = strlen(err->msg);
    if (used > 0 && used + 2 < sizeof err->msg) {
        memcpy(err->msg + used, ": ", 3);
        used += 2;
    }
    if (used + 1 < sizeof err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + used, sizeof err->msg - used, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int q35_fail_context(q35_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char whole[2 * sizeof err->msg + 2];
    snprintf(whole, sizeof whole, "%s: %s", prefix, err->msg);
    memcpy(err->msg, whole, sizeof err->msg - 1);
    err->msg[sizeof err->msg - 1] = '\0';
    return -1;
}
