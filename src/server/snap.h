/* Points given instead of node ids (from_lonlat, to_lonlat): how they are
 * placed on the graph (the nearest node, by the graph's spatial index,
 * geo/geo.h) and how answers report them. Pure functions, any thread. */
#ifndef SS_SERVER_SNAP_H
#define SS_SERVER_SNAP_H

#include <jansson.h>

#include "core/graph.h"
#include "server/query.h"

/* ss_query_snap()'s nearest function; graph is the struct ss_graph. */
void ss_snap_nearest(const void *graph, double lon, double lat, uint32_t *node, double *metres);

/* Metres rounded to the centimetre, as answers give them. */
double ss_snap_metres(double m);

/* The snapped points as JSON: [{"input":[lon,lat], "node":ID, "lon":..,
 * "lat":.., "distance_m":..}, ...]. */
json_t *ss_snap_json(const struct ss_graph *g, const struct ss_snap *pts, size_t n);

/* Adds "snapped": {"from": [...], "to": [...]} to o for the sides of q
 * given as points (nothing when both were ids). */
void ss_snap_add(json_t *o, const struct ss_graph *g, const struct ss_query *q);

#endif
