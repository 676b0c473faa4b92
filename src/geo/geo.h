/* Points on the Earth: great-circle distances, the nearest node of a graph
 * to a point (a static k-d tree over the node coordinates, built at load),
 * and the convex hull of a set of nodes.
 *
 * Coordinates are DIMACS integers: longitude and latitude times 10^6
 * (struct ss_graph's x and y). Distances are on a sphere of the Earth's
 * mean radius (haversine), in metres.
 *
 * The tree holds each node as a unit vector (x, y, z) in single precision,
 * in a frame turned so that the points' mean direction is its third axis.
 * The straight-line (chord) distance between unit vectors grows with the
 * great-circle distance, so the nearest by chord is the nearest on the
 * sphere, with no trouble at the poles or the antimeridian. Single precision
 * is off by at most about 10^-7 of the radius (under a metre), so the search
 * keeps every node within that margin of the best chord as a candidate and
 * ranks the candidates by the exact distance from their integer
 * coordinates: the answer is the exact nearest node (the lowest id among
 * nodes at the same distance). 17 bytes a node. */
#ifndef SS_GEO_H
#define SS_GEO_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Earth's mean radius (IUGG), in metres. */
#define SS_GEO_EARTH_RADIUS_M 6371008.8

/* Great-circle distance in metres between two points given in degrees. */
double ss_geo_distance_m(double lon1, double lat1, double lon2, double lat2);

struct ss_geo_index;

/* Builds the index of n points (x: longitude * 1e6, y: latitude * 1e6),
 * with up to `threads` threads (0: one). The index reads x and y at every
 * query: they must outlive it. Returns SS_OK, SS_EINVAL (no points, or a
 * coordinate outside -180..180 / -90..90, naming the node) or SS_ENOMEM. */
int ss_geo_index_build(const int32_t *x, const int32_t *y, uint32_t n, unsigned threads,
                       struct ss_geo_index **out, struct ss_err *err);
void ss_geo_index_free(struct ss_geo_index *ix);
/* Bytes of memory the index holds. */
uint64_t ss_geo_index_bytes(const struct ss_geo_index *ix);

/* The point nearest to (lon, lat) in degrees: its number (0-based) and its
 * distance in metres. Any thread, any number at once. */
void ss_geo_nearest(const struct ss_geo_index *ix, double lon, double lat, uint32_t *node,
                    double *dist_m);

/* Builds the index of g's coordinates and attaches it to g (slot
 * SS_GRAPH_EXT_GEO). A graph without coordinates gets none (SS_OK). Call
 * before g is shared. Returns SS_OK, SS_EINVAL or SS_ENOMEM. */
int ss_geo_prepare(struct ss_graph *g, unsigned threads, struct ss_err *err);
/* g's index, or NULL when it has none. */
const struct ss_geo_index *ss_geo_of(const struct ss_graph *g);

/* The convex hull of the points pts[0..n) (numbers into x and y), in the
 * plane of longitude and latitude: a malloc'd list of point numbers in
 * counter-clockwise order, the first not repeated at the end, into *hull
 * (*count of them: 1 or 2 when every point is the same or on one line).
 * Returns SS_OK, SS_EINVAL (n == 0) or SS_ENOMEM. Meant for areas far
 * smaller than a hemisphere that do not cross the antimeridian. */
int ss_geo_hull(const int32_t *x, const int32_t *y, const uint32_t *pts, size_t n, uint32_t **hull,
                size_t *count);

#ifdef __cplusplus
}
#endif

#endif
