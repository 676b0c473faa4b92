/* The GPU engine's host side: probing, the device-resident graph, per-stream
 * workspaces, running a query, health. Plain C against the CUDA runtime's C
 * API; the kernels live in the .cu files behind kernels.h.
 */
#include "gpu/gpu.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/lend.h"
#include "core/log.h"
#include "gpu/gpu_internal.h"

static _Thread_local cudaError_t ss__last_error = cudaSuccess;

int ss__cuda_fail(struct ss_err *err, const char *call, cudaError_t e, const char *file, int line)
{
        ss__last_error = e;
        const char *f = strrchr(file, '/');
        return ss_err_set(err, SS_EGPU, "%s failed: %s (%s) at %s:%d", call, cudaGetErrorString(e),
                          cudaGetErrorName(e), f ? f + 1 : file, line);
}

cudaError_t ss__last_cuda_error(void)
{
        return ss__last_error;
}

void ss__clear_last_error(void)
{
        ss__last_error = cudaSuccess;
}

int ss__launch_coop(const void *kernel, const char *name, struct ss__ws *ws, void **args,
                    struct ss_err *err)
{
        return ss__launch_coop_grid(kernel, name, ws, ws->blocks, args, err);
}

int ss__launch_coop_grid(const void *kernel, const char *name, struct ss__ws *ws, unsigned blocks,
                         void **args, struct ss_err *err)
{
        cudaError_t e = cudaLaunchCooperativeKernel(kernel, (dim3){blocks, 1, 1},
                                                    (dim3){SS__BLOCK, 1, 1}, args, 0, ws->stream);
        if (e == cudaSuccess)
                e = cudaGetLastError();
        if (e != cudaSuccess) {
                cudaGetLastError(); /* leave no error for this thread's next launch */
                char call[128];
                snprintf(call, sizeof(call), "cooperative launch of %s (%u blocks of %d threads)",
                         name, blocks, SS__BLOCK);
                return ss__cuda_fail(err, call, e, __FILE__, __LINE__);
        }
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Names and configuration                                             */
/* ------------------------------------------------------------------ */

static const struct {
        const char *name;
        ss__launcher launch;
} ss__algos[SS_GPU_ALGO_COUNT] = {
    [SS_GPU_DELTA] = {"delta", ss__launch_delta},
    [SS_GPU_BF] = {"bf", ss__launch_bf},
    [SS_GPU_BF_ELL] = {"bf-ell", ss__launch_bf_ell},
    [SS_GPU_BF_QUEUE] = {"bf-queue", ss__launch_bf_queue},
    [SS_GPU_DIJKSTRA] = {"gpu-dijkstra", ss__launch_dijkstra},
    [SS_GPU_BF_EDGELIST] = {"bf-edgelist", ss__launch_bf_edgelist},
};

const char *ss_gpu_algo_name(enum ss_gpu_algo a)
{
        return (unsigned)a < SS_GPU_ALGO_COUNT ? ss__algos[a].name : "unknown";
}

int ss_gpu_algo_parse(const char *name)
{
        for (int i = 0; i < SS_GPU_ALGO_COUNT; i++)
                if (name && strcmp(name, ss__algos[i].name) == 0)
                        return i;
        return -1;
}

bool ss_gpu_algo_available(enum ss_gpu_algo a)
{
        return (unsigned)a < SS_GPU_ALGO_COUNT && ss__algos[a].launch != NULL;
}

void ss_gpu_config_default(struct ss_gpu_config *cfg)
{
        memset(cfg, 0, sizeof(*cfg));
        cfg->device = 0;
        cfg->streams = 4;
        cfg->memory_limit = 0;
        cfg->delta_rule = SS_GPU_DELTA_TUNED;
        cfg->delta = 0;
        cfg->bf_variant = SS_GPU_BF_AUTO;
        cfg->blocks = 0;
        cfg->inject_fault = 0;
        cfg->unhealthy_after = 3;
        cfg->batch = 0;
        cfg->batch_streams = 0;
        cfg->batch_memory = 0;
}

int ss_gpu_delta_parse(const char *s, struct ss_gpu_config *cfg, struct ss_err *err)
{
        if (!s || !*s)
                return ss_err_set(err, SS_EINVAL, "delta: empty value");
        if (strcmp(s, "tuned") == 0) {
                cfg->delta_rule = SS_GPU_DELTA_TUNED;
        } else if (strcmp(s, "median") == 0) {
                cfg->delta_rule = SS_GPU_DELTA_MEDIAN;
        } else if (strcmp(s, "mean") == 0) {
                cfg->delta_rule = SS_GPU_DELTA_MEAN;
        } else if (strcmp(s, "maxw-over-maxdeg") == 0) {
                cfg->delta_rule = SS_GPU_DELTA_MAXW_MAXDEG;
        } else {
                char *end = NULL;
                if (*s < '0' || *s > '9')
                        goto bad;
                unsigned long long v = strtoull(s, &end, 10);
                if (*end || v == 0 || v == ULLONG_MAX)
                        goto bad;
                cfg->delta_rule = SS_GPU_DELTA_FIXED;
                cfg->delta = v;
        }
        return SS_OK;
bad:
        return ss_err_set(err, SS_EINVAL,
                          "delta: '%s' is not tuned, median, mean, maxw-over-maxdeg or a positive "
                          "integer",
                          s);
}

int ss_gpu_bf_variant_parse(const char *s, struct ss_gpu_config *cfg, struct ss_err *err)
{
        if (s && strcmp(s, "auto") == 0)
                cfg->bf_variant = SS_GPU_BF_AUTO;
        else if (s && strcmp(s, "scalar") == 0)
                cfg->bf_variant = SS_GPU_BF_SCALAR;
        else if (s && strcmp(s, "vector") == 0)
                cfg->bf_variant = SS_GPU_BF_VECTOR;
        else
                return ss_err_set(err, SS_EINVAL, "bf variant: '%s' is not auto, scalar or vector",
                                  s ? s : "");
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Probing                                                             */
/* ------------------------------------------------------------------ */

/* CUDA maps streams onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 by
 * default); streams that share a queue run one after another. With 16 streams
 * of point-to-point queries that left NY-d at 900 queries/s against 3,345 with
 * 32 queues (docs/gpu.md). The variable is read when the CUDA context is
 * created. */
static void ss__process_init_once(void)
{
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
}

void ss_gpu_process_init(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, ss__process_init_once);
}

int ss_gpu_probe(struct ss_gpu_info *out, struct ss_err *err)
{
        ss_gpu_process_init();
        memset(out, 0, sizeof(*out));
        cudaRuntimeGetVersion(&out->runtime_version);
        cudaError_t e = cudaDriverGetVersion(&out->driver_version);
        if (e != cudaSuccess || out->driver_version == 0)
                return ss_err_set(err, SS_ENOGPU, "no CUDA driver is installed");
        if (out->driver_version < out->runtime_version)
                return ss_err_set(err, SS_ENOGPU,
                                  "the CUDA driver (version %d) is older than the runtime the "
                                  "engine was built with (%d)",
                                  out->driver_version, out->runtime_version);
        int count = 0;
        e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess)
                return ss_err_set(err, SS_ENOGPU, "no usable CUDA device: %s",
                                  cudaGetErrorString(e));
        if (count == 0)
                return ss_err_set(err, SS_ENOGPU, "no CUDA device is present");
        out->count = count;
        int usable = 0;
        for (int i = 0; i < count && i < SS_GPU_MAX_DEVICES; i++) {
                struct ss_gpu_device_info *d = &out->dev[i];
                struct cudaDeviceProp prop;
                d->id = i;
                if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
                        continue;
                snprintf(d->name, sizeof(d->name), "%s", prop.name);
                d->cc_major = prop.major;
                d->cc_minor = prop.minor;
                d->sm_count = prop.multiProcessorCount;
                d->total_mem = prop.totalGlobalMem;
                d->cooperative = prop.cooperativeLaunch != 0;
                size_t fr = 0, tot = 0;
                int prev = 0;
                cudaGetDevice(&prev);
                if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&fr, &tot) == cudaSuccess)
                        d->free_mem = fr;
                cudaSetDevice(prev);
                if (d->cooperative)
                        usable++;
        }
        if (!usable)
                return ss_err_set(err, SS_ENOGPU, "no CUDA device supports cooperative launches");
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */
/* ------------------------------------------------------------------ */

