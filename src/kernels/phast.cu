/* Batched one-to-all trees from a customized CCH (gpu/phast.c): the
 * downward sweep of the CPU's one-to-all (cch/query.c) for k sources at
 * once, level by level.
 *
 * Distances are rank-major, k per rank (d[z * k + s]), so that the threads of
 * a warp, which take consecutive sources of one rank, read the same edge and
 * 32 consecutive distances of its upper end. A rank's upward neighbours are
 * its ancestors in the elimination tree, so every rank of one depth can go
 * at once once the depths above are final: one launch per depth.
 */
#include "kernels/kernels.h"
#include "kernels/walk.cuh"

#define SS__PH_INF 0xffffffffffffffffull

static unsigned ss__ph_grid(uint64_t items)
{
        uint64_t b = (items + 255) / 256;
        return b > 65535 ? 65535u : b ? (unsigned)b : 1u;
}

__global__ void ss__ph_fill_kernel(unsigned long long *d, uint64_t count)
{
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
             i += (uint64_t)gridDim.x * blockDim.x)
                d[i] = SS__PH_INF;
}

/* The upward searches' results: d[rank * k + source] = dist; slots with a
 * rank of n or more are unused. */
__global__ void ss__ph_seed_kernel(unsigned long long *d, unsigned k, uint32_t n,
                                   const uint32_t *rank, const uint32_t *source,
                                   const unsigned long long *dist, uint32_t count)
{
        const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < count && rank[i] < n)
                d[(uint64_t)rank[i] * k + source[i]] = dist[i];
}

/* d[z][s] from z's upward neighbours, its edges a..e. The loads of four
 * edges go out before any is used: a rank's edges are a chain of dependent
 * loads (the head, then its distance) otherwise, and the top separators'
 * ranks have hundreds of edges. l2: read the distances from L2 (a kernel
 * that walks several depths, whose atomics do not update this SM's L1). */
__device__ __forceinline__ void ss__ph_relax(unsigned long long *d, unsigned k, uint32_t z,
                                             unsigned s, uint32_t a, uint32_t e,
                                             const uint32_t *__restrict__ up_head,
                                             const unsigned long long *__restrict__ w_down, bool l2)
{
        unsigned long long best = d[(uint64_t)z * k + s];
        for (; a + 4 <= e; a += 4) {
                uint32_t y[4];
                unsigned long long w[4], dy[4];
#pragma unroll
                for (int j = 0; j < 4; j++) {
                        y[j] = __ldg(&up_head[a + j]);
                        w[j] = __ldg(&w_down[a + j]);
                }
#pragma unroll
                for (int j = 0; j < 4; j++)
                        dy[j] = l2 ? __ldcg(&d[(uint64_t)y[j] * k + s]) : d[(uint64_t)y[j] * k + s];
#pragma unroll
                for (int j = 0; j < 4; j++)
                        if (dy[j] != SS__PH_INF && w[j] != SS__PH_INF && dy[j] + w[j] < best)
                                best = dy[j] + w[j];
        }
        for (; a < e; a++) {
                const unsigned long long w = __ldg(&w_down[a]);
                const uint64_t at = (uint64_t)__ldg(&up_head[a]) * k + s;
                const unsigned long long dy = l2 ? __ldcg(&d[at]) : d[at];
                if (dy != SS__PH_INF && w != SS__PH_INF && dy + w < best)
                        best = dy + w;
        }
        d[(uint64_t)z * k + s] = best;
}

/* One depth: ranks nodes[0..count) (their edges span[0..count)), each for
 * every source. */
__global__ void ss__ph_level_kernel(unsigned long long *d, unsigned k, const uint32_t *nodes,
                                    const uint2 *span, uint32_t count, const uint32_t *up_head,
                                    const unsigned long long *w_down)
{
        const uint64_t work = (uint64_t)count * k;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint2 r = __ldg(&span[i / k]);
                ss__ph_relax(d, k, nodes[i / k], (unsigned)(i % k), r.x, r.y, up_head, w_down,
                             false);
        }
}

