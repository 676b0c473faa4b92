/* One CCH sweep shared by several devices (phast.h, "several devices").
 *
 * The ranks whose subtree is small go to parts whole (cch/schedule.h's
 * share), the ranks above them to every part: a part's ranks read only
 * their own subtree's and the shared ones, so each device sweeps its part
 * alone, a depth at a time as the plain sweep does, with the same upward
 * searches' seeds. Each depth's work is split between the devices and the
 * shared top is swept twice; the depths' launches stay one after another on
 * each device, so the split gains where a depth's work, not its launch,
 * takes the time (the wide depths of a large graph).
 *
 * Then every part copies the ranks it alone swept into the others' arrays
 * (peer stores), and each device sends a slice of the node ids to the host,
 * over its own link. */
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "gpu/phast_internal.h"

struct ss_gpu_phast_split {
        unsigned parts;
        struct ss_gpu_phast *part[SS_GPU_PHAST_PARTS_MAX];
        uint32_t *d_mine[SS_GPU_PHAST_PARTS_MAX]; /* on part q's device: the ranks only q sweeps */
        uint32_t mine[SS_GPU_PHAST_PARTS_MAX];
        uint32_t lo[SS_GPU_PHAST_PARTS_MAX + 1]; /* part q sends nodes lo[q] .. lo[q + 1] */
        cudaEvent_t seeded[SS_GPU_PHAST_PARTS_MAX], put[SS_GPU_PHAST_PARTS_MAX];
};

void ss_gpu_phast_split_close(struct ss_gpu_phast_split *s)
{
        if (!s)
                return;
        for (unsigned q = 0; q < s->parts; q++) {
                if (!s->part[q])
                        continue;
                cudaSetDevice(s->part[q]->device);
                cudaFree(s->d_mine[q]);
                if (s->seeded[q])
                        cudaEventDestroy(s->seeded[q]);
                if (s->put[q])
                        cudaEventDestroy(s->put[q]);
                ss_gpu_phast_close(s->part[q]);
        }
        free(s);
}

/* Lets each device store into the others' memory. */
static int ss__split_peers(const int *devices, unsigned parts, struct ss_err *err)
{
        for (unsigned a = 0; a < parts; a++)
                for (unsigned b = 0; b < parts; b++) {
                        if (devices[a] == devices[b])
                                continue;
                        int can = 0;
                        SS__CUDA(cudaDeviceCanAccessPeer(&can, devices[a], devices[b]));
                        if (!can)
                                return ss_err_set(err, SS_ENOGPU,
                                                  "device %d cannot reach device %d's memory: "
                                                  "the sweep cannot be split over them",
                                                  devices[a], devices[b]);
                        SS__CUDA(cudaSetDevice(devices[a]));
                        const cudaError_t e = cudaDeviceEnablePeerAccess(devices[b], 0);
                        if (e == cudaErrorPeerAccessAlreadyEnabled)
                                cudaGetLastError();
                        else if (e != cudaSuccess)
                                return ss__cuda_fail(err, "cudaDeviceEnablePeerAccess", e, __FILE__,
                                                     __LINE__);
                }
        return SS_OK;
}