/* Median arc weight in two counting passes over 16-bit halves, without a copy. */
static uint32_t ss__median_weight(const struct ss_graph *g)
{
        uint64_t *h = calloc(65536, sizeof(uint64_t));
        if (!h)
                return 1;
        const uint64_t k = (g->m - 1) / 2; /* lower median */
        for (uint64_t i = 0; i < g->m; i++)
                h[g->w[i] >> 16]++;
        uint64_t acc = 0;
        uint32_t hi = 0;
        for (; hi < 65536; hi++) {
                if (acc + h[hi] > k)
                        break;
                acc += h[hi];
        }
        memset(h, 0, 65536 * sizeof(uint64_t));
        for (uint64_t i = 0; i < g->m; i++)
                if ((g->w[i] >> 16) == hi)
                        h[g->w[i] & 0xffff]++;
        uint32_t lo = 0;
        for (; lo < 65536; lo++) {
                if (acc + h[lo] > k)
                        break;
                acc += h[lo];
        }
        free(h);
        return (hi << 16) | lo;
}

uint64_t ss__choose_delta(const struct ss_graph *g, const struct ss_gpu_config *cfg)
{
        uint64_t d = 1;
        if (g->m == 0)
                return 1;
        if (cfg->delta_rule == SS_GPU_DELTA_FIXED)
                return cfg->delta ? cfg->delta : 1;
        if (cfg->delta_rule == SS_GPU_DELTA_MEDIAN) {
                d = ss__median_weight(g);
        } else if (cfg->delta_rule == SS_GPU_DELTA_MAXW_MAXDEG) {
                d = g->max_out_degree ? g->max_w / g->max_out_degree : g->max_w;
        } else {
                uint64_t sum = 0;
                for (uint64_t i = 0; i < g->m; i++)
                        sum += g->w[i];
                d = sum / g->m;
                if (cfg->delta_rule == SS_GPU_DELTA_TUNED)
                        d *= SS__TUNED_MEAN_FACTOR;
        }
        return d ? d : 1;
}

void ss_gpu_warm(int id)
{
        if (cudaSetDevice(id) == cudaSuccess)
                cudaFree(NULL);
        cudaGetLastError(); /* a failure here is the first use's to report */
}

static int ss__cmp_arc(const void *a, const void *b)
{
        const uint2 *x = a, *y = b;
        if (x->y != y->y)
                return x->y < y->y ? -1 : 1;
        return x->x < y->x ? -1 : x->x > y->x;
}

uint2 *ss__pack_arcs(const struct ss_graph *g)
{
        uint2 *a = malloc((g->m ? g->m : 1) * sizeof(uint2));
        if (!a)
                return NULL;
        for (uint32_t v = 0; v < g->n; v++) {
                const uint64_t b = g->row[v], e = g->row[v + 1];
                for (uint64_t i = b; i < e; i++) {
                        a[i].x = g->col[i];
                        a[i].y = g->w[i];
                }
                if (e - b <= 24) {
                        for (uint64_t i = b + 1; i < e; i++) {
                                uint2 t = a[i];
                                uint64_t j = i;
                                while (j > b && ss__cmp_arc(&a[j - 1], &t) > 0) {
                                        a[j] = a[j - 1];
                                        j--;
                                }
                                a[j] = t;
                        }
                } else {
                        qsort(a + b, e - b, sizeof(uint2), ss__cmp_arc);
                }
        }
        return a;
}

static uint64_t ss__ws_bytes(uint32_t n)
{
        /* dist 8, two queues 8, far piles 8, settled list 4, three stamps 12. */
        return (uint64_t)n * 40 + sizeof(struct ss__ctl) + SS__TCHUNK * sizeof(uint32_t);
}

static void ss__ws_free(struct ss__ws *w, uint32_t *d_targets)
{
        if (w->stream)
                cudaStreamSynchronize(w->stream);
        cudaFree(d_targets);
        cudaFreeHost(w->hctl);
        cudaFreeHost((void *)w->hcancel);
        cudaFreeHost(w->htargets);
        cudaFreeHost(w->hout);
        if (w->ev_start)
                cudaEventDestroy(w->ev_start);
        if (w->ev_search)
                cudaEventDestroy(w->ev_search);
        if (w->ev_end)
                cudaEventDestroy(w->ev_end);
        if (w->stream)
                cudaStreamDestroy(w->stream);
        memset(w, 0, sizeof(*w));
}

/* A stream's own part of its workspace: small, made at open for every
 * stream; the arrays of a search come from the arenas. */
static int ss__ws_alloc(struct ss__ws *w, uint32_t **d_targets, unsigned blocks, unsigned local_max,
                        struct ss_err *err)
{
        memset(w, 0, sizeof(*w));
        SS__CUDA(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
        SS__CUDA(cudaEventCreate(&w->ev_start));
        SS__CUDA(cudaEventCreate(&w->ev_search));
        SS__CUDA(cudaEventCreate(&w->ev_end));
        SS__CUDA(cudaMalloc((void **)d_targets, SS__TCHUNK * sizeof(uint32_t)));
        SS__CUDA(cudaHostAlloc((void **)&w->hctl, sizeof(struct ss__ctl), cudaHostAllocDefault));
        SS__CUDA(cudaHostAlloc((void **)&w->hcancel, sizeof(int), cudaHostAllocMapped));
        *w->hcancel = 0;
        SS__CUDA(cudaHostGetDevicePointer((void **)&w->dcancel, (void *)w->hcancel, 0));
        SS__CUDA(cudaHostAlloc((void **)&w->htargets, SS__TCHUNK * sizeof(uint32_t),
                               cudaHostAllocDefault));
        SS__CUDA(cudaHostAlloc((void **)&w->hout, SS__TCHUNK * sizeof(unsigned long long),
                               cudaHostAllocDefault));
        w->blocks = blocks;
        w->local_max = local_max;
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Lent workspaces                                                     */
/* ------------------------------------------------------------------ */

static void ss__arena_drop(void *ctx, void *obj)
{
        struct ss_gpu *gpu = ctx;
        struct ss__arena *a = obj;
        cudaSetDevice(gpu->device);
        cudaFree(a->dist);
        cudaFree(a->q);
        cudaFree(a->far);
        cudaFree(a->set);
        cudaFree(a->nstamp);
        cudaFree(a->ctl);
        ss__unclaim(gpu, gpu->ws_bytes);
        free(a);
}

/* Claims bytes under the limit for a workspace about to be made (other
 * users of the device are not counted, and cudaMalloc has the last word);
 * false when they do not fit. Makes on several streams claim at once. */
bool ss__claim(struct ss_gpu *gpu, uint64_t bytes)
{
        uint_fast64_t cur = atomic_load(&gpu->lent_bytes);
        do {
                if (gpu->mem_used + atomic_load(&gpu->fam.bytes) + cur + bytes > gpu->limit)
                        return false;
        } while (!atomic_compare_exchange_weak(&gpu->lent_bytes, &cur, cur + bytes));
        return true;
}

void ss__unclaim(struct ss_gpu *gpu, uint64_t bytes)
{
        atomic_fetch_sub(&gpu->lent_bytes, bytes);
}

static void *ss__arena_make(void *ctx, struct ss_err *err)
{
        struct ss_gpu *gpu = ctx;
        const size_t n = gpu->g.n, n4 = n * 4;
        if (!ss__claim(gpu, gpu->ws_bytes)) {
                ss_err_set(err, SS_ENOGPU,
                           "no room for a search workspace (%.1f MiB) under the %.1f MiB limit",
                           gpu->ws_bytes / SS__MIB, gpu->limit / SS__MIB);
                return NULL;
        }
        struct ss__arena *a = calloc(1, sizeof(*a));
        if (!a) {
                ss__unclaim(gpu, gpu->ws_bytes);
                ss_err_set(err, SS_ENOMEM, "no memory for a search workspace");
                return NULL;
        }
        cudaError_t e = cudaSetDevice(gpu->device);
        /* At least 96 settled entries: bf_edgelist.cu keeps three bitmaps
         * of the vertices in it. The stamps start at generation 0 with the
         * control block that counts them. */
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->dist, n * 8);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->q, 2 * n4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->far, 2 * n4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->set, (n > 96 ? n : 96) * 4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->nstamp, 3 * n4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&a->ctl, sizeof(struct ss__ctl));
        if (e == cudaSuccess)
                e = cudaMemset(a->nstamp, 0, 3 * n4);
        if (e == cudaSuccess)
                e = cudaMemset(a->ctl, 0, sizeof(struct ss__ctl));
        if (e != cudaSuccess) {
                /* Out of memory is no room (the caller waits or answers
                 * on the CPU); anything else is the device's fault. */
                if (e == cudaErrorMemoryAllocation)
                        ss_err_set(err, SS_ENOGPU, "no room for a search workspace (%.1f MiB): %s",
                                   gpu->ws_bytes / SS__MIB, cudaGetErrorString(e));
                else
                        ss__cuda_fail(err, "cudaMalloc (search workspace)", e, __FILE__, __LINE__);
                cudaGetLastError();
                ss__arena_drop(gpu, a);
                return NULL;
        }
        return a;
}

