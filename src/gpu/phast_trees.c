/* Whole trees from the GPU's CCH sweep, out to the host (phast.h,
 * ss_gpu_phast_trees).
 *
 * A tree is 8 bytes a node: on NY-d 256 trees are 540 MB, which the link to
 * the host carries in about 11 ms, three times the sweep that made them
 * (3.75 ms). Copied after the sweep, as a matrix's columns are, the copy
 * sets the time. So the sources go in batches of a few dozen: while the
 * trees of one batch are on their way out, the next batch sweeps, and the
 * host runs the upward searches of the one after. A smaller batch sweeps
 * less efficiently (a sweep's fixed part is a chain of dependent launches,
 * about 1.4 ms on NY-d), but as long as it sweeps faster than its trees
 * leave, the link stays busy and sets the pace alone.
 *
 * Two streams: the sweeps and the gathers (rank-major distances into
 * trees by node id, a chunk of sources at a time, into one of two slots
 * of d_out) on p's stream; the copies out on the pipe's own. A gather waits
 * for its slot's previous copy, a copy for its gather. The seeds of a
 * batch go up from one of two pinned sets, which the host refills once
 * the batch two before it has swept.
 *
 * The copies overlap only into pinned memory (ss_solve_host_alloc): into
 * pageable memory each copy holds the host until it lands, so there the
 * batches are as large as the sweep's memory bounds allow, one after
 * another, as before the batches.
 */
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast_internal.h"

/* Sources a sweep while trees leave. Measured on one H200 at k = 256
 * (docs/benchmarks.md): on NY-d, 64 a sweep took the call from 15.6 ms
 * (one sweep, then the copies) to 12.5 ms, 128 to 14.0 and 32 to 15.4
 * (64 sweep in 2.0 ms and leave in about 2.7; 32 no longer sweep faster
 * than they leave). On a generated 1.07M-node graph a tree sweeps at about
 * its copy's pace: 128 took 88.6 ms, one sweep 90.2, 64 99.6 and 32 124.
 * So 64 below SS__PH_PIPE_N nodes, 128 from there, and fewer where their
 * distances would pass SS__PH_PIPE_BYTES or a quarter of the device's free
 * memory. A sweep's fixed part is long on a tall tree: on the generated
 * USA-size graph (3,673 levels) 64 trees took 2.32 ms a tree on the device
 * at 64 a sweep (11.4 GiB of distances), 3.80 at 32 and 10.8 at 8, the
 * width a bound of 2 GiB gave (docs/benchmarks.md). SS_GPU_PHAST_PIPE
 * overrides it; 0 sweeps every source at once and copies after, as a
 * matrix does. */
#define SS__PH_PIPE_K     64u
#define SS__PH_PIPE_K_BIG 128u
#define SS__PH_PIPE_N     (1u << 19)
#define SS__PH_PIPE_BYTES ((uint64_t)12 << 30)
/* Into pageable memory each copy holds the host until it lands, and
 * nothing overlaps: then as many sources a sweep as spread its fixed part
 * thinnest within bounds, 256 and 2^27 (source, node) pairs (a GiB), as
 * the gpu-cch row took before the batches. */
#define SS__PH_FLAT_K     256u
#define SS__PH_FLAT_PAIRS ((uint64_t)1 << 27)
/* Into pageable memory, or where memory is short, a slot of d_out holds
 * at most this many bytes of trees (and at least one tree). */
#define SS__PH_SLOT_BYTES ((uint64_t)1 << 29)

/* Bytes the sweep's distances may take, and apart from them the two slots
 * the trees leave from: SS__PH_PIPE_BYTES, and at most a quarter of the
 * device's free memory each (what this handle holds already counts as
 * free). */
static uint64_t ss__ph_pipe_room(const struct ss_gpu_phast *p)
{
        uint64_t bytes = SS__PH_PIPE_BYTES;
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                const uint64_t held = (p->cap_k * (uint64_t)p->n + p->out_cap) * 8;
                const uint64_t room = (free_b + held) / 4;
                bytes = room < bytes ? room : bytes;
        } else {
                cudaGetLastError();
        }
        return bytes;
}

