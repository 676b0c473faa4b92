/* The GPU backend: the graph on one CUDA device, one stream per lane. Rows
 * that batch take a task's sources together (batch.cu); the others, and
 * tasks of one source, run source by source on the single-search kernels.
 * Paths the device cannot walk (a zero-weight cycle on them) come from a
 * CPU Dijkstra on the same lane. */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cch/cch.h"
#include "cpu/dijkstra.h"
#include "gpu/cch_custom.h"
#include "gpu/gpu.h"
#include "gpu/phast.h"
#include "solve/backend.h"
#include "solve/gpu_internal.h"

struct ss__gpu {
        struct ss_gpu *gpu;
        struct ss_dijkstra_ws **cpu; /* per lane, made when first needed */
        struct ss__gpu_cch *cch;     /* the gpu-cch row's sweeps */
        int device;
        /* Made at the engine's warm-up after a load, or on the first
         * customization; cz_lock serializes the two (and any later ones). */
        struct ss_gpu_customizer *cz;
        pthread_mutex_t cz_lock;
        /* The CCH no customizer could be made for (its sizes too, should
         * another CCH come at the same address after a reload). */
        const struct ss_cch *cz_failed;
        uint64_t cz_failed_size;
        _Atomic uint64_t cz_bytes; /* its device memory, for readers of the stats */
};

static int ss__gpu_open(struct ss_backend *b, const struct ss_backend_config *cfg,
                        struct ss_err *err)
{
        struct ss_gpu_config gc;
        ss_gpu_config_default(&gc);
        gc.device = cfg->gpu_device;
        gc.streams = b->lanes;
        gc.memory_limit = cfg->memory_limit;
        gc.blocks = cfg->blocks;
        gc.batch = cfg->batch;
        gc.batch_streams = cfg->batch_streams;
        int rc = SS_OK;
        if (cfg->delta && (rc = ss_gpu_delta_parse(cfg->delta, &gc, err)) != SS_OK)
                return rc;
        if (cfg->bf_variant && (rc = ss_gpu_bf_variant_parse(cfg->bf_variant, &gc, err)) != SS_OK)
                return rc;
        struct ss__gpu *x = calloc(1, sizeof(*x));
        if (!x)
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU backend");
        /* The sweep's schedules, passes on the host, beside the upload. */
        if (cfg->sweep_ahead && ss_cch_metric_of(b->g))
                ss_gpu_phast_ahead(ss_cch_of(b->g));
        if ((rc = ss_gpu_open(b->g, &gc, &x->gpu, err)) != SS_OK) {
                free(x);
                return rc;
        }
        /* The device may have opened fewer streams than asked (memory). */
        b->lanes = ss_gpu_streams(x->gpu);
        if (!(x->cpu = calloc(b->lanes, sizeof(*x->cpu))) ||
            !(x->cch = ss__gpu_cch_new(b->lanes, cfg->gpu_device, cfg->cch_build, cfg->threads))) {
                ss_gpu_close(x->gpu);
                free(x->cpu);
                free(x);
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU backend");
        }
        x->device = cfg->gpu_device;
        pthread_mutex_init(&x->cz_lock, NULL);
        b->impl = x;
        return SS_OK;
}

static void ss__gpu_close(struct ss_backend *b)
{
        struct ss__gpu *x = b->impl;
        if (!x)
                return;
        ss__gpu_cch_free(x->cch);
        ss_gpu_customizer_free(x->cz);
        pthread_mutex_destroy(&x->cz_lock);
        ss_gpu_close(x->gpu);
        for (unsigned i = 0; i < b->lanes; i++)
                ss_dijkstra_ws_free(x->cpu[i]);
        free(x->cpu);
        free(x);
}

static struct ss_dijkstra_ws *ss__lane_cpu(struct ss_backend *b, unsigned lane)
{
        struct ss__gpu *x = b->impl;
        if (!x->cpu[lane])
                x->cpu[lane] = ss_dijkstra_ws_new(b->g->n);
        return x->cpu[lane];
}

/* Route i's path from the CPU, on this lane's workspace. */
static int ss__lane_path(struct ss_backend *b, unsigned lane, struct ss_task *t, size_t i,
                         struct ss_err *err)
{
        return ss__cpu_path(b->g, ss__lane_cpu(b, lane), t, i, err);
}

static enum ss_gpu_batch_kind ss__kind(enum ss_task_kind k)
{
        return k == SS_TASK_ROUTE     ? SS_GPU_BATCH_ROUTES
               : k == SS_TASK_TARGETS ? SS_GPU_BATCH_TARGETS
                                      : SS_GPU_BATCH_ALL;
}

