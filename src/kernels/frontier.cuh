/* Device helpers shared by the frontier-driven kernels: queue pushes with one
 * atomic per warp, and warp-cooperative expansion of a chunk of frontier
 * vertices' arcs.
 *
 * Why warp-cooperative expansion: a thread per vertex leaves lanes idle when
 * degrees differ (most road vertices have 2-4 arcs, a few have 8+; RMAT
 * graphs have hubs with thousands). Here each warp takes 32 frontier vertices,
 * prefix-sums their arc counts, and then walks the concatenated arc list 32
 * arcs at a time, each lane finding its arc's owner by a binary search over
 * the warp's prefix sums (five shuffles). Every lane does useful work on every
 * step whatever the degrees, and a hub's arcs are spread over the warp.
 */
#ifndef SS_FRONTIER_CUH
#define SS_FRONTIER_CUH

#include <cooperative_groups.h>
#include <stdint.h>

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

/* Warp-cooperative expansion. Every lane of the warp must call it (uniform
 * control flow); lane i brings one vertex's arc range [begin, end) and its
 * distance (an empty range for lanes without a vertex). visit(head, nd) is
 * called once per arc with nd = dist + weight. */
template <class Visit>
static __device__ __forceinline__ void
ss__warp_expand(const uint2 *arcs, uint32_t begin, uint32_t end, unsigned long long d, Visit visit)
{
        const int lane = threadIdx.x & 31;
        uint32_t deg = end - begin;
        uint32_t incl = deg;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
                uint32_t t = __shfl_up_sync(SS__FULL, incl, o);
                if (lane >= o)
                        incl += t;
        }
        const uint32_t total = __shfl_sync(SS__FULL, incl, 31);
        for (uint32_t base = 0; base < total; base += 32) {
                const uint32_t e = base + lane;
                /* Owner: the first lane whose inclusive sum exceeds e. */
                int lo = 0;
#pragma unroll
                for (int step = 16; step >= 1; step >>= 1) {
                        uint32_t s = __shfl_sync(SS__FULL, incl, lo + step - 1);
                        if (s <= e)
                                lo += step;
                }
                const uint32_t o_incl = __shfl_sync(SS__FULL, incl, lo);
                const uint32_t o_deg = __shfl_sync(SS__FULL, deg, lo);
                const uint32_t o_begin = __shfl_sync(SS__FULL, begin, lo);
                const unsigned long long o_d = __shfl_sync(SS__FULL, d, lo);
                if (e < total) {
                        const uint2 a = __ldg(&arcs[o_begin + (e - (o_incl - o_deg))]);
                        visit(a.x, o_d + a.y);
                }
        }
}

#endif
