/* Point-to-point routes from the GPU's copy of a CCH without a sweep
 * (phast.h; the kernel is kernels/cch_route.cu).
 *
 * A sweep from the source touches every edge of the CCH to answer one
 * route: 1.4 ms on NY-d, seconds of device time a thousand routes on a
 * continent. The CPU's query walks only the two ancestor chains of the
 * source and the target; so does this one, a thread block a route, and the
 * path's shortcuts are unpacked on the device. It needs, beside the sweep's
 * copy (upward heads, downward weights, ranks), each rank's nearest
 * ancestors, the upward lists' offsets, the node of each rank, how far up
 * the chain each upward edge leads, the upward weights, and each slot's
 * lower corner with its two edges: 40 bytes a node and 34 an edge, made
 * on the first route. New weights refill the last three on the next
 * route.
 */
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/log.h"
#include "gpu/gpu_internal.h"
#include "gpu/phast_internal.h"

_Static_assert(SS__P2P_HMAX == SS_GPU_PHAST_ROUTE_HEIGHT, "phast.h and kernels.h must agree");

/* CCH edges a route's path may unpack to: SS__P2P_ENTRIES over the
 * routes a call has room for, within these bounds. A longer path is left
 * to the caller (needs_cpu); its distance is still the device's. */
#define SS__P2P_ROOM_MIN 4096u
#define SS__P2P_ROOM_MAX 65536u
#define SS__P2P_ENTRIES  (1u << 22)
/* Routes a launch takes at most (the scratch grows with them). */
#define SS__P2P_CHUNK 1024u

static void ss__p2p_free_bufs(struct ss__ph_p2p *q)
{
        cudaFree(q->d_q);
        cudaFree(q->d_lists);
        cudaFree(q->d_paths);
        cudaFree(q->d_len);
        cudaFree(q->d_off);
        cudaFree(q->d_dist);
        cudaFreeHost(q->h_q);
        cudaFreeHost(q->h_len);
        cudaFreeHost(q->h_off);
        cudaFreeHost(q->h_dist);
        cudaFree(q->d_prof);
        cudaFreeHost(q->h_prof);
        q->d_prof = q->h_prof = NULL;
        q->d_q = q->d_lists = q->h_q = NULL;
        q->d_paths = q->d_len = q->d_off = q->h_len = q->h_off = NULL;
        q->d_dist = q->h_dist = NULL;
        q->cap = 0;
        q->room = 0;
        q->buf_bytes = 0;
}

static void ss__p2p_free_fixed(struct ss__ph_p2p *q)
{
        cudaFree(q->d_anc);
        cudaFree(q->d_up_first);
        cudaFree(q->d_node);
        cudaFree(q->d_mid);
        cudaFree(q->d_wup);
        cudaFree(q->d_tri);
        cudaFree(q->d_hop);
        q->d_hop = NULL;
        q->d_anc = q->d_up_first = q->d_node = q->d_mid = NULL;
        q->d_wup = NULL;
        q->d_tri = NULL;
        q->fixed_bytes = 0;
}

void ss__ph_p2p_free(struct ss_gpu_phast *p)
{
        ss__p2p_free_fixed(&p->p2p);
        ss__p2p_free_bufs(&p->p2p);
}

uint64_t ss__ph_p2p_bytes(const struct ss_gpu_phast *p)
{
        return p->p2p.fixed_bytes + p->p2p.buf_bytes;
}