static int ss__batched(struct ss_backend *b, unsigned lane, struct ss_task *t, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        bool *needs = NULL;
        if (t->path && !(needs = calloc(t->nsources, sizeof(bool))))
                return ss_err_set(err, SS_ENOMEM, "no memory for a batch");
        struct ss_gpu_batch q = {.kind = ss__kind(t->kind),
                                 .sources = t->sources,
                                 .k = (unsigned)t->nsources,
                                 .targets = t->targets,
                                 .ntargets = t->ntargets,
                                 .want_paths = t->path != NULL,
                                 .dist = t->dist,
                                 .cancel = t->cancel};
        struct ss_gpu_batch_result r = {
            .path = t->path, .path_len = t->path_len, .path_needs_cpu = needs};
        int rc = ss_gpu_run_batch(x->gpu, lane, &q, &r, err);
        t->device_ns += r.total_ns;
        t->search_ns += r.kernel_ns;
        t->searches += r.searches;
        for (size_t i = 0; rc == SS_OK && needs && i < t->nsources; i++)
                if (needs[i])
                        rc = ss__lane_path(b, lane, t, i, err);
        free(needs);
        return rc;
}

static int ss__single(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                      struct ss_task *t, size_t i, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        struct ss_gpu_query q = {.algo = (enum ss_gpu_algo)r->impl,
                                 .source = t->sources[i],
                                 .target = SS_NO_NODE,
                                 .cancel = t->cancel};
        struct ss_gpu_result res = {0};
        switch (t->kind) {
        case SS_TASK_ROUTE:
                q.target = t->targets[i];
                q.want_path = t->path != NULL;
                break;
        case SS_TASK_TARGETS:
                q.targets = t->targets;
                q.ntargets = t->ntargets;
                res.target_dist = t->dist + i * t->ntargets;
                break;
        case SS_TASK_ONE_TO_ALL:
                q.all = t->dist + i * (size_t)b->g->n;
                break;
        }
        int rc = ss_gpu_run(x->gpu, lane, &q, &res, err);
        t->device_ns += res.total_ns;
        t->search_ns += res.kernel_ns;
        t->searches++;
        if (rc != SS_OK || t->kind != SS_TASK_ROUTE)
                return rc;
        t->dist[i] = res.dist;
        if (!t->path)
                return SS_OK;
        if (res.path_needs_cpu)
                return ss__lane_path(b, lane, t, i, err);
        t->path[i] = res.path;
        t->path_len[i] = res.path_len;
        return SS_OK;
}

static int ss__gpu_run(struct ss_backend *b, unsigned lane, const struct ss_solver *r,
                       struct ss_task *t, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        if (r->impl == SS__GPU_ROW_CCH) {
                bool *needs = NULL;
                if (t->kind == SS_TASK_ROUTE && t->path &&
                    !(needs = calloc(t->nsources, sizeof(bool))))
                        return ss_err_set(err, SS_ENOMEM, "no memory for %zu routes", t->nsources);
                int rc = ss__gpu_cch_task(x->cch, b->g, t, needs, err);
                for (size_t i = 0; rc == SS_OK && needs && i < t->nsources; i++) {
                        if (!needs[i])
                                continue;
                        rc = ss__gpu_cch_cpu_path(x->cch, b->g, lane, t, i, err);
                        if (rc == SS__ROW_NOT_READY)
                                rc = ss__lane_path(b, lane, t, i, err);
                }
                free(needs);
                if (rc != SS__ROW_NOT_READY)
                        return rc;
                /* No hierarchy: the Δ-stepping answers. */
                t->ran = r = ss_solver_find("delta", SS_DEVICE_GPU);
        }
        /* A batch needs the row's support, a batch workspace on this lane,
         * more than one source, and for paths the reverse graph. */
        if ((r->caps & SS_CAN_BATCH) && t->nsources > 1 && ss_gpu_stream_batches(x->gpu, lane) &&
            (!t->path || ss_gpu_has_reverse(x->gpu)))
                return ss__batched(b, lane, t, err);
        int rc = SS_OK;
        for (size_t i = 0; i < t->nsources && rc == SS_OK; i++)
                rc = ss__single(b, lane, r, t, i, err);
        return rc;
}

static unsigned ss__gpu_batch(const struct ss_backend *b, const struct ss_solver *r,
                              enum ss_task_kind kind)
{
        (void)kind;
        const struct ss__gpu *x = b->impl;
        if (r && r->impl == SS__GPU_ROW_CCH)
                return SS_GPU_CCH_SOURCES;
        const unsigned k = ss_gpu_batch_max(x->gpu);
        return k ? k : 1;
}

static bool ss__gpu_healthy(const struct ss_backend *b)
{
        const struct ss__gpu *x = b->impl;
        return ss_gpu_healthy(x->gpu);
}

static unsigned ss__gpu_faults(const struct ss_backend *b)
{
        const struct ss__gpu *x = b->impl;
        return ss_gpu_faults(x->gpu);
}

static uint64_t ss__gpu_bytes(const struct ss_backend *b)
{
        const struct ss__gpu *x = b->impl;
        return ss_gpu_mem_used(x->gpu) + ss__gpu_cch_bytes(x->cch) + x->cz_bytes;
}

