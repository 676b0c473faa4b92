/* Edge-list Bellman-Ford: every round, one pass over the arc list (tail,
 * head, weight) until a round lowers nothing. One persistent cooperative
 * kernel, one grid barrier a round.
 *
 * Layout (struct ss__fam, built by gpu/family.c): three arrays of m entries,
 * read with __ldg through the read-only cache. The arcs are ordered by tail
 * block (2^SS__EL_BLOCK_BITS tails) and by head within a block, so the
 * distances of a block's tails (512 KB) stay in L2 while its arcs stream
 * past, and the heads are visited in increasing order.
 *
 * Work skipping: an arc can only improve its head when its tail changed
 * since the tail's arcs were last relaxed. Three bitmaps of the vertices
 * (in ws->set) rotate by round % 3: round r sets the bit of every vertex it
 * lowers in bitmap r % 3, relaxes an arc only when its tail's bit is set in
 * bitmap (r - 1) % 3 or r % 3, and clears bitmap (r + 1) % 3, which no one
 * reads or writes in round r. Arcs whose tail is off cost the 4-byte tail:
 * head and weight are not read.
 *
 * Each thread block takes chunks of consecutive arcs. When a chunk's tails
 * lie in one tail block (all but the chunks that straddle a block's end),
 * the block first copies that tail block's bits (8 KB) into shared memory,
 * so each arc's check is a shared-memory read instead of an L2 round trip,
 * and a chunk whose tails are all off is skipped without reading its arcs.
 * The copy is a snapshot: bits set in round r after it are missed, which
 * only makes the round less eager, since exactness needs just the bits of
 * round r - 1, and those are complete (the grid barrier orders them).
 * Exactness: let u's last change be in round q; round q + 1 sees u's bit in
 * bitmap q % 3, reads u's final distance and relaxes (u, v), so after round
 * q + 1 the arc holds; a round without changes therefore leaves every arc
 * holding. tests/gpu/test_family_layout.c replays this rule on the CPU with
 * only round r - 1's bits.
 *
 * Early stop for a single target as in bf.cu: every value set in round r
 * comes from a tail lowered in round r - 1 or earlier in round r, so nothing
 * set after round r - 1 is below that round's minimum; once that minimum
 * exceeds dist[target], the target is final. Target lists run to the end.
 */
#include "kernels/family.cuh"

/* Arcs a thread takes together. */
#define SS__EL_ILP 4
/* Bitmap words of one tail block, and a tail's place in its block. */
#define SS__EL_WORDS (1u << (SS__EL_BLOCK_BITS - 5))
#define SS__EL_MASK  ((1u << SS__EL_BLOCK_BITS) - 1)

struct ss__elparams {
        uint32_t n;
        uint64_t m;
        const uint32_t *src, *dst, *w;
        uint32_t source, target;
        unsigned long long *dist;
        uint32_t *bits; /* three bitmaps of words words each */
        uint32_t words; /* ceil(n / 32) */
        uint64_t chunk; /* arcs a thread block takes at a time */
        struct ss__ctl *ctl;
        const volatile int *cancel;
};

/* What a thread block needs to relax one round's arcs. */
struct ss__elround {
        const uint32_t *prev; /* bits of the vertices lowered in the last round */
        uint32_t *cur;        /* ... and in this one */
};

/* Whether tail x was lowered in this round or the last: from the block's
 * shared snapshot of its tail block when the chunk is local, else from the
 * bitmaps in L2. */
static __device__ __forceinline__ bool ss__tail_on(const ss__elround &q, const uint32_t *snap,
                                                   bool local, uint32_t x)
{
        if (local)
                return (snap[(x & SS__EL_MASK) >> 5] >> (x & 31)) & 1u;
        return ((ss__ld(&q.prev[x >> 5]) | ss__ld(&q.cur[x >> 5])) >> (x & 31)) & 1u;
}

/* Relaxes the arcs [a0, a1) whose tails are on: SS__EL_ILP arcs a thread at
 * a time (each a coalesced warp access), their tails in flight together. */
static __device__ __forceinline__ void ss__el_chunk(const ss__elparams &p, const ss__elround &q,
                                                    const uint32_t *snap, bool local, uint64_t a0,
                                                    uint64_t a1, uint32_t &mine,
                                                    unsigned long long &lmin)
{
        for (uint64_t b = a0 + threadIdx.x; b < a1; b += SS__EL_ILP * blockDim.x) {
                uint32_t u[SS__EL_ILP];
                bool on[SS__EL_ILP];
#pragma unroll
                for (int k = 0; k < SS__EL_ILP; k++) {
                        const uint64_t a = b + k * blockDim.x;
                        u[k] = a < a1 ? __ldg(&p.src[a]) : SS__NO_NODE;
                }
#pragma unroll
                for (int k = 0; k < SS__EL_ILP; k++)
                        on[k] = u[k] != SS__NO_NODE && ss__tail_on(q, snap, local, u[k]);
#pragma unroll
                for (int k = 0; k < SS__EL_ILP; k++) {
                        if (!on[k])
                                continue;
                        const uint64_t a = b + k * blockDim.x;
                        const uint32_t v = __ldg(&p.dst[a]);
                        /* A tail that is on has a finite distance. */
                        const unsigned long long nd = ss__ld(&p.dist[u[k]]) + __ldg(&p.w[a]);
                        if (!ss__lower(p.dist, v, nd))
                                continue;
                        mine++;
                        lmin = nd < lmin ? nd : lmin;
                        const uint32_t bit = 1u << (v & 31);
                        if (!(ss__ld(&q.cur[v >> 5]) & bit))
                                atomicOr(&q.cur[v >> 5], bit);
                }
        }
}

