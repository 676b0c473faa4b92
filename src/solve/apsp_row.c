/* The CPU backend's apsp row: answers read from the graph's all-pairs
 * matrix (apsp/apsp.h), which the engine computes in the background for
 * small graphs. A route is a lookup and a walk along the successors; a
 * matrix or one-to-all is a copy of rows. Until the matrix is there the row
 * answers with Dijkstra and says so in the task's `ran`. */
#include <stdlib.h>

#include "apsp/apsp.h"
#include "core/cancel.h"
#include "solve/cpu_internal.h"

int ss__cpu_apsp_task(const struct ss_graph *g, struct ss_task *t, struct ss_err *err)
{
        const struct ss_apsp *a = ss_apsp_of(g);
        if (!a || a->n != g->n || (t->kind == SS_TASK_ROUTE && t->path && !a->succ))
                return SS__ROW_NOT_READY;
        for (size_t i = 0; i < t->nsources; i++) {
                const uint32_t s = t->sources[i];
                t->searches++;
                switch (t->kind) {
                case SS_TASK_ROUTE: {
                        t->dist[i] = ss_apsp_dist(a, s, t->targets[i]);
                        if (!t->path)
                                break;
                        int rc =
                            ss_apsp_path(a, s, t->targets[i], &t->path[i], &t->path_len[i], err);
                        if (rc != SS_OK)
                                return rc;
                        break;
                }
                case SS_TASK_TARGETS:
                        for (size_t j = 0; j < t->ntargets; j++)
                                t->dist[i * t->ntargets + j] = ss_apsp_dist(a, s, t->targets[j]);
                        break;
                case SS_TASK_ONE_TO_ALL:
                        for (uint32_t v = 0; v < g->n; v++)
                                t->dist[i * (size_t)g->n + v] = ss_apsp_dist(a, s, v);
                        break;
                }
                if (ss_cancelled(t->cancel))
                        return ss_err_set(err, SS_ETIMEDOUT, "APSP: deadline passed or cancelled");
        }
        return SS_OK;
}
