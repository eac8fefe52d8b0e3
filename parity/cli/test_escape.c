/* q35_escape (core/escape.h): what the command line prints from files and
 * arguments never holds a byte a terminal would act on, valid UTF-8 passes
 * unchanged, and a cut never splits an escape or a character. Also the GGUF
 * reader's q35_gguf_format_value, which prints strings through it. */
#include "parity/lib/harness.h"

#include "core/escape.h"
#include "core/gguf.h"

#include <stdio.h>
#include <string.h>

typedef struct escape_case {
    const char *what;   /* the input, in words */
    const char *in;     /* its bytes */
    size_t len;         /* how many (NUL bytes included) */
    size_t cap;         /* the output buffer */
    const char *want;   /* the exact output */
} escape_case;

#define S(x) x, sizeof x - 1

static const escape_case k_cases[] = {
    {"plain ASCII", S("blk.0.attn_norm.weight"), 64, "blk.0.attn_norm.weight"},
    {"ESC sequence (clear screen)", S("a\x1b[2Jb"), 64, "a\\e[2Jb"},
    {"newline, tab, CR", S("a\nb\tc\rd"), 64, "a\\nb\\tc\\rd"},
    {"BEL, NUL and DEL", S("\x07\0\x7f"), 64, "\\x07\\x00\\x7f"},
    {"a backslash doubled", S("a\\b"), 64, "a\\\\b"},
    {"UTF-8 (2, 3 and 4 bytes) unchanged", S("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"), 64,
     "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"},
    {"C1 CSI as UTF-8 (U+009B)", S("\xc2\x9b" "2J"), 64, "\\xc2\\x9b2J"},
    {"a lone 8-bit CSI byte", S("\x9b" "2J"), 64, "\\x9b2J"},
    {"overlong '/' (C0 AF)", S("\xc0\xaf"), 64, "\\xc0\\xaf"},
    {"a surrogate (ED A0 80)", S("\xed\xa0\x80"), 64, "\\xed\\xa0\\x80"},
    {"past U+10FFFF (F4 90 80 80)", S("\xf4\x90\x80\x80"), 64, "\\xf4\\x90\\x80\\x80"},
    {"a truncated sequence", S("a\xe4\xb8"), 64, "a\\xe4\\xb8"},
    {"cut: room for all of it", S("abcdef"), 7, "abcdef"},
    {"cut: one byte short", S("abcdefg"), 7, "abc..."},
    {"cut: never inside an escape", S("ab\x1b" "cdef"), 7, "ab..."},
    {"cut: never inside a character", S("ab\xe4\xb8\xad" "cdef"), 8, "ab..."},
    {"cut: too small for the dots", S("abcdef"), 3, ""},
};

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "escape: what reaches a terminal", 0);
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
        const escape_case *c = &k_cases[i];
        char out[80]; /* cap <= 64: the rest shows a write past cap */
        memset(out, 'X', sizeof out);
        q35_escape(out, c->cap, c->in, c->len);
        const bool inside = memchr(out, '\0', c->cap) != NULL && out[c->cap] == 'X';
        char shown[256];
        q35_case(&s, inside && strcmp(out, c->want) == 0, "%-36s -> \"%s\" (cap %zu)", c->what,
                 q35_escape_str(shown, sizeof shown, out), c->cap);
    }

    /* A GGUF string value with control bytes, printed by the reader. */
    uint8_t kv_data[8 + 12];
    const uint64_t len = 12;
    memcpy(kv_data, &len, 8);
    memcpy(kv_data + 8, "x\x1b]0;pwn\x07\ry\x9b", 12);
    const q35_gguf_kv kv = {.key = "general.name", .type = Q35_GGUF_STRING, .count = 1, .data = kv_data};
    char buf[512];
    q35_gguf_format_value(&kv, buf, sizeof buf);
    q35_case(&s, strcmp(buf, "\"x\\e]0;pwn\\x07\\ry\\x9b\"") == 0, "q35_gguf_format_value escapes a string: %s", buf);
    return q35_suite_end(&s);
}