/* One depth whose ranks have many upward edges: each rank's edges cut into
 * `parts` slices, a thread per (rank, slice, source), the slices' minima
 * folded in with atomicMin (the order does not matter to a minimum). One
 * thread walking a separator rank's hundreds of edges would set the
 * depth's time. */
__global__ void ss__ph_split_kernel(unsigned long long *d, unsigned k, const uint32_t *nodes,
                                    const uint2 *__restrict__ span, uint32_t count, unsigned parts,
                                    const uint32_t *__restrict__ up_head,
                                    const unsigned long long *__restrict__ w_down)
{
        const uint64_t work = (uint64_t)count * parts * k;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const unsigned s = (unsigned)(i % k);
                const uint64_t rest = i / k;
                const unsigned part = (unsigned)(rest % parts);
                const uint32_t z = nodes[rest / parts];
                const uint2 r = __ldg(&span[rest / parts]);
                const uint32_t per = (r.y - r.x + parts - 1) / parts;
                const uint32_t from = r.x + part * per;
                const uint32_t to = from + per < r.y ? from + per : r.y;
                unsigned long long best = SS__PH_INF;
                for (uint32_t a = from; a < to; a++) {
                        const unsigned long long w = __ldg(&w_down[a]);
                        const unsigned long long dy = d[(uint64_t)__ldg(&up_head[a]) * k + s];
                        if (dy != SS__PH_INF && w != SS__PH_INF && dy + w < best)
                                best = dy + w;
                }
                if (best != SS__PH_INF)
                        atomicMin(&d[(uint64_t)z * k + s], best);
        }
}

/* Where a thread of the chain's block stands at one depth: the depth's
 * positions, and, when the depth's (rank, source) pairs are few enough for
 * groups of at least `group` threads, the thread's pair (i), its place in
 * the pair's group (j of t), and the pair's rank and edges, loaded ahead. */
struct ss__ph_at {
        uint32_t from, z, y0; /* y0, c0: the thread's first edge */
        unsigned long long c0;
        uint64_t work;
        unsigned t, i, j;
        uint2 r;
        bool grouped, idle;
};

__device__ __forceinline__ struct ss__ph_at ss__ph_where(unsigned k, const uint32_t *nodes,
                                                         const uint2 *span, const uint32_t *lf,
                                                         uint32_t at, unsigned group)
{
        struct ss__ph_at w;
        w.from = lf[at];
        w.work = (uint64_t)(lf[at + 1] - w.from) * k;
        /* A part's schedule (gpu/phast_split.c) may have empty depths in a
         * subtree: no group for them (the widening below would not end). */
        w.grouped = group && w.work && w.work * group <= blockDim.x;
        w.t = group ? group : 1;
        while (w.grouped && w.t * 2 * w.work <= blockDim.x)
                w.t *= 2;
        w.i = threadIdx.x / w.t;
        w.j = threadIdx.x % w.t;
        w.idle = !w.grouped || w.i >= w.work;
        w.z = w.y0 = 0;
        w.c0 = SS__PH_INF;
        w.r = make_uint2(0, 0);
        if (!w.idle) {
                w.z = __ldg(&nodes[w.from + w.i / k]);
                w.r = __ldg(&span[w.from + w.i / k]);
        }
        return w;
}

/* The thread's first edge of w (head and weight), once w's span is in. */
__device__ __forceinline__ void ss__ph_first(struct ss__ph_at &w,
                                             const uint32_t *__restrict__ up_head,
                                             const unsigned long long *__restrict__ w_down)
{
        if (!w.idle && w.r.x + w.j < w.r.y) {
                w.y0 = __ldg(&up_head[w.r.x + w.j]);
                w.c0 = __ldg(&w_down[w.r.x + w.j]);
        }
}

