/* Walking a route's path back from its target over the reverse graph, for
 * the searches that leave distances on the device (batch.cu, phast.cu).
 *
 * Why a template: the batched search keeps a source's distances as a row
 * (dist[s * n + v]) and the CCH sweep by rank (d[rank[v] * k + s]); the walk
 * is the same, and the accessor inlines. */
#ifndef SS_WALK_CUH
#define SS_WALK_CUH

#include <stdint.h>

#include "kernels/kernels.h"

#define SS__WALK_INF 0xffffffffffffffffull

/* The distances of one source, as a row of n. */
struct ss__dist_row {
        const unsigned long long *d;
        uint64_t base;
        __device__ unsigned long long operator()(uint32_t v) const
        {
                return d[base + v];
        }
};

/* The distances of source slot s of a sweep of k, by rank. */
struct ss__dist_ranked {
        const unsigned long long *d;
        const uint32_t *rank;
        unsigned k, s;
        __device__ unsigned long long operator()(uint32_t v) const
        {
                return d[(uint64_t)rank[v] * k + s];
        }
};

/* Writes the path from t back to `from` into o (target first, at most per
 * nodes), taking at each node an in-arc (rarcs: x tail, y weight) whose
 * tail's distance plus its weight is the node's. An arc of positive weight
 * is taken first: zero-weight arcs can form cycles of equal distances, which
 * a walk would go round until its room is full. dist(t) must be finite.
 * Returns the length, SS__WALK_LONG or SS__WALK_BROKEN. */
template <typename Dist>
static __device__ uint32_t ss__walk_back(const Dist &dist, const uint32_t *rrow, const uint2 *rarcs,
                                         uint32_t from, uint32_t t, uint32_t *o, uint32_t per)
{
        uint32_t len = 0, v = t;
        unsigned long long dv = dist(t);
        for (;;) {
                if (len >= per)
                        return SS__WALK_LONG;
                o[len++] = v;
                if (v == from)
                        return len;
                uint32_t best = SS__NO_NODE;
                unsigned long long dbest = 0;
                const uint32_t end = rrow[v + 1];
                for (uint32_t a = rrow[v]; a < end; a++) {
                        const uint2 arc = rarcs[a];
                        if (arc.x == v)
                                continue;
                        const unsigned long long du = dist(arc.x);
                        if (du == SS__WALK_INF || du + arc.y != dv)
                                continue;
                        best = arc.x;
                        dbest = du;
                        if (arc.y > 0)
                                break;
                }
                if (best == SS__NO_NODE)
                        return SS__WALK_BROKEN;
                v = best;
                dv = dbest;
        }
}

#endif
