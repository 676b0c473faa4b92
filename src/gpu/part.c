/* The partitioned GPU search's host side (gpu/part.h): the cut into ranges,
 * the upload of each range to its device, peer access between the devices,
 * and one search launched on every device at once.
 */
#include "gpu/part.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu_internal.h"
#include "kernels/part.h"

/* Bytes of one partition's search arrays per node: dist 8, two queues 8,
 * two far piles 8, the settled set 4, three stamps 12, split 4, row 4. */
#define SS__PART_NODE_BYTES 48u

struct ss__pdev {
        int id;
        cudaStream_t stream;
        cudaEvent_t ev_start, ev_done, ev_end;
        struct ss__sagg *agg;  /* device */
        struct ss__spart *tab; /* device: the table of every partition */
        uint64_t bytes;
        unsigned blocks;
        unsigned first, nlocal;
};

struct ss__phost {
        unsigned dev;       /* index into devs */
        struct ss__spart p; /* device pointers */
        uint32_t *row, *split, *q, *far, *set, *stamps;
        uint2 *arcs;
        unsigned long long *dist;
        struct ss__sctl *ctl;
};

struct ss_gpu_part {
        const struct ss_graph *g;
        struct ss_graph *rev; /* in-arcs, made on the first path */
        unsigned ndev, nparts;
        struct ss__pdev dev[SS_GPU_PART_MAX];
        struct ss__phost part[SS_GPU_PART_MAX];
        uint32_t bases[SS_GPU_PART_MAX + 1];
        struct ss__sshared *sh;     /* first device */
        volatile int *hcancel;      /* pinned, mapped, portable: the deadline passed */
        volatile int *habort;       /* likewise: leave every barrier (part.cu) */
        unsigned long long *bounce; /* pinned, n: distances for pageable callers and paths */
        struct ss__sagg *hagg;      /* pinned, ndev entries */
        unsigned long long *hdist;  /* pinned, one entry: the target's distance */
        uint64_t delta, cut;
        bool has_heavy;
        pthread_mutex_t lock;
        atomic_bool healthy;
};

void ss_gpu_part_config_default(struct ss_gpu_part_config *cfg)
{
        memset(cfg, 0, sizeof(*cfg));
        cfg->ndev = 1;
        cfg->delta_rule = SS_GPU_DELTA_TUNED;
}

int ss_gpu_part_plan(const struct ss_graph *g, unsigned parts, uint32_t *bases, struct ss_err *err)
{
        if (parts == 0 || parts > SS_GPU_PART_MAX || parts > g->n)
                return ss_err_set(err, SS_EINVAL,
                                  "%u partitions: must be 1 to %u and at most the %u nodes", parts,
                                  SS_GPU_PART_MAX, g->n);
        /* Cost of the prefix [0, v): v + row[v]. Cut p at the first node
         * whose prefix reaches p/parts of the whole, keeping every range
         * non-empty. */
        const uint64_t total = (uint64_t)g->n + g->m;
        bases[0] = 0;
        uint32_t v = 0;
        for (unsigned p = 1; p < parts; p++) {
                const uint64_t want = total * p / parts;
                if (v < bases[p - 1] + 1)
                        v = bases[p - 1] + 1;
                while (v < g->n - (parts - p) && (uint64_t)v + g->row[v] < want)
                        v++;
                bases[p] = v;
        }
        bases[parts] = g->n;
        return SS_OK;
}

static int ss__peer(int a, int b, struct ss_err *err)
{
        int can = 0, atom = 0;
        SS__CUDA(cudaDeviceCanAccessPeer(&can, a, b));
        if (!can)
                return ss_err_set(err, SS_ENOGPU,
                                  "device %d cannot reach device %d's memory (no peer access): "
                                  "the partitioned search needs it",
                                  a, b);
        SS__CUDA(cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, a, b));
        if (!atom)
                return ss_err_set(err, SS_ENOGPU,
                                  "device %d has no atomics on device %d's memory: the "
                                  "partitioned search needs them",
                                  a, b);
        SS__CUDA(cudaSetDevice(a));
        cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
                cudaGetLastError();
        else if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaDeviceEnablePeerAccess", e, __FILE__, __LINE__);
        return SS_OK;
}

