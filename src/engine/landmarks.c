/* Landmark tables from the CCH's sweeps, where no GPU makes them.
 *
 * A landmark needs two tables: the distances from it (a one-to-all) and
 * towards it (an all-to-one). The CPU builder (cpu/landmarks.c) runs each
 * as a Dijkstra on one thread, the 2k of them spread over the cores: on a
 * USA-size graph a search takes 4-5 s, and 16 landmarks took 93 s on 2
 * cores. With a customized CCH each table is one sweep on every core
 * (cch/sweep.c), a tenth of a second on 16 cores there. */
#include <stdatomic.h>
#include <stdlib.h>

#include "cch/cch.h"
#include "core/log.h"
#include "core/team.h"
#include "engine/internal.h"

/* One sweep's distances into column i of a table (v * k + i), on every
 * core: a strided write to every cache line of the table, which one
 * thread made as slow as the sweep. */
struct column {
        const ss_dist *d;
        uint32_t *table;
        uint32_t n;
        unsigned k, i;
        atomic_uint bad; /* a node unreachable or 2^32 away, + 1; 0 when none */
};

static void column_part(void *arg, unsigned t, unsigned nt)
{
        struct column *col = arg;
        uint64_t lo, hi;
        ss_team_share(col->n, t, nt, &lo, &hi);
        for (uint64_t v = lo; v < hi; v++) {
                if (col->d[v] >= UINT32_MAX) { /* unreachable (INF) or too far */
                        atomic_store_explicit(&col->bad, (unsigned)v + 1u, memory_order_relaxed);
                        return;
                }
                col->table[v * col->k + col->i] = (uint32_t)col->d[v];
        }
}

int ss__cch_landmarks(const struct ss_graph *g, unsigned threads, const uint32_t *nodes, unsigned k,
                      uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err)
{
        const struct ss_cch *c = ss_cch_of(g);
        const struct ss_cch_metric *m = ss_cch_metric_of(g);
        if (!c || !m)
                return ss_err_set(err, SS_EINVAL, "no customized CCH");
        struct ss_cch_sweeper *sw = ss_cch_sweeper_new(c, threads);
        struct ss_cch_query *q = ss_cch_query_new(c);
        ss_dist *d = malloc((size_t)g->n * sizeof(ss_dist));
        int rc = SS_OK;
        if (!sw || !q || !d) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory for the CCH's landmark sweeps");
                goto out;
        }
        struct ss_log_progress lp;
        ss_log_progress_begin(&lp, "graph", "%u landmarks (%u CCH sweeps)", k, 2 * k);
        for (unsigned t = 0; t < 2 * k && rc == SS_OK; t++) {
                const unsigned i = t / 2, towards = t & 1;
                uint32_t *table = towards ? to : from;
                rc = towards ? ss_cch_all_to_one_threads(sw, q, m, nodes[i], d, err)
                             : ss_cch_one_to_all_threads(sw, q, m, nodes[i], d, err);
                if (rc != SS_OK)
                        break;
                struct column col = {.d = d, .table = table, .n = g->n, .k = k, .i = i};
                atomic_init(&col.bad, 0);
                ss_team_run(ss_team_threads(threads), NULL, column_part, &col);
                const unsigned bad = atomic_load(&col.bad);
                if (bad) {
                        *bad_node = bad - 1;
                        rc = ss_err_set(err, SS_EINVAL,
                                        "node %u and landmark %u are not connected both ways "
                                        "within 2^32",
                                        bad, nodes[i] + 1);
                }
                ss_log_progress(&lp, (double)(t + 1) / (2.0 * k));
        }
        ss_log_progress_end(&lp);
out:
        free(d);
        ss_cch_query_free(q);
        ss_cch_sweeper_free(sw);
        return rc;
}
