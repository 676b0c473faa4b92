/* ELL Bellman-Ford: Bellman-Ford in its sparse matrix-vector form, over the
 * in-arcs in sliced ELLPACK, as one persistent cooperative kernel.
 *
 * A round is one "SpMV" in the (min, +) semiring: every virtual row i (a
 * piece of the in-arcs of its head vertex v, see struct ss__fam) computes
 *     best = min over its entries (u, w) of dist[u] + w
 * and lowers dist[v] to best. One thread per row; the rows of a slice are
 * the 32 lanes of a warp, and the slice is stored column-major, so at each
 * step j the warp reads 32 consecutive 8-byte entries (one 256-byte
 * transaction) and gathers the tails' distances. A row writes only its head
 * (atomicMin when it improves it: the pieces of a split row share a head).
 * Rounds repeat until one lowers nothing; the distances are then exact.
 *
 * Updates are in place (Gauss-Seidel): a row may read a distance lowered
 * earlier in the same round. That only speeds convergence: every value is
 * still a path length, and a round that lowers nothing means every arc
 * satisfies dist[v] <= dist[u] + w.
 *
 * Early stop for a single target (as in bf.cu): each round records the
 * smallest value it set. Every change in round r is dist[u] + w for a tail u
 * changed in round r - 1 or earlier in round r (a tail that did not change
 * since round r - 2 was already read, with its final value, in round r - 1),
 * so by induction nothing set after round r - 1 is below the minimum of
 * round r - 1. Once that minimum exceeds dist[target], the target is final.
 * The comparison is strict, so a thread that reads dist[target] after a
 * faster thread lowered it (to at least that minimum) decides the same.
 * Target lists run to the end: the rounds cost the same whatever the targets.
 *
 * Unreached tails hold SS__INF, which must not be added to (it would wrap).
 * Finite distances are below n * 2^32 <= 2^64 - 2^32, so d + w cannot wrap.
 */
#include "kernels/family.cuh"

/* Entries of a row whose loads a thread issues together. */
#define SS__ELL_ILP 4

struct ss__ellparams {
        uint32_t n;
        uint64_t rows;
        const uint2 *info;
        const unsigned long long *soff;
        const uint2 *ell;
        uint32_t source, target;
        unsigned long long *dist;
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

__global__ void __launch_bounds__(SS__BLOCK) ss__bf_ell_kernel(ss__ellparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;

        ss__fam_reset(p.dist, p.n, c, tid, nthreads);
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                c->qcnt[0] = 1; /* round 0 runs: the source changed */
                c->rmin[0] = 0;
        }
        grid.sync();

        uint32_t r = 0, rounds = 0;
        bool cancelled = false;
        for (;;) {
                uint32_t changed;
                const int go = ss__round_begin(c, r, p.dist, p.target, p.cancel, tid, &changed);
                if (go != SS__ROUND_RUN) {
                        cancelled = go == SS__ROUND_CANCELLED;
                        break;
                }
                uint32_t mine = 0;
                unsigned long long lmin = SS__INF;
                /* rows and nthreads are multiples of 32: a warp takes whole slices. */
                for (uint64_t i = tid; i < p.rows; i += nthreads) {
                        const uint2 info = __ldg(&p.info[i]);
                        if (info.y == 0)
                                continue; /* padding */
                        const unsigned long long *e0 = &p.soff[i >> 5];
                        const uint2 *e = p.ell + (__ldg(e0) + (i & 31));
                        /* SS__ELL_ILP entries at a time: their loads, then
                         * the gathers of their tails' distances, are in
                         * flight together. */
                        unsigned long long best = SS__INF;
                        for (uint32_t j = 0; j < info.y; j += SS__ELL_ILP) {
                                uint2 a[SS__ELL_ILP];
                                unsigned long long du[SS__ELL_ILP];
#pragma unroll
                                for (int k = 0; k < SS__ELL_ILP; k++)
                                        a[k] = j + k < info.y ? __ldg(&e[(uint64_t)(j + k) * 32])
                                                              : make_uint2(SS__NO_NODE, 0);
#pragma unroll
                                for (int k = 0; k < SS__ELL_ILP; k++)
                                        du[k] = a[k].x != SS__NO_NODE ? ss__ld(&p.dist[a[k].x])
                                                                      : SS__INF;
#pragma unroll
                                for (int k = 0; k < SS__ELL_ILP; k++)
                                        if (du[k] != SS__INF && du[k] + a[k].y < best)
                                                best = du[k] + a[k].y;
                        }
                        if (best != SS__INF && ss__lower(p.dist, info.x, best)) {
                                mine++;
                                lmin = best < lmin ? best : lmin;
                        }
                }
                ss__warp_add_to(&c->qcnt[(r + 1) % 3], mine);
                ss__warp_min_to(&c->rmin[(r + 1) % 3], lmin);
                grid.sync();
                r++;
                rounds++;
        }
        ss__fam_finish(c, p.dist, p.target, rounds, cancelled, tid);
}

extern "C" int ss__bf_ell_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__bf_ell_kernel, SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_bf_ell(const struct ss__dgraph *g, struct ss__ws *ws,
                                 const struct ss__launch *l, struct ss_err *err)
{
        if (!l->fam || !l->fam->ell_info)
                return ss_err_set(err, SS_EINTERNAL, "bf-ell: the ELL layout is not on the device");
        ss__ellparams p;
        p.n = g->n;
        p.rows = l->fam->ell_rows;
        p.info = l->fam->ell_info;
        p.soff = l->fam->ell_soff;
        p.ell = l->fam->ell;
        p.source = l->source;
        p.target = l->target;
        p.dist = ws->dist;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        return ss__launch_coop_grid((const void *)ss__bf_ell_kernel, "ss__bf_ell_kernel", ws,
                                    l->grid ? l->grid : ws->blocks, args, err);
}
