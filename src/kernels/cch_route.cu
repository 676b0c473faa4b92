/* Point-to-point routes on a customized CCH, one thread block a route
 * (gpu/phast_route.c): the CPU's query (cch/query.c) on the device.
 *
 * A node's upward search space is its chain of ancestors in the
 * elimination tree, so a route needs neither a queue nor n-sized arrays:
 * the block keeps both chains (up from the source, up from the target) in
 * shared memory, one warp relaxes each chain from the bottom, and the
 * distance is the best sum over the ranks the chains share. A sweep from
 * the source (phast.cu) would touch every edge of the CCH for one route;
 * the chains are a few hundred ranks even on a continent.
 *
 * Each rank's upward edges lead to ranks higher on the same chain, which
 * a binary search of the chain finds. A rank's edges are loaded while the
 * rank below it relaxes (they do not depend on its distance), so a step
 * costs shared-memory work, not a round trip to L2.
 *
 * Distance and predecessor are one 64-bit key, so that one atomicMin keeps
 * them consistent: dist << 20 | position of the predecessor << 10 | the
 * edge's offset in its list. A chain has at most SS__P2P_HMAX = 1024
 * ranks, a rank fewer than that many upward edges (they lead to its
 * ancestors), and a 32-bit metric's distance along one chain stays below
 * 2^32 * 1024 = 2^42: the key fits. The host sends a taller tree or a
 * 64-bit metric to the sweep.
 *
 * The path is then a list of CCH edges (up to the meeting rank, then down),
 * unpacked by the whole block in rounds: every shortcut of the list becomes
 * its lower triangle's two edges at once (a block-wide scan places them),
 * until a round finds only graph arcs.
 */
#include <cub/block/block_scan.cuh>

#include "kernels/kernels.h"

#define SS__P2P_INF   0xffffffffffffffffull
#define SS__P2P_FINAL 0x80000000u /* on an entry's end rank: a graph arc */

