/* The CPU backend: Dijkstra, A*, the parallel Δ-stepping and the CCH, one
 * workspace per lane (thread). A lane's Δ-stepping context (its own pool of
 * `threads` threads) is made on its first Δ-stepping task; the CCH's state
 * lives in solve/cch.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/astar.h"
#include "cpu/delta.h"
#include "cpu/dijkstra.h"
#include "solve/backend.h"
#include "solve/cpu_internal.h"

struct ss__cpu {
        struct ss_dijkstra_ws **ws;  /* one per lane */
        struct ss_cpu_delta **delta; /* one per lane, made when first needed */
        struct ss__cpu_cch *cch;
        unsigned threads;
        uint64_t delta_width;
};

static int ss__cpu_open(struct ss_backend *b, const struct ss_backend_config *cfg,
                        struct ss_err *err)
{
        struct ss__cpu *c = calloc(1, sizeof(*c));
        if (!c || !(c->ws = calloc(b->lanes, sizeof(*c->ws))) ||
            !(c->delta = calloc(b->lanes, sizeof(*c->delta)))) {
                if (c)
                        free(c->ws);
                free(c);
                return ss_err_set(err, SS_ENOMEM, "no memory for the CPU backend");
        }
        c->threads = cfg->threads;
        c->delta_width = cfg->cpu_delta;
        b->impl = c;
        if (!(c->cch = ss__cpu_cch_new(b->lanes, cfg->cch_build, cfg->threads))) {
                b->ops->close(b);
                return ss_err_set(err, SS_ENOMEM, "no memory for the CPU backend");
        }
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
        for (unsigned i = 0; i < b->lanes; i++) {
                ss_dijkstra_ws_free(c->ws[i]);
                ss_cpu_delta_free(c->delta[i]);
        }
        ss__cpu_cch_free(c->cch);
        free(c->ws);
        free(c->delta);
        free(c);
        b->impl = NULL;
}

int ss__cpu_path(const struct ss_graph *g, struct ss_dijkstra_ws *ws, struct ss_task *t, size_t i,
                 struct ss_err *err)
{
        if (!ws)
                return ss_err_set(err, SS_ENOMEM, "no memory for a Dijkstra workspace");
        const ss_dist d = t->dist[i];
        int rc = ss__cpu_route(g, ws, false, t, i, err);
        if (rc == SS_OK && t->dist[i] != d)
                return ss_err_set(err, SS_EINTERNAL,
                                  "the GPU and the CPU disagree on a route's distance");
        return rc;
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

int ss__cpu_task(const struct ss_graph *g, struct ss_dijkstra_ws *ws, bool astar, struct ss_task *t,
                 struct ss_err *err)
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
                        rc = t->bounded ? ss_dijkstra_run_within(g, ws, s, t->bound, t->cancel)
                                        : ss_dijkstra_run(g, ws, s, SS_NO_NODE, t->cancel);
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

/* The parallel Δ-stepping's answer to t. */
static int ss__delta_task(const struct ss_graph *g, struct ss_cpu_delta *x, struct ss_task *t,
                          struct ss_err *err)
{
        int rc = SS_OK;
        for (size_t i = 0; i < t->nsources && rc == SS_OK; i++) {
                const uint32_t s = t->sources[i];
                t->searches++;
                if (t->kind == SS_TASK_ONE_TO_ALL) {
                        rc = ss_cpu_delta_one_to_all(x, s, t->dist + i * (size_t)g->n, t->cancel);
                } else if (t->kind == SS_TASK_TARGETS) {
                        rc = ss_cpu_delta_targets(x, s, t->targets, t->ntargets,
                                                  t->dist + i * t->ntargets, t->cancel);
                } else {
                        const uint32_t to = t->targets[i];
                        rc = ss_cpu_delta_p2p(x, s, to, t->path != NULL, t->cancel);
                        if (rc != SS_OK)
                                break;
                        t->dist[i] = ss_cpu_delta_dist(x, to);
                        if (!t->path || t->dist[i] == SS_DIST_INF)
                                continue;
                        const size_t len = ss_cpu_delta_path(x, to, NULL, 0);
                        uint32_t *p = malloc(len * sizeof(uint32_t));
                        if (!p)
                                return ss_err_set(err, SS_ENOMEM,
                                                  "no memory for a path of %zu nodes", len);
                        t->path_len[i] = ss_cpu_delta_path(x, to, p, len);
                        t->path[i] = p;
                }
        }
        if (rc != SS_OK)
                return ss_err_set(err, rc, "CPU Δ-stepping: %s", ss_strerror(rc));
        return SS_OK;
}

static int ss__cpu_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                       struct ss_task *t, struct ss_err *err)
{
        struct ss__cpu *c = b->impl;
        if (r->impl == 2) {
                if (!c->delta[lane]) {
                        int rc = ss_cpu_delta_new(b->g, c->threads, &c->delta[lane]);
                        if (rc != SS_OK)
                                return ss_err_set(err, rc,
                                                  "CPU Δ-stepping: cannot start %u threads: %s",
                                                  c->threads, ss_strerror(rc));
                        ss_cpu_delta_set_delta(c->delta[lane], c->delta_width);
                }
                return ss__delta_task(b->g, c->delta[lane], t, err);
        }
        if (r->impl == 3 || r->impl == 4) {
                int rc = r->impl == 3 ? ss__cpu_cch_task(c->cch, b->g, lane, t, err)
                                      : ss__cpu_apsp_task(b->g, t, err);
                if (rc != SS__ROW_NOT_READY)
                        return rc;
                t->ran = ss_solver_find("dijkstra", SS_DEVICE_CPU);
        }
        /* A* answers routes; for everything else it is Dijkstra's row. */
        const bool astar = !strcmp(r->name, "astar") && t->kind == SS_TASK_ROUTE;
        if (!strcmp(r->name, "astar") && !astar)
                t->ran = ss_solver_find("dijkstra", SS_DEVICE_CPU);
        ss_err_clear(err);
        return ss__cpu_task(b->g, c->ws[lane], astar, t, err);
}

/* The workspaces are sized by the node count alone; the Δ-stepping
 * contexts hold the graph (and its Δ), so they are made again on demand. */
static int ss__cpu_rebind(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                          size_t k, struct ss_err *err)
{
        (void)changed;
        (void)k;
        (void)err;
        struct ss__cpu *c = b->impl;
        for (unsigned i = 0; i < b->lanes; i++) {
                ss_cpu_delta_free(c->delta[i]);
                c->delta[i] = NULL;
        }
        ss__cpu_cch_rebind(c->cch, g);
        return SS_OK;
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
    .rebind = ss__cpu_rebind,
};
