/* The CPU backend: Dijkstra and A*, one workspace per lane (thread). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/astar.h"
#include "cpu/dijkstra.h"
#include "solve/backend.h"

struct ss__cpu {
        struct ss_dijkstra_ws **ws; /* one per lane */
};

static int ss__cpu_open(struct ss_backend *b, const struct ss_backend_config *cfg,
                        struct ss_err *err)
{
        (void)cfg;
        struct ss__cpu *c = calloc(1, sizeof(*c));
        if (!c || !(c->ws = calloc(b->lanes, sizeof(*c->ws)))) {
                free(c);
                return ss_err_set(err, SS_ENOMEM, "no memory for the CPU backend");
        }
        b->impl = c;
        for (unsigned i = 0; i < b->lanes; i++) {
                if (!(c->ws[i] = ss_dijkstra_ws_new(b->g->n))) {
                        b->ops->close(b);
                        return ss_err_set(err, SS_ENOMEM,
                                          "no memory for a Dijkstra workspace of %u nodes",
                                          b->g->n);
                }
        }
        return SS_OK;
}

static void ss__cpu_close(struct ss_backend *b)
{
        struct ss__cpu *c = b->impl;
        if (!c)
                return;
        for (unsigned i = 0; i < b->lanes; i++)
                ss_dijkstra_ws_free(c->ws[i]);
        free(c->ws);
        free(c);
        b->impl = NULL;
}

int ss__cpu_route(const struct ss_graph *g, struct ss_dijkstra_ws *ws, bool astar,
                  struct ss_task *t, size_t i, struct ss_err *err)
{
        const uint32_t s = t->sources[i], to = t->targets[i];
        int rc = astar ? ss_astar_run(g, ws, s, to, t->cancel)
                       : ss_dijkstra_run(g, ws, s, to, t->cancel);
        if (rc != SS_OK)
                return ss_err_set(err, rc, "%s: %s", astar ? "A*" : "Dijkstra", ss_strerror(rc));
        t->dist[i] = ss_dijkstra_dist(ws, to);
        if (!t->path || t->dist[i] == SS_DIST_INF)
                return SS_OK;
        size_t len = ss_dijkstra_path(ws, to, NULL, 0);
        uint32_t *p = malloc(len * sizeof(uint32_t));
        if (!p)
                return ss_err_set(err, SS_ENOMEM, "no memory for a path of %zu nodes", len);
        if (ss_dijkstra_path(ws, to, p, len) != len) {
                free(p);
                return ss_err_set(err, SS_EINTERNAL, "a path changed length while copied");
        }
        t->path[i] = p;
        t->path_len[i] = len;
        return SS_OK;
}

int ss__cpu_task(const struct ss_graph *g, struct ss_dijkstra_ws *ws, bool astar,
                 struct ss_task *t, struct ss_err *err)
{
        const uint32_t n = g->n;
        int rc = SS_OK;
        for (size_t i = 0; i < t->nsources && rc == SS_OK; i++) {
                const uint32_t s = t->sources[i];
                t->searches++;
                switch (t->kind) {
                case SS_TASK_ROUTE:
                        rc = ss__cpu_route(g, ws, astar, t, i, err);
                        break;
                case SS_TASK_TARGETS: {
                        ss_dist *row = t->dist + i * t->ntargets;
                        rc = ss_dijkstra_run_targets(g, ws, s, t->targets, t->ntargets, t->cancel);
                        for (size_t j = 0; rc == SS_OK && j < t->ntargets; j++)
                                row[j] = ss_dijkstra_dist(ws, t->targets[j]);
                        break;
                }
                case SS_TASK_ONE_TO_ALL: {
                        ss_dist *row = t->dist + i * (size_t)n;
                        rc = ss_dijkstra_run(g, ws, s, SS_NO_NODE, t->cancel);
                        if (rc != SS_OK)
                                break;
                        /* SS_DIST_INF is all ones: one memset marks every node
                         * unreached, then only the settled nodes are written. */
                        memset(row, 0xff, (size_t)n * sizeof(ss_dist));
                        const uint32_t *set = ss_dijkstra_settled(ws);
                        for (size_t k = 0, c = ss_dijkstra_settled_count(ws); k < c; k++)
                                row[set[k]] = ss_dijkstra_dist(ws, set[k]);
                        break;
                }
                }
                if (rc != SS_OK && err && err->code == SS_OK)
                        ss_err_set(err, rc, "Dijkstra: %s", ss_strerror(rc));
        }
        return rc;
}

static int ss__cpu_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                       struct ss_task *t, struct ss_err *err)
{
        struct ss__cpu *c = b->impl;
        /* A* answers routes; for everything else it is Dijkstra's row. */
        const bool astar = !strcmp(r->name, "astar") && t->kind == SS_TASK_ROUTE;
        if (!strcmp(r->name, "astar") && !astar)
                t->ran = ss_solver_find("dijkstra", SS_DEVICE_CPU);
        ss_err_clear(err);
        return ss__cpu_task(b->g, c->ws[lane], astar, t, err);
}

static void ss__cpu_describe(const struct ss_backend *b, char *buf, size_t len)
{
        snprintf(buf, len, "CPU, %u thread%s", b->lanes, b->lanes == 1 ? "" : "s");
}

const struct ss_backend_ops ss__cpu_backend = {
    .open = ss__cpu_open,
    .close = ss__cpu_close,
    .run = ss__cpu_run,
    .describe = ss__cpu_describe,
};
