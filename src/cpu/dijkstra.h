/* CPU Dijkstra: the reference every GPU algorithm is checked against, and the
 * engine's fallback.
 *
 * A workspace belongs to one thread and is reused across queries. It holds
 * distance, predecessor and stamp arrays of N entries, allocated once, and a
 * radix heap whose buckets only grow. Instead of clearing them per query, each entry carries the
 * number of the query that last wrote it (a generation stamp): an entry with an old stamp reads as
 * "unreached". A query therefore costs time proportional to the nodes it touches, not to N.
 */
#ifndef SS_DIJKSTRA_H
#define SS_DIJKSTRA_H

#include <stddef.h>
#include <stdint.h>

#include "core/cancel.h"
#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ss_dijkstra_ws;

/* Allocates a workspace for graphs of up to n nodes; NULL when out of memory. */
struct ss_dijkstra_ws *ss_dijkstra_ws_new(uint32_t n);
/* Frees a workspace (NULL is ignored). */
void ss_dijkstra_ws_free(struct ss_dijkstra_ws *ws);
/* Returns the node capacity the workspace was made for. */
uint32_t ss_dijkstra_ws_capacity(const struct ss_dijkstra_ws *ws);

/* Runs Dijkstra from source. With target != SS_NO_NODE it stops as soon as
 * target is settled; otherwise it settles every reachable node. Returns
 * SS_OK, SS_ERANGE (a node out of range or a workspace too small),
 * SS_ENOMEM (the heap could not grow) or SS_ETIMEDOUT when cancel fired (the
 * workspace then holds a partial run). */
int ss_dijkstra_run(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                    uint32_t target, const struct ss_cancel *cancel);

/* Point-to-point A*: like ss_dijkstra_run(g, ws, source, target, cancel) but
 * guided towards target by the bounds attached to g (cpu/astar.h: the larger
 * of the coordinate bound and the landmark bound). Distances and paths are exact; it
 * settles fewer nodes, and only the distances of settled nodes (among them
 * target) are meaningful afterwards. Without a bound it is plain Dijkstra.
 * Same return codes. */
int ss_astar_run(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                 uint32_t target, const struct ss_cancel *cancel);

/* Like ss_dijkstra_run() but stops once every node in targets is settled (or
 * the reachable part is exhausted). Duplicates in targets are allowed. */
int ss_dijkstra_run_targets(const struct ss_graph *g, struct ss_dijkstra_ws *ws, uint32_t source,
                            const uint32_t *targets, size_t ntargets,
                            const struct ss_cancel *cancel);

/* Distance of v in the last run: exact if v was settled, SS_DIST_INF if v was
 * not reached. (After an early stop, nodes not settled may read as INF.) */
ss_dist ss_dijkstra_dist(const struct ss_dijkstra_ws *ws, uint32_t v);

/* Predecessor of v on the shortest path of the last run; SS_NO_NODE for the
 * source and for nodes not reached. */
uint32_t ss_dijkstra_pred(const struct ss_dijkstra_ws *ws, uint32_t v);

/* Number of nodes settled in the last run, and the settled nodes in the order
 * they were settled (valid until the next run). */
size_t ss_dijkstra_settled_count(const struct ss_dijkstra_ws *ws);
const uint32_t *ss_dijkstra_settled(const struct ss_dijkstra_ws *ws);

/* Writes the path source..target of the last run into out (cap entries) and
 * returns its length in nodes; 0 when target was not reached. When cap is too
 * small nothing is written and the needed length is returned. */
size_t ss_dijkstra_path(const struct ss_dijkstra_ws *ws, uint32_t target, uint32_t *out,
                        size_t cap);

/* The challenge's checksum of the last one-to-all run: the sum of the
 * distances of all settled nodes, modulo 2^62. */
uint64_t ss_dijkstra_checksum(const struct ss_dijkstra_ws *ws);

#ifdef __cplusplus
}
#endif

#endif
