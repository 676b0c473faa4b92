/* The solver table and the calls that dispatch to a row's backend. */
#include "solve/solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve/backend.h"
#include "ss_config.h"
#if SS_HAVE_CUDA
#include "gpu/gpu.h"
_Static_assert(SS_GPU_DELTA == 0 && SS_GPU_BF == 1 && SS_GPU_BF_ELL == 2 && SS_GPU_BF_QUEUE == 3 &&
                   SS_GPU_DIJKSTRA == 4 && SS_GPU_BF_EDGELIST == 5,
               "GPU rows name kernels by number");
#endif

/* Every algorithm, CPU rows first. A new algorithm is one row here (and on
 * the GPU a launcher row in gpu/gpu.c and its kernel file). */
static const struct ss_solver ss__rows[] = {
    {"dijkstra", "Dijkstra", SS_DEVICE_CPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 0,
     "Dijkstra with a radix heap; the reference every other row is checked against"},
    {"astar", "A*", SS_DEVICE_CPU, SS_CAN_ROUTE, 1,
     "A* over the coordinate and landmark bounds (routes; Dijkstra for the rest)"},
    {"delta", "Δ-stepping", SS_DEVICE_CPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 2,
     "parallel Δ-stepping on the CPU: thread-local bins, bucket fusion, one barrier a round"},
    {"cch", "CCH", SS_DEVICE_CPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 3,
     "customizable contraction hierarchy: routes in microseconds, matrices with buckets"},
    {"apsp", "APSP matrix", SS_DEVICE_CPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 4,
     "lookups in the all-pairs matrix computed in the background for small graphs"},
    /* GPU rows: impl is the kernel's enum ss_gpu_algo (gpu/gpu.h). */
    {"delta", "Δ-stepping", SS_DEVICE_GPU,
     SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL | SS_CAN_BATCH, 0,
     "Δ-stepping, one persistent kernel; batched: many sources per search"},
    {"bf", "Bellman-Ford", SS_DEVICE_GPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 1,
     "frontier Bellman-Ford over CSR (scalar or vector)"},
    /* The rest of the classic family (docs/gpu.md). The GPU Dijkstra is
     * named gpu-dijkstra, not dijkstra: algorithm=dijkstra keeps meaning
     * the CPU's reference (a GPU row of the same name would let GPU streams
     * take those jobs), and the benchmark column is gpu-dijkstra either way. */
    {"bf-ell", "ELL Bellman-Ford", SS_DEVICE_GPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL,
     2, "Bellman-Ford as SpMV rounds over the in-arcs in sliced ELLPACK, a thread per row"},
    {"bf-queue", "queue Bellman-Ford", SS_DEVICE_GPU,
     SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 3,
     "Bellman-Ford over the vertices lowered last round: bitmap marks compacted into a queue"},
    {"gpu-dijkstra", "Dijkstra", SS_DEVICE_GPU, SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL,
     4, "Dijkstra with a reduction ExtractMin, settling every vertex the IN/OUT rules prove final"},
    {"bf-edgelist", "edge-list Bellman-Ford", SS_DEVICE_GPU,
     SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL, 5,
     "Bellman-Ford over an edge list by tail block, then head, a thread per arc"},
    /* The CCH's downward sweep for many sources at once; a route's path is
     * walked back over its tree on the device. Named gpu-cch for the
     * reason gpu-dijkstra is: algorithm=cch keeps meaning the CPU's CCH,
     * whose single routes take microseconds. */
    {"gpu-cch", "CCH sweep", SS_DEVICE_GPU,
     SS_CAN_ROUTE | SS_CAN_TARGETS | SS_CAN_ONE_TO_ALL | SS_CAN_BATCH | SS_WHOLE_DEVICE,
     SS__GPU_ROW_CCH,
     "the CCH's downward sweep for up to 256 sources at once: matrices, one-to-all trees and "
     "routes (paths walked back on the device)"},
};

#define SS__NROWS (sizeof(ss__rows) / sizeof(ss__rows[0]))

const struct ss_solver *ss_solvers(size_t *count)
{
        *count = SS__NROWS;
        return ss__rows;
}

const struct ss_solver *ss_solver_find(const char *name, enum ss_device device)
{
        for (size_t i = 0; name && i < SS__NROWS; i++)
                if (ss__rows[i].device == device && !strcmp(ss__rows[i].name, name))
                        return &ss__rows[i];
        return NULL;
}

size_t ss_solver_index(const struct ss_solver *r)
{
        return (size_t)(r - ss__rows);
}

const char *ss_device_name(enum ss_device d)
{
        return d == SS_DEVICE_GPU ? "gpu" : d == SS_DEVICE_CPU ? "cpu" : "?";
}

