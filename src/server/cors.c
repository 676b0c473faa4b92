#include "server/cors.h"

#include <string.h>

#include "core/error.h"

int ss_cors_check(const char *v, struct ss_err *err)
{
        if (!*v || !strcmp(v, "*"))
                return SS_OK;
        const char *p = v;
        while (*p) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                const char *scheme = memchr(p, ':', len);
                bool ok = len > 0 && scheme && (size_t)(scheme - p) + 3 < len &&
                          !strncmp(scheme, "://", 3) &&
                          !memchr(scheme + 3, '/', len - (size_t)(scheme + 3 - p)) &&
                          !memchr(p, ' ', len) && !memchr(p, '*', len);
                if (!ok)
                        return ss_err_set(err, SS_EINVAL,
                                          "cors_origin: '%.*s' is not an origin like "
                                          "https://maps.example.org (scheme, host, optional "
                                          "port; no path), and '*' stands alone",
                                          (int)(len > 80 ? 80 : len), p);
                p += len + (end ? 1 : 0);
                if (end && !*p)
                        return ss_err_set(err, SS_EINVAL,
                                          "cors_origin: an empty origin at the end");
        }
        return SS_OK;
}

bool ss_cors_varies(const char *cors_origin)
{
        return cors_origin[0] && strcmp(cors_origin, "*") != 0;
}

const char *ss_cors_allow(const char *cors_origin, const char *origin)
{
        if (!cors_origin[0])
                return NULL;
        if (!strcmp(cors_origin, "*"))
                return "*";
        if (!origin)
                return NULL;
        const size_t ol = strlen(origin);
        for (const char *p = cors_origin; *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len == ol && !strncmp(p, origin, len))
                        return origin;
                p += len + (end ? 1 : 0);
        }
        return NULL;
}

void ss_cors_headers(struct MHD_Response *resp, const char *cors_origin, const char *origin,
                     bool preflight, const char *allow)
{
        const char *ok = ss_cors_allow(cors_origin, origin);
        if (!ok)
                return;
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", ok);
        /* A page reads only the headers listed here: the request's id, and
         * the weights version its answer was computed with. */
        MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                                "X-Request-Id, X-Weights-Version");
        if (!preflight)
                return;
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", allow);
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Content-Type, X-Request-Id");
        MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
}