/* The chains' arrays on the device, or q->off with the reason logged. */
static int ss__p2p_make(struct ss_gpu_phast *p, struct ss_err *err)
{
        struct ss__ph_p2p *q = &p->p2p;
        const struct ss_cch *c = p->c;
        if (!ss_gpu_phast_climbs(p)) {
                /* Final for this handle, but for the metric's reasons
                 * (ss__ph_p2p_judge), which new weights may end
                 * (ss_gpu_phast_set_metric makes it again). */
                q->made = true;
                q->off = true;
                q->off_metric = q->tree_ok;
                return SS_OK;
        }
        /* The triangles come from the metric's corners (ss__p2p_tri): a
         * snapshot's CCH whose checks run beside the load waits for them. */
        int rc = ss_cch_checks_wait(c, err);
        if (rc != SS_OK)
                return rc;
        cudaError_t e = cudaSetDevice(p->device);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaSetDevice", e, __FILE__, __LINE__);
        const size_t n1 = p->n ? p->n : 1, a1 = p->arcs ? p->arcs : 1;
        const uint64_t t0 = ss_now_ns();
        /* Each rank's depth, from the top down (the parent's is ready, one
         * rank higher), for the edges' hops; the ancestor table is made on
         * the device (ss__p2p_anc: on the host, 0.7 s for 24M ranks on
         * one thread, and 768 MB to upload). */
        const size_t J = SS__P2P_JUMP;
        uint32_t *depth = q->hops_off ? NULL : malloc(n1 * 4);
        if (!q->hops_off && !depth)
                return ss_err_set(err, SS_ENOMEM, "no memory for the routes' depths");
        if (depth)
                ss_cch_depths(c, depth);
        const uint64_t t1 = ss_now_ns();
        e = cudaMalloc((void **)&q->d_anc, n1 * J * 4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&q->d_up_first, (n1 + 1) * 4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&q->d_node, n1 * 4);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&q->d_wup, a1 * 8);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&q->d_mid, a1 * 8);
        if (e == cudaSuccess)
                e = cudaMalloc((void **)&q->d_tri, a1 * 16);
        /* Each edge's hop up the chain, from the depths (a scratch copy). */
        uint32_t *d_depth = NULL;
        if (e == cudaSuccess && !q->hops_off)
                e = cudaMalloc((void **)&q->d_hop, a1 * 2);
        if (e == cudaSuccess && !q->hops_off)
                e = cudaMalloc((void **)&d_depth, n1 * 4);
        /* On the kernels' stream: a plain copy from pageable memory may
         * return before its transfer lands, and p->stream does not wait
         * for the legacy stream. */
        if (e == cudaSuccess && d_depth && p->n)
                e = cudaMemcpyAsync(d_depth, depth, (size_t)p->n * 4, cudaMemcpyHostToDevice,
                                    p->stream);
        if (e == cudaSuccess)
                e = cudaMemcpyAsync(q->d_up_first, c->up_first, ((size_t)p->n + 1) * 4,
                                    cudaMemcpyHostToDevice, p->stream);
        if (e == cudaSuccess && p->n)
                e = cudaMemcpyAsync(q->d_node, c->node, (size_t)p->n * 4, cudaMemcpyHostToDevice,
                                    p->stream);
        if (e == cudaSuccess)
                rc = ss__p2p_anc(p->n, q->d_up_first, p->d_up_head, q->d_anc, p->stream, err);
        if (e == cudaSuccess && rc == SS_OK && d_depth)
                rc = ss__p2p_hops(p->n, q->d_up_first, p->d_up_head, d_depth, q->d_hop, p->stream,
                                  err);
        /* whatever was queued ends before depth and d_depth go */
        const cudaError_t es = cudaStreamSynchronize(p->stream);
        if (e == cudaSuccess && rc == SS_OK)
                e = es;
        free(depth);
        cudaFree(d_depth);
        if (rc != SS_OK) {
                ss__p2p_free_fixed(q);
                return rc;
        }
        if (e == cudaErrorMemoryAllocation) {
                /* No room: the sweep answers, as before the chains. */
                cudaGetLastError();
                ss__p2p_free_fixed(q);
                q->made = true;
                q->off = true;
                ss_log_warn("gpu",
                            "no device memory for the routes' chains (%.1f MiB): GPU "
                            "routes take a sweep each",
                            (double)(n1 * (8 + J * 4) + a1 * (q->hops_off ? 32 : 34)) / SS__MIB);
                return SS_OK;
        }
        if (e != cudaSuccess) {
                ss__p2p_free_fixed(q);
                return ss__cuda_fail(err, "cudaMalloc/cudaMemcpy (the routes' chains)", e, __FILE__,
                                     __LINE__);
        }
        q->fixed_bytes = (uint64_t)n1 * (8 + J * 4) + 4 + (uint64_t)a1 * (q->hops_off ? 32 : 34);
        q->stale = true;
        ss_log_debug("gpu",
                     "route chains of %u ranks made in %.0f ms: depths %.0f, on the device %.0f",
                     p->n, (ss_now_ns() - t0) / 1e6, (t1 - t0) / 1e6, (ss_now_ns() - t1) / 1e6);
        q->made = true; /* a failure above leaves it unmade: the next route tries again */
        return SS_OK;
}

