/* Batched searches on the GPU, host side: the batch workspaces, running k
 * sources through the batched Δ-stepping (kernels/batch.cu), and what comes
 * after the search (distances gathered, paths walked back, landmark tables).
 *
 * A batch larger than a workspace runs in turns of kcap sources. A run whose
 * queues overflowed (the kernel stops and says so) is redone as two halves:
 * the queues hold at least n entries, which one source cannot exceed, so the
 * halving always ends.
 */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/gpu_internal.h"

/* ------------------------------------------------------------------ */
/* Workspaces                                                          */
/* ------------------------------------------------------------------ */

/* Queue capacities for kcap sources over n vertices: a fraction of all
 * pairs (each bucket holds a fraction of them), never less than n. */
static void ss__caps(uint32_t n, unsigned kcap, uint64_t *q, uint64_t *f, uint64_t *s)
{
        /* A test hook: the smallest queues, so that batches overflow and
         * the halving is exercised. */
        const char *squeeze = getenv("SS_GPU_BATCH_SQUEEZE");
        if (squeeze && *squeeze && strcmp(squeeze, "0") != 0) {
                *q = *f = *s = n;
                return;
        }
        const uint64_t pairs = (uint64_t)kcap * n;
        *q = pairs / 8 > n ? pairs / 8 : n;
        *f = pairs / 4 > n ? pairs / 4 : n;
        *s = pairs / 8 > n ? pairs / 8 : n;
}

uint64_t ss__bws_fcap(uint32_t n, unsigned kcap)
{
        uint64_t q, f, s;
        ss__caps(n, kcap, &q, &f, &s);
        return f;
}

uint64_t ss__bws_bytes(uint32_t n, unsigned kcap)
{
        uint64_t q, f, s;
        ss__caps(n, kcap, &q, &f, &s);
        const uint64_t pairs = (uint64_t)kcap * n;
        const uint64_t bwords = (pairs + 31) / 32;
        return pairs * 8 + (2 * q + 2 * f + s) * 4 + 5 * bwords * 4 + (uint64_t)kcap * 6 * 4 +
               sizeof(struct ss__bctl) + (uint64_t)SS__GATHER * 8 + 4;
}

void ss__bws_free(struct ss__bhost *b)
{
        if (!b)
                return;
        cudaFree(b->w.dist);
        cudaFree(b->w.q[0]);
        cudaFree(b->w.far[0]);
        cudaFree(b->w.set);
        cudaFree(b->w.bits);
        cudaFree(b->w.src);
        cudaFree(b->w.ctl);
        cudaFree(b->dgather);
        cudaFree(b->dbad);
        cudaFreeHost(b->w.hctl);
        cudaFreeHost(b->hsrc);
        cudaFreeHost(b->hgather);
        free(b);
}

int ss__bws_alloc(struct ss__bhost **out, uint32_t n, unsigned kcap, unsigned blocks,
                  struct ss_err *err)
{
        struct ss__bhost *b = calloc(1, sizeof(*b));
        int rc = SS_OK;
        if (!b)
                return ss_err_set(err, SS_ENOMEM, "no memory for a batch workspace");
        struct ss__bws *w = &b->w;
        w->kcap = kcap;
        w->blocks = blocks;