static uint64_t ss__part_bytes(const struct ss_graph *g, const uint32_t *bases, unsigned p)
{
        const uint64_t n = bases[p + 1] - bases[p];
        const uint64_t m = g->row[bases[p + 1]] - g->row[bases[p]];
        return n * SS__PART_NODE_BYTES + 4 + m * sizeof(uint2) + sizeof(struct ss__sctl);
}

/* Allocates and fills partition p on its device (current). */
static int ss__part_upload(struct ss_gpu_part *h, unsigned p, const uint2 *packed,
                           struct ss_err *err)
{
        const struct ss_graph *g = h->g;
        struct ss__phost *x = &h->part[p];
        const uint32_t base = h->bases[p], n = h->bases[p + 1] - base;
        const uint64_t a0 = g->row[base], m = g->row[base + n] - a0;
        if (m >= UINT32_MAX)
                return ss_err_set(err, SS_ENOGPU,
                                  "partition %u has %" PRIu64 " arcs: at most 2^32 - 1 fit", p, m);
        uint32_t *row = malloc(((size_t)n + 1) * sizeof(uint32_t));
        if (!row)
                return ss_err_set(err, SS_ENOMEM, "no memory for partition %u's offsets", p);
        for (uint32_t v = 0; v <= n; v++)
                row[v] = (uint32_t)(g->row[base + v] - a0);
        int rc = SS_OK;
        cudaStream_t st = h->dev[x->dev].stream;
        SS__CUDA_GOTO(cudaMalloc((void **)&x->row, ((size_t)n + 1) * sizeof(uint32_t)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->arcs, (m ? m : 1) * sizeof(uint2)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->split, (size_t)n * sizeof(uint32_t)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->dist, (size_t)n * sizeof(unsigned long long)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->q, (size_t)n * 4 * sizeof(uint32_t)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->set, (size_t)n * sizeof(uint32_t)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->stamps, (size_t)n * 3 * sizeof(uint32_t)), out);
        SS__CUDA_GOTO(cudaMalloc((void **)&x->ctl, sizeof(struct ss__sctl)), out);
        SS__CUDA_GOTO(cudaMemcpyAsync(x->row, row, ((size_t)n + 1) * sizeof(uint32_t),
                                      cudaMemcpyHostToDevice, st),
                      out);
        if (m)
                SS__CUDA_GOTO(cudaMemcpyAsync(x->arcs, packed + a0, m * sizeof(uint2),
                                              cudaMemcpyHostToDevice, st),
                              out);
        SS__CUDA_GOTO(cudaMemsetAsync(x->stamps, 0, (size_t)n * 3 * sizeof(uint32_t), st), out);
        SS__CUDA_GOTO(cudaMemsetAsync(x->ctl, 0, sizeof(struct ss__sctl), st), out);
        struct ss__dgraph dg = {
            .n = n, .m = m, .row = x->row, .arcs = x->arcs, .split = x->split, .delta = h->delta};
        if ((rc = ss__launch_split(&dg, st, err)) != SS_OK)
                goto out;
        /* The pageable copies above return once the data is staged; the
         * offsets stay needed until the stream has them. */
        SS__CUDA_GOTO(cudaStreamSynchronize(st), out);
        x->far = x->q + 2 * (size_t)n;
        x->p = (struct ss__spart){.base = base,
                                  .n = n,
                                  .row = x->row,
                                  .arcs = x->arcs,
                                  .split = x->split,
                                  .dist = x->dist,
                                  .q = {x->q, x->q + n},
                                  .far = {x->far, x->far + n},
                                  .set = x->set,
                                  .nstamp = x->stamps,
                                  .fstamp = x->stamps + n,
                                  .sstamp = x->stamps + 2 * (size_t)n,
                                  .ctl = x->ctl};
out:
        free(row);
        return rc;
}

