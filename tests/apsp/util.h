/* Helpers shared by the all-pairs tests (CPU, emulated device, GPU) and
 * apsp-bench: graphs with the awkward cases, and exact checks of a matrix
 * against the CPU Dijkstra and against another matrix. None of them uses
 * Check, so the benchmark links them too; each returns a count of
 * mismatches and describes the first one in `why`. */
#ifndef SS_TEST_APSP_UTIL_H
#define SS_TEST_APSP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apsp/apsp.h"
#include "core/graph.h"

/* A graph from an arc list {tail, head, weight} (0-based); NULL on failure. */
struct ss_graph *ta_graph(uint32_t n, const uint32_t (*arcs)[3], size_t m);

/* Kinds of arcs ta_random() adds beyond its backbone. */
enum {
        TA_ZERO = 1,   /* some zero weights, and zero-weight cycles */
        TA_ISLAND = 2, /* the last tenth of the nodes cannot reach or be reached from the rest */
        TA_LOOPS = 4,  /* self-loops and parallel arcs */
        TA_ONEWAY = 8  /* no backbone back-arcs: many pairs unreachable one way */
};

/* A sparse random graph of n nodes: a two-way path as backbone (unless
 * TA_ONEWAY), `extra` random arcs per node, weights in [1, maxw] (and 0 with
 * TA_ZERO). */
struct ss_graph *ta_random(uint32_t n, uint32_t extra, uint32_t maxw, uint64_t seed,
                           unsigned kinds);

/* A dense random digraph: each ordered pair is an arc with probability
 * density, weights uniform in [1, maxw]. Generated with geometric skips, so
 * the cost follows the arcs, not n^2. */
struct ss_graph *ta_dense(uint32_t n, double density, uint32_t maxw, uint64_t seed);

/* Every distance from every step-th source (and the last) against the CPU
 * Dijkstra, on `threads` threads. */
uint64_t ta_check_dijkstra(const struct ss_graph *g, const struct ss_apsp *a, uint32_t step,
                           unsigned threads, char *why, size_t len);

/* The successor matrix of every step-th source: each successor is an arc
 * whose weight plus the successor's distance is the distance; and towards
 * every step-th target the successors form no cycle, so every path ends at
 * its target with the right length. */
uint64_t ta_check_succ(const struct ss_graph *g, const struct ss_apsp *a, uint32_t step, char *why,
                       size_t len);

/* Two matrices of the same graph, entry by entry: distances, and successors
 * when `succ` is set. */
uint64_t ta_compare(const struct ss_apsp *x, const struct ss_apsp *y, bool succ, char *why,
                    size_t len);

/* The path of a data file under SS_DATA_DIR (tests/data by default; see
 * tests/data.h), or NULL when it is not readable. The result lives until the
 * next call. */
const char *ta_data(const char *rel);

#endif
