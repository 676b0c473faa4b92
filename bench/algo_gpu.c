/* The GPU rows: every algorithm of src/kernels/gpu.h that is built, when the
 * build has CUDA and the machine a usable device. Setup uploads the graph
 * and allocates the workspace (one stream: the benchmark runs one query at a
 * time); a timed query is one ss_gpu_run() call that returns all N
 * distances to host memory, as a one-to-all client gets them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ss_config.h"

#if SS_HAVE_CUDA && SS_BENCH_HAVE_GPU

#include <cuda_runtime_api.h>

#include "gpu/gpu.h"

static struct ss_gpu_config gpu_cfg;
static bool gpu_cfg_set;

int ss__bench_gpu_configure(const char *delta, const char *bf_variant, struct ss_err *err)
{
        int rc;

        ss_gpu_config_default(&gpu_cfg);
        gpu_cfg.streams = 1;
        gpu_cfg_set = true;
        if (delta && (rc = ss_gpu_delta_parse(delta, &gpu_cfg, err)))
                return rc;
        if (bf_variant && (rc = ss_gpu_bf_variant_parse(bf_variant, &gpu_cfg, err)))
                return rc;
        return 0;
}

/* Probes once; later calls return the cached answer. */
static int probe(struct ss_gpu_info *info, char *why, size_t len)
{
        static int done, rc;
        static struct ss_gpu_info cached;
        static char reason[SS_ERRMSG_MAX];

        if (!done) {
                struct ss_err err;
                ss_err_clear(&err);
                rc = ss_gpu_probe(&cached, &err);
                snprintf(reason, sizeof(reason), "%s", err.msg);
                done = 1;
        }
        if (info)
                *info = cached;
        if (rc && why)
                snprintf(why, len, "no usable GPU: %s", reason);
        return rc;
}

void ss__bench_gpu_describe(char *buf, size_t len)
{
        struct ss_gpu_info info;
        size_t o = 0;

        if (probe(&info, buf, len))
                return;
        for (int i = 0; i < info.count && i < SS_GPU_MAX_DEVICES && o < len; i++)
                o += (size_t)snprintf(buf + o, len - o, "%s%s (sm_%d%d, %d SMs, %.0f GiB)",
                                      i ? "; " : "", info.dev[i].name, info.dev[i].cc_major,
                                      info.dev[i].cc_minor, info.dev[i].sm_count,
                                      (double)info.dev[i].total_mem / (1024.0 * 1024 * 1024));
        if (o < len)
                snprintf(buf + o, len - o, "; CUDA driver %d, runtime %d", info.driver_version,
                         info.runtime_version);
}

struct gpu_state {
        struct ss_gpu *gpu;
        enum ss_gpu_algo algo;
        uint32_t n;
        ss_dist *all;     /* the query's output: every distance */
        bool pinned;      /* all came from cudaMallocHost */
        uint64_t last_ns; /* device time of the last query */
};

static void free_all(struct gpu_state *s)
{
        if (s->pinned)
                cudaFreeHost(s->all);
        else
                free(s->all);
        s->all = NULL;
}

static bool gpu_available_algo(enum ss_gpu_algo a, char *why, size_t len)
{
        if (!ss_gpu_algo_available(a)) {
                snprintf(why, len, "GPU algorithm '%s' not built", ss_gpu_algo_name(a));
                return false;
        }
        return probe(NULL, why, len) == 0;
}

static int gpu_setup_algo(enum ss_gpu_algo a, void **state, const struct ss_graph *g,
                          struct ss_err *err)
{
        struct gpu_state *s = calloc(1, sizeof(*s));
        int rc;

        if (!s)
                return ss_err_set(err, SS_ENOMEM, "out of memory for the GPU state");
        if (!gpu_cfg_set)
                ss__bench_gpu_configure(NULL, NULL, NULL);
        s->algo = a;
        s->n = g->n;
        /* Pinned memory, as the daemon's one-to-all answers use: the copy of
         * N distances then runs at full PCIe speed instead of through a
         * pageable staging buffer. */
        s->pinned = cudaMallocHost((void **)&s->all, (size_t)g->n * sizeof(ss_dist)) == cudaSuccess;
        if (!s->pinned) {
                cudaGetLastError(); /* clear the failed call's error */
                s->all = malloc((size_t)g->n * sizeof(ss_dist));
        }
        if (!s->all) {
                free(s);
                return ss_err_set(err, SS_ENOMEM, "out of memory for %u distances", g->n);
        }
        memset(s->all, 0, (size_t)g->n * sizeof(ss_dist));
        rc = ss_gpu_open(g, &gpu_cfg, &s->gpu, err);
        if (rc) {
                free_all(s);
                free(s);
                return rc;
        }
        *state = s;
        return 0;
}

