/* The partitioned GPU backend: one graph split over the memory of several
 * devices (gpu/part.h), one lane. It serves graphs that fit no single
 * device; the engine opens it for gpu_partition split, or auto when every
 * device refused the whole graph. Matrix rows are one-to-all searches whose
 * target entries are gathered on the host (the partitioned kernel takes no
 * target list).
 *
 * Every GPU row is answered by the partitioned Δ-stepping, except the
 * gpu-cch row's trees and matrices on a graph with a customized CCH: they
 * come from one CCH sweep shared by the same devices (gpu/phast.h, "several
 * devices"). On a 24M-node continent that sweep took 6.4 ms a tree over two
 * devices, where the partitioned Δ-stepping took 193 ms (docs/benchmarks.md).
 * The sweep holds n-sized arrays on every device, so where it finds no room
 * the Δ-stepping answers; routes stay the Δ-stepping's (the shared sweep
 * walks no paths).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/cancel.h"
#include "core/log.h"
#include "cpu/dijkstra.h"
#include "gpu/gpu.h"
#include "gpu/part.h"
#include "gpu/phast.h"
#include "solve/backend.h"
#include "solve/cpu_internal.h"

/* Host memory for matrix rows' trees from the shared sweep at most: the
 * trees of one sweep, before the targets' entries are picked. */
#define SS__PART_TREE_BYTES ((size_t)1 << 28)
/* Sources a sweep at most under gpu_memory_limit_mb: the one of the probe
 * that its open measured against the limit (more would grow the room for
 * trees and for their copies to the host). */
#define SS__PART_LIMITED_K 1u

struct ss__gpu_part {
        struct ss_gpu_part *h;
        ss_dist *row;               /* a matrix row's one-to-all, made on the first */
        struct ss_dijkstra_ws *cpu; /* paths the host walk could not take */
        /* The gpu-cch row: the metric comes from src; the shared sweep is
         * opened on its first task for that metric. refused is a metric
         * the sweep could not open for (the Δ-stepping answers for it). The
         * lock guards sweep against /status (ss__part_backend_bytes). */
        struct ss__cpu_cch *src;
        pthread_mutex_t lock;
        struct ss_gpu_phast_split *sweep;
        const struct ss_cch_metric *sweep_m, *refused;
        ss_dist *trees; /* matrix rows' trees, tree_cap nodes, pinned when it can be */
        size_t tree_cap;
        int devices[SS_GPU_PHAST_PARTS_MAX];
        unsigned ndev;
        uint64_t limit; /* bytes a device may hold (0: no limit) */
};

static void ss__part_backend_close(struct ss_backend *b);
static int ss__part_sweep_for(struct ss__gpu_part *x, const struct ss_cch_metric *m);

static int ss__part_backend_open(struct ss_backend *b, const struct ss_backend_config *cfg,
                                 struct ss_err *err)
{
        struct ss_gpu_config gc;
        ss_gpu_config_default(&gc);
        int rc = SS_OK;
        if (cfg->delta && (rc = ss_gpu_delta_parse(cfg->delta, &gc, err)) != SS_OK)
                return rc;
        struct ss_gpu_part_config pc;
        ss_gpu_part_config_default(&pc);
        pc.devices = cfg->gpu_devices;
        pc.ndev = cfg->ngpu_devices ? cfg->ngpu_devices : 1;
        pc.memory_limit = cfg->memory_limit;
        pc.delta_rule = gc.delta_rule;
        pc.delta = gc.delta;
        pc.blocks = cfg->blocks;
        struct ss__gpu_part *x = calloc(1, sizeof(*x));
        if (!x)
                return ss_err_set(err, SS_ENOMEM, "no memory for the partitioned GPU backend");
        pthread_mutex_init(&x->lock, NULL);
        x->ndev = pc.ndev < SS_GPU_PHAST_PARTS_MAX ? pc.ndev : SS_GPU_PHAST_PARTS_MAX;
        /* The devices of the search's parts, in its order (without a list
         * every part is on device 0, as gpu/part.c does). */
        for (unsigned i = 0; i < x->ndev; i++)
                x->devices[i] = pc.devices ? pc.devices[i] : 0;
        if (pc.ndev > x->ndev)
                ss_log_warn("gpu", "the CCH sweep is shared by the first %u of the %u GPUs",
                            x->ndev, pc.ndev);
        b->impl = x;
        if (!(x->src = ss__cpu_cch_new(1, cfg->cch_build, cfg->threads)))
                rc = ss_err_set(err, SS_ENOMEM, "no memory for the partitioned GPU backend");
        else
                rc = ss_gpu_part_open(b->g, &pc, &x->h, err);
        if (rc != SS_OK) {
                ss__part_backend_close(b);
                b->impl = NULL;
                return rc;
        }
        b->lanes = 1;
        x->limit = cfg->memory_limit;
        /* The sweep opens with the backend, so that no query pays for it
         * (6 s on a 24M-node continent) and a reload after new weights,
         * which opens the backend again, makes it for the new metric. */
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x->src, b->g);
        if (m)
                ss__part_sweep_for(x, m);
        return SS_OK;
}

