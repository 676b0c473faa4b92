/* The route table and what a request becomes: an engine job for a query,
 * an answer at once for the rest; and a job's completion on the worker. */
#include "server/routes.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "geo/geo.h"
#include "server/gzip.h"
#include "server/http_error.h"
#include "server/isochrone.h"
#include "server/map.h"
#include "server/nearest.h"
#include "server/page.h"
#include "server/snap.h"
#include "server/status.h"
#include "server/weights.h"

static enum ss_job_kind ss__route_job(const struct ss_query *q)
{
        (void)q;
        return SS_JOB_ROUTE;
}

static enum ss_job_kind ss__distances_job(const struct ss_query *q)
{
        return q->has_to ? SS_JOB_MATRIX : SS_JOB_ONE_TO_ALL;
}

/* A one-to-all bounded by max (ss__query sets the bound). */
static enum ss_job_kind ss__isochrone_job(const struct ss_query *q)
{
        (void)q;
        return SS_JOB_ONE_TO_ALL;
}

#define SS__QUERY_PARAMS                                                                           \
        (SS_QP_FROM | SS_QP_TO | SS_QP_ALGORITHM | SS_QP_ENGINE | SS_QP_FROM_LONLAT |              \
         SS_QP_TO_LONLAT)
#define SS__GET (SS_METHOD_GET | SS_METHOD_HEAD)

static const struct ss_route ss__table[] = {
    {.path = "/route",
     .ep = SS_EP_ROUTE,
     .methods = SS__GET | SS_METHOD_POST,
     .params = SS__QUERY_PARAMS | SS_QP_GEOMETRY | SS_QP_ANNOTATIONS,
     .job = ss__route_job,
     .render_job = ss_body_for_job},
    {.path = "/distances",
     .ep = SS_EP_DISTANCES,
     .methods = SS__GET | SS_METHOD_POST,
     .params = SS__QUERY_PARAMS | SS_QP_FORMAT,
     .job = ss__distances_job,
     .render_job = ss_body_for_job},
    {.path = "/nearest",
     .ep = SS_EP_NEAREST,
     .methods = SS__GET,
     .params = SS_QP_LON | SS_QP_LAT,
     .answer = ss_nearest_answer,
     .render = ss_view_render_json},
    {.path = "/isochrone",
     .ep = SS_EP_ISOCHRONE,
     .methods = SS__GET | SS_METHOD_POST,
     .params = SS_QP_FROM | SS_QP_FROM_LONLAT | SS_QP_MAX | SS_QP_GEOMETRY | SS_QP_ALGORITHM |
               SS_QP_ENGINE,
     .job = ss__isochrone_job,
     .render_job = ss_isochrone_body},
    {.path = "/health",
     .ep = SS_EP_HEALTH,
     .methods = SS__GET,
     .handler = ss_status_health,
     .render = ss_view_render_json},
    {.path = "/status",
     .ep = SS_EP_STATUS,
     .methods = SS__GET,
     .handler = ss_status_status,
     .render = ss_view_render_json},
    {.path = "/metrics",
     .ep = SS_EP_METRICS,
     .methods = SS__GET,
     .handler = ss_status_metrics,
     .render = ss_view_render_text},
    {.path = "/weights", .ep = SS_EP_WEIGHTS, .methods = SS_METHOD_POST, .start = ss_weights_post},
    {.path = "/map",
     .ep = SS_EP_MAP,
     .methods = SS__GET,
     .params = 0,
     .answer = ss_map_answer,
     .render = ss_view_render_text},
    /* The page reads its own query string (?from=1&to=9&iso=1000) in the
     * browser, so a handler, which takes no parameters, serves it. */
    {.path = "/",
     .ep = SS_EP_PAGE,
     .methods = SS__GET,
     .handler = ss_page_index,
     .render = ss_view_render_text},
    {.path = "/index.html",
     .ep = SS_EP_PAGE,
     .methods = SS__GET,
     .handler = ss_page_index,
     .render = ss_view_render_text},
};

#define SS__NROUTES (sizeof(ss__table) / sizeof(ss__table[0]))