void ss_gpu_part_close(struct ss_gpu_part *h)
{
        if (!h)
                return;
        for (unsigned p = 0; p < h->nparts; p++) {
                struct ss__phost *x = &h->part[p];
                cudaSetDevice(h->dev[x->dev].id);
                cudaFree(x->row);
                cudaFree(x->arcs);
                cudaFree(x->split);
                cudaFree(x->dist);
                cudaFree(x->q);
                cudaFree(x->set);
                cudaFree(x->stamps);
                cudaFree(x->ctl);
        }
        for (unsigned d = 0; d < h->ndev; d++) {
                struct ss__pdev *dv = &h->dev[d];
                cudaSetDevice(dv->id);
                cudaFree(dv->agg);
                cudaFree(dv->tab);
                if (d == 0)
                        cudaFree(h->sh);
                if (dv->ev_start)
                        cudaEventDestroy(dv->ev_start);
                if (dv->ev_done)
                        cudaEventDestroy(dv->ev_done);
                if (dv->ev_end)
                        cudaEventDestroy(dv->ev_end);
                if (dv->stream)
                        cudaStreamDestroy(dv->stream);
        }
        cudaFreeHost((void *)h->hcancel);
        cudaFreeHost((void *)h->habort);
        cudaFreeHost(h->bounce);
        cudaFreeHost(h->hagg);
        cudaFreeHost(h->hdist);
        cudaGetLastError();
        if (h->rev)
                ss_graph_unref(h->rev);
        pthread_mutex_destroy(&h->lock);
        free(h);
}

static int ss__part_check(const struct ss_graph *g, const struct ss_gpu_part_config *cfg,
                          unsigned *parts, struct ss_err *err)
{
        if (!g || g->n == 0)
                return ss_err_set(err, SS_EINVAL, "the partitioned search needs a non-empty graph");
        if (cfg->ndev == 0 || cfg->ndev > SS_GPU_PART_MAX)
                return ss_err_set(err, SS_EINVAL, "%u devices: 1 to %u are taken", cfg->ndev,
                                  SS_GPU_PART_MAX);
        *parts = cfg->parts ? cfg->parts : cfg->ndev;
        if (*parts % cfg->ndev != 0 || *parts > SS_GPU_PART_MAX)
                return ss_err_set(err, SS_EINVAL,
                                  "%u partitions on %u devices: the partitions must be a "
                                  "multiple of the devices, at most %u",
                                  *parts, cfg->ndev, SS_GPU_PART_MAX);
        for (unsigned i = 0; i < cfg->ndev; i++)
                for (unsigned j = 0; j < i; j++)
                        if (cfg->devices && cfg->devices[i] == cfg->devices[j])
                                return ss_err_set(err, SS_EINVAL, "device %d is listed twice",
                                                  cfg->devices[i]);
        return SS_OK;
}

/* Checks each device's share against its limit before anything is
 * allocated, so that the message names the sizes. */
static int ss__part_fit(struct ss_gpu_part *h, const struct ss_gpu_part_config *cfg,
                        struct ss_err *err)
{
        for (unsigned d = 0; d < h->ndev; d++) {
                struct ss__pdev *dv = &h->dev[d];
                uint64_t need = sizeof(struct ss__sagg) + h->nparts * sizeof(struct ss__spart) +
                                (d == 0 ? sizeof(struct ss__sshared) : 0);
                for (unsigned p = dv->first; p < dv->first + dv->nlocal; p++)
                        need += ss__part_bytes(h->g, h->bases, p);
                size_t free_b = 0, total_b = 0;
                SS__CUDA(cudaSetDevice(dv->id));
                SS__CUDA(cudaMemGetInfo(&free_b, &total_b));
                uint64_t limit = free_b > SS__RESERVE ? free_b - SS__RESERVE : 0;
                if (cfg->memory_limit && cfg->memory_limit < limit)
                        limit = cfg->memory_limit;
                if (need > limit)
                        return ss_err_set(err, SS_ENOGPU,
                                          "the partitioned graph does not fit: device %d needs "
                                          "%.0f MiB for partitions %u-%u, limit %.0f MiB",
                                          dv->id, need / SS__MIB, dv->first,
                                          dv->first + dv->nlocal - 1, limit / SS__MIB);
                dv->bytes = need;
        }
        return SS_OK;
}

