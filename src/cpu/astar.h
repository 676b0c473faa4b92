/* The lower bounds A* needs, derived from a graph and attached to it.
 *
 * Two consistent bounds on d(v, t), of which A* takes the larger:
 *  - the coordinate bound h(v) = floor(factor * |(kx * dx, dy)|), where
 *    factor is the smallest weight per coordinate unit over all arcs,
 *    shrunk enough to absorb floating-point rounding (astar.c) and capped so
 *    that h stays below 2^62; 0 when the graph has no coordinates or some
 *    arc of weight 0 joins distinct points;
 *  - the landmark (ALT) bound of cpu/landmarks.h, when landmarks are built.
 *
 * The bounds live in the graph's SS_GRAPH_EXT_ASTAR slot, so that every
 * query bound to a graph sees the bounds of that graph and no other. They
 * are made before the graph is shared and never change afterwards. A graph
 * with new weights (ss_graph_reweighted) gets its own, from the old ones
 * (ss_astar_reweight).
 */
#ifndef SS_CPU_ASTAR_H
#define SS_CPU_ASTAR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic_compat.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SS_LANDMARKS_MAX 64

/* Landmark distance tables (built by cpu/landmarks.h). */
struct ss_landmarks {
        unsigned k;
        uint32_t node[SS_LANDMARKS_MAX]; /* the landmarks (0-based ids) */
        uint32_t *from;                  /* d(L_i, v) at from[v * k + i] */
        uint32_t *to;                    /* d(v, L_i) at to[v * k + i] */
        /* Graphs sharing the tables besides the first (graphs with new
         * weights that only went up keep them): the last holder frees them. */
        ss_atomic_uint holders;
};

struct ss_astar {
        double factor;           /* coordinate bound per unit of distance; 0 for none */
        double kx;               /* longitude scale (cosine of the mean latitude) */
        double raw;              /* smallest weight per unit over all arcs, before rounding slack */
        double span;             /* the coordinates' diameter (scaled) */
        double dmin;             /* the shortest arc between distinct points (scaled) */
        struct ss_landmarks *lm; /* NULL until landmarks are built */
};

/* The bounds attached to g, or NULL when ss_astar_prepare() was not called. */
static inline const struct ss_astar *ss_astar_of(const struct ss_graph *g)
{
        return (const struct ss_astar *)g->ext[SS_GRAPH_EXT_ASTAR].data;
}

/* Whether A* on g has any bound to use (else it is plain Dijkstra). */
static inline bool ss_astar_useful(const struct ss_graph *g)
{
        const struct ss_astar *a = ss_astar_of(g);
        return a && (a->factor > 0 || a->lm);
}

/* Computes the coordinate bound and attaches it to g (keeping landmarks
 * already attached). Call it before g is shared. Returns SS_OK or SS_ENOMEM. */
int ss_astar_prepare(struct ss_graph *g, struct ss_err *err);

/* Bounds for g2, a graph with g's topology whose weights differ from g's on
 * the k arcs of changed (strictly ascending CSR indices; tails[i] is the
 * tail of changed[i], or tails is NULL to look them up): the coordinate
 * bound for g2's weights (exactly as ss_astar_prepare would compute it, from
 * the changed arcs alone unless an arc that bounded it went up, when all
 * arcs are read again), and g's landmarks, shared, when no weight went down
 * (*kept_landmarks; otherwise g2 has none). Nothing when g has no bounds.
 * Call it before g2 is shared. Returns SS_OK or SS_ENOMEM. */
int ss_astar_reweight(struct ss_graph *g2, const struct ss_graph *g, const uint64_t *changed,
                      const uint32_t *tails, size_t k, bool *kept_landmarks, struct ss_err *err);

/* Drops a hold on landmark tables, freeing them with the last (NULL is
 * ignored). */
void ss_landmarks_free(struct ss_landmarks *lm);
/* Another hold on lm, for a second graph; returns lm. */
struct ss_landmarks *ss_landmarks_share(struct ss_landmarks *lm);

#ifdef __cplusplus
}
#endif

#endif
