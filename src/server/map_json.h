/* The body of GET /map: the graph as a drawing, its node coordinates and
 * its roads, compact enough for a browser to draw a city's graph at once.
 * A pure function of the graph, so it is unit-tested without a daemon.
 *
 *   {"code":"Ok","nodes":N,"arcs":M,"step":K,"count":C,
 *    "bbox_e6":[minlon,minlat,maxlon,maxlat],
 *    "lonlat_e6":[lon,lat, lon,lat, ...],
 *    "roads":[a,b, a,b, ...] or null}
 *
 * Coordinates are the graph's own integers, millionths of a degree.
 * lonlat_e6 holds C nodes: node 1, 1+K, 1+2K, ... (K = 1 unless the graph
 * has more nodes than max_nodes). roads, sent only with every node
 * (K = 1) and at most 4 x max_nodes arcs, lists each pair of nodes joined
 * by an arc once (either direction, parallel arcs as one, no loops) as
 * 0-based positions in lonlat_e6, ordered by (a, b) with a < b. */
#ifndef SS_SERVER_MAP_JSON_H
#define SS_SERVER_MAP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

/* Returns the body (malloc'd, NUL-terminated, *len bytes before the NUL),
 * or NULL when out of memory. g must have coordinates; max_nodes >= 1. */
char *ss_map_json(const struct ss_graph *g, uint64_t max_nodes, size_t *len);

#endif
