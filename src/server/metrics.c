#include "server/metrics.h"

#include <stdio.h>
#include <stdlib.h>

static const unsigned ss__codes[SS_METRICS_NCODES] = {200, 204, 400, 404, 405, 413,
                                                      414, 499, 500, 503, 504, 0};
/* Upper bounds in seconds; the last bucket is +Inf. */
static const double ss__bounds[SS_METRICS_NBUCKETS - 1] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

void ss_metrics_observe(struct ss_metrics *m, enum ss_endpoint ep, unsigned http, double seconds)
{
        int c = SS_METRICS_NCODES - 1;
        for (int i = 0; i < SS_METRICS_NCODES - 1; i++)
                if (ss__codes[i] == http)
                        c = i;
        m->requests[ep][c]++;
        int b = SS_METRICS_NBUCKETS - 1;
        for (int i = 0; i < SS_METRICS_NBUCKETS - 1; i++)
                if (seconds <= ss__bounds[i]) {
                        b = i;
                        break;
                }
        m->buckets[ep][b]++;
        m->count[ep]++;
        m->sum[ep] += seconds;
}

static void ss__head(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One series per GPU of the engine's pool, labelled by CUDA id: whether it
 * serves, its streams, its device memory and its faults. */
static void ss__devices(FILE *f, const struct ss_metrics_gauges *g)
{
        static const struct {
                const char *name, *type, *help;
        } series[] = {
            {"ssspd_gpu_serving", "gauge",
             "1 when the GPU holds the serving graph and is healthy."},
            {"ssspd_gpu_streams", "gauge", "Streams of the GPU that take queries."},
            {"ssspd_gpu_memory_bytes", "gauge", "Device memory the engine holds on the GPU."},
            {"ssspd_gpu_faults_total", "counter", "Device faults seen on the GPU."},
        };
        for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
                bool head = false;
                for (unsigned i = 0; i < g->ndev && i < SS_METRICS_MAX_DEVICES; i++) {
                        const struct ss_engine_device *d = &g->dev[i];
                        if (d->device != SS_DEVICE_GPU)
                                continue;
                        if (!head)
                                ss__head(f, series[k].name, series[k].type, series[k].help);
                        head = true;
                        const unsigned long long v = k == 0   ? (unsigned long long)d->serving
                                                     : k == 1 ? (unsigned long long)d->lanes
                                                     : k == 2 ? (unsigned long long)d->bytes
                                                              : (unsigned long long)d->faults;
                        fprintf(f, "%s{device=\"%d\"} %llu\n", series[k].name, d->id, v);
                }
        }
}

/* Weight updates (POST /weights): counts by result, their durations, and
 * the serving weights' version. */
static void ss__weights(FILE *f, const struct ss_engine_stats *st)
{
        static const double bounds[] = SS_ENGINE_UPDATE_BOUNDS_MS;
        ss__head(f, "ssspd_weight_updates_total", "counter",
                 "Weight updates by result (ok: a new weights version serves).");
        fprintf(f, "ssspd_weight_updates_total{result=\"ok\"} %llu\n",
                (unsigned long long)st->weight_updates);
        fprintf(f, "ssspd_weight_updates_total{result=\"failed\"} %llu\n",
                (unsigned long long)st->weight_updates_failed);
        ss__head(f, "ssspd_weight_update_seconds", "histogram",
                 "Time from a weight update's start until its version serves.");
        uint64_t cum = 0;
        for (unsigned i = 0; i < SS_ENGINE_UPDATE_BUCKETS; i++) {
                cum += st->weight_update_buckets[i];
                if (i + 1 < SS_ENGINE_UPDATE_BUCKETS)
                        fprintf(f, "ssspd_weight_update_seconds_bucket{le=\"%g\"} %llu\n",
                                bounds[i] / 1e3, (unsigned long long)cum);
        }
        fprintf(f, "ssspd_weight_update_seconds_bucket{le=\"+Inf\"} %llu\n",
                (unsigned long long)cum);
        fprintf(f, "ssspd_weight_update_seconds_sum %.6f\n", st->weight_update_ms_sum / 1e3);
        fprintf(f, "ssspd_weight_update_seconds_count %llu\n", (unsigned long long)cum);
        ss__head(f, "ssspd_weight_update_last_seconds", "gauge",
                 "Duration of the last weight update that made a version.");
        fprintf(f, "ssspd_weight_update_last_seconds %.6f\n", st->weight_update_ms_last / 1e3);
        ss__head(f, "ssspd_weights_version", "gauge",
                 "Weights version of the serving graph (0 as loaded).");
        fprintf(f, "ssspd_weights_version %llu\n", (unsigned long long)st->weights_version);
}