int ss_gpu_part_open(const struct ss_graph *g, const struct ss_gpu_part_config *cfg,
                     struct ss_gpu_part **out, struct ss_err *err)
{
        *out = NULL;
        unsigned parts = 0;
        int rc = ss__part_check(g, cfg, &parts, err);
        if (rc)
                return rc;
        struct ss_gpu_info info;
        if ((rc = ss_gpu_probe(&info, err)) != SS_OK)
                return rc;
        for (unsigned i = 0; i < cfg->ndev; i++) {
                const int id = cfg->devices ? cfg->devices[i] : 0;
                if (id < 0 || id >= info.count || id >= SS_GPU_MAX_DEVICES)
                        return ss_err_set(err, SS_ENOGPU, "no CUDA device %d (%d visible)", id,
                                          info.count);
                if (!info.dev[id].cooperative)
                        return ss_err_set(err, SS_ENOGPU, "device %d has no cooperative launches",
                                          id);
        }
        struct ss_gpu_part *h = calloc(1, sizeof(*h));
        if (!h)
                return ss_err_set(err, SS_ENOMEM, "no memory for the partitioned search");
        h->g = g;
        h->ndev = cfg->ndev;
        h->nparts = parts;
        pthread_mutex_init(&h->lock, NULL);
        atomic_init(&h->healthy, true);
        struct ss_gpu_config dc;
        ss_gpu_config_default(&dc);
        dc.delta_rule = cfg->delta_rule;
        dc.delta = cfg->delta;
        h->delta = ss__choose_delta(g, &dc);
        h->has_heavy = g->max_w > h->delta;
        uint2 *packed = NULL;
        if ((rc = ss_gpu_part_plan(g, parts, h->bases, err)) != SS_OK)
                goto fail;
        const unsigned per = parts / cfg->ndev;
        for (unsigned d = 0; d < h->ndev; d++) {
                h->dev[d].id = cfg->devices ? cfg->devices[d] : 0;
                h->dev[d].first = d * per;
                h->dev[d].nlocal = per;
                for (unsigned p = d * per; p < (d + 1) * per; p++)
                        h->part[p].dev = d;
        }
        for (uint32_t v = 0, p = 0; v < g->n; v++) {
                while (v >= h->bases[p + 1])
                        p++;
                for (uint64_t i = g->row[v]; i < g->row[v + 1]; i++)
                        h->cut += g->col[i] < h->bases[p] || g->col[i] >= h->bases[p + 1];
        }
        if ((rc = ss__part_fit(h, cfg, err)) != SS_OK)
                goto fail;
        for (unsigned i = 0; i < h->ndev; i++)
                for (unsigned j = 0; j < h->ndev; j++)
                        if (i != j && (rc = ss__peer(h->dev[i].id, h->dev[j].id, err)) != SS_OK)
                                goto fail;
        if (!(packed = ss__pack_arcs(g))) {
                rc = ss_err_set(err, SS_ENOMEM, "no memory to pack the arcs");
                goto fail;
        }
        SS__CUDA_GOTO(cudaHostAlloc((void **)&h->hcancel, sizeof(int),
                                    cudaHostAllocMapped | cudaHostAllocPortable),
                      fail);
        *h->hcancel = 0;
        SS__CUDA_GOTO(cudaHostAlloc((void **)&h->habort, sizeof(int),
                                    cudaHostAllocMapped | cudaHostAllocPortable),
                      fail);
        *h->habort = 0;
        SS__CUDA_GOTO(cudaHostAlloc((void **)&h->hagg, h->ndev * sizeof(struct ss__sagg),
                                    cudaHostAllocPortable),
                      fail);
        SS__CUDA_GOTO(
            cudaHostAlloc((void **)&h->hdist, sizeof(unsigned long long), cudaHostAllocPortable),
            fail);
        for (unsigned d = 0; d < h->ndev; d++) {
                struct ss__pdev *dv = &h->dev[d];
                SS__CUDA_GOTO(cudaSetDevice(dv->id), fail);
                SS__CUDA_GOTO(cudaStreamCreateWithFlags(&dv->stream, cudaStreamNonBlocking), fail);
                SS__CUDA_GOTO(cudaEventCreate(&dv->ev_start), fail);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&dv->ev_done, cudaEventDisableTiming), fail);
                SS__CUDA_GOTO(cudaEventCreate(&dv->ev_end), fail);
                SS__CUDA_GOTO(cudaMalloc((void **)&dv->agg, sizeof(struct ss__sagg)), fail);
                SS__CUDA_GOTO(cudaMalloc((void **)&dv->tab, parts * sizeof(struct ss__spart)),
                              fail);
                if (d == 0) {
                        SS__CUDA_GOTO(cudaMalloc((void **)&h->sh, sizeof(struct ss__sshared)),
                                      fail);
                        SS__CUDA_GOTO(cudaMemset(h->sh, 0, sizeof(struct ss__sshared)), fail);
                }
                int per_sm = 0;
                if ((rc = ss__part_blocks_per_sm(&per_sm, err)) != SS_OK)
                        goto fail;
                if (per_sm < 1) {
                        rc = ss_err_set(err, SS_ENOGPU,
                                        "the partitioned kernel does not fit an SM of device %d",
                                        dv->id);
                        goto fail;
                }
                int sms = info.dev[dv->id].sm_count;
                unsigned most = (unsigned)(per_sm * sms);
                dv->blocks = cfg->blocks ? cfg->blocks : (unsigned)sms;
                if (dv->blocks > most)
                        dv->blocks = most;
                for (unsigned p = dv->first; p < dv->first + dv->nlocal; p++)
                        if ((rc = ss__part_upload(h, p, packed, err)) != SS_OK)
                                goto fail;
        }
        struct ss__spart tab[SS_GPU_PART_MAX];
        for (unsigned p = 0; p < parts; p++)
                tab[p] = h->part[p].p;
        for (unsigned d = 0; d < h->ndev; d++) {
                SS__CUDA_GOTO(cudaSetDevice(h->dev[d].id), fail);
                SS__CUDA_GOTO(cudaMemcpy(h->dev[d].tab, tab, parts * sizeof(struct ss__spart),
                                         cudaMemcpyHostToDevice),
                              fail);
        }
        free(packed);
        *out = h;
        return SS_OK;
