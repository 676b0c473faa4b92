/* The partitioned GPU backend: one graph split over the memory of several
 * devices (gpu/part.h), one lane, every GPU row answered by its
 * Δ-stepping. It serves graphs that fit no single device; the engine opens
 * it for gpu_partition split, or auto when every device refused the whole
 * graph. Matrix rows are one-to-all searches whose target entries are
 * gathered on the host (the partitioned kernel takes no target list).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cpu/dijkstra.h"
#include "gpu/gpu.h"
#include "gpu/part.h"
#include "solve/backend.h"

struct ss__gpu_part {
        struct ss_gpu_part *h;
        ss_dist *row;               /* a matrix row's one-to-all, made on the first */
        struct ss_dijkstra_ws *cpu; /* paths the host walk could not take */
};

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
        if ((rc = ss_gpu_part_open(b->g, &pc, &x->h, err)) != SS_OK) {
                free(x);
                return rc;
        }
        b->lanes = 1;
        b->impl = x;
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
        free(x);
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
        /* Every GPU row is answered by the partitioned Δ-stepping. */
        if (strcmp(r->name, "delta") != 0)
                t->ran = ss_solver_find("delta", SS_DEVICE_GPU);
        int rc = SS_OK;
        for (size_t i = 0; i < t->nsources && rc == SS_OK; i++)
                rc = ss__part_one(b, t, i, err);
        return rc;
}

static bool ss__part_backend_healthy(const struct ss_backend *b)
{
        const struct ss__gpu_part *x = b->impl;
        return ss_gpu_part_healthy(x->h);
}

static uint64_t ss__part_backend_bytes(const struct ss_backend *b)
{
        const struct ss__gpu_part *x = b->impl;
        uint64_t sum = 0;
        for (unsigned i = 0; i < ss_gpu_part_devices(x->h); i++)
                sum += ss_gpu_part_mem_used(x->h, i);
        return sum;
}

static void ss__part_backend_describe(const struct ss_backend *b, char *buf, size_t len)
{
        const struct ss__gpu_part *x = b->impl;
        ss_gpu_part_describe(x->h, buf, len);
}

const struct ss_backend_ops ss__gpu_part_backend = {
    .open = ss__part_backend_open,
    .close = ss__part_backend_close,
    .run = ss__part_backend_run,
    .healthy = ss__part_backend_healthy,
    .device_bytes = ss__part_backend_bytes,
    .describe = ss__part_backend_describe,
};
