/* What the CCH tests share: graph builders, the Dijkstra reference and the
 * checks of distances, paths and matrices against it. Each helper aborts the
 * test (Check) on failure. */
#ifndef SS_TEST_CCH_UTIL_H
#define SS_TEST_CCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "cch/cch.h"
#include "core/graph.h"

/* An assertion for tight loops: Check's ck_assert reports every passing
 * check to the parent process, which costs a system call each time. */
#define CU_CHECK(cond, ...)                                                                        \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        ck_abort_msg(__VA_ARGS__);                                                 \
        } while (0)

/* What a random graph may contain. */
struct cu_shape {
        uint32_t n;
        uint32_t arcs;     /* random arcs */
        uint32_t max_w;    /* weights in 0..max_w (or near UINT32_MAX with huge) */
        unsigned zero_pct; /* share of zero weights, in percent */
        bool symmetric;    /* every arc also backwards (with its own weight) */
        bool parallel;     /* some arcs repeated with other weights */
        bool loops;        /* some self-loops */
        bool coords;       /* coordinates on a jittered grid */
        bool huge;         /* weights near UINT32_MAX */
        bool local;        /* heads near tails (road-like), else anywhere */
};

/* A random graph of that shape; the same seed gives the same graph. */
struct ss_graph *cu_random_graph(const struct cu_shape *sh, uint64_t seed);

/* A graph from text "n; u v w; u v w; ..." (1-based ids), without coordinates. */
struct ss_graph *cu_graph_text(const char *text);

/* g's structure with other weights w[g->m] (copied). */
struct ss_graph *cu_graph_reweighted(const struct ss_graph *g, const uint32_t *w);

/* A CCH of g and a metric for w (NULL: g's weights). */
struct ss_cch *cu_build(const struct ss_graph *g, unsigned threads, bool bfs_keys);
struct ss_cch_metric *cu_customize(const struct ss_cch *c, const struct ss_graph *g,
                                   const uint32_t *w, unsigned threads);

/* Checks, for sources (all nodes when count is 0, else count random ones
 * drawn with seed): CCH distances to every node by one-to-all, and to every
 * p2p_every-th by a point-to-point query, against Dijkstra on g; and the
 * paths to every path_every-th (0: none). Returns the pairs checked. */
uint64_t cu_check_against_dijkstra(const struct ss_graph *g, const struct ss_cch_metric *m,
                                   uint32_t count, uint64_t seed, uint32_t p2p_every,
                                   uint32_t path_every);

/* Checks an ns x nt matrix of random nodes against Dijkstra. */
void cu_check_matrix(const struct ss_graph *g, const struct ss_cch_metric *m, uint32_t ns,
                     uint32_t nt, uint64_t seed);

/* Checks that path[0..len) is a path s..t of g whose arcs add up to d. */
void cu_check_path(const struct ss_graph *g, const uint32_t *path, size_t len, uint32_t s,
                   uint32_t t, ss_dist d);

uint64_t cu_rand(uint64_t *state);

#endif
