/* What a /route answer carries besides its distance and nodes: the points
 * it was asked with (snapped), its geometry (GeoJSON Feature, polyline 5
 * or 6), its duration on a travel-time graph, and the annotation of every
 * step. Worker thread; pure functions of the finished job. */
#ifndef SS_SERVER_ROUTE_OUT_H
#define SS_SERVER_ROUTE_OUT_H

#include <jansson.h>

#include "engine/engine.h"
#include "server/query.h"

/* Adds the fields q asks for to o. Returns SS_OK or SS_ENOMEM. */
int ss_route_extras(const struct ss_query *q, const struct ss_job *job, json_t *o);

/* The arc a path takes from u to v: the lightest of the arcs u -> v (the
 * one with the shortest travel time among equally light ones when times
 * are given); the arc's index into g's arrays, or UINT64_MAX when there is
 * none. */
uint64_t ss_route_arc(const struct ss_graph *g, const uint32_t *times, uint32_t u, uint32_t v);

#endif
