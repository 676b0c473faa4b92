/* The endpoints: what each request becomes (an engine job, or an answer at
 * once), and the job's completion on the worker thread. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "server/http_error.h"
#include "core/log.h"
#include "server/server.h"
#include "ss_config.h"

/* ------------------------------------------------------------------------
 * Immediate answers
 */

static void ss__fail(struct ss_request *r, int status, const char *msg)
{
        ss_body_free(&r->resp);
        ss_body_error(status, msg, &r->resp);
}

static void ss__json(struct ss_request *r, json_t *o)
{
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        json_decref(o);
        if (!text)
                ss__fail(r, SS_ENOMEM, "no memory for the response");
        else
                ss_body_json(text, &r->resp);
}

static const char *ss__state_name(enum ss_state s)
{
        return s == SS_STATE_LOADING ? "loading" : s == SS_STATE_SERVING ? "serving" : "stopping";
}

static void ss__health(struct ss_server *srv, struct ss_request *r)
{
        if (srv->state == SS_STATE_LOADING)
                ss__fail(r, SS_HTTP_ELOADING, "the graph is loading");
        else if (srv->state == SS_STATE_STOPPING)
                ss__fail(r, SS_ESHUTDOWN, "the daemon is stopping");
        else
                ss__json(r, json_pack("{s:s, s:s}", "code", "Ok", "status", "serving"));
}

static void ss__status(struct ss_server *srv, struct ss_request *r)
{
        struct ss_engine_stats st;
        char sum[24];
        ss_engine_stats(srv->engine, &st);
        snprintf(sum, sizeof(sum), "%08llx", (unsigned long long)srv->graph_checksum);

        json_t *graph = json_null();
        if (srv->nodes)
                graph = json_pack(
                    "{s:s, s:s?, s:i, s:I, s:s, s:b, s:i, s:I, s:f, s:s}", "file", srv->graph_path,
                    "coords", srv->coords_path[0] ? srv->coords_path : NULL, "nodes",
                    (json_int_t)srv->nodes, "arcs", (json_int_t)srv->arcs, "checksum", sum,
                    "coordinates", srv->has_coords, "landmarks", (int)srv->landmarks, "bytes",
                    (json_int_t)srv->graph_bytes,
                    "load_ms", srv->load_ms, "loaded_at", srv->loaded_at);
        struct ss_engine_device dev[17];
        const unsigned ndev = ss_engine_devices(srv->engine, dev, 17);
        json_t *devices = json_array();
        unsigned streams = 0, faults = 0, gpus_serving = 0;
        uint64_t gpu_mem = 0;
        const char *why = ndev > 1 ? dev[1].what : "built without CUDA, or gpu no: the CPU "
                                                     "serves every query";
        for (unsigned i = 0; i < ndev; i++) {
                json_array_append_new(
                    devices, json_pack("{s:s, s:i, s:b, s:i, s:i, s:I, s:i, s:s}", "kind",
                                       ss_device_name(dev[i].device), "id", dev[i].id, "serving",
                                       dev[i].serving, "lanes", (int)dev[i].lanes, "batch",
                                       (int)dev[i].batch, "memory_bytes",
                                       (json_int_t)dev[i].bytes, "faults", (int)dev[i].faults,
                                       "what", dev[i].what));
                if (dev[i].device != SS_DEVICE_GPU)
                        continue;
                streams += dev[i].lanes;
                gpu_mem += dev[i].bytes;
                faults += dev[i].faults;
                if (dev[i].serving) {
                        if (!gpus_serving)
                                why = dev[i].what;
                        gpus_serving++;
                }
        }
        const bool gpu = gpus_serving > 0 && st.gpu_workers > 0;
        json_t *engine = json_pack(
            "{s:s, s:s, s:i, s:i, s:o, s:I, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:f}",
            "serving", gpu ? "gpu" : "cpu", "reason", why, "cpu_workers", (int)st.cpu_workers,
            "gpu_streams", (int)streams, "devices", devices, "gpu_memory_bytes",
            (json_int_t)gpu_mem, "gpu_faults", (int)faults, "busy_workers", (int)st.busy,
            "queue_depth", (int)st.queue_depth, "queue_capacity", (int)st.queue_max, "submitted",
            (json_int_t)st.submitted, "completed", (json_int_t)st.completed, "rejected",
            (json_int_t)st.rejected, "timed_out", (json_int_t)st.timed_out, "cancelled",
            (json_int_t)st.cancelled, "fallbacks", (json_int_t)st.fallbacks, "gpu_seconds",
            (double)st.gpu_ns / 1e9);
        json_t *reload = json_pack(
            "{s:b, s:I, s:I, s:s?}", "in_progress", srv->loading && srv->state == SS_STATE_SERVING,
            "ok", (json_int_t)srv->reloads_ok, "failed", (json_int_t)srv->reloads_failed,
            "last_error", srv->last_reload_error[0] ? srv->last_reload_error : NULL);
        ss__json(r, json_pack("{s:s, s:s, s:s, s:f, s:o, s:o, s:o, s:i}", "code", "Ok", "version",
                              SS_VERSION, "state", ss__state_name(srv->state), "uptime_s",
                              (double)(ss_now_ns() - srv->start_ns) / 1e9, "graph", graph, "engine",
                              engine, "reloads", reload, "http_inflight", (int)srv->inflight));
}