/* One (rank, source) pair's distance from t threads (a power of two) of the
 * block: thread j of the group takes the edges j, j + t, ... of the rank (the
 * group's loads coalesce), then the group's minimum goes in: PLAIN, combined
 * over the group's warps in shared memory and stored by its first thread;
 * otherwise with one atomicMin per warp. At one source a chain depth is one
 * or two ranks with hundreds of edges (the top separators): one thread
 * walking them set the sweep's time. Every thread of the block calls this
 * (the shuffles and, PLAIN, the barrier need them). */
template <bool PLAIN>
__device__ __forceinline__ void
ss__ph_relax_group(unsigned long long *d, unsigned k, const struct ss__ph_at &w,
                   const uint32_t *__restrict__ up_head,
                   const unsigned long long *__restrict__ w_down, unsigned long long *part)
{
        unsigned long long best = SS__PH_INF;
        const unsigned s = w.idle ? 0 : w.i % k;
        /* Atomics (not PLAIN) land in L2, past this SM's L1, so their
         * readers read L2; with one writer a pair the block's own plain
         * stores are seen through L1 after the barrier. */
        if (!w.idle && w.c0 != SS__PH_INF) {
                const unsigned long long *at = &d[(uint64_t)w.y0 * k + s];
                const unsigned long long dy = PLAIN ? *at : __ldcg(at);
                if (dy != SS__PH_INF)
                        best = dy + w.c0;
        }
        if (!w.idle) {
                for (uint32_t a = w.r.x + w.j + w.t; a < w.r.y; a += w.t) {
                        const unsigned long long c = __ldg(&w_down[a]);
                        const unsigned long long *at = &d[(uint64_t)__ldg(&up_head[a]) * k + s];
                        const unsigned long long dy = PLAIN ? *at : __ldcg(at);
                        if (dy != SS__PH_INF && c != SS__PH_INF && dy + c < best)
                                best = dy + c;
                }
        }
        const unsigned lanes = w.t < 32 ? w.t : 32;
        for (unsigned off = lanes / 2; off > 0; off /= 2) {
                const unsigned long long o = __shfl_xor_sync(0xffffffffu, best, off);
                best = o < best ? o : best;
        }
        if (!PLAIN) {
                if (!w.idle && w.j % lanes == 0 && best != SS__PH_INF)
                        atomicMin(&d[(uint64_t)w.z * k + s], best);
                return;
        }
        if (w.t > 32) {
                /* A group of several warps: their minima meet in shared
                 * memory, and the group's first thread writes. w.t is the
                 * same in every thread, so the whole block takes the
                 * barrier. */
                if (threadIdx.x % 32 == 0)
                        part[threadIdx.x / 32] = best;
                __syncthreads();
                if (!w.idle && w.j == 0)
                        for (unsigned q = 1; q < w.t / 32; q++)
                                best = part[threadIdx.x / 32 + q] < best
                                           ? part[threadIdx.x / 32 + q]
                                           : best;
        }
        if (!w.idle && w.j == 0) {
                unsigned long long *at = &d[(uint64_t)w.z * k + s];
                if (best < *at)
                        *at = best;
        }
}

/* Levels lf[0..nl) (positions lf[i] .. lf[i + 1] of nodes and span) in
 * this block, a barrier between them, lf in shared memory. A level of few
 * (rank, source) pairs (at most blockDim / group) spreads each pair's edges
 * over a group of at least `group` threads; one of more pairs gives each a
 * thread (and so does group 0). The loads that no distance waits for go
 * out ahead, in two stages: the ranks and spans of level i + 2 and the
 * first edges of level i + 1 while level i runs. The edges are read once a
 * sweep, so they come from memory; only the distances wait for the barrier. */
