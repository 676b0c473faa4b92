#include "server/gpu_workers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ss_config.h"

#if SS_HAVE_CUDA

#include "gpu/gpu.h"

/* The device graph, shared by every stream worker. Workers hold the read
 * lock while a query runs; replacing the device graph takes the write lock,
 * so it waits for running GPU queries and no query sees a closed handle. */
static struct {
        pthread_rwlock_t lock;
        struct ss_gpu *gpu;
        struct ss_graph *graph;  /* the host graph the device copy is of (a reference) */
        unsigned streams;        /* of the current handle */
        unsigned workers;        /* stream workers added to the engine */
        char why[SS_ERRMSG_MAX]; /* description, or why the GPU does not serve */
} ss__slot = {.lock = PTHREAD_RWLOCK_INITIALIZER};

struct ss__stream {
        unsigned stream;
        char name[32];
};

static int ss__gpu_algo(enum ss_algo a)
{
        return a == SS_ALGO_BF ? SS_GPU_BF : SS_GPU_DELTA; /* auto and delta */
}

static int ss__run(struct ss_gpu *gpu, unsigned stream, struct ss_job *job)
{
        struct ss_cancel cancel = {.deadline_ns = job->deadline_ns, .flag = job->cancel};
        struct ss_gpu_query q = {.algo = (enum ss_gpu_algo)ss__gpu_algo(job->algo),
                                 .target = SS_NO_NODE,
                                 .cancel = &cancel};
        struct ss_gpu_result r;
        int rc = SS_OK;

        job->ran_engine = SS_ENGINE_GPU;
        job->ran_algo = job->algo == SS_ALGO_BF ? SS_ALGO_BF : SS_ALGO_DELTA;
        switch (job->kind) {
        case SS_JOB_ROUTE:
                q.source = job->sources[0];
                q.target = job->targets[0];
                q.want_path = true;
                memset(&r, 0, sizeof(r));
                rc = ss_gpu_run(gpu, stream, &q, &r, &job->err);
                job->gpu_ns += r.total_ns;
                if (rc != SS_OK)
                        return rc;
                if (r.path_needs_cpu) {
                        free(r.path);
                        return ss_err_set(&job->err, SS_EGPU,
                                          "zero-weight cycle on the path: the CPU finds it");
                }
                job->dist = malloc(sizeof(ss_dist));
                if (!job->dist) {
                        free(r.path);
                        return SS_ENOMEM;
                }
                job->dist[0] = r.dist;
                job->path = r.path;
                job->path_len = r.path_len;
                if (r.dist == SS_DIST_INF)
                        return ss_err_set(&job->err, SS_ENOROUTE, "no route from %llu to %llu",
                                          (unsigned long long)ss_node_to_dimacs(q.source),
                                          (unsigned long long)ss_node_to_dimacs(q.target));
                return SS_OK;
        case SS_JOB_MATRIX:
                job->dist = malloc(job->nsources * job->ntargets * sizeof(ss_dist));
                if (!job->dist)
                        return SS_ENOMEM;
                for (size_t i = 0; i < job->nsources && rc == SS_OK; i++) {
                        q.source = job->sources[i];
                        q.targets = job->targets;
                        q.ntargets = job->ntargets;
                        memset(&r, 0, sizeof(r));
                        r.target_dist = job->dist + i * job->ntargets;
                        rc = ss_gpu_run(gpu, stream, &q, &r, &job->err);
                        job->gpu_ns += r.total_ns;
                }
                return rc;
        case SS_JOB_ONE_TO_ALL:
                job->dist = malloc((size_t)job->graph->n * sizeof(ss_dist));
                if (!job->dist)
                        return SS_ENOMEM;
                q.source = job->sources[0];
                q.all = job->dist;
                memset(&r, 0, sizeof(r));
                rc = ss_gpu_run(gpu, stream, &q, &r, &job->err);
                job->gpu_ns += r.total_ns;
                return rc;
        }
        return SS_EINVAL;
}

static int ss__execute(void *state, struct ss_job *job)
{
        struct ss__stream *s = state;
        int rc;

        pthread_rwlock_rdlock(&ss__slot.lock);
        if (!ss__slot.gpu || s->stream >= ss__slot.streams)
                rc = ss_err_set(&job->err, SS_ENOGPU, "no device graph: %s", ss__slot.why);
        else if (ss__slot.graph != job->graph)
                rc = ss_err_set(&job->err, SS_ENOGPU, "the query's graph is not on the device");
        else
                rc = ss__run(ss__slot.gpu, s->stream, job);
        pthread_rwlock_unlock(&ss__slot.lock);
        return rc;
}

static const struct ss_worker_ops ss__ops = {
    .kind = SS_ENGINE_GPU,
    .name = "gpu",
    .execute = ss__execute,
    .destroy = free,
};

