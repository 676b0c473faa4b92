/* The Boost Graph Library as an outside reference for ssspd-bench.
 *
 * The implementation is C++ (boost_ref.cpp); this header is plain C that a
 * C++ compiler also accepts, so it takes the CSR arrays themselves rather
 * than struct ss_graph (whose header uses C11 atomics). The Boost graph is
 * built once per graph, outside the timed region; each query then runs one
 * Boost algorithm from one source into distance and predecessor arrays that
 * are reused across queries.
 */
#ifndef SS_BENCH_BOOST_REF_H
#define SS_BENCH_BOOST_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ss__bref;

/* Builds Boost's compressed_sparse_row_graph from our CSR (row has n + 1
 * entries; col and w have m). The arrays are copied, not kept. Returns NULL
 * when out of memory or when m does not fit Boost's 32-bit edge index, with
 * a message in why (why_len bytes). */
struct ss__bref *ss__bref_new(uint32_t n, uint64_t m, const uint64_t *row, const uint32_t *col,
                              const uint32_t *w, char *why, size_t why_len);

/* Frees everything ss__bref_new() allocated (NULL is ignored). */
void ss__bref_free(struct ss__bref *b);

/* Runs boost::dijkstra_shortest_paths from source (0-based). Returns 0, or
 * -1 with a message in why when source is out of range or Boost threw. */
int ss__bref_dijkstra(struct ss__bref *b, uint32_t source, char *why, size_t why_len);

/* Runs boost::bellman_ford_shortest_paths from source. When deadline_ns
 * (CLOCK_MONOTONIC) is not 0 and passes, the run is abandoned and 1 is
 * returned. Returns 0 on success, 1 on timeout, -1 with a message in why on
 * failure. */
int ss__bref_bellman_ford(struct ss__bref *b, uint32_t source, uint64_t deadline_ns, char *why,
                          size_t why_len);

/* Distances of the last run, n entries; UINT64_MAX marks unreachable nodes.
 * Never NULL for a valid b. */
const uint64_t *ss__bref_dist(const struct ss__bref *b);

/* Bytes held by the Boost graph and the reused result arrays. */
uint64_t ss__bref_bytes(const struct ss__bref *b);

#ifdef __cplusplus
}
#endif

#endif