template <bool PLAIN>
__device__ __forceinline__ void
ss__ph_levels(unsigned long long *d, unsigned k, const uint32_t *nodes, const uint2 *span,
              const uint32_t *lf, uint32_t nl, unsigned group, const uint32_t *__restrict__ up_head,
              const unsigned long long *__restrict__ w_down)
{
        __shared__ unsigned long long part[SS__PH_CHAIN_BLOCK / 32];
        if (nl == 0)
                return;
        struct ss__ph_at cur = ss__ph_where(k, nodes, span, lf, 0, group);
        ss__ph_first(cur, up_head, w_down);
        struct ss__ph_at mid = nl > 1 ? ss__ph_where(k, nodes, span, lf, 1, group) : cur;
        for (uint32_t l = 0; l < nl; l++) {
                if (l + 1 < nl)
                        ss__ph_first(mid, up_head, w_down);
                const struct ss__ph_at far =
                    l + 2 < nl ? ss__ph_where(k, nodes, span, lf, l + 2, group) : mid;
                if (cur.grouped) {
                        ss__ph_relax_group<PLAIN>(d, k, cur, up_head, w_down, part);
                } else {
                        for (uint64_t i = threadIdx.x; i < cur.work; i += blockDim.x) {
                                const uint2 r = __ldg(&span[cur.from + i / k]);
                                ss__ph_relax(d, k, nodes[cur.from + i / k], (unsigned)(i % k), r.x,
                                             r.y, up_head, w_down, !PLAIN);
                        }
                }
                __syncthreads();
                cur = mid;
                mid = far;
        }
}

/* Depths l0..l1 of few ranks each, in one block: the launches of a chain
 * of separator vertices (each a depth of its own) cost more than their
 * work, so one block walks them with a barrier between depths.
 * l1 - l0 is at most SS__PH_CHAIN_DEPTHS. */
template <bool PLAIN>
__global__ void ss__ph_chain_kernel(unsigned long long *d, unsigned k, const uint32_t *nodes,
                                    const uint2 *span, const uint32_t *level_first, uint32_t l0,
                                    uint32_t l1, unsigned group, const uint32_t *up_head,
                                    const unsigned long long *w_down)
{
        __shared__ uint32_t lf[SS__PH_CHAIN_DEPTHS + 1];
        for (uint32_t l = threadIdx.x; l <= l1 - l0; l += blockDim.x)
                lf[l] = level_first[l0 + l];
        __syncthreads();
        ss__ph_levels<PLAIN>(d, k, nodes, span, lf, l1 - l0, group, up_head, w_down);
}

/* The subtrees below the cut (gpu/phast.c), a block each: subtree t's
 * levels are sub_lf[sub_first[t] .. sub_first[t + 1]], from its root down.
 * A subtree needs only its own ranks and those above the cut, which are
 * final when this runs, so the subtrees go at once and no barrier spans
 * more than a block: the bottom of the elimination tree, where the depths
 * are wide, is one launch instead of one per depth. */
template <bool PLAIN>
__global__ void ss__ph_subtree_kernel(unsigned long long *d, unsigned k, const uint32_t *nodes,
                                      const uint2 *span, const uint32_t *sub_first,
                                      const uint32_t *sub_lf, unsigned group,
                                      const uint32_t *up_head, const unsigned long long *w_down)
{
        __shared__ uint32_t lf[SS__PH_SUB_DEPTHS + 1];
        const uint32_t L0 = sub_first[blockIdx.x], nl = sub_first[blockIdx.x + 1] - L0;
        for (uint32_t l = threadIdx.x; l <= nl; l += blockDim.x)
                lf[l] = sub_lf[L0 + l];
        __syncthreads();
        ss__ph_levels<PLAIN>(d, k, nodes, span, lf, nl, group, up_head, w_down);
}

/* Trees by node for sources [s0, s0 + ks): out[j * m + i] = d[rank[v] * k + s0 + j]
 * for the i-th of the m nodes wanted, v = nodes[i] (or i when nodes is NULL:
 * every node, m = n). */
__global__ void ss__ph_gather_kernel(const unsigned long long *d, unsigned k, uint32_t m,
                                     const uint32_t *rank, const uint32_t *nodes, unsigned s0,
                                     unsigned ks, unsigned long long *out)
{
        const uint64_t work = (uint64_t)ks * m;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint64_t x = i % m, j = i / m;
                const uint32_t v = nodes ? nodes[x] : (uint32_t)x;
                out[i] = d[(uint64_t)rank[v] * k + s0 + j];
        }
}