static unsigned ss__ph_pipe_sources(const struct ss_gpu_phast *p, unsigned k, bool pinned,
                                    uint64_t room)
{
        unsigned kb;
        if (p->pipe.k > 0) {
                kb = (unsigned)p->pipe.k;
        } else if (!pinned) {
                const uint64_t fit = SS__PH_FLAT_PAIRS / p->n;
                kb = fit < 1 ? 1u : fit < SS__PH_FLAT_K ? (unsigned)fit : SS__PH_FLAT_K;
        } else {
                kb = p->n < SS__PH_PIPE_N ? SS__PH_PIPE_K : SS__PH_PIPE_K_BIG;
                const uint64_t fit = room / ((uint64_t)p->n * 8);
                while (kb > 1 && kb > fit)
                        kb /= 2;
        }
        return kb < k ? kb : k;
}

/* Trees a slot of d_out holds. Half a batch where the room allows: a
 * batch's gathers then wait only for the previous batch's copies, so the
 * next batch sweeps while this one's trees leave. With slots of a few
 * trees (a 512 MiB slot holds 2 of a USA-size graph's) the gathers, on the
 * sweep's stream, followed the copies a slot at a time, and the next sweep
 * began only as the last copies did: 64 trees a sweep took 6.28 ms a tree
 * there, 2.33 of it on the device. */
static unsigned ss__ph_pipe_chunk(const struct ss_gpu_phast *p, unsigned kb, bool pinned,
                                  uint64_t room)
{
        const uint64_t tree = (uint64_t)p->n * 8;
        uint64_t chunk = p->pipe.slot ? p->pipe.slot : (kb + 1) / 2;
        if (!p->pipe.slot && (!pinned || 2 * chunk * tree > room)) {
                chunk = SS__PH_SLOT_BYTES / tree;
                chunk = chunk < 1 ? 1 : chunk > SS__PH_CHUNK ? SS__PH_CHUNK : chunk;
        }
        return (unsigned)(chunk > kb ? kb : chunk);
}

/* Whether the host memory at dist is page-locked (the copies' overlap
 * needs it). */
static bool ss__ph_pinned(const void *dist)
{
        struct cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, dist) != cudaSuccess) {
                cudaGetLastError();
                return false;
        }
        return a.type == cudaMemoryTypeHost;
}

void ss__ph_pipe_free(struct ss_gpu_phast *p)
{
        struct ss__ph_pipe *q = &p->pipe;
        for (int j = 0; j < 2; j++) {
                cudaEvent_t *ev[] = {&q->gathered[j], &q->copied[j], &q->sw0[j], &q->sw1[j]};
                for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
                        if (*ev[i])
                                cudaEventDestroy(*ev[i]);
                cudaFreeHost(q->h_rank[j]);
                cudaFreeHost(q->h_src[j]);
                cudaFreeHost(q->h_dist[j]);
        }
        if (q->copy)
                cudaStreamDestroy(q->copy);
        const int k = q->k;
        const unsigned delay = q->delay_us, slot = q->slot;
        memset(q, 0, sizeof(*q));
        q->k = k;
        q->delay_us = delay;
        q->slot = slot;
}