static void ss__bws_drop(void *ctx, void *obj)
{
        struct ss_gpu *gpu = ctx;
        cudaSetDevice(gpu->device);
        ss__bws_free(obj);
        ss__unclaim(gpu, ss__bws_bytes(gpu->g.n, gpu->kcap));
}

static void *ss__bws_make(void *ctx, struct ss_err *err)
{
        struct ss_gpu *gpu = ctx;
        const uint64_t bytes = ss__bws_bytes(gpu->g.n, gpu->kcap);
        if (!ss__claim(gpu, bytes)) {
                ss_err_set(err, SS_ENOGPU,
                           "no room for a batch workspace (%.1f MiB) under the %.1f MiB limit",
                           bytes / SS__MIB, gpu->limit / SS__MIB);
                return NULL;
        }
        struct ss__bhost *b = NULL;
        cudaError_t e = cudaSetDevice(gpu->device);
        int rc = e == cudaSuccess ? ss__bws_alloc(&b, gpu->g.n, gpu->kcap, gpu->bblocks, err)
                                  : ss__cuda_fail(err, "cudaSetDevice", e, __FILE__, __LINE__);
        if (rc != SS_OK) {
                ss__unclaim(gpu, bytes);
                /* Out of memory is no room, as for the arenas. */
                if (rc == SS_EGPU && strstr(err->msg, "out of memory"))
                        err->code = SS_ENOGPU;
                cudaGetLastError();
                return NULL;
        }
        return b;
}

static const struct ss_lend_ops ss__arena_ops = {ss__arena_make, ss__arena_drop};
static const struct ss_lend_ops ss__bws_ops = {ss__bws_make, ss__bws_drop};

int ss__arena_take(struct ss_gpu *gpu, struct ss__ws *w, const struct ss_cancel *cancel,
                   struct ss_err *err)
{
        void *obj = NULL;
        int rc = ss_lender_take(gpu->arenas, cancel, &obj, err);
        if (rc != SS_OK)
                return rc;
        struct ss__arena *a = obj;
        const size_t n = gpu->g.n;
        w->arena = a;
        w->dist = a->dist;
        w->q[0] = a->q;
        w->q[1] = a->q + n;
        w->far[0] = a->far;
        w->far[1] = a->far + n;
        w->set = a->set;
        w->nstamp = a->nstamp;
        w->fstamp = a->nstamp + n;
        w->sstamp = a->nstamp + 2 * n;
        w->ctl = a->ctl;
        return SS_OK;
}

void ss__arena_give(struct ss_gpu *gpu, struct ss__ws *w)
{
        if (!w->arena)
                return;
        /* Another stream may take the arrays next: nothing of this run may
         * still be writing them (a cancelled kernel may be stopping). */
        cudaStreamSynchronize(w->stream);
        cudaGetLastError();
        void *a = w->arena;
        w->arena = NULL;
        w->dist = NULL;
        w->q[0] = w->q[1] = w->far[0] = w->far[1] = w->set = NULL;
        w->nstamp = w->fstamp = w->sstamp = NULL;
        w->ctl = NULL;
        ss_lender_give(gpu->arenas, a);
}

int ss__bws_take(struct ss_gpu *gpu, const struct ss_cancel *cancel, struct ss__bhost **out,
                 struct ss_err *err)
{
        void *obj = NULL;
        const int rc = gpu->batches ? ss_lender_take(gpu->batches, cancel, &obj, err)
                                    : ss_err_set(err, SS_EINVAL, "no batch workspaces");
        *out = obj;
        return rc;
}

void ss__bws_give(struct ss_gpu *gpu, struct ss__ws *sw, struct ss__bhost *b)
{
        cudaStreamSynchronize(sw->stream);
        cudaGetLastError();
        ss_lender_give(gpu->batches, b);
}

void ss_gpu_trim(struct ss_gpu *gpu, bool all)
{
        const uint64_t idle_ns = all ? 0 : gpu->idle_ns;
        if (gpu->arenas)
                ss_lender_trim(gpu->arenas, idle_ns);
        if (gpu->batches)
                ss_lender_trim(gpu->batches, idle_ns);
}

void ss_gpu_workspaces(const struct ss_gpu *gpu, struct ss_gpu_ws_stats *st)
{
        struct ss_lend_stats a = {0}, b = {0};
        memset(st, 0, sizeof(*st));
        if (gpu->arenas)
                ss_lender_stats(gpu->arenas, &a);
        if (gpu->batches)
                ss_lender_stats(gpu->batches, &b);
        st->single_made = a.made;
        st->single_lent = a.lent;
        st->single_peak = a.peak;
        st->batch_made = b.made;
        st->batch_lent = b.lent;
        st->batch_peak = b.peak;
        st->waits = a.waits + b.waits;
        st->bytes = atomic_load(&((struct ss_gpu *)gpu)->lent_bytes);
}

void ss_gpu_close(struct ss_gpu *gpu)
{
        if (!gpu)
                return;
        cudaSetDevice(gpu->device);
        for (unsigned i = 0; i < gpu->nstreams; i++)
                ss__ws_free(&gpu->ws[i], gpu->d_targets[i]);
        ss_lender_free(gpu->arenas);
        ss_lender_free(gpu->batches);
        cudaFree(gpu->d_row);
        cudaFree(gpu->d_arcs);
        cudaFree(gpu->d_split);
        cudaFree(gpu->d_rrow);
        cudaFree(gpu->d_rarcs);
        cudaFree(gpu->d_rsplit);
        cudaFree(gpu->d_bsplit);
        cudaFree(gpu->d_rbsplit);
        free(gpu->ws);
        free(gpu->d_targets);
        ss__family_free(gpu);
        if (gpu->resident) {
                pthread_cond_destroy(&gpu->blk_cond);
                pthread_mutex_destroy(&gpu->blk_lock);
        }
        free(gpu);
}

/* SS_GPU_HOST_SORT set (and not "0"): sort and reverse on the host. */
static bool ss__host_sort_forced(void)
{
        const char *hs = getenv("SS_GPU_HOST_SORT");
        return hs && *hs && strcmp(hs, "0") != 0;
}

/* Uploads the graph: 32-bit row offsets, and the arcs ordered by weight within
 * each vertex, sorted on the device (sort.cu) or, when the sort's temporary
 * buffers pass sort_budget or do not fit, or SS_GPU_HOST_SORT is set, on the
 * host. */
