#include "solve/solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cch/cch.h"
#include "cpu/dijkstra.h"
#include "ss_config.h"
#if SS_HAVE_CUDA
#include "gpu/gpu.h"
#endif

/* ---- CPU Dijkstra ------------------------------------------------------- */

static int dij_open(struct ss_solver *s, struct ss_err *err)
{
        if (!(s->impl = ss_dijkstra_ws_new(s->g->n)))
                return ss_err_set(err, SS_ENOMEM, "out of memory for a Dijkstra workspace");
        return SS_OK;
}

static void dij_close(struct ss_solver *s)
{
        ss_dijkstra_ws_free(s->impl);
}

static int dij_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err)
{
        struct ss_dijkstra_ws *ws = s->impl;
        int rc = ss_dijkstra_run(s->g, ws, source, SS_NO_NODE, NULL);
        if (rc)
                return ss_err_set(err, rc, "dijkstra: %s", ss_strerror(rc));
        for (uint32_t v = 0; v < s->g->n; v++)
                dist[v] = SS_DIST_INF;
        const uint32_t *set = ss_dijkstra_settled(ws);
        for (size_t i = 0, k = ss_dijkstra_settled_count(ws); i < k; i++)
                dist[set[i]] = ss_dijkstra_dist(ws, set[i]);
        return SS_OK;
}

static int cpu_route(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                     uint32_t target, ss_dist *d, uint32_t **path, size_t *len, int astar,
                     struct ss_err *err)
{
        int rc = astar ? ss_astar_run(g, ws, source, target, NULL)
                       : ss_dijkstra_run(g, ws, source, target, NULL);
        if (rc)
                return ss_err_set(err, rc, "%s: %s", astar ? "astar" : "dijkstra", ss_strerror(rc));
        *d = ss_dijkstra_dist(ws, target);
        if (path) {
                *path = NULL;
                *len = 0;
                if (*d != SS_DIST_INF) {
                        size_t n = ss_dijkstra_path(ws, target, NULL, 0);
                        if (!(*path = malloc(n * sizeof(uint32_t))))
                                return ss_err_set(err, SS_ENOMEM, "out of memory for a path");
                        *len = ss_dijkstra_path(ws, target, *path, n);
                }
        }
        return SS_OK;
}

static int dij_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                     uint32_t **path, size_t *len, struct ss_err *err)
{
        return cpu_route(s->g, s->impl, source, target, d, path, len, 0, err);
}

/* A* needs a target; its one-to-all is Dijkstra's. */
static int astar_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                       uint32_t **path, size_t *len, struct ss_err *err)
{
        return cpu_route(s->g, s->impl, source, target, d, path, len, 1, err);
}

/* ---- CCH ----------------------------------------------------------------- */

/* The graph's CCH when it came from a prepared snapshot, else one built here
 * (seconds for a city, minutes for a continent), customized once for the
 * graph's weights on every CPU. */
struct cch_solver {
        struct ss_cch *own;
        struct ss_cch_metric *metric;
        struct ss_cch_query *q;
};

static void cch_close(struct ss_solver *s)
{
        struct cch_solver *cs = s->impl;
        ss_cch_query_free(cs->q);
        ss_cch_metric_unref(cs->metric);
        ss_cch_free(cs->own);
        free(cs);
}

static int cch_open(struct ss_solver *s, struct ss_err *err)
{
        struct cch_solver *cs = calloc(1, sizeof(*cs));
        if (!cs)
                return ss_err_set(err, SS_ENOMEM, "out of memory opening the CCH solver");
        s->impl = cs;
        const struct ss_cch *c = ss_cch_of(s->g);
        int rc = SS_OK;
        if (!c) {
                struct ss_cch_options o;
                ss_cch_options_default(&o);
                rc = ss_cch_build(s->g, &o, &cs->own, NULL, err);
                c = cs->own;
        }
        if (rc == SS_OK)
                rc = ss_cch_customize_new(c, s->g, NULL, 0, &cs->metric, err);
        if (rc == SS_OK && !(cs->q = ss_cch_query_new(c)))
                rc = ss_err_set(err, SS_ENOMEM, "out of memory for a CCH query workspace");
        if (rc != SS_OK)
                cch_close(s);
        return rc;
}

static int cch_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err)
{
        struct cch_solver *cs = s->impl;
        return ss_cch_one_to_all(cs->q, cs->metric, source, dist, err);
}

static int cch_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                     uint32_t **path, size_t *len, struct ss_err *err)
{
        struct cch_solver *cs = s->impl;
        return ss_cch_route(cs->q, cs->metric, source, target, d, path, len, err);
}

#if SS_HAVE_CUDA
/* ---- GPU algorithms ----------------------------------------------------- */

/* One device, one stream; a Dijkstra workspace only for paths the device
 * cannot walk (zero-weight cycles, see gpu.h). */
struct gpu_solver {
        struct ss_gpu *gpu;
        enum ss_gpu_algo algo;
        struct ss_dijkstra_ws *ws;
};