fail:
        free(packed);
        ss_gpu_part_close(h);
        return rc;
}

/* The path source..target over the in-arcs, from every distance. */
static int ss__part_path(struct ss_gpu_part *h, const unsigned long long *dist, uint32_t s,
                         uint32_t t, struct ss_gpu_result *r, struct ss_err *err)
{
        if (dist[t] == SS_DIST_INF)
                return SS_OK;
        if (!h->rev && !(h->rev = ss_graph_reverse(h->g)))
                return ss_err_set(err, SS_ENOMEM, "no memory for the reverse graph");
        const struct ss_graph *rg = h->rev;
        size_t cap = 64, len = 0;
        uint32_t *path = malloc(cap * sizeof(*path));
        if (!path)
                return ss_err_set(err, SS_ENOMEM, "no memory for a path");
        uint32_t v = t;
        path[len++] = v;
        while (v != s) {
                /* A tight in-arc, one of positive weight first: only zero
                 * weights can close a cycle. */
                uint32_t pick = SS_NO_NODE;
                for (uint64_t i = rg->row[v]; i < rg->row[v + 1]; i++) {
                        const uint32_t u = rg->col[i];
                        if (dist[u] != SS_DIST_INF && dist[u] + rg->w[i] == dist[v] && u != v) {
                                pick = u;
                                if (rg->w[i] > 0)
                                        break;
                        }
                }
                if (pick == SS_NO_NODE || len > h->g->n) {
                        free(path);
                        r->path_needs_cpu = true;
                        return SS_OK;
                }
                if (len == cap) {
                        uint32_t *p2 = realloc(path, 2 * cap * sizeof(*path));
                        if (!p2) {
                                free(path);
                                return ss_err_set(err, SS_ENOMEM, "no memory for a path");
                        }
                        path = p2;
                        cap *= 2;
                }
                path[len++] = v = pick;
        }
        for (size_t i = 0; i < len / 2; i++) {
                const uint32_t x = path[i];
                path[i] = path[len - 1 - i];
                path[len - 1 - i] = x;
        }
        r->path = path;
        r->path_len = len;
        return SS_OK;
}

