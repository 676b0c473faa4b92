/* Request counters and latency histograms, rendered in the Prometheus text
 * format together with the engine's counters. Updated only on the loop
 * thread, so they need no locks. */
#ifndef SS_SERVER_METRICS_H
#define SS_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "server/endpoint.h"

#define SS_METRICS_NCODES      12 /* 200 204 400 404 405 413 414 499 500 503 504 other */
#define SS_METRICS_NBUCKETS    14
#define SS_METRICS_MAX_DEVICES 17 /* the CPU and 16 GPUs */

struct ss_metrics {
        uint64_t requests[SS_EP_COUNT][SS_METRICS_NCODES];
        uint64_t buckets[SS_EP_COUNT][SS_METRICS_NBUCKETS]; /* cumulative at render */
        uint64_t count[SS_EP_COUNT];
        double sum[SS_EP_COUNT];
};

/* Gauges owned elsewhere, passed in at render time. */
struct ss_metrics_gauges {
        double uptime_s;
        int serving; /* 1 once a graph serves */
        uint32_t nodes;
        uint64_t arcs;
        unsigned inflight; /* HTTP requests being handled */
        uint64_t reloads_ok, reloads_failed;
        uint64_t answer_bytes;        /* answers built and not yet sent */
        uint64_t refused_connections; /* over client_connections */
        uint64_t cut_connections;     /* closed by request_timeout_s or a half-close */
        /* The engine's devices (ss_engine_devices): the CPU, then each GPU. */
        struct ss_engine_device dev[SS_METRICS_MAX_DEVICES];
        unsigned ndev;
};

/* Counts one finished request. */
void ss_metrics_observe(struct ss_metrics *m, enum ss_endpoint ep, unsigned http, double seconds);

/* Renders everything as Prometheus text into a malloc'd string (*len
 * bytes); NULL when out of memory. */
char *ss_metrics_render(const struct ss_metrics *m, const struct ss_engine_stats *st,
                        const struct ss_metrics_gauges *g, size_t *len);

#endif