        ss__caps(n, kcap, &w->qcap, &w->fcap, &w->scap);
        const uint64_t pairs = (uint64_t)kcap * n;
        w->bwords = (pairs + 31) / 32;
        SS__CUDA_GOTO(cudaMalloc((void **)&w->dist, pairs * 8), fail);
        /* One allocation per pair of queues: a path walk uses both near
         * queues as one region and the compact copy both far piles. */
        SS__CUDA_GOTO(cudaMalloc((void **)&w->q[0], 2 * w->qcap * 4), fail);
        w->q[1] = w->q[0] + w->qcap;
        SS__CUDA_GOTO(cudaMalloc((void **)&w->far[0], 2 * w->fcap * 4), fail);
        w->far[1] = w->far[0] + w->fcap;
        SS__CUDA_GOTO(cudaMalloc((void **)&w->set, w->scap * 4), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&w->bits, 5 * w->bwords * 4), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&w->src, (size_t)kcap * 6 * 4), fail);
        w->tgt = w->src + kcap;
        w->done = w->src + 2 * (size_t)kcap;
        w->open = w->src + 3 * (size_t)kcap;
        w->plen = w->src + 4 * (size_t)kcap;
        w->poff = w->src + 5 * (size_t)kcap;
        SS__CUDA_GOTO(cudaMalloc((void **)&w->ctl, sizeof(struct ss__bctl)), fail);
        SS__CUDA_GOTO(cudaMemset(w->ctl, 0, sizeof(struct ss__bctl)), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&b->dgather, (size_t)SS__GATHER * 8), fail);
        SS__CUDA_GOTO(cudaMalloc((void **)&b->dbad, 4), fail);
        SS__CUDA_GOTO(
            cudaHostAlloc((void **)&w->hctl, sizeof(struct ss__bctl), cudaHostAllocDefault), fail);
        SS__CUDA_GOTO(cudaHostAlloc((void **)&b->hsrc, (size_t)kcap * 4 * 4, cudaHostAllocDefault),
                      fail);
        b->htgt = b->hsrc + kcap;
        b->hplen = b->hsrc + 2 * (size_t)kcap;
        b->hpoff = b->hsrc + 3 * (size_t)kcap;
        SS__CUDA_GOTO(
            cudaHostAlloc((void **)&b->hgather, (size_t)SS__GATHER * 8, cudaHostAllocDefault),
            fail);
        *out = b;
        return SS_OK;
fail:
        ss__bws_free(b);
        return rc;
}

/* ------------------------------------------------------------------ */
/* One kernel run                                                      */
/* ------------------------------------------------------------------ */

struct ss__bjob {
        struct ss_gpu *gpu;
        struct ss__ws *sw; /* the stream's single-search workspace: stream, events, cancel */
        struct ss__bhost *b;
        uint32_t *d_targets; /* the stream's target buffer, SS__TCHUNK entries */
        const struct ss_gpu_batch *q;
        struct ss_gpu_batch_result *r;
        bool reverse;        /* search the reverse graph */
        struct ss__lmdst lm; /* landmarks: where the columns go (ss__batch_run) */
        bool landmarks;
        uint32_t *bad; /* landmarks: 1 + a node too far or unreachable, else 0 */
};

/* Copies the walked paths of slots [0, k) to the caller: lengths first,
 * then all paths in one compact copy. */
static int ss__paths(struct ss__bjob *j, unsigned k, const unsigned *at, struct ss_err *err)
{
        struct ss__bhost *b = j->b;
        struct ss__ws *w = j->sw;
        struct ss_gpu_batch_result *r = j->r;
        const uint32_t per = (uint32_t)(2 * b->w.qcap / k);
        uint64_t total = 0;
        for (unsigned s = 0; s < k; s++) {
                const uint32_t len = b->hplen[s];
                b->hpoff[s] = (uint32_t)total;
                if (len > 0 && len <= per)
                        total += len;
        }
        if (total == 0)
                goto split;
        SS__CUDA(
            cudaMemcpyAsync(b->w.poff, b->hpoff, (size_t)k * 4, cudaMemcpyHostToDevice, w->stream));
        int rc;
        if ((rc = ss__launch_batch_compact(&b->w, w->stream, k, b->w.q[0], per, b->w.far[0], err)))
                return rc;
        uint32_t *all = malloc(total * 4);
        if (!all)
                return ss_err_set(err, SS_ENOMEM, "no memory for %" PRIu64 " path nodes", total);
        cudaError_t e =
            cudaMemcpyAsync(all, b->w.far[0], total * 4, cudaMemcpyDeviceToHost, w->stream);
        if (e == cudaSuccess)
                e = cudaStreamSynchronize(w->stream);
        if (e != cudaSuccess) {
                free(all);
                return ss__cuda_fail(err, "cudaMemcpyAsync (paths)", e, __FILE__, __LINE__);
        }
        for (unsigned s = 0; s < k; s++) {
                const uint32_t len = b->hplen[s];
                if (len == 0 || len > per)
                        continue;
                uint32_t *p = malloc((size_t)len * 4);
                if (!p) {
                        free(all);
                        return ss_err_set(err, SS_ENOMEM, "no memory for a path of %u nodes", len);
                }
                memcpy(p, all + b->hpoff[s], (size_t)len * 4);
                r->path[at[s]] = p;
                r->path_len[at[s]] = len;
        }
        free(all);
split:
        for (unsigned s = 0; s < k; s++) {
                const uint32_t len = b->hplen[s];
                if (len > per) {
                        r->path_needs_cpu[at[s]] = true;
                        ss_log_debug(
                            "gpu", "batched walk to %u: %s; path left to the CPU", b->htgt[s],
                            len == SS__WALK_LONG ? "longer than its room" : "no tight arc");
                }
        }
        return SS_OK;
}

