/* Text from a file or a command line made safe to print: nothing a terminal
 * would act on reaches it. */
#ifndef Q35_ESCAPE_H
#define Q35_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies len bytes of src into dst (cap bytes, NUL-terminated) with every byte
 * a terminal could act on written as an escape: the C0 controls and DEL
 * ("\n", "\t", "\r", "\e", else "\xNN"), a backslash as "\\", and every byte of
 * a sequence that is not valid UTF-8 or is a C1 control (U+0080..U+009F) as
 * "\xNN". Valid UTF-8 otherwise passes unchanged. Output that does not fit is
 * cut before an escape or a character, never inside one, and ends with "...".
 * Returns dst. */
char *q35_escape(char *dst, size_t cap, const char *src, size_t len);

/* q35_escape of a NUL-terminated string. */
char *q35_escape_str(char *dst, size_t cap, const char *src);

#ifdef __cplusplus
}
#endif

#endif /* Q35_ESCAPE_H */
