/* Queue Bellman-Ford: each round relaxes the out-arcs of the vertices whose
 * distance dropped in the previous round, and only those; a vertex lowered
 * in the round is marked in a bitmap, and the marks become the next round's
 * queue. One persistent cooperative kernel, two grid barriers a round:
 *
 *  1. relax: warps take 32 queue entries at a time and walk their arcs
 *     together (frontier.cuh's ss__warp_arcs: the lanes prefix-sum their
 *     vertices' degrees and share the concatenated arcs, so a hub's arcs are
 *     spread over the warp); an improved head gets its bit set (atomicOr,
 *     skipped when the bit is already set);
 *  2. compact: each warp takes 32 bitmap words, counts their bits, reserves
 *     room in the next queue with one atomic (a warp prefix sum places each
 *     lane's vertices) and clears the words.
 * A vertex has one bit, so it is in the next queue once however often it
 * was lowered (deduplication without stamps), and the queue comes out in
 * vertex order within each warp's 1,024-vertex stretch, which keeps the next
 * round's reads of rows and arcs close together. The compaction is a scan
 * over n / 32 words a round: 33 KB on NY, 3 MB on a USA-size graph.
 *
 * How it differs from bf.cu (also frontier-driven): bf pushes each improved
 * vertex with an atomic on one counter and deduplicates with generation
 * stamps; here the marks are a bitmap and the queue is built by a compaction
 * pass (one atomic per warp and 32 words), in vertex order.
 *
 * Early stop for a single target as in bf.cu: every value set in round r is
 * dist[u] + w for u lowered in round r - 1 (or again in round r), so nothing
 * set after round r - 1 is below that round's minimum; once it exceeds
 * dist[target] the target is final. Target lists run to the end.
 *
 * Scratch: the queues are ws->q[0] and q[1]; the bitmap is the first
 * ceil(n / 32) words of ws->far[0], cleared at the start of every search.
 */
#include "kernels/family.cuh"

/* Arcs per lane loaded together (see delta.cu's SS__BATCH). */
#define SS__QB 4

struct ss__qparams {
        uint32_t n;
        const uint32_t *row;
        const uint2 *arcs;
        uint32_t source, target;
        unsigned long long *dist;
        uint32_t *q0, *q1;
        uint32_t *bits;
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

__global__ void __launch_bounds__(SS__BLOCK) ss__bf_queue_kernel(ss__qparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
        const uint32_t lane = threadIdx.x & 31;
        const uint64_t nwords = ((uint64_t)p.n + 31) / 32;

        ss__fam_reset(p.dist, p.n, c, tid, nthreads);
        for (uint64_t i = tid; i < nwords; i += nthreads)
                p.bits[i] = 0;
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                p.q0[0] = p.source;
                c->qcnt[0] = 1;
                c->rmin[0] = 0;
        }
        grid.sync();

        uint32_t r = 0, rounds = 0;
        bool cancelled = false;
        for (;;) {
                uint32_t cnt;
                const int go = ss__round_begin(c, r, p.dist, p.target, p.cancel, tid, &cnt);
                if (go != SS__ROUND_RUN) {
                        cancelled = go == SS__ROUND_CANCELLED;
                        break;
                }
                const uint32_t *cur = (r & 1) ? p.q1 : p.q0;
                uint32_t *next = (r & 1) ? p.q0 : p.q1;

                /* 1. Relax the queue's out-arcs; mark what improves. The
                 * loop bound is the same for the 32 lanes of a warp. */
                unsigned long long lmin = SS__INF;
                for (uint64_t base = tid - lane; base < cnt; base += nthreads) {
                        uint32_t begin = 0, end = 0;
                        unsigned long long d = 0;
                        if (base + lane < cnt) {
                                const uint32_t v = ss__ld(&cur[base + lane]);
                                d = ss__ld(&p.dist[v]);
                                begin = __ldg(&p.row[v]);
                                end = __ldg(&p.row[v + 1]);
                        }
                        const uint32_t incl = ss__warp_scan(end - begin);
                        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
                        for (uint32_t b = 0; b < total; b += 32 * SS__QB) {
                                uint32_t head[SS__QB];
                                unsigned long long nd[SS__QB];
                                bool ok[SS__QB];
                                int owner[SS__QB];
                                ss__warp_arcs<SS__QB>(p.arcs, begin, end, d, incl, total, b, head,
                                                      nd, ok, owner);
#pragma unroll
                                for (int j = 0; j < SS__QB; j++) {
                                        if (!ok[j] || !ss__lower(p.dist, head[j], nd[j]))
                                                continue;
                                        lmin = nd[j] < lmin ? nd[j] : lmin;
                                        uint32_t *w = &p.bits[head[j] >> 5];
                                        const uint32_t bit = 1u << (head[j] & 31);
                                        if (!(ss__ld(w) & bit))
                                                atomicOr(w, bit);
                                }
                        }
                }
                ss__warp_min_to(&c->rmin[(r + 1) % 3], lmin);
                grid.sync();

                /* 2. Compact the marks into the next queue, clearing them. */
                for (uint64_t base = tid - lane; base < nwords; base += nthreads) {
                        const uint64_t i = base + lane;
                        uint32_t word = i < nwords ? ss__ld(&p.bits[i]) : 0;
                        const uint32_t k = __popc(word);
                        const uint32_t incl = ss__warp_scan(k);
                        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
                        if (total == 0)
                                continue; /* the same for every lane */
                        uint32_t at = 0;
                        if (lane == 0)
                                at = atomicAdd(&c->qcnt[(r + 1) % 3], total);
                        at = __shfl_sync(SS__FULL, at, 0) + (incl - k);
                        if (k == 0)
                                continue;
                        p.bits[i] = 0;
                        while (word) {
                                next[at++] = (uint32_t)(i * 32) + (uint32_t)(__ffs(word) - 1);
                                word &= word - 1;
                        }
                }
                grid.sync();
                r++;
                rounds++;
        }
        ss__fam_finish(c, p.dist, p.target, rounds, cancelled, tid);
}

extern "C" int ss__bf_queue_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__bf_queue_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_bf_queue(const struct ss__dgraph *g, struct ss__ws *ws,
                                   const struct ss__launch *l, struct ss_err *err)
{
        ss__qparams p;
        p.n = g->n;
        p.row = g->row;
        p.arcs = g->arcs;
        p.source = l->source;
        p.target = l->target;
        p.dist = ws->dist;
        p.q0 = ws->q[0];
        p.q1 = ws->q[1];
        p.bits = ws->far[0];
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        return ss__launch_coop((const void *)ss__bf_queue_kernel, "ss__bf_queue_kernel", ws, args,
                               err);
}
