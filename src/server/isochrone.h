/* GET /isochrone: the nodes within a distance of a start. The engine runs
 * it as a bounded one-to-all (SS_JOB_ONE_TO_ALL with bounded set: the CPU
 * Dijkstra settles the nodes within the bound and stops); this renders the
 * finished job on the worker thread. */
#ifndef SS_SERVER_ISOCHRONE_H
#define SS_SERVER_ISOCHRONE_H

#include "engine/engine.h"
#include "server/json_out.h"
#include "server/query.h"

/* The answer: code, from, max, count, nodes (ids in increasing order) and
 * their distances, the snapped start, the geometry asked for (a GeoJSON
 * Feature: MultiPoint of the nodes, or Polygon of their convex hull) and
 * what ran. Returns SS_OK or SS_ENOMEM. */
int ss_isochrone_body(const struct ss_query *q, struct ss_job *job, struct ss_body *out);

#endif