static void ss__part_nap(uint64_t ns)
{
        struct timespec ts = {0, (long)ns};
        nanosleep(&ts, NULL);
}

/* Waits for the first device's last event (every device's work ends
 * before it). At the deadline it raises the cancel flag, which every device
 * meets at the same barrier. A search still running 5 s after that, or a
 * device that reports an error, is aborted: the abort flag makes every
 * thread waiting at a barrier leave, and the wait goes on for at most 5 s
 * more. Returns SS_OK, or SS_EGPU (the handle is then not used again). */
static int ss__part_wait(struct ss_gpu_part *h, const struct ss_cancel *cancel, struct ss_err *err)
{
        const uint64_t start = ss_now_ns();
        uint64_t cancel_at = 0, abort_at = 0;
        int rc = SS_OK;
        for (;;) {
                cudaError_t e = cudaEventQuery(h->dev[0].ev_done);
                if (e == cudaSuccess)
                        return rc;
                for (unsigned d = 1; e == cudaErrorNotReady && d < h->ndev; d++) {
                        e = cudaEventQuery(h->dev[d].ev_end);
                        e = e == cudaSuccess ? cudaErrorNotReady : e;
                }
                const uint64_t now = ss_now_ns();
                if (e != cudaErrorNotReady && !abort_at) {
                        *h->habort = 1;
                        abort_at = now;
                        rc = ss__cuda_fail(err, "cudaEventQuery", e, __FILE__, __LINE__);
                }
                if (!cancel_at && ss_cancelled(cancel)) {
                        *h->hcancel = 1;
                        cancel_at = now;
                }
                if (cancel_at && !abort_at && now - cancel_at > 5000000000ull) {
                        *h->habort = 1;
                        abort_at = now;
                        rc = ss_err_set(err, SS_EGPU,
                                        "the devices did not stop a cancelled search within 5 s");
                }
                if (abort_at && now - abort_at > 5000000000ull)
                        return rc;
                ss__part_nap(now - start < 200000 ? 2000 : 20000);
        }
}

/* Enqueues the search on every device, the distances going to dst (pinned,
 * n entries; NULL for none). *launched counts the devices whose kernel was
 * launched: after a failure the caller aborts and waits for those. */
