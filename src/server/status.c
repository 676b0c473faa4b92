#include "server/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apsp/apsp.h"
#include "cch/cch.h"
#include "cpu/astar.h"
#include "core/cancel.h"
#include "server/http_error.h"
#include "server/weights.h"
#include "ss_config.h"

/* ------------------------------------------------------------------------
 * Renderers
 */

int ss_view_render_json(struct ss_view *v, struct ss_body *out)
{
        char *text = v->json ? json_dumps(v->json, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        json_decref(v->json);
        v->json = NULL;
        if (!text)
                return SS_ENOMEM;
        ss_body_json(text, out);
        return SS_OK;
}

int ss_view_render_text(struct ss_view *v, struct ss_body *out)
{
        if (!v->text && !v->borrowed)
                return SS_ENOMEM;
        memset(out, 0, sizeof(*out));
        /* A borrowed text is only ever read (sent, or compressed into a
         * copy), never written, through the body's char pointer. */
        out->data = v->text ? v->text : (char *)v->borrowed;
        out->len = v->len;
        out->http = 200;
        out->ctype = v->ctype;
        out->encoding = v->encoding;
        out->no_gzip = v->no_gzip;
        if (!v->text) {
                out->keep = v->keep;
                out->release = v->release;
                v->keep = NULL;
                v->release = NULL;
        }
        v->text = NULL;
        v->borrowed = NULL;
        return SS_OK;
}

void ss_view_free(struct ss_view *v)
{
        json_decref(v->json);
        free(v->text);
        if (v->release)
                v->release(v->keep);
        v->json = NULL;
        v->text = NULL;
        v->borrowed = NULL;
        v->keep = NULL;
        v->release = NULL;
}

/* ------------------------------------------------------------------------
 * Handlers
 */

int ss_status_health(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err)
{
        if (rt->state->phase == SS_PHASE_LOADING)
                return ss_err_set(err, SS_HTTP_ELOADING, "the graph is loading");
        if (rt->state->phase == SS_PHASE_STOPPING)
                return ss_err_set(err, SS_ESHUTDOWN, "the daemon is stopping");
        v->json = json_pack("{s:s, s:s}", "code", "Ok", "status", "serving");
        return SS_OK;
}

/* Sets key to a new value; a NULL value (out of memory) leaves the key out,
 * which the caller notices only as a shorter document. */
static void ss__set(json_t *o, const char *key, json_t *value)
{
        json_object_set_new(o, key, value);
}

/* A file's name without its directories: /status answers anyone who can
 * reach the port, and the layout of the host's disks is none of their
 * business (the log has the full path). */
static const char *ss__base(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

static json_t *ss__graph(const struct ss_graph_info *g)
{
        if (!g->nodes)
                return json_null();
        char sum[24];
        snprintf(sum, sizeof(sum), "%08llx", (unsigned long long)g->checksum);
        json_t *o = json_object();
        if (!o)
                return NULL;
        ss__set(o, "file", json_string(ss__base(g->file)));
        ss__set(o, "coords", g->coords[0] ? json_string(ss__base(g->coords)) : json_null());
        ss__set(o, "nodes", json_integer((json_int_t)g->nodes));
        ss__set(o, "arcs", json_integer((json_int_t)g->arcs));
        ss__set(o, "checksum", json_string(sum));
        ss__set(o, "coordinates", json_boolean(g->has_coords));
        ss__set(o, "landmarks", json_integer((json_int_t)g->landmarks));
        ss__set(o, "bytes", json_integer((json_int_t)g->bytes));
        ss__set(o, "memory",
                json_pack("{s:I, s:I, s:I, s:I, s:I}", "graph", (json_int_t)g->bytes_graph,
                          "landmarks", (json_int_t)g->bytes_landmarks, "cch",
                          (json_int_t)g->bytes_cch, "spatial_index", (json_int_t)g->bytes_index,
                          "travel_times", (json_int_t)g->bytes_times));
        ss__set(o, "load_ms", json_real(g->load_ms));
        ss__set(o, "loaded_at", json_string(g->loaded_at));
        return o;
}

/* What engine=auto does with the current graph: the solver of each kind of
 * query, and for one-to-all what the calibration at load measured. */
static json_t *ss__auto(struct ss_engine *e)
{
        struct ss_graph *g = ss_engine_graph(e);
        if (!g)
                return json_null();
        const struct ss_cch *c = ss_cch_of(g);
        const bool cch = ss_cch_metric_of(g) != NULL;
        json_t *o = json_object();
        uint64_t kept = 0, kept_bytes = 0;
        if (cch)
                ss_cch_metric_paths_stats(ss_cch_metric_of(g), &kept, &kept_bytes);
        ss__set(o, "cch",
                cch ? json_pack("{s:I, s:{s:I, s:I}}", "edges", (json_int_t)c->arcs, "kept_paths",
                                "lists", (json_int_t)kept, "bytes", (json_int_t)kept_bytes)
                    : json_null());
        struct ss_apsp_status ap;
        ss_apsp_status_of(g, &ap);
        static const char *const states[] = {"off", "computing", "ready", "failed"};
        json_t *apsp = json_pack("{s:s, s:I, s:f}", "state", states[ap.state], "bytes",
                                 (json_int_t)ap.bytes, "ms", ap.ms);
        if (ap.state == SS_APSP_FAILED)
                json_object_set_new(apsp, "why", json_string(ap.why));
        ss__set(o, "apsp", apsp);
        const bool lookup = ap.state == SS_APSP_READY;
        struct ss_engine_auto a;
        const bool measured = ss_engine_auto(g, &a) == SS_OK;
        ss__set(o, "route",
                json_string(lookup                           ? "apsp"
                            : cch && measured && a.route_gpu ? "cch first, GPU cch when busy"
                            : cch                            ? "cch"
                            : ss_astar_useful(g)             ? "astar first, GPU delta when busy"
                                                             : "GPU delta, CPU dijkstra"));
        ss__set(o, "matrix", json_string(lookup ? "apsp" : cch ? "cch" : "delta"));
        if (measured) {
                json_t *cand = json_array();
                for (unsigned i = 0; i < a.ncand; i++)
                        json_array_append_new(
                            cand,
                            json_pack("{s:s, s:s, s:o}", "algorithm", a.cand[i].name, "engine",
                                      ss_device_name(a.cand[i].device), "ms",
                                      a.cand[i].ms >= 0 ? json_real(a.cand[i].ms) : json_null()));
                ss__set(o, "one_to_all",
                        json_pack("{s:s, s:s, s:o, s:f}", "engine",
                                  lookup || a.cpu_first ? "cpu" : "gpu", "algorithm",
                                  lookup        ? "apsp"
                                  : a.cpu_first ? a.cpu_row
                                  : a.gpu_row   ? a.gpu_row
                                                : "delta",
                                  "measured", cand, "calibration_ms", a.calibrate_ms));
        } else {
                ss__set(o, "one_to_all", json_string(lookup ? "apsp" : "delta"));
        }
        ss_graph_unref(g);
        return o;
}

static json_t *ss__engine(const struct ss_routes *rt)
{
        struct ss_engine_stats st;
        ss_engine_stats(rt->engine, &st);
        /* One entry per device of the engine: the CPU, then every GPU of
         * the pool. */
        struct ss_engine_device dev[17];
        const unsigned ndev = ss_engine_devices(rt->engine, dev, 17);
        json_t *o = json_object();
        if (!o)
                return NULL;
        json_t *devices = json_array();
        unsigned streams = 0, faults = 0, gpus_serving = 0;
        uint64_t gpu_mem = 0;
        const char *why =
            ndev > 1 ? dev[1].what : "built without CUDA, or gpu no: the CPU serves every query";
        for (unsigned i = 0; i < ndev && devices; i++) {
                json_array_append_new(
                    devices, json_pack("{s:s, s:i, s:b, s:i, s:i, s:I, s:i, s:s}", "kind",
                                       ss_device_name(dev[i].device), "id", dev[i].id, "serving",
                                       dev[i].serving, "lanes", (int)dev[i].lanes, "batch",
                                       (int)dev[i].batch, "memory_bytes", (json_int_t)dev[i].bytes,
                                       "faults", (int)dev[i].faults, "what", dev[i].what));
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
        ss__set(o, "serving", json_string(gpu ? "gpu" : "cpu"));
        ss__set(o, "reason", json_string(why));
        ss__set(o, "cpu_workers", json_integer((json_int_t)st.cpu_workers));
        ss__set(o, "gpu_streams", json_integer((json_int_t)streams));
        ss__set(o, "devices", devices);
        ss__set(o, "gpu_memory_bytes", json_integer((json_int_t)gpu_mem));
        ss__set(o, "gpu_faults", json_integer((json_int_t)faults));
        ss__set(o, "busy_workers", json_integer((json_int_t)st.busy));
        ss__set(o, "queue_depth", json_integer((json_int_t)st.queue_depth));
        ss__set(o, "queue_capacity", json_integer((json_int_t)st.queue_max));
        ss__set(o, "submitted", json_integer((json_int_t)st.submitted));
        ss__set(o, "completed", json_integer((json_int_t)st.completed));
        ss__set(o, "rejected", json_integer((json_int_t)st.rejected));
        ss__set(o, "timed_out", json_integer((json_int_t)st.timed_out));
        ss__set(o, "cancelled", json_integer((json_int_t)st.cancelled));
        ss__set(o, "fallbacks", json_integer((json_int_t)st.fallbacks));
        ss__set(o, "gpu_seconds", json_real((double)st.gpu_ns / 1e9));
        ss__set(o, "auto", ss__auto(rt->engine));
        return o;
}

/* The serving weights: the version queries get now, when it was made, its
 * checksum and landmarks (a decrease drops them), and the updates. */
static json_t *ss__weights(const struct ss_routes *rt)
{
        struct ss_graph *g = ss_engine_graph(rt->engine);
        if (!g)
                return json_null();
        struct ss_engine_stats st;
        ss_engine_stats(rt->engine, &st);
        unsigned waiting = 0;
        bool busy = false;
        ss_updater_load(rt->updater, &waiting, &busy);
        char sum[24], at[32];
        snprintf(sum, sizeof(sum), "%08llx", (unsigned long long)g->checksum);
        const time_t secs = (time_t)(g->weights_time_ns / 1000000000u);
        struct tm tm;
        gmtime_r(&secs, &tm);
        strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
        const struct ss_astar *a = ss_astar_of(g);
        json_t *o = json_object();
        if (o) {
                ss__set(o, "version", json_integer((json_int_t)g->weights_version));
                /* Version 0 is the weights as loaded: graph.loaded_at. */
                ss__set(o, "changed_at", g->weights_version ? json_string(at) : json_null());
                ss__set(o, "checksum", json_string(sum));
                ss__set(o, "landmarks", json_integer(a && a->lm ? (json_int_t)a->lm->k : 0));
                ss__set(o, "cch", json_boolean(ss_cch_metric_of(g) != NULL));
                ss__set(o, "file",
                        rt->cfg->weights[0] ? json_string(ss__base(rt->cfg->weights))
                                            : json_null());
                ss__set(o, "updates", json_integer((json_int_t)st.weight_updates));
                ss__set(o, "updates_failed", json_integer((json_int_t)st.weight_updates_failed));
                ss__set(o, "last_update_ms", json_real(st.weight_update_ms_last));
                ss__set(o, "applying", json_boolean(busy));
                ss__set(o, "waiting", json_integer((json_int_t)waiting));
        }
        ss_graph_unref(g);
        return o;
}

static json_t *ss__reloads(const struct ss_state *s)
{
        const struct ss_reload_info *ri = &s->reloads;
        json_t *o = json_object();
        if (!o)
                return NULL;
        ss__set(o, "in_progress", json_boolean(ri->in_progress && s->phase == SS_PHASE_SERVING));
        ss__set(o, "ok", json_integer((json_int_t)ri->ok));
        ss__set(o, "failed", json_integer((json_int_t)ri->failed));
        ss__set(o, "last_error", ri->last_error[0] ? json_string(ri->last_error) : json_null());
        return o;
}

static json_t *ss__http(const struct ss_http *h)
{
        json_t *o = json_object();
        if (!o)
                return NULL;
        ss__set(o, "threads", json_integer((json_int_t)h->threads));
        ss__set(o, "answer_bytes_held", json_integer((json_int_t)h->held_bytes));
        ss__set(o, "refused_connections", json_integer((json_int_t)h->refused));
        ss__set(o, "timed_out_connections", json_integer((json_int_t)h->cut));
        return o;
}

int ss_status_status(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err)
{
        const struct ss_state *s = rt->state;
        json_t *o = json_object();
        if (!o)
                return ss_err_set(err, SS_ENOMEM, "no memory for the status");
        ss__set(o, "code", json_string("Ok"));
        ss__set(o, "version", json_string(SS_VERSION));
        ss__set(o, "state", json_string(ss_phase_name(s->phase)));
        ss__set(o, "uptime_s", json_real((double)(ss_now_ns() - s->start_ns) / 1e9));
        ss__set(o, "graph", ss__graph(&s->graph));
        ss__set(o, "weights", ss__weights(rt));
        ss__set(o, "engine", ss__engine(rt));
        ss__set(o, "reloads", ss__reloads(s));
        ss__set(o, "http_inflight", json_integer((json_int_t)ss_http_inflight(rt->http)));
        ss__set(o, "http", ss__http(rt->http));
        v->json = o;
        return SS_OK;
}

int ss_status_metrics(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err)
{
        const struct ss_state *s = rt->state;
        struct ss_engine_stats st;
        ss_engine_stats(rt->engine, &st);
        struct ss_metrics_gauges g = {
            .uptime_s = (double)(ss_now_ns() - s->start_ns) / 1e9,
            .serving = s->phase == SS_PHASE_SERVING,
            .nodes = s->graph.nodes,
            .arcs = s->graph.arcs,
            .inflight = ss_http_inflight(rt->http),
            .reloads_ok = s->reloads.ok,
            .reloads_failed = s->reloads.failed,
            .answer_bytes = rt->http->held_bytes,
            .refused_connections = rt->http->refused,
            .cut_connections = rt->http->cut,
        };
        g.ndev = ss_engine_devices(rt->engine, g.dev, SS_METRICS_MAX_DEVICES);
        struct ss_metrics counts;
        ss_http_metrics(rt->http, &counts);
        v->text = ss_metrics_render(&counts, &st, &g, &v->len);
        if (!v->text)
                return ss_err_set(err, SS_ENOMEM, "no memory for the metrics");
        v->ctype = "text/plain; version=0.0.4";
        return SS_OK;
}