/* The stream, the events, and two sets of pinned seeds for kb sources. */
static int ss__ph_pipe_make(struct ss_gpu_phast *p, unsigned kb, struct ss_err *err)
{
        struct ss__ph_pipe *q = &p->pipe;
        const uint64_t slots = (uint64_t)kb * (p->nlevels + 1);
        if (q->made && slots <= q->seed_cap)
                return SS_OK;
        ss__ph_pipe_free(p);
        int rc = SS_OK;
        SS__CUDA_GOTO(cudaStreamCreateWithFlags(&q->copy, cudaStreamNonBlocking), fail);
        for (int j = 0; j < 2; j++) {
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&q->gathered[j], cudaEventDisableTiming),
                              fail);
                SS__CUDA_GOTO(cudaEventCreateWithFlags(&q->copied[j], cudaEventDisableTiming),
                              fail);
                SS__CUDA_GOTO(cudaEventCreate(&q->sw0[j]), fail);
                SS__CUDA_GOTO(cudaEventCreate(&q->sw1[j]), fail);
                SS__CUDA_GOTO(
                    cudaHostAlloc((void **)&q->h_rank[j], slots * 4, cudaHostAllocDefault), fail);
                SS__CUDA_GOTO(cudaHostAlloc((void **)&q->h_src[j], slots * 4, cudaHostAllocDefault),
                              fail);
                SS__CUDA_GOTO(
                    cudaHostAlloc((void **)&q->h_dist[j], slots * 8, cudaHostAllocDefault), fail);
        }
        q->seed_cap = slots;
        q->made = true;
        return SS_OK;
fail:
        ss__ph_pipe_free(p);
        return ss__ph_refused(rc);
}

/* Batch b of ks sources (at sources, kb the sweep's width): its upward
 * searches into seed set j, up, the sweep, and its trees out through the
 * slots from *slot on. */
struct ss__ph_batch {
        const uint32_t *sources;
        unsigned ks, kb, chunk;
        ss_dist *dist; /* the batch's first tree */
        int j;
};

static int ss__ph_batch_run(struct ss_gpu_phast *p, const struct ss__ph_batch *b, unsigned *slot,
                            bool pending[2], uint64_t *up_ns, struct ss_err *err)
{
        struct ss__ph_pipe *q = &p->pipe;
        const int j = b->j;
        const uint64_t per = p->nlevels + 1;
        const uint32_t ns = (uint32_t)(b->ks * per);
        const struct ss__ph_seeds sd = {
            .rank = q->h_rank[j], .src = q->h_src[j], .dist = q->h_dist[j], .count = ns};
        const uint64_t u0 = ss_now_ns();
        ss__ph_upward_into(p, b->sources, b->ks, &sd);
        *up_ns += ss_now_ns() - u0;
        /* Pinned seeds, not waited for: the set is refilled only once
         * this batch has swept. Sources past ks, in the last batch, have no
         * seeds: their columns stay infinite and are not gathered. */
        int rc = ss__ph_seed_sweep(p, &sd, b->kb, false, q->sw0[j], NULL, q->sw1[j], err);
        if (rc != SS_OK)
                return rc;
        const uint64_t slot_len = (uint64_t)b->chunk * p->n;
        for (unsigned c0 = 0; c0 < b->ks; c0 += b->chunk) {
                const unsigned cs = b->ks - c0 < b->chunk ? b->ks - c0 : b->chunk;
                unsigned long long *out = p->d_out + *slot * slot_len;
                if (pending[*slot])
                        SS__CUDA(cudaStreamWaitEvent(p->stream, q->copied[*slot], 0));
                if ((rc = ss__ph_gather(p->d_d, b->kb, p->n, p->d_rank, NULL, c0, cs, out,
                                        p->stream, err)))
                        return rc;
                SS__CUDA(cudaEventRecord(q->gathered[*slot], p->stream));
                SS__CUDA(cudaStreamWaitEvent(q->copy, q->gathered[*slot], 0));
                if (q->delay_us && (rc = ss__ph_delay(q->delay_us, q->copy, err)))
                        return rc;
                SS__CUDA(cudaMemcpyAsync(b->dist + (size_t)c0 * p->n, out, (size_t)cs * p->n * 8,
                                         cudaMemcpyDeviceToHost, q->copy));
                SS__CUDA(cudaEventRecord(q->copied[*slot], q->copy));
                pending[*slot] = true;
                *slot ^= 1;
        }
        return SS_OK;
}

/* Adds the sweep of seed set j, when it has one, to *ns (its events are
 * done: the caller waited). */