static void ss__part_backend_close(struct ss_backend *b)
{
        struct ss__gpu_part *x = b->impl;
        if (!x)
                return;
        ss_gpu_part_close(x->h);
        if (x->row)
                cudaFreeHost(x->row);
        ss_dijkstra_ws_free(x->cpu);
        ss_gpu_phast_split_close(x->sweep);
        ss_solve_host_free(x->trees);
        ss__cpu_cch_free(x->src);
        pthread_mutex_destroy(&x->lock);
        free(x);
}

/* The shared sweep for metric m, opened when it has none or one of another
 * metric. Returns SS_OK, or SS__ROW_NOT_READY when it cannot be had for m
 * (the Δ-stepping answers; the reason is logged once per metric). */
static int ss__part_sweep_for(struct ss__gpu_part *x, const struct ss_cch_metric *m)
{
        if (x->sweep && x->sweep_m == m)
                return SS_OK;
        if (x->refused == m)
                return SS__ROW_NOT_READY;
        pthread_mutex_lock(&x->lock);
        struct ss_gpu_phast_split *old = x->sweep;
        x->sweep = NULL;
        x->sweep_m = NULL;
        pthread_mutex_unlock(&x->lock);
        ss_gpu_phast_split_close(old);
        struct ss_err err = {0};
        struct ss_gpu_phast_split *s = NULL;
        const uint64_t t0 = ss_now_ns();
        int rc = ss_gpu_phast_split_open(x->devices, x->ndev, m->cch, m, &s, &err);
        /* One tree first: it makes the sweep's room for a tree and its
         * copy and its captured launches, so that the first query does not
         * pay for them and the check below counts them. */
        const uint32_t n = m->cch->n, source = 0;
        ss_dist *probe = rc == SS_OK && n ? ss_solve_host_alloc((size_t)n * sizeof(ss_dist)) : NULL;
        struct ss_gpu_phast_stats st;
        if (rc == SS_OK && n)
                rc = probe ? ss_gpu_phast_split_trees(s, &source, 1, probe, &st, &err)
                           : ss_err_set(&err, SS_ENOMEM, "no host memory for a tree");
        ss_solve_host_free(probe);
        /* Under gpu_memory_limit_mb a device holds its part of the graph
         * and its part of the sweep, or no sweep. */
        for (unsigned q = 0; rc == SS_OK && x->limit && q < x->ndev; q++) {
                const uint64_t used =
                    ss_gpu_phast_split_bytes(s, q) + ss_gpu_part_mem_used(x->h, q);
                if (used > x->limit)
                        rc = ss_err_set(&err, SS_ENOGPU,
                                        "device %d would hold %.1f MiB with its part of the sweep, "
                                        "over the limit of %.1f MiB",
                                        x->devices[q], used / 1048576.0, x->limit / 1048576.0);
        }
        if (rc != SS_OK) {
                ss_gpu_phast_split_close(s);
                x->refused = m;
                ss_log_warn("gpu",
                            "the CCH sweep over %u GPUs did not open, the partitioned "
                            "search answers its trees: %s",
                            x->ndev, err.msg);
                return SS__ROW_NOT_READY;
        }
        ss_log_info("gpu", "the CCH sweep shared by %u GPUs opened in %.1f ms", x->ndev,
                    (double)(ss_now_ns() - t0) / 1e6);
        pthread_mutex_lock(&x->lock);
        x->sweep = s;
        x->sweep_m = m;
        pthread_mutex_unlock(&x->lock);
        return SS_OK;
}