/* Runs the k sources listed (by index into q) in one kernel. Sets *overflow
 * when the queues filled up (nothing is delivered then). */
static int ss__once(struct ss__bjob *j, const unsigned *at, unsigned k, bool *overflow,
                    struct ss_err *err)
{
        struct ss_gpu *gpu = j->gpu;
        struct ss__bhost *b = j->b;
        struct ss__ws *w = j->sw;
        const struct ss_gpu_batch *q = j->q;
        const uint32_t n = gpu->g.n;
        int rc;
        *overflow = false;
        for (unsigned s = 0; s < k; s++) {
                b->hsrc[s] = q->sources[at[s]];
                b->htgt[s] = q->kind == SS_GPU_BATCH_ROUTES ? q->targets[at[s]] : 0;
        }
        SS__CUDA(
            cudaMemcpyAsync(b->w.src, b->hsrc, (size_t)k * 4, cudaMemcpyHostToDevice, w->stream));
        SS__CUDA(
            cudaMemcpyAsync(b->w.tgt, b->htgt, (size_t)k * 4, cudaMemcpyHostToDevice, w->stream));
        struct ss__blaunch l = {.k = k, .kind = SS__BK_ALL};
        if (q->kind == SS_GPU_BATCH_ROUTES) {
                l.kind = SS__BK_ROUTES;
        } else if (q->kind == SS_GPU_BATCH_TARGETS && q->ntargets <= SS__TCHUNK) {
                /* Longer lists run as one-to-all and are gathered in chunks. */
                memcpy(w->htargets, q->targets, q->ntargets * 4);
                SS__CUDA(cudaMemcpyAsync(j->d_targets, w->htargets, q->ntargets * 4,
                                         cudaMemcpyHostToDevice, w->stream));
                l.kind = SS__BK_TARGETS;
                l.targets = j->d_targets;
                l.ntargets = (uint32_t)q->ntargets;
        }
        const struct ss__dgraph *g = j->reverse ? &gpu->rgb : &gpu->gb;
        SS__CUDA(cudaEventRecord(w->ev_start, w->stream));
        const unsigned take = b->w.blocks;
        ss__blocks_take(gpu, take);
        rc = ss__launch_batch(g, &b->w, w, &l, err);
        if (rc == SS_OK) {
                cudaError_t e = cudaEventRecord(w->ev_search, w->stream);
                if (e == cudaSuccess)
                        e = cudaMemcpyAsync(b->w.hctl, b->w.ctl, sizeof(struct ss__bctl),
                                            cudaMemcpyDeviceToHost, w->stream);
                if (e == cudaSuccess)
                        e = cudaEventRecord(w->ev_end, w->stream);
                if (e != cudaSuccess)
                        rc = ss__cuda_fail(err, "cudaEventRecord", e, __FILE__, __LINE__);
        }
        if (rc == SS_OK)
                rc = ss__wait(w, w->ev_end, q->cancel, err);
        ss__blocks_give(gpu, take);
        if (rc)
                return rc;
        const struct ss__bctl *c = b->w.hctl;
        float ms = 0;
        SS__CUDA(cudaEventElapsedTime(&ms, w->ev_start, w->ev_search));
        j->r->kernel_ns += (uint64_t)(ms * 1e6);
        j->r->phases += c->phases;
        j->r->buckets += c->buckets;
        j->r->searches++;
        if (c->cancelled)
                return ss_err_set(err, SS_ETIMEDOUT,
                                  "the batch passed its deadline on the GPU after %u phases",
                                  c->phases);
        if (c->overflow) {
                *overflow = true;
                return SS_OK;
        }