static int ss__upload(const struct ss_graph *g, uint32_t **d_row, uint2 **d_arcs,
                      uint32_t **d_split, uint64_t sort_budget, struct ss_err *err)
{
        int rc = SS_OK;
        uint2 *arcs = NULL;
        uint32_t *row32 = malloc(((size_t)g->n + 1) * sizeof(uint32_t));
        if (!row32)
                return ss_err_set(err, SS_ENOMEM, "no host memory for %u row offsets", g->n + 1);
        for (uint64_t v = 0; v <= g->n; v++)
                row32[v] = (uint32_t)g->row[v];
        cudaError_t e;
        if ((e = cudaMalloc((void **)d_row, ((size_t)g->n + 1) * 4)) != cudaSuccess ||
            (e = cudaMalloc((void **)d_arcs, (g->m ? g->m : 1) * sizeof(uint2))) != cudaSuccess ||
            (e = cudaMalloc((void **)d_split, (size_t)g->n * 4)) != cudaSuccess) {
                rc = ss__cuda_fail(err, "cudaMalloc (graph)", e, __FILE__, __LINE__);
                goto out;
        }
        if ((e = cudaMemcpy(*d_row, row32, ((size_t)g->n + 1) * 4, cudaMemcpyHostToDevice)) !=
            cudaSuccess) {
                rc = ss__cuda_fail(err, "cudaMemcpy (row offsets)", e, __FILE__, __LINE__);
                goto out;
        }
        if (!ss__host_sort_forced()) {
                struct ss_err serr = {0};
                rc = ss__sort_arcs(g->n, g->m, *d_row, g->col, g->w, *d_arcs, sort_budget, &serr);
                if (rc != SS_ENOMEM) {
                        if (rc)
                                *err = serr;
                        goto out;
                }
                ss_log_info("gpu", "%s; sorting the arcs on the host", serr.msg);
        }
        rc = SS_OK;
        if (!(arcs = ss__pack_arcs(g))) {
                rc = ss_err_set(err, SS_ENOMEM, "no host memory to pack %" PRIu64 " arcs", g->m);
                goto out;
        }
        if ((e = cudaMemcpy(*d_arcs, arcs, g->m * sizeof(uint2), cudaMemcpyHostToDevice)) !=
            cudaSuccess)
                rc = ss__cuda_fail(err, "cudaMemcpy (arcs)", e, __FILE__, __LINE__);
out:
        free(row32);
        free(arcs);
        return rc;
}

static int ss__upload_reverse_host(struct ss_gpu *gpu, const struct ss_graph *g,
                                   uint64_t sort_budget, struct ss_err *err)
{
        struct ss_graph *rev = ss_graph_reverse(g);
        if (!rev)
                return ss_err_set(err, SS_ENOMEM, "no host memory for the reverse graph");
        int rc = ss__upload(rev, &gpu->d_rrow, &gpu->d_rarcs, &gpu->d_rsplit, sort_budget, err);
        gpu->max_in_degree = 0;
        for (uint32_t v = 0; v < rev->n; v++)
                if (rev->row[v + 1] - rev->row[v] > gpu->max_in_degree)
                        gpu->max_in_degree = (uint32_t)(rev->row[v + 1] - rev->row[v]);
        ss_graph_unref(rev);
        return rc;
}

/* The reverse graph, built on the device from the forward one; on the
 * host and uploaded when the device has no room for the sort's buffers or
 * SS_GPU_HOST_SORT is set. */
static int ss__upload_reverse(struct ss_gpu *gpu, const struct ss_graph *g, uint64_t sort_budget,
                              struct ss_err *err)
{
        if (ss__host_sort_forced())
                return ss__upload_reverse_host(gpu, g, sort_budget, err);
        cudaError_t e;
        if ((e = cudaMalloc((void **)&gpu->d_rrow, ((size_t)g->n + 1) * 4)) != cudaSuccess ||
            (e = cudaMalloc((void **)&gpu->d_rarcs, (g->m ? g->m : 1) * sizeof(uint2))) !=
                cudaSuccess ||
            (e = cudaMalloc((void **)&gpu->d_rsplit, (size_t)g->n * 4)) != cudaSuccess)
                return ss__cuda_fail(err, "cudaMalloc (reverse graph)", e, __FILE__, __LINE__);
        struct ss_err rerr = {0};
        int rc = ss__reverse_arcs(g->n, g->m, gpu->d_row, gpu->d_arcs, gpu->d_rrow, gpu->d_rarcs,
                                  &gpu->max_in_degree, sort_budget, &rerr);
        if (rc != SS_ENOMEM) {
                if (rc)
                        *err = rerr;
                return rc;
        }
        ss_log_info("gpu", "%s; reversing the graph on the host", rerr.msg);
        cudaFree(gpu->d_rrow);
        cudaFree(gpu->d_rarcs);
        cudaFree(gpu->d_rsplit);
        gpu->d_rrow = gpu->d_rsplit = NULL;
        gpu->d_rarcs = NULL;
        return ss__upload_reverse_host(gpu, g, sort_budget, err);
}

/* The batches' Δ (SS__BATCH_MEAN_FACTOR mean weights, or SS_GPU_BATCH_DELTA
 * of them) and its light/heavy split for the forward and reverse graphs. */
static int ss__batch_delta(struct ss_gpu *gpu, const struct ss_graph *g, struct ss_err *err)
{
        uint64_t sum = 0;
        for (uint64_t i = 0; i < g->m; i++)
                sum += g->w[i];
        double factor = SS__BATCH_MEAN_FACTOR;
        const char *env = getenv("SS_GPU_BATCH_DELTA");
        if (env && *env && strtod(env, NULL) > 0)
                factor = strtod(env, NULL);
        uint64_t delta = (uint64_t)(factor * (g->m ? (double)sum / g->m : 1));
        if (delta == 0)
                delta = 1;
        SS__CUDA(cudaMalloc((void **)&gpu->d_bsplit, (size_t)g->n * 4));
        gpu->gb = gpu->g;
        gpu->gb.split = gpu->d_bsplit;
        gpu->gb.delta = delta;
        gpu->gb.has_heavy = gpu->max_w > delta;
        int rc = ss__launch_split(&gpu->gb, 0, err);
        if (rc)
                return rc;
        if (gpu->has_rev) {
                SS__CUDA(cudaMalloc((void **)&gpu->d_rbsplit, (size_t)g->n * 4));
                gpu->rgb = gpu->rg;
                gpu->rgb.split = gpu->d_rbsplit;
                gpu->rgb.delta = delta;
                gpu->rgb.has_heavy = gpu->gb.has_heavy;
                if ((rc = ss__launch_split(&gpu->rgb, 0, err)))
                        return rc;
        }
        SS__CUDA(cudaDeviceSynchronize());
        return SS_OK;
}

int ss_gpu_set_delta(struct ss_gpu *gpu, uint64_t delta, struct ss_err *err)
{
        if (delta == 0)
                return ss_err_set(err, SS_EINVAL, "delta must be at least 1");
        SS__CUDA(cudaSetDevice(gpu->device));
        gpu->g.delta = delta;
        gpu->g.has_heavy = gpu->max_w > delta;
        int rc = ss__launch_split(&gpu->g, 0, err);
        if (rc)
                return rc;
        if (gpu->has_rev) {
                gpu->rg.delta = delta;
                gpu->rg.has_heavy = gpu->g.has_heavy;
                if ((rc = ss__launch_split(&gpu->rg, 0, err)))
                        return rc;
        }
        SS__CUDA(cudaDeviceSynchronize());
        return SS_OK;
}

/* Blocks of the Δ-stepping's cluster for frontiers of up to *max vertices
 * (delta.cu; 0: none): sm_90 and later, for graphs whose arrays (graph and
 * distances, `arrays` bytes) stay within SS__CLUSTER_L2 times the L2 cache.
 * 16 measured fastest on NY-d and a generated 1.07M-node graph (40 MB of
 * arrays); on a 24M-node one (880 MB), whose arcs come from HBM, clusters
 * were slower (docs/gpu.md). SS_GPU_CLUSTER (0: none; it also lifts the size
 * rule) and SS_GPU_CLUSTER_MAX change them. Clusters are a speed-up only: a
 * device that will not set the kernel up for them runs without. */
static unsigned ss__cluster_pick(const struct ss_gpu_device_info *di, uint64_t arrays,
                                 unsigned local_max, unsigned *max)
{
        unsigned cluster = SS__CLUSTER;
        int l2 = 0;
        if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, di->id) != cudaSuccess)
                l2 = 0;
        if (arrays > (uint64_t)l2 * SS__CLUSTER_L2)
                cluster = 0;
        const char *cs = getenv("SS_GPU_CLUSTER");
        if (cs && *cs)
                cluster = (unsigned)strtoul(cs, NULL, 10);
        if (di->cc_major < 9 || cluster < 2 || cluster > 16)
                cluster = 0;
        struct ss_err err;
        if (cluster && ss__delta_cluster_setup(cluster, &err) != SS_OK) {
                ss_log_warn("gpu", "device %d: no clusters for the Δ-stepping: %s", di->id,
                            err.msg);
                cudaGetLastError();
                ss__clear_last_error();
                cluster = 0;
        }
        *max = cluster * local_max;
        const char *cm = getenv("SS_GPU_CLUSTER_MAX");
        if (cluster && cm && *cm)
                *max = (unsigned)strtoul(cm, NULL, 10);
        return cluster;
}

