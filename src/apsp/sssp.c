/* All pairs by n one-to-all searches: each thread owns a Dijkstra workspace
 * and takes the next source from a shared counter, writing that source's
 * row. On sparse graphs (road networks) this beats the Floyd-Warshall by
 * orders of magnitude: n * (m log n) against n^3.
 *
 * The successor of (s, t) is the first node after s on the search tree's
 * path to t. The settled order puts every node after its predecessor, so one
 * pass over it fills the row: first(v) = v when pred(v) = s, else
 * first(pred(v)).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "apsp/internal.h"
#include "cpu/dijkstra.h"

struct ss__sssp {
        const struct ss_graph *g;
        struct ss_apsp *a;
        const struct ss_apsp_options *o;
        atomic_uint next;
        atomic_int rc; /* first failure */
};

static void ss__sssp_row(struct ss__sssp *x, struct ss_dijkstra_ws *ws, uint32_t s)
{
        struct ss_apsp *a = x->a;
        const uint64_t p = a->pitch, base = (uint64_t)s * p;
        uint32_t *sr = a->succ ? a->succ + base : NULL;
        const size_t count = ss_dijkstra_settled_count(ws);
        const uint32_t *order = ss_dijkstra_settled(ws);
        if (a->width == 4) {
                uint32_t *r = (uint32_t *)a->dist + base;
                for (uint64_t j = 0; j < p; j++)
                        r[j] = (uint32_t)a->inf;
                for (size_t i = 0; i < count; i++)
                        r[order[i]] = (uint32_t)(ss_dijkstra_dist(ws, order[i]) << a->shift);
        } else {
                uint64_t *r = (uint64_t *)a->dist + base;
                for (uint64_t j = 0; j < p; j++)
                        r[j] = a->inf;
                for (size_t i = 0; i < count; i++)
                        r[order[i]] = ss_dijkstra_dist(ws, order[i]) << a->shift;
        }
        if (!sr)
                return;
        for (uint64_t j = 0; j < p; j++)
                sr[j] = SS_NO_NODE;
        for (size_t i = 0; i < count; i++) {
                const uint32_t v = order[i], u = ss_dijkstra_pred(ws, v);
                sr[v] = v == s ? s : u == s ? v : sr[u];
        }
}

static void ss__sssp_worker(void *arg, unsigned tid, unsigned n)
{
        struct ss__sssp *x = arg;
        (void)n;
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(x->g->n);
        if (!ws) {
                int zero = 0;
                atomic_compare_exchange_strong(&x->rc, &zero, SS_ENOMEM);
                return;
        }
        for (;;) {
                if (atomic_load_explicit(&x->rc, memory_order_relaxed))
                        break;
                const uint32_t s = atomic_fetch_add(&x->next, 1);
                if (s >= x->g->n)
                        break;
                /* The search polls only every few thousand nodes: check here
                 * too, so that small graphs stop as well. */
                if (ss_cancelled(x->o->cancel)) {
                        int zero = 0;
                        atomic_compare_exchange_strong(&x->rc, &zero, SS_ETIMEDOUT);
                        break;
                }
                const int rc = ss_dijkstra_run(x->g, ws, s, SS_NO_NODE, x->o->cancel);
                if (rc) {
                        int zero = 0;
                        atomic_compare_exchange_strong(&x->rc, &zero, rc);
                        break;
                }
                ss__sssp_row(x, ws, s);
                if (tid == 0)
                        ss__apsp_progress(x->o, (double)s / x->g->n);
        }
        ss_dijkstra_ws_free(ws);
}

int ss__apsp_sssp(const struct ss_graph *g, struct ss_apsp *a, const struct ss_apsp_options *o,
                  unsigned threads, struct ss_err *err)
{
        struct ss__sssp x = {.g = g, .a = a, .o = o};
        atomic_init(&x.next, 0);
        atomic_init(&x.rc, 0);
        if (threads > g->n)
                threads = g->n;
        ss__apsp_parallel(threads, NULL, ss__sssp_worker, &x);
        const int rc = atomic_load(&x.rc);
        if (rc == SS_ETIMEDOUT)
                return ss_err_set(err, rc, "the all-pairs computation was cancelled");
        if (rc)
                return ss_err_set(err, rc, "a Dijkstra search failed: %s", ss_strerror(rc));
        return SS_OK;
}