        /* Answers. */
        if (q->kind == SS_GPU_BATCH_ROUTES) {
                if ((rc = ss__launch_batch_gather(&b->w, w->stream, n, k, SS__BK_ROUTES, NULL, 0,
                                                  b->dgather, err)))
                        return rc;
                SS__CUDA(cudaMemcpyAsync(b->hgather, b->dgather, (size_t)k * 8,
                                         cudaMemcpyDeviceToHost, w->stream));
                if (q->want_paths) {
                        const uint32_t per = (uint32_t)(2 * b->w.qcap / k);
                        if ((rc = ss__launch_batch_walk(&gpu->rg, &b->w, w->stream, k, b->w.q[0],
                                                        per, err)))
                                return rc;
                        SS__CUDA(cudaMemcpyAsync(b->hplen, b->w.plen, (size_t)k * 4,
                                                 cudaMemcpyDeviceToHost, w->stream));
                }
                SS__CUDA(cudaStreamSynchronize(w->stream));
                for (unsigned s = 0; s < k; s++)
                        q->dist[at[s]] = b->hgather[s];
                if (q->want_paths && (rc = ss__paths(j, k, at, err)))
                        return rc;
        } else if (j->landmarks) {
                SS__CUDA(cudaMemsetAsync(b->dbad, 0, 4, w->stream));
                /* Into the device table at the batch's columns; or, without
                 * one, into the far piles (free after the search; the caller
                 * keeps k * n words within them), then to the host. */
                uint32_t *out = j->lm.dev ? j->lm.dev : b->w.far[0];
                if ((rc = ss__launch_batch_transpose(&b->w, w->stream, n, k, out,
                                                     j->lm.dev ? j->lm.col : 0,
                                                     j->lm.dev ? j->lm.cols : k, b->dbad, err)))
                        return rc;
                uint32_t bad = 0;
                if (!j->lm.dev)
                        SS__CUDA(cudaMemcpyAsync(j->lm.host, b->w.far[0], (size_t)k * n * 4,
                                                 cudaMemcpyDeviceToHost, w->stream));
                SS__CUDA(cudaMemcpyAsync(&bad, b->dbad, 4, cudaMemcpyDeviceToHost, w->stream));
                SS__CUDA(cudaStreamSynchronize(w->stream));
                *j->bad = bad;
                if (bad)
                        return ss_err_set(err, SS_EINVAL,
                                          "node %u is unreachable from or to a landmark, or 2^32 "
                                          "away",
                                          bad);
        } else if (l.kind == SS__BK_TARGETS || q->kind == SS_GPU_BATCH_TARGETS) {
                /* Row-major k x nt, through the gather buffer in pieces. */
                const size_t nt = q->ntargets;
                const size_t rows = SS__GATHER / nt > 0 ? SS__GATHER / nt : 0;
                if (rows > 0 && l.kind == SS__BK_TARGETS) {
                        for (unsigned s0 = 0; s0 < k; s0 += (unsigned)rows) {
                                const unsigned kk = k - s0 < rows ? k - s0 : (unsigned)rows;
                                /* gather rows s0.. by shifting the slot base: the
                                 * kernel reads slot s's row at s * n. */
                                struct ss__bws sub = b->w;
                                sub.dist = b->w.dist + (uint64_t)s0 * n;
                                if ((rc = ss__launch_batch_gather(&sub, w->stream, n, kk,
                                                                  SS__BK_TARGETS, j->d_targets,
                                                                  (uint32_t)nt, b->dgather, err)))
                                        return rc;
                                SS__CUDA(cudaMemcpyAsync(b->hgather, b->dgather, kk * nt * 8,
                                                         cudaMemcpyDeviceToHost, w->stream));
                                SS__CUDA(cudaStreamSynchronize(w->stream));
                                for (unsigned s = 0; s < kk; s++)
                                        memcpy(q->dist + (size_t)at[s0 + s] * nt,
                                               b->hgather + (size_t)s * nt, nt * 8);
                        }
                } else {
                        /* Targets in chunks of SS__TCHUNK, one row at a time. */
                        for (unsigned s = 0; s < k; s++) {
                                struct ss__bws sub = b->w;
                                sub.dist = b->w.dist + (uint64_t)s * n;
                                for (size_t off = 0; off < nt; off += SS__TCHUNK) {
                                        const size_t c2 =
                                            nt - off < SS__TCHUNK ? nt - off : SS__TCHUNK;
                                        memcpy(w->htargets, q->targets + off, c2 * 4);
                                        SS__CUDA(cudaMemcpyAsync(j->d_targets, w->htargets, c2 * 4,
                                                                 cudaMemcpyHostToDevice,
                                                                 w->stream));
                                        if ((rc = ss__launch_batch_gather(
                                                 &sub, w->stream, n, 1, SS__BK_TARGETS,
                                                 j->d_targets, (uint32_t)c2, b->dgather, err)))
                                                return rc;
                                        SS__CUDA(cudaMemcpyAsync(b->hgather, b->dgather, c2 * 8,
                                                                 cudaMemcpyDeviceToHost,
                                                                 w->stream));
                                        SS__CUDA(cudaStreamSynchronize(w->stream));
                                        memcpy(q->dist + (size_t)at[s] * nt + off, b->hgather,
                                               c2 * 8);
                                }
                        }
                }
        } else {
                /* One-to-all rows go straight to the caller's memory; rows of
                 * consecutive sources in one copy. */
                for (unsigned s = 0; s < k;) {
                        unsigned e2 = s + 1;
                        while (e2 < k && at[e2] == at[e2 - 1] + 1)
                                e2++;
                        SS__CUDA(cudaMemcpyAsync(
                            q->dist + (size_t)at[s] * n, b->w.dist + (uint64_t)s * n,
                            (size_t)(e2 - s) * n * 8, cudaMemcpyDeviceToHost, w->stream));
                        s = e2;
                }
                SS__CUDA(cudaStreamSynchronize(w->stream));
        }
        return SS_OK;
}

