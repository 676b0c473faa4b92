/* Client-supplied text made safe for a log line. A request's method and URL
 * go to the journal or a terminal as they came: a CR or LF would start a
 * forged log line, an escape sequence would reach the terminal, and a NUL
 * would hide the rest. */
#ifndef SS_SERVER_LOG_TEXT_H
#define SS_SERVER_LOG_TEXT_H

#include <stddef.h>

/* Writes the len bytes of in to out (cap bytes, NUL-terminated) with every
 * byte outside printable ASCII, and the backslash, as \xHH; stops early,
 * ending in "...", when out is full. Returns the length written. */
size_t ss_log_text(char *out, size_t cap, const char *in, size_t len);

#endif