static int ss__part_launch(struct ss_gpu_part *h, const struct ss_gpu_query *q,
                           unsigned long long *dst, unsigned *launched, struct ss_err *err)
{
        struct ss__pdev *d0 = &h->dev[0];
        *launched = 0;
        SS__CUDA(cudaSetDevice(d0->id));
        SS__CUDA(cudaEventRecord(d0->ev_start, d0->stream));
        SS__CUDA(cudaMemsetAsync(&h->sh->arrive, 0, sizeof(unsigned int), d0->stream));
        SS__CUDA(cudaEventRecord(d0->ev_done, d0->stream));
        for (unsigned d = 0; d < h->ndev; d++) {
                struct ss__pdev *dv = &h->dev[d];
                SS__CUDA(cudaSetDevice(dv->id));
                if (d > 0)
                        SS__CUDA(cudaStreamWaitEvent(dv->stream, d0->ev_done, 0));
                struct ss__part_launch l = {.ndev = h->ndev,
                                            .dev = d,
                                            .nparts = h->nparts,
                                            .first = dv->first,
                                            .nlocal = dv->nlocal,
                                            .parts = dv->tab,
                                            .agg = dv->agg,
                                            .sh = h->sh,
                                            .cancel = h->hcancel,
                                            .abort = h->habort,
                                            .source = q->source,
                                            .target = q->target,
                                            .delta = h->delta,
                                            .has_heavy = h->has_heavy};
                memcpy(l.bases, h->bases, sizeof(l.bases));
                int rc = ss__launch_part(&l, dv->blocks, dv->stream, err);
                if (rc != SS_OK)
                        return rc;
                (*launched)++;
        }
        /* Results: each device copies its partitions' distances and its
         * statistics, then the first device's stream waits for all. */
        for (unsigned d = 0; d < h->ndev; d++) {
                struct ss__pdev *dv = &h->dev[d];
                SS__CUDA(cudaSetDevice(dv->id));
                SS__CUDA(cudaEventRecord(dv->ev_end, dv->stream)); /* the search's end */
                for (unsigned p = dv->first; p < dv->first + dv->nlocal; p++) {
                        const struct ss__phost *x = &h->part[p];
                        if (dst)
                                SS__CUDA(cudaMemcpyAsync(dst + x->p.base, x->dist,
                                                         (size_t)x->p.n * sizeof(ss_dist),
                                                         cudaMemcpyDeviceToHost, dv->stream));
                        if (q->target != SS_NO_NODE && q->target >= x->p.base &&
                            q->target < x->p.base + x->p.n)
                                SS__CUDA(cudaMemcpyAsync(h->hdist,
                                                         x->dist + (q->target - x->p.base),
                                                         sizeof(unsigned long long),
                                                         cudaMemcpyDeviceToHost, dv->stream));
                }
                SS__CUDA(cudaMemcpyAsync(&h->hagg[d], dv->agg, sizeof(struct ss__sagg),
                                         cudaMemcpyDeviceToHost, dv->stream));
                if (d > 0) {
                        SS__CUDA(cudaEventRecord(dv->ev_done, dv->stream));
                        SS__CUDA(cudaSetDevice(d0->id));
                        SS__CUDA(cudaStreamWaitEvent(d0->stream, dv->ev_done, 0));
                }
        }
        SS__CUDA(cudaSetDevice(d0->id));
        SS__CUDA(cudaEventRecord(d0->ev_done, d0->stream));
        return SS_OK;
}

/* Whether p is page-locked host memory (copies into it run while the host
 * waits; into pageable memory a copy holds the host until the search ends,
 * deadline or not). */
static bool ss__pinned(const void *p)
{
        struct cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
                cudaGetLastError();
                return false;
        }
        return a.type == cudaMemoryTypeHost;
}

/* One search, h->lock held. */
static int ss__part_search(struct ss_gpu_part *h, const struct ss_gpu_query *q,
                           struct ss_gpu_result *r, struct ss_err *err)
{
        const uint32_t n = h->g->n;
        if (!atomic_load(&h->healthy))
                return ss_err_set(err, SS_ENOGPU,
                                  "the partitioned search failed earlier and is not used");
        /* Distances go to the caller's memory when it is pinned, else to
         * the handle's pinned buffer (paths are walked from there too). */
        const bool direct = q->all && !q->want_path && ss__pinned(q->all);
        unsigned long long *dst = direct ? (unsigned long long *)q->all : NULL;
        if (!direct && (q->all || q->want_path)) {
                if (!h->bounce &&
                    cudaMallocHost((void **)&h->bounce, (size_t)n * sizeof(unsigned long long)) !=
                        cudaSuccess) {
                        cudaGetLastError();
                        h->bounce = NULL;
                        return ss_err_set(err, SS_ENOMEM, "no pinned memory for %u distances", n);
                }
                dst = h->bounce;
        }
        /* A deadline already past stops the search at its first barrier. */
        *h->hcancel = ss_cancelled(q->cancel) ? 1 : 0;
        *h->habort = 0;
        const uint64_t t0 = ss_now_ns();
        unsigned launched = 0;
        int rc = ss__part_launch(h, q, dst, &launched, err);
        if (rc != SS_OK) {
                /* The kernels that started leave their barriers. */
                *h->habort = 1;
                for (unsigned d = 0; d < launched; d++) {
                        cudaSetDevice(h->dev[d].id);
                        cudaStreamSynchronize(h->dev[d].stream);
                }
                cudaGetLastError();
                atomic_store(&h->healthy, false);
                return rc;
        }
        if ((rc = ss__part_wait(h, q->cancel, err)) != SS_OK) {
                atomic_store(&h->healthy, false);
                return rc;
        }
        unsigned stop = 0;
        for (unsigned d = 0; d < h->ndev; d++)
                stop = h->hagg[d].stop > stop ? h->hagg[d].stop : stop;
        if (stop == 2) {
                atomic_store(&h->healthy, false);
                return ss_err_set(err, SS_EGPU, "the partitioned search was aborted");
        }
        if (stop)
                return ss_err_set(err, SS_ETIMEDOUT, "the query passed its deadline");
        float ms = 0;
        cudaSetDevice(h->dev[0].id);
        if (cudaEventElapsedTime(&ms, h->dev[0].ev_start, h->dev[0].ev_end) == cudaSuccess)
                r->kernel_ns = (uint64_t)(ms * 1e6);
        r->phases = h->hagg[0].phases;
        r->buckets = h->hagg[0].buckets;
        r->launches = h->ndev;
        r->delta = h->delta;
        if (q->target != SS_NO_NODE)
                r->dist = *h->hdist;
        if (q->all && !direct)
                memcpy(q->all, h->bounce, (size_t)n * sizeof(ss_dist));
        if (q->want_path)
                rc = ss__part_path(h, h->bounce, q->source, q->target, r, err);
        r->total_ns = ss_now_ns() - t0;
        return rc;
}