/* Runs sources at[0..k) (k <= kcap), halving on overflow. */
static int ss__run_split(struct ss__bjob *j, const unsigned *at, unsigned k, struct ss_err *err)
{
        bool overflow = false;
        int rc = ss__once(j, at, k, &overflow, err);
        if (rc != SS_OK || !overflow)
                return rc;
        if (k == 1)
                return ss_err_set(err, SS_EINTERNAL,
                                  "a batch of one source overflowed queues of %" PRIu64 " entries",
                                  j->b->w.qcap);
        if (j->landmarks) { /* its table is laid out for all k at once: the caller retries */
                *j->bad = SS__LM_OVERFLOW;
                return ss_err_set(err, SS_ENOGPU, "landmark searches overflowed the batch queues");
        }
        j->r->splits++;
        ss_log_debug("gpu", "batch of %u sources overflowed its queues; running it in halves", k);
        if ((rc = ss__run_split(j, at, k / 2, err)))
                return rc;
        return ss__run_split(j, at + k / 2, k - k / 2, err);
}

static int ss__check_ids(const struct ss_gpu *gpu, const uint32_t *ids, size_t k, const char *what,
                         struct ss_err *err)
{
        for (size_t i = 0; i < k; i++)
                if (ids[i] >= gpu->g.n)
                        return ss_err_set(err, SS_EINVAL, "%s %u (index %zu) is outside 0..%u",
                                          what, ids[i], i, gpu->g.n - 1);
        return SS_OK;
}