static void ss__gpu_describe(const struct ss_backend *b, char *buf, size_t len)
{
        const struct ss__gpu *x = b->impl;
        ss_gpu_describe(x->gpu, buf, len);
}

static void ss__gpu_trim(struct ss_backend *b, bool all)
{
        struct ss__gpu *x = b->impl;
        ss_gpu_trim(x->gpu, all);
        ss__gpu_cch_trim(x->cch, all);
}

static int ss__gpu_landmarks(struct ss_backend *b, const uint32_t *nodes, unsigned k,
                             uint32_t *from, uint32_t *to, uint32_t *bad_node, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        return ss_gpu_landmarks(x->gpu, nodes, k, from, to, bad_node, err);
}

void ss_solve_init(void)
{
        ss_gpu_process_init();
}

void *ss_solve_host_alloc(size_t bytes)
{
        void *p = NULL;
        if (cudaMallocHost(&p, bytes ? bytes : 1) == cudaSuccess)
                return p;
        cudaGetLastError(); /* no device, no driver: ordinary memory */
        return malloc(bytes ? bytes : 1);
}

void ss_solve_host_free(void *p)
{
        struct cudaPointerAttributes a;
        if (!p)
                return;
        if (cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeHost) {
                cudaFreeHost(p);
                return;
        }
        cudaGetLastError();
        free(p);
}

unsigned ss_solve_gpus(int *ids, unsigned cap, char *why, size_t len)
{
        struct ss_gpu_info info;
        struct ss_err err = {0};
        if (ss_gpu_probe(&info, &err) != SS_OK) {
                snprintf(why, len, "%s", err.msg);
                return 0;
        }
        unsigned n = 0;
        for (int i = 0; i < info.count && i < SS_GPU_MAX_DEVICES && n < cap; i++)
                if (info.dev[i].cooperative)
                        ids[n++] = info.dev[i].id;
        if (n == 0)
                snprintf(why, len, "no CUDA device supports cooperative launches");
        return n;
}

void ss_solve_gpu_warm(int id)
{
        ss_gpu_warm(id);
}

void *ss_backend_gpu(struct ss_backend *b)
{
        if (b->ops != &ss__gpu_backend)
                return NULL;
        struct ss__gpu *x = b->impl;
        return x->gpu;
}

/* New weights patched into the device copy; without the list of changed
 * arcs there is nothing to patch from, and the caller uploads again. */
static int ss__gpu_rebind(struct ss_backend *b, const struct ss_graph *g, const uint64_t *changed,
                          size_t k, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        if (!changed)
                return ss_err_set(err, SS_EINVAL, "the GPU patches only named arcs");
        int rc = ss_gpu_reweight(x->gpu, b->g, g, changed, k, err);
        if (rc == SS_OK)
                ss__gpu_cch_rebind(x->cch, g);
        return rc;
}

static int ss__gpu_customize_locked(struct ss__gpu *x, struct ss_cch_metric *m,
                                    const struct ss_graph *g, struct ss_err *err)
{
        if (x->cz && ss_gpu_customizer_cch(x->cz) != m->cch) {
                ss_gpu_customizer_free(x->cz);
                x->cz = NULL;
                x->cz_bytes = 0;
        }
        int rc;
        if (!x->cz) {
                /* A CCH too large for the device once is so for good: no
                 * schedule and no allocations again at every update. */
                const uint64_t size = m->cch->triangles ^ ((uint64_t)m->cch->arcs << 32);
                if (x->cz_failed == m->cch && x->cz_failed_size == size)
                        return ss_err_set(err, SS_ENOGPU,
                                          "this CCH does not fit the GPU's customization");
                if ((rc = ss_gpu_customizer_new(x->device, m->cch, g, &x->cz, err)) != SS_OK) {
                        if (rc == SS_ETOOBIG || rc == SS_ENOGPU) {
                                x->cz_failed = m->cch;
                                x->cz_failed_size = size;
                        }
                        return rc;
                }
                x->cz_bytes = ss_gpu_customizer_bytes(x->cz);
        }
        return ss_gpu_customize(x->cz, m, g, NULL, NULL, err);
}

static int ss__gpu_customize(struct ss_backend *b, struct ss_cch_metric *m,
                             const struct ss_graph *g, struct ss_err *err)
{
        struct ss__gpu *x = b->impl;
        pthread_mutex_lock(&x->cz_lock);
        const int rc = ss__gpu_customize_locked(x, m, g, err);
        pthread_mutex_unlock(&x->cz_lock);
        return rc;
}

const struct ss_backend_ops ss__gpu_backend = {
    .open = ss__gpu_open,
    .close = ss__gpu_close,
    .run = ss__gpu_run,
    .batch = ss__gpu_batch,
    .healthy = ss__gpu_healthy,
    .faults = ss__gpu_faults,
    .device_bytes = ss__gpu_bytes,
    .describe = ss__gpu_describe,
    .landmarks = ss__gpu_landmarks,
    .rebind = ss__gpu_rebind,
    .customize = ss__gpu_customize,
    .trim = ss__gpu_trim,
};
