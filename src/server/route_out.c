#include "server/route_out.h"

#include <stdlib.h>

#include "geo/geo.h"
#include "io/time_graph.h"
#include "server/geojson.h"
#include "server/snap.h"
#include "server/polyline.h"

uint64_t ss_route_arc(const struct ss_graph *g, const uint32_t *times, uint32_t u, uint32_t v)
{
        uint64_t best = UINT64_MAX;
        for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++) {
                if (g->col[a] != v)
                        continue;
                if (best == UINT64_MAX || g->w[a] < g->w[best] ||
                    (g->w[a] == g->w[best] && times && times[a] < times[best]))
                        best = a;
        }
        return best;
}

static json_t *ss__geometry(const struct ss_query *q, const struct ss_job *job)
{
        const struct ss_graph *g = job->graph;
        if (q->geometry == SS_GEOM_GEOJSON) {
                json_t *props =
                    json_pack("{s:I, s:I, s:I}", "from", (json_int_t)q->from[0], "to",
                              (json_int_t)q->to[0], "distance", (json_int_t)job->dist[0]);
                return ss_geojson_feature(ss_geojson_line(g, job->path, job->path_len), props);
        }
        char *enc = ss_polyline_encode_precision(g->y, g->x, job->path, job->path_len,
                                                 q->geometry == SS_GEOM_POLYLINE5 ? 5 : 6);
        json_t *s = enc ? json_string(enc) : NULL;
        free(enc);
        return s;
}

/* OSRM's annotation: the nodes of the route, and for each step between two
 * of them its weight, its duration (with travel times) and its length in
 * metres (with coordinates). */
static json_t *ss__annotation(const struct ss_job *job, const uint32_t *times, json_int_t *total)
{
        const struct ss_graph *g = job->graph;
        json_t *nodes = json_array(), *weight = json_array();
        json_t *dur = times ? json_array() : NULL, *len = g->x ? json_array() : NULL;
        json_t *o = json_pack("{s:o, s:o}", "nodes", nodes, "weight", weight);
        if (!o)
                return NULL;
        if (dur)
                json_object_set_new(o, "duration", dur);
        if (len)
                json_object_set_new(o, "distance_m", len);
        *total = 0;
        for (size_t i = 0; i < job->path_len; i++) {
                const uint32_t v = job->path[i];
                json_array_append_new(nodes, json_integer((json_int_t)ss_node_to_dimacs(v)));
                if (i == 0)
                        continue;
                const uint32_t u = job->path[i - 1];
                const uint64_t a = ss_route_arc(g, times, u, v);
                if (a == UINT64_MAX) { /* a path always follows arcs */
                        json_decref(o);
                        return NULL;
                }
                json_array_append_new(weight, json_integer((json_int_t)g->w[a]));
                if (dur) {
                        json_array_append_new(dur, json_integer((json_int_t)times[a]));
                        *total += times[a];
                }
                if (len) {
                        const double m = ss_geo_distance_m(g->x[u] / 1e6, g->y[u] / 1e6,
                                                           g->x[v] / 1e6, g->y[v] / 1e6);
                        json_array_append_new(len,
                                              json_real((double)(long long)(m * 10 + 0.5) / 10));
                }
        }
        return o;
}

/* The travel time along the route. */
static json_int_t ss__duration(const struct ss_job *job, const uint32_t *times)
{
        json_int_t sum = 0;
        for (size_t i = 1; i < job->path_len; i++) {
                const uint64_t a = ss_route_arc(job->graph, times, job->path[i - 1], job->path[i]);
                if (a != UINT64_MAX)
                        sum += times[a];
        }
        return sum;
}

int ss_route_extras(const struct ss_query *q, const struct ss_job *job, json_t *o)
{
        const struct ss_graph *g = job->graph;
        const uint32_t *times = ss_time_weights_of(g);
        ss_snap_add(o, g, q);
        if (times)
                json_object_set_new(o, "duration", json_integer(ss__duration(job, times)));
        if (q->geometry != SS_GEOM_NONE && g->x) {
                json_t *geom = ss__geometry(q, job);
                if (!geom)
                        return SS_ENOMEM;
                json_object_set_new(o, "geometry", geom);
        }
        if (q->annotations) {
                json_int_t total;
                json_t *a = ss__annotation(job, times, &total);
                if (!a)
                        return SS_ENOMEM;
                json_object_set_new(o, "annotation", a);
        }
        return SS_OK;
}