int ss__batch_run(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_batch *q,
                  struct ss_gpu_batch_result *r, bool reverse, const struct ss__lmdst *lm,
                  uint32_t *bad, struct ss_err *err)
{
        if (!ss_gpu_stream_batches(gpu, stream))
                return ss_err_set(err, SS_EINVAL, "stream %u runs no batches", stream);
        if (q->k == 0 || !q->sources || !q->dist)
                return ss_err_set(err, SS_EINVAL, "a batch needs sources and room for distances");
        if (q->kind == SS_GPU_BATCH_ROUTES && !q->targets)
                return ss_err_set(err, SS_EINVAL, "routes need one target per source");
        if (q->kind == SS_GPU_BATCH_TARGETS && (!q->targets || q->ntargets == 0))
                return ss_err_set(err, SS_EINVAL, "a target list is empty");
        if (q->want_paths && (q->kind != SS_GPU_BATCH_ROUTES || !gpu->has_rev || !r->path ||
                              !r->path_len || !r->path_needs_cpu))
                return ss_err_set(err, SS_EINVAL,
                                  "paths need routes, the reverse graph on the device and "
                                  "room for k paths");
        int rc = ss__check_ids(gpu, q->sources, q->k, "source", err);
        if (rc == SS_OK && q->kind == SS_GPU_BATCH_ROUTES)
                rc = ss__check_ids(gpu, q->targets, q->k, "target", err);
        if (rc == SS_OK && q->kind == SS_GPU_BATCH_TARGETS)
                rc = ss__check_ids(gpu, q->targets, q->ntargets, "target", err);
        if (rc != SS_OK)
                return rc;
        if (q->want_paths)
                for (unsigned i = 0; i < q->k; i++) {
                        r->path[i] = NULL;
                        r->path_len[i] = 0;
                        r->path_needs_cpu[i] = false;
                }
        if ((rc = ss__run_begin(gpu, stream, err)) != SS_OK)
                return rc;
        unsigned *at = malloc(gpu->kcap * sizeof(unsigned));
        if (!at)
                return ss_err_set(err, SS_ENOMEM, "no memory for a batch");
        struct ss__bhost *b = NULL;
        if ((rc = ss__bws_take(gpu, q->cancel, &b, err)) != SS_OK) {
                free(at);
                ss__run_end(gpu, stream, rc, err);
                return rc;
        }
        struct ss__bjob j = {.gpu = gpu,
                             .sw = &gpu->ws[stream],
                             .b = b,
                             .d_targets = gpu->d_targets[stream],
                             .q = q,
                             .r = r,
                             .reverse = reverse,
                             .landmarks = lm != NULL,
                             .bad = bad};
        *j.sw->hcancel = 0;
        const uint64_t t0 = ss_now_ns();
        for (unsigned off = 0; off < q->k && rc == SS_OK; off += b->w.kcap) {
                const unsigned k = q->k - off < b->w.kcap ? q->k - off : b->w.kcap;
                for (unsigned s = 0; s < k; s++)
                        at[s] = off + s;
                if (lm) { /* this piece's columns */
                        j.lm = *lm;
                        if (lm->dev)
                                j.lm.col = lm->col + off;
                        else
                                j.lm.host = lm->host + (size_t)off * gpu->g.n;
                }
                rc = ss__run_split(&j, at, k, err);
        }
        free(at);
        r->total_ns = ss_now_ns() - t0;
        ss__run_end(gpu, stream, rc, err);
        ss__bws_give(gpu, j.sw, b);
        return rc;
}

int ss_gpu_run_batch(struct ss_gpu *gpu, unsigned stream, const struct ss_gpu_batch *q,
                     struct ss_gpu_batch_result *r, struct ss_err *err)
{
        uint32_t **path = r->path;
        size_t *path_len = r->path_len;
        bool *needs = r->path_needs_cpu;
        memset(r, 0, sizeof(*r));
        r->path = path;
        r->path_len = path_len;
        r->path_needs_cpu = needs;
        return ss__batch_run(gpu, stream, q, r, false, NULL, NULL, err);
}

unsigned ss_gpu_batch_max(const struct ss_gpu *gpu)
{
        return gpu->kcap;
}

bool ss_gpu_stream_batches(const struct ss_gpu *gpu, unsigned stream)
{
        return gpu->kcap > 0 && stream < gpu->bstreams;
}

bool ss_gpu_has_reverse(const struct ss_gpu *gpu)
{
        return gpu->has_rev;
}