static int gpu_run(void *state, uint32_t source, uint64_t deadline_ns, struct ss_err *err)
{
        struct gpu_state *s = state;
        struct ss_cancel cancel = {.deadline_ns = deadline_ns, .flag = NULL};
        struct ss_gpu_query q = {
            .algo = s->algo,
            .source = source,
            .target = SS_NO_NODE,
            .all = s->all,
            .cancel = deadline_ns ? &cancel : NULL,
        };
        struct ss_gpu_result r;

        int rc;

        memset(&r, 0, sizeof(r));
        rc = ss_gpu_run(s->gpu, 0, &q, &r, err);
        s->last_ns = r.total_ns;
        return rc;
}

static uint64_t gpu_last_device_ns(void *state)
{
        struct gpu_state *s = state;
        return s->last_ns;
}

static void gpu_read(void *state, ss_dist *out)
{
        struct gpu_state *s = state;
        memcpy(out, s->all, (size_t)s->n * sizeof(ss_dist));
}

static uint64_t gpu_device_bytes(void *state)
{
        struct gpu_state *s = state;
        return s ? ss_gpu_mem_used(s->gpu) : 0;
}

static void gpu_teardown(void *state)
{
        struct gpu_state *s = state;
        if (!s)
                return;
        ss_gpu_close(s->gpu);
        free_all(s);
        free(s);
}

static bool delta_available(char *why, size_t len)
{
        return gpu_available_algo(SS_GPU_DELTA, why, len);
}

static int delta_setup(void **state, const struct ss_graph *g, struct ss_err *err)
{
        return gpu_setup_algo(SS_GPU_DELTA, state, g, err);
}

static bool bf_available(char *why, size_t len)
{
        return gpu_available_algo(SS_GPU_BF, why, len);
}

static int bf_setup(void **state, const struct ss_graph *g, struct ss_err *err)
{
        return gpu_setup_algo(SS_GPU_BF, state, g, err);
}

#else /* no GPU library in this build */

int ss__bench_gpu_configure(const char *delta, const char *bf_variant, struct ss_err *err)
{
        if (delta || bf_variant)
                return ss_err_set(err, SS_ENOGPU, "GPU options given, but built without CUDA");
        return 0;
}

void ss__bench_gpu_describe(char *buf, size_t len)
{
        snprintf(buf, len, "none (built without CUDA)");
}

static bool no_cuda(char *why, size_t len)
{
        snprintf(why, len, "no GPU engine in this build (needs CUDA)");
        return false;
}

#define delta_available    no_cuda
#define bf_available       no_cuda
#define delta_setup        NULL
#define bf_setup           NULL
#define gpu_run            NULL
#define gpu_read           NULL
#define gpu_device_bytes   NULL
#define gpu_last_device_ns NULL
#define gpu_teardown       NULL

#endif

const struct ss__bench_algo ss__bench_algo_gpu_delta = {
    .name = "gpu-delta",
    .label = "GPU Δ-stepping",
    .slow = false,
    .available = delta_available,
    .setup = delta_setup,
    .run = gpu_run,
    .read = gpu_read,
    .device_bytes = gpu_device_bytes,
    .last_device_ns = gpu_last_device_ns,
    .teardown = gpu_teardown,
};

const struct ss__bench_algo ss__bench_algo_gpu_bf = {
    .name = "gpu-bf",
    .label = "GPU Bellman-Ford",
    .slow = false,
    .available = bf_available,
    .setup = bf_setup,
    .run = gpu_run,
    .read = gpu_read,
    .device_bytes = gpu_device_bytes,
    .last_device_ns = gpu_last_device_ns,
    .teardown = gpu_teardown,
};
