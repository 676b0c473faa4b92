/* Point-to-point routes on a customized CCH, one thread block a route
 * (gpu/phast_route.c): the CPU's query (cch/query.c) on the device.
 *
 * A node's upward search space is its chain of ancestors in the
 * elimination tree, so a route needs neither a queue nor n-sized arrays:
 * the block keeps both chains (up from the source, up from the target) in
 * shared memory, half of its threads relax each chain from the bottom, and
 * the distance is the best sum over the ranks the chains share. A sweep
 * from the source (phast.cu) would touch every edge of the CCH for one
 * route; the chains are a few hundred ranks even on a continent.
 *
 * A route is a chain of dependent steps, so the kernel keeps round trips
 * to memory out of them (measured on NY-d and a generated 1.07M-node
 * graph, docs/gpu.md):
 * - the chain comes SS__P2P_JUMP ancestors a load, from a table of each
 *   rank's next ancestors, instead of one parent a load;
 * - the chain's edges do not depend on distances: they are loaded in tiles
 *   of SS__P2P_TILE, many loads in flight a thread, their heads turned into
 *   chain positions (a rank's upward neighbours are its ancestors) into
 *   shared memory; the relaxations, one rank after another, then read
 *   shared memory alone.
 *
 * Distance and predecessor are one 64-bit key, so that one atomicMin keeps
 * them consistent: dist << 2b | position of the predecessor << b | the
 * edge's offset in its list, b = ss__p2p_bits(hmax). A chain has at most
 * hmax ranks, a rank fewer than that many upward edges (they lead to its
 * ancestors). Up to 1,024 ranks b is 10 and a 32-bit metric's distance
 * along a chain stays below 2^32 * 1024 = 2^42: the key fits. Taller trees
 * (b = 11 up to 2,048 ranks, 12 up to 4,096, as a generated USA-size
 * graph's 3,673) need the metric's largest weight times the height below
 * 2^(64 - 2b), which the host checks (ss__ph_p2p_judge); it sends a tree
 * taller than the device's shared memory holds (ss__p2p_limit), sums that
 * may not fit, or a 64-bit metric to the sweep.
 *
 * The path is then a list of CCH edges (up to the meeting rank, then down),
 * unpacked by the whole block in rounds: every shortcut of the list becomes
 * its lower triangle's two edges at once (a block-wide scan places them),
 * until a round finds only graph arcs.
 */
#include <cub/block/block_scan.cuh>

#include "kernels/kernels.h"

/* A rank has fewer upward edges than its chain has ranks: one fits a tile. */
static_assert(SS__P2P_HMAX <= SS__P2P_TILE, "a rank's edges must fit one tile");
/* A rank's ancestors are two uint4 (ss__p2p_side, ss__p2p_anc_kernel). */
static_assert(SS__P2P_JUMP == 8, "the ancestor table is read and written in two uint4");
/* A tile's first round is what the threads of a side hold in registers. */
static_assert(SS__P2P_SIDE * SS__P2P_AHEAD <= SS__P2P_TILE, "a round must fit one tile");
/* Chain positions are stored in 16 bits (pbuf). */
static_assert(SS__P2P_HMAX <= 65536, "a chain position must fit 16 bits");

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

/* A barrier of one side's SS__P2P_SIDE threads (named barrier 1 + side;
 * 0 is __syncthreads'). */
__device__ __forceinline__ void ss__p2p_side_sync(unsigned side)
{
        asm volatile("bar.sync %0, %1;" ::"r"(1 + side), "r"(SS__P2P_SIDE) : "memory");
}

/* ns, for SS_GPU_PHAST_ROUTE_PROFILE */
__device__ __forceinline__ unsigned long long ss__p2p_clock(void)
{
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        return t;
}