extern "C" int ss__ph_fill(unsigned long long *d, uint64_t count, cudaStream_t st,
                           struct ss_err *err)
{
        ss__ph_fill_kernel<<<ss__ph_grid(count), 256, 0, st>>>(d, count);
        SS__LAUNCHED("ss__ph_fill_kernel");
        return SS_OK;
}

extern "C" int ss__ph_seed(unsigned long long *d, unsigned k, uint32_t n, const uint32_t *rank,
                           const uint32_t *source, const unsigned long long *dist, uint32_t count,
                           cudaStream_t st, struct ss_err *err)
{
        if (count == 0)
                return SS_OK;
        ss__ph_seed_kernel<<<(count + 255) / 256, 256, 0, st>>>(d, k, n, rank, source, dist, count);
        SS__LAUNCHED("ss__ph_seed_kernel");
        return SS_OK;
}

extern "C" int ss__ph_level(unsigned long long *d, unsigned k, const uint32_t *nodes,
                            const uint2 *span, uint32_t count, unsigned parts,
                            const uint32_t *up_head, const unsigned long long *w_down,
                            cudaStream_t st, struct ss_err *err)
{
        if (parts > 1) {
                ss__ph_split_kernel<<<ss__ph_grid((uint64_t)count * parts * k), 256, 0, st>>>(
                    d, k, nodes, span, count, parts, up_head, w_down);
                SS__LAUNCHED("ss__ph_split_kernel");
                return SS_OK;
        }
        ss__ph_level_kernel<<<ss__ph_grid((uint64_t)count * k), 256, 0, st>>>(
            d, k, nodes, span, count, up_head, w_down);
        SS__LAUNCHED("ss__ph_level_kernel");
        return SS_OK;
}

extern "C" int ss__ph_chain(unsigned long long *d, unsigned k, const uint32_t *nodes,
                            const uint2 *span, const uint32_t *level_first, uint32_t l0,
                            uint32_t l1, unsigned group, const uint32_t *up_head,
                            const unsigned long long *w_down, bool plain, cudaStream_t st,
                            struct ss_err *err)
{
        if (l1 - l0 > SS__PH_CHAIN_DEPTHS)
                return ss_err_set(err, SS_EINVAL, "a chain of %u depths (at most %u)", l1 - l0,
                                  SS__PH_CHAIN_DEPTHS);
        if (plain)
                ss__ph_chain_kernel<true><<<1, SS__PH_CHAIN_BLOCK, 0, st>>>(
                    d, k, nodes, span, level_first, l0, l1, group, up_head, w_down);
        else
                ss__ph_chain_kernel<false><<<1, SS__PH_CHAIN_BLOCK, 0, st>>>(
                    d, k, nodes, span, level_first, l0, l1, group, up_head, w_down);
        SS__LAUNCHED("ss__ph_chain_kernel");
        return SS_OK;
}

extern "C" int ss__ph_subtrees(unsigned long long *d, unsigned k, const uint32_t *nodes,
                               const uint2 *span, const uint32_t *sub_first, const uint32_t *sub_lf,
                               uint32_t trees, unsigned group, const uint32_t *up_head,
                               const unsigned long long *w_down, bool plain, cudaStream_t st,
                               struct ss_err *err)
{
        if (trees == 0)
                return SS_OK;
        if (plain)
                ss__ph_subtree_kernel<true><<<trees, SS__PH_SUB_BLOCK, 0, st>>>(
                    d, k, nodes, span, sub_first, sub_lf, group, up_head, w_down);
        else
                ss__ph_subtree_kernel<false><<<trees, SS__PH_SUB_BLOCK, 0, st>>>(
                    d, k, nodes, span, sub_first, sub_lf, group, up_head, w_down);
        SS__LAUNCHED("ss__ph_subtree_kernel");
        return SS_OK;
}