static void ss__close_locked(void)
{
        ss_gpu_close(ss__slot.gpu);
        /* The reference keeps the graph's address from being reused while
         * the slot names it, so comparing job->graph with it is sound. */
        ss_graph_unref(ss__slot.graph);
        ss__slot.gpu = NULL;
        ss__slot.graph = NULL;
        ss__slot.streams = 0;
}

void ss_gpu_workers_init(void)
{
        ss_gpu_process_init();
}

void ss_gpu_workers_load(const struct ss_config *cfg, struct ss_graph *g)
{
        struct ss_gpu_config gc;
        struct ss_err err = {0};
        struct ss_gpu *gpu = NULL;
        int rc;

        /* Free the old device copy first: two graphs rarely fit side by side. */
        pthread_rwlock_wrlock(&ss__slot.lock);
        ss__close_locked();
        pthread_rwlock_unlock(&ss__slot.lock);

        if (!cfg->gpu) {
                snprintf(ss__slot.why, sizeof(ss__slot.why), "the GPU is switched off (gpu no)");
                return;
        }
        ss_gpu_config_default(&gc);
        gc.device = (int)cfg->gpu_device;
        gc.streams = (unsigned)cfg->gpu_streams;
        gc.memory_limit = (uint64_t)cfg->gpu_memory_limit_mb << 20;
        rc = ss_gpu_delta_parse(cfg->gpu_delta, &gc, &err);
        if (rc == SS_OK)
                rc = ss_gpu_open(g, &gc, &gpu, &err);

        pthread_rwlock_wrlock(&ss__slot.lock);
        if (rc == SS_OK) {
                ss__slot.gpu = gpu;
                ss__slot.graph = ss_graph_ref(g);
                ss__slot.streams = ss_gpu_streams(gpu);
                ss_gpu_describe(gpu, ss__slot.why, sizeof(ss__slot.why));
                ss_log_info("gpu", "serving from %s", ss__slot.why);
        } else {
                snprintf(ss__slot.why, sizeof(ss__slot.why), "%s", err.msg);
                ss_log_warn("gpu", "the CPU serves every query: %s", err.msg);
        }
        pthread_rwlock_unlock(&ss__slot.lock);
}

void ss_gpu_workers_attach(struct ss_engine *e)
{
        pthread_rwlock_rdlock(&ss__slot.lock);
        unsigned want = ss__slot.streams;
        pthread_rwlock_unlock(&ss__slot.lock);
        /* Workers are added once, for as many streams as the first device
         * graph got; a later graph with fewer streams leaves the extra
         * workers handing their jobs to the CPU. */
        while (ss__slot.workers < want) {
                struct ss__stream *s = calloc(1, sizeof(*s));
                struct ss_err err;
                if (!s)
                        break;
                s->stream = ss__slot.workers;
                if (ss_engine_add_worker(e, &ss__ops, s, &err) != SS_OK) {
                        ss_log_warn("gpu", "cannot add a stream worker: %s", err.msg);
                        free(s);
                        break;
                }
                ss__slot.workers++;
        }
}

bool ss_gpu_workers_describe(char *buf, size_t len, unsigned *streams, uint64_t *mem_used,
                             unsigned *faults)
{
        pthread_rwlock_rdlock(&ss__slot.lock);
        bool serving = ss__slot.gpu && ss_gpu_healthy(ss__slot.gpu);
        snprintf(buf, len, "%s%s", ss__slot.gpu && !serving ? "unhealthy after faults: " : "",
                 ss__slot.why);
        *streams = ss__slot.streams;
        *mem_used = ss__slot.gpu ? ss_gpu_mem_used(ss__slot.gpu) : 0;
        *faults = ss__slot.gpu ? ss_gpu_faults(ss__slot.gpu) : 0;
        pthread_rwlock_unlock(&ss__slot.lock);
        return serving;
}

void ss_gpu_workers_close(void)
{
        pthread_rwlock_wrlock(&ss__slot.lock);
        ss__close_locked();
        pthread_rwlock_unlock(&ss__slot.lock);
}

#else /* no CUDA in this build */

void ss_gpu_workers_init(void)
{
}

void ss_gpu_workers_load(const struct ss_config *cfg, struct ss_graph *g)
{
        (void)cfg;
        (void)g;
}

void ss_gpu_workers_attach(struct ss_engine *e)
{
        (void)e;
}

bool ss_gpu_workers_describe(char *buf, size_t len, unsigned *streams, uint64_t *mem_used,
                             unsigned *faults)
{
        snprintf(buf, len, "built without CUDA: the CPU serves every query");
        *streams = 0;
        *mem_used = 0;
        *faults = 0;
        return false;
}

void ss_gpu_workers_close(void)
{
}

#endif