int ss_gpu_open(const struct ss_graph *g, const struct ss_gpu_config *cfg_in, struct ss_gpu **out,
                struct ss_err *err)
{
        struct ss_gpu_config cfg;
        if (cfg_in)
                cfg = *cfg_in;
        else
                ss_gpu_config_default(&cfg);
        *out = NULL;
        if (!g || g->n == 0)
                return ss_err_set(err, SS_EINVAL, "the graph is empty");
        if (g->m >= UINT32_MAX)
                return ss_err_set(err, SS_ENOGPU,
                                  "the graph has %" PRIu64 " arcs; the GPU engine indexes arcs "
                                  "with 32 bits",
                                  g->m);
        if (cfg.streams == 0)
                cfg.streams = 1;
        const char *inj = getenv("SS_GPU_INJECT_FAULT");
        if (inj && *inj)
                cfg.inject_fault = (unsigned)strtoul(inj, NULL, 10);

        struct ss_gpu_info info;
        int rc = ss_gpu_probe(&info, err);
        if (rc)
                return rc;
        if (cfg.device < 0 || cfg.device >= info.count || cfg.device >= SS_GPU_MAX_DEVICES)
                return ss_err_set(err, SS_ENOGPU, "CUDA device %d does not exist (%d present)",
                                  cfg.device, info.count);
        const struct ss_gpu_device_info *di = &info.dev[cfg.device];
        if (!di->cooperative)
                return ss_err_set(err, SS_ENOGPU,
                                  "CUDA device %d (%s) does not support cooperative launches",
                                  cfg.device, di->name);
        SS__CUDA(cudaSetDevice(cfg.device));
        size_t free_b = 0, total_b = 0;
        SS__CUDA(cudaMemGetInfo(&free_b, &total_b));

        const uint64_t graph_bytes = ((uint64_t)g->n + 1) * 4 + g->m * 8 + (uint64_t)g->n * 4;
        const uint64_t ws_bytes = ss__ws_bytes(g->n);
        uint64_t limit = free_b > SS__RESERVE ? free_b - SS__RESERVE : 0;
        if (cfg.memory_limit && cfg.memory_limit < limit)
                limit = cfg.memory_limit;
        if (graph_bytes + ws_bytes > limit)
                return ss_err_set(err, SS_ENOGPU,
                                  "graph does not fit: needs %.1f MiB (graph %.1f + one "
                                  "workspace %.1f), limit %.1f MiB",
                                  (graph_bytes + ws_bytes) / SS__MIB, graph_bytes / SS__MIB,
                                  ws_bytes / SS__MIB, limit / SS__MIB);
        /* The reverse graph comes before extra streams: batched routes walk
         * their paths back over it, and landmarks search it. */
        const bool want_rev = 2 * graph_bytes + ws_bytes <= limit;
        const uint64_t graphs = want_rev ? 2 * graph_bytes : graph_bytes;
        /* Streams are cheap; their search arrays are lent per run, so more
         * streams than arrays fit only wait for one another. */
        unsigned streams = cfg.streams;
        const uint64_t fit = (limit - graphs) / ws_bytes;
        if (fit < streams)
                ss_log_info("gpu",
                            "%" PRIu64 " search workspaces of %.1f MiB fit in %.1f MiB: %u "
                            "streams share them",
                            fit, ws_bytes / SS__MIB, limit / SS__MIB, streams);

        int bps_d = 0, bps_b = 0, bps_k = 0, bps_f = 0;
        if ((rc = ss__delta_blocks_per_sm(&bps_d, err)) ||
            (rc = ss__bf_blocks_per_sm(&bps_b, err)) ||
            (rc = ss__batch_blocks_per_sm(&bps_k, err)) ||
            (rc = ss__family_blocks_per_sm(&bps_f, err)))
                return rc;
        int bps = bps_d < bps_b ? bps_d : bps_b;
        bps = bps_k < bps ? bps_k : bps;
        bps = bps_f < bps ? bps_f : bps;
        if (bps < 1)
                return ss_err_set(err, SS_ENOGPU, "the search kernels do not fit on %s", di->name);
        /* Two resident blocks per SM are plenty for graph traversal; fewer
         * blocks make each grid-wide barrier cheaper. */
        if (bps > 2)
                bps = 2;
        const unsigned resident = (unsigned)(bps * di->sm_count);
        /* Each stream's grid must be resident at once: with the default block
         * count, a device with fewer SMs than streams (a MIG slice, a small
         * GPU) gets fewer streams rather than none. */
        if (!cfg.blocks && streams > resident) {
                ss_log_warn("gpu",
                            "%u streams reduced to %u, the blocks that can be resident on %s",
                            streams, resident, di->name);
                streams = resident;
        }
        /* Default: one block per two SMs per query at most. Road frontiers are
         * a few thousand vertices; fewer blocks make each grid barrier cheaper
         * (NY-d: 33-66 blocks beat 132 and 264 by 5-30%, docs/gpu.md). */
        unsigned blocks = resident / streams;
        const unsigned cap = di->sm_count / 2 > 0 ? (unsigned)di->sm_count / 2 : 1;
        if (blocks > cap)
                blocks = cap;
        if (cfg.blocks)
                blocks = cfg.blocks;
        /* At most one block per SM: with two per SM (264 on an H100) NY-d
         * searches that run mostly in one block did not finish in minutes
         * (observed, cause not established; suspected: 263 blocks polling the
         * grid barrier starve block 0), while 33-132 blocks take ~10 ms. */
        if (blocks > (unsigned)di->sm_count)
                blocks = (unsigned)di->sm_count;
        if (blocks < 1)
                blocks = 1;
        if (blocks * streams > resident)
                return ss_err_set(err, SS_EINVAL,
                                  "%u streams x %u blocks exceed the %u blocks that can be "
                                  "resident on %s",
                                  streams, blocks, resident, di->name);

        /* Frontiers up to this size are relaxed by one block without grid-wide
         * barriers (delta.cu); SS_GPU_LOCAL_MAX overrides it for tuning. */
        unsigned local_max = SS__LOCAL_MAX;
        const char *lm = getenv("SS_GPU_LOCAL_MAX");
        if (lm && *lm)
                local_max = (unsigned)strtoul(lm, NULL, 10);
        /* The Δ-stepping profile, for tuning (SS__DF_* bits). */
        const char *df = getenv("SS_GPU_DELTA_FLAGS");
        const unsigned dflags = df && *df ? (unsigned)strtoul(df, NULL, 0) : 0;
        unsigned cluster_max = 0;
        const unsigned cluster =
            ss__cluster_pick(di, graph_bytes + (uint64_t)g->n * 8, local_max, &cluster_max);