int ss_gpu_phast_split_open(const int *devices, unsigned parts, const struct ss_cch *c,
                            const struct ss_cch_metric *m, struct ss_gpu_phast_split **out,
                            struct ss_err *err)
{
        *out = NULL;
        if (parts < 1 || parts > SS_GPU_PHAST_PARTS_MAX)
                return ss_err_set(err, SS_EINVAL, "a split sweep takes 1 to %u parts, not %u",
                                  SS_GPU_PHAST_PARTS_MAX, parts);
        if (!devices || !c || !m || m->cch != c)
                return ss_err_set(err, SS_EINVAL,
                                  "a split sweep needs its devices, a CCH and its metric");
        int rc = ss__split_peers(devices, parts, err);
        if (rc != SS_OK)
                return rc;
        struct ss_gpu_phast_split *s = calloc(1, sizeof(*s));
        uint8_t *owner = malloc(c->n ? c->n : 1);
        uint32_t *mine = malloc((size_t)(c->n ? c->n : 1) * 4);
        if (!s || !owner || !mine) {
                free(s);
                free(owner);
                free(mine);
                return ss_err_set(err, SS_ENOMEM, "no memory for a split sweep");
        }
        s->parts = parts;
        const char *cu = getenv("SS_GPU_PHAST_SHARE");
        const uint32_t cut = cu && *cu ? (uint32_t)strtoul(cu, NULL, 10) : 0;
        if ((rc = ss_cch_sched_share(c, parts, cut, owner, err)) != SS_OK)
                goto fail;
        for (unsigned q = 0; q < parts; q++) {
                if ((rc = ss__ph_open(devices[q], c, m, owner, q, &s->part[q], err)) != SS_OK)
                        goto fail;
                uint32_t count = 0;
                for (uint32_t z = 0; z < c->n; z++)
                        if (owner[z] == q)
                                mine[count++] = z;
                s->mine[q] = count;
                s->lo[q] = (uint32_t)((uint64_t)c->n * q / parts);
                SS__CUDA_GOTO(cudaSetDevice(devices[q]), fail);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&s->seeded[q], cudaEventDisableTiming),
                              fail);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&s->put[q], cudaEventDisableTiming), fail);
                SS__CUDA_GOTO(cudaMalloc((void **)&s->d_mine[q], (size_t)(count ? count : 1) * 4),
                              fail);
                SS__CUDA_GOTO(
                    cudaMemcpy(s->d_mine[q], mine, (size_t)count * 4, cudaMemcpyHostToDevice),
                    fail);
                s->part[q]->fixed_bytes += (uint64_t)count * 4;
                ss_log_info("gpu",
                            "split sweep: part %u on device %d keeps %u of %u ranks (%u its own) "
                            "and %u of %u upward edges",
                            q, devices[q], s->part[q]->full.h.count, c->n, count, s->part[q]->arcs,
                            c->arcs);
        }
        s->lo[parts] = c->n;
        free(owner);
        free(mine);
        *out = s;
        return SS_OK;
fail:
        rc = ss__ph_refused(rc);
        free(owner);
        free(mine);
        ss_gpu_phast_split_close(s);
        return rc;
}

/* Each part's own ranks into every other part's array, once that part has
 * seeded its own (its fill would overwrite them); then each part's slice of
 * the nodes out, once every other part has put. */
static int ss__split_out(struct ss_gpu_phast_split *s, unsigned k, ss_dist *dist,
                         struct ss_err *err)
{
        const uint32_t n = s->part[0]->n;
        int rc;
        for (unsigned q = 0; q < s->parts; q++) {
                struct ss_gpu_phast *p = s->part[q];
                SS__CUDA(cudaSetDevice(p->device));
                for (unsigned o = 0; o < s->parts; o++) {
                        if (o == q)
                                continue;
                        SS__CUDA(cudaStreamWaitEvent(p->stream, s->seeded[o], 0));
                        if ((rc = ss__ph_put(p->d_d, s->part[o]->d_d, k, s->d_mine[q], s->mine[q],
                                             p->stream, err)))
                                return rc;
                }
                SS__CUDA(cudaEventRecord(s->put[q], p->stream));
        }
        for (unsigned q = 0; q < s->parts; q++) {
                struct ss_gpu_phast *p = s->part[q];
                const uint32_t lo = s->lo[q], len = s->lo[q + 1] - lo;
                SS__CUDA(cudaSetDevice(p->device));
                for (unsigned o = 0; o < s->parts; o++)
                        if (o != q)
                                SS__CUDA(cudaStreamWaitEvent(p->stream, s->put[o], 0));
                for (unsigned s0 = 0; dist && len && s0 < k; s0 += SS__PH_CHUNK) {
                        const unsigned ks = k - s0 < SS__PH_CHUNK ? k - s0 : SS__PH_CHUNK;
                        if ((rc = ss__ph_gather(p->d_d, k, len, p->d_rank + lo, NULL, s0, ks,
                                                p->d_out, p->stream, err)))
                                return rc;
                        /* A copy per source: a 2D copy's pitch (8n bytes) has a
                         * limit that large graphs pass. */
                        for (unsigned j = 0; j < ks; j++)
                                SS__CUDA(cudaMemcpyAsync(
                                    dist + (size_t)(s0 + j) * n + lo, p->d_out + (size_t)j * len,
                                    (size_t)len * 8, cudaMemcpyDeviceToHost, p->stream));
                }
        }
        return SS_OK;
}

