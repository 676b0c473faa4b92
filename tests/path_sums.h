/* Whether a path is made of existing arcs adding up to its distance: the
 * check every test and tool applies to the routes it is given. */
#ifndef SS_TESTS_PATH_SUMS_H
#define SS_TESTS_PATH_SUMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

/* p[0..len) runs from s to t over arcs of g (the lightest of parallel ones)
 * whose weights add up to d. */
static inline bool ss_path_sums(const struct ss_graph *g, const uint32_t *p, size_t len, uint32_t s,
                                uint32_t t, ss_dist d)
{
        if (!p || len == 0 || p[0] != s || p[len - 1] != t)
                return false;
        ss_dist sum = 0;
        for (size_t i = 0; i + 1 < len; i++) {
                ss_dist best = SS_DIST_INF;
                for (uint64_t a = g->row[p[i]]; a < g->row[p[i] + 1]; a++)
                        if (g->col[a] == p[i + 1] && g->w[a] < best)
                                best = g->w[a];
                if (best == SS_DIST_INF)
                        return false;
                sum += best;
        }
        return sum == d;
}

#endif