/* Room on the host for k matrix rows' trees. */
static int ss__part_trees(struct ss__gpu_part *x, size_t nodes, struct ss_err *err)
{
        if (x->tree_cap >= nodes)
                return SS_OK;
        ss_solve_host_free(x->trees);
        x->tree_cap = 0;
        if (!(x->trees = ss_solve_host_alloc(nodes * sizeof(ss_dist))))
                return ss_err_set(err, SS_ENOMEM, "no host memory for %zu trees' distances", nodes);
        x->tree_cap = nodes;
        return SS_OK;
}

/* Task t's trees or matrix rows from the shared sweep: SS_OK,
 * SS__ROW_NOT_READY (no metric, a route, no sweep: the Δ-stepping
 * answers), or an error with err set. */
static int ss__part_sweeps(struct ss_backend *b, struct ss_task *t, struct ss_err *err)
{
        struct ss__gpu_part *x = b->impl;
        const uint32_t n = b->g->n;
        const struct ss_cch_metric *m = ss__cpu_cch_metric(x->src, b->g);
        if (!m || t->kind == SS_TASK_ROUTE || ss__part_sweep_for(x, m) != SS_OK)
                return SS__ROW_NOT_READY;
        const bool all = t->kind == SS_TASK_ONE_TO_ALL;
        uint64_t device_ns = 0, search_ns = 0;
        unsigned searches = 0;
        unsigned cap = ss_gpu_cch_sweep_sources(n);
        if (x->limit && cap > SS__PART_LIMITED_K)
                cap = SS__PART_LIMITED_K;
        if (!all) {
                const size_t fit = SS__PART_TREE_BYTES / ((size_t)n * sizeof(ss_dist));
                cap = fit < 1 ? 1 : fit < cap ? (unsigned)fit : cap;
        }
        for (size_t i = 0; i < t->nsources;) {
                if (ss_cancelled(t->cancel))
                        return ss_err_set(err, SS_ETIMEDOUT,
                                          "gpu-cch: deadline passed or cancelled");
                const unsigned k = (unsigned)(t->nsources - i < cap ? t->nsources - i : cap);
                int rc = all ? SS_OK : ss__part_trees(x, (size_t)k * n, err);
                if (rc == SS_ENOMEM && k > 1) {
                        cap = k / 2; /* no host room for k trees: fewer a sweep */
                        continue;
                }
                struct ss_gpu_phast_stats st = {0};
                if (rc == SS_OK)
                        rc = ss_gpu_phast_split_trees(x->sweep, t->sources + i, k,
                                                      all ? t->dist + i * (size_t)n : x->trees, &st,
                                                      err);
                if (rc == SS_ENOGPU && k > 1) {
                        cap = k / 2; /* no room for k trees: fewer a sweep */
                        continue;
                }
                if (rc == SS_ENOGPU || rc == SS_ENOMEM)
                        return SS__ROW_NOT_READY; /* the Δ-stepping answers it all */
                if (rc != SS_OK)
                        return rc;
                for (unsigned q = 0; !all && q < k; q++) {
                        ss_dist *out = t->dist + (i + q) * t->ntargets;
                        const ss_dist *tree = x->trees + (size_t)q * n;
                        for (size_t c = 0; c < t->ntargets; c++)
                                out[c] = tree[t->targets[c]];
                }
                device_ns += ss_gpu_phast_device_ns(&st);
                search_ns += st.sweep_ns;
                searches++;
                i += k;
        }
        t->device_ns += device_ns;
        t->search_ns += search_ns;
        t->searches += searches;
        return SS_OK;
}