/* The last position i in [lo, hi) with off[i] <= x (off ascending, off[lo] <= x). */
__device__ __forceinline__ uint32_t ss__p2p_last_le(const uint32_t *off, uint32_t lo, uint32_t hi,
                                                    uint32_t x)
{
        while (lo + 1 < hi) {
                const uint32_t mid = (lo + hi) >> 1;
                if (off[mid] <= x)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* The first SS__P2P_SIDE * A edges of a tile (A: SS__P2P_AHEAD), a thread's
 * share in registers: loaded before the previous tile relaxes, so that
 * the loads' round trips overlap its barriers, and stored to shared memory
 * after it. at: the edge's chain position (the rank whose list holds it);
 * h: its head's distance up the chain (D.hop), or the head's rank; w: the
 * low word of its weight (all ones for infinity, as a 32-bit metric's). */
template <int A> struct ss__p2p_ahead {
        uint32_t at[A], h[A], w[A];
};

/* The tile after rank i0: ranks i0 .. the returned one, whose edges fit
 * SS__P2P_SIDE * A (one rank always goes: a rank may have up to
 * SS__P2P_TILE edges, the rounds after the first then load in place). */
template <int A>
__device__ __forceinline__ uint32_t ss__p2p_tile_end(const uint32_t *aoff, uint32_t i0, uint32_t L)
{
        const uint32_t i1 = ss__p2p_last_le(aoff, i0, L + 1, aoff[i0] + SS__P2P_SIDE * A);
        return i1 == i0 ? i0 + 1 : i1;
}

/* Loads this thread's edges k0 + ts + u * SS__P2P_SIDE of the tile i0 .. i1. */
template <int A>
__device__ __forceinline__ void ss__p2p_load(const struct ss__p2p_dev &D, const uint32_t *W,
                                             const uint32_t *lo, const uint32_t *aoff, uint32_t i0,
                                             uint32_t i1, uint32_t k0, unsigned ts,
                                             struct ss__p2p_ahead<A> &R)
{
        const uint32_t base = aoff[i0], cnt = aoff[i1] - base;
#pragma unroll
        for (int u = 0; u < A; u++) {
                const uint32_t e = k0 + ts + u * SS__P2P_SIDE;
                R.at[u] = i0;
                R.h[u] = 0;
                R.w[u] = 0xffffffffu;
                if (e < cnt) {
                        const uint32_t i = ss__p2p_last_le(aoff, i0, i1, base + e);
                        const uint32_t a = lo[i] + (base + e - aoff[i]);
                        R.at[u] = i;
                        R.h[u] = D.hop ? (uint32_t)__ldg(&D.hop[a]) : __ldg(&D.up_head[a]);
                        R.w[u] = __ldg(&W[2 * (size_t)a]);
                }
        }
}

/* Stores the loaded edges into the tile's buffers: the head's chain
 * position and the weight (all ones: no relaxation). */
template <int A>
__device__ __forceinline__ void ss__p2p_store(const struct ss__p2p_dev &D, const uint32_t *ch,
                                              uint32_t L, uint32_t k0, uint32_t cnt, unsigned ts,
                                              const struct ss__p2p_ahead<A> &R, uint32_t *wb,
                                              uint16_t *pb)
{
#pragma unroll
        for (int u = 0; u < A; u++) {
                const uint32_t e = k0 + ts + u * SS__P2P_SIDE;
                if (e >= cnt)
                        continue;
                uint32_t p = 0, w32 = 0xffffffffu;
                if (R.w[u] != 0xffffffffu) {
                        if (D.hop) {
                                /* A rank's upward neighbours are its
                                 * ancestors: h ranks up its chain. */
                                p = R.at[u] + R.h[u];
                                if (R.h[u] != 0 && p < L)
                                        w32 = R.w[u];
                        } else {
                                p = ss__p2p_find(ch, R.at[u] + 1, L, R.h[u]);
                                if (p < L && ch[p] == R.h[u])
                                        w32 = R.w[u];
                        }
                }
                wb[e] = w32;
                pb[e] = (uint16_t)p;
        }
}

/* One side's chain and search, by its SS__P2P_SIDE threads (ts: this
 * thread's index among them). The chain: ch[0..L) from node up, by
 * SS__P2P_JUMP ancestors a load; then the edges' ranges and their prefix
 * sums (aoff); then tiles of consecutive ranks, each relaxed rank by rank
 * from shared memory alone while the next tile's edges are loading.
 * Returns L (0: taller than H). prof (thread 0 of side 0, or NULL): ns in
 * the tiles' stores and in-place loads, and in the relaxations. */
template <int A>
__device__ __forceinline__ uint32_t ss__p2p_side(const struct ss__p2p_dev &D, unsigned side,
                                                 unsigned ts, uint32_t node, uint32_t H,
                                                 uint32_t *ch, unsigned long long *kk, uint32_t *lo,
                                                 uint32_t *aoff, uint32_t *wb, uint16_t *pb,
                                                 uint32_t *len, unsigned long long *prof)
{
        if (ts == 0) {
                uint32_t z = D.rank[node], k = 0;
                ch[k++] = z;
                bool done = false;
                while (!done) {
                        const uint4 *a = (const uint4 *)(D.anc + (size_t)z * SS__P2P_JUMP);
                        const uint4 x = __ldg(a), y = __ldg(a + 1);
                        const uint32_t v[SS__P2P_JUMP] = {x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w};
#pragma unroll
                        for (int j = 0; j < SS__P2P_JUMP; j++) {
                                if (done)
                                        break;
                                if (v[j] == SS__NO_NODE)
                                        done = true;
                                else if (k < H)
                                        ch[k++] = v[j];
                                else
                                        done = true, k = H + 1;
                        }
                        z = v[SS__P2P_JUMP - 1];
                }
                *len = k <= H ? k : 0;
        }
        ss__p2p_side_sync(side);
        const uint32_t L = *len;
        for (uint32_t i = ts; i < L; i += SS__P2P_SIDE) {
                const uint32_t z = ch[i], a = __ldg(&D.up_first[z]);
                lo[i] = a;
                aoff[i + 1] = __ldg(&D.up_first[z + 1]) - a;
                kk[i] = i == 0 ? 0 : SS__P2P_INF;
        }
        ss__p2p_side_sync(side);
        if (ts < 32) {
                /* aoff: the prefix sums of the degrees, by one warp */
                uint32_t carry = 0;
                if (ts == 0)
                        aoff[0] = 0;
                for (uint32_t b = 0; b < L; b += 32) {
                        uint32_t v = b + ts < L ? aoff[b + ts + 1] : 0;
#pragma unroll
                        for (int d = 1; d < 32; d <<= 1) {
                                const uint32_t u = __shfl_up_sync(0xffffffffu, v, d);
                                if ((int)ts >= d)
                                        v += u;
                        }
                        if (b + ts < L)
                                aoff[b + ts + 1] = v + carry;
                        carry += __shfl_sync(0xffffffffu, v, 31);
                }
        }
        ss__p2p_side_sync(side);
        /* The weights' low words: a 32-bit metric's values, all ones for
         * infinity. */
        const uint32_t *W = (const uint32_t *)(side ? D.w_down : D.w_up);
        const uint32_t round = SS__P2P_SIDE * A;
        unsigned long long t_tile = 0, t_relax = 0, t = 0;
        struct ss__p2p_ahead<A> R;
        uint32_t i0 = 0, i1 = L ? ss__p2p_tile_end<A>(aoff, 0, L) : 0;
        if (L)
                ss__p2p_load(D, W, lo, aoff, 0, i1, 0, ts, R);
        while (i0 < L) {
                if (prof)
                        t = ss__p2p_clock();
                const uint32_t base = aoff[i0], cnt = aoff[i1] - base;
                ss__p2p_store(D, ch, L, 0, cnt, ts, R, wb, pb);
                /* A rank of more edges than a round: the rest in place. */
                for (uint32_t k0 = round; k0 < cnt; k0 += round) {
                        ss__p2p_load(D, W, lo, aoff, i0, i1, k0, ts, R);
                        ss__p2p_store(D, ch, L, k0, cnt, ts, R, wb, pb);
                }
                ss__p2p_side_sync(side);
                const uint32_t i2 = i1 < L ? ss__p2p_tile_end<A>(aoff, i1, L) : L;
                if (i1 < L)
                        ss__p2p_load(D, W, lo, aoff, i1, i2, 0, ts, R);
                if (prof) {
                        const unsigned long long u = ss__p2p_clock();
                        t_tile += u - t;
                        t = u;
                }
                for (uint32_t i = i0; i < i1; i++) {
                        const unsigned long long ki = kk[i];
                        if (ki != SS__P2P_INF) {
                                const unsigned long long di = ki >> (2 * D.bits);
                                const uint32_t o = aoff[i] - base, deg = aoff[i + 1] - aoff[i];
                                /* A / 4 edges a thread at once: a top
                                 * rank's thousands are otherwise a chain
                                 * of dependent shared-memory round trips */
                                constexpr int U = A / 4;
                                for (uint32_t j = ts; j < deg; j += U * SS__P2P_SIDE) {
                                        uint32_t w[U], at[U];
#pragma unroll
                                        for (int u = 0; u < U; u++) {
                                                const uint32_t x = j + u * SS__P2P_SIDE;
                                                w[u] = x < deg ? wb[o + x] : 0xffffffffu;
                                                at[u] = x < deg ? pb[o + x] : 0;
                                        }
#pragma unroll
                                        for (int u = 0; u < U; u++)
                                                if (w[u] != 0xffffffffu)
                                                        atomicMin(&kk[at[u]],
                                                                  (di + w[u]) << (2 * D.bits) |
                                                                      (unsigned long long)i
                                                                          << D.bits |
                                                                      (j + u * SS__P2P_SIDE));
                                }
                        }
                        ss__p2p_side_sync(side);
                }
                if (prof)
                        t_relax += ss__p2p_clock() - t;
                i0 = i1;
                i1 = i2;
        }
        if (prof) {
                prof[0] = t_tile;
                prof[1] = t_relax;
        }
        return L;
}

template <int A>
__global__ void __launch_bounds__(SS__P2P_BLOCK)
    ss__p2p_kernel(const struct ss__p2p_dev D, const uint2 *q, uint2 *lists, uint32_t *paths,
                   uint32_t *plen, unsigned long long *tdist, unsigned long long *prof)
{
        unsigned long long t0 = 0, t1 = 0, t2 = 0;
        uint32_t rounds = 0;
        if (prof)
                t0 = ss__p2p_clock();
        typedef cub::BlockScan<uint32_t, SS__P2P_BLOCK> scan_t;
        __shared__ typename scan_t::TempStorage scan_tmp;
        __shared__ uint32_t len[2], meet, count;
        __shared__ unsigned long long best;
        __shared__ bool over;
        extern __shared__ unsigned long long sh[];
        const uint32_t H = D.hmax, B = D.bits, mask = (1u << B) - 1;
        unsigned long long *key = sh; /* 2H: both chains' */
        uint32_t *chain = (uint32_t *)(key + 2 * H), *lo = chain + 2 * H, *aoff = lo + 2 * H;
        uint32_t *wbuf = aoff + 2 * (H + 1);
        uint16_t *pbuf = (uint16_t *)(wbuf + 2 * SS__P2P_TILE);
        const unsigned r = blockIdx.x, tid = threadIdx.x;
        const uint2 st = q[r];
        {
                const unsigned side = tid / SS__P2P_SIDE, ts = tid % SS__P2P_SIDE;
                ss__p2p_side<A>(D, side, ts, side ? st.y : st.x, H, chain + side * H,
                                key + side * H, lo + side * H, aoff + side * (H + 1),
                                wbuf + side * SS__P2P_TILE, pbuf + side * SS__P2P_TILE, &len[side],
                                prof && tid == 0 ? prof + SS__P2P_PROF * (size_t)r + 5 : NULL);
        }
        if (prof && tid == 0)
                t1 = ss__p2p_clock();
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
                        atomicMin(&best, (kf[i] >> 2 * B) + (kb[j] >> 2 * B));
        }
        __syncthreads();
        for (uint32_t k = tid; k < common; k += SS__P2P_BLOCK) {
                const uint32_t i = lf - 1 - k, j = lb - 1 - k;
                if (cf[i] == cb[j] && kf[i] != SS__P2P_INF && kb[j] != SS__P2P_INF &&
                    (kf[i] >> 2 * B) + (kb[j] >> 2 * B) == best)
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
                for (uint32_t p = pf; p != 0; p = (uint32_t)(kf[p] >> B) & mask)
                        nf++;
                for (uint32_t p = pb; p != 0; p = (uint32_t)(kb[p] >> B) & mask)
                        nb++;
                if (nf + nb > D.room) {
                        over = true;
                } else {
                        uint32_t j = nf;
                        for (uint32_t p = pf; p != 0;) {
                                const uint32_t i = (uint32_t)(kf[p] >> B) & mask;
                                const uint32_t a = lo[i] + ((uint32_t)kf[p] & mask);
                                src[--j] = make_uint2(2 * a, cf[p]);
                                p = i;
                        }
                        j = nf;
                        for (uint32_t p = pb; p != 0;) {
                                const uint32_t i = (uint32_t)(kb[p] >> B) & mask;
                                const uint32_t a = lo[H + i] + ((uint32_t)kb[p] & mask);
                                src[j++] = make_uint2(2 * a + 1, cb[i]);
                                p = i;
                        }
                        count = nf + nb;
                }
        }
        __syncthreads();
        if (prof && tid == 0)
                t2 = ss__p2p_clock();
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
                rounds++;
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
                if (prof) {
                        unsigned long long *pr = prof + SS__P2P_PROF * (size_t)r;
                        pr[0] = t1 - t0; /* the chains */
                        pr[1] = t2 - t1; /* meeting and CCH path */
                        pr[2] = ss__p2p_clock() - t2;
                        pr[3] = rounds;
                        pr[4] = count;
                }
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
                        t = (s & 1) ? make_uint2(2 * ey + 1, 2 * ex)
                                    : make_uint2(2 * ex + 1, 2 * ey);
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
        const uint64_t need = (2 * (uint64_t)arcs + 255) / 256;
        const unsigned blocks = need < 65535 ? (unsigned)need : 65535u;
        ss__p2p_tri_kernel<<<blocks, 256, 0, st>>>(n, arcs, up_first, up_head, mid, tri);
        SS__LAUNCHED("ss__p2p_tri_kernel");
        return SS_OK;
}

/* anc[z * SS__P2P_JUMP + j], the (j + 1)-th ancestor of each rank z (the
 * parent is the head of z's first upward edge), a thread a rank. */
__global__ void ss__p2p_anc_kernel(uint32_t n, const uint32_t *up_first, const uint32_t *up_head,
                                   uint32_t *anc)
{
        for (uint64_t z = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; z < n;
             z += (uint64_t)gridDim.x * blockDim.x) {
                uint32_t x = (uint32_t)z, v[SS__P2P_JUMP];
#pragma unroll
                for (int j = 0; j < SS__P2P_JUMP; j++) {
                        if (x != SS__NO_NODE) {
                                const uint32_t f = up_first[x];
                                x = f < up_first[x + 1] ? up_head[f] : SS__NO_NODE;
                        }
                        v[j] = x;
                }
                uint4 *o = (uint4 *)(anc + z * SS__P2P_JUMP);
                o[0] = make_uint4(v[0], v[1], v[2], v[3]);
                o[1] = make_uint4(v[4], v[5], v[6], v[7]);
        }
}

extern "C" int ss__p2p_anc(uint32_t n, const uint32_t *up_first, const uint32_t *up_head,
                           uint32_t *anc, cudaStream_t st, struct ss_err *err)
{
        if (n == 0)
                return SS_OK;
        const uint64_t need = ((uint64_t)n + 255) / 256;
        const unsigned blocks = need < 65535 ? (unsigned)need : 65535u;
        ss__p2p_anc_kernel<<<blocks, 256, 0, st>>>(n, up_first, up_head, anc);
        SS__LAUNCHED("ss__p2p_anc_kernel");
        return SS_OK;
}

/* hop[a] = depth[x] - depth[y] of each upward edge a = x -> y: a warp a
 * rank, its lanes over the rank's list (the top ranks have thousands). */
__global__ void ss__p2p_hops_kernel(uint32_t n, const uint32_t *up_first, const uint32_t *up_head,
                                    const uint32_t *depth, uint16_t *hop)
{
        const unsigned lane = threadIdx.x & 31;
        const uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
        for (uint64_t x = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; x < n;
             x += warps) {
                const uint32_t dx = depth[x], a1 = up_first[x + 1];
                for (uint32_t a = up_first[x] + lane; a < a1; a += 32)
                        hop[a] = (uint16_t)(dx - depth[up_head[a]]);
        }
}

extern "C" int ss__p2p_hops(uint32_t n, const uint32_t *up_first, const uint32_t *up_head,
                            const uint32_t *depth, uint16_t *hop, cudaStream_t st,
                            struct ss_err *err)
{
        if (n == 0)
                return SS_OK;
        const uint64_t need = ((uint64_t)n * 32 + 255) / 256;
        const unsigned blocks = need < 65535 ? (unsigned)need : 65535u;
        ss__p2p_hops_kernel<<<blocks, 256, 0, st>>>(n, up_first, up_head, depth, hop);
        SS__LAUNCHED("ss__p2p_hops_kernel");
        return SS_OK;
}

/* The dynamic shared memory a block of the current device may ask for. */
static int ss__p2p_room(size_t *room, struct ss_err *err)
{
        int dev, optin;
        cudaFuncAttributes fa;
        SS__CUDA(cudaGetDevice(&dev));
        SS__CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        /* the same static shared memory in every instantiation */
        SS__CUDA(cudaFuncGetAttributes(&fa, ss__p2p_kernel<SS__P2P_AHEAD>));
        *room = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
        return SS_OK;
}

extern "C" int ss__p2p_limit(uint32_t *hmax, struct ss_err *err)
{
        size_t room = 0;
        int rc = ss__p2p_room(&room, err);
        if (rc != SS_OK)
                return rc;
        const size_t fixed = ss__p2p_shared(0);
        const size_t h = room > fixed ? (room - fixed) / 40 : 0;
        *hmax = h < SS__P2P_HMAX ? (uint32_t)h : SS__P2P_HMAX;
        return SS_OK;
}

extern "C" int ss__p2p(const struct ss__p2p_dev *d, const uint2 *q, unsigned nr, uint2 *lists,
                       uint32_t *paths, uint32_t *plen, unsigned long long *tdist,
                       unsigned long long *prof, cudaStream_t st, struct ss_err *err)
{
        if (nr == 0)
                return SS_OK;
        const size_t shared = ss__p2p_shared(d->hmax);
        /* All the device allows, always the same value: handles of
         * different heights on one device must not undo each other's. */
        size_t room = 0;
        int rc = ss__p2p_room(&room, err);
        if (rc != SS_OK)
                return rc;
        /* SS__P2P_AHEAD, or a round of 8 edges a thread to compare */
        if (d->ahead == 8) {
                SS__CUDA(cudaFuncSetAttribute(
                    ss__p2p_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)room));
                ss__p2p_kernel<8>
                    <<<nr, SS__P2P_BLOCK, shared, st>>>(*d, q, lists, paths, plen, tdist, prof);
        } else {
                SS__CUDA(cudaFuncSetAttribute(ss__p2p_kernel<SS__P2P_AHEAD>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)room));
                ss__p2p_kernel<SS__P2P_AHEAD>
                    <<<nr, SS__P2P_BLOCK, shared, st>>>(*d, q, lists, paths, plen, tdist, prof);
        }
        SS__LAUNCHED("ss__p2p_kernel");
        return SS_OK;
}
