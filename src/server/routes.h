/* The route table: one row per endpoint, with its path, the methods and
 * query parameters it accepts, and what answers it: an engine job (a query)
 * or a handler on the loop thread (an immediate answer), and the renderer
 * that makes the answer's body. Adding an endpoint is a row, a handler and
 * a renderer; the 404 list, the 405 Allow header and the parameter checks
 * all come from the table.
 *
 * The table sits above the HTTP layer: the server registers
 * ss_routes_classify() and ss_routes_dispatch() as its hooks. */
#ifndef SS_SERVER_ROUTES_H
#define SS_SERVER_ROUTES_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/engine.h"
#include "server/config.h"
#include "server/http.h"
#include "server/metrics.h"
#include "server/state.h"

struct ss_updater;

/* What the endpoints may read or use; owned by the server. */
struct ss_routes {
        const struct ss_config *cfg;
        const struct ss_state *state;
        struct ss_engine *engine;
        struct ss_http *http;
        struct ss_metrics *metrics;
        struct ss_updater *updater; /* POST /weights (weights.h) */
};

enum { SS_METHOD_GET = 1u << 0, SS_METHOD_HEAD = 1u << 1, SS_METHOD_POST = 1u << 2 };

/* What an immediate handler hands its renderer: a JSON document, or a
 * text of len bytes with its Content-Type: malloc'd (text), or borrowed
 * from a cache (borrowed), valid until release(keep), which the body calls
 * once it is sent (keep holds what keeps the text alive: a reference to
 * the graph that holds the cache). ss_view_free (status.h) frees what the
 * renderer did not take. */
struct ss_view {
        json_t *json;
        char *text;
        const char *borrowed;
        size_t len;
        const char *ctype;
        const char *encoding; /* of text or borrowed: NULL, or "gzip" if compressed already */
        void *keep;
        void (*release)(void *keep);
        bool gzip;    /* given to the handler: the client takes gzip (the body may come so) */
        bool no_gzip; /* compressing the text was tried (or is not wanted): send it as it is */
};

struct ss_route {
        const char *path;
        enum ss_endpoint ep; /* the metrics label */
        unsigned methods;    /* SS_METHOD_* bits; POST takes a JSON body */
        unsigned params;     /* SS_QP_* bits */
        /* A query: the engine job its parsed query becomes, and the body
         * built from the finished job (on the worker thread). */
        enum ss_job_kind (*job)(const struct ss_query *q);
        int (*render_job)(const struct ss_query *q, struct ss_job *job, struct ss_body *out);
        /* An immediate answer (loop thread): the handler fills a view, or
         * returns an error code with err naming the cause; the renderer
         * makes the view a body. */
        int (*handler)(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err);
        int (*render)(struct ss_view *v, struct ss_body *out);
        /* An immediate answer to a query (loop thread, microseconds): its
         * parameters are parsed and checked like a job's, then answer fills
         * a view from the current graph, rendered by render. */
        int (*answer)(const struct ss_routes *rt, const struct ss_query *q, struct ss_graph *g,
                      struct ss_view *v, struct ss_err *err);
        /* Work off the loop that is no engine job (a weight update): takes
         * the request and returns true (its end fills r->resp and calls
         * ss_http_complete), or fills r->resp and returns false. */
        bool (*start)(const struct ss_routes *rt, struct ss_request *r);
};

/* How many parameters r's URL has, empty items (`?&`, a trailing `&`) not
 * counted, as no query counts them. */
unsigned ss_routes_url_params(struct ss_request *r);

/* The HTTP layer's hooks; user is a struct ss_routes. Queries dispatch on
 * the HTTP threads (they read the engine and the phase only); the other
 * endpoints, which read the server's state, on the loop thread. */
void ss_routes_classify(void *user, struct ss_request *r, const char *path);
bool ss_routes_anywhere(void *user, const struct ss_request *r);
bool ss_routes_dispatch(void *user, struct ss_request *r);

#endif
