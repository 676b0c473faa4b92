/* The CPU rows: the Dijkstra, ssspd's own engine and the reference every
 * other row is checked against, and the parallel Δ-stepping (cpu/delta.h).
 * One workspace or context, made in setup, serves every query, as in a
 * daemon worker. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cpu/delta.h"
#include "cpu/dijkstra.h"

struct cpu_state {
        const struct ss_graph *g;
        struct ss_dijkstra_ws *ws;
};

static bool cpu_available(char *why, size_t len)
{
        (void)why;
        (void)len;
        return true;
}

static int cpu_setup(void **state, const struct ss_graph *g, struct ss_err *err)
{
        struct cpu_state *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the Dijkstra state");
        s->g = g;
        s->ws = ss_dijkstra_ws_new(g->n);
        if (!s->ws) {
                free(s);
                return ss_err_set(err, SS_ENOMEM,
                                  "out of memory for a Dijkstra workspace of %u nodes", g->n);
        }
        *state = s;
        return 0;
}

static int cpu_run(void *state, uint32_t source, uint64_t deadline_ns, struct ss_err *err)
{
        struct cpu_state *s = state;
        struct ss_cancel cancel = {.deadline_ns = deadline_ns, .flag = NULL};
        int rc = ss_dijkstra_run(s->g, s->ws, source, SS_NO_NODE, deadline_ns ? &cancel : NULL);
        if (rc)
                return ss_err_set(err, rc, "dijkstra from node %u: %s", source + 1,
                                  ss_strerror(rc));
        return 0;
}

static void cpu_read(void *state, ss_dist *out)
{
        struct cpu_state *s = state;
        for (uint32_t v = 0; v < s->g->n; v++)
                out[v] = ss_dijkstra_dist(s->ws, v);
}

static uint64_t cpu_device_bytes(void *state)
{
        (void)state;
        return 0;
}

static void cpu_teardown(void *state)
{
        struct cpu_state *s = state;
        if (!s)
                return;
        ss_dijkstra_ws_free(s->ws);
        free(s);
}

const struct ss__bench_algo ss__bench_algo_dijkstra = {
    .name = "dijkstra",
    .label = "Dijkstra (ssspd, CPU)",
    .slow = false,
    .available = cpu_available,
    .setup = cpu_setup,
    .run = cpu_run,
    .read = cpu_read,
    .device_bytes = cpu_device_bytes,
    .teardown = cpu_teardown,
};

/* ---- parallel Δ-stepping ------------------------------------------------- */

static unsigned delta_threads; /* 0: one per core */

void ss__bench_cpu_configure(unsigned threads)
{
        delta_threads = threads;
}

struct delta_state {
        const struct ss_graph *g;
        struct ss_cpu_delta *ctx;
        ss_dist *dist;
};

static int delta_setup(void **state, const struct ss_graph *g, struct ss_err *err)
{
        struct delta_state *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the Δ-stepping state");
        s->g = g;
        s->dist = malloc((size_t)(g->n ? g->n : 1) * sizeof(ss_dist));
        int rc = s->dist ? ss_cpu_delta_new(g, delta_threads, &s->ctx) : SS_ENOMEM;
        if (rc) {
                free(s->dist);
                free(s);
                return ss_err_set(err, rc, "cannot make a Δ-stepping context with %u threads: %s",
                                  delta_threads, ss_strerror(rc));
        }
        *state = s;
        return 0;
}

/* One-to-all into the row's own array: the distances a caller gets. */
static int delta_run(void *state, uint32_t source, uint64_t deadline_ns, struct ss_err *err)
{
        struct delta_state *s = state;
        struct ss_cancel cancel = {.deadline_ns = deadline_ns, .flag = NULL};
        int rc = ss_cpu_delta_one_to_all(s->ctx, source, s->dist, deadline_ns ? &cancel : NULL);
        if (rc)
                return ss_err_set(err, rc, "Δ-stepping from node %u: %s", source + 1,
                                  ss_strerror(rc));
        return 0;
}

static void delta_read(void *state, ss_dist *out)
{
        struct delta_state *s = state;
        for (uint32_t v = 0; v < s->g->n; v++)
                out[v] = s->dist[v];
}

static void delta_describe(void *state, char *buf, size_t len)
{
        struct delta_state *s = state;
        snprintf(buf, len, "%u threads, delta %llu", ss_cpu_delta_threads(s->ctx),
                 (unsigned long long)ss_cpu_delta_delta(s->ctx));
}

static void delta_teardown(void *state)
{
        struct delta_state *s = state;
        if (!s)
                return;
        ss_cpu_delta_free(s->ctx);
        free(s->dist);
        free(s);
}

const struct ss__bench_algo ss__bench_algo_cpu_delta = {
    .name = "cpu-delta",
    .label = "Δ-stepping (ssspd, CPU)",
    .slow = false,
    .available = cpu_available,
    .setup = delta_setup,
    .run = delta_run,
    .read = delta_read,
    .device_bytes = cpu_device_bytes,
    .describe = delta_describe,
    .teardown = delta_teardown,
};