static int ss__part_one(struct ss_backend *b, struct ss_task *t, size_t i, struct ss_err *err)
{
        struct ss__gpu_part *x = b->impl;
        const uint32_t n = b->g->n;
        struct ss_gpu_query q = {.algo = SS_GPU_DELTA,
                                 .source = t->sources[i],
                                 .target = SS_NO_NODE,
                                 .cancel = t->cancel};
        struct ss_gpu_result r;
        if (t->kind == SS_TASK_ROUTE) {
                q.target = t->targets[i];
                q.want_path = t->path != NULL;
        } else if (t->kind == SS_TASK_ONE_TO_ALL) {
                q.all = t->dist + i * (size_t)n;
        } else {
                if (!x->row &&
                    cudaMallocHost((void **)&x->row, (size_t)n * sizeof(ss_dist)) != cudaSuccess) {
                        cudaGetLastError();
                        x->row = NULL;
                        return ss_err_set(err, SS_ENOMEM, "no pinned memory for a matrix row");
                }
                q.all = x->row;
        }
        int rc = ss_gpu_part_run(x->h, &q, &r, err);
        t->device_ns += r.total_ns;
        t->search_ns += r.kernel_ns;
        t->searches++;
        if (rc != SS_OK)
                return rc;
        if (t->kind == SS_TASK_TARGETS) {
                ss_dist *out = t->dist + i * t->ntargets;
                for (size_t j = 0; j < t->ntargets; j++)
                        out[j] = x->row[t->targets[j]];
                return SS_OK;
        }
        if (t->kind != SS_TASK_ROUTE)
                return SS_OK;
        t->dist[i] = r.dist;
        if (!t->path)
                return SS_OK;
        if (!r.path_needs_cpu) {
                t->path[i] = r.path;
                t->path_len[i] = r.path_len;
                return SS_OK;
        }
        /* A zero-weight cycle on the way back: the CPU's path, the device's
         * distance. */
        if (!x->cpu)
                x->cpu = ss_dijkstra_ws_new(n);
        return ss__cpu_path(b->g, x->cpu, t, i, err);
}

static int ss__part_backend_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                                struct ss_task *t, struct ss_err *err)
{
        (void)lane;
        if (r->impl == SS__GPU_ROW_CCH) {
                const int rc = ss__part_sweeps(b, t, err);
                if (rc != SS__ROW_NOT_READY)
                        return rc;
        }
        /* Every other GPU row is answered by the partitioned Δ-stepping. */
        if (strcmp(r->name, "delta") != 0)
                t->ran = ss_solver_find("delta", SS_DEVICE_GPU);
        int rc = SS_OK;
        for (size_t i = 0; i < t->nsources && rc == SS_OK; i++)
                rc = ss__part_one(b, t, i, err);
        return rc;
}

static unsigned ss__part_backend_batch(const struct ss_backend *b, const struct ss_solver *r,
                                       enum ss_task_kind kind)
{
        (void)kind;
        struct ss__gpu_part *x = b->impl;
        /* Batches only for the sweep: the partitioned search takes one
         * source at a time, and smaller pieces let the CPU share a matrix. */
        pthread_mutex_lock(&x->lock);
        const bool sweep = x->sweep != NULL;
        pthread_mutex_unlock(&x->lock);
        if (r->impl != SS__GPU_ROW_CCH || !sweep)
                return 1;
        const unsigned k = ss_gpu_cch_sweep_sources(b->g->n);
        return x->limit && k > SS__PART_LIMITED_K ? SS__PART_LIMITED_K : k;
}

static bool ss__part_backend_healthy(const struct ss_backend *b)
{
        const struct ss__gpu_part *x = b->impl;
        return ss_gpu_part_healthy(x->h);
}

static uint64_t ss__part_backend_bytes(const struct ss_backend *b)
{
        struct ss__gpu_part *x = b->impl;
        uint64_t sum = 0;
        for (unsigned i = 0; i < ss_gpu_part_devices(x->h); i++)
                sum += ss_gpu_part_mem_used(x->h, i);
        pthread_mutex_lock(&x->lock);
        for (unsigned q = 0; x->sweep && q < ss_gpu_phast_split_parts(x->sweep); q++)
                sum += ss_gpu_phast_split_bytes(x->sweep, q);
        pthread_mutex_unlock(&x->lock);
        return sum;
}

static void ss__part_backend_describe(const struct ss_backend *b, char *buf, size_t len)
{
        struct ss__gpu_part *x = b->impl;
        ss_gpu_part_describe(x->h, buf, len);
        if (!len)
                return;
        pthread_mutex_lock(&x->lock);
        const size_t at = strnlen(buf, len);
        if (x->sweep && at + 1 < len)
                snprintf(buf + at, len - at, "; trees from a CCH sweep over %u devices",
                         ss_gpu_phast_split_parts(x->sweep));
        pthread_mutex_unlock(&x->lock);
}

const struct ss_backend_ops ss__gpu_part_backend = {
    .open = ss__part_backend_open,
    .close = ss__part_backend_close,
    .run = ss__part_backend_run,
    .batch = ss__part_backend_batch,
    .healthy = ss__part_backend_healthy,
    .device_bytes = ss__part_backend_bytes,
    .describe = ss__part_backend_describe,
};
