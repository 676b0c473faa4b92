/* The Boost Graph Library rows: boost::dijkstra_shortest_paths and
 * boost::bellman_ford_shortest_paths as outside references, as in the
 * classic CUDA study's tables. The Boost graph is built from our CSR in
 * setup, so only the algorithms are timed. Built only when Meson found
 * Boost and a C++ compiler (SS_BENCH_HAVE_BOOST). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if SS_BENCH_HAVE_BOOST

#include "boost_ref.h"

struct boost_state {
        struct ss__bref *b;
        uint32_t n;
        const uint32_t *sources;
};

static bool boost_available(const struct ss__bench_algo *a, char *why, size_t len)
{
        (void)a;
        (void)why;
        (void)len;
        return true;
}

static int boost_setup(const struct ss__bench_algo *a, void **state, const struct ss_graph *g,
                       const uint32_t *sources, unsigned k, struct ss_err *err)
{
        (void)a;
        (void)k;
        char why[256] = "";
        struct boost_state *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the Boost state");
        s->n = g->n;
        s->sources = sources;
        s->b = ss__bref_new(g->n, g->m, g->row, g->col, g->w, why, sizeof(why));
        if (!s->b) {
                free(s);
                return ss_err_set(err, SS_ENOMEM, "Boost graph: %s", why);
        }
        *state = s;
        return 0;
}

static int boost_dijkstra_run(void *state, unsigned i, uint64_t deadline_ns, double *amortized_s,
                              struct ss_err *err)
{
        struct boost_state *s = state;
        const uint32_t source = s->sources[i];
        *amortized_s = 0;
        char why[256] = "";
        (void)deadline_ns; /* Boost's Dijkstra is as fast as ours; no budget needed */
        if (ss__bref_dijkstra(s->b, source, why, sizeof(why)))
                return ss_err_set(err, SS_EINTERNAL, "boost dijkstra from node %u: %s", source + 1,
                                  why);
        return 0;
}

static int boost_bf_run(void *state, unsigned i, uint64_t deadline_ns, double *amortized_s,
                        struct ss_err *err)
{
        struct boost_state *s = state;
        const uint32_t source = s->sources[i];
        *amortized_s = 0;
        char why[256] = "";
        int rc = ss__bref_bellman_ford(s->b, source, deadline_ns, why, sizeof(why));
        if (rc > 0)
                return ss_err_set(err, SS_ETIMEDOUT,
                                  "boost bellman-ford from node %u: budget spent", source + 1);
        if (rc < 0)
                return ss_err_set(err, SS_EINTERNAL, "boost bellman-ford from node %u: %s",
                                  source + 1, why);
        return 0;
}

static void boost_read(void *state, unsigned i, ss_dist *out)
{
        struct boost_state *s = state;
        (void)i;
        /* Boost marks unreachable nodes with the largest uint64_t, which is SS_DIST_INF. */
        memcpy(out, ss__bref_dist(s->b), (size_t)s->n * sizeof(ss_dist));
}

static void boost_teardown(void *state)
{
        struct boost_state *s = state;
        if (!s)
                return;
        ss__bref_free(s->b);
        free(s);
}

#else /* !SS_BENCH_HAVE_BOOST */

static bool boost_available(const struct ss__bench_algo *a, char *why, size_t len)
{
        (void)a;
        snprintf(why, len, "built without Boost (install libboost-graph-dev and a C++ compiler)");
        return false;
}

#define boost_setup        NULL
#define boost_dijkstra_run NULL
#define boost_bf_run       NULL
#define boost_read         NULL
#define boost_teardown     NULL

#endif

static uint64_t boost_device_bytes(void *state)
{
        (void)state;
        return 0;
}

const struct ss__bench_algo ss__bench_algo_boost_dijkstra = {
    .name = "boost-dijkstra",
    .label = "Boost Dijkstra",
    .slow = false,
    .available = boost_available,
    .setup = boost_setup,
    .run = boost_dijkstra_run,
    .read = boost_read,
    .device_bytes = boost_device_bytes,
    .teardown = boost_teardown,
};

const struct ss__bench_algo ss__bench_algo_boost_bf = {
    .name = "boost-bf",
    .label = "Boost Bellman-Ford",
    .slow = true,
    .available = boost_available,
    .setup = boost_setup,
    .run = boost_bf_run,
    .read = boost_read,
    .device_bytes = boost_device_bytes,
    .teardown = boost_teardown,
};