static unsigned ss__method_bit(const char *method)
{
        return !strcmp(method, MHD_HTTP_METHOD_GET)    ? SS_METHOD_GET
               : !strcmp(method, MHD_HTTP_METHOD_HEAD) ? SS_METHOD_HEAD
               : !strcmp(method, MHD_HTTP_METHOD_POST) ? SS_METHOD_POST
                                                       : 0;
}

/* The Allow header for a set of methods (OPTIONS is always allowed):
 * static text, as the answer keeps a pointer to it. */
static const char *ss__allow(unsigned methods)
{
        static const char *const text[8] = {"OPTIONS",
                                            "GET, OPTIONS",
                                            "HEAD, OPTIONS",
                                            "GET, HEAD, OPTIONS",
                                            "POST, OPTIONS",
                                            "GET, POST, OPTIONS",
                                            "HEAD, POST, OPTIONS",
                                            "GET, HEAD, POST, OPTIONS"};
        return text[methods & 7u];
}

/* OPTIONS: the methods of the path (a CORS preflight gets the
 * Access-Control headers with them, http.c). */
static void ss__options(struct ss_request *r, const struct ss_route *route)
{
        ss_body_free(&r->resp);
        memset(&r->resp, 0, sizeof(r->resp));
        r->resp.http = 204;
        r->resp.allow = ss__allow(route->methods);
}

static void ss__fail(struct ss_request *r, int status, const char *msg)
{
        ss_body_free(&r->resp);
        ss_body_error(status, msg, &r->resp);
}

void ss_routes_classify(void *user, struct ss_request *r, const char *path)
{
        (void)user;
        r->ep = SS_EP_OTHER;
        r->route = NULL;
        for (size_t i = 0; i < SS__NROUTES; i++)
                if (!strcmp(path, ss__table[i].path)) {
                        r->ep = ss__table[i].ep;
                        r->route = &ss__table[i];
                        return;
                }
}

/* ------------------------------------------------------------------------
 * Queries
 */

static void ss__job_done(struct ss_job *job)
{
        struct ss_request *r = job->user;
        const struct ss_route *route = r->route;

        /* A query stopped because its client hung up is no timeout: it
         * gets a status of its own (logged and counted, never read). */
        if (job->status != SS_OK && atomic_load(&r->gone)) {
                ss_body_error(SS_HTTP_ECLOSED, "the client closed the connection", &r->resp);
                ss_job_release(job);
                ss_http_complete(r);
                return;
        }
        /* Build the body here, on the worker, to keep the loop thread free. */
        if (route->render_job(&r->q, job, &r->resp) != SS_OK &&
            ss_body_error(SS_ENOMEM, "no memory for the response", &r->resp) != SS_OK) {
                r->resp.http = 503;
                r->resp.retry_after = 1;
        }
        if (r->resp.http == 500)
                ss_log_error("query", "internal error: %s", job->err.msg);
        if (r->gzip)
                ss_body_gzip(&r->resp, (int)r->http->cfg->gzip_level,
                             (size_t)r->http->cfg->gzip_min_bytes);
        ss_job_release(job);
        ss_http_complete(r);
}

struct ss__args {
        struct ss_query *q;
        struct ss_err err;
        int rc;
        unsigned count;
};

/* MHD decodes %00 into a NUL byte, and a C string ends there: from=1%002
 * would silently read as from=1. The sized iterator sees the whole value, so
 * such a key or value is refused instead. */
static enum MHD_Result ss__arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size)
{
        struct ss__args *a = cls;
        (void)kind;
        /* An empty item (`?&from=1`, `from=1&&to=2`, a trailing `&`) is
         * no parameter at all. */
        if (key_size == 0 && (!value || value_size == 0))
                return MHD_YES;
        a->count++;
        if (!a->q || a->rc != SS_OK)
                return a->rc == SS_OK ? MHD_YES : MHD_NO;
        if (strlen(key) != key_size)
                a->rc = ss_err_set(&a->err, SS_EPARSE, "parameter '%s' has a NUL byte in its name",
                                   key);
        else if (value && strlen(value) != value_size)
                a->rc = ss_err_set(&a->err, SS_EINVAL, "%s: the value has a NUL byte (%%00)", key);
        else
                a->rc = ss_query_param(a->q, key, value, &a->err);
        return a->rc == SS_OK ? MHD_YES : MHD_NO;
}