/* The metric's upward weights and lower corners, and the corners' edges. */
static int ss__p2p_metric(struct ss_gpu_phast *p, struct ss_err *err)
{
        struct ss__ph_p2p *q = &p->p2p;
        if (!q->stale)
                return SS_OK;
        cudaError_t e = cudaSetDevice(p->device);
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaSetDevice", e, __FILE__, __LINE__);
        if (!q->fits) {
                /* New weights that do not fit the chains (ss__ph_p2p_judge):
                 * sweeps, until weights that fit come. */
                ss__p2p_free_fixed(q);
                ss__p2p_free_bufs(q);
                q->off = true;
                q->off_metric = true;
                return SS_OK;
        }
        const size_t a1 = p->arcs ? p->arcs : 1;
        unsigned long long *w = malloc(a1 * 8);
        if (!w)
                return ss_err_set(err, SS_ENOMEM, "no memory for the routes' weights");
        ss__ph_slots_gather(p->m, p->arcs, 0, w);
        if (p->arcs)
                e = cudaMemcpyAsync(q->d_wup, w, (size_t)p->arcs * 8, cudaMemcpyHostToDevice,
                                    p->stream);
        if (e == cudaSuccess && p->arcs)
                e = cudaMemcpyAsync(q->d_mid, p->m->middle, (size_t)p->arcs * 8,
                                    cudaMemcpyHostToDevice, p->stream);
        int rc = SS_OK;
        if (e == cudaSuccess)
                rc = ss__p2p_tri(p->n, p->arcs, q->d_up_first, p->d_up_head, q->d_mid, q->d_tri,
                                 p->stream, err);
        if (e == cudaSuccess && rc == SS_OK)
                e = cudaStreamSynchronize(p->stream);
        free(w);
        if (rc != SS_OK)
                return rc;
        if (e != cudaSuccess)
                return ss__cuda_fail(err, "cudaMemcpy (the routes' weights)", e, __FILE__,
                                     __LINE__);
        q->stale = false;
        return SS_OK;
}

/* Edges a thread of the chains loads ahead: a whole tile (16) on trees
 * taller than 1,024 levels, whose top ranks have thousands of upward
 * edges, so that a tile's loads wait behind the previous tile's
 * relaxations; 8 below, where tiles are of many small ranks and 8 keep
 * the kernel at 64 registers, two blocks an SM for batches of routes
 * (16 take 94, one block). */
static unsigned ss__p2p_ahead_for(const struct ss__ph_p2p *q, uint32_t hmax)
{
        if (q->ahead == 8 || q->ahead == SS__P2P_AHEAD)
                return q->ahead;
        return hmax > 1024 ? SS__P2P_AHEAD : 8;
}