static void ss__metrics(struct ss_server *srv, struct ss_request *r)
{
        struct ss_engine_stats st;
        ss_engine_stats(srv->engine, &st);
        struct ss_metrics_gauges g = {
            .uptime_s = (double)(ss_now_ns() - srv->start_ns) / 1e9,
            .serving = srv->state == SS_STATE_SERVING,
            .nodes = srv->nodes,
            .arcs = srv->arcs,
            .inflight = srv->inflight,
            .reloads_ok = srv->reloads_ok,
            .reloads_failed = srv->reloads_failed,
        };
        size_t len = 0;
        char *text = ss_metrics_render(&srv->metrics, &st, &g, &len);
        if (!text)
                return ss__fail(r, SS_ENOMEM, "no memory for the metrics");
        memset(&r->resp, 0, sizeof(r->resp));
        r->resp.data = text;
        r->resp.len = len;
        r->resp.http = 200;
        r->resp.ctype = "text/plain; version=0.0.4";
}

/* ------------------------------------------------------------------------
 * Queries
 */

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

static bool ss__query(struct ss_server *srv, struct ss_request *r, bool post)
{
        struct ss_err err = {0};
        int rc;

        if (srv->state == SS_STATE_LOADING) {
                ss__fail(r, SS_HTTP_ELOADING, "the graph is loading; retry shortly");
                return false;
        }
        if (srv->state == SS_STATE_STOPPING) {
                ss__fail(r, SS_ESHUTDOWN, "the daemon is stopping");
                return false;
        }
        ss_query_init(&r->q, r->ep);
        if ((rc = ss__parse(r, post, &err)) != SS_OK) {
                ss__fail(r, rc, err.msg);
                return false;
        }
        struct ss_graph *g = ss_engine_graph(srv->engine);
        if (!g) {
                ss__fail(r, SS_HTTP_ELOADING, "no graph is loaded yet");
                return false;
        }
        struct ss_limits lim = {
            .max_sources = (uint64_t)srv->cfg.max_sources,
            .max_targets = (uint64_t)srv->cfg.max_targets,
            .max_matrix = (uint64_t)srv->cfg.max_matrix,
            .max_json_nodes = (uint64_t)srv->cfg.max_json_nodes,
        };
        rc = ss_query_finish(&r->q, &lim, g->n, g->x != NULL, &err);
        if (rc == SS_OK && !(r->ids = malloc((r->q.nfrom + r->q.nto + 1) * sizeof(uint32_t))))
                rc = ss_err_set(&err, SS_ENOMEM, "no memory for the node lists");
        if (rc != SS_OK) {
                ss_graph_unref(g);
                ss__fail(r, rc, err.msg);
                return false;
        }
        for (size_t i = 0; i < r->q.nfrom; i++)
                r->ids[i] = (uint32_t)(r->q.from[i] - 1);
        for (size_t i = 0; i < r->q.nto; i++)
                r->ids[r->q.nfrom + i] = (uint32_t)(r->q.to[i] - 1);

        struct ss_job *job = &r->job;
        job->kind = r->ep == SS_EP_ROUTE ? SS_JOB_ROUTE
                    : r->q.has_to        ? SS_JOB_MATRIX
                                         : SS_JOB_ONE_TO_ALL;
        job->algo = r->q.algo;
        job->engine = r->q.engine;
        job->graph = g; /* the job owns this reference now */
        job->sources = r->ids;
        job->nsources = r->q.nfrom;
        job->targets = r->q.nto ? r->ids + r->q.nfrom : NULL;
        job->ntargets = r->q.nto;
        job->deadline_ns = r->start_ns + (uint64_t)srv->cfg.deadline_ms * 1000000u;
        job->cancel = &r->gone;
        job->done = ss_route_job_done;
        job->user = r;
        rc = ss_engine_submit(srv->engine, job);
        if (rc != SS_OK) {
                ss__fail(r, rc, job->err.msg);
                ss_job_release(job);
                return false;
        }
        return true;
}

void ss_route_job_done(struct ss_job *job)
{
        struct ss_request *r = job->user;
        struct ss_server *srv = r->srv;

        /* Build the body here, on the worker, to keep the loop thread free. */
        if (ss_body_for_job(&r->q, job, &r->resp) != SS_OK &&
            ss_body_error(SS_ENOMEM, "no memory for the response", &r->resp) != SS_OK) {
                r->resp.http = 503;
                r->resp.retry_after = 1;
        }
        if (r->resp.http == 500)
                ss_log_error("query", "internal error: %s", job->err.msg);
        ss_job_release(job);

        pthread_mutex_lock(&srv->done_lock);
        r->done_next = srv->done_head;
        srv->done_head = r;
        pthread_mutex_unlock(&srv->done_lock);
        uv_async_send(&srv->done_async);
}

/* ------------------------------------------------------------------------
 * Dispatch
 */

bool ss_route_request(struct ss_server *srv, struct ss_request *r, const char *method)
{
        bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
        bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
        char msg[300];

        if (r->ep == SS_EP_OTHER) {
                snprintf(msg, sizeof(msg),
                         "no endpoint here; try /route, /distances, /health, /status, /metrics");
                ss__fail(r, SS_HTTP_ENOTFOUND, msg);
                return false;
        }
        bool query = r->ep == SS_EP_ROUTE || r->ep == SS_EP_DISTANCES;
        if (!get && !(post && query)) {
                snprintf(msg, sizeof(msg), "method %.20s is not allowed on /%s", method,
                         ss_endpoint_name(r->ep));
                ss__fail(r, SS_HTTP_EMETHOD, msg);
                return false;
        }
        switch (r->ep) {
        case SS_EP_HEALTH:
                ss__health(srv, r);
                return false;
        case SS_EP_STATUS:
                ss__status(srv, r);
                return false;
        case SS_EP_METRICS:
                ss__metrics(srv, r);
                return false;
        default:
                return ss__query(srv, r, post);
        }
}