static int gpu_open(struct ss_solver *s, enum ss_gpu_algo algo, struct ss_err *err)
{
        struct ss_gpu_config cfg;
        struct gpu_solver *gs = calloc(1, sizeof(*gs));
        if (!gs)
                return ss_err_set(err, SS_ENOMEM, "out of memory opening the GPU solver");
        ss_gpu_config_default(&cfg);
        cfg.streams = 1;
        int rc = ss_gpu_open(s->g, &cfg, &gs->gpu, err);
        if (rc) {
                free(gs);
                return rc;
        }
        gs->algo = algo;
        s->impl = gs;
        return SS_OK;
}

static int delta_open(struct ss_solver *s, struct ss_err *err)
{
        return gpu_open(s, SS_GPU_DELTA, err);
}

static int bf_open(struct ss_solver *s, struct ss_err *err)
{
        return gpu_open(s, SS_GPU_BF, err);
}

static void gpu_close(struct ss_solver *s)
{
        struct gpu_solver *gs = s->impl;
        ss_gpu_close(gs->gpu);
        ss_dijkstra_ws_free(gs->ws);
        free(gs);
}

static int gpu_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err)
{
        struct gpu_solver *gs = s->impl;
        struct ss_gpu_query q = {.algo = gs->algo, .source = source, .target = SS_NO_NODE, .all = dist};
        struct ss_gpu_result r = {0};
        return ss_gpu_run(gs->gpu, 0, &q, &r, err);
}

static int gpu_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                     uint32_t **path, size_t *len, struct ss_err *err)
{
        struct gpu_solver *gs = s->impl;
        struct ss_gpu_query q = {
            .algo = gs->algo, .source = source, .target = target, .want_path = path != NULL};
        struct ss_gpu_result r = {0};
        int rc = ss_gpu_run(gs->gpu, 0, &q, &r, err);
        if (rc)
                return rc;
        *d = r.dist;
        if (!path)
                return SS_OK;
        if (!r.path_needs_cpu) {
                *path = r.path;
                *len = r.path_len;
                return SS_OK;
        }
        /* The device found a zero-weight cycle on its predecessor walk: the
         * distance is right, the path comes from the CPU. */
        if (!gs->ws && !(gs->ws = ss_dijkstra_ws_new(s->g->n)))
                return ss_err_set(err, SS_ENOMEM, "out of memory for a Dijkstra workspace");
        return cpu_route(s->g, gs->ws, source, target, d, path, len, 0, err);
}
#endif

static const struct ss_solver_type solvers[] = {
        {"dijkstra", dij_open, dij_close, dij_one_to_all, dij_route},
        {"astar", dij_open, dij_close, dij_one_to_all, astar_route},
        {"cch", cch_open, cch_close, cch_one_to_all, cch_route},
#if SS_HAVE_CUDA
        {"delta", delta_open, gpu_close, gpu_one_to_all, gpu_route},
        {"bf", bf_open, gpu_close, gpu_one_to_all, gpu_route},
#endif
};

/* ---- table and wrappers ------------------------------------------------- */

const struct ss_solver_type *ss_solver_find(const char *name)
{
        for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]); i++)
                if (!strcmp(solvers[i].name, name))
                        return &solvers[i];
        return NULL;
}

void ss_solver_names(char *buf, size_t len)
{
        size_t at = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]) && at < len; i++)
                at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", solvers[i].name);
}

int ss_solver_open(const struct ss_solver_type *t, const struct ss_graph *g, struct ss_solver **out,
                   struct ss_err *err)
{
        struct ss_solver *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory opening a solver");
        s->type = t;
        s->g = g;
        int rc = t->open(s, err);
        if (rc) {
                free(s);
                return rc;
        }
        *out = s;
        return SS_OK;
}

void ss_solver_close(struct ss_solver *s)
{
        if (!s)
                return;
        s->type->close(s);
        free(s->scratch);
        free(s);
}

int ss_solver_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                    uint32_t **path, size_t *len, struct ss_err *err)
{
        return s->type->route(s, source, target, d, path, len, err);
}

int ss_solver_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist, struct ss_err *err)
{
        return s->type->one_to_all(s, source, dist, err);
}

int ss_solver_checksum(struct ss_solver *s, uint32_t source, uint64_t *sum, struct ss_err *err)
{
        const uint64_t mask = (UINT64_C(1) << 62) - 1;
        if (!s->scratch && !(s->scratch = malloc((size_t)s->g->n * sizeof(ss_dist))))
                return ss_err_set(err, SS_ENOMEM, "out of memory for %u distances", s->g->n);
        int rc = s->type->one_to_all(s, source, s->scratch, err);
        if (rc)
                return rc;
        uint64_t acc = 0;
        for (uint32_t v = 0; v < s->g->n; v++)
                if (s->scratch[v] != SS_DIST_INF)
                        acc = (acc + (s->scratch[v] & mask)) & mask;
        *sum = acc;
        return SS_OK;
}