int ss_gpu_part_run(struct ss_gpu_part *h, const struct ss_gpu_query *q, struct ss_gpu_result *r,
                    struct ss_err *err)
{
        const uint32_t n = h->g->n;
        memset(r, 0, sizeof(*r));
        r->dist = SS_DIST_INF;
        r->algo = SS_GPU_DELTA;
        if (q->source >= n || (q->target != SS_NO_NODE && q->target >= n))
                return ss_err_set(err, SS_EINVAL, "node id outside 1..%u", n);
        if (q->ntargets > 0)
                return ss_err_set(err, SS_EINVAL,
                                  "the partitioned search answers one-to-all and single targets, "
                                  "not target lists");
        if (q->want_path && q->target == SS_NO_NODE)
                return ss_err_set(err, SS_EINVAL, "a path needs a target");
        pthread_mutex_lock(&h->lock);
        int rc = ss__part_search(h, q, r, err);
        pthread_mutex_unlock(&h->lock);
        return rc;
}

unsigned ss_gpu_part_count(const struct ss_gpu_part *h)
{
        return h->nparts;
}

unsigned ss_gpu_part_devices(const struct ss_gpu_part *h)
{
        return h->ndev;
}

uint64_t ss_gpu_part_mem_used(const struct ss_gpu_part *h, unsigned i)
{
        return i < h->ndev ? h->dev[i].bytes : 0;
}

uint64_t ss_gpu_part_cut_arcs(const struct ss_gpu_part *h)
{
        return h->cut;
}

bool ss_gpu_part_healthy(const struct ss_gpu_part *h)
{
        return atomic_load(&h->healthy);
}

void ss_gpu_part_describe(const struct ss_gpu_part *h, char *buf, size_t len)
{
        size_t o =
            (size_t)snprintf(buf, len, "%u partitions on %u device(s) (", h->nparts, h->ndev);
        for (unsigned d = 0; d < h->ndev && o < len; d++)
                o += (size_t)snprintf(buf + o, len - o, "%s%d", d ? ", " : "", h->dev[d].id);
        if (o < len)
                o += (size_t)snprintf(buf + o, len - o, "), %.1f%% of arcs cut, ",
                                      h->g->m ? 100.0 * (double)h->cut / (double)h->g->m : 0.0);
        for (unsigned d = 0; d < h->ndev && o < len; d++)
                o += (size_t)snprintf(buf + o, len - o, "%s%.0f", d ? " + " : "",
                                      h->dev[d].bytes / SS__MIB);
        if (o < len)
                snprintf(buf + o, len - o, " MiB, delta %" PRIu64, h->delta);
}