int ss_gpu_phast_split_trees(struct ss_gpu_phast_split *s, const uint32_t *sources, unsigned k,
                             ss_dist *dist, struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        struct ss_gpu_phast_stats none;
        if (!st)
                st = &none;
        memset(st, 0, sizeof(*st));
        struct ss_gpu_phast *p0 = s->part[0];
        if (k == 0 || p0->n == 0)
                return SS_OK;
        for (unsigned i = 0; i < k; i++)
                if (sources[i] >= p0->n)
                        return ss_err_set(err, SS_EINVAL, "source %u (index %u) is outside 0..%u",
                                          sources[i], i, p0->n - 1);
        int rc = SS_OK;
        const uint64_t chunk = k < SS__PH_CHUNK ? k : SS__PH_CHUNK;
        for (unsigned q = 0; q < s->parts && rc == SS_OK; q++) {
                SS__CUDA(cudaSetDevice(s->part[q]->device));
                rc = ss__ph_reserve(s->part[q], k, err);
                if (rc == SS_OK && dist)
                        rc = ss__ph_reserve_out(s->part[q], chunk * (s->lo[q + 1] - s->lo[q]), 0,
                                                err);
        }
        if (rc != SS_OK)
                return rc;
        /* The upward searches once, on the host; their seeds to every part. */
        struct ss__ph_seeds sd;
        if ((rc = ss__ph_upward(p0, sources, k, &sd, err)) != SS_OK)
                return rc;
        st->up_ns = ss_now_ns() - t0;
        for (unsigned q = 0; q < s->parts && rc == SS_OK; q++)
                rc = ss__ph_start(s->part[q], &sd, k, s->seeded[q], err);
        ss__ph_seeds_free(&sd);
        if (rc == SS_OK)
                rc = ss__split_out(s, k, dist, err);
        for (unsigned q = 0; q < s->parts; q++) {
                struct ss_gpu_phast *p = s->part[q];
                cudaSetDevice(p->device);
                const cudaError_t e = cudaStreamSynchronize(p->stream);
                if (e != cudaSuccess && rc == SS_OK)
                        rc = ss__cuda_fail(err, "cudaStreamSynchronize (split sweep)", e, __FILE__,
                                           __LINE__);
                float ms = 0;
                if (rc == SS_OK && cudaEventElapsedTime(&ms, p->ev0, p->ev1) == cudaSuccess &&
                    (uint64_t)(ms * 1e6) > st->sweep_ns)
                        st->sweep_ns = (uint64_t)(ms * 1e6);
                st->launches += p->launches;
        }
        if (rc != SS_OK)
                return rc;
        st->levels = p0->nlevels;
        st->sweeps = 1;
        st->total_ns = ss_now_ns() - t0;
        return SS_OK;
}

unsigned ss_gpu_phast_split_parts(const struct ss_gpu_phast_split *s)
{
        return s ? s->parts : 0;
}

uint64_t ss_gpu_phast_split_bytes(const struct ss_gpu_phast_split *s, unsigned part)
{
        return s && part < s->parts ? ss_gpu_phast_bytes(s->part[part]) : 0;
}
