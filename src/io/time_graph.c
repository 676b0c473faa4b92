#include "io/time_graph.h"

#include <stdlib.h>
#include <string.h>

#include "io/load.h"

struct ss__times {
        uint32_t *w;
        uint64_t m;
};

static void ss__times_free(void *p)
{
        struct ss__times *t = p;
        if (t)
                free(t->w);
        free(t);
}

int ss_time_graph_attach(struct ss_graph *g, const char *path, const struct ss_progress *progress,
                         struct ss_err *err)
{
        struct ss_graph *t = ss_graph_load(path, NULL, progress, err);
        if (!t)
                return err ? err->code : SS_EIO;
        int rc = SS_OK;
        if (t->n != g->n || t->m != g->m) {
                rc = ss_err_set(err, SS_EINVAL,
                                "time graph %s has %u nodes and %llu arcs; the graph has %u nodes "
                                "and %llu arcs: they must be the same network",
                                path, t->n, (unsigned long long)t->m, g->n,
                                (unsigned long long)g->m);
                goto out;
        }
        for (uint32_t v = 0; v < g->n; v++) {
                if (t->row[v + 1] != g->row[v + 1]) {
                        rc =
                            ss_err_set(err, SS_EINVAL,
                                       "time graph %s: node %u has %llu arcs out, in the graph "
                                       "%llu: they must be the same network",
                                       path, v + 1, (unsigned long long)(t->row[v + 1] - t->row[v]),
                                       (unsigned long long)(g->row[v + 1] - g->row[v]));
                        goto out;
                }
                for (uint64_t a = g->row[v]; a < g->row[v + 1]; a++)
                        if (t->col[a] != g->col[a]) {
                                rc = ss_err_set(err, SS_EINVAL,
                                                "time graph %s: arc %llu of node %u goes to %u, "
                                                "in the graph to %u: the arcs must be listed in "
                                                "the same order",
                                                path, (unsigned long long)(a - g->row[v] + 1),
                                                v + 1, t->col[a] + 1, g->col[a] + 1);
                                goto out;
                        }
        }
        struct ss__times *tw = calloc(1, sizeof(*tw));
        if (!tw || !(tw->w = malloc(g->m ? g->m * sizeof(uint32_t) : 1))) {
                free(tw);
                rc = ss_err_set(err, SS_ENOMEM, "no memory for the travel times of %llu arcs",
                                (unsigned long long)g->m);
                goto out;
        }
        memcpy(tw->w, t->w, g->m * sizeof(uint32_t));
        tw->m = g->m;
        ss_graph_attach(g, SS_GRAPH_EXT_TIME, tw, ss__times_free);
out:
        ss_graph_unref(t);
        return rc;
}

const uint32_t *ss_time_weights_of(const struct ss_graph *g)
{
        const struct ss__times *t = g->ext[SS_GRAPH_EXT_TIME].data;
        return t ? t->w : NULL;
}

uint64_t ss_time_weights_bytes(const struct ss_graph *g)
{
        const struct ss__times *t = g->ext[SS_GRAPH_EXT_TIME].data;
        return t ? t->m * sizeof(uint32_t) : 0;
}