unsigned ss_routes_url_params(struct ss_request *r)
{
        struct ss__args a = {.rc = SS_OK};
        MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, ss__arg, &a);
        return a.count;
}

/* Parses the request into r->q; returns SS_OK or an error with err set. */
static int ss__parse(struct ss_request *r, bool post, struct ss_err *err)
{
        struct ss__args a = {.q = post ? NULL : &r->q, .rc = SS_OK};
        MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, ss__arg, &a);
        if (!post) {
                if (a.rc != SS_OK)
                        *err = a.err;
                return a.rc;
        }
        if (a.count)
                return ss_err_set(err, SS_EPARSE,
                                  "POST takes its parameters in the JSON body, not the URL");
        if (!r->body_len)
                return ss_err_set(err, SS_EPARSE, "POST needs a JSON object body");
        return ss_query_json(&r->q, r->body, r->body_len, err);
}

/* Parses, validates and submits a query; true when its job is out. */
static bool ss__query(const struct ss_routes *rt, struct ss_request *r, bool post)
{
        const struct ss_route *route = r->route;
        const struct ss_config *cfg = rt->cfg;
        struct ss_err err = {0};
        int rc;

        if (rt->state->phase == SS_PHASE_LOADING) {
                ss__fail(r, SS_HTTP_ELOADING, "the graph is loading; retry shortly");
                return false;
        }
        if (rt->state->phase == SS_PHASE_STOPPING) {
                ss__fail(r, SS_ESHUTDOWN, "the daemon is stopping");
                return false;
        }
        ss_query_init(&r->q, route->ep, route->params);
        if ((rc = ss__parse(r, post, &err)) != SS_OK) {
                ss__fail(r, rc, err.msg);
                return false;
        }
        struct ss_graph *g = ss_engine_graph(rt->engine);
        if (!g) {
                ss__fail(r, SS_HTTP_ELOADING, "no graph is loaded yet");
                return false;
        }
        struct ss_limits lim = {
            .max_sources = (uint64_t)cfg->max_sources,
            .max_targets = (uint64_t)cfg->max_targets,
            .max_matrix = (uint64_t)cfg->max_matrix,
            .max_json_nodes = (uint64_t)cfg->max_json_nodes,
        };
        rc = ss_query_snap(&r->q, ss_geo_of(g) != NULL, ss_snap_nearest, g, &err);
        if (rc == SS_OK)
                rc = ss_query_finish(&r->q, &lim, g->n, g->x != NULL, &err);
        if (rc == SS_OK && route->answer) {
                struct ss_view v = {.gzip = r->gzip};
                rc = route->answer(rt, &r->q, g, &v, &err);
                if (rc == SS_OK && (rc = route->render(&v, &r->resp)) != SS_OK)
                        ss_err_set(&err, rc, "no memory for the response");
                ss_view_free(&v);
                /* Counted like a job's answer, so that a client that never
                 * reads them cannot pile them up; but an answer borrowed
                 * from a cache (/map's) is one copy however many wait. */
                if (rc == SS_OK && !r->resp.release && !ss_http_reserve(r, r->resp.len)) {
                        ss_body_free(&r->resp);
                        rc = ss_err_set(&err, SS_EOVERLOAD,
                                        "answers not yet sent hold the memory allowed for them "
                                        "(answer_memory_mb); retry shortly");
                }
        }
        if (rc == SS_OK && route->answer) {
                ss_graph_unref(g);
                return false;
        }
        if (rc == SS_OK && !(r->ids = malloc((r->q.nfrom + r->q.nto + 1) * sizeof(uint32_t))))
                rc = ss_err_set(&err, SS_ENOMEM, "no memory for the node lists");
        if (rc != SS_OK) {
                ss_graph_unref(g);
                ss__fail(r, rc, err.msg);
                return false;
        }
        /* What the answer will hold, counted before it exists: a client that
         * does not read its answers must not pile them up without bound. */
        uint64_t cells = route->job(&r->q) == SS_JOB_ONE_TO_ALL ? g->n
                         : route->job(&r->q) == SS_JOB_MATRIX   ? (uint64_t)r->q.nfrom * r->q.nto
                                                                : 512;
        if (!ss_http_reserve(r, 8 * cells + 256)) {
                ss_graph_unref(g);
                ss__fail(r, SS_EOVERLOAD,
                         "answers not yet sent hold the memory allowed for them "
                         "(answer_memory_mb); retry shortly");
                return false;
        }
        for (size_t i = 0; i < r->q.nfrom; i++)
                r->ids[i] = (uint32_t)(r->q.from[i] - 1);
        for (size_t i = 0; i < r->q.nto; i++)
                r->ids[r->q.nfrom + i] = (uint32_t)(r->q.to[i] - 1);

        struct ss_job *job = &r->job;
        job->kind = route->job(&r->q);
        job->algo = r->q.algo;
        /* A name with CPU rows only (dijkstra, astar, cch) asked for on the
         * GPU runs on the CPU, and the engine does not count it as a
         * fallback. */
        job->engine = r->q.engine;
        job->graph = g; /* the job owns this reference now */
        job->sources = r->ids;
        job->nsources = r->q.nfrom;
        job->targets = r->q.nto ? r->ids + r->q.nfrom : NULL;
        job->ntargets = r->q.nto;
        job->bounded = (route->params & SS_QP_MAX) != 0;
        job->bound = r->q.max;
        job->deadline_ns = r->start_ns + (uint64_t)cfg->deadline_ms * 1000000u;
        job->cancel = &r->gone;
        job->done = ss__job_done;
        job->user = r;
        rc = ss_engine_submit(rt->engine, job);
        if (rc != SS_OK) {
                ss__fail(r, rc, job->err.msg);
                ss_job_release(job);
                return false;
        }
        return true;
}

