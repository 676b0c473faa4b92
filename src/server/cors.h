/* Cross-origin requests (CORS), for pages served elsewhere that call the
 * API from a browser. Off unless cors_origin is set: then answers to the
 * origins it lists carry Access-Control-Allow-Origin, and preflight
 * requests (OPTIONS) are answered with the methods and headers allowed.
 * cors_origin is "*" (any origin) or a comma-separated list of origins
 * ("https://maps.example.org,http://localhost:3000"). */
#ifndef SS_SERVER_CORS_H
#define SS_SERVER_CORS_H

#include <microhttpd.h>
#include <stdbool.h>

/* Checks a cors_origin value: empty, "*" or a list of origins
 * (scheme://host[:port], no path). Returns SS_OK or SS_EINVAL with err. */
struct ss_err;
int ss_cors_check(const char *value, struct ss_err *err);

/* The Access-Control-Allow-Origin value for a request from origin (NULL
 * when the request has no Origin header) under cors_origin: "*", origin
 * itself when listed, or NULL (no CORS headers). */
const char *ss_cors_allow(const char *cors_origin, const char *origin);

/* Whether answers depend on the Origin header (a list of origins): then
 * they say so in Vary. */
bool ss_cors_varies(const char *cors_origin);

/* Adds the CORS headers to an answer: always the origin's (when allowed)
 * and the headers a page may read (X-Request-Id, X-Weights-Version); for a
 * preflight also the methods (allow), the request headers a client
 * may send and how long a browser may keep the answer. */
void ss_cors_headers(struct MHD_Response *resp, const char *cors_origin, const char *origin,
                     bool preflight, const char *allow);

#endif
