/* GeoJSON (RFC 7946) for answers: Features a map viewer takes as they are,
 * with [longitude, latitude] positions in degrees (a graph's DIMACS
 * coordinates divided by 10^6). Pure functions of a graph with
 * coordinates; NULL when out of memory. */
#ifndef SS_SERVER_GEOJSON_H
#define SS_SERVER_GEOJSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/graph.h"

/* [lon, lat] of node v (0-based). */
json_t *ss_geojson_position(const struct ss_graph *g, uint32_t v);
/* A Feature with geometry and properties (both taken over; properties may
 * be NULL for an empty object). */
json_t *ss_geojson_feature(json_t *geometry, json_t *properties);
/* A LineString through nodes[0..n). */
json_t *ss_geojson_line(const struct ss_graph *g, const uint32_t *nodes, size_t n);
/* A MultiPoint of nodes[0..n). */
json_t *ss_geojson_points(const struct ss_graph *g, const uint32_t *nodes, size_t n);
/* The outline of a convex hull given counter-clockwise (ring[0..n), not
 * closed): a Polygon for 3 points or more, a LineString for 2, a Point
 * for 1. */
json_t *ss_geojson_outline(const struct ss_graph *g, const uint32_t *ring, size_t n);

#endif
