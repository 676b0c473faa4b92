#include "solve/solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/delta.h"
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

/* ---- CPU Δ-stepping ----------------------------------------------------- */

/* One context (its thread pool and bins) serves every query of the solver. */
static int cdelta_open(struct ss_solver *s, struct ss_err *err)
{
        struct ss_cpu_delta *ctx;
        int rc = ss_cpu_delta_new(s->g, s->opts.threads, &ctx);
        if (rc)
                return ss_err_set(err, rc, "cpu-delta: cannot start %u threads: %s",
                                  s->opts.threads, ss_strerror(rc));
        ss_cpu_delta_set_delta(ctx, s->opts.delta);
        s->impl = ctx;
        return SS_OK;
}

static void cdelta_close(struct ss_solver *s)
{
        ss_cpu_delta_free(s->impl);
}

static int cdelta_one_to_all(struct ss_solver *s, uint32_t source, ss_dist *dist,
                             struct ss_err *err)
{
        int rc = ss_cpu_delta_one_to_all(s->impl, source, dist, NULL);
        if (rc)
                return ss_err_set(err, rc, "cpu-delta: %s", ss_strerror(rc));
        return SS_OK;
}

static int cdelta_route(struct ss_solver *s, uint32_t source, uint32_t target, ss_dist *d,
                        uint32_t **path, size_t *len, struct ss_err *err)
{
        struct ss_cpu_delta *ctx = s->impl;
        int rc = ss_cpu_delta_p2p(ctx, source, target, path != NULL, NULL);
        if (rc)
                return ss_err_set(err, rc, "cpu-delta: %s", ss_strerror(rc));
        *d = ss_cpu_delta_dist(ctx, target);
        if (path) {
                *path = NULL;
                *len = 0;
                if (*d != SS_DIST_INF) {
                        size_t n = ss_cpu_delta_path(ctx, target, NULL, 0);
                        if (!(*path = malloc(n * sizeof(uint32_t))))
                                return ss_err_set(err, SS_ENOMEM, "out of memory for a path");
                        *len = ss_cpu_delta_path(ctx, target, *path, n);
                }
        }
        return SS_OK;
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
        {"cpu-delta", cdelta_open, cdelta_close, cdelta_one_to_all, cdelta_route},
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

/* Which solver runs an algorithm on an engine (--algorithm, --engine). */
static const struct {
        const char *algorithm, *engine, *solver;
} engine_map[] = {
        {"dijkstra", "cpu", "dijkstra"}, {"astar", "cpu", "astar"}, {"delta", "cpu", "cpu-delta"},
        {"delta", "gpu", "delta"},       {"bf", "gpu", "bf"},
};

const struct ss_solver_type *ss_solver_find_on(const char *algorithm, const char *engine)
{
        for (size_t i = 0; i < sizeof(engine_map) / sizeof(engine_map[0]); i++)
                if (!strcmp(engine_map[i].algorithm, algorithm) &&
                    !strcmp(engine_map[i].engine, engine))
                        return ss_solver_find(engine_map[i].solver);
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
        return ss_solver_open_opts(t, g, NULL, out, err);
}

int ss_solver_open_opts(const struct ss_solver_type *t, const struct ss_graph *g,
                        const struct ss_solver_opts *opts, struct ss_solver **out,
                        struct ss_err *err)
{
        struct ss_solver *s = calloc(1, sizeof(*s));
        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory opening a solver");
        s->type = t;
        s->g = g;
        if (opts)
                s->opts = *opts;
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
