/* The CCH row: one-to-all queries as an upward search and one downward
 * sweep over the supergraph (PHAST on a CCH). Setup takes the CCH of a
 * prepared snapshot or builds one, and customizes it, on every CPU; the
 * note gives each step's time. A CCH is made for point-to-point queries:
 * ssspd-cch-bench times those against Dijkstra. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cch/cch.h"
#include "core/cancel.h"

struct cch_state {
        struct ss_cch *own;
        const struct ss_cch *cch;
        struct ss_cch_metric *metric;
        struct ss_cch_query *q;
        ss_dist *dist;
        uint32_t n;
        struct ss_cch_stats st;
        double customize_s;
};

static bool cch_available(char *why, size_t len)
{
        (void)why;
        (void)len;
        return true;
}

static void cch_teardown(void *state)
{
        struct cch_state *s = state;
        if (!s)
                return;
        ss_cch_query_free(s->q);
        ss_cch_metric_unref(s->metric);
        ss_cch_free(s->own);
        free(s->dist);
        free(s);
}

static int cch_setup(void **state, const struct ss_graph *g, struct ss_err *err)
{
        struct cch_state *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the CCH state");
        s->n = g->n;
        s->cch = ss_cch_of(g);
        int rc = SS_OK;
        if (!s->cch) {
                struct ss_cch_options o;
                ss_cch_options_default(&o);
                rc = ss_cch_build(g, &o, &s->own, &s->st, err);
                s->cch = s->own;
        }
        if (rc == SS_OK) {
                uint64_t t0 = ss_now_ns();
                rc = ss_cch_customize_new(s->cch, g, NULL, 0, &s->metric, err);
                s->customize_s = (double)(ss_now_ns() - t0) / 1e9;
        }
        if (rc == SS_OK && (!(s->q = ss_cch_query_new(s->cch)) ||
                            !(s->dist = malloc(((size_t)g->n + 1) * sizeof(ss_dist)))))
                rc = ss_err_set(err, SS_ENOMEM, "out of memory for a CCH query workspace");
        if (rc != SS_OK) {
                cch_teardown(s);
                return rc;
        }
        *state = s;
        return SS_OK;
}

static int cch_run(void *state, uint32_t source, uint64_t deadline_ns, struct ss_err *err)
{
        struct cch_state *s = state;
        (void)deadline_ns;
        return ss_cch_one_to_all(s->q, s->metric, source, s->dist, err);
}

static void cch_read(void *state, ss_dist *out)
{
        struct cch_state *s = state;
        for (uint32_t v = 0; v < s->n; v++)
                out[v] = s->dist[v];
}

static void cch_describe(void *state, char *note, size_t len)
{
        struct cch_state *s = state;
        if (s->own)
                snprintf(
                    note, len, "order %.2f s, contraction %.2f s, customization %.3f s; %u edges",
                    s->st.order_s, s->st.contract_s + s->st.derive_s, s->customize_s, s->cch->arcs);
        else
                snprintf(note, len, "CCH from the snapshot; customization %.3f s; %u edges",
                         s->customize_s, s->cch->arcs);
}

static uint64_t cch_device_bytes(void *state)
{
        (void)state;
        return 0;
}

const struct ss__bench_algo ss__bench_algo_cch = {
    .name = "cch",
    .label = "CCH sweep (CPU)",
    .slow = false,
    .available = cch_available,
    .setup = cch_setup,
    .run = cch_run,
    .read = cch_read,
    .describe = cch_describe,
    .device_bytes = cch_device_bytes,
    .teardown = cch_teardown,
};