extern "C" int ss__ph_gather(const unsigned long long *d, unsigned k, uint32_t m,
                             const uint32_t *rank, const uint32_t *nodes, unsigned s0, unsigned ks,
                             unsigned long long *out, cudaStream_t st, struct ss_err *err)
{
        if ((uint64_t)ks * m == 0)
                return SS_OK;
        ss__ph_gather_kernel<<<ss__ph_grid((uint64_t)ks * m), 256, 0, st>>>(d, k, m, rank, nodes,
                                                                            s0, ks, out);
        SS__LAUNCHED("ss__ph_gather_kernel");
        return SS_OK;
}

/* Spins on the global timer: __nanosleep alone may sleep less than asked,
 * and the test that uses this needs the delay for certain. */
__global__ void ss__ph_delay_kernel(unsigned us)
{
        unsigned long long t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do {
                __nanosleep(1000);
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < (unsigned long long)us * 1000ull);
}

extern "C" int ss__ph_delay(unsigned us, cudaStream_t st, struct ss_err *err)
{
        ss__ph_delay_kernel<<<1, 1, 0, st>>>(us);
        SS__LAUNCHED("ss__ph_delay_kernel");
        return SS_OK;
}

/* The sweep over several devices (gpu/phast_split.c): the distances of
 * the ranks one part swept, copied into another part's array, which may be
 * on another device (a peer's memory, over NVLink or PCIe). The ranks go
 * in order, so a warp's stores are mostly one run. */
__global__ void ss__ph_put_kernel(const unsigned long long *from, unsigned long long *to,
                                  unsigned k, const uint32_t *ranks, uint32_t count)
{
        const uint64_t work = (uint64_t)count * k;
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < work;
             i += (uint64_t)gridDim.x * blockDim.x) {
                const uint64_t at = (uint64_t)ranks[i / k] * k + i % k;
                to[at] = from[at];
        }
}

extern "C" int ss__ph_put(const unsigned long long *from, unsigned long long *to, unsigned k,
                          const uint32_t *ranks, uint32_t count, cudaStream_t st,
                          struct ss_err *err)
{
        if ((uint64_t)count * k == 0)
                return SS_OK;
        ss__ph_put_kernel<<<ss__ph_grid((uint64_t)count * k), 256, 0, st>>>(from, to, k, ranks,
                                                                            count);
        SS__LAUNCHED("ss__ph_put_kernel");
        return SS_OK;
}

/* Routes from a sweep: thread i walks back from tgt[i] (walk.cuh) with the
 * distances of its source's slot, into region i * per of out, target
 * first; plen[i] gets the length (0: unreachable, or SS__WALK_*), tdist[i]
 * the distance. */
__global__ void ss__ph_walk_kernel(const unsigned long long *d, unsigned k, const uint32_t *rank,
                                   const uint32_t *rrow, const uint2 *rarcs, const uint32_t *slot,
                                   const uint32_t *src, const uint32_t *tgt, unsigned nr,
                                   uint32_t *out, uint32_t per, uint32_t *plen,
                                   unsigned long long *tdist)
{
        const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= nr)
                return;
        const ss__dist_ranked dist = {d, rank, k, slot[i]};
        const unsigned long long dt = dist(tgt[i]);
        tdist[i] = dt;
        plen[i] = dt == SS__PH_INF ? 0
                                   : ss__walk_back(dist, rrow, rarcs, src[i], tgt[i],
                                                   out + (uint64_t)i * per, per);
}

extern "C" int ss__ph_walk(const unsigned long long *d, unsigned k, const uint32_t *rank,
                           const uint32_t *rrow, const uint2 *rarcs, const uint32_t *slot,
                           const uint32_t *src, const uint32_t *tgt, unsigned nr, uint32_t *out,
                           uint32_t per, uint32_t *plen, unsigned long long *tdist, cudaStream_t st,
                           struct ss_err *err)
{
        if (nr == 0)
                return SS_OK;
        ss__ph_walk_kernel<<<(nr + 63) / 64, 64, 0, st>>>(d, k, rank, rrow, rarcs, slot, src, tgt,
                                                          nr, out, per, plen, tdist);
        SS__LAUNCHED("ss__ph_walk_kernel");
        return SS_OK;
}