/* ------------------------------------------------------------------ */
/* Backends                                                            */
/* ------------------------------------------------------------------ */

int ss_backend_open(enum ss_device device, const struct ss_graph *g,
                    const struct ss_backend_config *cfg, struct ss_backend **out,
                    struct ss_err *err)
{
        static const struct ss_backend_config none = {0};
        const struct ss_backend_ops *ops = NULL;
        *out = NULL;
        if (!cfg)
                cfg = &none;
        if (device == SS_DEVICE_CPU)
                ops = &ss__cpu_backend;
#if SS_HAVE_CUDA
        else if (device == SS_DEVICE_GPU)
                ops = cfg->gpu_split ? &ss__gpu_part_backend : &ss__gpu_backend;
#endif
        if (!ops)
                return ss_err_set(err, SS_ENOGPU,
                                  "this build has no GPU engine (built without "
                                  "CUDA)");
        if (!g || g->n == 0)
                return ss_err_set(err, SS_EINVAL, "the graph is empty");
        struct ss_backend *b = calloc(1, sizeof(*b));
        if (!b)
                return ss_err_set(err, SS_ENOMEM, "no memory for a backend");
        b->device = device;
        b->g = g;
        b->lanes = cfg->lanes ? cfg->lanes : 1;
        b->ops = ops;
        int rc = ops->open(b, cfg, err);
        if (rc != SS_OK) {
                free(b);
                return rc;
        }
        *out = b;
        return SS_OK;
}

int ss_backend_wrap(enum ss_device device, const struct ss_graph *g, unsigned lanes,
                    const struct ss_backend_ops *ops, void *impl, struct ss_backend **out,
                    struct ss_err *err)
{
        struct ss_backend *b = calloc(1, sizeof(*b));
        if (!b)
                return ss_err_set(err, SS_ENOMEM, "no memory for a backend");
        b->device = device;
        b->g = g;
        b->lanes = lanes ? lanes : 1;
        b->ops = ops;
        b->impl = impl;
        *out = b;
        return SS_OK;
}

void *ss_backend_impl(const struct ss_backend *b)
{
        return b->impl;
}

void ss_backend_close(struct ss_backend *b)
{
        if (!b)
                return;
        if (b->ops->close)
                b->ops->close(b);
        free(b);
}

int ss_backend_rebind(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                      size_t k, struct ss_err *err)
{
        if (!ss_graph_same_topology(b->g, g))
                return ss_err_set(err, SS_EINVAL, "the new graph has another topology");
        if (!b->ops->rebind)
                return ss_err_set(err, SS_EINVAL,
                                  "this %s backend cannot take new weights in place",
                                  ss_device_name(b->device));
        if (b->g == g)
                return SS_OK;
        int rc = b->ops->rebind(b, g, changed, k, err);
        if (rc == SS_OK)
                b->g = g;
        return rc;
}

static int ss__check(const struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                     const struct ss_task *t, struct ss_err *err)
{
        const uint32_t n = b->g->n;
        if (!r || r->device != b->device)
                return ss_err_set(err, SS_EINVAL, "solver '%s' does not run on the %s",
                                  r ? r->name : "?", ss_device_name(b->device));
        if (lane >= b->lanes)
                return ss_err_set(err, SS_EINVAL, "lane %u does not exist (%u opened)", lane,
                                  b->lanes);
        if (t->nsources == 0 || !t->sources || !t->dist)
                return ss_err_set(err, SS_EINVAL, "a task needs sources and room for distances");
        if (t->kind == SS_TASK_ROUTE && (!t->targets || t->ntargets != t->nsources))
                return ss_err_set(err, SS_EINVAL, "routes need one target per source");
        if (t->kind == SS_TASK_TARGETS && (!t->targets || t->ntargets == 0))
                return ss_err_set(err, SS_EINVAL, "a target list is empty");
        if (t->path && (t->kind != SS_TASK_ROUTE || !t->path_len))
                return ss_err_set(err, SS_EINVAL, "paths are for routes");
        for (size_t i = 0; i < t->nsources; i++)
                if (t->sources[i] >= n)
                        return ss_err_set(err, SS_EINVAL, "source %u is outside 0..%u",
                                          t->sources[i], n - 1);
        for (size_t i = 0; t->kind != SS_TASK_ONE_TO_ALL && i < t->ntargets; i++)
                if (t->targets[i] >= n)
                        return ss_err_set(err, SS_EINVAL, "target %u is outside 0..%u",
                                          t->targets[i], n - 1);
        return SS_OK;
}