/* Room for nr routes a launch (at most SS__P2P_CHUNK). */
static int ss__p2p_reserve(struct ss__ph_p2p *q, unsigned nr, struct ss_err *err)
{
        if (nr <= q->cap)
                return SS_OK;
        ss__p2p_free_bufs(q);
        unsigned cap = 32;
        while (cap < nr)
                cap *= 2;
        uint32_t room = SS__P2P_ENTRIES / cap;
        room = room < SS__P2P_ROOM_MIN   ? SS__P2P_ROOM_MIN
               : room > SS__P2P_ROOM_MAX ? SS__P2P_ROOM_MAX
                                         : room;
        if (q->room_set)
                room = q->room_set;
        const size_t lists = (size_t)cap * 2 * room * sizeof(uint2);
        const size_t paths = (size_t)cap * (room + 1) * 4;
        if (cudaMalloc((void **)&q->d_q, (size_t)cap * sizeof(uint2)) != cudaSuccess ||
            cudaMalloc((void **)&q->d_lists, lists) != cudaSuccess ||
            cudaMalloc((void **)&q->d_paths, paths) != cudaSuccess ||
            cudaMalloc((void **)&q->d_len, (size_t)cap * 4) != cudaSuccess ||
            cudaMalloc((void **)&q->d_off, (size_t)cap * 4) != cudaSuccess ||
            cudaMalloc((void **)&q->d_dist, (size_t)cap * 8) != cudaSuccess ||
            cudaHostAlloc((void **)&q->h_q, (size_t)cap * sizeof(uint2), cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaHostAlloc((void **)&q->h_len, (size_t)cap * 4, cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaHostAlloc((void **)&q->h_off, (size_t)cap * 4, cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaHostAlloc((void **)&q->h_dist, (size_t)cap * 8, cudaHostAllocDefault) !=
                cudaSuccess ||
            (q->profile &&
             (cudaMalloc((void **)&q->d_prof, (size_t)cap * SS__P2P_PROF * 8) != cudaSuccess ||
              cudaHostAlloc((void **)&q->h_prof, (size_t)cap * SS__P2P_PROF * 8,
                            cudaHostAllocDefault) != cudaSuccess))) {
                cudaGetLastError();
                ss__p2p_free_bufs(q);
                return ss_err_set(err, SS_ENOGPU, "no device memory for %u routes' paths", cap);
        }
        q->cap = cap;
        q->room = room;
        q->buf_bytes = (uint64_t)cap * (sizeof(uint2) + 16) + lists + paths;
        return SS_OK;
}

/* Routes [0, nr) of one launch, nr <= SS__P2P_CHUNK. */
static int ss__p2p_chunk(struct ss_gpu_phast *p, const uint32_t *sources, const uint32_t *targets,
                         unsigned nr, ss_dist *dist, uint32_t **path, size_t *path_len,
                         bool *needs_cpu, uint64_t *kernel_ns, struct ss_err *err)
{
        struct ss__ph_p2p *q = &p->p2p;
        int rc = ss__p2p_reserve(q, nr, err);
        if (rc != SS_OK)
                return rc;
        for (unsigned i = 0; i < nr; i++) {
                q->h_q[i].x = sources[i];
                q->h_q[i].y = targets[i];
        }
        const uint32_t hmax = p->c->height ? p->c->height : 1;
        const struct ss__p2p_dev d = {.hmax = hmax,
                                      .bits = ss__p2p_bits(hmax),
                                      .room = path ? q->room : 0,
                                      .ahead = ss__p2p_ahead_for(q, hmax),
                                      .rank = p->d_rank,
                                      .anc = q->d_anc,
                                      .up_first = q->d_up_first,
                                      .up_head = p->d_up_head,
                                      .mid = q->d_mid,
                                      .node = q->d_node,
                                      .hop = q->d_hop,
                                      .w_up = q->d_wup,
                                      .w_down = p->d_w,
                                      .tri = q->d_tri};
        SS__CUDA(cudaMemcpyAsync(q->d_q, q->h_q, (size_t)nr * sizeof(uint2), cudaMemcpyHostToDevice,
                                 p->stream));
        SS__CUDA(cudaEventRecord(p->ev0, p->stream));
        /* SS_GPU_PHAST_ROUTE_PROFILE: the kernel's phases, logged a call. */
        unsigned long long *prof = q->profile && path ? q->d_prof : NULL;
        if (prof)
                SS__CUDA(cudaMemsetAsync(prof, 0, (size_t)nr * SS__P2P_PROF * 8, p->stream));
        if ((rc = ss__p2p(&d, q->d_q, nr, q->d_lists, q->d_paths, q->d_len, q->d_dist, prof,
                          p->stream, err)) != SS_OK)
                return rc;
        SS__CUDA(cudaEventRecord(p->ev1, p->stream));
        SS__CUDA(cudaMemcpyAsync(q->h_dist, q->d_dist, (size_t)nr * 8, cudaMemcpyDeviceToHost,
                                 p->stream));
        SS__CUDA(
            cudaMemcpyAsync(q->h_len, q->d_len, (size_t)nr * 4, cudaMemcpyDeviceToHost, p->stream));
        const unsigned long long *hp = prof ? q->h_prof : NULL;
        if (prof)
                SS__CUDA(cudaMemcpyAsync(q->h_prof, prof, (size_t)nr * SS__P2P_PROF * 8,
                                         cudaMemcpyDeviceToHost, p->stream));
        SS__CUDA(cudaStreamSynchronize(p->stream));
        if (hp) {
                double sum[SS__P2P_PROF] = {0};
                unsigned routed = 0;
                for (unsigned i = 0; i < nr; i++) {
                        if (hp[SS__P2P_PROF * i + 3] == 0)
                                continue;
                        routed++;
                        for (int j = 0; j < SS__P2P_PROF; j++)
                                sum[j] += (double)hp[SS__P2P_PROF * i + j];
                }
                if (routed)
                        ss_log_info("gpu",
                                    "route profile: %u paths; on average chains %.1f us (the "
                                    "source's tiles %.1f us, its relaxations %.1f us), meeting "
                                    "%.1f us, unpacking %.1f us in %.1f rounds from %.1f edges",
                                    routed, sum[0] / routed / 1e3, sum[5] / routed / 1e3,
                                    sum[6] / routed / 1e3, sum[1] / routed / 1e3,
                                    sum[2] / routed / 1e3, sum[3] / routed, sum[4] / routed);
        }
        float ms = 0;
        if (cudaEventElapsedTime(&ms, p->ev0, p->ev1) == cudaSuccess)
                *kernel_ns += (uint64_t)(ms * 1e6);
        const uint32_t per = q->room + 1;
        for (unsigned i = 0; i < nr; i++)
                if (q->h_len[i] == SS__WALK_BROKEN)
                        return ss_err_set(err, SS_EINTERNAL,
                                          "the route %u -> %u climbs more ranks than the "
                                          "elimination tree's height (%u)",
                                          sources[i], targets[i], p->c->height);
        /* The lists are scratch again: the paths, packed, go there. */
        return ss__ph_paths_out(p, targets, nr, q->h_dist, q->h_len, q->h_off, q->d_len, q->d_off,
                                q->d_paths, per, (uint32_t *)q->d_lists, dist, path, path_len,
                                needs_cpu, err);
}

bool ss_gpu_phast_climbs(const struct ss_gpu_phast *p)
{
        return p && !p->owner && !p->p2p.by_sweep && !(p->p2p.made && p->p2p.off) && p->p2p.fits;
}

uint32_t ss_gpu_phast_route_limit(const struct ss_gpu_phast *p)
{
        return p ? p->p2p.hmax : 0;
}

void ss__ph_p2p_judge(struct ss_gpu_phast *p, bool open)
{
        struct ss__ph_p2p *q = &p->p2p;
        const uint32_t hmax = p->c->height ? p->c->height : 1;
        if (open) {
                struct ss_err err = {0};
                if (ss__p2p_limit(&q->hmax, &err) != SS_OK) {
                        cudaGetLastError();
                        q->hmax = 0;
                        ss_log_warn("gpu", "GPU routes take a sweep each: %s", err.msg);
                }
                q->tree_ok = !p->owner && !q->by_sweep && hmax <= SS_GPU_PHAST_ROUTE_HEIGHT &&
                             hmax <= q->hmax;
                if (!p->owner && !q->by_sweep && !q->tree_ok)
                        ss_log_info("gpu",
                                    "GPU routes on this CCH take a sweep each: its elimination "
                                    "tree (%u levels) is taller than the %u a thread block of "
                                    "this device holds",
                                    hmax, q->hmax);
        }
        q->fits = false;
        if (!q->tree_ok)
                return;
        if (p->m->wide) {
                ss_log_info("gpu", "GPU routes on this CCH take a sweep each: its weights need "
                                   "64 bits");
                return;
        }
        /* Up to 1,024 levels any 32-bit metric fits the keys; above, the
         * largest finite weight times the height must fit the distance's
         * bits (a chain's distance is at most height - 1 edges). */
        const unsigned bits = ss__p2p_bits(hmax);
        if (bits > 10) {
                const uint64_t wmax = ss__ph_slots_max(p->m, p->c->arcs);
                if ((unsigned __int128)wmax * hmax >= (unsigned __int128)1 << (64 - 2 * bits)) {
                        ss_log_info("gpu",
                                    "GPU routes take a sweep each for these weights: the "
                                    "largest (%llu) times the elimination tree's height (%u) "
                                    "does not fit %u bits",
                                    (unsigned long long)wmax, hmax, 64 - 2 * bits);
                        return;
                }
        }
        q->fits = true;
}

void ss__ph_p2p_metric_changed(struct ss_gpu_phast *p)
{
        struct ss__ph_p2p *q = &p->p2p;
        q->stale = true;
        if (q->off_metric) {
                /* Sweeps were for the old weights: the new ones may climb. */
                q->made = q->off = q->off_metric = false;
        }
}

int ss__ph_p2p_routes(struct ss_gpu_phast *p, const uint32_t *sources, const uint32_t *targets,
                      unsigned nr, ss_dist *dist, uint32_t **path, size_t *path_len,
                      bool *needs_cpu, struct ss_gpu_phast_stats *st, struct ss_err *err)
{
        const uint64_t t0 = ss_now_ns();
        struct ss__ph_p2p *q = &p->p2p;
        int rc;
        if (!q->made && (rc = ss__p2p_make(p, err)) != SS_OK)
                return rc;
        if (!q->off && (rc = ss__p2p_metric(p, err)) != SS_OK)
                return rc;
        if (q->off)
                return SS__PH_BY_SWEEP;
        SS__CUDA(cudaSetDevice(p->device));
        uint64_t kernel_ns = 0;
        for (unsigned i = 0; i < nr; i += SS__P2P_CHUNK) {
                const unsigned k = nr - i < SS__P2P_CHUNK ? nr - i : SS__P2P_CHUNK;
                rc = ss__p2p_chunk(p, sources + i, targets + i, k, dist + i, path ? path + i : NULL,
                                   path ? path_len + i : NULL, path ? needs_cpu + i : NULL,
                                   &kernel_ns, err);
                if (rc != SS_OK)
                        return rc;
        }
        if (st) {
                memset(st, 0, sizeof(*st));
                st->sweep_ns = kernel_ns;
                st->launches = (nr + SS__P2P_CHUNK - 1) / SS__P2P_CHUNK;
                st->total_ns = ss_now_ns() - t0;
        }
        return SS_OK;
}
