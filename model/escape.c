/* Text made safe to print (escape.h). */
#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Bytes of the valid UTF-8 sequence at s (n bytes left) when it encodes a
 * printable code point (not a C1 control, not a surrogate, not overlong), else 0. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp, min;
    if ((s[0] & 0xE0) == 0xC0)
        len = 2, cp = s[0] & 0x1Fu, min = 0x80;
    else if ((s[0] & 0xF0) == 0xE0)
        len = 3, cp = s[0] & 0x0Fu, min = 0x800;
    else if ((s[0] & 0xF8) == 0xF0)
        len = 4, cp = s[0] & 0x07u, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F))
        return 0;
    return len;
}

char *q35_escape(char *dst, size_t cap, const char *src, size_t len)
{
    if (cap == 0)
        return dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        const unsigned char c = s[i];
        char piece[8];
        size_t n = 1, adv = 1;
        piece[0] = (char)c;
        if (c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == 0x1b) {
            piece[0] = '\\';
            piece[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 'e';
            n = 2;
        } else if (c >= 0x80 && (adv = utf8_printable(s + i, len - i)) > 0) {
            memcpy(piece, s + i, adv);
            n = adv;
        } else if (c < 0x20 || c >= 0x7f) {
            adv = 1;
            n = (size_t)snprintf(piece, sizeof piece, "\\x%02x", c);
        }
        const bool last = i + adv >= len;
        if (o + n + (last ? 1 : 4) > cap) { /* no room for it and a "..." after it */
            if (o + 4 <= cap)
                memcpy(dst + o, "...", 3), o += 3;
            break;
        }
        memcpy(dst + o, piece, n);
        o += n;
        i += adv;
    }
    dst[o] = '\0';
    return dst;
}

char *q35_escape_str(char *dst, size_t cap, const char *src)
{
    return q35_escape(dst, cap, src, strlen(src));
}
