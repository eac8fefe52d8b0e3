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

/* The text of the byte (or character) at s[i]: its bytes into piece (8), how
 * many, and in *adv how many input bytes it stands for. */
static size_t piece_at(const unsigned char *s, size_t len, size_t i, char *piece, size_t *adv)
{
    const unsigned char c = s[i];
    *adv = 1;
    if (c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == 0x1b) {
        piece[0] = '\\';
        piece[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 'e';
        return 2;
    }
    if (c >= 0x80 && (*adv = utf8_printable(s + i, len - i)) > 0) {
        memcpy(piece, s + i, *adv);
        return *adv;
    }
    *adv = 1;
    if (c < 0x20 || c >= 0x7f)
        return (size_t)snprintf(piece, 8, "\\x%02x", c);
    piece[0] = (char)c;
    return 1;
}

char *q35_escape(char *dst, size_t cap, const char *src, size_t len)
{
    if (cap == 0)
        return dst;
    const unsigned char *s = (const unsigned char *)src;
    char piece[8];
    size_t total = 0, adv;
    for (size_t i = 0; i < len; i += adv)
        total += piece_at(s, len, i, piece, &adv);
    const size_t room = total < cap ? cap : cap < 4 ? 0 : cap - 3; /* a cut keeps 3 bytes for "..." */
    size_t o = 0;
    for (size_t i = 0; i < len; i += adv) {
        const size_t n = piece_at(s, len, i, piece, &adv);
        if (o + n + 1 > room)
            break;
        memcpy(dst + o, piece, n);
        o += n;
    }
    if (total >= cap && cap >= 4)
        memcpy(dst + o, "...", 3), o += 3;
    dst[o] = '\0';
    return dst;
}

char *q35_escape_str(char *dst, size_t cap, const char *src)
{
    return q35_escape(dst, cap, src, strlen(src));
}
