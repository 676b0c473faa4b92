/* Frontier-driven CSR Bellman-Ford as one persistent, grid-synchronised kernel.
 *
 * Each round relaxes every out-arc of the vertices whose distance dropped in
 * the previous round (the frontier) and collects the vertices it lowers into
 * the next frontier (one entry per vertex per round, by generation stamps).
 * The search ends when a round lowers nothing. Two variants, as in the CSR
 * sparse-matrix formulation of Bellman-Ford (one row per thread, or one row
 * per warp):
 *  - scalar: one thread per frontier vertex walks its arcs; best for sparse
 *    graphs such as road networks (average degree 2-3);
 *  - vector: one warp per frontier vertex, lanes striding over its arcs;
 *    best once degrees reach tens of arcs.
 * The default picks scalar below an average degree of 16.
 *
 * Early stop for a single target: each round also records the smallest
 * distance it set; no later round can set anything below that, so once that
 * minimum exceeds dist[target], the target is final. The comparison is
 * strict: dist[target] may be lowered by a fast thread while a slow one still
 * reads it, but only to a value >= the minimum, which keeps the decision the
 * same in every thread.
 *
 * Barrier, counters and uniform decisions work as in delta.cu.
 */
#include "kernels/frontier.cuh"
#include "kernels/kernels.h"

struct ss__bparams {
        uint32_t n;
        const uint32_t *row;
        const uint2 *arcs;
        uint32_t source, target;
        unsigned long long *dist;
        uint32_t *q0, *q1;
        uint32_t *nstamp;
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

static __device__ __forceinline__ void ss__bf_relax(unsigned long long *dist, uint32_t u,
                                                    unsigned long long nd, uint32_t *next,
                                                    unsigned int *next_cnt, uint32_t *nstamp,
                                                    uint32_t gen, unsigned long long *rmin)
{
        if (nd >= ss__ld(&dist[u]))
                return;
        if (nd >= atomicMin(&dist[u], nd))
                return;
        atomicMin(rmin, nd);
        if (atomicExch(&nstamp[u], gen) != gen)
                ss__push(next, next_cnt, u);
}

template <bool Vector> __global__ void __launch_bounds__(SS__BLOCK) ss__bf_kernel(ss__bparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;

        uint32_t r = c->phase;
        const bool wrap = r > SS__GEN_LIMIT;
        for (uint64_t v = tid; v < p.n; v += nthreads) {
                p.dist[v] = SS__INF;
                if (wrap)
                        p.nstamp[v] = 0;
        }
        if (wrap)
                r = 0;
        r++;
        if (tid == 0) {
                c->qcnt[0] = c->qcnt[1] = c->qcnt[2] = 0;
                c->cflag[0] = c->cflag[1] = c->cflag[2] = 0;
                c->rmin[0] = c->rmin[1] = c->rmin[2] = SS__INF;
                c->cancelled = 0;
        }
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                ((r & 1) ? p.q1 : p.q0)[0] = p.source;
                p.nstamp[p.source] = r;
                c->qcnt[r % 3] = 1;
                c->rmin[r % 3] = 0;
        }
        grid.sync();

        uint32_t rounds = 0;
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
                unsigned int *next_cnt = &c->qcnt[(r + 1) % 3];
                unsigned long long *rmin = &c->rmin[(r + 1) % 3];
                if (Vector) {
                        const uint64_t warp = tid >> 5, nwarps = nthreads >> 5;
                        const uint32_t lane = threadIdx.x & 31;
                        for (uint64_t i = warp; i < cnt; i += nwarps) {
                                const uint32_t v = ss__ld(&cur[i]);
                                const unsigned long long d = ss__ld(&p.dist[v]);
                                const uint32_t end = __ldg(&p.row[v + 1]);
                                for (uint32_t a = __ldg(&p.row[v]) + lane; a < end; a += 32) {
                                        const uint2 arc = __ldg(&p.arcs[a]);
                                        ss__bf_relax(p.dist, arc.x, d + arc.y, next, next_cnt,
                                                     p.nstamp, r + 1, rmin);
                                }
                        }
                } else {
                        for (uint64_t i = tid; i < cnt; i += nthreads) {
                                const uint32_t v = ss__ld(&cur[i]);
                                const unsigned long long d = ss__ld(&p.dist[v]);
                                const uint32_t end = __ldg(&p.row[v + 1]);
                                for (uint32_t a = __ldg(&p.row[v]); a < end; a++) {
                                        const uint2 arc = __ldg(&p.arcs[a]);
                                        ss__bf_relax(p.dist, arc.x, d + arc.y, next, next_cnt,
                                                     p.nstamp, r + 1, rmin);
                                }
                        }
                }
                grid.sync();
                r++;
                rounds++;
        }
        if (tid == 0) {
                c->phase = r + 1;
                c->phases = rounds;
                c->buckets = 0;
                c->cancelled = cancelled ? 1 : 0;
                if (p.target != SS__NO_NODE)
                        c->tdist = p.dist[p.target];
        }
}

extern "C" int ss__bf_blocks_per_sm(int *out, struct ss_err *err)
{
        int a = 0, b = 0;
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, ss__bf_kernel<false>, SS__BLOCK, 0));
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, ss__bf_kernel<true>, SS__BLOCK, 0));
        *out = a < b ? a : b;
        return SS_OK;
}

extern "C" int ss__launch_bf(const struct ss__dgraph *g, struct ss__ws *ws,
                             const struct ss__launch *l, struct ss_err *err)
{
        ss__bparams p;
        p.n = g->n;
        p.row = g->row;
        p.arcs = g->arcs;
        p.source = l->source;
        p.target = l->target;
        p.dist = ws->dist;
        p.q0 = ws->q[0];
        p.q1 = ws->q[1];
        p.nstamp = ws->nstamp;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        bool vector = l->bf_variant == SS__BF_VECTOR;
        if (l->bf_variant == SS__BF_AUTO)
                vector = g->n > 0 && g->m / g->n >= 16;
        if (vector)
                return ss__launch_coop((const void *)ss__bf_kernel<true>, "ss__bf_kernel<vector>",
                                       ws, args, err);
        return ss__launch_coop((const void *)ss__bf_kernel<false>, "ss__bf_kernel<scalar>", ws,
                               args, err);
}
