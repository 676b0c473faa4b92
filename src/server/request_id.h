/* Request ids: the X-Request-Id a client (or a proxy in front) sends is
 * echoed in the answer and written in the access log, so that one request
 * can be followed through every log it passes; a request without a usable
 * one gets a new id. */
#ifndef SS_SERVER_REQUEST_ID_H
#define SS_SERVER_REQUEST_ID_H

#include <stdbool.h>

/* Ids are at most this many characters (and a NUL). */
#define SS_REQUEST_ID_MAX 64

/* Whether given can be used as it is: 1 to 64 characters out of letters,
 * digits and "-._:/+=" (nothing that could forge a log line or a header). */
bool ss_request_id_valid(const char *given);

/* Writes the request's id into out: given when valid, else a new one of 16
 * hex digits (unique within the process, unpredictable across runs).
 * Loop thread. */
void ss_request_id(const char *given, char out[SS_REQUEST_ID_MAX + 1]);

#endif
