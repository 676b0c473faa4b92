/* Graphs and references for the live-weights tests: a grid with
 * coordinates and parallel arcs, independent copies with other weights, and
 * random changes with the weights they should leave. */
#ifndef SS_TESTS_WEIGHTS_UTIL_H
#define SS_TESTS_WEIGHTS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

/* A small xorshift generator, one state per caller. */
static inline uint64_t wu_rand(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* A w x h grid, arcs both ways between neighbours (weights 10..109), and a
 * second, heavier arc beside every 7th one (parallel arcs); coordinates
 * 10 units apart. Strongly connected. */
struct ss_graph *wu_grid(uint32_t w, uint32_t h, uint64_t seed);

/* A copy of g (own arrays, same CSR order, coordinates) with weights w. */
struct ss_graph *wu_copy(const struct ss_graph *g, const uint32_t *w);

/* k random changes of g's arcs: mode > 0 raises weights, < 0 lowers them,
 * 0 does either (with a few weights of 0 and of 2^32 - 1). */
struct ss_weight_change *wu_changes(const struct ss_graph *g, size_t k, int mode, uint64_t *seed);

/* What the changes do to weights w (CSR order of g): every arc between the
 * ends, the last change winning. */
void wu_apply(const struct ss_graph *g, uint32_t *w, const struct ss_weight_change *c, size_t n);

/* g written as a snapshot (with what it carries: a CCH, its metric) to a
 * temporary file and read back. */
struct ss_graph *wu_snapshot(const struct ss_graph *g);

/* The distance from s to t in g by Dijkstra. */
ss_dist wu_dist(const struct ss_graph *g, uint32_t s, uint32_t t);

/* Whether path (len nodes) goes from s to t over arcs of g and its length
 * (the cheapest arc between each pair) is d. */
bool wu_path_ok(const struct ss_graph *g, const uint32_t *path, size_t len, uint32_t s, uint32_t t,
                ss_dist d);

#endif