__global__ void __launch_bounds__(SS__BLOCK) ss__bf_edgelist_kernel(ss__elparams p)
{
        __shared__ uint32_t snap[SS__EL_WORDS];
        cg::grid_group grid = cg::this_grid();
        ss__ctl *c = p.ctl;
        const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
        const uint64_t nchunks = (p.m + p.chunk - 1) / p.chunk;

        ss__fam_reset(p.dist, p.n, c, tid, nthreads);
        for (uint64_t i = tid; i < 3ull * p.words; i += nthreads)
                p.bits[i] = 0;
        grid.sync();
        if (tid == 0) {
                p.dist[p.source] = 0;
                p.bits[p.source >> 5] = 1u << (p.source & 31); /* lowered "in round 0" */
                c->qcnt[1] = 1;
                c->rmin[1] = 0;
        }
        grid.sync();

        uint32_t r = 1, rounds = 0;
        bool cancelled = false;
        for (;;) {
                uint32_t changed;
                const int go = ss__round_begin(c, r, p.dist, p.target, p.cancel, tid, &changed);
                if (go != SS__ROUND_RUN) {
                        cancelled = go == SS__ROUND_CANCELLED;
                        break;
                }
                const ss__elround q = {p.bits + (uint64_t)((r + 2) % 3) * p.words,
                                       p.bits + (uint64_t)(r % 3) * p.words};
                uint32_t *next = p.bits + (uint64_t)((r + 1) % 3) * p.words;
                for (uint64_t i = tid; i < p.words; i += nthreads)
                        next[i] = 0;

                uint32_t mine = 0;
                unsigned long long lmin = SS__INF;
                for (uint64_t ch = blockIdx.x; ch < nchunks; ch += gridDim.x) {
                        const uint64_t a0 = ch * p.chunk;
                        const uint64_t a1 = a0 + p.chunk < p.m ? a0 + p.chunk : p.m;
                        /* The same for every thread of the block. */
                        const uint32_t blk = __ldg(&p.src[a0]) >> SS__EL_BLOCK_BITS;
                        const bool local = blk == __ldg(&p.src[a1 - 1]) >> SS__EL_BLOCK_BITS;
                        int any = 1;
                        if (local) {
                                const uint64_t base = (uint64_t)blk * SS__EL_WORDS;
                                const uint64_t left = p.words - base;
                                const uint32_t nw =
                                    left < SS__EL_WORDS ? (uint32_t)left : SS__EL_WORDS;
                                any = 0;
                                for (uint32_t i = threadIdx.x; i < nw; i += blockDim.x) {
                                        const uint32_t x =
                                            ss__ld(&q.prev[base + i]) | ss__ld(&q.cur[base + i]);
                                        snap[i] = x;
                                        any |= x != 0;
                                }
                                any = __syncthreads_or(any);
                        }
                        if (any)
                                ss__el_chunk(p, q, snap, local, a0, a1, mine, lmin);
                        __syncthreads(); /* snap is the next chunk's */
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
        const unsigned grid = l->grid ? l->grid : ws->blocks;
        /* Chunks of 1 to 8 strides of a block: at least about four per
         * thread block, so that the blocks share the work evenly. */
        const uint64_t stride = (uint64_t)SS__BLOCK * SS__EL_ILP;
        uint64_t strides = g->m / ((uint64_t)grid * 4 * stride);
        strides = strides < 1 ? 1 : strides > 8 ? 8 : strides;
        ss__elparams p;
        p.n = g->n;
        p.m = g->m;
        p.src = l->fam->el_src;
        p.dst = l->fam->el_dst;
        p.w = l->fam->el_w;
        p.source = l->source;
        p.target = l->target;
        p.dist = ws->dist;
        p.bits = ws->set;
        p.words = (g->n + 31) / 32;
        p.chunk = strides * stride;
        p.ctl = ws->ctl;
        p.cancel = ws->dcancel;
        void *args[] = {&p};
        return ss__launch_coop_grid((const void *)ss__bf_edgelist_kernel, "ss__bf_edgelist_kernel",
                                    ws, grid, args, err);
}
