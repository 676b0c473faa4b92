#include "server/snap.h"

#include "geo/geo.h"

void ss_snap_nearest(const void *graph, double lon, double lat, uint32_t *node, double *metres)
{
        ss_geo_nearest(ss_geo_of(graph), lon, lat, node, metres);
}

double ss_snap_metres(double m)
{
        return (double)(long long)(m * 100 + 0.5) / 100;
}

json_t *ss_snap_json(const struct ss_graph *g, const struct ss_snap *pts, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++) {
                const uint32_t v = (uint32_t)(pts[i].node - 1);
                json_array_append_new(
                    a, json_pack("{s:[f,f], s:I, s:f, s:f, s:f}", "input", pts[i].lon, pts[i].lat,
                                 "node", (json_int_t)pts[i].node, "lon", g->x[v] / 1e6, "lat",
                                 g->y[v] / 1e6, "distance_m", ss_snap_metres(pts[i].distance_m)));
        }
        return a;
}

void ss_snap_add(json_t *o, const struct ss_graph *g, const struct ss_query *q)
{
        if (!q->from_ll && !q->to_ll)
                return;
        json_t *s = json_object();
        if (q->from_ll)
                json_object_set_new(s, "from", ss_snap_json(g, q->from_ll, q->nfrom));
        if (q->to_ll)
                json_object_set_new(s, "to", ss_snap_json(g, q->to_ll, q->nto));
        json_object_set_new(o, "snapped", s);
}
