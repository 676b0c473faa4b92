/* Landmark tables from the CCH's sweeps, where no GPU makes them.
 *
 * A landmark needs two tables: the distances from it (a one-to-all) and
 * towards it (an all-to-one). The CPU builder (cpu/landmarks.c) runs each
 * as a Dijkstra on one thread, the 2k of them spread over the cores: on a
 * USA-size graph a search takes 4-5 s, and 16 landmarks took 93 s on 2
 * cores. With a customized CCH each table is one sweep on every core
 * (cch/sweep.c), a tenth of a second on 16 cores there. */
#include <stdlib.h>

#include "cch/cch.h"
#include "core/log.h"
#include "engine/internal.h"

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
                for (uint32_t v = 0; rc == SS_OK && v < g->n; v++) {
                        if (d[v] >= UINT32_MAX) { /* unreachable (INF) or too far */
                                *bad_node = v;
                                rc = ss_err_set(err, SS_EINVAL,
                                                "node %u and landmark %u are not connected both "
                                                "ways within 2^32",
                                                v + 1, nodes[i] + 1);
                                break;
                        }
                        table[(size_t)v * k + i] = (uint32_t)d[v];
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
