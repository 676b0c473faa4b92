/* Landmarks for A* (ALT: A*, landmarks and the triangle inequality;
 * Goldberg and Harrelson, 2005).
 *
 * For a few landmark nodes L the engine stores d(L, v) and d(v, L) for every
 * node v. By the triangle inequality, for any target t
 *     d(v, t) >= d(L, t) - d(L, v)   and   d(v, t) >= d(v, L) - d(t, L),
 * and the largest of these bounds over the landmarks is a consistent A*
 * heuristic: exact answers, and on road networks far fewer settled nodes
 * than the coordinate bound gives. The tables cost 8 bytes per node per
 * landmark and 2k one-to-all searches at load time, run in parallel.
 *
 * Only graphs where every landmark reaches every node and back, with every
 * such distance below 2^32, get landmarks (the DIMACS road graphs do): then
 * every term is defined for every node and the bound stays consistent.
 */
#ifndef SS_LANDMARKS_H
#define SS_LANDMARKS_H

#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"
#include "cpu/astar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Chooses k landmarks (1..SS_LANDMARKS_MAX; spread around the centre when g
 * has coordinates, else spread by id), computes their tables with up to
 * `threads` threads and attaches them to g's A* bounds (ss_astar_of(g)->lm,
 * preparing the bounds first when needed). Call it before g is shared with
 * other threads. Returns SS_OK; SS_EINVAL (no landmarks attached, err says why: a node a landmark
 * cannot reach or be reached from, or a distance of 2^32 or more); SS_ENOMEM. */
int ss_landmarks_build(struct ss_graph *g, unsigned k, unsigned threads, struct ss_err *err);

/* Fills the tables of k landmarks (layout as struct ss_landmarks) some other
 * way, e.g. batched on a GPU. Returns SS_OK; SS_EINVAL with *bad_node set
 * when a node is unreachable from or to a landmark or 2^32 away (the
 * builder then gives up as it would itself); any other error makes the
 * builder compute the tables on the CPU instead. */
typedef int (*ss_landmark_tables_fn)(void *arg, const struct ss_graph *g, const uint32_t *nodes,
                                     unsigned k, uint32_t *from, uint32_t *to, uint32_t *bad_node,
                                     struct ss_err *err);

/* ss_landmarks_build() with the tables from fn(arg, ...) when fn is not
 * NULL. */
int ss_landmarks_build_with(struct ss_graph *g, unsigned k, unsigned threads,
                            ss_landmark_tables_fn fn, void *arg, struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif
