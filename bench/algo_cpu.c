/* The CPU Dijkstra row: ssspd's own engine, the reference every other row
 * is checked against. One workspace, made in setup, serves every query, as
 * in a daemon worker thread. */
#include <stdlib.h>

#include "bench.h"
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