        struct ss_gpu *gpu = calloc(1, sizeof(*gpu));
        if (!gpu)
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU engine");
        gpu->device = cfg.device;
        snprintf(gpu->name, sizeof(gpu->name), "%s", di->name);
        gpu->bf_variant = cfg.bf_variant;
        gpu->inject_fault = cfg.inject_fault;
        gpu->dflags = dflags;
        if (cudaDeviceGetAttribute(&gpu->clock_khz, cudaDevAttrClockRate, cfg.device) !=
            cudaSuccess)
                gpu->clock_khz = 0;
        gpu->unhealthy_after = cfg.unhealthy_after ? cfg.unhealthy_after : 3;
        atomic_init(&gpu->faults, 0);
        atomic_init(&gpu->healthy, true);
        atomic_init(&gpu->runs, 0);
        pthread_mutex_init(&gpu->blk_lock, NULL);
        pthread_cond_init(&gpu->blk_cond, NULL);
        gpu->resident = gpu->blk_free = resident;
        gpu->host = g;
        gpu->limit = limit;
        if ((rc = ss__family_init(gpu, di->sm_count, err)) != SS_OK) {
                ss_gpu_close(gpu);
                return rc;
        }
        if (cfg.blocks) /* blocks set by hand hold for every row */
                gpu->fam.grid = 0;
        gpu->ws = calloc(streams, sizeof(*gpu->ws));
        gpu->d_targets = calloc(streams, sizeof(*gpu->d_targets));
        gpu->ws_bytes = ws_bytes;
        atomic_init(&gpu->lent_bytes, 0);
        const char *idle = getenv("SS_GPU_WS_IDLE_MS");
        const uint64_t idle_ms = idle && *idle ? (uint64_t)strtoull(idle, NULL, 10) : 0;
        const uint64_t idle_ns = idle_ms > 0 ? idle_ms * 1000000u : SS__WS_IDLE_NS;
        gpu->idle_ns = idle_ns;
        gpu->arenas = ss_lender_new(&ss__arena_ops, gpu, streams, 1, idle_ns);
        if (!gpu->ws || !gpu->d_targets || !gpu->arenas) {
                ss_gpu_close(gpu);
                return ss_err_set(err, SS_ENOMEM, "no memory for the GPU engine");
        }
        uint64_t t_mark = ss_now_ns(), t_up = 0, t_rev = 0, t_ws = 0;
        if ((rc = ss__upload(g, &gpu->d_row, &gpu->d_arcs, &gpu->d_split, limit - graph_bytes,
                             err))) {
                ss_gpu_close(gpu);
                return rc;
        }
        gpu->g.n = g->n;
        gpu->g.m = g->m;
        gpu->g.row = gpu->d_row;
        gpu->g.arcs = gpu->d_arcs;
        gpu->g.split = gpu->d_split;
        gpu->max_w = g->max_w;
        uint64_t used = graph_bytes;
        t_up = ss_now_ns() - t_mark;
        t_mark = ss_now_ns();
        /* The reverse graph, when it fits beside the single-search
         * workspaces: batched routes walk their paths back over it, and
         * landmarks search it for distances towards a node. */
        if (want_rev) {
                if ((rc = ss__upload_reverse(gpu, g, limit - used - graph_bytes, err))) {
                        ss_gpu_close(gpu);
                        return rc;
                }
                gpu->rg = gpu->g;
                gpu->rg.row = gpu->d_rrow;
                gpu->rg.arcs = gpu->d_rarcs;
                gpu->rg.split = gpu->d_rsplit;
                gpu->has_rev = true;
                used += graph_bytes;
        } else {
                ss_log_warn("gpu",
                            "the reverse graph does not fit in %.1f MiB: batched routes "
                            "return no paths and landmarks are built on the CPU",
                            limit / SS__MIB);
        }
        t_rev = ss_now_ns() - t_mark;
        t_mark = ss_now_ns();
        for (unsigned i = 0; i < streams; i++) {
                rc = ss__ws_alloc(&gpu->ws[i], &gpu->d_targets[i], blocks, local_max, err);
                gpu->ws[i].dflags = dflags;
                gpu->ws[i].cluster = cluster;
                gpu->ws[i].cluster_max = cluster_max;
                gpu->nstreams = i + 1;
                if (rc) {
                        ss_gpu_close(gpu);
                        return rc;
                }
        }
        gpu->mem_used = used;
        /* One arena now, so that a device without room for a search fails
         * here rather than on the first query; the lender keeps it. */
        if ((rc = ss__arena_take(gpu, &gpu->ws[0], NULL, err)) != SS_OK) {
                ss_gpu_close(gpu);
                return rc;
        }
        ss__arena_give(gpu, &gpu->ws[0]);
        /* The batches are sized as if every stream held an arena: the most
         * the streams' single searches take at once. */
        const uint64_t lent_max = (streams < fit ? streams : fit) * ws_bytes;
        used += lent_max;
        t_ws = ss_now_ns() - t_mark;
        t_mark = ss_now_ns();
        /* Batch workspaces: as many sources per batch as the memory left
         * allows (up to the configured number), the same on every batch
         * stream, each batch kernel with its share of the resident blocks. */
        const unsigned bstreams =
            cfg.batch_streams && cfg.batch_streams < streams ? cfg.batch_streams : streams;
        unsigned kcap = 0;
        if (cfg.batch) {
                unsigned want = cfg.batch == SS_GPU_BATCH_AUTO ? SS__BATCH_DEFAULT : cfg.batch;
                if (cfg.batch == SS_GPU_BATCH_AUTO && want > SS__BATCH_PAIRS / g->n)
                        want = SS__BATCH_PAIRS / g->n > 0 ? (unsigned)(SS__BATCH_PAIRS / g->n) : 1;
                /* Three fifths of what is left: room stays for the
                 * landmark tables, the copies of answers and other users
                 * of the device. */
                uint64_t budget = limit > used ? (limit - used) / 5 * 3 : 0;
                if (cfg.batch_memory && cfg.batch_memory < budget)
                        budget = cfg.batch_memory;
                const uint64_t per = budget / bstreams;
                const uint64_t idmax = (UINT32_MAX - 1) / g->n; /* pair ids fit 32 bits */
                kcap = want < idmax ? want : (unsigned)idmax;
                while (kcap > 0 && ss__bws_bytes(g->n, kcap) > per)
                        kcap = kcap > 64 ? kcap - kcap / 16 : kcap - 1;
                if (kcap == 0)
                        ss_log_warn("gpu", "no room for batched searches (%.1f MiB left)",
                                    budget / SS__MIB);
        }
        if (kcap > 0) {
                /* Each batch stream's share of the resident blocks, at most
                 * one per SM (SS_GPU_BATCH_BLOCKS overrides it, up to the
                 * resident blocks, for tuning). */
                const char *bb = getenv("SS_GPU_BATCH_BLOCKS");
                unsigned bblocks =
                    bb && *bb ? (unsigned)strtoul(bb, NULL, 10) : resident / bstreams;
                if (bblocks > resident)
                        bblocks = resident;
                if (!(bb && *bb) && bblocks > (unsigned)di->sm_count)
                        bblocks = (unsigned)di->sm_count;
                if (bblocks < 1)
                        bblocks = 1;
                gpu->kcap = kcap;
                gpu->bstreams = bstreams;
                gpu->bblocks = bblocks;
                gpu->batches = ss_lender_new(&ss__bws_ops, gpu, bstreams, 0, idle_ns);
                struct ss__bhost *b = NULL;
                if (!gpu->batches) {
                        ss_gpu_close(gpu);
                        return ss_err_set(err, SS_ENOMEM, "no memory for the GPU engine");
                }
                /* One now, as for the arenas; it goes once idle. */
                if ((rc = ss__bws_take(gpu, NULL, &b, err)) != SS_OK) {
                        ss_gpu_close(gpu);
                        return rc;
                }
                ss__bws_give(gpu, &gpu->ws[0], b);
        }
        if ((rc = ss_gpu_set_delta(gpu, ss__choose_delta(g, &cfg), err))) {
                ss_gpu_close(gpu);
                return rc;
        }
        if (kcap > 0) {
                if ((rc = ss__batch_delta(gpu, g, err))) {
                        ss_gpu_close(gpu);
                        return rc;
                }
                used += (uint64_t)g->n * (gpu->has_rev ? 8 : 4);
        }
        gpu->graph_bytes = gpu->has_rev ? 2 * graph_bytes : graph_bytes;
        gpu->mem_used = used - lent_max; /* the lent arrays count as they are made */
        ss_log_debug("gpu",
                     "open: graph %.0f ms, reverse %.0f ms, %u stream workspaces %.0f ms, "
                     "batches of %u and their split %.0f ms",
                     t_up / 1e6, t_rev / 1e6, streams, t_ws / 1e6, kcap,
                     (ss_now_ns() - t_mark) / 1e6);
        *out = gpu;
        return SS_OK;
}

/* ------------------------------------------------------------------ */
/* Running a query                                                     */
/* ------------------------------------------------------------------ */

/* The block budget. A persistent kernel's blocks must all be resident at
 * once (its grid barriers wait for every block), and kernels of different
 * streams share the SMs: two grids that each got part of the device while
 * waiting for the rest would wait for ever. So every cooperative launch
 * first takes its blocks from a budget of what can be resident, and gives
 * them back when its work has finished, in arrival order so that a wide
 * batch is not starved by narrow single searches. */
void ss__blocks_take(struct ss_gpu *gpu, unsigned blocks)
{
        pthread_mutex_lock(&gpu->blk_lock);
        const uint64_t ticket = gpu->blk_next++;
        while (ticket != gpu->blk_serving || gpu->blk_free < blocks)
                pthread_cond_wait(&gpu->blk_cond, &gpu->blk_lock);
        gpu->blk_free -= blocks;
        gpu->blk_serving++;
        pthread_cond_broadcast(&gpu->blk_cond);
        pthread_mutex_unlock(&gpu->blk_lock);
}

