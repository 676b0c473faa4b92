/* Compressed answers: Accept-Encoding read as RFC 9110 says (q-values
 * included), and bodies compressed with zlib into the gzip format. A body
 * is compressed on the thread that built it (a worker, for query answers),
 * never on the loop thread for the large ones. */
#ifndef SS_SERVER_GZIP_H
#define SS_SERVER_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/json_out.h"

/* Whether an Accept-Encoding header (may be NULL) allows gzip: "gzip" or
 * "x-gzip" with a q-value above 0, or "*" when gzip is not listed. */
bool ss_gzip_accepted(const char *accept_encoding);

/* Compresses a then b (b may be NULL) into one malloc'd gzip member.
 * Returns SS_OK with *out and *len set, or SS_ENOMEM. */
int ss_gzip(const void *a, size_t alen, const void *b, size_t blen, int level, char **out,
            size_t *len);

/* Replaces b's data (and tail) by their gzip form and sets b->encoding,
 * when b holds at least min_bytes and is not encoded yet; a body that
 * would not shrink is left as it is. Borrowed data (b->release) is
 * released, the copy being the body's own. Returns SS_OK, or SS_ENOMEM
 * with b unchanged (it is then sent as it is). */
int ss_body_gzip(struct ss_body *b, int level, size_t min_bytes);

#endif
