#include "server/http_error.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ss_http_error ss__table[] = {
    /* Request shape: missing, unknown or repeated parameter, bad JSON. */
    {SS_EPARSE, 400, "InvalidQuery", 0},
    /* A parameter's value: not a number, zero, out of range, bad name. */
    {SS_EINVAL, 400, "InvalidValue", 0},
    {SS_ERANGE, 400, "InvalidValue", 0},
    {SS_ENOROUTE, 404, "NoRoute", 0},
    {SS_HTTP_ENOTFOUND, 404, "NotFound", 0},
    {SS_HTTP_EMETHOD, 405, "MethodNotAllowed", 0},
    {SS_ETOOBIG, 413, "TooBig", 0},
    {SS_EOVERLOAD, 503, "Overloaded", 1},
    /* Out of memory for one query's result is load, not a bug: retry. */
    {SS_ENOMEM, 503, "Overloaded", 1},
    {SS_HTTP_ELOADING, 503, "Loading", 1},
    {SS_ESHUTDOWN, 503, "ShuttingDown", 0},
    {SS_ENOGPU, 503, "NoGpu", 0},
    {SS_ETIMEDOUT, 504, "Timeout", 0},
    /* Never read by anyone: the status the logs and metrics give a query
     * whose client hung up (nginx's 499), so that it is not taken for a
     * timeout of ours. */
    {SS_HTTP_ECLOSED, 499, "ClientClosed", 0},
    /* Everything else is a fault of ours. */
    {SS_EINTERNAL, 500, "Internal", 0},
};

const struct ss_http_error *ss_http_error_for(int status)
{
        size_t n = sizeof(ss__table) / sizeof(ss__table[0]);
        for (size_t i = 0; i < n; i++)
                if (ss__table[i].status == status)
                        return &ss__table[i];
        return &ss__table[n - 1];
}

char *ss_http_error_body(int status, const char *message, size_t *len)
{
        const struct ss_http_error *e = ss_http_error_for(status);
        char safe[SS_ERRMSG_MAX];
        /* Messages quote client input, which need not be UTF-8; jansson
         * refuses invalid UTF-8, so keep printable ASCII only. */
        snprintf(safe, sizeof(safe), "%s", message && *message ? message : ss_strerror(status));
        for (char *p = safe; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                        *p = '?';
        json_t *o = json_pack("{s:s, s:s}", "code", e->code, "message", safe);
        if (!o)
                return NULL;
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (s)
                *len = strlen(s);
        return s;
}
