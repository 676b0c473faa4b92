/* Device helpers shared by the frontier-driven kernels: queue pushes with one
 * atomic per warp, a warp prefix sum, and warp-cooperative loading of a chunk
 * of frontier vertices' arcs.
 *
 * Why warp-cooperative loading: a thread per vertex leaves lanes idle when
 * degrees differ (most road vertices have 2-4 arcs, a few have 8+; RMAT
 * graphs have hubs with thousands). Here a warp's frontier vertices (one per
 * lane) prefix-sum their arc counts, and the warp walks the concatenated arc
 * list, each lane finding its arc's owner by a binary search over the warp's
 * prefix sums (five shuffles). Every lane does useful work on every step
 * whatever the degrees, and a hub's arcs are spread over the warp.
 */
#ifndef SS_FRONTIER_CUH
#define SS_FRONTIER_CUH

#include <cooperative_groups.h>
#include <stdint.h>

#include "kernels/kernels.h"

namespace cg = cooperative_groups;

#define SS__FULL 0xffffffffu
#define SS__INF  0xffffffffffffffffull

/* Appends v to queue[*count]; lanes that push together share one atomic. */
static __device__ __forceinline__ void ss__push(uint32_t *queue, unsigned int *count, uint32_t v)
{
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned int base = 0;
        if (g.thread_rank() == 0)
                base = atomicAdd(count, g.size());
        base = g.shfl(base, 0);
        queue[base + g.thread_rank()] = v;
}

/* Reads a value other blocks write, bypassing the non-coherent L1. */
static __device__ __forceinline__ unsigned long long ss__ld(const unsigned long long *p)
{
        return __ldcg(p);
}
static __device__ __forceinline__ unsigned int ss__ld(const unsigned int *p)
{
        return __ldcg(p);
}

/* How a round of a Bellman-Ford-style kernel (bf.cu and the family) starts. */
enum { SS__ROUND_RUN, SS__ROUND_DONE, SS__ROUND_CANCELLED };

/* The start of round r, which every thread takes alike: the round's slots
 * (counter, minimum set, cancel flag: index r % 3, written in round r - 1,
 * read after the grid barrier) say whether to stop, because the host raised
 * the cancel flag, nothing changed in round r - 1, or the target is final
 * (nothing set after round r - 1 is below that round's minimum). When the
 * round runs, thread 0 clears the slots of round r + 2, which nobody reads
 * or writes in round r, and copies the host's cancel flag for round r + 1.
 * *count gets round r's counter. */
static __device__ __forceinline__ int ss__round_begin(ss__ctl *c, uint32_t r,
                                                      const unsigned long long *dist,
                                                      uint32_t target, const volatile int *cancel,
                                                      uint64_t tid, uint32_t *count)
{
        *count = ss__ld(&c->qcnt[r % 3]);
        if (ss__ld(&c->cflag[r % 3]))
                return SS__ROUND_CANCELLED;
        if (*count == 0)
                return SS__ROUND_DONE;
        if (target != SS__NO_NODE && ss__ld(&c->rmin[r % 3]) > ss__ld(&dist[target]))
                return SS__ROUND_DONE;
        if (tid == 0) {
                c->qcnt[(r + 2) % 3] = 0;
                c->rmin[(r + 2) % 3] = SS__INF;
                c->cflag[(r + 1) % 3] = cancel ? (*cancel != 0) : 0;
        }
        return SS__ROUND_RUN;
}

/* Lowers *bound to the smallest x of the warp's lanes with one atomic for
 * the warp, and none when *bound is already at most that: a far pile's
 * lower bound takes an update from nearly every far push, and thousands
 * of atomics on one address in a phase would queue behind each other. Every
 * lane calls it; lanes without a value pass SS__INF. */
static __device__ __forceinline__ void ss__warp_min_to(unsigned long long *bound,
                                                       unsigned long long x)
{
#pragma unroll
        for (int o = 16; o >= 1; o >>= 1) {
                const unsigned long long y = __shfl_xor_sync(SS__FULL, x, o);
                x = y < x ? y : x;
        }
        if ((threadIdx.x & 31) == 0 && x != SS__INF && x < __ldcg(bound))
                atomicMin(bound, x);
}

/* Inclusive prefix sum of x over the warp (every lane calls it). */
static __device__ __forceinline__ uint32_t ss__warp_scan(uint32_t x)
{
        const int lane = threadIdx.x & 31;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
                const uint32_t t = __shfl_up_sync(SS__FULL, x, o);
                if (lane >= o)
                        x += t;
        }
        return x;
}

/* Warp-cooperative arc loading. Lane i brings one vertex's arc range
 * [begin, end), its distance d and incl = ss__warp_scan(end - begin); the
 * warp's arcs, concatenated, number total (lane 31's incl). Loads arcs
 * base + 32*j + lane for j < B: head[j] and nd[j] = d(owner) + weight, ok[j]
 * false past the end, and owner[j] the lane that brought the arc's vertex.
 * The B loads are issued together. Every lane calls it with the same base
 * and total (uniform control flow). */
template <int B>
static __device__ __forceinline__ void
ss__warp_arcs(const uint2 *arcs, uint32_t begin, uint32_t end, unsigned long long d, uint32_t incl,
              uint32_t total, uint32_t base, uint32_t *head, unsigned long long *nd, bool *ok,
              int *owner)
{
        const int lane = threadIdx.x & 31;
        const uint32_t deg = end - begin;
#pragma unroll
        for (int j = 0; j < B; j++) {
                ok[j] = false;
                head[j] = 0;
                nd[j] = 0;
                owner[j] = 0;
                if (base + 32 * j >= total) /* the same for every lane */
                        continue;
                const uint32_t e = base + 32 * j + lane;
                /* Owner: the first lane whose inclusive sum exceeds e. */
                int lo = 0;
#pragma unroll
                for (int step = 16; step >= 1; step >>= 1) {
                        const uint32_t sum = __shfl_sync(SS__FULL, incl, lo + step - 1);
                        if (sum <= e)
                                lo += step;
                }
                owner[j] = lo;
                const uint32_t o_incl = __shfl_sync(SS__FULL, incl, lo);
                const uint32_t o_deg = __shfl_sync(SS__FULL, deg, lo);
                const uint32_t o_begin = __shfl_sync(SS__FULL, begin, lo);
                const unsigned long long o_d = __shfl_sync(SS__FULL, d, lo);
                if (e < total) {
                        const uint2 a = __ldg(&arcs[o_begin + (e - (o_incl - o_deg))]);
                        head[j] = a.x;
                        nd[j] = o_d + a.y;
                        ok[j] = true;
                }
        }
}

#endif