static int ss__ph_sweep_time(struct ss__ph_pipe *q, int j, bool swept[2], uint64_t *ns,
                             struct ss_err *err)
{
        if (!swept[j])
                return SS_OK;
        float ms = 0;
        SS__CUDA(cudaEventElapsedTime(&ms, q->sw0[j], q->sw1[j]));
        *ns += (uint64_t)(ms * 1e6);
        swept[j] = false;
        return SS_OK;
}

int ss__ph_trees(struct ss_gpu_phast *p, const uint32_t *sources, unsigned k, ss_dist *dist,
                 struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        memset(st, 0, sizeof(*st));
        if (k == 0 || p->n == 0)
                return SS_OK;
        int rc = ss__ph_nodes_ok(p, sources, k, "source", err);
        if (rc != SS_OK)
                return rc;
        SS__CUDA(cudaSetDevice(p->device));
        const bool pinned = ss__ph_pinned(dist);
        const uint64_t room = ss__ph_pipe_room(p);
        const unsigned kb = ss__ph_pipe_sources(p, k, pinned, room);
        const uint64_t chunk = ss__ph_pipe_chunk(p, kb, pinned, room);
        if ((rc = ss__ph_reserve(p, kb, err)) ||
            (rc = ss__ph_reserve_out(p, 2 * chunk * p->n, 0, err)) ||
            (rc = ss__ph_pipe_make(p, kb, err)))
                return rc;
        struct ss__ph_pipe *q = &p->pipe;
        bool pending[2] = {false, false}, swept[2] = {false, false};
        unsigned slot = 0;
        uint64_t up_ns = 0, up_first_ns = 0, sweep_ns = 0;
        unsigned b = 0;
        for (unsigned s0 = 0; s0 < k && rc == SS_OK; s0 += kb, b++) {
                const int j = (int)(b & 1);
                /* Set j went up for the batch two before this one: once
                 * that batch has swept, the host may refill it. */
                if (swept[j]) {
                        const cudaError_t e = cudaEventSynchronize(q->sw1[j]);
                        if (e != cudaSuccess) {
                                rc = ss__cuda_fail(err, "cudaEventSynchronize (the sweep)", e,
                                                   __FILE__, __LINE__);
                                break;
                        }
                        if ((rc = ss__ph_sweep_time(q, j, swept, &sweep_ns, err)))
                                break;
                }
                const struct ss__ph_batch bt = {.sources = sources + s0,
                                                .ks = k - s0 < kb ? k - s0 : kb,
                                                .kb = kb,
                                                .chunk = (unsigned)chunk,
                                                .dist = dist + (size_t)s0 * p->n,
                                                .j = j};
                rc = ss__ph_batch_run(p, &bt, &slot, pending, &up_ns, err);
                swept[j] = rc == SS_OK;
                /* Later batches go up while earlier ones sweep or copy. */
                if (b == 0)
                        up_first_ns = up_ns;
        }
        /* Both streams drain even after an error: no copy may land in
         * dist once the call has returned. */
        const cudaError_t e1 = cudaStreamSynchronize(p->stream);
        const cudaError_t e2 = cudaStreamSynchronize(q->copy);
        if (rc == SS_OK && (e1 != cudaSuccess || e2 != cudaSuccess))
                rc = ss__cuda_fail(err, "cudaStreamSynchronize (trees)",
                                   e1 != cudaSuccess ? e1 : e2, __FILE__, __LINE__);
        for (int j = 0; j < 2 && rc == SS_OK; j++)
                rc = ss__ph_sweep_time(q, j, swept, &sweep_ns, err);
        if (rc != SS_OK)
                return rc;
        st->up_ns = up_ns;
        st->up_busy_ns = up_ns - up_first_ns;
        st->sweep_ns = sweep_ns;
        st->levels = p->nlevels;
        st->launches = p->launches;
        st->sweeps = b;
        st->top = ss__ph_top_depths(p, kb);
        st->total_ns = ss_now_ns() - t0;
        return SS_OK;
}
