/* Edge-list Bellman-Ford: every round, one pass over the arc list (tail,
 * head, weight), a thread per arc, until a round lowers nothing. One
 * persistent cooperative kernel, one grid barrier a round.
 *
 * Layout (struct ss__fam, built by gpu/family.c): three arrays of m entries,
 * read with __ldg through the read-only cache, consecutive threads taking
 * consecutive arcs (the three arrays are read coalesced). The arcs are
 * ordered by tail block (2^SS__EL_BLOCK_BITS tails) and by head within a
 * block: while a block's arcs stream past, the stamps and distances of its
 * tails (256 KB and 512 KB) stay in L2, and the heads are visited in
 * increasing order. Every arc pays the tail side each round (the check
 * below), only the arcs that relax pay the head side, so the tails get the
 * locality.
 *
 * Work skipping: an arc can only improve its head when its tail changed
 * since the tail's arcs were last relaxed. A stamp per vertex (ws->set,
 * cleared at the start of each search) holds 1 + the round in which it was
 * last lowered; round r relaxes an arc only when its tail's stamp is at
 * least r (the tail was lowered in round r - 1 or in this round). The other
 * arcs cost the 4-byte tail and the stamp: head and weight are not read.
 * Exactness: let u's last change be in round q; round q + 1 reads u's final
 * distance (the barrier orders it) and relaxes (u, v), so after round q + 1
 * the arc holds; a round without changes therefore leaves every arc holding.
 *
 * Early stop for a single target as in bf.cu: every value set in round r
 * comes from a tail lowered in round r - 1 or earlier in round r, so nothing
 * set after round r - 1 is below that round's minimum; once that minimum
 * exceeds dist[target], the target is final. Target lists run to the end.
 */
#include "kernels/family.cuh"

/* Arcs a thread takes together. */
#define SS__EL_ILP 4

struct ss__elparams {
        uint32_t n;
        uint64_t m;
        const uint32_t *src, *dst, *w;
        uint32_t source, target;
        unsigned long long *dist;
        uint32_t *stamp;
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

__global__ void __launch_bounds__(SS__BLOCK) ss__bf_edgelist_kernel(ss__elparams p)
{
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;

        ss__fam_reset(p.dist, p.n, c, tid, nthreads);
        for (uint64_t v = tid; v < p.n; v += nthreads)
                p.stamp[v] = 0;
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                p.stamp[p.source] = 1; /* lowered "in round 0" */
                c->qcnt[1] = 1;
                c->rmin[1] = 0;
        }
        grid.sync();

        uint32_t r = 1, rounds = 0;
        bool cancelled = false;
        for (;;) {
                const uint32_t changed = ss__ld(&c->qcnt[r % 3]);
                if (ss__ld(&c->cflag[r % 3])) {
                        cancelled = true;
                        break;
                }
                if (changed == 0)
                        break;
                if (p.target != SS__NO_NODE && ss__ld(&c->rmin[r % 3]) > ss__ld(&p.dist[p.target]))
                        break;
                if (tid == 0) {
                        c->qcnt[(r + 2) % 3] = 0;
                        c->rmin[(r + 2) % 3] = SS__INF;
                        c->cflag[(r + 1) % 3] = p.cancel ? (*p.cancel != 0) : 0;
                }
                uint32_t mine = 0;
                unsigned long long lmin = SS__INF;
                /* SS__EL_ILP arcs a thread at a time (each a coalesced
                 * warp access): their tails, then the tails' stamps, are
                 * in flight together. */
                for (uint64_t a0 = tid; a0 < p.m; a0 += SS__EL_ILP * nthreads) {
                        uint32_t u[SS__EL_ILP];
                        bool on[SS__EL_ILP];
#pragma unroll
                        for (int k = 0; k < SS__EL_ILP; k++) {
                                const uint64_t a = a0 + k * nthreads;
                                u[k] = a < p.m ? __ldg(&p.src[a]) : SS__NO_NODE;
                        }
#pragma unroll
                        for (int k = 0; k < SS__EL_ILP; k++)
                                on[k] = u[k] != SS__NO_NODE && ss__ld(&p.stamp[u[k]]) >= r;
#pragma unroll
                        for (int k = 0; k < SS__EL_ILP; k++) {
                                if (!on[k])
                                        continue;
                                const uint64_t a = a0 + k * nthreads;
                                const uint32_t v = __ldg(&p.dst[a]);
                                /* A stamped tail has a finite distance. */
                                const unsigned long long nd =
                                    ss__ld(&p.dist[u[k]]) + __ldg(&p.w[a]);
                                if (!ss__lower(p.dist, v, nd))
                                        continue;
                                mine++;
                                lmin = nd < lmin ? nd : lmin;
                                if (ss__ld(&p.stamp[v]) != r + 1)
                                        p.stamp[v] = r + 1;
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

extern "C" int ss__bf_edgelist_blocks_per_sm(int *out, struct ss_err *err)
{
        SS__CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, ss__bf_edgelist_kernel,
                                                               SS__BLOCK, 0));
        return SS_OK;
}

extern "C" int ss__launch_bf_edgelist(const struct ss__dgraph *g, struct ss__ws *ws,
                                      const struct ss__launch *l, struct ss_err *err)
{
        if (!l->fam || !l->fam->el_src)
                return ss_err_set(err, SS_EINTERNAL,
                                  "bf-edgelist: the edge list is not on the device");
        ss__elparams p;
        p.n = g->n;
        p.m = g->m;
        p.src = l->fam->el_src;
        p.dst = l->fam->el_dst;
        p.w = l->fam->el_w;
        p.source = l->source;
        p.target = l->target;
        p.dist = ws->dist;
        p.stamp = ws->set;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        return ss__launch_coop_grid((const void *)ss__bf_edgelist_kernel, "ss__bf_edgelist_kernel",
                                    ws, l->grid ? l->grid : ws->blocks, args, err);
}