void ss__blocks_give(struct ss_gpu *gpu, unsigned blocks)
{
        pthread_mutex_lock(&gpu->blk_lock);
        gpu->blk_free += blocks;
        pthread_cond_broadcast(&gpu->blk_cond);
        pthread_mutex_unlock(&gpu->blk_lock);
}

int ss__run_begin(struct ss_gpu *gpu, unsigned stream, struct ss_err *err)
{
        if (!atomic_load(&gpu->healthy))
                return ss_err_set(err, SS_ENOGPU, "%s was marked unhealthy after %u faults",
                                  gpu->name, atomic_load(&gpu->faults));
        if (stream >= gpu->nstreams)
                return ss_err_set(err, SS_EINVAL, "stream %u does not exist (%u opened)", stream,
                                  gpu->nstreams);
        uint64_t run = atomic_fetch_add(&gpu->runs, 1) + 1;
        if (gpu->inject_fault && run % gpu->inject_fault == 0) {
                ss_err_set(err, SS_EGPU, "injected fault (run %" PRIu64 ", every %u)", run,
                           gpu->inject_fault);
                ss__fault(gpu, false, err);
                return SS_EGPU;
        }
        cudaError_t e = cudaSetDevice(gpu->device);
        if (e != cudaSuccess) {
                int rc = ss__cuda_fail(err, "cudaSetDevice", e, __FILE__, __LINE__);
                ss__fault(gpu, ss__sticky(e), err);
                return rc;
        }
        ss__last_error = cudaSuccess;
        return SS_OK;
}

void ss__run_end(struct ss_gpu *gpu, unsigned stream, int rc, const struct ss_err *err)
{
        struct ss__ws *w = &gpu->ws[stream];
        w->runs++;
        if (rc == SS_EGPU) {
                ss__fault(gpu, ss__sticky(ss__last_error), err);
                /* Leave the stream idle for the next query whatever happened. */
                cudaStreamSynchronize(w->stream);
                cudaGetLastError();
        }
}

bool ss__sticky(cudaError_t e)
{
        switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchTimeout:
        case cudaErrorECCUncorrectable:
        case cudaErrorUnknown:
                return true;
        default:
                return false;
        }
}

void ss__fault(struct ss_gpu *gpu, bool sticky, const struct ss_err *err)
{
        unsigned f = atomic_fetch_add(&gpu->faults, 1) + 1;
        ss_log_warn("gpu", "fault %u on %s: %s", f, gpu->name, err ? err->msg : "");
        if ((sticky || f >= gpu->unhealthy_after) && atomic_exchange(&gpu->healthy, false))
                ss_log_error("gpu", "%s marked unhealthy after %u fault(s); queries go to the CPU",
                             gpu->name, f);
}

static void ss__nap(uint64_t ns)
{
        struct timespec ts = {0, (long)ns};
        nanosleep(&ts, NULL);
}

/* Waits for ev while polling the query's deadline; raises the device's
 * cancel flag when it passes. Returns SS_OK or SS_EGPU. */
int ss__wait(struct ss__ws *w, cudaEvent_t ev, const struct ss_cancel *cancel, struct ss_err *err)
{
        uint64_t start = ss_now_ns(), cancel_at = 0;
        for (;;) {
                cudaError_t e = cudaEventQuery(ev);
                if (e == cudaSuccess)
                        return SS_OK;
                if (e != cudaErrorNotReady)
                        return ss__cuda_fail(err, "cudaEventQuery", e, __FILE__, __LINE__);
                uint64_t now = ss_now_ns();
                if (!cancel_at && ss_cancelled(cancel)) {
                        *w->hcancel = 1;
                        cancel_at = now;
                }
                /* A cancelled search stops within one phase; one that does not
                 * stop in seconds is a hung device. */
                if (cancel_at && now - cancel_at > 5000000000ull) {
                        ss__last_error = cudaErrorLaunchTimeout;
                        return ss_err_set(err, SS_EGPU,
                                          "the device did not stop a cancelled search within 5 s");
                }
                ss__nap(now - start < 200000 ? 2000 : 20000);
        }
}

static int ss__run(struct ss_gpu *gpu, struct ss__ws *w, uint32_t *d_targets,
                   const struct ss_gpu_query *q, struct ss_gpu_result *r, struct ss_err *err)
{
        const uint32_t n = gpu->g.n;
        const bool single = q->target != SS_NO_NODE;
        const size_t chunk = SS__TCHUNK < n ? SS__TCHUNK : n;
        int rc;
        *w->hcancel = 0;
        struct ss__launch l = {q->source,
                               q->target,
                               NULL,
                               0,
                               (int)gpu->bf_variant,
                               &gpu->fam.dev,
                               ss__family_grid(gpu, q->algo)};
        uint32_t launches = 0;
        if (q->ntargets > 0 && q->ntargets <= chunk) {
                memcpy(w->htargets, q->targets, q->ntargets * sizeof(uint32_t));
                SS__CUDA(cudaMemcpyAsync(d_targets, w->htargets, q->ntargets * sizeof(uint32_t),
                                         cudaMemcpyHostToDevice, w->stream));
                l.targets = d_targets;
                l.ntargets = (uint32_t)q->ntargets;
        }
        SS__CUDA(cudaEventRecord(w->ev_start, w->stream));
        rc = ss__algos[q->algo].launch(&gpu->g, w, &l, err);
        if (w->cluster_err) {
                ss_log_warn(
                    "gpu", "stream %u: the Δ-stepping runs without clusters from now on: %s",
                    (unsigned)(w - gpu->ws), cudaGetErrorString((cudaError_t)w->cluster_err));
                w->cluster_err = 0;
        }
        if (rc)
                return rc;
        launches++;
        SS__CUDA(cudaEventRecord(w->ev_search, w->stream));
        if (single && q->want_path) {
                if ((rc = ss__launch_pred(&gpu->g, w, q->source, err)) ||
                    (rc = ss__launch_walk(&gpu->g, w, q->source, q->target, err)))
                        return rc;
                launches += 2;
        }
        if (l.targets) {
                unsigned long long *dout = (unsigned long long *)w->far[0];
                if ((rc = ss__launch_gather(w, d_targets, l.ntargets, dout, err)))
                        return rc;
                launches++;
                SS__CUDA(cudaMemcpyAsync(w->hout, dout, l.ntargets * 8, cudaMemcpyDeviceToHost,
                                         w->stream));
        }
        if (q->all)
                SS__CUDA(cudaMemcpyAsync(q->all, w->dist, (size_t)n * 8, cudaMemcpyDeviceToHost,
                                         w->stream));
        SS__CUDA(cudaMemcpyAsync(w->hctl, w->ctl, sizeof(struct ss__ctl), cudaMemcpyDeviceToHost,
                                 w->stream));
        SS__CUDA(cudaEventRecord(w->ev_end, w->stream));
        if ((rc = ss__wait(w, w->ev_end, q->cancel, err)))
                return rc;
        SS__CUDA(cudaGetLastError());
        const struct ss__ctl *c = w->hctl;
        if (c->cancelled)
                return ss_err_set(err, SS_ETIMEDOUT,
                                  "the query passed its deadline on the GPU after %u phases",
                                  c->phases);
        float ms = 0;
        SS__CUDA(cudaEventElapsedTime(&ms, w->ev_start, w->ev_search));
        r->kernel_ns = (uint64_t)(ms * 1e6);
        SS__CUDA(cudaEventElapsedTime(&ms, w->ev_start, w->ev_end));
        r->total_ns = (uint64_t)(ms * 1e6);
        r->phases = c->phases;
        r->buckets = c->buckets;
        r->cluster_phases = q->algo == SS_GPU_DELTA ? c->cphases : 0;
        if (q->algo == SS_GPU_DELTA && (gpu->dflags & SS__DF_PROFILE) && gpu->clock_khz > 0) {
                const double us = 1e3 / gpu->clock_khz; /* microseconds per cycle */
                ss_log_info("gpu",
                            "delta profile: local %.0f us (%llu runs, %llu phases), grid light "
                            "%.0f us (%llu phases), cluster %.0f us (%llu runs, %llu phases), "
                            "heavy %.0f us, bucket changes %.0f us",
                            c->prof[SS__PROF_LOCAL] * us, c->prof[SS__PROF_NLOCAL],
                            c->prof[SS__PROF_NLPH], c->prof[SS__PROF_GRID] * us,
                            c->prof[SS__PROF_NGPH], c->prof[SS__PROF_CLUSTER] * us,
                            c->prof[SS__PROF_NCLUSTER], c->prof[SS__PROF_NCPH],
                            c->prof[SS__PROF_HEAVY] * us, c->prof[SS__PROF_BUCKET] * us);
        }
        r->delta = q->algo == SS_GPU_DELTA ? gpu->g.delta : 0;
        r->dist = single ? c->tdist : SS_DIST_INF;
        if (l.targets)
                memcpy(r->target_dist, w->hout, q->ntargets * sizeof(ss_dist));
        if (single && q->want_path) {
                if (c->path_status != 0) {
                        r->path_needs_cpu = true;
                        ss_log_debug("gpu", "predecessor walk to %u met %s; path left to the CPU",
                                     q->target, c->path_status == 1 ? "a cycle" : "a gap");
                } else if (c->path_len > 0) {
                        uint32_t *p = malloc((size_t)c->path_len * sizeof(uint32_t));
                        if (!p)
                                return ss_err_set(err, SS_ENOMEM,
                                                  "no memory for a path of %u nodes", c->path_len);
                        cudaError_t e = cudaMemcpyAsync(p, w->q[0], (size_t)c->path_len * 4,
                                                        cudaMemcpyDeviceToHost, w->stream);
                        if (e == cudaSuccess)
                                e = cudaStreamSynchronize(w->stream);
                        if (e != cudaSuccess) {
                                free(p);
                                return ss__cuda_fail(err, "cudaMemcpyAsync (path)", e, __FILE__,
                                                     __LINE__);
                        }
                        for (size_t i = 0, j = c->path_len - 1; i < j; i++, j--) {
                                uint32_t t = p[i];
                                p[i] = p[j];
                                p[j] = t;
                        }
                        r->path = p;
                        r->path_len = c->path_len;
                }
        }
        /* Target lists longer than one chunk: gather after the search. */
        if (q->ntargets > chunk) {
                unsigned long long *dout = (unsigned long long *)w->far[0];
                for (size_t off = 0; off < q->ntargets; off += chunk) {
                        size_t k = q->ntargets - off < chunk ? q->ntargets - off : chunk;
                        memcpy(w->htargets, q->targets + off, k * sizeof(uint32_t));
                        SS__CUDA(cudaMemcpyAsync(d_targets, w->htargets, k * 4,
                                                 cudaMemcpyHostToDevice, w->stream));
                        if ((rc = ss__launch_gather(w, d_targets, (uint32_t)k, dout, err)))
                                return rc;
                        launches++;
                        SS__CUDA(cudaMemcpyAsync(w->hout, dout, k * 8, cudaMemcpyDeviceToHost,
                                                 w->stream));
                        SS__CUDA(cudaStreamSynchronize(w->stream));
                        memcpy(r->target_dist + off, w->hout, k * sizeof(ss_dist));
                }
        }
        r->launches = launches;
        return SS_OK;
}