int ss_backend_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                   struct ss_task *t, struct ss_err *err)
{
        t->device_ns = 0;
        t->search_ns = 0;
        t->searches = 0;
        t->ran = r;
        if (t->path)
                for (size_t i = 0; i < t->nsources; i++) {
                        t->path[i] = NULL;
                        t->path_len[i] = 0;
                }
        int rc = ss__check(b, lane, r, t, err);
        if (rc != SS_OK)
                return rc;
        return b->ops->run(b, lane, r, t, err);
}

enum ss_device ss_backend_device(const struct ss_backend *b)
{
        return b->device;
}

const struct ss_graph *ss_backend_graph(const struct ss_backend *b)
{
        return b->g;
}

unsigned ss_backend_lanes(const struct ss_backend *b)
{
        return b->lanes;
}

unsigned ss_backend_batch(const struct ss_backend *b, const struct ss_solver *r,
                          enum ss_task_kind kind)
{
        if (!(r->caps & SS_CAN_BATCH) || !b->ops->batch)
                return 1;
        return b->ops->batch(b, r, kind);
}

bool ss_backend_healthy(const struct ss_backend *b)
{
        return b->ops->healthy ? b->ops->healthy(b) : true;
}

unsigned ss_backend_faults(const struct ss_backend *b)
{
        return b->ops->faults ? b->ops->faults(b) : 0;
}

uint64_t ss_backend_device_bytes(const struct ss_backend *b)
{
        return b->ops->device_bytes ? b->ops->device_bytes(b) : 0;
}

void ss_backend_trim(struct ss_backend *b, bool all)
{
        if (b->ops->trim)
                b->ops->trim(b, all);
}

void ss_backend_describe(const struct ss_backend *b, char *buf, size_t len)
{
        if (b->ops->describe)
                b->ops->describe(b, buf, len);
        else
                snprintf(buf, len, "%s, %u lane%s", ss_device_name(b->device), b->lanes,
                         b->lanes == 1 ? "" : "s");
}

int ss_backend_landmarks(struct ss_backend *b, const uint32_t *nodes, unsigned k, uint32_t *from,
                         uint32_t *to, uint32_t *bad_node, struct ss_err *err)
{
        if (!b->ops->landmarks)
                return ss_err_set(err, SS_ENOGPU, "the %s cannot build landmark tables",
                                  ss_device_name(b->device));
        return b->ops->landmarks(b, nodes, k, from, to, bad_node, err);
}

int ss_backend_customize(struct ss_backend *b, struct ss_cch_metric *m, const struct ss_graph *g,
                         struct ss_err *err)
{
        if (!b->ops->customize)
                return ss_err_set(err, SS_ENOGPU, "the %s does not customize CCH metrics",
                                  ss_device_name(b->device));
        if (!ss_graph_same_topology(b->g, g))
                return ss_err_set(err, SS_EINVAL, "customization for another graph");
        return b->ops->customize(b, m, g, err);
}

#if !SS_HAVE_CUDA
void *ss_backend_gpu(struct ss_backend *b)
{
        (void)b;
        return NULL;
}

void ss_solve_init(void)
{
}

void *ss_solve_host_alloc(size_t bytes)
{
        return malloc(bytes ? bytes : 1);
}

void ss_solve_host_free(void *p)
{
        free(p);
}

unsigned ss_solve_gpus(int *ids, unsigned cap, char *why, size_t len)
{
        (void)ids;
        (void)cap;
        snprintf(why, len, "built without CUDA");
        return 0;
}

void ss_solve_gpu_warm(int id)
{
        (void)id;
}
#endif

/* ------------------------------------------------------------------ */
/* One source at a time                                                */
/* ------------------------------------------------------------------ */

int ss_solve_one_to_all(struct ss_backend *b, const struct ss_solver *r, uint32_t source,
                        ss_dist *dist, struct ss_err *err)
{
        struct ss_task t = {
            .kind = SS_TASK_ONE_TO_ALL, .sources = &source, .nsources = 1, .dist = dist};
        return ss_backend_run(b, 0, r, &t, err);
}

int ss_solve_route(struct ss_backend *b, const struct ss_solver *r, uint32_t source,
                   uint32_t target, ss_dist *d, uint32_t **path, size_t *len, struct ss_err *err)
{
        struct ss_task t = {.kind = SS_TASK_ROUTE,
                            .sources = &source,
                            .nsources = 1,
                            .targets = &target,
                            .ntargets = 1,
                            .dist = d,
                            .path = path,
                            .path_len = len};
        return ss_backend_run(b, 0, r, &t, err);
}

uint64_t ss_dist_checksum(const ss_dist *dist, uint32_t n)
{
        const uint64_t mask = (UINT64_C(1) << 62) - 1;
        uint64_t acc = 0;
        for (uint32_t v = 0; v < n; v++)
                if (dist[v] != SS_DIST_INF)
                        acc = (acc + (dist[v] & mask)) & mask;
        return acc;
}
