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
 * other threads. Returns SS_OK; SS_EINVAL (no landmarks attached, err says why: a node a landmark cannot reach or be reached from, or
 * a distance of 2^32 or more); SS_ENOMEM. */
int ss_landmarks_build(struct ss_graph *g, unsigned k, unsigned threads, struct ss_err *err);


#ifdef __cplusplus
}
#endif

#endif