char *ss_metrics_render(const struct ss_metrics *m, const struct ss_engine_stats *st,
                        const struct ss_metrics_gauges *g, size_t *len)
{
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);
        if (!f)
                return NULL;

        ss__head(f, "ssspd_http_requests_total", "counter",
                 "HTTP requests by endpoint and status.");
        for (int e = 0; e < SS_EP_COUNT; e++)
                for (int c = 0; c < SS_METRICS_NCODES; c++)
                        if (m->requests[e][c]) {
                                char code[8];
                                snprintf(code, sizeof(code), "%u", ss__codes[c]);
                                fprintf(f,
                                        "ssspd_http_requests_total{endpoint=\"%s\",code=\"%s\"} "
                                        "%llu\n",
                                        ss_endpoint_name(e), ss__codes[c] ? code : "other",
                                        (unsigned long long)m->requests[e][c]);
                        }

        ss__head(f, "ssspd_http_request_duration_seconds", "histogram",
                 "Time from the request line until the response was sent, by endpoint.");
        for (int e = 0; e < SS_EP_COUNT; e++) {
                if (!m->count[e])
                        continue;
                const char *ep = ss_endpoint_name(e);
                uint64_t cum = 0;
                for (int b = 0; b < SS_METRICS_NBUCKETS; b++) {
                        cum += m->buckets[e][b];
                        if (b < SS_METRICS_NBUCKETS - 1)
                                fprintf(
                                    f,
                                    "ssspd_http_request_duration_seconds_bucket{endpoint=\"%s\","
                                    "le=\"%g\"} %llu\n",
                                    ep, ss__bounds[b], (unsigned long long)cum);
                        else
                                fprintf(
                                    f,
                                    "ssspd_http_request_duration_seconds_bucket{endpoint=\"%s\","
                                    "le=\"+Inf\"} %llu\n",
                                    ep, (unsigned long long)cum);
                }
                fprintf(f, "ssspd_http_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n", ep,
                        m->sum[e]);
                fprintf(f, "ssspd_http_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", ep,
                        (unsigned long long)m->count[e]);
        }

        ss__head(f, "ssspd_queries_total", "counter",
                 "Queries answered, by the engine and algorithm that ran them.");
        for (int e = SS_ENGINE_CPU; e < SS_ENGINE_COUNT; e++)
                for (int a = SS_ALGO_AUTO + 1; a < ss_algo_count(); a++)
                        fprintf(f, "ssspd_queries_total{engine=\"%s\",algorithm=\"%s\"} %llu\n",
                                ss_engine_kind_name(e), ss_algo_name(a),
                                (unsigned long long)st->queries[e][a]);

        /* GPU searches by the sources they took: a histogram with the batch
         * sizes 1, 2, 4, ..., 256 as bucket bounds. */
        ss__head(f, "ssspd_gpu_batch_sources", "histogram",
                 "Sources per GPU search: how full the batches are.");
        uint64_t bcum = 0, bcount = 0;
        for (int i = 0; i < SS_ENGINE_BATCH_BUCKETS; i++) {
                bcum += st->batches[i];
                bcount += st->batches[i];
                if (i + 1 < SS_ENGINE_BATCH_BUCKETS)
                        fprintf(f, "ssspd_gpu_batch_sources_bucket{le=\"%u\"} %llu\n", 1u << i,
                                (unsigned long long)bcum);
        }
        fprintf(f, "ssspd_gpu_batch_sources_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)bcum);
        fprintf(f, "ssspd_gpu_batch_sources_sum %llu\n", (unsigned long long)st->batched_sources);
        fprintf(f, "ssspd_gpu_batch_sources_count %llu\n", (unsigned long long)bcount);

#define SS__ONE(name, type, help, fmt, val)                                                        \
        do {                                                                                       \
                ss__head(f, name, type, help);                                                     \
                fprintf(f, name " " fmt "\n", val);                                                \
        } while (0)
        SS__ONE("ssspd_fallbacks_total", "counter",
                "Queries meant for a GPU that the CPU answered.", "%llu",
                (unsigned long long)st->fallbacks);
        SS__ONE("ssspd_query_timeouts_total", "counter", "Queries cancelled at their deadline.",
                "%llu", (unsigned long long)st->timed_out);
        SS__ONE("ssspd_queries_cancelled_total", "counter",
                "Queries dropped or stopped because their client hung up.", "%llu",
                (unsigned long long)st->cancelled);
        SS__ONE("ssspd_queue_rejected_total", "counter",
                "Queries refused because the queue was full.", "%llu",
                (unsigned long long)st->rejected);
        SS__ONE("ssspd_queue_depth", "gauge", "Queries waiting for a worker.", "%zu",
                st->queue_depth);
        SS__ONE("ssspd_queue_capacity", "gauge", "Bound of the query queue.", "%zu", st->queue_max);
        SS__ONE("ssspd_workers_busy", "gauge", "Workers running a query.", "%u", st->busy);
        SS__ONE("ssspd_worker_seconds_total", "counter", "Worker time spent on queries.", "%.6f",
                (double)st->busy_ns / 1e9);
        SS__ONE("ssspd_gpu_seconds_total", "counter", "GPU time spent on queries.", "%.6f",
                (double)st->gpu_ns / 1e9);
        SS__ONE("ssspd_http_inflight", "gauge", "HTTP requests being handled.", "%u", g->inflight);
        SS__ONE("ssspd_answer_bytes_held", "gauge", "Bytes of answers built and not yet sent.",
                "%llu", (unsigned long long)g->answer_bytes);
        SS__ONE("ssspd_connections_refused_total", "counter",
                "Connections refused because their client had client_connections open.", "%llu",
                (unsigned long long)g->refused_connections);
        SS__ONE("ssspd_connections_timed_out_total", "counter",
                "Connections closed because their request did not arrive in time.", "%llu",
                (unsigned long long)g->cut_connections);
        ss__head(f, "ssspd_reloads_total", "counter", "Graph reloads by result.");
        fprintf(f, "ssspd_reloads_total{result=\"ok\"} %llu\n", (unsigned long long)g->reloads_ok);
        fprintf(f, "ssspd_reloads_total{result=\"failed\"} %llu\n",
                (unsigned long long)g->reloads_failed);
        ss__weights(f, st);
        ss__devices(f, g);
        SS__ONE("ssspd_graph_nodes", "gauge", "Nodes of the serving graph.", "%u", g->nodes);
        SS__ONE("ssspd_graph_arcs", "gauge", "Arcs of the serving graph.", "%llu",
                (unsigned long long)g->arcs);
        SS__ONE("ssspd_up", "gauge", "1 when a graph serves queries, 0 while loading.", "%d",
                g->serving);
        SS__ONE("ssspd_uptime_seconds", "gauge", "Seconds since start.", "%.3f", g->uptime_s);
#undef SS__ONE

        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}