int ss_gpu_run(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_query *q,
               struct ss_gpu_result *r, struct ss_err *err)
{
        ss_dist *tdist = r->target_dist;
        memset(r, 0, sizeof(*r));
        r->target_dist = tdist;
        r->dist = SS_DIST_INF;
        r->algo = q->algo;
        r->stream = stream;
        if (stream >= gpu->nstreams)
                return ss_err_set(err, SS_EINVAL, "stream %u does not exist (%u opened)", stream,
                                  gpu->nstreams);
        if ((unsigned)q->algo >= SS_GPU_ALGO_COUNT || !ss__algos[q->algo].launch)
                return ss_err_set(err, SS_EINVAL, "GPU algorithm '%s' is not built",
                                  ss_gpu_algo_name(q->algo));
        const uint32_t n = gpu->g.n;
        if (q->source >= n)
                return ss_err_set(err, SS_EINVAL, "source %u is outside 0..%u", q->source, n - 1);
        if (q->target != SS_NO_NODE && q->target >= n)
                return ss_err_set(err, SS_EINVAL, "target %u is outside 0..%u", q->target, n - 1);
        if (q->ntargets && (!q->targets || !r->target_dist))
                return ss_err_set(err, SS_EINVAL, "a target list needs targets and target_dist");
        for (size_t i = 0; i < q->ntargets; i++)
                if (q->targets[i] >= n)
                        return ss_err_set(err, SS_EINVAL, "target %u (index %zu) is outside 0..%u",
                                          q->targets[i], i, n - 1);
        int rc = ss__run_begin(gpu, stream, err);
        if (rc != SS_OK)
                return rc;
        /* The row's layout, on its first query (family.c). */
        if ((rc = ss__family_prepare(gpu, q->algo, err)) != SS_OK) {
                ss__run_end(gpu, stream, rc, err);
                return rc;
        }
        struct ss__ws *w = &gpu->ws[stream];
        if ((rc = ss__arena_take(gpu, w, q->cancel, err)) != SS_OK) {
                ss__run_end(gpu, stream, rc, err);
                return rc;
        }
        /* A row that spreads over the whole device (family.c) takes every
         * resident block of the budget: no other search runs beside it. */
        const unsigned take = ss__family_grid(gpu, q->algo) ? gpu->resident : w->blocks;
        ss__blocks_take(gpu, take);
        rc = ss__run(gpu, w, gpu->d_targets[stream], q, r, err);
        ss__blocks_give(gpu, take);
        ss__run_end(gpu, stream, rc, err);
        ss__arena_give(gpu, w);
        return rc;
}

int ss_gpu_sssp(const struct ss_graph *g, const struct ss_gpu_config *cfg,
                const struct ss_gpu_query *q, struct ss_gpu_result *r, struct ss_err *err)
{
        struct ss_gpu_config c;
        if (cfg)
                c = *cfg;
        else
                ss_gpu_config_default(&c);
        c.streams = 1;
        struct ss_gpu *gpu = NULL;
        int rc = ss_gpu_open(g, &c, &gpu, err);
        if (rc)
                return rc;
        rc = ss_gpu_run(gpu, 0, q, r, err);
        ss_gpu_close(gpu);
        return rc;
}

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

unsigned ss_gpu_streams(const struct ss_gpu *gpu)
{
        return gpu->nstreams;
}

uint64_t ss_gpu_mem_used(const struct ss_gpu *gpu)
{
        struct ss_gpu *m = (struct ss_gpu *)gpu;
        return gpu->mem_used + atomic_load(&m->lent_bytes) + atomic_load(&m->fam.bytes);
}

uint64_t ss_gpu_graph_bytes(const struct ss_gpu *gpu)
{
        return gpu->graph_bytes;
}

uint64_t ss_gpu_delta(const struct ss_gpu *gpu)
{
        return gpu->g.delta;
}

bool ss_gpu_healthy(const struct ss_gpu *gpu)
{
        return atomic_load(&((struct ss_gpu *)gpu)->healthy);
}

unsigned ss_gpu_faults(const struct ss_gpu *gpu)
{
        return atomic_load(&((struct ss_gpu *)gpu)->faults);
}

void ss_gpu_describe(const struct ss_gpu *gpu, char *buf, size_t len)
{
        char batch[64] = "";
        struct ss_gpu_ws_stats ws;
        ss_gpu_workspaces(gpu, &ws);
        if (gpu->kcap)
                snprintf(batch, sizeof(batch), ", batches of %u", gpu->kcap);
        snprintf(buf, len,
                 "%s (device %d), %u stream%s%s, workspaces %u + %u batch (at most %u + %u so "
                 "far), %.0f MiB, delta %" PRIu64 "%s",
                 gpu->name, gpu->device, gpu->nstreams, gpu->nstreams == 1 ? "" : "s", batch,
                 ws.single_made, ws.batch_made, ws.single_peak, ws.batch_peak,
                 ss_gpu_mem_used(gpu) / SS__MIB, gpu->g.delta,
                 ss_gpu_healthy(gpu) ? "" : ", unhealthy");
}
