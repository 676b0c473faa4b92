/* The one place where a status code becomes an HTTP status and a JSON error
 * code. Engine codes (error.h) and the few conditions only HTTP knows (an
 * unknown path, a wrong method, a graph still loading) share one table. */
#ifndef SS_SERVER_HTTP_ERROR_H
#define SS_SERVER_HTTP_ERROR_H

#include <stddef.h>

#include "core/error.h"

/* Conditions that only exist at the HTTP layer, below the engine's codes. */
enum {
        SS_HTTP_ENOTFOUND = -100, /* no such endpoint */
        SS_HTTP_EMETHOD = -101,   /* method not allowed on the endpoint */
        SS_HTTP_ELOADING = -102,  /* the graph is still loading */
        SS_HTTP_ECLOSED = -103,   /* the client hung up before its answer was ready */
};

struct ss_http_error {
        int status;       /* ss_status or SS_HTTP_* */
        unsigned http;    /* HTTP status code */
        const char *code; /* JSON "code" */
        int retry_after;  /* send Retry-After */
};

/* Returns the row for status; unknown codes get the 500 Internal row. */
const struct ss_http_error *ss_http_error_for(int status);

/* Builds the body {"code":..., "message":...} (malloc'd, *len bytes);
 * NULL when out of memory. */
char *ss_http_error_body(int status, const char *message, size_t *len);

#endif