__device__ __forceinline__ uint32_t ss__p2p_find(const uint32_t *chain, uint32_t lo, uint32_t hi,
                                                 uint32_t y)
{
        while (lo < hi) {
                const uint32_t mid = (lo + hi) >> 1;
                if (chain[mid] < y)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* One chain's search by one warp: chain ch[0..L) (ascending ranks), its
 * keys kk; the edges of ch[i] are lo[i] .. hi[i]. */
__device__ __forceinline__ void ss__p2p_chain(const struct ss__p2p_dev &D, unsigned side,
                                              const uint32_t *ch, unsigned long long *kk,
                                              const uint32_t *lo, const uint32_t *hi, uint32_t L,
                                              unsigned lane)
{
        const unsigned long long *w = side ? D.w_down : D.w_up;
        uint32_t ny = 0;
        unsigned long long nw = SS__P2P_INF;
        if (L > 0 && lo[0] + lane < hi[0]) {
                ny = __ldg(&D.up_head[lo[0] + lane]);
                nw = __ldg(&w[lo[0] + lane]);
        }
        for (uint32_t i = 0; i < L; i++) {
                const uint32_t a0 = lo[i], a1 = hi[i];
                const uint32_t cy = ny;
                const unsigned long long cw = nw;
                nw = SS__P2P_INF;
                if (i + 1 < L && lo[i + 1] + lane < hi[i + 1]) {
                        ny = __ldg(&D.up_head[lo[i + 1] + lane]);
                        nw = __ldg(&w[lo[i + 1] + lane]);
                }
                const unsigned long long ki = kk[i];
                if (ki != SS__P2P_INF) {
                        const unsigned long long di = ki >> 20;
                        for (uint32_t a = a0 + lane; a < a1; a += 32) {
                                uint32_t y = cy;
                                unsigned long long wa = cw;
                                if (a >= a0 + 32) {
                                        y = __ldg(&D.up_head[a]);
                                        wa = __ldg(&w[a]);
                                }
                                if (wa == SS__P2P_INF)
                                        continue;
                                const uint32_t at = ss__p2p_find(ch, i + 1, L, y);
                                if (at < L && ch[at] == y)
                                        atomicMin(&kk[at], (di + wa) << 20 |
                                                               (unsigned long long)i << 10 |
                                                               (a - a0));
                        }
                }
                __syncwarp();
        }
}

__global__ void __launch_bounds__(SS__P2P_BLOCK)
    ss__p2p_kernel(const struct ss__p2p_dev D, const uint2 *q, uint2 *lists, uint32_t *paths,
                   uint32_t *plen, unsigned long long *tdist)
{
        typedef cub::BlockScan<uint32_t, SS__P2P_BLOCK> scan_t;
        __shared__ typename scan_t::TempStorage scan_tmp;
        __shared__ uint32_t len[2], meet, count;
        __shared__ unsigned long long best;
        __shared__ bool over;
        extern __shared__ unsigned long long sh[];
        const uint32_t H = D.hmax;
        unsigned long long *key = sh; /* 2H: both chains' */
        uint32_t *chain = (uint32_t *)(key + 2 * H), *lo = chain + 2 * H, *hi = lo + 2 * H;
        const unsigned r = blockIdx.x, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
        const uint2 st = q[r];

        if (warp < 2) {
                const unsigned side = warp;
                uint32_t *ch = chain + side * H, *l = lo + side * H, *h = hi + side * H;
                unsigned long long *kk = key + side * H;
                if (lane == 0) {
                        uint32_t z = D.rank[side ? st.y : st.x], k = 0;
                        while (z != SS__NO_NODE && k < H) {
                                ch[k++] = z;
                                z = __ldg(&D.parent[z]);
                        }
                        len[side] = z == SS__NO_NODE ? k : 0; /* 0: taller than H */
                }
                __syncwarp();
                const uint32_t L = len[side];
                for (uint32_t i = lane; i < L; i += 32) {
                        const uint32_t z = ch[i];
                        l[i] = __ldg(&D.up_first[z]);
                        h[i] = __ldg(&D.up_first[z + 1]);
                        kk[i] = i == 0 ? 0 : SS__P2P_INF;
                }
                __syncwarp();
                ss__p2p_chain(D, side, ch, kk, l, h, L, lane);
        }
        if (tid == 0) {
                best = SS__P2P_INF;
                meet = 0;
                over = false;
        }
        __syncthreads();
        if (len[0] == 0 || len[1] == 0) {
                /* A chain taller than the tree's height: a broken CCH. */
                if (tid == 0) {
                        tdist[r] = SS__P2P_INF;
                        plen[r] = SS__WALK_BROKEN;
                }
                return;
        }
        /* The chains share the ranks from the root down to the lowest
         * common ancestor: the k-th from the top of each, for small k. */
        const uint32_t lf = len[0], lb = len[1], common = lf < lb ? lf : lb;
        const unsigned long long *kf = key, *kb = key + H;
        const uint32_t *cf = chain, *cb = chain + H;
        for (uint32_t k = tid; k < common; k += SS__P2P_BLOCK) {
                const uint32_t i = lf - 1 - k, j = lb - 1 - k;
                if (cf[i] == cb[j] && kf[i] != SS__P2P_INF && kb[j] != SS__P2P_INF)
                        atomicMin(&best, (kf[i] >> 20) + (kb[j] >> 20));
        }
        __syncthreads();
        for (uint32_t k = tid; k < common; k += SS__P2P_BLOCK) {
                const uint32_t i = lf - 1 - k, j = lb - 1 - k;
                if (cf[i] == cb[j] && kf[i] != SS__P2P_INF && kb[j] != SS__P2P_INF &&
                    (kf[i] >> 20) + (kb[j] >> 20) == best)
                        atomicMax(&meet, k); /* the lowest: s = t is no edge */
        }
        __syncthreads();
        if (tid == 0)
                tdist[r] = best;
        if (best == SS__P2P_INF || D.room == 0) {
                if (tid == 0)
                        plen[r] = 0;
                return;
        }

        /* The path as CCH edges (slot 2a + direction, end rank), by one
         * thread: up from the source to the meeting rank, then down. */
        uint2 *src = lists + (size_t)r * 2 * D.room, *dst = src + D.room;
        if (tid == 0) {
                const uint32_t pf = lf - 1 - meet, pb = lb - 1 - meet;
                uint32_t nf = 0, nb = 0;
                for (uint32_t p = pf; p != 0; p = (uint32_t)(kf[p] >> 10) & 1023u)
                        nf++;
                for (uint32_t p = pb; p != 0; p = (uint32_t)(kb[p] >> 10) & 1023u)
                        nb++;
                if (nf + nb > D.room) {
                        over = true;
                } else {
                        uint32_t j = nf;
                        for (uint32_t p = pf; p != 0;) {
                                const uint32_t i = (uint32_t)(kf[p] >> 10) & 1023u;
                                const uint32_t a = lo[i] + (uint32_t)(kf[p] & 1023u);
                                src[--j] = make_uint2(2 * a, cf[p]);
                                p = i;
                        }
                        j = nf;
                        for (uint32_t p = pb; p != 0;) {
                                const uint32_t i = (uint32_t)(kb[p] >> 10) & 1023u;
                                const uint32_t a = lo[H + i] + (uint32_t)(kb[p] & 1023u);
                                src[j++] = make_uint2(2 * a + 1, cb[i]);
                                p = i;
                        }
                        count = nf + nb;
                }
        }
        __syncthreads();
        /* Rounds of unpacking: a shortcut a -> b through its lower corner w
         * becomes a -> w, w -> b (tri: their slots), a graph arc stays. */
        uint32_t m = over ? 0 : count;
        bool more = !over;
        while (more) {
                uint32_t off = 0;
                bool grew = false;
                for (uint32_t base = 0; base < m; base += SS__P2P_BLOCK) {
                        const uint32_t i = base + tid;
                        uint2 e = make_uint2(0, 0), t = make_uint2(0, 0);
                        uint32_t w = SS__NO_NODE, cnt = 0;
                        if (i < m) {
                                e = src[i];
                                cnt = 1;
                                if (!(e.y & SS__P2P_FINAL)) {
                                        w = __ldg(&D.mid[e.x]);
                                        t = __ldg(&D.tri[e.x]);
                                        if (w == SS__NO_NODE)
                                                e.y |= SS__P2P_FINAL;
                                        else
                                                cnt = 2;
                                }
                        }
                        uint32_t o, total;
                        scan_t(scan_tmp).ExclusiveSum(cnt, o, total);
                        o += off;
                        if (cnt == 1 && o < D.room) {
                                dst[o] = e;
                        } else if (cnt == 2 && o + 1 < D.room) {
                                dst[o] = make_uint2(t.x, w);
                                dst[o + 1] = make_uint2(t.y, e.y);
                                grew = true;
                        }
                        off += total;
                        __syncthreads(); /* scan_tmp again */
                }
                if (off > D.room) {
                        over = true; /* every thread: off is the block's */
                        break;
                }
                m = off;
                uint2 *x = src;
                src = dst;
                dst = x;
                more = __syncthreads_or(grew);
        }
        if (over) {
                if (tid == 0)
                        plen[r] = SS__WALK_LONG;
                return;
        }
        /* Target first, as the walks of the sweep leave theirs. */
        uint32_t *out = paths + (size_t)r * (D.room + 1);
        for (uint32_t j = tid; j < m; j += SS__P2P_BLOCK)
                out[m - 1 - j] = __ldg(&D.node[src[j].y & ~SS__P2P_FINAL]);
        if (tid == 0) {
                out[m] = st.x;
                plen[r] = m + 1;
        }
}

/* tri[s] for every slot s = 2a + direction of edge a = {x, y}, x < y:
 * the slots of the two edges through its lower corner w = mid[s] in
 * walking order (x -> w, w -> y up; y -> w, w -> x down). */
__global__ void ss__p2p_tri_kernel(uint32_t n, uint32_t arcs, const uint32_t *up_first,
                                   const uint32_t *up_head, const uint32_t *mid, uint2 *tri)
{
        for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < 2 * (uint64_t)arcs;
             s += (uint64_t)gridDim.x * blockDim.x) {
                const uint32_t a = (uint32_t)(s >> 1), w = mid[s];
                uint2 t = make_uint2(SS__NO_NODE, SS__NO_NODE);
                if (w != SS__NO_NODE) {
                        /* x: the rank whose list holds a */
                        uint32_t lo = 0, hi = n;
                        while (lo + 1 < hi) {
                                const uint32_t m = (lo + hi) >> 1;
                                if (up_first[m] <= a)
                                        lo = m;
                                else
                                        hi = m;
                        }
                        const uint32_t x = lo, y = up_head[a];
                        const uint32_t wl = up_first[w], wh = up_first[w + 1];
                        const uint32_t ex = ss__p2p_find(up_head, wl, wh, x);
                        const uint32_t ey = ss__p2p_find(up_head, wl, wh, y);
                        t = (s & 1) ? make_uint2(2 * ey + 1, 2 * ex) : make_uint2(2 * ex + 1, 2 * ey);
                }
                tri[s] = t;
        }
}

extern "C" int ss__p2p_tri(uint32_t n, uint32_t arcs, const uint32_t *up_first,
                           const uint32_t *up_head, const uint32_t *mid, uint2 *tri,
                           cudaStream_t st, struct ss_err *err)
{
        if (arcs == 0)
                return SS_OK;
        const uint64_t blocks = (2 * (uint64_t)arcs + 255) / 256;
        ss__p2p_tri_kernel<<<blocks > 65535 ? 65535u : (unsigned)blocks, 256, 0, st>>>(
            n, arcs, up_first, up_head, mid, tri);
        SS__LAUNCHED("ss__p2p_tri_kernel");
        return SS_OK;
}

extern "C" int ss__p2p(const struct ss__p2p_dev *d, const uint2 *q, unsigned nr, uint2 *lists,
                       uint32_t *paths, uint32_t *plen, unsigned long long *tdist, cudaStream_t st,
                       struct ss_err *err)
{
        if (nr == 0)
                return SS_OK;
        const size_t shared = (size_t)d->hmax * 2 * (8 + 3 * 4);
        ss__p2p_kernel<<<nr, SS__P2P_BLOCK, shared, st>>>(*d, q, lists, paths, plen, tdist);
        SS__LAUNCHED("ss__p2p_kernel");
        return SS_OK;
}