/* ------------------------------------------------------------------------
 * Dispatch
 */

static void ss__not_found(struct ss_request *r)
{
        char msg[300];
        size_t at = (size_t)snprintf(msg, sizeof(msg), "no endpoint here; try");
        for (size_t i = 0; i < SS__NROUTES && at < sizeof(msg); i++)
                at += (size_t)snprintf(msg + at, sizeof(msg) - at, "%s %s", i ? "," : "",
                                       ss__table[i].path);
        ss__fail(r, SS_HTTP_ENOTFOUND, msg);
}

bool ss_routes_anywhere(void *user, const struct ss_request *r)
{
        (void)user;
        const struct ss_route *route = r->route;
        return route && route->job && !route->answer;
}

bool ss_routes_dispatch(void *user, struct ss_request *r)
{
        const struct ss_routes *rt = user;
        const struct ss_route *route = r->route;
        char msg[300];

        if (!route) {
                ss__not_found(r);
                return false;
        }
        unsigned method = ss__method_bit(r->method);
        if (!strcmp(r->method, "OPTIONS")) {
                ss__options(r, route);
                return false;
        }
        if (!(route->methods & method)) {
                snprintf(msg, sizeof(msg), "method %.20s is not allowed on %s", r->method,
                         route->path);
                ss__fail(r, SS_HTTP_EMETHOD, msg);
                r->resp.allow = ss__allow(route->methods);
                return false;
        }
        if (route->job || route->answer)
                return ss__query(rt, r, method == SS_METHOD_POST);
        if (route->start)
                return route->start(rt, r);

        struct ss_view v = {0};
        struct ss_err err = {0};
        int rc = route->handler(rt, &v, &err);
        if (rc == SS_OK && (rc = route->render(&v, &r->resp)) != SS_OK)
                ss_err_set(&err, rc, "no memory for the response");
        if (rc != SS_OK)
                ss__fail(r, rc, err.msg);
        ss_view_free(&v);
        return false;
}
